/**
 * ApiServer: the status subresource (reference §5.3), over HTTP.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Resource from "effect-informers/Resource"
import * as Effect from "effect/Effect"
import { eventually } from "../fixtures.js"
import { assertStatus, call, events, gadgets, merge, openWatch, send, start, widgets } from "./fixtures.js"

const deployment = (name: string) => ({
  apiVersion: "apps/v1",
  kind: "Deployment",
  metadata: { name, labels: { app: name } },
  spec: { replicas: 1, selector: { matchLabels: { app: name } }, template: { metadata: { labels: { app: name } } } },
  status: { replicas: 7 }
})

describe("ApiServer status subresource", () => {
  it.live("PUT and PATCH of /status keep only the status; writes to the object keep the stored status", () =>
    Effect.gen(function*() {
      const server = yield* start()
      const base = `${server.url}/apis/apps/v1/namespaces/default/deployments`
      // a create cannot set the status
      const created = yield* send(base, "POST", deployment("web"))
      assert.strictEqual(created.status, 201, created.text)
      assert.isUndefined(created.json.status)
      assert.strictEqual(created.json.metadata.generation, 1)

      // PUT /status: the status is written; spec and metadata changes are discarded
      const put = yield* send(`${base}/web/status`, "PUT", {
        ...created.json,
        metadata: { ...created.json.metadata, labels: { app: "changed" }, finalizers: ["example.com/x"] },
        spec: { ...created.json.spec, replicas: 5 },
        status: { replicas: 1, readyReplicas: 1 }
      })
      assert.strictEqual(put.status, 200, put.text)
      assert.deepStrictEqual(put.json.status, { replicas: 1, readyReplicas: 1 })
      assert.strictEqual(put.json.spec.replicas, 1)
      assert.deepStrictEqual(put.json.metadata.labels, { app: "web" })
      assert.isUndefined(put.json.metadata.finalizers)
      assert.strictEqual(put.json.metadata.generation, 1)
      assert.isAbove(Number(put.json.metadata.resourceVersion), Number(created.json.metadata.resourceVersion))

      // PATCH /status likewise
      const patched = yield* send(`${base}/web/status`, "PATCH", {
        metadata: { labels: { tier: "x" }, annotations: { a: "b" }, ownerReferences: [] },
        spec: { replicas: 9 },
        status: { availableReplicas: 1 }
      }, merge)
      assert.strictEqual(patched.status, 200, patched.text)
      assert.deepStrictEqual(patched.json.status, { replicas: 1, readyReplicas: 1, availableReplicas: 1 })
      assert.deepStrictEqual(patched.json.metadata.labels, { app: "web" })
      assert.isUndefined(patched.json.metadata.annotations)
      assert.strictEqual(patched.json.spec.replicas, 1)
      assert.strictEqual(patched.json.metadata.generation, 1)

      // GET /status is the object
      const got = yield* call(`${base}/web/status`)
      assert.deepStrictEqual(got.json, patched.json)

      // PUT of the object: the status stays as stored, the spec changes
      const updated = yield* send(`${base}/web`, "PUT", {
        ...patched.json,
        spec: { ...patched.json.spec, replicas: 3 },
        status: { replicas: 0 }
      })
      assert.strictEqual(updated.status, 200, updated.text)
      assert.strictEqual(updated.json.spec.replicas, 3)
      assert.deepStrictEqual(updated.json.status, patched.json.status)
      assert.strictEqual(updated.json.metadata.generation, 2)

      // a PATCH of the object that only changes the status writes nothing
      const statusOnly = yield* send(`${base}/web`, "PATCH", { status: { replicas: 42 } }, merge)
      assert.strictEqual(statusOnly.status, 200, statusOnly.text)
      assert.strictEqual(statusOnly.json.metadata.resourceVersion, updated.json.metadata.resourceVersion)
      assert.deepStrictEqual(statusOnly.json.status, patched.json.status)
    }))

  it.live("resourceVersion preconditions apply to /status, and a status write is a MODIFIED event", () =>
    Effect.gen(function*() {
      const server = yield* start()
      const base = `${server.url}/apis/apps/v1/namespaces/default/deployments`
      const created = yield* send(base, "POST", deployment("web"))
      const watch = yield* openWatch(
        `${base}?watch=true&resourceVersion=${created.json.metadata.resourceVersion}`
      )
      const first = yield* send(`${base}/web/status`, "PUT", { ...created.json, status: { replicas: 1 } })
      assert.strictEqual(first.status, 200, first.text)
      // the same resourceVersion again is stale now
      const stale = yield* send(`${base}/web/status`, "PUT", { ...created.json, status: { replicas: 2 } })
      assertStatus(stale, 409, "Conflict")
      assert.match(stale.json.message, /the object has been modified/)
      assert.deepStrictEqual(stale.json.details, { name: "web", group: "apps", kind: "deployments" })
      const stalePatch = yield* send(`${base}/web/status`, "PATCH", {
        metadata: { resourceVersion: created.json.metadata.resourceVersion },
        status: { replicas: 3 }
      }, merge)
      assertStatus(stalePatch, 409, "Conflict")
      // an unchanged status writes nothing
      const same = yield* send(`${base}/web/status`, "PUT", first.json)
      assert.strictEqual(same.json.metadata.resourceVersion, first.json.metadata.resourceVersion)
      yield* eventually(() => watch.lines.length >= 1, "the MODIFIED event")
      yield* Effect.sleep("100 millis")
      const seen = events(watch)
      assert.deepStrictEqual(seen.map((e) => e.type), ["MODIFIED"])
      assert.deepStrictEqual(seen[0].object.status, { replicas: 1 })
      // a missing object
      assertStatus(yield* send(`${base}/nope/status`, "PUT", { metadata: { name: "nope" } }), 404, "NotFound")
      // neither POST nor DELETE on /status
      assertStatus(yield* call(`${base}/web/status`, { method: "DELETE" }), 405, "MethodNotAllowed")
    }))

  it.live("custom resources: a status subresource by default, none with subresources.status false", () =>
    Effect.gen(function*() {
      const server = yield* start({ resources: [widgets, { resource: gadgets, subresources: { status: false } }] })
      const api = `${server.url}/apis/example.com/v1`
      const discovery = yield* call(api)
      const names: Array<string> = discovery.json.resources.map((r: { name: string }) => r.name)
      assert.include(names, "widgets/status")
      assert.notInclude(names, "gadgets/status")

      // with a status subresource
      const widget = yield* send(`${api}/namespaces/default/widgets`, "POST", {
        metadata: { name: "w" },
        spec: { size: 1 },
        status: { ready: true }
      })
      assert.strictEqual(widget.status, 201, widget.text)
      assert.isUndefined(widget.json.status)
      const widgetStatus = yield* send(`${api}/namespaces/default/widgets/w/status`, "PATCH", {
        spec: { size: 2 },
        status: { ready: true }
      }, merge)
      assert.strictEqual(widgetStatus.status, 200, widgetStatus.text)
      assert.deepStrictEqual(widgetStatus.json.status, { ready: true })
      assert.deepStrictEqual(widgetStatus.json.spec, { size: 1 })
      assert.strictEqual(widgetStatus.json.metadata.generation, 1)
      const widgetMain = yield* send(
        `${api}/namespaces/default/widgets/w`,
        "PATCH",
        { status: { ready: false } },
        merge
      )
      assert.deepStrictEqual(widgetMain.json.status, { ready: true })

      // without one: /status is 404, the object's writes change everything
      const gadget = yield* send(`${api}/namespaces/default/gadgets`, "POST", {
        metadata: { name: "g" },
        spec: { size: 1 },
        status: { ready: true }
      })
      assert.strictEqual(gadget.status, 201, gadget.text)
      assert.deepStrictEqual(gadget.json.status, { ready: true })
      assertStatus(yield* call(`${api}/namespaces/default/gadgets/g/status`), 404, "NotFound")
      assertStatus(
        yield* send(`${api}/namespaces/default/gadgets/g/status`, "PATCH", { status: { ready: false } }, merge),
        404,
        "NotFound"
      )
      const gadgetMain = yield* send(
        `${api}/namespaces/default/gadgets/g`,
        "PATCH",
        { status: { ready: false } },
        merge
      )
      assert.deepStrictEqual(gadgetMain.json.status, { ready: false })
    }))

  it.live("resources without a status (ConfigMaps, Leases) answer 404 on /status and write everything", () =>
    Effect.gen(function*() {
      const server = yield* start()
      const base = `${server.url}/api/v1/namespaces/default/configmaps`
      const created = yield* send(base, "POST", { metadata: { name: "c" }, data: { a: "1" }, status: { x: 1 } })
      assert.deepStrictEqual(created.json.status, { x: 1 })
      assertStatus(yield* call(`${base}/c/status`), 404, "NotFound")
      assertStatus(yield* send(`${base}/c/status`, "PUT", created.json), 404, "NotFound")
      const leases = `${server.url}/apis/coordination.k8s.io/v1/namespaces/default/leases`
      yield* send(leases, "POST", { metadata: { name: "l" }, spec: {} })
      assertStatus(yield* call(`${leases}/l/status`), 404, "NotFound")
      const core = yield* call(`${server.url}/api/v1`)
      const names: Array<string> = core.json.resources.map((r: { name: string }) => r.name)
      assert.includeMembers(names, ["pods/status", "services/status", "nodes/status", "namespaces/status"])
      assert.notInclude(names, "configmaps/status")
    }))

  it.live("the programmatic writes write the status along with the rest", () =>
    Effect.gen(function*() {
      const server = yield* start()
      const created = yield* server.objects.create(Resource.deployments, {
        ...deployment("web"),
        metadata: { name: "web", namespace: "default" }
      } as Resource.Deployment)
      assert.deepStrictEqual(created.status, { replicas: 7 })
      const updated = yield* server.objects.update(Resource.deployments, { ...created, status: { replicas: 8 } })
      assert.deepStrictEqual(updated.status, { replicas: 8 })
      assert.strictEqual(updated.metadata?.generation, 1)
    }))
})

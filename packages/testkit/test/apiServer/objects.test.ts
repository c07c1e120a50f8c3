/**
 * ApiServer: object writes and reads.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Resource from "effect-informers/Resource"
import * as Effect from "effect/Effect"
import { assertStatus, call, pod, pods, send, start } from "./fixtures.js"

describe("ApiServer objects", () => {
  it.live("creates, reads, updates, patches and deletes, with optimistic concurrency", () =>
    Effect.gen(function*() {
      const server = yield* start()
      const base = `${server.url}/api/v1/namespaces/default/pods`
      const created = yield* send(base, "POST", { metadata: { name: "web", labels: { app: "x" } }, spec: {} })
      assert.strictEqual(created.status, 201, created.text)
      assert.strictEqual(created.json.kind, "Pod")
      assert.strictEqual(created.json.apiVersion, "v1")
      assert.strictEqual(created.json.metadata.namespace, "default")
      assert.match(created.json.metadata.uid, /^[0-9a-f-]{36}$/)
      assert.match(created.json.metadata.creationTimestamp, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/)
      assert.strictEqual(created.json.metadata.resourceVersion, yield* server.resourceVersion)

      const got = yield* call(`${base}/web`)
      assert.deepStrictEqual(got.json, created.json)

      const updated = yield* send(`${base}/web`, "PUT", { ...created.json, spec: { nodeName: "n1" } })
      assert.strictEqual(updated.status, 200, updated.text)
      assert.isAbove(Number(updated.json.metadata.resourceVersion), Number(created.json.metadata.resourceVersion))
      assert.strictEqual(updated.json.metadata.uid, created.json.metadata.uid)
      assert.strictEqual(updated.json.metadata.generation, 2)

      const stale = yield* send(`${base}/web`, "PUT", { ...created.json, spec: { nodeName: "n2" } })
      assertStatus(stale, 409, "Conflict")
      assert.match(stale.json.message, /the object has been modified/)
      assert.deepStrictEqual(stale.json.details, { name: "web", kind: "pods" })

      const merged = yield* send(
        `${base}/web`,
        "PATCH",
        { metadata: { labels: { app: null, tier: "web" } } },
        "application/merge-patch+json"
      )
      assert.deepStrictEqual(merged.json.metadata.labels, { tier: "web" })
      const strategic = yield* send(
        `${base}/web`,
        "PATCH",
        { spec: { containers: [{ name: "c", image: "nginx" }] } },
        "application/strategic-merge-patch+json"
      )
      assert.deepStrictEqual(strategic.json.spec, { nodeName: "n1", containers: [{ name: "c", image: "nginx" }] })
      const jsonPatched = yield* send(
        `${base}/web`,
        "PATCH",
        [{ op: "add", path: "/metadata/annotations", value: { a: "b" } }, {
          op: "replace",
          path: "/spec/nodeName",
          value: "n9"
        }],
        "application/json-patch+json"
      )
      assert.deepStrictEqual(jsonPatched.json.metadata.annotations, { a: "b" })
      assert.strictEqual(jsonPatched.json.spec.nodeName, "n9")
      const stalePatch = yield* send(
        `${base}/web`,
        "PATCH",
        { metadata: { resourceVersion: created.json.metadata.resourceVersion, labels: { x: "y" } } },
        "application/merge-patch+json"
      )
      assertStatus(stalePatch, 409, "Conflict")
      const unsupported = yield* send(`${base}/web`, "PATCH", {}, "application/xml")
      assertStatus(unsupported, 415, "UnsupportedMediaType")

      const deleted = yield* call(`${base}/web`, { method: "DELETE" })
      assert.strictEqual(deleted.status, 200)
      assert.strictEqual(deleted.json.metadata.name, "web")
      const gone = yield* call(`${base}/web`)
      assertStatus(gone, 404, "NotFound")
      assert.strictEqual(gone.json.message, "pods \"web\" not found")
      assert.deepStrictEqual(gone.json.details, { name: "web", kind: "pods" })
    }))

  it.live("answers errors with Status objects shaped like the API server's", () =>
    Effect.gen(function*() {
      const server = yield* start()
      const base = `${server.url}/api/v1/namespaces/default/pods`
      yield* send(base, "POST", { metadata: { name: "web" } })
      const duplicate = yield* send(base, "POST", { metadata: { name: "web" } })
      assertStatus(duplicate, 409, "AlreadyExists")
      assert.strictEqual(duplicate.json.message, "pods \"web\" already exists")
      const noName = yield* send(base, "POST", { metadata: {} })
      assertStatus(noName, 422, "Invalid")
      assert.strictEqual(noName.json.details.kind, "Pod")
      assert.strictEqual(noName.json.details.causes[0].field, "metadata.name")
      const badName = yield* send(base, "POST", { metadata: { name: "Bad_Name" } })
      assertStatus(badName, 422, "Invalid")
      const generated = yield* send(base, "POST", { metadata: { generateName: "web-" } })
      assert.strictEqual(generated.status, 201)
      assert.match(generated.json.metadata.name, /^web-[a-z0-9]{5}$/)
      const mismatch = yield* send(base, "POST", { metadata: { name: "x", namespace: "other" } })
      assertStatus(mismatch, 400, "BadRequest")
      const wrongKind = yield* send(base, "POST", { apiVersion: "v1", kind: "Service", metadata: { name: "x" } })
      assertStatus(wrongKind, 400, "BadRequest")
      const missing = yield* send(`${base}/nope`, "PUT", { metadata: { name: "nope" } })
      assertStatus(missing, 404, "NotFound")
      assertStatus(yield* call(`${server.url}/api/v1/widgets`), 404, "NotFound")
      assertStatus(yield* call(`${server.url}/apis/nope.io/v1/things`), 404, "NotFound")
      assertStatus(yield* call(`${server.url}/api/v1/namespaces/default/nodes`), 404, "NotFound")
      assertStatus(yield* call(`${server.url}/api/v1/pods/web`), 404, "NotFound")
      assertStatus(yield* call(`${server.url}/nowhere`), 404, "NotFound")
      const apps = yield* call(`${server.url}/apis/apps/v1/namespaces/default/deployments/nope`)
      assertStatus(apps, 404, "NotFound")
      assert.deepStrictEqual(apps.json.details, { name: "nope", group: "apps", kind: "deployments" })
      // the programmatic API fails the same way
      const error = yield* Effect.flip(server.objects.get(pods, { name: "nope", namespace: "default" }))
      assert.strictEqual(error._tag, "StatusError")
      assert.strictEqual(error.code, 404)
      assert.strictEqual(error.reason, "NotFound")
    }))

  it.live("writes nothing for an update that changes nothing, and honours finalizers", () =>
    Effect.gen(function*() {
      const server = yield* start()
      const created = yield* server.objects.create(pods, pod("web"))
      const same = yield* server.objects.update(pods, created)
      assert.strictEqual(same.metadata.resourceVersion, created.metadata.resourceVersion)
      const withFinalizer = yield* server.objects.patch(
        pods,
        { name: "web", namespace: "default" },
        { metadata: { finalizers: ["example.com/hold"] } }
      )
      const base = `${server.url}/api/v1/namespaces/default/pods`
      const deleting = yield* call(`${base}/web`, { method: "DELETE" })
      // kube-apiserver answers 200 with the object it keeps (202 only when orphanDependents is false)
      assert.strictEqual(deleting.status, 200)
      assert.isString(deleting.json.metadata.deletionTimestamp)
      assert.isAbove(Number(deleting.json.metadata.resourceVersion), Number(withFinalizer.metadata.resourceVersion))
      assert.strictEqual((yield* call(`${base}/web`)).status, 200)
      yield* server.objects.patch(pods, { name: "web", namespace: "default" }, { metadata: { finalizers: null } })
      assert.strictEqual((yield* call(`${base}/web`)).status, 404)
    }))

  it.live("serves cluster-scoped resources and extra resources (CRDs), with discovery", () =>
    Effect.gen(function*() {
      const widgets = Resource.make({
        group: "example.com",
        version: "v1alpha1",
        resource: "widgets",
        kind: "Widget",
        namespaced: true,
        shortNames: ["wd"]
      })
      const server = yield* start({
        resources: [widgets],
        objects: [{ apiVersion: "v1", kind: "Namespace", metadata: { name: "team-a" } }]
      })
      const nodes = yield* send(`${server.url}/api/v1/nodes`, "POST", { metadata: { name: "node-1", namespace: "x" } })
      assert.strictEqual(nodes.status, 201)
      assert.isUndefined(nodes.json.metadata.namespace)
      assert.strictEqual((yield* call(`${server.url}/api/v1/nodes/node-1`)).status, 200)
      assert.strictEqual((yield* call(`${server.url}/api/v1/namespaces/team-a`)).json.kind, "Namespace")
      const widget = yield* send(`${server.url}/apis/example.com/v1alpha1/namespaces/team-a/widgets`, "POST", {
        metadata: { name: "w1" },
        spec: { size: 3 }
      })
      assert.strictEqual(widget.status, 201, widget.text)
      assert.strictEqual(widget.json.apiVersion, "example.com/v1alpha1")
      assert.strictEqual(widget.json.kind, "Widget")
      const list = yield* call(`${server.url}/apis/example.com/v1alpha1/widgets`)
      assert.strictEqual(list.json.kind, "WidgetList")
      assert.strictEqual(list.json.items.length, 1)

      const version = yield* call(`${server.url}/version`)
      assert.strictEqual(version.json.major, "1")
      const api = yield* call(`${server.url}/api`)
      assert.strictEqual(api.json.kind, "APIVersions")
      assert.deepStrictEqual(api.json.versions, ["v1"])
      const groups = yield* call(`${server.url}/apis`)
      assert.strictEqual(groups.json.kind, "APIGroupList")
      assert.include(groups.json.groups.map((g: { name: string }) => g.name), "example.com")
      const core = yield* call(`${server.url}/api/v1`)
      const podResource = core.json.resources.find((r: { name: string }) => r.name === "pods")
      assert.deepStrictEqual(
        { ...podResource, verbs: undefined, categories: undefined },
        {
          name: "pods",
          singularName: "pod",
          namespaced: true,
          kind: "Pod",
          shortNames: ["po"],
          verbs: undefined,
          categories: undefined
        }
      )
      assert.include(podResource.verbs, "watch")
      const custom = yield* call(`${server.url}/apis/example.com/v1alpha1`)
      assert.strictEqual(custom.json.resources[0].kind, "Widget")
      const openapi = yield* call(`${server.url}/openapi/v3`)
      assert.isString(openapi.json.paths["apis/example.com/v1alpha1"].serverRelativeURL)
    }))
})

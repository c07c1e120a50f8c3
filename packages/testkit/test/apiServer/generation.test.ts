/**
 * ApiServer: `metadata.generation` (reference §5.4) and no-op writes, over HTTP.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { eventually } from "../fixtures.js"
import { call, events, gadgets, merge, openWatch, send, sleep, start, widgets } from "./fixtures.js"

const patch = (url: string, body: unknown) => send(url, "PATCH", body, merge)

describe("ApiServer generation", () => {
  it.live("built-ins: 1 at creation, +1 on spec changes (Deployments: annotations too), never on status", () =>
    Effect.gen(function*() {
      const server = yield* start()
      const base = `${server.url}/apis/apps/v1/namespaces/default/deployments`
      const created = yield* send(base, "POST", {
        metadata: { name: "web", generation: 42 },
        spec: { replicas: 1 }
      })
      assert.strictEqual(created.json.metadata.generation, 1)
      const labels = yield* patch(`${base}/web`, { metadata: { labels: { a: "b" } } })
      assert.strictEqual(labels.json.metadata.generation, 1)
      const spec = yield* patch(`${base}/web`, { spec: { replicas: 2 } })
      assert.strictEqual(spec.json.metadata.generation, 2)
      const annotations = yield* patch(`${base}/web`, { metadata: { annotations: { a: "b" } } })
      assert.strictEqual(annotations.json.metadata.generation, 3)
      const status = yield* patch(`${base}/web/status`, { status: { replicas: 2, observedGeneration: 3 } })
      assert.strictEqual(status.json.metadata.generation, 3)
      // a client cannot set it
      const forced = yield* send(`${base}/web`, "PUT", {
        ...status.json,
        metadata: { ...status.json.metadata, generation: 99 }
      })
      assert.strictEqual(forced.json.metadata.generation, 3)
      assert.strictEqual(forced.json.metadata.resourceVersion, status.json.metadata.resourceVersion)

      // ReplicaSets: annotations do not count
      const rs = yield* send(`${server.url}/apis/apps/v1/namespaces/default/replicasets`, "POST", {
        metadata: { name: "web-1" },
        spec: { replicas: 1 }
      })
      const rsAnnotated = yield* patch(`${server.url}/apis/apps/v1/namespaces/default/replicasets/web-1`, {
        metadata: { annotations: { a: "b" } }
      })
      assert.strictEqual(rs.json.metadata.generation, 1)
      assert.strictEqual(rsAnnotated.json.metadata.generation, 1)

      // pods track it, ConfigMaps, Services and Leases do not
      const pod = yield* send(`${server.url}/api/v1/namespaces/default/pods`, "POST", {
        metadata: { name: "p" },
        spec: { containers: [{ name: "c", image: "a" }] }
      })
      assert.strictEqual(pod.json.metadata.generation, 1)
      const podSpec = yield* patch(`${server.url}/api/v1/namespaces/default/pods/p`, {
        spec: { activeDeadlineSeconds: 5 }
      })
      assert.strictEqual(podSpec.json.metadata.generation, 2)
      for (
        const [path, body] of [
          ["api/v1/namespaces/default/configmaps", { metadata: { name: "c" }, data: { a: "b" } }],
          ["api/v1/namespaces/default/services", { metadata: { name: "s" }, spec: { ports: [{ port: 80 }] } }],
          ["apis/coordination.k8s.io/v1/namespaces/default/leases", { metadata: { name: "l" }, spec: {} }]
        ] as const
      ) {
        const untracked = yield* send(`${server.url}/${path}`, "POST", body)
        assert.strictEqual(untracked.status, 201, untracked.text)
        assert.isUndefined(untracked.json.metadata.generation, path)
      }
    }))

  it.live("custom resources: every change outside metadata (and status, with a status subresource)", () =>
    Effect.gen(function*() {
      const server = yield* start({ resources: [widgets, { resource: gadgets, subresources: { status: false } }] })
      const api = `${server.url}/apis/example.com/v1/namespaces/default`
      // a custom resource tracks generation even without a spec
      const widget = yield* send(`${api}/widgets`, "POST", { metadata: { name: "w" }, data: { a: 1 } })
      assert.strictEqual(widget.json.metadata.generation, 1)
      const data = yield* patch(`${api}/widgets/w`, { data: { a: 2 } })
      assert.strictEqual(data.json.metadata.generation, 2)
      const meta = yield* patch(`${api}/widgets/w`, {
        metadata: { labels: { a: "b" }, annotations: { c: "d" }, finalizers: ["example.com/f"] }
      })
      assert.strictEqual(meta.json.metadata.generation, 2)
      const status = yield* patch(`${api}/widgets/w/status`, { status: { ok: true } })
      assert.strictEqual(status.json.metadata.generation, 2)

      const gadget = yield* send(`${api}/gadgets`, "POST", { metadata: { name: "g" }, spec: { a: 1 } })
      assert.strictEqual(gadget.json.metadata.generation, 1)
      // without a status subresource a status change is a change
      const gadgetStatus = yield* patch(`${api}/gadgets/g`, { status: { ok: true } })
      assert.strictEqual(gadgetStatus.json.metadata.generation, 2)
      const gadgetMeta = yield* patch(`${api}/gadgets/g`, { metadata: { labels: { a: "b" } } })
      assert.strictEqual(gadgetMeta.json.metadata.generation, 2)
    }))

  it.live("the first delete that only sets deletionTimestamp bumps it, later ones do not", () =>
    Effect.gen(function*() {
      const server = yield* start()
      const base = `${server.url}/apis/apps/v1/namespaces/default/deployments`
      yield* send(base, "POST", { metadata: { name: "web", finalizers: ["example.com/hold"] }, spec: {} })
      const first = yield* call(`${base}/web`, { method: "DELETE" })
      assert.strictEqual(first.status, 200, first.text)
      assert.strictEqual(first.json.metadata.generation, 2)
      const second = yield* call(`${base}/web`, { method: "DELETE" })
      assert.strictEqual(second.json.metadata.generation, 2)
      assert.strictEqual(second.json.metadata.resourceVersion, first.json.metadata.resourceVersion)
      // no generation, no bump
      const maps = `${server.url}/api/v1/namespaces/default/configmaps`
      yield* send(maps, "POST", { metadata: { name: "c", finalizers: ["example.com/hold"] } })
      const map = yield* call(`${maps}/c`, { method: "DELETE" })
      assert.isUndefined(map.json.metadata.generation)
      assert.isString(map.json.metadata.deletionTimestamp)
    }))

  it.live("a write that changes nothing keeps the resourceVersion and sends no event", () =>
    Effect.gen(function*() {
      const server = yield* start()
      const base = `${server.url}/apis/apps/v1/namespaces/default/deployments`
      const created = yield* send(base, "POST", {
        metadata: { name: "web", labels: { a: "1", b: "2" } },
        spec: { replicas: 1, paused: false }
      })
      const rv = created.json.metadata.resourceVersion
      const watch = yield* openWatch(`${base}?watch=true&resourceVersion=${rv}`)
      // the same object, its keys in another order, without a resourceVersion
      const reordered = yield* send(`${base}/web`, "PUT", {
        spec: { paused: false, replicas: 1 },
        metadata: { labels: { b: "2", a: "1" }, name: "web" },
        kind: "Deployment",
        apiVersion: "apps/v1"
      })
      assert.strictEqual(reordered.status, 200, reordered.text)
      assert.strictEqual(reordered.json.metadata.resourceVersion, rv)
      const patched = yield* patch(`${base}/web`, { metadata: { labels: { a: "1" } }, spec: { replicas: 1 } })
      assert.strictEqual(patched.json.metadata.resourceVersion, rv)
      const json = yield* send(
        `${base}/web`,
        "PATCH",
        [{ op: "replace", path: "/spec/replicas", value: 1 }],
        "application/json-patch+json"
      )
      assert.strictEqual(json.json.metadata.resourceVersion, rv)
      const status = yield* patch(`${base}/web/status`, {})
      assert.strictEqual(status.json.metadata.resourceVersion, rv)
      assert.strictEqual(yield* server.resourceVersion, rv)
      // then a real change: the only event
      const changed = yield* patch(`${base}/web`, { spec: { replicas: 2 } })
      yield* eventually(() => watch.lines.length >= 1, "the MODIFIED event")
      yield* sleep(50)
      assert.deepStrictEqual(
        events(watch).map((e) => [e.type, e.object.metadata.resourceVersion]),
        [["MODIFIED", changed.json.metadata.resourceVersion]]
      )
    }))
})

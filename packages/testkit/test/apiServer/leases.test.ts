/**
 * ApiServer: coordination.k8s.io/v1 Leases as leader election uses them, over HTTP.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Resource from "effect-informers/Resource"
import * as Effect from "effect/Effect"
import { eventually } from "../fixtures.js"
import { assertStatus, call, events, openWatch, send, start } from "./fixtures.js"

describe("ApiServer leases", () => {
  it.live("create, get, renew with resourceVersion preconditions, watch; MicroTime strings round-trip", () =>
    Effect.gen(function*() {
      const server = yield* start()
      const discovery = yield* call(`${server.url}/apis/coordination.k8s.io/v1`)
      const lease = discovery.json.resources.find((r: { name: string }) => r.name === "leases")
      assert.strictEqual(lease.kind, "Lease")
      assert.includeMembers(lease.verbs, ["create", "get", "update", "watch"])

      const base = `${server.url}/apis/coordination.k8s.io/v1/namespaces/kube-system/leases`
      const watch = yield* openWatch(`${base}?watch=true&resourceVersion=${yield* server.resourceVersion}`)
      const spec = {
        holderIdentity: "controller-a_4f2c",
        leaseDurationSeconds: 15,
        acquireTime: "2024-01-01T00:00:00.000001Z",
        renewTime: "2024-01-01T00:00:00.123456Z",
        leaseTransitions: 0
      }
      const created = yield* send(base, "POST", {
        apiVersion: "coordination.k8s.io/v1",
        kind: "Lease",
        metadata: { name: "my-controller" },
        spec
      })
      assert.strictEqual(created.status, 201, created.text)
      assert.deepStrictEqual(created.json.spec, spec)
      assert.isUndefined(created.json.metadata.generation)
      // the exact strings, not reformatted dates
      assert.include(created.text, `"renewTime":"2024-01-01T00:00:00.123456Z"`)
      const got = yield* call(`${base}/my-controller`)
      assert.deepStrictEqual(got.json, created.json)
      assertStatus(yield* send(base, "POST", { metadata: { name: "my-controller" }, spec }), 409, "AlreadyExists")

      // renew: PUT with the resourceVersion read
      const renewed = yield* send(`${base}/my-controller`, "PUT", {
        ...got.json,
        spec: { ...got.json.spec, renewTime: "2024-01-01T00:00:10.654321Z" }
      })
      assert.strictEqual(renewed.status, 200, renewed.text)
      assert.strictEqual(renewed.json.spec.renewTime, "2024-01-01T00:00:10.654321Z")
      assert.strictEqual(renewed.json.spec.acquireTime, spec.acquireTime)
      // another candidate with the old resourceVersion loses
      const stolen = yield* send(`${base}/my-controller`, "PUT", {
        ...got.json,
        spec: { ...got.json.spec, holderIdentity: "controller-b_9a1e", leaseTransitions: 1 }
      })
      assertStatus(stolen, 409, "Conflict")
      assert.strictEqual(
        stolen.json.message,
        `Operation cannot be fulfilled on leases.coordination.k8s.io "my-controller": the object has been modified; please apply your changes to the latest version and try again`
      )
      assert.deepStrictEqual(stolen.json.details, {
        name: "my-controller",
        group: "coordination.k8s.io",
        kind: "leases"
      })
      // a release: holder "" and leaseDurationSeconds 1
      const released = yield* send(`${base}/my-controller`, "PUT", {
        ...renewed.json,
        spec: { ...renewed.json.spec, holderIdentity: "", leaseDurationSeconds: 1 }
      })
      assert.strictEqual(released.status, 200, released.text)
      assert.strictEqual(released.json.spec.holderIdentity, "")

      yield* eventually(() => watch.lines.length >= 3, "three events")
      const seen = events(watch)
      assert.deepStrictEqual(seen.map((e) => e.type), ["ADDED", "MODIFIED", "MODIFIED"])
      assert.strictEqual(seen[0].object.spec.acquireTime, "2024-01-01T00:00:00.000001Z")
      assert.strictEqual(seen[1].object.spec.renewTime, "2024-01-01T00:00:10.654321Z")
      assert.deepStrictEqual(seen[2].object, released.json)

      // the programmatic API sees the same object
      const stored = yield* server.objects.get(Resource.leases, { namespace: "kube-system", name: "my-controller" })
      assert.strictEqual(stored.spec?.renewTime as unknown as string, "2024-01-01T00:00:10.654321Z")
    }))
})

/**
 * ApiServer: a Lease is checked as kube-apiserver checks it. A field that does not decode into the typed
 * Lease (a string duration, a numeric holder, a MicroTime of another layout, an integer out of int32) fails
 * a create or an update with 400 and a patch with 422 on `patch`; a decoded spec kube-apiserver's
 * `ValidateLeaseSpec` rejects (a duration not greater than 0, negative transitions) is 422 Invalid with
 * field causes. Over HTTP (create, update, merge and JSON patch, server-side apply) and through the
 * programmatic API; nothing invalid is ever stored.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Resource from "effect-informers/Resource"
import * as Effect from "effect/Effect"
import { assertStatus, merge, send, start } from "./fixtures.js"

const base = (url: string) => `${url}/apis/coordination.k8s.io/v1/namespaces/kube-system/leases`

const lease = (name: string, spec: Record<string, unknown>) => ({
  apiVersion: "coordination.k8s.io/v1",
  kind: "Lease",
  metadata: { name },
  spec
})

const valid = {
  holderIdentity: "a",
  leaseDurationSeconds: 15,
  acquireTime: "2024-01-01T00:00:00.000000Z",
  renewTime: "2024-01-01T00:00:01.000000+02:00",
  leaseTransitions: 0
}

/** A spec that does not decode, and the `json:` error kube-apiserver names it with. */
const undecodable: ReadonlyArray<readonly [Record<string, unknown>, string]> = [
  [
    { leaseDurationSeconds: "15" },
    "json: cannot unmarshal string into Go struct field LeaseSpec.spec.leaseDurationSeconds of type int32"
  ],
  [
    { leaseDurationSeconds: 1.5 },
    "json: cannot unmarshal number 1.5 into Go struct field LeaseSpec.spec.leaseDurationSeconds of type int32"
  ],
  [
    { leaseDurationSeconds: 2147483648 },
    "json: cannot unmarshal number 2147483648 into Go struct field LeaseSpec.spec.leaseDurationSeconds of type int32"
  ],
  [
    { holderIdentity: 7 },
    "json: cannot unmarshal number into Go struct field LeaseSpec.spec.holderIdentity of type string"
  ],
  [
    { holderIdentity: ["a"] },
    "json: cannot unmarshal array into Go struct field LeaseSpec.spec.holderIdentity of type string"
  ],
  [
    { leaseTransitions: true },
    "json: cannot unmarshal bool into Go struct field LeaseSpec.spec.leaseTransitions of type int32"
  ],
  [
    { renewTime: 1700000000 },
    "json: cannot unmarshal number into Go struct field LeaseSpec.spec.renewTime of type string"
  ],
  [
    { acquireTime: "2024-01-01T00:00:00Z" },
    `parsing time "2024-01-01T00:00:00Z" as "2006-01-02T15:04:05.000000Z07:00": cannot parse "2024-01-01T00:00:00Z" as "2006-01-02T15:04:05.000000Z07:00"`
  ],
  [
    { holderIdentity: 1, leaseDurationSeconds: "x" },
    "json: cannot unmarshal number into Go struct field LeaseSpec.spec.holderIdentity of type string"
  ]
]

describe("ApiServer lease validation", () => {
  it.live("valid specs, null fields and no spec at all are stored", () =>
    Effect.gen(function*() {
      const server = yield* start()
      const url = base(server.url)
      for (
        const [name, spec] of [
          ["full", valid],
          ["nulls", { holderIdentity: null, leaseDurationSeconds: null, renewTime: null }],
          ["empty-holder", { holderIdentity: "", leaseDurationSeconds: 1 }],
          ["max", { leaseDurationSeconds: 2147483647, leaseTransitions: 2147483647 }]
        ] as const
      ) {
        const created = yield* send(url, "POST", lease(name, spec))
        assert.strictEqual(created.status, 201, created.text)
      }
      const none = yield* send(url, "POST", { metadata: { name: "no-spec" } })
      assert.strictEqual(none.status, 201, none.text)
    }))

  it.live("create and update: a duration not above 0, negative transitions: 422 Invalid with field causes", () =>
    Effect.gen(function*() {
      const server = yield* start()
      const url = base(server.url)
      const negative = yield* send(url, "POST", lease("x", { ...valid, leaseDurationSeconds: -1 }))
      assertStatus(negative, 422, "Invalid")
      assert.strictEqual(
        negative.json.message,
        `Lease.coordination.k8s.io "x" is invalid: spec.leaseDurationSeconds: Invalid value: -1: must be greater than 0`
      )
      assert.deepStrictEqual(negative.json.details, {
        name: "x",
        group: "coordination.k8s.io",
        kind: "Lease",
        causes: [{
          reason: "FieldValueInvalid",
          message: "Invalid value: -1: must be greater than 0",
          field: "spec.leaseDurationSeconds"
        }]
      })
      const both = yield* send(url, "POST", lease("x", { leaseDurationSeconds: 0, leaseTransitions: -3 }))
      assertStatus(both, 422, "Invalid")
      assert.strictEqual(
        both.json.message,
        `Lease.coordination.k8s.io "x" is invalid: [spec.leaseDurationSeconds: Invalid value: 0: must be greater than 0, spec.leaseTransitions: Invalid value: -3: must be greater than or equal to 0]`
      )
      assert.deepStrictEqual(both.json.details.causes.map((c: { field: string }) => c.field), [
        "spec.leaseDurationSeconds",
        "spec.leaseTransitions"
      ])

      const created = yield* send(url, "POST", lease("x", valid))
      assert.strictEqual(created.status, 201, created.text)
      const update = yield* send(`${url}/x`, "PUT", {
        ...created.json,
        spec: { ...valid, leaseDurationSeconds: -1 }
      })
      assertStatus(update, 422, "Invalid")
      assert.strictEqual(
        update.json.message,
        `Lease.coordination.k8s.io "x" is invalid: spec.leaseDurationSeconds: Invalid value: -1: must be greater than 0`
      )
      const stored = yield* server.objects.get(Resource.leases, { namespace: "kube-system", name: "x" })
      assert.strictEqual(stored.spec?.leaseDurationSeconds, 15)
      assert.strictEqual(stored.metadata?.resourceVersion, created.json.metadata.resourceVersion)
    }))

  it.live("create and update: a field that does not decode is 400, as kube-apiserver's decoder answers", () =>
    Effect.gen(function*() {
      const server = yield* start()
      const url = base(server.url)
      const created = yield* send(url, "POST", lease("x", valid))
      assert.strictEqual(created.status, 201, created.text)
      for (const [spec, error] of undecodable) {
        const create = yield* send(url, "POST", lease("y", { ...valid, ...spec }))
        assertStatus(create, 400, "BadRequest")
        assert.strictEqual(create.json.message, `Lease in version "v1" cannot be handled as a Lease: ${error}`)
        const update = yield* send(`${url}/x`, "PUT", { ...created.json, spec: { ...valid, ...spec } })
        assertStatus(update, 400, "BadRequest")
        assert.strictEqual(update.json.message, `Lease in version "v1" cannot be handled as a Lease: ${error}`)
      }
      // decoding comes first: a missing object is not looked up
      const missing = yield* send(`${url}/missing`, "PUT", lease("missing", { leaseDurationSeconds: "15" }))
      assertStatus(missing, 400, "BadRequest")
      const spec = yield* send(url, "POST", { ...lease("y", {}), spec: "15s" })
      assert.strictEqual(
        spec.json.message,
        `Lease in version "v1" cannot be handled as a Lease: json: cannot unmarshal string into Go struct field Lease.spec of type v1.LeaseSpec`
      )
      assert.deepStrictEqual((yield* server.objects.snapshot(Resource.leases)).map((l) => l.metadata?.name), ["x"])
    }))

  it.live("patch: a result that does not decode is 422 on `patch`, an invalid one 422 on its field", () =>
    Effect.gen(function*() {
      const server = yield* start()
      const url = base(server.url)
      const created = yield* send(url, "POST", lease("x", valid))
      const text = yield* send(`${url}/x`, "PATCH", { spec: { leaseDurationSeconds: "15" } }, merge)
      assertStatus(text, 422, "Invalid")
      assert.match(
        text.json.message,
        /^ "" is invalid: patch: Invalid value: ".*": json: cannot unmarshal string into Go struct field LeaseSpec\.spec\.leaseDurationSeconds of type int32$/
      )
      assert.strictEqual(text.json.details.causes[0].field, "patch")
      const holder = yield* send(
        `${url}/x`,
        "PATCH",
        [{ op: "replace", path: "/spec/holderIdentity", value: 42 }],
        "application/json-patch+json"
      )
      assertStatus(holder, 422, "Invalid")
      assert.include(holder.json.message, "LeaseSpec.spec.holderIdentity of type string")
      const negative = yield* send(`${url}/x`, "PATCH", { spec: { leaseDurationSeconds: -5 } }, merge)
      assertStatus(negative, 422, "Invalid")
      assert.strictEqual(
        negative.json.message,
        `Lease.coordination.k8s.io "x" is invalid: spec.leaseDurationSeconds: Invalid value: -5: must be greater than 0`
      )
      const stored = yield* server.objects.get(Resource.leases, { namespace: "kube-system", name: "x" })
      assert.strictEqual(stored.metadata?.resourceVersion, created.json.metadata.resourceVersion)
      // a valid patch still goes through
      const ok = yield* send(`${url}/x`, "PATCH", { spec: { leaseDurationSeconds: 30 } }, merge)
      assert.strictEqual(ok.status, 200, ok.text)
      assert.strictEqual(ok.json.spec.leaseDurationSeconds, 30)
    }))

  it.live("server-side apply: an invalid duration is 422, a string one 400; nothing stored", () =>
    Effect.gen(function*() {
      const server = yield* start()
      const url = `${base(server.url)}/x?fieldManager=test`
      const negative = yield* send(
        url,
        "PATCH",
        lease("x", { leaseDurationSeconds: -1 }),
        "application/apply-patch+yaml"
      )
      assertStatus(negative, 422, "Invalid")
      assert.include(negative.json.message, "spec.leaseDurationSeconds: Invalid value: -1: must be greater than 0")
      const text = yield* send(url, "PATCH", lease("x", { leaseDurationSeconds: "1" }), "application/apply-patch+yaml")
      assert.strictEqual(text.status >= 400 && text.status < 500, true, text.text)
      assert.include(text.json.message, "LeaseSpec.spec.leaseDurationSeconds of type int32")
      assert.deepStrictEqual(yield* server.objects.snapshot(Resource.leases), [])
    }))

  it.live("the programmatic API checks alike: a StatusError, nothing stored", () =>
    Effect.gen(function*() {
      const server = yield* start()
      const bad = {
        metadata: { name: "x", namespace: "kube-system" },
        spec: { holderIdentity: "a", leaseDurationSeconds: -1 }
      }
      const create = yield* Effect.flip(server.objects.create(Resource.leases, bad))
      assert.strictEqual(create.reason, "Invalid")
      assert.deepStrictEqual(create.causes.map((c) => c.field), ["spec.leaseDurationSeconds"])
      const good = yield* server.objects.create(Resource.leases, {
        ...bad,
        spec: { holderIdentity: "a", leaseDurationSeconds: 5 }
      })
      const update = yield* Effect.flip(
        server.objects.update(Resource.leases, {
          ...good,
          spec: { ...good.spec, holderIdentity: 3 as unknown as string }
        })
      )
      assert.strictEqual(update.reason, "BadRequest")
      assert.strictEqual(
        update.message,
        `Lease in version "v1" cannot be handled as a Lease: json: cannot unmarshal number into Go struct field LeaseSpec.spec.holderIdentity of type string`
      )
      const patch = yield* Effect.flip(
        server.objects.patch(Resource.leases, { namespace: "kube-system", name: "x" }, {
          spec: { leaseTransitions: -1 }
        })
      )
      assert.strictEqual(patch.reason, "Invalid")
      const stored = yield* server.objects.get(Resource.leases, { namespace: "kube-system", name: "x" })
      assert.deepStrictEqual(stored.spec, { holderIdentity: "a", leaseDurationSeconds: 5 })
    }))
})

/**
 * The fake Client's patches (merge, JSON, strategic merge) and server-side apply.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { TestClock } from "effect/testing"
import * as ApiStore from "../../../src/ApiStore.js"
import * as Client from "../../../src/Client.js"
import { widgets } from "../../fixtures/index.js"
import { configMap, configMaps, deployment, deployments, failureOf, fakes, layer } from "./fixtures.js"

describe("FakeClient: patches and apply", () => {
  it.effect("merge patch: members merge, null removes; a resourceVersion in the patch is a precondition", () =>
    Effect.gen(function*() {
      const { client } = yield* fakes
      yield* client.create(configMaps, configMap("a", { x: "1", y: "2" }, { labels: { keep: "1", drop: "1" } }))
      const patched = yield* client.patch(
        configMaps,
        "a",
        Client.mergePatch({ metadata: { labels: { drop: null, add: "1" } }, data: { y: null, z: "3" } }),
        { namespace: "ns" }
      )
      assert.deepStrictEqual(patched.metadata?.labels, { keep: "1", add: "1" })
      assert.deepStrictEqual(patched.data, { x: "1", z: "3" })
      assert.strictEqual(patched.metadata?.resourceVersion, "2")
      assert.strictEqual(
        yield* failureOf(client.patch(
          configMaps,
          "a",
          Client.mergePatch({ metadata: { resourceVersion: "1" }, data: { x: "9" } }),
          { namespace: "ns" }
        )),
        "Conflict 409: Operation cannot be fulfilled on configmaps \"a\": the object has been modified; please apply " +
          "your changes to the latest version and try again"
      )
      const fresh = yield* client.patch(
        configMaps,
        "a",
        Client.mergePatch({ metadata: { resourceVersion: "2" }, data: { x: "9" } }),
        { namespace: "ns" }
      )
      assert.strictEqual(fresh.data?.x, "9")
    }).pipe(Effect.provide(layer())))

  it.effect("JSON patch: operations in order; a failed test is Invalid and writes nothing", () =>
    Effect.gen(function*() {
      const { client, source } = yield* fakes
      yield* client.create(configMaps, configMap("a", {}, { finalizers: ["example.com/a", "example.com/b"] }))
      const patched = yield* client.patch(
        configMaps,
        "a",
        Client.jsonPatch([
          { op: "test", path: "/metadata/finalizers/0", value: "example.com/a" },
          { op: "remove", path: "/metadata/finalizers/0" },
          { op: "add", path: "/data/k", value: "v" }
        ]),
        { namespace: "ns" }
      )
      assert.deepStrictEqual(patched.metadata?.finalizers, ["example.com/b"])
      assert.deepStrictEqual(patched.data, { k: "v" })
      const failed = yield* failureOf(client.patch(
        configMaps,
        "a",
        Client.jsonPatch([{ op: "test", path: "/metadata/finalizers/0", value: "example.com/a" }]),
        { namespace: "ns" }
      ))
      assert.strictEqual(failed, "Invalid 422: testing value /metadata/finalizers/0 failed: test failed")
      assert.strictEqual(yield* source.fakeFor(configMaps).resourceVersion, "2")
    }).pipe(Effect.provide(layer())))

  it.effect("strategic merge patch: lists merge by key; a custom resource answers UnsupportedMediaType", () =>
    Effect.gen(function*() {
      const { client } = yield* fakes
      yield* client.create(deployments, {
        ...deployment("web"),
        spec: {
          replicas: 1,
          template: { spec: { containers: [{ name: "web", image: "web:1" }, { name: "log", image: "log:1" }] } }
        }
      })
      const patched = yield* client.patch(
        deployments,
        "web",
        Client.strategicMergePatch({ spec: { template: { spec: { containers: [{ name: "web", image: "web:2" }] } } } }),
        { namespace: "ns" }
      )
      assert.deepStrictEqual(
        (patched.spec?.template as { spec: { containers: unknown } }).spec.containers,
        [{ name: "web", image: "web:2" }, { name: "log", image: "log:1" }]
      )
      assert.strictEqual(patched.metadata?.generation, 2)
      yield* client.create(widgets, { metadata: { namespace: "ns", name: "w" } })
      const refused = yield* failureOf(
        client.patch(widgets, "w", Client.strategicMergePatch({ spec: {} }), { namespace: "ns" })
      )
      assert.match(refused, /^UnsupportedMediaType 415: /)
    }).pipe(Effect.provide(layer())))

  it.effect("patchStatus patches only the status; patch leaves it", () =>
    Effect.gen(function*() {
      const { client } = yield* fakes
      yield* client.create(deployments, deployment("web", 1))
      const status = yield* client.patchStatus(
        deployments,
        "web",
        Client.mergePatch({ spec: { replicas: 5 }, status: { readyReplicas: 1 } }),
        { namespace: "ns" }
      )
      assert.deepStrictEqual([status.spec?.replicas, status.status], [1, { readyReplicas: 1 }])
      const spec = yield* client.patch(
        deployments,
        "web",
        Client.mergePatch({ spec: { replicas: 5 }, status: { readyReplicas: 9 } }),
        { namespace: "ns" }
      )
      assert.deepStrictEqual([spec.spec?.replicas, spec.status], [5, { readyReplicas: 1 }])
    }).pipe(Effect.provide(layer())))

  it.effect("apply creates when absent, merges otherwise, and records the manager in managedFields", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(Date.parse("2026-01-02T03:04:05Z"))
      const { client } = yield* fakes
      const created = yield* client.apply(
        configMaps,
        { metadata: { namespace: "ns", name: "a", labels: { app: "web" } }, data: { x: "1" } },
        { fieldManager: "tester" }
      )
      assert.strictEqual(created.metadata?.resourceVersion, "1")
      assert.deepStrictEqual(created.metadata?.managedFields, [{
        manager: "tester",
        operation: "Apply",
        apiVersion: "v1",
        time: "2026-01-02T03:04:05Z",
        fieldsType: "FieldsV1",
        fieldsV1: { "f:data": { "f:x": {} }, "f:metadata": { "f:labels": { "f:app": {} } } }
      }])
      // another manager adds a field: both entries; the first one's fields stay
      const merged = yield* client.apply(configMaps, { metadata: { namespace: "ns", name: "a" }, data: { y: "2" } })
      assert.deepStrictEqual(merged.data, { x: "1", y: "2" })
      assert.deepStrictEqual(
        (merged.metadata?.managedFields ?? []).map((e) => e.manager),
        ["tester", Client.defaultFieldManager]
      )
      // the same configuration again writes nothing
      const again = yield* client.apply(configMaps, { metadata: { namespace: "ns", name: "a" }, data: { y: "2" } })
      assert.strictEqual(again.metadata?.resourceVersion, merged.metadata?.resourceVersion)
      // a stale resourceVersion in the configuration is a Conflict
      assert.match(
        yield* failureOf(client.apply(configMaps, { metadata: { namespace: "ns", name: "a", resourceVersion: "1" } })),
        /^Conflict 409: /
      )
    }).pipe(Effect.provide(layer())))

  it.effect("applyStatus writes the status of an existing object only, with a status entry", () =>
    Effect.gen(function*() {
      const { client } = yield* fakes
      assert.strictEqual(
        yield* failureOf(client.applyStatus(deployments, { metadata: { namespace: "ns", name: "web" } })),
        "NotFound 404: deployments.apps \"web\" not found"
      )
      yield* client.create(deployments, deployment("web", 1))
      const applied = yield* client.applyStatus(deployments, {
        metadata: { namespace: "ns", name: "web" },
        spec: { replicas: 7 },
        status: { readyReplicas: 1 }
      }, { fieldManager: "status-writer" })
      assert.deepStrictEqual([applied.spec?.replicas, applied.status], [1, { readyReplicas: 1 }])
      const entry = applied.metadata?.managedFields?.[0]
      assert.deepStrictEqual(
        [entry?.manager, entry?.subresource, entry?.fieldsV1],
        ["status-writer", "status", { "f:status": { "f:readyReplicas": {} } }]
      )
    }).pipe(Effect.provide(layer())))

  it("ApiStore exposes the patches the fake and the test kit share", () => {
    assert.deepStrictEqual(ApiStore.mergePatch({ a: { b: 1, c: 2 } }, { a: { b: null } }), { a: { c: 2 } })
    assert.deepStrictEqual(
      ApiStore.strategicMergePatch({ conditions: [{ type: "A", s: 1 }] }, { conditions: [{ type: "B", s: 2 }] }),
      { conditions: [{ type: "A", s: 1 }, { type: "B", s: 2 }] }
    )
    assert.throws(() => ApiStore.jsonPatch({}, [{ op: "remove", path: "/x" }]), ApiStore.JsonPatchError)
    const tooMany = (() => {
      try {
        ApiStore.jsonPatch({}, [{ op: "add", path: "/a", value: 1 }, { op: "add", path: "/b", value: 1 }], {
          maxOperations: 1,
          maxCopyBytes: 10
        })
      } catch (e) {
        return e
      }
    })()
    assert.isTrue(tooMany instanceof ApiStore.JsonPatchError && tooMany.reason === "TooLarge" && tooMany.tooLarge)
    assert.strictEqual(ApiStore.defaultJsonPatchLimits.maxOperations, 10_000)
  })
})

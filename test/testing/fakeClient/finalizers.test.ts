/**
 * The fake Client's deletion of objects with finalizers, as kube-apiserver's registry does it.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Fiber, Stream } from "effect"
import { TestClock } from "effect/testing"
import * as Client from "../../../src/Client.js"
import type { ConfigMap } from "./fixtures.js"
import { configMap, configMaps, deployment, deployments, failureOf, fakes, layer } from "./fixtures.js"

const finalizer = "example.com/cleanup"

describe("FakeClient: finalizers and deletion", () => {
  it.effect("delete of an object with finalizers marks it (MODIFIED); emptying its finalizers deletes it (DELETED)", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(Date.parse("2026-05-06T07:08:09.5Z"))
      const { client } = yield* fakes
      yield* client.create(configMaps, configMap("a", {}, { finalizers: [finalizer] }))
      const events = yield* client.watch(configMaps, { namespace: "ns", resourceVersion: "1" }).pipe(
        Stream.take(2),
        Stream.runCollect,
        Effect.forkScoped
      )
      const deleted = yield* client.delete(configMaps, "a", { namespace: "ns" })
      assert.strictEqual(deleted._tag, "Object")
      const marked = deleted._tag === "Object" ? deleted.object : undefined
      assert.strictEqual(marked?.metadata?.deletionTimestamp, "2026-05-06T07:08:09Z")
      assert.strictEqual(marked?.metadata?.deletionGracePeriodSeconds, 0)
      assert.deepStrictEqual(yield* client.get(configMaps, "a", { namespace: "ns" }), marked)
      // a second delete changes nothing
      const again = yield* client.delete(configMaps, "a", { namespace: "ns" })
      assert.strictEqual(again._tag === "Object" ? again.object.metadata?.resourceVersion : "", "2")
      // the update that removes the last finalizer deletes it
      const gone = yield* client.update(configMaps, {
        ...marked!,
        metadata: { ...marked!.metadata, finalizers: [] }
      })
      assert.strictEqual(gone.metadata?.resourceVersion, "3")
      assert.strictEqual(
        yield* failureOf(client.get(configMaps, "a", { namespace: "ns" })),
        "NotFound 404: configmaps \"a\" not found"
      )
      const seen = yield* Fiber.join(events)
      assert.deepStrictEqual(
        seen.map((e) =>
          `${e.type} ${e.object.metadata?.resourceVersion} ${(e.object as ConfigMap).metadata?.deletionTimestamp}`
        ),
        ["MODIFIED 2 2026-05-06T07:08:09Z", "DELETED 3 2026-05-06T07:08:09Z"]
      )
    }).pipe(Effect.provide(layer())))

  it.effect("a patch removing the last finalizer deletes the object; one finalizer of two leaves it marked", () =>
    Effect.gen(function*() {
      const { client, source } = yield* fakes
      yield* client.create(configMaps, configMap("a", {}, { finalizers: ["one", "two"] }))
      yield* client.delete(configMaps, "a", { namespace: "ns" })
      const one = yield* client.patch(
        configMaps,
        "a",
        Client.jsonPatch([{ op: "test", path: "/metadata/finalizers/0", value: "one" }, {
          op: "remove",
          path: "/metadata/finalizers/0"
        }]),
        { namespace: "ns" }
      )
      assert.deepStrictEqual(one.metadata?.finalizers, ["two"])
      assert.isDefined(one.metadata?.deletionTimestamp)
      yield* client.patch(configMaps, "a", Client.mergePatch({ metadata: { finalizers: null } }), { namespace: "ns" })
      assert.deepStrictEqual(yield* source.fakeFor(configMaps).objects, [])
    }).pipe(Effect.provide(layer())))

  it.effect("no new finalizer on an object being deleted (Invalid); the generation grows when it is marked", () =>
    Effect.gen(function*() {
      const { client } = yield* fakes
      const created = yield* client.create(deployments, {
        ...deployment("web"),
        metadata: { namespace: "ns", name: "web", finalizers: [finalizer] }
      })
      const deleted = yield* client.delete(deployments, "web", { namespace: "ns" })
      const marked = deleted._tag === "Object" ? deleted.object : created
      assert.strictEqual(marked.metadata?.generation, 2)
      assert.strictEqual(
        yield* failureOf(client.update(deployments, {
          ...marked,
          metadata: { ...marked.metadata, finalizers: [finalizer, "example.com/late"] }
        })),
        "Invalid 422: Deployment.apps \"web\" is invalid: metadata.finalizers: Forbidden: no new finalizers can be " +
          "added if the object is being deleted, found new finalizers []string{\"example.com/late\"}"
      )
      // the deletion timestamp cannot be removed by an update
      const kept = yield* client.update(deployments, {
        ...marked,
        metadata: { ...marked.metadata, deletionTimestamp: undefined, labels: { a: "b" } }
      })
      assert.strictEqual(kept.metadata?.deletionTimestamp, marked.metadata?.deletionTimestamp)
    }).pipe(Effect.provide(layer())))

  it.effect("an object without finalizers is deleted at once (DELETED of its last state)", () =>
    Effect.gen(function*() {
      const { client } = yield* fakes
      yield* client.create(configMaps, configMap("a", { k: "v" }))
      const events = yield* client.watch(configMaps, { resourceVersion: "1" }).pipe(
        Stream.take(1),
        Stream.runCollect,
        Effect.forkScoped
      )
      yield* client.delete(configMaps, "a", { namespace: "ns", propagationPolicy: "Foreground" })
      const seen = yield* Fiber.join(events)
      assert.deepStrictEqual(
        seen.map((e) => [e.type, e.object.metadata?.resourceVersion, (e.object as { data?: unknown }).data]),
        [["DELETED", "2", { k: "v" }]]
      )
    }).pipe(Effect.provide(layer())))
})

/**
 * The fake Client's injected failures and its record of writes.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Fiber, Stream } from "effect"
import { TestClock } from "effect/testing"
import * as ApiError from "../../../src/ApiError.js"
import * as Client from "../../../src/Client.js"
import * as Wire from "../../../src/Wire.js"
import { serverError, transport } from "../../fixtures/index.js"
import { configMap, configMaps, deployment, deployments, failureOf, fakes, layer } from "./fixtures.js"

const conflict = Wire.failureStatus(409, "Conflict", "injected conflict")

describe("FakeClient: failure injection and the record of writes", () => {
  it.effect("failNext: the next n requests of the verb fail with the Status's typed error, then it answers again", () =>
    Effect.gen(function*() {
      const { client, fake, source } = yield* fakes
      const cm = yield* client.create(configMaps, configMap("a"))
      yield* fake.failNext("update", conflict, { times: 2 })
      assert.strictEqual(yield* failureOf(client.update(configMaps, cm)), "Conflict 409: injected conflict")
      assert.strictEqual(yield* failureOf(client.update(configMaps, cm)), "Conflict 409: injected conflict")
      assert.strictEqual(yield* source.fakeFor(configMaps).resourceVersion, "1", "nothing written")
      const updated = yield* client.update(configMaps, { ...cm, data: { k: "v" } })
      assert.strictEqual(updated.metadata?.resourceVersion, "2")
      // retryOnConflict gets through one injected conflict, after its 10 ms
      yield* fake.failNext("update", conflict)
      const retrying = yield* Client.retryOnConflict(
        Effect.flatMap(
          client.get(configMaps, "a", { namespace: "ns" }),
          (current) => client.update(configMaps, { ...current, data: { k: "w" } })
        )
      ).pipe(Effect.forkScoped)
      yield* TestClock.adjust("20 millis")
      assert.strictEqual((yield* Fiber.join(retrying)).data?.k, "w")
    }).pipe(Effect.provide(layer())))

  it.effect("a failure may be limited to a resource, a namespace and a name; an ApiError is failed as it is", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* fakes
      const error = transport()
      yield* fake.failNext("create", error, { resource: deployments, name: "web" })
      yield* client.create(configMaps, configMap("web"))
      yield* client.create(deployments, deployment("other"))
      assert.strictEqual(yield* Effect.flip(client.create(deployments, deployment("web"))), error)
      yield* client.create(deployments, deployment("web"))
      yield* fake.failNext("get", serverError(503, "ServiceUnavailable", "down"), { namespace: "elsewhere" })
      yield* client.get(configMaps, "web", { namespace: "ns" })
      assert.strictEqual(
        yield* failureOf(client.get(configMaps, "web", { namespace: "elsewhere" })),
        "ServerError 503: down"
      )
    }).pipe(Effect.provide(layer())))

  it.effect("failAlways fails every matching request until clearFailures; reads and watches fail too", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* fakes
      yield* fake.failAlways("list", Wire.failureStatus(403, "Forbidden", "no list for you"))
      yield* fake.failAlways("watch", Wire.failureStatus(410, "Expired", "too old"))
      yield* fake.failAlways("delete", Wire.failureStatus(500, "InternalError", "boom"), { resource: configMaps })
      for (let i = 0; i < 3; i++) {
        assert.strictEqual(yield* failureOf(client.list(configMaps)), "Forbidden 403: no list for you")
      }
      assert.strictEqual(yield* failureOf(client.listAll(configMaps)), "Forbidden 403: no list for you")
      const watched = yield* Effect.flip(Stream.runCollect(client.watch(configMaps)))
      assert.isTrue(watched._tag === "StatusError" && watched.reason === "Gone")
      yield* client.create(configMaps, configMap("a"))
      assert.strictEqual(yield* failureOf(client.delete(configMaps, "a", { namespace: "ns" })), "ServerError 500: boom")
      yield* fake.clearFailures
      assert.deepStrictEqual((yield* client.list(configMaps)).items.map((c) => c.metadata?.name), ["a"])
      const deleted = yield* client.delete(configMaps, "a", { namespace: "ns" })
      assert.strictEqual(deleted._tag, "Object")
      assert.isTrue(ApiError.isApiError(yield* Effect.flip(client.get(configMaps, "a", { namespace: "ns" }))))
    }).pipe(Effect.provide(layer())))

  it.effect("writes: every write request received (refused ones too), with its body; clearWrites forgets them", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* fakes
      yield* client.create(configMaps, { metadata: { namespace: "ns", generateName: "g-" } })
      yield* client.create(configMaps, configMap("a", { k: "v" }))
      yield* Effect.flip(client.create(configMaps, configMap("a")))
      yield* client.patch(configMaps, "a", Client.mergePatch({ data: { k: "w" } }), { namespace: "ns", dryRun: true })
      yield* client.apply(configMaps, { metadata: { namespace: "ns", name: "b" } }, { fieldManager: "m" })
      yield* client.delete(configMaps, "a", { namespace: "ns", preconditions: { resourceVersion: "2" } })
      assert.deepStrictEqual(yield* fake.writes, [
        {
          verb: "create",
          resource: "configmaps",
          namespace: "ns",
          name: undefined,
          body: { metadata: { namespace: "ns", generateName: "g-" } },
          dryRun: false
        },
        {
          verb: "create",
          resource: "configmaps",
          namespace: "ns",
          name: "a",
          body: configMap("a", { k: "v" }),
          dryRun: false
        },
        { verb: "create", resource: "configmaps", namespace: "ns", name: "a", body: configMap("a"), dryRun: false },
        {
          verb: "patch",
          resource: "configmaps",
          namespace: "ns",
          name: "a",
          body: Client.mergePatch({ data: { k: "w" } }),
          dryRun: true
        },
        {
          verb: "apply",
          resource: "configmaps",
          namespace: "ns",
          name: "b",
          body: { metadata: { namespace: "ns", name: "b" } },
          dryRun: false
        },
        {
          verb: "delete",
          resource: "configmaps",
          namespace: "ns",
          name: "a",
          body: { namespace: "ns", preconditions: { resourceVersion: "2" } },
          dryRun: false
        }
      ])
      yield* fake.clearWrites
      assert.deepStrictEqual(yield* fake.writes, [])
    }).pipe(Effect.provide(layer())))
})

/**
 * InformerFactory: start, waitForCacheSync (statuses; 403 and 404 named on timeout, with fakes and over HTTP) and
 * status.
 */
import * as ApiServer from "@effect-informers/testkit/ApiServer"
import { assert, describe, it } from "@effect/vitest"
import { Context, Duration, Effect, Fiber, Layer, Option, References } from "effect"
import { TestClock } from "effect/testing"
import * as InformerFactory from "../../../src/InformerFactory.js"
import * as Informers from "../../../src/Layer.js"
import type { ReflectorError } from "../../../src/Reflector.js"
import * as Resource from "../../../src/Resource.js"
import { namespacedNames as names, statusError, widgets } from "../../fixtures/index.js"
import { obj, setup } from "./fixtures.js"

/** An error's tag and reason, as the Reflector's logs name them: `StatusError (Forbidden)`. */
const kindOf = (error: Option.Option<ReflectorError>): string | undefined =>
  Option.match(error, {
    onNone: () => undefined,
    onSome: (e) => `${e._tag} (${"reason" in e ? e.reason : e._tag === "StoreError" ? e.operation : "Defect"})`
  })

describe("InformerFactory - lifecycle", () => {
  it.effect("start starts the informers created before it; a later start picks up new ones", () =>
    Effect.gen(function*() {
      const { factory } = yield* setup()
      const pods = yield* factory.informerFor(Resource.pods)
      assert.isFalse(yield* pods.isStarted)
      yield* factory.start
      assert.isTrue(yield* pods.isStarted)
      const nodes = yield* factory.informerFor(Resource.nodes)
      yield* TestClock.adjust(0)
      assert.isFalse(yield* nodes.isStarted)
      // waiting only covers started informers
      const statuses = yield* factory.waitForCacheSync()
      assert.deepStrictEqual(statuses.map((s) => s.informer), ["pods in all namespaces"])
      assert.isFalse(yield* nodes.hasSynced)
      yield* factory.start
      assert.isTrue(yield* nodes.isStarted)
      yield* factory.start // nothing left to start
      const all = yield* factory.waitForCacheSync()
      assert.deepStrictEqual(all.map((s) => [s.informer, s.synced]), [["pods in all namespaces", true], [
        "nodes",
        true
      ]])
    }))

  it.effect("waitForCacheSync returns every started informer's status, all synced", () =>
    Effect.gen(function*() {
      const { factory, fakes } = yield* setup()
      yield* fakes.fakeFor(Resource.pods).add(obj("default", "web"))
      yield* fakes.fakeFor(Resource.nodes).add(obj(undefined, "node-1"))
      const pods = yield* factory.informerFor(Resource.pods, { namespace: "default" })
      yield* factory.informerFor(Resource.nodes)
      yield* factory.start
      const statuses = yield* factory.waitForCacheSync({ timeout: "1 second" })
      assert.deepStrictEqual(statuses, [
        { informer: "pods in default", synced: true, lastError: Option.none() },
        { informer: "nodes", synced: true, lastError: Option.none() }
      ])
      assert.deepStrictEqual(names(yield* pods.indexer.list), ["default/web"])
    }))

  it.effect("waitForCacheSync times out with a CacheSyncError naming a 403", () =>
    Effect.gen(function*() {
      const { factory, fakes } = yield* setup({ reflector: { watchList: false } })
      yield* fakes.fakeFor(Resource.pods).failNextList(
        statusError(403, "Forbidden", `pods is forbidden: User "x" cannot list resource "pods"`),
        1000
      )
      yield* factory.informerFor(Resource.pods, { namespace: "default" })
      yield* factory.informerFor(Resource.nodes)
      yield* factory.start
      const fiber = yield* Effect.forkChild(Effect.flip(factory.waitForCacheSync({ timeout: "10 seconds" })))
      yield* TestClock.adjust("10 seconds")
      const error = yield* Fiber.join(fiber)
      assert.strictEqual(error._tag, "CacheSyncError")
      assert.isTrue(Duration.equals(error.timeout, Duration.seconds(10)))
      assert.include(error.message, "pods in default")
      assert.include(error.message, "StatusError (Forbidden)")
      assert.include(error.message, "cannot list resource")
      assert.notInclude(error.message, "nodes") // synced informers are not named
      const pods = error.informers.find((s) => s.informer === "pods in default")
      assert.isFalse(pods?.synced)
      assert.strictEqual(kindOf(pods!.lastError), "StatusError (Forbidden)")
      assert.isTrue(error.informers.find((s) => s.informer === "nodes")?.synced)
    }))

  it.effect("waitForCacheSync names a 404 for a missing CRD", () =>
    Effect.gen(function*() {
      const { factory, fakes } = yield* setup({ reflector: { watchList: false } })
      yield* fakes.fakeFor(widgets).failNextList(
        statusError(404, "NotFound", "the server could not find the requested resource"),
        1000
      )
      yield* factory.informerFor(widgets)
      yield* factory.start
      const fiber = yield* Effect.forkChild(Effect.flip(factory.waitForCacheSync({ timeout: "5 seconds" })))
      yield* TestClock.adjust("5 seconds")
      const error = yield* Fiber.join(fiber)
      assert.strictEqual(error._tag, "CacheSyncError")
      assert.include(error.message, "widgets.example.com in all namespaces")
      assert.include(error.message, "StatusError (NotFound)")
      assert.include(error.message, "could not find the requested resource")
    }))

  it.live("waitForCacheSync names a 404 (a CRD the embedded API server does not serve) and a 403 over HTTP", () =>
    Effect.gen(function*() {
      const server = yield* ApiServer.make()
      const build = Layer.build(
        Informers.fromKubeConfig(Informers.kubeConfigFromOptions({ server: server.url }), {
          factory: { reflector: { watchList: false } }
        })
      )
      // 404: the server has no widgets.example.com
      const crd = Context.get(yield* build, InformerFactory.InformerFactory)
      yield* crd.informerFor(widgets)
      yield* crd.start
      const missing = yield* Effect.flip(crd.waitForCacheSync({ timeout: "1 second" }))
      assert.strictEqual(missing._tag, "CacheSyncError")
      assert.include(missing.message, "widgets.example.com in all namespaces")
      assert.include(missing.message, "StatusError (NotFound)")
      // 403: every LIST is forbidden
      yield* server.faults.inject({ _tag: "ServerError", status: 403, count: 1000, on: "list" })
      const pods = Context.get(yield* build, InformerFactory.InformerFactory)
      yield* pods.informerFor(Resource.pods, { namespace: "default" })
      yield* pods.start
      const forbidden = yield* Effect.flip(pods.waitForCacheSync({ timeout: "1 second" }))
      assert.include(forbidden.message, "pods in default")
      assert.include(forbidden.message, "StatusError (Forbidden)")
      const status = forbidden.informers.find((s) => s.informer === "pods in default")
      assert.strictEqual(kindOf(status!.lastError), "StatusError (Forbidden)")
      yield* server.faults.clear
      yield* pods.waitForCacheSync({ timeout: "10 seconds" })
    }).pipe(Effect.provideService(References.MinimumLogLevel, "Error")))

  it.effect("status reflects synced and the last error", () =>
    Effect.gen(function*() {
      const { factory, fakes } = yield* setup({ reflector: { watchList: false } })
      const forbidden = statusError(403, "Forbidden", "forbidden for a while")
      yield* fakes.fakeFor(Resource.pods).failNextList(forbidden, 1)
      yield* factory.informerFor(Resource.pods)
      assert.deepStrictEqual(yield* factory.status, [
        { informer: "pods in all namespaces", synced: false, lastError: Option.none() }
      ])
      yield* factory.start
      yield* TestClock.adjust(0)
      // (Effect hands the error on as a span-annotated proxy: compare fields, not identity)
      const [failing] = yield* factory.status
      assert.isFalse(failing.synced)
      assert.strictEqual(kindOf(failing.lastError), "StatusError (Forbidden)")
      assert.strictEqual(Option.getOrUndefined(failing.lastError)?.message, forbidden.message)
      yield* TestClock.adjust("1 minute")
      const [synced] = yield* factory.status
      assert.isTrue(synced.synced)
      // the last error seen stays visible after recovery
      assert.strictEqual(Option.getOrUndefined(synced.lastError)?.message, forbidden.message)
    }))
})

/**
 * InformerFactory: watches added and removed while it runs (controller-runtime's `GetInformer` and
 * `RemoveInformer`): `removeInformer` stops an informer and forgets it, a later `informerFor` builds a new one
 * that lists again; `informerForScoped` removes it with the last scope that asked for it.
 */
import { assert, describe, it } from "@effect/vitest"
import { Deferred, Effect, Exit, Fiber, Scope } from "effect"
import * as Resource from "../../../src/Resource.js"
import { serverError, settle } from "../../fixtures/index.js"
import { obj, setup } from "./fixtures.js"

describe("InformerFactory - removeInformer", () => {
  it.effect("stops the informer and forgets it; a later informerFor builds a new one, which lists again", () =>
    Effect.gen(function*() {
      const { factory, fakes } = yield* setup({ reflector: { watchList: false } })
      const fake = fakes.fakeFor(Resource.pods)
      yield* fake.add(obj("default", "a"))
      const pods = yield* factory.informerFor(Resource.pods)
      const inProgress = yield* Deferred.make<void>()
      const interrupted = yield* Deferred.make<void>()
      // a callback in progress at the removal: interrupted
      yield* pods.addEventHandler({
        onAdd: () =>
          Deferred.succeed(inProgress, undefined).pipe(
            Effect.andThen(Effect.never),
            Effect.onInterrupt(() => Deferred.succeed(interrupted, undefined))
          )
      })
      yield* factory.start
      yield* factory.waitForCacheSync()
      yield* Deferred.await(inProgress)
      yield* settle
      assert.strictEqual(yield* fake.openWatches, 1)

      assert.isTrue(yield* factory.removeInformer(Resource.pods))
      // removeInformer waited for the informer's fibers
      assert.isTrue(yield* pods.isStopped)
      assert.isTrue(yield* Deferred.isDone(interrupted))
      assert.strictEqual(yield* pods.awaitStop, "Closed")
      assert.strictEqual(yield* fake.openWatches, 0)
      assert.deepStrictEqual(yield* factory.status, [])
      // removing what the factory does not have does nothing
      assert.isFalse(yield* factory.removeInformer(Resource.pods))
      assert.isFalse(yield* factory.removeInformer(Resource.nodes))

      yield* fake.clearRequests
      const again = yield* factory.informerFor(Resource.pods)
      assert.notStrictEqual(again, pods)
      assert.notStrictEqual(again.indexer, pods.indexer)
      assert.isFalse(yield* again.isStarted) // the next start starts it, as client-go's factory does
      yield* factory.start
      const statuses = yield* factory.waitForCacheSync()
      assert.deepStrictEqual(statuses.map((s) => [s.informer, s.synced]), [["pods in all namespaces", true]])
      assert.strictEqual((yield* fake.requests)[0]._tag, "List")
      assert.deepStrictEqual((yield* again.indexer.list).map((o) => o.metadata?.name), ["a"])
    }))

  it.effect("an informer added after start waits for the next start; removing one leaves the others running", () =>
    Effect.gen(function*() {
      const { factory, fakes } = yield* setup()
      const pods = yield* factory.informerFor(Resource.pods)
      const nodes = yield* factory.informerFor(Resource.nodes)
      yield* factory.start
      yield* factory.waitForCacheSync()
      const configMaps = yield* factory.informerFor(Resource.configMaps)
      assert.isFalse(yield* configMaps.isStarted)
      assert.isTrue(yield* factory.removeInformer(Resource.nodes))
      yield* factory.start
      yield* factory.waitForCacheSync()
      assert.isTrue(yield* configMaps.hasSynced)
      assert.isTrue(yield* nodes.isStopped)
      assert.isFalse(yield* pods.isStopped)
      yield* settle
      assert.strictEqual(yield* fakes.fakeFor(Resource.pods).openWatches, 1)
      assert.strictEqual(yield* fakes.fakeFor(Resource.nodes).openWatches, 0)
      assert.deepStrictEqual((yield* factory.status).map((s) => s.informer), [
        "pods in all namespaces",
        "configmaps in all namespaces"
      ])
    }))

  it.effect("the namespace and selectors choose the informer removed; a selector that does not parse fails", () =>
    Effect.gen(function*() {
      const { factory } = yield* setup()
      const inA = yield* factory.informerFor(Resource.pods, { namespace: "a" })
      const inB = yield* factory.informerFor(Resource.pods, { namespace: "b" })
      const web = yield* factory.informerFor(Resource.pods, { namespace: "a", labelSelector: "app=web" })
      assert.isTrue(yield* factory.removeInformer(Resource.pods, { namespace: "a", labelSelector: "app==web" }))
      assert.isTrue(yield* web.isStopped)
      assert.isFalse(yield* inA.isStopped)
      assert.isTrue(yield* factory.removeInformer(Resource.pods, { namespace: "a" }))
      assert.isTrue(yield* inA.isStopped)
      assert.isFalse(yield* inB.isStopped)
      const error = yield* Effect.flip(factory.removeInformer(Resource.pods, { labelSelector: "app in (" }))
      assert.strictEqual(error._tag, "LabelSelectorParseError")
      assert.isFalse(yield* inB.isStopped)
    }))

  it.effect("a wait for cache sync on an informer removed before it synced fails with Stopped", () =>
    Effect.gen(function*() {
      const { factory, fakes } = yield* setup({ reflector: { watchList: false } })
      yield* fakes.fakeFor(Resource.pods).failNextList(serverError(503), 1000)
      const pods = yield* factory.informerFor(Resource.pods)
      yield* factory.start
      const waiting = yield* Effect.forkChild(Effect.flip(factory.waitForCacheSync()))
      const informerWait = yield* Effect.forkChild(Effect.flip(pods.synced))
      yield* settle
      yield* factory.removeInformer(Resource.pods)
      const error = yield* Fiber.join(waiting)
      assert.strictEqual(error.reason, "Stopped")
      assert.include(error.message, "pods in all namespaces")
      const stopped = yield* Fiber.join(informerWait)
      assert.strictEqual(stopped._tag, "InformerStoppedError")
      assert.isUndefined(stopped.reason)
    }))

  it.effect("informerForScoped: removed when the last scope that asked for it closes", () =>
    Effect.gen(function*() {
      const { factory } = yield* setup()
      const first = yield* Scope.make()
      const second = yield* Scope.make()
      const pods = yield* factory.informerForScoped(Resource.pods).pipe(Scope.provide(first))
      assert.strictEqual(yield* factory.informerForScoped(Resource.pods).pipe(Scope.provide(second)), pods)
      yield* factory.start
      yield* factory.waitForCacheSync()
      yield* Scope.close(first, Exit.void)
      assert.isFalse(yield* pods.isStopped)
      yield* Scope.close(second, Exit.void)
      assert.isTrue(yield* pods.isStopped)
      assert.deepStrictEqual(yield* factory.status, [])
      assert.notStrictEqual(yield* factory.informerFor(Resource.pods), pods)
    }))

  it.effect("informerForScoped: an informer informerFor asked for too stays until removeInformer", () =>
    Effect.gen(function*() {
      const { factory } = yield* setup()
      const scope = yield* Scope.make()
      const nodes = yield* factory.informerForScoped(Resource.nodes).pipe(Scope.provide(scope))
      assert.strictEqual(yield* factory.informerFor(Resource.nodes), nodes)
      yield* Scope.close(scope, Exit.void)
      assert.isFalse(yield* nodes.isStopped)
      // removed while a scope holds it: the scope's close then does nothing more
      const later = yield* Scope.make()
      yield* factory.informerForScoped(Resource.nodes).pipe(Scope.provide(later))
      assert.isTrue(yield* factory.removeInformer(Resource.nodes))
      assert.isTrue(yield* nodes.isStopped)
      const fresh = yield* factory.informerFor(Resource.nodes)
      yield* Scope.close(later, Exit.void)
      assert.isFalse(yield* fresh.isStopped)
    }))

  it.effect("after the shutdown, removeInformer does nothing", () =>
    Effect.gen(function*() {
      const { factory } = yield* setup()
      yield* factory.informerFor(Resource.pods)
      yield* factory.shutdown
      assert.isFalse(yield* factory.removeInformer(Resource.pods))
    }))
})

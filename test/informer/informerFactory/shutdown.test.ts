/**
 * InformerFactory: shutdown (idempotent, concurrent), by closing the factory's scope and by releasing the layer.
 */
import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Exit, Layer, Scope } from "effect"
import { TestClock } from "effect/testing"
import * as FakeListerWatcher from "../../../src/FakeListerWatcher.js"
import * as InformerFactory from "../../../src/InformerFactory.js"
import * as Resource from "../../../src/Resource.js"
import { setup } from "./fixtures.js"

describe("InformerFactory - lifecycle", () => {
  it.effect("shutdown stops every informer, is idempotent, and ends the factory", () =>
    Effect.gen(function*() {
      const { factory, fakes } = yield* setup()
      const pods = yield* factory.informerFor(Resource.pods)
      const nodes = yield* factory.informerFor(Resource.nodes)
      yield* factory.start
      yield* factory.waitForCacheSync()
      const notStarted = yield* factory.informerFor(Resource.configMaps)
      yield* TestClock.adjust(0)
      assert.strictEqual(yield* fakes.fakeFor(Resource.pods).openWatches, 1)
      assert.strictEqual(yield* fakes.fakeFor(Resource.nodes).openWatches, 1)
      yield* factory.shutdown
      assert.isTrue(yield* pods.isStopped)
      assert.isTrue(yield* nodes.isStopped)
      assert.isTrue(yield* notStarted.isStopped)
      assert.strictEqual(yield* fakes.fakeFor(Resource.pods).openWatches, 0)
      assert.strictEqual(yield* fakes.fakeFor(Resource.nodes).openWatches, 0)
      yield* factory.shutdown // idempotent
      const error = yield* Effect.flip(factory.informerFor(Resource.pods))
      assert.strictEqual(error._tag, "FactoryShutdownError")
      assert.strictEqual(error.message, "the informer factory has been shut down")
      assert.strictEqual((yield* Effect.flip(factory.listerFor(Resource.secrets)))._tag, "FactoryShutdownError")
      yield* factory.start // does nothing
      assert.isFalse(yield* notStarted.isStarted)
      assert.strictEqual(yield* fakes.fakeFor(Resource.configMaps).openWatches, 0)
    }))

  it.effect("concurrent shutdowns all wait for the informers", () =>
    Effect.gen(function*() {
      const { factory } = yield* setup()
      const pods = yield* factory.informerFor(Resource.pods)
      yield* factory.start
      yield* factory.waitForCacheSync()
      yield* Effect.all([factory.shutdown, factory.shutdown, factory.shutdown], { concurrency: "unbounded" })
      assert.isTrue(yield* pods.isStopped)
    }))

  it.effect("closing the factory's scope shuts it down", () =>
    Effect.gen(function*() {
      const context = yield* Layer.build(FakeListerWatcher.layerSource())
      const fakes = Context.get(context, FakeListerWatcher.FakeListerWatcherSource)
      const scope = yield* Scope.make()
      const factory = yield* InformerFactory.make().pipe(Effect.provide(context), Scope.provide(scope))
      const pods = yield* factory.informerFor(Resource.pods)
      yield* factory.start
      yield* factory.waitForCacheSync()
      yield* TestClock.adjust(0)
      assert.strictEqual(yield* fakes.fakeFor(Resource.pods).openWatches, 1)
      yield* Scope.close(scope, Exit.void)
      assert.isTrue(yield* pods.isStopped)
      assert.strictEqual(yield* fakes.fakeFor(Resource.pods).openWatches, 0)
      assert.strictEqual((yield* Effect.flip(factory.informerFor(Resource.pods)))._tag, "FactoryShutdownError")
    }))

  it.effect("the layer shuts the factory down when released", () =>
    Effect.gen(function*() {
      const scope = yield* Scope.make()
      const context = yield* Layer.build(
        InformerFactory.layer().pipe(Layer.provideMerge(FakeListerWatcher.layerSource()))
      ).pipe(Scope.provide(scope))
      const factory = Context.get(context, InformerFactory.InformerFactory)
      const pods = yield* factory.informerFor(Resource.pods)
      yield* factory.start
      yield* factory.waitForCacheSync()
      yield* Scope.close(scope, Exit.void)
      assert.isTrue(yield* pods.isStopped)
    }))
})

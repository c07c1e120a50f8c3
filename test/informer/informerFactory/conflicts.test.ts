/**
 * InformerFactory: option conflicts on a shared informer (transform, resync period, index functions), and index
 * names added by a later request.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { TestClock } from "effect/testing"
import * as Indexer from "../../../src/Indexer.js"
import type { KubeObject } from "../../../src/KubeObject.js"
import * as Resource from "../../../src/Resource.js"
import { namespacedNames as names } from "../../fixtures/index.js"
import { obj, setup } from "./fixtures.js"

const byApp: Indexer.IndexFunction<KubeObject> = (o) => {
  const app = o.metadata?.labels?.app
  return app === undefined ? [] : [app]
}
const byTier: Indexer.IndexFunction<KubeObject> = (o) => {
  const tier = o.metadata?.labels?.tier
  return tier === undefined ? [] : [tier]
}

describe("InformerFactory - informerFor", () => {
  it.effect("a conflicting transform is an InformerOptionsConflictError", () =>
    Effect.gen(function*() {
      const { factory } = yield* setup()
      const transform = <A>(o: A): A => o
      const first = yield* factory.informerFor(Resource.pods, { transform })
      // the same function, or no opinion, is no conflict
      assert.strictEqual(yield* factory.informerFor(Resource.pods, { transform }), first)
      assert.strictEqual(yield* factory.informerFor(Resource.pods), first)
      const error = yield* Effect.flip(factory.informerFor(Resource.pods, { transform: (o) => o }))
      assert.strictEqual(error._tag, "InformerOptionsConflictError")
      assert(error._tag === "InformerOptionsConflictError")
      assert.strictEqual(error.option, "transform")
      assert.include(error.message, "pods in all namespaces")
      // an informer created without a transform cannot get one later
      yield* factory.informerFor(Resource.pods, { namespace: "x" })
      const late = yield* Effect.flip(factory.informerFor(Resource.pods, { namespace: "x", transform }))
      assert.strictEqual(late._tag, "InformerOptionsConflictError")
    }))

  it.effect("a conflicting resync period is an InformerOptionsConflictError", () =>
    Effect.gen(function*() {
      const { factory } = yield* setup()
      const first = yield* factory.informerFor(Resource.pods, { resyncPeriod: "1 minute" })
      assert.strictEqual(yield* factory.informerFor(Resource.pods, { resyncPeriod: "60 seconds" }), first)
      assert.strictEqual(yield* factory.informerFor(Resource.pods), first)
      const error = yield* Effect.flip(factory.informerFor(Resource.pods, { resyncPeriod: "2 minutes" }))
      assert(error._tag === "InformerOptionsConflictError")
      assert.strictEqual(error.option, "resyncPeriod")
      assert.include(error.message, "120000ms requested, 60000ms in use")
    }))

  it.effect("the resync period in use is the effective one (factory default, customResync)", () =>
    Effect.gen(function*() {
      const { factory } = yield* setup({
        resyncPeriod: "5 minutes",
        customResync: { "deployments.apps": "30 seconds" }
      })
      const pods = yield* factory.informerFor(Resource.pods)
      assert.strictEqual(yield* factory.informerFor(Resource.pods, { resyncPeriod: "5 minutes" }), pods)
      const deployments = yield* factory.informerFor(Resource.deployments)
      assert.strictEqual(yield* factory.informerFor(Resource.deployments, { resyncPeriod: "30 seconds" }), deployments)
      const error = yield* Effect.flip(factory.informerFor(Resource.deployments, { resyncPeriod: "5 minutes" }))
      assert(error._tag === "InformerOptionsConflictError")
      assert.include(error.message, "300000ms requested, 30000ms in use")
    }))

  it.effect("an index name registered with another function is an InformerOptionsConflictError", () =>
    Effect.gen(function*() {
      const { factory } = yield* setup()
      const first = yield* factory.informerFor(Resource.pods, { indexers: { byApp } })
      assert.strictEqual(yield* factory.informerFor(Resource.pods, { indexers: { byApp } }), first)
      const error = yield* Effect.flip(factory.informerFor(Resource.pods, { indexers: { byApp: byTier } }))
      assert(error._tag === "InformerOptionsConflictError")
      assert.strictEqual(error.option, "indexers")
      assert.include(error.message, `index "byApp"`)
      // the built-in namespace index counts too: a typed conflict, not a defect
      const namespaceConflict = yield* Effect.flip(
        factory.informerFor(Resource.pods, { indexers: { [Indexer.namespaceIndex]: byTier } })
      )
      assert.strictEqual(namespaceConflict._tag, "InformerOptionsConflictError")
      // asking for the namespace index with its own function is fine
      assert.strictEqual<unknown>(
        yield* factory.informerFor(Resource.pods, {
          indexers: { [Indexer.namespaceIndex]: Indexer.metaNamespaceIndexFunction }
        }),
        first
      )
    }))

  it.effect("a new index name on a later request is added to the existing informer", () =>
    Effect.gen(function*() {
      const { factory, fakes } = yield* setup()
      const fake = fakes.fakeFor(Resource.pods)
      yield* fake.add(obj("ns", "a", { app: "web", tier: "front" }))
      yield* fake.add(obj("ns", "b", { app: "db", tier: "back" }))
      const informer = yield* factory.informerFor(Resource.pods, { indexers: { byApp } })
      yield* factory.start
      yield* factory.waitForCacheSync()
      const again = yield* factory.informerFor(Resource.pods, { indexers: { byApp, byTier } })
      assert.strictEqual(again, informer)
      // `again` is typed with both index names (the same informer)
      assert.deepStrictEqual(names(yield* again.indexer.byIndex("byTier", "back")), ["ns/b"])
      assert.deepStrictEqual(names(yield* informer.indexer.byIndex("byApp", "web")), ["ns/a"])
      // later objects are indexed too
      yield* fake.add(obj("ns", "c", { tier: "back" }))
      yield* TestClock.adjust(0)
      assert.deepStrictEqual(names(yield* again.indexer.byIndex("byTier", "back")), ["ns/b", "ns/c"])
    }))
})

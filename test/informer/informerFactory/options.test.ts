/**
 * InformerFactory: the factory's reflector settings under the informer's, tweakListOptions, the factory namespace
 * and customResync.
 */
import { assert, describe, it } from "@effect/vitest"
import { Duration, Effect } from "effect"
import { TestClock } from "effect/testing"
import { resourceVersion } from "../../../src/KubeObject.js"
import * as Resource from "../../../src/Resource.js"
import { namespacedNames as names } from "../../fixtures/index.js"
import { obj, setup } from "./fixtures.js"

describe("InformerFactory - options", () => {
  it.effect("per-informer reflector settings apply over the factory's; other settings later are a conflict", () =>
    Effect.gen(function*() {
      const { factory, fakes } = yield* setup({ reflector: { pageSize: 7 } })
      const fake = fakes.fakeFor(Resource.deployments)
      for (const i of [1, 2, 3]) yield* fake.add({ ...obj("ns", `d${i}`), apiVersion: "apps/v1", kind: "Deployment" })
      const reflector = { watchList: false, pageSize: 2 }
      const informer = yield* factory.informerFor(Resource.deployments, { reflector })
      yield* factory.start
      yield* factory.waitForCacheSync()
      assert.strictEqual((yield* informer.indexer.list).length, 3)
      const lists = (yield* fake.requests).filter((r) => r._tag === "List")
      assert.deepStrictEqual(lists.map((r) => r.options.limit), [2, 2])
      assert.strictEqual(yield* factory.informerFor(Resource.deployments, { reflector }), informer)
      // an equal literal is the same settings (compared structurally, durations by value)
      assert.strictEqual(
        yield* factory.informerFor(Resource.deployments, { reflector: { pageSize: 2, watchList: false } }),
        informer
      )
      const conflict = yield* Effect.flip(factory.informerFor(Resource.deployments, { reflector: { pageSize: 3 } }))
      assert.isTrue(conflict._tag === "InformerOptionsConflictError" && conflict.option === "reflector")
    }))

  it.effect("reflector settings compared structurally: equal durations in other forms are no conflict", () =>
    Effect.gen(function*() {
      const { factory } = yield* setup()
      const informer = yield* factory.informerFor(Resource.pods, {
        reflector: { watchListTimeout: "1 minute", pageSize: undefined }
      })
      assert.strictEqual(
        yield* factory.informerFor(Resource.pods, { reflector: { watchListTimeout: Duration.seconds(60) } }),
        informer
      )
      assert.strictEqual(
        yield* factory.informerFor(Resource.pods, { reflector: { watchListTimeout: 60_000 } }),
        informer
      )
      const conflict = yield* Effect.flip(
        factory.informerFor(Resource.pods, { reflector: { watchListTimeout: "2 minutes" } })
      )
      assert.isTrue(conflict._tag === "InformerOptionsConflictError" && conflict.option === "reflector")
      const other = yield* Effect.flip(factory.informerFor(Resource.pods, { reflector: { watchList: false } }))
      assert.isTrue(other._tag === "InformerOptionsConflictError")
    }))

  it.effect("tweakListOptions adjusts every informer's scope", () =>
    Effect.gen(function*() {
      const { factory, fakes } = yield* setup({
        tweakListOptions: (scope) => ({ ...scope, labelSelector: "tier=web" })
      })
      const fake = fakes.fakeFor(Resource.pods)
      yield* fake.add(obj("ns", "web-1", { tier: "web" }))
      yield* fake.add(obj("ns", "db-1", { tier: "db" }))
      const informer = yield* factory.informerFor(Resource.pods)
      assert.strictEqual(informer.name, "pods in all namespaces (tier=web)")
      // the tweak decides the scope: this is the same informer
      assert.strictEqual(yield* factory.informerFor(Resource.pods, { labelSelector: "tier=db" }), informer)
      yield* factory.start
      yield* factory.waitForCacheSync()
      assert.deepStrictEqual(names(yield* informer.indexer.list), ["ns/web-1"])
      yield* fake.add(obj("ns", "web-2", { tier: "web" }))
      yield* fake.add(obj("ns", "db-2", { tier: "db" }))
      yield* TestClock.adjust(0)
      assert.deepStrictEqual(names(yield* informer.indexer.list), ["ns/web-1", "ns/web-2"])
    }))

  it.effect("a tweak producing a malformed selector is a parse error", () =>
    Effect.gen(function*() {
      const { factory } = yield* setup({ tweakListOptions: (scope) => ({ ...scope, fieldSelector: "nope" }) })
      const error = yield* Effect.flip(factory.informerFor(Resource.pods))
      assert.strictEqual(error._tag, "FieldSelectorParseError")
    }))

  it.effect("the factory namespace is the default namespace", () =>
    Effect.gen(function*() {
      const { factory, fakes } = yield* setup({ namespace: "team-a" })
      const fake = fakes.fakeFor(Resource.pods)
      yield* fake.add(obj("team-a", "a"))
      yield* fake.add(obj("team-b", "b"))
      yield* fakes.fakeFor(Resource.nodes).add(obj(undefined, "node-1"))
      const inTeam = yield* factory.informerFor(Resource.pods)
      const everywhere = yield* factory.informerFor(Resource.pods, { namespace: "" })
      const nodes = yield* factory.informerFor(Resource.nodes)
      assert.notStrictEqual(inTeam, everywhere)
      assert.strictEqual(inTeam.name, "pods in team-a")
      assert.strictEqual(yield* factory.informerFor(Resource.pods, { namespace: "team-a" }), inTeam)
      yield* factory.start
      yield* factory.waitForCacheSync()
      assert.deepStrictEqual(names(yield* inTeam.indexer.list), ["team-a/a"])
      assert.deepStrictEqual(names(yield* everywhere.indexer.list), ["team-a/a", "team-b/b"])
      assert.deepStrictEqual(names(yield* nodes.indexer.list), ["/node-1"])
    }))

  it.effect("customResync sets the resync period of one resource", () =>
    Effect.gen(function*() {
      const { factory, fakes } = yield* setup({ customResync: { "deployments.apps": "30 seconds" } })
      yield* fakes.fakeFor(Resource.deployments).add(obj("ns", "api"))
      yield* fakes.fakeFor(Resource.pods).add(obj("ns", "web"))
      const resyncs = { deployments: 0, pods: 0 }
      const deployments = yield* factory.informerFor(Resource.deployments)
      const pods = yield* factory.informerFor(Resource.pods)
      yield* deployments.addEventHandler({
        onUpdate: (o, n) =>
          Effect.sync(() => {
            if (resourceVersion(o) === resourceVersion(n)) resyncs.deployments++
          })
      })
      yield* pods.addEventHandler({ onUpdate: () => Effect.sync(() => resyncs.pods++) })
      yield* factory.start
      yield* factory.waitForCacheSync()
      yield* TestClock.adjust("95 seconds")
      assert.strictEqual(resyncs.deployments, 3)
      assert.strictEqual(resyncs.pods, 0)
    }))
})

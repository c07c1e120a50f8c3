/**
 * InformerFactory: listers and event handlers through the factory.
 */
import { assert, describe, it } from "@effect/vitest"
import { Deferred, Effect } from "effect"
import * as Resource from "../../../src/Resource.js"
import { namespacedNames as names } from "../../fixtures/index.js"
import { obj, setup } from "./fixtures.js"

describe("InformerFactory - options", () => {
  it.effect("listerFor reads the informer's cache", () =>
    Effect.gen(function*() {
      const { factory, fakes } = yield* setup()
      yield* fakes.fakeFor(Resource.pods).add(obj("ns", "a", { app: "web" }))
      yield* fakes.fakeFor(Resource.pods).add(obj("ns", "b", { app: "db" }))
      const lister = yield* factory.listerFor(Resource.pods)
      yield* factory.start
      yield* factory.waitForCacheSync()
      assert.deepStrictEqual(names(yield* lister.list("app=web")), ["ns/a"])
      assert.strictEqual((yield* lister.byNamespace("ns").get("b")).metadata?.name, "b")
    }))

  it.effect("handlers see the informer's events through the factory", () =>
    Effect.gen(function*() {
      const { factory, fakes } = yield* setup()
      const informer = yield* factory.informerFor(Resource.pods)
      const seen = yield* Deferred.make<string>()
      yield* informer.addEventHandler({ onAdd: (o) => Deferred.succeed(seen, o.metadata?.name ?? "") })
      yield* factory.start
      yield* factory.waitForCacheSync()
      yield* fakes.fakeFor(Resource.pods).add(obj("ns", "late"))
      assert.strictEqual(yield* Deferred.await(seen), "late")
    }))
})

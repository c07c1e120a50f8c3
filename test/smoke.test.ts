import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as FakeListerWatcher from "../src/FakeListerWatcher.js"
import * as Indexer from "../src/Indexer.js"
import * as Reflector from "../src/Reflector.js"
import { settle } from "./fixtures/index.js"

describe("smoke", () => {
  it.effect("reflector lists and watches into an indexer", () =>
    Effect.gen(function*() {
      for (const watchList of [true, false]) {
        const fake = yield* FakeListerWatcher.make()
        yield* fake.add({ metadata: { namespace: "a", name: "x" } })
        const store = yield* Indexer.make()
        const r = yield* Reflector.make(fake, store, { watchList })
        yield* settle
        assert.deepStrictEqual(yield* store.listKeys, ["a/x"])
        yield* fake.add({ metadata: { namespace: "a", name: "y" } })
        yield* settle
        assert.deepStrictEqual((yield* store.listKeys).slice().sort(), ["a/x", "a/y"])
        assert.strictEqual(yield* r.lastSyncResourceVersion, yield* fake.resourceVersion)
      }
    }))
})

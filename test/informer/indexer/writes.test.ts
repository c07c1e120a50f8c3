/**
 * Indexer: delete by tombstone and of absent keys, replace rebuilding the indexes, resync of a plain store.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Indexer from "../../../src/Indexer.js"
import { DeletedFinalStateUnknown } from "../../../src/KubeObject.js"
import type { Pod } from "./fixtures.js"
import { commaStore, pod } from "./fixtures.js"

describe("Indexer", () => {
  it.effect("delete with a tombstone removes the key it carries; deleting an absent key does nothing", () =>
    Effect.gen(function*() {
      const store = Indexer.unsafeMake<Pod>({
        indexers: { [Indexer.namespaceIndex]: Indexer.metaNamespaceIndexFunction }
      })
      yield* store.add(pod("a", { namespace: "ns" }))
      yield* store.add(pod("b", { namespace: "ns" }))
      yield* store.delete(new DeletedFinalStateUnknown<Pod>({ key: "ns/a", obj: undefined }))
      yield* store.delete(pod("zzz", { namespace: "ns" }))
      assert.deepStrictEqual(yield* store.listKeys, ["ns/b"])
      assert.deepStrictEqual(yield* store.indexKeys(Indexer.namespaceIndex, "ns"), ["ns/b"])
    }))

  it.effect("replace rebuilds every index from scratch", () =>
    Effect.gen(function*() {
      const store = commaStore()
      store.unsafeAdd("a,b", "a,b")
      store.unsafeAdd("c", "c")
      yield* store.replace(["b,d", "e"], "3")
      assert.deepStrictEqual([...(yield* store.listIndexFuncValues("testIndexer"))].sort(), ["b", "d", "e"])
      assert.deepStrictEqual(yield* store.indexKeys("testIndexer", "b"), ["b,d"])
      assert.deepStrictEqual(yield* store.indexKeys("testIndexer", "a"), [])
      assert.strictEqual(store.unsafeSize(), 2)
      assert.deepStrictEqual([...store.unsafeKeys()].sort(), ["b,d", "e"])
      assert.deepStrictEqual([...store.unsafeValues()].sort(), ["b,d", "e"])
    }))

  it.effect("resync of a plain store does nothing", () =>
    Effect.gen(function*() {
      const store = commaStore()
      store.unsafeAdd("a", "a")
      yield* store.resync
      assert.deepStrictEqual(yield* store.listKeys, ["a"])
    }))
})

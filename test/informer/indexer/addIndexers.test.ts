/**
 * Indexer: addIndexers before and after objects exist, and with a name already registered.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Indexer from "../../../src/Indexer.js"
import type { Pod } from "./fixtures.js"
import { pod } from "./fixtures.js"

describe("Indexer", () => {
  it.effect("addIndexers before objects exist: later adds are indexed", () =>
    Effect.gen(function*() {
      const store = Indexer.unsafeMake<Pod>()
      yield* store.addIndexers({ byApp: (obj) => [obj.metadata.labels?.app ?? ""] })
      assert.deepStrictEqual(Object.keys(yield* store.getIndexers), ["byApp"])
      yield* store.add(pod("a", { labels: { app: "web" } }))
      yield* store.add(pod("b", { labels: { app: "db" } }))
      assert.deepStrictEqual(yield* store.indexKeys("byApp", "web"), ["a"])
      assert.deepStrictEqual(yield* store.indexKeys("byApp", "db"), ["b"])
    }))

  it.effect("addIndexers after objects exist: existing objects are indexed at once", () =>
    Effect.gen(function*() {
      const store = Indexer.unsafeMake<Pod>({
        indexers: { [Indexer.namespaceIndex]: Indexer.metaNamespaceIndexFunction }
      })
      yield* store.add(pod("a", { namespace: "ns", labels: { app: "web" } }))
      yield* store.add(pod("b", { namespace: "ns", labels: { app: "web" } }))
      yield* store.add(pod("c", { namespace: "ns", labels: { app: "db" } }))
      yield* store.addIndexers({ byApp: (obj) => [obj.metadata.labels?.app ?? ""] })
      assert.deepStrictEqual(Object.keys(yield* store.getIndexers).sort(), ["byApp", "namespace"])
      assert.deepStrictEqual(yield* store.indexKeys("byApp", "web"), ["ns/a", "ns/b"])
      assert.deepStrictEqual(yield* store.indexKeys("byApp", "db"), ["ns/c"])
      // and maintained afterwards
      yield* store.update(pod("a", { namespace: "ns", labels: { app: "db" } }))
      assert.deepStrictEqual(yield* store.indexKeys("byApp", "web"), ["ns/b"])
      assert.deepStrictEqual(yield* store.indexKeys("byApp", "db"), ["ns/a", "ns/c"])
    }))

  it.effect("addIndexers with a registered name -> IndexConflictError, nothing added", () =>
    Effect.gen(function*() {
      const store = Indexer.unsafeMake<Pod>({
        indexers: { [Indexer.namespaceIndex]: Indexer.metaNamespaceIndexFunction }
      })
      yield* store.add(pod("a", { namespace: "ns" }))
      const error = yield* Effect.flip(store.addIndexers({
        fresh: () => ["x"],
        [Indexer.namespaceIndex]: () => ["y"]
      }))
      assert.strictEqual(error._tag, "IndexConflictError")
      assert.isTrue(error._tag === "IndexConflictError" && error.indexes.includes(Indexer.namespaceIndex))
      assert.deepStrictEqual(Object.keys(yield* store.getIndexers), [Indexer.namespaceIndex])
      assert.isFalse(store.unsafeHasIndex("fresh"))
      // the original index function is still the one in use
      assert.deepStrictEqual(yield* store.indexKeys(Indexer.namespaceIndex, "ns"), ["ns/a"])
    }))
})

/**
 * Indexer: index maintenance (the namespace index, the layer's indexers, sorted index keys, updates touching only
 * changed entries, when index functions run).
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Indexer from "../../../src/Indexer.js"
import type { KubeObject } from "../../../src/KubeObject.js"
import type { Pod } from "./fixtures.js"
import { commaStore, pod, writable } from "./fixtures.js"

describe("Indexer", () => {
  it.effect("namespace index via metaNamespaceIndexFunction ('' for cluster-scoped objects)", () =>
    Effect.gen(function*() {
      const store = yield* Indexer.make<KubeObject>({
        indexers: { [Indexer.namespaceIndex]: Indexer.metaNamespaceIndexFunction }
      })
      yield* store.add(pod("a", { namespace: "ns1" }))
      yield* store.add(pod("b", { namespace: "ns1" }))
      yield* store.add(pod("c", { namespace: "ns2" }))
      yield* store.add(pod("node"))
      assert.deepStrictEqual(yield* store.indexKeys(Indexer.namespaceIndex, "ns1"), ["ns1/a", "ns1/b"])
      assert.deepStrictEqual(yield* store.indexKeys(Indexer.namespaceIndex, "ns2"), ["ns2/c"])
      assert.deepStrictEqual(yield* store.indexKeys(Indexer.namespaceIndex, ""), ["node"])
      // Moving an object to another namespace is a different key: the old one stays until deleted.
      yield* store.delete(pod("c", { namespace: "ns2" }))
      assert.deepStrictEqual(yield* store.indexKeys(Indexer.namespaceIndex, "ns2"), [])
      assert.deepStrictEqual([...(yield* store.listIndexFuncValues(Indexer.namespaceIndex))].sort(), ["", "ns1"])
    }))

  it.effect("Indexer.layer provides a KubeObject indexer with the namespace index plus extra indexers", () =>
    Effect.gen(function*() {
      const store = yield* Indexer.Indexer
      yield* store.add(pod("a", { namespace: "ns", labels: { app: "web" } }))
      assert.deepStrictEqual(yield* store.indexKeys(Indexer.namespaceIndex, "ns"), ["ns/a"])
      assert.deepStrictEqual(yield* store.indexKeys("byApp", "web"), ["ns/a"])
    }).pipe(
      Effect.provide(Indexer.layer({ indexers: { byApp: (obj) => [obj.metadata?.labels?.app ?? ""] } }))
    ))

  it.effect("indexKeys returns keys sorted, whatever the insertion order", () =>
    Effect.gen(function*() {
      const store = writable<string>({ indexers: { all: () => ["v"] } })
      for (const key of ["m", "b", "z", "a", "k"]) store.unsafeAdd(key, key)
      assert.deepStrictEqual(yield* store.indexKeys("all", "v"), ["a", "b", "k", "m", "z"])
      assert.deepStrictEqual(yield* store.indexKeys("all", "absent"), [])
    }))

  it.effect("update touches only the index entries whose values changed (untouched sets keep their order)", () =>
    Effect.gen(function*() {
      const store = commaStore()
      // byIndex returns a value's keys in the order they entered its set: removing and re-adding a key
      // would move it to the end, so an unchanged order proves the entry was not touched.
      store.unsafeAdd("k1", "a,b")
      store.unsafeAdd("k2", "a")
      const order = (value: string) => store.byIndex("testIndexer", value)
      assert.deepStrictEqual(yield* order("a"), ["a,b", "a"])

      store.unsafeAdd("k1", "a,c") // multi-valued: a unchanged, b removed, c added
      assert.deepStrictEqual(yield* order("a"), ["a,c", "a"])
      assert.deepStrictEqual(yield* order("b"), [])
      assert.deepStrictEqual(yield* order("c"), ["a,c"])

      const single = writable<Pod>({ indexers: { byApp: (obj) => [obj.metadata.labels?.app ?? ""] } })
      single.unsafeAdd("p1", pod("p1", { rv: "1", labels: { app: "web" } }))
      single.unsafeAdd("p2", pod("p2", { rv: "1", labels: { app: "web" } }))
      single.unsafeAdd("p1", pod("p1", { rv: "2", labels: { app: "web" } })) // single value unchanged: fast path
      const web = yield* single.byIndex("byApp", "web")
      assert.deepStrictEqual(web.map((p) => `${p.metadata.name}@${p.metadata.resourceVersion}`), ["p1@2", "p2@1"])
    }))

  it.effect("an index function is called for the new object of every write, and never for unchanged reads", () =>
    Effect.gen(function*() {
      const calls: Array<string> = []
      const store = Indexer.unsafeMake<Pod>({
        indexers: {
          spy: (obj) => {
            calls.push(`${obj.metadata.name}@${obj.metadata.resourceVersion}`)
            return [obj.metadata.name]
          }
        }
      })
      yield* store.add(pod("a", { rv: "1" }))
      assert.deepStrictEqual(calls, ["a@1"])
      calls.length = 0
      yield* store.byIndex("spy", "a")
      yield* store.indexKeys("spy", "a")
      yield* store.list
      assert.deepStrictEqual(calls, [])
      yield* store.update(pod("a", { rv: "2" }))
      assert.isTrue(calls.includes("a@2"))
      assert.isFalse(calls.some((c) => c !== "a@2" && c !== "a@1"))
    }))
})

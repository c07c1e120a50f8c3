/**
 * Indexer: client-go's thread_safe_store_test.go (index sets emptied and kept, multi-valued membership,
 * the last resourceVersion through every kind of write).
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Indexer from "../../../src/Indexer.js"
import type { KubeObject } from "../../../src/KubeObject.js"
import { DeletedFinalStateUnknown } from "../../../src/KubeObject.js"
import type { Pod } from "./fixtures.js"
import { commaStore, pod, writable } from "./fixtures.js"

describe("thread_safe_store_test", () => {
  it.effect("TestThreadSafeStoreDeleteRemovesEmptySetsFromIndex: deleting the only key of a value drops the value", () =>
    Effect.gen(function*() {
      const store = writable<string>({ indexers: { testIndexer: (obj) => [obj] } })
      store.unsafeAdd("testKey", "testKey")
      assert.deepStrictEqual(yield* store.indexKeys("testIndexer", "testKey"), ["testKey"])
      assert.deepStrictEqual(yield* store.listIndexFuncValues("testIndexer"), ["testKey"])

      store.unsafeDelete("testKey", undefined)
      assert.deepStrictEqual(yield* store.indexKeys("testIndexer", "testKey"), [])
      assert.deepStrictEqual(yield* store.listIndexFuncValues("testIndexer"), [])
    }))

  it.effect("TestThreadSafeStoreAddKeepsNonEmptySetPostDeleteFromIndex: a shared value keeps its other key", () =>
    Effect.gen(function*() {
      const store = writable<string>({ indexers: { testIndexer: () => ["testIndex"] } })
      store.unsafeAdd("retain", "retain")
      store.unsafeAdd("delete", "delete")
      assert.deepStrictEqual(yield* store.indexKeys("testIndexer", "testIndex"), ["delete", "retain"])

      store.unsafeDelete("delete", undefined)
      assert.deepStrictEqual(yield* store.listIndexFuncValues("testIndexer"), ["testIndex"])
      assert.deepStrictEqual(yield* store.indexKeys("testIndexer", "testIndex"), ["retain"])
    }))

  it.effect("TestThreadSafeStoreIndexingFunctionsWithMultipleValues: membership exact after every step", () =>
    Effect.gen(function*() {
      const store = commaStore()
      const compare = (value: string, expected: ReadonlyArray<string>) =>
        Effect.map(store.indexKeys("testIndexer", value), (keys) => assert.deepStrictEqual(keys, expected, value))

      store.unsafeAdd("key1", "foo")
      store.unsafeAdd("key2", "bar")
      yield* compare("foo", ["key1"])
      yield* compare("bar", ["key2"])

      store.unsafeAdd("key2", "foo,bar")
      yield* compare("foo", ["key1", "key2"])
      yield* compare("bar", ["key2"])

      store.unsafeAdd("key1", "foo,bar")
      yield* compare("foo", ["key1", "key2"])
      yield* compare("bar", ["key1", "key2"])

      store.unsafeAdd("key3", "foo,bar,baz")
      yield* compare("foo", ["key1", "key2", "key3"])
      yield* compare("bar", ["key1", "key2", "key3"])
      yield* compare("baz", ["key3"])

      store.unsafeAdd("key1", "foo")
      yield* compare("foo", ["key1", "key2", "key3"])
      yield* compare("bar", ["key2", "key3"])
      yield* compare("baz", ["key3"])

      store.unsafeAdd("key2", "bar")
      yield* compare("foo", ["key1", "key3"])
      yield* compare("bar", ["key2", "key3"])
      yield* compare("baz", ["key3"])

      store.unsafeDelete("key1", undefined)
      yield* compare("foo", ["key3"])
      yield* compare("bar", ["key2", "key3"])
      yield* compare("baz", ["key3"])

      store.unsafeDelete("key3", undefined)
      yield* compare("foo", [])
      yield* compare("bar", ["key2"])
      yield* compare("baz", [])
      assert.deepStrictEqual(yield* store.listIndexFuncValues("testIndexer"), ["bar"])
    }))

  const meta = (rv: string): KubeObject => ({ metadata: { resourceVersion: rv } })

  it.effect("TestThreadSafeStoreRV: Initial state is \"\"", () =>
    Effect.gen(function*() {
      const store = Indexer.unsafeMake<unknown>()
      assert.strictEqual(yield* store.lastResourceVersion, "")
    }))

  it.effect("TestThreadSafeStoreRV: Add Update and Delete -> last write wins, non-meta and key-only deletes keep it", () =>
    Effect.gen(function*() {
      const store = writable<unknown>()
      const steps: ReadonlyArray<readonly [string, () => void, string]> = [
        ["add rv10", () => store.unsafeAdd("key1", meta("10")), "10"],
        ["add same rv10", () => store.unsafeAdd("key3", meta("10")), "10"],
        ["add higher rv20", () => store.unsafeAdd("key4", meta("20")), "20"],
        ["delete with object rv30", () => store.unsafeDelete("key4", meta("30")), "30"],
        ["add non-meta object", () => store.unsafeAdd("key5", "just a string"), "30"],
        ["add rv40", () => store.unsafeAdd("key6", meta("40")), "40"],
        ["delete without object", () => store.unsafeDelete("key6", undefined), "40"],
        // No transactions here: the transaction (40, 30, 50) is three writes in a row; the last one wins.
        ["txn update rv40", () => store.unsafeAdd("key9", meta("40")), "40"],
        ["txn update rv30", () => store.unsafeAdd("key10", meta("30")), "30"],
        ["txn update rv50", () => store.unsafeAdd("key11", meta("50")), "50"],
        // As client-go's meta accessor: an object with metadata but no resourceVersion sets it to "".
        ["add object without resourceVersion", () => store.unsafeAdd("key12", { metadata: { name: "key12" } }), ""]
      ]
      for (const [step, run, expected] of steps) {
        run()
        assert.strictEqual(yield* store.lastResourceVersion, expected, step)
      }
    }))

  it.effect("TestThreadSafeStoreRV: Replace -> the replace's resourceVersion", () =>
    Effect.gen(function*() {
      const store = writable<KubeObject>()
      store.unsafeAdd("key1", meta("10"))
      assert.strictEqual(yield* store.lastResourceVersion, "10")
      yield* store.replace([pod("key3", { rv: "40" }), pod("key2", { rv: "30" })], "50")
      assert.strictEqual(yield* store.lastResourceVersion, "50")
    }))

  it.effect("TestThreadSafeStoreRV: Delete -> a delete with an object records the object's rv (20 after 10)", () =>
    Effect.gen(function*() {
      const store = writable<KubeObject>()
      store.unsafeAdd("key1", meta("10"))
      store.unsafeDelete("key1", meta("20"))
      assert.strictEqual(yield* store.lastResourceVersion, "20")
    }))

  it.effect("lastResourceVersion table: tombstones, key-only deletes, bookmarks, replace and failed writes", () =>
    Effect.gen(function*() {
      const store = writable<Pod>({
        indexers: {
          strict: (obj) => {
            if (obj.metadata.labels?.bad === "true") throw new Error("bad")
            return []
          }
        }
      })
      const steps: ReadonlyArray<readonly [string, Effect.Effect<unknown, unknown>, string]> = [
        ["add rv5", store.add(pod("a", { rv: "5" })), "5"],
        [
          "tombstone delete of a present key",
          store.delete(new DeletedFinalStateUnknown({ key: "a", obj: pod("a", { rv: "6" }) })),
          "5"
        ],
        ["add rv7", store.add(pod("b", { rv: "7" })), "7"],
        ["key-only delete of an absent key", Effect.sync(() => store.unsafeDelete("zzz", undefined)), "7"],
        [
          "tombstone delete of an absent key",
          store.delete(new DeletedFinalStateUnknown<Pod>({ key: "zzz", obj: undefined })),
          "7"
        ],
        // As client-go's DeleteWithObject: a delete that carries an object records its rv even for an absent key.
        ["delete with object of an absent key", store.delete(pod("zzz", { rv: "8" })), "8"],
        ["update to a lower rv (last write wins, not max)", store.update(pod("b", { rv: "3" })), "3"],
        [
          "failed write (index function throws)",
          Effect.result(store.add(pod("d", { rv: "99", labels: { bad: "true" } }))),
          "3"
        ],
        ["bookmark", store.bookmark("100"), "100"],
        ["replace", store.replace([pod("e", { rv: "20" })], "90"), "90"],
        ["failed replace", Effect.result(store.replace([pod("f", { rv: "1", labels: { bad: "true" } })], "91")), "90"]
      ]
      for (const [step, run, expected] of steps) {
        yield* run
        assert.strictEqual(yield* store.lastResourceVersion, expected, step)
      }
    }))
})

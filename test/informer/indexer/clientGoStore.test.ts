/**
 * Indexer: client-go's store_test.go (the cache's writes and reads, Index by a probe, key function errors,
 * all-or-nothing replace in place of client-go's transactions).
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Result from "effect/Result"
import * as Indexer from "../../../src/Indexer.js"
import { DeletedFinalStateUnknown } from "../../../src/KubeObject.js"
import { commaStore } from "./fixtures.js"

/** client-go's `testStoreObject`: keyed by `id`, indexed by `val`. */
interface StoreObject {
  readonly id: string
  readonly val: string
}

const mkObj = (id: string, val: string): StoreObject => ({ id, val })

const storeKeyFunction: Indexer.KeyFunction<StoreObject> = (obj) =>
  Result.succeed(obj instanceof DeletedFinalStateUnknown ? obj.key : obj.id)

const vals = (objs: ReadonlyArray<StoreObject>): ReadonlyArray<string> => objs.map((o) => o.val).sort()
const ids = (objs: ReadonlyArray<StoreObject>): ReadonlyArray<string> => objs.map((o) => o.id).sort()

describe("store_test", () => {
  it.effect("TestCache: Add/Get, Update overwrites, Delete removes, List exactly 3, Replace leaves exactly 2", () =>
    Effect.gen(function*() {
      const store = Indexer.unsafeMake<StoreObject>({ keyFunction: storeKeyFunction })

      yield* store.add(mkObj("foo", "bar"))
      assert.deepStrictEqual(yield* store.get(mkObj("foo", "")), Option.some(mkObj("foo", "bar")))
      yield* store.update(mkObj("foo", "baz"))
      assert.deepStrictEqual(yield* store.get(mkObj("foo", "")), Option.some(mkObj("foo", "baz")))
      yield* store.delete(mkObj("foo", ""))
      assert.isTrue(Option.isNone(yield* store.get(mkObj("foo", ""))))

      yield* store.add(mkObj("a", "b"))
      yield* store.add(mkObj("c", "d"))
      yield* store.add(mkObj("e", "e"))
      assert.deepStrictEqual(vals(yield* store.list), ["b", "d", "e"])
      assert.deepStrictEqual([...(yield* store.listKeys)].sort(), ["a", "c", "e"])
      assert.strictEqual(yield* store.size, 3)

      yield* store.replace([mkObj("foo", "foo"), mkObj("bar", "bar")], "0")
      assert.deepStrictEqual(vals(yield* store.list), ["bar", "foo"])
      assert.strictEqual(yield* store.size, 2)
      assert.deepStrictEqual(yield* store.getByKey("bar"), Option.some(mkObj("bar", "bar")))
      assert.isTrue(Option.isNone(yield* store.getByKey("a")))
    }))

  it.effect("TestIndex: Index(\"by_val\", probe) returns every object sharing the probe's value", () =>
    Effect.gen(function*() {
      const indexer = Indexer.unsafeMake<StoreObject>({
        keyFunction: storeKeyFunction,
        indexers: { by_val: (obj) => [obj.val] }
      })
      yield* indexer.add(mkObj("a", "b"))
      yield* indexer.add(mkObj("c", "b"))
      yield* indexer.add(mkObj("e", "f"))
      yield* indexer.add(mkObj("g", "h"))
      const expected: ReadonlyArray<readonly [string, ReadonlyArray<string>]> = [
        ["b", ["a", "c"]],
        ["f", ["e"]],
        ["h", ["g"]],
        ["nope", []]
      ]
      for (const [val, expectedIds] of expected) {
        assert.deepStrictEqual(ids(yield* indexer.index("by_val", mkObj("", val))), expectedIds, val)
      }
    }))

  it.effect("TestIndex: a multi-valued probe returns the union of the keys of each of its values", () =>
    Effect.gen(function*() {
      const store = commaStore()
      store.unsafeAdd("x", "a")
      store.unsafeAdd("y", "a,b")
      store.unsafeAdd("z", "c")
      const found = yield* store.index("testIndexer", "a,c")
      assert.deepStrictEqual([...found].sort(), ["a", "a,b", "c"])
    }))

  it.effect("TestKeyError (equivalent): a key function's KeyError reaches the caller with its cause", () =>
    Effect.gen(function*() {
      const inner = new Error("error")
      const store = Indexer.unsafeMake<StoreObject>({
        keyFunction: () =>
          Result.fail(new Indexer.KeyError({ reason: "KeyFunctionFailed", message: "no key", cause: inner }))
      })
      const error = yield* Effect.flip(store.add(mkObj("a", "b")))
      assert.strictEqual(error._tag, "KeyError")
      assert.strictEqual(error.cause, inner)
      assert.instanceOf(error, Error)
      // Nested: a KeyError whose cause is a KeyError still leads to the inner error.
      const nested = new Indexer.KeyError({ reason: "KeyFunctionFailed", message: "outer", cause: error })
      assert.strictEqual((nested.cause as Indexer.KeyError).cause, inner)
      assert.strictEqual(yield* store.size, 0)
    }))

  // We have no transactions: the one multi-object write is `replace`, which is all-or-nothing, so the
  // "successful indices" of client-go's transaction are either all of them or none.
  for (
    const [name, objs, ok] of [
      ["all success objects", ["s1", "s2"], true],
      ["all fail objects", ["f1", "f2"], false],
      ["mixed success and fail objects", ["s1", "f1", "s2", "f2"], false]
    ] as const
  ) {
    it.effect(`TestCacheTransactionShouldIndexErrors (adapted to replace): ${name}`, () =>
      Effect.gen(function*() {
        const store = Indexer.unsafeMake<StoreObject>({
          keyFunction: (obj) =>
            obj instanceof DeletedFinalStateUnknown || obj.id.startsWith("s")
              ? storeKeyFunction(obj)
              : Result.fail(new Indexer.KeyError({ reason: "KeyFunctionFailed", message: "test error" })),
          indexers: { by_val: (obj) => [obj.val] }
        })
        yield* store.add(mkObj("s0", "old"))
        const result = yield* Effect.result(store.replace(objs.map((id) => mkObj(id, "new")), "5"))
        if (ok) {
          assert.isTrue(Result.isSuccess(result))
          assert.deepStrictEqual([...(yield* store.listKeys)].sort(), ["s1", "s2"])
          assert.deepStrictEqual(yield* store.indexKeys("by_val", "new"), ["s1", "s2"])
        } else {
          assert.isTrue(Result.isFailure(result) && result.failure._tag === "KeyError")
          assert.deepStrictEqual(yield* store.listKeys, ["s0"])
          assert.deepStrictEqual(yield* store.indexKeys("by_val", "old"), ["s0"])
          assert.deepStrictEqual(yield* store.indexKeys("by_val", "new"), [])
          assert.strictEqual(yield* store.lastResourceVersion, "")
        }
      }))
  }
})

/**
 * DeltaFifo in in-order mode: ports of client-go's the_real_fifo_test.go (test names keep the client-go names).
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import type * as DeltaFifo from "../../../src/DeltaFifo.js"
import * as Indexer from "../../../src/Indexer.js"
import { DeletedFinalStateUnknown } from "../../../src/KubeObject.js"
import type { Delta, Fifo, TestObj } from "./fixtures.js"
import {
  atomicFifo,
  countingTransform,
  drain,
  drainBatches,
  known,
  knownFooBarBaz,
  obj,
  objectOf,
  pop,
  popValue,
  realFifo,
  show,
  tomb
} from "./fixtures.js"

describe("the_real_fifo_test (inOrder)", () => {
  it.effect("TestRealFIFO_replaceWithDeleteDeltaIn: known={foo1}; Delete foo1; Replace([foo2]) -> [Deleted foo1, Replaced foo2]", () =>
    Effect.gen(function*() {
      const oldObj = obj("foo", 1)
      const f = realFifo({ knownObjects: known(oldObj) })
      yield* f.delete(oldObj)
      yield* f.replace([obj("foo", 2)], "")
      assert.deepStrictEqual((yield* drain(f)).flat(), ["Deleted foo 1", "Replaced foo 2"])
    }))

  const onlyInQueue: ReadonlyArray<
    readonly [string, (f: Fifo) => Effect.Effect<void, DeltaFifo.EnqueueError>, ReadonlyArray<string>]
  > = [
    ["Added object should be deleted on Replace", (f) =>
      Effect.gen(function*() {
        yield* f.add(obj("foo", 2))
        yield* f.replace([], "0")
      }), ["Added foo 2", "Deleted tomb(foo,2)"]],
    ["Deleted object should have only a single Delete", (f) =>
      Effect.gen(function*() {
        yield* f.add(obj("foo", 2))
        yield* f.delete(obj("foo", 2))
        yield* f.replace([], "0")
      }), ["Added foo 2", "Deleted foo 2"]],
    ["Synced objects should have a single delete", (f) =>
      Effect.gen(function*() {
        yield* f.add(obj("foo", 2))
        yield* f.replace([obj("foo", 2)], "0")
        yield* f.replace([obj("foo", 2)], "0")
        yield* f.replace([], "0")
      }), ["Added foo 2", "Replaced foo 2", "Replaced foo 2", "Deleted tomb(foo,2)"]],
    ["Added objects should have a single delete on multiple Replaces", (f) =>
      Effect.gen(function*() {
        yield* f.add(obj("foo", 2))
        yield* f.replace([], "0")
        yield* f.replace([], "1")
      }), ["Added foo 2", "Deleted tomb(foo,2)"]],
    ["Added and deleted and added object should be deleted", (f) =>
      Effect.gen(function*() {
        yield* f.add(obj("foo", 2))
        yield* f.delete(obj("foo", 2))
        yield* f.add(obj("foo", 3))
        yield* f.replace([], "0")
      }), ["Added foo 2", "Deleted foo 2", "Added foo 3", "Deleted tomb(foo,3)"]],
    ["Bookmark object should not be added without atomic", (f) =>
      Effect.gen(function*() {
        yield* f.bookmark("123")
        yield* f.replace([], "0")
        yield* f.replace([], "1")
      }), []]
  ]
  for (const [name, operations, expected] of onlyInQueue) {
    it.effect(`TestRealFIFOW_ReplaceMakesDeletionsForObjectsOnlyInQueue: ${name}`, () =>
      Effect.gen(function*() {
        const f = realFifo()
        yield* operations(f)
        assert.deepStrictEqual((yield* drain(f)).flat(), [...expected])
        assert.strictEqual(yield* f.length, 0)
      }))
  }

  it.effect("TestRealFIFO_addUpdate: Add foo10, Update foo12, Delete foo15 -> [Added 10, Updated 12, Deleted 15]", () =>
    Effect.gen(function*() {
      const f = realFifo()
      yield* f.add(obj("foo", 10))
      yield* f.update(obj("foo", 12))
      yield* f.delete(obj("foo", 15))
      assert.strictEqual(yield* f.length, 3)
      assert.deepStrictEqual(yield* f.listKeys, ["foo", "foo", "foo"])
      assert.deepStrictEqual(yield* pop(f), ["Added foo 10"])
      assert.deepStrictEqual(yield* pop(f), ["Updated foo 12"])
      assert.deepStrictEqual(yield* pop(f), ["Deleted foo 15"])
      // client-go waits 50 ms for a fourth item; nothing is queued, so none can come.
      assert.strictEqual(yield* f.length, 0)
    }))

  it.effect("TestRealFIFO_transformer: 7 deltas in order, each object transformed once", () =>
    Effect.gen(function*() {
      const { calls, transform } = countingTransform()
      const f = realFifo({ transform })
      yield* f.add(obj("foo", 10))
      yield* f.add(obj("bar", 11))
      yield* f.update(obj("foo", 12))
      yield* f.delete(obj("foo", 15))
      yield* f.replace([], "")
      yield* f.add(obj("bar", 16))
      yield* f.replace([], "")
      assert.strictEqual(yield* f.length, 7)
      const deltas: Array<Delta> = []
      while ((yield* f.length) > 0) deltas.push(...(yield* f.pop((p) => Effect.succeed(p.deltas))))
      assert.deepStrictEqual(deltas.map(show), [
        "Added foo 10",
        "Added bar 11",
        "Updated foo 12",
        "Deleted foo 15",
        "Deleted tomb(bar,11)",
        "Added bar 16",
        "Deleted tomb(bar,16)"
      ])
      for (const delta of deltas) assert.strictEqual(objectOf(delta)?.xfrm, 1, show(delta))
      assert.deepStrictEqual(calls, ["foo:10", "bar:11", "foo:12", "foo:15", "bar:16"])
    }))

  it.effect("TestRealFIFO_addReplace: Add foo10; Replace([foo15]) -> Pops 10 then 15, then empty", () =>
    Effect.gen(function*() {
      const f = realFifo()
      yield* f.add(obj("foo", 10))
      yield* f.replace([obj("foo", 15)], "0")
      assert.strictEqual(yield* popValue(f), 10)
      assert.strictEqual(yield* popValue(f), 15)
      assert.strictEqual(yield* f.length, 0)
    }))

  it.effect("TestRealFIFO_ReplaceMakesDeletionsReplaced: Delete baz10; Replace([foo6]) -> baz10, tomb bar6, Replaced foo6", () =>
    Effect.gen(function*() {
      const f = realFifo({ knownObjects: knownFooBarBaz() })
      yield* f.delete(obj("baz", 10))
      yield* f.replace([obj("foo", 6)], "0")
      assert.deepStrictEqual(yield* drain(f), [["Deleted baz 10"], ["Deleted tomb(bar,6)"], ["Replaced foo 6"]])
    }))

  it.effect("TestRealFIFO_KeyOf: object -> name; tombstone -> Key; a popped delta carries its key", () =>
    Effect.gen(function*() {
      assert.deepStrictEqual(Indexer.deletionHandlingMetaNamespaceKey(obj("A", 1)), Result.succeed("A"))
      assert.deepStrictEqual(Indexer.deletionHandlingMetaNamespaceKey(tomb("B", undefined)), Result.succeed("B"))
      const f = realFifo()
      yield* f.add(obj("C", 1))
      yield* f.delete(tomb("D", undefined))
      assert.deepStrictEqual(yield* f.pop((p) => Effect.succeed(p.deltas.map((d) => "key" in d && d.key))), ["C"])
      assert.deepStrictEqual(yield* f.pop((p) => Effect.succeed(p.deltas.map((d) => "key" in d && d.key))), ["D"])
    }))

  const twice = (f: Fifo) => Effect.andThen(pop(f), pop(f))
  const realFifoHasSynced: ReadonlyArray<readonly [string, (f: Fifo) => Effect.Effect<unknown, unknown>, boolean]> = [
    ["no ops -> false", () => Effect.void, false],
    ["Add -> true", (f) => f.add(obj("a", 1)), true],
    ["Replace([]) -> true", (f) => f.replace([], "0"), true],
    ["Replace([a,b]) -> false", (f) => f.replace([obj("a", 1), obj("b", 2)], "0"), false],
    [
      "Replace([a,b]) + 1 Pop -> false",
      (f) => Effect.andThen(f.replace([obj("a", 1), obj("b", 2)], "0"), pop(f)),
      false
    ],
    [
      "Replace([a,b]) + 2 Pops -> true",
      (f) => Effect.andThen(f.replace([obj("a", 1), obj("b", 2)], "0"), twice(f)),
      true
    ],
    [
      "Replace([a1,a2]) + 1 Pop -> false (every delta counted)",
      (f) => Effect.andThen(f.replace([obj("a", 1), obj("a", 2)], "0"), pop(f)),
      false
    ],
    [
      "Replace([a1,a2]) + 2 Pops -> true",
      (f) => Effect.andThen(f.replace([obj("a", 1), obj("a", 2)], "0"), twice(f)),
      true
    ]
  ]
  for (const [name, actions, expected] of realFifoHasSynced) {
    it.effect(`TestRealFIFO_HasSynced: ${name}`, () =>
      Effect.gen(function*() {
        const f = realFifo()
        yield* actions(f)
        assert.strictEqual(yield* f.hasSynced, expected)
      }))
  }

  const atomicHasSynced: ReadonlyArray<readonly [string, (f: Fifo) => Effect.Effect<unknown, unknown>, boolean]> = [
    ["no ops -> false", () => Effect.void, false],
    ["Add -> true", (f) => f.add(obj("a", 1)), true],
    ["Replace([]) -> false until its ReplacedAll is popped", (f) => f.replace([], "0"), false],
    ["Replace([]) + 1 Pop -> true", (f) => Effect.andThen(f.replace([], "0"), pop(f)), true],
    [
      "Replace([a,b]) + 1 Pop -> true (one ReplacedAll)",
      (f) => Effect.andThen(f.replace([obj("a", 1), obj("b", 2)], "0"), pop(f)),
      true
    ],
    [
      "Resync; Replace([a]) + 1 Pop -> false (prior items + 1 counted)",
      (f) => Effect.andThen(Effect.andThen(f.resync, f.replace([obj("a", 1)], "0")), pop(f)),
      false
    ],
    [
      "Resync; Replace([a]) + 2 Pops -> true",
      (f) => Effect.andThen(Effect.andThen(f.resync, f.replace([obj("a", 1)], "0")), twice(f)),
      true
    ]
  ]
  for (const [name, actions, expected] of atomicHasSynced) {
    it.effect(`TestRealFIFO_HasSynced (atomic): ${name}`, () =>
      Effect.gen(function*() {
        const f = atomicFifo()
        yield* actions(f)
        assert.strictEqual(yield* f.hasSynced, expected)
      }))
  }

  const obj1 = obj("foo1", 5)
  const obj2 = obj("foo2", 5)
  const obj3 = obj("foo3", 5)
  const obj4 = obj("foo4", 5)
  const unlimited = 999999
  const batchCases: ReadonlyArray<
    readonly [string, ReadonlyArray<TestObj>, ReadonlyArray<TestObj>, number, ReadonlyArray<ReadonlyArray<string>>]
  > = [
    ["non-split: pop unique items should work", [obj1, obj2, obj3], [], unlimited, [[
      "Replaced foo1 5",
      "Replaced foo2 5",
      "Replaced foo3 5"
    ]]],
    ["split due to initial list: initial 2 items with 2 updates should have 2 batches", [obj1, obj2], [obj3, obj4], 2, [
      ["Replaced foo1 5", "Replaced foo2 5"],
      ["Updated foo3 5", "Updated foo4 5"]
    ]],
    [
      "split due to non-unique#1: update single item for multiple items should have separate batch",
      [obj1],
      [
        obj1,
        obj1
      ],
      unlimited,
      [["Replaced foo1 5"], ["Updated foo1 5"], ["Updated foo1 5"]]
    ],
    ["split due to non-unique#2: non-unique item at the end", [obj1, obj2], [obj2, obj3], unlimited, [
      ["Replaced foo1 5", "Replaced foo2 5"],
      ["Updated foo2 5", "Updated foo3 5"]
    ]],
    ["split due to non-unique#3: non-unique item in the middle", [obj1, obj2, obj3], [obj2], unlimited, [
      ["Replaced foo1 5", "Replaced foo2 5", "Replaced foo3 5"],
      ["Updated foo2 5"]
    ]],
    ["split due to batch size#1: batching initial list should work", [obj1, obj2, obj3], [], 2, [
      ["Replaced foo1 5", "Replaced foo2 5"],
      ["Replaced foo3 5"]
    ]],
    ["split due to batch size#2: batching incoming non-initial deltas should work", [], [obj1, obj2, obj3], 2, [
      ["Updated foo1 5", "Updated foo2 5"],
      ["Updated foo3 5"]
    ]],
    [
      "split due to batch size#3: 4 mixed initial & non-initial items with batch 2 -> 3 batches",
      [obj1, obj2, obj3],
      [
        obj4
      ],
      2,
      [["Replaced foo1 5", "Replaced foo2 5"], ["Replaced foo3 5"], ["Updated foo4 5"]]
    ]
  ]
  for (const [name, initialItems, updates, batchSize, expected] of batchCases) {
    it.effect(`TestRealFIFO_PopMultipleDeltaInBatch: ${name}`, () =>
      Effect.gen(function*() {
        const f = realFifo({ knownObjects: known(...initialItems) })
        yield* f.replace(initialItems, "123")
        for (const update of updates) yield* f.update(update)
        const batches = yield* drainBatches(f, batchSize)
        assert.deepStrictEqual(batches.map((b) => b.deltas), expected)
        const initial = batches.filter((b) => b.initial).flatMap((b) => b.deltas)
        assert.deepStrictEqual(initial, initialItems.map((o) => `Replaced ${o.metadata.name} 5`))
      }))
  }

  it.effect("TestRealFIFO_PopMultipleDeltaInBatch (atomic): the ReplacedAll is processed alone, then updates batch", () =>
    Effect.gen(function*() {
      const f = atomicFifo()
      yield* f.replace([obj1, obj2], "123")
      yield* f.update(obj3)
      yield* f.update(obj4)
      yield* f.update(obj3)
      yield* f.resync
      yield* f.update(obj1)
      assert.deepStrictEqual(yield* drainBatches(f, unlimited), [
        { deltas: ["ReplacedAll 123 [foo1:5,foo2:5]"], initial: true },
        { deltas: ["Updated foo3 5", "Updated foo4 5"], initial: false },
        { deltas: ["Updated foo3 5"], initial: false },
        { deltas: ["SyncAll"], initial: false },
        { deltas: ["Updated foo1 5"], initial: false }
      ])
    }))

  // Adapted: keys are computed at enqueue, so an object whose key cannot be computed is rejected there with a
  // typed KeyError and never reaches (or breaks) a batch.
  const failing = new Set(["foo3", "foo4"])
  const brokenKeyFunction: Indexer.KeyFunction<TestObj> = (o) =>
    !(o instanceof DeletedFinalStateUnknown) && failing.has(o.metadata.name)
      ? Result.fail(new Indexer.KeyError({ reason: "KeyFunctionFailed", message: "test key func error" }))
      : Indexer.deletionHandlingMetaNamespaceKey(o)
  const brokenCases: ReadonlyArray<readonly [string, ReadonlyArray<TestObj>, ReadonlyArray<ReadonlyArray<string>>]> = [
    ["1st item is broken", [obj3], []],
    ["nth item is broken", [obj1, obj2, obj3], [["Added foo1 5", "Added foo2 5"]]],
    ["multiple nth items are broken", [obj1, obj2, obj3, obj4], [["Added foo1 5", "Added foo2 5"]]],
    ["mixed 1st and nth items are broken", [obj3, obj1, obj4], [["Added foo1 5"]]]
  ]
  for (const [name, items, expected] of brokenCases) {
    it.effect(`TestRealFIFO_PopBrokenItemsInBatch (adapted): ${name}`, () =>
      Effect.gen(function*() {
        const f = realFifo({ keyFunction: brokenKeyFunction })
        for (const item of items) {
          const result = yield* Effect.result(f.add(item))
          if (failing.has(item.metadata.name)) {
            assert.isTrue(Result.isFailure(result) && result.failure._tag === "KeyError", item.metadata.name)
          } else {
            assert.isTrue(Result.isSuccess(result))
          }
        }
        assert.deepStrictEqual((yield* drainBatches(f, unlimited)).map((b) => b.deltas), expected)
      }))
  }

  const atomicReplaceCases: ReadonlyArray<
    readonly [string, (f: Fifo) => Effect.Effect<void, DeltaFifo.EnqueueError>, ReadonlyArray<string>]
  > = [
    ["Base replace", (f) => f.replace([], "123"), ["ReplacedAll 123 []"]],
    ["Added object exists in deltas on Atomic Replace", (f) =>
      Effect.gen(function*() {
        yield* f.add(obj("foo", 2))
        yield* f.replace([], "123")
      }), ["Added foo 2", "ReplacedAll 123 []"]],
    ["Multiple replaces run in order", (f) =>
      Effect.gen(function*() {
        yield* f.add(obj("foo", 2))
        yield* f.replace([obj("foo", 2)], "10")
        yield* f.replace([obj("foo", 2)], "20")
        yield* f.replace([], "56")
      }), ["Added foo 2", "ReplacedAll 10 [foo:2]", "ReplacedAll 20 [foo:2]", "ReplacedAll 56 []"]],
    ["Bookmark object should not be included in Replace", (f) =>
      Effect.gen(function*() {
        yield* f.bookmark("123")
        yield* f.replace([], "1234")
      }), ["Bookmark 123", "ReplacedAll 1234 []"]]
  ]
  for (const [name, operations, expected] of atomicReplaceCases) {
    it.effect(`TestRealFIFO_ReplaceAtomic: ${name}`, () =>
      Effect.gen(function*() {
        const f = atomicFifo()
        yield* operations(f)
        assert.deepStrictEqual(yield* drain(f), expected.map((d) => [d]))
        assert.strictEqual(yield* f.length, 0)
      }))
  }

  it.effect("TestRealFIFO_ReplaceAtomicPop: Add foo10; Replace([foo15],\"20\") -> Added foo10, then ReplacedAll with foo15", () =>
    Effect.gen(function*() {
      const f = atomicFifo()
      yield* f.add(obj("foo", 10))
      yield* f.replace([obj("foo", 15)], "20")
      assert.deepStrictEqual(yield* pop(f), ["Added foo 10"])
      assert.deepStrictEqual(yield* pop(f), ["ReplacedAll 20 [foo:15]"])
      assert.strictEqual(yield* f.length, 0)
    }))

  for (
    const [name, operations, expected] of [
      ["Base resync", (f: Fifo) => f.resync, ["SyncAll"]],
      ["Added object exists in deltas on Atomic Resync", (f: Fifo) => Effect.andThen(f.add(obj("foo", 2)), f.resync), [
        "Added foo 2",
        "SyncAll"
      ]]
    ] as const
  ) {
    it.effect(`TestRealFIFO_ResyncAtomic: ${name}`, () =>
      Effect.gen(function*() {
        const f = atomicFifo()
        yield* operations(f)
        assert.deepStrictEqual((yield* drain(f)).flat(), [...expected])
      }))
  }
})

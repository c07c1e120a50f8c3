/**
 * DeltaFifo in coalescing mode: ports of client-go's delta_fifo_test.go (test names keep the client-go names).
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as DeltaFifo from "../../../src/DeltaFifo.js"
import * as Indexer from "../../../src/Indexer.js"
import type { Fifo, TestObj } from "./fixtures.js"
import {
  countingTransform,
  deltaFifo,
  drain,
  known,
  knownFooBarBaz,
  obj,
  objectOf,
  pop,
  popValue,
  show,
  tomb
} from "./fixtures.js"

describe("delta_fifo_test (coalescing)", () => {
  it.effect("TestDeltaFIFO_replaceWithDeleteDeltaIn: known={foo1}; Delete foo1; Replace([foo2]) -> [Deleted foo1, Sync foo2]", () =>
    Effect.gen(function*() {
      const oldObj = obj("foo", 1)
      const f = deltaFifo({ knownObjects: known(oldObj) })
      yield* f.delete(oldObj)
      yield* f.replace([obj("foo", 2)], "")
      assert.deepStrictEqual(yield* pop(f), ["Deleted foo 1", "Sync foo 2"])
      assert.strictEqual(yield* f.length, 0)
    }))

  const onlyInQueue: ReadonlyArray<
    readonly [string, boolean, (f: Fifo) => Effect.Effect<void, DeltaFifo.EnqueueError>, ReadonlyArray<string>]
  > = [
    ["Added object should be deleted on Replace", false, (f) =>
      Effect.gen(function*() {
        yield* f.add(obj("foo", 2))
        yield* f.replace([], "0")
      }), ["Added foo 2", "Deleted tomb(foo,2)"]],
    ["Replaced object should have only a single Delete", true, (f) =>
      Effect.gen(function*() {
        yield* f.add(obj("foo", 2))
        yield* f.replace([obj("foo", 2)], "0")
        yield* f.replace([], "0")
      }), ["Added foo 2", "Replaced foo 2", "Deleted tomb(foo,2)"]],
    ["Deleted object should have only a single Delete", false, (f) =>
      Effect.gen(function*() {
        yield* f.add(obj("foo", 2))
        yield* f.delete(obj("foo", 2))
        yield* f.replace([], "0")
      }), ["Added foo 2", "Deleted foo 2"]],
    ["Synced objects should have a single delete", false, (f) =>
      Effect.gen(function*() {
        yield* f.add(obj("foo", 2))
        yield* f.replace([obj("foo", 2)], "0")
        yield* f.replace([obj("foo", 2)], "0")
        yield* f.replace([], "0")
      }), ["Added foo 2", "Sync foo 2", "Sync foo 2", "Deleted tomb(foo,2)"]],
    ["Added objects should have a single delete on multiple Replaces", false, (f) =>
      Effect.gen(function*() {
        yield* f.add(obj("foo", 2))
        yield* f.replace([], "0")
        yield* f.replace([], "1")
      }), ["Added foo 2", "Deleted tomb(foo,2)"]],
    ["Added and deleted and added object should be deleted", false, (f) =>
      Effect.gen(function*() {
        yield* f.add(obj("foo", 2))
        yield* f.delete(obj("foo", 2))
        yield* f.add(obj("foo", 3))
        yield* f.replace([], "0")
      }), ["Added foo 2", "Deleted foo 2", "Added foo 3", "Deleted tomb(foo,3)"]]
  ]
  for (const [name, emitReplaced, operations, expected] of onlyInQueue) {
    it.effect(`TestDeltaFIFOW_ReplaceMakesDeletionsForObjectsOnlyInQueue: ${name}`, () =>
      Effect.gen(function*() {
        for (const knownObjects of [known(), undefined]) {
          const f = deltaFifo({ emitReplaced, knownObjects })
          yield* operations(f)
          assert.deepStrictEqual(yield* pop(f), expected, knownObjects === undefined ? "without known" : "with known")
          assert.strictEqual(yield* f.length, 0)
          assert.deepStrictEqual(yield* f.listKeys, [])
        }
      }))
  }

  it.effect("TestDeltaFIFO_addUpdate: Add foo10, Update foo12, Delete foo15 -> one key, newest 15", () =>
    Effect.gen(function*() {
      const f = deltaFifo()
      yield* f.add(obj("foo", 10))
      yield* f.update(obj("foo", 12))
      yield* f.delete(obj("foo", 15))
      assert.deepStrictEqual(yield* f.listKeys, ["foo"])
      assert.strictEqual(yield* popValue(f), 15)
      // client-go waits 50 ms for a second item; nothing is queued, so none can come.
      assert.strictEqual(yield* f.length, 0)
      assert.deepStrictEqual(yield* f.listKeys, [])
    }))

  it.effect("TestDeltaFIFO_transformer: keys [foo, bar]; newest foo = Deleted foo15, bar = tombstone of bar16, each transformed once", () =>
    Effect.gen(function*() {
      const { calls, transform } = countingTransform()
      const f = deltaFifo({ transform })
      yield* f.add(obj("foo", 10))
      yield* f.add(obj("bar", 11))
      yield* f.update(obj("foo", 12))
      yield* f.delete(obj("foo", 15))
      yield* f.replace([], "")
      yield* f.add(obj("bar", 16))
      yield* f.replace([], "")
      assert.deepStrictEqual(yield* f.listKeys, ["foo", "bar"])

      const foo = yield* f.pop((p) => Effect.succeed(p.deltas))
      const fooNewest = foo[foo.length - 1]
      assert.strictEqual(show(fooNewest), "Deleted foo 15")
      assert.strictEqual(objectOf(fooNewest)!.xfrm, 1)

      const bar = yield* f.pop((p) => Effect.succeed(p.deltas))
      const barNewest = bar[bar.length - 1]
      assert.strictEqual(show(barNewest), "Deleted tomb(bar,16)")
      assert.strictEqual(objectOf(barNewest)!.xfrm, 1)

      for (const delta of [...foo, ...bar]) assert.strictEqual(objectOf(delta)?.xfrm, 1, show(delta))
      assert.deepStrictEqual(calls, ["foo:10", "bar:11", "foo:12", "foo:15", "bar:16"])
    }))

  it.effect("TestDeltaFIFO_addReplace: Add foo10; Replace([foo15]) -> one Pop, newest 15, then nothing", () =>
    Effect.gen(function*() {
      const f = deltaFifo()
      yield* f.add(obj("foo", 10))
      yield* f.replace([obj("foo", 15)], "0")
      assert.strictEqual(yield* popValue(f), 15)
      assert.strictEqual(yield* f.length, 0)
      assert.deepStrictEqual(yield* f.listKeys, [])
    }))

  it.effect("TestDeltaFIFO_ReplaceMakesDeletionsReplaced: emitReplaced -> [Deleted baz10], [Replaced foo6], [tomb bar6]", () =>
    Effect.gen(function*() {
      const f = deltaFifo({ knownObjects: knownFooBarBaz(), emitReplaced: true })
      yield* f.delete(obj("baz", 10))
      yield* f.replace([obj("foo", 6)], "0")
      assert.deepStrictEqual(yield* drain(f), [["Deleted baz 10"], ["Replaced foo 6"], ["Deleted tomb(bar,6)"]])
    }))

  it.effect("TestDeltaFIFO_ReplaceDeltaType: emitReplaced, known={foo5}; Replace([foo5]) -> [Replaced foo5]", () =>
    Effect.gen(function*() {
      const f = deltaFifo({ knownObjects: known(obj("foo", 5)), emitReplaced: true })
      yield* f.replace([obj("foo", 5)], "0")
      assert.deepStrictEqual(yield* drain(f), [["Replaced foo 5"]])
    }))

  it.effect("TestDeltaFIFO_ReplaceDeltaType: emitReplaced is the default", () =>
    Effect.gen(function*() {
      const f = DeltaFifo.unsafeMake<TestObj>({ mode: "coalescing", knownObjects: known(obj("foo", 5)) })
      yield* f.replace([obj("foo", 5)], "0")
      assert.deepStrictEqual(yield* drain(f), [["Replaced foo 5"]])
    }))

  it.effect("TestDeltaFIFO_KeyOf: object -> name; tombstone -> Key; deltas -> key of newest (also a tombstone)", () =>
    Effect.gen(function*() {
      // The key is computed once at enqueue and carried by every delta.
      assert.deepStrictEqual(Indexer.deletionHandlingMetaNamespaceKey(obj("A", 1)), Result.succeed("A"))
      assert.deepStrictEqual(Indexer.deletionHandlingMetaNamespaceKey(tomb("B", undefined)), Result.succeed("B"))
      const f = deltaFifo({ knownObjects: known(obj("D", 1)) })
      yield* f.add(obj("C", 1))
      yield* f.delete(tomb("D", undefined))
      assert.deepStrictEqual(yield* f.pop((p) => Effect.succeed(p.deltas.map((d) => "key" in d && d.key))), ["C"])
      assert.deepStrictEqual(yield* f.pop((p) => Effect.succeed(p.deltas.map((d) => "key" in d && d.key))), ["D"])
    }))

  const deltaFifoHasSynced: ReadonlyArray<readonly [string, (f: Fifo) => Effect.Effect<unknown, unknown>, boolean]> = [
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
      (f) => Effect.andThen(f.replace([obj("a", 1), obj("b", 2)], "0"), Effect.andThen(pop(f), pop(f))),
      true
    ],
    [
      "Replace([a1,a2]) + 1 Pop -> true (counts unique keys)",
      (f) => Effect.andThen(f.replace([obj("a", 1), obj("a", 2)], "0"), pop(f)),
      true
    ]
  ]
  for (const [name, actions, expected] of deltaFifoHasSynced) {
    it.effect(`TestDeltaFIFO_HasSynced: ${name}`, () =>
      Effect.gen(function*() {
        const f = deltaFifo()
        yield* actions(f)
        assert.strictEqual(yield* f.hasSynced, expected)
      }))
  }
})

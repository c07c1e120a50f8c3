import { assert, describe, it } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as FastCheck from "effect/FastCheck"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import type * as Scheduler from "effect/Scheduler"
import * as DeltaFifo from "../src/DeltaFifo.js"
import * as Indexer from "../src/Indexer.js"
import * as IndexerStore from "../src/internal/indexerStore.js"
import type { KubeObject } from "../src/KubeObject.js"
import { DeletedFinalStateUnknown } from "../src/KubeObject.js"

// -------------------------------------------------------------------------------------------------
// fixtures
// -------------------------------------------------------------------------------------------------

interface TestObj extends KubeObject {
  readonly metadata: { readonly name: string; readonly resourceVersion: string }
  readonly value: number
  /** How many times the transform ran on this object. */
  readonly xfrm?: number | undefined
}

type Fifo = DeltaFifo.DeltaFifo.Service<TestObj>
type Options = DeltaFifo.DeltaFifo.Options<TestObj>
type Delta = DeltaFifo.Delta<TestObj>

const obj = (name: string, val: number): TestObj => ({ metadata: { name, resourceVersion: String(val) }, value: val })

const tomb = (key: string, o: TestObj | undefined): DeletedFinalStateUnknown<TestObj> =>
  new DeletedFinalStateUnknown({ key, obj: o })

/** knownObjects: an Indexer pre-filled with the objects, keyed by name (they have no namespace). */
const known = (...objs: ReadonlyArray<TestObj>): Indexer.Indexer.Service<TestObj> => {
  const store = Indexer.unsafeMake<TestObj>()
  for (const o of objs) Effect.runSync(store.add(o))
  return store
}

/** knownObjects {foo5, bar6, baz7}, as client-go's ReplaceMakesDeletions tests have it. */
const knownFooBarBaz = () => known(obj("foo", 5), obj("bar", 6), obj("baz", 7))

/** client-go's DeltaFIFO: coalescing, `Sync` deltas from Replace unless `emitReplaced: true` is given. */
const deltaFifo = (options: Options = {}): Fifo =>
  DeltaFifo.unsafeMake<TestObj>({ mode: "coalescing", emitReplaced: false, ...options })

/** client-go's RealFIFO (non-atomic, with a knownObjects store, empty unless given). */
const realFifo = (options: Options = {}): Fifo =>
  DeltaFifo.unsafeMake<TestObj>({ mode: "inOrder", atomic: false, knownObjects: known(), ...options })

/** client-go's RealFIFO with AtomicEvents (and bookmarks). */
const atomicFifo = (options: Options = {}): Fifo => DeltaFifo.unsafeMake<TestObj>({ mode: "inOrder", ...options })

const modes: ReadonlyArray<readonly [string, (options?: Options) => Fifo]> = [
  ["coalescing", deltaFifo],
  ["inOrder non-atomic", realFifo],
  ["inOrder atomic", atomicFifo]
]

const showObj = (o: TestObj | undefined): string => (o === undefined ? "-" : String(o.value))

/** A delta as a short string (`Added foo 10`, `Deleted tomb(bar,6)`, `ReplacedAll 20 [foo:15]`), checking its key. */
const show = (delta: Delta): string => {
  switch (delta._tag) {
    case "ReplacedAll": {
      assert.deepStrictEqual(delta.keys, delta.objects.map((o) => o.metadata.name))
      return `ReplacedAll ${delta.resourceVersion} [${
        delta.objects.map((o) => `${o.metadata.name}:${o.value}`).join(",")
      }]`
    }
    case "SyncAll":
      return "SyncAll"
    case "Bookmark":
      return `Bookmark ${delta.resourceVersion}`
    case "Deleted": {
      const o = delta.object
      if (o instanceof DeletedFinalStateUnknown) {
        assert.strictEqual(o.key, delta.key)
        return `Deleted tomb(${o.key},${showObj(o.obj)})`
      }
      assert.strictEqual(o.metadata.name, delta.key)
      return `Deleted ${delta.key} ${o.value}`
    }
    default: {
      assert.strictEqual(delta.object.metadata.name, delta.key)
      return `${delta._tag} ${delta.key} ${delta.object.value}`
    }
  }
}

/** The object a delta carries (a tombstone's last known state), if any. */
const objectOf = (delta: Delta): TestObj | undefined =>
  "object" in delta ? (delta.object instanceof DeletedFinalStateUnknown ? delta.object.obj : delta.object) : undefined

const pop = (fifo: Fifo) => fifo.pop((popped) => Effect.succeed(popped.deltas.map(show)))

const popInitial = (fifo: Fifo) =>
  fifo.pop((popped) => Effect.succeed({ deltas: popped.deltas.map(show), initial: popped.isInInitialList }))

/** client-go's `testPop`: the value of the newest object of one pop. */
const popValue = (fifo: Fifo) =>
  fifo.pop((popped) => Effect.succeed(objectOf(popped.deltas[popped.deltas.length - 1])?.value))

/** Pops until the queue is empty. */
const drain = (fifo: Fifo) =>
  Effect.gen(function*() {
    const out: Array<ReadonlyArray<string>> = []
    while ((yield* fifo.length) > 0) out.push(yield* pop(fifo))
    return out
  })

const drainBatches = (fifo: Fifo, max: number) =>
  Effect.gen(function*() {
    const out: Array<{ readonly deltas: ReadonlyArray<string>; readonly initial: boolean }> = []
    while ((yield* fifo.length) > 0) {
      out.push(
        yield* fifo.popBatch(max, (popped) =>
          Effect.succeed({ deltas: popped.deltas.map(show), initial: popped.isInInitialList }))
      )
    }
    return out
  })

/** A transform that counts its calls and marks each object it returns (never mutating its input). */
const countingTransform = () => {
  const calls: Array<string> = []
  const transform = (o: TestObj): TestObj => {
    calls.push(`${o.metadata.name}:${o.value}`)
    return { ...o, xfrm: (o.xfrm ?? 0) + 1 }
  }
  return { calls, transform }
}

/** Two producer fibers each add 500 distinct keys with increasing values; each producer's values pop in order. */
const producersKeepTheirOwnOrder = (fifo: Fifo) =>
  Effect.gen(function*() {
    const amount = 500
    const producer = (prefix: string) =>
      Effect.forEach(
        Array.from({ length: amount }, (_, i) => i),
        (i) => Effect.zipRight(fifo.add(obj(`${prefix}${i}`, i + 1)), Effect.yieldNow()),
        { discard: true }
      )
    const a = yield* Effect.fork(producer("a"))
    const b = yield* Effect.fork(producer("b"))
    const last: Record<string, number> = { a: 0, b: 0 }
    const seen: Record<string, number> = { a: 0, b: 0 }
    for (let i = 0; i < amount * 2; i++) {
      const popped = yield* fifo.pop((p) => Effect.succeed(p.deltas.map(objectOf)))
      for (const o of popped) {
        const prefix = o!.metadata.name[0]
        assert.isAbove(o!.value, last[prefix], `${prefix} out of order`)
        last[prefix] = o!.value
        seen[prefix]++
      }
    }
    yield* Fiber.join(a)
    yield* Fiber.join(b)
    assert.deepStrictEqual(seen, { a: amount, b: amount })
    assert.strictEqual(yield* fifo.length, 0)
  })

/** 10 pops blocked on an empty queue all fail with FifoClosedError after close. */
const popShouldUnblockWhenClosed = (fifo: Fifo) =>
  Effect.gen(function*() {
    const fibers = yield* Effect.forEach(Array.from({ length: 10 }), () => Effect.fork(pop(fifo)))
    yield* Effect.yieldNow()
    yield* Effect.yieldNow()
    for (const fiber of fibers) assert.isTrue(Option.isNone(yield* Fiber.poll(fiber)), "pop returned before close")
    yield* fifo.close
    for (const fiber of fibers) {
      const error = yield* Effect.flip(Fiber.join(fiber))
      assert.strictEqual(error._tag, "FifoClosedError")
    }
  })

// -------------------------------------------------------------------------------------------------
// delta_fifo_test.go (coalescing mode)
// -------------------------------------------------------------------------------------------------

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

  it.effect("TestDeltaFIFO_enqueueingNoLister: Pops 10, 15, 18 (delete of a never-seen key ignored)", () =>
    Effect.gen(function*() {
      const f = deltaFifo()
      yield* f.add(obj("foo", 10))
      yield* f.update(obj("bar", 15))
      yield* f.add(obj("qux", 17))
      yield* f.delete(obj("qux", 18))
      yield* f.delete(obj("baz", 20))
      for (const expected of [10, 15, 18]) assert.strictEqual(yield* popValue(f), expected)
      assert.strictEqual(yield* f.length, 0)
    }))

  it.effect("TestDeltaFIFO_enqueueingWithLister: known={foo,bar,baz} -> Pops 10, 15, 20 (delete of a known key accepted)", () =>
    Effect.gen(function*() {
      const f = deltaFifo({ knownObjects: known(obj("foo", 5), obj("bar", 6), obj("baz", 7)) })
      yield* f.add(obj("foo", 10))
      yield* f.update(obj("bar", 15))
      yield* f.delete(obj("baz", 20))
      for (const expected of [10, 15, 20]) assert.strictEqual(yield* popValue(f), expected)
      assert.strictEqual(yield* f.length, 0)
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

  it.effect("TestDeltaFIFO_DeleteExistingNonPropagated: known={}; Add foo5; Delete foo6 -> 2 deltas, last Deleted", () =>
    Effect.gen(function*() {
      const f = deltaFifo({ knownObjects: known() })
      yield* f.add(obj("foo", 5))
      yield* f.delete(obj("foo", 6))
      assert.deepStrictEqual(yield* drain(f), [["Added foo 5", "Deleted foo 6"]])
    }))

  it.effect("TestDeltaFIFO_ReplaceMakesDeletions (a): pre-existing Delete baz10", () =>
    Effect.gen(function*() {
      const f = deltaFifo({ knownObjects: knownFooBarBaz() })
      yield* f.delete(obj("baz", 10))
      yield* f.replace([obj("foo", 5)], "0")
      assert.deepStrictEqual(yield* drain(f), [["Deleted baz 10"], ["Sync foo 5"], ["Deleted tomb(bar,6)"]])
    }))

  it.effect("TestDeltaFIFO_ReplaceMakesDeletions (b): pre-existing Add baz10", () =>
    Effect.gen(function*() {
      const f = deltaFifo({ knownObjects: knownFooBarBaz() })
      yield* f.add(obj("baz", 10))
      yield* f.replace([obj("foo", 5)], "0")
      assert.deepStrictEqual(yield* drain(f), [
        ["Added baz 10", "Deleted tomb(baz,10)"],
        ["Sync foo 5"],
        ["Deleted tomb(bar,6)"]
      ])
    }))

  it.effect("TestDeltaFIFO_ReplaceMakesDeletions (c): Delete bar6, Add bar100 -> tombstone holds bar100", () =>
    Effect.gen(function*() {
      const f = deltaFifo({ knownObjects: knownFooBarBaz() })
      yield* f.delete(obj("bar", 6))
      yield* f.add(obj("bar", 100))
      yield* f.replace([obj("foo", 5)], "0")
      assert.deepStrictEqual(yield* drain(f), [
        ["Deleted bar 6", "Added bar 100", "Deleted tomb(bar,100)"],
        ["Sync foo 5"],
        ["Deleted tomb(baz,7)"]
      ])
    }))

  it.effect("TestDeltaFIFO_ReplaceMakesDeletions (d): Replace([bar100,foo5]) then Replace([foo5])", () =>
    Effect.gen(function*() {
      const f = deltaFifo({ knownObjects: knownFooBarBaz() })
      yield* f.replace([obj("bar", 100), obj("foo", 5)], "0")
      yield* f.replace([obj("foo", 5)], "0")
      assert.deepStrictEqual(yield* drain(f), [
        ["Sync bar 100", "Deleted tomb(bar,100)"],
        ["Sync foo 5", "Sync foo 5"],
        ["Deleted tomb(baz,7)"]
      ])
    }))

  it.effect("TestDeltaFIFO_ReplaceMakesDeletions (e): no known store, Add baz10", () =>
    Effect.gen(function*() {
      const f = deltaFifo()
      yield* f.add(obj("baz", 10))
      yield* f.replace([obj("foo", 5)], "0")
      assert.deepStrictEqual(yield* drain(f), [["Added baz 10", "Deleted tomb(baz,10)"], ["Sync foo 5"]])
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
      assert.deepStrictEqual(Indexer.deletionHandlingMetaNamespaceKey(obj("A", 1)), Either.right("A"))
      assert.deepStrictEqual(Indexer.deletionHandlingMetaNamespaceKey(tomb("B", undefined)), Either.right("B"))
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
      (f) => Effect.zipRight(f.replace([obj("a", 1), obj("b", 2)], "0"), pop(f)),
      false
    ],
    [
      "Replace([a,b]) + 2 Pops -> true",
      (f) => Effect.zipRight(f.replace([obj("a", 1), obj("b", 2)], "0"), Effect.zipRight(pop(f), pop(f))),
      true
    ],
    [
      "Replace([a1,a2]) + 1 Pop -> true (counts unique keys)",
      (f) => Effect.zipRight(f.replace([obj("a", 1), obj("a", 2)], "0"), pop(f)),
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

// -------------------------------------------------------------------------------------------------
// the_real_fifo_test.go (in-order mode)
// -------------------------------------------------------------------------------------------------

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

  it.effect("TestRealFIFO_enqueueingNoLister: Pops 10, 15, 17, 18, 20 (every call enqueued)", () =>
    Effect.gen(function*() {
      const f = realFifo()
      yield* f.add(obj("foo", 10))
      yield* f.update(obj("bar", 15))
      yield* f.add(obj("qux", 17))
      yield* f.delete(obj("qux", 18))
      yield* f.delete(obj("baz", 20))
      for (const expected of [10, 15, 17, 18, 20]) assert.strictEqual(yield* popValue(f), expected)
      assert.strictEqual(yield* f.length, 0)
    }))

  it.effect("TestRealFIFO_enqueueingWithLister: Pops 10, 15, 20", () =>
    Effect.gen(function*() {
      const f = realFifo({ knownObjects: known(obj("foo", 5), obj("bar", 6), obj("baz", 7)) })
      yield* f.add(obj("foo", 10))
      yield* f.update(obj("bar", 15))
      yield* f.delete(obj("baz", 20))
      for (const expected of [10, 15, 20]) assert.strictEqual(yield* popValue(f), expected)
      assert.strictEqual(yield* f.length, 0)
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

  it.effect("TestRealFIFO_DeleteExistingNonPropagated: Add foo5; Delete foo6 -> 2 deltas, last Deleted", () =>
    Effect.gen(function*() {
      const f = realFifo()
      yield* f.add(obj("foo", 5))
      yield* f.delete(obj("foo", 6))
      assert.deepStrictEqual((yield* drain(f)).flat(), ["Added foo 5", "Deleted foo 6"])
    }))

  it.effect("TestRealFIFO_ReplaceMakesDeletions (a): Delete baz10 -> deletions precede replacements", () =>
    Effect.gen(function*() {
      const f = realFifo({ knownObjects: knownFooBarBaz() })
      yield* f.delete(obj("baz", 10))
      yield* f.replace([obj("foo", 5)], "0")
      assert.deepStrictEqual(yield* drain(f), [["Deleted baz 10"], ["Deleted tomb(bar,6)"], ["Replaced foo 5"]])
    }))

  it.effect("TestRealFIFO_ReplaceMakesDeletions (b): Add baz10", () =>
    Effect.gen(function*() {
      const f = realFifo({ knownObjects: knownFooBarBaz() })
      yield* f.add(obj("baz", 10))
      yield* f.replace([obj("foo", 5)], "0")
      assert.deepStrictEqual(yield* drain(f), [
        ["Added baz 10"],
        ["Deleted tomb(baz,10)"],
        ["Deleted tomb(bar,6)"],
        ["Replaced foo 5"]
      ])
    }))

  it.effect("TestRealFIFO_ReplaceMakesDeletions (c): Delete bar6; Add bar100 -> tombstone holds bar100", () =>
    Effect.gen(function*() {
      const f = realFifo({ knownObjects: knownFooBarBaz() })
      yield* f.delete(obj("bar", 6))
      yield* f.add(obj("bar", 100))
      yield* f.replace([obj("foo", 5)], "0")
      assert.deepStrictEqual(yield* drain(f), [
        ["Deleted bar 6"],
        ["Added bar 100"],
        ["Deleted tomb(bar,100)"],
        ["Deleted tomb(baz,7)"],
        ["Replaced foo 5"]
      ])
    }))

  it.effect("TestRealFIFO_ReplaceMakesDeletions (d): Replace([bar100,foo5]) then Replace([foo5])", () =>
    Effect.gen(function*() {
      const f = realFifo({ knownObjects: knownFooBarBaz() })
      yield* f.replace([obj("bar", 100), obj("foo", 5)], "0")
      yield* f.replace([obj("foo", 5)], "0")
      assert.deepStrictEqual(yield* drain(f), [
        ["Deleted tomb(baz,7)"],
        ["Replaced bar 100"],
        ["Replaced foo 5"],
        ["Deleted tomb(bar,100)"],
        ["Replaced foo 5"]
      ])
    }))

  it.effect("TestRealFIFO_ReplaceMakesDeletions (e): empty known, Add baz10", () =>
    Effect.gen(function*() {
      const f = realFifo()
      yield* f.add(obj("baz", 10))
      yield* f.replace([obj("foo", 5)], "0")
      assert.deepStrictEqual(yield* drain(f), [["Added baz 10"], ["Deleted tomb(baz,10)"], ["Replaced foo 5"]])
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
      assert.deepStrictEqual(Indexer.deletionHandlingMetaNamespaceKey(obj("A", 1)), Either.right("A"))
      assert.deepStrictEqual(Indexer.deletionHandlingMetaNamespaceKey(tomb("B", undefined)), Either.right("B"))
      const f = realFifo()
      yield* f.add(obj("C", 1))
      yield* f.delete(tomb("D", undefined))
      assert.deepStrictEqual(yield* f.pop((p) => Effect.succeed(p.deltas.map((d) => "key" in d && d.key))), ["C"])
      assert.deepStrictEqual(yield* f.pop((p) => Effect.succeed(p.deltas.map((d) => "key" in d && d.key))), ["D"])
    }))

  const twice = (f: Fifo) => Effect.zipRight(pop(f), pop(f))
  const realFifoHasSynced: ReadonlyArray<readonly [string, (f: Fifo) => Effect.Effect<unknown, unknown>, boolean]> = [
    ["no ops -> false", () => Effect.void, false],
    ["Add -> true", (f) => f.add(obj("a", 1)), true],
    ["Replace([]) -> true", (f) => f.replace([], "0"), true],
    ["Replace([a,b]) -> false", (f) => f.replace([obj("a", 1), obj("b", 2)], "0"), false],
    [
      "Replace([a,b]) + 1 Pop -> false",
      (f) => Effect.zipRight(f.replace([obj("a", 1), obj("b", 2)], "0"), pop(f)),
      false
    ],
    [
      "Replace([a,b]) + 2 Pops -> true",
      (f) => Effect.zipRight(f.replace([obj("a", 1), obj("b", 2)], "0"), twice(f)),
      true
    ],
    [
      "Replace([a1,a2]) + 1 Pop -> false (every delta counted)",
      (f) => Effect.zipRight(f.replace([obj("a", 1), obj("a", 2)], "0"), pop(f)),
      false
    ],
    [
      "Replace([a1,a2]) + 2 Pops -> true",
      (f) => Effect.zipRight(f.replace([obj("a", 1), obj("a", 2)], "0"), twice(f)),
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
    ["Replace([]) + 1 Pop -> true", (f) => Effect.zipRight(f.replace([], "0"), pop(f)), true],
    [
      "Replace([a,b]) + 1 Pop -> true (one ReplacedAll)",
      (f) => Effect.zipRight(f.replace([obj("a", 1), obj("b", 2)], "0"), pop(f)),
      true
    ],
    [
      "Resync; Replace([a]) + 1 Pop -> false (prior items + 1 counted)",
      (f) => Effect.zipRight(Effect.zipRight(f.resync, f.replace([obj("a", 1)], "0")), pop(f)),
      false
    ],
    [
      "Resync; Replace([a]) + 2 Pops -> true",
      (f) => Effect.zipRight(Effect.zipRight(f.resync, f.replace([obj("a", 1)], "0")), twice(f)),
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
      ? Either.left(new Indexer.KeyError({ reason: "KeyFunctionFailed", message: "test key func error" }))
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
          const result = yield* Effect.either(f.add(item))
          if (failing.has(item.metadata.name)) {
            assert.isTrue(Either.isLeft(result) && result.left._tag === "KeyError", item.metadata.name)
          } else {
            assert.isTrue(Either.isRight(result))
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
      ["Added object exists in deltas on Atomic Resync", (f: Fifo) => Effect.zipRight(f.add(obj("foo", 2)), f.resync), [
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

// -------------------------------------------------------------------------------------------------
// the client-go tests both FIFO modes share (delta_fifo_test.go and the_real_fifo_test.go), per mode
// -------------------------------------------------------------------------------------------------

type FifoMode = NonNullable<Options["mode"]>

/** What a shared client-go test builds and expects in one mode. */
interface ClientGoMode {
  /** client-go's test-name prefix. */
  readonly prefix: "TestDeltaFIFO" | "TestRealFIFO"
  /** The FIFO client-go's test builds: DeltaFIFO, or RealFIFO without AtomicEvents. */
  readonly make: (options?: Options) => Fifo
  /** RealFIFO with AtomicEvents, where client-go runs the test again with it. */
  readonly atomic?: (options?: Options) => Fifo
  /** How the Resync tests read the queue: by Pop (coalescing) or as one sequence of deltas (inOrder). */
  readonly drained: (fifo: Fifo) => Effect.Effect<unknown, DeltaFifo.FifoClosedError>
  readonly resyncNonExisting: { readonly title: string; readonly expected: unknown }
  readonly resync: unknown
  readonly hasSyncedCorrectOnDeletion: {
    readonly title: string
    readonly expected: ReadonlyArray<ReadonlyArray<string>>
  }
  readonly detectLineJumpers: {
    readonly title: string
    readonly first: number
    readonly rest: ReadonlyArray<number>
  }
}

const clientGoModes: Record<FifoMode, ClientGoMode> = {
  coalescing: {
    prefix: "TestDeltaFIFO",
    make: deltaFifo,
    drained: drain,
    resyncNonExisting: {
      title: "known={foo5}; Delete foo10; Resync -> foo's deltas exactly [Deleted]",
      expected: [["Deleted foo 10"]]
    },
    resync: [["Sync foo 5"]],
    hasSyncedCorrectOnDeletion: {
      title: "3 initial-list pops, synced only after the third",
      expected: [["Sync foo 5"], ["Deleted tomb(bar,6)"], ["Deleted tomb(baz,7)"]]
    },
    detectLineJumpers: { title: "a popped-then-re-added key goes to the back", first: 13, rest: [1, 30, 14] }
  },
  inOrder: {
    prefix: "TestRealFIFO",
    make: realFifo,
    atomic: atomicFifo,
    drained: (fifo) => Effect.map(drain(fifo), (pops) => pops.flat()),
    resyncNonExisting: {
      title: "known={foo5}; Delete foo10; Resync -> exactly [Deleted]",
      expected: ["Deleted foo 10"]
    },
    resync: ["Sync foo 5"],
    hasSyncedCorrectOnDeletion: {
      title: "tomb bar, tomb baz, Replaced foo; synced only after the third",
      expected: [["Deleted tomb(bar,6)"], ["Deleted tomb(baz,7)"], ["Replaced foo 5"]]
    },
    detectLineJumpers: { title: "pure arrival order 10, 1, 11, 13, 30, 14", first: 10, rest: [1, 11, 13, 30, 14] }
  }
}

describe.each(["coalescing", "inOrder"] as const)("client-go FIFO tests, %s mode", (mode) => {
  const m = clientGoModes[mode]
  it.effect(`${m.prefix}_basic: two producer fibers keep their own order`, () => producersKeepTheirOwnOrder(m.make()))

  if (m.atomic !== undefined) {
    const atomic = m.atomic
    it.effect(`${m.prefix}_basic (atomic): two producer fibers keep their own order`, () =>
      producersKeepTheirOwnOrder(atomic()))
  }

  it.effect(`${m.prefix}_ResyncNonExisting: ${m.resyncNonExisting.title}`, () =>
    Effect.gen(function*() {
      const f = m.make({ knownObjects: known(obj("foo", 5)) })
      yield* f.delete(obj("foo", 10))
      yield* f.resync
      assert.deepStrictEqual(yield* m.drained(f), m.resyncNonExisting.expected)
    }))

  it.effect(`${m.prefix}_Resync: known={foo5}; Resync -> [Sync foo5]`, () =>
    Effect.gen(function*() {
      const f = m.make({ knownObjects: known(obj("foo", 5)) })
      yield* f.resync
      assert.deepStrictEqual(yield* m.drained(f), m.resync)
    }))

  it.effect(`${m.prefix}_UpdateResyncRace: known={foo5}; Update foo6; Resync -> single Pop [Updated foo6]`, () =>
    Effect.gen(function*() {
      const f = m.make({ knownObjects: known(obj("foo", 5)) })
      yield* f.update(obj("foo", 6))
      yield* f.resync
      assert.deepStrictEqual(yield* drain(f), [["Updated foo 6"]])
    }))

  it.effect(`${m.prefix}_HasSyncedCorrectOnDeletion: ${m.hasSyncedCorrectOnDeletion.title}`, () =>
    Effect.gen(function*() {
      const f = m.make({ knownObjects: knownFooBarBaz() })
      yield* f.replace([obj("foo", 5)], "0")
      for (const expected of m.hasSyncedCorrectOnDeletion.expected) {
        assert.isFalse(yield* f.hasSynced)
        assert.deepStrictEqual(yield* popInitial(f), { deltas: expected, initial: true })
      }
      assert.isTrue(yield* f.hasSynced)
    }))

  it.effect(`${m.prefix}_detectLineJumpers: ${m.detectLineJumpers.title}`, () =>
    Effect.gen(function*() {
      const f = m.make()
      yield* f.add(obj("foo", 10))
      yield* f.add(obj("bar", 1))
      yield* f.add(obj("foo", 11))
      yield* f.add(obj("foo", 13))
      yield* f.add(obj("zab", 30))
      assert.strictEqual(yield* popValue(f), m.detectLineJumpers.first)
      yield* f.add(obj("foo", 14))
      for (const expected of m.detectLineJumpers.rest) assert.strictEqual(yield* popValue(f), expected)
    }))

  it.effect(`${m.prefix}_PopShouldUnblockWhenClosed: 10 blocked Pops fail with FifoClosedError on Close`, () =>
    popShouldUnblockWhenClosed(m.make({ knownObjects: known(obj("foo", 5)) })))

  if (m.atomic !== undefined) {
    const atomic = m.atomic
    it.effect(`${m.prefix}_PopShouldUnblockWhenClosed (atomic)`, () => popShouldUnblockWhenClosed(atomic()))
  }
})

// -------------------------------------------------------------------------------------------------
// behaviour beyond client-go's tests
// -------------------------------------------------------------------------------------------------

describe("DeltaFifo", () => {
  const nameless = { metadata: { resourceVersion: "1" }, value: 1 } as unknown as TestObj
  const noMetadata = { value: 1 } as unknown as TestObj

  for (const [mode, make] of modes) {
    it.effect(`${mode}: an object without metadata.name is rejected with KeyError at enqueue, queue unchanged`, () =>
      Effect.gen(function*() {
        const f = make({ knownObjects: known(obj("k", 1)) })
        yield* f.add(obj("a", 1))
        for (const bad of [nameless, noMetadata]) {
          for (const enqueue of [f.add(bad), f.update(bad), f.delete(bad), f.replace([obj("b", 2), bad], "9")]) {
            const error = yield* Effect.flip(enqueue)
            assert.strictEqual(error._tag, "KeyError")
          }
        }
        assert.deepStrictEqual(yield* drain(f), [["Added a 1"]])
        assert.isTrue(yield* f.hasSynced)
      }))

    it.effect(`${mode}: a throwing transform yields TransformError and queues nothing`, () =>
      Effect.gen(function*() {
        const f = make({
          transform: (o) => {
            if (o.value === 13) throw new Error("unlucky")
            return o
          }
        })
        const error = yield* Effect.flip(f.add(obj("a", 13)))
        assert.isTrue(error._tag === "TransformError" && error.key === "a")
        const replaceError = yield* Effect.flip(f.replace([obj("b", 1), obj("c", 13)], "5"))
        assert.strictEqual(replaceError._tag, "TransformError")
        assert.strictEqual(yield* f.length, 0)
        assert.isFalse(yield* f.hasSynced)
      }))

    it.effect(`${mode}: pop after close drains the remaining items, then fails with FifoClosedError`, () =>
      Effect.gen(function*() {
        const f = make()
        yield* f.add(obj("a", 1))
        yield* f.add(obj("b", 2))
        yield* f.close
        assert.isTrue(yield* f.isClosed)
        assert.deepStrictEqual(yield* pop(f), ["Added a 1"])
        assert.deepStrictEqual(yield* pop(f), ["Added b 2"])
        const error = yield* Effect.flip(pop(f))
        assert.strictEqual(error._tag, "FifoClosedError")
        const batchError = yield* Effect.flip(f.popBatch(10, () => Effect.void))
        assert.strictEqual(batchError._tag, "FifoClosedError")
      }))

    it.effect(`${mode}: enqueue after close fails with FifoClosedError`, () =>
      Effect.gen(function*() {
        const f = make({ knownObjects: known(obj("k", 1)) })
        yield* f.close
        const attempts: ReadonlyArray<Effect.Effect<void, DeltaFifo.EnqueueError>> = [
          f.add(obj("a", 1)),
          f.update(obj("a", 2)),
          f.delete(obj("k", 3)),
          f.replace([obj("a", 4)], "4"),
          f.resync,
          f.bookmark("5")
        ]
        for (const attempt of attempts) {
          const error = yield* Effect.flip(attempt)
          assert.strictEqual(error._tag, "FifoClosedError")
        }
        assert.strictEqual(yield* f.length, 0)
      }))

    it.effect(`${mode}: pop blocks until an item arrives`, () =>
      Effect.gen(function*() {
        const f = make()
        const fiber = yield* Effect.fork(pop(f))
        yield* Effect.yieldNow()
        yield* Effect.yieldNow()
        assert.isTrue(Option.isNone(yield* Fiber.poll(fiber)))
        yield* f.add(obj("a", 1))
        assert.deepStrictEqual(yield* Fiber.join(fiber), ["Added a 1"])
      }))

    it.effect(`${mode}: a failing process function fails the pop; the item is not requeued`, () =>
      Effect.gen(function*() {
        const f = make()
        yield* f.replace([obj("a", 1)], "1")
        yield* f.add(obj("b", 2))
        const error = yield* Effect.flip(f.pop(() => Effect.fail("handler failed" as const)))
        assert.strictEqual(error, "handler failed")
        assert.isTrue(yield* f.hasSynced)
        assert.deepStrictEqual((yield* drain(f)).flat(), ["Added b 2"])
      }))

    it.effect(`${mode}: isInInitialList is true exactly for the first replace's items`, () =>
      Effect.gen(function*() {
        const f = make()
        yield* f.replace([obj("a", 1), obj("b", 2)], "2")
        yield* f.add(obj("c", 3))
        yield* f.update(obj("d", 4))
        const seen: Array<readonly [string, boolean]> = []
        while ((yield* f.length) > 0) {
          const { deltas, initial } = yield* popInitial(f)
          for (const delta of deltas) seen.push([delta, initial])
        }
        const initialItems = seen.filter(([, initial]) => initial).map(([delta]) => delta)
        if (mode === "inOrder atomic") {
          assert.deepStrictEqual(initialItems, ["ReplacedAll 2 [a:1,b:2]"])
        } else {
          assert.deepStrictEqual(
            initialItems,
            mode === "coalescing" ? ["Sync a 1", "Sync b 2"] : [
              "Replaced a 1",
              "Replaced b 2"
            ]
          )
        }
        assert.deepStrictEqual(seen.filter(([, initial]) => !initial).map(([delta]) => delta), [
          "Added c 3",
          "Updated d 4"
        ])
      }))

    it.effect(`${mode}: an add before the first replace means synced at once (no initial list)`, () =>
      Effect.gen(function*() {
        const f = make()
        yield* f.add(obj("a", 1))
        yield* f.replace([obj("b", 2)], "2")
        assert.isTrue(yield* f.hasSynced)
        while ((yield* f.length) > 0) assert.isFalse((yield* popInitial(f)).initial)
      }))

    it.effect(`${mode}: popBatch never mixes initial-list items with later ones`, () =>
      Effect.gen(function*() {
        const f = make()
        yield* f.replace([obj("a", 1), obj("b", 2), obj("c", 3)], "3")
        yield* f.add(obj("d", 4))
        yield* f.add(obj("e", 5))
        const batches = yield* drainBatches(f, 100)
        for (const batch of batches) {
          const initial = batch.deltas.every((d) => /^(Sync|Replaced|ReplacedAll) /.test(d))
          const later = batch.deltas.every((d) => d.startsWith("Added"))
          assert.isTrue(initial ? batch.initial : later && !batch.initial, JSON.stringify(batch))
        }
        assert.deepStrictEqual(batches.map((b) => b.initial), [true, false])
      }))

    it.effect(`${mode}: a replace that passes the very object held in knownObjects does not transform it again`, () =>
      Effect.gen(function*() {
        const { calls, transform } = countingTransform()
        const held = transform(obj("a", 1))
        calls.length = 0
        const knownObjects = known(held, transform(obj("b", 2)))
        calls.length = 0
        const f = make({ knownObjects, transform })
        const copy = { ...knownObjects.unsafeGetByKey("b")! }
        yield* f.replace([held, copy, obj("c", 3)], "5")
        const deltas: Array<Delta> = []
        while ((yield* f.length) > 0) deltas.push(...(yield* f.pop((p) => Effect.succeed(p.deltas))))
        const objects = deltas.flatMap((d) => (d._tag === "ReplacedAll" ? d.objects : [objectOf(d)!]))
        const a = objects.find((o) => o.metadata.name === "a")!
        assert.strictEqual(a, held, "the held object is passed through as is")
        assert.strictEqual(a.xfrm, 1)
        // Only identity proves an object was transformed already: an equal copy is transformed (once).
        assert.deepStrictEqual(calls, ["b:2", "c:3"])
        assert.strictEqual(objects.find((o) => o.metadata.name === "c")!.xfrm, 1)
      }))

    it.effect(`${mode}: the transform runs once per enqueued object, never on tombstones or Sync`, () =>
      Effect.gen(function*() {
        const { calls, transform } = countingTransform()
        const knownObjects = known(transform(obj("k", 1)), transform(obj("gone", 2)))
        calls.length = 0
        const f = make({ knownObjects, transform })
        yield* f.add(obj("a", 3))
        yield* f.update(obj("a", 4))
        yield* f.delete(obj("a", 5))
        yield* f.delete(tomb("k", knownObjects.unsafeGetByKey("k")))
        yield* f.resync
        yield* f.replace([obj("k", 6)], "6")
        assert.deepStrictEqual(calls, ["a:3", "a:4", "a:5", "k:6"])
        while ((yield* f.length) > 0) {
          const deltas = yield* f.pop((p) => Effect.succeed(p.deltas))
          for (const delta of deltas) {
            if (delta._tag === "ReplacedAll") {
              for (const o of delta.objects) assert.strictEqual(o.xfrm, 1)
            } else {
              const o = objectOf(delta)
              if (o !== undefined) assert.strictEqual(o.xfrm, 1, show(delta))
            }
          }
        }
      }))
  }

  // A scheduler may yield at any step. With one that yields often (seeded, so the run is reproducible),
  // several poppers that loop without yielding race between "an item is there" and "take it".
  it.effect("several poppers under an eagerly yielding scheduler: every item delivered exactly once, no defect", () =>
    Effect.gen(function*() {
      let seed = 42
      const random = () => {
        seed = (seed * 1103515245 + 12345) & 0x7fffffff
        return seed / 0x7fffffff
      }
      const tasks: Array<Scheduler.Task> = []
      let flushing = false
      const scheduler: Scheduler.Scheduler = {
        scheduleTask: (task) => {
          tasks.splice(Math.floor(random() * (tasks.length + 1)), 0, task)
          if (!flushing) {
            flushing = true
            setImmediate(() => {
              flushing = false
              for (const t of tasks.splice(0)) t()
            })
          }
        },
        shouldYield: (fiber) => (fiber.currentOpCount > 8 && random() < 0.15 ? 0 : false)
      }
      for (const mode of ["coalescing", "inOrder"] as const) {
        for (let trial = 0; trial < 12; trial++) {
          const f = DeltaFifo.unsafeMake<TestObj>({ mode })
          const delivered: Array<string> = []
          const popLoop: Effect.Effect<never, DeltaFifo.FifoClosedError> = Effect.flatMap(
            f.popBatch(1 + (trial % 3), (p) => Effect.sync(() => p.deltas.forEach((d) => delivered.push(show(d))))),
            () => popLoop
          )
          const exits = yield* Effect.gen(function*() {
            const poppers = yield* Effect.forEach(Array.from({ length: 2 + (trial % 3) }), () => Effect.fork(popLoop))
            for (let i = 0; i < 60; i++) {
              yield* f.add(obj(`k${i}`, i))
              if (i % (1 + (trial % 4)) === 0) yield* Effect.yieldNow()
            }
            while (f.unsafeLength() > 0) yield* Effect.yieldNow()
            yield* f.close
            return yield* Effect.forEach(poppers, Fiber.await)
          }).pipe(Effect.withScheduler(scheduler))
          for (const exit of exits) {
            assert.isTrue(Exit.isFailure(exit) && String(exit).includes("FifoClosedError"), String(exit))
          }
          assert.deepStrictEqual([...delivered].sort(), Array.from({ length: 60 }, (_, i) => `Added k${i} ${i}`).sort())
        }
      }
    }))

  it.effect("coalescing: a later delta for a key still queued from the initial list is delivered with it, as initial", () =>
    Effect.gen(function*() {
      const f = deltaFifo()
      yield* f.replace([obj("a", 1), obj("b", 2)], "2")
      yield* f.update(obj("a", 3))
      yield* f.add(obj("c", 4))
      assert.deepStrictEqual(yield* popInitial(f), { deltas: ["Sync a 1", "Updated a 3"], initial: true })
      assert.deepStrictEqual(yield* popInitial(f), { deltas: ["Sync b 2"], initial: true })
      assert.deepStrictEqual(yield* popInitial(f), { deltas: ["Added c 4"], initial: false })
    }))

  for (const [mode, make] of modes) {
    it.effect(`${mode}: a long queue keeps its order while items are pushed and popped (internal deque compaction)`, () =>
      Effect.gen(function*() {
        const f = make()
        const out: Array<number> = []
        let next = 0
        for (let round = 0; round < 6; round++) {
          for (let i = 0; i < 1500; i++, next++) yield* f.add(obj(`k${next}`, next))
          for (let i = 0; i < 1100; i++) out.push((yield* popValue(f))!)
        }
        while ((yield* f.length) > 0) out.push((yield* popValue(f))!)
        assert.strictEqual(out.length, next)
        assert.isTrue(out.every((v, i) => v === i))
      }))
  }

  it.effect("coalescing: of two consecutive deletes the more informative one is kept", () =>
    Effect.gen(function*() {
      const f = deltaFifo({ knownObjects: known(obj("a", 1), obj("b", 1)) })
      // real object then tombstone -> the real object is kept
      yield* f.delete(obj("a", 2))
      yield* f.delete(tomb("a", obj("a", 1)))
      // tombstone then real object -> the real object is kept
      yield* f.delete(tomb("b", obj("b", 1)))
      yield* f.delete(obj("b", 3))
      assert.deepStrictEqual(yield* drain(f), [["Deleted a 2"], ["Deleted b 3"]])
    }))

  it.effect("coalescing: of two real deletes the older is kept, of two tombstones the newer (client-go isDeletionDup)", () =>
    Effect.gen(function*() {
      const f = deltaFifo({ knownObjects: known(obj("a", 1), obj("b", 1)) })
      yield* f.delete(obj("a", 2))
      yield* f.delete(obj("a", 3))
      yield* f.delete(tomb("b", obj("b", 4)))
      yield* f.delete(tomb("b", obj("b", 5)))
      assert.deepStrictEqual(yield* drain(f), [["Deleted a 2"], ["Deleted tomb(b,5)"]])
    }))

  it.effect("coalescing: a delete of a key neither queued nor known is ignored but counts as populated", () =>
    Effect.gen(function*() {
      const f = deltaFifo({ knownObjects: known() })
      yield* f.delete(obj("ghost", 1))
      assert.strictEqual(yield* f.length, 0)
      assert.isTrue(yield* f.hasSynced)
    }))

  it.effect("coalescing: popBatch hands over several keys, each key's deltas contiguous and oldest first", () =>
    Effect.gen(function*() {
      const f = deltaFifo()
      yield* f.add(obj("a", 1))
      yield* f.add(obj("b", 2))
      yield* f.update(obj("a", 3))
      yield* f.add(obj("c", 4))
      const batch = yield* f.popBatch(2, (p) => Effect.succeed(p.deltas.map(show)))
      assert.deepStrictEqual(batch, ["Added a 1", "Updated a 3", "Added b 2"])
      assert.deepStrictEqual(yield* f.listKeys, ["c"])
    }))

  it.effect("inOrder atomic: Bookmark, ReplacedAll and SyncAll deltas; the other modes ignore bookmarks", () =>
    Effect.gen(function*() {
      const f = atomicFifo()
      assert.strictEqual(f.mode, "inOrder")
      assert.isTrue(f.atomic)
      yield* f.bookmark("7")
      yield* f.add(obj("a", 8))
      yield* f.replace([obj("a", 9), obj("b", 10)], "11")
      yield* f.resync
      yield* f.bookmark("12")
      assert.deepStrictEqual(yield* f.listKeys, ["a"])
      assert.deepStrictEqual((yield* drain(f)).flat(), [
        "Bookmark 7",
        "Added a 8",
        "ReplacedAll 11 [a:9,b:10]",
        "SyncAll",
        "Bookmark 12"
      ])
      for (const make of [deltaFifo, realFifo]) {
        const other = make()
        yield* other.bookmark("1")
        assert.strictEqual(yield* other.length, 0)
      }
    }))

  it.effect("inOrder is the default mode and atomic its default", () =>
    Effect.gen(function*() {
      const f = yield* DeltaFifo.make<TestObj>()
      assert.strictEqual(f.mode, "inOrder")
      assert.isTrue(f.atomic)
      assert.strictEqual(deltaFifo().mode, "coalescing")
      assert.isFalse(deltaFifo().atomic)
    }))

  it.effect("DeltaFifo.layer closes the queue when the layer is released", () =>
    Effect.gen(function*() {
      const f = yield* Effect.scoped(
        Effect.map(Layer.build(DeltaFifo.layer({ mode: "coalescing" })), Context.get(DeltaFifo.DeltaFifo))
      )
      assert.strictEqual(f.mode, "coalescing")
      assert.isTrue(yield* f.isClosed)
    }))
})

// -------------------------------------------------------------------------------------------------
// property tests: a consumer that applies every delta as an informer would ends where the server is
// -------------------------------------------------------------------------------------------------

type Op =
  | { readonly _tag: "add" | "update" | "delete" | "deleteTombstone"; readonly key: number }
  | { readonly _tag: "replace"; readonly keys: ReadonlyArray<number>; readonly reuseHeld: boolean }
  | { readonly _tag: "resync" | "bookmark" }
  | { readonly _tag: "pop"; readonly max: number }

const keyArb = FastCheck.integer({ min: 0, max: 5 })
const opArb: FastCheck.Arbitrary<Op> = FastCheck.oneof(
  { arbitrary: FastCheck.record({ _tag: FastCheck.constant("add" as const), key: keyArb }), weight: 4 },
  { arbitrary: FastCheck.record({ _tag: FastCheck.constant("update" as const), key: keyArb }), weight: 4 },
  { arbitrary: FastCheck.record({ _tag: FastCheck.constant("delete" as const), key: keyArb }), weight: 3 },
  { arbitrary: FastCheck.record({ _tag: FastCheck.constant("deleteTombstone" as const), key: keyArb }), weight: 1 },
  {
    arbitrary: FastCheck.record({
      _tag: FastCheck.constant("replace" as const),
      keys: FastCheck.uniqueArray(keyArb, { maxLength: 6 }),
      reuseHeld: FastCheck.boolean()
    }),
    weight: 2
  },
  { arbitrary: FastCheck.record({ _tag: FastCheck.constantFrom("resync" as const, "bookmark" as const) }), weight: 1 },
  {
    arbitrary: FastCheck.record({
      _tag: FastCheck.constant("pop" as const),
      max: FastCheck.integer({ min: 1, max: 4 })
    }),
    weight: 5
  }
)

const runScenario = (options: Options, ops: ReadonlyArray<Op>): void => {
  let counter = 0
  const next = () => ++counter
  // the consumer as the informer's controller is: the store with its internal writer
  const consumer = IndexerStore.make<TestObj>({ keyFunction: Indexer.deletionHandlingMetaNamespaceKey })
  const transform = (o: TestObj): TestObj => ({ ...o, xfrm: (o.xfrm ?? 0) + 1 })
  const fifo = DeltaFifo.unsafeMake<TestObj>({ ...options, knownObjects: consumer, transform })
  const coalescing = fifo.mode === "coalescing"
  // The reference: the last replace's list, then every later add/update/delete.
  let model = new Map<string, string>()
  let wasSynced = false

  const transformedOnce = (o: TestObj | undefined, what: string) => {
    if (o !== undefined) assert.strictEqual(o.xfrm, 1, `${what} transformed ${o.xfrm ?? 0} times`)
  }
  const apply = (delta: Delta): void => {
    switch (delta._tag) {
      case "Added":
      case "Updated":
      case "Replaced":
      case "Sync": {
        transformedOnce(delta.object, delta._tag)
        consumer.unsafeAdd(delta.key, delta.object)
        return
      }
      case "Deleted": {
        transformedOnce(objectOf(delta), "Deleted")
        consumer.unsafeDelete(delta.key, delta.object)
        return
      }
      case "ReplacedAll": {
        for (const o of delta.objects) transformedOnce(o, "ReplacedAll")
        assert.isUndefined(consumer.unsafeReplace(delta.objects, delta.resourceVersion))
        return
      }
      case "SyncAll":
      case "Bookmark":
        return
    }
  }
  const popOnce = (max: number) => {
    const synced = Effect.runSync(fifo.hasSynced)
    Effect.runSync(fifo.popBatch(max, (popped) =>
      Effect.sync(() => {
        assert.strictEqual(popped.isInInitialList, !synced)
        assert.isAbove(popped.deltas.length, 0)
        assert.isAtMost(popped.deltas.length, coalescing ? Infinity : max)
        popped.deltas.forEach(apply)
      })))
  }
  const run = (effect: Effect.Effect<void, DeltaFifo.EnqueueError>) => {
    const exit = Effect.runSyncExit(effect)
    assert.isTrue(Exit.isSuccess(exit), String(exit))
  }

  for (const op of ops) {
    switch (op._tag) {
      case "add":
      case "update": {
        const o = obj(`k${op.key}`, next())
        run(op._tag === "add" ? fifo.add(o) : fifo.update(o))
        model.set(o.metadata.name, o.metadata.resourceVersion)
        break
      }
      case "delete": {
        run(fifo.delete(obj(`k${op.key}`, next())))
        model.delete(`k${op.key}`)
        break
      }
      case "deleteTombstone": {
        const key = `k${op.key}`
        run(fifo.delete(tomb(key, consumer.unsafeGetByKey(key))))
        model.delete(key)
        break
      }
      case "replace": {
        const list = op.keys.map((k) => {
          const held = op.reuseHeld ? consumer.unsafeGetByKey(`k${k}`) : undefined
          return held ?? obj(`k${k}`, next())
        })
        run(fifo.replace(list, String(next())))
        model = new Map(list.map((o) => [o.metadata.name, o.metadata.resourceVersion]))
        break
      }
      case "resync": {
        run(fifo.resync)
        break
      }
      case "bookmark": {
        run(fifo.bookmark(String(next())))
        break
      }
      case "pop": {
        if (fifo.unsafeLength() > 0) popOnce(op.max)
        break
      }
    }
    if (coalescing) {
      const keys = Effect.runSync(fifo.listKeys)
      assert.strictEqual(new Set(keys).size, keys.length, `duplicate queued key in ${keys.join(",")}`)
      assert.strictEqual(keys.length, fifo.unsafeLength())
    }
    const synced = Effect.runSync(fifo.hasSynced)
    assert.isTrue(synced || !wasSynced, "hasSynced went back to false")
    wasSynced = synced
  }
  while (fifo.unsafeLength() > 0) popOnce(3)

  const state = new Map(Array.from(consumer.unsafeValues(), (o) => [o.metadata.name, o.metadata.resourceVersion]))
  assert.deepStrictEqual(state, model)
}

describe("property: draining the queue into an informer-like consumer reproduces the server state", () => {
  const scenarios: ReadonlyArray<readonly [string, Options]> = [
    ["coalescing", { mode: "coalescing" }],
    ["coalescing (Sync from replace)", { mode: "coalescing", emitReplaced: false }],
    ["inOrder atomic", { mode: "inOrder", atomic: true }],
    ["inOrder non-atomic", { mode: "inOrder", atomic: false }]
  ]
  for (const [name, options] of scenarios) {
    it.effect(`${name}: random add/update/delete/replace/resync/pop on 6 keys`, () =>
      Effect.sync(() =>
        FastCheck.assert(
          FastCheck.property(FastCheck.array(opArb, { maxLength: 60 }), (ops) => runScenario(options, ops)),
          { numRuns: 250 }
        )
      ))
  }
})

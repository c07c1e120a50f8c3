/**
 * The client-go tests both FIFO modes share (delta_fifo_test.go and the_real_fifo_test.go), run through one
 * parameterised suite: each mode's client-go name and expectations in a table.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import type * as DeltaFifo from "../../../src/DeltaFifo.js"
import type { Fifo, Options } from "./fixtures.js"
import {
  atomicFifo,
  deltaFifo,
  drain,
  known,
  knownFooBarBaz,
  obj,
  popInitial,
  popShouldUnblockWhenClosed,
  popValue,
  producersKeepTheirOwnOrder,
  realFifo
} from "./fixtures.js"

type FifoMode = NonNullable<Options["mode"]>

type ReplaceMakesDeletionsCase = "a" | "b" | "c" | "d" | "e"

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
  readonly enqueueingNoLister: { readonly title: string; readonly pops: ReadonlyArray<number> }
  readonly enqueueingWithLister: string
  readonly deleteExistingNonPropagated: { readonly title: string; readonly expected: unknown }
  /** TestDeltaFIFO_ReplaceMakesDeletions / TestRealFIFO_ReplaceMakesDeletions, cases (a) to (e). */
  readonly replaceMakesDeletions: Record<
    ReplaceMakesDeletionsCase,
    { readonly title: string; readonly expected: unknown }
  >
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
    enqueueingNoLister: { title: "Pops 10, 15, 18 (delete of a never-seen key ignored)", pops: [10, 15, 18] },
    enqueueingWithLister: "known={foo,bar,baz} -> Pops 10, 15, 20 (delete of a known key accepted)",
    deleteExistingNonPropagated: {
      title: "known={}; Add foo5; Delete foo6 -> 2 deltas, last Deleted",
      expected: [["Added foo 5", "Deleted foo 6"]]
    },
    replaceMakesDeletions: {
      a: {
        title: "pre-existing Delete baz10",
        expected: [["Deleted baz 10"], ["Sync foo 5"], ["Deleted tomb(bar,6)"]]
      },
      b: {
        title: "pre-existing Add baz10",
        expected: [["Added baz 10", "Deleted tomb(baz,10)"], ["Sync foo 5"], ["Deleted tomb(bar,6)"]]
      },
      c: {
        title: "Delete bar6, Add bar100 -> tombstone holds bar100",
        expected: [["Deleted bar 6", "Added bar 100", "Deleted tomb(bar,100)"], ["Sync foo 5"], ["Deleted tomb(baz,7)"]]
      },
      d: {
        title: "Replace([bar100,foo5]) then Replace([foo5])",
        expected: [["Sync bar 100", "Deleted tomb(bar,100)"], ["Sync foo 5", "Sync foo 5"], ["Deleted tomb(baz,7)"]]
      },
      e: {
        title: "no known store, Add baz10",
        expected: [["Added baz 10", "Deleted tomb(baz,10)"], ["Sync foo 5"]]
      }
    },
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
    enqueueingNoLister: { title: "Pops 10, 15, 17, 18, 20 (every call enqueued)", pops: [10, 15, 17, 18, 20] },
    enqueueingWithLister: "Pops 10, 15, 20",
    deleteExistingNonPropagated: {
      title: "Add foo5; Delete foo6 -> 2 deltas, last Deleted",
      expected: ["Added foo 5", "Deleted foo 6"]
    },
    replaceMakesDeletions: {
      a: {
        title: "Delete baz10 -> deletions precede replacements",
        expected: [["Deleted baz 10"], ["Deleted tomb(bar,6)"], ["Replaced foo 5"]]
      },
      b: {
        title: "Add baz10",
        expected: [["Added baz 10"], ["Deleted tomb(baz,10)"], ["Deleted tomb(bar,6)"], ["Replaced foo 5"]]
      },
      c: {
        title: "Delete bar6; Add bar100 -> tombstone holds bar100",
        expected: [["Deleted bar 6"], ["Added bar 100"], ["Deleted tomb(bar,100)"], ["Deleted tomb(baz,7)"], [
          "Replaced foo 5"
        ]]
      },
      d: {
        title: "Replace([bar100,foo5]) then Replace([foo5])",
        expected: [["Deleted tomb(baz,7)"], ["Replaced bar 100"], ["Replaced foo 5"], ["Deleted tomb(bar,100)"], [
          "Replaced foo 5"
        ]]
      },
      e: {
        title: "empty known, Add baz10",
        expected: [["Added baz 10"], ["Deleted tomb(baz,10)"], ["Replaced foo 5"]]
      }
    },
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

  it.effect(`${m.prefix}_enqueueingNoLister: ${m.enqueueingNoLister.title}`, () =>
    Effect.gen(function*() {
      const f = m.make()
      yield* f.add(obj("foo", 10))
      yield* f.update(obj("bar", 15))
      yield* f.add(obj("qux", 17))
      yield* f.delete(obj("qux", 18))
      yield* f.delete(obj("baz", 20))
      for (const expected of m.enqueueingNoLister.pops) assert.strictEqual(yield* popValue(f), expected)
      assert.strictEqual(yield* f.length, 0)
    }))

  it.effect(`${m.prefix}_enqueueingWithLister: ${m.enqueueingWithLister}`, () =>
    Effect.gen(function*() {
      const f = m.make({ knownObjects: known(obj("foo", 5), obj("bar", 6), obj("baz", 7)) })
      yield* f.add(obj("foo", 10))
      yield* f.update(obj("bar", 15))
      yield* f.delete(obj("baz", 20))
      for (const expected of [10, 15, 20]) assert.strictEqual(yield* popValue(f), expected)
      assert.strictEqual(yield* f.length, 0)
    }))

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

  it.effect(`${m.prefix}_DeleteExistingNonPropagated: ${m.deleteExistingNonPropagated.title}`, () =>
    Effect.gen(function*() {
      const f = m.make({ knownObjects: known() })
      yield* f.add(obj("foo", 5))
      yield* f.delete(obj("foo", 6))
      assert.deepStrictEqual(yield* m.drained(f), m.deleteExistingNonPropagated.expected)
    }))

  /** Each case's queue and what it does before `Replace([foo5])`: (a)-(d) know {foo5, bar6, baz7}, (e) its mode's default. */
  const replaceMakesDeletions: Record<ReplaceMakesDeletionsCase, {
    readonly fifo: () => Fifo
    readonly before: (f: Fifo) => Effect.Effect<void, DeltaFifo.EnqueueError>
  }> = {
    a: { fifo: () => m.make({ knownObjects: knownFooBarBaz() }), before: (f) => f.delete(obj("baz", 10)) },
    b: { fifo: () => m.make({ knownObjects: knownFooBarBaz() }), before: (f) => f.add(obj("baz", 10)) },
    c: {
      fifo: () => m.make({ knownObjects: knownFooBarBaz() }),
      before: (f) => Effect.andThen(f.delete(obj("bar", 6)), f.add(obj("bar", 100)))
    },
    d: {
      fifo: () => m.make({ knownObjects: knownFooBarBaz() }),
      before: (f) => f.replace([obj("bar", 100), obj("foo", 5)], "0")
    },
    e: { fifo: () => m.make(), before: (f) => f.add(obj("baz", 10)) }
  }
  for (const c of ["a", "b", "c", "d", "e"] as const) {
    it.effect(`${m.prefix}_ReplaceMakesDeletions (${c}): ${m.replaceMakesDeletions[c].title}`, () =>
      Effect.gen(function*() {
        const f = replaceMakesDeletions[c].fifo()
        yield* replaceMakesDeletions[c].before(f)
        yield* f.replace([obj("foo", 5)], "0")
        assert.deepStrictEqual(yield* drain(f), m.replaceMakesDeletions[c].expected)
      }))
  }

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

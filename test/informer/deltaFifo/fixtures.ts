/**
 * The DeltaFifo suite's fixtures: test objects, knownObjects stores, the FIFOs of client-go's tests in
 * each mode (DeltaFIFO: coalescing; RealFIFO: inOrder, non-atomic and atomic), deltas as short strings,
 * pops and drains, and the scenarios several tests share.
 */
import { assert } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as DeltaFifo from "../../../src/DeltaFifo.js"
import * as Indexer from "../../../src/Indexer.js"
import type { KubeObject } from "../../../src/KubeObject.js"
import { DeletedFinalStateUnknown } from "../../../src/KubeObject.js"

// -------------------------------------------------------------------------------------------------
// fixtures
// -------------------------------------------------------------------------------------------------

export interface TestObj extends KubeObject {
  readonly metadata: { readonly name: string; readonly resourceVersion: string }
  readonly value: number
  /** How many times the transform ran on this object. */
  readonly xfrm?: number | undefined
}

export type Fifo = DeltaFifo.DeltaFifo.Service<TestObj>
export type Options = DeltaFifo.DeltaFifo.Options<TestObj>
export type Delta = DeltaFifo.Delta<TestObj>

export const obj = (name: string, val: number): TestObj => ({
  metadata: { name, resourceVersion: String(val) },
  value: val
})

export const tomb = (key: string, o: TestObj | undefined): DeletedFinalStateUnknown<TestObj> =>
  new DeletedFinalStateUnknown({ key, obj: o })

/** knownObjects: an Indexer pre-filled with the objects, keyed by name (they have no namespace). */
export const known = (...objs: ReadonlyArray<TestObj>): Indexer.Indexer.Service<TestObj> => {
  const store = Indexer.unsafeMake<TestObj>()
  for (const o of objs) Effect.runSync(store.add(o))
  return store
}

/** knownObjects {foo5, bar6, baz7}, as client-go's ReplaceMakesDeletions tests have it. */
export const knownFooBarBaz = () => known(obj("foo", 5), obj("bar", 6), obj("baz", 7))

/** client-go's DeltaFIFO: coalescing, `Sync` deltas from Replace unless `emitReplaced: true` is given. */
export const deltaFifo = (options: Options = {}): Fifo =>
  DeltaFifo.unsafeMake<TestObj>({ mode: "coalescing", emitReplaced: false, ...options })

/** client-go's RealFIFO (non-atomic, with a knownObjects store, empty unless given). */
export const realFifo = (options: Options = {}): Fifo =>
  DeltaFifo.unsafeMake<TestObj>({ mode: "inOrder", atomic: false, knownObjects: known(), ...options })

/** client-go's RealFIFO with AtomicEvents (and bookmarks). */
export const atomicFifo = (options: Options = {}): Fifo =>
  DeltaFifo.unsafeMake<TestObj>({ mode: "inOrder", ...options })

export const modes: ReadonlyArray<readonly [string, (options?: Options) => Fifo]> = [
  ["coalescing", deltaFifo],
  ["inOrder non-atomic", realFifo],
  ["inOrder atomic", atomicFifo]
]

export const showObj = (o: TestObj | undefined): string => (o === undefined ? "-" : String(o.value))

/** A delta as a short string (`Added foo 10`, `Deleted tomb(bar,6)`, `ReplacedAll 20 [foo:15]`), checking its key. */
export const show = (delta: Delta): string => {
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
export const objectOf = (delta: Delta): TestObj | undefined =>
  "object" in delta ? (delta.object instanceof DeletedFinalStateUnknown ? delta.object.obj : delta.object) : undefined

export const pop = (fifo: Fifo) => fifo.pop((popped) => Effect.succeed(popped.deltas.map(show)))

export const popInitial = (fifo: Fifo) =>
  fifo.pop((popped) => Effect.succeed({ deltas: popped.deltas.map(show), initial: popped.isInInitialList }))

/** client-go's `testPop`: the value of the newest object of one pop. */
export const popValue = (fifo: Fifo) =>
  fifo.pop((popped) => Effect.succeed(objectOf(popped.deltas[popped.deltas.length - 1])?.value))

/** Pops until the queue is empty. */
export const drain = (fifo: Fifo) =>
  Effect.gen(function*() {
    const out: Array<ReadonlyArray<string>> = []
    while ((yield* fifo.length) > 0) out.push(yield* pop(fifo))
    return out
  })

export const drainBatches = (fifo: Fifo, max: number) =>
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
export const countingTransform = () => {
  const calls: Array<string> = []
  const transform = (o: TestObj): TestObj => {
    calls.push(`${o.metadata.name}:${o.value}`)
    return { ...o, xfrm: (o.xfrm ?? 0) + 1 }
  }
  return { calls, transform }
}

/** Two producer fibers each add 500 distinct keys with increasing values; each producer's values pop in order. */
export const producersKeepTheirOwnOrder = (fifo: Fifo) =>
  Effect.gen(function*() {
    const amount = 500
    const producer = (prefix: string) =>
      Effect.forEach(
        Array.from({ length: amount }, (_, i) => i),
        (i) => Effect.andThen(fifo.add(obj(`${prefix}${i}`, i + 1)), Effect.yieldNow),
        { discard: true }
      )
    const a = yield* Effect.forkChild(producer("a"))
    const b = yield* Effect.forkChild(producer("b"))
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
export const popShouldUnblockWhenClosed = (fifo: Fifo) =>
  Effect.gen(function*() {
    const fibers = yield* Effect.forEach(Array.from({ length: 10 }), () => Effect.forkChild(pop(fifo)))
    yield* Effect.yieldNow
    yield* Effect.yieldNow
    for (const fiber of fibers) assert.isUndefined(fiber.pollUnsafe(), "pop returned before close")
    yield* fifo.close
    for (const fiber of fibers) {
      const error = yield* Effect.flip(Fiber.join(fiber))
      assert.strictEqual(error._tag, "FifoClosedError")
    }
  })

/**
 * DeltaFifo: behaviour beyond client-go's tests, in every mode.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Scheduler from "effect/Scheduler"
import * as DeltaFifo from "../../../src/DeltaFifo.js"
import type { Delta, TestObj } from "./fixtures.js"
import {
  atomicFifo,
  countingTransform,
  deltaFifo,
  drain,
  drainBatches,
  known,
  modes,
  obj,
  objectOf,
  pop,
  popInitial,
  popValue,
  realFifo,
  show,
  tomb
} from "./fixtures.js"

describe("DeltaFifo", () => {
  const nameless = { metadata: { resourceVersion: "1" }, value: 1 } as unknown as TestObj
  const noMetadata = { value: 1 } as unknown as TestObj

  describe.each(modes)("%s", (mode, make) => {
    it.effect(`an object without metadata.name is rejected with KeyError at enqueue, queue unchanged`, () =>
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

    it.effect(`a throwing transform yields TransformError and queues nothing`, () =>
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

    it.effect(`pop after close drains the remaining items, then fails with FifoClosedError`, () =>
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

    it.effect(`enqueue after close fails with FifoClosedError`, () =>
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

    it.effect(`pop blocks until an item arrives`, () =>
      Effect.gen(function*() {
        const f = make()
        const fiber = yield* Effect.forkChild(pop(f))
        yield* Effect.yieldNow
        yield* Effect.yieldNow
        assert.isUndefined(fiber.pollUnsafe())
        yield* f.add(obj("a", 1))
        assert.deepStrictEqual(yield* Fiber.join(fiber), ["Added a 1"])
      }))

    it.effect(`a failing process function fails the pop; the item is not requeued`, () =>
      Effect.gen(function*() {
        const f = make()
        yield* f.replace([obj("a", 1)], "1")
        yield* f.add(obj("b", 2))
        const error = yield* Effect.flip(f.pop(() => Effect.fail("handler failed" as const)))
        assert.strictEqual(error, "handler failed")
        assert.isTrue(yield* f.hasSynced)
        assert.deepStrictEqual((yield* drain(f)).flat(), ["Added b 2"])
      }))

    it.effect(`isInInitialList is true exactly for the first replace's items`, () =>
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

    it.effect(`an add before the first replace means synced at once (no initial list)`, () =>
      Effect.gen(function*() {
        const f = make()
        yield* f.add(obj("a", 1))
        yield* f.replace([obj("b", 2)], "2")
        assert.isTrue(yield* f.hasSynced)
        while ((yield* f.length) > 0) assert.isFalse((yield* popInitial(f)).initial)
      }))

    it.effect(`popBatch never mixes initial-list items with later ones`, () =>
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

    it.effect(`a replace that passes the very object held in knownObjects does not transform it again`, () =>
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

    it.effect(`the transform runs once per enqueued object, never on tombstones or Sync`, () =>
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
  })

  // A scheduler may yield at any step. With one that yields often (seeded, so the run is reproducible),
  // several poppers that loop without yielding race between "an item is there" and "take it".
  it.effect("several poppers under an eagerly yielding scheduler: every item delivered exactly once, no defect", () =>
    Effect.gen(function*() {
      let seed = 42
      const random = () => {
        seed = (seed * 1103515245 + 12345) & 0x7fffffff
        return seed / 0x7fffffff
      }
      const tasks: Array<() => void> = []
      let flushing = false
      // One dispatcher for every fiber, so that tasks of all fibers are shuffled together.
      const dispatcher: Scheduler.SchedulerDispatcher = {
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
        flush: () => {
          while (tasks.length > 0) for (const t of tasks.splice(0)) t()
        }
      }
      const scheduler: Scheduler.Scheduler = {
        executionMode: "async",
        makeDispatcher: () => dispatcher,
        shouldYield: (fiber) => fiber.currentOpCount > 8 && random() < 0.15
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
            const poppers = yield* Effect.forEach(
              Array.from({ length: 2 + (trial % 3) }),
              () => Effect.forkChild(popLoop)
            )
            for (let i = 0; i < 60; i++) {
              yield* f.add(obj(`k${i}`, i))
              if (i % (1 + (trial % 4)) === 0) yield* Effect.yieldNow
            }
            while (f.unsafeLength() > 0) yield* Effect.yieldNow
            yield* f.close
            return yield* Effect.forEach(poppers, Fiber.await)
          }).pipe(Effect.provideService(Scheduler.Scheduler, scheduler))
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

  describe.each(modes)("%s", (_mode, make) => {
    it.effect(`a long queue keeps its order while items are pushed and popped (internal deque compaction)`, () =>
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
  })

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

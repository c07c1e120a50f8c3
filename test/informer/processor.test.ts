/**
 * The processor as a unit, with real listeners (their buffers, no fibers) and a sync tracker: who gets a
 * notification, who is due for resync, the check period handlers added before start may lower, late join
 * (the cache replayed as initial adds, counted by the registration's tracker), and removal.
 */
import { assert, describe, it } from "@effect/vitest"
import { Clock, Effect, Exit, Fiber } from "effect"
import { Listener, makeBuffer } from "../../src/internal/informer/listener.js"
import { Processor } from "../../src/internal/informer/processor.js"
import { SyncTracker } from "../../src/internal/informer/syncTracker.js"
import type { KubeObject } from "../../src/KubeObject.js"
import type { Notification } from "../../src/SharedInformer.js"
import { InformerStoppedError } from "../../src/SharedInformer.js"
import { advance, pod as fixturePod } from "../fixtures/index.js"

const pod = (name: string, rv: string): KubeObject => fixturePod(name, { rv })

const setup = (cached: ReadonlyArray<KubeObject>, checkPeriod: number) =>
  Effect.gen(function*() {
    const clock = yield* Clock.clockWith(Effect.succeed)
    const tracker = new SyncTracker<InformerStoppedError>((handler) =>
      new InformerStoppedError({ informer: "pods", operation: "synced", handler })
    )
    const processor = new Processor<KubeObject>({ unsafeValues: () => cached }, tracker, clock, checkPeriod)
    const listener = (name: string) =>
      Effect.gen(function*() {
        const sync = tracker.registration(name)
        const buffer = yield* makeBuffer<KubeObject>("unbounded", sync)
        return new Listener<KubeObject>(processor.id(), name, "pods", sync, buffer, 1024)
      })
    return { tracker, processor, listener }
  })

const drain = (listener: Listener<KubeObject>): Effect.Effect<ReadonlyArray<Notification<KubeObject>>> =>
  listener.buffer.size() === 0 ? Effect.succeed([]) : Effect.orDie(listener.buffer.take(1000))

describe("processor", () => {
  it.effect("distribute: every listener gets a notification, a resync only those due", () =>
    Effect.gen(function*() {
      const { listener, processor } = yield* setup([], 1000)
      const fast = yield* listener("fast")
      const slow = yield* listener("slow")
      processor.join(fast, 1000, false)
      processor.join(slow, 5000, false)
      const a = pod("a", "1")
      processor.distribute({ _tag: "Add", object: a, isInInitialList: false }, false)
      assert.strictEqual((yield* drain(fast)).length, 1)
      assert.strictEqual((yield* drain(slow)).length, 1)

      yield* advance("1 second")
      assert.isTrue(yield* processor.shouldResync)
      processor.distribute({ _tag: "Update", oldObject: a, newObject: a }, true)
      assert.strictEqual((yield* drain(fast)).length, 1)
      assert.strictEqual((yield* drain(slow)).length, 0, "not due yet")

      yield* advance("4 seconds")
      assert.isTrue(yield* processor.shouldResync)
      processor.distribute({ _tag: "Update", oldObject: a, newObject: a }, true)
      assert.strictEqual((yield* drain(fast)).length, 1)
      assert.strictEqual((yield* drain(slow)).length, 1)
      assert.strictEqual(fast.nextResync, (yield* Clock.currentTimeMillis) + 1000)
    }))

  it.effect("distributeAll: a batch reaches every listener as one shared array, in order with resyncs; initial adds are counted", () =>
    Effect.gen(function*() {
      const { listener, processor } = yield* setup([], 1000)
      const fast = yield* listener("fast")
      const slow = yield* listener("slow")
      processor.join(fast, 1000, false)
      processor.join(slow, 5000, false)
      const a = pod("a", "1")
      const b = pod("b", "1")
      const initial: Array<Notification<KubeObject>> = [
        { _tag: "Add", object: a, isInInitialList: true },
        { _tag: "Add", object: b, isInInitialList: true }
      ]
      processor.distributeAll(initial)
      assert.strictEqual(fast.offered, 2)
      assert.isFalse(fast.sync.hasSynced())
      const taken = yield* drain(fast)
      assert.strictEqual(taken, initial, "the batch itself, not a copy")
      assert.strictEqual(yield* drain(slow), initial)
      for (let i = 0; i < 2; i++) {
        fast.sync.finished()
        slow.sync.finished()
      }

      // a batch, a resync to the listeners due, another batch: each listener sees them in that order
      yield* advance("1 second")
      assert.isTrue(yield* processor.shouldResync)
      const a2 = pod("a", "2")
      processor.distributeAll([{ _tag: "Update", oldObject: a, newObject: a2 }])
      processor.distribute({ _tag: "Update", oldObject: b, newObject: b }, true)
      processor.distributeAll([{ _tag: "Delete", object: a2 }])
      const seen = (ns: ReadonlyArray<Notification<KubeObject>>) =>
        ns.map((n) =>
          n._tag === "Update" ? `U ${n.newObject.metadata?.name}` : `${n._tag[0]} ${"object" in n ? "x" : ""}`
        )
      const all = (l: Listener<KubeObject>) =>
        Effect.gen(function*() {
          const out: Array<Notification<KubeObject>> = []
          while (l.buffer.size() > 0) out.push(...(yield* drain(l)))
          return out
        })
      assert.deepStrictEqual(seen(yield* all(fast)), ["U a", "U b", "D x"])
      assert.deepStrictEqual(seen(yield* all(slow)), ["U a", "D x"])
      assert.strictEqual(fast.offered, 5)
      assert.strictEqual(slow.offered, 4)
    }))

  it.effect("before start a shorter period lowers the check period for all; after start it is raised", () =>
    Effect.gen(function*() {
      const { listener, processor } = yield* setup([], 10_000)
      const first = yield* listener("first")
      assert.strictEqual(processor.join(first, 0, false), "joined")
      const second = yield* listener("second")
      assert.strictEqual(processor.join(second, 3000, false), "joined")
      assert.strictEqual(processor.checkPeriod(), 3000)
      assert.strictEqual(second.resyncPeriod, 3000)
      assert.strictEqual(first.resyncPeriod, 0, "a handler without resync keeps none")
      const late = yield* listener("late")
      assert.strictEqual(processor.join(late, 1000, true), "raised")
      assert.strictEqual(late.resyncPeriod, 3000)
      assert.strictEqual(processor.checkPeriod(), 3000)
    }))

  it.effect("late join: the cache as initial adds, counted until they finish; synced once the informer is", () =>
    Effect.gen(function*() {
      const { listener, processor, tracker } = yield* setup([pod("a", "1"), pod("b", "2")], 0)
      tracker.queue.replaced(0)
      const late = yield* listener("late")
      processor.join(late, 0, true)
      const replayed = yield* drain(late)
      assert.deepStrictEqual(replayed.map((n) => n._tag === "Add" && n.isInInitialList), [true, true])
      assert.isFalse(late.sync.hasSynced())
      late.sync.finished()
      late.sync.finished()
      assert.isTrue(late.sync.hasSynced())
    }))

  it.effect("remove: no more notifications, the backlog dropped, a pending sync wait interrupted; idempotent", () =>
    Effect.gen(function*() {
      const { listener, processor } = yield* setup([pod("a", "1")], 0)
      const gone = yield* listener("gone")
      processor.join(gone, 0, true)
      const registration = processor.registration(gone)
      assert.strictEqual(processor.listenerOf(registration), gone)
      assert.strictEqual(yield* registration.backlog, 1)
      const waiting = yield* Effect.forkChild(registration.synced)
      yield* registration.remove
      yield* registration.remove
      processor.distribute({ _tag: "Add", object: pod("b", "2"), isInInitialList: false }, false)
      assert.strictEqual(yield* registration.backlog, 0)
      assert.strictEqual(gone.buffer.size(), 0)
      const exit = yield* Fiber.await(waiting)
      assert.isTrue(Exit.hasInterrupts(exit))
    }))
})

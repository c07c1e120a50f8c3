/**
 * The sync tracker as a unit: every HasSynced of one informer (the queue's, the informer's, each
 * registration's) and every wait on one, decided in one object. Driven by hand, as the DeltaFifo, the
 * controller, the listeners and the informer's stop drive it; then a property over random sequences of
 * those calls, and a DeltaFifo counting its initial population in it.
 */
import { assert, describe, it } from "@effect/vitest"
import type { Fiber } from "effect"
import { Arbitrary, Cause, Data, Effect, Exit, Option } from "effect"
import * as Fifo from "../../src/internal/informer/deltaFifo.js"
import { QueueTracker, SyncTracker } from "../../src/internal/informer/syncTracker.js"
import type { KubeObject } from "../../src/KubeObject.js"
import { boolean, integer, oneof } from "../fixtures/arbitrary.js"
import { pod as fixturePod } from "../fixtures/index.js"

class Stopped extends Data.TaggedError("Stopped")<{ readonly handler: string | undefined }> {}

const make = () => new SyncTracker<Stopped>((handler) => new Stopped({ handler }))

/**
 * The exit of a wait if it has ended (after letting every fiber run), `undefined` while it waits. A few
 * scheduler rounds: a resumed waiter yields once before it ends (`syncTracker.ts`, `awaitSignal`).
 */
const exitOf = <A, E>(fiber: Fiber.Fiber<A, E>): Effect.Effect<Exit.Exit<A, E> | undefined> =>
  Effect.andThen(
    Effect.andThen(Effect.andThen(Effect.yieldNow, Effect.yieldNow), Effect.yieldNow),
    Effect.sync(() => fiber.pollUnsafe())
  )

const failure = <A, E>(exit: Exit.Exit<A, E> | undefined): E => {
  assert.isDefined(exit)
  assert.isTrue(Exit.isFailure(exit!), "expected a failure")
  const error = Cause.findErrorOption((exit as Exit.Failure<A, E>).cause)
  assert.isTrue(Option.isSome(error), "expected a typed failure")
  return (error as Option.Some<E>).value
}

/** The exit of a wait that has ended already, or `undefined` (the wait is then interrupted). */
const decided = <A, E>(wait: Effect.Effect<A, E>): Exit.Exit<A, E> | undefined => {
  const exit = Effect.runSyncExit(wait)
  if (Exit.isFailure(exit)) {
    for (const reason of exit.cause.reasons) {
      if (Cause.isDieReason(reason) && Cause.isAsyncFiberError(reason.defect)) {
        reason.defect.fiber.interruptUnsafe()
        return undefined
      }
    }
  }
  return exit
}

const pod = (name: string): KubeObject => fixturePod(name, { rv: "1" })

describe("syncTracker: the queue", () => {
  it("a standalone queue tracker: an add before the first replace means nothing to wait for", () => {
    const queue = new QueueTracker()
    assert.isFalse(queue.hasSynced())
    queue.touched()
    assert.isTrue(queue.hasSynced())
    queue.replaced(3) // not the first population: nothing to count
    assert.isTrue(queue.hasSynced())
    assert.strictEqual(queue.initialPopulation, 0)
  })

  it("the first replace sets the initial population; pops count it down, never below zero", () => {
    const queue = new QueueTracker()
    queue.replaced(3)
    assert.isFalse(queue.hasSynced())
    queue.touched()
    queue.replaced(10) // a second replace does not reset the count
    queue.popped(2)
    assert.isFalse(queue.hasSynced())
    assert.strictEqual(queue.initialPopulation, 1)
    queue.popped(5)
    assert.isTrue(queue.hasSynced())
    assert.strictEqual(queue.initialPopulation, 0)
  })
})

describe("syncTracker: the informer", () => {
  it.effect("an empty first list syncs at the replace, with no batch", () =>
    Effect.gen(function*() {
      const tracker = make()
      const waiting = yield* Effect.forkChild(tracker.synced)
      assert.isUndefined(yield* exitOf(waiting))
      tracker.queue.replaced(0)
      assert.isTrue(tracker.hasSynced())
      assert.isTrue(Exit.isSuccess((yield* exitOf(waiting))!))
    }))

  it("a list syncs after the batch that popped its last item is done", () => {
    const tracker = make()
    tracker.queue.replaced(2)
    tracker.batchTaken()
    tracker.queue.popped(2) // coalescing: counted when taken
    tracker.queue.replaced(0) // a relist while the batch is applied decides nothing
    assert.isFalse(tracker.hasSynced())
    tracker.batchDone()
    assert.isTrue(tracker.hasSynced())
  })

  it("in-order counting (after processing): synced at the batch's end, not before", () => {
    const tracker = make()
    tracker.queue.replaced(1)
    tracker.batchTaken()
    assert.isFalse(tracker.hasSynced())
    tracker.queue.popped(1)
    tracker.batchDone()
    assert.isTrue(tracker.hasSynced())
  })

  it("an add before any list: synced after its batch, not when it is queued", () => {
    const tracker = make()
    tracker.queue.touched()
    assert.isTrue(tracker.queue.hasSynced())
    assert.isFalse(tracker.hasSynced())
    tracker.batchTaken()
    tracker.batchDone()
    assert.isTrue(tracker.hasSynced())
  })

  it.effect("stopped unsynced: pending and later waits fail with the stop error; nothing syncs after", () =>
    Effect.gen(function*() {
      const tracker = make()
      tracker.queue.replaced(1)
      const waiting = yield* Effect.forkChild(tracker.synced)
      tracker.stop()
      assert.deepStrictEqual(failure(yield* exitOf(waiting)), new Stopped({ handler: undefined }))
      assert.deepStrictEqual(failure(yield* Effect.exit(tracker.synced)), new Stopped({ handler: undefined }))
      tracker.batchTaken()
      tracker.queue.popped(1)
      tracker.batchDone()
      tracker.queue.replaced(0)
      assert.isFalse(tracker.hasSynced())
    }))

  it.effect("stopped after it synced: stays synced, waits keep succeeding", () =>
    Effect.gen(function*() {
      const tracker = make()
      tracker.queue.replaced(0)
      tracker.stop()
      tracker.stop()
      assert.isTrue(tracker.hasSynced())
      assert.isTrue(Exit.isSuccess(yield* Effect.exit(tracker.synced)))
    }))
})

describe("syncTracker: registrations", () => {
  it.effect("synced once the informer is and every initial add has finished (returned or dropped)", () =>
    Effect.gen(function*() {
      const tracker = make()
      const registration = tracker.registration("h")
      registration.started()
      registration.started()
      tracker.join(registration)
      const waiting = yield* Effect.forkChild(registration.synced)
      registration.finished()
      registration.finished()
      assert.isFalse(registration.hasSynced(), "the informer has not synced")
      tracker.queue.replaced(0)
      assert.isTrue(registration.hasSynced())
      assert.isTrue(Exit.isSuccess((yield* exitOf(waiting))!))
      // later initial adds (a late join's replay elsewhere) change nothing: once synced, synced
      registration.started()
      assert.isTrue(registration.hasSynced())
    }))

  it("waits for its initial adds after the informer synced", () => {
    const tracker = make()
    tracker.queue.replaced(0)
    const late = tracker.registration("late")
    late.started()
    tracker.join(late)
    assert.isFalse(late.hasSynced())
    late.finished()
    assert.isTrue(late.hasSynced())
    const empty = tracker.registration("empty")
    tracker.join(empty)
    assert.isTrue(empty.hasSynced(), "a late join with nothing to replay syncs at once")
  })

  it.effect("the stop fails every pending registration's waits with its handler; synced ones keep succeeding", () =>
    Effect.gen(function*() {
      const tracker = make()
      const done = tracker.registration("done")
      tracker.join(done)
      tracker.queue.replaced(0)
      const pending = tracker.registration("pending")
      pending.started()
      tracker.join(pending)
      const waiting = yield* Effect.forkChild(pending.synced)
      tracker.stop()
      assert.deepStrictEqual(failure(yield* exitOf(waiting)), new Stopped({ handler: "pending" }))
      assert.deepStrictEqual(failure(yield* Effect.exit(pending.synced)), new Stopped({ handler: "pending" }))
      pending.finished()
      assert.isFalse(pending.hasSynced(), "nothing syncs after the stop")
      assert.isTrue(done.hasSynced())
      assert.isTrue(Exit.isSuccess(yield* Effect.exit(done.synced)))
    }))

  it("a registration made as the informer stops (never joined) never syncs", () => {
    const tracker = make()
    tracker.queue.replaced(0)
    const registration = tracker.registration("too-late")
    tracker.stop()
    registration.started()
    registration.finished()
    assert.isFalse(registration.hasSynced())
  })

  it.effect("removed before it synced: waits are interrupted; removed after the stop: they keep failing", () =>
    Effect.gen(function*() {
      const tracker = make()
      const removed = tracker.registration("removed")
      tracker.join(removed)
      const waiting = yield* Effect.forkChild(removed.synced)
      tracker.leave(removed)
      const exit = yield* exitOf(waiting)
      assert.isTrue(exit !== undefined && Exit.hasInterrupts(exit))
      tracker.queue.replaced(0)
      assert.isFalse(removed.hasSynced())

      const other = make()
      const late = other.registration("late")
      late.started()
      other.join(late)
      other.stop()
      other.leave(late)
      assert.deepStrictEqual(failure(yield* Effect.exit(late.synced)), new Stopped({ handler: "late" }))
    }))
})

/** The calls the informer's parts make, in any order a run could make them. */
type Op =
  | { readonly op: "touched" }
  | { readonly op: "replaced"; readonly queued: number }
  | { readonly op: "take"; readonly count: number; readonly before: boolean }
  | { readonly op: "join"; readonly adds: number }
  | { readonly op: "finish"; readonly registration: number }
  | { readonly op: "leave"; readonly registration: number }
  | { readonly op: "stop" }

const ops: Arbitrary.Arbitrary<ReadonlyArray<Op>> = Arbitrary.array(
  oneof<Op>(
    Arbitrary.Constant<Op>({ op: "touched" }),
    Arbitrary.map(integer({ min: 0, max: 4 }), (queued): Op => ({ op: "replaced", queued })),
    Arbitrary.map(
      Arbitrary.all({ count: integer({ min: 1, max: 3 }), before: boolean() }),
      (r): Op => ({ op: "take", ...r })
    ),
    Arbitrary.map(integer({ min: 0, max: 3 }), (adds): Op => ({ op: "join", adds })),
    Arbitrary.map(integer({ min: 0, max: 4 }), (registration): Op => ({ op: "finish", registration })),
    Arbitrary.map(integer({ min: 0, max: 4 }), (registration): Op => ({ op: "leave", registration })),
    Arbitrary.Constant<Op>({ op: "stop" })
  ),
  { maxLength: 40 }
)

describe("syncTracker: property", () => {
  it.prop(
    "synced never reverts; a registration syncs only after the informer; nothing syncs after the stop; waits agree",
    [ops],
    ([sequence]) => {
      const tracker = make()
      const registrations: Array<{ tracker: ReturnType<typeof tracker.registration>; unfinished: number }> = []
      let stopped = false
      let informerWas = false
      const regWas = new Map<number, boolean>()
      for (const step of sequence) {
        switch (step.op) {
          case "touched":
            tracker.queue.touched()
            break
          case "replaced":
            tracker.queue.replaced(step.queued)
            break
          case "take":
            // as the FIFO and the controller do: count before (coalescing) or after (in-order) the batch
            tracker.batchTaken()
            if (step.before) tracker.queue.popped(step.count)
            assert.strictEqual(tracker.hasSynced(), informerWas, "a taken batch decides nothing")
            if (!step.before) tracker.queue.popped(step.count)
            tracker.batchDone()
            break
          case "join": {
            const registration = tracker.registration(`h${registrations.length}`)
            for (let i = 0; i < step.adds; i++) registration.started()
            if (!stopped) tracker.join(registration)
            registrations.push({ tracker: registration, unfinished: step.adds })
            break
          }
          case "finish": {
            const r = registrations[step.registration]
            if (r !== undefined && r.unfinished > 0) {
              r.unfinished--
              r.tracker.finished()
            }
            break
          }
          case "leave": {
            const r = registrations[step.registration]
            if (r !== undefined) tracker.leave(r.tracker)
            break
          }
          case "stop":
            tracker.stop()
            stopped = true
            break
        }
        // never reverts, and never turns after the stop
        if (informerWas) assert.isTrue(tracker.hasSynced())
        if (stopped && !informerWas) assert.isFalse(tracker.hasSynced())
        informerWas = tracker.hasSynced()
        registrations.forEach((r, i) => {
          const now = r.tracker.hasSynced()
          const was = regWas.get(i) ?? false
          if (was) assert.isTrue(now)
          if (stopped && !was) assert.isFalse(now)
          if (now) {
            assert.isTrue(tracker.hasSynced(), "a registration syncs only after the informer")
            assert.strictEqual(r.unfinished, 0, "a registration syncs only once its initial adds finished")
          }
          regWas.set(i, now)
        })
      }
      // every wait agrees with hasSynced: success iff synced; decided iff synced, stopped or removed
      const informerExit = decided(tracker.synced)
      if (tracker.hasSynced()) assert.isTrue(informerExit !== undefined && Exit.isSuccess(informerExit))
      else if (stopped) assert.isTrue(informerExit !== undefined && Exit.isFailure(informerExit))
      else assert.isUndefined(informerExit, "a pending wait still waits")
      for (const r of registrations) {
        const exit = decided(r.tracker.synced)
        if (r.tracker.hasSynced()) assert.isTrue(exit !== undefined && Exit.isSuccess(exit))
        else if (r.tracker.state === "failed") assert.isTrue(exit !== undefined && Exit.isFailure(exit))
        else assert.isUndefined(exit, "a pending wait still waits")
      }
    },
    // size: arrays up to their maxLength, as fast-check generated them when maxLength was given
    { arbitrary: { runs: 300, size: 40 } }
  )
})

describe("syncTracker: a DeltaFifo counting in it", () => {
  it.effect("coalescing: a replace while the last initial batch is applied does not sync the informer early", () =>
    Effect.gen(function*() {
      const tracker = make()
      const fifo = Fifo.make<KubeObject>({ mode: "coalescing" }, tracker.queue)
      yield* fifo.replace([pod("a"), pod("b")], "1")
      assert.isFalse(tracker.hasSynced())
      const seen: Array<boolean> = []
      yield* fifo.popBatch(10, (popped) => {
        tracker.batchTaken()
        return Effect.gen(function*() {
          assert.isTrue(popped.isInInitialList)
          assert.isTrue(yield* fifo.hasSynced, "the queue counts before processing")
          yield* fifo.replace([pod("a"), pod("b")], "2")
          seen.push(tracker.hasSynced())
        })
      })
      tracker.batchDone()
      assert.deepStrictEqual(seen, [false])
      assert.isTrue(tracker.hasSynced())
    }))

  it.effect("in-order: the queue and the informer sync only once the last initial batch was processed", () =>
    Effect.gen(function*() {
      const tracker = make()
      const fifo = Fifo.make<KubeObject>({ mode: "inOrder", atomic: false }, tracker.queue)
      yield* fifo.replace([pod("a"), pod("b")], "1")
      yield* fifo.popBatch(10, (popped) => {
        tracker.batchTaken()
        return Effect.gen(function*() {
          assert.strictEqual(popped.deltas.length, 2)
          assert.isFalse(yield* fifo.hasSynced, "in-order counts after processing")
        })
      })
      assert.isTrue(yield* fifo.hasSynced)
      assert.isFalse(tracker.hasSynced(), "decided when the controller's batch is done")
      tracker.batchDone()
      assert.isTrue(tracker.hasSynced())
    }))

  it.effect("coalescing: an empty first list queues nothing and syncs the informer in the replace's step", () =>
    Effect.gen(function*() {
      const tracker = make()
      const fifo = Fifo.make<KubeObject>({ mode: "coalescing" }, tracker.queue)
      yield* fifo.replace([], "1")
      assert.isTrue(tracker.hasSynced())
      assert.isTrue(yield* fifo.hasSynced)
    }))
})

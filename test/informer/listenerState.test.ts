/**
 * A listener's life as a table (`internal/informer/listener.ts` `State`, `transition`): Created, Idle and
 * Busy with its fiber, Removed; the events the processor applies (the fiber attached, a batch started or
 * ended, the registration removed). Then the processor as the only writer: a listener's state through
 * `attach`, `batchStarted`, `batchEnded` and `remove`.
 */
import { assert, describe, it } from "@effect/vitest"
import { Clock, Effect, Exit, Fiber } from "effect"
import * as L from "../../src/internal/informer/listener.js"
import { Processor } from "../../src/internal/informer/processor.js"
import { SyncTracker } from "../../src/internal/informer/syncTracker.js"
import type { KubeObject } from "../../src/KubeObject.js"
import { InformerStoppedError } from "../../src/SharedInformer.js"

// fibers as identities: the transitions only carry them
const fiber = Effect.runFork(Effect.void)
const other = Effect.runFork(Effect.void)

const created = L.created
const idle = L.transition(created, L.attached(fiber))
const busy = L.transition(idle, L.batchStarted)
const removed = L.removed

const show = (state: L.State): string =>
  state._tag === "Idle" || state._tag === "Busy"
    ? `${state._tag}(${state.fiber === fiber ? "fiber" : "other"})`
    : state._tag

const events: Record<string, L.Event> = {
  Attached: L.attached(other),
  BatchStarted: L.batchStarted,
  BatchEnded: L.batchEnded,
  Removed: L.removal
}

/** state -> next state on Attached, BatchStarted, BatchEnded, Removed (the table in `transition`'s doc). */
const table: ReadonlyArray<readonly [L.State, readonly [string, string, string, string]]> = [
  [created, ["Idle(other)", "Created", "Created", "Removed"]],
  [idle, ["Idle(fiber)", "Busy(fiber)", "Idle(fiber)", "Removed"]],
  [busy, ["Busy(fiber)", "Busy(fiber)", "Idle(fiber)", "Removed"]],
  [removed, ["Removed", "Removed", "Removed", "Removed"]]
]

describe("listener state", () => {
  it("transitions as a table: (state, event) -> state", () => {
    for (const [state, nexts] of table) {
      const got = Object.values(events).map((event) => show(L.transition(state, event)))
      assert.deepStrictEqual(got, [...nexts], show(state))
    }
  })

  it("a batch's start and end go between the fiber's two states: no allocation on the hot path", () => {
    assert.strictEqual(L.transition(busy, L.batchEnded), idle)
    assert.strictEqual(L.transition(idle, L.batchStarted), busy)
    assert.strictEqual(L.transition(L.transition(busy, L.batchEnded), L.batchStarted), busy)
  })

  it("fiberOf: the fiber while attached, none before or after", () => {
    assert.deepStrictEqual([created, idle, busy, removed].map(L.fiberOf), [undefined, fiber, fiber, undefined])
  })

  it.effect("the processor writes the state: attach, batches, remove (which interrupts the fiber)", () =>
    Effect.gen(function*() {
      const clock = yield* Clock.clockWith(Effect.succeed)
      const tracker = new SyncTracker<InformerStoppedError>((handler) =>
        new InformerStoppedError({ informer: "pods", operation: "synced", handler })
      )
      const processor = new Processor<KubeObject>({ unsafeValues: () => [] }, tracker, clock, 0)
      const sync = tracker.registration("h")
      const buffer = yield* L.makeBuffer<KubeObject>("unbounded", sync)
      const listener = new L.Listener<KubeObject>(processor.id(), "h", "pods", sync, buffer, 1024)
      const tags: Array<string> = [listener.state._tag]
      const handlerFiber = yield* Effect.forkChild(Effect.never)
      processor.attach(listener, handlerFiber)
      tags.push(listener.state._tag)
      processor.join(listener, 0, false)
      processor.batchStarted(listener)
      tags.push(listener.state._tag)
      processor.batchEnded(listener)
      tags.push(listener.state._tag)
      processor.batchStarted(listener)
      yield* processor.remove(listener)
      tags.push(listener.state._tag)
      processor.batchEnded(listener)
      tags.push(listener.state._tag)
      assert.deepStrictEqual(tags, ["Created", "Idle", "Busy", "Idle", "Removed", "Removed"])
      assert.isTrue(Exit.hasInterrupts(yield* Fiber.await(handlerFiber)))
      assert.strictEqual(listener.backlog(), 0)
    }))
})

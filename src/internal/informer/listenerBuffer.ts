/**
 * The buffer between the informer's distribution step and one handler's fiber. Offering never waits:
 * distribution runs inside the informer's synchronous processing step.
 *
 * @internal
 */
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import type * as Scheduler from "effect/Scheduler"

/**
 * A `take` on a buffer that was shut down. The handler's loop ends on it (`internal/listener.ts`), as the
 * informer's pop loop ends on the FIFO's `FifoClosedError`.
 *
 * @internal
 */
export class BufferClosedError extends Data.TaggedError("BufferClosedError")<{}> {
  override get message(): string {
    return "handler buffer shut down"
  }
}

/**
 * What closing means is the same for both buffers and for the DeltaFifo's pop: closing wakes the waiting
 * taker; a take after it, or woken by it, gets what is still queued and then fails with the closed error
 * (here `BufferClosedError`, the FIFO's `FifoClosedError`): it neither hangs nor is interrupted. A buffer
 * drops its backlog when it shuts down (a removed handler runs nothing more), so its takes fail at once.
 *
 * @internal
 */
export interface ListenerBuffer<N> {
  /**
   * Buffers a notification; never waits; ignored after `shutdown`. Returns the number of notifications it
   * replaced (coalescing).
   */
  readonly offer: (notification: N) => number
  /** Waits for at least one notification and takes up to `max`; fails with `BufferClosedError` once shut down. */
  readonly take: (max: number) => Effect.Effect<ReadonlyArray<N>, BufferClosedError>
  /** Notifications waiting in the buffer (never negative). */
  readonly size: () => number
  /** Drops the backlog, ignores later offers, and fails the waiting and every later `take`. */
  readonly shutdown: Effect.Effect<void>
}

/**
 * An unbounded FIFO buffer (client-go's per-listener ring buffer): a plain array the distribution step
 * pushes to, and at most one waiting taker (the handler's fiber). A taker woken by an offer drains when it
 * runs, so it takes everything offered in between as one batch; when the whole backlog fits in a batch the
 * array itself is handed over (no copy). Publishing never waits, as with the Effect `Queue` this replaced:
 * that queue's `takeBetween` resumed the handler's fiber with one notification, then took the rest as
 * chunks to concatenate and copy; with 10 handlers the fan-out ran at 0.38x the floor's rate, with this
 * buffer at 0.6-0.7x (docs/BENCHMARKS.md, W4).
 *
 * @internal
 */
export const unbounded = <N>(): Effect.Effect<ListenerBuffer<N>> =>
  Effect.sync(() => {
    let items: Array<N> = []
    let head = 0
    let closed = false
    let wake: ((effect: Effect.Effect<ReadonlyArray<N>, BufferClosedError>) => void) | undefined = undefined
    let wakeMax = 0
    const drain = (max: number): ReadonlyArray<N> => {
      if (head === 0 && items.length <= max) {
        const all = items
        items = []
        return all
      }
      const end = Math.min(items.length, head + max)
      const taken = items.slice(head, end)
      if (end === items.length) {
        items = []
        head = 0
      } else if (end > 4096 && end * 2 > items.length) {
        // a handler that never catches up: drop the taken prefix so that it can be collected
        items = items.slice(end)
        head = 0
      } else {
        head = end
      }
      return taken
    }
    const failClosed = Effect.failSync(() => new BufferClosedError())
    const drained = Effect.suspend(() => closed ? failClosed : Effect.succeed(drain(wakeMax)))
    // Effect 4 runs a resumed fiber at once, inside the `resume` call: here that would be inside the offer,
    // that is inside the informer's synchronous step. So an offer does not resume the waiting taker: it
    // schedules the resumption on the taker's own dispatcher (as a `Queue` wakes its takers), once, and the
    // taker drains when it runs: everything offered in between is one batch, and no handler code runs
    // inside the distribution step.
    let dispatcher: Scheduler.SchedulerDispatcher | undefined = undefined
    let wakeScheduled = false
    const wakeTask = (): void => {
      wakeScheduled = false
      const resume = wake
      if (resume === undefined) return
      wake = undefined
      resume(drained)
    }
    // Built once. No canceler: a taker interrupted while it waits leaves `wake` set, and the fiber ignores a
    // resume after its interruption; `shutdown` (a removal) clears it. An `Effect.callback` with a canceler
    // costs a finalizer frame per wait, which is per batch.
    const wait = Effect.callback<ReadonlyArray<N>, BufferClosedError>((resume) => {
      wake = resume
    })
    return {
      offer: (notification) => {
        if (closed) return 0
        items.push(notification)
        if (wake !== undefined && !wakeScheduled) {
          wakeScheduled = true
          dispatcher!.scheduleTask(wakeTask, 0)
        }
        return 0
      },
      take: (max) =>
        Effect.withFiber((fiber) => {
          if (closed) return failClosed
          if (items.length > head) return Effect.succeed(drain(max))
          wakeMax = max
          dispatcher = fiber.currentDispatcher
          return wait
        }),
      size: () => items.length - head,
      shutdown: Effect.sync(() => {
        closed = true
        items = []
        head = 0
        // the waiting taker, if any, learns of it when it runs next (as of an offer)
        if (wake !== undefined && !wakeScheduled) {
          wakeScheduled = true
          dispatcher!.scheduleTask(wakeTask, 0)
        }
      })
    }
  })

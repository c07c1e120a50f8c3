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
  /**
   * Buffers the notifications of one batch, in order, as `offer` would one by one (same result). The
   * unbounded buffer keeps the array itself (no copy, shared by every handler): it must not change after.
   */
  readonly offerAll: (notifications: ReadonlyArray<N>) => number
  /** Waits for at least one notification and takes up to `max`; fails with `BufferClosedError` once shut down. */
  readonly take: (max: number) => Effect.Effect<ReadonlyArray<N>, BufferClosedError>
  /** Notifications waiting in the buffer (never negative). */
  readonly size: () => number
  /** Drops the backlog, ignores later offers, and fails the waiting and every later `take`. */
  readonly shutdown: Effect.Effect<void>
}

/**
 * An unbounded FIFO buffer (client-go's per-listener ring buffer) with at most one waiting taker (the
 * handler's fiber). It holds segments: the arrays of notifications the distribution step offered as one
 * batch (`offerAll`, the informer's batches: kept as they are, shared by every handler, never copied), and
 * arrays of its own for notifications offered one by one. A take hands over the first segment (the rest of
 * it when a take stopped inside it, at most `max`), so with many handlers a batch costs each handler one
 * push, not one per notification. A taker woken by an offer drains when it runs. Publishing never waits,
 * as with the Effect `Queue` this replaced: that queue's `takeBetween` resumed the handler's fiber with one
 * notification, then took the rest as chunks to concatenate and copy; with 10 handlers the fan-out ran at
 * 0.38x the floor's rate, with a plain array at 0.6-0.7x (docs/BENCHMARKS.md, W4).
 *
 * @internal
 */
export const unbounded = <N>(): Effect.Effect<ListenerBuffer<N>> =>
  Effect.sync(() => {
    /** The segments, oldest first, from `first`; a taken segment's slot is cleared. */
    let segments: Array<ReadonlyArray<N>> = []
    let first = 0
    /** Taken from `segments[first]` already. */
    let head = 0
    /** The last segment when it is the buffer's own (single offers append to it), else undefined. */
    let own: Array<N> | undefined = undefined
    /** Notifications waiting. */
    let count = 0
    let closed = false
    let wake: ((effect: Effect.Effect<ReadonlyArray<N>, BufferClosedError>) => void) | undefined = undefined
    let wakeMax = 0
    const drain = (max: number): ReadonlyArray<N> => {
      const segment = segments[first]
      const length = segment.length
      let taken: ReadonlyArray<N>
      if (head === 0 && length <= max) {
        taken = segment
      } else {
        const end = Math.min(length, head + max)
        taken = segment.slice(head, end)
        if (end < length) {
          head = end
          count -= taken.length
          return taken
        }
      }
      // the whole (rest of the) segment
      count -= taken.length
      if (segment === own) own = undefined
      head = 0
      if (++first === segments.length) {
        segments = []
        first = 0
      } else if (first >= 1024 && first * 2 > segments.length) {
        // a handler that never catches up: drop the taken slots
        segments = segments.slice(first)
        first = 0
      } else {
        segments[first - 1] = undefined as never
      }
      return taken
    }
    const failClosed = Effect.failSync(() => new BufferClosedError())
    const drained = Effect.suspend(() => closed ? failClosed : Effect.succeed(drain(wakeMax)))
    // Effect 4 runs a resumed fiber at once, inside the `resume` call: here that would be inside the offer,
    // that is inside the informer's synchronous step. So an offer does not resume the waiting taker: it
    // schedules the resumption on the taker's own dispatcher (as a `Queue` wakes its takers), once, and the
    // taker drains when it runs, and no handler code runs inside the distribution step.
    let dispatcher: Scheduler.SchedulerDispatcher | undefined = undefined
    let wakeScheduled = false
    const wakeTask = (): void => {
      wakeScheduled = false
      const resume = wake
      if (resume === undefined) return
      wake = undefined
      resume(drained)
    }
    const offered = (): void => {
      if (wake !== undefined && !wakeScheduled) {
        wakeScheduled = true
        dispatcher!.scheduleTask(wakeTask, 0)
      }
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
        if (own === undefined) {
          own = [notification]
          segments.push(own)
        } else {
          own.push(notification)
        }
        count++
        offered()
        return 0
      },
      offerAll: (notifications) => {
        if (closed || notifications.length === 0) return 0
        segments.push(notifications)
        own = undefined
        count += notifications.length
        offered()
        return 0
      },
      take: (max) =>
        Effect.withFiber((fiber) => {
          if (closed) return failClosed
          if (count > 0) return Effect.succeed(drain(max))
          wakeMax = max
          dispatcher = fiber.currentDispatcher
          return wait
        }),
      size: () => count,
      shutdown: Effect.sync(() => {
        closed = true
        segments = []
        first = 0
        head = 0
        own = undefined
        count = 0
        // the waiting taker, if any, learns of it when it runs next (as of an offer)
        if (wake !== undefined && !wakeScheduled) {
          wakeScheduled = true
          dispatcher!.scheduleTask(wakeTask, 0)
        }
      })
    }
  })

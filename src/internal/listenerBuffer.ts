/**
 * The buffer between the informer's distribution step and one handler's fiber. Offering never waits:
 * distribution runs inside the informer's synchronous processing step.
 *
 * @internal
 */
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"

/** @internal */
export interface ListenerBuffer<N> {
  /** Buffers a notification; never waits. Returns the number of notifications it replaced (coalescing). */
  readonly offer: (notification: N) => number
  /** Waits for at least one notification and takes up to `max`. */
  readonly take: (max: number) => Effect.Effect<ReadonlyArray<N>>
  /** Notifications waiting in the buffer (never negative). */
  readonly size: () => number
  readonly shutdown: Effect.Effect<void>
}

/**
 * An unbounded FIFO buffer (client-go's per-listener ring buffer), on an Effect `Queue`.
 *
 * @internal
 */
export const unbounded = <N>(): Effect.Effect<ListenerBuffer<N>> =>
  Effect.map(Queue.unbounded<N>(), (queue) => ({
    offer: (notification) => {
      queue.unsafeOffer(notification)
      return 0
    },
    take: (max) => Effect.map(Queue.takeBetween(queue, 1, max), Chunk.toReadonlyArray),
    // `Queue.unsafeSize` counts a waiting taker as -1: an idle handler has an empty buffer, not a negative one.
    size: () => Math.max(0, Option.getOrElse(queue.unsafeSize(), () => 0)),
    shutdown: Queue.shutdown(queue)
  }))

/**
 * Rate limiters: how long a failed work item waits before its next try (client-go's
 * `util/workqueue/default_rate_limiters.go`). A `WorkQueue` asks its limiter on every `addRateLimited`
 * and forwards `forget` and `numRequeues` to it.
 *
 * A `RateLimiter` is a **policy**: plain, immutable data built by the constructors below and combined
 * with `maxOf` and `withMaxWait`. It holds no state, so one policy value can be given to any number of
 * queues; each queue builds its own state from it (`unsafeMake`), as each call of client-go's
 * `DefaultTypedControllerRateLimiter()` builds a new limiter.
 *
 * The state (`Limiter`) is synchronous and takes the time as an argument, in milliseconds (a queue passes
 * its `Clock`'s `currentTimeMillisUnsafe()`), so that a policy's delays are a function of the calls made
 * to it: `TestClock` drives a queue's limiter, and a policy can be checked as a table of calls and delays.
 *
 * | policy | delay of the k-th failure of a key since its last `forget` |
 * |---|---|
 * | `exponential({ base, max })` | `base * 2^(k-1)`, at most `max` (5 ms → 1000 s by default) |
 * | `fastSlow({ fast, slow, maxFast })` | `fast` while `k <= maxFast`, then `slow` |
 * | `bucket({ rate, burst })` | one token of a bucket shared by all keys (10/s, burst 100 by default) |
 * | `maxOf(a, b, ...)` | the longest of its limiters' delays (every limiter records the failure) |
 * | `withMaxWait(limiter, max)` | the limiter's delay, at most `max` |
 * | `defaultController` | `maxOf(exponential(), bucket())`, client-go's `DefaultTypedControllerRateLimiter` |
 *
 * controller-runtime's priority queue (its default queue since v0.23) uses the per-item exponential alone
 * (5 ms → 1000 s, no bucket): pass `exponential()` to a `WorkQueue` for that behaviour. The bucket is what
 * keeps a mass failure (every key failing at once) from retrying at full speed: without it each key only
 * backs off on its own schedule.
 *
 * @since 0.2.0
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import { dual } from "effect/Function"
import * as internal from "./internal/controller/rateLimiter.js"

// -------------------------------------------------------------------------------------------------
// models
// -------------------------------------------------------------------------------------------------

/**
 * The state a policy is run with: per-key failure counts, a token bucket. What a `WorkQueue` holds.
 * Synchronous; `now` is the current time in milliseconds (`Clock.currentTimeMillisUnsafe()`).
 *
 * @since 0.2.0
 * @category models
 */
export interface Limiter {
  /**
   * Records one failure of `key` at `now` and returns how long, in milliseconds, the key should wait
   * before its next try (`Infinity`: never, e.g. a bucket with `burst: 0`).
   */
  readonly when: (key: string, now: number) => number
  /** Stops tracking `key`: its next failure counts as its first. The bucket gives no token back. */
  readonly forget: (key: string) => void
  /** Failures of `key` recorded since its last `forget` (the bucket counts none). */
  readonly numRequeues: (key: string) => number
}

/**
 * Per-key exponential backoff (client-go's `ItemExponentialFailureRateLimiter`): the k-th failure of a
 * key waits `base * 2^(k-1)`, at most `max`.
 *
 * @since 0.2.0
 * @category models
 */
export interface Exponential {
  readonly _tag: "Exponential"
  readonly base: Duration.Duration
  readonly max: Duration.Duration
}

/**
 * Per-key two-speed delay (client-go's `ItemFastSlowRateLimiter`): `fast` for the first `maxFast`
 * failures of a key, `slow` afterwards.
 *
 * @since 0.2.0
 * @category models
 */
export interface FastSlow {
  readonly _tag: "FastSlow"
  readonly fast: Duration.Duration
  readonly slow: Duration.Duration
  readonly maxFast: number
}

/**
 * A token bucket shared by every key (client-go's `BucketRateLimiter` over golang.org/x/time/rate):
 * `rate` tokens per second, at most `burst`, starting full. Each failure reserves one token; past the
 * burst the reservation is in the future and the delay grows by `1/rate` per failure.
 *
 * @since 0.2.0
 * @category models
 */
export interface Bucket {
  readonly _tag: "Bucket"
  /** Tokens per second. */
  readonly rate: number
  readonly burst: number
}

/**
 * The longest delay of several limiters (client-go's `MaxOfRateLimiter`). Every limiter records each
 * failure (a bucket inside spends a token even when another limiter's delay wins).
 *
 * @since 0.2.0
 * @category models
 */
export interface MaxOf {
  readonly _tag: "MaxOf"
  readonly limiters: ReadonlyArray<RateLimiter>
}

/**
 * A limiter's delay, cut to `maxDelay` (client-go's `WithMaxWaitRateLimiter`).
 *
 * @since 0.2.0
 * @category models
 */
export interface WithMaxWait {
  readonly _tag: "WithMaxWait"
  readonly limiter: RateLimiter
  readonly maxDelay: Duration.Duration
}

/**
 * A limiter of your own: `make` is called once per queue and must return fresh state.
 *
 * @since 0.2.0
 * @category models
 */
export interface Custom {
  readonly _tag: "Custom"
  readonly make: () => Limiter
}

/**
 * A rate-limiting policy: immutable data; each user of it builds its own state with `unsafeMake`.
 *
 * @since 0.2.0
 * @category models
 */
export type RateLimiter = Exponential | FastSlow | Bucket | MaxOf | WithMaxWait | Custom

// -------------------------------------------------------------------------------------------------
// constructors
// -------------------------------------------------------------------------------------------------

/**
 * Per-key exponential backoff; `base` defaults to 5 ms and `max` to 1000 s (the per-item half of
 * `defaultController`, and controller-runtime's priority-queue default). Delays 5, 10, 20 ms ...; the
 * 18th failure in a row waits 655.36 s, the 19th and later 1000 s.
 *
 * @example
 * ```ts
 * import { RateLimiter } from "effect-informers"
 *
 * const limiter = RateLimiter.unsafeMake(RateLimiter.exponential({ base: "1 millis", max: "1 second" }))
 * limiter.when("default/a", 0) // 1
 * limiter.when("default/a", 0) // 2
 * limiter.when("default/a", 0) // 4
 * limiter.numRequeues("default/a") // 3
 * ```
 *
 * @since 0.2.0
 * @category constructors
 */
export const exponential = (
  options: {
    readonly base?: Duration.Input | undefined
    readonly max?: Duration.Input | undefined
  } = {}
): RateLimiter => ({
  _tag: "Exponential",
  base: Duration.fromInputUnsafe(options.base ?? "5 millis"),
  max: Duration.fromInputUnsafe(options.max ?? "1000 seconds")
})

/**
 * Per-key two-speed delay: `fast` for the first `maxFast` failures of a key, then `slow`.
 *
 * @since 0.2.0
 * @category constructors
 */
export const fastSlow = (options: {
  readonly fast: Duration.Input
  readonly slow: Duration.Input
  readonly maxFast: number
}): RateLimiter => ({
  _tag: "FastSlow",
  fast: Duration.fromInputUnsafe(options.fast),
  slow: Duration.fromInputUnsafe(options.slow),
  maxFast: options.maxFast
})

/**
 * A token bucket shared by all keys; `rate` (tokens per second) defaults to 10 and `burst` to 100 (the
 * overall half of `defaultController`). The first `burst` failures wait nothing; after that each waits
 * `1/rate` longer than the previous one unless the bucket had time to refill: 1,000 failures at the
 * same instant make the last one wait 90 s.
 *
 * @example
 * ```ts
 * import { RateLimiter } from "effect-informers"
 *
 * const limiter = RateLimiter.unsafeMake(RateLimiter.bucket({ rate: 10, burst: 2 }))
 * limiter.when("a", 0) // 0
 * limiter.when("b", 0) // 0
 * limiter.when("c", 0) // 100: one token owed
 * limiter.when("d", 0) // 200: two owed
 * limiter.when("e", 100) // 200: one token refilled; due at 300 ms, 100 ms after d's
 * limiter.when("f", 10_000) // 0: the bucket is full again
 * ```
 *
 * @since 0.2.0
 * @category constructors
 */
export const bucket = (
  options: { readonly rate?: number | undefined; readonly burst?: number | undefined } = {}
): RateLimiter => ({ _tag: "Bucket", rate: options.rate ?? 10, burst: options.burst ?? 100 })

/**
 * The longest delay of `limiters`; `numRequeues` is their largest count and `forget` reaches them all.
 *
 * @since 0.2.0
 * @category constructors
 */
export const maxOf = (...limiters: ReadonlyArray<RateLimiter>): RateLimiter => ({ _tag: "MaxOf", limiters })

/**
 * `self`'s delay, cut to `maxDelay`.
 *
 * @example
 * ```ts
 * import { pipe } from "effect"
 * import { RateLimiter } from "effect-informers"
 *
 * // per-key backoff that never waits more than a minute
 * const policy = pipe(RateLimiter.exponential(), RateLimiter.withMaxWait("1 minute"))
 * ```
 *
 * @since 0.2.0
 * @category combinators
 */
export const withMaxWait: {
  (maxDelay: Duration.Input): (self: RateLimiter) => RateLimiter
  (self: RateLimiter, maxDelay: Duration.Input): RateLimiter
} = dual(
  2,
  (self: RateLimiter, maxDelay: Duration.Input): RateLimiter => ({
    _tag: "WithMaxWait",
    limiter: self,
    maxDelay: Duration.fromInputUnsafe(maxDelay)
  })
)

/**
 * A limiter of your own; `make` is called once by each queue (or `unsafeMake`) and returns fresh state.
 *
 * @since 0.2.0
 * @category constructors
 */
export const custom = (make: () => Limiter): RateLimiter => ({ _tag: "Custom", make })

/**
 * client-go's `DefaultTypedControllerRateLimiter`: `maxOf(exponential(), bucket())`, per-key backoff from
 * 5 ms to 1000 s, and overall at most 10 retries per second after a burst of 100. The default of
 * `WorkQueue.make` and of `Controller.make`: 10,000 keys failing on every try are retried 400 times in
 * their first 30 s (the burst, then 10 a second), where `exponential()` alone retries each 12 times.
 *
 * @since 0.2.0
 * @category constructors
 */
export const defaultController: RateLimiter = maxOf(exponential(), bucket())

/**
 * client-go's `DefaultTypedItemBasedRateLimiter`: per-key exponential backoff from 1 ms to 1000 s.
 *
 * @since 0.2.0
 * @category constructors
 */
export const defaultItemBased: RateLimiter = exponential({ base: "1 millis" })

/**
 * Builds fresh state for `policy`, synchronously.
 *
 * @since 0.2.0
 * @category constructors
 */
export const unsafeMake: (policy: RateLimiter) => Limiter = internal.make

/**
 * Builds fresh state for `policy`.
 *
 * @example
 * ```ts
 * import { Clock, Effect } from "effect"
 * import { RateLimiter } from "effect-informers"
 *
 * const program = Effect.gen(function*() {
 *   const limiter = yield* RateLimiter.make(RateLimiter.defaultController)
 *   const now = yield* Clock.currentTimeMillis
 *   return limiter.when("default/my-pod", now) // 5
 * })
 * ```
 *
 * @since 0.2.0
 * @category constructors
 */
export const make = (policy: RateLimiter): Effect.Effect<Limiter> => Effect.sync(() => internal.make(policy))

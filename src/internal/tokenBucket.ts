/**
 * Client-side rate limiting as client-go's (`flowcontrol.NewTokenBucketRateLimiter`, which is
 * `golang.org/x/time/rate`): a bucket of `burst` tokens, full at the start, refilled continuously at `qps`
 * tokens per second. Each request takes one token; when there is none it reserves the next one and waits
 * until it is due. Reservations are served in the order they were made.
 *
 * The bucket is computed from the time of each reservation, with no fiber refilling it: any `qps` is exact
 * (a refill fiber sleeps whole milliseconds, so it cannot pass 1000 qps and rounds 3 qps to 2.994), and
 * nothing needs a Scope. Time is the `Clock`'s: `TestClock` drives it.
 *
 * A wait that is interrupted gives its token back, less what later reservations already counted on (as
 * `Reservation.Cancel` does).
 *
 * @internal
 */
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"

/**
 * A reservation: when its request may go, and whether it had to wait.
 *
 * @internal
 */
export interface Reservation {
  /** Milliseconds (Clock time) at which the request may be sent. */
  readonly timeToAct: number
  /** How long to wait from the time of the reservation, in milliseconds (0 when a token was there). */
  readonly delay: number
}

/**
 * The bucket's arithmetic, pure: time is passed in.
 *
 * @internal
 */
export class TokenBucket {
  private tokens: number
  /** The time `tokens` was computed at. */
  private last: number | undefined = undefined
  /** The latest `timeToAct` of any reservation. */
  private lastEvent: number | undefined = undefined
  private readonly perMilli: number

  constructor(readonly qps: number, readonly burst: number) {
    this.tokens = burst
    this.perMilli = qps / 1000
  }

  /** The tokens at `now` (without taking any), the bucket's level as `advance` computes it. */
  available(now: number): number {
    return this.advance(now)
  }

  private advance(now: number): number {
    const last = this.last === undefined || now < this.last ? now : this.last
    return Math.min(this.burst, this.tokens + (now - last) * this.perMilli)
  }

  /** Takes a token at `now` if the bucket has one (client-go's `TryAccept`); `false` leaves it as it was. */
  tryTake(now: number): boolean {
    const tokens = this.advance(now)
    if (tokens < 1) return false
    this.tokens = tokens - 1
    this.last = now
    return true
  }

  /** Takes a token at `now`: at once when the bucket has one, otherwise when the next one is due. */
  reserve(now: number): Reservation {
    const tokens = this.advance(now) - 1
    const delay = tokens < 0 ? -tokens / this.perMilli : 0
    const timeToAct = now + delay
    this.last = now
    this.tokens = tokens
    this.lastEvent = timeToAct
    return { timeToAct, delay }
  }

  /**
   * Gives back the token of a reservation that will not be used (its wait was interrupted) at `now`: not
   * when its time has come, and less the tokens reservations made after it counted on.
   */
  cancel(reservation: Reservation, now: number): void {
    if (reservation.timeToAct <= now) return
    const after = this.lastEvent === undefined ? 0 : (this.lastEvent - reservation.timeToAct) * this.perMilli
    const restore = 1 - after
    if (restore <= 0) return
    this.tokens = Math.min(this.burst, this.advance(now) + restore)
    this.last = now
    if (reservation.timeToAct === this.lastEvent) {
      // the previous reservation's time, when it is still to come
      const previous = reservation.timeToAct - 1 / this.perMilli
      if (previous >= now) this.lastEvent = previous
    }
  }
}

/**
 * A limiter: `take` waits for a token (at once while the bucket has some). `qps: Infinity` is no limiter.
 *
 * @internal
 */
export interface Limiter {
  readonly take: Effect.Effect<void>
}

/** @internal */
export const unlimited: Limiter = { take: Effect.void }

/**
 * A limiter of `qps` requests per second with bursts of `burst`; `Infinity` qps is `unlimited`. `qps` must
 * be a positive number and `burst` a positive integer (a defect otherwise: a configuration error).
 *
 * @internal
 */
export const makeLimiter = (qps: number, burst: number): Limiter => {
  if (qps === Infinity) return unlimited
  if (!(qps > 0) || !Number.isFinite(qps)) {
    throw new RangeError(`qps must be a positive number or Infinity, got ${qps}`)
  }
  if (!Number.isInteger(burst) || burst < 1) throw new RangeError(`burst must be a positive integer, got ${burst}`)
  const bucket = new TokenBucket(qps, burst)
  return {
    take: Effect.uninterruptibleMask((restore) =>
      Effect.flatMap(Clock.currentTimeMillis, (now) => {
        const reservation = bucket.reserve(now)
        if (reservation.delay <= 0) return Effect.void
        return restore(Effect.sleep(Duration.millis(reservation.delay))).pipe(
          Effect.onInterrupt(() => Effect.map(Clock.currentTimeMillis, (at) => bucket.cancel(reservation, at)))
        )
      })
    )
  }
}

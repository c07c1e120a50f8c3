/**
 * The state behind each `RateLimiter` policy (client-go's `default_rate_limiters.go`): what `unsafeMake`
 * builds from a policy. `RateLimiter.ts` holds the policies (plain data) and their documentation.
 *
 * Every limiter is a plain synchronous object: time comes in as an argument (milliseconds, as
 * `Clock.currentTimeMillisUnsafe` reads it), so a policy is a deterministic function of the calls made to
 * it, tested as tables, and the work queue calls it inside one synchronous step with its own clock.
 *
 * @internal
 */
import * as Duration from "effect/Duration"
import type { Limiter, RateLimiter } from "../../RateLimiter.js"
import { TokenBucket } from "../tokenBucket.js"

const millis = (duration: Duration.Duration): number => Duration.toMillis(duration)

/** client-go's `ItemExponentialFailureRateLimiter`: `base * 2^(failures - 1)`, capped at `max`. */
class ExponentialLimiter implements Limiter {
  private readonly failures = new Map<string, number>()
  constructor(private readonly base: number, private readonly max: number) {}

  when(key: string, _now: number): number {
    const exp = this.failures.get(key) ?? 0
    this.failures.set(key, exp + 1)
    const backoff = this.base * Math.pow(2, exp)
    // Infinity (overflow) and NaN (0 * Infinity) both mean the cap, as client-go's overflow check does
    return backoff < this.max ? backoff : this.max
  }

  forget(key: string): void {
    this.failures.delete(key)
  }

  numRequeues(key: string): number {
    return this.failures.get(key) ?? 0
  }
}

/** client-go's `ItemFastSlowRateLimiter`: `fast` for the first `maxFast` failures of a key, `slow` after. */
class FastSlowLimiter implements Limiter {
  private readonly failures = new Map<string, number>()
  constructor(private readonly fast: number, private readonly slow: number, private readonly maxFast: number) {}

  when(key: string, _now: number): number {
    const count = (this.failures.get(key) ?? 0) + 1
    this.failures.set(key, count)
    return count <= this.maxFast ? this.fast : this.slow
  }

  forget(key: string): void {
    this.failures.delete(key)
  }

  numRequeues(key: string): number {
    return this.failures.get(key) ?? 0
  }
}

/**
 * client-go's `BucketRateLimiter` over golang.org/x/time/rate's `Limiter.Reserve()`: the bucket starts full
 * (`burst` tokens) and refills at `rate` tokens per second up to `burst`; every call takes one token, and
 * when none is left the token is borrowed from the future: the count goes negative and the delay is the
 * time the refill needs to bring it back to zero. So each reservation past the burst waits `1/rate` longer
 * than the previous one. Tokens are never given back (`forget` does nothing). A call with a time before
 * the previous call's refills nothing, and the refill then counts from that earlier time (x/time/rate's
 * `advance` and `reserveN`).
 */
class BucketLimiter implements Limiter {
  private readonly bucket: TokenBucket | undefined
  constructor(private readonly rate: number, burst: number) {
    this.bucket = rate === Infinity || burst < 1 ? undefined : new TokenBucket(rate, burst)
  }

  when(_key: string, now: number): number {
    if (this.rate === Infinity) return 0
    // x/time/rate: a reservation larger than the burst is never granted; with rate 0, nothing past the burst
    if (this.bucket === undefined) return Infinity
    return this.bucket.reserve(now).delay
  }

  forget(_key: string): void {}

  numRequeues(_key: string): number {
    return 0
  }
}

/** client-go's `MaxOfRateLimiter`: asks every limiter (each records the failure) and takes the longest. */
class MaxOfLimiter implements Limiter {
  constructor(private readonly limiters: ReadonlyArray<Limiter>) {}

  when(key: string, now: number): number {
    let max = 0
    for (let i = 0; i < this.limiters.length; i++) {
      const delay = this.limiters[i].when(key, now)
      if (delay > max) max = delay
    }
    return max
  }

  forget(key: string): void {
    for (let i = 0; i < this.limiters.length; i++) this.limiters[i].forget(key)
  }

  numRequeues(key: string): number {
    let max = 0
    for (let i = 0; i < this.limiters.length; i++) {
      const n = this.limiters[i].numRequeues(key)
      if (n > max) max = n
    }
    return max
  }
}

/** client-go's `WithMaxWaitRateLimiter`: the inner delay, cut to `maxDelay`. */
class MaxWaitLimiter implements Limiter {
  constructor(private readonly limiter: Limiter, private readonly maxDelay: number) {}

  when(key: string, now: number): number {
    const delay = this.limiter.when(key, now)
    return delay > this.maxDelay ? this.maxDelay : delay
  }

  forget(key: string): void {
    this.limiter.forget(key)
  }

  numRequeues(key: string): number {
    return this.limiter.numRequeues(key)
  }
}

/**
 * Fresh state for `policy`: every call builds new per-key counters and a full bucket, so one policy value
 * can be shared by any number of queues without them sharing state.
 *
 * @internal
 */
export const make = (policy: RateLimiter): Limiter => {
  switch (policy._tag) {
    case "Exponential":
      return new ExponentialLimiter(millis(policy.base), millis(policy.max))
    case "FastSlow":
      return new FastSlowLimiter(millis(policy.fast), millis(policy.slow), policy.maxFast)
    case "Bucket":
      return new BucketLimiter(policy.rate, policy.burst)
    case "MaxOf":
      return new MaxOfLimiter(policy.limiters.map(make))
    case "WithMaxWait":
      return new MaxWaitLimiter(make(policy.limiter), millis(policy.maxDelay))
    case "Custom":
      return policy.make()
  }
}

/**
 * A mass failure (every key failing on every try) run against a limiter policy, as a discrete-event
 * simulation of a rate-limited queue: each try of a key fails and asks `when(key, now)` for its next try.
 * The counts are checked against client-go's arithmetic for its DefaultControllerRateLimiter (per key
 * `base * 2^(k-1)`, overall x/time/rate's Reserve: the i-th reservation of a full bucket at one instant waits
 * `(i - burst) / rate`), computed here in closed form, not by the library's code.
 */
import { assert, describe, it } from "@effect/vitest"
import * as RateLimiter from "../../../src/RateLimiter.js"
import { integer } from "../../fixtures/arbitrary.js"

/** Due times compared with a little slack: 300 / 0.01 is 30000.000000000004 in floating point. */
const epsilon = 1e-6

/** A binary heap of [due, key] ordered by due time, then by insertion (FIFO for equal times). */
class Heap {
  private readonly items: Array<readonly [number, number, string]> = []
  private seq = 0
  get size() {
    return this.items.length
  }
  push(due: number, key: string) {
    const items = this.items
    items.push([due, this.seq++, key])
    let i = items.length - 1
    while (i > 0) {
      const parent = (i - 1) >> 1
      if (!this.less(items[i], items[parent])) break
      ;[items[i], items[parent]] = [items[parent], items[i]]
      i = parent
    }
  }
  peek(): number {
    return this.items[0][0]
  }
  pop(): readonly [number, string] {
    const items = this.items
    const top = items[0]
    const last = items.pop()!
    if (items.length > 0) {
      items[0] = last
      let i = 0
      for (;;) {
        const l = 2 * i + 1
        const r = l + 1
        let m = i
        if (l < items.length && this.less(items[l], items[m])) m = l
        if (r < items.length && this.less(items[r], items[m])) m = r
        if (m === i) break
        ;[items[i], items[m]] = [items[m], items[i]]
        i = m
      }
    }
    return [top[0], top[2]]
  }
  private less(a: readonly [number, number, string], b: readonly [number, number, string]) {
    return a[0] < b[0] || (a[0] === b[0] && a[1] < b[1])
  }
}

/**
 * `keys` keys queued at 0 ms, every try failing and requeued by `policy`, until `horizon` ms: the tries
 * made (first ones included) and the retries per second of simulated time.
 */
const simulate = (policy: RateLimiter.RateLimiter, keys: number, horizon: number) => {
  const limiter = RateLimiter.unsafeMake(policy)
  const heap = new Heap()
  for (let i = 0; i < keys; i++) heap.push(0, `ns/k${i}`)
  let tries = 0
  const perSecond: Array<number> = []
  while (heap.size > 0 && heap.peek() <= horizon + epsilon) {
    const [now, key] = heap.pop()
    tries++
    if (tries > keys) {
      const second = Math.min(Math.floor(now / 1000), Math.floor(horizon / 1000) - 1)
      perSecond[second] = (perSecond[second] ?? 0) + 1
    }
    heap.push(now + limiter.when(key, now), key)
  }
  return { tries, retries: tries - keys, perSecond }
}

/** Retries of one always-failing key within `horizon` ms under per-key exponential backoff alone. */
const exponentialRetries = (base: number, max: number, horizon: number) => {
  let at = 0
  let delay = base
  let n = 0
  for (;;) {
    at += Math.min(delay, max)
    if (at > horizon + epsilon) return n
    n++
    delay *= 2
  }
}

describe("RateLimiter: a mass failure", () => {
  // keys, policy, horizon, expected tries (client-go's figures)
  const table: ReadonlyArray<{
    readonly title: string
    readonly policy: RateLimiter.RateLimiter
    readonly keys: number
    readonly seconds: number
    readonly tries: number
  }> = [
    {
      title: "10,000 keys, 30 s, exponential alone (the old Controller default): 13 tries each, 130,000",
      policy: RateLimiter.exponential(),
      keys: 10_000,
      seconds: 30,
      // 5 * (2^k - 1) ms <= 30 s for k <= 12: the first try and 12 retries
      tries: 10_000 * (1 + exponentialRetries(5, 1_000_000, 30_000))
    },
    {
      title: "10,000 keys, 30 s, defaultController (client-go's): the first tries, the burst of 100, then 10/s",
      policy: RateLimiter.defaultController,
      keys: 10_000,
      seconds: 30,
      tries: 10_000 + 100 + 10 * 30
    },
    {
      title: "10,000 keys, 30 s, bucket alone: the same (the first 100 at once instead of after 5 ms)",
      policy: RateLimiter.bucket(),
      keys: 10_000,
      seconds: 30,
      tries: 10_000 + 100 + 10 * 30
    },
    {
      title: "10 keys, 30 s, defaultController: the bucket never empties, so per key exponential (13 tries each)",
      policy: RateLimiter.defaultController,
      keys: 10,
      seconds: 30,
      tries: 130
    },
    {
      title: "1,000 keys, 5 min, defaultController: the burst, then 10/s until the horizon",
      policy: RateLimiter.defaultController,
      keys: 1_000,
      seconds: 300,
      tries: 1_000 + 100 + 10 * 300
    }
  ]
  for (const row of table) {
    it(row.title, () => {
      const { tries } = simulate(row.policy, row.keys, row.seconds * 1000)
      assert.strictEqual(tries, row.tries)
    })
  }

  it("defaultController after the burst: 10 retries in each second of the 30", () => {
    const { perSecond } = simulate(RateLimiter.defaultController, 10_000, 30_000)
    // second 0: the burst of 100 (after 5 ms) and the 9 bucket reservations due at 100..900 ms; the 1000 ms
    // one counts in second 1, and so on; the one due at exactly 30 s is counted in the last second
    assert.deepStrictEqual(perSecond, [109, ...Array.from({ length: 28 }, () => 10), 11])
  })

  it.prop(
    "any mass failure: retries within T stay under burst + rate * T and under the per-key exponential; once the keys outnumber what the bucket grants in T, exactly that many",
    {
      keys: integer({ min: 1, max: 2000 }),
      rate: integer({ min: 1, max: 40 }),
      burst: integer({ min: 1, max: 150 }),
      base: integer({ min: 1, max: 50 }),
      seconds: integer({ min: 1, max: 40 })
    },
    ({ base, burst, keys, rate, seconds }) => {
      const horizon = seconds * 1000
      const policy = RateLimiter.maxOf(
        RateLimiter.exponential({ base: `${base} millis`, max: "1000 seconds" }),
        RateLimiter.bucket({ rate, burst })
      )
      const { retries } = simulate(policy, keys, horizon)
      const bucketBound = burst + rate * seconds
      const exponentialBound = keys * exponentialRetries(base, 1_000_000, horizon)
      assert.isAtMost(retries, bucketBound, "the bucket bounds the retries")
      assert.isAtMost(retries, exponentialBound, "no key retries sooner than its own backoff")
      if (keys > bucketBound) {
        // client-go: the first `burst` failures wait `base`, the i-th after them i / rate seconds, and the
        // retries' own failures reserve behind all of those, past T
        assert.strictEqual(retries, bucketBound)
      }
    },
    { arbitrary: { runs: 60 } }
  )
})

/**
 * RateLimiter policies as tables of calls and delays (ports of client-go's default_rate_limiters_test.go,
 * names kept, and the token bucket's reserve arithmetic), then the rate-limiting queue
 * (rate_limiting_queue_test.go) under TestClock.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as TestClock from "effect/testing/TestClock"
import * as RateLimiter from "../../../src/RateLimiter.js"
import { drain, makeQueue } from "./fixtures.js"

/** One step of a table: a failure at `at` ms and its expected delay, `n` failures ignored, forget, a count. */
type Step =
  | readonly ["when", key: string, at: number, delay: number]
  | readonly ["whenN", key: string, at: number, n: number]
  | readonly ["forget", key: string]
  | readonly ["requeues", key: string, expected: number]

interface Row {
  readonly title: string
  readonly policy: RateLimiter.RateLimiter
  readonly steps: ReadonlyArray<Step>
}

const s = 1000
const min = 60 * s
const h = 60 * min

/** `n` failures of distinct keys at `at`, expecting `delays(i)` for the i-th. */
const burst = (prefix: string, at: number, n: number, delay: (i: number) => number): Array<Step> =>
  Array.from({ length: n }, (_, i) => ["when", `${prefix}${i}`, at, delay(i)] as const)

const when = (key: string, ...delays: Array<number>): Array<Step> =>
  delays.map((delay) => ["when", key, 0, delay] as const)

const table: ReadonlyArray<Row> = [
  {
    title:
      "TestItemExponentialFailureRateLimiter: 1 ms -> 1 s: one 1, 2, 4, 8, 16 ms; two 1, 2 ms; Forget(one) -> 0, then 1 ms",
    policy: RateLimiter.exponential({ base: "1 millis", max: "1 second" }),
    steps: [
      ...when("one", 1, 2, 4, 8, 16),
      ["requeues", "one", 5],
      ...when("two", 1, 2),
      ["requeues", "two", 2],
      ["forget", "one"],
      ["requeues", "one", 0],
      ...when("one", 1)
    ]
  },
  {
    title:
      "TestItemExponentialFailureRateLimiterOverFlow (1 ms -> 1000 s): 6th call 32 ms; after 1000 calls exactly the cap",
    policy: RateLimiter.exponential({ base: "1 millis", max: "1000 seconds" }),
    steps: [
      ["whenN", "one", 0, 5],
      ...when("one", 32),
      ["whenN", "overflow", 0, 1000],
      ...when("overflow", 1000 * s)
    ]
  },
  {
    title: "TestItemExponentialFailureRateLimiterOverFlow (1 min -> 1000 h): 3rd call 4 min; after 1000 calls 1000 h",
    policy: RateLimiter.exponential({ base: "1 minute", max: "1000 hours" }),
    steps: [
      ["whenN", "one", 0, 2],
      ...when("one", 4 * min),
      ["whenN", "overflow", 0, 1000],
      ...when("overflow", 1000 * h)
    ]
  },
  {
    title: "TestItemFastSlowRateLimiter (5 ms, 10 s, 3): one 5, 5, 5 ms, 10 s, 10 s; two 5, 5 ms; Forget(one) -> 5 ms",
    policy: RateLimiter.fastSlow({ fast: "5 millis", slow: "10 seconds", maxFast: 3 }),
    steps: [
      ...when("one", 5, 5, 5, 10 * s, 10 * s),
      ["requeues", "one", 5],
      ...when("two", 5, 5),
      ["requeues", "two", 2],
      ["forget", "one"],
      ["requeues", "one", 0],
      ...when("one", 5)
    ]
  },
  {
    title:
      "TestMaxOfRateLimiter: max(fastSlow 5 ms/3 s/3, exponential 1 ms/1 s): one 5, 5, 5 ms, 3 s, 3 s; two 5, 5 ms",
    policy: RateLimiter.maxOf(
      RateLimiter.fastSlow({ fast: "5 millis", slow: "3 seconds", maxFast: 3 }),
      RateLimiter.exponential({ base: "1 millis", max: "1 second" })
    ),
    steps: [
      ...when("one", 5, 5, 5, 3 * s, 3 * s),
      ["requeues", "one", 5],
      ...when("two", 5, 5),
      ["requeues", "two", 2],
      ["forget", "one"],
      ["requeues", "one", 0],
      ...when("one", 5)
    ]
  },
  {
    title: "TestWithMaxWaitRateLimiter: 5 ms for 100 calls then 1000 s, cut to 500 s",
    policy: RateLimiter.withMaxWait(
      RateLimiter.fastSlow({ fast: "5 millis", slow: "1000 seconds", maxFast: 100 }),
      "500 seconds"
    ),
    steps: [...when("one", ...Array.from({ length: 100 }, () => 5)), ...when("one", 500 * s, 500 * s)]
  },
  {
    title:
      "exponential defaults (5 ms -> 1000 s): 5, 10, 20 ms ...; the 18th failure 655.36 s, the 19th and later 1000 s",
    policy: RateLimiter.exponential(),
    steps: [...when("a", 5, 10, 20), ["whenN", "b", 0, 17], ...when("b", 655_360, 1000 * s, 1000 * s)]
  },
  {
    title: "defaultItemBased: 1 ms, 2 ms, 4 ms",
    policy: RateLimiter.defaultItemBased,
    steps: when("a", 1, 2, 4)
  },
  {
    title:
      "bucket defaults (10/s, burst 100): 100 failures at once wait nothing, then each 100 ms more than the previous",
    policy: RateLimiter.bucket(),
    steps: [...burst("k", 0, 100, () => 0), ...burst("late", 0, 3, (i) => (i + 1) * 100)]
  },
  {
    title: "bucket defaults: 1,000 simultaneous failures -> the last waits 90 s",
    policy: RateLimiter.bucket(),
    steps: burst("k", 0, 1000, (i) => (i < 100 ? 0 : (i - 99) * 100))
  },
  {
    title: "bucket refills at its rate, never above the burst",
    policy: RateLimiter.bucket({ rate: 10, burst: 2 }),
    steps: [
      ["when", "a", 0, 0],
      ["when", "b", 0, 0],
      ["when", "c", 0, 100], // one token owed
      ["when", "d", 0, 200], // two owed
      ["when", "e", 100, 200], // one refilled: due at 300 ms, 100 ms after d's
      ["when", "f", 10_000, 0], // 97 refilled, capped at 2: full again
      ["when", "g", 10_000, 0],
      ["when", "h", 10_000, 100]
    ]
  },
  {
    title: "bucket: a clock going backwards refills nothing, and the refill counts from the earlier time (x/time/rate)",
    policy: RateLimiter.bucket({ rate: 1, burst: 1 }),
    steps: [["when", "a", 5000, 0], ["when", "b", 4000, 1000], ["when", "c", 5000, 1000]]
  },
  {
    title: "bucket: NumRequeues always 0, Forget gives no token back",
    policy: RateLimiter.bucket({ rate: 1, burst: 1 }),
    steps: [["when", "a", 0, 0], ["requeues", "a", 0], ["forget", "a"], ["when", "a", 0, 1000]]
  },
  {
    title: "bucket with burst 0 never grants a reservation; rate 0 never refills",
    policy: RateLimiter.maxOf(RateLimiter.bucket({ rate: 10, burst: 0 })),
    steps: [["when", "a", 0, Infinity]]
  },
  {
    title: "bucket with rate 0: the burst, then never",
    policy: RateLimiter.bucket({ rate: 0, burst: 1 }),
    steps: [["when", "a", 0, 0], ["when", "b", 1_000_000, Infinity]]
  },
  {
    title: "defaultController: per key 5, 10, 20 ms while the bucket has tokens",
    policy: RateLimiter.defaultController,
    steps: [...when("a", 5, 10, 20), ["requeues", "a", 3], ...when("b", 5)]
  },
  {
    title: "defaultController: 200 keys failing at once -> 100 at 5 ms, then the bucket's 100, 200, ... ms",
    policy: RateLimiter.defaultController,
    steps: burst("k", 0, 200, (i) => (i < 100 ? 5 : (i - 99) * 100))
  },
  {
    title: "defaultController: the bucket spends a token even when the exponential wins (client-go's MaxOf caveat)",
    policy: RateLimiter.defaultController,
    steps: [["whenN", "a", 0, 100], ...when("b", 100)]
  }
]

const run = (limiter: RateLimiter.Limiter, steps: ReadonlyArray<Step>) => {
  steps.forEach((step, i) => {
    switch (step[0]) {
      case "when": {
        const [, key, at, delay] = step
        const actual = limiter.when(key, at)
        if (delay === Infinity) assert.strictEqual(actual, Infinity, `step ${i}: when(${key}, ${at})`)
        else assert.closeTo(actual, delay, 1e-6, `step ${i}: when(${key}, ${at})`)
        break
      }
      case "whenN":
        for (let n = 0; n < step[3]; n++) limiter.when(step[1], step[2])
        break
      case "forget":
        limiter.forget(step[1])
        break
      case "requeues":
        assert.strictEqual(limiter.numRequeues(step[1]), step[2], `step ${i}: numRequeues(${step[1]})`)
    }
  })
}

describe("default_rate_limiters_test", () => {
  for (const row of table) {
    it(row.title, () => run(RateLimiter.unsafeMake(row.policy), row.steps))
  }

  it("a policy is data: each unsafeMake builds fresh state, so queues sharing a policy share no counters", () => {
    const policy = RateLimiter.defaultController
    const a = RateLimiter.unsafeMake(policy)
    const b = RateLimiter.unsafeMake(policy)
    run(a, when("k", 5, 10, 20))
    run(b, when("k", 5))
    assert.strictEqual(policy._tag, "MaxOf")
  })

  it("custom: make is called for each instance", () => {
    let made = 0
    const policy = RateLimiter.custom(() => {
      made++
      let calls = 0
      return { when: () => ++calls * 7, forget: () => {}, numRequeues: () => calls }
    })
    const a = RateLimiter.unsafeMake(policy)
    const b = RateLimiter.unsafeMake(RateLimiter.maxOf(policy, RateLimiter.exponential()))
    run(a, [...when("x", 7, 14), ["requeues", "x", 2]])
    run(b, when("x", 7))
    assert.strictEqual(made, 2)
  })

  it.effect("make builds state in an Effect; the delays follow the clock it is given", () =>
    Effect.gen(function*() {
      const limiter = yield* RateLimiter.make(RateLimiter.bucket({ rate: 2, burst: 1 }))
      assert.strictEqual(limiter.when("a", 0), 0)
      assert.strictEqual(limiter.when("a", 0), 500)
      assert.strictEqual(limiter.when("a", 1500), 0)
    }))
})

describe("rate_limiting_queue_test", () => {
  it.effect(
    "TestRateLimitingQueue (exponential 1 ms -> 1 s): AddRateLimited(one) asks 1 ms then 2 ms (NumRequeues 2) and one is ready after the earlier; two 1 ms, 2 ms; Forget(one) -> NumRequeues 0, next 1 ms",
    () =>
      Effect.gen(function*() {
        const queue = yield* makeQueue({ rateLimiter: RateLimiter.exponential({ base: "1 millis", max: "1 second" }) })
        yield* queue.addRateLimited("one")
        yield* queue.addRateLimited("one")
        assert.strictEqual(yield* queue.numRequeues("one"), 2)
        assert.strictEqual(yield* queue.len, 0)
        yield* TestClock.adjust("1 millis")
        assert.strictEqual(yield* queue.len, 1, "the 1 ms delay wins: a waiting key only moves earlier")
        assert.strictEqual(yield* queue.get, "one")

        yield* queue.addRateLimited("two")
        yield* TestClock.adjust("1 millis")
        assert.strictEqual(yield* queue.len, 1)
        yield* queue.process(() => Effect.void)
        yield* queue.addRateLimited("two")
        yield* TestClock.adjust("1 millis")
        assert.strictEqual(yield* queue.len, 0, "second failure of two waits 2 ms")
        yield* TestClock.adjust("1 millis")
        assert.strictEqual(yield* queue.len, 1)
        assert.strictEqual(yield* queue.numRequeues("two"), 2)

        yield* queue.forget("one")
        assert.strictEqual(yield* queue.numRequeues("one"), 0)
        yield* queue.done("one")
        yield* queue.addRateLimited("one")
        yield* TestClock.adjust("1 millis")
        assert.strictEqual(yield* queue.len, 2, "after Forget, one's next failure waits 1 ms again")
      })
  )

  it.effect("the default queue limiter is defaultController: 5 ms for a first failure", () =>
    Effect.gen(function*() {
      const queue = yield* makeQueue()
      yield* queue.addRateLimited("a")
      yield* TestClock.adjust("4 millis")
      assert.strictEqual(yield* queue.len, 0)
      yield* TestClock.adjust("1 millis")
      assert.strictEqual(yield* queue.len, 1)
    }))

  it.effect("rateLimited with after takes the shorter delay (controller-runtime)", () =>
    Effect.gen(function*() {
      const queue = yield* makeQueue({
        rateLimiter: RateLimiter.fastSlow({ fast: "1 second", slow: "1 hour", maxFast: 1 })
      })
      yield* queue.add("a", { rateLimited: true, after: "10 seconds" }) // the limiter's 1 s
      yield* TestClock.adjust("1 second")
      assert.deepStrictEqual(yield* drain(queue), ["a"])
      yield* queue.addRateLimited("b") // 1 s
      yield* TestClock.adjust("1 second")
      assert.deepStrictEqual(yield* drain(queue), ["b"])
      yield* queue.add("b", { rateLimited: true, after: "2 seconds" }) // the limiter says 1 h
      yield* TestClock.adjust("1999 millis")
      assert.strictEqual(yield* queue.len, 0)
      yield* TestClock.adjust("1 millis")
      assert.strictEqual(yield* queue.len, 1)
      assert.strictEqual(yield* queue.numRequeues("b"), 2)
    }))

  it.effect("a rate-limited add after shutdown is ignored and counts no failure", () =>
    Effect.gen(function*() {
      const queue = yield* makeQueue()
      yield* queue.shutdown
      yield* queue.addRateLimited("a")
      yield* queue.add("b", { rateLimited: true })
      assert.strictEqual(yield* queue.numRequeues("a"), 0)
      assert.strictEqual(yield* queue.numRequeues("b"), 0)
    }))

  it.effect("addRateLimited keeps the priority it is given", () =>
    Effect.gen(function*() {
      const queue = yield* makeQueue({ rateLimiter: RateLimiter.exponential({ base: "1 second" }) })
      yield* queue.add("low")
      yield* queue.addRateLimited("high", { priority: 5 })
      assert.deepStrictEqual(yield* queue.getWithPriority, { key: "low", priority: 0 })
      yield* TestClock.adjust("1 second")
      assert.deepStrictEqual(yield* queue.getWithPriority, { key: "high", priority: 5 })
    }))
})

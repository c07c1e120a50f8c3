/**
 * Client-side rate limiting: the token bucket's arithmetic (pure, as golang.org/x/time/rate computes it),
 * the limiter under TestClock, and one Client against the embedded ApiServer under TestClock.
 */
import * as ApiServer from "@effect-informers/testkit/ApiServer"
import { assert, describe, it } from "@effect/vitest"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as TestClock from "effect/testing/TestClock"
import * as Client from "../../../src/Client.js"
import { makeLimiter, TokenBucket, unlimited } from "../../../src/internal/tokenBucket.js"
import * as Resource from "../../../src/Resource.js"
import { eventually } from "../../fixtures/index.js"
import { clientLayer, realSleep } from "./fixtures.js"

describe("TokenBucket (pure)", () => {
  it("starts full: burst tokens at once, then one per 1/qps", () => {
    const bucket = new TokenBucket(5, 10)
    const delays = Array.from({ length: 13 }, () => bucket.reserve(1000).delay)
    assert.deepStrictEqual(delays, [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 200, 400, 600])
  })

  it("refills continuously at qps, never above burst", () => {
    const bucket = new TokenBucket(5, 10)
    for (let i = 0; i < 10; i++) bucket.reserve(0)
    assert.strictEqual(bucket.available(0), 0)
    assert.closeTo(bucket.available(100), 0.5, 1e-9)
    assert.closeTo(bucket.available(1000), 5, 1e-9)
    assert.strictEqual(bucket.available(60_000), 10)
    // after a long pause: a full burst again
    const delays = Array.from({ length: 11 }, () => bucket.reserve(60_000).delay)
    assert.deepStrictEqual(delays.slice(0, 10), Array(10).fill(0))
    assert.strictEqual(delays[10], 200)
  })

  it("steady state: one request per 1/qps, whatever qps (no whole-millisecond rounding)", () => {
    for (const qps of [3, 7, 2500]) {
      const bucket = new TokenBucket(qps, 1)
      bucket.reserve(0)
      const next = bucket.reserve(0)
      assert.closeTo(next.delay, 1000 / qps, 1e-9)
      assert.closeTo(bucket.reserve(next.timeToAct).delay, 1000 / qps, 1e-9)
    }
  })

  it("reservations are served in order: each waits for the ones before it", () => {
    const bucket = new TokenBucket(10, 1)
    const times = [0, 0, 0, 50].map((now) => bucket.reserve(now).timeToAct)
    assert.deepStrictEqual(times, [0, 100, 200, 300])
  })

  it("cancel: the last reservation's token comes back; one with later reservations gives back what they did not use", () => {
    const bucket = new TokenBucket(10, 1)
    bucket.reserve(0)
    const waiting = bucket.reserve(0) // at 100
    bucket.cancel(waiting, 10)
    assert.strictEqual(bucket.reserve(10).timeToAct, 100)
    const a = bucket.reserve(10) // at 200
    bucket.reserve(10) // at 300
    bucket.cancel(a, 20) // a later reservation counted on a's token: nothing is given back
    assert.strictEqual(bucket.reserve(20).timeToAct, 400)
    // a reservation whose time has come is not cancelled
    const due = bucket.reserve(20)
    bucket.cancel(due, due.timeToAct)
    assert.strictEqual(bucket.reserve(due.timeToAct).timeToAct, due.timeToAct + 100)
  })
})

describe("makeLimiter (TestClock)", () => {
  it.effect("burst at once, then qps: 13 takes of qps 5 burst 10 end at 600 ms", () =>
    Effect.gen(function*() {
      const limiter = makeLimiter(5, 10)
      const done: Array<number> = []
      const fiber = yield* Effect.forkChild(Effect.forEach(
        Array.from({ length: 13 }),
        () =>
          Effect.andThen(
            limiter.take,
            Effect.flatMap(Clock.currentTimeMillis, (now) => Effect.sync(() => done.push(now)))
          ),
        { concurrency: "unbounded" }
      ))
      yield* TestClock.adjust(0)
      assert.strictEqual(done.length, 10)
      yield* TestClock.adjust(199)
      assert.strictEqual(done.length, 10)
      yield* TestClock.adjust(1)
      assert.strictEqual(done.length, 11)
      yield* TestClock.adjust(400)
      yield* Fiber.join(fiber)
      assert.deepStrictEqual(done, [...Array(10).fill(0), 200, 400, 600])
    }))

  it.effect("an interrupted wait gives its token back", () =>
    Effect.gen(function*() {
      const limiter = makeLimiter(1, 1)
      yield* limiter.take
      const waiting = yield* Effect.forkChild(limiter.take)
      yield* TestClock.adjust(100)
      yield* Fiber.interrupt(waiting)
      const next = yield* Effect.forkChild(limiter.take)
      yield* TestClock.adjust(899)
      assert.isUndefined(next.pollUnsafe())
      yield* TestClock.adjust(1)
      assert.isTrue(Exit.isSuccess(yield* Fiber.await(next)))
    }))

  it.effect("qps Infinity: no limiter", () =>
    Effect.gen(function*() {
      assert.strictEqual(makeLimiter(Infinity, 1), unlimited)
      const limiter = makeLimiter(Infinity, 10)
      yield* Effect.forEach(Array.from({ length: 1000 }), () => limiter.take)
    }))

  it("a qps or burst out of range is a configuration error", () => {
    for (const [qps, burst] of [[0, 10], [-1, 10], [Number.NaN, 10], [5, 0], [5, 1.5]] as const) {
      assert.throws(() => makeLimiter(qps, burst), RangeError)
    }
  })
})

describe("Client rate limiting", () => {
  it.effect("defaults (5 qps, burst 10): 15 gets, 10 sent at once, then one per 200 ms of the TestClock", () =>
    Effect.gen(function*() {
      const server = yield* Effect.orDie(ApiServer.make())
      yield* server.objects.create(Resource.configMaps, { metadata: { name: "cm", namespace: "default" } })
      // the Client's own options: the defaults
      const client = yield* Effect.provide(Client.Client, clientLayer(server.url, { qps: Client.defaultQps }))
      assert.strictEqual(Client.defaultQps, 5)
      assert.strictEqual(Client.defaultBurst, 10)
      const gets = () => Effect.map(server.stats, (stats) => stats.requestsByVerb.get ?? 0)
      const fiber = yield* Effect.forkChild(
        Effect.forEach(Array.from({ length: 15 }), () => client.get(Resource.configMaps, "cm"), {
          concurrency: "unbounded"
        })
      )
      yield* TestClock.adjust(0)
      yield* eventually(Effect.map(gets(), (n) => n === 10), { what: "10 gets", interval: 5, clock: "real" })
      // and no more, however long the requests have (in real time) while the TestClock stands still
      yield* realSleep(50)
      assert.strictEqual(yield* gets(), 10)
      yield* TestClock.adjust(199)
      yield* realSleep(50)
      assert.strictEqual(yield* gets(), 10)
      yield* TestClock.adjust(1)
      yield* eventually(Effect.map(gets(), (n) => n === 11), { what: "11 gets", interval: 5, clock: "real" })
      yield* TestClock.adjust(800)
      const results = yield* Fiber.join(fiber)
      assert.strictEqual(results.length, 15)
      assert.strictEqual(yield* gets(), 15)
    }))

  it.effect("qps Infinity: no wait", () =>
    Effect.gen(function*() {
      const server = yield* Effect.orDie(ApiServer.make())
      yield* server.objects.create(Resource.configMaps, { metadata: { name: "cm", namespace: "default" } })
      const client = yield* Effect.provide(Client.Client, clientLayer(server.url, { qps: Infinity }))
      yield* Effect.forEach(Array.from({ length: 30 }), () => client.get(Resource.configMaps, "cm"))
    }))

  it.effect("make dies on a qps out of range", () =>
    Effect.gen(function*() {
      const exit = yield* Effect.exit(
        Effect.provide(Client.Client, clientLayer("http://127.0.0.1:1", { qps: 0 }))
      )
      assert.isTrue(Exit.isFailure(exit) && exit.cause.reasons.length === 1 && exit.cause.reasons[0]._tag === "Die")
    }))
})

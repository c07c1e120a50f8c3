/**
 * Reflector: backoff between failed lists and watches.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Schedule from "effect/Schedule"
import * as FakeListerWatcher from "../../../src/FakeListerWatcher.js"
import * as Reflector from "../../../src/Reflector.js"
import { advance, pod, serverError, settle, tooManyRequests, withFixedRandom } from "../../fixtures/index.js"
import { baseAt, errorLog, inRange, kinds, now, recordingStore, stepper, timed } from "./fixtures.js"

describe("Reflector", () => {
  describe("backoff", () => {
    const failure = serverError()

    it.effect("defaultBackoff waits in [base, 2·base) for base 0.8, 1.6, 3.2, 6.4, 12.8, 25.6 s, then 30 s forever", () =>
      Effect.gen(function*() {
        for (let run = 0; run < 5; run++) {
          const step = stepper(Reflector.defaultBackoff)
          let at = 0
          for (let i = 0; i < 40; i++) {
            const delay = yield* step(at, failure)
            inRange(delay, baseAt(i), 2 * baseAt(i), `run ${run} step ${i}`)
            at += delay
          }
        }
      }))

    it.effect("defaultBackoff: still [30, 60) s after half a day of continuous failures (the exponential overflows to infinity)", () =>
      Effect.gen(function*() {
        const step = stepper(Reflector.defaultBackoff)
        let at = 0
        for (let i = 0; i < 1100; i++) {
          const delay = yield* step(at, failure)
          if (i >= 6) inRange(delay, 30000, 60000, `step ${i}`)
          at = Math.ceil(at + delay)
        }
      }))

    it.effect("defaultBackoff: the jitter's bounds give exactly base and just under 2·base", () =>
      Effect.gen(function*() {
        const run = (random: number) =>
          Effect.gen(function*() {
            const step = stepper(Reflector.defaultBackoff)
            const delays: Array<number> = []
            let at = 0
            for (let i = 0; i < 10; i++) {
              const delay = yield* step(at, failure)
              delays.push(delay)
              at += delay
            }
            return delays
          }).pipe(withFixedRandom(random))
        assert.deepStrictEqual(yield* run(0), [800, 1600, 3200, 6400, 12800, 25600, 30000, 30000, 30000, 30000])
        const high = yield* run(0.999)
        high.forEach((delay, i) => inRange(delay, 2 * baseAt(i) * 0.999, 2 * baseAt(i), `step ${i}`))
      }))

    it.effect("defaultBackoff resets after more than 2 minutes without a failure", () =>
      Effect.gen(function*() {
        for (let run = 0; run < 10; run++) {
          const step = stepper(Reflector.defaultBackoff)
          let at = 0
          let last = 0
          for (let i = 0; i < 8; i++) {
            last = at
            // Whole milliseconds, as the clock reports them (no floating-point drift in the 2-minute check).
            at = Math.ceil(at + (yield* step(at, failure)))
          }
          // Exactly 2 minutes after the last failure: not yet healthy.
          last += 120_000
          inRange(yield* step(last, failure), 30000, 60000, "2 minutes after")
          // More than 2 minutes: back to the first step, then growing again.
          last += 120_001
          const first = yield* step(last, failure)
          inRange(first, 800, 1600, "after 2 minutes of health")
          inRange(yield* step(last + first, failure), 1600, 3200, "the step after the reset")
        }
      }))

    it.effect("defaultBackoff never resets while failures keep coming less than 2 minutes apart", () =>
      Effect.gen(function*() {
        const step = stepper(Reflector.defaultBackoff)
        for (let i = 0; i < 40; i++) {
          inRange(yield* step(i * 119_999, failure), baseAt(i), 2 * baseAt(i), `step ${i}`)
        }
      }))

    it.effect("defaultBackoff: a 429's Retry-After is a lower bound, even on the first step", () =>
      Effect.gen(function*() {
        const first = stepper(Reflector.defaultBackoff)
        assert.strictEqual(yield* first(0, tooManyRequests(25)), 25_000)

        // Without Retry-After a 429 is an ordinary failure.
        inRange(yield* stepper(Reflector.defaultBackoff)(0, tooManyRequests()), 800, 1600, "429 without Retry-After")

        // At the cap: the longer of the two; a short Retry-After does not shorten the backoff.
        const step = stepper(Reflector.defaultBackoff)
        let at = 0
        for (let i = 0; i < 8; i++) at += yield* step(at, failure)
        const withRetryAfter = yield* step(at, tooManyRequests(45))
        inRange(withRetryAfter, 30_000, 60_000, "Retry-After 45 s at the cap")
        at += withRetryAfter
        inRange(yield* step(at, tooManyRequests(1)), 30_000, 60_000, "Retry-After 1 s at the cap")
        // A Retry-After longer than the cap is cut to defaultMaxRetryAfter (30 s); 999999 s would be 11.6 days.
        assert.strictEqual(yield* stepper(Reflector.defaultBackoff)(0, tooManyRequests(300)), 30_000)
        assert.strictEqual(yield* stepper(Reflector.defaultBackoff)(0, tooManyRequests(999999)), 30_000)
        // honourRetryAfterUpTo sets another cap
        const upTo = stepper(Reflector.honourRetryAfterUpTo("5 minutes")(Schedule.spaced("1 second")))
        assert.strictEqual(yield* upTo(0, tooManyRequests(300)), 300_000)
        assert.strictEqual(yield* upTo(0, tooManyRequests(999999)), 300_000)
      }))

    it.effect("Retry-After end to end: a re-watch refused with 429 (Retry-After 20 s) is retried after exactly 20 s", () =>
      Effect.gen(function*() {
        const fake = yield* FakeListerWatcher.make({ initial: [pod("a")] })
        const { log, lw } = timed(fake)
        const { store } = yield* recordingStore()
        const errors = errorLog()
        yield* Reflector.make(lw, store, { watchList: false, onError: errors.onError })
        yield* settle
        yield* advance("1 second")
        yield* fake.failNextWatch(tooManyRequests(20))
        yield* fake.closeWatches
        yield* settle
        const refusedAt = yield* now
        assert.deepStrictEqual(kinds(log.map((t) => t.request)), ["List", "Watch", "Watch"])
        assert.deepStrictEqual(errors.summary(), ["watch:StatusError(TooManyRequests)"])
        yield* advance(19_999)
        assert.strictEqual(log.length, 3)
        yield* advance(1)
        assert.deepStrictEqual(kinds(log.map((t) => t.request)), ["List", "Watch", "Watch", "Watch"])
        assert.strictEqual(log[3].at, refusedAt + 20_000)
        assert.strictEqual(yield* fake.openWatches, 1)
      }))
  })
})

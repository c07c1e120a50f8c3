import { assert, describe, it } from "@effect/vitest"
import { Duration, Effect, Random, References, Schedule } from "effect"
import * as Chaos from "../src/Chaos.js"

// The short form of `npm run chaos`: three seeds of churn and injected faults against the embedded API
// server over HTTP. A faster backoff than the default keeps the settle phase short.
const backoff = Schedule.min([Schedule.exponential("100 millis"), Schedule.spaced("1 second")]).pipe(
  Schedule.modifyDelay(({ duration }) =>
    Effect.map(Random.next, (random) => Duration.millis(Duration.toMillis(duration) * (1 + random)))
  )
)

describe("fault campaign (short form)", () => {
  for (const seed of [1, 2, 3]) {
    it.live(
      `seed ${seed}: caches, handler replays and monotonic versions hold; no fiber outlives the informers`,
      () =>
        Effect.gen(function*() {
          const result = yield* Chaos.run({
            seed,
            duration: "6 seconds",
            pods: 300,
            namespaces: 5,
            churn: 150,
            settleTimeout: "30 seconds",
            backoff
          }).pipe(Effect.provideService(References.MinimumLogLevel, "None"))
          assert.deepStrictEqual(result.problems, [])
          assert.isTrue(result.passed)
          assert.isAbove(result.faults + result.compactions, 0, "no fault took effect")
          assert.isAbove(result.events, 0)
          // the supervisor did see the informers' fibers (Reflectors, processing loops, handlers) running
          assert.isAtLeast(result.fibersRunning, 6)
        }),
      60_000
    )
  }
})

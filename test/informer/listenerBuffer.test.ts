import { assert, describe, it } from "@effect/vitest"
import { Arbitrary, Effect, Exit, Fiber } from "effect"
import { BufferClosedError, unbounded } from "../../src/internal/informer/listenerBuffer.js"
import { integer, oneof } from "../fixtures/arbitrary.js"

type Step = { readonly offer: number } | { readonly take: number }

describe("listenerBuffer.unbounded", () => {
  it.prop(
    "property: takes return every offer once, in order, at most `max` at a time; size is exact",
    [
      Arbitrary.array(
        oneof<Step>(
          Arbitrary.all({ offer: integer({ min: 1, max: 3000 }) }),
          Arbitrary.all({ take: integer({ min: 1, max: 5000 }) })
        ),
        { maxLength: 30 }
      )
    ],
    ([steps]) => {
      const buffer = Effect.runSync(unbounded<number>())
      const taken: Array<number> = []
      let offered = 0
      for (const step of steps) {
        if ("offer" in step) {
          for (let i = 0; i < step.offer; i++) assert.strictEqual(buffer.offer(offered++), 0)
        } else if (buffer.size() > 0) {
          const before = buffer.size()
          const batch = Effect.runSync(buffer.take(step.take))
          assert.strictEqual(batch.length, Math.min(before, step.take))
          assert.strictEqual(buffer.size(), before - batch.length)
          taken.push(...batch)
        }
        assert.strictEqual(buffer.size(), offered - taken.length)
      }
      while (buffer.size() > 0) taken.push(...Effect.runSync(buffer.take(1000)))
      assert.deepStrictEqual(taken, Array.from({ length: offered }, (_, i) => i))
    },
    // size: arrays up to their maxLength, as fast-check generated them when maxLength was given
    { arbitrary: { runs: 60, size: 30 } }
  )

  it.effect("a waiting taker wakes on an offer and takes everything offered before it runs, up to max", () =>
    Effect.gen(function*() {
      const buffer = yield* unbounded<number>()
      const taker = yield* Effect.forkChild(buffer.take(3))
      yield* Effect.yieldNow
      assert.strictEqual(buffer.size(), 0)
      for (let i = 0; i < 5; i++) buffer.offer(i)
      assert.deepStrictEqual(yield* Fiber.join(taker), [0, 1, 2])
      assert.deepStrictEqual(yield* buffer.take(10), [3, 4])
    }))

  it.effect("shutdown drops the backlog and fails the waiting and later takers with BufferClosedError; offers are ignored", () =>
    Effect.gen(function*() {
      const buffer = yield* unbounded<number>()
      const taker = yield* Effect.forkChild(buffer.take(3))
      yield* Effect.yieldNow
      yield* buffer.shutdown
      assert.deepStrictEqual(yield* Fiber.await(taker), Exit.fail(new BufferClosedError()))
      buffer.offer(1)
      assert.strictEqual(buffer.size(), 0)
      assert.deepStrictEqual(yield* Effect.exit(buffer.take(1)), Exit.fail(new BufferClosedError()))
    }))

  it.effect("an interrupted taker leaves the buffer usable", () =>
    Effect.gen(function*() {
      const buffer = yield* unbounded<number>()
      const taker = yield* Effect.forkChild(buffer.take(3))
      yield* Effect.yieldNow
      yield* Fiber.interrupt(taker)
      buffer.offer(7)
      assert.deepStrictEqual(yield* buffer.take(3), [7])
    }))
})

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

  it.prop(
    "property: with batches (offerAll) between single offers, takes return every notification once, in order, " +
      "1 to `max` at a time; size is exact; an offered batch is neither copied when taken whole nor changed",
    [
      Arbitrary.array(
        oneof<Step | { readonly batch: number }>(
          Arbitrary.all({ offer: integer({ min: 1, max: 50 }) }),
          Arbitrary.all({ batch: integer({ min: 0, max: 300 }) }),
          Arbitrary.all({ take: integer({ min: 1, max: 400 }) })
        ),
        { maxLength: 40 }
      )
    ],
    ([steps]) => {
      const buffer = Effect.runSync(unbounded<number>())
      const taken: Array<number> = []
      const batches: Array<readonly [ReadonlyArray<number>, string]> = []
      let offered = 0
      for (const step of steps) {
        if ("offer" in step) {
          for (let i = 0; i < step.offer; i++) assert.strictEqual(buffer.offer(offered++), 0)
        } else if ("batch" in step) {
          const batch = Array.from({ length: step.batch }, () => offered++)
          batches.push([batch, JSON.stringify(batch)])
          assert.strictEqual(buffer.offerAll(batch), 0)
        } else if (buffer.size() > 0) {
          const before = buffer.size()
          const batch = Effect.runSync(buffer.take(step.take))
          assert.isTrue(batch.length >= 1 && batch.length <= Math.min(before, step.take))
          assert.strictEqual(buffer.size(), before - batch.length)
          const whole = batches.find(([b]) => b === batch)
          if (whole === undefined) assert.isTrue(batch.length <= step.take)
          taken.push(...batch)
        }
        assert.strictEqual(buffer.size(), offered - taken.length)
      }
      while (buffer.size() > 0) taken.push(...Effect.runSync(buffer.take(1000)))
      assert.deepStrictEqual(taken, Array.from({ length: offered }, (_, i) => i))
      for (const [batch, json] of batches) assert.strictEqual(JSON.stringify(batch), json)
    },
    { arbitrary: { runs: 60, size: 40 } }
  )

  it.effect("a batch offered whole is handed over whole (the same array) when it fits in a take", () =>
    Effect.gen(function*() {
      const buffer = yield* unbounded<number>()
      const batch = [1, 2, 3]
      buffer.offerAll(batch)
      buffer.offer(4)
      assert.strictEqual(yield* buffer.take(10), batch)
      assert.deepStrictEqual(yield* buffer.take(10), [4])
      assert.deepStrictEqual(batch, [1, 2, 3])
    }))

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

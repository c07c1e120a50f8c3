/**
 * WorkQueue delays: ports of client-go's delaying_queue_test.go (names kept; the fake clock is TestClock),
 * then the one-entry-per-key rules (controller-runtime's), delays while processing, and shutdown.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as TestClock from "effect/testing/TestClock"
import { drain, isBlocked, makeQueue } from "./fixtures.js"

describe("delaying_queue_test", () => {
  it.effect("TestSimpleQueue: AddAfter(foo, 50ms) -> Len 0; step 60ms -> Len 1; after Get/Done, 10 s more add nothing", () =>
    Effect.gen(function*() {
      const queue = yield* makeQueue()
      yield* queue.addAfter("foo", "50 millis")
      assert.strictEqual(yield* queue.len, 0)
      yield* TestClock.adjust("60 millis")
      assert.strictEqual(yield* queue.len, 1)
      assert.deepStrictEqual(yield* drain(queue), ["foo"])
      yield* TestClock.adjust("10 seconds")
      assert.strictEqual(yield* queue.len, 0)
      assert.strictEqual(queue.unsafeEntryCount(), 0)
    }))

  it.effect(
    "TestDeduping: AddAfter(foo,50ms), (foo,70ms); step 60ms -> one; 20ms more -> nothing; (foo,50ms), (foo,30ms); step 40ms -> one; 20ms -> nothing",
    () =>
      Effect.gen(function*() {
        const queue = yield* makeQueue()
        yield* queue.addAfter("foo", "50 millis")
        yield* queue.addAfter("foo", "70 millis")
        assert.strictEqual(yield* queue.len, 0)
        yield* TestClock.adjust("60 millis")
        assert.deepStrictEqual(yield* drain(queue), ["foo"])
        yield* TestClock.adjust("20 millis")
        assert.strictEqual(yield* queue.len, 0, "the 70 ms add merged into the earlier one")

        yield* queue.addAfter("foo", "50 millis")
        yield* queue.addAfter("foo", "30 millis")
        assert.strictEqual(yield* queue.len, 0)
        yield* TestClock.adjust("40 millis")
        assert.deepStrictEqual(yield* drain(queue), ["foo"])
        yield* TestClock.adjust("20 millis")
        assert.strictEqual(yield* queue.len, 0, "the 50 ms add moved to 30 ms")
      })
  )

  it.effect("TestAddTwoFireEarly: foo@1s, bar@50ms; step 60ms -> bar; AddAfter(baz, 2s); step 1s -> foo; step 2s -> baz", () =>
    Effect.gen(function*() {
      const queue = yield* makeQueue()
      yield* queue.addAfter("foo", "1 second")
      yield* queue.addAfter("bar", "50 millis")
      assert.strictEqual(yield* queue.len, 0)
      yield* TestClock.adjust("60 millis")
      assert.strictEqual(yield* queue.len, 1)
      assert.strictEqual(yield* queue.get, "bar")
      yield* queue.addAfter("baz", "2 seconds")
      yield* TestClock.adjust("1 second")
      assert.strictEqual(yield* queue.len, 1)
      assert.strictEqual(yield* queue.get, "foo")
      yield* TestClock.adjust("2 seconds")
      assert.strictEqual(yield* queue.len, 1)
      assert.strictEqual(yield* queue.get, "baz")
    }))

  it.effect("TestCopyShifting: foo@1s, bar@500ms, baz@250ms; step 2s -> Get order baz, bar, foo", () =>
    Effect.gen(function*() {
      const queue = yield* makeQueue()
      yield* queue.addAfter("foo", "1 second")
      yield* queue.addAfter("bar", "500 millis")
      yield* queue.addAfter("baz", "250 millis")
      assert.strictEqual(yield* queue.len, 0)
      yield* TestClock.adjust("2 seconds")
      assert.strictEqual(yield* queue.len, 3)
      assert.deepStrictEqual(yield* drain(queue), ["baz", "bar", "foo"])
    }))
})

describe("WorkQueue delays", () => {
  it.effect("a delay of zero or less is an immediate add", () =>
    Effect.gen(function*() {
      const queue = yield* makeQueue()
      yield* queue.addAfter("zero", 0)
      yield* queue.addAfter("negative", "-5 seconds")
      yield* queue.add("after-zero", { after: "0 millis" })
      assert.deepStrictEqual(yield* drain(queue), ["zero", "negative", "after-zero"])
      assert.strictEqual(queue.unsafeDelayedCount(), 0)
    }))

  it.effect("a waiting worker is woken when the delay passes, not before", () =>
    Effect.gen(function*() {
      const queue = yield* makeQueue()
      const worker = yield* Effect.forkChild(queue.get)
      yield* queue.addAfter("a", "1 second")
      yield* TestClock.adjust("999 millis")
      assert.isTrue(yield* isBlocked(worker))
      yield* TestClock.adjust("1 millis")
      assert.strictEqual(yield* Fiber.join(worker), "a")
    }))

  it.effect("keys with equal ready times come out in the order of their delayed adds", () =>
    Effect.gen(function*() {
      const queue = yield* makeQueue()
      for (const key of ["c", "a", "b"]) yield* queue.addAfter(key, "1 second")
      yield* TestClock.adjust("1 second")
      assert.deepStrictEqual(yield* drain(queue), ["c", "a", "b"])
    }))

  it.effect("a key that becomes ready goes behind the keys already ready (ordered by readiness, not by add)", () =>
    Effect.gen(function*() {
      const queue = yield* makeQueue()
      yield* queue.addAfter("delayed", "1 second")
      yield* TestClock.adjust("1 second")
      yield* queue.add("later")
      assert.deepStrictEqual(yield* drain(queue), ["delayed", "later"])
      yield* queue.addAfter("delayed", "1 second")
      yield* queue.add("now")
      yield* TestClock.adjust("1 second")
      assert.deepStrictEqual(yield* drain(queue), ["now", "delayed"])
    }))

  it.effect("a plain add of a delayed key makes it ready now and cancels the delay (no second round later)", () =>
    Effect.gen(function*() {
      const queue = yield* makeQueue()
      yield* queue.addAfter("a", "1 second")
      yield* queue.add("a")
      assert.strictEqual(yield* queue.len, 1)
      assert.strictEqual(queue.unsafeDelayedCount(), 0)
      assert.deepStrictEqual(yield* drain(queue), ["a"])
      yield* TestClock.adjust("2 seconds")
      assert.strictEqual(yield* queue.len, 0)
      assert.strictEqual(queue.unsafeEntryCount(), 0)
    }))

  it.effect("a delay asked for a key that is already ready is ignored", () =>
    Effect.gen(function*() {
      const queue = yield* makeQueue()
      yield* queue.add("a")
      yield* queue.addAfter("a", "1 second")
      assert.strictEqual(queue.unsafeDelayedCount(), 0)
      assert.deepStrictEqual(yield* drain(queue), ["a"])
      yield* TestClock.adjust("2 seconds")
      assert.strictEqual(yield* queue.len, 0)
    }))

  it.effect("a key delayed while processing: ready during processing -> queued at done; ready after -> when due", () =>
    Effect.gen(function*() {
      const queue = yield* makeQueue()
      yield* queue.add("fast")
      yield* queue.add("slow")
      assert.strictEqual(yield* queue.get, "fast")
      assert.strictEqual(yield* queue.get, "slow")
      yield* queue.addAfter("fast", "1 second")
      yield* queue.addAfter("slow", "1 second")
      yield* queue.done("fast")
      assert.strictEqual(yield* queue.len, 0, "fast waits for its delay")
      yield* TestClock.adjust("1 second")
      assert.strictEqual(yield* queue.len, 1, "fast is ready; slow is due but still processing")
      assert.strictEqual(yield* queue.get, "fast")
      yield* queue.done("slow")
      assert.strictEqual(yield* queue.len, 1)
      assert.strictEqual(yield* queue.get, "slow")
    }))

  it.effect("the timer re-arms for an earlier key, and still fires for the later one", () =>
    Effect.gen(function*() {
      const queue = yield* makeQueue()
      yield* queue.addAfter("late", "1 hour")
      yield* queue.addAfter("early", "1 second")
      yield* TestClock.adjust("1 second")
      assert.deepStrictEqual(yield* drain(queue), ["early"])
      yield* TestClock.adjust("59 minutes")
      assert.strictEqual(yield* queue.len, 0)
      yield* TestClock.adjust("59 seconds")
      assert.strictEqual(yield* queue.len, 1)
      assert.deepStrictEqual(yield* drain(queue), ["late"])
    }))

  it.effect("a delayed key keeps the highest priority of its adds", () =>
    Effect.gen(function*() {
      const queue = yield* makeQueue()
      yield* queue.add("a", { after: "1 second", priority: 5 })
      yield* queue.add("a", { after: "2 seconds", priority: 1 })
      yield* queue.add("b")
      yield* TestClock.adjust("1 second")
      assert.deepStrictEqual(yield* queue.getWithPriority, { key: "a", priority: 5 })
    }))

  it.effect("shutdown drops the delayed keys: they never become ready", () =>
    Effect.gen(function*() {
      const queue = yield* makeQueue()
      yield* queue.addAfter("a", "1 second")
      yield* queue.add("b")
      yield* queue.get // b processing
      yield* queue.addAfter("b", "1 second")
      yield* queue.shutdown
      assert.strictEqual(queue.unsafeDelayedCount(), 0)
      yield* TestClock.adjust("2 seconds")
      assert.strictEqual(yield* queue.len, 0)
      yield* queue.done("b")
      assert.strictEqual(yield* queue.len, 0)
      assert.strictEqual(queue.unsafeEntryCount(), 0)
      assert.strictEqual((yield* Effect.flip(queue.get))._tag, "WorkQueueShutdownError")
    }))

  it.effect("many delays, one timer: 1,000 keys at 100 times come out by time, then by order of add", () =>
    Effect.gen(function*() {
      const queue = yield* makeQueue()
      const delays = Array.from({ length: 1000 }, (_, i) => Math.floor(((i * 7919) % 1000) / 10))
      for (let i = 0; i < delays.length; i++) yield* queue.addAfter(`k${i}`, delays[i] + 1)
      yield* TestClock.adjust("50 millis")
      const first = yield* drain(queue)
      assert.strictEqual(first.length, 500)
      yield* TestClock.adjust("1 second")
      const all = [...first, ...(yield* drain(queue))]
      assert.strictEqual(all.length, 1000)
      const index = (key: string) => Number(key.slice(1))
      for (let i = 1; i < all.length; i++) {
        const [a, b] = [index(all[i - 1]), index(all[i])]
        assert.isTrue(delays[a] < delays[b] || (delays[a] === delays[b] && a < b), `${all[i - 1]} before ${all[i]}`)
      }
    }))
})

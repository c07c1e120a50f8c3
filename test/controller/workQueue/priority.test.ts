/**
 * WorkQueue priorities: ports of controller-runtime's priorityqueue_test.go (titles keep its wording).
 * Where this queue follows client-go instead, the title says so: a key added while it is processing is
 * queued at its `done` (controller-runtime keeps its place from the re-add) and is not in `len` until
 * then; after shutdown the queued keys are still handed out (controller-runtime drops them).
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as TestClock from "effect/testing/TestClock"
import * as RateLimiter from "../../../src/RateLimiter.js"
import * as WorkQueue from "../../../src/WorkQueue.js"
import { assertMetrics, drain, forkAll, isBlocked, makeQueue, uniqueName } from "./fixtures.js"

/** A queue with metrics under a name no other test uses. */
const named = (options: WorkQueue.Options<string> = {}) =>
  Effect.map(makeQueue({ ...options, name: uniqueName("priority") }), (queue) => ({ queue, name: queue.name! }))

/** A small deterministic generator (tests must not depend on Math.random). */
const lcg = (seed: number) => () => {
  seed = (seed * 1103515245 + 12345) % 2147483648
  return seed / 2147483648
}

describe("priorityqueue_test", () => {
  it.effect("returns an item", () =>
    Effect.gen(function*() {
      const { name, queue } = yield* named()
      yield* queue.add("foo")
      assert.deepStrictEqual(yield* queue.getWithPriority, { key: "foo", priority: 0 })
      yield* assertMetrics(name, { depth: 0, adds: 1 })
    }))

  it.effect("returns items in order", () =>
    Effect.gen(function*() {
      const { name, queue } = yield* named()
      yield* queue.add("foo")
      yield* queue.add("bar")
      assert.strictEqual(yield* queue.get, "foo")
      assert.strictEqual(yield* queue.get, "bar")
      yield* assertMetrics(name, { depth: 0, adds: 2 })
    }))

  it.effect("doesn't return an item that is currently locked (depth 1: foo added again while processing; adds 3)", () =>
    Effect.gen(function*() {
      const { name, queue } = yield* named()
      yield* queue.add("foo")
      assert.strictEqual(yield* queue.get, "foo")
      yield* queue.add("foo")
      yield* queue.add("bar")
      assert.strictEqual(yield* queue.get, "bar")
      yield* assertMetrics(name, { depth: 1, adds: 3 })
    }))

  it.effect(
    "returns an item as soon as its unlocked (client-go order: foo, re-added while locked, is queued at Done, behind baz)",
    () =>
      Effect.gen(function*() {
        const { name, queue } = yield* named()
        yield* queue.add("foo")
        assert.strictEqual(yield* queue.get, "foo")
        yield* queue.add("foo")
        yield* queue.add("bar")
        assert.strictEqual(yield* queue.get, "bar")
        yield* queue.add("baz")
        yield* queue.done("foo")
        assert.strictEqual(yield* queue.get, "baz")
        assert.strictEqual(yield* queue.get, "foo")
        yield* assertMetrics(name, { depth: 0, adds: 4 })
      })
  )

  it.effect("de-duplicates items", () =>
    Effect.gen(function*() {
      const { name, queue } = yield* named()
      yield* queue.add("foo")
      yield* queue.add("foo")
      assert.strictEqual(yield* queue.len, 1)
      yield* assertMetrics(name, { depth: 1, adds: 1 })
    }))

  it.effect("enqueues a locked item (Len 0 while it is locked, 1 after Done: client-go's Len)", () =>
    Effect.gen(function*() {
      const { name, queue } = yield* named()
      yield* queue.add("foo")
      assert.strictEqual(yield* queue.len, 1)
      assert.deepStrictEqual(yield* queue.getWithPriority, { key: "foo", priority: 0 })
      yield* queue.add("foo")
      assert.strictEqual(yield* queue.len, 0)
      yield* queue.done("foo")
      assert.strictEqual(yield* queue.len, 1)
      assert.deepStrictEqual(yield* queue.getWithPriority, { key: "foo", priority: 0 })
      yield* assertMetrics(name, { depth: 0, adds: 2 })
    }))

  // foo added at one priority, then at another: handed out once, at the higher
  for (
    const [title, first, second] of [
      ["retains the highest priority", 1, 2],
      ["will not decrease the priority", 2, 1]
    ] as const
  ) {
    it.effect(title, () =>
      Effect.gen(function*() {
        const { name, queue } = yield* named()
        yield* queue.add("foo", { priority: first })
        yield* queue.add("foo", { priority: second })
        assert.deepStrictEqual(yield* queue.getWithPriority, { key: "foo", priority: 2 })
        assert.strictEqual(yield* queue.len, 0)
        yield* assertMetrics(name, { adds: 1 })
      }))
  }

  it.effect("gets pushed to the front if the priority increases", () =>
    Effect.gen(function*() {
      const { name, queue } = yield* named()
      yield* queue.addAll(["foo", "bar", "baz"])
      yield* queue.add("baz", { priority: 1 })
      assert.deepStrictEqual(yield* queue.getWithPriority, { key: "baz", priority: 1 })
      assert.strictEqual(yield* queue.len, 2)
      yield* assertMetrics(name, { depth: 2, adds: 3 })
    }))

  it.effect("retains the lowest after duration", () =>
    Effect.gen(function*() {
      const { name, queue } = yield* named()
      yield* queue.add("foo", { after: 0 })
      yield* queue.add("foo", { after: "1 hour" })
      assert.deepStrictEqual(yield* queue.getWithPriority, { key: "foo", priority: 0 })
      assert.strictEqual(yield* queue.len, 0)
      yield* assertMetrics(name, { depth: 0, adds: 1 })
    }))

  it.effect("doesn't include non-ready items in Len()", () =>
    Effect.gen(function*() {
      const { name, queue } = yield* named()
      yield* queue.add("foo", { after: "1 minute" })
      yield* queue.add("baz")
      yield* queue.add("bar", { after: "1 minute" })
      yield* queue.add("bal")
      assert.strictEqual(yield* queue.len, 2)
      yield* assertMetrics(name, { depth: 2 })
    }))

  it.effect(
    "Get from priority queue might get stuck when the priority queue is shut down (client-go: the queued baz is still handed out, then shutdown every time)",
    () =>
      Effect.gen(function*() {
        const { queue } = yield* named()
        yield* queue.add("baz")
        yield* queue.shutdown
        yield* queue.add("foo", { after: "1 second" })
        assert.strictEqual(yield* queue.get, "baz")
        assert.strictEqual((yield* Effect.flip(queue.getWithPriority))._tag, "WorkQueueShutdownError")
        assert.strictEqual((yield* Effect.flip(queue.getWithPriority))._tag, "WorkQueueShutdownError")
      })
  )

  it.effect("returns many items: 20 rounds of 1,000 adds (10% delayed < 10 ms, the rest random priorities), 100 workers", () =>
    Effect.gen(function*() {
      const { queue } = yield* named()
      const random = lcg(42)
      for (let round = 0; round < 20; round++) {
        for (let i = 0; i < 1000; i++) {
          const rn = Math.floor(random() * 100)
          if (rn < 10) yield* queue.add(`foo${i}`, { after: rn })
          else yield* queue.add(`foo${i}`, { priority: rn })
        }
        yield* TestClock.adjust("10 millis")
        const workers = yield* forkAll(
          Array.from({ length: 100 }, () => Effect.repeat(queue.process(() => Effect.void), { times: 9 }))
        )
        yield* Fiber.join(workers)
        assert.strictEqual(yield* queue.len, 0)
      }
    }))

  it.effect("updates metrics correctly for an item that gets initially added with after and then without", () =>
    Effect.gen(function*() {
      const { name, queue } = yield* named()
      yield* queue.add("foo", { after: "1 hour" })
      assert.strictEqual(yield* queue.len, 0)
      yield* assertMetrics(name, { depth: 0 })
      yield* queue.add("foo")
      assert.strictEqual(yield* queue.len, 1)
      yield* assertMetrics(name, { depth: 1 })
      assert.strictEqual(yield* queue.get, "foo")
      assert.strictEqual(yield* queue.len, 0)
      yield* assertMetrics(name, { depth: 0, adds: 1 })
    }))

  it.effect("updates metrics correctly when an item with after is re-added with higher priority and no after", () =>
    Effect.gen(function*() {
      const { name, queue } = yield* named()
      yield* queue.add("foo", { after: "1 hour", priority: 0 })
      assert.strictEqual(yield* queue.len, 0)
      yield* queue.add("foo", { priority: 1 })
      assert.strictEqual(yield* queue.len, 1)
      yield* assertMetrics(name, { depth: 1 })
      assert.deepStrictEqual(yield* queue.getWithPriority, { key: "foo", priority: 1 })
      assert.strictEqual(yield* queue.len, 0)
      yield* assertMetrics(name, { depth: 0 })
    }))

  it.effect("follows FIFO order in the new priority queue when item priority changes", () =>
    Effect.gen(function*() {
      const { queue } = yield* named()
      yield* queue.add("foo", { priority: 0 })
      yield* queue.add("bar", { priority: 1 })
      yield* queue.add("foo", { priority: 1 })
      assert.strictEqual(yield* queue.len, 2)
      assert.deepStrictEqual(yield* queue.getWithPriority, { key: "bar", priority: 1 })
      assert.strictEqual(yield* queue.len, 1)
      assert.deepStrictEqual(yield* queue.getWithPriority, { key: "foo", priority: 1 })
      assert.strictEqual(yield* queue.len, 0)
    }))

  for (const after of [-1000, 0, 1000]) {
    it.effect(
      `TestHighPriorityItemsAreReturnedBeforeLowPriorityItemMultipleTimes (after=${after}ms): 5 priorities x 1,000 keys -> by priority, then insertion order; retries only for a positive delay`,
      () =>
        Effect.gen(function*() {
          const { name, queue } = yield* named()
          const priorities = [["high", 10], ["upperMiddle", 5], ["middle", 0], ["lowMiddle", -5], ["low", -10]] as const
          for (let i = 0; i < 1000; i++) {
            for (const [label, priority] of priorities) yield* queue.add(`${label}-${i}`, { priority, after })
          }
          if (after > 0) yield* TestClock.adjust(after)
          for (const [label, priority] of priorities) {
            for (let i = 0; i < 1000; i++) {
              assert.deepStrictEqual(yield* queue.getWithPriority, { key: `${label}-${i}`, priority })
            }
          }
          yield* assertMetrics(name, { depth: 0, adds: 5000, retries: after > 0 ? 5000 : 0 })
        })
    )
  }

  it.effect("TestItemIsOnlyReturnedAfterAfterHasPassed: a waiting Get gets foo only once its 1 s has passed", () =>
    Effect.gen(function*() {
      const { name, queue } = yield* named()
      const getter = yield* Effect.forkChild(queue.getWithPriority)
      yield* queue.add("foo", { after: "1 second" })
      yield* TestClock.adjust("999 millis")
      assert.isTrue(yield* isBlocked(getter))
      yield* TestClock.adjust("1 millis")
      assert.deepStrictEqual(yield* Fiber.join(getter), { key: "foo", priority: 0 })
      yield* assertMetrics(name, { depth: 0, adds: 1, retries: 1 })
    }))

  it.effect(
    "TestHighPriorityItemThatBecameReadyIsReturnedBeforeLowPriorityItem: a high-priority key becoming ready beats a waiting low one",
    () =>
      Effect.gen(function*() {
        const { queue } = yield* named()
        yield* queue.add("foo", { priority: -100 })
        yield* queue.add("prio", { priority: 1, after: "1 second" })
        yield* TestClock.adjust("1 second")
        assert.deepStrictEqual(yield* queue.getWithPriority, { key: "prio", priority: 1 })
        assert.deepStrictEqual(yield* queue.getWithPriority, { key: "foo", priority: -100 })
      })
  )

  it.effect("TestItemIsReturnedAsSoonAsPossible: a blocked Get receives a later add at once", () =>
    Effect.gen(function*() {
      const { queue } = yield* named()
      const getter = yield* Effect.forkChild(queue.get)
      assert.isTrue(yield* isBlocked(getter))
      yield* queue.add("foo")
      assert.strictEqual(yield* Fiber.join(getter), "foo")
    }))

  it.effect("TestWaitingItemIsReturnedRightAfterReadWithoutAfter: a delayed key added again without delay is handed out at once", () =>
    Effect.gen(function*() {
      const { name, queue } = yield* named()
      const getter = yield* Effect.forkChild(queue.get)
      yield* queue.add("foo", { after: "1 minute" })
      assert.isTrue(yield* isBlocked(getter))
      yield* queue.add("foo")
      assert.strictEqual(yield* Fiber.join(getter), "foo")
      yield* assertMetrics(name, { adds: 1 })
    }))

  it.effect("TestMultipleItemsWithAfterAreReturnedInCorrectOrder: bar@200ms, foo@1s -> bar then foo", () =>
    Effect.gen(function*() {
      const { queue } = yield* named()
      const getter = yield* Effect.forkChild(Effect.all([queue.get, queue.get]))
      yield* queue.add("foo", { after: "1 second" })
      yield* queue.add("bar", { after: "200 millis" })
      assert.isTrue(yield* isBlocked(getter))
      yield* TestClock.adjust("1 second")
      assert.deepStrictEqual(yield* Fiber.join(getter), ["bar", "foo"])
    }))

  it.effect("TestGetFromPriorityQueueIsUnblockedOnShutdown", () =>
    Effect.gen(function*() {
      const { queue } = yield* named()
      const getter = yield* Effect.forkChild(queue.getWithPriority)
      assert.isTrue(yield* isBlocked(getter))
      yield* queue.shutdown
      const exit = yield* Fiber.await(getter)
      assert.isTrue(Exit.isFailure(exit))
    }))

  it.effect(
    "TestItemsAreInludedInLenAndMetricsOnceTheyAreReady: two delayed + two ready -> Len 2, depth 2; once due 4; twice",
    () =>
      Effect.gen(function*() {
        const { name, queue } = yield* named()
        for (let round = 0; round < 2; round++) {
          yield* queue.add("foo", { after: "500 millis" })
          yield* queue.add("baz")
          yield* queue.add("bar", { after: "500 millis" })
          yield* queue.add("bal")
          assert.strictEqual(yield* queue.len, 2)
          yield* assertMetrics(name, { depth: 2 })
          yield* TestClock.adjust("1 second")
          assert.strictEqual(yield* queue.len, 4)
          yield* assertMetrics(name, { depth: 4 })
          assert.strictEqual((yield* drain(queue)).length, 4)
          yield* assertMetrics(name, { depth: 0 })
        }
      })
  )

  it.effect(
    "TestMetricsAreUpdatedForItemWhoseRequeueAfterExpiredThatGetsAddedAgainWithoutRequeueAfter: one add counted, depth 1 then 0",
    () =>
      Effect.gen(function*() {
        const { name, queue } = yield* named()
        yield* queue.add("foo", { after: "50 millis" })
        yield* TestClock.adjust("50 millis")
        assert.strictEqual(yield* queue.len, 1)
        yield* queue.add("foo")
        assert.strictEqual(yield* queue.len, 1)
        yield* assertMetrics(name, { depth: 1 })
        assert.strictEqual(yield* queue.get, "foo")
        yield* assertMetrics(name, { depth: 0, adds: 1 })
      })
  )

  it.effect(
    "TestWhenAddingMultipleItemsWithRatelimitTrueTheyDontAffectEachOther: exponential 5 ms; bar failed 7 times -> foo after 5 ms, bar after 640 ms",
    () =>
      Effect.gen(function*() {
        const limiter = RateLimiter.exponential({ base: "5 millis", max: "1000 seconds" })
        const { name, queue } = yield* named({ rateLimiter: limiter })
        for (let i = 0; i < 7; i++) yield* queue.addRateLimited("bar").pipe(Effect.andThen(queue.add("bar")))
        yield* drain(queue)
        const getter = yield* Effect.forkChild(Effect.all([queue.get, queue.get]))
        yield* queue.addAll(["foo", "bar"], { rateLimited: true })
        yield* TestClock.adjust("5 millis")
        assert.isTrue(yield* isBlocked(getter))
        assert.strictEqual(yield* queue.numRequeues("foo"), 1)
        yield* TestClock.adjust("634 millis")
        assert.isTrue(yield* isBlocked(getter))
        yield* TestClock.adjust("1 millis")
        assert.deepStrictEqual(yield* Fiber.join(getter), ["foo", "bar"])
        yield* assertMetrics(name, { retries: 9 })
      })
  )

  it.live(
    "TestPriorityQueueDoesNotDeadlockOnShutdownWhileHandingOutItems: 50 rounds of 20 workers adding and getting; all return after ShutDown",
    () =>
      Effect.gen(function*() {
        const random = lcg(7)
        for (let round = 0; round < 50; round++) {
          yield* Effect.scoped(Effect.gen(function*() {
            const queue = yield* makeQueue()
            const worker = Effect.gen(function*() {
              for (;;) {
                yield* queue.add(String(Math.floor(random() * 1000)), { priority: Math.floor(random() * 100) })
                const exit = yield* Effect.exit(queue.getWithPriority)
                if (Exit.isFailure(exit)) return
              }
            })
            const workers = yield* forkAll(Array.from({ length: 20 }, () => worker))
            yield* Effect.sleep("1 millis")
            yield* queue.shutdown
            yield* Fiber.join(workers).pipe(Effect.timeoutOrElse({
              duration: "10 seconds",
              orElse: () => Effect.fail(new Error(`round ${round}: workers still blocked after shutdown`))
            }))
          }))
        }
      })
  )
})

describe("WorkQueue priorities", () => {
  it.effect("an informer's initial list at LowPriority: a fresh event overtakes the backlog", () =>
    Effect.gen(function*() {
      const { queue } = yield* named()
      for (let i = 0; i < 100; i++) yield* queue.add(`ns/resync-${i}`, { priority: WorkQueue.LowPriority })
      assert.strictEqual(yield* queue.get, "ns/resync-0")
      yield* queue.add("ns/fresh")
      assert.strictEqual(yield* queue.get, "ns/fresh")
      // an event for a key of the backlog lifts it out of it
      yield* queue.add("ns/resync-50")
      assert.strictEqual(yield* queue.get, "ns/resync-50")
      assert.strictEqual(yield* queue.get, "ns/resync-1")
    }))

  it.effect("a key re-added while processing at a higher priority is queued at done at that priority", () =>
    Effect.gen(function*() {
      const { queue } = yield* named()
      yield* queue.add("a")
      yield* queue.add("b", { priority: 1 })
      assert.strictEqual(yield* queue.get, "b")
      yield* queue.add("b", { priority: 3 })
      yield* queue.add("c", { priority: 2 })
      yield* queue.done("b")
      assert.deepStrictEqual(yield* queue.getWithPriority, { key: "b", priority: 3 })
      assert.deepStrictEqual(yield* queue.getWithPriority, { key: "c", priority: 2 })
      assert.deepStrictEqual(yield* queue.getWithPriority, { key: "a", priority: 0 })
    }))

  it.effect("fractional and negative priorities order as numbers", () =>
    Effect.gen(function*() {
      const { queue } = yield* named()
      yield* queue.add("a", { priority: -1.5 })
      yield* queue.add("b", { priority: 0.5 })
      yield* queue.add("c", { priority: -1 })
      yield* queue.add("d", { priority: 2 })
      assert.deepStrictEqual(yield* drain(queue), ["d", "b", "c", "a"])
    }))
})

/**
 * WorkQueue, the base queue: ports of client-go's queue_test.go (names kept), then behaviour beyond them
 * (typed shutdown, `process`, waiting and interruption, non-string keys).
 */
import { assert, describe, it } from "@effect/vitest"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as TestClock from "effect/testing/TestClock"
import * as WorkQueue from "../../../src/WorkQueue.js"
import type { Queue } from "./fixtures.js"
import { drain, forkAll, isBlocked, makeQueue } from "./fixtures.js"

/** The cause is one reason, of the kind `is` tells (Effect 3's `cause._tag === "Die"` or `"Fail"`). */
const isOnly = <E>(cause: Cause.Cause<E>, is: (reason: Cause.Reason<E>) => boolean): boolean =>
  cause.reasons.length === 1 && is(cause.reasons[0])

/** A consumer as client-go's tests write one: get until shutdown, `work` per key, then done. */
const consumer = (
  queue: Queue,
  seen: Array<string>,
  inFlight: Set<string>,
  work: (key: string) => Effect.Effect<void>
) =>
  Effect.gen(function*() {
    for (;;) {
      const exit = yield* Effect.exit(queue.get)
      if (Exit.isFailure(exit)) return
      const key = exit.value
      assert.isFalse(inFlight.has(key), `${key} handed to two workers at once`)
      inFlight.add(key)
      seen.push(key)
      yield* work(key)
      inFlight.delete(key)
      yield* queue.done(key)
    }
  })

describe("queue_test", () => {
  for (const variant of ["shutdown", "shutdownWithDrain"] as const) {
    // real time (1 ms and 3 ms sleeps): TestClock would step through thousands of sleeps one by one
    it.live(
      `TestBasic (${variant}): 50 producers x 50 adds, 10 consumers; after shutdown an add is never handed out, every consumer ends, Len 0`,
      () =>
        Effect.gen(function*() {
          const queue = yield* makeQueue()
          const seen: Array<string> = []
          const inFlight = new Set<string>()
          const producers = yield* forkAll(
            Array.from({ length: 50 }, (_, i) =>
              Effect.gen(function*() {
                for (let j = 0; j < 50; j++) {
                  yield* queue.add(String(i))
                  yield* Effect.sleep("1 millis")
                }
              }))
          )
          const consumers = yield* forkAll(
            Array.from({ length: 10 }, () => consumer(queue, seen, inFlight, () => Effect.sleep("3 millis")))
          )
          yield* Fiber.join(producers)
          const shutting = yield* Effect.forkChild(queue[variant])
          while (!(yield* queue.isShuttingDown)) yield* Effect.yieldNow
          yield* queue.add("added after shutdown!")
          yield* Fiber.join(shutting)
          yield* Fiber.join(consumers)
          assert.isFalse(seen.includes("added after shutdown!"))
          assert.deepStrictEqual(new Set(seen), new Set(Array.from({ length: 50 }, (_, i) => String(i))))
          assert.strictEqual(yield* queue.len, 0)
        })
    )
  }

  it.effect("TestAddWhileProcessing: every key re-added once while processing is processed again after done", () =>
    Effect.gen(function*() {
      const queue = yield* makeQueue()
      const counts = new Map<string, number>()
      const inFlight = new Set<string>()
      yield* forkAll(Array.from({ length: 50 }, (_, i) => queue.add(String(i))))
      const consumers = yield* forkAll(Array.from({ length: 10 }, () =>
        Effect.gen(function*() {
          for (;;) {
            const exit = yield* Effect.exit(queue.get)
            if (Exit.isFailure(exit)) return
            const key = exit.value
            assert.isFalse(inFlight.has(key))
            inFlight.add(key)
            const n = (counts.get(key) ?? 0) + 1
            counts.set(key, n)
            if (n === 1) yield* queue.add(key) // re-added while processing
            yield* Effect.sleep("1 millis")
            inFlight.delete(key)
            yield* queue.done(key)
          }
        })))
      yield* TestClock.adjust("1 second")
      yield* queue.shutdown
      yield* Fiber.join(consumers)
      assert.strictEqual(counts.size, 50)
      for (const [key, n] of counts) assert.strictEqual(n, 2, key)
      assert.strictEqual(yield* queue.len, 0)
    }))

  it.effect("TestLen: Add(foo) -> 1; Add(bar) -> 2; Add(foo) -> still 2", () =>
    Effect.gen(function*() {
      const queue = yield* makeQueue()
      yield* queue.add("foo")
      assert.strictEqual(yield* queue.len, 1)
      yield* queue.add("bar")
      assert.strictEqual(yield* queue.len, 2)
      yield* queue.add("foo")
      assert.strictEqual(yield* queue.len, 2)
    }))

  it.effect("TestReinsert: foo got, re-added while processing; after Done Get returns foo again; then Len 0", () =>
    Effect.gen(function*() {
      const queue = yield* makeQueue()
      yield* queue.add("foo")
      const first = yield* queue.get
      assert.strictEqual(first, "foo")
      yield* queue.add(first)
      assert.strictEqual(yield* queue.len, 0, "a processing key is not waiting")
      yield* queue.done(first)
      assert.strictEqual(yield* queue.len, 1)
      const again = yield* queue.get
      assert.strictEqual(again, "foo")
      yield* queue.done(again)
      assert.strictEqual(yield* queue.len, 0)
    }))

  it.effect("TestCollapse: Add(bar) twice -> one Get, then empty", () =>
    Effect.gen(function*() {
      const queue = yield* makeQueue()
      yield* queue.add("bar")
      yield* queue.add("bar")
      assert.deepStrictEqual(yield* drain(queue), ["bar"])
      assert.strictEqual(yield* queue.len, 0)
    }))

  it.effect(
    "TestCollapseWhileProcessing: foo processing, added twice; a second worker's Get blocks until Done(foo), then gets foo once",
    () =>
      Effect.gen(function*() {
        const queue = yield* makeQueue()
        yield* queue.add("foo")
        const foo = yield* queue.get
        yield* queue.add("foo")
        yield* queue.add("foo")
        const second = yield* Effect.forkChild(queue.get)
        assert.isTrue(yield* isBlocked(second), "foo is processing: not handed to a second worker")
        yield* queue.done(foo)
        assert.strictEqual(yield* Fiber.join(second), "foo")
        yield* queue.done("foo")
        assert.strictEqual(yield* queue.len, 0)
      })
  )

  it.effect(
    "TestQueueDrainageUsingShutDownWithDrain: two keys handed out; Get reports shutdown; the drain returns only after both Done",
    () =>
      Effect.gen(function*() {
        const queue = yield* makeQueue()
        yield* queue.add("foo")
        yield* queue.add("bar")
        const foo = yield* queue.get
        const bar = yield* queue.get
        const drainer = yield* Effect.forkChild(queue.shutdownWithDrain)
        const error = yield* Effect.flip(queue.get)
        assert.strictEqual(error._tag, "WorkQueueShutdownError")
        assert.isTrue(yield* isBlocked(drainer))
        yield* queue.done(foo)
        assert.isTrue(yield* isBlocked(drainer))
        yield* queue.done(bar)
        yield* Fiber.join(drainer)
      })
  )

  it.effect("TestNoQueueDrainageUsingShutDown: two keys handed out, never done; ShutDown returns at once", () =>
    Effect.gen(function*() {
      const queue = yield* makeQueue()
      yield* queue.add("foo")
      yield* queue.add("bar")
      yield* queue.get
      yield* queue.get
      yield* queue.shutdown
      assert.isTrue(yield* queue.isShuttingDown)
    }))

  it.effect("TestForceQueueShutdownUsingShutDown: a drain blocked on two undone keys is released by ShutDown", () =>
    Effect.gen(function*() {
      const queue = yield* makeQueue()
      yield* queue.add("foo")
      yield* queue.add("bar")
      yield* queue.get
      yield* queue.get
      const drainer = yield* Effect.forkChild(queue.shutdownWithDrain)
      assert.isTrue(yield* isBlocked(drainer))
      yield* queue.shutdown
      yield* Fiber.join(drainer)
    }))

  it.effect(
    "TestQueueDrainageUsingShutDownWithDrainWithDirtyItem: foo processing and re-added, drain pending; Done(foo) -> Get returns foo; after its Done Get reports shutdown and the drain returns",
    () =>
      Effect.gen(function*() {
        const queue = yield* makeQueue()
        yield* queue.add("foo")
        const gotten = yield* queue.get
        yield* queue.add("foo")
        const drainer = yield* Effect.forkChild(queue.shutdownWithDrain)
        assert.strictEqual((yield* Effect.flip(queue.get))._tag, "WorkQueueShutdownError")
        yield* queue.done(gotten)
        const again = yield* queue.get
        assert.strictEqual(again, "foo")
        yield* queue.done(again)
        assert.strictEqual((yield* Effect.flip(queue.get))._tag, "WorkQueueShutdownError")
        yield* Fiber.join(drainer)
      })
  )

  it.effect("TestGarbageCollection: a key added, got and done leaves nothing in the queue", () =>
    Effect.gen(function*() {
      const queue = yield* makeQueue<{ readonly data: string }>({ key: (o) => o.data })
      yield* queue.add({ data: "hello" })
      const object = yield* queue.get
      yield* queue.done(object)
      assert.strictEqual(queue.unsafeEntryCount(), 0)
    }))
})

describe("WorkQueue", () => {
  it.effect("a key added while processing is not handed out before done, then exactly once", () =>
    Effect.gen(function*() {
      const queue = yield* makeQueue()
      yield* queue.add("a")
      yield* queue.add("b")
      assert.strictEqual(yield* queue.get, "a")
      yield* queue.add("a")
      assert.strictEqual(yield* queue.get, "b")
      const waiting = yield* Effect.forkChild(queue.get)
      assert.isTrue(yield* isBlocked(waiting))
      yield* queue.done("a")
      assert.strictEqual(yield* Fiber.join(waiting), "a")
      yield* queue.done("a")
      yield* queue.done("b")
      assert.strictEqual(yield* queue.len, 0)
      assert.strictEqual(queue.unsafeEntryCount(), 0)
    }))

  it.effect("FIFO by first add; a collapsed add does not move a key", () =>
    Effect.gen(function*() {
      const queue = yield* makeQueue()
      for (const key of ["c", "a", "b", "c", "a"]) yield* queue.add(key)
      assert.deepStrictEqual(yield* drain(queue), ["c", "a", "b"])
    }))

  it.effect("a done key that comes back goes to the back", () =>
    Effect.gen(function*() {
      const queue = yield* makeQueue()
      yield* queue.addAll(["a", "b"])
      yield* queue.process(() => Effect.void)
      yield* queue.add("a")
      assert.deepStrictEqual(yield* drain(queue), ["b", "a"])
    }))

  it.effect("after shutdown queued keys are still handed out, then get fails with WorkQueueShutdownError", () =>
    Effect.gen(function*() {
      const queue = yield* makeQueue({ name: "shutdown-test" })
      yield* queue.addAll(["a", "b"])
      yield* queue.shutdown
      yield* queue.add("c")
      assert.strictEqual(yield* queue.len, 2)
      assert.deepStrictEqual(yield* drain(queue), ["a", "b"])
      const error = yield* Effect.flip(queue.get)
      assert.instanceOf(error, WorkQueue.WorkQueueShutdownError)
      assert.strictEqual(error.queue, "shutdown-test")
      assert.include(error.message, "shutdown-test")
      assert.strictEqual((yield* Effect.flip(queue.process(() => Effect.void)))._tag, "WorkQueueShutdownError")
    }))

  it.effect("every waiting worker gets the shutdown error at shutdown", () =>
    Effect.gen(function*() {
      const queue = yield* makeQueue()
      const waiting = yield* forkAll([queue.get, queue.get, queue.getWithPriority], { discard: false })
      assert.isTrue(yield* isBlocked(waiting))
      yield* queue.shutdown
      const exit = yield* Fiber.await(waiting)
      assert.isTrue(Exit.isFailure(exit))
    }))

  it.effect("a waiting worker is woken by the add (no polling): the key goes to the oldest waiter", () =>
    Effect.gen(function*() {
      const queue = yield* makeQueue()
      const first = yield* Effect.forkChild(queue.get)
      assert.isTrue(yield* isBlocked(first))
      const second = yield* Effect.forkChild(queue.get)
      assert.isTrue(yield* isBlocked(second))
      yield* queue.add("a")
      assert.strictEqual(yield* Fiber.join(first), "a")
      assert.isTrue(yield* isBlocked(second))
      yield* queue.add("a") // processing: only marked dirty
      assert.isTrue(yield* isBlocked(second))
      yield* queue.add("b")
      assert.strictEqual(yield* Fiber.join(second), "b")
    }))

  it.effect("an interrupted waiting worker takes no key; the next add goes to the next waiter", () =>
    Effect.gen(function*() {
      const queue = yield* makeQueue()
      const first = yield* Effect.forkChild(queue.get)
      const second = yield* Effect.forkChild(queue.get)
      assert.isTrue(yield* isBlocked(second))
      yield* Fiber.interrupt(first)
      yield* queue.add("a")
      assert.strictEqual(yield* Fiber.join(second), "a")
      assert.strictEqual(yield* queue.len, 0)
    }))

  it.effect("a worker interrupted right after it was handed a key gives the key back, at the front", () =>
    Effect.gen(function*() {
      const queue = yield* makeQueue()
      const worker = yield* Effect.forkChild(queue.process(() => Effect.never))
      assert.isTrue(yield* isBlocked(worker))
      // hand the key over and interrupt in the same step: the worker never gets to run f
      yield* Effect.andThen(queue.addAll(["a", "b"]), Effect.sync(() => worker.interruptUnsafe()))
      yield* Fiber.await(worker)
      assert.strictEqual(yield* queue.len, 2)
      assert.deepStrictEqual(yield* drain(queue), ["a", "b"])
      assert.strictEqual(queue.unsafeEntryCount(), 0)
    }))

  it.effect("process calls done whatever f's outcome; an interrupted key is queued again", () =>
    Effect.gen(function*() {
      const queue = yield* makeQueue()
      yield* queue.addAll(["fails", "dies", "interrupted", "ok"])
      const failed = yield* Effect.flip(queue.process((key) => Effect.fail(`boom ${key}`)))
      assert.strictEqual(failed, "boom fails")
      const died = yield* Effect.exit(queue.process(() => Effect.die("defect")))
      assert.isTrue(Exit.isFailure(died))
      const running = yield* Effect.forkChild(queue.process(() => Effect.never))
      assert.isTrue(yield* isBlocked(running))
      yield* Fiber.interrupt(running)
      assert.strictEqual(yield* queue.len, 2, "interrupted is queued again, behind ok")
      assert.strictEqual(yield* queue.process((key) => Effect.succeed(key.toUpperCase())), "OK")
      assert.deepStrictEqual(yield* drain(queue), ["interrupted"])
      // none of them is processing any more: all can come back
      yield* queue.addAll(["fails", "dies", "interrupted", "ok"])
      assert.strictEqual(yield* queue.len, 4)
      assert.strictEqual(queue.unsafeEntryCount(), 4)
    }))

  it.effect("runWorker processes keys until the queue is shut down and empty, then succeeds", () =>
    Effect.gen(function*() {
      const queue = yield* makeQueue()
      const seen: Array<string> = []
      const worker = yield* Effect.forkChild(
        queue.runWorker((key, priority) => Effect.sync(() => seen.push(`${key}@${priority}`)))
      )
      assert.isTrue(yield* isBlocked(worker))
      yield* queue.addAll(["a", "b"]) // a goes to the waiting worker at once
      yield* queue.add("c", { priority: 2 })
      assert.isTrue(yield* isBlocked(worker), "waits for more")
      yield* queue.add("d")
      yield* queue.shutdown
      yield* queue.add("e") // ignored
      yield* Fiber.join(worker)
      assert.deepStrictEqual(seen, ["a@0", "c@2", "b@0", "d@0"])
      assert.strictEqual(queue.unsafeEntryCount(), 0)
    }))

  it.effect("runWorker: a failure of f ends the worker with it, after done", () =>
    Effect.gen(function*() {
      const queue = yield* makeQueue()
      yield* queue.addAll(["a", "b"])
      const error = yield* Effect.flip(queue.runWorker((key) => key === "b" ? Effect.fail("b failed") : Effect.void))
      assert.strictEqual(error, "b failed")
      assert.strictEqual(queue.unsafeEntryCount(), 0, "b is done, not processing")
    }))

  it.effect("runWorker interrupted while processing: its key is queued again and another worker takes it", () =>
    Effect.gen(function*() {
      const queue = yield* makeQueue()
      const seen: Array<string> = []
      const stuck = yield* Effect.forkChild(queue.runWorker(() => Effect.never))
      yield* queue.add("a")
      assert.isTrue(yield* isBlocked(stuck))
      assert.strictEqual(yield* queue.len, 0)
      yield* Fiber.interrupt(stuck)
      assert.strictEqual(yield* queue.len, 1)
      const worker = yield* Effect.forkChild(queue.runWorker((key) => Effect.sync(() => seen.push(key))))
      yield* queue.shutdown
      yield* Fiber.join(worker)
      assert.deepStrictEqual(seen, ["a"])
    }))

  it.effect("runWorker interrupted while waiting takes no key; interrupted right after a hand-over gives the key back", () =>
    Effect.gen(function*() {
      const queue = yield* makeQueue()
      const idle = yield* Effect.forkChild(queue.runWorker(() => Effect.void))
      assert.isTrue(yield* isBlocked(idle))
      yield* Fiber.interrupt(idle)
      const worker = yield* Effect.forkChild(queue.runWorker(() => Effect.never))
      assert.isTrue(yield* isBlocked(worker))
      // hand over and interrupt in the same step: the worker never gets to run f
      yield* Effect.andThen(queue.addAll(["a", "b"]), Effect.sync(() => worker.interruptUnsafe()))
      yield* Fiber.await(worker)
      assert.deepStrictEqual(yield* drain(queue), ["a", "b"])
      assert.strictEqual(queue.unsafeEntryCount(), 0)
    }))

  it.effect("runWorker with an f that answers with an Exit: every key once, in order, done at once", () =>
    Effect.gen(function*() {
      const queue = yield* makeQueue()
      const keys = Array.from({ length: 200 }, (_, i) => `k${i}`)
      yield* queue.addAll(keys)
      const seen: Array<string> = []
      const worker = yield* Effect.forkChild(queue.runWorker((key) => {
        seen.push(key)
        // re-added while processing (the first time): once more after done
        return key === "k3" && seen.length === 4 ? Effect.runSync(Effect.as(queue.add("k3"), Effect.void)) : Effect.void
      }))
      assert.isTrue(yield* isBlocked(worker), "waits once every key is done")
      yield* queue.shutdown
      yield* Fiber.join(worker)
      assert.deepStrictEqual(seen, [...keys, "k3"])
      assert.strictEqual(queue.unsafeEntryCount(), 0)
    }))

  it.effect("runWorker with an f that answers with an Exit yields to other fibers during a long run", () =>
    Effect.gen(function*() {
      const queue = yield* makeQueue()
      const count = 20_000
      yield* queue.addAll(Array.from({ length: count }, (_, i) => `k${i}`))
      let processed = 0
      const observed: Array<number> = []
      const worker = yield* Effect.forkChild(queue.runWorker(() => {
        processed++
        return Effect.void
      }))
      // another fiber, resumed between the worker's turns
      const watcher = yield* Effect.forkChild(Effect.forever(Effect.andThen(
        Effect.sync(() => observed.push(processed)),
        Effect.yieldNow
      )))
      yield* queue.shutdown
      yield* Fiber.join(worker)
      yield* Fiber.interrupt(watcher)
      assert.strictEqual(processed, count)
      assert.isTrue(observed.some((n) => n > 0 && n < count), `the watcher ran only at ${observed.join(",")}`)
    }))

  it.effect("runWorker with an f that answers with an Exit: interrupted right after a hand-over, the key goes back", () =>
    Effect.gen(function*() {
      const queue = yield* makeQueue()
      const seen: Array<string> = []
      const worker = yield* Effect.forkChild(queue.runWorker((key) => {
        seen.push(key)
        return Effect.void
      }))
      assert.isTrue(yield* isBlocked(worker))
      yield* Effect.andThen(queue.addAll(["a", "b"]), Effect.sync(() => worker.interruptUnsafe()))
      yield* Fiber.await(worker)
      assert.deepStrictEqual(seen, [])
      assert.deepStrictEqual(yield* drain(queue), ["a", "b"])
      assert.strictEqual(queue.unsafeEntryCount(), 0)
    }))

  it.effect("an f that throws while building its effect is a defect; the key is done, not left processing", () =>
    Effect.gen(function*() {
      const queue = yield* makeQueue()
      const boom = (): Effect.Effect<void> => {
        throw new Error("boom")
      }
      yield* queue.addAll(["a", "b"])
      const exit = yield* Effect.exit(queue.process(boom))
      assert.isTrue(Exit.isFailure(exit) && isOnly(exit.cause, Cause.isDieReason))
      const workerExit = yield* Effect.exit(queue.runWorker(boom))
      assert.isTrue(Exit.isFailure(workerExit) && isOnly(workerExit.cause, Cause.isDieReason))
      assert.strictEqual(queue.unsafeEntryCount(), 0)
    }))

  it.effect("process hands f the key and its priority", () =>
    Effect.gen(function*() {
      const queue = yield* makeQueue()
      yield* queue.add("a", { priority: 7 })
      const seen = yield* queue.process((key, priority) => Effect.succeed([key, priority] as const))
      assert.deepStrictEqual(seen, ["a", 7])
      yield* queue.add("b", { priority: -3 })
      assert.deepStrictEqual(yield* queue.getWithPriority, { key: "b", priority: -3 })
    }))

  it.effect("done of a key that is not processing does nothing (it is not queued twice)", () =>
    Effect.gen(function*() {
      const queue = yield* makeQueue()
      yield* queue.done("never-added")
      yield* queue.add("a")
      yield* queue.done("a")
      assert.strictEqual(yield* queue.len, 1)
      assert.deepStrictEqual(yield* drain(queue), ["a"])
    }))

  it.effect("non-string keys: identity by the key function, the first value queued is handed out", () =>
    Effect.gen(function*() {
      interface Request {
        readonly namespace: string
        readonly name: string
        readonly note?: string
      }
      const queue = yield* makeQueue<Request>({ key: (r) => `${r.namespace}/${r.name}` })
      yield* queue.add({ namespace: "ns", name: "a", note: "first" })
      yield* queue.add({ namespace: "ns", name: "a", note: "second" })
      yield* queue.add({ namespace: "ns", name: "b" })
      assert.strictEqual(yield* queue.len, 2)
      const a = yield* queue.get
      assert.strictEqual(a.note, "first")
      yield* queue.add({ namespace: "ns", name: "a", note: "third" })
      yield* queue.done({ namespace: "ns", name: "a" }) // any value with the same identity
      assert.deepStrictEqual((yield* drain(queue)).map((r) => r.name), ["b", "a"])
    }))

  it.effect("closing the queue's scope shuts it down: a waiting worker fails", () =>
    Effect.gen(function*() {
      const waiting = yield* Effect.scoped(Effect.gen(function*() {
        const queue = yield* WorkQueue.make()
        const fiber = yield* Effect.forkChild(queue.get)
        assert.isTrue(yield* isBlocked(fiber))
        return fiber
      }))
      const exit = yield* Fiber.await(waiting)
      assert.isTrue(Exit.isFailure(exit) && isOnly(exit.cause, Cause.isFailReason))
    }))

  it.effect("a worker loop of process ends with the shutdown error once the queue is empty", () =>
    Effect.gen(function*() {
      const queue = yield* makeQueue()
      const seen: Array<string> = []
      const worker = yield* Effect.forkChild(
        Effect.forever(queue.process((key) => Effect.sync(() => seen.push(key)))).pipe(
          Effect.catchTag("WorkQueueShutdownError", () => Effect.succeed("stopped"))
        )
      )
      yield* queue.addAll(["a", "b", "c"])
      yield* queue.shutdown
      assert.strictEqual(yield* Fiber.join(worker), "stopped")
      assert.deepStrictEqual(seen, ["a", "b", "c"])
    }))

  it.effect("layer provides the WorkQueue tag and shuts the queue down on release", () =>
    Effect.gen(function*() {
      const queue = yield* Effect.gen(function*() {
        const queue = yield* WorkQueue.WorkQueue
        yield* queue.add("a")
        assert.strictEqual(yield* queue.len, 1)
        return queue
      }).pipe(Effect.provide(WorkQueue.layer({ name: "layer-test" })))
      assert.isTrue(yield* queue.isShuttingDown)
    }))
})

/**
 * WorkQueue property tests (`it.prop`, `effect/Arbitrary`):
 * - against a model, one operation at a time: a key is never handed to a second worker, the key handed
 *   out has the highest priority waiting and is the oldest of its priority and group (FIFO within a
 *   priority and group; without groups, exactly the oldest), with the highest priority asked for since
 *   its last hand-out; `len` is the number of keys waiting; at the end every key added has been handed
 *   out after its last add;
 * - concurrently, with workers, delays, rate limiting and priorities under TestClock, and workers
 *   interrupted at random: no key processed twice at once, and every key is processed to the end of a
 *   round started after its last add (nothing lost, also when its worker was interrupted);
 * - the token bucket never lets more than `burst + rate * T` reservations fall due within any `T`.
 */
import { assert, describe, it } from "@effect/vitest"
import type * as Arbitrary from "effect/Arbitrary"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as TestClock from "effect/testing/TestClock"
import * as RateLimiter from "../../../src/RateLimiter.js"
import { array, boolean, constant, constantFrom, integer, oneof, option, record } from "../../fixtures/arbitrary.js"
import { makeQueue } from "./fixtures.js"

type Op =
  | { readonly _tag: "add"; readonly key: number; readonly priority: number | undefined }
  | { readonly _tag: "get" }
  | { readonly _tag: "done"; readonly pick: number }

const opArb: Arbitrary.Arbitrary<Op> = oneof<Op>(
  {
    arbitrary: record({
      _tag: constant("add"),
      key: integer({ min: 0, max: 7 }),
      priority: option(integer({ min: -1, max: 2 }), { nil: undefined })
    }),
    weight: 5
  },
  { arbitrary: record({ _tag: constant("get") }), weight: 3 },
  {
    arbitrary: record({ _tag: constant("done"), pick: integer({ min: 0, max: 7 }) }),
    weight: 3
  }
)

const groupOf = (key: string) => String(Number(key.slice(1)) % 3)

describe("WorkQueue properties", () => {
  it.effect.prop(
    "against a model: one worker per key, highest priority first, FIFO within a priority and group, nothing lost",
    { ops: array(opArb, { maxLength: 80 }), grouped: boolean() },
    ({ grouped, ops }) =>
      Effect.gen(function*() {
        const queue = yield* makeQueue(grouped ? { group: groupOf } : {})
        let clock = 0
        // the model: keys waiting (priority, when they entered their line), keys processing
        const waiting = new Map<string, { priority: number; enteredAt: number }>()
        const processing = new Map<string, { dirty: boolean; priority: number }>()
        const lastAdd = new Map<string, number>()
        const lastStart = new Map<string, number>()

        const take = Effect.gen(function*() {
          const { key, priority } = yield* Effect.orDie(queue.getWithPriority)
          const now = ++clock
          assert.isFalse(processing.has(key), `${key} handed out while processing`)
          const entry = waiting.get(key)
          assert.isDefined(entry, `${key} handed out but not waiting`)
          assert.strictEqual(priority, entry!.priority, `${key}: the highest priority asked for`)
          for (const [other, o] of waiting) {
            assert.isFalse(o.priority > priority, `${other} (priority ${o.priority}) waits behind ${key} (${priority})`)
            const sameLine = o.priority === priority && (!grouped || groupOf(other) === groupOf(key))
            assert.isFalse(sameLine && o.enteredAt < entry!.enteredAt, `${other} entered its line before ${key}`)
          }
          waiting.delete(key)
          processing.set(key, { dirty: false, priority: 0 })
          lastStart.set(key, now)
        })

        const finish = (key: string) =>
          Effect.gen(function*() {
            yield* queue.done(key)
            const now = ++clock
            const p = processing.get(key)!
            processing.delete(key)
            if (p.dirty) waiting.set(key, { priority: p.priority, enteredAt: now })
          })

        for (const op of ops) {
          switch (op._tag) {
            case "add": {
              const key = `k${op.key}`
              const priority = op.priority ?? 0
              yield* op.priority === undefined ? queue.add(key) : queue.add(key, { priority })
              const now = ++clock
              lastAdd.set(key, now)
              const p = processing.get(key)
              const w = waiting.get(key)
              if (p !== undefined) {
                p.priority = p.dirty ? Math.max(p.priority, priority) : priority
                p.dirty = true
              } else if (w === undefined) {
                waiting.set(key, { priority, enteredAt: now })
              } else if (priority > w.priority) {
                waiting.set(key, { priority, enteredAt: now }) // raised: to the end of its new priority
              }
              break
            }
            case "get": {
              if (waiting.size > 0) yield* take
              break
            }
            case "done": {
              const keys = [...processing.keys()]
              if (keys.length > 0) yield* finish(keys[op.pick % keys.length])
            }
          }
          assert.strictEqual(yield* queue.len, waiting.size)
        }
        // finish everything: every key added was handed out after its last add
        for (;;) {
          for (const key of [...processing.keys()]) yield* finish(key)
          if (waiting.size === 0) break
          while (waiting.size > 0) yield* take
        }
        for (const [key, added] of lastAdd) {
          assert.isTrue(
            (lastStart.get(key) ?? 0) > added,
            `${key} added at ${added}, last started ${lastStart.get(key)}`
          )
        }
        assert.strictEqual(queue.unsafeEntryCount(), 0)
      }),
    { arbitrary: { runs: 300 } }
  )

  const eventArb = record({
    at: integer({ min: 0, max: 40 }),
    key: integer({ min: 0, max: 5 }),
    priority: integer({ min: -1, max: 1 }),
    after: oneof(constant(0), integer({ min: 1, max: 20 })),
    rateLimited: boolean()
  })

  it.effect.prop(
    "concurrently (workers, delays, rate limiting, priorities, groups, workers interrupted): no key processed twice at once, none lost",
    {
      events: array(eventArb, { minLength: 1, maxLength: 40 }),
      workers: integer({ min: 1, max: 4 }),
      durations: array(integer({ min: 0, max: 8 }), { minLength: 6, maxLength: 6 }),
      grouped: boolean(),
      loop: constantFrom("runWorker", "process"),
      interrupts: array(integer({ min: 0, max: 60 }), { maxLength: 4 })
    },
    ({ durations, events, grouped, interrupts, loop, workers }) =>
      Effect.gen(function*() {
        const queue = yield* makeQueue({
          rateLimiter: RateLimiter.exponential({ base: "1 millis", max: "16 millis" }),
          ...(grouped ? { group: groupOf } : {})
        })
        let clock = 0
        const inFlight = new Set<string>()
        const lastAdd = new Map<string, number>()
        const lastStart = new Map<string, number>()
        const failures = new Map<string, number>()
        const reconcile = (key: string) =>
          Effect.gen(function*() {
            assert.isFalse(inFlight.has(key), `${key} processed twice at once`)
            inFlight.add(key)
            const started = ++clock
            yield* Effect.sleep(durations[Number(key.slice(1))]).pipe(
              Effect.ensuring(Effect.sync(() => inFlight.delete(key)))
            )
            // only a round that ran to its end counts (an interrupted one must be followed by another)
            lastStart.set(key, started)
            // a failure now and then (at most twice per key): retried with the rate limiter
            const failed = failures.get(key) ?? 0
            if (clock % 3 === 0 && failed < 2) {
              failures.set(key, failed + 1)
              yield* queue.addRateLimited(key)
            } else {
              yield* queue.forget(key)
            }
          })
        const worker = loop === "runWorker"
          ? queue.runWorker(reconcile)
          : Effect.forever(queue.process(reconcile)).pipe(Effect.catchTag("WorkQueueShutdownError", () => Effect.void))
        const pool = Array.from({ length: workers }, () => worker)
        const fibers = yield* Effect.forEach(pool, (w) => Effect.forkScoped(w))
        // workers interrupted at random times, each replaced by a new one (an interrupted key is queued again)
        const killer = yield* Effect.forkChild(Effect.forEach([...interrupts].sort((a, b) => a - b), (at, i) =>
          Effect.gen(function*() {
            const previous = i === 0 ? 0 : [...interrupts].sort((a, b) => a - b)[i - 1]
            yield* Effect.sleep(at - previous)
            const victim = i % fibers.length
            yield* Fiber.interrupt(fibers[victim])
            // in the test's scope: a child of this fiber would be interrupted when this fiber ends
            fibers[victim] = yield* Effect.forkScoped(worker)
          })))
        const sorted = [...events].sort((a, b) =>
          a.at - b.at
        )
        const producer = yield* Effect.forkChild(Effect.gen(function*() {
          let now = 0
          for (const event of sorted) {
            if (event.at > now) {
              yield* Effect.sleep(event.at - now)
              now = event.at
            }
            const key = `k${event.key}`
            yield* queue.add(key, { priority: event.priority, after: event.after, rateLimited: event.rateLimited })
            lastAdd.set(key, ++clock)
          }
        }))
        yield* TestClock.adjust("100 millis")
        yield* Fiber.join(producer)
        yield* Fiber.join(killer)
        // let retries and delays run out
        for (let i = 0; i < 20 && (queue.unsafeLen() > 0 || queue.unsafeEntryCount() > 0); i++) {
          yield* TestClock.adjust("100 millis")
        }
        assert.strictEqual(queue.unsafeEntryCount(), 0, "the queue is idle")
        for (const [key, added] of lastAdd) {
          assert.isTrue(
            (lastStart.get(key) ?? 0) > added,
            `${key} added at ${added}, last started ${lastStart.get(key)}`
          )
        }
        yield* queue.shutdownWithDrain
        for (const fiber of fibers) assert.isTrue(Exit.isSuccess(yield* Fiber.await(fiber)))
      }),
    { arbitrary: { runs: 80 } }
  )

  it.prop(
    "token bucket: never more than burst + rate * T reservations fall due within any window of T",
    {
      rate: integer({ min: 1, max: 50 }),
      burst: integer({ min: 1, max: 10 }),
      gaps: array(integer({ min: 0, max: 200 }), { minLength: 1, maxLength: 100 })
    },
    ({ burst, gaps, rate }) => {
      const limiter = RateLimiter.unsafeMake(RateLimiter.bucket({ rate, burst }))
      let now = 0
      const due: Array<number> = []
      for (const gap of gaps) {
        now += gap
        due.push(now + limiter.when("k", now))
      }
      due.sort((a, b) => a - b)
      for (let i = 0; i < due.length; i++) {
        for (let j = i; j < due.length; j++) {
          const window = due[j] - due[i]
          assert.isAtMost(
            j - i + 1,
            burst + Math.floor((rate * window) / 1000 + 1e-6),
            `${j - i + 1} due within ${window} ms`
          )
        }
      }
    }
  )

  it.prop(
    "exponential: per key, the delays since the last forget double from base up to max",
    {
      calls: array(oneof(integer({ min: 0, max: 2 }), constant(-1)), {
        maxLength: 60
      })
    },
    ({ calls }) => {
      const limiter = RateLimiter.unsafeMake(RateLimiter.exponential({ base: "3 millis", max: "200 millis" }))
      const failures = [0, 0, 0]
      for (const call of calls) {
        if (call === -1) {
          limiter.forget("k0")
          failures[0] = 0
          continue
        }
        const delay = limiter.when(`k${call}`, 0)
        assert.strictEqual(delay, Math.min(3 * 2 ** failures[call], 200))
        failures[call]++
        assert.strictEqual(limiter.numRequeues(`k${call}`), failures[call])
      }
    }
  )
})

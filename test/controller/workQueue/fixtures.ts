/**
 * WorkQueue test helpers: a fresh queue per test (with its internal counts), draining, metric reads and
 * checks.
 */
import { assert } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Metric from "effect/Metric"
import type * as Scope from "effect/Scope"
import * as ControllerMetrics from "../../../src/internal/controller/metrics.js"
import * as internal from "../../../src/internal/controller/workQueue.js"
import { withTags } from "../../../src/Metrics.js"
import * as RateLimiter from "../../../src/RateLimiter.js"
import type * as WorkQueue from "../../../src/WorkQueue.js"

export type Queue<K = string> = internal.WorkQueueImpl<K>

/** A queue as `WorkQueue.make` builds it, typed with its internal counts (`unsafeEntryCount`...). */
export const makeQueue = <K = string>(
  options: WorkQueue.Options<K> = {}
): Effect.Effect<Queue<K>, never, Scope.Scope> => internal.make(options, RateLimiter.defaultController)

/** Takes (and finishes) every key ready now, in hand-out order. */
export const drain = <K>(queue: Queue<K>): Effect.Effect<Array<K>> =>
  Effect.gen(function*() {
    const out: Array<K> = []
    while (queue.unsafeLen() > 0) {
      const key = yield* Effect.orDie(queue.get)
      out.push(key)
      yield* queue.done(key)
    }
    return out
  })

/** Takes every key ready now without finishing them. */
export const takeAll = <K>(queue: Queue<K>): Effect.Effect<Array<K>> =>
  Effect.gen(function*() {
    const out: Array<K> = []
    while (queue.unsafeLen() > 0) out.push(yield* Effect.orDie(queue.get))
    return out
  })

/** Whether `fiber` is still running after every other fiber had its turn. */
export const isBlocked = <A, E>(fiber: Fiber.Fiber<A, E>): Effect.Effect<boolean> =>
  Effect.gen(function*() {
    for (let i = 0; i < 5; i++) yield* Effect.yieldNow
    return fiber.pollUnsafe() === undefined
  })

/**
 * Effect 3's `Effect.forkAll`: each effect in a fiber of its own (all started at once), and one fiber that
 * joins them (its interruption interrupts them).
 */
export const forkAll = <Eff extends Effect.Effect<any, any, any>>(
  effects: Iterable<Eff>,
  _options?: { readonly discard?: false }
): Effect.Effect<
  Fiber.Fiber<Array<Effect.Success<Eff>>, Effect.Error<Eff>>,
  never,
  Effect.Services<Eff>
> =>
  Effect.gen(function*() {
    const fibers: Array<Fiber.Fiber<Effect.Success<Eff>, Effect.Error<Eff>>> = []
    for (const effect of effects) {
      fibers.push(
        yield* Effect.forkChild(effect as Effect.Effect<Effect.Success<Eff>, Effect.Error<Eff>, Effect.Services<Eff>>)
      )
    }
    return yield* Effect.forkChild(
      Effect.onInterrupt(Fiber.joinAll(fibers), () => Fiber.interruptAll(fibers))
    )
  })

/** A queue name no other test uses: metrics live in one global registry. */
let counter = 0
export const uniqueName = (prefix: string) => `${prefix}-${++counter}-${Math.random().toString(36).slice(2, 8)}`

/** The queue's metrics, read. */
export const readMetrics = (name: string) =>
  Effect.gen(function*() {
    const tags = [["name", name]] as const
    const depth = yield* Metric.value(withTags(ControllerMetrics.workQueueDepth, tags))
    const adds = yield* Metric.value(withTags(ControllerMetrics.workQueueAdds, tags))
    const retries = yield* Metric.value(withTags(ControllerMetrics.workQueueRetries, tags))
    const queueDuration = yield* Metric.value(withTags(ControllerMetrics.workQueueWaitDuration, tags))
    const workDuration = yield* Metric.value(withTags(ControllerMetrics.workQueueWorkDuration, tags))
    const unfinished = yield* Metric.value(withTags(ControllerMetrics.workQueueUnfinishedWork, tags))
    const longest = yield* Metric.value(withTags(ControllerMetrics.workQueueLongestRunning, tags))
    return {
      depth: depth.value,
      adds: adds.count,
      retries: retries.count,
      queueDuration: { count: queueDuration.count, sum: queueDuration.sum, max: queueDuration.max },
      workDuration: { count: workDuration.count, sum: workDuration.sum, max: workDuration.max },
      unfinished: unfinished.value,
      longest: longest.value
    }
  })

/** Asserts the queue's depth, adds and retries: those `expected` names, at once. */
export const assertMetrics = (
  name: string,
  expected: { readonly depth?: number; readonly adds?: number; readonly retries?: number }
): Effect.Effect<void> =>
  Effect.map(readMetrics(name), (metrics) => {
    const actual: { depth?: number; adds?: number; retries?: number } = {}
    for (const key of ["depth", "adds", "retries"] as const) {
      if (expected[key] !== undefined) actual[key] = metrics[key]
    }
    assert.deepStrictEqual(actual, expected)
  })

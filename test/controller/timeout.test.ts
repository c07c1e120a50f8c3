/**
 * Controller: `reconcileTimeout` (controller-runtime's `ReconciliationTimeout`): a reconcile that runs
 * longer is interrupted, logged, counted as a timeout and as an error, and requeued through the rate
 * limiter; time is the Clock's.
 */
import { assert, describe, it } from "@effect/vitest"
import { Clock, Effect, Metric } from "effect"
import * as Controller from "../../src/Controller.js"
import * as ControllerMetrics from "../../src/internal/controller/metrics.js"
import * as Metrics from "../../src/Metrics.js"
import { advance, captureLogs, settle } from "../fixtures/index.js"
import { configMaps, eventually, obj, source } from "./fixtures.js"

const count = (metric: Metric.Counter<number>, controller: string, result?: string) =>
  Effect.map(
    Metric.value(
      result === undefined
        ? Metric.withAttributes(metric, { controller })
        : metric.pipe(Metric.withAttributes({ controller }), Metric.withAttributes({ result }))
    ),
    (state) => state.count
  )

/** The series the registry holds for `name` and controller `controller`. */
const series = (name: string, controller: string) =>
  Effect.map(
    Metric.snapshot,
    (snapshots) =>
      snapshots.filter((snapshot) => snapshot.id === name && snapshot.attributes?.["controller"] === controller)
        .length
  )

describe("Controller: reconcile timeout", () => {
  it.effect("a reconcile past the timeout is interrupted, logged, counted as a timeout and an error, requeued with backoff", () =>
    Effect.gen(function*() {
      const logs = captureLogs()
      const cms = yield* source(configMaps, [obj("a", "slow")])
      const starts: Array<number> = []
      let interrupted = 0
      const controller = yield* logs.capture(Controller.make({
        name: "timeout-slow",
        for: cms,
        reconcileTimeout: "10 seconds",
        reconcile: () =>
          Effect.gen(function*() {
            starts.push(yield* Clock.currentTimeMillis)
            // the first round hangs, the second is quick
            if (starts.length === 1) yield* Effect.onInterrupt(Effect.never, () => Effect.sync(() => interrupted++))
            return Controller.done
          })
      }))
      // the series exists at 0 from the start (Metrics exports it)
      assert.strictEqual(Metrics.reconcileTimeouts, ControllerMetrics.reconcileTimeouts)
      assert.strictEqual(yield* series("controller_runtime_reconcile_timeouts_total", "timeout-slow"), 1)
      yield* eventually(() => starts.length === 1, "the first reconcile")
      assert.strictEqual(yield* count(ControllerMetrics.reconcileTimeouts, "timeout-slow"), 0)
      yield* advance("9999 millis")
      assert.strictEqual(interrupted, 0, "not before the timeout")
      assert.strictEqual(yield* controller.active, 1)
      yield* advance("1 millis")
      yield* eventually(() => interrupted === 1, "interrupted at the timeout")
      yield* settle
      assert.strictEqual(yield* count(ControllerMetrics.reconcileTimeouts, "timeout-slow"), 1)
      assert.strictEqual(yield* count(ControllerMetrics.reconcileErrors, "timeout-slow"), 1)
      assert.strictEqual(yield* count(ControllerMetrics.reconciles, "timeout-slow", "error"), 1)
      assert.strictEqual(yield* count(ControllerMetrics.reconcilePanics, "timeout-slow"), 0)
      assert.strictEqual(yield* controller.active, 0)
      assert.isTrue(
        logs.lines.some((line) =>
          line.startsWith("WARN timeout-slow: reconcile of a/slow timed out after 10s: interrupted") &&
          line.includes("key=a/slow")
        ),
        logs.lines.join("\n")
      )
      // requeued through the rate limiter: one failure counted, the next round 5 ms later
      assert.strictEqual(yield* controller.queue.numRequeues("a/slow"), 1)
      assert.strictEqual(starts.length, 1)
      yield* advance("5 millis")
      yield* eventually(() => starts.length === 2, "the requeued round")
      assert.strictEqual(starts[1] - starts[0], 10_005)
      yield* settle
      assert.strictEqual(yield* count(ControllerMetrics.reconciles, "timeout-slow", "success"), 1)
      assert.strictEqual(yield* controller.queue.numRequeues("a/slow"), 0, "forgotten after the success")
    }))

  it.effect("off by default: a long reconcile runs to its end", () =>
    Effect.gen(function*() {
      const cms = yield* source(configMaps, [obj("a", "long")])
      let ended = false
      yield* Controller.make({
        name: "timeout-off",
        for: cms,
        reconcile: () => Effect.andThen(Effect.sleep("1 hour"), Effect.sync(() => void (ended = true)))
      })
      yield* settle
      yield* advance("1 hour")
      yield* eventually(() => ended, "the reconcile's end")
      yield* settle
      assert.strictEqual(yield* count(ControllerMetrics.reconcileTimeouts, "timeout-off"), 0)
      assert.strictEqual(yield* count(ControllerMetrics.reconciles, "timeout-off", "success"), 1)
    }))

  it.effect("a reconcile's own timeout is a plain failure, not a timeout of the controller", () =>
    Effect.gen(function*() {
      const cms = yield* source(configMaps, [obj("a", "own")])
      let tries = 0
      yield* Controller.make({
        name: "timeout-own",
        for: cms,
        reconcileTimeout: "1 minute",
        reconcile: () =>
          Effect.suspend(() => {
            tries++
            return Effect.sleep("1 hour").pipe(Effect.timeout("1 second"), Effect.as(Controller.done))
          })
      })
      yield* settle
      yield* advance("1 second")
      yield* eventually(() => tries === 1, "the first try")
      yield* settle
      assert.strictEqual(yield* count(ControllerMetrics.reconcileErrors, "timeout-own"), 1)
      assert.strictEqual(yield* count(ControllerMetrics.reconcileTimeouts, "timeout-own"), 0)
    }))

  it.effect("an uninterruptible region runs on past the timeout, its worker waiting; interrupted at its end: a timeout", () =>
    Effect.gen(function*() {
      const cms = yield* source(configMaps, [obj("a", "region")])
      let regionEnded = false
      let after = false
      let rounds = 0
      const controller = yield* Controller.make({
        name: "timeout-region",
        for: cms,
        reconcileTimeout: "10 seconds",
        reconcile: () =>
          ++rounds > 1 ? Effect.succeed(Controller.done) : Effect.gen(function*() {
            yield* Effect.uninterruptible(
              Effect.andThen(Effect.sleep("30 seconds"), Effect.sync(() => void (regionEnded = true)))
            )
            after = true
            return Controller.done
          })
      })
      yield* settle
      yield* advance("10 seconds")
      yield* settle
      assert.strictEqual(yield* controller.active, 1, "the worker waits for the region")
      assert.strictEqual(yield* count(ControllerMetrics.reconcileTimeouts, "timeout-region"), 0)
      yield* advance("20 seconds")
      yield* eventually(() => regionEnded, "the region's end")
      yield* settle
      assert.isFalse(after, "interrupted at the region's end")
      assert.strictEqual(yield* count(ControllerMetrics.reconcileTimeouts, "timeout-region"), 1)
      assert.strictEqual(yield* count(ControllerMetrics.reconcileErrors, "timeout-region"), 1)
      assert.strictEqual(yield* controller.active, 0)
      // requeued through the rate limiter
      yield* advance("5 millis")
      yield* eventually(() => rounds === 2, "the requeued round")
    }))
})

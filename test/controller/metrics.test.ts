/**
 * Controller: controller-runtime's metrics beside the reconcile totals: every series at 0 from the start,
 * panics (defects), terminal errors (the error policy answered `done`), the number of workers.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Metric } from "effect"
import { TestClock } from "effect/testing"
import * as Controller from "../../src/Controller.js"
import * as ControllerMetrics from "../../src/internal/controller/metrics.js"
import { settle } from "../fixtures/index.js"
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

const gauge = (metric: Metric.Gauge<number>, controller: string) =>
  Effect.map(Metric.value(Metric.withAttributes(metric, { controller })), (state) => state.value)

/** The series the registry holds for `name` and controller `controller`, as `name{tags}`. */
const series = (name: string, controller: string) =>
  Effect.map(Metric.snapshot, (snapshots) =>
    snapshots
      .filter((snapshot) => snapshot.id === name && snapshot.attributes?.["controller"] === controller)
      .map((snapshot) =>
        Object.entries(snapshot.attributes ?? {}).map(([key, value]) => `${key}=${value}`).sort().join(",")
      )
      .sort())

describe("Controller: metrics", () => {
  it.effect("every series of a controller exists at 0 before its first reconcile", () =>
    Effect.gen(function*() {
      const cms = yield* source(configMaps, [])
      yield* Controller.make({ name: "metrics-zero", for: cms, concurrency: 3, reconcile: () => Effect.void })
      yield* settle
      assert.deepStrictEqual(yield* series("controller_runtime_reconcile_total", "metrics-zero"), [
        "controller=metrics-zero,result=error",
        "controller=metrics-zero,result=requeue",
        "controller=metrics-zero,result=requeue_after",
        "controller=metrics-zero,result=success"
      ])
      for (const result of ["success", "error", "requeue", "requeue_after"]) {
        assert.strictEqual(yield* count(ControllerMetrics.reconciles, "metrics-zero", result), 0)
      }
      for (
        const name of [
          "controller_runtime_reconcile_errors_total",
          "controller_runtime_reconcile_panics_total",
          "controller_runtime_terminal_reconcile_errors_total",
          "effect_informers_reconcile_stale_skips_total",
          "effect_informers_reconcile_abandoned_total",
          "controller_runtime_active_workers",
          "controller_runtime_max_concurrent_reconciles"
        ]
      ) {
        assert.deepStrictEqual(yield* series(name, "metrics-zero"), ["controller=metrics-zero"], name)
      }
      assert.strictEqual(yield* gauge(ControllerMetrics.maxConcurrentReconciles, "metrics-zero"), 3)
      assert.strictEqual(yield* gauge(ControllerMetrics.activeReconciles, "metrics-zero"), 0)
    }))

  it.effect("a defect counts as a panic and an error; a failure the policy gives up on, as terminal", () =>
    Effect.gen(function*() {
      const cms = yield* source(configMaps, [obj("a", "dies"), obj("a", "fails"), obj("a", "ok")])
      const seen = new Set<string>()
      yield* Controller.make({
        name: "metrics-outcomes",
        for: cms,
        // typed failures are not retried; defects are requeued whatever the policy says
        errorPolicy: () => Controller.done,
        reconcile: (request) =>
          Effect.suspend(() => {
            const first = !seen.has(request.key)
            seen.add(request.key)
            if (request.name === "dies" && first) return Effect.die(new Error("boom"))
            if (request.name === "fails") return Effect.fail("no")
            return Effect.succeed(Controller.done)
          })
      })
      yield* eventually(() => seen.size === 3, "three keys")
      // the defect's requeue waits for the rate limiter's first delay (5 ms)
      yield* TestClock.adjust("10 millis")
      yield* settle
      assert.strictEqual(yield* count(ControllerMetrics.reconcilePanics, "metrics-outcomes"), 1)
      assert.strictEqual(yield* count(ControllerMetrics.terminalReconcileErrors, "metrics-outcomes"), 1)
      assert.strictEqual(yield* count(ControllerMetrics.reconcileErrors, "metrics-outcomes"), 2)
      assert.strictEqual(yield* count(ControllerMetrics.reconciles, "metrics-outcomes", "error"), 2)
      // "ok", and "dies" on its second round
      assert.strictEqual(yield* count(ControllerMetrics.reconciles, "metrics-outcomes", "success"), 2)
      assert.strictEqual(yield* gauge(ControllerMetrics.maxConcurrentReconciles, "metrics-outcomes"), 1)
    }))
})

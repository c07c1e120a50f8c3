/**
 * Controller: the reconcile loop (per-key serialisation, concurrency, results, failures, priorities).
 */
import { assert, describe, it } from "@effect/vitest"
import { Clock, Deferred, Effect, Fiber, Metric } from "effect"
import { TestClock } from "effect/testing"
import * as Controller from "../../src/Controller.js"
import * as FakeListerWatcher from "../../src/FakeListerWatcher.js"
import * as ControllerMetrics from "../../src/internal/controller/metrics.js"
import * as RateLimiter from "../../src/RateLimiter.js"
import * as SharedInformer from "../../src/SharedInformer.js"
import { captureLogs, settle } from "../fixtures/index.js"
import type { Obj } from "./fixtures.js"
import { configMaps, eventually, obj, recorder, source } from "./fixtures.js"

describe("Controller: reconcile", () => {
  it.effect("reconciles every object of the initial list after the sources synced, then each change", () =>
    Effect.gen(function*() {
      const cms = yield* source(configMaps, [obj("a", "one"), obj("b", "two")])
      const r = recorder()
      yield* Controller.make({
        name: "basic",
        for: cms,
        reconcile: (request) => r.around(request, () => Effect.void)
      })
      yield* eventually(() => r.seen.length === 2, "two reconciles")
      assert.deepStrictEqual([...r.seen].sort(), ["a/one", "b/two"])
      yield* cms.fake.modify(obj("a", "one", { data: { x: "1" } }))
      yield* cms.fake.add(obj("c", "three"))
      yield* cms.fake.delete(obj("b", "two"))
      yield* eventually(() => r.seen.length === 5, "three more")
      assert.deepStrictEqual(r.seen.slice(2).sort(), ["a/one", "b/two", "c/three"])
    }))

  it.effect("each reconcile runs in a span of its own, Controller.reconcile, with the controller's name", () =>
    Effect.gen(function*() {
      const cms = yield* source(configMaps, [obj("a", "one")])
      const spans: Array<readonly [string, unknown]> = []
      yield* Controller.make({
        name: "traced",
        for: cms,
        reconcile: () =>
          Effect.map(Effect.currentSpan, (span) => void spans.push([span.name, span.attributes.get("controller")]))
      })
      yield* eventually(() => spans.length === 1, "one reconcile")
      assert.deepStrictEqual(spans, [["Controller.reconcile", "traced"]])
    }))

  it.effect("the request names namespace and name; a cluster-scoped key has no namespace", () =>
    Effect.sync(() => {
      assert.deepStrictEqual(Controller.request("default/web"), {
        key: "default/web",
        namespace: "default",
        name: "web"
      })
      assert.deepStrictEqual(Controller.request("node-1"), { key: "node-1", namespace: undefined, name: "node-1" })
      assert.deepStrictEqual(Controller.requestOf(obj("ns", "x")), { key: "ns/x", namespace: "ns", name: "x" })
      assert.isUndefined(Controller.requestOf({ metadata: {} }))
    }))

  it.effect("one reconcile per key at a time: events during a reconcile give exactly one more after it", () =>
    Effect.gen(function*() {
      const cms = yield* source(configMaps, [obj("a", "one")])
      const r = recorder()
      const release = yield* Deferred.make<void>()
      yield* Controller.make({
        name: "serial",
        for: cms,
        concurrency: 4,
        reconcile: (request) =>
          r.around(request, () => r.count(request.key) === 1 ? Deferred.await(release) : Effect.void)
      })
      yield* eventually(() => r.seen.length === 1, "the first reconcile")
      for (let i = 0; i < 5; i++) yield* cms.fake.modify(obj("a", "one", { data: { i: String(i) } }))
      yield* settle
      assert.strictEqual(r.count("a/one"), 1, "not handed to a second worker while the first runs")
      yield* Deferred.succeed(release, undefined)
      yield* eventually(() => r.count("a/one") === 2, "one more reconcile")
      for (let i = 0; i < 20; i++) yield* settle
      assert.strictEqual(r.count("a/one"), 2, "the five events collapsed into one")
      assert.isFalse(r.sameKeyOverlap)
    }))

  it.effect("concurrency bounds the reconciles of different keys running at once", () =>
    Effect.gen(function*() {
      const initial = Array.from({ length: 10 }, (_, i) => obj("ns", `o${i}`))
      const cms = yield* source(configMaps, initial)
      const r = recorder()
      yield* Controller.make({
        name: "bounded",
        for: cms,
        concurrency: 3,
        reconcile: (request) => r.around(request, () => Effect.sleep("1 second"))
      })
      yield* eventually(() => r.seen.length === 3, "three at once")
      yield* settle
      assert.strictEqual(r.seen.length, 3)
      for (let i = 0; i < 4; i++) yield* TestClock.adjust("1 second")
      yield* eventually(() => r.seen.length === 10, "all ten")
      assert.strictEqual(r.maxConcurrent, 3)
    }))

  it.effect("requeueAfter reconciles the key again after the delay, through Clock", () =>
    Effect.gen(function*() {
      const cms = yield* source(configMaps, [obj("a", "one")])
      const r = recorder()
      yield* Controller.make({
        name: "after",
        for: cms,
        reconcile: (request) =>
          r.around(
            request,
            () => Effect.succeed(r.count(request.key) === 1 ? Controller.requeueAfter("10 seconds") : Controller.done)
          )
      })
      yield* eventually(() => r.seen.length === 1, "first")
      yield* TestClock.adjust("9999 millis")
      yield* settle
      assert.strictEqual(r.seen.length, 1)
      yield* TestClock.adjust("1 millis")
      yield* eventually(() => r.seen.length === 2, "second, at 10 s")
    }))

  it.effect("a failure is requeued through the rate limiter (5 ms doubling), logged with its key; success forgets", () =>
    Effect.gen(function*() {
      const logs = captureLogs()
      const cms = yield* source(configMaps, [obj("a", "one")])
      const times: Array<number> = []
      const controller = yield* logs.capture(Controller.make({
        name: "failing",
        for: cms,
        reconcile: () =>
          Effect.gen(function*() {
            times.push(yield* Clock.currentTimeMillis)
            if (times.length <= 4) return yield* Effect.fail("not yet" as const)
            return Controller.done
          })
      }))
      for (let i = 0; i < 200 && times.length < 5; i++) yield* TestClock.adjust("1 millis")
      const start = times[0]!
      assert.deepStrictEqual(times.map((t) => t - start), [0, 5, 15, 35, 75])
      assert.isTrue(
        logs.lines.some((line) =>
          line.startsWith("WARN") && line.includes("reconcile of a/one failed") && line.includes("key=a/one")
        )
      )
      assert.strictEqual(yield* controller.queue.numRequeues("a/one"), 0)
    }))

  it.effect("errorPolicy decides what a failure leads to; a defect is requeued", () =>
    Effect.gen(function*() {
      const cms = yield* source(configMaps, [obj("a", "terminal"), obj("a", "defect")])
      const r = recorder()
      yield* Controller.make({
        name: "policy",
        for: cms,
        rateLimiter: RateLimiter.exponential({ base: "1 second" }),
        errorPolicy: (error: "terminal") => error === "terminal" ? Controller.done : Controller.requeue,
        reconcile: (request) =>
          r.around(
            request,
            () =>
              request.name === "terminal"
                ? Effect.fail("terminal" as const)
                : r.count(request.key) === 1
                ? Effect.die("boom")
                : Effect.void
          )
      })
      yield* eventually(() => r.seen.length === 2, "both once")
      yield* TestClock.adjust("5 seconds")
      yield* eventually(() => r.count("a/defect") === 2, "the defect requeued")
      yield* TestClock.adjust("1 minute")
      assert.strictEqual(r.count("a/terminal"), 1, "the terminal error is not retried")
    }))

  it.effect("results are counted by controller and result", () =>
    Effect.gen(function*() {
      const cms = yield* source(configMaps, [obj("a", "ok"), obj("a", "err"), obj("a", "later")])
      const seen = new Set<string>()
      yield* Controller.make({
        name: "metrics",
        for: cms,
        errorPolicy: () => Controller.done,
        reconcile: (request) =>
          Effect.suspend(() => {
            const first = !seen.has(request.key)
            seen.add(request.key)
            if (request.name === "err") return Effect.fail("x")
            if (request.name === "later" && first) return Effect.succeed(Controller.requeueAfter("1 second"))
            return Effect.succeed(Controller.done)
          })
      })
      yield* eventually(() => seen.size === 3, "three keys")
      yield* TestClock.adjust("1 second")
      yield* settle
      const value = (result: string) =>
        Metric.value(
          ControllerMetrics.reconciles.pipe(
            Metric.withAttributes({ controller: "metrics" }),
            Metric.withAttributes({ result })
          )
        )
      assert.strictEqual((yield* value("success")).count, 2)
      assert.strictEqual((yield* value("error")).count, 1)
      assert.strictEqual((yield* value("requeue_after")).count, 1)
      const errors = yield* Metric.value(
        ControllerMetrics.reconcileErrors.pipe(Metric.withAttributes({ controller: "metrics" }))
      )
      assert.strictEqual(errors.count, 1)
    }))

  it.effect("initial-list keys wait at low priority: a fresh event overtakes the backlog", () =>
    Effect.gen(function*() {
      const initial = Array.from({ length: 20 }, (_, i) => obj("ns", `old${String(i).padStart(2, "0")}`))
      const cms = yield* source(configMaps, initial)
      const r = recorder()
      const gate = yield* Deferred.make<void>()
      yield* Controller.make({
        name: "priority",
        for: cms,
        reconcile: (request) => r.around(request, () => r.seen.length === 1 ? Deferred.await(gate) : Effect.void)
      })
      yield* eventually(() => r.seen.length === 1, "the first of the backlog")
      yield* cms.fake.add(obj("ns", "fresh"))
      yield* settle
      yield* Deferred.succeed(gate, undefined)
      yield* eventually(() => r.seen.length === 21, "everything")
      assert.strictEqual(r.seen[1], "ns/fresh")
    }))

  it.effect("within a priority, namespaces take turns: a busy namespace does not starve the others", () =>
    Effect.gen(function*() {
      const initial = [
        ...Array.from({ length: 10 }, (_, i) => obj("busy", `b${i}`)),
        obj("quiet", "q0")
      ]
      const cms = yield* source(configMaps, initial)
      const r = recorder()
      yield* Controller.make({ name: "fair", for: cms, reconcile: (request) => r.around(request, () => Effect.void) })
      yield* eventually(() => r.seen.length === 11, "all")
      assert.isTrue(r.seen.indexOf("quiet/q0") <= 1, `quiet served early: ${r.seen.join(",")}`)
    }))

  it.effect("a source that does not sync fails make with CacheSyncTimeout", () =>
    Effect.gen(function*() {
      const fake = yield* FakeListerWatcher.make<Obj>({ resource: configMaps })
      const informer = yield* SharedInformer.make(fake, { name: "never-started" })
      const fiber = yield* Effect.forkChild(
        Controller.make({
          name: "stuck",
          for: { resource: configMaps, informer },
          cacheSyncTimeout: "5 seconds",
          reconcile: () => Effect.void
        }).pipe(Effect.flip)
      )
      yield* TestClock.adjust("5 seconds")
      const error = yield* Fiber.join(fiber)
      assert.strictEqual(error._tag, "ControllerError")
      assert.strictEqual(error.reason, "CacheSyncTimeout")
      assert.include(error.message, "stuck")
    }))
})

describe("Controller: faults of the reconcile itself", () => {
  it.effect("a reconcile that throws while building its Effect is a defect of that round: requeued, the worker lives on", () =>
    Effect.gen(function*() {
      const cms = yield* source(configMaps, [obj("a", "boom"), obj("a", "x")])
      const r = recorder()
      const controller = yield* Controller.make({
        name: "throwing",
        for: cms,
        reconcile: (request) => {
          if (request.name === "boom" && r.count(request.key) === 0) {
            r.seen.push(request.key)
            throw new Error("thrown while building")
          }
          return r.around(request, () => Effect.void)
        }
      })
      yield* eventually(() => r.count("a/x") === 1 && r.count("a/boom") === 1, "both keys")
      yield* TestClock.adjust("1 second")
      yield* eventually(() => r.count("a/boom") === 2, "boom again, after its backoff")
      assert.strictEqual(yield* controller.active, 0)
    }))

  it.effect("an errorPolicy that throws requeues the key", () =>
    Effect.gen(function*() {
      const cms = yield* source(configMaps, [obj("a", "p")])
      const r = recorder()
      yield* Controller.make({
        name: "throwing-policy",
        for: cms,
        errorPolicy: () => {
          throw new Error("policy bug")
        },
        reconcile: (request) => r.around(request, () => r.count(request.key) === 1 ? Effect.fail("x") : Effect.void)
      })
      yield* eventually(() => r.count("a/p") === 1, "first")
      yield* TestClock.adjust("1 second")
      yield* eventually(() => r.count("a/p") === 2, "requeued")
    }))

  it.effect("a reconcile that ends interrupted by itself is requeued, not dropped", () =>
    Effect.gen(function*() {
      const cms = yield* source(configMaps, [obj("a", "i")])
      const r = recorder()
      yield* Controller.make({
        name: "self-interrupted",
        for: cms,
        reconcile: (request) => r.around(request, () => r.count(request.key) === 1 ? Effect.interrupt : Effect.void)
      })
      yield* eventually(() => r.count("a/i") === 1, "first")
      yield* TestClock.adjust("1 second")
      yield* eventually(() => r.count("a/i") === 2, "requeued")
    }))

  it.effect("a controller that cannot start removes its handlers at once", () =>
    Effect.gen(function*() {
      const cms = yield* source(configMaps, [obj("a", "1")])
      const fake = yield* FakeListerWatcher.make<Obj>({ resource: configMaps })
      const unstarted = yield* SharedInformer.make(fake, { name: "never-started-2" })
      const r = recorder()
      const attempt = yield* Effect.forkChild(
        Controller.make({
          name: "failing-start",
          for: cms,
          watches: [{ source: { resource: configMaps, informer: unstarted }, map: () => [] }],
          cacheSyncTimeout: "1 second",
          reconcile: (request) => r.around(request, () => Effect.void)
        }).pipe(Effect.flip)
      )
      yield* TestClock.adjust("1 second")
      assert.strictEqual((yield* Fiber.join(attempt)).reason, "CacheSyncTimeout")
      // no handler of the failed controller is left on the running informer
      yield* cms.fake.add(obj("a", "2"))
      for (let i = 0; i < 30; i++) yield* settle
      assert.deepStrictEqual(r.seen, [])
    }))
})

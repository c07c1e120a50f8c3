/**
 * Controller defaults as client-go and controller-runtime: `requeueAfter(0)` goes through the rate limiter,
 * the default limiter has client-go's overall bucket, and an uninterruptible reconcile holds neither the
 * controller's shutdown nor the end of a leadership term.
 */
import { assert, describe, it } from "@effect/vitest"
import type { Scope } from "effect"
import {
  Clock,
  Deferred,
  Effect,
  Exit,
  Fiber,
  Logger,
  Metric,
  References,
  Scope as ScopeModule,
  Stream,
  SubscriptionRef
} from "effect"
import { TestClock } from "effect/testing"
import * as Controller from "../../src/Controller.js"
import * as ControllerMetrics from "../../src/internal/controller/metrics.js"
import { settle } from "../fixtures/index.js"
import { configMaps, eventually, obj, recorder, source } from "./fixtures.js"

/** Log lines, kept instead of printed (the default logger is replaced for the effect and its forks). */
const quietLogs = () => {
  const lines: Array<string> = []
  const logger = Logger.make(({ fiber, logLevel, message }) => {
    const parts = Array.isArray(message) ? message : [message]
    const annotations = fiber.getRef(References.CurrentLogAnnotations)
    const annotated = Object.entries(annotations).map(([key, value]) => `${key}=${String(value)}`)
    lines.push([logLevel.toUpperCase(), ...parts.map(String), ...annotated].join(" "))
  })
  const run = <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    Effect.provideService(self, Logger.CurrentLoggers, new Set([logger]))
  return { lines, run }
}

const counter = (metric: Metric.Counter<number>, controller: string, result?: string) =>
  Effect.map(
    Metric.value(
      result === undefined
        ? Metric.withAttributes(metric, { controller })
        : metric.pipe(Metric.withAttributes({ controller }), Metric.withAttributes({ result }))
    ),
    (state) => state.count
  )

/** An elector driven by the test: `lead(true)` starts a term, `lead(false)` ends it. */
const fakeElection = Effect.gen(function*() {
  const leading = yield* SubscriptionRef.make(false)
  return {
    lead: (value: boolean) => SubscriptionRef.set(leading, value),
    whileLeading: <A, E, R>(work: Effect.Effect<A, E, R>): Effect.Effect<never, E, Exclude<R, Scope.Scope>> =>
      SubscriptionRef.changes(leading).pipe(
        Stream.changes,
        Stream.switchMap((isLeader) => isLeader ? Stream.fromEffect(Effect.scoped(work)) : Stream.empty),
        Stream.runDrain,
        Effect.andThen(Effect.never)
      ) as never
  }
})

describe("Controller: defaults", () => {
  for (const delay of ["0 millis", "-1 second"] as const) {
    it.effect(`requeueAfter(${delay}) requeues through the rate limiter (5 ms doubling), not in a hot loop`, () =>
      Effect.gen(function*() {
        const name = `requeue-after-${delay.replace(/\s/g, "")}`
        const cms = yield* source(configMaps, [obj("a", "again")])
        const times: Array<number> = []
        const controller = yield* Controller.make({
          name,
          for: cms,
          reconcile: () =>
            Effect.gen(function*() {
              times.push(yield* Clock.currentTimeMillis)
              return times.length <= 4 ? Controller.requeueAfter(delay) : Controller.done
            })
        })
        yield* eventually(() => times.length === 1, "the first reconcile")
        for (let i = 0; i < 20; i++) yield* settle
        assert.strictEqual(times.length, 1, "not again before the clock moves")
        for (let i = 0; i < 200 && times.length < 5; i++) yield* TestClock.adjust("1 millis")
        const start = times[0]!
        assert.deepStrictEqual(times.map((t) => t - start), [0, 5, 15, 35, 75])
        // counted as controller-runtime's Requeue (rate limited, the key's failures kept), the last as success
        assert.strictEqual(yield* counter(ControllerMetrics.reconciles, name, "requeue"), 4)
        assert.strictEqual(yield* counter(ControllerMetrics.reconciles, name, "requeue_after"), 0)
        assert.strictEqual(yield* counter(ControllerMetrics.reconciles, name, "success"), 1)
        assert.strictEqual(yield* controller.queue.numRequeues("a/again"), 0, "done forgets")
      }))
  }

  it.effect("an errorPolicy answering requeueAfter(0) goes through the rate limiter too", () =>
    Effect.gen(function*() {
      const cms = yield* source(configMaps, [obj("a", "failing")])
      const times: Array<number> = []
      const logs = quietLogs()
      const controller = yield* logs.run(Controller.make({
        name: "policy-requeue-after-0",
        for: cms,
        errorPolicy: () => Controller.requeueAfter(0),
        reconcile: () =>
          Effect.flatMap(Clock.currentTimeMillis, (now) => {
            times.push(now)
            return Effect.fail("no")
          })
      }))
      yield* eventually(() => times.length === 1, "the first reconcile")
      for (let i = 0; i < 20; i++) yield* settle
      assert.strictEqual(times.length, 1)
      for (let i = 0; i < 20 && times.length < 3; i++) yield* TestClock.adjust("1 millis")
      assert.deepStrictEqual(times.map((t) => t - times[0]!), [0, 5, 15])
      assert.strictEqual(yield* controller.queue.numRequeues("a/failing"), 3)
    }))

  it.effect(
    "the default limiter is client-go's: 10,000 always-failing keys make 10,400 reconciles in 30 s, not 130,000",
    () =>
      Effect.gen(function*() {
        const cms = yield* source(configMaps, [])
        const logs = quietLogs()
        let reconciles = 0
        const controller = yield* logs.run(Controller.make({
          name: "mass-failure",
          for: cms,
          concurrency: 4,
          readYourWrites: false,
          reconcile: () =>
            Effect.suspend(() => {
              reconciles++
              return Effect.fail("always")
            })
        }))
        const keys = Array.from({ length: 10_000 }, (_, i) => `ns/k${i}`)
        yield* controller.queue.addAll(keys)
        yield* eventually(() => reconciles >= 10_000, "every key once")
        for (let i = 0; i < 5; i++) yield* settle
        // the 100 of the burst wait 5 ms (their own first backoff), the others 100 ms more each
        assert.strictEqual(reconciles, 10_000)
        yield* TestClock.adjust("5 millis")
        yield* eventually(() => reconciles === 10_100, "the burst")
        const at: Array<number> = []
        for (let second = 1; second <= 30; second++) {
          for (let step = 0; step < 10; step++) yield* TestClock.adjust("100 millis")
          yield* settle
          at.push(reconciles - 10_000)
        }
        // client-go's DefaultControllerRateLimiter: the burst, then 10 retries a second (the retries' own
        // failures reserve tokens behind the first 10,000, past the 30 s)
        assert.deepStrictEqual(at, Array.from({ length: 30 }, (_, i) => 100 + 10 * (i + 1)))
        assert.strictEqual(reconciles, 10_400)
        // one warning per failed reconcile, no more
        assert.strictEqual(logs.lines.filter((line) => line.includes("reconcile of ns/k")).length, 10_400)
        assert.strictEqual(yield* counter(ControllerMetrics.reconciles, "mass-failure", "error"), 10_400)
      }),
    60_000
  )

  it.effect("an uninterruptible reconcile does not hold the shutdown: the others are interrupted at shutdownTimeout, it is reported with its key 1 s later and left behind", () =>
    Effect.gen(function*() {
      const cms = yield* source(configMaps, [obj("ns", "stuck"), obj("ns", "slow")])
      const logs = quietLogs()
      const events: Array<string> = []
      const release = yield* Deferred.make<void>()
      const r = recorder()
      const scope = yield* ScopeModule.make()
      const controller = yield* logs.run(
        Controller.make({
          name: "uninterruptible",
          for: cms,
          concurrency: 2,
          shutdownTimeout: "5 seconds",
          reconcile: (request) =>
            r.around(request, () =>
              request.name === "stuck"
                ? Deferred.await(release).pipe(
                  Effect.andThen(Effect.sync(() => void events.push("stuck ended"))),
                  Effect.uninterruptible
                )
                : Effect.sleep("1 minute").pipe(
                  Effect.onInterrupt(() => Effect.sync(() => void events.push("slow interrupted")))
                ))
        }).pipe(ScopeModule.provide(scope))
      )
      yield* eventually(() => r.seen.length === 2, "both reconciles")
      const closing = yield* Effect.forkChild(logs.run(ScopeModule.close(scope, Exit.void)))
      yield* settle
      yield* TestClock.adjust("5 seconds")
      yield* eventually(() => events.includes("slow interrupted"), "the interruption at the deadline")
      assert.isUndefined(closing.pollUnsafe(), "the interruption gets its grace")
      yield* TestClock.adjust("999 millis")
      assert.isUndefined(closing.pollUnsafe())
      yield* TestClock.adjust("1 millis")
      yield* Fiber.join(closing)
      assert.deepStrictEqual(events, ["slow interrupted"])
      const reported = logs.lines.filter((line) => line.includes("left behind"))
      assert.strictEqual(reported.length, 1)
      assert.include(reported[0], "ERROR")
      assert.include(reported[0], "the reconcile of ns/stuck did not end")
      assert.include(reported[0], "key=ns/stuck")
      assert.strictEqual(yield* counter(ControllerMetrics.abandonedReconciles, "uninterruptible"), 1)
      assert.strictEqual(yield* controller.active, 1, "still counted as running")
      // left behind, it still ends when it can
      yield* Deferred.succeed(release, void 0)
      yield* eventually(() => events.includes("stuck ended"), "the abandoned reconcile's end")
      yield* eventually(() => r.seen.length === 2, "settled")
      assert.strictEqual(yield* controller.active, 0)
    }))

  it.live("a reconcile that is never interruptible: the scope still closes (live clock, 100 ms timeout)", () =>
    Effect.scoped(Effect.gen(function*() {
      const cms = yield* source(configMaps, [obj("ns", "forever")])
      const logs = quietLogs()
      const scope = yield* ScopeModule.make()
      let started = false
      yield* logs.run(
        Controller.make({
          name: "never-interruptible",
          for: cms,
          shutdownTimeout: "100 millis",
          reconcile: () =>
            Effect.sync(() => {
              started = true
            }).pipe(Effect.andThen(Effect.never), Effect.uninterruptible)
        }).pipe(ScopeModule.provide(scope))
      )
      while (!started) yield* Effect.sleep("5 millis")
      const start = Date.now()
      const exit = yield* logs.run(ScopeModule.close(scope, Exit.void)).pipe(Effect.timeout("5 seconds"), Effect.exit)
      const took = Date.now() - start
      assert.isTrue(Exit.isSuccess(exit), "closed")
      assert.isAtLeast(took, 1000, "the timeout, then the interruption's grace")
      assert.isBelow(took, 4000)
      assert.isTrue(logs.lines.some((line) => line.includes("ns/forever") && line.includes("left behind")))
    })))

  it.effect("leader election: a term with an uninterruptible reconcile still ends (stepDownTimeout + 1 s); the next term runs, without that key until it ends", () =>
    Effect.gen(function*() {
      const cms = yield* source(configMaps, [obj("ns", "stuck")])
      const election = yield* fakeElection
      const logs = quietLogs()
      const r = recorder()
      const release = yield* Deferred.make<void>()
      const controller = yield* logs.run(Controller.make({
        name: "uninterruptible-term",
        for: cms,
        leaderElection: { ...election, stepDownTimeout: "2 seconds" },
        reconcile: (request) =>
          r.around(request, () =>
            request.name === "stuck" && r.count(request.key) === 1
              ? Effect.uninterruptible(Deferred.await(release))
              : Effect.void)
      }))
      yield* election.lead(true)
      yield* eventually(() => r.seen.length === 1, "the first term's reconcile")
      yield* election.lead(false)
      for (let i = 0; i < 30; i++) yield* settle
      yield* TestClock.adjust("2 seconds")
      yield* settle
      assert.isFalse(logs.lines.some((line) => line.includes("left behind")))
      yield* TestClock.adjust("1 second")
      yield* eventually(
        () => logs.lines.some((line) => line.includes("left behind") && line.includes("key=ns/stuck")),
        "the report"
      )
      assert.strictEqual(yield* counter(ControllerMetrics.abandonedReconciles, "uninterruptible-term"), 1)
      // the term has ended: the next one starts and reconciles other keys, not the one still held
      yield* cms.fake.add(obj("ns", "other"))
      yield* cms.fake.modify(obj("ns", "stuck", { data: { v: "2" } }))
      yield* election.lead(true)
      yield* eventually(() => r.count("ns/other") === 1, "the next term")
      for (let i = 0; i < 30; i++) yield* settle
      assert.strictEqual(r.count("ns/stuck"), 1, "never two reconciles of one key at once")
      assert.isFalse(r.sameKeyOverlap)
      yield* Deferred.succeed(release, void 0)
      yield* eventually(() => r.count("ns/stuck") === 2, "reconciled again once the abandoned one ended")
      assert.isFalse(r.sameKeyOverlap)
      assert.strictEqual(yield* controller.active, 0)
    }))
})

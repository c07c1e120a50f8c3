/**
 * Controller: shutdown order (stop taking work, finish or interrupt what runs, remove the handlers, then the
 * informers, which belong to an outer scope).
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, Fiber, Scope } from "effect"
import { TestClock } from "effect/testing"
import * as Controller from "../../src/Controller.js"
import { settle } from "../fixtures/index.js"
import type { Obj } from "./fixtures.js"
import { configMaps, eventually, obj, recorder, source } from "./fixtures.js"

const quiet = Effect.gen(function*() {
  for (let i = 0; i < 30; i++) yield* settle
})

describe("Controller: shutdown", () => {
  it.effect("closing the scope lets the reconcile in progress finish, takes no new work, then removes the handlers", () =>
    Effect.gen(function*() {
      const cms = yield* source(configMaps, [obj("ns", "a"), obj("ns", "b")])
      const r = recorder()
      const events: Array<string> = []
      const scope = yield* Scope.make()
      yield* Controller.make<Obj, never, never>({
        name: "graceful",
        for: cms,
        reconcile: (request) =>
          r.around(request, () =>
            Effect.sleep("1 second").pipe(
              Effect.andThen(Effect.sync(() => void events.push(`finished ${request.key}`))),
              Effect.onInterrupt(() => Effect.sync(() => events.push(`interrupted ${request.key}`)))
            ))
      }).pipe(Scope.provide(scope))
      yield* eventually(() => r.seen.length === 1, "the first reconcile")
      const closing = yield* Effect.forkChild(Scope.close(scope, Exit.void))
      yield* settle
      assert.isUndefined(closing.pollUnsafe(), "waits for the reconcile in progress")
      yield* TestClock.adjust("1 second")
      yield* Fiber.join(closing)
      assert.deepStrictEqual(events, [`finished ${r.seen[0]}`])
      assert.strictEqual(r.seen.length, 1, "the other key was not started")
      // the informer still runs (its scope is the test's), and no handler of the controller is left on it
      assert.isFalse(yield* cms.informer.isStopped)
      yield* cms.fake.add(obj("ns", "c"))
      yield* quiet
      assert.strictEqual(r.seen.length, 1)
    }))

  it.effect("a reconcile still running after shutdownTimeout is interrupted", () =>
    Effect.gen(function*() {
      const cms = yield* source(configMaps, [obj("ns", "slow")])
      const events: Array<string> = []
      const scope = yield* Scope.make()
      const r = recorder()
      yield* Controller.make({
        name: "deadline",
        for: cms,
        shutdownTimeout: "5 seconds",
        reconcile: (request) =>
          r.around(request, () =>
            Effect.sleep("1 minute").pipe(Effect.onInterrupt(() => Effect.sync(() => events.push("interrupted")))))
      }).pipe(Scope.provide(scope))
      yield* eventually(() =>
        r.seen.length === 1, "the reconcile")
      const closing = yield* Effect.forkChild(Scope.close(scope, Exit.void))
      yield* TestClock.adjust("4999 millis")
      assert.isUndefined(closing.pollUnsafe())
      yield* TestClock.adjust("1 millis")
      yield* Fiber.join(closing)
      assert.deepStrictEqual(events, ["interrupted"])
    }))

  it.effect("the informers stop after the controller: built in a nested scope, the controller is gone first", () =>
    Effect.gen(function*() {
      const outer = yield* Scope.make()
      const cms = yield* source(configMaps, [obj("ns", "a")]).pipe(Scope.provide(outer))
      const inner = yield* Scope.fork(outer, "sequential")
      const seen: Array<string> = []
      // the inner scope's first finalizer runs last: after the controller's own
      yield* Scope.addFinalizer(
        inner,
        Effect.flatMap(
          cms.informer.isStopped,
          (stopped) => Effect.sync(() => seen.push(`informer stopped: ${stopped}`))
        )
      )
      yield* Controller.make({ name: "nested", for: cms, reconcile: () => Effect.void }).pipe(Scope.provide(inner))
      yield* settle
      yield* Scope.close(outer, Exit.void)
      assert.deepStrictEqual(seen, ["informer stopped: false"])
      assert.isTrue(yield* cms.informer.isStopped)
    }))
  it.effect("the workers are fibers of the controller's scope: all have ended, after their reconciles, when a finalizer made before the controller runs", () =>
    Effect.gen(function*() {
      const cms = yield* source(configMaps, [obj("ns", "a"), obj("ns", "b")])
      const scope = yield* Scope.make()
      const events: Array<string> = []
      const workers = new Set<Fiber.Fiber<unknown, unknown>>()
      // made before the controller, so run after its finalizers
      yield* Scope.addFinalizer(
        scope,
        Effect.sync(() => {
          const running = Array.from(workers).filter((fiber) => fiber.pollUnsafe() === undefined).length
          events.push(`${workers.size} workers, ${running} running`)
        })
      )
      const controller = yield* Controller.make({
        name: "workers-in-scope",
        for: cms,
        concurrency: 2,
        reconcile: (request) =>
          Effect.gen(function*() {
            workers.add(yield* Effect.fiber)
            yield* Effect.sleep("1 second")
            events.push(`finished ${request.key}`)
          })
      }).pipe(Scope.provide(scope))
      yield* eventually(() => workers.size === 2, "both workers reconciling")
      const closing = yield* Effect.forkChild(Scope.close(scope, Exit.void))
      yield* settle
      assert.isUndefined(closing.pollUnsafe(), "waits for the reconciles in progress")
      assert.isTrue(yield* controller.queue.isShuttingDown, "the queue takes no more work from the start")
      yield* TestClock.adjust("1 second")
      yield* Fiber.join(closing)
      assert.deepStrictEqual(events, ["finished ns/a", "finished ns/b", "2 workers, 0 running"])
    }))

  it.effect("reconciles that end as the shutdown begins do not hold it until shutdownTimeout", () =>
    Effect.gen(function*() {
      const cms = yield* source(configMaps, Array.from({ length: 200 }, (_, i) => obj("ns", `o${i}`)))
      const scope = yield* Scope.make()
      let reconciled = 0
      // busy workers: the shutdown finds reconciles in flight, which may end before its wait for them begins
      // (a settle the wait must not miss; bench/controllerMicro.ts showed it, this test need not)
      yield* Controller.make({
        name: "ends-at-shutdown",
        for: cms,
        concurrency: 4,
        reconcile: () => Effect.andThen(Effect.yieldNow, Effect.sync(() => void reconciled++))
      }).pipe(Scope.provide(scope))
      yield* eventually(() => reconciled >= 20, "some reconciles")
      const closing = yield* Effect.forkChild(Scope.close(scope, Exit.void))
      yield* quiet
      assert.isDefined(closing.pollUnsafe(), "closed without waiting for shutdownTimeout")
      yield* Fiber.join(closing)
    }))
})

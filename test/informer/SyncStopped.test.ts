/**
 * Waiting for sync ends when the informer stops unsynced (client-go: `WaitForCacheSync(stopCh)` returns
 * false once `stopCh` is closed). `informer.synced`, a registration's `synced` and the factory's
 * `waitForCacheSync()` fail with a typed error naming the informers that never synced, for waits pending at
 * the stop and for waits that start after it; a wait on something that did sync keeps succeeding.
 *
 * The informers get a 403 Forbidden on every list. Every test builds its own fakes and informers and
 * drives time with TestClock; a wait that should have ended is polled, so a hang shows as a failed
 * assertion, not a test timeout.
 */
import { assert, describe, it } from "@effect/vitest"
import { Cause, Context, Deferred, Duration, Effect, Exit, Fiber, Layer, Option, Scope } from "effect"
import * as FakeListerWatcher from "../../src/FakeListerWatcher.js"
import * as InformerFactory from "../../src/InformerFactory.js"
import type { KubeObject } from "../../src/KubeObject.js"
import type { ReflectorError } from "../../src/Reflector.js"
import * as Resource from "../../src/Resource.js"
import * as SharedInformer from "../../src/SharedInformer.js"
import { advance, pod as fixturePod, settle, statusError } from "../fixtures/index.js"

// -------------------------------------------------------------------------------------------------
// helpers
// -------------------------------------------------------------------------------------------------

const forbidden = statusError(403, "Forbidden", `pods is forbidden: User "x" cannot list resource "pods"`)

/** An error's tag and reason, as the Reflector's logs name them: `StatusError (Forbidden)`. */
const kindOf = (error: Option.Option<ReflectorError>): string | undefined =>
  Option.match(error, {
    onNone: () => undefined,
    onSome: (e) => `${e._tag} (${"reason" in e ? e.reason : e._tag === "StoreError" ? e.operation : "Defect"})`
  })

/** "Forever" for these tests: far more lists than the backoff lets happen in the virtual time they use. */
const forever = 1000

const pod = (name: string): KubeObject => fixturePod(name, { namespace: "default", uid: name })

/** The exit of a wait that must have ended by now: settles, then polls (never hangs the test). */
const ended = <A, E>(fiber: Fiber.Fiber<A, E>, what: string): Effect.Effect<Exit.Exit<A, E>> =>
  Effect.gen(function*() {
    yield* settle
    const exit = fiber.pollUnsafe()
    if (exit === undefined) {
      yield* Fiber.interrupt(fiber)
      return assert.fail(`${what} is still waiting`)
    }
    return exit
  })

/** Asserts a wait is still pending. */
const pending = <A, E>(fiber: Fiber.Fiber<A, E>, what: string): Effect.Effect<void> =>
  Effect.gen(function*() {
    yield* settle
    assert.isTrue(fiber.pollUnsafe() === undefined, `${what} should still be waiting`)
  })

/** The typed failure of an exit (fails the test on success, interruption or defect). */
const failureOf = <A, E>(exit: Exit.Exit<A, E>): E => {
  if (Exit.isSuccess(exit)) return assert.fail("expected a failure, got a success")
  const failure = Cause.findErrorOption(exit.cause)
  if (Option.isNone(failure)) return assert.fail(`expected a typed failure, got ${Cause.pretty(exit.cause)}`)
  return failure.value
}

/** A fresh fake and an informer over it, in a scope of its own (closing it stops the informer). */
const informerSetup = (
  options: { readonly forbidden?: boolean; readonly initial?: ReadonlyArray<KubeObject> } = {}
) =>
  Effect.gen(function*() {
    const scope = yield* Scope.make()
    yield* Effect.addFinalizer(() => Scope.close(scope, Exit.void))
    const fake = yield* FakeListerWatcher.make<KubeObject>({ initial: options.initial ?? [] })
    if (options.forbidden === true) yield* fake.failNextList(forbidden, forever)
    const informer = yield* SharedInformer.make(fake, { name: "pods", reflector: { watchList: false } }).pipe(
      Scope.provide(scope)
    )
    return { fake, informer, stop: Scope.close(scope, Exit.void) }
  })

/** Fresh fakes and a factory, in a scope of its own (closing it shuts the factory down). */
const factorySetup = Effect.gen(function*() {
  const scope = yield* Scope.make()
  yield* Effect.addFinalizer(() => Scope.close(scope, Exit.void))
  const context = yield* Layer.build(FakeListerWatcher.layerSource()).pipe(Scope.provide(scope))
  const fakes = Context.get(context, FakeListerWatcher.FakeListerWatcherSource)
  const factory = yield* InformerFactory.make({ reflector: { watchList: false } }).pipe(
    Effect.provide(context),
    Scope.provide(scope)
  )
  return { factory, fakes, closeScope: Scope.close(scope, Exit.void) }
})

const assertInformerStopped = (error: SharedInformer.InformerStoppedError, handler?: string): void => {
  assert.instanceOf(error, SharedInformer.InformerStoppedError)
  assert.strictEqual(error._tag, "InformerStoppedError")
  assert.strictEqual(error.informer, "pods")
  assert.strictEqual(error.operation, "synced")
  assert.strictEqual(error.handler, handler)
  assert.include(error.message, "pods")
  assert.include(error.message, "stopped before")
  if (handler !== undefined) assert.include(error.message, handler)
}

// -------------------------------------------------------------------------------------------------
// informer.synced
// -------------------------------------------------------------------------------------------------

describe("SyncStopped - informer.synced", () => {
  it.effect("a pending wait fails with InformerStoppedError when the scope closes (403 forever)", () =>
    Effect.gen(function*() {
      const { informer, stop } = yield* informerSetup({ forbidden: true })
      yield* informer.start
      const waiting = yield* Effect.forkChild(informer.synced)
      yield* advance("10 seconds") // several failed lists with backoff
      yield* pending(waiting, "informer.synced")
      assert.isFalse(yield* informer.hasSynced)
      yield* stop
      assertInformerStopped(failureOf(yield* ended(waiting, "informer.synced")))
      assert.isFalse(yield* informer.hasSynced)
    }))

  it.effect("a wait that starts after the stop fails at once", () =>
    Effect.gen(function*() {
      const { informer, stop } = yield* informerSetup({ forbidden: true })
      yield* informer.start
      yield* settle
      yield* stop
      const waiting = yield* Effect.forkChild(informer.synced)
      assertInformerStopped(failureOf(yield* ended(waiting, "informer.synced after stop")))
    }))

  it.effect("an informer stopped without ever starting fails its waits too", () =>
    Effect.gen(function*() {
      const { informer, stop } = yield* informerSetup()
      const waiting = yield* Effect.forkChild(informer.synced)
      yield* pending(waiting, "informer.synced")
      yield* stop
      assertInformerStopped(failureOf(yield* ended(waiting, "informer.synced")))
    }))

  it.effect("a synced informer's synced still succeeds after stop, and hasSynced stays true", () =>
    Effect.gen(function*() {
      const { informer, stop } = yield* informerSetup({ initial: [pod("a")] })
      yield* informer.start
      yield* informer.synced
      yield* stop
      assert.isTrue(yield* informer.isStopped)
      assert.isTrue(yield* informer.hasSynced)
      const waiting = yield* Effect.forkChild(informer.synced)
      assert.isTrue(Exit.isSuccess(yield* ended(waiting, "informer.synced after stop")))
    }))
})

// -------------------------------------------------------------------------------------------------
// registration.synced
// -------------------------------------------------------------------------------------------------

describe("SyncStopped - registration.synced", () => {
  it.effect("a pending wait fails with InformerStoppedError naming the informer and handler (403 forever)", () =>
    Effect.gen(function*() {
      const { informer, stop } = yield* informerSetup({ forbidden: true })
      const registration = yield* informer.addEventHandler<never, never>({ name: "reconciler" })
      yield* informer.start
      const waiting = yield* Effect.forkChild(registration.synced)
      yield* advance("10 seconds")
      yield* pending(waiting, "registration.synced")
      yield* stop
      assertInformerStopped(failureOf(yield* ended(waiting, "registration.synced")), "reconciler")
      assert.isFalse(yield* registration.hasSynced)
    }))

  it.effect("the informer synced but the handler had not returned from its initial adds: the wait fails", () =>
    Effect.gen(function*() {
      const { informer, stop } = yield* informerSetup({ initial: [pod("a")] })
      const entered = yield* Deferred.make<void>()
      const registration = yield* informer.addEventHandler({
        name: "stuck",
        onAdd: () => Effect.andThen(Deferred.succeed(entered, undefined), Effect.never)
      })
      yield* informer.start
      yield* informer.synced
      yield* Deferred.await(entered)
      const waiting = yield* Effect.forkChild(registration.synced)
      yield* pending(waiting, "registration.synced")
      yield* stop
      assertInformerStopped(failureOf(yield* ended(waiting, "registration.synced")), "stuck")
      assert.isFalse(yield* registration.hasSynced)
    }))

  it.effect("a wait that starts after the stop fails at once, also after a removal following the stop", () =>
    Effect.gen(function*() {
      const { informer, stop } = yield* informerSetup({ forbidden: true })
      const registration = yield* informer.addEventHandler<never, never>({ name: "late" })
      yield* informer.start
      yield* settle
      yield* stop
      const waiting = yield* Effect.forkChild(registration.synced)
      assertInformerStopped(failureOf(yield* ended(waiting, "registration.synced after stop")), "late")
      yield* registration.remove
      const again = yield* Effect.forkChild(registration.synced)
      assertInformerStopped(failureOf(yield* ended(again, "registration.synced after stop and removal")), "late")
    }))

  it.effect("a synced registration's synced still succeeds after stop", () =>
    Effect.gen(function*() {
      const { informer, stop } = yield* informerSetup({ initial: [pod("a")] })
      const registration = yield* informer.addEventHandler({ name: "quick", onAdd: () => Effect.void })
      yield* informer.start
      yield* registration.synced
      yield* stop
      assert.isTrue(yield* registration.hasSynced)
      const waiting = yield* Effect.forkChild(registration.synced)
      assert.isTrue(Exit.isSuccess(yield* ended(waiting, "registration.synced after stop")))
    }))

  it.effect("removal before sync still interrupts the waiters (the informer did not stop)", () =>
    Effect.gen(function*() {
      const { informer } = yield* informerSetup({ forbidden: true })
      const registration = yield* informer.addEventHandler<never, never>({ name: "removed" })
      yield* informer.start
      const waiting = yield* Effect.forkChild(registration.synced)
      yield* pending(waiting, "registration.synced")
      yield* registration.remove
      assert.isTrue(Exit.hasInterrupts(yield* ended(waiting, "registration.synced after removal")))
    }))
})

// -------------------------------------------------------------------------------------------------
// factory.waitForCacheSync
// -------------------------------------------------------------------------------------------------

const assertStoppedSyncError = (error: InformerFactory.CacheSyncError): void => {
  assert.strictEqual(error._tag, "CacheSyncError")
  assert.strictEqual(error.reason, "Stopped")
  assert.include(error.message, "pods in default")
  assert.include(error.message, "stopped")
  assert.include(error.message, "StatusError (Forbidden)")
  assert.include(error.message, "cannot list resource")
  assert.notInclude(error.message, "nodes") // the synced informer is not named
  const pods = error.informers.find((s) => s.informer === "pods in default")
  assert.isFalse(pods?.synced)
  assert.strictEqual(kindOf(pods!.lastError), "StatusError (Forbidden)")
  assert.isTrue(error.informers.find((s) => s.informer === "nodes")?.synced)
}

describe("SyncStopped - factory.waitForCacheSync", () => {
  for (const how of ["shutdown", "scope close"] as const) {
    it.effect(`without a timeout: fails with CacheSyncError "Stopped" naming the unsynced informer (${how})`, () =>
      Effect.gen(function*() {
        const { closeScope, factory, fakes } = yield* factorySetup
        yield* fakes.fakeFor(Resource.pods).failNextList(forbidden, forever)
        yield* factory.informerFor(Resource.pods, { namespace: "default" })
        yield* factory.informerFor(Resource.nodes)
        yield* factory.start
        const waiting = yield* Effect.forkChild(factory.waitForCacheSync())
        yield* advance("1 minute")
        yield* pending(waiting, "waitForCacheSync()")
        yield* how === "shutdown" ? factory.shutdown : closeScope
        const error = failureOf(yield* ended(waiting, "waitForCacheSync()"))
        assertStoppedSyncError(error)
        assert.isTrue(Duration.equals(error.timeout, Duration.infinity))
      }))
  }

  it.effect("names every informer that never synced", () =>
    Effect.gen(function*() {
      const { factory, fakes } = yield* factorySetup
      yield* fakes.fakeFor(Resource.pods).failNextList(forbidden, forever)
      yield* fakes.fakeFor(Resource.deployments).failNextList(forbidden, forever)
      yield* factory.informerFor(Resource.pods, { namespace: "default" })
      yield* factory.informerFor(Resource.deployments)
      yield* factory.informerFor(Resource.nodes)
      yield* factory.start
      const waiting = yield* Effect.forkChild(factory.waitForCacheSync())
      yield* pending(waiting, "waitForCacheSync()")
      yield* factory.shutdown
      const error = failureOf(yield* ended(waiting, "waitForCacheSync()"))
      assert.strictEqual(error.reason, "Stopped")
      assert.include(error.message, "pods in default")
      assert.include(error.message, "deployments.apps in all namespaces")
      assert.notInclude(error.message, "nodes")
      assert.deepStrictEqual(
        error.informers.filter((s) => !s.synced).map((s) => s.informer).sort(),
        ["deployments.apps in all namespaces", "pods in default"]
      )
    }))

  it.effect("with a timeout: an informer stopping unsynced ends the wait early, as \"Stopped\"", () =>
    Effect.gen(function*() {
      const { factory, fakes } = yield* factorySetup
      yield* fakes.fakeFor(Resource.pods).failNextList(forbidden, forever)
      yield* factory.informerFor(Resource.pods, { namespace: "default" })
      yield* factory.informerFor(Resource.nodes)
      yield* factory.start
      const waiting = yield* Effect.forkChild(factory.waitForCacheSync({ timeout: "1 hour" }))
      yield* advance("1 minute")
      yield* pending(waiting, "waitForCacheSync({ timeout })")
      yield* factory.shutdown
      const error = failureOf(yield* ended(waiting, "waitForCacheSync({ timeout })"))
      assertStoppedSyncError(error)
      assert.isTrue(Duration.equals(error.timeout, Duration.hours(1)))
    }))

  it.effect("a wait that starts after the shutdown fails at once", () =>
    Effect.gen(function*() {
      const { factory, fakes } = yield* factorySetup
      yield* fakes.fakeFor(Resource.pods).failNextList(forbidden, forever)
      yield* factory.informerFor(Resource.pods, { namespace: "default" })
      yield* factory.informerFor(Resource.nodes)
      yield* factory.start
      yield* settle
      yield* factory.shutdown
      const waiting = yield* Effect.forkChild(factory.waitForCacheSync())
      assertStoppedSyncError(failureOf(yield* ended(waiting, "waitForCacheSync() after shutdown")))
    }))

  it.effect("synced informers: waitForCacheSync() still succeeds after the shutdown", () =>
    Effect.gen(function*() {
      const { factory, fakes } = yield* factorySetup
      yield* fakes.fakeFor(Resource.pods).add({ metadata: { namespace: "default", name: "web", uid: "web" } })
      yield* factory.informerFor(Resource.pods, { namespace: "default" })
      yield* factory.start
      yield* factory.waitForCacheSync()
      yield* factory.shutdown
      const waiting = yield* Effect.forkChild(factory.waitForCacheSync())
      const exit = yield* ended(waiting, "waitForCacheSync() after shutdown")
      assert.isTrue(Exit.isSuccess(exit))
      if (Exit.isSuccess(exit)) {
        assert.deepStrictEqual(exit.value.map((s) => [s.informer, s.synced]), [["pods in default", true]])
      }
    }))

  it.effect("the timeout case is reason \"Timeout\"", () =>
    Effect.gen(function*() {
      const { factory, fakes } = yield* factorySetup
      yield* fakes.fakeFor(Resource.pods).failNextList(forbidden, forever)
      yield* factory.informerFor(Resource.pods, { namespace: "default" })
      yield* factory.start
      const waiting = yield* Effect.forkChild(factory.waitForCacheSync({ timeout: "10 seconds" }))
      yield* advance("10 seconds")
      const error = failureOf(yield* ended(waiting, "waitForCacheSync({ timeout })"))
      assert.strictEqual(error.reason, "Timeout")
      assert.include(error.message, "not synced after 10s")
      assert.include(error.message, "pods in default")
    }))
})

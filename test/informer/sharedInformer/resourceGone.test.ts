/**
 * SharedInformer: its resource is gone (a LIST answered 404 NotFound). The informer stops by itself as a close
 * of its scope would stop it: the controller, then the stop (sync waits fail with `reason: "ResourceGone"`),
 * then the handlers' fibers (a callback in progress is interrupted); no fiber is left; the cache keeps what
 * it held.
 */
import { assert, describe, it } from "@effect/vitest"
import { Deferred, Effect, Fiber, Option, Stream } from "effect"
import { statusError } from "../../fixtures/index.js"
import { adjust, eventually, FiberTracker, namesOf, pod, recorder, setup } from "./fixtures.js"

const notFound = () => statusError(404, "NotFound", "the server could not find the requested resource")

describe("SharedInformer: the resource is gone", () => {
  it.effect("never synced: synced fails with ResourceGone, awaitStop says so, nothing can be added, no fiber left", () =>
    Effect.gen(function*() {
      const tracker = new FiberTracker()
      const { fake, informer } = yield* Effect.gen(function*() {
        const env = yield* setup({ name: "widgets", reflector: { watchList: false } })
        yield* env.fake.failNextList(notFound(), 1000)
        const registration = yield* env.informer.addEventHandler(recorder().handler)
        const waiting = yield* Effect.forkChild(Effect.flip(registration.synced))
        yield* env.informer.start
        const error = yield* Effect.flip(env.informer.synced)
        assert.strictEqual(error._tag, "InformerStoppedError")
        assert.strictEqual(error.reason, "ResourceGone")
        assert.strictEqual(
          error.message,
          "shared informer widgets stopped before it synced: its resource is gone (a LIST answered 404 NotFound)"
        )
        const handlerError = yield* Fiber.join(waiting)
        assert.strictEqual(handlerError.reason, "ResourceGone")
        return env
      }).pipe(tracker.track)
      assert.strictEqual(yield* informer.awaitStop, "ResourceGone")
      assert.isTrue(yield* informer.isStopped)
      assert.isTrue(yield* informer.isStarted)
      assert.isFalse(yield* informer.hasSynced)
      assert.deepStrictEqual(
        yield* informer.status,
        Option.some({ _tag: "Stopped" as const, reason: "ResourceGone" as const })
      )
      const refused = yield* Effect.flip(informer.addEventHandler(recorder().handler))
      assert.strictEqual(refused.reason, "ResourceGone")
      assert.strictEqual((yield* Effect.flip(informer.start)).reason, "ResourceGone")
      yield* eventually(() => tracker.running() === 0, "every fiber of the informer ended")
      assert.strictEqual(yield* fake.openWatches, 0)
    }))

  it.effect("gone after it synced: the handler in progress is interrupted, the streams end, the cache is kept", () =>
    Effect.gen(function*() {
      const tracker = new FiberTracker()
      const interrupted = yield* Deferred.make<void>()
      const inProgress = yield* Deferred.make<void>()
      const { fake, informer, notifications, errors } = yield* Effect.gen(function*() {
        const env = yield* setup({ reflector: { watchList: false } }, [pod("a"), pod("b")])
        yield* env.informer.addEventHandler({
          onUpdate: () =>
            Deferred.succeed(inProgress, undefined).pipe(
              Effect.andThen(Effect.never),
              Effect.onInterrupt(() => Deferred.succeed(interrupted, undefined))
            )
        })
        const notifications = yield* Effect.forkChild(Stream.runCount(env.informer.notifications))
        const errors = yield* Effect.forkChild(Stream.runCollect(env.informer.errors))
        yield* env.informer.start
        yield* env.informer.synced
        yield* env.fake.modify(pod("a", { labels: { changed: "yes" } }))
        yield* Deferred.await(inProgress)
        // the CRD is deleted: the watch fails, the relist's LIST is a 404
        yield* env.fake.failNextList(notFound(), 1000)
        yield* env.fake.failWatches(notFound())
        yield* adjust("2 seconds")
        return { ...env, notifications, errors }
      }).pipe(tracker.track)
      assert.strictEqual(yield* informer.awaitStop, "ResourceGone")
      yield* Deferred.await(interrupted)
      assert.isTrue(yield* informer.hasSynced) // stays true
      yield* informer.synced
      assert.deepStrictEqual(namesOf(yield* informer.indexer.list), ["a", "b"])
      assert.strictEqual(yield* Fiber.join(notifications), 3) // two adds, one update
      const reported = (yield* Fiber.join(errors)).map(({ context, error }) =>
        `${context.phase}:${error._tag}(${"reason" in error ? error.reason : ""})`
      )
      assert.deepStrictEqual(reported, ["watch:StatusError(NotFound)", "list:StatusError(NotFound)"])
      yield* eventually(() => tracker.running() === 0, "every fiber of the informer ended")
      assert.strictEqual(yield* fake.openWatches, 0)
    }))

  it.effect("closing the scope afterwards changes nothing: the reason stays ResourceGone", () =>
    Effect.gen(function*() {
      const { fake, informer, stop } = yield* setup({ reflector: { watchList: false } })
      yield* fake.failNextList(notFound(), 1000)
      yield* informer.start
      assert.strictEqual(yield* informer.awaitStop, "ResourceGone")
      yield* stop
      assert.strictEqual(yield* informer.awaitStop, "ResourceGone")
      assert.strictEqual((yield* Effect.flip(informer.synced)).reason, "ResourceGone")
    }))

  it.effect("a close says Closed; errors keep no reason", () =>
    Effect.gen(function*() {
      const { informer, stop } = yield* setup({ reflector: { watchList: false } })
      yield* informer.start
      yield* informer.synced
      yield* stop
      assert.strictEqual(yield* informer.awaitStop, "Closed")
      const error = yield* Effect.flip(informer.start)
      assert.isUndefined(error.reason)
      assert.strictEqual(error.message, "shared informer fake was not started because it has stopped already")
    }))
})

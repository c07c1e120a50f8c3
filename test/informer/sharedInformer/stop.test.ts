/**
 * SharedInformer: stop order and leftover fibers.
 */
import { assert, describe, it } from "@effect/vitest"
import { Cause, Deferred, Effect, Exit, Fiber, Stream } from "effect"
import { serverError, settle } from "../../fixtures/index.js"
import type { Informer } from "./fixtures.js"
import { adjust, FiberTracker, pod, recorder, setup } from "./fixtures.js"

describe("SharedInformer: stop", () => {
  it.effect("the controller (watch) stops strictly before the handlers; no fiber is left", () =>
    Effect.gen(function*() {
      const order: Array<string> = []
      const tracker = new FiberTracker()
      const handlerFiber = yield* Deferred.make<Fiber.Fiber<unknown, unknown>>()
      const { fake, informer, stop } = yield* Effect.gen(function*() {
        const env = yield* setup({}, [pod("pod1")], (fake) => ({
          ...fake,
          watch: (options) =>
            fake.watch(options).pipe(Stream.ensuring(Effect.sync(() => {
              order.push("watch closed")
            })))
        }))
        yield* env.informer.addEventHandler({
          // Hands its own fiber out, then blocks forever.
          onAdd: () =>
            Effect.withFiber<boolean>((fiber) => Deferred.succeed(handlerFiber, fiber)).pipe(
              Effect.andThen(Effect.never),
              Effect.onInterrupt(() =>
                Effect.sync(() => {
                  order.push("handler interrupted")
                })
              )
            )
        })
        yield* env.informer.start
        yield* settle
        return env
      }).pipe(tracker.track)
      const fiber = yield* Deferred.await(handlerFiber)
      assert.strictEqual(yield* fake.openWatches, 1)
      assert.deepStrictEqual(order, [])
      yield* stop
      assert.deepStrictEqual(order, ["watch closed", "handler interrupted"])
      assert.isTrue(yield* informer.isStopped)
      assert.strictEqual(yield* fake.openWatches, 0)
      assert.isTrue(Exit.hasInterrupts(fiber.pollUnsafe()!))
      assert.isTrue(tracker.started > 3)
      assert.strictEqual(tracker.running(), 0)
      const error = yield* Effect.flip(informer.addEventHandler(recorder().handler))
      assert.strictEqual(error._tag, "InformerStoppedError")
    }))

  it.effect("shutdown in three steps: the controller, then the stop (sync waits fail), then the handlers' fibers", () =>
    Effect.gen(function*() {
      const order: Array<string> = []
      const ref: { informer?: Informer } = {}
      const stoppedNow = Effect.suspend(() => ref.informer!.isStopped)
      const { informer, stop } = yield* setup({}, [pod("pod1")], (fake) => ({
        ...fake,
        watch: (options) =>
          fake.watch(options).pipe(Stream.ensuring(Effect.flatMap(stoppedNow, (stopped) =>
            Effect.sync(() => {
              order.push(`watch closed, stopped: ${stopped}`)
            }))))
      }))
      ref.informer = informer
      // Its initial add never returns: the registration cannot sync, and its wait is pending at the stop.
      const registration = yield* informer.addEventHandler({
        onAdd: () =>
          Effect.never.pipe(Effect.onInterrupt(() =>
            Effect.flatMap(stoppedNow, (stopped) =>
              Effect.sync(() => {
                order.push(`handler interrupted, stopped: ${stopped}`)
              }))
          ))
      })
      yield* informer.start
      yield* informer.synced
      const waiting = yield* Effect.forkChild(registration.synced)
      yield* settle
      assert.isUndefined(waiting.pollUnsafe())
      yield* stop
      assert.deepStrictEqual(order, ["watch closed, stopped: false", "handler interrupted, stopped: true"])
      const exit = yield* Fiber.await(waiting)
      assert.isTrue(
        Exit.isFailure(exit) && exit.cause.reasons.length === 1 && Cause.isFailReason(exit.cause.reasons[0])
      )
      assert.isFalse(yield* registration.hasSynced)
      assert.isTrue(yield* informer.hasSynced)
    }))

  it.effect("stopping during a relist backoff leaves nothing behind", () =>
    Effect.gen(function*() {
      const tracker = new FiberTracker()
      const { fake, informer, stop } = yield* Effect.gen(function*() {
        const env = yield* setup({ resyncPeriod: "1 second" }, [pod("pod1")])
        yield* env.informer.addEventHandler(recorder().handler)
        yield* env.informer.start
        yield* settle
        yield* env.fake.failNextList(serverError(503, "ServiceUnavailable", "down"), 5)
        yield* env.fake.failNextWatch(serverError(503, "ServiceUnavailable", "down"), 5)
        yield* env.fake.failWatches(serverError(503, "ServiceUnavailable", "down"))
        yield* adjust("1 second")
        return env
      }).pipe(tracker.track)
      yield* stop
      assert.isTrue(yield* informer.isStopped)
      assert.strictEqual(yield* fake.openWatches, 0)
      assert.strictEqual(tracker.running(), 0)
    }))
})

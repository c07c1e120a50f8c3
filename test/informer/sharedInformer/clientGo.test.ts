/**
 * SharedInformer: ports of client-go's shared_informer_test.go (names keep the client-go test names): handlers, resync periods, transforms, registration and removal.
 */
import { assert, describe, it } from "@effect/vitest"
import { Clock, Deferred, Effect, Fiber, Random, Result } from "effect"
import * as SharedInformer from "../../../src/SharedInformer.js"
import { settle, statusError } from "../../fixtures/index.js"
import type { Obj, Recorder } from "./fixtures.js"
import {
  adjust,
  describeError,
  eventually,
  FiberTracker,
  isSync,
  labelsIndex,
  nameOf,
  namesOf,
  objectOf,
  pod,
  range,
  recorder,
  setup,
  summary,
  syncTimes,
  yieldTimes
} from "./fixtures.js"

describe("SharedInformer: client-go ports", () => {
  it.effect("TestIndexer: indexes added before and after start are populated", () =>
    Effect.gen(function*() {
      const { fake, informer } = yield* setup({ indexers: { labels: labelsIndex } }, [
        pod("pod1", { labels: { a: "1", b: "1" } }),
        pod("pod2", { labels: { b: "1" } })
      ])
      yield* informer.start
      yield* informer.synced
      assert.deepStrictEqual(namesOf(yield* informer.indexer.byIndex("labels", "a")), ["pod1"])
      yield* fake.add(pod("pod3", { labels: { a: "1" } }))
      yield* eventually(
        Effect.map(Effect.orDie(informer.indexer.byIndex("labels", "a")), (objs) => objs.length === 2),
        "pod3 indexed"
      )
      assert.deepStrictEqual(namesOf(yield* informer.indexer.byIndex("labels", "a")), ["pod1", "pod3"])
      yield* informer.addIndexers({ labelsAgain: labelsIndex })
      assert.deepStrictEqual(namesOf(yield* informer.indexer.byIndex("labelsAgain", "a")), ["pod1", "pod3"])
      assert.deepStrictEqual((yield* informer.indexer.listIndexFuncValues("labels")).slice().sort(), ["a", "b"])
      assert.deepStrictEqual((yield* informer.indexer.listIndexFuncValues("labelsAgain")).slice().sort(), ["a", "b"])
    }))

  it.effect("TestListenerResyncPeriods: each handler resyncs on its own period", () =>
    Effect.gen(function*() {
      const { informer } = yield* setup({ resyncPeriod: "1 second" }, [pod("pod1"), pod("pod2")])
      const l1 = recorder("l1")
      const l2 = recorder("l2")
      const l3 = recorder("l3")
      yield* informer.addEventHandler(l1.handler, { resyncPeriod: 0 })
      yield* informer.addEventHandler(l2.handler, { resyncPeriod: "2 seconds" })
      yield* informer.addEventHandler(l3.handler, { resyncPeriod: "3 seconds" })
      yield* informer.start
      yield* settle
      for (const l of [l1, l2, l3]) {
        assert.deepStrictEqual(l.events.map(summary), ["add pod1 (initial)", "add pod2 (initial)"])
        l.clear()
      }
      const syncs = (l: Recorder) => l.events.filter(isSync).map((n) => nameOf(objectOf(n))).sort()
      yield* adjust("1 second")
      assert.deepStrictEqual([syncs(l1), syncs(l2), syncs(l3)], [[], [], []])
      yield* adjust("1 second") // t = 2 s
      assert.deepStrictEqual([syncs(l1), syncs(l2), syncs(l3)], [[], ["pod1", "pod2"], []])
      l2.clear()
      yield* adjust("1 second") // t = 3 s
      assert.deepStrictEqual([syncs(l1), syncs(l2), syncs(l3)], [[], [], ["pod1", "pod2"]])
      l3.clear()
      yield* adjust("1 second") // t = 4 s
      assert.deepStrictEqual([syncs(l1), syncs(l2), syncs(l3)], [[], ["pod1", "pod2"], []])
      yield* adjust("10 seconds")
      assert.deepStrictEqual(l1.events, [])
      for (const l of [l2, l3]) assert.isTrue(l.events.every(isSync))
    }))

  it.effect("TestListenerResyncPeriodsDelayed: a slow handler added before start changes nobody's schedule", () =>
    Effect.gen(function*() {
      const { informer } = yield* setup({ resyncPeriod: "1 second" }, [pod("pod1"), pod("pod2")])
      const l1 = recorder("l1")
      const l2 = recorder("l2")
      const l3 = recorder("l3")
      let first = true
      const slow: SharedInformer.Handler<Obj> = {
        ...l2.handler,
        onAdd: (object, isInInitialList) =>
          Effect.suspend(() => {
            const delay = first ? Effect.sleep("1 second") : Effect.void
            first = false
            return Effect.andThen(delay, l2.handler.onAdd!(object, isInInitialList))
          })
      }
      yield* informer.addEventHandler(l1.handler, { resyncPeriod: 0 })
      yield* informer.addEventHandler(slow, { resyncPeriod: "2 seconds" })
      yield* informer.addEventHandler(l3.handler, { resyncPeriod: "3 seconds" })
      yield* informer.start
      yield* settle
      assert.isTrue(yield* informer.hasSynced)
      assert.deepStrictEqual(l1.events.map(summary), ["add pod1 (initial)", "add pod2 (initial)"])
      assert.deepStrictEqual(l3.events.map(summary), ["add pod1 (initial)", "add pod2 (initial)"])
      assert.deepStrictEqual(l2.events, [])
      l1.clear()
      l3.clear()
      yield* adjust("1 second")
      assert.deepStrictEqual(l2.events.map(summary), ["add pod1 (initial)", "add pod2 (initial)"])
      l2.clear()
      const syncs = (l: Recorder) => l.events.filter(isSync).map((n) => nameOf(objectOf(n))).sort()
      yield* adjust("1 second") // t = 2 s
      assert.deepStrictEqual([syncs(l1), syncs(l2), syncs(l3)], [[], ["pod1", "pod2"], []])
      l2.clear()
      yield* adjust("1 second") // t = 3 s
      assert.deepStrictEqual([syncs(l1), syncs(l2), syncs(l3)], [[], [], ["pod1", "pod2"]])
    }))

  it.effect("TestResyncCheckPeriod: handlers added before start lower the check period; each keeps its own", () =>
    Effect.gen(function*() {
      const { informer } = yield* setup({ resyncPeriod: "12 hours" }, [pod("pod1")])
      const l1 = syncTimes()
      const l2 = syncTimes()
      const l3 = syncTimes()
      const l4 = syncTimes()
      yield* informer.addEventHandler(l1.handler, { resyncPeriod: 0 })
      yield* informer.addEventHandler(l2.handler, { resyncPeriod: "1 minute" })
      yield* informer.addEventHandler(l3.handler, { resyncPeriod: "55 seconds" })
      yield* informer.addEventHandler(l4.handler, { resyncPeriod: "5 seconds" })
      yield* informer.start
      yield* settle
      yield* adjust("2 minutes")
      // The check period is 5 s (the smallest), yet l2 and l3 resync on their own periods.
      assert.deepStrictEqual(l1.times, [])
      assert.deepStrictEqual(l2.times, [60_000, 120_000])
      assert.deepStrictEqual(l3.times, [55_000, 110_000])
      assert.deepStrictEqual(l4.times, range(24).map((i) => (i + 1) * 5_000))
    }))

  it.effect("TestSharedInformerInitializationRace: handlers added concurrently with start", () =>
    Effect.gen(function*() {
      const { informer } = yield* setup({}, [pod("pod1")])
      const recorders = range(30).map((i) => recorder(`h${i}`))
      const starter = yield* Effect.forkChild(Effect.andThen(yieldTimes(3), informer.start))
      const registrations = yield* Effect.forEach(
        recorders,
        (r, i) => Effect.andThen(yieldTimes(i % 7), informer.addEventHandler(r.handler)),
        { concurrency: "unbounded" }
      )
      yield* Fiber.join(starter)
      yield* settle
      assert.isTrue(yield* informer.hasSynced)
      for (const [i, r] of recorders.entries()) {
        assert.deepStrictEqual(r.events.map(summary), ["add pod1 (initial)"], `handler ${i}`)
        assert.isTrue(yield* registrations[i].hasSynced)
      }
    }))

  it.effect("TestSharedInformerWatchDisruption: lost events come back at relist; unchanged objects only as resyncs", () =>
    Effect.gen(function*() {
      const { fake, informer } = yield* setup({ resyncPeriod: "1 second" }, [pod("pod1"), pod("pod2")])
      const noResync = recorder("no-resync")
      const resync = recorder("resync")
      yield* informer.addEventHandler(noResync.handler, { resyncPeriod: 0 })
      yield* informer.addEventHandler(resync.handler, { resyncPeriod: "1 second" })
      yield* informer.start
      yield* settle
      for (const l of [noResync, resync]) {
        assert.deepStrictEqual(l.events.map(summary), ["add pod1 (initial)", "add pod2 (initial)"])
        l.clear()
      }
      yield* fake.addDropWatch(pod("pod3"))
      yield* fake.modifyDropWatch(pod("pod2", { spec: { v: 2 } }))
      yield* settle
      assert.deepStrictEqual([noResync.events, resync.events], [[], []])
      // Only the resync handler is marked due from now on.
      yield* adjust("1 second")
      noResync.clear()
      resync.clear()
      yield* fake.resetWatch
      yield* adjust("3 seconds")
      const seen = (l: Recorder) => Array.from(new Set(l.events.map((n) => nameOf(objectOf(n))))).sort()
      assert.deepStrictEqual(seen(noResync), ["pod2", "pod3"])
      assert.deepStrictEqual(noResync.events.map(summary), ["update pod2 2->4", "add pod3"])
      assert.deepStrictEqual(seen(resync), ["pod1", "pod2", "pod3"])
    }))

  describe("TestSharedInformerErrorHandling", () => {
    it.effect("a forbidden LIST reaches the watch-error handler at once", () =>
      Effect.gen(function*() {
        const { fake, informer } = yield* setup({ reflector: { watchList: false } })
        const received: Array<SharedInformer.WatchError> = []
        yield* informer.setWatchErrorHandler((error, context) =>
          Effect.sync(() => {
            received.push({ error, context })
          })
        )
        yield* fake.failNextList(statusError(403, "Forbidden", "Access Denied"))
        yield* informer.start
        yield* settle
        assert.strictEqual(received.length, 1)
        assert.strictEqual(describeError(received[0].error), "StatusError (Forbidden)")
        assert.strictEqual(received[0].error.message, "Access Denied")
        assert.strictEqual(received[0].context.phase, "list")
        assert.strictEqual(yield* Clock.currentTimeMillis, 0, "no virtual time passed")
        assert.isFalse(yield* informer.hasSynced)
        // The Reflector backs off and lists again.
        yield* adjust("2 seconds")
        assert.isTrue(yield* informer.hasSynced)
      }))

    it.effect("a forbidden watch-list reaches the handler given in the options", () =>
      Effect.gen(function*() {
        const received: Array<string> = []
        const { fake, informer } = yield* setup({
          onWatchError: (error, context) =>
            Effect.sync(() => {
              received.push(`${context.phase} ${describeError(error)}`)
            })
        }, [pod("pod1")])
        yield* fake.failNextWatch(statusError(403, "Forbidden", "Access Denied"))
        yield* informer.start
        yield* settle
        assert.deepStrictEqual(received, ["watch-list StatusError (Forbidden)"])
        // The Reflector falls back to LIST and syncs.
        yield* adjust("2 seconds")
        assert.isTrue(yield* informer.hasSynced)
        assert.deepStrictEqual(yield* informer.indexer.listKeys, ["ns/pod1"])
      }))
  })

  it.effect("TestSharedInformerStartRace: setTransform/setWatchErrorHandler after start fail with InformerStartedError", () =>
    Effect.gen(function*() {
      const { informer } = yield* setup({ name: "race" }, [pod("pod1")])
      yield* informer.setTransform((o) => o)
      yield* informer.setWatchErrorHandler(() => Effect.void)
      const hammer = yield* Effect.forkChild(Effect.forEach(range(50), (i) =>
        Effect.andThen(
          Effect.yieldNow,
          Effect.result(
            i % 2 === 0 ? informer.setTransform((o) => o) : informer.setWatchErrorHandler(() => Effect.void)
          )
        )))
      yield* yieldTimes(10)
      yield* informer.start
      const results = yield* Fiber.join(hammer)
      // Successes, then failures: never a success after start.
      const firstFailure = results.findIndex(Result.isFailure)
      assert.isTrue(firstFailure >= 0)
      assert.isTrue(results.slice(firstFailure).every(Result.isFailure))
      for (const result of results) {
        if (Result.isFailure(result)) assert.strictEqual(result.failure._tag, "InformerStartedError")
      }
      const transformError = yield* Effect.flip(informer.setTransform((o) => o))
      assert.strictEqual(transformError.setting, "transform")
      assert.include(transformError.message, "informer race has already started")
      const handlerError = yield* Effect.flip(informer.setWatchErrorHandler(() => Effect.void))
      assert.strictEqual(handlerError.setting, "watch error handler")
      yield* settle
      assert.isTrue(yield* informer.hasSynced)
    }))

  it.effect("TestSharedInformerTransformer: handlers and the cache see transformed objects", () =>
    Effect.gen(function*() {
      const { informer } = yield* setup({}, [pod("pod1"), pod("pod2")])
      const upper = (o: Obj): Obj => ({ ...o, metadata: { ...o.metadata, name: o.metadata?.name?.toUpperCase() } })
      yield* informer.setTransform(upper)
      const r = recorder()
      yield* informer.addEventHandler(r.handler)
      yield* informer.start
      yield* settle
      assert.deepStrictEqual(r.events.map(summary), ["add POD1 (initial)", "add POD2 (initial)"])
      assert.deepStrictEqual((yield* informer.indexer.listKeys).slice().sort(), ["ns/POD1", "ns/POD2"])
    }))

  it.effect("TestSharedInformerRemoveHandler: removed handlers stop receiving, one at a time", () =>
    Effect.gen(function*() {
      const { fake, informer } = yield* setup()
      const h1 = recorder()
      const h2 = recorder()
      const r1 = yield* informer.addEventHandler(h1.handler)
      const r2 = yield* informer.addEventHandler(h2.handler)
      yield* informer.start
      yield* settle
      yield* fake.add(pod("a"))
      yield* settle
      assert.deepStrictEqual([h1.events.length, h2.events.length], [1, 1])
      yield* informer.removeEventHandler(r2)
      yield* fake.add(pod("b"))
      yield* settle
      assert.deepStrictEqual([h1.events.length, h2.events.length], [2, 1])
      yield* informer.removeEventHandler(r1)
      yield* fake.add(pod("c"))
      yield* settle
      assert.deepStrictEqual([h1.events.length, h2.events.length], [2, 1])
    }))

  it.effect("TestSharedInformerRemoveForeignHandler: another informer's registration is ignored", () =>
    Effect.gen(function*() {
      const a = yield* setup({ name: "a" })
      const b = yield* setup({ name: "b" })
      const ha1 = recorder()
      const ha2 = recorder()
      const hb = recorder()
      const ra1 = yield* a.informer.addEventHandler(ha1.handler)
      const ra2 = yield* a.informer.addEventHandler(ha2.handler)
      const rb = yield* b.informer.addEventHandler(hb.handler)
      yield* b.informer.removeEventHandler(ra1)
      yield* b.informer.removeEventHandler(ra2)
      yield* a.informer.removeEventHandler(rb)
      yield* a.informer.start
      yield* b.informer.start
      yield* a.fake.add(pod("a1"))
      yield* b.fake.add(pod("b1"))
      yield* settle
      assert.deepStrictEqual([ha1.events.length, ha2.events.length, hb.events.length], [1, 1, 1])
      // Normal removal still works.
      yield* a.informer.removeEventHandler(ra1)
      yield* a.fake.add(pod("a2"))
      yield* settle
      assert.deepStrictEqual([ha1.events.length, ha2.events.length, hb.events.length], [1, 2, 1])
    }))

  it.effect("TestSharedInformerMultipleRegistration: one handler added twice is two registrations", () =>
    Effect.gen(function*() {
      const { fake, informer } = yield* setup()
      const h = recorder()
      const r1 = yield* informer.addEventHandler(h.handler)
      const r2 = yield* informer.addEventHandler(h.handler)
      assert.notStrictEqual(r1, r2)
      yield* informer.start
      yield* settle
      yield* fake.add(pod("a"))
      yield* settle
      assert.deepStrictEqual(h.events.map(summary), ["add a", "add a"])
      yield* informer.removeEventHandler(r1)
      yield* fake.add(pod("b"))
      yield* settle
      assert.deepStrictEqual(h.events.map(summary), ["add a", "add a", "add b"])
      assert.isTrue(yield* r2.hasSynced)
    }))

  it.effect("TestRemovingRemovedSharedInformer: removing twice is a no-op", () =>
    Effect.gen(function*() {
      const { fake, informer } = yield* setup()
      const h = recorder()
      const r = yield* informer.addEventHandler(h.handler)
      yield* informer.start
      yield* informer.removeEventHandler(r)
      yield* informer.removeEventHandler(r)
      yield* r.remove
      yield* fake.add(pod("a"))
      yield* settle
      assert.deepStrictEqual(h.events, [])
    }))

  it.effect("TestSharedInformerHandlerAbuse: fibers add and remove handlers while events flow and the informer stops", () =>
    Effect.gen(function*() {
      const tracker = new FiberTracker()
      const { errors, informer } = yield* Effect.gen(function*() {
        const { fake, informer, stop } = yield* setup({ resyncPeriod: "1 second" })
        yield* informer.start
        const halfway = yield* Deferred.make<void>()
        const producer = yield* Effect.forkChild(Effect.gen(function*() {
          const live = new Set<number>()
          for (let i = 0; i < 600; i++) {
            const k = yield* Random.nextIntBetween(0, 20, { halfOpen: true })
            if (!live.has(k)) {
              yield* fake.add(pod(`p${k}`))
              live.add(k)
            } else if (yield* Random.nextBoolean) {
              yield* fake.modify(pod(`p${k}`, { spec: { i } }))
            } else {
              yield* fake.delete(pod(`p${k}`))
              live.delete(k)
            }
            if (i === 300) yield* Deferred.succeed(halfway, undefined)
            if (i % 3 === 0) yield* Effect.yieldNow
          }
        }))
        const abuser = Effect.gen(function*() {
          const registrations: Array<SharedInformer.Registration> = []
          const failures: Array<unknown> = []
          let delivered = 0
          const count = () =>
            Effect.sync(() => {
              delivered++
            })
          while (failures.length < 3) {
            // Each fiber holds 0 to 3 registrations.
            const add = registrations.length === 0 || (registrations.length < 3 && (yield* Random.nextBoolean))
            if (add) {
              const result = yield* Effect.result(informer.addEventHandler({
                onAdd: count,
                onUpdate: count,
                onDelete: count
              }, { resyncPeriod: "1 second" }))
              if (Result.isFailure(result)) failures.push(result.failure)
              else registrations.push(result.success)
            } else {
              const i = yield* Random.nextIntBetween(0, registrations.length, { halfOpen: true })
              yield* informer.removeEventHandler(registrations.splice(i, 1)[0])
            }
            yield* Effect.yieldNow
          }
          // Removing after stop succeeds.
          yield* Effect.forEach(registrations, (r) => informer.removeEventHandler(r), { discard: true })
          return { failures, delivered }
        })
        const abusers = yield* Effect.forEach(range(10), () => Effect.forkChild(abuser))
        yield* Deferred.await(halfway)
        yield* stop
        yield* Fiber.join(producer)
        const results = yield* Effect.forEach(abusers, Fiber.join)
        assert.isTrue(results.some((r) => r.delivered > 0), "some handler received events before the stop")
        return { errors: results.flatMap((r) => r.failures), informer }
      }).pipe(tracker.track, Random.withSeed("abuse"))
      assert.strictEqual(errors.length, 30)
      for (const error of errors) {
        assert.instanceOf(error, SharedInformer.InformerStoppedError)
        assert.isTrue((error as Error).message.endsWith("because it has stopped already"))
      }
      assert.isTrue(yield* informer.isStopped)
      assert.isTrue(tracker.started > 10)
      assert.strictEqual(tracker.running(), 0)
    }))

  it.effect("TestStateSharedInformer: isStarted/isStopped before, while and after running", () =>
    Effect.gen(function*() {
      const { informer, stop } = yield* setup()
      assert.deepStrictEqual([yield* informer.isStarted, yield* informer.isStopped], [false, false])
      yield* informer.start
      yield* settle
      assert.deepStrictEqual([yield* informer.isStarted, yield* informer.isStopped], [true, false])
      yield* stop
      assert.deepStrictEqual([yield* informer.isStarted, yield* informer.isStopped], [true, true])
    }))

  it.effect("TestAddOnStoppedSharedInformer: adding a handler (or starting) after stop fails", () =>
    Effect.gen(function*() {
      const { informer, stop } = yield* setup({ name: "pods" })
      yield* informer.start
      yield* settle
      yield* stop
      const error = yield* Effect.flip(informer.addEventHandler(recorder().handler, { resyncPeriod: "1 second" }))
      assert.strictEqual(error._tag, "InformerStoppedError")
      assert.strictEqual(error.informer, "pods")
      assert.isTrue(error.message.endsWith("was not added to shared informer pods because it has stopped already"))
      assert.strictEqual((yield* Effect.flip(informer.start))._tag, "InformerStoppedError")
    }))

  it.effect("TestRemoveOnStoppedSharedInformer: removing after stop succeeds", () =>
    Effect.gen(function*() {
      const { informer, stop } = yield* setup()
      const r = yield* informer.addEventHandler(recorder().handler)
      yield* informer.start
      yield* settle
      yield* stop
      yield* informer.removeEventHandler(r)
      yield* r.remove
      assert.strictEqual(yield* r.backlog, 0)
    }))

  it.effect("TestRemoveWhileActive: a removed handler gets nothing more", () =>
    Effect.gen(function*() {
      const { fake, informer } = yield* setup()
      const h = recorder()
      const r = yield* informer.addEventHandler(h.handler)
      yield* informer.start
      yield* settle
      yield* fake.add(pod("pod1"))
      yield* settle
      assert.deepStrictEqual(h.events.map(summary), ["add pod1"])
      yield* informer.removeEventHandler(r)
      yield* fake.add(pod("pod2"))
      yield* settle
      assert.deepStrictEqual(h.events.map(summary), ["add pod1"])
      assert.strictEqual(yield* r.backlog, 0)
    }))

  it.effect("TestAddWhileActive: a late handler syncs once its replayed adds have returned", () =>
    Effect.gen(function*() {
      const { fake, informer } = yield* setup({}, [pod("pod1")])
      const h1 = recorder()
      const r1 = yield* informer.addEventHandler(h1.handler)
      assert.isFalse(yield* r1.hasSynced)
      const r1Synced = yield* Effect.forkChild(r1.synced)
      yield* informer.start
      yield* settle
      assert.deepStrictEqual(h1.events.map(summary), ["add pod1 (initial)"])
      assert.isTrue(yield* r1.hasSynced)
      assert.isDefined(r1Synced.pollUnsafe())

      const gate = yield* Deferred.make<void>()
      const h2 = recorder()
      let first = true
      const r2 = yield* informer.addEventHandler({
        ...h2.handler,
        onAdd: (object, isInInitialList) =>
          Effect.suspend(() => {
            const wait = first ? Deferred.await(gate) : Effect.void
            first = false
            return Effect.andThen(wait, h2.handler.onAdd!(object, isInInitialList))
          })
      })
      assert.isFalse(yield* r2.hasSynced)
      const r2Synced = yield* Effect.forkChild(r2.synced)
      yield* fake.add(pod("pod2"))
      yield* settle
      assert.isFalse(yield* r2.hasSynced)
      assert.isUndefined(r2Synced.pollUnsafe())
      assert.deepStrictEqual(h1.events.map(summary), ["add pod1 (initial)", "add pod2"])
      yield* Deferred.succeed(gate, undefined)
      yield* settle
      assert.deepStrictEqual(h2.events.map(summary), ["add pod1 (initial)", "add pod2"])
      assert.isTrue(yield* r2.hasSynced)
      assert.isDefined(r2Synced.pollUnsafe())
    }))
})

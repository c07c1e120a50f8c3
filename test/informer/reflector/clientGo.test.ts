/**
 * Reflector: ports of client-go's reflector_test.go (test names keep the client-go names).
 */
import { assert, describe, it } from "@effect/vitest"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as Random from "effect/Random"
import * as Schedule from "effect/Schedule"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as DeltaFifo from "../../../src/DeltaFifo.js"
import * as FakeListerWatcher from "../../../src/FakeListerWatcher.js"
import type { KubeObject } from "../../../src/KubeObject.js"
import * as Reflector from "../../../src/Reflector.js"
import {
  advance,
  pod,
  podsNamed,
  serverError,
  settle,
  statusError,
  tooManyRequests,
  transport
} from "../../fixtures/index.js"
import type { LW } from "./fixtures.js"
import {
  added,
  closeWithoutTime,
  deleted,
  errorLog,
  inRange,
  kinds,
  listsOf,
  modified,
  nameOf,
  now,
  recordingStore,
  rvOf,
  scripted,
  startInScope,
  timed,
  watchesOf
} from "./fixtures.js"

describe("Reflector", () => {
  describe("client-go reflector_test", () => {
    it.effect("TestCloseWatchChannelOnError: an error on the stream closes the watch and ends the session", () =>
      Effect.gen(function*() {
        const fake = yield* FakeListerWatcher.make({ initial: [pod("a")] })
        const { store } = yield* recordingStore()
        const errors = errorLog()
        yield* Reflector.make(fake, store, { watchList: false, onError: errors.onError })
        yield* settle
        assert.strictEqual(yield* fake.openWatches, 1)
        yield* fake.failWatches(serverError())
        yield* settle
        assert.strictEqual(yield* fake.openWatches, 0)
        assert.deepStrictEqual(errors.summary(), ["watch:StatusError(ServerError)"])
        assert.deepStrictEqual(kinds(yield* fake.requests), ["List", "Watch"])
      }))

    it.effect("TestRunUntil: interrupting Reflector.run while watching returns and stops the watch", () =>
      Effect.gen(function*() {
        const fake = yield* FakeListerWatcher.make({ initial: [pod("a")] })
        const { store } = yield* recordingStore()
        const fiber = yield* Effect.forkChild(Reflector.run(fake, store, { watchList: false }))
        yield* settle
        assert.strictEqual(yield* fake.openWatches, 1)
        yield* Fiber.interrupt(fiber)
        const exit = yield* Fiber.await(fiber)
        assert.isTrue(Exit.hasInterrupts(exit))
        assert.strictEqual(yield* fake.openWatches, 0)
      }))

    it.effect("TestReflectorResyncChan: a 1 ms resync period fires", () =>
      Effect.gen(function*() {
        const fake = yield* FakeListerWatcher.make({ initial: [pod("a")] })
        const { calls, store } = yield* recordingStore()
        yield* Reflector.make(fake, store, { resyncPeriod: "1 millis" })
        yield* settle
        assert.strictEqual(calls.resync, 0)
        yield* advance("1 millis")
        assert.strictEqual(calls.resync, 1)
      }))

    it.effect("TestReflectorWatchStoppedBefore: a Reflector whose scope is already closing makes no request", () =>
      Effect.gen(function*() {
        const fake = yield* FakeListerWatcher.make({ initial: [pod("a")] })
        const { store } = yield* recordingStore()
        yield* Effect.scoped(Reflector.make(fake, store, {}))
        yield* advance("10 minutes")
        assert.deepStrictEqual(yield* fake.requests, [])
        assert.strictEqual(yield* fake.openWatches, 0)
      }))

    it.effect("TestReflectorWatchStoppedAfter: stopped 10 ms into a watch: one watch, closed", () =>
      Effect.gen(function*() {
        const fake = yield* FakeListerWatcher.make({ initial: [pod("a")] })
        const { store } = yield* recordingStore()
        const { scope } = yield* startInScope(fake, store, { watchList: false })
        yield* advance("10 millis")
        yield* closeWithoutTime(scope)
        assert.strictEqual(watchesOf(yield* fake.requests).length, 1)
        assert.strictEqual(yield* fake.openWatches, 0)
      }))

    it.effect("TestReflectorHandleWatchResultChanClosedBefore: a watch that ends at once: VeryShortWatch, backoff, relist", () =>
      Effect.gen(function*() {
        const fake = yield* FakeListerWatcher.make({ initial: [pod("a")] })
        let watches = 0
        const { log, lw } = timed({
          ...fake,
          watch: (options) => (watches++ === 0 ? Stream.empty : fake.watch(options))
        })
        const { store } = yield* recordingStore()
        const errors = errorLog()
        yield* Reflector.make(lw, store, { watchList: false, onError: errors.onError })
        yield* settle
        assert.deepStrictEqual(errors.summary(), ["watch:ProtocolError(VeryShortWatch)"])
        assert.strictEqual(log.length, 2)
        yield* advance("1600 millis")
        assert.deepStrictEqual(kinds(log.map((t) => t.request)), ["List", "Watch", "List", "Watch"])
        inRange(log[2].at, 800, 1600, "relist")
        assert.strictEqual(yield* fake.openWatches, 1)
      }))

    it.effect("TestReflectorHandleWatchResultChanClosedAfter: closed after 10 ms without events: VeryShortWatch", () =>
      Effect.gen(function*() {
        const fake = yield* FakeListerWatcher.make({ initial: [pod("a")] })
        const { log, lw } = timed(fake)
        const { store } = yield* recordingStore()
        const errors = errorLog()
        yield* Reflector.make(lw, store, { watchList: false, onError: errors.onError })
        yield* advance("10 millis")
        yield* fake.closeWatches
        yield* settle
        assert.deepStrictEqual(errors.summary(), ["watch:ProtocolError(VeryShortWatch)"])
        yield* advance("1600 millis")
        assert.deepStrictEqual(kinds(log.map((t) => t.request)), ["List", "Watch", "List", "Watch"])
        inRange(log[2].at - 10, 800, 1600, "relist")
      }))

    it.effect("a watch closed after 1 s without events, or at once after an event, is re-opened at once (no relist)", () =>
      Effect.gen(function*() {
        const fake = yield* FakeListerWatcher.make({ initial: [pod("a")] })
        const { store } = yield* recordingStore()
        const errors = errorLog()
        yield* Reflector.make(fake, store, { watchList: false, onError: errors.onError })
        yield* advance("1 second")
        yield* fake.closeWatches
        yield* settle
        yield* fake.add(pod("b"))
        yield* fake.closeWatches
        yield* settle
        assert.deepStrictEqual(kinds(yield* fake.requests), ["List", "Watch", "Watch", "Watch"])
        assert.deepStrictEqual(watchesOf(yield* fake.requests).map((w) => w.resourceVersion), ["1", "1", "2"])
        assert.deepStrictEqual(errors.summary(), [])
      }))

    it.effect("TestReflectorStopWatch / TestReflectorHandleWatchStopped*: stop while a store write blocks: prompt, watch closed", () =>
      Effect.gen(function*() {
        const fake = yield* FakeListerWatcher.make({ initial: [pod("a")] })
        const inner = yield* recordingStore()
        let interrupted = false
        const store: Reflector.Store<KubeObject, unknown> = {
          ...inner.store,
          add: () =>
            Effect.never.pipe(Effect.onInterrupt(() =>
              Effect.sync(() => {
                interrupted = true
              })
            ))
        }
        const { scope } = yield* startInScope(fake, store, { watchList: false })
        yield* settle
        yield* fake.add(pod("b"))
        yield* settle
        assert.strictEqual(yield* fake.openWatches, 1)
        yield* closeWithoutTime(scope)
        assert.isTrue(interrupted)
        assert.strictEqual(yield* fake.openWatches, 0)
      }))

    it.effect("TestReflectorWatchHandler: Deleted, Modified and Added events update the store and the version", () =>
      Effect.gen(function*() {
        // client-go's first event is an object of the wrong type, dropped by the reflector; here the HTTP layer
        // decodes (and rejects) objects, so a ListerWatcher only ever yields the expected type.
        const { lw } = scripted({
          list: {
            items: [pod("foo", { rv: "10" }), pod("bar", { rv: "11" })],
            resourceVersion: "11",
            continue: undefined
          },
          watches: [
            Stream.concat(
              Stream.make(
                deleted(pod("foo", { rv: "12" })),
                modified(pod("bar", { rv: "55" })),
                added(pod("baz", { rv: "32" }))
              ),
              Stream.never
            )
          ]
        })
        const { indexer, names, store } = yield* recordingStore()
        const reflector = yield* Reflector.make(lw, store, { watchList: false })
        yield* settle
        assert.deepStrictEqual(yield* names, ["bar", "baz"])
        assert.strictEqual(rvOf(Option.getOrThrow(yield* indexer.getByKey("ns/bar"))), "55")
        assert.strictEqual(rvOf(Option.getOrThrow(yield* indexer.getByKey("ns/baz"))), "32")
        assert.strictEqual(yield* reflector.lastSyncResourceVersion, "32")
      }))

    const popAll = (fifo: DeltaFifo.DeltaFifo.Service<KubeObject>) =>
      Effect.gen(function*() {
        const popped: Array<ReadonlyArray<DeltaFifo.Delta<KubeObject>>> = []
        while ((yield* fifo.length) > 0) popped.push(yield* fifo.pop((p) => Effect.succeed(p.deltas)))
        return popped
      })

    /** key@rv of the newest object of each popped item. */
    const newest = (popped: ReadonlyArray<ReadonlyArray<DeltaFifo.Delta<KubeObject>>>) =>
      popped.map((deltas) => {
        const last = deltas[deltas.length - 1]
        return DeltaFifo.isKeyedDelta(last)
          ? `${nameOf(last.object as KubeObject)}@${rvOf(last.object as KubeObject)}`
          : last._tag
      })

    for (const watchList of [true, false]) {
      it.effect(`TestReflectorListAndWatch (watch-list ${watchList ? "on" : "off"})`, () =>
        Effect.gen(function*() {
          const fake = yield* FakeListerWatcher.make({ initial: [pod("foo")] })
          const fifo = yield* DeltaFifo.make({ mode: "coalescing" })
          const reflector = yield* Reflector.make(fake, fifo, watchList ? {} : { watchList, initialList: "any" })
          yield* settle
          const requests = yield* fake.requests
          if (watchList) {
            assert.strictEqual(requests.length, 1)
            const { timeoutSeconds: _, ...options } = watchesOf(requests)[0]
            assert.deepStrictEqual(options, {
              resourceVersion: "",
              resourceVersionMatch: "NotOlderThan",
              sendInitialEvents: true,
              allowWatchBookmarks: true
            })
          } else {
            assert.deepStrictEqual(listsOf(requests), [{ resourceVersion: "0", limit: 500 }])
            const { timeoutSeconds: _, ...options } = watchesOf(requests)[0]
            assert.deepStrictEqual(options, { resourceVersion: "1", allowWatchBookmarks: true })
          }
          yield* fake.modify(pod("foo"))
          for (const name of ["bar", "baz", "qux", "zoo"]) yield* fake.add(pod(name))
          yield* settle
          assert.deepStrictEqual(newest(yield* popAll(fifo)), ["foo@2", "bar@3", "baz@4", "qux@5", "zoo@6"])
          assert.strictEqual(yield* reflector.lastSyncResourceVersion, "6")
          assert.strictEqual((yield* fake.requests).length, watchList ? 1 : 2)
        }))
    }

    it.effect("TestReflectorListAndWatchWithErrors: list and events compose; a failed list leaves the store; a refused watch relists", () =>
      Effect.gen(function*() {
        const fake = yield* FakeListerWatcher.make({ initial: [pod("foo")] })
        const { names, store } = yield* recordingStore()
        const errors = errorLog()
        yield* Reflector.make(fake, store, { watchList: false, onError: errors.onError })
        yield* settle
        yield* fake.add(pod("bar"))
        yield* settle
        assert.deepStrictEqual(yield* names, ["bar", "foo"])
        // The server changes while the next list fails: the store keeps what it had.
        yield* fake.deleteDropWatch(pod("foo"))
        yield* fake.addDropWatch(pod("baz"))
        yield* fake.failNextList(serverError(503, "ServiceUnavailable"))
        yield* fake.failNextWatch(statusError(403, "Forbidden", "forbidden"))
        yield* fake.failWatches(serverError())
        yield* advance("1600 millis")
        assert.deepStrictEqual(errors.summary(), ["watch:StatusError(ServerError)", "list:StatusError(ServerError)"])
        assert.deepStrictEqual(yield* names, ["bar", "foo"])
        // The next list applies, then the watch is refused: reported after the list was applied.
        yield* advance("3200 millis")
        assert.deepStrictEqual(errors.summary(), [
          "watch:StatusError(ServerError)",
          "list:StatusError(ServerError)",
          "watch:StatusError(Forbidden)"
        ])
        assert.deepStrictEqual(yield* names, ["bar", "baz"])
        yield* advance("6400 millis")
        assert.deepStrictEqual(kinds(yield* fake.requests), ["List", "Watch", "List", "List", "Watch", "List", "Watch"])
        yield* fake.add(pod("qux"))
        yield* settle
        assert.deepStrictEqual(yield* names, ["bar", "baz", "qux"])
      }))

    it.effect("TestReflectorListAndWatchInitConnBackoff: watches refused at connect back off without relisting", () =>
      Effect.gen(function*() {
        const backoff = Schedule.min([Schedule.exponential("1 millis", 2), Schedule.spaced("50 millis")]).pipe(
          Schedule.modifyDelay((metadata) =>
            Effect.map(Random.next, (random) => Duration.millis(Duration.toMillis(metadata.duration) * (1 + random)))
          ),
          Reflector.resetAfterIdle("100 millis")
        )
        for (const [failures, min, max] of [[5, 31, 62], [40, 1763, 3526]] as const) {
          const fake = yield* FakeListerWatcher.make({ initial: [pod("a")] })
          yield* fake.failNextWatch(transport(), failures)
          const { log, lw } = timed(fake)
          const { store } = yield* recordingStore()
          const errors = errorLog()
          const scope = yield* Scope.make()
          const start = yield* now
          yield* Scope.provide(Reflector.make(lw, store, { watchList: false, backoff, onError: errors.onError }), scope)
          yield* advance(min - 1)
          assert.isTrue(log.length < failures + 2, `${failures} failures: done before ${min} ms`)
          yield* advance(max - min + 1)
          const watches = log.filter((t) => t.request._tag === "Watch")
          assert.strictEqual(watches.length, failures + 1)
          inRange(watches[failures].at - start, min, max, `${failures} failures`)
          assert.strictEqual(log.filter((t) => t.request._tag === "List").length, 1)
          assert.strictEqual(errors.reported.length, failures)
          assert.isTrue(errors.reported.every((r) => r.context.phase === "watch" && r.error._tag === "TransportError"))
          assert.strictEqual(yield* fake.openWatches, 1)
          yield* Scope.close(scope, Exit.void)
        }
      }))

    it.effect("TestNewReflectorWithCustomBackoff: 10 ms doubling, capped at 100 ms, no jitter: 5 refusals take 250 ms", () =>
      Effect.gen(function*() {
        const fake = yield* FakeListerWatcher.make({ initial: [pod("a")] })
        yield* fake.failNextWatch(transport(), 5)
        const { log, lw } = timed(fake)
        const { store } = yield* recordingStore()
        const backoff = Schedule.min([Schedule.exponential("10 millis", 2), Schedule.spaced("100 millis")])
        yield* Reflector.make(lw, store, { watchList: false, backoff })
        yield* advance("249 millis")
        assert.strictEqual(log.filter((t) => t.request._tag === "Watch").length, 5)
        yield* advance("1 millis")
        assert.deepStrictEqual(log.filter((t) => t.request._tag === "Watch").map((t) => t.at), [
          0,
          10,
          30,
          70,
          150,
          250
        ])
      }))

    it.effect("TestNewReflectorWithCustomBackoff: the default backoff with 2 refusals finishes within 10 s", () =>
      Effect.gen(function*() {
        const fake = yield* FakeListerWatcher.make({ initial: [pod("a")] })
        yield* fake.failNextWatch(transport(), 2)
        const { log, lw } = timed(fake)
        const { store } = yield* recordingStore()
        yield* Reflector.make(lw, store, { watchList: false })
        yield* advance("10 seconds")
        const watches = log.filter((t) => t.request._tag === "Watch")
        assert.strictEqual(watches.length, 3)
        inRange(watches[2].at, 2400, 4800, "third watch")
      }))

    it.effect("TestBackoffOnTooManyRequests: a 429 at watch start and one on the stream: exactly 2 backoff steps, no relist", () =>
      Effect.gen(function*() {
        const fake = yield* FakeListerWatcher.make({ initial: [pod("a")] })
        yield* fake.failNextWatch(tooManyRequests())
        let steps = 0
        const backoff = Reflector.defaultBackoff.pipe(Schedule.tap(() =>
          Effect.sync(() => {
            steps++
          })
        ))
        const { store } = yield* recordingStore()
        const errors = errorLog()
        yield* Reflector.make(fake, store, { watchList: false, backoff, onError: errors.onError })
        yield* advance("2 seconds")
        assert.strictEqual(steps, 1)
        yield* fake.failWatches(tooManyRequests())
        yield* advance("4 seconds")
        assert.strictEqual(steps, 2)
        assert.deepStrictEqual(kinds(yield* fake.requests), ["List", "Watch", "Watch", "Watch"])
        assert.deepStrictEqual(errors.summary(), [
          "watch:StatusError(TooManyRequests)",
          "watch:StatusError(TooManyRequests)"
        ])
        assert.strictEqual(yield* fake.openWatches, 1)
      }))

    it.effect("TestNoRelistOnTooManyRequests: 4 × 429 at watch start: 1 List, 5 Watch", () =>
      Effect.gen(function*() {
        const fake = yield* FakeListerWatcher.make({ initial: [pod("a")] })
        yield* fake.failNextWatch(tooManyRequests(), 4)
        const { store } = yield* recordingStore()
        yield* Reflector.make(fake, store, { watchList: false })
        yield* advance("30 seconds")
        assert.deepStrictEqual(kinds(yield* fake.requests), ["List", "Watch", "Watch", "Watch", "Watch", "Watch"])
        assert.strictEqual(yield* fake.openWatches, 1)
      }))

    it.effect("TestRetryInternalError (no retry window): a 500 on the watch backs off and relists", () =>
      Effect.gen(function*() {
        const fake = yield* FakeListerWatcher.make({ initial: [pod("a")] })
        const { log, lw } = timed(fake)
        const { store } = yield* recordingStore()
        yield* Reflector.make(lw, store, { watchList: false })
        yield* settle
        yield* fake.failWatches(serverError())
        yield* advance("1600 millis")
        assert.deepStrictEqual(kinds(log.map((t) => t.request)), ["List", "Watch", "List", "Watch"])
        inRange(log[2].at, 800, 1600, "relist")
      }))

    it.effect("TestReflectorResync: a resync failing on its 2nd call ends the session (phase resync) and relists", () =>
      Effect.gen(function*() {
        const fake = yield* FakeListerWatcher.make({ initial: [pod("a")] })
        const { calls, store } = yield* recordingStore({ refuseResync: (call) => call === 2 })
        const errors = errorLog()
        yield* Reflector.make(fake, store, { watchList: false, resyncPeriod: "1 second", onError: errors.onError })
        yield* advance("2 seconds")
        assert.strictEqual(calls.resync, 2)
        assert.deepStrictEqual(errors.summary(), ["resync:StoreError(resync)"])
        assert.strictEqual((errors.reported[0].error as Reflector.StoreError).operation, "resync")
        assert.strictEqual(yield* fake.openWatches, 0)
        assert.deepStrictEqual(kinds(yield* fake.requests), ["List", "Watch"])
        yield* advance("1600 millis")
        assert.deepStrictEqual(kinds(yield* fake.requests), ["List", "Watch", "List", "Watch"])
        assert.strictEqual(calls.resync, 2)
      }))

    it.effect("TestReflectorResyncWithResourceVersion: list versions \"0\" then the last synced \"10\"", () =>
      Effect.gen(function*() {
        const fake = yield* FakeListerWatcher.make({ initial: podsNamed("p", 10) })
        const { store } = yield* recordingStore()
        yield* Reflector.make(fake, store, { watchList: false, initialList: "any" })
        yield* settle
        yield* fake.failWatches(serverError())
        yield* advance("2 seconds")
        assert.deepStrictEqual(listsOf(yield* fake.requests).map((o) => o.resourceVersion), ["0", "10"])
      }))

    it.effect("TestReflectorResourceVersionUpdate: Added, Modified, Bookmark and Deleted each advance the version", () =>
      Effect.gen(function*() {
        const fake = yield* FakeListerWatcher.make({ initial: podsNamed("p", 10) })
        const { calls, store } = yield* recordingStore()
        const reflector = yield* Reflector.make(fake, store, { watchList: false })
        yield* settle
        const versions = [yield* reflector.lastSyncResourceVersion]
        yield* fake.add(pod("new"))
        yield* settle
        versions.push(yield* reflector.lastSyncResourceVersion)
        yield* fake.modify(pod("new", { labels: { a: "b" } }))
        yield* settle
        versions.push(yield* reflector.lastSyncResourceVersion)
        yield* fake.addDropWatch(pod("unseen"))
        yield* fake.bookmark
        yield* settle
        versions.push(yield* reflector.lastSyncResourceVersion)
        yield* fake.delete(pod("new"))
        yield* settle
        versions.push(yield* reflector.lastSyncResourceVersion)
        assert.deepStrictEqual(versions, ["10", "11", "12", "13", "14"])
        assert.deepStrictEqual(calls.replace.map((r) => r.resourceVersion), ["10"])
        assert.deepStrictEqual(calls.bookmark, ["13"])
      }))

    it.effect("TestReflectorReplacesStoreOnUnsafeDelete: an object from a watch that then fails is gone after the relist", () =>
      Effect.gen(function*() {
        const fake = yield* FakeListerWatcher.make({ initial: podsNamed("p", 5) })
        let watches = 0
        const lw: LW = {
          ...fake,
          watch: (options) =>
            watches++ === 0
              ? Stream.concat(Stream.make(added(pod("corrupt"))), Stream.fail(serverError()))
              : fake.watch(options)
        }
        const { names, store } = yield* recordingStore()
        const errors = errorLog()
        const reflector = yield* Reflector.make(lw, store, { watchList: false, onError: errors.onError })
        yield* settle
        assert.isTrue((yield* names).includes("corrupt"))
        // the corrupt object has no resourceVersion: applied, reported, and never the watch position
        assert.deepStrictEqual(errors.summary(), [
          "event:DecodeError(MissingResourceVersion)",
          "watch:StatusError(ServerError)"
        ])
        yield* advance("1600 millis")
        assert.deepStrictEqual(yield* names, ["p001", "p002", "p003", "p004", "p005"])
        assert.deepStrictEqual(listsOf(yield* fake.requests).map((o) => o.resourceVersion), ["", "5"])
        assert.strictEqual(yield* reflector.lastSyncResourceVersion, "5")
      }))

    describe.each(["inOrder", "coalescing"] as const)("%s", (mode) => {
      it.effect(`TestReflectorRespectStoreTransformer: watch-list objects transformed once each`, () =>
        Effect.gen(function*() {
          const fake = yield* FakeListerWatcher.make({ initial: [pod("a"), pod("b")] })
          let transforms = 0
          const fifo = yield* DeltaFifo.make<KubeObject>({
            mode,
            transform: (obj) => {
              transforms++
              return { ...obj, metadata: { ...obj.metadata, annotations: { transformed: "true" } } }
            }
          })
          yield* Reflector.make(fake, fifo, {})
          yield* settle
          yield* fake.add(pod("c"))
          yield* settle
          // client-go calls the transformer 5 times (2 into the temporary store, 2 on Replace, 1 on Add): the
          // temporary store here is a plain map, so each object is transformed once, by the queue.
          assert.strictEqual(transforms, 3)
          const objects: Array<KubeObject> = []
          for (const deltas of yield* popAll(fifo)) {
            for (const delta of deltas) {
              if (delta._tag === "ReplacedAll") objects.push(...delta.objects)
              else if (DeltaFifo.isKeyedDelta(delta)) objects.push(delta.object as KubeObject)
            }
          }
          assert.deepStrictEqual(objects.map(nameOf), ["a", "b", "c"])
          assert.isTrue(objects.every((o) => o.metadata?.annotations?.transformed === "true"))
          assert.strictEqual((yield* fake.requests).length, 1)
        }))
    })

    it.effect("TestNewReflectorWithDisablementWatchList: a ListerWatcher reporting no watch-list support is listed", () =>
      Effect.gen(function*() {
        const fake = yield* FakeListerWatcher.make({ initial: [pod("a")], supportsWatchList: false })
        const { store } = yield* recordingStore()
        yield* Reflector.make(fake, store, {})
        yield* settle
        assert.deepStrictEqual(kinds(yield* fake.requests), ["List", "Watch"])
        const supported = yield* FakeListerWatcher.make({ initial: [pod("a")], supportsWatchList: true })
        yield* Reflector.make(supported, (yield* recordingStore()).store, {})
        yield* settle
        assert.deepStrictEqual(kinds(yield* supported.requests), ["WatchList"])
      }))
  })
})

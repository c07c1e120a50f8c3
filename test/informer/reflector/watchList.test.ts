/**
 * Reflector: watch-list (streaming lists).
 */
import { assert, describe, it } from "@effect/vitest"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Logger from "effect/Logger"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import type * as ApiError from "../../../src/ApiError.js"
import * as DeltaFifo from "../../../src/DeltaFifo.js"
import * as FakeListerWatcher from "../../../src/FakeListerWatcher.js"
import { watchListRetryDelay } from "../../../src/internal/informer/reflectorPolicy.js"
import type { KubeObject } from "../../../src/KubeObject.js"
import * as Reflector from "../../../src/Reflector.js"
import { advance, pod, serverError, settle } from "../../fixtures/index.js"
import type { LW } from "./fixtures.js"
import {
  added,
  bookmarkEvent,
  deleted,
  errorLog,
  inRange,
  kinds,
  modified,
  now,
  recordingStore,
  rvOf,
  scripted,
  timed,
  watchesOf
} from "./fixtures.js"

describe("Reflector", () => {
  describe("watch-list", () => {
    it.effect("happy path: one watch-list request, no List, synced at the bookmark, later events on the same stream", () =>
      Effect.gen(function*() {
        const fake = yield* FakeListerWatcher.make({ initial: [pod("a"), pod("b")] })
        const { calls, names, store } = yield* recordingStore()
        const errors = errorLog()
        const reflector = yield* Reflector.make(fake, store, { onError: errors.onError })
        yield* settle
        const requests = yield* fake.requests
        assert.strictEqual(requests.length, 1)
        const { timeoutSeconds, ...options } = watchesOf(requests)[0]
        assert.deepStrictEqual(options, {
          resourceVersion: "",
          resourceVersionMatch: "NotOlderThan",
          sendInitialEvents: true,
          allowWatchBookmarks: true
        })
        assert.isTrue(timeoutSeconds! >= 300 && timeoutSeconds! <= 600)
        assert.deepStrictEqual(calls.replace, [{ resourceVersion: "2", names: ["a", "b"] }])
        assert.deepStrictEqual(calls.add, [])
        assert.strictEqual(yield* reflector.lastSyncResourceVersion, "2")
        yield* fake.add(pod("c"))
        yield* fake.modify(pod("a", { labels: { x: "y" } }))
        yield* settle
        assert.deepStrictEqual(yield* names, ["a", "b", "c"])
        assert.deepStrictEqual(calls.add, ["c"])
        assert.deepStrictEqual(calls.update, ["a"])
        assert.strictEqual(yield* reflector.lastSyncResourceVersion, "4")
        assert.strictEqual((yield* fake.requests).length, 1)
        assert.strictEqual(yield* fake.openWatches, 1)
        assert.deepStrictEqual(errors.summary(), [])
      }))

    it.effect("a server that rejects watch-list: List+Watch in the same cycle, and LIST on relists for a minute", () =>
      Effect.gen(function*() {
        const fake = yield* FakeListerWatcher.make({ initial: [pod("a")], watchList: "reject" })
        const { names, store } = yield* recordingStore()
        const errors = errorLog()
        yield* Reflector.make(fake, store, { onError: errors.onError })
        yield* settle
        assert.deepStrictEqual(kinds(yield* fake.requests), ["WatchList", "List", "Watch"])
        assert.deepStrictEqual(errors.summary(), ["watch-list:StatusError(Invalid)"])
        assert.strictEqual((errors.reported[0].error as ApiError.StatusError).code, 422)
        assert.deepStrictEqual(yield* names, ["a"])
        assert.strictEqual(yield* now, 0)
        // A later relist within the retry delay goes straight to LIST.
        yield* fake.failWatches(serverError())
        yield* advance("2 seconds")
        assert.deepStrictEqual(kinds(yield* fake.requests), ["WatchList", "List", "Watch", "List", "Watch"])
      }))

    it.effect("after a 422, watch-list is tried again on a later cycle once watchListRetryDelay has passed", () =>
      Effect.gen(function*() {
        let reject = true
        const fake = yield* FakeListerWatcher.make({ initial: [pod("a")] })
        const lw: LW = {
          ...fake,
          watch: (options) =>
            options.sendInitialEvents === true && reject
              ? Stream.fail(serverError(422, "Invalid"))
              : fake.watch(options)
        }
        const t = timed(lw)
        const { names, store } = yield* recordingStore()
        const errors = errorLog()
        yield* Reflector.make(t.lw, store, { onError: errors.onError })
        yield* settle
        assert.deepStrictEqual(kinds(t.log.map((x) => x.request)), ["WatchList", "List", "Watch"])
        // the API server is upgraded: it now serves watch-list
        reject = false
        // a relist 30 s later still lists (1 minute has not passed)
        yield* advance("30 seconds")
        yield* fake.failWatches(serverError())
        yield* advance("2 seconds")
        assert.deepStrictEqual(kinds(t.log.map((x) => x.request)).slice(3), ["List", "Watch"])
        // a relist after the minute uses watch-list again, and keeps it
        yield* advance("40 seconds")
        yield* fake.failWatches(serverError())
        yield* advance("4 seconds")
        assert.deepStrictEqual(kinds(t.log.map((x) => x.request)).slice(5), ["WatchList"])
        yield* fake.add(pod("b"))
        yield* settle
        assert.deepStrictEqual(yield* names, ["a", "b"])
        assert.deepStrictEqual(errors.summary(), [
          "watch-list:StatusError(Invalid)",
          "watch:StatusError(ServerError)",
          "watch:StatusError(ServerError)"
        ])
      }))

    it("watchListRetryDelay: 1 minute, doubling, at most 30 minutes", () => {
      const minutes = [1, 2, 3, 4, 5, 6, 10, 100].map((n) => Duration.toMinutes(watchListRetryDelay(n)))
      assert.deepStrictEqual(minutes, [1, 2, 4, 8, 16, 30, 30, 30])
    })

    it.effect("a server that ignores watch-list: ProtocolError WatchListTimeout after watchListTimeout, then List+Watch", () =>
      Effect.gen(function*() {
        const fake = yield* FakeListerWatcher.make({ initial: [pod("a"), pod("b")], watchList: "ignore" })
        const { calls, names, store } = yield* recordingStore()
        const errors = errorLog()
        yield* Reflector.make(fake, store, { watchListTimeout: "5 seconds", onError: errors.onError })
        yield* settle
        assert.deepStrictEqual(kinds(yield* fake.requests), ["WatchList"])
        yield* advance("4999 millis")
        assert.deepStrictEqual(errors.summary(), [])
        assert.strictEqual(calls.replace.length, 0)
        yield* advance("1 millis")
        assert.deepStrictEqual(errors.summary(), ["watch-list:ProtocolError(WatchListTimeout)"])
        assert.strictEqual((errors.reported[0].error as Reflector.ProtocolError).reason, "WatchListTimeout")
        assert.deepStrictEqual(kinds(yield* fake.requests), ["WatchList", "List", "Watch"])
        assert.strictEqual(yield* fake.openWatches, 1)
        assert.deepStrictEqual(yield* names, ["a", "b"])
        yield* fake.failWatches(serverError())
        yield* advance("2 seconds")
        assert.deepStrictEqual(kinds(yield* fake.requests), ["WatchList", "List", "Watch", "List", "Watch"])
      }))

    it.effect("TestInitialEventsEndBookmarkTicker: every 10 s without the end bookmark, it says what it waits for", () => {
      const lines: Array<string> = []
      const logger = Logger.make(({ message }) => {
        const text = Array.isArray(message) ? message.join(" ") : String(message)
        if (text.includes("awaiting")) lines.push(text)
      })
      return Effect.gen(function*() {
        const fake = yield* FakeListerWatcher.make({ initial: [pod("a"), pod("b")], watchList: "ignore" })
        const store = yield* DeltaFifo.make<KubeObject>()
        yield* Reflector.make(fake, store, { name: "ticking", watchListTimeout: "25 seconds" })
        yield* settle
        yield* advance("9999 millis")
        assert.deepStrictEqual(lines, [])
        yield* advance("1 millis")
        assert.deepStrictEqual(lines, [
          "ticking: awaiting the initial-events-end bookmark: 2 events in 10s, the last one 10s ago"
        ])
        yield* fake.add(pod("c"))
        yield* advance("10 seconds")
        assert.deepStrictEqual(lines.slice(1), [
          "ticking: awaiting the initial-events-end bookmark: 3 events in 20s, the last one 10s ago"
        ])
        yield* advance("10 seconds")
        assert.deepStrictEqual(lines.slice(2), [
          "ticking: awaiting the initial-events-end bookmark: 3 events in 30s, the last one 20s ago"
        ])
        // the timeout counts from the last event (c, at 10 s): at 35 s the fallback to List+Watch; no more ticks
        yield* advance("4999 millis")
        assert.deepStrictEqual(kinds(yield* fake.requests), ["WatchList"])
        yield* advance("1 millis")
        assert.deepStrictEqual(kinds(yield* fake.requests), ["WatchList", "List", "Watch"])
        yield* advance("30 seconds")
        assert.lengthOf(lines, 3)
      }).pipe(Effect.provide(Logger.layer([logger])))
    })

    it.effect("the end-bookmark timeout: 60 s by default, and the stream is closed", () =>
      Effect.gen(function*() {
        const { lw, requests, state } = scripted({
          list: { items: [pod("a", { rv: "1" })], resourceVersion: "1", continue: undefined },
          watches: [Stream.concat(Stream.make(added(pod("a", { rv: "1" }))), Stream.never)]
        })
        const { calls, names, store } = yield* recordingStore()
        const errors = errorLog()
        yield* Reflector.make(lw, store, { onError: errors.onError })
        yield* advance("59999 millis")
        assert.deepStrictEqual(errors.summary(), [])
        assert.strictEqual(state.open, 1)
        yield* advance("1 millis")
        assert.deepStrictEqual(errors.summary(), ["watch-list:ProtocolError(WatchListTimeout)"])
        assert.deepStrictEqual(kinds(requests), ["WatchList", "List", "Watch"])
        assert.strictEqual(state.open, 1)
        assert.deepStrictEqual(calls.replace, [{ resourceVersion: "1", names: ["a"] }])
        assert.deepStrictEqual(yield* names, ["a"])
      }))

    it.effect("TestWatchList case 8: a watch-list stream ending before the bookmark: a new watch-list request", () =>
      Effect.gen(function*() {
        const fake = yield* FakeListerWatcher.make({ initial: [pod("a"), pod("b"), pod("c")] })
        yield* fake.endNextWatchAfter(1)
        const { log, lw } = timed(fake)
        const { calls, names, store } = yield* recordingStore()
        const errors = errorLog()
        yield* Reflector.make(lw, store, { onError: errors.onError })
        yield* settle
        assert.deepStrictEqual(errors.summary(), ["watch-list:ProtocolError(WatchListEndedEarly)"])
        assert.strictEqual((errors.reported[0].error as Reflector.ProtocolError).reason, "WatchListEndedEarly")
        assert.strictEqual(calls.replace.length, 0)
        yield* advance("1600 millis")
        assert.deepStrictEqual(kinds(log.map((t) => t.request)), ["WatchList", "WatchList"])
        inRange(log[1].at, 800, 1600, "second watch-list request")
        assert.deepStrictEqual(yield* names, ["a", "b", "c"])
      }))

    it.effect("TestWatchList case 6: Modified and Deleted during the initial stream are applied", () =>
      Effect.gen(function*() {
        const { lw, requests } = scripted({
          watches: [
            Stream.concat(
              Stream.make(
                added(pod("p1", { rv: "1" })),
                added(pod("p2", { rv: "2" })),
                added(pod("p3", { rv: "3" })),
                modified(pod("p1", { rv: "4", labels: { v: "2" } })),
                deleted(pod("p3", { rv: "5" })),
                bookmarkEvent("5", "true"),
                added(pod("p4", { rv: "6" }))
              ),
              Stream.never
            )
          ]
        })
        const { calls, indexer, names, store } = yield* recordingStore()
        const reflector = yield* Reflector.make(lw, store, {})
        yield* settle
        // p4 came after the end bookmark, in the same chunk: a watch event.
        assert.deepStrictEqual(yield* names, ["p1", "p2", "p4"])
        assert.deepStrictEqual(calls.replace, [{ resourceVersion: "5", names: ["p1", "p2"] }])
        assert.deepStrictEqual(calls.add, ["p4"])
        const p1 = Option.getOrThrow(yield* indexer.getByKey("ns/p1"))
        assert.strictEqual(rvOf(p1), "4")
        assert.strictEqual(yield* reflector.lastSyncResourceVersion, "6")
        assert.strictEqual(requests.length, 1)
      }))

    it.effect("initialList \"any\" makes the first watch-list request an any-age one (resourceVersion \"0\")", () =>
      Effect.gen(function*() {
        const fake = yield* FakeListerWatcher.make({ initial: [pod("a")] })
        const { names, store } = yield* recordingStore()
        yield* Reflector.make(fake, store, { initialList: "any" })
        yield* settle
        const { timeoutSeconds: _, ...options } = watchesOf(yield* fake.requests)[0]
        assert.deepStrictEqual(options, {
          resourceVersion: "0",
          resourceVersionMatch: "NotOlderThan",
          sendInitialEvents: true,
          allowWatchBookmarks: true
        })
        assert.deepStrictEqual(yield* names, ["a"])
      }))

    it.effect("TestWatchList case 11: an initial-events-end annotation of \"false\" does not sync", () =>
      Effect.gen(function*() {
        const { lw } = scripted({
          watches: [
            Stream.concat(Stream.make(added(pod("p1", { rv: "1" })), bookmarkEvent("2", "false")), Stream.never)
          ]
        })
        const { calls, names, store } = yield* recordingStore()
        const reflector = yield* Reflector.make(lw, store, {})
        yield* advance("30 seconds")
        assert.strictEqual(calls.replace.length, 0)
        assert.deepStrictEqual(yield* names, [])
        assert.strictEqual(yield* reflector.lastSyncResourceVersion, "")
      }))
  })
})

/**
 * Reflector: ports of client-go's reflector_watchlist_test.go (test names keep the client-go names).
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Queue from "effect/Queue"
import * as Stream from "effect/Stream"
import * as FakeListerWatcher from "../../../src/FakeListerWatcher.js"
import * as Reflector from "../../../src/Reflector.js"
import { advance, gone, pod, serverError, settle, tooManyRequests } from "../../fixtures/index.js"
import type { Event } from "./fixtures.js"
import {
  added,
  bookmarkEvent,
  closeWithoutTime,
  errorLog,
  kinds,
  listsOf,
  now,
  recordingStore,
  scripted,
  startInScope,
  watchesOf
} from "./fixtures.js"

describe("Reflector", () => {
  describe("client-go reflector_watchlist_test", () => {
    it.effect("TestWatchListResourceVersion: the version is \"\" until the end bookmark, then its version", () =>
      Effect.gen(function*() {
        const queue = yield* Queue.unbounded<Event>()
        const { lw } = scripted({ watches: [Stream.fromQueue(queue)] })
        const { store } = yield* recordingStore()
        const reflector = yield* Reflector.make(lw, store, {})
        yield* settle
        assert.strictEqual(yield* reflector.lastSyncResourceVersion, "")
        yield* Queue.offer(queue, added(pod("p1", { rv: "1" })))
        yield* settle
        assert.strictEqual(yield* reflector.lastSyncResourceVersion, "")
        yield* Queue.offer(queue, bookmarkEvent("2", "true"))
        yield* settle
        assert.strictEqual(yield* reflector.lastSyncResourceVersion, "2")
      }))

    it.effect("TestWatchList case 1: stopped before the bookmark: no replace, one request", () =>
      Effect.gen(function*() {
        const { lw, requests, state } = scripted({
          watches: [Stream.concat(Stream.make(added(pod("p1", { rv: "1" }))), Stream.never)]
        })
        const { calls, names, store } = yield* recordingStore()
        const { scope } = yield* startInScope(lw, store, {})
        yield* settle
        yield* closeWithoutTime(scope)
        assert.strictEqual(calls.replace.length, 0)
        assert.deepStrictEqual(yield* names, [])
        assert.strictEqual(requests.length, 1)
        assert.strictEqual(state.open, 0)
      }))

    it.effect("TestWatchList case 2: watch-list off: List {\"0\", 500} and Watch {\"1\"}", () =>
      Effect.gen(function*() {
        const fake = yield* FakeListerWatcher.make({ initial: [pod("p1")] })
        const { names, store } = yield* recordingStore()
        yield* Reflector.make(fake, store, { watchList: false, initialList: "any" })
        yield* settle
        const requests = yield* fake.requests
        assert.deepStrictEqual(listsOf(requests), [{ resourceVersion: "0", limit: 500 }])
        assert.deepStrictEqual(watchesOf(requests).map((w) => w.resourceVersion), ["1"])
        assert.deepStrictEqual(yield* names, ["p1"])
      }))

    it.effect("TestWatchList case 3: a watch-list request failing with an arbitrary error falls back, and is tried again next cycle", () =>
      Effect.gen(function*() {
        const fake = yield* FakeListerWatcher.make({ initial: [pod("p1"), pod("p2")] })
        yield* fake.failNextWatch(serverError())
        const { names, store } = yield* recordingStore()
        const errors = errorLog()
        yield* Reflector.make(fake, store, { onError: errors.onError })
        yield* settle
        assert.deepStrictEqual(kinds(yield* fake.requests), ["WatchList", "List", "Watch"])
        assert.deepStrictEqual(yield* names, ["p1", "p2"])
        assert.deepStrictEqual(errors.summary(), ["watch-list:StatusError(ServerError)"])
        yield* fake.failWatches(serverError())
        yield* advance("2 seconds")
        assert.deepStrictEqual(kinds(yield* fake.requests), ["WatchList", "List", "Watch", "WatchList"])
      }))

    it.effect("TestWatchList case 4: an Invalid (422) answer falls back to List+Watch", () =>
      Effect.gen(function*() {
        const fake = yield* FakeListerWatcher.make({ initial: [pod("p1"), pod("p2")] })
        yield* fake.failNextWatch(serverError(422, "Invalid"))
        const { names, store } = yield* recordingStore()
        yield* Reflector.make(fake, store, {})
        yield* settle
        assert.deepStrictEqual(kinds(yield* fake.requests), ["WatchList", "List", "Watch"])
        assert.deepStrictEqual(yield* names, ["p1", "p2"])
      }))

    it.effect("TestWatchList case 5: two Added and the bookmark: synced with one request", () =>
      Effect.gen(function*() {
        const fake = yield* FakeListerWatcher.make({ initial: [pod("p1"), pod("p2")] })
        const { names, store } = yield* recordingStore()
        yield* Reflector.make(fake, store, {})
        yield* settle
        assert.deepStrictEqual(yield* names, ["p1", "p2"])
        assert.strictEqual((yield* fake.requests).length, 1)
      }))

    it.effect("TestWatchList case 7: two 429s: three identical watch-list requests", () =>
      Effect.gen(function*() {
        const fake = yield* FakeListerWatcher.make({ initial: [pod("p1")] })
        yield* fake.failNextWatch(tooManyRequests(), 2)
        const { names, store } = yield* recordingStore()
        const errors = errorLog()
        yield* Reflector.make(fake, store, { onError: errors.onError })
        yield* advance("5 seconds")
        const watches = watchesOf(yield* fake.requests).map(({ timeoutSeconds: _, ...options }) => options)
        assert.strictEqual(watches.length, 3)
        assert.deepStrictEqual(watches[1], watches[0])
        assert.deepStrictEqual(watches[2], watches[0])
        assert.deepStrictEqual(kinds(yield* fake.requests), ["WatchList", "WatchList", "WatchList"])
        assert.deepStrictEqual(yield* names, ["p1"])
        assert.deepStrictEqual(errors.summary(), [
          "watch-list:StatusError(TooManyRequests)",
          "watch-list:StatusError(TooManyRequests)"
        ])
      }))

    it.effect("TestWatchList case 9: the stream ending after the bookmark: a plain watch from the last event's version", () =>
      Effect.gen(function*() {
        const fake = yield* FakeListerWatcher.make({ initial: [pod("p1"), pod("p2")] })
        const { names, store } = yield* recordingStore()
        const errors = errorLog()
        yield* Reflector.make(fake, store, { onError: errors.onError })
        yield* settle
        yield* fake.add(pod("p3"))
        yield* settle
        yield* fake.closeWatches
        yield* settle
        yield* fake.add(pod("p4"))
        yield* settle
        const requests = yield* fake.requests
        assert.deepStrictEqual(kinds(requests), ["WatchList", "Watch"])
        const { timeoutSeconds: _, ...options } = watchesOf(requests)[1]
        assert.deepStrictEqual(options, { resourceVersion: "3", allowWatchBookmarks: true })
        assert.deepStrictEqual(yield* names, ["p1", "p2", "p3", "p4"])
        assert.deepStrictEqual(errors.summary(), [])
      }))

    it.effect("TestWatchList case 10: Gone on the re-watch after sync: a consistent watch-list at once", () =>
      Effect.gen(function*() {
        const fake = yield* FakeListerWatcher.make({ initial: [pod("p1"), pod("p2")] })
        const { names, store } = yield* recordingStore()
        const errors = errorLog()
        yield* Reflector.make(fake, store, { onError: errors.onError })
        yield* settle
        yield* fake.deleteDropWatch(pod("p2"))
        yield* fake.addDropWatch(pod("p3"))
        yield* fake.failNextWatch(gone())
        yield* fake.closeWatches
        yield* settle
        assert.deepStrictEqual(kinds(yield* fake.requests), ["WatchList", "Watch", "WatchList"])
        assert.strictEqual(watchesOf(yield* fake.requests)[2].resourceVersion, "")
        assert.deepStrictEqual(errors.summary(), ["watch:StatusError(Gone)"])
        assert.deepStrictEqual(yield* names, ["p1", "p3"])
        assert.strictEqual(yield* now, 0)
      }))
  })
})

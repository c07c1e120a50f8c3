/**
 * Reflector: decode errors and recovery paths.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import * as ApiError from "../../../src/ApiError.js"
import * as FakeListerWatcher from "../../../src/FakeListerWatcher.js"
import type * as ListerWatcher from "../../../src/ListerWatcher.js"
import * as Reflector from "../../../src/Reflector.js"
import { advance, gone, pod, serverError, settle, tooManyRequests, transport } from "../../fixtures/index.js"
import type { Event } from "./fixtures.js"
import {
  added,
  bookmarkEvent,
  errorLog,
  inRange,
  kinds,
  nameOf,
  now,
  recordingStore,
  scripted,
  timed,
  watchesOf
} from "./fixtures.js"

describe("Reflector", () => {
  describe("decode errors", () => {
    it.effect("a DecodeError mid-stream is reported (phase watch), then a relist after the backoff loses nothing", () =>
      Effect.gen(function*() {
        const fake = yield* FakeListerWatcher.make({ initial: [pod("a")] })
        const { log, lw } = timed(fake)
        const { indexer, names, store } = yield* recordingStore()
        const errors = errorLog()
        yield* Reflector.make(lw, store, { watchList: false, onError: errors.onError })
        yield* settle
        yield* fake.add(pod("b"))
        yield* settle
        yield* fake.modifyDropWatch(pod("a", { labels: { changed: "yes" } }))
        const decode = new ApiError.DecodeError({ reason: "Malformed", message: "unexpected end of JSON input" })
        yield* fake.failWatches(decode)
        yield* settle
        assert.deepStrictEqual(errors.summary(), ["watch:DecodeError(Malformed)"])
        assert.strictEqual(errors.reported[0].error, decode)
        assert.strictEqual(yield* fake.openWatches, 0)
        assert.strictEqual(log.length, 2)
        yield* advance("1600 millis")
        assert.deepStrictEqual(kinds(log.map((t) => t.request)), ["List", "Watch", "List", "Watch"])
        inRange(log[2].at, 800, 1600, "relist")
        assert.strictEqual(log[2].request.options.resourceVersion, "2")
        assert.deepStrictEqual(yield* names, ["a", "b"])
        const a = Option.getOrThrow(yield* indexer.getByKey("ns/a"))
        assert.deepStrictEqual(a.metadata?.labels, { changed: "yes" })
      }))
  })

  describe("recovery paths", () => {
    it.effect("a connection reset after the watch was established re-watches at once, without backoff or relist", () =>
      Effect.gen(function*() {
        const fake = yield* FakeListerWatcher.make({ initial: [pod("a")] })
        const { store } = yield* recordingStore()
        const errors = errorLog()
        yield* Reflector.make(fake, store, { watchList: false, onError: errors.onError })
        yield* advance("1 second")
        yield* fake.failWatches(transport())
        yield* settle
        assert.deepStrictEqual(kinds(yield* fake.requests), ["List", "Watch", "Watch"])
        assert.strictEqual(watchesOf(yield* fake.requests)[1].resourceVersion, "1")
        assert.deepStrictEqual(errors.summary(), ["watch:TransportError(RequestFailed)"])
        assert.strictEqual(yield* now, 1000)
      }))

    it.effect("a watch-list request that cannot connect backs off and tries watch-list again", () =>
      Effect.gen(function*() {
        const fake = yield* FakeListerWatcher.make({ initial: [pod("a")] })
        yield* fake.failNextWatch(transport())
        const { log, lw } = timed(fake)
        const { names, store } = yield* recordingStore()
        const errors = errorLog()
        yield* Reflector.make(lw, store, { onError: errors.onError })
        yield* settle
        assert.deepStrictEqual(errors.summary(), ["watch-list:TransportError(RequestFailed)"])
        yield* advance("1600 millis")
        assert.deepStrictEqual(kinds(log.map((t) => t.request)), ["WatchList", "WatchList"])
        inRange(log[1].at, 800, 1600, "second watch-list")
        assert.deepStrictEqual(yield* names, ["a"])
      }))

    it.effect("after a watch-list sync, a 429 on its stream backs off (Retry-After) and watches on from the last version", () =>
      Effect.gen(function*() {
        const fake = yield* FakeListerWatcher.make({ initial: [pod("a"), pod("b")] })
        const { names, store } = yield* recordingStore()
        const errors = errorLog()
        yield* Reflector.make(fake, store, { onError: errors.onError })
        yield* settle
        yield* fake.add(pod("c"))
        yield* settle
        yield* fake.failWatches(tooManyRequests(5))
        yield* advance("4999 millis")
        assert.deepStrictEqual(kinds(yield* fake.requests), ["WatchList"])
        yield* advance("1 millis")
        assert.deepStrictEqual(kinds(yield* fake.requests), ["WatchList", "Watch"])
        assert.strictEqual(watchesOf(yield* fake.requests)[1].resourceVersion, "3")
        assert.deepStrictEqual(errors.summary(), ["watch:StatusError(TooManyRequests)"])
        assert.deepStrictEqual(yield* names, ["a", "b", "c"])
      }))

    it.effect("after a watch-list sync, a 500 on its stream backs off and syncs again, not older than the last version", () =>
      Effect.gen(function*() {
        const fake = yield* FakeListerWatcher.make({ initial: [pod("a")] })
        const { log, lw } = timed(fake)
        const { store } = yield* recordingStore()
        const errors = errorLog()
        yield* Reflector.make(lw, store, { onError: errors.onError })
        yield* settle
        yield* fake.failWatches(serverError())
        yield* advance("1600 millis")
        assert.deepStrictEqual(kinds(log.map((t) => t.request)), ["WatchList", "WatchList"])
        inRange(log[1].at, 800, 1600, "second watch-list")
        const second = log[1].request.options as ListerWatcher.WatchOptions
        assert.strictEqual(second.resourceVersion, "1")
        assert.strictEqual(second.resourceVersionMatch, "NotOlderThan")
        assert.deepStrictEqual(errors.summary(), ["watch:StatusError(ServerError)"])
      }))

    it.effect("Gone right after each watch-list sync: the second in a row without progress backs off (no hot loop)", () =>
      Effect.gen(function*() {
        const syncThenGone = (extra: ReadonlyArray<Event>) =>
          Stream.concat(
            Stream.make(added(pod("p1", { rv: "1" })), bookmarkEvent("1", "true"), ...extra),
            Stream.fail(gone())
          )
        const { lw, requests } = scripted({
          watches: [
            syncThenGone([]),
            syncThenGone([]),
            syncThenGone([added(pod("p2", { rv: "2" }))]),
            syncThenGone([])
          ]
        })
        const { log, lw: timedLw } = timed(lw)
        const { store } = yield* recordingStore()
        const errors = errorLog()
        yield* Reflector.make(timedLw, store, { onError: errors.onError })
        yield* settle
        // The first Gone relists at once; the second, without an event after the sync, waits.
        assert.deepStrictEqual(kinds(requests), ["WatchList", "WatchList"])
        assert.deepStrictEqual(errors.summary(), ["watch:StatusError(Gone)", "watch:StatusError(Gone)"])
        yield* advance("1600 millis")
        // The third stream delivered an event after its sync: progress, so its Gone relists at once.
        assert.deepStrictEqual(kinds(requests), ["WatchList", "WatchList", "WatchList", "WatchList"])
        inRange(log[2].at, 800, 1600, "third watch-list")
        assert.strictEqual(log[3].at, log[2].at)
        assert.isTrue(requests.every((r) => r.options.resourceVersion === ""))
      }))

    it.effect("a watch-list open for a second after its sync is progress: Gones a second apart each relist at once", () =>
      Effect.gen(function*() {
        const fake = yield* FakeListerWatcher.make({ initial: [pod("a")] })
        const { log, lw } = timed(fake)
        const { store } = yield* recordingStore()
        yield* Reflector.make(lw, store, {})
        yield* settle
        for (let round = 1; round <= 3; round++) {
          yield* advance("1 second")
          yield* fake.failWatches(gone())
          yield* settle
          assert.strictEqual(log.length, 1 + round)
          assert.strictEqual(log[round].at, yield* now)
        }
        // Gone right after the sync (no event, not a second): the relist waits for the backoff.
        yield* fake.failWatches(gone())
        yield* settle
        assert.strictEqual(log.length, 4)
        yield* advance("1600 millis")
        assert.strictEqual(log.length, 5)
        inRange(log[4].at - 3000, 800, 1600, "watch-list after a Gone without progress")
        assert.deepStrictEqual(kinds(log.map((t) => t.request)), [
          "WatchList",
          "WatchList",
          "WatchList",
          "WatchList",
          "WatchList"
        ])
      }))

    it.effect("Gone on a watch-list request at a known version: a consistent watch-list at once", () =>
      Effect.gen(function*() {
        const fake = yield* FakeListerWatcher.make({ initial: [pod("a")] })
        const { log, lw } = timed(fake)
        const { names, store } = yield* recordingStore()
        const errors = errorLog()
        yield* Reflector.make(lw, store, { onError: errors.onError })
        yield* settle
        yield* fake.failWatches(serverError())
        yield* fake.failNextWatch(gone())
        yield* advance("1600 millis")
        assert.deepStrictEqual(log.map((t) => t.request.options.resourceVersion), ["", "1", ""])
        assert.deepStrictEqual(kinds(log.map((t) => t.request)), ["WatchList", "WatchList", "WatchList"])
        assert.strictEqual(log[2].at, log[1].at)
        assert.deepStrictEqual(errors.summary(), ["watch:StatusError(ServerError)", "watch-list:StatusError(Gone)"])
        assert.deepStrictEqual(yield* names, ["a"])
      }))

    it.effect("a watch-list stream ending early after more than a second of progress is retried at once", () =>
      Effect.gen(function*() {
        const { lw, requests } = scripted({
          watches: [
            Stream.concat(
              Stream.make(added(pod("p1", { rv: "1" }))),
              Stream.drain(Stream.fromEffect(Effect.sleep("2 seconds")))
            ),
            Stream.concat(Stream.make(added(pod("p1", { rv: "1" })), bookmarkEvent("1", "true")), Stream.never)
          ]
        })
        const { names, store } = yield* recordingStore()
        const errors = errorLog()
        yield* Reflector.make(lw, store, { onError: errors.onError })
        yield* advance("2 seconds")
        assert.deepStrictEqual(kinds(requests), ["WatchList", "WatchList"])
        assert.deepStrictEqual(errors.summary(), ["watch-list:ProtocolError(WatchListEndedEarly)"])
        assert.deepStrictEqual(yield* names, ["p1"])
      }))

    it.effect("a 429 on the LIST waits for its Retry-After", () =>
      Effect.gen(function*() {
        const fake = yield* FakeListerWatcher.make({ initial: [pod("a")] })
        yield* fake.failNextList(tooManyRequests(10))
        const { log, lw } = timed(fake)
        const { names, store } = yield* recordingStore()
        const errors = errorLog()
        yield* Reflector.make(lw, store, { watchList: false, onError: errors.onError })
        yield* advance("9999 millis")
        assert.strictEqual(log.length, 1)
        yield* advance("1 millis")
        assert.deepStrictEqual(log.map((t) => [t.request._tag, t.at]), [["List", 0], ["List", 10000], ["Watch", 10000]])
        assert.deepStrictEqual(errors.summary(), ["list:StatusError(TooManyRequests)"])
        assert.deepStrictEqual(yield* names, ["a"])
      }))

    for (const watchList of [true, false]) {
      it.effect(`reuse replaces listed objects (watch-list ${watchList ? "on" : "off"})`, () =>
        Effect.gen(function*() {
          const fake = yield* FakeListerWatcher.make({ initial: [pod("a"), pod("b")] })
          const held = new Map((yield* fake.objects).map((obj) => [nameOf(obj), { ...obj }] as const))
          const seen: Array<string> = []
          const { indexer, store } = yield* recordingStore()
          yield* Reflector.make(fake, store, {
            watchList,
            reuse: (obj) => {
              seen.push(nameOf(obj))
              return held.get(nameOf(obj)) ?? obj
            }
          })
          yield* settle
          yield* fake.add(pod("c"))
          yield* settle
          assert.deepStrictEqual(seen.sort(), ["a", "b"])
          assert.strictEqual(Option.getOrThrow(yield* indexer.getByKey("ns/a")), held.get("a"))
          assert.strictEqual(Option.getOrThrow(yield* indexer.getByKey("ns/b")), held.get("b"))
          assert.isTrue(Option.isSome(yield* indexer.getByKey("ns/c")))
        }))
    }
  })
})

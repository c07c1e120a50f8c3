/**
 * Reflector: hostile servers.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Schedule from "effect/Schedule"
import * as Stream from "effect/Stream"
import * as DeltaFifo from "../../../src/DeltaFifo.js"
import * as FakeListerWatcher from "../../../src/FakeListerWatcher.js"
import * as Reflector from "../../../src/Reflector.js"
import { advance, pod, settle, tooManyRequests } from "../../fixtures/index.js"
import type { LW, Request } from "./fixtures.js"
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
  scripted,
  timed,
  watchesOf
} from "./fixtures.js"

describe("Reflector", () => {
  describe("hostile servers", () => {
    it.effect("a BOOKMARK with an empty resourceVersion is not adopted: the re-watch resumes from the last good one", () =>
      Effect.gen(function*() {
        const { lw, requests } = scripted({
          list: { items: [pod("a", { rv: "5" })], resourceVersion: "5", continue: undefined },
          watches: [Stream.make(modified(pod("a", { rv: "7" })), bookmarkEvent(""))]
        })
        const { store } = yield* recordingStore()
        const errors = errorLog()
        const reflector = yield* Reflector.make(lw, store, { watchList: false, onError: errors.onError })
        yield* advance("2 seconds")
        assert.strictEqual(yield* reflector.lastSyncResourceVersion, "7")
        const watches = watchesOf(requests)
        assert.deepStrictEqual(watches.map((w) => w.resourceVersion), ["5", "7"])
        assert.deepStrictEqual(errors.summary(), ["event:DecodeError(MissingResourceVersion)"])
        assert.include(errors.reported[0].error.message, "has no resourceVersion")
      }))

    it.effect("an object event with an empty resourceVersion is applied, not adopted, and reported", () =>
      Effect.gen(function*() {
        const { lw, requests } = scripted({
          list: { items: [pod("a", { rv: "5" }), pod("b", { rv: "5" })], resourceVersion: "5", continue: undefined },
          watches: [Stream.make(deleted(pod("a", { rv: "6" })), deleted(pod("b", { rv: "" })))]
        })
        // through the DeltaFifo (the chunked, synchronous path) and through an Indexer (one Effect per event)
        const fifo = yield* DeltaFifo.make()
        const { names, store } = yield* recordingStore()
        const errors = errorLog()
        const viaFifo = yield* Reflector.make(lw, fifo, { watchList: false, onError: errors.onError })
        yield* advance("2 seconds")
        assert.strictEqual(yield* viaFifo.lastSyncResourceVersion, "6")
        assert.deepStrictEqual(watchesOf(requests).map((w) => w.resourceVersion), ["5", "6"])
        assert.deepStrictEqual(errors.summary(), ["event:DecodeError(MissingResourceVersion)"])
        assert.include(errors.reported[0].error.message, "a DELETED event for ns/b has no resourceVersion")

        const second = scripted({
          list: { items: [pod("a", { rv: "5" }), pod("b", { rv: "5" })], resourceVersion: "5", continue: undefined },
          watches: [Stream.make(deleted(pod("a", { rv: "6" })), deleted(pod("b")))]
        })
        const errors2 = errorLog()
        const viaStore = yield* Reflector.make(second.lw, store, { watchList: false, onError: errors2.onError })
        yield* advance("2 seconds")
        assert.deepStrictEqual(yield* names, [])
        assert.strictEqual(yield* viaStore.lastSyncResourceVersion, "6")
        assert.deepStrictEqual(watchesOf(second.requests).map((w) => w.resourceVersion), ["5", "6"])
        assert.deepStrictEqual(errors2.summary(), ["event:DecodeError(MissingResourceVersion)"])
      }))

    it.effect("a list without a resourceVersion is not used: DecodeError, back off, list again", () =>
      Effect.gen(function*() {
        let listed = 0
        const lw: LW = {
          list: () =>
            Effect.sync(() => {
              listed++
              return { items: [pod("a", { rv: "3" })], resourceVersion: listed === 1 ? "" : "3", continue: undefined }
            }),
          watch: () => Stream.never
        }
        const { calls, store } = yield* recordingStore()
        const errors = errorLog()
        const reflector = yield* Reflector.make(lw, store, { watchList: false, onError: errors.onError })
        yield* settle
        assert.deepStrictEqual(calls.replace, [])
        assert.deepStrictEqual(errors.summary(), ["list:DecodeError(MissingResourceVersion)"])
        yield* advance("2 seconds")
        assert.deepStrictEqual(calls.replace.map((r) => r.resourceVersion), ["3"])
        assert.strictEqual(yield* reflector.lastSyncResourceVersion, "3")
      }))

    it.effect("a watch-list whose initial-events-end bookmark has no resourceVersion falls back to LIST", () =>
      Effect.gen(function*() {
        const requests: Array<Request> = []
        const fake = yield* FakeListerWatcher.make({ initial: [pod("a")] })
        const lw: LW = {
          ...fake,
          list: (options) =>
            Effect.andThen(Effect.sync(() => requests.push({ _tag: "List", options })), fake.list(options)),
          watch: (options) => {
            requests.push({ _tag: "Watch", options })
            return options.sendInitialEvents === true
              ? Stream.make(added(pod("a", { rv: "1" })), bookmarkEvent("", "true")).pipe(Stream.concat(Stream.never))
              : fake.watch(options)
          }
        }
        const { calls, store } = yield* recordingStore()
        const errors = errorLog()
        yield* Reflector.make(lw, store, { onError: errors.onError })
        yield* settle
        assert.deepStrictEqual(kinds(requests), ["WatchList", "List", "Watch"])
        assert.deepStrictEqual(errors.summary(), ["watch-list:DecodeError(MissingResourceVersion)"])
        assert.deepStrictEqual(calls.replace.map((r) => r.resourceVersion), ["1"])
      }))

    it.effect("a continue token the server repeats: ProtocolError ContinueRepeated after a bounded number of pages, then backoff and relist", () =>
      Effect.gen(function*() {
        let lists = 0
        const lw: LW = {
          list: (options) =>
            Effect.sync(() => {
              lists++
              return {
                items: [pod(`p${lists}`, { rv: "9" })],
                resourceVersion: "9",
                // a cycle of two tokens
                continue: options.continue === "b" ? "a" : options.continue === "a" ? "b" : "a"
              }
            }),
          watch: () => Stream.never
        }
        const { calls, store } = yield* recordingStore()
        const errors = errorLog()
        yield* Reflector.make(lw, store, { watchList: false, onError: errors.onError })
        yield* settle
        assert.strictEqual(lists, 3)
        assert.deepStrictEqual(errors.summary(), ["list:ProtocolError(ContinueRepeated)"])
        const error = errors.reported[0].error as Reflector.ProtocolError
        assert.strictEqual(error.reason, "ContinueRepeated")
        assert.strictEqual(error.pages, 3)
        assert.deepStrictEqual(calls.replace, [])
        yield* advance("2 seconds")
        assert.strictEqual(lists, 6)
        assert.deepStrictEqual(errors.summary(), [
          "list:ProtocolError(ContinueRepeated)",
          "list:ProtocolError(ContinueRepeated)"
        ])
      }))

    it.effect("Retry-After: 999999 is cut to maxRetryAfter (30 s by default)", () =>
      Effect.gen(function*() {
        const fake = yield* FakeListerWatcher.make({ initial: [pod("a")] })
        const t = timed(fake)
        yield* fake.failNextList(tooManyRequests(999999))
        const { names, store } = yield* recordingStore()
        yield* Reflector.make(t.lw, store, { watchList: false })
        yield* advance("31 seconds")
        assert.deepStrictEqual(t.times("List"), [0, 30_000])
        assert.deepStrictEqual(yield* names, ["a"])
      }))

    it.effect("maxRetryAfter raises or lowers the cap", () =>
      Effect.gen(function*() {
        const fake = yield* FakeListerWatcher.make({ initial: [pod("a")] })
        const t = timed(fake)
        yield* fake.failNextList(tooManyRequests(999999))
        const { store } = yield* recordingStore()
        yield* Reflector.make(t.lw, store, {
          watchList: false,
          maxRetryAfter: "5 minutes",
          backoff: Schedule.spaced("1 second")
        })
        yield* advance("299 seconds")
        assert.deepStrictEqual(t.times("List"), [0])
        yield* advance("2 seconds")
        assert.deepStrictEqual(t.times("List"), [0, 300_000])
        const fake2 = yield* FakeListerWatcher.make({ initial: [pod("a")] })
        const t2 = timed(fake2)
        yield* fake2.failNextList(tooManyRequests(999999))
        const start = yield* now
        yield* Reflector.make(t2.lw, store, { watchList: false, maxRetryAfter: "3 seconds" })
        yield* advance("4 seconds")
        assert.strictEqual(t2.times("List").length, 2)
        inRange(t2.times("List")[1] - start, 3000, 3001, "second list")
      }))
  })
})

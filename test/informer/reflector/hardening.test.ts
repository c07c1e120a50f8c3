/**
 * Reflector: hardening.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Schedule from "effect/Schedule"
import * as Stream from "effect/Stream"
import * as FakeListerWatcher from "../../../src/FakeListerWatcher.js"
import * as Reflector from "../../../src/Reflector.js"
import { advance, pod, podsNamed, serverError, settle, tooManyRequests } from "../../fixtures/index.js"
import type { LW } from "./fixtures.js"
import { added, bookmarkEvent, errorLog, kinds, nameOf, recordingStore, scripted, timed } from "./fixtures.js"

describe("Reflector", () => {
  describe("hardening", () => {
    it.effect("resync starts only once the session has synced: a list that never returns never resyncs", () =>
      Effect.gen(function*() {
        const { calls, store } = yield* recordingStore()
        const lw: LW = { list: () => Effect.never, watch: () => Stream.never }
        yield* Reflector.make(lw, store, { watchList: false, resyncPeriod: "1 second" })
        yield* advance("10 seconds")
        assert.strictEqual(calls.resync, 0)
      }))

    it.effect("a defect in the ListerWatcher is reported as UnexpectedError and the loop recovers", () =>
      Effect.gen(function*() {
        const fake = yield* FakeListerWatcher.make()
        yield* fake.add(pod("a"))
        let calls = 0
        const lw: LW = {
          ...fake,
          list: (options) => (++calls === 1 ? Effect.die(new Error("boom")) : fake.list(options))
        }
        const { indexer, store } = yield* recordingStore()
        const errors = errorLog()
        yield* Reflector.make(lw, store, { watchList: false, onError: errors.onError })
        yield* settle
        assert.deepStrictEqual(errors.summary(), ["watch:UnexpectedError(Defect)"])
        assert.include(errors.reported[0].error.message, "boom")
        yield* advance("2 seconds")
        assert.deepStrictEqual((yield* indexer.list).map(nameOf), ["a"])
      }))

    it.effect("a finite custom backoff starts over with its first wait instead of retrying at once", () =>
      Effect.gen(function*() {
        const fake = yield* FakeListerWatcher.make()
        yield* fake.failNextList(serverError(), 3)
        const t = timed(fake)
        const { store } = yield* recordingStore()
        const backoff = Schedule.max([Schedule.spaced("5 seconds"), Schedule.recurs(1)])
        yield* Reflector.make(t.lw, store, { watchList: false, backoff })
        yield* advance("30 seconds")
        const lists = t.times("List")
        assert.isAtLeast(lists.length, 4)
        for (let i = 1; i < lists.length; i++) assert.isAtLeast(lists[i] - lists[i - 1], 5000, `list ${i}`)
      }))

    it.effect("a custom backoff still honours Retry-After", () =>
      Effect.gen(function*() {
        const fake = yield* FakeListerWatcher.make()
        yield* fake.failNextList(tooManyRequests(25))
        const t = timed(fake)
        const { store } = yield* recordingStore()
        yield* Reflector.make(t.lw, store, { watchList: false, backoff: Schedule.spaced("1 second") })
        yield* advance("24 seconds")
        assert.strictEqual(t.times("List").length, 1)
        yield* advance("2 seconds")
        assert.strictEqual(t.times("List").length, 2)
      }))

    it.effect("the watch-list timeout measures inactivity: a slow initial stream that keeps delivering is not cut", () =>
      Effect.gen(function*() {
        // 10 objects, one every 4 s: 40 s in total, longer than the 10 s timeout, never 10 s idle.
        const initial = Stream.fromIterable(podsNamed("p", 10)).pipe(
          Stream.map((obj) => added({ ...obj, metadata: { ...obj.metadata, resourceVersion: "5" } })),
          Stream.tap(() => Effect.sleep("4 seconds"))
        )
        const { lw, requests } = scripted({
          watches: [Stream.concat(initial, Stream.concat(Stream.make(bookmarkEvent("5", "true")), Stream.never))]
        })
        const { names, store } = yield* recordingStore()
        const errors = errorLog()
        yield* Reflector.make(lw, store, { watchListTimeout: "10 seconds", onError: errors.onError })
        yield* advance("45 seconds")
        assert.deepStrictEqual(errors.summary(), [])
        assert.deepStrictEqual(kinds(requests), ["WatchList"])
        assert.strictEqual((yield* names).length, 10)
      }))

    it.effect("a watch-list stream that stalls before its end bookmark times out after watchListTimeout of silence", () =>
      Effect.gen(function*() {
        const { lw, requests } = scripted({
          watches: [Stream.concat(Stream.make(added(pod("a", { rv: "2" }))), Stream.never)]
        })
        const { store } = yield* recordingStore()
        const errors = errorLog()
        yield* Reflector.make(lw, store, { watchListTimeout: "10 seconds", onError: errors.onError })
        yield* advance("9 seconds")
        assert.deepStrictEqual(errors.summary(), [])
        yield* advance("2 seconds")
        assert.deepStrictEqual(errors.summary(), ["watch-list:ProtocolError(WatchListTimeout)"])
        assert.deepStrictEqual(kinds(requests), ["WatchList", "List", "Watch"])
      }))

    it.effect("reuse is applied page by page as a paged list arrives", () =>
      Effect.gen(function*() {
        const fake = yield* FakeListerWatcher.make()
        for (const obj of podsNamed("p", 10)) yield* fake.add(obj)
        const pagesSeen: Array<number> = []
        let listed = 0
        const lw: LW = {
          ...fake,
          list: (options) => Effect.tap(fake.list(options), () => Effect.sync(() => pagesSeen.push(listed)))
        }
        const { store } = yield* recordingStore()
        yield* Reflector.make(lw, store, {
          watchList: false,
          pageSize: 4,
          reuse: (obj) => {
            listed++
            return obj
          }
        })
        yield* settle
        // Before each page is fetched, every object of the previous pages has already been through `reuse`.
        assert.deepStrictEqual(pagesSeen, [0, 4, 8])
        assert.strictEqual(listed, 10)
      }))
  })
})

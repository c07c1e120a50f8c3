/**
 * Reflector: the state machine, what a state carries from one phase to the next.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Schedule from "effect/Schedule"
import * as FakeListerWatcher from "../../../src/FakeListerWatcher.js"
import * as Reflector from "../../../src/Reflector.js"
import { advance, gone, pod, serverError, settle, tooManyRequests } from "../../fixtures/index.js"
import { errorLog, inRange, kinds, listsOf, recordingStore, timed } from "./fixtures.js"

describe("Reflector", () => {
  describe("state machine", () => {
    it.effect("the resync timer runs through a 429's backoff between watches, stops while a relist waits, restarts after the next sync", () =>
      Effect.gen(function*() {
        const fake = yield* FakeListerWatcher.make({ initial: [pod("a")] })
        const { log, lw } = timed(fake)
        const { calls, store } = yield* recordingStore()
        yield* Reflector.make(lw, store, {
          watchList: false,
          resyncPeriod: "1 second",
          backoff: Schedule.spaced("3 seconds")
        })
        yield* settle
        yield* advance("500 millis")
        // a 429 on the watch: re-watch after its Retry-After (5 s), in the same cycle
        yield* fake.failWatches(tooManyRequests(5))
        yield* advance("5 seconds")
        assert.deepStrictEqual(kinds(log.map((t) => t.request)), ["List", "Watch", "Watch"])
        assert.strictEqual(log[2].at, 5500)
        assert.strictEqual(calls.resync, 5)
        // a 500 on the watch ends the cycle: no resync while the relist waits for the backoff
        yield* advance("700 millis")
        assert.strictEqual(calls.resync, 6)
        yield* fake.failWatches(serverError())
        yield* advance("2999 millis")
        assert.strictEqual(calls.resync, 6)
        yield* advance("1 millis")
        assert.deepStrictEqual(kinds(log.map((t) => t.request)), ["List", "Watch", "Watch", "List", "Watch"])
        assert.strictEqual(log[3].at, 9200)
        // the next cycle synced at 9.2 s: its first resync a period later
        yield* advance("999 millis")
        assert.strictEqual(calls.resync, 6)
        yield* advance("1 millis")
        assert.strictEqual(calls.resync, 7)
      }))

    it.effect("a resync failing after a watch-list sync closes the stream and ends the cycle; the next one syncs again", () =>
      Effect.gen(function*() {
        const fake = yield* FakeListerWatcher.make({ initial: [pod("a")] })
        const { log, lw } = timed(fake)
        const { calls, store } = yield* recordingStore({ refuseResync: (call) => call === 1 })
        const errors = errorLog()
        yield* Reflector.make(lw, store, { resyncPeriod: "1 second", onError: errors.onError })
        yield* settle
        assert.strictEqual(yield* fake.openWatches, 1)
        yield* advance("1 second")
        assert.deepStrictEqual(errors.summary(), ["resync:StoreError(resync)"])
        assert.strictEqual(yield* fake.openWatches, 0)
        yield* advance("1600 millis")
        assert.deepStrictEqual(kinds(log.map((t) => t.request)), ["WatchList", "WatchList"])
        inRange(log[1].at, 1800, 2600, "the second watch-list")
        assert.deepStrictEqual(calls.replace.map((r) => r.resourceVersion), ["1", "1"])
        yield* advance("1 second")
        assert.strictEqual(calls.resync, 2)
      }))

    it.effect("a Gone on the LIST a watch-list fell back to lists again at once, consistently (no second watch-list)", () =>
      Effect.gen(function*() {
        const fake = yield* FakeListerWatcher.make({ initial: [pod("a")] })
        const { log, lw } = timed(fake)
        const { names, store } = yield* recordingStore()
        const errors = errorLog()
        yield* Reflector.make(lw, store, { onError: errors.onError })
        yield* settle
        yield* fake.failWatches(serverError())
        yield* fake.failNextWatch(serverError())
        yield* fake.failNextList(gone())
        yield* advance("1600 millis")
        assert.deepStrictEqual(kinds(log.map((t) => t.request)), ["WatchList", "WatchList", "List", "List", "Watch"])
        assert.deepStrictEqual(log.map((t) => t.request.options.resourceVersion), ["", "1", "1", "", "1"])
        assert.strictEqual(log[3].at, log[2].at)
        assert.deepStrictEqual(errors.summary(), [
          "watch:StatusError(ServerError)",
          "watch-list:StatusError(ServerError)",
          "list:StatusError(Gone)"
        ])
        assert.deepStrictEqual(yield* names, ["a"])
      }))

    it.effect("after a Gone, reads stay consistent through a failed list until one succeeds", () =>
      Effect.gen(function*() {
        const fake = yield* FakeListerWatcher.make({ initial: [pod("a")] })
        const { log, lw } = timed(fake)
        const { store } = yield* recordingStore()
        const errors = errorLog()
        yield* Reflector.make(lw, store, { watchList: false, onError: errors.onError })
        yield* settle
        yield* fake.add(pod("b"))
        yield* settle
        yield* fake.failNextList(serverError())
        yield* fake.failWatches(gone())
        yield* advance("1600 millis")
        assert.deepStrictEqual(kinds(log.map((t) => t.request)), ["List", "Watch", "List", "List", "Watch"])
        assert.deepStrictEqual(listsOf(log.map((t) => t.request)).map((o) => o.resourceVersion), ["", "", ""])
        inRange(log[3].at - log[2].at, 800, 1600, "the list after the failed one")
        assert.deepStrictEqual(errors.summary(), ["watch:StatusError(Gone)", "list:StatusError(ServerError)"])
        // once synced, a relist reads at the last version again
        yield* fake.failWatches(serverError())
        yield* advance("3200 millis")
        assert.deepStrictEqual(listsOf(log.map((t) => t.request)).map((o) => o.resourceVersion), ["", "", "", "2"])
      }))

    it.effect("a Gone remembered through a failed list: the next Gone without a watch event still backs off", () =>
      Effect.gen(function*() {
        const fake = yield* FakeListerWatcher.make({ initial: [pod("a")] })
        const { log, lw } = timed(fake)
        const { store } = yield* recordingStore()
        yield* Reflector.make(lw, store, { watchList: false })
        yield* settle
        yield* fake.failNextList(serverError())
        yield* fake.failWatches(gone())
        yield* advance("1600 millis")
        assert.deepStrictEqual(kinds(log.map((t) => t.request)), ["List", "Watch", "List", "List", "Watch"])
        // the new watch delivered nothing: this Gone waits for the backoff
        yield* fake.failWatches(gone())
        yield* settle
        assert.strictEqual(log.length, 5)
        yield* advance("3200 millis")
        assert.deepStrictEqual(kinds(log.map((t) => t.request)).slice(5), ["List", "Watch"])
      }))
  })
})

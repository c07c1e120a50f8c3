/**
 * Reflector: resync and the watch timeout (TestWatchTimeout).
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as FakeListerWatcher from "../../../src/FakeListerWatcher.js"
import * as Reflector from "../../../src/Reflector.js"
import { advance, pod, settle } from "../../fixtures/index.js"
import type { Options } from "./fixtures.js"
import { errorLog, recordingStore, watchesOf } from "./fixtures.js"

describe("Reflector", () => {
  describe("resync", () => {
    it.effect("resyncs every resyncPeriod: one call after 1 s, three after 3 s", () =>
      Effect.gen(function*() {
        const fake = yield* FakeListerWatcher.make({ initial: [pod("a")] })
        const { calls, store } = yield* recordingStore()
        yield* Reflector.make(fake, store, { resyncPeriod: "1 second" })
        yield* settle
        assert.strictEqual(calls.resync, 0)
        yield* advance("999 millis")
        assert.strictEqual(calls.resync, 0)
        yield* advance("1 millis")
        assert.strictEqual(calls.resync, 1)
        yield* advance("2 seconds")
        assert.strictEqual(calls.resync, 3)
      }))

    it.effect("shouldResync answering false: no resync, and it is asked every period", () =>
      Effect.gen(function*() {
        const fake = yield* FakeListerWatcher.make({ initial: [pod("a")] })
        const { calls, store } = yield* recordingStore()
        let asked = 0
        let answer = false
        yield* Reflector.make(fake, store, {
          resyncPeriod: "1 second",
          shouldResync: Effect.sync(() => {
            asked++
            return answer
          })
        })
        yield* advance("5 seconds")
        assert.strictEqual(calls.resync, 0)
        assert.strictEqual(asked, 5)
        answer = true
        yield* advance("2 seconds")
        assert.strictEqual(calls.resync, 2)
      }))

    it.effect("no resyncPeriod: no resync", () =>
      Effect.gen(function*() {
        const fake = yield* FakeListerWatcher.make({ initial: [pod("a")] })
        const { calls, store } = yield* recordingStore()
        yield* Reflector.make(fake, store, {})
        yield* advance("10 minutes")
        assert.strictEqual(calls.resync, 0)
      }))
  })

  describe("watch timeoutSeconds (TestWatchTimeout)", () => {
    /** Forces `n` re-watches (each watch open for a second, then closed by the server). */
    const timeouts = (options: Options, n = 20) =>
      Effect.gen(function*() {
        const fake = yield* FakeListerWatcher.make({ initial: [pod("a")] })
        const { store } = yield* recordingStore()
        const errors = errorLog()
        yield* Reflector.make(fake, store, { ...options, onError: errors.onError })
        yield* settle
        for (let i = 0; i < n; i++) {
          yield* advance("1 second")
          yield* fake.closeWatches
          yield* settle
        }
        const requests = yield* fake.requests
        assert.strictEqual(requests.length, n + (options.watchList === false ? 2 : 1))
        assert.deepStrictEqual(errors.summary(), [])
        return watchesOf(requests).map((w) => w.timeoutSeconds!)
      })

    const check = (values: ReadonlyArray<number>, min: number, max: number) => {
      for (const value of values) {
        assert.isTrue(Number.isInteger(value) && value >= min && value <= max, `${value} not in [${min}, ${max}]`)
      }
      assert.isTrue(new Set(values).size > 1, "timeoutSeconds is drawn at random")
    }

    it.effect("TestWatchTimeout: default timeoutSeconds in [300, 600]", () =>
      Effect.map(timeouts({ watchList: false }), (values) => check(values, 300, 600)))

    it.effect("TestWatchTimeout: watch-list requests too", () =>
      Effect.map(timeouts({}), (values) => check(values, 300, 600)))

    it.effect("TestWatchTimeout: minWatchTimeout 30 minutes gives [1800, 3600]", () =>
      Effect.map(timeouts({ watchList: false, minWatchTimeout: "30 minutes" }), (values) => check(values, 1800, 3600)))

    it.effect("TestWatchTimeout: minWatchTimeout 1 second still gives [300, 600]", () =>
      Effect.map(timeouts({ watchList: false, minWatchTimeout: "1 second" }), (values) => check(values, 300, 600)))
  })
})

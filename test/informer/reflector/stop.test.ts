/**
 * Reflector: stop.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as FakeListerWatcher from "../../../src/FakeListerWatcher.js"
import { advance, pod, serverError, settle } from "../../fixtures/index.js"
import type { LW } from "./fixtures.js"
import { closeWithoutTime, errorLog, recordingStore, startInScope } from "./fixtures.js"

describe("Reflector", () => {
  describe("stop", () => {
    it.effect("closing the scope during a LIST that never returns interrupts it, promptly", () =>
      Effect.gen(function*() {
        const fake = yield* FakeListerWatcher.make({ initial: [pod("a")] })
        let listCalls = 0
        let interrupted = false
        const lw: LW = {
          ...fake,
          list: () =>
            Effect.suspend(() => {
              listCalls++
              return Effect.never
            }).pipe(Effect.onInterrupt(() =>
              Effect.sync(() => {
                interrupted = true
              })
            ))
        }
        const { store } = yield* recordingStore()
        const { scope } = yield* startInScope(lw, store, { watchList: false })
        yield* settle
        assert.strictEqual(listCalls, 1)
        yield* closeWithoutTime(scope)
        assert.isTrue(interrupted)
        yield* advance("10 minutes")
        assert.strictEqual(listCalls, 1)
        assert.deepStrictEqual(yield* fake.requests, [])
      }))

    it.effect("closing the scope during a backoff wait returns promptly; no request afterwards", () =>
      Effect.gen(function*() {
        const fake = yield* FakeListerWatcher.make({ initial: [pod("a")] })
        yield* fake.failNextList(serverError(), 100)
        const { store } = yield* recordingStore()
        const errors = errorLog()
        const { scope } = yield* startInScope(fake, store, { watchList: false, onError: errors.onError })
        yield* settle
        yield* advance("10 seconds")
        const before = (yield* fake.requests).length
        assert.isTrue(before >= 3)
        yield* closeWithoutTime(scope)
        yield* advance("10 minutes")
        assert.strictEqual((yield* fake.requests).length, before)
        assert.strictEqual(errors.reported.length, before)
      }))

    it.effect("closing the scope mid-stream closes the watch; no request afterwards", () =>
      Effect.gen(function*() {
        const fake = yield* FakeListerWatcher.make({ initial: [pod("a")] })
        const { names, store } = yield* recordingStore()
        const { scope } = yield* startInScope(fake, store, { watchList: false })
        yield* settle
        assert.strictEqual(yield* fake.openWatches, 1)
        yield* closeWithoutTime(scope)
        assert.strictEqual(yield* fake.openWatches, 0)
        yield* fake.add(pod("b"))
        yield* advance("10 minutes")
        assert.strictEqual((yield* fake.requests).length, 2)
        assert.deepStrictEqual(yield* names, ["a"])
      }))

    it.effect("closing the scope while a watch-list waits for its bookmark closes the stream", () =>
      Effect.gen(function*() {
        const fake = yield* FakeListerWatcher.make({ initial: [pod("a")], watchList: "ignore" })
        const { calls, store } = yield* recordingStore()
        const { scope } = yield* startInScope(fake, store, {})
        yield* advance("1 second")
        assert.strictEqual(yield* fake.openWatches, 1)
        yield* closeWithoutTime(scope)
        assert.strictEqual(yield* fake.openWatches, 0)
        yield* advance("10 minutes")
        assert.strictEqual((yield* fake.requests).length, 1)
        assert.strictEqual(calls.replace.length, 0)
      }))

    it.effect("closing the scope while the resync timer is pending stops it", () =>
      Effect.gen(function*() {
        const fake = yield* FakeListerWatcher.make({ initial: [pod("a")] })
        const { calls, store } = yield* recordingStore()
        const { scope } = yield* startInScope(fake, store, { resyncPeriod: "1 second" })
        yield* advance("1500 millis")
        assert.strictEqual(calls.resync, 1)
        yield* closeWithoutTime(scope)
        yield* advance("10 seconds")
        assert.strictEqual(calls.resync, 1)
      }))
  })
})

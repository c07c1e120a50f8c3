/**
 * Reflector: bookmarks.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as FakeListerWatcher from "../../../src/FakeListerWatcher.js"
import * as Reflector from "../../../src/Reflector.js"
import { advance, pod, settle } from "../../fixtures/index.js"
import { errorLog, recordingStore, watchesOf } from "./fixtures.js"

describe("Reflector", () => {
  describe("bookmarks", () => {
    it.effect("a bookmark advances lastSyncResourceVersion, reaches store.bookmark, and the next watch starts there", () =>
      Effect.gen(function*() {
        const fake = yield* FakeListerWatcher.make({ initial: [pod("a")] })
        const { calls, names, store } = yield* recordingStore()
        const reflector = yield* Reflector.make(fake, store, { watchList: false })
        yield* settle
        assert.strictEqual(yield* reflector.lastSyncResourceVersion, "1")
        yield* fake.addDropWatch(pod("b"))
        yield* fake.addDropWatch(pod("c"))
        yield* fake.bookmark
        yield* settle
        assert.strictEqual(yield* reflector.lastSyncResourceVersion, "3")
        assert.deepStrictEqual(calls.bookmark, ["3"])
        assert.deepStrictEqual(yield* names, ["a"])
        yield* advance("1 second")
        yield* fake.closeWatches
        yield* settle
        const watches = watchesOf(yield* fake.requests)
        assert.strictEqual(watches[1].resourceVersion, "3")
        assert.isTrue(watches.every((w) => w.allowWatchBookmarks === true))
      }))

    it.effect("a store without bookmark: the version still advances", () =>
      Effect.gen(function*() {
        const fake = yield* FakeListerWatcher.make({ initial: [pod("a")] })
        const { store } = yield* recordingStore({ withBookmark: false })
        const errors = errorLog()
        const reflector = yield* Reflector.make(fake, store, { watchList: false, onError: errors.onError })
        yield* settle
        yield* fake.addDropWatch(pod("b"))
        yield* fake.bookmark
        yield* settle
        assert.strictEqual(yield* reflector.lastSyncResourceVersion, "2")
        assert.deepStrictEqual(errors.summary(), [])
      }))
  })
})

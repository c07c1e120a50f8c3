/**
 * Reflector: Gone and too-large resourceVersions, list failures.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as ApiError from "../../../src/ApiError.js"
import * as FakeListerWatcher from "../../../src/FakeListerWatcher.js"
import type { KubeObject } from "../../../src/KubeObject.js"
import * as Reflector from "../../../src/Reflector.js"
import * as Wire from "../../../src/Wire.js"
import { advance, gone, pod, podsNamed, serverError, settle, statusError } from "../../fixtures/index.js"
import { errorLog, inRange, kinds, listsOf, now, recordingStore, timed } from "./fixtures.js"

describe("Reflector", () => {
  describe("Gone and too-large resourceVersions", () => {
    it.effect("Gone on the watch relists at once with a consistent read (resourceVersion \"\")", () =>
      Effect.gen(function*() {
        const fake = yield* FakeListerWatcher.make({ initial: [pod("a"), pod("b")] })
        const { names, store } = yield* recordingStore()
        const errors = errorLog()
        const reflector = yield* Reflector.make(fake, store, { watchList: false, onError: errors.onError })
        yield* settle
        yield* fake.add(pod("c"))
        yield* settle
        assert.strictEqual(yield* reflector.lastSyncResourceVersion, "3")
        yield* fake.addDropWatch(pod("lost"))
        yield* fake.failWatches(gone())
        yield* settle
        assert.strictEqual(yield* now, 0)
        const requests = yield* fake.requests
        assert.deepStrictEqual(requests.map((r) => r.options.resourceVersion), ["", "2", "", "4"])
        assert.deepStrictEqual(listsOf(requests), [{ resourceVersion: "", limit: 500 }, {
          resourceVersion: "",
          limit: 500
        }])
        assert.deepStrictEqual(errors.summary(), ["watch:StatusError(Gone)"])
        assert.strictEqual(errors.reported[0].context.resourceVersion, "3")
        assert.deepStrictEqual(yield* names, ["a", "b", "c", "lost"])
      }))

    it.effect("Gone twice in a row without a watch event backs off before the second relist; an event resets that", () =>
      Effect.gen(function*() {
        const fake = yield* FakeListerWatcher.make({ initial: [pod("a")] })
        const { log, lw } = timed(fake)
        const { store } = yield* recordingStore()
        const errors = errorLog()
        yield* Reflector.make(lw, store, { watchList: false, onError: errors.onError })
        yield* settle
        yield* fake.failWatches(gone())
        yield* settle
        assert.deepStrictEqual(kinds(log.map((t) => t.request)), ["List", "Watch", "List", "Watch"])
        // The new watch delivered nothing: the second Gone waits for the backoff.
        yield* fake.failWatches(gone())
        yield* settle
        assert.strictEqual(log.length, 4)
        yield* advance("1600 millis")
        assert.deepStrictEqual(kinds(log.map((t) => t.request)), ["List", "Watch", "List", "Watch", "List", "Watch"])
        inRange(log[4].at, 800, 1600, "relist after the second Gone")
        // An event is progress: the next Gone relists at once again.
        yield* fake.add(pod("b"))
        yield* settle
        yield* fake.failWatches(gone())
        yield* settle
        assert.strictEqual(log.length, 8)
        assert.strictEqual(log[6].at, yield* now)
        assert.deepStrictEqual(errors.summary(), [
          "watch:StatusError(Gone)",
          "watch:StatusError(Gone)",
          "watch:StatusError(Gone)"
        ])
      }))

    it.effect("a watch that stayed open for a second is progress: Gones a second apart each relist at once", () =>
      Effect.gen(function*() {
        const fake = yield* FakeListerWatcher.make({ initial: [pod("a")] })
        const { log, lw } = timed(fake)
        const { store } = yield* recordingStore()
        const errors = errorLog()
        yield* Reflector.make(lw, store, { watchList: false, onError: errors.onError })
        yield* settle
        // A quiet watch (no event) open for a second, then Gone (the server compacted past it), three times:
        // each watch worked, so each Gone relists at once (as a server forcing relists in a row does).
        for (let round = 1; round <= 3; round++) {
          yield* advance("1 second")
          yield* fake.failWatches(gone())
          yield* settle
          assert.strictEqual(log.length, 2 + 2 * round)
          assert.deepStrictEqual(kinds(log.slice(-2).map((t) => t.request)), ["List", "Watch"])
          assert.strictEqual(log[log.length - 2].at, yield* now)
        }
        // A Gone right after the relist (the new watch neither delivered nor lasted) still backs off.
        yield* fake.failWatches(gone())
        yield* settle
        assert.strictEqual(log.length, 8)
        yield* advance("1600 millis")
        assert.strictEqual(log.length, 10)
        inRange(log[8].at - 3000, 800, 1600, "relist after a Gone without progress")
        assert.strictEqual(errors.summary().length, 4)
      }))

    it.effect("TestReflectorExpiredExactResourceVersion: a relist at \"10\" getting Gone retries at once with \"\"", () =>
      Effect.gen(function*() {
        const fake = yield* FakeListerWatcher.make({ initial: podsNamed("p", 10) })
        const { log, lw } = timed(fake)
        const { names, store } = yield* recordingStore()
        const errors = errorLog()
        const reflector = yield* Reflector.make(lw, store, {
          watchList: false,
          initialList: "any",
          onError: errors.onError
        })
        yield* settle
        yield* fake.addDropWatch(pod("extra"))
        yield* fake.failNextList(gone())
        yield* fake.failWatches(serverError())
        yield* advance("2 seconds")
        const lists = log.filter((t) => t.request._tag === "List")
        assert.deepStrictEqual(lists.map((t) => t.request.options.resourceVersion), ["0", "10", ""])
        assert.strictEqual(lists[2].at, lists[1].at, "the consistent retry does not wait")
        assert.deepStrictEqual(errors.summary(), ["watch:StatusError(ServerError)", "list:StatusError(Gone)"])
        assert.strictEqual((yield* names).length, 11)
        assert.strictEqual(yield* reflector.lastSyncResourceVersion, "11")
      }))

    it.effect("TestReflectorFullListIfTooLarge: each too-large format retries at once with \"\"", () =>
      Effect.gen(function*() {
        const formats = [
          Wire.failureStatus(504, "Timeout", "The server was unable to return a response in the time allotted", {
            causes: [{ reason: "ResourceVersionTooLarge", message: "Too large resource version" }]
          }),
          Wire.failureStatus(
            504,
            "Timeout",
            "The server was unable to return a response in the time allotted, but may still be processing the request (Too large resource version)"
          ),
          Wire.failureStatus(504, "Timeout", "too large resource version: 40, current: 30")
        ].map((status) => ApiError.fromStatus(status))
        for (const error of formats) {
          assert.strictEqual(error._tag, "StatusError")
          assert.strictEqual(error.reason, "ResourceVersionTooLarge")
        }

        const fake = yield* FakeListerWatcher.make({ initial: podsNamed("p", 10) })
        const { store } = yield* recordingStore()
        const errors = errorLog()
        yield* Reflector.make(fake, store, { watchList: false, initialList: "any", onError: errors.onError })
        yield* settle
        let batch = 0
        for (const error of formats) {
          for (const obj of podsNamed(`b${batch++}-`, 10)) yield* fake.add(obj)
          yield* settle
          yield* fake.failNextList(error)
          yield* fake.failWatches(serverError())
          yield* advance("10 seconds")
        }
        const lists = listsOf(yield* fake.requests)
        assert.deepStrictEqual(lists.map((o) => o.resourceVersion), ["0", "20", "", "30", "", "40", ""])
        assert.deepStrictEqual(errors.summary(), [
          "watch:StatusError(ServerError)",
          "list:StatusError(ResourceVersionTooLarge)",
          "watch:StatusError(ServerError)",
          "list:StatusError(ResourceVersionTooLarge)",
          "watch:StatusError(ServerError)",
          "list:StatusError(ResourceVersionTooLarge)"
        ])
      }))

    it.effect("a too-large resourceVersion on the watch relists consistently", () =>
      Effect.gen(function*() {
        const fake = yield* FakeListerWatcher.make({ initial: [pod("a")] })
        const { store } = yield* recordingStore()
        const errors = errorLog()
        yield* Reflector.make(fake, store, { watchList: false, onError: errors.onError })
        yield* settle
        yield* advance("1 second")
        yield* fake.failNextWatch(statusError(504, "Timeout", "Too large resource version"))
        yield* fake.closeWatches
        yield* settle
        assert.deepStrictEqual(kinds(yield* fake.requests), ["List", "Watch", "Watch", "List", "Watch"])
        assert.deepStrictEqual(listsOf(yield* fake.requests)[1], { resourceVersion: "", limit: 500 })
        assert.deepStrictEqual(errors.summary(), ["watch:StatusError(ResourceVersionTooLarge)"])
      }))
  })

  describe("list failures", () => {
    it.effect("a failed list is reported (phase list), leaves the store alone, and is retried after [0.8, 1.6) s", () =>
      Effect.gen(function*() {
        const fake = yield* FakeListerWatcher.make({ initial: [pod("a"), pod("b")] })
        yield* fake.failNextList(serverError())
        const { log, lw } = timed(fake)
        const { calls, names, store } = yield* recordingStore()
        const errors = errorLog()
        const reflector = yield* Reflector.make(lw, store, { watchList: false, onError: errors.onError })
        yield* settle
        assert.deepStrictEqual(errors.summary(), ["list:StatusError(ServerError)"])
        assert.deepStrictEqual(errors.reported[0].context, { phase: "list", resourceVersion: "", reflector: "fake" })
        assert.strictEqual(calls.replace.length, 0)
        assert.deepStrictEqual(yield* names, [])
        yield* advance("799 millis")
        assert.strictEqual(log.length, 1)
        yield* advance("801 millis")
        assert.deepStrictEqual(kinds(log.map((t) => t.request)), ["List", "List", "Watch"])
        inRange(log[1].at, 800, 1600, "second list")
        assert.deepStrictEqual(yield* names, ["a", "b"])
        assert.strictEqual(yield* reflector.lastSyncResourceVersion, "2")
        assert.deepStrictEqual(errors.summary(), ["list:StatusError(ServerError)"])
      }))

    it.effect("a failed store replace is a failed list: reported as StoreError, retried after the backoff", () =>
      Effect.gen(function*() {
        const fake = yield* FakeListerWatcher.make({ initial: [pod("a")] })
        const inner = yield* recordingStore()
        let refuse = true
        const store: Reflector.Store<KubeObject, unknown> = {
          ...inner.store,
          replace: (objects, rv) => refuse ? Effect.fail("nope") : inner.store.replace(objects, rv)
        }
        const errors = errorLog()
        yield* Reflector.make(fake, store, { watchList: false, onError: errors.onError })
        yield* settle
        assert.deepStrictEqual(errors.summary(), ["list:StoreError(replace)"])
        assert.strictEqual((errors.reported[0].error as Reflector.StoreError).operation, "replace")
        refuse = false
        yield* advance("2 seconds")
        assert.deepStrictEqual(yield* inner.names, ["a"])
      }))
  })
})

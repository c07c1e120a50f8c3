/**
 * Reflector: a resource that disappears. A LIST answered 404 NotFound (its CRD was deleted) stops the loop with
 * `ResourceGone`, logged once, instead of backing off for ever; a WATCH's 404 relists and that LIST decides;
 * `stopOnResourceGone: false` keeps client-go's behaviour.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Fiber } from "effect"
import * as FakeListerWatcher from "../../../src/FakeListerWatcher.js"
import * as Reflector from "../../../src/Reflector.js"
import { advance, captureLogs, eventually, pod, settle, statusError } from "../../fixtures/index.js"
import { errorLog, kinds, recordingStore } from "./fixtures.js"

const notFound = () => statusError(404, "NotFound", "the server could not find the requested resource")

/** The warning the loop logs when it stops. */
const stopLines = (lines: ReadonlyArray<string>) => lines.filter((line) => line.includes("stopped: the API server"))

describe("Reflector: the resource is gone", () => {
  it.effect("a LIST answered 404 stops the loop: awaitStop, status Stopped, one warning, no request after", () =>
    Effect.gen(function*() {
      const logs = captureLogs()
      const fake = yield* FakeListerWatcher.make()
      yield* fake.failNextList(notFound(), 1000)
      const { store } = yield* recordingStore()
      const errors = errorLog()
      const reflector = yield* Reflector.make(fake, store, {
        name: "widgets",
        watchList: false,
        onError: errors.onError
      })
        .pipe(logs.capture)
      assert.strictEqual(yield* reflector.awaitStop, "ResourceGone")
      assert.deepStrictEqual(yield* reflector.status, { _tag: "Stopped", reason: "ResourceGone" })
      assert.deepStrictEqual(errors.summary(), ["list:StatusError(NotFound)"])
      const stops = stopLines(logs.lines)
      assert.lengthOf(stops, 1)
      assert.match(
        stops[0],
        /^WARN widgets: stopped: the API server no longer serves the resource \(a LIST answered 404/
      )
      assert.include(stops[0], "the server could not find the requested resource")
      assert.include(stops[0], "reflector=widgets")
      // nothing more: no backoff, no relist
      yield* fake.clearRequests
      yield* advance("10 minutes")
      assert.deepStrictEqual(yield* fake.requests, [])
      assert.lengthOf(stopLines(logs.lines), 1)
      assert.strictEqual(yield* reflector.awaitStop, "ResourceGone") // at once, again
    }))

  it.effect("with watch-list, the watch-list's 404 falls back to a LIST in the same cycle, whose 404 stops it", () =>
    Effect.gen(function*() {
      const fake = yield* FakeListerWatcher.make()
      yield* fake.failNextWatch(notFound(), 1000)
      yield* fake.failNextList(notFound(), 1000)
      const { store } = yield* recordingStore()
      const errors = errorLog()
      const reflector = yield* Reflector.make(fake, store, { onError: errors.onError })
      assert.strictEqual(yield* reflector.awaitStop, "ResourceGone")
      assert.deepStrictEqual(kinds(yield* fake.requests), ["WatchList", "List"])
      assert.deepStrictEqual(errors.summary(), ["watch-list:StatusError(NotFound)", "list:StatusError(NotFound)"])
    }))

  it.effect("the CRD deleted mid-watch: the WATCH's 404 backs off and relists; the LIST's 404 stops it, the store kept", () =>
    Effect.gen(function*() {
      const fake = yield* FakeListerWatcher.make({ initial: [pod("a"), pod("b")] })
      const { names, store } = yield* recordingStore()
      const errors = errorLog()
      const reflector = yield* Reflector.make(fake, store, { watchList: false, onError: errors.onError })
      yield* eventually(Effect.map(reflector.status, (status) => status._tag === "Watching"), "watching")
      yield* fake.failNextList(notFound(), 1000)
      yield* fake.failWatches(notFound())
      yield* settle
      assert.strictEqual((yield* reflector.status)._tag, "BackingOff")
      const stop = yield* Effect.forkChild(reflector.awaitStop)
      yield* advance("2 seconds") // the backoff's first wait is under 1.6 s
      assert.strictEqual(yield* Fiber.join(stop), "ResourceGone")
      assert.deepStrictEqual(errors.summary(), ["watch:StatusError(NotFound)", "list:StatusError(NotFound)"])
      // what the store held stays: the Reflector only stops writing to it
      assert.deepStrictEqual(yield* names, ["a", "b"])
    }))

  it.effect("a WATCH's 404 alone does not stop it: the relist succeeds and it watches again", () =>
    Effect.gen(function*() {
      const fake = yield* FakeListerWatcher.make({ initial: [pod("a")] })
      const { store } = yield* recordingStore()
      const reflector = yield* Reflector.make(fake, store, { watchList: false })
      yield* eventually(Effect.map(reflector.status, (status) => status._tag === "Watching"), "watching")
      yield* fake.failWatches(notFound())
      yield* advance("2 seconds")
      yield* eventually(Effect.map(reflector.status, (status) => status._tag === "Watching"), "watching again")
      assert.strictEqual(yield* fake.openWatches, 1)
      const stop = yield* Effect.forkChild(reflector.awaitStop)
      yield* settle
      assert.isUndefined(stop.pollUnsafe())
    }))

  it.effect("stopOnResourceGone: false keeps client-go's behaviour: back off and relist until the resource is back", () =>
    Effect.gen(function*() {
      const fake = yield* FakeListerWatcher.make({ initial: [pod("a")] })
      yield* fake.failNextList(notFound(), 4)
      const { names, store } = yield* recordingStore()
      const errors = errorLog()
      const reflector = yield* Reflector.make(fake, store, {
        watchList: false,
        stopOnResourceGone: false,
        onError: errors.onError
      })
      yield* settle
      assert.strictEqual((yield* reflector.status)._tag, "BackingOff")
      yield* advance("1 minute")
      yield* eventually(Effect.map(reflector.status, (status) => status._tag === "Watching"), "watching")
      assert.deepStrictEqual(errors.summary(), Array(4).fill("list:StatusError(NotFound)"))
      assert.deepStrictEqual(yield* names, ["a"])
    }))

  it.effect("Reflector.run returns the reason it stopped", () =>
    Effect.gen(function*() {
      const fake = yield* FakeListerWatcher.make()
      yield* fake.failNextList(notFound(), 1000)
      const { store } = yield* recordingStore()
      assert.strictEqual(yield* Reflector.run(fake, store, { watchList: false }), "ResourceGone")
    }))
})

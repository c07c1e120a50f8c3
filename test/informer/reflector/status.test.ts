/**
 * Reflector: `status`, where the loop is (syncing, watching, backing off until when, relisting), and the
 * SharedInformer's view of it.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as References from "effect/References"
import * as Schedule from "effect/Schedule"
import * as FakeListerWatcher from "../../../src/FakeListerWatcher.js"
import * as Indexer from "../../../src/Indexer.js"
import type * as ListerWatcher from "../../../src/ListerWatcher.js"
import * as Reflector from "../../../src/Reflector.js"
import * as SharedInformer from "../../../src/SharedInformer.js"
import type { Pod } from "../../fixtures/index.js"
import { advance, gone, pod, serverError, settle, tooManyRequests } from "../../fixtures/index.js"

const quiet = <A, E, R>(self: Effect.Effect<A, E, R>) => Effect.provideService(self, References.MinimumLogLevel, "None")

describe("Reflector", () => {
  describe("status", () => {
    it.effect("Syncing until the first list, then Watching; BackingOff until the wait ends; Relisting after a Gone", () =>
      Effect.gen(function*() {
        const fake = yield* FakeListerWatcher.make()
        yield* fake.add(pod("a"))
        yield* fake.failNextList(serverError(), 1)
        const store = yield* Indexer.make()
        const reflector = yield* Reflector.make(fake, store, {
          watchList: false,
          backoff: Schedule.spaced("5 seconds")
        })
        assert.deepStrictEqual(yield* reflector.status, { _tag: "Syncing" })
        yield* settle
        // the first list failed: a backoff of 5 s from now
        const failedAt = yield* Clock.currentTimeMillis
        assert.deepStrictEqual(yield* reflector.status, {
          _tag: "BackingOff",
          until: failedAt + 5000,
          error: "StatusError"
        })
        yield* advance("4 seconds")
        assert.strictEqual((yield* reflector.status)._tag, "BackingOff")
        yield* advance("1 second")
        assert.deepStrictEqual(yield* reflector.status, { _tag: "Watching" })
        assert.deepStrictEqual(yield* store.listKeys, ["ns/a"])

        // a 429 with Retry-After 7 s: the wait is the longer of the backoff's and the server's
        yield* fake.failWatches(tooManyRequests(7))
        yield* settle
        const throttledAt = yield* Clock.currentTimeMillis
        const throttled = yield* reflector.status
        assert.strictEqual(throttled._tag, "BackingOff")
        if (throttled._tag === "BackingOff") assert.strictEqual(throttled.until, throttledAt + 7000)
        yield* advance("7 seconds")
        assert.deepStrictEqual(yield* reflector.status, { _tag: "Watching" })

        // a Gone on the watch: a relist, after which it watches again
        yield* fake.failNextList(serverError(), 1)
        yield* fake.failWatches(gone())
        yield* settle
        const relisting = yield* reflector.status
        // the relist failed at once: backing off before the next relist
        assert.strictEqual(relisting._tag, "BackingOff")
        yield* advance("5 seconds")
        assert.deepStrictEqual(yield* reflector.status, { _tag: "Watching" })
      }).pipe(quiet))

    it.effect("Syncing during the first list, Relisting during a later one", () =>
      Effect.gen(function*() {
        const fake = yield* FakeListerWatcher.make()
        yield* fake.add(pod("a"))
        // every LIST takes 2 s
        const slow: ListerWatcher.ListerWatcher.Service<Pod> = {
          list: (options) => Effect.andThen(Effect.sleep("2 seconds"), fake.list(options)),
          watch: (options) => fake.watch(options)
        }
        const store = yield* Indexer.make()
        const reflector = yield* Reflector.make(slow, store, { watchList: false })
        yield* advance("1 second")
        assert.deepStrictEqual(yield* reflector.status, { _tag: "Syncing" })
        yield* advance("1 second")
        assert.deepStrictEqual(yield* reflector.status, { _tag: "Watching" })
        yield* fake.failWatches(gone())
        yield* advance("1 second")
        assert.deepStrictEqual(yield* reflector.status, { _tag: "Relisting" })
        yield* advance("1 second")
        assert.deepStrictEqual(yield* reflector.status, { _tag: "Watching" })
      }).pipe(quiet))

    it.effect("SharedInformer.status: None before start, the Reflector's after", () =>
      Effect.gen(function*() {
        const fake = yield* FakeListerWatcher.make()
        yield* fake.add(pod("a"))
        const informer = yield* SharedInformer.make(fake)
        assert.isTrue(Option.isNone(yield* informer.status))
        yield* informer.start
        yield* informer.synced
        yield* settle
        assert.deepStrictEqual(yield* informer.status, Option.some({ _tag: "Watching" as const }))
      }).pipe(quiet))
  })
})

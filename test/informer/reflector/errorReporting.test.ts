/**
 * Reflector: error reporting.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Logger from "effect/Logger"
import * as Metric from "effect/Metric"
import * as DeltaFifo from "../../../src/DeltaFifo.js"
import * as FakeListerWatcher from "../../../src/FakeListerWatcher.js"
import type { KubeObject } from "../../../src/KubeObject.js"
import * as Metrics from "../../../src/Metrics.js"
import * as Reflector from "../../../src/Reflector.js"
import { advance, gone, pod, serverError, settle } from "../../fixtures/index.js"
import { errorLog, kinds, listsOf, nameOf, recordingStore } from "./fixtures.js"

describe("Reflector", () => {
  describe("error reporting", () => {
    it.effect("every error reaches onError exactly once with its phase, and the loop keeps running", () =>
      Effect.gen(function*() {
        const fake = yield* FakeListerWatcher.make({ initial: [pod("a")], watchList: "reject" })
        let resyncing = false
        const { calls, names, store } = yield* recordingStore({
          refuseAdd: (obj) => nameOf(obj) === "poison",
          refuseResync: () => true
        })
        const errors = errorLog()
        const reflector = yield* Reflector.make(fake, store, {
          onError: errors.onError,
          resyncPeriod: "1 minute",
          shouldResync: Effect.sync(() => resyncing)
        })
        yield* settle
        assert.deepStrictEqual(errors.summary(), ["watch-list:StatusError(Invalid)"])
        // watch, then list
        yield* fake.failNextList(serverError(503, "ServiceUnavailable"))
        yield* fake.failWatches(serverError())
        yield* advance("5 seconds")
        assert.deepStrictEqual(errors.summary(), [
          "watch-list:StatusError(Invalid)",
          "watch:StatusError(ServerError)",
          "list:StatusError(ServerError)"
        ])
        assert.deepStrictEqual(yield* names, ["a"])
        // event
        yield* fake.add(pod("poison"))
        yield* fake.add(pod("b"))
        yield* settle
        assert.deepStrictEqual(errors.summary().slice(3), ["event:StoreError(add)"])
        assert.strictEqual((errors.reported[3].error as Reflector.StoreError).operation, "add")
        assert.deepStrictEqual(yield* names, ["a", "b"])
        // resync
        resyncing = true
        yield* advance("1 minute")
        assert.deepStrictEqual(errors.summary().slice(4), ["resync:StoreError(resync)"])
        assert.strictEqual(calls.resync, 1)
        resyncing = false
        yield* advance("10 seconds")
        // The relist brought the poison object in through replace.
        assert.deepStrictEqual(yield* names, ["a", "b", "poison"])
        yield* fake.add(pod("final"))
        yield* settle
        assert.deepStrictEqual(yield* names, ["a", "b", "final", "poison"])
        assert.deepStrictEqual(errors.summary(), [
          "watch-list:StatusError(Invalid)",
          "watch:StatusError(ServerError)",
          "list:StatusError(ServerError)",
          "event:StoreError(add)",
          "resync:StoreError(resync)",
          // the relist after the resync failure came more than a minute after the 422: watch-list is asked again
          "watch-list:StatusError(Invalid)"
        ])
        assert.strictEqual(yield* reflector.lastSyncResourceVersion, yield* fake.resourceVersion)
      }))

    it.effect("every error is logged once (Gone at info, others as warnings) and counted by phase, error and reason", () => {
      const lines: Array<string> = []
      const logger = Logger.make(({ logLevel, message }) => {
        const text = Array.isArray(message) ? message.join(" ") : String(message)
        if (text.includes("failed") || text.includes("too old")) lines.push(`${logLevel.toUpperCase()} ${text}`)
      })
      const name = "pods-error-accounting"
      const errorsOf = (phase: string, error: string, reason: string) =>
        Metric.value(
          Metric.withAttributes(Metrics.errors, { informer: name, phase, error, reason })
        ).pipe(Effect.map((state) => state.count))
      return Effect.gen(function*() {
        const fake = yield* FakeListerWatcher.make({ initial: [pod("a")], watchList: "reject" })
        const store = yield* DeltaFifo.make<KubeObject>()
        yield* Reflector.make(fake, store, { name })
        yield* settle
        yield* fake.failWatches(serverError())
        yield* advance("5 seconds")
        yield* fake.failWatches(gone())
        yield* advance("5 seconds")
        assert.deepStrictEqual(lines, [
          `WARN ${name}: watch-list failed: StatusError (Invalid): sendInitialEvents is forbidden for watch`,
          `WARN ${name}: watch failed: StatusError (ServerError): server error 500`,
          `INFO ${name}: watch: too old resource version`
        ])
        assert.strictEqual(yield* errorsOf("watch-list", "StatusError", "Invalid"), 1)
        assert.strictEqual(yield* errorsOf("watch", "StatusError", "ServerError"), 1)
        assert.strictEqual(yield* errorsOf("watch", "StatusError", "Gone"), 1)
      }).pipe(Effect.provide(Logger.layer([logger])))
    })

    it.effect("a DeltaFifo transform throwing for one object: StoreError (phase event), the next events still apply", () =>
      Effect.gen(function*() {
        const fake = yield* FakeListerWatcher.make({ initial: [pod("a")] })
        const fifo = yield* DeltaFifo.make<KubeObject>({
          transform: (obj) => {
            if (nameOf(obj) === "bad") throw new Error("cannot transform")
            return obj
          }
        })
        const errors = errorLog()
        const reflector = yield* Reflector.make(fake, fifo, { onError: errors.onError })
        yield* settle
        yield* fake.add(pod("bad"))
        yield* fake.add(pod("good"))
        yield* fake.modify(pod("a"))
        yield* settle
        assert.deepStrictEqual(errors.summary(), ["event:StoreError(add)"])
        const error = errors.reported[0].error as Reflector.StoreError
        assert.strictEqual(error.operation, "add")
        assert.strictEqual((error.cause as DeltaFifo.TransformError)._tag, "TransformError")
        assert.strictEqual(errors.reported[0].context.resourceVersion, "2")
        assert.deepStrictEqual(yield* fifo.listKeys, ["ns/good", "ns/a"])
        assert.strictEqual(yield* reflector.lastSyncResourceVersion, "4")
      }))

    it.effect("Gone on the first page of a relist is reported once (phase list) before the consistent retry", () =>
      Effect.gen(function*() {
        const fake = yield* FakeListerWatcher.make({ initial: [pod("a")] })
        const { names, store } = yield* recordingStore()
        const errors = errorLog()
        yield* Reflector.make(fake, store, { watchList: false, onError: errors.onError })
        yield* settle
        yield* fake.failNextList(gone(), 2)
        yield* fake.failWatches(serverError())
        yield* advance("1600 millis")
        // "1" gets Gone (reported, retried at once with ""), "" gets Gone again (reported, backs off).
        assert.deepStrictEqual(listsOf(yield* fake.requests).map((o) => o.resourceVersion), ["", "1", ""])
        assert.deepStrictEqual(errors.summary(), [
          "watch:StatusError(ServerError)",
          "list:StatusError(Gone)",
          "list:StatusError(Gone)"
        ])
        yield* advance("3200 millis")
        assert.deepStrictEqual(listsOf(yield* fake.requests).map((o) => o.resourceVersion), ["", "1", "", ""])
        assert.strictEqual(errors.reported.length, 3)
        yield* fake.add(pod("b"))
        yield* settle
        assert.deepStrictEqual(yield* names, ["a", "b"])
      }))

    it.effect("store update, delete and bookmark failures: one StoreError each (phase event), the version still advances", () =>
      Effect.gen(function*() {
        const fake = yield* FakeListerWatcher.make({ initial: [pod("a"), pod("b")] })
        const inner = yield* recordingStore()
        const store: Reflector.Store<KubeObject, unknown> = {
          ...inner.store,
          update: () => Effect.fail("update refused"),
          delete: () => Effect.fail("delete refused"),
          bookmark: () => Effect.fail("bookmark refused")
        }
        const errors = errorLog()
        const reflector = yield* Reflector.make(fake, store, { watchList: false, onError: errors.onError })
        yield* settle
        yield* fake.modify(pod("a"))
        yield* fake.delete(pod("b"))
        yield* fake.bookmark
        yield* fake.add(pod("c"))
        yield* settle
        assert.deepStrictEqual(errors.summary(), [
          "event:StoreError(update)",
          "event:StoreError(delete)",
          "event:StoreError(bookmark)"
        ])
        assert.deepStrictEqual(errors.reported.map((r) => (r.error as Reflector.StoreError).operation), [
          "update",
          "delete",
          "bookmark"
        ])
        assert.deepStrictEqual(errors.reported.map((r) => r.context.resourceVersion), ["3", "4", "4"])
        assert.deepStrictEqual(yield* inner.names, ["a", "b", "c"])
        assert.strictEqual(yield* reflector.lastSyncResourceVersion, "5")
        assert.deepStrictEqual(kinds(yield* fake.requests), ["List", "Watch"])
      }))

    it.effect("the context carries the reflector's name and the resourceVersion at the time", () =>
      Effect.gen(function*() {
        const fake = yield* FakeListerWatcher.make({ initial: [pod("a"), pod("b")] })
        const { store } = yield* recordingStore()
        const errors = errorLog()
        yield* Reflector.make(fake, store, { name: "pods", watchList: false, onError: errors.onError })
        yield* settle
        yield* fake.failWatches(serverError())
        yield* settle
        assert.deepStrictEqual(errors.reported[0].context, { phase: "watch", resourceVersion: "2", reflector: "pods" })
      }))

    it.effect("a failing onError handler does not stop the loop", () =>
      Effect.gen(function*() {
        const fake = yield* FakeListerWatcher.make({ initial: [pod("a")] })
        const { names, store } = yield* recordingStore()
        let calls = 0
        yield* Reflector.make(fake, store, {
          watchList: false,
          onError: () =>
            Effect.suspend(() => {
              calls++
              return Effect.die("handler bug")
            })
        })
        yield* settle
        yield* fake.failWatches(serverError())
        yield* advance("2 seconds")
        yield* fake.add(pod("b"))
        yield* settle
        assert.strictEqual(calls, 1)
        assert.deepStrictEqual(yield* names, ["a", "b"])
      }))
  })
})

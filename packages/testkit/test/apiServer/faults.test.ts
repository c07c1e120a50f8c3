/**
 * ApiServer: faults.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as ApiServer from "../../src/ApiServer.js"
import { eventually } from "../fixtures.js"
import { assertStatus, call, events, names, openWatch, pod, pods, seedPods, sleep, start } from "./fixtures.js"

describe("ApiServer faults", () => {
  it("parses and formats faults", () => {
    const cases: ReadonlyArray<readonly [string, ApiServer.Fault]> = [
      ["drop-watches", { _tag: "DropWatches" }],
      ["close-watches", { _tag: "CloseWatches" }],
      ["watch-gone:count=2,mode=http", { _tag: "WatchGone", count: 2, mode: "http" }],
      ["continue-gone:count=2", { _tag: "ContinueGone", count: 2 }],
      ["error:count=3,status=503,on=list", { _tag: "ServerError", count: 3, status: 503, on: "list" }],
      ["throttle:retry-after=5", { _tag: "TooManyRequests", retryAfterSeconds: 5 }],
      ["stall:count=1", { _tag: "StallWatches", count: 1 }],
      ["delay:ms=250,count=2,on=watch", { _tag: "Delay", millis: 250, count: 2, on: "watch" }],
      ["malformed-line", { _tag: "MalformedLine" }],
      ["partial-line", { _tag: "PartialLine" }],
      ["no-metadata", { _tag: "MissingMetadata" }],
      ["restart:reject-ms=500", { _tag: "Restart", rejectMillis: 500 }]
    ]
    for (const [text, fault] of cases) {
      assert.deepStrictEqual(Result.getOrThrow(ApiServer.parseFault(text)), fault)
      assert.strictEqual(ApiServer.formatFault(fault), text)
    }
    assert.deepStrictEqual(Result.getOrThrow(ApiServer.parseFault(" Server-Error ")), { _tag: "ServerError" })
    for (const bad of ["nope", "error:count=x", "error:bogus=1", "watch-gone:mode=sometimes", "delay"]) {
      assert.isTrue(Result.isFailure(ApiServer.parseFault(bad)), bad)
    }
  })

  it.live("drops watch connections mid-stream and closes them cleanly", () =>
    Effect.gen(function*() {
      const server = yield* start()
      yield* seedPods(server, [pod("a")])
      const dropped = yield* openWatch(`${server.url}/api/v1/pods?watch=true`)
      yield* eventually(() => dropped.lines.length >= 1, "initial")
      yield* server.faults.inject({ _tag: "DropWatches" })
      yield* eventually(() => dropped.ended, "drop")
      assert.isDefined(dropped.error)
      const closed = yield* openWatch(`${server.url}/api/v1/pods?watch=true`)
      yield* eventually(() => closed.lines.length >= 1, "initial")
      yield* server.faults.inject({ _tag: "CloseWatches" })
      yield* eventually(() => closed.ended, "close")
      assert.isUndefined(closed.error)
      const stats = yield* server.stats
      assert.strictEqual(stats.faults.DropWatches, 1)
      assert.strictEqual(stats.faults.CloseWatches, 1)
      // the server forgets watches whose clients went away
      const abandoned = yield* Effect.scoped(
        Effect.gen(function*() {
          yield* openWatch(`${server.url}/api/v1/pods?watch=true`)
          return (yield* server.stats).watchesOpen
        })
      )
      assert.strictEqual(abandoned, 1)
      yield* eventually(() => Effect.runSync(server.stats).watchesOpen === 0, "watches to be released")
    }))

  it.live("answers the next watches with 410, as an ERROR event or an HTTP status", () =>
    Effect.gen(function*() {
      const server = yield* start()
      yield* server.faults.inject({ _tag: "WatchGone", count: 1 })
      const viaEvent = yield* openWatch(`${server.url}/api/v1/pods?watch=true`)
      yield* eventually(() => viaEvent.ended, "end")
      assert.strictEqual(viaEvent.status, 200)
      assert.strictEqual(events(viaEvent)[0].type, "ERROR")
      assert.strictEqual(events(viaEvent)[0].object.code, 410)
      yield* server.faults.inject({ _tag: "WatchGone", count: 1, mode: "http" })
      const list = yield* call(`${server.url}/api/v1/pods`)
      assert.strictEqual(list.status, 200)
      assertStatus(yield* call(`${server.url}/api/v1/pods?watch=true`), 410, "Expired")
      const after = yield* openWatch(`${server.url}/api/v1/pods?watch=true`)
      assert.strictEqual(after.status, 200)
      assert.strictEqual((yield* server.stats).faults.WatchGone, 2)
    }))

  it.live("answers the next lists that carry a continue token with 410 Expired", () =>
    Effect.gen(function*() {
      const server = yield* start()
      yield* seedPods(server, Array.from({ length: 5 }, (_, i) => pod(`p-${i}`)))
      yield* server.faults.inject({ _tag: "ContinueGone", count: 1 })
      // a list without a continue token does not take the fault
      const page1 = yield* call(`${server.url}/api/v1/pods?limit=2`)
      assert.strictEqual(page1.status, 200)
      const expired = yield* call(`${server.url}/api/v1/pods?limit=2&continue=${page1.json.metadata.continue}`)
      assertStatus(expired, 410, "Expired")
      assert.match(expired.json.message, /continue parameter is too old/)
      const rest = yield* call(`${server.url}/api/v1/pods?limit=10&continue=${expired.json.metadata.continue}`)
      assert.deepStrictEqual(names(rest.json), ["default/p-2", "default/p-3", "default/p-4"])
      // one shot only: the original token works again
      const page2 = yield* call(`${server.url}/api/v1/pods?limit=2&continue=${page1.json.metadata.continue}`)
      assert.deepStrictEqual(names(page2.json), ["default/p-2", "default/p-3"])
      assert.strictEqual((yield* server.stats).faults.ContinueGone, 1)
    }))

  it.live("clearFaults disarms the faults no request has taken yet", () =>
    Effect.gen(function*() {
      const server = yield* start()
      yield* server.faults.inject({ _tag: "ServerError", count: 3 })
      yield* server.faults.inject({ _tag: "TooManyRequests", count: 2 })
      yield* server.faults.inject({ _tag: "StallWatches", count: 2 })
      yield* server.faults.inject({ _tag: "MalformedLine" })
      assert.strictEqual(yield* server.faults.pending, 8)
      assertStatus(yield* call(`${server.url}/api/v1/pods`), 429, "TooManyRequests")
      assert.strictEqual(yield* server.faults.pending, 7, "the 429 took one shot")
      yield* server.faults.clear
      assert.strictEqual(yield* server.faults.pending, 0)
      assert.strictEqual((yield* call(`${server.url}/api/v1/pods`)).status, 200)
      const watch = yield* openWatch(`${server.url}/api/v1/pods?watch=true&allowWatchBookmarks=true`)
      yield* server.objects.create(pods, pod("a"))
      yield* eventually(() => watch.lines.length >= 1, "event")
      assert.strictEqual(events(watch)[0].type, "ADDED")
      assert.strictEqual((yield* server.stats).faults.TooManyRequests, 1)
      assert.strictEqual((yield* server.stats).faults.ServerError, 0)
    }))

  it.live("fails the next requests with 500 or 429 and Retry-After, and delays responses", () =>
    Effect.gen(function*() {
      const server = yield* start()
      yield* server.faults.inject({ _tag: "ServerError", count: 2, on: "list" })
      assert.strictEqual((yield* call(`${server.url}/api/v1/namespaces/default/pods/x`)).status, 404)
      assertStatus(yield* call(`${server.url}/api/v1/pods`), 500, "InternalError")
      assertStatus(yield* call(`${server.url}/api/v1/configmaps`), 500, "InternalError")
      assert.strictEqual((yield* call(`${server.url}/api/v1/pods`)).status, 200)
      yield* server.faults.inject({ _tag: "ServerError", status: 503 })
      assert.strictEqual((yield* call(`${server.url}/api/v1/namespaces/default/pods/x`)).status, 503)
      yield* server.faults.inject({ _tag: "TooManyRequests", retryAfterSeconds: 7 })
      const throttled = yield* call(`${server.url}/api/v1/pods?watch=true`)
      assertStatus(throttled, 429, "TooManyRequests")
      assert.strictEqual(throttled.headers.get("retry-after"), "7")
      assert.strictEqual(throttled.json.details.retryAfterSeconds, 7)
      yield* server.faults.inject({ _tag: "Delay", millis: 300 })
      const before = Date.now()
      assert.strictEqual((yield* call(`${server.url}/api/v1/pods`)).status, 200)
      assert.isAtLeast(Date.now() - before, 280)
      const stats = yield* server.stats
      assert.deepStrictEqual([stats.faults.ServerError, stats.faults.TooManyRequests, stats.faults.Delay], [3, 1, 1])
    }))

  it.live("stalls watches: the connection stays open and no byte arrives", () =>
    Effect.gen(function*() {
      const server = yield* start({ bookmarkInterval: "50 millis" })
      const w = yield* openWatch(`${server.url}/api/v1/pods?watch=true&allowWatchBookmarks=true&timeoutSeconds=1`)
      yield* eventually(() => w.lines.length >= 1, "bookmark")
      yield* server.faults.inject({ _tag: "StallWatches", count: 1 })
      const bytes = w.bytes
      yield* seedPods(server, [pod("a"), pod("b")])
      const next = yield* openWatch(`${server.url}/api/v1/pods?watch=true&allowWatchBookmarks=true&timeoutSeconds=1`)
      assert.strictEqual(next.status, 200)
      yield* sleep(1300)
      assert.strictEqual(w.bytes, bytes)
      assert.isFalse(w.ended)
      assert.strictEqual(next.bytes, 0)
      assert.isFalse(next.ended)
      assert.strictEqual((yield* server.stats).faults.StallWatches, 2)
    }))

  it.live("writes a malformed line, an object without metadata, and a partial line then closes", () =>
    Effect.gen(function*() {
      const server = yield* start()
      const w = yield* openWatch(`${server.url}/api/v1/pods?watch=true`)
      yield* server.faults.inject({ _tag: "MalformedLine" })
      yield* seedPods(server, [pod("a")])
      yield* server.faults.inject({ _tag: "MissingMetadata" })
      yield* seedPods(server, [pod("b")])
      yield* server.faults.inject({ _tag: "PartialLine" })
      yield* eventually(() => w.ended, "end")
      assert.isUndefined(w.error)
      assert.strictEqual(w.lines.length, 4)
      assert.throws(() => JSON.parse(w.lines[0]))
      assert.strictEqual(JSON.parse(w.lines[1]).object.metadata.name, "a")
      const noMetadata = JSON.parse(w.lines[2])
      assert.strictEqual(noMetadata.type, "ADDED")
      assert.isUndefined(noMetadata.object.metadata)
      assert.strictEqual(JSON.parse(w.lines[3]).object.metadata.name, "b")
      assert.isAbove(w.rest.length, 0)
      assert.throws(() => JSON.parse(w.rest))
      // with no watch open, a stream fault waits for the next watch
      yield* server.faults.inject({ _tag: "MalformedLine" })
      const next = yield* openWatch(
        `${server.url}/api/v1/pods?watch=true&resourceVersion=${yield* server.resourceVersion}`
      )
      yield* eventually(() => next.lines.length >= 1, "malformed line")
      assert.throws(() => JSON.parse(next.lines[0]))
      const stats = yield* server.stats
      assert.deepStrictEqual([stats.faults.MalformedLine, stats.faults.MissingMetadata, stats.faults.PartialLine], [
        2,
        1,
        1
      ])
    }))

  it.live("restarts: drops every connection, refuses new ones for a while, keeps the data", () =>
    Effect.gen(function*() {
      const server = yield* start()
      yield* seedPods(server, [pod("a")])
      const w = yield* openWatch(`${server.url}/api/v1/pods?watch=true`)
      yield* eventually(() => w.lines.length >= 1, "initial")
      yield* server.faults.inject({ _tag: "Restart", rejectMillis: 400 })
      yield* eventually(() => w.ended, "drop")
      const refused = yield* Effect.promise(() =>
        fetch(`${server.url}/version`).then(() => "ok", (e) => String(e.cause?.code ?? e))
      )
      assert.strictEqual(refused, "ECONNREFUSED")
      yield* sleep(600)
      const list = yield* call(`${server.url}/api/v1/pods`)
      assert.strictEqual(list.status, 200)
      assert.deepStrictEqual(names(list.json), ["default/a"])
      assert.strictEqual((yield* server.stats).faults.Restart, 1)
    }))

  it.live("counts requests, watches and events", () =>
    Effect.gen(function*() {
      const server = yield* start()
      yield* seedPods(server, [pod("a"), pod("b")])
      yield* call(`${server.url}/api/v1/pods`)
      const w = yield* openWatch(`${server.url}/api/v1/pods?watch=true`)
      yield* eventually(() => w.lines.length >= 2, "events")
      const stats = yield* server.stats
      assert.strictEqual(stats.requestsByVerb.list, 1)
      assert.strictEqual(stats.requestsByVerb.watch, 1)
      assert.strictEqual(stats.watchesOpen, 1)
      assert.strictEqual(stats.watchesTotal, 1)
      assert.strictEqual(stats.eventsSent, 2)
      assert.strictEqual(stats.bytesSent, w.bytes)
    }))
})

/**
 * ApiServer: WATCH.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { eventually } from "../fixtures.js"
import { assertStatus, call, events, openWatch, pod, pods, seedPods, sleep, start } from "./fixtures.js"

describe("ApiServer watch", () => {
  it.live("replays from a resourceVersion, then streams live events", () =>
    Effect.gen(function*() {
      const server = yield* start({ namespaces: ["elsewhere"] })
      yield* seedPods(server, [pod("a"), pod("b")])
      const rv = yield* server.resourceVersion
      yield* server.objects.patch(pods, { name: "a", namespace: "default" }, { metadata: { labels: { v: "2" } } })
      yield* server.objects.delete(pods, { name: "b", namespace: "default" })
      const w = yield* openWatch(`${server.url}/api/v1/namespaces/default/pods?watch=true&resourceVersion=${rv}`)
      assert.strictEqual(w.status, 200)
      yield* eventually(() => w.lines.length >= 2, "replay")
      yield* server.objects.create(pods, pod("c"))
      yield* server.objects.create(pods, pod("other", "elsewhere"))
      yield* eventually(() => w.lines.length >= 3, "live event")
      yield* sleep(50)
      const seen = events(w).map((e) => [e.type, e.object.metadata.name])
      assert.deepStrictEqual(seen, [["MODIFIED", "a"], ["DELETED", "b"], ["ADDED", "c"]])
      const rvs = events(w).map((e) => Number(e.object.metadata.resourceVersion))
      assert.deepStrictEqual(rvs, [...rvs].sort((x, y) => x - y))
      assert.isAbove(rvs[0], Number(rv))
    }))

  it.live("starts with synthetic ADDED events for resourceVersion \"\" and \"0\"", () =>
    Effect.gen(function*() {
      const server = yield* start()
      yield* seedPods(server, [pod("a"), pod("b")])
      for (const rv of ["", "0"]) {
        const w = yield* openWatch(`${server.url}/api/v1/pods?watch=1&resourceVersion=${rv}`)
        yield* eventually(() => w.lines.length >= 2, "initial events")
        assert.deepStrictEqual(events(w).map((e) => [e.type, e.object.metadata.name]), [["ADDED", "a"], [
          "ADDED",
          "b"
        ]])
      }
    }))

  it.live("sends ERROR 410 and closes when the resourceVersion is older than the history", () =>
    Effect.gen(function*() {
      const server = yield* start({ historySize: 3 })
      yield* seedPods(server, [pod("a")])
      const rv = yield* server.resourceVersion
      yield* seedPods(server, [pod("b"), pod("c"), pod("d"), pod("e")])
      const w = yield* openWatch(`${server.url}/api/v1/pods?watch=true&resourceVersion=${rv}`)
      assert.strictEqual(w.status, 200)
      yield* eventually(() => w.ended, "end of stream")
      const [error] = events(w)
      assert.strictEqual(error.type, "ERROR")
      assert.strictEqual(error.object.kind, "Status")
      assert.strictEqual(error.object.code, 410)
      assert.strictEqual(error.object.reason, "Expired")
      assert.strictEqual(w.lines.length, 1)
      // within the history it works, and compaction expires it
      const recent = String(Number(yield* server.resourceVersion) - 2)
      const ok = yield* openWatch(`${server.url}/api/v1/pods?watch=true&resourceVersion=${recent}`)
      yield* eventually(() => ok.lines.length >= 2, "replay")
      yield* server.faults.compact
      const compacted = yield* openWatch(`${server.url}/api/v1/pods?watch=true&resourceVersion=${recent}`)
      yield* eventually(() => compacted.ended, "end of stream")
      assert.strictEqual(events(compacted)[0].object.code, 410)
    }))

  it.live("streams the initial state then an initial-events-end bookmark with sendInitialEvents", () =>
    Effect.gen(function*() {
      const server = yield* start()
      yield* seedPods(server, [pod("a"), pod("b", "default", { app: "x" })])
      const rv = yield* server.resourceVersion
      const w = yield* openWatch(
        `${server.url}/api/v1/pods?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&resourceVersion=`
      )
      yield* eventually(() => w.lines.length >= 3, "bookmark")
      const [a, b, bookmark] = events(w)
      assert.deepStrictEqual([a.type, a.object.metadata.name, b.type, b.object.metadata.name], [
        "ADDED",
        "a",
        "ADDED",
        "b"
      ])
      assert.deepStrictEqual(bookmark, {
        type: "BOOKMARK",
        object: {
          kind: "Pod",
          apiVersion: "v1",
          metadata: { resourceVersion: rv, annotations: { "k8s.io/initial-events-end": "true" } }
        }
      })
      yield* server.objects.create(pods, pod("c"))
      yield* eventually(() => w.lines.length >= 4, "live event")
      assert.strictEqual(events(w)[3].object.metadata.name, "c")
      const filtered = yield* openWatch(
        `${server.url}/api/v1/pods?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&labelSelector=app%3Dx&resourceVersion=${rv}`
      )
      yield* eventually(() => filtered.lines.length >= 2, "bookmark")
      assert.deepStrictEqual(events(filtered).map((e) => e.type), ["ADDED", "BOOKMARK"])
      const noBookmarks = yield* call(
        `${server.url}/api/v1/pods?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan`
      )
      assertStatus(noBookmarks, 422, "Invalid")
      assert.match(noBookmarks.json.message, /allowWatchBookmarks/)
      const noMatch = yield* call(
        `${server.url}/api/v1/pods?watch=true&sendInitialEvents=true&allowWatchBookmarks=true`
      )
      assertStatus(noMatch, 422, "Invalid")
    }))

  it.live("sends periodic bookmarks carrying only kind, apiVersion and resourceVersion", () =>
    Effect.gen(function*() {
      const server = yield* start({ bookmarkInterval: "150 millis" })
      yield* seedPods(server, [pod("a")])
      const rv = yield* server.resourceVersion
      const w = yield* openWatch(`${server.url}/api/v1/pods?watch=true&allowWatchBookmarks=true&resourceVersion=${rv}`)
      yield* eventually(() => w.lines.length >= 1, { what: "bookmark", timeout: 3000 })
      assert.deepStrictEqual(events(w)[0], {
        type: "BOOKMARK",
        object: { kind: "Pod", apiVersion: "v1", metadata: { resourceVersion: rv } }
      })
      const plain = yield* openWatch(`${server.url}/api/v1/pods?watch=true&resourceVersion=${rv}`)
      yield* sleep(400)
      assert.strictEqual(plain.lines.length, 0)
    }))

  it.live("flushes headers at once and closes cleanly after timeoutSeconds", () =>
    Effect.gen(function*() {
      const server = yield* start()
      const rv = yield* server.resourceVersion
      const started = Date.now()
      const w = yield* openWatch(`${server.url}/api/v1/pods?watch=true&timeoutSeconds=1&resourceVersion=${rv}`)
      assert.isBelow(w.headersAt - started, 900)
      assert.match(String(w.status), /^200$/)
      yield* eventually(() => w.ended, { what: "timeout", timeout: 4000 })
      assert.isUndefined(w.error)
      assert.isAtLeast(Date.now() - started, 900)
      assert.strictEqual(w.rest, "")
    }))

  it.live("applies selectors with the watch cache's semantics: leaving is DELETED, entering is ADDED", () =>
    Effect.gen(function*() {
      const server = yield* start()
      yield* seedPods(server, [pod("a", "default", { track: "stable" }), pod("b", "default", { track: "canary" })])
      const rv = yield* server.resourceVersion
      const w = yield* openWatch(
        `${server.url}/api/v1/pods?watch=true&resourceVersion=${rv}&labelSelector=${encodeURIComponent("track=canary")}`
      )
      const relabel = (name: string, track: string) =>
        server.objects.patch(pods, { name, namespace: "default" }, { metadata: { labels: { track } } })
      yield* relabel("a", "canary")
      yield* server.objects.patch(pods, { name: "a", namespace: "default" }, { metadata: { annotations: { x: "1" } } })
      const leaving = yield* relabel("a", "stable")
      yield* relabel("b", "stable")
      yield* server.objects.delete(pods, { name: "b", namespace: "default" })
      yield* eventually(() => w.lines.length >= 4, "transitions")
      yield* sleep(50)
      const seen = events(w)
      assert.deepStrictEqual(seen.map((e) => [e.type, e.object.metadata.name]), [
        ["ADDED", "a"],
        ["MODIFIED", "a"],
        ["DELETED", "a"],
        ["DELETED", "b"]
      ])
      // the DELETED of an object leaving the selector is its previous state at the event's version
      assert.strictEqual(seen[2].object.metadata.labels.track, "canary")
      assert.strictEqual(seen[2].object.metadata.resourceVersion, leaving.metadata.resourceVersion)
      const byField = yield* openWatch(
        `${server.url}/api/v1/pods?watch=true&fieldSelector=${encodeURIComponent("metadata.name=a")}`
      )
      yield* eventually(() => byField.lines.length >= 1, "initial")
      assert.deepStrictEqual(events(byField).map((e) => e.object.metadata.name), ["a"])
    }))
})

import { assert, describe, it } from "@effect/vitest"
import type { KubeObject } from "effect-informers/KubeObject"
import * as Resource from "effect-informers/Resource"
import * as Effect from "effect/Effect"
import * as Http from "node:http"
import * as ApiServer from "../src/ApiServer.js"
import { eventually, pod as fixturePod } from "./fixtures.js"

interface Obj extends KubeObject {
  readonly metadata: {
    readonly name: string
    readonly namespace?: string
    readonly uid?: string
    readonly resourceVersion?: string
    readonly creationTimestamp?: string
  }
  readonly spec?: { readonly [key: string]: unknown }
}

const pods = Resource.pods as unknown as Resource.Resource<Obj>

const pod = (name: string, namespace = "default"): Obj =>
  fixturePod(name, {
    typed: true,
    namespace,
    uid: `uid-${name}`,
    metadata: { creationTimestamp: "2024-01-01T00:00:00Z" },
    spec: { nodeName: "node-1", containers: [{ name: "c", image: "nginx" }] }
  }) as Obj

interface Watch {
  readonly lines: Array<string>
  readonly close: () => void
}

/** Opens a watch and collects its lines, until the scope closes. */
const openWatch = (url: string) =>
  Effect.acquireRelease(
    Effect.callback<Watch>((resume) => {
      const lines: Array<string> = []
      let rest = ""
      const request = Http.get(url, (response) => {
        response.setEncoding("utf8")
        response.on("data", (chunk: string) => {
          const parts = (rest + chunk).split("\n")
          rest = parts.pop()!
          lines.push(...parts)
        })
        response.on("error", () => undefined)
        resume(Effect.succeed({ lines, close: () => request.destroy() }))
      })
      request.on("error", () => undefined)
    }),
    (watch) => Effect.sync(() => watch.close())
  )

/** The resourceVersions `n` writes after the server's start (a fresh cluster's namespaces come first). */
const versionsAfter = (server: ApiServer.ApiServer.Service) =>
  Effect.map(server.resourceVersion, (start) => (n: number) => String(Number(start) + n))

const parse = (lines: ReadonlyArray<string>) => lines.map((line) => JSON.parse(line) as { type: string; object: Obj })

describe("ApiServer bulk fast paths", () => {
  it.live("load stores objects as given (uid, creationTimestamp) with new resourceVersions", () =>
    Effect.gen(function*() {
      const server = yield* ApiServer.make().pipe(Effect.orDie)
      const v = yield* versionsAfter(server)
      const stored = yield* server.bench.load(pods, [pod("a"), pod("b")])
      assert.strictEqual(stored, 2)
      const a = yield* server.objects.get(pods, { name: "a", namespace: "default" })
      assert.strictEqual(a.metadata.uid, "uid-a")
      assert.strictEqual(a.metadata.creationTimestamp, "2024-01-01T00:00:00Z")
      assert.strictEqual(a.metadata.resourceVersion, v(1))
      // loading again replaces (MODIFIED), and a malformed object is refused
      yield* server.bench.load(pods, [pod("a")])
      const again = yield* server.objects.get(pods, { name: "a", namespace: "default" })
      assert.strictEqual(again.metadata.resourceVersion, v(3))
      const refused = yield* Effect.flip(server.bench.load(pods, [{ metadata: { name: "x" } } as Obj]))
      assert.strictEqual(refused.code, 400)
    }))

  it.live("modifyMany writes MODIFIED events round-robin in key order, unchanged but for the version", () =>
    Effect.gen(function*() {
      const server = yield* ApiServer.make().pipe(Effect.orDie)
      const v = yield* versionsAfter(server)
      yield* server.bench.load(pods, [pod("b"), pod("a"), pod("c")])
      const from = yield* server.resourceVersion
      const watch = yield* openWatch(`${server.url}/api/v1/pods?watch=true&resourceVersion=${from}`)
      const result = yield* server.bench.modifyMany(pods, { count: 7, batchSize: 2 })
      assert.deepStrictEqual(result, { events: 7, firstResourceVersion: v(4), lastResourceVersion: v(10) })
      yield* eventually(() => watch.lines.length >= 7, "7 events")
      const events = parse(watch.lines)
      assert.deepStrictEqual(events.map((e) => e.type), Array(7).fill("MODIFIED"))
      assert.deepStrictEqual(events.map((e) => e.object.metadata.name), ["a", "b", "c", "a", "b", "c", "a"])
      assert.deepStrictEqual(events.map((e) => e.object.metadata.resourceVersion), [4, 5, 6, 7, 8, 9, 10].map(v))
      const stored = yield* server.objects.get(pods, { name: "a", namespace: "default" })
      assert.strictEqual(stored.metadata.resourceVersion, v(10))
      const { resourceVersion: _, ...rest } = events[6].object.metadata
      const { resourceVersion: __, ...storedRest } = stored.metadata
      assert.deepStrictEqual(rest, storedRest)
      assert.deepStrictEqual(events[6].object.spec, pod("a").spec)
      // the history replays them to a watch resuming from the middle
      const late = yield* openWatch(`${server.url}/api/v1/pods?watch=true&resourceVersion=${v(8)}`)
      yield* eventually(() => late.lines.length >= 2, "replay")
      assert.deepStrictEqual(parse(late.lines).map((e) => e.object.metadata.resourceVersion), [v(9), v(10)])
      // a list sees the new versions
      const list = yield* server.objects.list(pods, {})
      assert.deepStrictEqual(list.items.map((p) => p.metadata.resourceVersion), [v(10), v(8), v(9)])
    }))

  it.live("a prepared burst stays consistent when other writes come first", () =>
    Effect.gen(function*() {
      const server = yield* ApiServer.make().pipe(Effect.orDie)
      const v = yield* versionsAfter(server)
      yield* server.bench.load(pods, [pod("a"), pod("b")])
      const run = yield* server.bench.prepareModifyMany(pods, { count: 4, namespace: "default" })
      // written between the preparation and the burst: versions move on, b changes, then goes away
      yield* server.objects.patch(pods, { name: "b", namespace: "default" }, { metadata: { labels: { x: "1" } } })
      yield* server.objects.delete(pods, { name: "b", namespace: "default" })
      const from = yield* server.resourceVersion
      const watch = yield* openWatch(`${server.url}/api/v1/pods?watch=true&resourceVersion=${from}`)
      const result = yield* run
      assert.deepStrictEqual(result, { events: 2, firstResourceVersion: v(5), lastResourceVersion: v(6) })
      yield* eventually(() => watch.lines.length >= 2, "2 events")
      const events = parse(watch.lines)
      assert.deepStrictEqual(events.map((e) => [e.object.metadata.name, e.object.metadata.resourceVersion]), [
        ["a", v(5)],
        ["a", v(6)]
      ])
      const none = yield* Effect.flip(server.bench.modifyMany(pods, { count: 1, namespace: "elsewhere" }))
      assert.strictEqual(none.code, 400)
    }))

  it.live("a burst is paced by a slow watcher instead of buffering it all", () =>
    Effect.gen(function*() {
      const server = yield* ApiServer.make({ watchBufferBytes: 64 * 1024 }).pipe(Effect.orDie)
      yield* server.bench.load(pods, Array.from({ length: 10 }, (_, i) => pod(`p-${i}`)))
      const from = yield* server.resourceVersion
      const watch = yield* openWatch(`${server.url}/api/v1/pods?watch=true&resourceVersion=${from}`)
      // far more bytes than the watch buffer: a watcher is never cut off, since the burst waits for it
      const result = yield* server.bench.modifyMany(pods, { count: 2000, maxPendingBytes: 16 * 1024 })
      assert.strictEqual(result.events, 2000)
      yield* eventually(() => watch.lines.length >= 2000, "2000 events")
      const stats = yield* server.stats
      assert.strictEqual(stats.watchesOpen, 1)
    }))
})

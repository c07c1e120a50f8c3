// Hostile input and stalled streams, end to end over HTTP: a scripted server answers the informer's LIST and
// WATCH requests with whatever a test wants, and the informer must report a typed error, recover (relist
// or re-watch), and never crash.
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer, Stream } from "effect"
import * as Http from "node:http"
import type { AddressInfo } from "node:net"
import * as HttpListerWatcher from "../../src/HttpListerWatcher.js"
import * as KubeConfig from "../../src/KubeConfig.js"
import type { KubeObject } from "../../src/KubeObject.js"
import * as Resource from "../../src/Resource.js"
import * as SharedInformer from "../../src/SharedInformer.js"
import { eventually, pod as fixturePod } from "../fixtures/index.js"

interface Request {
  readonly watch: boolean
  readonly query: URLSearchParams
}

/** What the server answers: a list body, or the lines of a watch (then it keeps the watch open or ends it). */
interface Script {
  readonly list: (n: number) => string
  readonly watch: (
    n: number,
    query: URLSearchParams
  ) => { readonly lines: ReadonlyArray<string>; readonly end: boolean }
}

const startServer = (script: Script) =>
  Effect.acquireRelease(
    Effect.callback<{ readonly url: string; readonly requests: Array<Request>; readonly server: Http.Server }>(
      (resume) => {
        const requests: Array<Request> = []
        let lists = 0
        let watches = 0
        const server = Http.createServer((req, res) => {
          const url = new URL(req.url ?? "/", "http://localhost")
          const watch = url.searchParams.get("watch") === "true"
          requests.push({ watch, query: url.searchParams })
          res.writeHead(200, { "content-type": "application/json" })
          if (!watch) {
            res.end(script.list(lists++))
            return
          }
          res.flushHeaders()
          const { end, lines } = script.watch(watches++, url.searchParams)
          for (const line of lines) res.write(line + "\n")
          if (end) res.end()
        })
        server.keepAliveTimeout = 60_000
        server.listen(0, "127.0.0.1", () => {
          const port = (server.address() as AddressInfo).port
          resume(Effect.succeed({ url: `http://127.0.0.1:${port}`, requests, server }))
        })
      }
    ),
    ({ server }) =>
      Effect.callback<void>((resume) => {
        server.closeAllConnections()
        server.close(() => resume(Effect.void))
      })
  )

const pod = (name: string, rv: number, extra: object = {}): KubeObject => ({
  ...fixturePod(name, { typed: true, uid: name, rv: String(rv) }),
  ...extra
})

const listOf = (rv: number, items: ReadonlyArray<KubeObject>) =>
  JSON.stringify({ kind: "PodList", apiVersion: "v1", metadata: { resourceVersion: String(rv) }, items })

const event = (type: string, object: unknown) => JSON.stringify({ type, object })

const pods = Resource.make<KubeObject>({ group: "", version: "v1", resource: "pods", kind: "Pod", namespaced: true })

/** An informer over the HTTP ListerWatcher against `url`, with watch-list off (plain LIST + WATCH). */
const informerFor = (url: string, options: HttpListerWatcher.Options = {}) =>
  Effect.gen(function*() {
    const lw = yield* HttpListerWatcher.make(pods, options)
    const informer = yield* SharedInformer.make(lw, {
      name: "pods",
      reflector: { watchList: false }
    })
    const errors: Array<string> = []
    yield* informer.errors.pipe(
      Stream.runForEach(({ context, error }) =>
        Effect.sync(() => {
          const reason = "reason" in error ? error.reason : error._tag === "StoreError" ? error.operation : "Defect"
          errors.push(`${context.phase}:${error._tag} (${reason})`)
        })
      ),
      Effect.forkScoped
    )
    yield* informer.start
    return { informer, errors }
  }).pipe(
    Effect.provide(
      HttpListerWatcher.layerHttpClient.pipe(Layer.provideMerge(KubeConfig.layerFromOptions({ server: url })))
    )
  )

const names = (informer: SharedInformer.SharedInformer.Service<KubeObject>) =>
  Effect.map(informer.indexer.list, (objects) => objects.map((o) => o.metadata?.name).sort())

/** The informer reports `error`, relists (a second LIST), and then holds the objects `expected` (names, sorted). */
const errorThenRelist = (
  { errors, informer, requests }: {
    readonly errors: ReadonlyArray<string>
    readonly informer: SharedInformer.SharedInformer.Service<KubeObject>
    readonly requests: ReadonlyArray<{ readonly watch: boolean }>
  },
  error: string,
  expected: string
) =>
  Effect.gen(function*() {
    yield* eventually(() => errors.includes(error), { what: error, timeout: 10_000, interval: "20 millis" })
    yield* eventually(() => requests.filter((r) => !r.watch).length >= 2, {
      what: "a relist",
      timeout: 15_000,
      interval: "20 millis"
    })
    yield* eventually(Effect.map(names(informer), (n) => n.join() === expected), {
      what: `${expected} after the relist`,
      timeout: 10_000,
      interval: "20 millis"
    })
  })

describe("hostile input over HTTP", () => {
  it.live(
    "a line over the size limit is a DecodeError (TooLarge), followed by a relist: nothing lost",
    () =>
      Effect.gen(function*() {
        const huge = "x".repeat(300_000)
        const { requests, url } = yield* startServer({
          // the second list has the object the huge event carried, at a later version
          list: (n) => n === 0 ? listOf(1, [pod("a", 1)]) : listOf(3, [pod("a", 1), pod("big", 3)]),
          watch: (n) =>
            n === 0
              ? { lines: [event("ADDED", pod("big", 2, { padding: huge }))], end: false }
              : { lines: [], end: false }
        })
        const { errors, informer } = yield* informerFor(url, { maxLineBytes: 100_000 })
        yield* errorThenRelist({ errors, informer, requests }, "watch:DecodeError (TooLarge)", "a,big")
      }),
    30_000
  )

  it.live(
    "deeply nested JSON is parsed without crashing the process, and the informer goes on",
    () =>
      Effect.gen(function*() {
        // written as text: JSON.stringify itself would overflow the stack on this value
        const deep = "[".repeat(100_000) + "]".repeat(100_000)
        const deepEvent = event("ADDED", pod("deep", 2, { spec: "DEEP" })).replace(`"DEEP"`, deep)
        const { url } = yield* startServer({
          list: () => listOf(1, []),
          watch: () => ({
            lines: [deepEvent, event("ADDED", pod("after", 3))],
            end: false
          })
        })
        const { errors, informer } = yield* informerFor(url)
        yield* eventually(Effect.map(names(informer), (n) => n.join() === "after,deep"), {
          what: "both objects",
          timeout: 10_000,
          interval: "20 millis"
        })
        assert.deepStrictEqual(errors, [])
      }),
    30_000
  )

  it.live(
    "an object of the wrong kind is skipped with a warning; the watch goes on",
    () =>
      Effect.gen(function*() {
        const { requests, url } = yield* startServer({
          list: () => listOf(1, []),
          watch: () => ({
            lines: [
              event("ADDED", { kind: "Service", apiVersion: "v1", metadata: { namespace: "ns", name: "svc" } }),
              event("ADDED", { kind: "Table", apiVersion: "meta.k8s.io/v1", metadata: { name: "t" } }),
              event("ADDED", pod("a", 2))
            ],
            end: false
          })
        })
        const { errors, informer } = yield* informerFor(url)
        yield* eventually(Effect.map(names(informer), (n) => n.join() === "a"), {
          what: "the pod",
          timeout: 10_000,
          interval: "20 millis"
        })
        assert.deepStrictEqual(errors, [])
        assert.strictEqual(requests.filter((r) => r.watch).length, 1)
      }),
    30_000
  )

  it.live("an event without metadata is a DecodeError (Malformed), then a relist", () =>
    Effect.gen(function*() {
      const { requests, url } = yield* startServer({
        list: (n) => n === 0 ? listOf(1, []) : listOf(5, [pod("b", 5)]),
        watch: (n) =>
          n === 0
            ? { lines: [event("ADDED", { kind: "Pod", apiVersion: "v1" })], end: false }
            : { lines: [], end: false }
      })
      const { errors, informer } = yield* informerFor(url)
      yield* errorThenRelist({ errors, informer, requests }, "watch:DecodeError (Malformed)", "b")
    }), 30_000)

  it.live(
    "a list without metadata is a DecodeError (Malformed); the list is retried and the informer syncs",
    () =>
      Effect.gen(function*() {
        const { url } = yield* startServer({
          list: (n) => n === 0 ? JSON.stringify({ kind: "PodList", items: [] }) : listOf(2, [pod("c", 2)]),
          watch: () => ({ lines: [], end: false })
        })
        const { errors, informer } = yield* informerFor(url)
        yield* eventually(() => errors.includes("list:DecodeError (Malformed)"), {
          what: "a DecodeError (Malformed)",
          timeout: 10_000,
          interval: "20 millis"
        })
        yield* eventually(() => informer.hasSynced, {
          what: "sync after the retry",
          timeout: 15_000,
          interval: "20 millis"
        })
        assert.deepStrictEqual(yield* names(informer), ["c"])
      }),
    30_000
  )
})

describe("inactivity watchdog", () => {
  it.live(
    "a watch that receives no bytes is restarted from the last resourceVersion, without a relist",
    () =>
      Effect.gen(function*() {
        const { requests, url } = yield* startServer({
          list: () => listOf(1, [pod("a", 1)]),
          // the first watch delivers one event, then goes silent (no bytes, connection open)
          watch: (n) => n === 0 ? { lines: [event("MODIFIED", pod("a", 7))], end: false } : { lines: [], end: false }
        })
        const { errors, informer } = yield* informerFor(url, { watchInactivityTimeout: "500 millis" })
        yield* eventually(() => requests.filter((r) => r.watch).length >= 2, {
          what: "a second watch",
          timeout: 10_000,
          interval: "20 millis"
        })
        const watches = requests.filter((r) => r.watch)
        assert.strictEqual(watches[0].query.get("resourceVersion"), "1")
        assert.strictEqual(watches[1].query.get("resourceVersion"), "7")
        assert.strictEqual(requests.filter((r) => !r.watch).length, 1, "no relist")
        assert.include(errors, "watch:TransportError (Timeout)")
        assert.deepStrictEqual(
          (yield* informer.indexer.list).map((o) => o.metadata?.resourceVersion),
          ["7"]
        )
      }),
    30_000
  )
})

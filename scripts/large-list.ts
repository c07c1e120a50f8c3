/**
 * LIST bodies larger than V8's longest string (~512 MiB), over real HTTP: `npm run large-list`.
 *
 * A scripted server streams, with backpressure and never as one string:
 * 1. a 200 LIST of `--pods` pods (default 200,000, ~640 MB of JSON): an informer must sync with all of them;
 * 2. a 500 with a body of the same size: a typed `ServerError` at once, only a few KB of the body read;
 * 3. a 200 LIST of the same size that turns into garbage near its end: a typed `Decode` error, and the
 *    informer recovers with the next (good) list.
 * Too slow and too large for `npm test` (each case moves ~640 MB through one process), so a command of its own.
 * Exits non-zero when a case does not hold.
 */
import { Effect, Layer, Schedule } from "effect"
import * as Http from "node:http"
import type { AddressInfo } from "node:net"
import * as HttpListerWatcher from "../src/HttpListerWatcher.js"
import * as KubeConfig from "../src/KubeConfig.js"
import type { KubeObject } from "../src/KubeObject.js"
import * as Resource from "../src/Resource.js"
import * as SharedInformer from "../src/SharedInformer.js"

const arg = (name: string, fallback: number): number => {
  const found = process.argv.find((a) => a.startsWith(`--${name}=`))
  return found === undefined ? fallback : Number(found.slice(name.length + 3))
}
const podCount = arg("pods", 200_000)

const padding = "x".repeat(2600)
const podJson = (i: number): string =>
  JSON.stringify({
    apiVersion: "v1",
    kind: "Pod",
    metadata: {
      name: `pod-${i}`,
      namespace: `ns-${i % 50}`,
      uid: `uid-${i}`,
      resourceVersion: String(i + 1),
      labels: { app: `app-${i % 100}`, tier: "web" },
      annotations: { note: padding }
    },
    spec: { nodeName: `node-${i % 200}`, containers: [{ name: "c", image: "nginx:1.27" }] },
    status: { phase: "Running", podIP: `10.0.${(i >> 8) & 255}.${i & 255}` }
  })

type Mode = "good" | "error" | "garbage"

/** Writes the body in batches, waiting for `drain` when the socket is full; stops if the client goes away. */
const streamBody = async (res: Http.ServerResponse, mode: Mode): Promise<number> => {
  let written = 0
  const write = (text: string): Promise<void> | undefined => {
    written += Buffer.byteLength(text)
    return res.write(text) ? undefined : new Promise<void>((resolve) => res.once("drain", () => resolve()))
  }
  const head = mode === "error"
    ? `{"kind":"Status","apiVersion":"v1","status":"Failure","code":500,"message":"`
    : `{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"${podCount}"},"items":[`
  await write(head)
  const batch = 500
  for (let i = 0; i < podCount && !res.destroyed; i += batch) {
    const parts: Array<string> = []
    for (let j = i; j < Math.min(podCount, i + batch); j++) {
      parts.push(mode === "error" ? padding : (j === 0 ? "" : ",") + podJson(j))
    }
    if (mode === "garbage" && i + batch >= podCount) parts.push(`,{"metadata":{"name": ]]] garbage`)
    const waiting = write(parts.join(""))
    if (waiting !== undefined) await waiting
  }
  if (!res.destroyed) res.end(mode === "error" ? `"}` : mode === "garbage" ? "" : "]}")
  return written
}

const main = Effect.gen(function*() {
  const modes: Array<Mode> = []
  let bodyBytes = 0
  let errorBytesSent = 0
  const server = Http.createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://localhost")
    if (url.searchParams.get("watch") === "true") {
      res.writeHead(200, { "content-type": "application/json" })
      res.flushHeaders()
      return // a quiet watch
    }
    const mode = modes.shift() ?? "good"
    res.writeHead(mode === "error" ? 500 : 200, { "content-type": "application/json" })
    void streamBody(res, mode).then((n) => {
      if (mode === "error") errorBytesSent = n
      else bodyBytes = Math.max(bodyBytes, n)
    })
  })
  yield* Effect.callback<void>((resume) => {
    server.listen(0, "127.0.0.1", () => resume(Effect.void))
  })
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  const pods = Resource.make<KubeObject>({ group: "", version: "v1", resource: "pods", kind: "Pod", namespaced: true })
  const layer = HttpListerWatcher.layerHttpClient.pipe(Layer.provideMerge(KubeConfig.layerFromOptions({ server: url })))
  const failures: Array<string> = []
  const check = (ok: boolean, what: string) => {
    console.log(`${ok ? "ok  " : "FAIL"} ${what}`)
    if (!ok) failures.push(what)
  }
  const heapMiB = () => Math.round(process.memoryUsage().heapUsed / 2 ** 20)

  yield* Effect.gen(function*() {
    const lw = yield* HttpListerWatcher.make(pods)

    // 1. an informer syncs from one unpaginated LIST over the longest string
    let started = Date.now()
    const informer = yield* SharedInformer.make(lw, {
      name: "pods",
      reflector: { watchList: false, pageSize: 0, backoff: Schedule.spaced("100 millis") }
    })
    yield* informer.start
    yield* informer.synced
    const listed = (yield* informer.indexer.list).length
    check(
      listed === podCount && bodyBytes > 512 * 2 ** 20,
      `a 200 LIST of ${podCount} pods, ${Math.round(bodyBytes / 2 ** 20)} MiB in one body: ${listed} objects in ` +
        `the cache after ${((Date.now() - started) / 1000).toFixed(1)} s, heap ${heapMiB()} MiB`
    )

    // 2. an error status with a body as large: a typed error, only the first bytes read
    modes.push("error")
    started = Date.now()
    const error = yield* Effect.flip(lw.list({}))
    yield* Effect.sleep("500 millis")
    check(
      error._tag === "StatusError" && error.reason === "ServerError" && error.message.length < 400 &&
        errorBytesSent < 64 * 2 ** 20,
      `a 500 with a huge body: ${error._tag} in ${Date.now() - started} ms, message of ${error.message.length} ` +
        `characters, ${Math.round(errorBytesSent / 2 ** 20)} MiB sent before the client stopped reading`
    )

    // 3. a body as large that turns to garbage at its end: Decode, and the next list recovers
    modes.push("garbage")
    started = Date.now()
    const garbage = yield* Effect.flip(lw.list({}))
    check(
      garbage._tag === "DecodeError" && !garbage.message.includes("\n"),
      `a huge 200 LIST ending in garbage: ${garbage._tag} after ${((Date.now() - started) / 1000).toFixed(1)} s: ` +
        garbage.message.slice(0, 160)
    )
    const again = yield* lw.list({})
    check(again.items.length === podCount, `the next LIST: ${again.items.length} objects`)
  }).pipe(Effect.provide(layer), Effect.scoped)

  server.closeAllConnections()
  server.close()
  if (failures.length > 0) {
    console.log(`${failures.length} case(s) failed`)
    process.exitCode = 1
  } else console.log("all cases hold")
})

Effect.runPromise(main).catch((error) => {
  console.error(error)
  process.exitCode = 1
})

/**
 * The benchmark's API server, in a process of its own (one core for the server, one for the client under
 * test): the embedded `ApiServer` plus a small control endpoint on another port.
 *
 * Control (POST, JSON bodies and answers):
 * - `/reset {pods}`: a fresh server (new port) holding `pods` deterministic pods (ChurnSimulator.makePod,
 *   uid and timestamps derived from the name), so that every session sees the same bytes, resourceVersions
 *   included. The pod objects are generated once and reused.
 * - `/prepare {count}`: builds the next burst's events ahead (`server.bench.prepareModifyMany`).
 * - `/burst {count}`: `count` MODIFIED events (the prepared ones, or `server.bench.modifyMany`), paced by the
 *   slowest watcher; answers once all are written. The events touch the pods round-robin in key order,
 *   unchanged but for their resourceVersion (about 3 KB each).
 * - `/relist {}`: forces every watcher to relist: a write to another resource (so the list gets a new
 *   resourceVersion), then `compact` (the watchers' resourceVersion is now too old) and `CloseWatches`
 *   (a clean end: the re-watch gets `410 Expired`, the client relists). Answers the new resourceVersion.
 * - `/stats {}`: `ApiServer.stats`.
 * - `/quit {}`: stops and exits.
 *
 * The process exits when its parent goes away (IPC disconnect), so no server outlives the benchmark.
 */
import * as ApiServer from "@effect-informers/testkit/ApiServer"
import { makePod, podName } from "@effect-informers/testkit/ChurnSimulator"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Scope from "effect/Scope"
import * as Http from "node:http"
import type { KubeObject } from "../src/KubeObject.js"
import * as Resource from "../src/Resource.js"
import type { BurstResponse, RelistResponse, ResetResponse, ServerMessage } from "./protocol.js"

// -------------------------------------------------------------------------------------------------
// deterministic objects
// -------------------------------------------------------------------------------------------------

const fnv = (text: string, seed: number): number => {
  let h = seed >>> 0
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i)
    h = Math.imul(h, 0x01000193) >>> 0
  }
  return h
}

/** A UUID-shaped string derived from `text`. */
const uid = (text: string): string => {
  const hex = [0x811c9dc5, 0x050c5d1f, 0x2b4f3e8d, 0x6a09e667].map((seed) =>
    fnv(text, seed).toString(16).padStart(8, "0")
  )
    .join("")
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-a${hex.slice(17, 20)}-${hex.slice(20, 32)}`
}

const created = "2024-01-01T00:00:00Z"

export const namespaceCount = (pods: number): number => Math.max(1, Math.min(50, Math.ceil(pods / 1000)))

/** Pod `i` of a state of `pods`: namespace `ns-(i mod n)`, one of 10 apps per namespace, ~3 KB of JSON. */
const podAt = (i: number, namespaces: number): KubeObject => {
  const namespace = `ns-${i % namespaces}`
  const app = `app-${Math.floor(i / namespaces) % 10}`
  const name = podName(app, i)
  const pod = makePod({ name, namespace, app }) as unknown as {
    readonly metadata: Record<string, unknown>
  }
  return {
    ...pod,
    metadata: { ...pod.metadata, uid: uid(`${namespace}/${name}`), creationTimestamp: created }
  } as KubeObject
}

const generated = { namespaces: 0, pods: [] as Array<KubeObject> }

const podsFor = (pods: number): ReadonlyArray<KubeObject> => {
  const namespaces = namespaceCount(pods)
  if (generated.namespaces !== namespaces || generated.pods.length < pods) {
    if (generated.namespaces !== namespaces) generated.pods = []
    generated.namespaces = namespaces
    for (let i = generated.pods.length; i < pods; i++) generated.pods.push(podAt(i, namespaces))
  }
  return generated.pods.length === pods ? generated.pods : generated.pods.slice(0, pods)
}

const namespaceObjects = (count: number): ReadonlyArray<KubeObject> =>
  Array.from({ length: count }, (_, i) => ({
    apiVersion: "v1",
    kind: "Namespace",
    metadata: {
      name: `ns-${i}`,
      uid: uid(`namespace/ns-${i}`),
      creationTimestamp: created,
      labels: { "kubernetes.io/metadata.name": `ns-${i}` }
    },
    spec: { finalizers: ["kubernetes"] },
    status: { phase: "Active" }
  }))

// -------------------------------------------------------------------------------------------------
// the server
// -------------------------------------------------------------------------------------------------

interface Running {
  readonly scope: Scope.Closeable
  readonly server: ApiServer.ApiServer.Service
  relists: number
}

let running: Running | undefined

const stop = async (): Promise<void> => {
  const current = running
  running = undefined
  if (current !== undefined) await Effect.runPromise(Scope.close(current.scope, Exit.void))
}

const reset = async (pods: number): Promise<ResetResponse> => {
  prepared = undefined
  await stop()
  const started = performance.now()
  const scope = Effect.runSync(Scope.make())
  const server = await Effect.runPromise(
    ApiServer.make({
      historySize: 10_000,
      // a client this far behind is cut off; the bursts are paced far below it
      watchBufferBytes: 1024 * 1024 * 1024,
      // the pods name ReplicaSets that are not loaded: the garbage collector would delete them all
      garbageCollection: false
    }).pipe(Scope.provide(scope))
  )
  running = { scope, server, relists: 0 }
  await Effect.runPromise(server.bench.load(Resource.namespaces, namespaceObjects(namespaceCount(pods))))
  await Effect.runPromise(server.bench.load(Resource.pods, podsFor(pods)))
  const resourceVersion = await Effect.runPromise(server.resourceVersion)
  return { url: server.url, resourceVersion, pods, ms: performance.now() - started }
}

const current = (): Running => {
  if (running === undefined) throw new Error("no server: POST /reset first")
  return running
}

interface Prepared {
  readonly server: ApiServer.ApiServer.Service
  readonly count: number
  readonly run: Effect.Effect<ApiServer.ModifyManyResult>
}

let prepared: Prepared | undefined

/** Builds the next burst's events ahead (`prepareModifyMany`), so that `/burst` only publishes them. */
const prepare = async (count: number): Promise<{ readonly events: number; readonly ms: number }> => {
  const { server } = current()
  const started = performance.now()
  prepared = undefined
  const run = await Effect.runPromise(server.bench.prepareModifyMany(Resource.pods, { count }))
  prepared = { server, count, run }
  return { events: count, ms: performance.now() - started }
}

const burst = async (count: number): Promise<BurstResponse> => {
  const { server } = current()
  const ready = prepared !== undefined && prepared.server === server && prepared.count === count
    ? prepared.run
    : Effect.flatten(server.bench.prepareModifyMany(Resource.pods, { count }))
  prepared = undefined
  const started = performance.now()
  const result = await Effect.runPromise(ready)
  return { ...result, ms: performance.now() - started }
}

const relist = async (): Promise<RelistResponse> => {
  const state = current()
  const { server } = state
  state.relists++
  await Effect.runPromise(
    server.objects.create(Resource.configMaps, {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: `relist-${state.relists}`, namespace: "ns-0" },
      data: { reason: "bench relist" }
    })
  )
  await Effect.runPromise(server.faults.compact)
  await Effect.runPromise(server.faults.inject({ _tag: "CloseWatches" }))
  return { resourceVersion: await Effect.runPromise(server.resourceVersion) }
}

// -------------------------------------------------------------------------------------------------
// control endpoint
// -------------------------------------------------------------------------------------------------

/** Commands run one at a time. */
let queue: Promise<unknown> = Promise.resolve()
const serialised = <A>(f: () => Promise<A>): Promise<A> => {
  const next = queue.then(f, f)
  queue = next.catch(() => undefined)
  return next
}

const readBody = (request: Http.IncomingMessage): Promise<Record<string, unknown>> =>
  new Promise((resolve, reject) => {
    const chunks: Array<Buffer> = []
    request.on("data", (chunk: Buffer) => chunks.push(chunk))
    request.on("error", reject)
    request.on("end", () => {
      const text = Buffer.concat(chunks).toString("utf8")
      try {
        resolve(text === "" ? {} : JSON.parse(text) as Record<string, unknown>)
      } catch (error) {
        reject(error)
      }
    })
  })

const positive = (value: unknown, name: string): number => {
  if (typeof value !== "number" || !Number.isInteger(value) || value < 0) throw new Error(`${name}: not a count`)
  return value
}

const exit = async (code: number): Promise<never> => {
  try {
    await stop()
  } finally {
    process.exit(code)
  }
}

const control = Http.createServer((request, response) => {
  const reply = (code: number, body: unknown) => {
    const text = JSON.stringify(body)
    response.writeHead(code, { "content-type": "application/json", "content-length": Buffer.byteLength(text) })
    response.end(text)
  }
  readBody(request).then((body) =>
    serialised(async (): Promise<unknown> => {
      switch (request.url) {
        case "/reset":
          return reset(positive(body.pods, "pods"))
        case "/prepare":
          return prepare(positive(body.count, "count"))
        case "/burst":
          return burst(positive(body.count, "count"))
        case "/relist":
          return relist()
        case "/stats":
          return Effect.runPromise(current().server.stats)
        case "/quit":
          setImmediate(() => void exit(0))
          return {}
        default:
          throw new Error(`unknown control path ${request.url}`)
      }
    })
  ).then(
    (result) => reply(200, result),
    (error: unknown) => reply(500, { error: error instanceof Error ? error.message : String(error) })
  )
})

const send = (message: ServerMessage) => process.send?.(message)

process.on("disconnect", () => void exit(0))
process.on("SIGTERM", () => void exit(0))
process.on("SIGINT", () => void exit(0))

control.listen(0, "127.0.0.1", () => {
  const address = control.address()
  if (address === null || typeof address === "string") {
    send({ type: "error", message: "control endpoint has no TCP address" })
    void exit(1)
    return
  }
  send({ type: "ready", controlUrl: `http://127.0.0.1:${address.port}` })
})

/**
 * Issue 16's scratch benchmark: the informer's hot path in one process, without HTTP. The watch body is
 * prebuilt NDJSON (the benchmark's ~3 KB pods, MODIFIED round-robin, unchanged but for the
 * resourceVersion), handed over in chunks of `CHUNK` bytes, one chunk per macrotask (as sockets deliver);
 * the informer decodes it (`internal/httpWatchDecoder.ts`), queues, stores and fans it out to `HANDLERS`
 * handlers (`onUpdate: () => Effect.sync(count)`). The floor does the same with a line split, `JSON.parse`,
 * a `Map` upsert and N plain callbacks, on the same chunks.
 *
 *   HANDLERS=1,10,100 PODS=1000 EVENTS=50000 ROUNDS=3 npx tsx bench/perf16.ts [--cpu-prof via node flags]
 *
 * Prints events/s per round and the best; ours/floor ratios are within one process run.
 */
import { makePod } from "@effect-informers/testkit/ChurnSimulator"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import * as Fs from "node:fs"
import * as Inspector from "node:inspector"
import { constants, PerformanceObserver } from "node:perf_hooks"
import { setImmediate as tick } from "node:timers/promises"
import { stripManagedFields } from "../src/InformerFactory.js"
import { decodeWatchBody } from "../src/internal/transport/httpWatchDecoder.js"
import type { KubeObject } from "../src/KubeObject.js"
import type { ListerWatcher, WatchEvent } from "../src/ListerWatcher.js"
import * as SharedInformer from "../src/SharedInformer.js"

const handlersList = (process.env.HANDLERS ?? "1,10,100").split(",").map(Number)
const podCount = Number(process.env.PODS ?? 1000)
const eventCount = Number(process.env.EVENTS ?? 50_000)
const rounds = Number(process.env.ROUNDS ?? 3)
const chunkBytes = Number(process.env.CHUNK ?? 65536)
const only = process.env.ONLY // "ours" | "floor"
/** NOPARSE=1: the watch yields parsed events (chunks of ~21), no bytes: what is left is queue, store, fan-out. */
const noParse = process.env.NOPARSE === "1"
/** PROFILE=FILE.cpuprofile: a CPU profile of ours' counted bursts (the last handler count's). */
const profileFile = process.env.PROFILE
/** HEAPPROF=FILE.heapprofile: a sampling heap profile of ours' counted bursts, collected objects included. */
const heapFile = process.env.HEAPPROF
const session = new Inspector.Session()
session.connect()
const post = (method: string, params?: object) =>
  new Promise<any>((resolve, reject) =>
    session.post(method, params ?? {}, (error, result) => error === null ? resolve(result) : reject(error))
  )
const startProfiles = async () => {
  if (profileFile !== undefined) {
    await post("Profiler.enable")
    await post("Profiler.setSamplingInterval", { interval: 200 })
    await post("Profiler.start")
  }
  if (heapFile !== undefined) {
    await post("HeapProfiler.enable")
    await post("HeapProfiler.startSampling", {
      samplingInterval: 4096,
      includeObjectsCollectedByMajorGC: true,
      includeObjectsCollectedByMinorGC: true
    })
  }
}
const stopProfiles = async () => {
  if (profileFile !== undefined) {
    const { profile } = await post("Profiler.stop")
    Fs.writeFileSync(profileFile, JSON.stringify(profile))
  }
  if (heapFile !== undefined) {
    const { profile } = await post("HeapProfiler.stopSampling")
    Fs.writeFileSync(heapFile, JSON.stringify(profile))
  }
}

const pods: Array<Record<string, any>> = Array.from({ length: podCount }, (_, i) => {
  const pod = makePod({ name: `app-${i % 10}-abcde-${i}`, namespace: `ns-${i % 50}` }) as any
  return { ...pod, metadata: { ...pod.metadata, uid: `uid-${i}`, resourceVersion: String(i + 1) } }
})
const podJson = pods.map((pod) => {
  const text = JSON.stringify(pod)
  const at = text.indexOf(`"resourceVersion":"`)
  const end = text.indexOf(`"`, at + 19)
  return [text.slice(0, at + 19), text.slice(end)] as const
})

let rv = podCount
/** One burst: E MODIFIED lines, in chunks of about `chunkBytes`. */
type Burst = Array<Buffer> | Array<Array<WatchEvent<KubeObject>>>
const burst = (): Burst => {
  if (noParse) {
    const out: Array<Array<WatchEvent<KubeObject>>> = []
    let chunk: Array<WatchEvent<KubeObject>> = []
    for (let i = 0; i < eventCount; i++) {
      const pod = pods[i % podCount]
      chunk.push({
        type: "MODIFIED",
        object: { ...pod, metadata: { ...pod.metadata, resourceVersion: String(++rv) } } as any
      })
      if (chunk.length === 21) {
        out.push(chunk)
        chunk = []
      }
    }
    if (chunk.length > 0) out.push(chunk)
    return out
  }
  return bytesBurst()
}
const bytesBurst = (): Array<Buffer> => {
  const lines: Array<string> = []
  for (let i = 0; i < eventCount; i++) {
    const [head, tail] = podJson[i % podCount]
    lines.push(`{"type":"MODIFIED","object":${head}${++rv}${tail}}\n`)
  }
  const all = Buffer.from(lines.join(""))
  const chunks: Array<Buffer> = []
  for (let at = 0; at < all.length; at += chunkBytes) {
    chunks.push(all.subarray(at, Math.min(all.length, at + chunkBytes)))
  }
  return chunks
}

// -------------------------------------------------------------------------------------------------
// the floor
// -------------------------------------------------------------------------------------------------

/** [events/s, CPU µs per event, minor GCs * 1e6 + major GCs] */
type Figure = readonly [number, number, number]
/** Scavenges and major GCs seen so far: load-independent measures of allocation and promotion. */
const gcs = { minor: 0, major: 0 }
new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) {
    const kind = (entry as any).detail?.kind
    if (kind === constants.NODE_PERFORMANCE_GC_MINOR) gcs.minor++
    else if (kind === constants.NODE_PERFORMANCE_GC_MAJOR || kind === constants.NODE_PERFORMANCE_GC_INCREMENTAL) {
      gcs.major++
    }
  }
}).observe({ entryTypes: ["gc"] })
const gcMark = () => gcs.minor * 1_000_000 + gcs.major
const cpuNow = () => {
  const u = process.cpuUsage()
  return u.user + u.system
}

const floor = async (handlers: number, burst: Burst): Promise<Figure> => {
  if (noParse) return floorParsed(handlers, burst as Array<Array<WatchEvent<KubeObject>>>)
  const chunks = burst as Array<Buffer>
  const cache = new Map<string, unknown>()
  for (const pod of pods) cache.set(`${pod.metadata.namespace}/${pod.metadata.name}`, pod)
  const counts = new Array(handlers).fill(0)
  const callbacks = Array.from({ length: handlers }, (_, h) => () => {
    counts[h]++
  })
  const started = performance.now()
  const cpu = cpuNow()
  const gc = gcMark()
  let rest = ""
  const { StringDecoder } = await import("node:string_decoder")
  const decoder = new StringDecoder("utf8")
  for (const chunk of chunks) {
    await tick()
    const text = rest + decoder.write(chunk)
    let start = 0
    let end = text.indexOf("\n")
    while (end >= 0) {
      const event = JSON.parse(text.slice(start, end))
      const obj = event.object
      cache.set(`${obj.metadata.namespace}/${obj.metadata.name}`, obj)
      for (let h = 0; h < handlers; h++) callbacks[h]()
      start = end + 1
      end = text.indexOf("\n", start)
    }
    rest = text.slice(start)
  }
  const elapsed = performance.now() - started
  if (counts.some((c) => c !== eventCount)) throw new Error("floor lost events")
  await tick() // the last GC entries
  return [eventCount / (elapsed / 1000), (cpuNow() - cpu) / eventCount, gcMark() - gc]
}

const floorParsed = async (handlers: number, chunks: Array<Array<WatchEvent<KubeObject>>>): Promise<Figure> => {
  const cache = new Map<string, unknown>()
  for (const pod of pods) cache.set(`${pod.metadata.namespace}/${pod.metadata.name}`, pod)
  const counts = new Array(handlers).fill(0)
  const callbacks = Array.from({ length: handlers }, (_, h) => () => {
    counts[h]++
  })
  const started = performance.now()
  const cpu = cpuNow()
  const gc = gcMark()
  for (const chunk of chunks) {
    await tick()
    for (const event of chunk) {
      const obj = event.object as any
      cache.set(`${obj.metadata.namespace}/${obj.metadata.name}`, obj)
      for (let h = 0; h < handlers; h++) callbacks[h]()
    }
  }
  const elapsed = performance.now() - started
  if (counts.some((c) => c !== eventCount)) throw new Error("floor lost events")
  await tick()
  return [eventCount / (elapsed / 1000), (cpuNow() - cpu) / eventCount, gcMark() - gc]
}

// -------------------------------------------------------------------------------------------------
// ours
// -------------------------------------------------------------------------------------------------

const ours = (handlers: number, bursts: ReadonlyArray<Burst>) =>
  Effect.gen(function*() {
    let feed: ((chunks: Burst) => void) | undefined
    let stopped = false
    const lw: ListerWatcher.Service<KubeObject> = {
      description: "pods",
      supportsWatchList: false,
      list: () =>
        Effect.succeed({
          items: pods.map((p) => structuredClone(p)) as any,
          resourceVersion: String(podCount),
          continue: undefined
        }),
      watch: () => {
        const body = Stream.fromAsyncIterable(
          (async function*() {
            while (!stopped) {
              const chunks = await new Promise<Burst>((resolve) => (feed = resolve))
              for (const chunk of chunks) {
                await tick()
                yield chunk
              }
            }
          })(),
          (e) => e as never
        )
        return (noParse
          ? Stream.flattenIterable(body as Stream.Stream<Array<WatchEvent<KubeObject>>>)
          : (body as Stream.Stream<Uint8Array>).pipe(
            decodeWatchBody<KubeObject>({ kind: "Pod", description: "pods", maxLineBytes: 1 << 26 })
          )) as Stream.Stream<WatchEvent<KubeObject>, never>
      }
    }
    const informer = yield* SharedInformer.make(lw, {
      name: "pods",
      transform: stripManagedFields,
      reflector: { watchList: false }
    })
    // the informer's scope closes (first) after the last burst: end the body (an interrupted async iterator
    // would wait for the pending feed forever)
    yield* Effect.addFinalizer(() => Effect.sync(() => (stopped = true, feed?.([]))))
    let done = 0
    let resolve: (() => void) | undefined
    const target = { count: 0 }
    for (let h = 0; h < handlers; h++) {
      let seen = 0
      yield* informer.addEventHandler({
        name: `counter-${h}`,
        onUpdate: () =>
          Effect.sync(() => {
            if (++seen === target.count) {
              if (++done === handlers) resolve?.()
            }
          })
      })
    }
    yield* Effect.orDie(informer.start)
    yield* Effect.orDie(informer.synced)
    while (feed === undefined) yield* Effect.promise(() => tick())
    const rates: Array<Figure> = []
    for (const chunks of bursts) {
      if (chunks === bursts[1]) yield* Effect.promise(startProfiles)
      done = 0
      target.count += eventCount
      const finished = new Promise<void>((r) => (resolve = r))
      const started = performance.now()
      const cpu = cpuNow()
      const gc = gcMark()
      const f = feed!
      feed = undefined
      f(chunks)
      yield* Effect.promise(() => finished)
      const elapsed = performance.now() - started
      const used = cpuNow() - cpu
      yield* Effect.promise(() => tick())
      rates.push([eventCount / (elapsed / 1000), used / eventCount, gcMark() - gc])
      while (feed === undefined) yield* Effect.promise(() => tick())
    }
    yield* Effect.promise(stopProfiles)
    return rates
  }).pipe(Effect.scoped)

const main = async () => {
  // the first burst of each contender warms its code up and is not counted
  const bursts = Array.from({ length: rounds + 1 }, burst)
  const fmt = (n: number) => Math.round(n).toLocaleString("en")
  for (const handlers of handlersList) {
    const floorRates: Array<Figure> = []
    let oursRates: Array<Figure> = []
    if (only !== "ours") { for (const chunks of bursts) floorRates.push(await floor(handlers, chunks)) }
    if (only !== "floor") oursRates = await Effect.runPromise(ours(handlers, bursts))
    floorRates.shift()
    oursRates.shift()
    const best = (xs: Array<Figure>) => xs.length === 0 ? NaN : Math.max(...xs.map((x) => x[0]))
    const cpu = (xs: Array<Figure>) => xs.length === 0 ? NaN : Math.min(...xs.map((x) => x[1]))
    const show = (xs: Array<Figure>) =>
      xs.map(([r, c, g]) => `${fmt(r)} (${c.toFixed(1)} µs, ${Math.floor(g / 1e6)}+${g % 1e6} GCs)`).join(" / ")
    console.log(
      `handlers=${handlers} pods=${podCount} events=${eventCount}: floor ${show(floorRates)}; ours ${
        show(oursRates)
      }; ` +
        `best rate ours/floor ${(best(oursRates) / best(floorRates)).toFixed(2)}x, ` +
        `least CPU per event floor/ours ${(cpu(floorRates) / cpu(oursRates)).toFixed(2)}x`
    )
  }
}

main().catch((e) => {
  console.error(e)
  process.exit(1)
})

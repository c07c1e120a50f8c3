/**
 * What the benchmark's processes say to each other: the jobs the orchestrator (bench/main.ts) hands to a
 * client child (bench/client.ts), the results it gets back, and the control API of the server child
 * (bench/server.ts), spoken over a small HTTP endpoint of its own.
 */
import * as Http from "node:http"

/** `peer`, `peer14`, `fluent`: the peers (bench/peers.ts). */
export type Contender = "floor" | "ours" | "peer" | "peer14" | "fluent"

/** One client session: connect, sync, then bursts, optionally a relist. Runs in a fresh process. */
export interface SessionJob {
  readonly kind: "session"
  readonly contender: Contender
  /** e.g. `ours (paged)`. */
  readonly label: string
  readonly serverUrl: string
  readonly controlUrl: string
  readonly pods: number
  /** MODIFIED events per burst. */
  readonly events: number
  /** Bursts run one after the other (W2 takes the best). */
  readonly bursts: number
  /** Update handlers (W4 fan-out). */
  readonly handlers: number
  /** W5: one more handler that never returns (ours only: no peer can express it). */
  readonly stalled?: boolean | undefined
  /**
   * W9 (ours): the events go on to a Controller (informer -> WorkQueue -> a no-op reconcile); an event counts
   * once a reconcile of its key has read the cache at its resourceVersion or later.
   */
  readonly controller?: boolean | undefined
  /** ours: the Reflector's watch-list (`sendInitialEvents`) instead of a paged LIST. */
  readonly watchList?: boolean | undefined
  /** ours: the factory's managedFields stripping (default true). */
  readonly stripManagedFields?: boolean | undefined
  /** W6: force relists after the bursts and watch the heap. */
  readonly relist?: boolean | undefined
  /**
   * W6: how many relists are forced, one after the other (default 3). All but the last sample heapUsed every
   * ~10 ms; the last one samples the live heap (a full GC before each sample), but for the peers.
   */
  readonly relists?: number | undefined
  /** Every wait of the session gives up after this long. */
  readonly timeoutMs: number
}

/** W7, in a fresh process. */
export interface MicroJob {
  readonly kind: "micro"
  /** Objects in the Indexer and keys cycled through the DeltaFifo. */
  readonly objects: number
  /** Measured operations per figure. */
  readonly operations: number
  readonly timeoutMs: number
}

/** W8, WorkQueue throughput, in a fresh process. */
export interface WorkQueueJob {
  readonly kind: "workqueue"
  /** Distinct keys, each added twice. */
  readonly keys: number
  /** Worker counts, one figure each. */
  readonly workers: ReadonlyArray<number>
  /** Measured runs per figure (the best is kept). */
  readonly repeats: number
  readonly timeoutMs: number
}

export type Job = SessionJob | MicroJob | WorkQueueJob

export interface BurstResult {
  readonly events: number
  readonly ms: number
  /** Events per second delivered to every handler (the slowest one finishing). */
  readonly rate: number
  /**
   * The client process's CPU time (user + system) during the burst, in µs per event: what the contender
   * spent, independent of how busy the machine was (wall-clock rates are not, on a shared 2-core machine).
   */
  readonly cpuUsPerEvent?: number | undefined
}

export interface RelistResult {
  /** heapUsed after a full GC, before the relist. */
  readonly steadyHeap: number
  /** Highest heapUsed sampled (every ~10 ms) from the relist's start until it was applied. */
  readonly peakHeap: number
  readonly peakHeapTotal: number
  readonly samples: number
  /** Time spent taking the samples (for a live relist, mostly its full GCs), included in `ms`. */
  readonly sampleMs?: number | undefined
  /** From the request that forces the relist until the client has applied its list. */
  readonly ms: number
  readonly ratio: number
}

export interface SessionResult {
  readonly kind: "session"
  readonly label: string
  readonly contender: Contender
  readonly pods: number
  readonly handlers: number
  /** Start -> every handler has seen every object of the initial list (the cache holds them all). */
  readonly syncMs: number
  /** heapUsed after GC before the start, and after GC once synced. */
  readonly baselineHeap: number
  readonly syncedHeap: number
  readonly heapPerObject: number
  readonly bursts: ReadonlyArray<BurstResult>
  /** Best burst rate; undefined when a burst failed (`failed.bursts`). */
  readonly rate?: number | undefined
  /** W5: heapUsed (after GC) after the bursts minus before them. */
  readonly heapGrowth?: number | undefined
  /** W6: the first forced relist. */
  readonly relist?: RelistResult | undefined
  /** W6: every forced relist sampled without GC, in order (the first is `relist`). */
  readonly relists?: ReadonlyArray<RelistResult> | undefined
  /** W6 again, the last relist, with a full GC before each sample: the peak of live objects. */
  readonly liveRelist?: RelistResult | undefined
  /**
   * Measurements of the session that failed (the others are kept), by figure: the main process records each
   * under `failures` and the table shows `FAILED` in its cell.
   */
  readonly failed?: {
    readonly bursts?: string | undefined
    readonly relist?: string | undefined
    readonly liveRelist?: string | undefined
  } | undefined
}

export interface MicroResult {
  readonly kind: "micro"
  readonly objects: number
  readonly operations: number
  /** add (one Effect per object) + popBatch(1000), per second. */
  readonly fifoInOrder: number
  readonly fifoCoalescing: number
  /** The same with a plain array and a Map (no Effect). */
  readonly fifoFloor: number
  /** Indexer.unsafeAdd of a new version of a cached object, with two indexes, per second. */
  readonly indexerUnsafe: number
  /** Indexer.update (the Effect API), per second. */
  readonly indexerEffect: number
  /** A Map plus two Map<string, Set<string>> indexes maintained by hand. */
  readonly indexerFloor: number
}

export interface WorkQueueRow {
  /** `prefilled`: every key added before the workers start; `interleaved`: added in batches while they wait. */
  readonly shape: "prefilled" | "interleaved"
  /**
   * How ours is fed: `add`, one `yield* queue.add(key)` per add in an `Effect.gen` (the floor's shape: a call per
   * add); `addAll`, one `queue.addAll(batch)` per batch of 100 keys (twice: each key is added twice), as the
   * controller adds the keys of a batch. Absent in results written before the split (`add`).
   */
  readonly producer?: "add" | "addAll" | undefined
  readonly workers: number
  /** Keys processed per second: WorkQueue.process by worker fibers. */
  readonly ours: number
  /** The same with an array and two Sets, no Effect. */
  readonly floor: number
}

export interface WorkQueueResult {
  readonly kind: "workqueue"
  readonly keys: number
  readonly rows: ReadonlyArray<WorkQueueRow>
}

/**
 * A CLI session (bench/cli.ts): `watch pods --output events` in a fresh process, its stdout a pipe read by
 * the orchestrator.
 */
export interface CliResult {
  readonly kind: "cli"
  readonly contender: Contender
  readonly label: string
  /** What was run (the server URL left out). */
  readonly command: string
  readonly pods: number
  /** Spawn -> the Nth line (N = the pods: one EXISTING line each): the best of `syncRuns`. */
  readonly syncMs: number
  /** Each spawn's time to the Nth line, one spawn per burst (absent in results written before). */
  readonly syncRuns?: ReadonlyArray<number> | undefined
  /** Burst request -> the burst's last line. */
  readonly bursts: ReadonlyArray<BurstResult>
  /** Best burst rate, lines (events) per second; undefined when a burst failed (`failed.bursts`). */
  readonly rate?: number | undefined
  /** Lines read in all. */
  readonly lines: number
  /** sha1 of the lines after the sync: equal between contenders that printed the same text. */
  readonly digest?: string | undefined
  /** A burst (or the check of the lines) that failed: the sync figure is kept. */
  readonly failed?: { readonly bursts?: string | undefined } | undefined
}

export type Result = SessionResult | MicroResult | WorkQueueResult

/** Child -> parent messages. */
export type ChildMessage =
  | { readonly type: "result"; readonly result: Result }
  | { readonly type: "error"; readonly message: string }
  | { readonly type: "log"; readonly message: string }

/** Server child -> parent. */
export type ServerMessage = { readonly type: "ready"; readonly controlUrl: string } | {
  readonly type: "error"
  readonly message: string
}

// -------------------------------------------------------------------------------------------------
// the server's control API
// -------------------------------------------------------------------------------------------------

export interface ResetRequest {
  readonly pods: number
}

export interface ResetResponse {
  readonly url: string
  readonly resourceVersion: string
  readonly pods: number
  readonly ms: number
}

export interface BurstResponse {
  readonly events: number
  readonly firstResourceVersion: string
  readonly lastResourceVersion: string
  readonly ms: number
}

export interface RelistResponse {
  /** The resourceVersion the relist will return. */
  readonly resourceVersion: string
}

// a connection per control request: an idle kept-alive socket that the server closes (its keep-alive timeout
// is 5 s) while a busy client is not looking would fail the next request with "socket hang up"
const agent = new Http.Agent({ keepAlive: false, maxSockets: 4 })

/** POSTs JSON to the server's control endpoint and returns its JSON answer; fails on non-2xx or timeout. */
export const control = <A>(controlUrl: string, path: string, body: unknown, timeoutMs: number): Promise<A> =>
  new Promise<A>((resolve, reject) => {
    const payload = Buffer.from(JSON.stringify(body ?? {}), "utf8")
    const request = Http.request(`${controlUrl}${path}`, {
      method: "POST",
      agent,
      headers: { "content-type": "application/json", "content-length": payload.length }
    }, (response) => {
      const chunks: Array<Buffer> = []
      response.on("data", (chunk: Buffer) => chunks.push(chunk))
      response.on("error", reject)
      response.on("end", () => {
        clearTimeout(timer)
        const text = Buffer.concat(chunks).toString("utf8")
        if ((response.statusCode ?? 500) >= 300) {
          reject(new Error(`control ${path}: HTTP ${response.statusCode}: ${text}`))
          return
        }
        try {
          resolve(JSON.parse(text) as A)
        } catch (error) {
          reject(error)
        }
      })
    })
    const timer = setTimeout(() => {
      request.destroy(new Error(`control ${path}: no answer after ${timeoutMs} ms`))
    }, timeoutMs)
    request.on("error", (error) => {
      clearTimeout(timer)
      reject(error)
    })
    request.end(payload)
  })

/** Resolves after `ms`, or rejects with `message` — used to bound every wait. */
export const withTimeout = <A>(promise: Promise<A>, ms: number, message: string): Promise<A> => {
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timeout after ${ms} ms: ${message}`)), ms)
  })
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer))
}

/** A promise with its resolve and reject. */
export interface Deferred<A> {
  readonly promise: Promise<A>
  readonly resolve: (value: A) => void
  readonly reject: (error: unknown) => void
}

export const deferred = <A>(): Deferred<A> => {
  let resolve!: (value: A) => void
  let reject!: (error: unknown) => void
  const promise = new Promise<A>((res, rej) => {
    resolve = res
    reject = rej
  })
  return { promise, resolve, reject }
}

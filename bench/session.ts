/**
 * What every contender's session shares: heap measurement, the counters the handlers bump, the burst
 * and relist drivers. A contender supplies `start` (list and watch, call the handlers) and, for W6, a way
 * to tell that the relist was applied.
 */
import { isPeer } from "./peers.js"
import type {
  BurstResponse,
  BurstResult,
  Deferred,
  RelistResponse,
  RelistResult,
  SessionJob,
  SessionResult
} from "./protocol.js"
import { control, deferred, withTimeout } from "./protocol.js"

declare const gc: (() => void) | undefined

/** heapUsed after two full collections. */
export const settledHeap = (): number => {
  if (typeof gc !== "function") throw new Error("run with node --expose-gc (global.gc is missing)")
  gc()
  gc()
  return process.memoryUsage().heapUsed
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

/**
 * Counts what `handlers` handlers have seen; `arm(n)` returns a promise resolved once every handler has
 * seen `n` more updates (or adds, for `armAdds`).
 */
export class Counters {
  readonly adds: Array<number>
  readonly updates: Array<number>
  private addTarget = Infinity
  private updateTarget = Infinity
  private addsPending = 0
  private updatesPending = 0
  private addsDone: Deferred<void> | undefined
  private updatesDone: Deferred<void> | undefined

  constructor(readonly handlers: number) {
    this.adds = new Array<number>(handlers).fill(0)
    this.updates = new Array<number>(handlers).fill(0)
  }

  add(handler: number): void {
    if (++this.adds[handler] === this.addTarget && --this.addsPending === 0) this.addsDone?.resolve()
  }

  update(handler: number): void {
    if (++this.updates[handler] === this.updateTarget && --this.updatesPending === 0) this.updatesDone?.resolve()
  }

  /** Resolves once every handler has seen `total` adds in all. */
  armAdds(total: number): Promise<void> {
    this.addTarget = total
    this.addsDone = deferred<void>()
    this.addsPending = this.adds.filter((n) => n < total).length
    if (this.addsPending === 0) this.addsDone.resolve()
    return this.addsDone.promise
  }

  /** Resolves once every handler has seen `more` updates beyond what it has seen now (all handlers equal). */
  armUpdates(more: number): Promise<void> {
    const base = Math.max(...this.updates)
    this.updateTarget = base + more
    this.updatesDone = deferred<void>()
    this.updatesPending = this.updates.filter((n) => n < this.updateTarget).length
    if (this.updatesPending === 0) this.updatesDone.resolve()
    return this.updatesDone.promise
  }

  describe(): string {
    return `adds ${JSON.stringify(this.adds.slice(0, 4))} updates ${JSON.stringify(this.updates.slice(0, 4))}`
  }
}

/** A watch closed sooner than this after its start, without events, is a "very short watch". */
const shortWatchMs = 1_000

/** Runs one burst: asks the server for `job.events` MODIFIED events and waits until every handler saw them. */
/** Waits until the client's watch is open on the server: a burst before it would not be paced by it. */
const watchOpen = async (job: SessionJob): Promise<void> => {
  const deadline = Date.now() + job.timeoutMs
  for (;;) {
    const stats = await control<{ readonly watchesOpen: number }>(job.controlUrl, "/stats", {}, job.timeoutMs)
    if (stats.watchesOpen >= 1) return
    if (Date.now() > deadline) throw new Error(`${job.label}: no watch open after ${job.timeoutMs} ms`)
    await sleep(10)
  }
}

export const runBurst = async (job: SessionJob, counters: Counters): Promise<BurstResult> => {
  await watchOpen(job)
  // the server builds the events first, untimed
  await control(job.controlUrl, "/prepare", { count: job.events }, job.timeoutMs)
  const done = counters.armUpdates(job.events)
  const started = performance.now()
  const cpu = process.cpuUsage()
  const produced = control<BurstResponse>(job.controlUrl, "/burst", { count: job.events }, job.timeoutMs)
  // a failed burst request fails the wait at once
  // the error says what the handlers had seen when it failed
  await withTimeout(Promise.all([done, produced]), job.timeoutMs, `${job.label}: burst of ${job.events} events`)
    .catch((error: unknown) => {
      throw new Error(`${message(error)} (${counters.describe()})`)
    })
  const ms = performance.now() - started
  const used = process.cpuUsage(cpu)
  return {
    events: job.events,
    ms,
    rate: job.events / (ms / 1000),
    cpuUsPerEvent: (used.user + used.system) / job.events
  }
}

/**
 * W6: settles the heap, asks the server to force a relist, samples heapUsed every ~10 ms until `applied`
 * says the client has applied the list of `resourceVersion`. With `live`, every sample follows a full GC
 * (so samples are far apart): what the client still references at its peak.
 *
 * A full GC is synchronous and slow on a large heap (~0.4 s at 150,000 pods): live samples are spaced so
 * that the collections take at most a fifth of the client's time (the next one 4x the last one's length
 * after it, at least 100 ms). Sampling on a fixed 100 ms interval instead left the client nothing but
 * collections, one per turn of its event loop: reading a page of 500 pods took ~7 s, longer than the
 * server's idle timeout on the kept-alive connection, so the next page's request met a closed connection
 * ("socket hang up") on every page, and the relist never completed.
 *
 * The relist is forced once the client's watch has been open for over a second: a watch that the server
 * closes sooner, before any event, is a "very short watch" (client-go's check, and the Reflector's), after
 * which the client backs off and relists from its last resourceVersion, unpaged: another path than the 410
 * that W6 measures. Relists forced one after the other would otherwise take either path, by timing.
 */
export const runRelist = async (
  job: SessionJob,
  applied: (resourceVersion: string) => boolean,
  /** Collect before each sample: the peak of what is still referenced, not of what the GC has yet to free. */
  live = false
): Promise<RelistResult> => {
  await watchOpen(job)
  await sleep(shortWatchMs + 200)
  const steadyHeap = settledHeap()
  let peakHeap = 0
  let peakHeapTotal = 0
  let samples = 0
  let sampleMs = 0
  /** Takes a sample; returns how long it took. */
  const sample = (): number => {
    const started = performance.now()
    if (live) gc!()
    const usage = process.memoryUsage()
    samples++
    if (usage.heapUsed > peakHeap) peakHeap = usage.heapUsed
    if (usage.heapTotal > peakHeapTotal) peakHeapTotal = usage.heapTotal
    const took = performance.now() - started
    sampleMs += took
    return took
  }
  let sampling = true
  let timer: NodeJS.Timeout | undefined
  const next = (delay: number) => {
    timer = setTimeout(() => {
      if (!sampling) return
      const took = sample()
      next(live ? Math.max(100, 4 * took) : 10)
    }, delay)
  }
  const started = performance.now()
  next(live ? 100 : 10)
  try {
    const { resourceVersion } = await control<RelistResponse>(job.controlUrl, "/relist", {}, job.timeoutMs)
    const finished = deferred<void>()
    const poll = setInterval(() => {
      if (applied(resourceVersion)) finished.resolve()
    }, 5)
    try {
      await withTimeout(finished.promise, job.timeoutMs, `${job.label}: relist to resourceVersion ${resourceVersion}`)
    } finally {
      clearInterval(poll)
    }
    sample()
  } finally {
    sampling = false
    clearTimeout(timer)
  }
  const ms = performance.now() - started
  return { steadyHeap, peakHeap, peakHeapTotal, samples, sampleMs, ms, ratio: peakHeap / steadyHeap }
}

const message = (error: unknown) => error instanceof Error ? error.message : String(error)

/** The session's skeleton: baseline heap, start + sync (W1), synced heap (W3), bursts (W2/W4/W5), relist (W6). */
export interface Client {
  /** Lists and watches; resolves when started (the sync is awaited through the counters). */
  readonly start: () => Promise<void>
  /** Rejects when the client fails for good (never resolves). */
  readonly failure: Promise<never>
  /** W6: whether the list of `resourceVersion` has been applied. */
  readonly relistApplied: (resourceVersion: string) => boolean
  readonly stop: () => Promise<void>
}

export const runSession = async (
  job: SessionJob,
  counters: Counters,
  make: () => Promise<Client>
): Promise<SessionResult> => {
  const client = await make()
  // every wait below also ends when the client fails
  client.failure.catch(() => undefined)
  const guard = <A>(promise: Promise<A>) => Promise.race([promise, client.failure])
  const baselineHeap = settledHeap()
  const synced = counters.armAdds(job.pods)
  const started = performance.now()
  await withTimeout(
    guard(Promise.all([client.start(), synced])),
    job.timeoutMs,
    `${job.label}: initial sync of ${job.pods} pods`
  ).catch((error: unknown) => {
    throw new Error(`${message(error)} (${counters.describe()})`)
  })
  const syncMs = performance.now() - started
  const syncedHeap = settledHeap()
  const failed: { bursts?: string; relist?: string; liveRelist?: string } = {}
  // W2/W4/W5: a burst that fails is recorded under `failed` (W1 and W3 are kept) and ends the session's
  // measurements: the client may still be applying it.
  const bursts: Array<BurstResult> = []
  try {
    for (let i = 0; i < job.bursts; i++) bursts.push(await guard(runBurst(job, counters)))
  } catch (error) {
    failed.bursts = `burst ${bursts.length + 1} of ${job.bursts}: ${message(error)}`
    process.send?.({ type: "log", message: `${failed.bursts} FAILED` })
  }
  const afterBursts = job.stalled === true && failed.bursts === undefined ? settledHeap() : undefined
  // W6: relists in a row. A relist that fails is recorded under `failed` (the session keeps its other
  // figures) and ends W6: the informer may still be relisting. Not live for the peers: their unpaged list is
  // one synchronous JSON.parse (and, for client-node, a synchronous loop), which no sample can see into.
  const relists: Array<RelistResult> = []
  let liveRelist: RelistResult | undefined
  if (job.relist === true && failed.bursts !== undefined) {
    failed.relist = "W6 not measured: a burst failed before it"
  }
  if (job.relist === true && failed.bursts === undefined) {
    const count = job.relists ?? 3
    const live = !isPeer(job.contender) && count >= 2
    for (let i = 0; i < count; i++) {
      const isLive = live && i === count - 1
      const what = `W6 ${isLive ? "live relist" : "relist"} ${i + 1} of ${count}`
      try {
        const result = await guard(runRelist(job, client.relistApplied, isLive))
        if (isLive) liveRelist = result
        else relists.push(result)
        process.send?.({
          type: "log",
          message: `${what}: ${(result.ms / 1000).toFixed(1)} s, peak ${(result.peakHeap / 1048576).toFixed(0)} MB ` +
            `/ steady ${(result.steadyHeap / 1048576).toFixed(0)} MB (${result.samples} samples, ` +
            `${((result.sampleMs ?? 0) / 1000).toFixed(1)} s of it sampling)`
        })
      } catch (error) {
        failed[isLive ? "liveRelist" : "relist"] = `${what}: ${message(error)}`
        process.send?.({ type: "log", message: `${what} FAILED: ${message(error)}` })
        break
      }
    }
  }
  await withTimeout(client.stop(), job.timeoutMs, `${job.label}: stop`).catch(() => undefined)
  return {
    kind: "session",
    label: job.label,
    contender: job.contender,
    pods: job.pods,
    handlers: job.handlers,
    syncMs,
    baselineHeap,
    syncedHeap,
    heapPerObject: (syncedHeap - baselineHeap) / job.pods,
    bursts,
    rate: bursts.length === job.bursts ? Math.max(...bursts.map((b) => b.rate)) : undefined,
    heapGrowth: afterBursts === undefined ? undefined : afterBursts - syncedHeap,
    relist: relists[0],
    relists: job.relist === true ? relists : undefined,
    liveRelist,
    failed: Object.keys(failed).length === 0 ? undefined : failed
  }
}

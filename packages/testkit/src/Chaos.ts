/**
 * The fault campaign: informers over HTTP against the embedded API server while it churns objects and
 * injects faults chosen from a seed, then checks what users rely on:
 * - every cache equals the server's state once churn and faults stop;
 * - each handler's notifications have, per key, non-decreasing resourceVersions, and replayed onto an
 *   empty map they reproduce the server's state (also for a handler that joined late);
 * - no fiber of the informers is alive after their scope closes;
 * - the heap stays bounded.
 *
 * `effect-informers chaos` (`npm run chaos`) runs many seeds and prints a table;
 * `packages/testkit/test/Chaos.test.ts` runs a short form.
 *
 * The campaign's parts are exported for tests of their own: `injectFaults` (the demo's `--faults` and
 * `serve --faults` use it), `compare` (a cache against the server's state) and `relistCount`.
 *
 * @since 0.1.0
 */
import { deletionHandlingMetaNamespaceKey } from "effect-informers/Indexer"
import * as InformerFactory from "effect-informers/InformerFactory"
import type { KubeObject } from "effect-informers/KubeObject"
import { compareResourceVersions, resourceVersion, unwrapDeleted } from "effect-informers/KubeObject"
import * as Informers from "effect-informers/Layer"
import * as Metrics from "effect-informers/Metrics"
import type * as Reflector from "effect-informers/Reflector"
import * as Resource from "effect-informers/Resource"
import type * as SharedInformer from "effect-informers/SharedInformer"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Metric from "effect/Metric"
import * as Option from "effect/Option"
import * as Random from "effect/Random"
import * as EffectResult from "effect/Result"
import * as Schedule from "effect/Schedule"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as ApiServer from "./ApiServer.js"
import * as ChurnSimulator from "./ChurnSimulator.js"

/**
 * The campaign could not run: the server did not start, the seed failed.
 *
 * @since 0.1.0
 * @category errors
 */
export class ChaosError
  extends Data.TaggedError("ChaosError")<{ readonly message: string; readonly cause?: unknown }>
{}

// -------------------------------------------------------------------------------------------------
// faults
// -------------------------------------------------------------------------------------------------

/**
 * How much trouble `injectFaults` makes: `mild` (a fault every 1-3 s: dropped watches, 410s, 429s, 500s,
 * slow responses) or `chaos` (every 0.2-0.6 s, every fault class, history compaction and restarts).
 *
 * @since 0.1.0
 * @category models
 */
export type FaultLevel = "none" | "mild" | "chaos"

const mildFaults: ReadonlyArray<ApiServer.Fault> = [
  { _tag: "DropWatches" },
  { _tag: "CloseWatches" },
  { _tag: "WatchGone", count: 1 },
  { _tag: "TooManyRequests", count: 1, retryAfterSeconds: 1 },
  { _tag: "ServerError", count: 1, on: "watch" },
  { _tag: "Delay", millis: 300, count: 2 }
]

const chaosFaults: ReadonlyArray<ApiServer.Fault> = [
  ...mildFaults,
  { _tag: "WatchGone", count: 1, mode: "http" },
  { _tag: "ContinueGone", count: 1 },
  { _tag: "ServerError", count: 2, status: 503, on: "list" },
  { _tag: "StallWatches" },
  { _tag: "MalformedLine" },
  { _tag: "PartialLine" },
  { _tag: "MissingMetadata" },
  { _tag: "Restart", rejectMillis: 300 }
]

/** The faults that act when injected; the others wait for a request (or the next watch) to take them. */
const actsAtOnce: ReadonlySet<ApiServer.Fault["_tag"]> = new Set(["DropWatches", "CloseWatches", "Restart"])

/**
 * Injects faults of `level` into `server` at random times (through the `Random` service) until
 * interrupted; then disarms the faults not yet taken by a request. One outage at a time: while a fault
 * injected earlier still waits for a request (`faults.pending`), no other such fault is added (the ones that
 * act at once, dropped or closed watches and restarts, still are), so faults do not pile up on a client that
 * is backing off (each of its attempts would meet one). The campaign, the demo and `serve --faults` use it.
 *
 * @since 0.1.0
 * @category faults
 */
export const injectFaults = (server: ApiServer.ApiServer.Service, level: FaultLevel): Effect.Effect<void> => {
  if (level === "none") return Effect.void
  const faults = level === "mild" ? mildFaults : chaosFaults
  const [min, max] = level === "mild" ? [1000, 3000] : [200, 600]
  return Effect.gen(function*() {
    yield* Effect.sleep(Duration.millis(yield* Random.nextIntBetween(min, max, { halfOpen: true })))
    if (level === "chaos" && (yield* Random.nextIntBetween(0, 12, { halfOpen: true })) === 0) {
      yield* server.faults.compact
      return
    }
    const fault = faults[yield* Random.nextIntBetween(0, faults.length, { halfOpen: true })]
    // one outage at a time: a fault that waits for a request is not added while an earlier one still waits
    // (a client backing off sends none: piled up, they would fail each of its attempts, for ever); faults
    // that act at once (dropped or closed watches, a restart) still come, and make the clients ask again
    if (!actsAtOnce.has(fault._tag) && (yield* server.faults.pending) > 0) return
    yield* server.faults.inject(fault)
  }).pipe(
    Effect.forever,
    // when injection stops, so does the outage: faults armed but not yet taken are disarmed
    Effect.onInterrupt(() => server.faults.clear)
  )
}

// -------------------------------------------------------------------------------------------------
// consistency
// -------------------------------------------------------------------------------------------------

/**
 * One informer's cache against the server's state.
 *
 * @since 0.1.0
 * @category models
 */
export interface InformerResult {
  readonly informer: string
  readonly cached: number
  readonly server: number
  readonly consistent: boolean
  /** Up to 5 keys that differ (missing, extra or at another resourceVersion). */
  readonly differences: ReadonlyArray<string>
}

const keyOf = (obj: unknown): string => EffectResult.getOrElse(deletionHandlingMetaNamespaceKey(obj), () => "<invalid>")

/**
 * Compares a cache with the server's objects by key and resourceVersion.
 *
 * @since 0.1.0
 * @category consistency
 */
export const compare = (
  informer: string,
  cached: ReadonlyArray<KubeObject>,
  server: ReadonlyArray<KubeObject>
): InformerResult => {
  const versions = new Map<string, string | undefined>()
  for (const obj of server) versions.set(keyOf(obj), resourceVersion(obj))
  const differences: Array<string> = []
  let matching = 0
  for (const obj of cached) {
    const key = keyOf(obj)
    if (!versions.has(key)) differences.push(`${key}: not on the server`)
    else if (versions.get(key) !== resourceVersion(obj)) {
      differences.push(`${key}: cached at ${resourceVersion(obj)}, server at ${versions.get(key)}`)
    } else matching++
  }
  if (matching < server.length) {
    const seen = new Set(cached.map(keyOf))
    for (const key of versions.keys()) if (!seen.has(key)) differences.push(`${key}: not cached`)
  }
  return {
    informer,
    cached: cached.length,
    server: server.length,
    consistent: differences.length === 0,
    differences: differences.slice(0, 5)
  }
}

// every cause but `initial`: a record, so that a cause added to Reflector.RelistCause fails to compile here
const relistCauses = Object.keys(
  {
    "gone": true,
    "error": true,
    "very-short-watch": true,
    "resync-error": true,
    "watch-list-fallback": true
  } satisfies Record<Reflector.RelistCause, true>
)

/**
 * The relists of the informers named `informer` after their initial list (Gone, errors, fallbacks), as
 * the Reflector's `Metrics.relists` counters have them. The counters are process-wide: subtract a count
 * taken before to get one run's.
 *
 * @since 0.1.0
 * @category consistency
 */
export const relistCount = (informer: string): Effect.Effect<number> =>
  Effect.reduce(relistCauses, () => 0, (total, cause) =>
    Effect.map(
      Metric.value(Metric.withAttributes(Metrics.relists, { informer, cause })),
      (state) => total + state.count
    ))

// -------------------------------------------------------------------------------------------------
// the campaign
// -------------------------------------------------------------------------------------------------

/**
 * @since 0.1.0
 * @category models
 */
export interface Options {
  readonly seed: number
  /** How long churn and faults run. Defaults to 30 seconds. */
  readonly duration?: Duration.Input | undefined
  /** Defaults to 1,000. */
  readonly pods?: number | undefined
  /** Defaults to 10. */
  readonly namespaces?: number | undefined
  /** Changes per second. Defaults to 200. */
  readonly churn?: number | undefined
  /** How long the informers may take to converge afterwards. Defaults to 120 seconds. */
  readonly settleTimeout?: Duration.Input | undefined
  /** Reflector backoff; defaults to the Reflector's (800 ms .. 30 s). */
  readonly backoff?: InformerFactory.Options["reflector"] extends infer R
    ? R extends { readonly backoff?: infer B } ? B : never
    : never
  /** Inactivity watchdog of each watch. Defaults to 3 seconds (the server sends a bookmark every second). */
  readonly watchInactivityTimeout?: Duration.Input | undefined
}

/**
 * One seed's outcome.
 *
 * @since 0.1.0
 * @category models
 */
export interface Result {
  readonly seed: number
  readonly passed: boolean
  /** What failed, empty when `passed`. */
  readonly problems: ReadonlyArray<string>
  readonly events: number
  readonly faults: number
  readonly faultsByClass: { readonly [fault: string]: number }
  readonly compactions: number
  readonly relists: number
  readonly errorsReported: number
  readonly objects: number
  readonly settleSeconds: number
  /** Fibers of the informers running just before they were stopped (all must be gone after). */
  readonly fibersRunning: number
  /** heapUsed after the initial sync and at the end (after a GC when `global.gc` is exposed), in MiB. */
  readonly heapMiB: { readonly synced: number; readonly peak: number; readonly end: number }
}

/** A handler that records, per key, the resourceVersions it was told about and replays them. */
class Recorder {
  readonly state = new Map<string, string | undefined>()
  readonly lastVersion = new Map<string, string>()
  readonly backwards: Array<string> = []
  events = 0

  private key(obj: unknown): string {
    return EffectResult.getOrElse(deletionHandlingMetaNamespaceKey(obj), () => "<invalid>")
  }

  private observe(obj: KubeObject | undefined, key: string): void {
    const rv = obj === undefined ? undefined : resourceVersion(obj)
    if (rv === undefined) return
    const last = this.lastVersion.get(key)
    if (last !== undefined && Option.getOrElse(compareResourceVersions(rv, last), () => 0) < 0) {
      this.backwards.push(`${key}: ${last} then ${rv}`)
    }
    this.lastVersion.set(key, rv)
  }

  readonly handler: SharedInformer.Handler<KubeObject> = {
    onAdd: (obj) =>
      Effect.sync(() => {
        const key = this.key(obj)
        this.events++
        this.observe(obj, key)
        this.state.set(key, resourceVersion(obj))
      }),
    onUpdate: (_, obj) =>
      Effect.sync(() => {
        const key = this.key(obj)
        this.events++
        this.observe(obj, key)
        this.state.set(key, resourceVersion(obj))
      }),
    onDelete: (obj) =>
      Effect.sync(() => {
        const key = this.key(obj)
        this.events++
        this.observe(unwrapDeleted(obj), key)
        this.state.delete(key)
      })
  }

  /** Differences between the replayed state and the server's objects (at most 3). */
  differences(server: ReadonlyArray<KubeObject>): Array<string> {
    const out: Array<string> = []
    const expected = new Map(server.map((obj) => [this.key(obj), resourceVersion(obj)]))
    for (const [key, rv] of expected) {
      if (!this.state.has(key)) out.push(`${key} missing`)
      else if (this.state.get(key) !== rv) out.push(`${key} at ${this.state.get(key)}, server ${rv}`)
    }
    for (const key of this.state.keys()) if (!expected.has(key)) out.push(`${key} not on the server`)
    return out.slice(0, 3)
  }
}

/**
 * Counts the fibers started with it in their context (and so every fiber they fork, which inherit it) and
 * not yet ended: provided as `Metric.FiberRuntimeMetrics`, whose hooks the runtime calls for each fiber.
 */
class FiberTracker implements Metric.FiberRuntimeMetricsService {
  running = 0
  recordFiberStart(): void {
    this.running++
  }
  recordFiberEnd(): void {
    this.running--
  }
}

const heapMiB = (): number => Math.round(process.memoryUsage().heapUsed / 1048576)

const collectGarbage = (): void => {
  const gc = (globalThis as { gc?: () => void }).gc
  if (gc !== undefined) gc()
}

/**
 * Runs one seed.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Chaos } from "@effect-informers/testkit"
 *
 * const result = Effect.runPromise(Chaos.run({ seed: 1, duration: "10 seconds", pods: 300 }))
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const run = (options: Options): Effect.Effect<Result, ChaosError> =>
  Effect.gen(function*() {
    const problems: Array<string> = []
    const outer = yield* Scope.make()
    const result = yield* Effect.gen(function*() {
      const server = yield* ApiServer.make({ bookmarkInterval: "1 second" }).pipe(
        Effect.mapError((cause) => new ChaosError({ message: `server: ${cause.message}`, cause })),
        Scope.provide(outer)
      )
      yield* ChurnSimulator.seed(server, {
        pods: options.pods ?? 1000,
        namespaces: options.namespaces ?? 10,
        deployments: Math.max(1, Math.floor((options.pods ?? 1000) / 10))
      }).pipe(Effect.mapError((cause) => new ChaosError({ message: `seed: ${cause.message}`, cause })))

      // The informers live in a scope of their own; every fiber they fork is counted (`FiberTracker`).
      const tracker = new FiberTracker()
      const supervised = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
        Effect.provideService(effect, Metric.FiberRuntimeMetrics, tracker)
      const informersScope = yield* Scope.make()
      const stack = Informers.fromKubeConfig(Informers.kubeConfigFromOptions({ server: server.url }), {
        http: { watchInactivityTimeout: options.watchInactivityTimeout ?? "3 seconds" },
        factory: options.backoff === undefined ? {} : { reflector: { backoff: options.backoff } }
      })
      const context = yield* Layer.build(stack).pipe(
        Scope.provide(informersScope),
        supervised,
        Effect.mapError((cause) => new ChaosError({ message: cause.message, cause }))
      )
      const factory = Context.get(context, InformerFactory.InformerFactory)
      const resources = [Resource.pods, Resource.deployments] as ReadonlyArray<Resource.Resource<KubeObject>>
      const early = resources.map(() => new Recorder())
      const late = resources.map(() => new Recorder())
      const informers: Array<SharedInformer.SharedInformer.Service<KubeObject>> = []
      const registrations: Array<SharedInformer.Registration> = []
      let errorsReported = 0
      yield* Effect.gen(function*() {
        for (let i = 0; i < resources.length; i++) {
          // pods through watch-list, deployments through paged LIST + WATCH: both sync paths under fire
          const informer = yield* factory.informerFor(
            resources[i],
            i === 0 ? {} : { reflector: { watchList: false, pageSize: 20 } }
          ).pipe(Effect.orDie)
          informers.push(informer)
          yield* informer.errors.pipe(
            Stream.runForEach(() =>
              Effect.sync(() => {
                errorsReported++
              })
            ),
            Effect.forkIn(informersScope)
          )
          registrations.push(yield* informer.addEventHandler({ name: "early", ...early[i].handler }).pipe(Effect.orDie))
        }
        yield* factory.start
        yield* factory.waitForCacheSync({ timeout: "60 seconds" }).pipe(Effect.orDie)
      }).pipe(supervised)
      collectGarbage()
      const syncedHeap = heapMiB()
      let peakHeap = syncedHeap

      // The relist counters are process-wide (metrics): this seed's relists are the difference.
      const relistTotal = Effect.reduce(
        informers,
        () => 0,
        (total, informer) => Effect.map(relistCount(informer.name), (count) => total + count)
      )
      const relistsBefore = yield* relistTotal

      // Churn, faults and a late handler, all driven by the seed.
      const chaos = yield* Scope.fork(outer, "sequential")
      const churn = yield* ChurnSimulator.make(server, { rate: options.churn ?? 200 })
      let compactions = 0
      const counting: ApiServer.ApiServer.Service = {
        ...server,
        faults: {
          ...server.faults,
          compact: Effect.tap(server.faults.compact, () =>
            Effect.sync(() => {
              compactions++
            }))
        }
      }
      const seeded = <A, E>(effect: Effect.Effect<A, E>, salt: number) =>
        Random.withSeed(effect, `${options.seed}:${salt}`)
      yield* Effect.forkIn(seeded(churn.run, 1), chaos)
      yield* Effect.forkIn(seeded(injectFaults(counting, "chaos"), 2), chaos)
      yield* Effect.forkIn(
        Effect.sync(() => {
          peakHeap = Math.max(peakHeap, heapMiB())
        }).pipe(Effect.repeat(Schedule.spaced("100 millis"))),
        chaos
      )
      const duration = Duration.fromInputUnsafe(options.duration ?? "30 seconds")
      yield* Effect.sleep(Duration.times(duration, 1 / 3))
      yield* Effect.gen(function*() {
        for (let i = 0; i < informers.length; i++) {
          registrations.push(
            yield* informers[i].addEventHandler({ name: "late", ...late[i].handler }).pipe(Effect.orDie)
          )
        }
      }).pipe(supervised)
      yield* Effect.sleep(Duration.times(duration, 2 / 3))
      yield* Scope.close(chaos, Exit.void)

      // Settle: caches equal the server, and every handler has caught up.
      const ended = yield* Clock.currentTimeMillis
      const snapshot = Effect.forEach(resources, (resource) => server.objects.snapshot(resource))
      const converged = Effect.gen(function*() {
        const objects = yield* snapshot
        for (let i = 0; i < resources.length; i++) {
          const cached = yield* informers[i].indexer.list
          if (!compare(informers[i].name, cached, objects[i]).consistent) return false
          if (early[i].differences(objects[i]).length > 0 || late[i].differences(objects[i]).length > 0) return false
        }
        for (const registration of registrations) if ((yield* registration.backlog) > 0) return false
        return true
      })
      const settleTimeout = Duration.fromInputUnsafe(options.settleTimeout ?? "120 seconds")
      const settled = yield* converged.pipe(
        Effect.flatMap((ok) => ok ? Effect.succeed(true) : Effect.fail(false)),
        Effect.retry(Schedule.spaced("200 millis").pipe(Schedule.upTo({ duration: settleTimeout }))),
        Effect.orElseSucceed(() => false)
      )
      const settleSeconds = ((yield* Clock.currentTimeMillis) - ended) / 1000
      const objects = yield* snapshot
      for (let i = 0; i < resources.length; i++) {
        const comparison = compare(informers[i].name, yield* informers[i].indexer.list, objects[i])
        if (!comparison.consistent) {
          problems.push(`${comparison.informer}: cache differs: ${comparison.differences.join("; ")}`)
        }
        for (const [name, recorder] of [["early", early[i]], ["late", late[i]]] as const) {
          const differences = recorder.differences(objects[i])
          if (differences.length > 0) {
            problems.push(`${informers[i].name}: ${name} handler's replay differs: ${differences.join("; ")}`)
          }
          if (recorder.backwards.length > 0) {
            problems.push(
              `${informers[i].name}: ${name} handler saw resourceVersions go backwards: ${
                recorder.backwards.slice(0, 3).join("; ")
              }`
            )
          }
        }
      }
      if (!settled && problems.length === 0) problems.push("did not settle in time")

      const relists = (yield* relistTotal) - relistsBefore

      // Stop the informers: nothing they forked may outlive their scope.
      const fibersRunning = tracker.running
      yield* Scope.close(informersScope, Exit.void)
      const alive = tracker.running
      if (alive > 0) problems.push(`${alive} fibers still running after the informers stopped`)

      collectGarbage()
      const endHeap = heapMiB()
      if (endHeap > syncedHeap * 2 + 64) problems.push(`heap grew from ${syncedHeap} MiB to ${endHeap} MiB`)
      const stats = yield* server.stats
      const faultsByClass = Object.fromEntries(Object.entries(stats.faults).filter(([, n]) => n > 0))
      return {
        seed: options.seed,
        passed: problems.length === 0,
        problems,
        events: early.reduce((n, r) => n + r.events, 0),
        faults: Object.values(stats.faults).reduce((a, b) => a + b, 0),
        faultsByClass,
        compactions,
        relists,
        errorsReported,
        objects: objects.reduce((n, list) => n + list.length, 0),
        settleSeconds,
        fibersRunning,
        heapMiB: { synced: syncedHeap, peak: peakHeap, end: endHeap }
      } satisfies Result
    }).pipe(Effect.ensuring(Scope.close(outer, Exit.void)))
    return result
  })

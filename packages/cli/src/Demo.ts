/**
 * The demo behind `effect-informers demo` (`npm start`): an embedded API server holding a simulated
 * cluster, changed continuously by the churn simulator while faults are injected, watched by informers
 * for pods and deployments through the real HTTP ListerWatcher. When the run ends, churn and faults
 * stop, the informers settle, and the summary says whether every cache equals the server's state.
 *
 * @since 0.1.0
 */
import * as ApiServer from "@effect-informers/testkit/ApiServer"
import * as Chaos from "@effect-informers/testkit/Chaos"
import * as ChurnSimulator from "@effect-informers/testkit/ChurnSimulator"
import type { StatusError } from "effect-informers/ApiError"
import * as InformerFactory from "effect-informers/InformerFactory"
import type { DeletedObject, KubeObject } from "effect-informers/KubeObject"
import { resourceVersion, unwrapDeleted } from "effect-informers/KubeObject"
import * as Informers from "effect-informers/Layer"
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
import * as Option from "effect/Option"
import * as Schedule from "effect/Schedule"
import * as Scope from "effect/Scope"

/**
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /** Defaults to 2,000. */
  readonly pods?: number | undefined
  /** Defaults to 20. */
  readonly namespaces?: number | undefined
  /** Defaults to 200. */
  readonly deployments?: number | undefined
  /** Changes per second. Defaults to 200. */
  readonly churn?: number | undefined
  /** How long churn and faults run. Defaults to 20 seconds. */
  readonly duration?: Duration.Input | undefined
  /** Defaults to `"mild"`. */
  readonly faults?: Chaos.FaultLevel | undefined
  /** How long the informers may take to converge once churn stops. Defaults to 60 seconds. */
  readonly settleTimeout?: Duration.Input | undefined
  /** Called about four times a second while the demo runs. */
  readonly onProgress?: ((progress: Progress) => Effect.Effect<void>) | undefined
  /**
   * Ends the churn early when it completes (Ctrl-C): churn and faults stop, the informers settle (10 seconds
   * at most) and the summary says `interrupted`.
   */
  readonly stop?: Effect.Effect<void> | undefined
}

/**
 * The window `Progress.eventsPerSecond` and the lag figures are computed over: 5 seconds, long enough
 * that a rate does not read 0 between the bursts of a relist.
 *
 * @since 0.2.0
 * @category models
 */
export const progressWindow: Duration.Duration = Duration.seconds(5)

/**
 * What an informer is doing, from its Reflector's `status`: `starting` before its Reflector runs.
 *
 * @since 0.2.0
 * @category models
 */
export type InformerState = "starting" | "syncing" | "watching" | "backing off" | "relisting" | "stopped"

/**
 * @since 0.2.0
 * @category models
 */
export interface InformerProgress {
  /** The informer's name (`pods`, `deployments.apps`). */
  readonly name: string
  readonly cached: number
  readonly state: InformerState
  /** While backing off: the wait left (zero once it is over). */
  readonly backoffLeft?: Duration.Duration | undefined
  /** While backing off: the tag of the error it backs off from. */
  readonly error?: string | undefined
}

/**
 * @since 0.1.0
 * @category models
 */
export interface Progress {
  readonly phase: "seeding" | "syncing" | "churning" | "settling"
  readonly elapsed: Duration.Duration
  readonly informers: ReadonlyArray<InformerProgress>
  /** Notifications the handlers received so far. */
  readonly events: number
  /** Notifications per second over the last `progressWindow` (Clock time). */
  readonly eventsPerSecond: number
  readonly relists: number
  /** Notifications buffered and not yet handled, over all handlers. */
  readonly backlog: number
  /**
   * From a churn write's completion at the server to the handler's notification of it: the mean and the
   * maximum over the notifications of the last `progressWindow`; `undefined` when there were none.
   */
  readonly lag: Duration.Duration | undefined
  readonly maxLag: Duration.Duration | undefined
  readonly faults: number
}

/**
 * @since 0.1.0
 * @category models
 */
export interface Summary {
  /** Every cache equals the server's state. */
  readonly consistent: boolean
  /** Objects on the server at the end. */
  readonly objects: number
  /** Notifications the handlers received. */
  readonly events: number
  /** Relists after the initial one (Gone, errors, fallbacks). */
  readonly relists: number
  /** Faults that took effect. */
  readonly faults: number
  readonly faultsByClass: { readonly [fault: string]: number }
  readonly churn: ChurnSimulator.Counts
  readonly informers: ReadonlyArray<Chaos.InformerResult>
  /** Seconds from the end of churn until every cache matched (or the settle timeout). */
  readonly settleSeconds: number
  /** `stop` ended the churn before its duration. */
  readonly interrupted: boolean
  /** Seconds from the start to the end of churn. */
  readonly churnSeconds: number
}

/**
 * The demo could not run (the server did not start, the seed failed).
 *
 * @since 0.1.0
 * @category errors
 */
export class DemoError extends Data.TaggedError("DemoError")<{ readonly message: string; readonly cause?: unknown }> {}

interface Watched {
  readonly name: string
  readonly resource: Resource.Resource<KubeObject>
  readonly informer: SharedInformer.SharedInformer.Service<KubeObject>
  readonly registration: SharedInformer.Registration
}

/**
 * Runs the demo and returns its summary. Needs a Scope for the server, the informers and the churn.
 *
 * @since 0.1.0
 * @category constructors
 */
export const run = (options: Options = {}): Effect.Effect<Summary, DemoError, Scope.Scope> =>
  Effect.gen(function*() {
    const started = yield* Clock.currentTimeMillis
    const elapsed = Effect.map(Clock.currentTimeMillis, (now) => Duration.millis(now - started))
    const report = options.onProgress ?? (() => Effect.void)
    const level = options.faults ?? "mild"

    const server = yield* ApiServer.make({ bookmarkInterval: "2 seconds" }).pipe(
      Effect.mapError((cause) =>
        new DemoError({ message: `the embedded API server did not start: ${cause.message}`, cause })
      )
    )
    yield* report({
      phase: "seeding",
      elapsed: yield* elapsed,
      informers: [],
      events: 0,
      eventsPerSecond: 0,
      relists: 0,
      backlog: 0,
      lag: undefined,
      maxLag: undefined,
      faults: 0
    })
    yield* ChurnSimulator.seed(server, {
      pods: options.pods ?? 2000,
      namespaces: options.namespaces ?? 20,
      deployments: options.deployments ?? 200
    }).pipe(Effect.mapError((cause) => new DemoError({ message: `seeding failed: ${cause.message}`, cause })))

    // The informers talk to the server over HTTP, exactly as they would to a cluster.
    const stack = Informers.fromKubeConfig(Informers.kubeConfigFromOptions({ server: server.url }), {
      http: { watchInactivityTimeout: "5 seconds" }
    })
    const context = yield* Layer.build(stack).pipe(
      Effect.mapError((cause) => new DemoError({ message: cause.message, cause }))
    )
    const factory = Context.get(context, InformerFactory.InformerFactory)
    let events = 0
    // the lag: when each churn write completed (by the resourceVersion it wrote), and when the handler saw it
    const writtenAt = new Map<string, number>()
    const lags: Array<{ readonly at: number; readonly millis: number }> = []
    const count = (obj: DeletedObject<KubeObject>) =>
      Effect.map(Clock.currentTimeMillis, (now) => {
        events++
        const rv = resourceVersion(unwrapDeleted(obj))
        const written = rv === undefined ? undefined : writtenAt.get(rv)
        if (written !== undefined) {
          writtenAt.delete(rv!)
          lags.push({ at: now, millis: now - written })
        }
      })
    const watched: Array<Watched> = []
    for (const resource of [Resource.pods, Resource.deployments] as ReadonlyArray<Resource.Resource<KubeObject>>) {
      const informer = yield* factory.informerFor(resource).pipe(Effect.orDie)
      const registration = yield* informer.addEventHandler({
        name: "demo-counter",
        onAdd: count,
        onUpdate: (_, obj) => count(obj),
        onDelete: count
      }).pipe(Effect.orDie)
      watched.push({ name: informer.name, resource, informer, registration })
    }
    // The relist counters are process-wide metrics keyed by informer name: count this run's only.
    let relistsBefore = 0
    for (const w of watched) relistsBefore += yield* Chaos.relistCount(w.name)

    const window = Duration.toMillis(progressWindow)
    const samples: Array<{ readonly at: number; readonly events: number }> = []
    const stateOf = (status: Option.Option<Reflector.Status>, now: number) => {
      if (Option.isNone(status)) return { state: "starting" as const }
      switch (status.value._tag) {
        case "Syncing":
          return { state: "syncing" as const }
        case "Relisting":
          return { state: "relisting" as const }
        case "Watching":
          return { state: "watching" as const }
        case "Stopped":
          return { state: "stopped" as const }
        case "BackingOff":
          return {
            state: "backing off" as const,
            backoffLeft: Duration.millis(Math.max(0, status.value.until - now)),
            error: status.value.error
          }
      }
    }
    const progress = (phase: Progress["phase"]) =>
      Effect.gen(function*() {
        const now = yield* Clock.currentTimeMillis
        const informers: Array<InformerProgress> = []
        let backlog = 0
        let relists = -relistsBefore
        for (const w of watched) {
          informers.push({
            name: w.name,
            cached: yield* w.informer.indexer.size,
            ...stateOf(yield* w.informer.status, now)
          })
          backlog += yield* w.registration.backlog
          relists += yield* Chaos.relistCount(w.name)
        }
        const stats = yield* server.stats
        // the rate over the window: the oldest sample still inside it (or the first one) to now
        samples.push({ at: now, events })
        while (samples.length > 1 && samples[1].at <= now - window) samples.shift()
        const oldest = samples[0]
        const rate = now > oldest.at ? ((events - oldest.events) * 1000) / (now - oldest.at) : 0
        while (lags.length > 0 && lags[0].at <= now - window) lags.shift()
        for (const [rv, at] of writtenAt) {
          if (at > now - 60_000) break
          writtenAt.delete(rv) // a write whose notification never came (coalesced by a relist)
        }
        const lagSum = lags.reduce((sum, l) => sum + l.millis, 0)
        yield* report({
          phase,
          elapsed: Duration.millis(now - started),
          informers,
          events,
          eventsPerSecond: Math.round(rate),
          relists,
          backlog,
          lag: lags.length === 0 ? undefined : Duration.millis(lagSum / lags.length),
          maxLag: lags.length === 0 ? undefined : Duration.millis(lags.reduce((max, l) => Math.max(max, l.millis), 0)),
          faults: Object.values(stats.faults).reduce((a, b) => a + b, 0)
        })
      })

    const phase = { current: "syncing" as Progress["phase"] }
    yield* Effect.suspend(() => progress(phase.current)).pipe(
      Effect.repeat(Schedule.spaced("250 millis")),
      Effect.forkScoped
    )
    yield* factory.start
    yield* factory.waitForCacheSync({ timeout: "60 seconds" }).pipe(
      Effect.mapError((cause) => new DemoError({ message: cause.message, cause }))
    )

    // Churn and faults run in a scope of their own, closed when the run ends.
    phase.current = "churning"
    const outer = yield* Effect.scope
    const chaos = yield* Scope.fork(outer, "sequential")
    // the churn's writes, each remembered by the resourceVersion it wrote, for the lag
    const wrote = <A>(write: Effect.Effect<A, StatusError>): Effect.Effect<A, StatusError> =>
      Effect.tap(write, () =>
        Effect.zipWith(server.resourceVersion, Clock.currentTimeMillis, (rv, now) => {
          writtenAt.set(rv, now)
        }))
    const tracked: ApiServer.ApiServer.Service = {
      ...server,
      objects: {
        ...server.objects,
        create: (resource, object, createOptions) => wrote(server.objects.create(resource, object, createOptions)),
        update: (resource, object) => wrote(server.objects.update(resource, object)),
        delete: (resource, ref, deleteOptions) => wrote(server.objects.delete(resource, ref, deleteOptions))
      }
    }
    const churn = yield* ChurnSimulator.make(tracked, { rate: options.churn ?? 200 })
    yield* Effect.forkIn(churn.run, chaos)
    yield* Effect.forkIn(Chaos.injectFaults(server, level), chaos)
    const interrupted = yield* Effect.raceFirst(
      Effect.as(Effect.sleep(options.duration ?? "20 seconds"), false),
      Effect.as(options.stop ?? Effect.never, true)
    )
    const churnEnded = yield* Clock.currentTimeMillis
    yield* Scope.close(chaos, Exit.void)

    // Settle: wait until every cache equals the server's state.
    phase.current = "settling"
    const check = Effect.forEach(watched, (w) =>
      Effect.zipWith(w.informer.indexer.list, server.objects.snapshot(w.resource), (cached, objects) =>
        Chaos.compare(w.name, cached, objects)))
    const settleTimeout = Duration.fromInputUnsafe(options.settleTimeout ?? "60 seconds").pipe(
      (timeout) =>
        interrupted ? Duration.min(timeout, Duration.seconds(10)) : timeout
    )
    const results = yield* check.pipe(
      Effect.flatMap((results) =>
        results.every((r) =>
            r.consistent
          )
          ? Effect.succeed(results)
          : Effect.fail(results)
      ),
      Effect.retry(Schedule.spaced("200 millis").pipe(Schedule.upTo({ duration: settleTimeout }))),
      Effect.catch((results) => Effect.succeed(results))
    )
    const settled = yield* Clock.currentTimeMillis
    yield* progress("settling")
    const stats = yield* server.stats
    let relists = -relistsBefore
    for (const w of watched) relists += yield* Chaos.relistCount(w.name)
    const faultsByClass = Object.fromEntries(Object.entries(stats.faults).filter(([, n]) => n > 0))
    return {
      consistent: results.every((r) => r.consistent),
      objects: results.reduce((n, r) => n + r.server, 0),
      events,
      relists,
      faults: Object.values(stats.faults).reduce((a, b) => a + b, 0),
      faultsByClass,
      churn: yield* churn.counts,
      informers: results,
      settleSeconds: (settled - churnEnded) / 1000,
      interrupted,
      churnSeconds: (churnEnded - started) / 1000
    }
  })

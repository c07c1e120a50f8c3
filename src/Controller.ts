/**
 * A Controller reconciles objects towards what they should be, one key at a time, as controller-runtime's
 * and kube-rs's controllers do, on the library's informers and `WorkQueue`:
 *
 * - **Sources.** A primary resource (`for`, controller-runtime's `For`): each of its events queues the
 *   object's key. `owns` child resources: an event of a child queues its owner's key, found by the child's
 *   `ownerReferences` (the controller reference only, unless `everyOwner`) that match the primary's group
 *   and kind. `watches` any other resource with a function from its objects to primary keys. Each source
 *   may have predicates (`generationChanged`, `labelsChanged`, ... or your own) that skip no-op events.
 *   Events from an informer's initial list, and updates that change nothing (a resync), are queued at
 *   `WorkQueue.LowPriority`, so that a fresh event overtakes a backlog.
 * - **Reconcile.** `reconcile(request)` returns an Effect: one reconcile per key at a time (the queue never
 *   hands a key to two workers), `concurrency` workers. It ends with `done` (the default), `requeue`
 *   (again, after the rate limiter's delay) or `requeueAfter(duration)` (a zero or negative duration is
 *   `requeue`: never a hot loop). A failure (or a defect) is logged with its key and requeued through the
 *   rate limiter; `errorPolicy` can decide otherwise (e.g. `done` for errors that will not heal). The
 *   default limiter is client-go's `DefaultControllerRateLimiter` (`RateLimiter.defaultController`): per
 *   key 5 ms doubling to 1,000 s, and overall 10 retries a second after a burst of 100, whichever is later,
 *   so that a mass failure (every key failing at once) retries at 10 a second, not at full speed.
 * - **Read-your-own-writes.** Every write the library's `Client` makes inside a reconcile is recorded with
 *   its resourceVersion (`Consistency.Writes`); a key is not reconciled again until the caches of the
 *   resources it wrote have caught up to those versions (Kubernetes 1.36's KEP-5647 mechanism). A stale key
 *   is requeued through the rate limiter (counted in `Metrics.staleSkips`). The wait is bounded: after
 *   `readYourWrites.maxWait` (10 s) the key is reconciled anyway, with a warning, so a write the informer
 *   never shows (filtered out, or deleted at once, and no bookmark since) delays a key but never blocks it.
 *   resourceVersions are compared only as KEP-5504 (Kubernetes 1.35) allows: decimal strings; any other
 *   form never blocks.
 * - **Lifecycle.** `make` registers the handlers, waits until every source has synced (`cacheSyncTimeout`,
 *   2 minutes), then starts the workers in the current scope. Closing the scope stops taking work at once,
 *   lets the reconciles in progress finish within `shutdownTimeout` (30 s; keep it inside a leader lease's
 *   renew margin), interrupts what is still running, then removes the handlers. A reconcile that has not
 *   ended 1 s after its interruption (an uninterruptible region) is logged with its key, counted in
 *   `Metrics.abandonedReconciles` and left behind: the scope closes anyway (its key stays taken in the
 *   queue until it ends). The informers belong to an outer scope (their Layer), so they stop after the
 *   controller, never before. `reconcileTimeout` (unset by default, as controller-runtime's) bounds each
 *   reconcile: one that runs longer is interrupted and requeued as a failure (`Metrics.reconcileTimeouts`).
 * - **At runtime.** `controller.watch(source)` adds an `owns` or `watches` source (e.g. for a resource that
 *   appeared) until its scope closes. `controller.quiet` completes when nothing is left to do: the queue
 *   settled and every handler caught up, for tests that assert after convergence without sleeping.
 * - **Metrics.** controller-runtime's, by `controller`, in `Metrics` (`reconciles`, `reconcileErrors`,
 *   `reconcileDuration`, ...; docs/METRICS.md), beside the queue's (`Metrics.workQueueDepth`, ...).
 *
 * @example
 * ```ts
 * import { Controller, Informers } from "effect-informers"
 * import { Effect, Layer, Option } from "effect"
 *
 * const program = Effect.gen(function*() {
 *   const configMaps = yield* Informers.ConfigMaps
 *   yield* Controller.make({
 *     name: "configmap-logger",
 *     for: configMaps,
 *     reconcile: (request) =>
 *       Effect.gen(function*() {
 *         const current = yield* Effect.option(configMaps.lister.byNamespace(request.namespace ?? "").get(request.name))
 *         yield* Effect.log(`${request.key}: ${Option.isSome(current) ? "present" : "gone"}`)
 *         return Controller.done
 *       })
 *   })
 *   return yield* Effect.never
 * }).pipe(Effect.scoped)
 *
 * const main = program.pipe(Effect.provide(Informers.configMaps().pipe(Layer.provide(Informers.live()))))
 * ```
 *
 * @since 0.2.0
 */
import type * as Duration from "effect/Duration"
import type * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import * as internal from "./internal/controller/controller.js"
import * as workers from "./internal/controller/workers.js"
import type { KubeObject } from "./KubeObject.js"
import type * as RateLimiter from "./RateLimiter.js"
import type { Resource } from "./Resource.js"
import type * as Sharding from "./Sharding.js"
import type { SharedInformer } from "./SharedInformer.js"
import type * as WorkQueue from "./WorkQueue.js"

// -------------------------------------------------------------------------------------------------
// requests and results
// -------------------------------------------------------------------------------------------------

/**
 * What is reconciled: a primary object by namespace and name (the object itself may be gone).
 *
 * @since 0.2.0
 * @category models
 */
export interface Request {
  /** `namespace/name`, or `name` for a cluster-scoped object: the queue's key. */
  readonly key: string
  /** `undefined` for a cluster-scoped object. */
  readonly namespace: string | undefined
  readonly name: string
}

/**
 * How a reconcile ended.
 *
 * @since 0.2.0
 * @category models
 */
export type Result =
  | { readonly _tag: "Done" }
  | { readonly _tag: "Requeue" }
  | { readonly _tag: "RequeueAfter"; readonly delay: Duration.Duration }

/**
 * Reconciled: the key's failures are forgotten, it waits for its next event.
 *
 * @since 0.2.0
 * @category results
 */
export const done: Result = workers.done

/**
 * Reconcile again after the rate limiter's delay for this key (its failures are not forgotten).
 *
 * @since 0.2.0
 * @category results
 */
export const requeue: Result = workers.requeue

/**
 * Reconcile again after `delay` (the key's failures are forgotten), e.g. to check back on something slow.
 * A zero or negative `delay` asks for no delay of its own: it is `requeue` (after the rate limiter's delay,
 * the key's failures kept), never an immediate re-run.
 *
 * @since 0.2.0
 * @category results
 */
export const requeueAfter: (delay: Duration.Input) => Result = internal.requeueAfter

/**
 * The request of a key (`namespace/name` or `name`).
 *
 * @example
 * ```ts
 * import { Controller } from "effect-informers"
 *
 * console.log(Controller.request("default/web")) // { key: "default/web", namespace: "default", name: "web" }
 * ```
 *
 * @since 0.2.0
 * @category constructors
 */
export const request: (key: string) => Request = workers.request

/**
 * The request of an object (by its namespace and name), `undefined` for an object without a name.
 *
 * @since 0.2.0
 * @category constructors
 */
export const requestOf: (obj: unknown) => Request | undefined = internal.requestOf

// -------------------------------------------------------------------------------------------------
// predicates
// -------------------------------------------------------------------------------------------------

/**
 * Which events of a source are worth a reconcile. A missing member lets its events through.
 *
 * @since 0.2.0
 * @category predicates
 */
export interface Predicate<A> {
  readonly create?: ((obj: A) => boolean) | undefined
  readonly update?: ((oldObj: A, newObj: A) => boolean) | undefined
  readonly delete?: ((obj: A) => boolean) | undefined
}

/**
 * Updates pass when `metadata.generation` changed: status-only and metadata-only writes are skipped
 * (controller-runtime's `GenerationChangedPredicate`, with its caveat: labels, annotations and finalizers
 * of custom resources do not bump the generation).
 *
 * @since 0.2.0
 * @category predicates
 */
export const generationChanged: Predicate<KubeObject> = internal.generationChanged

/**
 * Updates pass when `metadata.resourceVersion` changed: resyncs are skipped.
 *
 * @since 0.2.0
 * @category predicates
 */
export const resourceVersionChanged: Predicate<KubeObject> = internal.resourceVersionChanged

/**
 * Updates pass when the labels changed.
 *
 * @since 0.2.0
 * @category predicates
 */
export const labelsChanged: Predicate<KubeObject> = internal.labelsChanged

/**
 * Updates pass when the annotations changed.
 *
 * @since 0.2.0
 * @category predicates
 */
export const annotationsChanged: Predicate<KubeObject> = internal.annotationsChanged

/**
 * Every event passes when `f` holds for its object (the new one for updates).
 *
 * @example
 * ```ts
 * import { Controller } from "effect-informers"
 *
 * const labelled = Controller.filter((obj: { metadata?: { labels?: Record<string, string> } }) =>
 *   obj.metadata?.labels?.["replicate"] === "true"
 * )
 * ```
 *
 * @since 0.2.0
 * @category predicates
 */
export const filter: <A>(f: (obj: A) => boolean) => Predicate<A> = internal.filter

/**
 * Passes when any of `predicates` passes.
 *
 * @since 0.2.0
 * @category predicates
 */
export const or: <A>(...predicates: ReadonlyArray<Predicate<A>>) => Predicate<A> = internal.or

/**
 * Passes when `predicate` does not.
 *
 * @since 0.2.0
 * @category predicates
 */
export const not: <A>(predicate: Predicate<A>) => Predicate<A> = internal.not

// -------------------------------------------------------------------------------------------------
// sources and options
// -------------------------------------------------------------------------------------------------

/**
 * A resource and its shared informer: what `Informers.tag(resource)` provides (`Informers.Informed`).
 *
 * @since 0.2.0
 * @category models
 */
export interface Source<A> {
  readonly resource: Resource<A>
  readonly informer: SharedInformer.Service<A>
}

/**
 * A child resource whose objects are mapped to their owners.
 *
 * @since 0.2.0
 * @category models
 */
export interface Owns<A> {
  readonly source: Source<A>
  /** Every owner reference of the primary's kind, not only the controller one. */
  readonly everyOwner?: boolean | undefined
  readonly predicates?: ReadonlyArray<Predicate<A>> | undefined
}

/**
 * Any other resource, mapped to primary keys by `map` (for an update: the keys of the old and of the new
 * object). `map` may be an Effect, e.g. to look keys up in a cache.
 *
 * @since 0.2.0
 * @category models
 */
export interface Watches<A> {
  readonly source: Source<A>
  readonly map: (obj: A) => Iterable<Request | string> | Effect.Effect<Iterable<Request | string>>
  readonly predicates?: ReadonlyArray<Predicate<A>> | undefined
}

/**
 * @since 0.2.0
 * @category models
 */
export interface Options<A, E, R> {
  /** Names the controller in logs and metrics. */
  readonly name: string
  /** The primary resource. */
  readonly for: Source<A>
  /** Predicates of the primary's events. */
  readonly predicates?: ReadonlyArray<Predicate<A>> | undefined
  /** Child resources: an event of a child queues its owner's key (controller-runtime's `Owns`). */
  readonly owns?: ReadonlyArray<Owns<any>> | undefined
  /** Other resources, mapped to primary keys by their `map` (controller-runtime's `Watches`). */
  readonly watches?: ReadonlyArray<Watches<any>> | undefined
  /** Reconciles one key; ends with a `Result` (`done` when it returns nothing). */
  readonly reconcile: (request: Request) => Effect.Effect<Result | void, E, R>
  /** Workers: reconciles of different keys at the same time. Defaults to 1. */
  readonly concurrency?: number | undefined
  /**
   * The delays of failed keys. Defaults to `RateLimiter.defaultController` (client-go's: per key 5 ms doubling
   * to 1,000 s, overall 10 per second after a burst of 100). controller-runtime's priority queue uses the
   * per-key half alone: `RateLimiter.exponential()`.
   */
  readonly rateLimiter?: RateLimiter.RateLimiter | undefined
  /** What a failure leads to. Defaults to `requeue` (through the rate limiter). */
  readonly errorPolicy?: ((error: E, request: Request) => Result) | undefined
  /** Read-your-own-writes; `false` turns it off. */
  readonly readYourWrites?: false | { readonly maxWait?: Duration.Input | undefined } | undefined
  /** Within a priority, keys are taken round robin across namespaces (default), or FIFO (`false`). */
  readonly fairness?: boolean | undefined
  /** How long `make` (and `watch`) waits for the sources to sync. Defaults to 2 minutes. */
  readonly cacheSyncTimeout?: Duration.Input | undefined
  /**
   * How long one reconcile may run (controller-runtime's `ReconciliationTimeout`). Unset by default, as
   * controller-runtime's: no bound. A reconcile that runs longer is interrupted, logged with its key (a
   * warning), counted in `Metrics.reconcileTimeouts` and, as controller-runtime counts it, as an error
   * (`reconcileErrors`, `reconciles{result="error"}`), and requeued through the rate limiter (the
   * `errorPolicy` is not asked: there is no error to decide on). Timed by the `Clock`. A reconcile in an
   * uninterruptible region runs on to the region's end while its worker waits (its key is never handed out
   * twice), and is interrupted there (Effect discards what an interrupted region returns): a timeout too. (At
   * shutdown, one still running is left behind as any other: `shutdownTimeout`.)
   */
  readonly reconcileTimeout?: Duration.Input | undefined
  /**
   * How long reconciles in progress may run on at shutdown. Defaults to 30 s. Then they are interrupted;
   * one still running 1 s later (uninterruptible) is reported and left behind.
   */
  readonly shutdownTimeout?: Duration.Input | undefined
  /**
   * Reconcile only the keys this replica owns (`Sharding`'s service): a key is reconciled inside
   * `whileOwned` (skipped when another member owns it, interrupted as soon as it leaves), and the keys a
   * change of the assignment gives this member are queued again. Every replica keeps every cache warm.
   */
  readonly sharding?: Sharding.Sharding.Service | undefined
  /**
   * Reconcile only while this replica leads (`LeaderElection`'s service, or anything with its
   * `whileLeading`): the caches and the queue stay warm on every replica; the workers run during each
   * leadership term and stop within `stepDownTimeout` of its end (see `LeaderElectionOptions`).
   */
  readonly leaderElection?: LeaderElectionOptions | undefined
}

/**
 * The controller's `leaderElection` option. The sources sync and the queue fills on every replica (warm
 * standby); the workers start when this replica becomes leader, each term in a scope of its own, and within
 * its `Term`: a worker checks it before each key it takes (a key taken when the term is stale is not
 * reconciled, the term ends, and the key goes back to the queue for the next term), and the reconcile's
 * `Client` writes are fenced by it. When a term ends, keys are no longer taken and the reconciles in
 * progress may finish within `stepDownTimeout`, then are interrupted. The controller's own end is a term's
 * end too: with leader election, `stepDownTimeout` bounds the reconciles in progress at shutdown, not
 * `shutdownTimeout` (a leader must stop within its lease's margin whatever the cause). A reconcile still
 * running 1 s after its interruption (uninterruptible) is reported and left behind: the term ends anyway,
 * and its key is not handed out again before that reconcile ends.
 *
 * @since 0.2.0
 * @category models
 */
export interface LeaderElectionOptions {
  /** Runs `work` in each term while this replica leads (`LeaderElection`'s `whileLeading`). */
  readonly whileLeading: <A, E2, R2>(
    work: Effect.Effect<A, E2, R2>
  ) => Effect.Effect<never, E2, Exclude<R2, Scope.Scope>>
  /**
   * How long the reconciles in progress may run on when a term ends (and at the controller's end). Defaults
   * to 2 s, inside client-go's 5 s margin between the renew deadline and the lease duration.
   */
  readonly stepDownTimeout?: Duration.Input | undefined
}

/**
 * A running controller.
 *
 * @since 0.2.0
 * @category models
 */
export interface Controller {
  readonly name: string
  /** Queues a key (as an event would). */
  readonly enqueue: (request: Request | string, options?: WorkQueue.AddOptions) => Effect.Effect<void>
  /** The controller's queue. */
  readonly queue: WorkQueue.WorkQueue<string>
  /** Reconciles in progress. */
  readonly active: Effect.Effect<number>
  /**
   * Completes when the controller is quiet, for tests: no key ready in the queue, none being reconciled,
   * none whose delay (`requeueAfter`, a failure's backoff) has passed, and every source's handler has
   * handled every notification its informer has sent it, all at one instant. Keys waiting for a later time
   * do not count: under `TestClock`, move the clock, then await `quiet` again. So a chain (an event, a
   * reconcile that writes, the write's event mapped back to a key, its reconcile) has run to its end when
   * `quiet` completes, without sleeping.
   *
   * It waits on signals (the queue's last key done, a handler's last notification handled), then lets 16
   * scheduler turns pass (`Effect.yieldNow`, no Clock time) and checks that nothing moved: an event a
   * reconcile's write caused travels from the API server (or a fake) to its handler in a few turns that
   * neither the queue nor the handlers see. It knows nothing of events the API server has not sent yet. It
   * needs the workers running (with `leaderElection`, while leading); once the controller stops, it completes
   * at once. Bound it with `Effect.timeout` if the controller may never settle.
   *
   * @example
   * ```ts
   * import { Controller } from "effect-informers"
   * import { Effect } from "effect"
   *
   * declare const controller: Controller.Controller
   *
   * const converged = Effect.gen(function*() {
   *   yield* controller.enqueue("default/web")
   *   yield* controller.quiet // every reconcile it led to has run
   * })
   * ```
   */
  readonly quiet: Effect.Effect<void>
  /**
   * Adds a source while the controller runs (controller-runtime's `Controller.Watch` after start): an
   * `Owns` (it has no `map`) or a `Watches`, with its predicates, as `make` registers them. Returns once the
   * source has synced (its initial list queued: `cacheSyncTimeout`); fails with `ControllerError` when it
   * does not sync in time, its informer has stopped, or the controller has stopped. Closing the scope removes
   * it: its events queue no keys any more (a key already queued stays). The controller's end removes it too.
   */
  readonly watch: <B>(source: Owns<B> | Watches<B>) => Effect.Effect<void, ControllerError, Scope.Scope>
}

// -------------------------------------------------------------------------------------------------
// errors
// -------------------------------------------------------------------------------------------------

/**
 * The controller could not start, or could not add a source at runtime (`watch`): a source did not sync
 * within `cacheSyncTimeout` (`CacheSyncTimeout`), or its informer stopped first (`SourceStopped`), or the
 * controller had stopped (`ControllerStopped`, `watch` only).
 *
 * @since 0.2.0
 * @category errors
 */
export const ControllerError: typeof internal.ControllerError = internal.ControllerError

/**
 * @since 0.2.0
 * @category errors
 */
export type ControllerError = internal.ControllerError

// -------------------------------------------------------------------------------------------------
// constructors
// -------------------------------------------------------------------------------------------------

/**
 * Starts a controller in the current scope (see the module's documentation); it runs until the scope
 * closes. Fails with `ControllerError` when a source does not sync.
 *
 * @since 0.2.0
 * @category constructors
 */
export const make: <A, E, R>(
  options: Options<A, E, R>
) => Effect.Effect<Controller, ControllerError, Scope.Scope | R> = internal.make

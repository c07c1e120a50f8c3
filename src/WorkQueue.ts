/**
 * A controller's work queue: client-go's `util/workqueue` (the base queue, the delaying queue, the
 * rate-limiting queue) and controller-runtime's priority queue, in one service.
 *
 * **Keys, not objects.** Handlers add keys (`"namespace/name"`, as `Indexer.metaNamespaceKey` gives) and
 * workers read the object from the informer's cache when they process the key: the queue coalesces, so
 * what a worker sees is the latest state, whatever happened in between. Keys are strings by default.
 * Other values need `key`: a function giving each value its string identity (Go's comparable keys); two
 * values with the same identity are the same key, and the queue hands out the value of the add that
 * queued it.
 *
 * **Guarantees** (client-go's package doc):
 * - *stingy*: a key waiting is in the queue once; any number of adds before it is handed out collapse
 *   into one (the dirty set);
 * - *one worker per key*: a key being processed (handed out by `get`, not yet `done`) is never handed
 *   to a second worker; adding it meanwhile marks it dirty, and `done` queues it again, for exactly one
 *   more round;
 * - *ordered*: higher priority first; within a priority, FIFO by the time a key became ready (a key
 *   made dirty again while processing is queued at `done`); with `group`, round robin across groups
 *   within a priority, FIFO within a group.
 *
 * **Priorities** (controller-runtime's priority queue): `add(key, { priority })`, higher first, default
 * 0. A key added again with a higher priority moves up (to the end of its new priority); a lower one
 * never moves it down. Add the keys of an informer's initial list (`onAdd`'s `isInInitialList`) at
 * `LowPriority`, so that a fresh event overtakes a resync or startup backlog.
 *
 * **Fairness** (`group`): with `group: (key) => namespace`, a busy namespace cannot starve the others: each
 * take serves the next group in a ring. controller-runtime has no equivalent yet (its PR #3261 proposes
 * one, default off).
 *
 * **Delays**: `addAfter(key, delay)` and `add(key, { after })` make the key ready once the delay has passed,
 * read from the queue's `Clock` (`TestClock` drives it); one timer fiber in the queue's scope sleeps until
 * the earliest. A key waiting for a delay is not in `len` nor in the depth. A key already waiting only
 * ever moves earlier, and keeps the higher priority of its adds. Unlike client-go (where a delayed copy
 * and a queued copy of a key live side by side, so the key is processed twice), a key has one entry,
 * as in controller-runtime: adding a delayed key without delay makes it ready at once and cancels the
 * delay, and a delay asked for a key that is already ready is ignored.
 *
 * **Rate limiting**: `addRateLimited(key)` waits what the queue's `RateLimiter` says for this key's next
 * failure (default `RateLimiter.defaultController`: per key 5 ms doubling to 1000 s, overall 10 per second
 * after a burst of 100, client-go's `DefaultTypedControllerRateLimiter`); `add(key, { rateLimited: true,
 * after })` takes the shorter of the two. Call `forget(key)` when the key succeeds: until then its
 * failures count on (and its counter is kept). `numRequeues(key)` says how many failures are counted.
 * controller-runtime's priority queue uses the exponential alone: pass `rateLimiter:
 * RateLimiter.exponential()` for that.
 *
 * **Shutdown**: `shutdown` stops the queue at once: adds are ignored from then on and delayed keys
 * dropped, while keys already queued are still handed out until none is left (client-go); then `get`
 * fails with `WorkQueueShutdownError`, so a worker loop ends with it (`runWorker` then succeeds;
 * `Effect.forever(queue.process(f))` fails with it: catch it to end the loop). A key processing at
 * shutdown and added again before is
 * queued at its `done`, as before. `shutdownWithDrain` does the same and waits until no key is being
 * processed (workers must call `done`); `shutdown` meanwhile releases the wait. Closing the queue's scope
 * runs `shutdown`.
 *
 * **Workers**: `runWorker(f)` is a worker loop: it processes keys with `f` until the queue is shut down
 * and empty (then succeeds), and fails with `f`'s failure (so `f` handles its own errors, typically with
 * `addRateLimited`). `process(f)` is one round of it: `get`, `f`, then `done`. After a success or a
 * failure of `f` the key is `done`. A worker interrupted while it holds a key (while `f` runs, or between
 * the hand-over and `f`) queues the key again (unless the queue is shutting down): its round was cut
 * short, as a Go controller's reconcile that returns because its context was cancelled is requeued. A
 * worker interrupted while it waits takes no key. With `get` and `done` you own all that: a key that
 * never sees its `done` stays processing.
 *
 * **Metrics** (client-go's names, as `effect/Metric`s, each tagged `name` with the queue's `name`, and only
 * for a queue with a name): `workqueue_depth` (dirty keys: ready, or added while processing),
 * `workqueue_adds_total`, `workqueue_queue_duration_seconds`, `workqueue_work_duration_seconds`,
 * `workqueue_unfinished_work_seconds` and `workqueue_longest_running_processor_seconds` (set every 500 ms
 * until shutdown), `workqueue_retries_total` (adds with a positive delay, as controller-runtime counts;
 * client-go also counts `AddAfter` with no delay). Histograms use component-base's buckets (1e-8 s up,
 * times 10, ten buckets). They are `Metrics.workQueueDepth`, `Metrics.workQueueAdds`, ... (docs/METRICS.md).
 *
 * The machinery (plain synchronous structures, no lock) is in `internal/controller/workQueue.ts`.
 *
 * @since 0.2.0
 */
import * as Context from "effect/Context"
import type * as Duration from "effect/Duration"
import type * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import * as internal from "./internal/controller/workQueue.js"
import * as RateLimiter from "./RateLimiter.js"

// -------------------------------------------------------------------------------------------------
// models
// -------------------------------------------------------------------------------------------------

/**
 * How a key is added. All fields optional: `add(key)` is a plain add at priority 0.
 *
 * @since 0.2.0
 * @category models
 */
export interface AddOptions {
  /** Higher is handed out first. Defaults to 0; `LowPriority` is -100. */
  readonly priority?: number | undefined
  /** Ready only after this delay (zero or negative: now). */
  readonly after?: Duration.Input | undefined
  /** Delay by the rate limiter's `when` for this key (the shorter of the two with `after`). */
  readonly rateLimited?: boolean | undefined
}

/**
 * A key handed out with the priority it was queued at (to requeue it at the same priority).
 *
 * @since 0.2.0
 * @category models
 */
export interface Item<K> {
  readonly key: K
  readonly priority: number
}

/**
 * @since 0.2.0
 * @category models
 */
export interface Options<K> {
  /** Names the queue in its metrics (`name` tag) and its shutdown error. No name: no metrics (client-go). */
  readonly name?: string | undefined
  /**
   * The string identity of a key: keys with the same identity are the same key. Needed unless keys are
   * strings (then the key is its own identity).
   */
  readonly key?: ((key: K) => string) | undefined
  /**
   * The fairness group of a key, e.g. its namespace: within a priority, keys are taken round robin
   * across groups (FIFO within a group). Called once when a key enters the queue. No group: FIFO.
   */
  readonly group?: ((key: K) => string) | undefined
  /** The policy of `addRateLimited`. Defaults to `RateLimiter.defaultController`. */
  readonly rateLimiter?: RateLimiter.RateLimiter | undefined
}

/**
 * A work queue of keys of type `K`. Every operation is one synchronous step inside; waiting workers are
 * woken by the add that gives them a key.
 *
 * @since 0.2.0
 * @category models
 */
export interface WorkQueue<K = string> {
  readonly name: string | undefined
  /** Queues `key` (once: collapsed into a waiting add), or marks it dirty while it is processing. */
  readonly add: (key: K, options?: AddOptions) => Effect.Effect<void>
  /** `add` for each key, in order, in one step. */
  readonly addAll: (keys: Iterable<K>, options?: AddOptions) => Effect.Effect<void>
  /** `add(key, { after: delay })`. */
  readonly addAfter: (key: K, delay: Duration.Input) => Effect.Effect<void>
  /** `add(key, { rateLimited: true, priority })`: after the rate limiter's delay for this key's next failure. */
  readonly addRateLimited: (key: K, options?: { readonly priority?: number | undefined }) => Effect.Effect<void>
  /** Stops counting `key`'s failures in the rate limiter (call it when the key succeeded). */
  readonly forget: (key: K) => Effect.Effect<void>
  /** The failures of `key` the rate limiter counts. */
  readonly numRequeues: (key: K) => Effect.Effect<number>
  /**
   * Waits for the next key and marks it processing; call `done` with it when finished. Fails with
   * `WorkQueueShutdownError` once the queue is shut down and has nothing left to hand out.
   */
  readonly get: Effect.Effect<K, WorkQueueShutdownError>
  /** `get`, with the priority the key was queued at. */
  readonly getWithPriority: Effect.Effect<Item<K>, WorkQueueShutdownError>
  /** Ends the processing of `key`; if it was added meanwhile, queues it again. Not processing: nothing. */
  readonly done: (key: K) => Effect.Effect<void>
  /**
   * Takes the next key, runs `f` with it and its priority, then `done`; if interrupted while it holds
   * the key, queues the key again.
   */
  readonly process: <A, E, R>(
    f: (key: K, priority: number) => Effect.Effect<A, E, R>
  ) => Effect.Effect<A, E | WorkQueueShutdownError, R>
  /**
   * A worker: `process(f)` in a loop. Succeeds once the queue is shut down and empty; fails with `f`'s
   * failure (after `done`), so `f` handles its own errors (e.g. `addRateLimited`). Cheaper per key than
   * looping `process` (no uninterruptible region per key). Run several for several workers.
   */
  readonly runWorker: <E, R>(f: (key: K, priority: number) => Effect.Effect<unknown, E, R>) => Effect.Effect<void, E, R>
  /** Keys ready to be handed out (not the processing ones, not the delayed ones). */
  readonly len: Effect.Effect<number>
  /** Stops the queue; queued keys are still handed out, then `get` fails. Does not wait. */
  readonly shutdown: Effect.Effect<void>
  /** `shutdown`, then waits until no key is processing (or `shutdown` is called). */
  readonly shutdownWithDrain: Effect.Effect<void>
  readonly isShuttingDown: Effect.Effect<boolean>
}

/**
 * The priority controller-runtime gives events that say nothing new: an informer's initial list (and
 * updates whose resourceVersion did not change), so that real changes overtake them.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Indexer, SharedInformer, WorkQueue } from "effect-informers"
 * import { FakeListerWatcher } from "effect-informers/testing"
 *
 * const program = Effect.gen(function*() {
 *   const queue = yield* WorkQueue.make({ name: "pods", group: (key: string) => key.split("/")[0] })
 *   const informer = yield* SharedInformer.make(yield* FakeListerWatcher.make(), { name: "pods" })
 *   // handlers enqueue keys, never objects; a tombstone's key is the key it carries
 *   const enqueue = (obj: unknown, priority = 0) => {
 *     const key = Indexer.fastMetaNamespaceKey(obj)
 *     return key === undefined ? Effect.void : queue.add(key, { priority })
 *   }
 *   yield* informer.addEventHandler({
 *     onAdd: (pod, isInInitialList) => enqueue(pod, isInInitialList ? WorkQueue.LowPriority : 0),
 *     onUpdate: (_, pod) => enqueue(pod),
 *     onDelete: (pod) => enqueue(pod)
 *   })
 *   yield* informer.start
 * }).pipe(Effect.scoped)
 * ```
 *
 * @since 0.2.0
 * @category constants
 */
export const LowPriority = -100

// -------------------------------------------------------------------------------------------------
// errors
// -------------------------------------------------------------------------------------------------

/**
 * The queue is shut down and has nothing left to hand out: what `get` and `process` fail with.
 *
 * @since 0.2.0
 * @category errors
 */
export const WorkQueueShutdownError: typeof internal.WorkQueueShutdownError = internal.WorkQueueShutdownError

/**
 * @since 0.2.0
 * @category errors
 */
export type WorkQueueShutdownError = internal.WorkQueueShutdownError

// -------------------------------------------------------------------------------------------------
// service
// -------------------------------------------------------------------------------------------------

/**
 * The tag of a `WorkQueue` of string keys, for an app with one queue. An app with several controllers
 * gives each its own tag (see `make`).
 *
 * @since 0.2.0
 * @category tags
 */
export const WorkQueue: Context.Service<WorkQueue, WorkQueue> = Context.Service<WorkQueue>(
  "effect-informers/WorkQueue"
)

/**
 * Builds a queue in the current scope; closing the scope shuts it down and stops its timer fibers.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { WorkQueue } from "effect-informers"
 *
 * const program = Effect.gen(function*() {
 *   const queue = yield* WorkQueue.make({ name: "pods", group: (key: string) => key.split("/")[0] })
 *   yield* queue.add("default/a")
 *   yield* queue.add("default/a") // collapsed: still one key waiting
 *   yield* queue.add("kube-system/b", { priority: 10 })
 *   const reconcile = (key: string) =>
 *     Effect.log(`reconciling ${key}`).pipe(
 *       Effect.andThen(queue.forget(key)),
 *       Effect.catchCause(() => queue.addRateLimited(key))
 *     )
 *   // two workers; each ends when the queue is shut down and empty
 *   yield* Effect.forkScoped(Effect.all([queue.runWorker(reconcile), queue.runWorker(reconcile)], { concurrency: 2 }))
 * }).pipe(Effect.scoped)
 * ```
 *
 * Keys that are not strings need a string identity:
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { WorkQueue } from "effect-informers"
 *
 * interface Request {
 *   readonly namespace: string
 *   readonly name: string
 * }
 *
 * const program = Effect.gen(function*() {
 *   const queue = yield* WorkQueue.make<Request>({
 *     key: (r) => `${r.namespace}/${r.name}`,
 *     group: (r) => r.namespace
 *   })
 *   yield* queue.add({ namespace: "default", name: "a" })
 *   yield* queue.addAfter({ namespace: "default", name: "a" }, "5 seconds") // already ready: ignored
 *   return yield* queue.len // 1
 * }).pipe(Effect.scoped)
 * ```
 *
 * @since 0.2.0
 * @category constructors
 */
export const make: {
  <K extends string = string>(options?: Options<K>): Effect.Effect<WorkQueue<K>, never, Scope.Scope>
  <K>(options: Options<K> & { readonly key: (key: K) => string }): Effect.Effect<WorkQueue<K>, never, Scope.Scope>
} = <K>(options: Options<K> = {}): Effect.Effect<WorkQueue<K>, never, Scope.Scope> =>
  internal.make(options, RateLimiter.defaultController)

/**
 * A Layer providing the `WorkQueue` tag (string keys), shut down when the Layer is released.
 *
 * For one queue per controller, give each its own tag:
 *
 * @example
 * ```ts
 * import { Context, Effect, Layer } from "effect"
 * import { WorkQueue } from "effect-informers"
 *
 * class PodQueue extends Context.Service<PodQueue, WorkQueue.WorkQueue>()("app/PodQueue") {}
 *
 * const PodQueueLive = Layer.effect(PodQueue, WorkQueue.make({ name: "pods" }))
 *
 * const enqueue = (key: string) => Effect.flatMap(PodQueue, (queue) => queue.add(key))
 *
 * const program = enqueue("default/a").pipe(Effect.provide(PodQueueLive))
 * ```
 *
 * @since 0.2.0
 * @category layers
 */
export const layer = (options: Options<string> = {}): Layer.Layer<WorkQueue> => Layer.effect(WorkQueue, make(options))

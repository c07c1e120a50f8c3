/**
 * One cache shared by many handlers: client-go's `SharedIndexInformer`.
 *
 * Inside, events flow one way: Reflector -> DeltaFifo -> one processing fiber that, in one synchronous
 * step per batch, updates the Indexer first and then distributes notifications -> one buffer and one
 * fiber per handler. Distribution never waits for a handler, so a slow, failing or stuck handler never
 * slows the cache or the other handlers.
 *
 * Guarantees:
 * - Per handler, callbacks run one at a time, in the order the informer distributed them; per object,
 *   notifications are never reordered (with the default in-order FIFO the global watch order is kept).
 * - The cache is updated before a notification is distributed: a handler may see the cache ahead of the
 *   notification it is handling. A delete handler finds the object gone.
 * - Deletions seen only at a relist arrive as `DeletedFinalStateUnknown` tombstones.
 * - An update whose old and new resourceVersions are equal is a resync: it reaches only the handlers due
 *   for resync (each handler has its own period; see `addEventHandler`).
 * - A handler added after start first receives a synthetic add (`isInInitialList: true`) for every
 *   cached object, then every later event: no gap, no duplicate.
 * - `hasSynced` (informer): one full list has been applied to the cache and handed to the handlers'
 *   buffers. A registration's `hasSynced`: the informer has synced and every initial add has returned
 *   from that handler — also when the handler failed on some of them. Once true, it stays true, also
 *   after the informer stops.
 * - Waiting for sync never outlives the informer: when it stops (its scope closes) before it synced,
 *   every pending and later `synced` fails with `InformerStoppedError` (`operation: "synced"`), as
 *   client-go's `WaitForCacheSync(stopCh)` returns false; likewise a registration's `synced` when the
 *   informer stops before that registration synced. Removing a registration before it synced interrupts
 *   its `synced` waiters instead (nothing failed: the caller gave the registration up).
 * - A handler failure (typed error or defect) is logged with the handler's name and counted; the item is
 *   skipped and the handler goes on.
 * - Closing the informer's scope stops the controller (Reflector and processing loop, DeltaFifo closed)
 *   strictly before the handlers' fibers; no fiber outlives the scope.
 *
 * Cached objects are shared and immutable: handlers and readers get the cached object itself. Mutating
 * one corrupts the cache; `detectMutations: true` reports any handler that does.
 *
 * @since 0.1.0
 */
import type * as Cause from "effect/Cause"
import type * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as ExecutionStrategy from "effect/ExecutionStrategy"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as FiberId from "effect/FiberId"
import * as Layer from "effect/Layer"
import type * as Metric from "effect/Metric"
import * as MetricLabel from "effect/MetricLabel"
import * as Option from "effect/Option"
import * as PubSub from "effect/PubSub"
import * as Queue from "effect/Queue"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import type { Delta, Popped } from "./DeltaFifo.js"
import * as DeltaFifo from "./DeltaFifo.js"
import type { IndexConflictError, Indexers, IndexFunctionError } from "./Indexer.js"
import * as Indexer from "./Indexer.js"
import * as CoalescingBuffer from "./internal/coalescingBuffer.js"
import * as ListenerBuffer from "./internal/listenerBuffer.js"
import type { KubeObject } from "./KubeObject.js"
import { DeletedFinalStateUnknown, resourceVersion } from "./KubeObject.js"
import { ListerWatcher } from "./ListerWatcher.js"
import * as Metrics from "./Metrics.js"
import type { ErrorContext, ReflectorError } from "./Reflector.js"
import * as Reflector from "./Reflector.js"

// -------------------------------------------------------------------------------------------------
// models
// -------------------------------------------------------------------------------------------------

/**
 * What a handler is told.
 *
 * @since 0.1.0
 * @category models
 */
export type Notification<A> =
  | { readonly _tag: "Add"; readonly object: A; readonly isInInitialList: boolean }
  | { readonly _tag: "Update"; readonly oldObject: A; readonly newObject: A }
  | { readonly _tag: "Delete"; readonly object: A | DeletedFinalStateUnknown<A> }

/**
 * An event handler: Effect-returning callbacks, each optional.
 *
 * @since 0.1.0
 * @category models
 */
export interface Handler<A, E = never, R = never> {
  /** For logs and metrics. Defaults to `handler-N`. */
  readonly name?: string | undefined
  readonly onAdd?: ((obj: A, isInInitialList: boolean) => Effect.Effect<void, E, R>) | undefined
  readonly onUpdate?: ((oldObj: A, newObj: A) => Effect.Effect<void, E, R>) | undefined
  readonly onDelete?: ((obj: A | DeletedFinalStateUnknown<A>) => Effect.Effect<void, E, R>) | undefined
}

/**
 * @since 0.1.0
 * @category models
 */
export interface HandlerOptions {
  /**
   * How notifications wait for this handler. `"unbounded"` (default): every notification, in order, as
   * client-go does; a stalled handler's buffer grows without bound. `"coalescing"`: per object, only a
   * delete and the latest add or update wait (latest state wins, deletes are always delivered as deletes,
   * per-object order is kept), so a stalled handler costs memory bounded by the number of objects.
   * Handlers that reconcile towards the latest state lose nothing by it.
   */
  readonly buffer?: "unbounded" | "coalescing" | undefined
  /** Overrides `Handler.name`. */
  readonly name?: string | undefined
  /**
   * This handler's resync period; defaults to the informer's. Zero disables resync for it. Values under
   * 1 s are raised to 1 s; a handler added after start cannot go below the informer's resync check
   * period (client-go's rules).
   */
  readonly resyncPeriod?: Duration.DurationInput | undefined
}

/**
 * The handle `addEventHandler` returns.
 *
 * @since 0.1.0
 * @category models
 */
export interface Registration {
  readonly name: string
  /** The informer has synced and every initial add has returned from this handler. Stays true once true. */
  readonly hasSynced: Effect.Effect<boolean>
  /**
   * Waits until `hasSynced`; succeeds at once once it is, also after the informer stopped. Fails with
   * `InformerStoppedError` (`operation: "synced"`, `handler` set) when the informer stopped before this
   * registration synced: at the stop for pending waits, at once for later ones. A registration removed
   * before it synced interrupts its waiters (and later waits) instead — unless the informer had stopped
   * first, in which case they keep failing with the error.
   */
  readonly synced: Effect.Effect<void, InformerStoppedError>
  /**
   * Notifications waiting for this handler: buffered, or taken by its fiber and queued behind the callback in
   * progress (which is not counted). Zero once removed.
   */
  readonly backlog: Effect.Effect<number>
  /** Stops delivery, drops the backlog, and waits for the handler's fiber to end. Idempotent. */
  readonly remove: Effect.Effect<void>
}

/**
 * An error the Reflector reported, with where it happened.
 *
 * @since 0.1.0
 * @category models
 */
export interface WatchError {
  readonly error: ReflectorError
  readonly context: ErrorContext
}

// -------------------------------------------------------------------------------------------------
// errors
// -------------------------------------------------------------------------------------------------

/**
 * The informer has stopped: handlers and indexers can no longer be added, it cannot be started, and if it
 * had not synced it never will (`operation: "synced"`: what `synced` fails with).
 *
 * @since 0.1.0
 * @category errors
 */
export class InformerStoppedError extends Data.TaggedError("InformerStoppedError")<{
  readonly informer: string
  /**
   * What the stop refused. `"addEventHandler"` (also when absent), `"addIndexers"`, `"start"`, or
   * `"synced"`: the informer (or, with `handler`, that handler's registration) stopped before it synced.
   */
  readonly operation?: "addEventHandler" | "addIndexers" | "start" | "synced" | undefined
  /** With `operation: "synced"`: the handler whose registration never synced; absent for the informer itself. */
  readonly handler?: string | undefined
}> {
  override get message(): string {
    switch (this.operation) {
      case "addIndexers":
        return `indexers were not added to shared informer ${this.informer} because it has stopped already`
      case "start":
        return `shared informer ${this.informer} was not started because it has stopped already`
      case "synced":
        return this.handler === undefined
          ? `shared informer ${this.informer} stopped before it synced`
          : `shared informer ${this.informer} stopped before handler ${this.handler} synced`
      default:
        return `handler was not added to shared informer ${this.informer} because it has stopped already`
    }
  }
}

/**
 * A setting that must be made before start was changed after.
 *
 * @since 0.1.0
 * @category errors
 */
export class InformerStartedError extends Data.TaggedError("InformerStartedError")<{
  readonly informer: string
  readonly setting: string
}> {
  override get message(): string {
    return `informer ${this.informer} has already started: ${this.setting} can no longer be changed`
  }
}

// -------------------------------------------------------------------------------------------------
// service
// -------------------------------------------------------------------------------------------------

/**
 * @since 0.1.0
 */
export declare namespace SharedInformer {
  /**
   * @since 0.1.0
   * @category models
   */
  export interface Service<A> {
    readonly name: string
    /**
     * Registers a handler. Its callbacks run in their own fiber, which inherits this Effect's context
     * (so `R` is provided here). Fails once the informer has stopped.
     */
    readonly addEventHandler: <E, R>(
      handler: Handler<A, E, R>,
      options?: HandlerOptions
    ) => Effect.Effect<Registration, InformerStoppedError, R>
    /** Removes a registration of this informer; a registration of another informer is ignored. */
    readonly removeEventHandler: (registration: Registration) => Effect.Effect<void>
    /** Starts the Reflector and the processing loop. A second call does nothing. */
    readonly start: Effect.Effect<void, InformerStoppedError>
    /** One full list has been applied to the cache and handed to the handlers. Stays true once true. */
    readonly hasSynced: Effect.Effect<boolean>
    /**
     * Waits until `hasSynced`; succeeds at once once it is, also after the informer stopped. Fails with
     * `InformerStoppedError` (`operation: "synced"`) when the informer stops before it synced (e.g. every
     * list is forbidden and then its scope closes): at the stop for pending waits, at once for later ones.
     */
    readonly synced: Effect.Effect<void, InformerStoppedError>
    readonly isStarted: Effect.Effect<boolean>
    readonly isStopped: Effect.Effect<boolean>
    /** The cache (client-go's `GetStore`/`GetIndexer`). Read only: objects are shared. */
    readonly indexer: Indexer.Indexer.Service<A>
    /** Adds indexes, before or after start; existing objects are indexed at once. */
    readonly addIndexers: (
      indexers: Indexers<A>
    ) => Effect.Effect<void, IndexConflictError | IndexFunctionError | InformerStoppedError>
    readonly setTransform: (transform: (obj: A) => A) => Effect.Effect<void, InformerStartedError>
    readonly setWatchErrorHandler: (
      handler: (error: ReflectorError, context: ErrorContext) => Effect.Effect<void>
    ) => Effect.Effect<void, InformerStartedError>
    readonly lastSyncResourceVersion: Effect.Effect<string>
    /** Every notification, as a Stream (a handler registered while the stream runs); ends when the informer stops. */
    readonly notifications: Stream.Stream<Notification<A>>
    /** Every error the Reflector reports, as a Stream (subscribed while the stream runs); ends when the informer stops. */
    readonly errors: Stream.Stream<WatchError>
  }

  /**
   * @since 0.1.0
   * @category models
   */
  export interface Options<A> {
    /** Object description for logs and metrics, e.g. `"pods"`. Defaults to the ListerWatcher's. */
    readonly name?: string | undefined
    /** Default resync period of handlers. Zero or absent: no resync. */
    readonly resyncPeriod?: Duration.DurationInput | undefined
    /** Indexes besides the namespace index every informer has. */
    readonly indexers?: Indexers<A> | undefined
    /** Defaults to `"inOrder"` (client-go's RealFIFO, atomic). */
    readonly fifo?: DeltaFifo.Mode | undefined
    /** Applied once to every object before it is queued and cached; must not mutate its input. */
    readonly transform?: ((obj: A) => A) | undefined
    readonly onWatchError?: ((error: ReflectorError, context: ErrorContext) => Effect.Effect<void>) | undefined
    /** Reflector settings (backoff, watch-list, page size, ...). */
    readonly reflector?: Omit<Reflector.Options<A>, "name" | "resyncPeriod" | "shouldResync" | "onError" | "reuse">
    /** Compares each notified object before and after every callback and reports handlers that mutate it. */
    readonly detectMutations?: boolean | undefined
    /** Deltas processed per step. Defaults to 1000. */
    readonly batchSize?: number | undefined
  }
}

/**
 * The SharedInformer tag, for apps that provide one informer of `KubeObject`s through a Layer. Typed
 * per-resource informers come from `InformerFactory` and `Layer.ts`.
 *
 * @since 0.1.0
 * @category tags
 */
export class SharedInformer extends Context.Tag("effect-informers/SharedInformer")<
  SharedInformer,
  SharedInformer.Service<KubeObject>
>() {}

// -------------------------------------------------------------------------------------------------
// listeners
// -------------------------------------------------------------------------------------------------

const minimumResyncPeriod = 1000

/** client-go's determineResyncPeriod. */
const effectiveResync = (desired: number, check: number): number =>
  desired === 0 || check === 0 ? 0 : Math.max(desired, check)

class Listener<A> {
  /** Initial-list adds queued for this handler and not yet handled. */
  initialPending = 0
  nextResync = 0
  resyncPeriod = 0
  /** The period asked for (at least 1 s, or 0), as `effectiveResync` takes it; set when the listener joins. */
  requestedResync = 0
  /** Taken from the buffer by the handler's fiber and waiting behind the callback in progress. */
  inFlight = 0
  removed = false
  fiber: Fiber.RuntimeFiber<void> | undefined = undefined
  /** Whether `syncedSignal` is done: `"synced"` (success), or `"failed"` (informer stopped, or removed) first. */
  syncState: "pending" | "synced" | "failed" = "pending"
  readonly syncedSignal = Deferred.unsafeMake<void, InformerStoppedError>(undefined as never)
  /**
   * The labels of this handler's metrics. Updating a base metric with one stable label array hits Effect's
   * per-array hook cache; a `Metric.tagged` metric builds (and hashes) a new metric key on every update.
   */
  readonly metricLabels: ReadonlyArray<MetricLabel.MetricLabel>

  /** Set right after construction (the coalescing buffer calls back into the listener). */
  buffer: ListenerBuffer.ListenerBuffer<Notification<A>> = undefined as never
  /**
   * Notifications taken from the buffer at once. A taken batch can no longer be coalesced, so coalescing
   * listeners take small ones: their memory stays bounded by the number of objects plus this.
   */
  batch = 1024

  constructor(
    readonly id: number,
    readonly name: string,
    informer: string
  ) {
    this.metricLabels = [MetricLabel.make("informer", informer), MetricLabel.make("handler", name)]
  }

  offer(notification: Notification<A>): void {
    if (notification._tag === "Add" && notification.isInInitialList) this.initialPending++
    const coalesced = this.buffer.offer(notification)
    if (coalesced > 0) Metrics.handlerCoalesced.unsafeUpdate(coalesced, this.metricLabels)
  }

  /** Notifications not yet handled, besides the one in progress. */
  backlog(): number {
    return this.removed ? 0 : this.buffer.size() + this.inFlight
  }

  updateBacklogGauge(): void {
    Metrics.handlerBacklog.unsafeUpdate(this.backlog(), this.metricLabels)
  }
}

// -------------------------------------------------------------------------------------------------
// the informer
// -------------------------------------------------------------------------------------------------

class InformerImpl<A extends KubeObject> implements SharedInformer.Service<A> {
  readonly name: string
  readonly indexer: Indexer.Indexer.Service<A>
  private readonly listeners = new Map<number, Listener<A>>()
  private syncing = new Set<Listener<A>>()
  private nextListenerId = 0
  private started = false
  private stopped = false
  private synced_ = false
  private readonly syncedSignal = Deferred.unsafeMake<void, InformerStoppedError>(undefined as never)
  private resyncCheckPeriod: number
  private readonly defaultResync: number
  private transform: ((obj: A) => A) | undefined
  private watchErrorHandler: ((error: ReflectorError, context: ErrorContext) => Effect.Effect<void>) | undefined
  private reflector: Reflector.Reflector | undefined = undefined
  private readonly notificationCounters: {
    readonly add: Metric.Metric.Counter<number>
    readonly update: Metric.Metric.Counter<number>
    readonly delete: Metric.Metric.Counter<number>
  }
  private readonly fifoGauge: Metric.Metric.Gauge<number>
  private counts = { add: 0, update: 0, delete: 0 }

  constructor(
    readonly lw: ListerWatcher.Service<A>,
    readonly options: SharedInformer.Options<A>,
    private readonly processorScope: Scope.Scope,
    private readonly controllerScope: Scope.Scope,
    private readonly clock: Clock.Clock,
    private readonly errorHub: PubSub.PubSub<WatchError>
  ) {
    this.name = options.name ?? lw.description ?? "informer"
    this.indexer = Indexer.unsafeMake<A>({
      indexers: {
        [Indexer.namespaceIndex]: Indexer.metaNamespaceIndexFunction as Indexer.IndexFunction<A>,
        ...options.indexers
      }
    })
    this.defaultResync = toResync(options.resyncPeriod)
    this.resyncCheckPeriod = this.defaultResync
    this.transform = options.transform
    this.watchErrorHandler = options.onWatchError
    const counter = (type: string) => Metrics.withTags(Metrics.notifications, [["informer", this.name], ["type", type]])
    this.notificationCounters = { add: counter("add"), update: counter("update"), delete: counter("delete") }
    this.fifoGauge = Metrics.withTags(Metrics.fifoDepth, [["informer", this.name]])
  }

  // --- distribution (runs inside the synchronous processing step) -------------------------------

  private distribute(notification: Notification<A>, isSync: boolean): void {
    const targets = isSync ? this.syncing : this.listeners.values()
    for (const listener of targets) listener.offer(notification)
  }

  private notifyAdd(object: A, isInInitialList: boolean): void {
    this.counts.add++
    this.distribute({ _tag: "Add", object, isInInitialList }, false)
  }

  private notifyUpdate(oldObject: A, newObject: A): void {
    this.counts.update++
    const isSync = oldObject === newObject || resourceVersion(oldObject) === resourceVersion(newObject)
    this.distribute({ _tag: "Update", oldObject, newObject }, isSync)
  }

  private notifyDelete(object: A | DeletedFinalStateUnknown<A>): void {
    this.counts.delete++
    this.distribute({ _tag: "Delete", object }, false)
  }

  /**
   * Applies a popped batch to the cache and distributes its notifications: one synchronous step, so
   * late joins and removals (also synchronous) see either all of it or none. Returns the write errors.
   */
  private applyBatch(popped: Popped<A>): Array<Indexer.WriteError> {
    const errors: Array<Indexer.WriteError> = []
    const indexer = this.indexer
    for (const delta of popped.deltas) this.applyDelta(delta, popped.isInInitialList, indexer, errors)
    return errors
  }

  private applyDelta(
    delta: Delta<A>,
    isInInitialList: boolean,
    indexer: Indexer.Indexer.Service<A>,
    errors: Array<Indexer.WriteError>
  ): void {
    switch (delta._tag) {
      case "Added":
      case "Updated":
      case "Replaced":
      case "Sync": {
        const old = indexer.unsafeGetByKey(delta.key)
        const error = indexer.unsafeAdd(delta.key, delta.object)
        if (error !== undefined) {
          errors.push(error)
          return
        }
        if (old === undefined) this.notifyAdd(delta.object, isInInitialList)
        else this.notifyUpdate(old, delta.object)
        return
      }
      case "Deleted": {
        indexer.unsafeDelete(delta.key, delta.object)
        this.notifyDelete(delta.object)
        return
      }
      case "ReplacedAll": {
        const listed = new Set(delta.keys)
        const deleted: Array<DeletedFinalStateUnknown<A>> = []
        for (const key of indexer.unsafeKeys()) {
          if (!listed.has(key)) deleted.push(new DeletedFinalStateUnknown({ key, obj: indexer.unsafeGetByKey(key) }))
        }
        const olds: Array<A | undefined> = new Array(delta.keys.length)
        for (let i = 0; i < delta.keys.length; i++) olds[i] = indexer.unsafeGetByKey(delta.keys[i])
        const error = indexer.unsafeReplace(delta.objects, delta.resourceVersion)
        if (error !== undefined) {
          errors.push(error)
          return
        }
        for (const tombstone of deleted) this.notifyDelete(tombstone)
        for (let i = 0; i < delta.objects.length; i++) {
          const old = olds[i]
          if (old === undefined) this.notifyAdd(delta.objects[i], isInInitialList)
          else this.notifyUpdate(old, delta.objects[i])
        }
        return
      }
      case "SyncAll": {
        for (const obj of indexer.unsafeValues()) this.notifyUpdate(obj, obj)
        return
      }
      case "Bookmark": {
        indexer.unsafeBookmark(delta.resourceVersion)
        return
      }
    }
  }

  /**
   * Batches the FIFO handed out and the processing fiber has not applied yet. The FIFO calls `process` in
   * the step that takes the batch, so taken-but-unapplied deltas are always counted here.
   */
  private unapplied = 0

  private readonly process = (popped: Popped<A>): Effect.Effect<void> => {
    this.unapplied++
    return Effect.suspend(() => {
      const errors = this.applyBatch(popped)
      this.unapplied--
      return errors.length === 0 ? Effect.void : Effect.forEach(
        errors,
        (error) => Effect.logError(`${this.name}: cache update failed: ${error.message}`, error),
        { discard: true }
      )
    })
  }

  /** After each batch: publish metrics, and mark the informer synced once the FIFO is. */
  private afterBatch(fifo: DeltaFifo.DeltaFifo.Service<A>): Effect.Effect<void> {
    return Effect.suspend(() => {
      this.fifoGauge.unsafeUpdate(fifo.unsafeLength(), [])
      // Here, not only in the handler's fiber: a stuck handler's backlog grows while its fiber is stuck.
      for (const listener of this.listeners.values()) listener.updateBacklogGauge()
      const counts = this.counts
      if (counts.add > 0) this.notificationCounters.add.unsafeUpdate(counts.add, [])
      if (counts.update > 0) this.notificationCounters.update.unsafeUpdate(counts.update, [])
      if (counts.delete > 0) this.notificationCounters.delete.unsafeUpdate(counts.delete, [])
      counts.add = counts.update = counts.delete = 0
      return this.checkSynced(fifo)
    })
  }

  /**
   * Marks the informer synced once the FIFO is and every delta it handed out has been applied. Checked after
   * each batch, and after each replace: a replace that queues nothing (an empty first list in coalescing
   * mode) syncs the FIFO without any batch to process.
   */
  private checkSynced(fifo: DeltaFifo.DeltaFifo.Service<A>): Effect.Effect<void> {
    if (this.synced_ || this.stopped) return Effect.void
    // The FIFO's synced flag never reverts: reading it a step early is safe.
    return Effect.flatMap(fifo.hasSynced, (synced) => {
      if (!synced || this.synced_ || this.stopped || this.unapplied > 0) return Effect.void
      this.synced_ = true
      Deferred.unsafeDone(this.syncedSignal, Exit.void)
      for (const listener of this.listeners.values()) this.checkListenerSynced(listener)
      return Effect.void
    })
  }

  /**
   * Marks a listener synced once the informer is and its initial adds have all returned. Not after the
   * informer stopped: its `synced` failed then (see `markStopped`), and `hasSynced` must agree with it.
   */
  private checkListenerSynced(listener: Listener<A>): void {
    if (listener.syncState !== "pending" || !this.synced_ || listener.initialPending > 0 || this.stopped) return
    listener.syncState = "synced"
    Deferred.unsafeDone(listener.syncedSignal, Exit.void)
  }

  // --- resync -------------------------------------------------------------------------------------

  /** Asked by the Reflector's resync timer: marks the handlers due for resync. */
  private readonly shouldResync: Effect.Effect<boolean> = Effect.sync(() => {
    const now = this.clock.unsafeCurrentTimeMillis()
    const due = new Set<Listener<A>>()
    for (const listener of this.listeners.values()) {
      if (listener.resyncPeriod > 0 && now >= listener.nextResync) {
        due.add(listener)
        listener.nextResync = now + listener.resyncPeriod
      }
    }
    this.syncing = due
    return due.size > 0
  })

  // --- handlers -----------------------------------------------------------------------------------

  readonly addEventHandler = <E, R>(
    handler: Handler<A, E, R>,
    options: HandlerOptions = {}
  ): Effect.Effect<Registration, InformerStoppedError, R> => {
    const self = this
    // Uninterruptible: a handler's fiber never runs without its listener being registered, nor the reverse.
    return Effect.uninterruptible(Effect.gen(function*() {
      if (self.stopped) return yield* new InformerStoppedError({ informer: self.name, operation: "addEventHandler" })
      const id = self.nextListenerId++
      const name = options.name ?? handler.name ?? `handler-${id}`
      let requested = options.resyncPeriod === undefined ? self.defaultResync : toResync(options.resyncPeriod)
      if (requested > 0 && requested < minimumResyncPeriod) {
        yield* Effect.logWarning(`${self.name}: resync period of handler ${name} raised to 1s`)
        requested = minimumResyncPeriod
      }
      const listener = new Listener<A>(id, name, self.name)
      if (options.buffer === "coalescing") listener.batch = 64
      listener.buffer = options.buffer === "coalescing"
        ? yield* CoalescingBuffer.coalescing<A, Notification<A>>(() => {
          // A delete replaced an initial add the handler will now never run.
          listener.initialPending--
          self.checkListenerSynced(listener)
        })
        : yield* ListenerBuffer.unbounded<Notification<A>>()
      const fiber = yield* self.runListener(listener, handler).pipe(
        Effect.interruptible,
        Effect.forkIn(self.processorScope)
      )
      listener.fiber = fiber
      const joined = yield* Effect.sync(() => self.join(listener, requested))
      if (joined === "stopped") {
        // Stopped since the check above: the fiber was forked into a closed scope, or is about to be stopped.
        yield* Fiber.interrupt(fiber)
        return yield* new InformerStoppedError({ informer: self.name, operation: "addEventHandler" })
      }
      if (joined === "raised") {
        yield* Effect.logWarning(`${self.name}: resync period of handler ${name} raised to the informer's check period`)
      }
      return self.registration(listener)
    }))
  }

  /**
   * Registers a listener, in one synchronous step serialised with the processing step and with stop: the
   * resync decision (which reads and may lower the check period), the replay of the cache when started,
   * and the listener set. A check made before a yield would be stale here: `start` or the scope's close
   * may run in between.
   */
  private join(listener: Listener<A>, requested: number): "joined" | "raised" | "stopped" {
    if (this.stopped) return "stopped"
    let raised = false
    if (requested > 0 && requested < this.resyncCheckPeriod) {
      if (this.started) {
        raised = true
        requested = this.resyncCheckPeriod
      } else {
        this.resyncCheckPeriod = requested
        for (const other of this.listeners.values()) {
          other.resyncPeriod = effectiveResync(other.requestedResync, requested)
        }
      }
    }
    listener.requestedResync = requested
    listener.resyncPeriod = effectiveResync(requested, this.resyncCheckPeriod)
    listener.nextResync = this.clock.unsafeCurrentTimeMillis() + listener.resyncPeriod
    if (this.started) {
      for (const obj of this.indexer.unsafeValues()) {
        listener.offer({ _tag: "Add", object: obj, isInInitialList: true })
      }
    }
    this.listeners.set(listener.id, listener)
    this.syncing.add(listener)
    this.checkListenerSynced(listener)
    return raised ? "raised" : "joined"
  }

  private registration(listener: Listener<A>): Registration {
    const remove = this.removeListener(listener)
    const registration: Registration = {
      name: listener.name,
      hasSynced: Effect.sync(() => listener.syncState === "synced"),
      synced: Deferred.await(listener.syncedSignal),
      backlog: Effect.sync(() => listener.backlog()),
      remove
    }
    this.registrations.set(registration, listener)
    return registration
  }

  private readonly registrations = new WeakMap<Registration, Listener<A>>()

  private removeListener(listener: Listener<A>): Effect.Effect<void> {
    return Effect.suspend(() => {
      if (listener.removed) return Effect.void
      listener.removed = true
      this.listeners.delete(listener.id)
      this.syncing.delete(listener)
      const fiber = listener.fiber
      listener.updateBacklogGauge()
      // A registration removed before it synced never will: whoever waits on `synced` is interrupted. (Removed
      // after the informer stopped unsynced, its `synced` has failed already and keeps failing.)
      if (listener.syncState === "pending") {
        listener.syncState = "failed"
        Deferred.unsafeDone(listener.syncedSignal, Exit.interrupt(FiberId.none))
      }
      // Buffer first: a handler removing itself from its own callback interrupts its own fiber, and whatever
      // follows that interruption never runs.
      return Effect.zipRight(
        listener.buffer.shutdown,
        fiber === undefined ? Effect.void : Fiber.interrupt(fiber)
      )
    })
  }

  readonly removeEventHandler = (registration: Registration): Effect.Effect<void> =>
    Effect.suspend(() => {
      const listener = this.registrations.get(registration)
      return listener === undefined ? Effect.void : this.removeListener(listener)
    })

  /** The handler's fiber: takes batches from its buffer and runs the callbacks one by one. */
  private runListener<E, R>(listener: Listener<A>, handler: Handler<A, E, R>): Effect.Effect<void, never, R> {
    const self = this
    const labels = listener.metricLabels
    const detectMutations = this.options.detectMutations === true
    const call = (notification: Notification<A>): Effect.Effect<void, E, R> | undefined => {
      switch (notification._tag) {
        case "Add":
          return handler.onAdd?.(notification.object, notification.isInInitialList)
        case "Update":
          return handler.onUpdate?.(notification.oldObject, notification.newObject)
        case "Delete":
          return handler.onDelete?.(notification.object)
      }
    }
    /** After a notification was handled (or had no callback): initial-list accounting. */
    const finished = (notification: Notification<A>): void => {
      if (notification._tag === "Add" && notification.isInInitialList) {
        listener.initialPending--
        self.checkListenerSynced(listener)
      }
    }

    // The hot loop. Per callback it runs the user's Effect and one `flatMap`; the continuations are built
    // once per handler, the notification in progress lives in `current`, and the bookkeeping is plain
    // code between callbacks. Failures are caught once per batch: the loop is re-entrant (its position is
    // `index`), so after logging a failed callback it goes on with the next notification. Time is
    // measured per batch.
    let batch: ReadonlyArray<Notification<A>> = []
    let index = 0
    let current: Notification<A> = undefined as never
    let inCallback = false
    let callbacks = 0
    let batchStart = 0n
    const checkMutation = (before: string | undefined, notification: Notification<A>): Effect.Effect<void> => {
      if (before === undefined || snapshot(notification) === before) return Effect.void
      return Effect.logError(
        `${self.name}: handler ${listener.name} mutated a cached object (${describe(notification)}); ` +
          "cached objects are shared and must be treated as immutable"
      )
    }
    const afterCallback = (): Effect.Effect<void, E, R> => {
      inCallback = false
      finished(current)
      return next
    }
    /** With `detectMutations`: the cached object as JSON before the handler ran. */
    let before: string | undefined = undefined
    const afterCheckedCallback = (): Effect.Effect<void, E, R> =>
      Effect.flatMap(checkMutation(before, current), afterCallback)
    const next: Effect.Effect<void, E, R> = Effect.suspend(() => {
      while (index < batch.length) {
        const notification = batch[index++]
        listener.inFlight = batch.length - index
        // Set before the call: a handler function that throws while building its Effect is this
        // notification's failure too. The snapshot is taken before the handler's code runs at all.
        current = notification
        inCallback = true
        if (detectMutations) before = snapshot(notification)
        const effect = call(notification)
        if (effect === undefined) {
          // no callback for this notification: no handler code ran
          inCallback = false
          finished(notification)
          continue
        }
        callbacks++
        if (!detectMutations) return Effect.flatMap(effect, afterCallback)
        return Effect.flatMap(effect, afterCheckedCallback)
      }
      if (callbacks > 0) {
        const seconds = Number(self.clock.unsafeCurrentTimeNanos() - batchStart) / 1e9
        Metrics.handlerDuration.unsafeUpdate(seconds / callbacks, labels)
      }
      listener.updateBacklogGauge()
      return Effect.void
    })
    const recover = (cause: Cause.Cause<E>): Effect.Effect<void, never, R> => {
      Metrics.handlerFailures.unsafeUpdate(1, labels)
      const failed = current
      const wasCallback = inCallback
      inCallback = false
      const logged = Effect.logError(
        `${self.name}: handler ${listener.name} failed on ${
          failed === undefined ? "a notification" : describe(failed)
        }`,
        cause
      )
      // a handler that mutated a cached object and then failed is still reported
      const checked = wasCallback && detectMutations ? Effect.zipRight(logged, checkMutation(before, failed)) : logged
      return Effect.zipRight(
        checked,
        Effect.suspend(() => {
          if (wasCallback) finished(failed)
          return guarded
        })
      )
    }
    const guarded: Effect.Effect<void, never, R> = Effect.catchAllCause(next, recover)
    const runBatch = (taken: ReadonlyArray<Notification<A>>): Effect.Effect<void, never, R> => {
      batch = taken
      index = 0
      callbacks = 0
      batchStart = self.clock.unsafeCurrentTimeNanos()
      listener.inFlight = taken.length
      listener.updateBacklogGauge()
      return guarded
    }
    return Effect.forever(Effect.flatMap(Effect.suspend(() => listener.buffer.take(listener.batch)), runBatch)).pipe(
      Effect.annotateLogs({ informer: this.name, handler: listener.name })
    )
  }

  // --- lifecycle ----------------------------------------------------------------------------------

  readonly start: Effect.Effect<void, InformerStoppedError> = Effect.suspend(() => {
    if (this.stopped) return Effect.fail(new InformerStoppedError({ informer: this.name, operation: "start" }))
    if (this.started) return Effect.logWarning(`${this.name}: informer already started`)
    this.started = true
    const self = this
    return Effect.gen(function*() {
      const fifo = DeltaFifo.unsafeMake<A>({
        mode: self.options.fifo ?? "inOrder",
        knownObjects: self.indexer,
        transform: self.transform
      })
      const scope = self.controllerScope
      // Closing order within the controller scope: Reflector, then processing loop, then the FIFO.
      yield* Scope.addFinalizer(scope, fifo.close)
      const batchSize = self.options.batchSize ?? 1000
      yield* fifo.popBatch(batchSize, self.process).pipe(
        Effect.zipRight(self.afterBatch(fifo)),
        Effect.forever,
        Effect.catchTag("FifoClosedError", () => Effect.void),
        Effect.annotateLogs({ informer: self.name, fiber: "processor" }),
        Effect.interruptible,
        Effect.forkIn(scope)
      )
      const onError = (error: ReflectorError, context: ErrorContext): Effect.Effect<void> =>
        Effect.zipRight(
          PubSub.publish(self.errorHub, { error, context }),
          self.watchErrorHandler === undefined ? Effect.void : self.watchErrorHandler(error, context)
        )
      const store: Reflector.Store<A, DeltaFifo.EnqueueError> = {
        add: fifo.add,
        update: fifo.update,
        delete: fifo.delete,
        replace: (objects, resourceVersion) =>
          Effect.zipRight(fifo.replace(objects, resourceVersion), self.checkSynced(fifo)),
        resync: fifo.resync,
        bookmark: fifo.bookmark,
        unsafe: fifo.unsafe
      }
      self.reflector = yield* Reflector.make(self.lw, store, {
        ...self.options.reflector,
        name: self.name,
        resyncPeriod: self.resyncCheckPeriod,
        shouldResync: self.shouldResync,
        onError,
        reuse: self.reuseUnchanged
      }).pipe(Scope.extend(scope))
    })
  })

  /** A listed object equal to the cached one (same key, uid and resourceVersion) is the cached one. */
  private readonly reuseUnchanged = (obj: A): A => {
    const key = Indexer.metaNamespaceKey(obj)
    if (Either.isLeft(key)) return obj
    const cached = this.indexer.unsafeGetByKey(key.right)
    if (cached === undefined) return obj
    const rv = resourceVersion(obj)
    return rv !== undefined && rv === resourceVersion(cached) && cached.metadata?.uid === obj.metadata?.uid
      ? cached
      : obj
  }

  /**
   * Called by the scope between stopping the controller and stopping the handlers. With the controller
   * stopped nothing can sync any more: the informer's and every registration's `synced` that has not
   * succeeded fails from now on (client-go's `WaitForCacheSync` returning false once `stopCh` is closed).
   */
  markStopped(): void {
    this.stopped = true
    if (!this.synced_) {
      Deferred.unsafeDone(
        this.syncedSignal,
        Exit.fail(new InformerStoppedError({ informer: this.name, operation: "synced" }))
      )
    }
    for (const listener of this.listeners.values()) {
      if (listener.syncState !== "pending") continue
      listener.syncState = "failed"
      Deferred.unsafeDone(
        listener.syncedSignal,
        Exit.fail(new InformerStoppedError({ informer: this.name, operation: "synced", handler: listener.name }))
      )
    }
  }

  readonly hasSynced: Effect.Effect<boolean> = Effect.sync(() => this.synced_)
  readonly synced: Effect.Effect<void, InformerStoppedError> = Deferred.await(this.syncedSignal)
  readonly isStarted: Effect.Effect<boolean> = Effect.sync(() => this.started)
  readonly isStopped: Effect.Effect<boolean> = Effect.sync(() => this.stopped)

  readonly lastSyncResourceVersion: Effect.Effect<string> = Effect.suspend(() =>
    this.reflector === undefined ? Effect.succeed("") : this.reflector.lastSyncResourceVersion
  )

  readonly addIndexers = (
    indexers: Indexers<A>
  ): Effect.Effect<void, IndexConflictError | IndexFunctionError | InformerStoppedError> =>
    Effect.suspend((): Effect.Effect<void, IndexConflictError | IndexFunctionError | InformerStoppedError> =>
      this.stopped
        ? Effect.fail(new InformerStoppedError({ informer: this.name, operation: "addIndexers" }))
        : this.indexer.addIndexers(indexers)
    )

  readonly setTransform = (transform: (obj: A) => A): Effect.Effect<void, InformerStartedError> =>
    Effect.suspend(() => {
      if (this.started) return Effect.fail(new InformerStartedError({ informer: this.name, setting: "transform" }))
      this.transform = transform
      return Effect.void
    })

  readonly setWatchErrorHandler = (
    handler: (error: ReflectorError, context: ErrorContext) => Effect.Effect<void>
  ): Effect.Effect<void, InformerStartedError> =>
    Effect.suspend(() => {
      if (this.started) {
        return Effect.fail(new InformerStartedError({ informer: this.name, setting: "watch error handler" }))
      }
      this.watchErrorHandler = handler
      return Effect.void
    })

  readonly notifications: Stream.Stream<Notification<A>> = Stream.unwrapScoped(
    Effect.gen(this, function*() {
      // `None` ends the stream: offered when the informer stops, after what the handler already passed on.
      const queue = yield* Effect.acquireRelease(Queue.unbounded<Option.Option<Notification<A>>>(), Queue.shutdown)
      const stop = yield* Effect.acquireRelease(
        Scope.fork(this.processorScope, ExecutionStrategy.sequential),
        (scope) => Scope.close(scope, Exit.void)
      )
      // Added to the processor scope before the handler's fiber, so closed after that fiber is interrupted.
      yield* Scope.addFinalizer(
        stop,
        Effect.sync(() => {
          queue.unsafeOffer(Option.none())
        })
      )
      const registration = yield* this.addEventHandler({
        name: "notifications-stream",
        onAdd: (object, isInInitialList) => Queue.offer(queue, Option.some({ _tag: "Add", object, isInInitialList })),
        onUpdate: (oldObject, newObject) => Queue.offer(queue, Option.some({ _tag: "Update", oldObject, newObject })),
        onDelete: (object) => Queue.offer(queue, Option.some({ _tag: "Delete", object }))
      }).pipe(Effect.orDie)
      yield* Effect.addFinalizer(() => registration.remove)
      return Stream.fromQueue(queue).pipe(
        Stream.takeWhile(Option.isSome),
        Stream.map((notification) => notification.value)
      )
    }).pipe(Effect.catchAllCause(() => Effect.succeed(Stream.empty)))
  )

  readonly errors: Stream.Stream<WatchError> = Stream.unwrap(Effect.sync(() => Stream.fromPubSub(this.errorHub)))
}

const toResync = (input: Duration.DurationInput | undefined): number =>
  input === undefined ? 0 : Math.max(0, Duration.toMillis(Duration.decode(input)))

const describe = <A>(notification: Notification<A>): string => {
  const obj = notification._tag === "Update" ? notification.newObject : notification.object
  const key = Indexer.deletionHandlingMetaNamespaceKey(obj)
  return `${notification._tag.toLowerCase()} of ${Either.getOrElse(key, () => "<unknown>")}`
}

/** The notified object(s) as JSON, or `undefined` when they cannot be serialised (e.g. nested too deeply). */
const snapshot = <A>(notification: Notification<A>): string | undefined => {
  try {
    return notification._tag === "Update"
      ? JSON.stringify([notification.oldObject, notification.newObject])
      : JSON.stringify(notification.object)
  } catch {
    return undefined
  }
}

// -------------------------------------------------------------------------------------------------
// constructors
// -------------------------------------------------------------------------------------------------

/**
 * Builds an informer in the current scope. Add handlers, then `start` it; closing the scope stops it:
 * first the controller (Reflector, processing loop, DeltaFifo), then the handlers' fibers.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { FakeListerWatcher, SharedInformer } from "effect-informers"
 *
 * const program = Effect.gen(function*() {
 *   const fake = yield* FakeListerWatcher.make()
 *   const informer = yield* SharedInformer.make(fake, { name: "pods" })
 *   yield* informer.addEventHandler({
 *     name: "logger",
 *     onAdd: (pod) => Effect.log(`added ${pod.metadata?.name}`)
 *   })
 *   yield* informer.start
 *   yield* informer.synced
 * }).pipe(Effect.scoped)
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = <A extends KubeObject>(
  lw: ListerWatcher.Service<A>,
  options: SharedInformer.Options<A> = {}
): Effect.Effect<SharedInformer.Service<A>, never, Scope.Scope> =>
  Effect.gen(function*() {
    const scope = yield* Effect.scope
    // Opened first, closed last: the handlers' fibers.
    const processorScope = yield* Scope.fork(scope, ExecutionStrategy.sequential)
    const errorHub = yield* PubSub.unbounded<WatchError>()
    const stopped = { informer: undefined as InformerImpl<A> | undefined }
    // Between the two: marked stopped, and the `errors` streams end (the Reflector can publish no more).
    yield* Scope.addFinalizer(
      scope,
      Effect.zipRight(Effect.sync(() => stopped.informer?.markStopped()), PubSub.shutdown(errorHub))
    )
    // Opened last, closed first: the Reflector, the processing loop and the FIFO.
    const controllerScope = yield* Scope.fork(scope, ExecutionStrategy.sequential)
    const clock = yield* Effect.clock
    const informer = new InformerImpl(lw, options, processorScope, controllerScope, clock, errorHub)
    stopped.informer = informer
    return informer
  })

/**
 * Like `make`, with the ListerWatcher taken from the context.
 *
 * @since 0.1.0
 * @category constructors
 */
export const makeFromContext = (
  options: SharedInformer.Options<KubeObject> = {}
): Effect.Effect<SharedInformer.Service<KubeObject>, never, Scope.Scope | ListerWatcher> =>
  Effect.flatMap(ListerWatcher, (lw) => make(lw, options))

/**
 * A Layer providing a started `SharedInformer` over the context's `ListerWatcher`.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (
  options: SharedInformer.Options<KubeObject> = {}
): Layer.Layer<SharedInformer, never, ListerWatcher> =>
  Layer.scoped(
    SharedInformer,
    Effect.tap(makeFromContext(options), (informer) => Effect.orDie(informer.start))
  )

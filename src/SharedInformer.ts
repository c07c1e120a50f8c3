/**
 * One cache shared by many handlers: client-go's `SharedIndexInformer`.
 *
 * Inside, events flow one way, split as client-go splits it (the machinery is in `src/internal/informer/`):
 * Reflector -> DeltaFifo -> the controller (`informerController.ts`: one fiber that, in one synchronous
 * step per batch, updates the Indexer first and then hands each notification to the processor) -> the
 * processor (`processor.ts`: the listeners, which of them are due for resync, late join) -> one listener
 * per handler (`listener.ts`: a buffer and a fiber). One sync tracker (`syncTracker.ts`) decides every
 * `hasSynced` (the queue's, the informer's, each registration's) and ends every wait on one.
 * Distribution never waits for a handler, so a slow, failing or stuck handler never slows the cache or
 * the other handlers.
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
 *   strictly before the handlers' fibers; no fiber outlives the scope. A handler's callback in progress
 *   is interrupted.
 * - When the resource is gone (a LIST answered 404 NotFound: its CRD was deleted; see `Reflector`'s
 *   `stopOnResourceGone`), the informer stops by itself, in the same order, with a warning: `isStopped`
 *   turns true, `awaitStop` answers `"ResourceGone"`, `status` says `Stopped`, a `synced` still pending
 *   fails with `InformerStoppedError` (`reason: "ResourceGone"`), the streams end. Its cache keeps what it
 *   held. An `InformerFactory` forgets such an informer, so that asking for it again builds a new one.
 *
 * The cache is read-only to everyone but the informer: `indexer` (and every lister over it) is an
 * `Indexer.Reader`, a view with no write member, separate from the store the controller writes.
 * Cached objects are shared and immutable: handlers and readers get the cached object itself. Mutating
 * one corrupts the cache; `detectMutations: true` reports any handler that does.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import type * as Stream from "effect/Stream"
import type * as DeltaFifo from "./DeltaFifo.js"
import type { IndexConflictError, Indexers, IndexFunctionError } from "./Indexer.js"
import type * as Indexer from "./Indexer.js"
import * as errors from "./internal/informer/informerErrors.js"
import * as internal from "./internal/informer/sharedInformer.js"
import type { DeletedFinalStateUnknown, KubeObject } from "./KubeObject.js"
import { ListerWatcher } from "./ListerWatcher.js"
import type { ErrorContext, ReflectorError } from "./Reflector.js"
import type * as Reflector from "./Reflector.js"

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
  readonly resyncPeriod?: Duration.Input | undefined
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
 * Why an informer stopped: `"Closed"`, its scope closed (its factory shut down or removed it);
 * `"ResourceGone"`, a LIST answered 404 NotFound, so the API server no longer serves the resource (its
 * CustomResourceDefinition was deleted).
 *
 * @since 0.2.0
 * @category models
 */
export type StopReason = "Closed" | "ResourceGone"

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
 * had not synced it never will (`operation: "synced"`: what `synced` fails with). `reason` says why:
 * `"ResourceGone"` when a LIST answered 404 NotFound, `"Closed"` or absent when its scope closed.
 *
 * @since 0.1.0
 * @category errors
 */
export const InformerStoppedError: typeof errors.InformerStoppedError = errors.InformerStoppedError

/**
 * @since 0.1.0
 * @category errors
 */
export type InformerStoppedError = errors.InformerStoppedError

/**
 * A setting that must be made before start was changed after.
 *
 * @since 0.1.0
 * @category errors
 */
export const InformerStartedError: typeof errors.InformerStartedError = errors.InformerStartedError

/**
 * @since 0.1.0
 * @category errors
 */
export type InformerStartedError = errors.InformerStartedError
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
  export interface Service<A, I extends string = string> {
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
    /**
     * Waits until the informer has stopped and every fiber of it has ended (its scope closed, or its
     * resource is gone), and says why; at once once it has.
     *
     * @since 0.2.0
     */
    readonly awaitStop: Effect.Effect<StopReason>
    /**
     * The cache (client-go's `GetStore`/`GetIndexer`), as a read-only view: only the informer's machinery
     * writes it. A separate object from the store, the same one at every access. Objects are shared.
     */
    readonly indexer: Indexer.Indexer.Reader<A, I | typeof Indexer.namespaceIndex>
    /**
     * Adds indexes, before or after start; existing objects are indexed at once. Returns `indexer` typed
     * with the new names too (the same object): `indexer` itself is typed with the names the informer was
     * made with.
     */
    readonly addIndexers: <J extends string>(
      indexers: Indexers<A, J>
    ) => Effect.Effect<
      Indexer.Indexer.Reader<A, I | J | typeof Indexer.namespaceIndex>,
      IndexConflictError | IndexFunctionError | InformerStoppedError
    >
    readonly setTransform: (transform: (obj: A) => A) => Effect.Effect<void, InformerStartedError>
    readonly setWatchErrorHandler: (
      handler: (error: ReflectorError, context: ErrorContext) => Effect.Effect<void>
    ) => Effect.Effect<void, InformerStartedError>
    readonly lastSyncResourceVersion: Effect.Effect<string>
    /**
     * Where the Reflector is (syncing, watching, backing off until when, relisting); `None` before `start`.
     * Read-only, for status displays and probes.
     *
     * @since 0.2.0
     */
    readonly status: Effect.Effect<Option.Option<Reflector.Status>>
    /** Every notification, as a Stream (a handler registered while the stream runs); ends when the informer stops. */
    readonly notifications: Stream.Stream<Notification<A>>
    /** Every error the Reflector reports, as a Stream (subscribed while the stream runs); ends when the informer stops. */
    readonly errors: Stream.Stream<WatchError>
  }

  /**
   * @since 0.1.0
   * @category models
   */
  export interface Options<A, I extends string = string> {
    /** Object description for logs and metrics, e.g. `"pods"`. Defaults to the ListerWatcher's. */
    readonly name?: string | undefined
    /** Default resync period of handlers. Zero or absent: no resync. */
    readonly resyncPeriod?: Duration.Input | undefined
    /**
     * Indexes besides the namespace index every informer has. Their names type the informer's `indexer`
     * (and listers over it): a query by another name does not compile.
     */
    readonly indexers?: Indexers<A, I> | undefined
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
export class SharedInformer
  extends Context.Service<SharedInformer, SharedInformer.Service<KubeObject>>()("effect-informers/SharedInformer")
{}

// -------------------------------------------------------------------------------------------------
// constructors
// -------------------------------------------------------------------------------------------------

/**
 * Builds an informer in the current scope. Add handlers, then `start` it; closing the scope stops it:
 * first the controller (Reflector, processing loop, DeltaFifo), then the handlers' fibers.
 *
 * The names of `options.indexers` type the informer's `indexer` (and listers over it): with
 * `indexers: { byNode }`, `informer.indexer.byIndex("byNode", v)` and the namespace index compile, any
 * other name does not. Without `indexers` every name compiles (and an unknown one is an
 * `IndexNotFoundError` at run time). `addIndexers` returns the view typed with the added names.
 *
 * Inside (`src/internal/informer/`): the controller (`informerController.ts`: the pop loop, the cache
 * update), the processor (`processor.ts`: the listeners, distribution, resync, late join), one listener
 * per handler (`listener.ts`: its buffer and fiber) and the sync tracker (`syncTracker.ts`: every
 * `hasSynced` and every wait on one); `sharedInformer.ts` wires them and owns the lifecycle
 * (`informerLifecycle.ts`: Created, Running, Stopped).
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { SharedInformer } from "effect-informers"
 * import { FakeListerWatcher } from "effect-informers/testing"
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
export const make: <A extends KubeObject, I extends string = string>(
  lw: ListerWatcher.Service<A>,
  options?: SharedInformer.Options<A, I>
) => Effect.Effect<SharedInformer.Service<A, I>, never, Scope.Scope> = internal.make

/**
 * Like `make`, with the ListerWatcher taken from the context.
 *
 * @since 0.1.0
 * @category constructors
 */
export const makeFromContext = (
  options: SharedInformer.Options<KubeObject> = {}
): Effect.Effect<SharedInformer.Service<KubeObject>, never, Scope.Scope | ListerWatcher> =>
  Effect.flatMap(Effect.service(ListerWatcher), (lw) => make(lw, options))

/**
 * A Layer providing a started `SharedInformer` over the context's `ListerWatcher`.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (
  options: SharedInformer.Options<KubeObject> = {}
): Layer.Layer<SharedInformer, never, ListerWatcher> =>
  Layer.effect(
    SharedInformer,
    Effect.tap(makeFromContext(options), (informer) => Effect.orDie(informer.start))
  )

/**
 * The queue between the Reflector (producer) and the informer's processing loop (consumer): client-go's
 * `DeltaFIFO` and its in-order successor `RealFIFO`, in one module with two modes.
 *
 * **`"inOrder"` (default, client-go's `RealFIFO`).** Every delta is appended in arrival order; nothing is
 * coalesced, so the consumer sees the watch's global order. With `atomic: true` (the default, client-go's
 * `AtomicFIFO`) a relist is one `ReplacedAll` delta and a resync one `SyncAll` delta, bookmarks become
 * `Bookmark` deltas, and the consumer computes relist deletions against its indexer. With
 * `atomic: false`, `replace` appends tombstone deletes first (for keys queued or known but not listed)
 * and then one `Replaced` delta per listed object, and `resync` appends `Sync` for every known key with
 * nothing queued.
 *
 * **`"coalescing"` (client-go's `DeltaFIFO`).** Deltas accumulate per key, oldest to newest; a key is queued
 * once, in first-enqueue order (re-adding a queued key does not move it; a popped key that comes back goes
 * to the back). Of two consecutive deletes only one is kept: the older, unless it is a tombstone. A delete of a key that is
 * neither queued nor known is ignored. `replace` appends `Replaced` (or `Sync`) for each listed object,
 * then a `DeletedFinalStateUnknown` tombstone for every queued or known key missing from the list.
 * `resync` appends `Sync` for known keys with nothing queued.
 *
 * **Both modes.** A transform is applied exactly once per object as it enters the queue, never to
 * tombstones or `Sync` deltas (nor to an object `replace` receives that is identical to the known object,
 * i.e. already transformed). `pop` and `popBatch` wait for an item, hand it to a process function and
 * return its result; `close` makes every waiting pop fail with `FifoClosedError` once the queue is drained.
 * `hasSynced` follows client-go's initial-population counting: the queue is synced once an add, update or
 * delete happened before the first `replace`, or once everything queued by the first `replace` has been
 * popped (coalescing: counted by key and decremented before processing; in-order: counted by delta and
 * decremented after processing). A popped item is "in the initial list" when the queue was not yet synced.
 * `popBatch` never mixes initial-list items with later ones. The count is kept by the informer's sync
 * tracker (`internal/syncTracker.ts`), which decides every `hasSynced` of an informer; a queue made on its
 * own keeps one of its own.
 *
 * The queue's machinery is in `internal/deltaFifo.ts`. A queue you make is written through its Effect API;
 * the informer builds its own there, with the synchronous enqueues its Reflector uses and its sync tracker,
 * and never hands it out.
 *
 * Every enqueue is one synchronous step, so producers in different fibers keep their own order.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type { KeyError, KeyFunction } from "./Indexer.js"
import * as internal from "./internal/informer/deltaFifo.js"
import type { DeletedFinalStateUnknown, KubeObject } from "./KubeObject.js"

// -------------------------------------------------------------------------------------------------
// models
// -------------------------------------------------------------------------------------------------

/**
 * A change to one object. `Replaced` comes from a relist, `Sync` from a resync.
 *
 * @since 0.1.0
 * @category models
 */
export interface ObjectDelta<A, Tag extends "Added" | "Updated" | "Replaced" | "Sync"> {
  readonly _tag: Tag
  readonly key: string
  readonly object: A
}

/**
 * A deletion: the last state of the object, or a tombstone when it was inferred from a relist.
 *
 * @since 0.1.0
 * @category models
 */
export interface Deleted<A> {
  readonly _tag: "Deleted"
  readonly key: string
  readonly object: A | DeletedFinalStateUnknown<A>
}

/**
 * A whole relist (in-order atomic mode): the listed objects with their keys and the list's
 * resourceVersion. The consumer replaces its store and infers deletions itself.
 *
 * @since 0.1.0
 * @category models
 */
export interface ReplacedAll<A> {
  readonly _tag: "ReplacedAll"
  readonly resourceVersion: string
  readonly objects: ReadonlyArray<A>
  readonly keys: ReadonlyArray<string>
}

/**
 * A whole resync (in-order atomic mode): the consumer re-delivers every cached object as a sync update.
 *
 * @since 0.1.0
 * @category models
 */
export interface SyncAll {
  readonly _tag: "SyncAll"
}

/**
 * A watch bookmark (in-order atomic mode): the consumer records the resourceVersion.
 *
 * @since 0.1.0
 * @category models
 */
export interface Bookmark {
  readonly _tag: "Bookmark"
  readonly resourceVersion: string
}

/**
 * @since 0.1.0
 * @category models
 */
export type Delta<A> =
  | ObjectDelta<A, "Added">
  | ObjectDelta<A, "Updated">
  | Deleted<A>
  | ObjectDelta<A, "Replaced">
  | ObjectDelta<A, "Sync">
  | ReplacedAll<A>
  | SyncAll
  | Bookmark

/**
 * The deltas that concern one object (everything but `ReplacedAll`, `SyncAll` and `Bookmark`).
 *
 * @since 0.1.0
 * @category models
 */
export type KeyedDelta<A> = Exclude<Delta<A>, ReplacedAll<A> | SyncAll | Bookmark>

/**
 * @since 0.1.0
 * @category guards
 */
export const isKeyedDelta: <A>(delta: Delta<A>) => delta is KeyedDelta<A> = internal.isKeyedDelta

/**
 * What a pop hands to the process function. In coalescing mode `deltas` holds every queued delta of one
 * key (or of several keys for `popBatch`, each key's deltas contiguous); in in-order mode one delta
 * (`pop`) or a batch of deltas with distinct keys (`popBatch`).
 *
 * @since 0.1.0
 * @category models
 */
export interface Popped<A> {
  readonly deltas: ReadonlyArray<Delta<A>>
  readonly isInInitialList: boolean
}

/**
 * What `make` needs to know about the objects the consumer already has: the informer's indexer.
 *
 * @since 0.1.0
 * @category models
 */
export interface KnownObjects<A> {
  readonly unsafeGetByKey: (key: string) => A | undefined
  readonly unsafeKeys: () => Iterable<string>
}

/**
 * @since 0.1.0
 * @category models
 */
export type Mode = "inOrder" | "coalescing"

// -------------------------------------------------------------------------------------------------
// errors
// -------------------------------------------------------------------------------------------------

/**
 * The queue was closed (and, for pops, drained).
 *
 * @since 0.1.0
 * @category errors
 */
export const FifoClosedError: typeof internal.FifoClosedError = internal.FifoClosedError

/**
 * @since 0.1.0
 * @category errors
 */
export type FifoClosedError = internal.FifoClosedError

/**
 * The transform function threw for an object; nothing was queued.
 *
 * @since 0.1.0
 * @category errors
 */
export const TransformError: typeof internal.TransformError = internal.TransformError

/**
 * @since 0.1.0
 * @category errors
 */
export type TransformError = internal.TransformError

/**
 * Errors an enqueue can fail with.
 *
 * @since 0.1.0
 * @category errors
 */
export type EnqueueError = KeyError | TransformError | FifoClosedError

// -------------------------------------------------------------------------------------------------
// service
// -------------------------------------------------------------------------------------------------

/**
 * @since 0.1.0
 */
export declare namespace DeltaFifo {
  /**
   * @since 0.1.0
   * @category models
   */
  export interface Service<A> {
    readonly mode: Mode
    readonly atomic: boolean
    readonly add: (obj: A) => Effect.Effect<void, EnqueueError>
    readonly update: (obj: A) => Effect.Effect<void, EnqueueError>
    readonly delete: (obj: A | DeletedFinalStateUnknown<A>) => Effect.Effect<void, EnqueueError>
    readonly replace: (objects: ReadonlyArray<A>, resourceVersion: string) => Effect.Effect<void, EnqueueError>
    readonly resync: Effect.Effect<void, FifoClosedError>
    /** Queues a `Bookmark` delta in in-order atomic mode; does nothing in the other modes. */
    readonly bookmark: (resourceVersion: string) => Effect.Effect<void, FifoClosedError>
    /** Waits for one item (see `Popped`), processes it, and returns what `process` returned. */
    readonly pop: <B, E, R>(
      process: (popped: Popped<A>) => Effect.Effect<B, E, R>
    ) => Effect.Effect<B, E | FifoClosedError, R>
    /** Like `pop`, for up to `max` keys at once. */
    readonly popBatch: <B, E, R>(
      max: number,
      process: (popped: Popped<A>) => Effect.Effect<B, E, R>
    ) => Effect.Effect<B, E | FifoClosedError, R>
    readonly close: Effect.Effect<void>
    readonly isClosed: Effect.Effect<boolean>
    readonly hasSynced: Effect.Effect<boolean>
    /** Queued items: keys in coalescing mode, deltas in in-order mode. */
    readonly length: Effect.Effect<number>
    /** Keys of the queued items, in queue order (test and debugging helper). */
    readonly listKeys: Effect.Effect<ReadonlyArray<string>>
    /** `length`, synchronously. */
    readonly unsafeLength: () => number
  }

  /**
   * @since 0.1.0
   * @category models
   */
  export interface Options<A> {
    /** Defaults to `"inOrder"`. */
    readonly mode?: Mode | undefined
    /** In-order mode only: one `ReplacedAll`/`SyncAll` delta per relist/resync. Defaults to `true`. */
    readonly atomic?: boolean | undefined
    /** Defaults to `Indexer.deletionHandlingMetaNamespaceKey`. */
    readonly keyFunction?: KeyFunction<A> | undefined
    /** The consumer's store, used to infer deletions and resyncs (not needed in atomic mode). */
    readonly knownObjects?: KnownObjects<A> | undefined
    /** Applied once to each object entering the queue; must not mutate its input. */
    readonly transform?: ((obj: A) => A) | undefined
    /** Coalescing mode: `replace` emits `Replaced` (default) rather than `Sync` deltas. */
    readonly emitReplaced?: boolean | undefined
  }
}

/**
 * The DeltaFifo service tag, for apps that compose a queue of `KubeObject` deltas through a Layer.
 *
 * @since 0.1.0
 * @category tags
 */
export class DeltaFifo
  extends Context.Service<DeltaFifo, DeltaFifo.Service<KubeObject>>()("effect-informers/DeltaFifo")
{}

// -------------------------------------------------------------------------------------------------
// constructors
// -------------------------------------------------------------------------------------------------

/**
 * Builds an empty queue synchronously.
 *
 * @since 0.1.0
 * @category constructors
 */
export const unsafeMake = <A = KubeObject>(options: DeltaFifo.Options<A> = {}): DeltaFifo.Service<A> =>
  internal.make(options)

/**
 * Builds an empty queue.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { DeltaFifo } from "effect-informers"
 *
 * const program = Effect.gen(function*() {
 *   const fifo = yield* DeltaFifo.make({ mode: "coalescing" })
 *   yield* fifo.add({ metadata: { name: "a", resourceVersion: "1" } })
 *   yield* fifo.update({ metadata: { name: "a", resourceVersion: "2" } })
 *   // one pop hands over both deltas of key "a"
 *   return yield* fifo.pop((popped) => Effect.succeed(popped.deltas.map((delta) => delta._tag)))
 * })
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = <A = KubeObject>(options: DeltaFifo.Options<A> = {}): Effect.Effect<DeltaFifo.Service<A>> =>
  Effect.sync(() => unsafeMake(options))

/**
 * A Layer providing a `DeltaFifo` of `KubeObject`s, closed when the Layer is released.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (options: DeltaFifo.Options<KubeObject> = {}): Layer.Layer<DeltaFifo> =>
  Layer.effect(DeltaFifo, Effect.acquireRelease(make(options), (fifo) => fifo.close))

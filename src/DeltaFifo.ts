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
 * Every enqueue is one synchronous step, so producers in different fibers keep their own order.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import type { KeyError, KeyFunction } from "./Indexer.js"
import { deletionHandlingMetaNamespaceKey, fastMetaNamespaceKey } from "./Indexer.js"
import { Deque } from "./internal/deque.js"
import { QueueTracker } from "./internal/syncTracker.js"
import type { KubeObject } from "./KubeObject.js"
import { DeletedFinalStateUnknown } from "./KubeObject.js"

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
export const isKeyedDelta = <A>(delta: Delta<A>): delta is KeyedDelta<A> => "key" in delta

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
export class FifoClosedError extends Data.TaggedError("FifoClosedError")<{}> {
  override get message(): string {
    return "DeltaFifo: manipulating with closed queue"
  }
}

/**
 * The transform function threw for an object; nothing was queued.
 *
 * @since 0.1.0
 * @category errors
 */
export class TransformError extends Data.TaggedError("TransformError")<{
  readonly key: string
  readonly cause: unknown
}> {
  override get message(): string {
    return `transform failed for "${this.key}": ${String(this.cause)}`
  }
}

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
    /**
     * Synchronous `add` / `update` / `delete` / `bookmark` for producers that already run inside one
     * synchronous step (the Reflector applies a chunk of watch events at once): they return the error
     * instead of failing.
     */
    readonly unsafe: {
      readonly add: (obj: A) => EnqueueError | undefined
      readonly update: (obj: A) => EnqueueError | undefined
      readonly delete: (obj: A | DeletedFinalStateUnknown<A>) => EnqueueError | undefined
      readonly bookmark: (resourceVersion: string) => FifoClosedError | undefined
    }
    readonly close: Effect.Effect<void>
    readonly isClosed: Effect.Effect<boolean>
    readonly hasSynced: Effect.Effect<boolean>
    /** Queued items: keys in coalescing mode, deltas in in-order mode. */
    readonly length: Effect.Effect<number>
    /** Keys of the queued items, in queue order (test and debugging helper). */
    readonly listKeys: Effect.Effect<ReadonlyArray<string>>
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
    /**
     * The informer's sync tracker for this queue: it then owns the initial-population count, and learns of
     * every replace. A queue made without one counts for itself.
     *
     * @internal
     */
    readonly syncTracker?: QueueTracker | undefined
  }
}

/**
 * The DeltaFifo service tag, for apps that compose a queue of `KubeObject` deltas through a Layer.
 *
 * @since 0.1.0
 * @category tags
 */
export class DeltaFifo extends Context.Tag("effect-informers/DeltaFifo")<DeltaFifo, DeltaFifo.Service<KubeObject>>() {}

const isDeletedDelta = <A>(delta: KeyedDelta<A> | undefined): delta is Deleted<A> =>
  delta !== undefined && delta._tag === "Deleted"

/**
 * The machinery both modes share: waiting, closing, the Effect API, and when items count as popped for
 * the initial-population count (which the `QueueTracker` holds). A mode supplies how objects are queued
 * and how a batch is taken.
 */
abstract class BaseFifo<A> implements DeltaFifo.Service<A> {
  abstract readonly mode: Mode
  abstract readonly atomic: boolean
  protected closed = false
  /** client-go's `populated` and `initialPopulationCount`. */
  private readonly population: QueueTracker
  private readonly latch = Effect.unsafeMakeLatch(false)
  protected readonly keyFunction: KeyFunction<A>
  protected readonly knownObjects: KnownObjects<A> | undefined
  private readonly transform: ((obj: A) => A) | undefined

  private readonly defaultKey: boolean

  constructor(options: DeltaFifo.Options<A>) {
    this.keyFunction = options.keyFunction ?? deletionHandlingMetaNamespaceKey
    this.defaultKey = this.keyFunction === deletionHandlingMetaNamespaceKey
    this.knownObjects = options.knownObjects
    this.transform = options.transform
    this.population = options.syncTracker ?? new QueueTracker()
  }

  /** Number of queued items (keys or deltas). */
  abstract unsafeLength(): number
  /** Queues one object delta (key already computed, object already transformed). */
  protected abstract enqueue(delta: KeyedDelta<A>): void
  /** Whether a delete of `key` should be queued at all. */
  protected abstract acceptsDelete(key: string): boolean
  /** Queues what a relist means; `keys[i]` names `objects[i]`. Returns how many items it queued. */
  protected abstract enqueueReplace(objects: ReadonlyArray<A>, keys: ReadonlyArray<string>, rv: string): number
  protected abstract enqueueResync(): void
  protected abstract enqueueBookmark(resourceVersion: string): void
  /** Takes up to `max` items from a non-empty queue; returns the deltas and the number of items taken. */
  protected abstract take(max: number): { readonly deltas: ReadonlyArray<Delta<A>>; readonly count: number }
  /** Whether the initial population counter is decremented before (coalescing) or after processing. */
  protected abstract readonly countsBeforeProcessing: boolean
  abstract listQueuedKeys(): ReadonlyArray<string>

  private wake(): void {
    if (this.unsafeLength() > 0) this.latch.unsafeOpen()
  }

  /** Transforms (unless a tombstone) and keys an object. */
  /** The key of `obj`, without allocating when the key function is the default one. */
  private keyOf(obj: A | DeletedFinalStateUnknown<A>): string | KeyError {
    if (this.defaultKey) {
      const key = fastMetaNamespaceKey(obj)
      if (key !== undefined) return key
    }
    const key = this.keyFunction(obj)
    return Either.isLeft(key) ? key.left : key.right
  }

  /** Queues one object delta, or returns why not. One synchronous step. */
  private enqueueObject(
    tag: "Added" | "Updated" | "Deleted",
    obj: A | DeletedFinalStateUnknown<A>
  ): EnqueueError | undefined {
    if (this.closed) return new FifoClosedError()
    let object = obj
    if (this.transform !== undefined && !(obj instanceof DeletedFinalStateUnknown)) {
      try {
        object = this.transform(obj)
      } catch (cause) {
        const key = this.keyOf(obj)
        return new TransformError({ key: typeof key === "string" ? key : "<unknown>", cause })
      }
    }
    const key = this.keyOf(object)
    if (typeof key !== "string") return key
    this.population.touched()
    if (tag === "Deleted") {
      if (!this.acceptsDelete(key)) return undefined
      this.enqueue({ _tag: "Deleted", key, object })
    } else {
      this.enqueue({ _tag: tag, key, object: object as A })
    }
    this.wake()
    return undefined
  }

  private enqueueEffect(
    tag: "Added" | "Updated" | "Deleted",
    obj: A | DeletedFinalStateUnknown<A>
  ): Effect.Effect<void, EnqueueError> {
    return Effect.suspend(() => {
      const error = this.enqueueObject(tag, obj)
      return error === undefined ? Effect.void : Effect.fail(error)
    })
  }

  readonly add = (obj: A): Effect.Effect<void, EnqueueError> => this.enqueueEffect("Added", obj)
  readonly update = (obj: A): Effect.Effect<void, EnqueueError> => this.enqueueEffect("Updated", obj)
  readonly delete = (obj: A | DeletedFinalStateUnknown<A>): Effect.Effect<void, EnqueueError> =>
    this.enqueueEffect("Deleted", obj)
  private unsafeBookmark(resourceVersion: string): FifoClosedError | undefined {
    if (this.closed) return new FifoClosedError()
    this.enqueueBookmark(resourceVersion)
    this.wake()
    return undefined
  }

  readonly unsafe: DeltaFifo.Service<A>["unsafe"] = {
    add: (obj) => this.enqueueObject("Added", obj),
    update: (obj) => this.enqueueObject("Updated", obj),
    delete: (obj) => this.enqueueObject("Deleted", obj),
    bookmark: (resourceVersion) => this.unsafeBookmark(resourceVersion)
  }

  readonly replace = (objects: ReadonlyArray<A>, resourceVersion: string): Effect.Effect<void, EnqueueError> =>
    Effect.suspend((): Effect.Effect<void, EnqueueError> => {
      if (this.closed) return Effect.fail(new FifoClosedError())
      // Key and transform every object first: a failure leaves the queue untouched.
      const prepared: Array<A> = new Array(objects.length)
      const keys: Array<string> = new Array(objects.length)
      for (let i = 0; i < objects.length; i++) {
        const obj = objects[i]
        const known = this.knownObjects === undefined ? undefined : this.knownKey(obj)
        if (known !== undefined) {
          // The very object the consumer holds: already transformed, not transformed twice.
          prepared[i] = obj
          keys[i] = known
          continue
        }
        let object = obj
        if (this.transform !== undefined) {
          try {
            object = this.transform(obj)
          } catch (cause) {
            const key = this.keyOf(obj)
            return Effect.fail(new TransformError({ key: typeof key === "string" ? key : "<unknown>", cause }))
          }
        }
        const key = this.keyOf(object)
        if (typeof key !== "string") return Effect.fail(key)
        keys[i] = key
        prepared[i] = object
      }
      const queued = this.enqueueReplace(prepared, keys, resourceVersion)
      this.wake()
      this.population.replaced(queued)
      return Effect.void
    })

  /** The key of `obj` if it is, by identity, the object the consumer holds under that key. */
  private knownKey(obj: A): string | undefined {
    const key = this.keyOf(obj)
    if (typeof key !== "string") return undefined
    return this.knownObjects!.unsafeGetByKey(key) === obj ? key : undefined
  }

  readonly resync: Effect.Effect<void, FifoClosedError> = Effect.suspend(() => {
    if (this.closed) return Effect.fail(new FifoClosedError())
    this.enqueueResync()
    this.wake()
    return Effect.void
  })

  readonly bookmark = (resourceVersion: string): Effect.Effect<void, FifoClosedError> =>
    Effect.suspend(() => {
      const error = this.unsafeBookmark(resourceVersion)
      return error === undefined ? Effect.void : Effect.fail(error)
    })

  private readonly awaitItem: Effect.Effect<void, FifoClosedError> = Effect.suspend(() => {
    if (this.unsafeLength() > 0) return Effect.void
    if (this.closed) return Effect.fail(new FifoClosedError())
    this.latch.unsafeClose()
    return Effect.zipRight(this.latch.await, this.awaitItem)
  })

  readonly pop = <B, E, R>(
    process: (popped: Popped<A>) => Effect.Effect<B, E, R>
  ): Effect.Effect<B, E | FifoClosedError, R> => this.popBatch(1, process)

  readonly popBatch = <B, E, R>(
    max: number,
    process: (popped: Popped<A>) => Effect.Effect<B, E, R>
  ): Effect.Effect<B, E | FifoClosedError, R> =>
    Effect.flatMap(this.awaitItem, (): Effect.Effect<B, E | FifoClosedError, R> => {
      // The wait and the take are two steps: the fiber may yield in between and another popper may empty the
      // queue, so check again in the step that takes.
      if (this.unsafeLength() === 0) return this.popBatch(max, process)
      const population = this.population
      const isInInitialList = !population.hasSynced()
      const pending = population.initialPopulation
      const limit = pending > 0 ? Math.min(Math.max(1, max), pending) : Math.max(1, max)
      const { count, deltas } = this.take(limit)
      const popped: Popped<A> = { deltas, isInInitialList }
      if (this.countsBeforeProcessing) {
        population.popped(count)
        return process(popped)
      }
      return Effect.ensuring(process(popped), Effect.sync(() => population.popped(count)))
    })

  readonly close: Effect.Effect<void> = Effect.sync(() => {
    this.closed = true
    this.latch.unsafeOpen()
  })

  readonly isClosed: Effect.Effect<boolean> = Effect.sync(() => this.closed)
  readonly hasSynced: Effect.Effect<boolean> = Effect.sync(() => this.population.hasSynced())
  readonly length: Effect.Effect<number> = Effect.sync(() => this.unsafeLength())
  readonly listKeys: Effect.Effect<ReadonlyArray<string>> = Effect.sync(() => this.listQueuedKeys())
}

// -------------------------------------------------------------------------------------------------
// coalescing mode (client-go DeltaFIFO)
// -------------------------------------------------------------------------------------------------

class CoalescingFifo<A> extends BaseFifo<A> {
  readonly mode = "coalescing" as const
  readonly atomic = false
  protected readonly countsBeforeProcessing = true
  private readonly items = new Map<string, Array<KeyedDelta<A>>>()
  private readonly queue = new Deque<string>()
  private readonly emitReplaced: boolean

  constructor(options: DeltaFifo.Options<A>) {
    super(options)
    this.emitReplaced = options.emitReplaced ?? true
  }

  unsafeLength(): number {
    return this.queue.length
  }

  listQueuedKeys(): ReadonlyArray<string> {
    return Array.from(this.queue)
  }

  protected enqueue(delta: KeyedDelta<A>): void {
    const deltas = this.items.get(delta.key)
    if (deltas === undefined) {
      this.items.set(delta.key, [delta])
      this.queue.push(delta.key)
      return
    }
    deltas.push(delta)
    // Of two consecutive deletes keep one (client-go's isDeletionDup): the older, unless the older is a
    // tombstone, so that a real final state is never replaced by an inferred one.
    const n = deltas.length
    if (n >= 2 && deltas[n - 1]._tag === "Deleted" && deltas[n - 2]._tag === "Deleted") {
      if (deltas[n - 2].object instanceof DeletedFinalStateUnknown) deltas.splice(n - 2, 1)
      else deltas.pop()
    }
  }

  protected acceptsDelete(key: string): boolean {
    if (this.items.has(key)) return true
    return this.knownObjects !== undefined && this.knownObjects.unsafeGetByKey(key) !== undefined
  }

  protected enqueueReplace(objects: ReadonlyArray<A>, keys: ReadonlyArray<string>): number {
    const listed = new Set<string>()
    const tag = this.emitReplaced ? "Replaced" : "Sync"
    for (let i = 0; i < objects.length; i++) {
      listed.add(keys[i])
      this.enqueue({ _tag: tag, key: keys[i], object: objects[i] })
    }
    let deletions = 0
    // Queued keys missing from the list: tombstone holding the newest queued state.
    for (const [key, deltas] of this.items) {
      if (listed.has(key)) continue
      const newest = deltas[deltas.length - 1].object
      const last = newest instanceof DeletedFinalStateUnknown ? newest.obj : newest
      deletions++
      this.enqueue({ _tag: "Deleted", key, object: new DeletedFinalStateUnknown({ key, obj: last }) })
    }
    // Known keys missing from the list and not queued: tombstone holding the known state.
    if (this.knownObjects !== undefined) {
      for (const key of this.knownObjects.unsafeKeys()) {
        if (listed.has(key) || this.items.has(key)) continue
        deletions++
        const obj = this.knownObjects.unsafeGetByKey(key)
        this.enqueue({ _tag: "Deleted", key, object: new DeletedFinalStateUnknown({ key, obj }) })
      }
    }
    return listed.size + deletions
  }

  protected enqueueResync(): void {
    if (this.knownObjects === undefined) return
    for (const key of this.knownObjects.unsafeKeys()) {
      if (this.items.has(key)) continue
      const obj = this.knownObjects.unsafeGetByKey(key)
      if (obj !== undefined) this.enqueue({ _tag: "Sync", key, object: obj })
    }
  }

  protected enqueueBookmark(): void {}

  protected take(max: number): { readonly deltas: ReadonlyArray<Delta<A>>; readonly count: number } {
    const first = this.queue.shift()!
    let deltas: Array<Delta<A>> = this.items.get(first)!
    this.items.delete(first)
    let count = 1
    while (count < max && this.queue.length > 0) {
      const key = this.queue.shift()!
      if (count === 1) deltas = deltas.slice()
      for (const delta of this.items.get(key)!) deltas.push(delta)
      this.items.delete(key)
      count++
    }
    return { deltas, count }
  }
}

// -------------------------------------------------------------------------------------------------
// in-order mode (client-go RealFIFO)
// -------------------------------------------------------------------------------------------------

class InOrderFifo<A> extends BaseFifo<A> {
  readonly mode = "inOrder" as const
  readonly atomic: boolean
  protected readonly countsBeforeProcessing = false
  private readonly queue = new Deque<Delta<A>>()

  constructor(options: DeltaFifo.Options<A>) {
    super(options)
    this.atomic = options.atomic ?? true
  }

  unsafeLength(): number {
    return this.queue.length
  }

  listQueuedKeys(): ReadonlyArray<string> {
    const keys: Array<string> = []
    for (const delta of this.queue) if (isKeyedDelta(delta)) keys.push(delta.key)
    return keys
  }

  protected enqueue(delta: KeyedDelta<A>): void {
    this.queue.push(delta)
  }

  protected acceptsDelete(): boolean {
    return true
  }

  protected enqueueReplace(objects: ReadonlyArray<A>, keys: ReadonlyArray<string>, resourceVersion: string): number {
    if (this.atomic) {
      this.queue.push({ _tag: "ReplacedAll", resourceVersion, objects, keys })
      return this.queue.length
    }
    const listed = new Set(keys)
    // Newest queued delta per key, in first-appearance order.
    const newest = new Map<string, KeyedDelta<A>>()
    for (const delta of this.queue) if (isKeyedDelta(delta)) newest.set(delta.key, delta)
    // Tombstones first: queued keys whose newest delta is not a delete, then known keys not queued.
    for (const [key, delta] of newest) {
      if (listed.has(key) || isDeletedDelta(delta)) continue
      this.queue.push({ _tag: "Deleted", key, object: new DeletedFinalStateUnknown({ key, obj: delta.object as A }) })
    }
    if (this.knownObjects !== undefined) {
      for (const key of this.knownObjects.unsafeKeys()) {
        if (listed.has(key) || newest.has(key)) continue
        const obj = this.knownObjects.unsafeGetByKey(key)
        this.queue.push({ _tag: "Deleted", key, object: new DeletedFinalStateUnknown({ key, obj }) })
      }
    }
    for (let i = 0; i < objects.length; i++) this.queue.push({ _tag: "Replaced", key: keys[i], object: objects[i] })
    return this.queue.length
  }

  protected enqueueResync(): void {
    if (this.atomic) {
      this.queue.push({ _tag: "SyncAll" })
      return
    }
    if (this.knownObjects === undefined) return
    const queued = new Set(this.listQueuedKeys())
    for (const key of this.knownObjects.unsafeKeys()) {
      if (queued.has(key)) continue
      const obj = this.knownObjects.unsafeGetByKey(key)
      if (obj !== undefined) this.queue.push({ _tag: "Sync", key, object: obj })
    }
  }

  protected enqueueBookmark(resourceVersion: string): void {
    if (this.atomic) this.queue.push({ _tag: "Bookmark", resourceVersion })
  }

  protected take(max: number): { readonly deltas: ReadonlyArray<Delta<A>>; readonly count: number } {
    const first = this.queue.shift()!
    if (max <= 1 || !isKeyedDelta(first)) return { deltas: [first], count: 1 }
    const deltas: Array<Delta<A>> = [first]
    const keys = new Set<string>([first.key])
    while (deltas.length < max) {
      const next = this.queue.peek()
      if (next === undefined || !isKeyedDelta(next) || keys.has(next.key)) break
      keys.add(next.key)
      deltas.push(this.queue.shift()!)
    }
    return { deltas, count: deltas.length }
  }
}

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
  options.mode === "coalescing" ? new CoalescingFifo(options) : new InOrderFifo(options)

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
  Layer.scoped(DeltaFifo, Effect.acquireRelease(make(options), (fifo) => fifo.close))

/**
 * The machinery of `DeltaFifo`: both modes, their shared waiting and closing, the errors they raise, and
 * the writer interface the informer hands its Reflector. `DeltaFifo.ts` holds the types, the invariants
 * and the documentation, and re-exports the errors.
 *
 * A queue is the same object under two types: `DeltaFifo.Service` (what `DeltaFifo.make` returns to a
 * user: the Effect API) and `Fifo` (here, internal): the service plus the synchronous enqueues the
 * Reflector applies a chunk of watch events with (`Reflector.Store`'s optional `unsafe`). The informer
 * builds its queue here, with its sync tracker, and never hands the queue out.
 *
 * Lives here, not in `DeltaFifo.ts`, so that those two things (the synchronous writes and the sync tracker)
 * stay out of the public declarations; the errors live here so that the queue raises them without
 * importing the public module that imports it (no import cycle).
 *
 * @internal
 */
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Latch from "effect/Latch"
import * as Result from "effect/Result"
import type {
  Deleted,
  Delta,
  DeltaFifo,
  EnqueueError,
  KeyedDelta,
  KnownObjects,
  Mode,
  Popped
} from "../../DeltaFifo.js"
import type { KeyError, KeyFunction } from "../../Indexer.js"
import { deletionHandlingMetaNamespaceKey, fastMetaNamespaceKey } from "../../Indexer.js"
import { DeletedFinalStateUnknown } from "../../KubeObject.js"
import { Deque } from "../deque.js"
import { QueueTracker } from "./syncTracker.js"

// -------------------------------------------------------------------------------------------------
// errors (re-exported and documented by DeltaFifo.ts)
// -------------------------------------------------------------------------------------------------

/**
 * The queue was closed (and, for pops, drained).
 *
 * @internal
 */
export class FifoClosedError extends Data.TaggedError("FifoClosedError")<{}> {
  override get message(): string {
    return "DeltaFifo: manipulating with closed queue"
  }
}

/**
 * The transform function threw for an object; nothing was queued.
 *
 * @internal
 */
export class TransformError extends Data.TaggedError("TransformError")<{
  readonly key: string
  readonly cause: unknown
}> {
  override get message(): string {
    return `transform failed for "${this.key}": ${String(this.cause)}`
  }
}

// -------------------------------------------------------------------------------------------------
// the writer
// -------------------------------------------------------------------------------------------------

/**
 * The queue as its owner writes it: the public service plus synchronous `add` / `update` / `delete` /
 * `bookmark` for producers that already run inside one synchronous step (the Reflector applies a chunk
 * of watch events at once). They return the error instead of failing. A `Fifo` is a `Reflector.Store`
 * with its `unsafe` variants.
 *
 * @internal
 */
export interface Fifo<A> extends DeltaFifo.Service<A> {
  readonly unsafe: {
    readonly add: (obj: A) => EnqueueError | undefined
    readonly update: (obj: A) => EnqueueError | undefined
    readonly delete: (obj: A | DeletedFinalStateUnknown<A>) => EnqueueError | undefined
    readonly bookmark: (resourceVersion: string) => FifoClosedError | undefined
  }
}

/** A delta that concerns one object (`DeltaFifo.isKeyedDelta`). @internal */
export const isKeyedDelta = <A>(delta: Delta<A>): delta is KeyedDelta<A> => "key" in delta

const isDeletedDelta = <A>(delta: KeyedDelta<A> | undefined): delta is Deleted<A> =>
  delta !== undefined && delta._tag === "Deleted"

/**
 * The machinery both modes share: waiting, closing, the Effect API, and when items count as popped for
 * the initial-population count (which the `QueueTracker` holds). A mode supplies how objects are queued
 * and how a batch is taken.
 */
abstract class BaseFifo<A> implements Fifo<A> {
  abstract readonly mode: Mode
  abstract readonly atomic: boolean
  protected closed = false
  /** client-go's `populated` and `initialPopulationCount`. */
  private readonly population: QueueTracker
  private readonly latch = Latch.makeUnsafe(false)
  protected readonly keyFunction: KeyFunction<A>
  protected readonly knownObjects: KnownObjects<A> | undefined
  private readonly transform: ((obj: A) => A) | undefined

  private readonly defaultKey: boolean

  constructor(options: DeltaFifo.Options<A>, population: QueueTracker | undefined) {
    this.keyFunction = options.keyFunction ?? deletionHandlingMetaNamespaceKey
    this.defaultKey = this.keyFunction === deletionHandlingMetaNamespaceKey
    this.knownObjects = options.knownObjects
    this.transform = options.transform
    this.population = population ?? new QueueTracker()
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
    if (this.unsafeLength() > 0) this.latch.openUnsafe()
  }

  /** Transforms (unless a tombstone) and keys an object. */
  /** The key of `obj`, without allocating when the key function is the default one. */
  private keyOf(obj: A | DeletedFinalStateUnknown<A>): string | KeyError {
    if (this.defaultKey) {
      const key = fastMetaNamespaceKey(obj)
      if (key !== undefined) return key
    }
    const key = this.keyFunction(obj)
    return Result.isFailure(key) ? key.failure : key.success
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

  readonly unsafe: Fifo<A>["unsafe"] = {
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

  // The close semantics the handler buffers share (`internal/listenerBuffer.ts`): `close` opens the latch;
  // a waiting or later pop takes what is still queued, then fails with `FifoClosedError`. A latch opened
  // from synchronous code (the Reflector's step) resumes its waiter at once (Effect 4): the woken popper
  // yields first, so that the controller's step never runs inside the Reflector's, and it takes what the
  // Reflector queued in between when it runs again.
  private readonly awaitItem: Effect.Effect<void, FifoClosedError> = Effect.suspend(() => {
    if (this.unsafeLength() > 0) return Effect.void
    if (this.closed) return Effect.fail(new FifoClosedError())
    this.latch.closeUnsafe()
    return this.awaitWoken
  })
  private readonly awaitWoken: Effect.Effect<void, FifoClosedError> = Effect.andThen(
    this.latch.await,
    Effect.andThen(Effect.yieldNow, this.awaitItem)
  )

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
    this.latch.openUnsafe()
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

  constructor(options: DeltaFifo.Options<A>, population: QueueTracker | undefined) {
    super(options, population)
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

  constructor(options: DeltaFifo.Options<A>, population: QueueTracker | undefined) {
    super(options, population)
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

/**
 * An empty queue. With `population`, the informer's sync tracker for this queue owns the initial-population
 * count and learns of every replace; without it, the queue counts for itself.
 *
 * @internal
 */
export const make = <A>(options: DeltaFifo.Options<A>, population?: QueueTracker): Fifo<A> =>
  options.mode === "coalescing" ? new CoalescingFifo(options, population) : new InOrderFifo(options, population)

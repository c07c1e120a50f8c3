/**
 * The informer's controller: client-go's `controller.processLoop` with `processDeltas`. One fiber pops
 * batches from the DeltaFifo and, in one synchronous step per batch, applies each delta to the Indexer
 * first and then hands the notification it means to the processor. After each batch it publishes the
 * metrics and tells the sync tracker, which decides whether the informer has synced.
 *
 * The controller is the only writer of the informer's cache: it holds the store's writer
 * (`internal/indexerStore.ts`); the informer hands out the store's read-only view.
 *
 * @internal
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import type * as Metric from "effect/Metric"
import * as Result from "effect/Result"
import type { Delta, Popped } from "../../DeltaFifo.js"
import type * as DeltaFifo from "../../DeltaFifo.js"
import * as Indexer from "../../Indexer.js"
import type { KubeObject } from "../../KubeObject.js"
import { DeletedFinalStateUnknown, resourceVersion } from "../../KubeObject.js"
import type { InformerStoppedError, Notification } from "../../SharedInformer.js"
import { tagged } from "../metricTags.js"
import type { IndexerStore } from "./indexerStore.js"
import * as InformerMetrics from "./metrics.js"
import type { Processor } from "./processor.js"
import type { SyncTracker } from "./syncTracker.js"

/** @internal */
export class InformerController<A extends KubeObject> {
  private readonly notificationCounters: {
    readonly add: Metric.Counter<number>
    readonly update: Metric.Counter<number>
    readonly delete: Metric.Counter<number>
  }
  private readonly fifoGauge: Metric.Gauge<number>
  /** Notifications of the batches since the counters were last published. */
  private readonly counts = { add: 0, update: 0, delete: 0 }

  constructor(
    private readonly name: string,
    private readonly indexer: IndexerStore<A>,
    private readonly processor: Processor<A>,
    private readonly tracker: SyncTracker<InformerStoppedError>,
    /** The context the metrics are updated in (their registry, and attributes the program added). */
    private readonly context: Context.Context<never> = Context.empty()
  ) {
    const counter = (type: string) => tagged(InformerMetrics.notifications, { informer: name, type })
    this.notificationCounters = { add: counter("add"), update: counter("update"), delete: counter("delete") }
    this.fifoGauge = tagged(InformerMetrics.fifoDepth, { informer: name })
  }

  /**
   * The pop loop, until the FIFO is closed (the Reflector stopped) or the fiber is interrupted. The FIFO
   * is closed by whoever owns it.
   */
  run(fifo: DeltaFifo.DeltaFifo.Service<A>, batchSize: number): Effect.Effect<void> {
    return fifo.popBatch(batchSize, this.process).pipe(
      Effect.andThen(this.afterBatch(fifo)),
      Effect.forever,
      Effect.catchTag("FifoClosedError", () => Effect.void)
    )
  }

  /**
   * A listed object equal to the cached one (same key, uid and resourceVersion) is the cached one: the
   * Reflector's `reuse`, so that a relist of unchanged objects keeps one copy of each.
   */
  readonly reuseCached = (obj: A): A => {
    const key = Indexer.metaNamespaceKey(obj)
    if (Result.isFailure(key)) return obj
    const cached = this.indexer.unsafeGetByKey(key.success)
    if (cached === undefined) return obj
    const rv = resourceVersion(obj)
    return rv !== undefined && rv === resourceVersion(cached) && cached.metadata?.uid === obj.metadata?.uid
      ? cached
      : obj
  }

  // --- one batch ----------------------------------------------------------------------------------

  /**
   * Called by the FIFO in the step that takes a batch (so the tracker counts it as taken before anything
   * else can look); the batch is applied in the next step.
   */
  private readonly process = (popped: Popped<A>): Effect.Effect<void> => {
    this.tracker.batchTaken()
    return Effect.suspend(() => {
      const errors = this.applyBatch(popped)
      return errors.length === 0 ? Effect.void : Effect.forEach(
        errors,
        (error) => Effect.logError(`${this.name}: cache update failed: ${error.message}`, error),
        { discard: true }
      )
    })
  }

  /** After each batch: publish metrics, and let the tracker decide whether the informer has synced. */
  private afterBatch(fifo: DeltaFifo.DeltaFifo.Service<A>): Effect.Effect<void> {
    return Effect.sync(() => {
      const context = this.context
      this.fifoGauge.updateUnsafe(fifo.unsafeLength(), context)
      // Here, not only in the handler's fiber: a stuck handler's backlog grows while its fiber is stuck.
      this.processor.updateBacklogGauges()
      const counts = this.counts
      if (counts.add > 0) this.notificationCounters.add.updateUnsafe(counts.add, context)
      if (counts.update > 0) this.notificationCounters.update.updateUnsafe(counts.update, context)
      if (counts.delete > 0) this.notificationCounters.delete.updateUnsafe(counts.delete, context)
      counts.add = counts.update = counts.delete = 0
      this.tracker.batchDone()
    })
  }

  /**
   * Applies a popped batch to the cache and distributes its notifications: one synchronous step, so
   * late joins and removals (also synchronous) see either all of it or none. Returns the write errors.
   */
  private applyBatch(popped: Popped<A>): Array<Indexer.WriteError> {
    const errors: Array<Indexer.WriteError> = []
    const indexer = this.indexer
    for (const delta of popped.deltas) this.applyDelta(delta, popped.isInInitialList, indexer, errors)
    this.flush()
    return errors
  }

  /**
   * The notifications of the batch being applied that go to every listener, in order, distributed as one
   * array at the end of the batch (or before a resync, which goes to some listeners only): each listener's
   * buffer keeps the array (one push per listener and batch, not one per notification and listener).
   */
  private outbox: Array<Notification<A>> = []

  private flush(): void {
    const out = this.outbox
    if (out.length === 0) return
    // the listeners share this array from now on: the next notifications go to a new one
    this.outbox = []
    this.processor.distributeAll(out)
  }

  private notifyAdd(object: A, isInInitialList: boolean): void {
    this.counts.add++
    this.outbox.push({ _tag: "Add", object, isInInitialList })
  }

  private notifyUpdate(oldObject: A, newObject: A): void {
    this.counts.update++
    const isSync = oldObject === newObject || resourceVersion(oldObject) === resourceVersion(newObject)
    if (isSync) {
      // to the listeners due for a resync only, after what the others were sent before it
      this.flush()
      this.processor.distribute({ _tag: "Update", oldObject, newObject }, true)
    } else {
      this.outbox.push({ _tag: "Update", oldObject, newObject })
    }
  }

  private notifyDelete(object: A | DeletedFinalStateUnknown<A>): void {
    this.counts.delete++
    this.outbox.push({ _tag: "Delete", object })
  }

  private applyDelta(
    delta: Delta<A>,
    isInInitialList: boolean,
    indexer: IndexerStore<A>,
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
}

/**
 * One handler of an informer: client-go's `processorListener`. Its buffer (the processor offers to it
 * inside the controller's synchronous step and never waits), its fiber (takes batches from the buffer and
 * runs the callbacks one at a time, in order), its resync period, and its failures (logged with its name,
 * counted, skipped). Initial-list adds are reported to the registration's sync tracker as they enter the
 * buffer and as they return from the handler (or are dropped by a coalescing buffer); the tracker decides
 * when the registration has synced.
 *
 * A listener's life is one `State` (created, idle or busy with its fiber, removed), changed by `transition`
 * only, and only by the processor (`processor.ts`): the handler's fiber tells the processor when a batch
 * starts and ends, the informer hands it the fiber once forked, the registration's `remove` ends it.
 *
 * @internal
 */
import type * as Cause from "effect/Cause"
import type * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import type * as Fiber from "effect/Fiber"
import type * as Metric from "effect/Metric"
import * as Result from "effect/Result"
import { deletionHandlingMetaNamespaceKey } from "../../Indexer.js"
import type { Handler, InformerStoppedError, Notification } from "../../SharedInformer.js"
import { tagged } from "../metricTags.js"
import * as CoalescingBuffer from "./coalescingBuffer.js"
import * as ListenerBuffer from "./listenerBuffer.js"
import * as InformerMetrics from "./metrics.js"
import type { RegistrationTracker } from "./syncTracker.js"

// -------------------------------------------------------------------------------------------------
// the state
// -------------------------------------------------------------------------------------------------

/**
 * Where a listener is in its life:
 * - `Created`: built, its fiber not yet handed to the processor;
 * - `Idle`: its fiber waits for the next batch (it publishes its own backlog when it ends one);
 * - `Busy`: its fiber is in a batch, possibly stuck in a callback: the controller publishes its backlog;
 * - `Removed`: no longer delivered to, its backlog dropped (reads as 0), its fiber interrupted.
 *
 * The `Idle` and `Busy` of one fiber are made once, when the fiber is attached, and point at each other:
 * the start and end of a batch (the handler loop's hot path) allocate nothing.
 *
 * @internal
 */
export type State = Created | Idle | Busy | Removed

/** @internal */
export interface Created {
  readonly _tag: "Created"
}

/** @internal */
export interface Idle {
  readonly _tag: "Idle"
  readonly fiber: Fiber.Fiber<void>
  /** The same fiber in a batch. */
  readonly busy: Busy
}

/** @internal */
export interface Busy {
  readonly _tag: "Busy"
  readonly fiber: Fiber.Fiber<void>
  /** The same fiber between batches. */
  readonly idle: Idle
}

/** @internal */
export interface Removed {
  readonly _tag: "Removed"
}

/**
 * What changes a listener's state: its fiber was forked (`Attached`), the fiber took a batch
 * (`BatchStarted`) or finished one (`BatchEnded`), the registration was removed (`Removed`).
 *
 * @internal
 */
export type Event =
  | { readonly _tag: "Attached"; readonly fiber: Fiber.Fiber<void> }
  | { readonly _tag: "BatchStarted" }
  | { readonly _tag: "BatchEnded" }
  | { readonly _tag: "Removed" }

/** @internal */
export const created: State = { _tag: "Created" }
/** @internal */
export const removed: State = { _tag: "Removed" }
/** @internal */
export const batchStarted: Event = { _tag: "BatchStarted" }
/** @internal */
export const batchEnded: Event = { _tag: "BatchEnded" }
/** @internal */
export const removal: Event = { _tag: "Removed" }
/** @internal */
export const attached = (fiber: Fiber.Fiber<void>): Event => ({ _tag: "Attached", fiber })

/** A fiber's `Idle` state, with its `Busy` twin. */
const idleOf = (fiber: Fiber.Fiber<void>): Idle => {
  const idle: { readonly _tag: "Idle"; readonly fiber: Fiber.Fiber<void>; busy: Busy } = {
    _tag: "Idle",
    fiber,
    busy: undefined as never
  }
  idle.busy = { _tag: "Busy", fiber, idle }
  return idle
}

/**
 * A listener's next state. Removal is final; a fiber is attached once (a second one is ignored); a batch
 * starts and ends only with a fiber attached (the buffer is empty until the listener joins, after its fiber
 * was attached), so anything else leaves the state as it is.
 *
 * | state | Attached | BatchStarted | BatchEnded | Removed |
 * |---|---|---|---|---|
 * | Created | Idle | Created | Created | Removed |
 * | Idle | Idle | Busy | Idle | Removed |
 * | Busy | Busy | Busy | Idle | Removed |
 * | Removed | Removed | Removed | Removed | Removed |
 *
 * @internal
 */
export const transition = (state: State, event: Event): State => {
  if (event._tag === "Removed") return removed
  switch (state._tag) {
    case "Created":
      return event._tag === "Attached" ? idleOf(event.fiber) : state
    case "Idle":
      return event._tag === "BatchStarted" ? state.busy : state
    case "Busy":
      return event._tag === "BatchEnded" ? state.idle : state
    case "Removed":
      return state
  }
}

/** The fiber of a listener's state, if one is attached and the listener was not removed. @internal */
export const fiberOf = (state: State): Fiber.Fiber<void> | undefined =>
  state._tag === "Idle" || state._tag === "Busy" ? state.fiber : undefined

// -------------------------------------------------------------------------------------------------
// the listener
// -------------------------------------------------------------------------------------------------

/** @internal */
export class Listener<A> {
  /** Set by the processor when the listener joins, and when the resync check period is lowered before start. */
  resyncPeriod = 0
  /** The period asked for (at least 1 s, or 0), as `effectiveResync` takes it; set when the listener joins. */
  requestedResync = 0
  nextResync = 0
  /**
   * Taken from the buffer by the handler's fiber and waiting behind the callback in progress: the handler
   * loop's position in its batch (written by that loop alone, once per notification), not part of `state`.
   */
  inFlight = 0
  /**
   * Notifications offered to the buffer, and those done with: handled (the callback returned or failed, or
   * there was none), or replaced in a coalescing buffer. Equal: the handler has done everything it was sent
   * (`settled`), including the callback in progress, which `backlog` does not count.
   */
  offered = 0
  handled = 0
  /** Called (and dropped) when the listener settles or is removed: `onSettled`. */
  private settledWakers: Set<() => void> | undefined = undefined
  /** Where the listener is in its life; written by the processor only, through `transition`. */
  state: State = created
  /**
   * This handler's series of the handler metrics (`informer` and `handler` attributes), made once: each
   * keeps its registry key, so an update from the hot path is one registry lookup (`metricTags.tagged`).
   */
  readonly metrics: {
    readonly coalesced: Metric.Counter<number>
    readonly backlog: Metric.Gauge<number>
    readonly duration: Metric.Histogram<number>
    readonly failures: Metric.Counter<number>
  }

  constructor(
    readonly id: number,
    readonly name: string,
    informer: string,
    readonly sync: RegistrationTracker<InformerStoppedError>,
    readonly buffer: ListenerBuffer.ListenerBuffer<Notification<A>>,
    /**
     * Notifications taken from the buffer at once. A taken batch can no longer be coalesced, so coalescing
     * listeners take small ones: their memory stays bounded by the number of objects plus this.
     */
    readonly batch: number,
    /** The context the metrics are updated in (their registry, and attributes the program added). */
    readonly context: Context.Context<never> = Context.empty()
  ) {
    const attributes = { informer, handler: name }
    this.metrics = {
      coalesced: tagged(InformerMetrics.handlerCoalesced, attributes),
      backlog: tagged(InformerMetrics.handlerBacklog, attributes),
      duration: tagged(InformerMetrics.handlerDuration, attributes),
      failures: tagged(InformerMetrics.handlerFailures, attributes)
    }
  }

  /** Buffers a notification; never waits. Runs inside the controller's synchronous step. */
  offer(notification: Notification<A>): void {
    if (notification._tag === "Add" && notification.isInInitialList) this.sync.started()
    this.offered++
    const coalesced = this.buffer.offer(notification)
    if (coalesced > 0) {
      this.handled += coalesced
      this.metrics.coalesced.updateUnsafe(coalesced, this.context)
    }
  }

  /**
   * Buffers the notifications of one batch, `initialAdds` of them initial-list adds; never waits. The same
   * as `offer` on each, with one push for the whole batch (the unbounded buffer keeps the array, which is
   * shared by every listener and must not change after).
   */
  offerAll(notifications: ReadonlyArray<Notification<A>>, initialAdds: number): void {
    for (let i = 0; i < initialAdds; i++) this.sync.started()
    this.offered += notifications.length
    const coalesced = this.buffer.offerAll(notifications)
    if (coalesced > 0) {
      this.handled += coalesced
      this.metrics.coalesced.updateUnsafe(coalesced, this.context)
    }
  }

  /** Every notification offered so far has been handled (or the listener was removed). */
  settled(): boolean {
    return this.offered === this.handled || this.state._tag === "Removed"
  }

  /**
   * Calls `wake` once, when the listener settles (checked at the end of each batch) or is removed; returns
   * what cancels it. Called from the handler's fiber or the remover's step: `wake` must not run a waiter there.
   */
  onSettled(wake: () => void): () => void {
    ;(this.settledWakers ??= new Set()).add(wake)
    return () => void this.settledWakers?.delete(wake)
  }

  /** Wakes the `onSettled` callers if the listener has settled (the processor calls it). */
  wakeIfSettled(): void {
    const wakers = this.settledWakers
    if (wakers === undefined || wakers.size === 0 || !this.settled()) return
    this.settledWakers = undefined
    for (const wake of wakers) wake()
  }

  /** Notifications not yet handled, besides the one in progress. */
  backlog(): number {
    return this.state._tag === "Removed" ? 0 : this.buffer.size() + this.inFlight
  }

  /** The backlog last published (a gauge holds its last value: publishing the same one again is skipped). */
  private publishedBacklog = -1

  updateBacklogGauge(): void {
    const backlog = this.backlog()
    if (backlog === this.publishedBacklog) return
    this.publishedBacklog = backlog
    this.metrics.backlog.updateUnsafe(backlog, this.context)
  }

  /** client-go's `shouldResync`: whether a resync is due now, and if so when the next one is. */
  dueForResync(now: number): boolean {
    if (this.resyncPeriod <= 0 || now < this.nextResync) return false
    this.nextResync = now + this.resyncPeriod
    return true
  }
}

/**
 * A listener's buffer: unbounded (every notification, in order), or coalescing by key. A coalescing buffer
 * reports the initial adds it drops to the registration's tracker.
 *
 * @internal
 */
export const makeBuffer = <A>(
  kind: "unbounded" | "coalescing",
  sync: RegistrationTracker<InformerStoppedError>
): Effect.Effect<ListenerBuffer.ListenerBuffer<Notification<A>>> =>
  kind === "coalescing"
    ? CoalescingBuffer.coalescing<A, Notification<A>>(() => sync.finished())
    : ListenerBuffer.unbounded<Notification<A>>()

/**
 * What the handler's fiber tells the processor, which writes the listener's state: a batch started, a
 * batch ended.
 *
 * @internal
 */
export interface Batches<A> {
  readonly batchStarted: (listener: Listener<A>) => void
  readonly batchEnded: (listener: Listener<A>) => void
}

/** @internal */
export interface RunOptions {
  /** The informer's name, for logs. */
  readonly informer: string
  readonly clock: Clock.Clock
  readonly detectMutations: boolean
}

/**
 * The handler's fiber: takes batches from its buffer and runs the callbacks one by one, until the buffer is
 * shut down. Never fails: a failing callback is logged and counted, and the loop goes on with the next
 * notification.
 *
 * @internal
 */
export const run = <A, EH, R>(
  listener: Listener<A>,
  handler: Handler<A, EH, R>,
  batches: Batches<A>,
  options: RunOptions
): Effect.Effect<void, never, R> => {
  const { clock, detectMutations, informer } = options
  const sync = listener.sync
  const metrics = listener.metrics
  const metricContext = listener.context
  const call = (notification: Notification<A>): Effect.Effect<void, EH, R> | undefined => {
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
    listener.handled++
    if (notification._tag === "Add" && notification.isInInitialList) sync.finished()
  }

  // The hot loop. Per callback it runs the user's Effect; the continuations are built once per handler, the
  // notification in progress lives in `current`, and the bookkeeping is plain code between callbacks.
  // Failures are caught once per batch: the loop is re-entrant (its position is `index`), so after logging a
  // failed callback it goes on with the next notification. Time is measured per batch.
  //
  // A callback whose Effect is already a successful `Exit` (`Effect.void`, `Effect.succeed(...)`: in Effect 4
  // these are Exits) has nothing left to run: it is finished here (`runInline`), without a turn of the
  // fiber's run loop. Any other Effect (`Effect.sync`, a `suspend`, anything asynchronous) is run by the
  // fiber (`flatMap` back into this loop): Effect 4 offers no public way to run an Effect synchronously in
  // the current fiber, and its run loop is cheap enough that Effect 3's inline interpreter (which read
  // private fields) is not worth keeping.
  let batch: ReadonlyArray<Notification<A>> = []
  let index = 0
  let current: Notification<A> = undefined as never
  let inCallback = false
  let callbacks = 0
  let batchStart = 0n
  /** Callbacks finished inline since this fiber last yielded (see `inlineBudget`). */
  let inline = 0
  const checkMutation = (before: string | undefined, notification: Notification<A>): Effect.Effect<void> => {
    if (before === undefined || snapshot(notification) === before) return Effect.void
    return Effect.logError(
      `${informer}: handler ${listener.name} mutated a cached object (${describe(notification)}); ` +
        "cached objects are shared and must be treated as immutable"
    )
  }
  const afterCallback = (): Effect.Effect<void, EH, R> => {
    inCallback = false
    finished(current)
    return step()
  }
  /** With `detectMutations`: the cached object as JSON before the handler ran. */
  let before: string | undefined = undefined
  const afterCheckedCallback = (): Effect.Effect<void, EH, R> =>
    Effect.flatMap(checkMutation(before, current), afterCallback)
  // What the fiber runs next in this batch: a callback's Effect that is not a successful Exit
  // (`pendingIsCallback`), or a yield after `inlineBudget` inline callbacks. `callbacks` below runs it and
  // goes on with the batch: one `whileLoop` frame for the whole batch, so a callback such as `Effect.sync`
  // costs one turn of the fiber's run loop and allocates nothing here (a `flatMap` per callback allocated
  // its continuation and cost two more turns: with 100 handlers that was most of the fan-out's time).
  let pending: Effect.Effect<unknown, EH, R> | undefined = undefined
  let pendingIsCallback = false
  const callbackLoop: Effect.Effect<void, EH, R> = Effect.whileLoop({
    while: () => pending !== undefined,
    body: () => pending!,
    step: () => {
      const wasCallback = pendingIsCallback
      pending = undefined
      if (wasCallback) {
        inCallback = false
        finished(current)
      }
      // sets `pending` again, or leaves it undefined at the end of the batch (or on removal)
      step()
    }
  })
  const step = (): Effect.Effect<void, EH, R> => {
    while (index < batch.length) {
      if (listener.state._tag === "Removed") return Effect.void
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
      if (detectMutations) return Effect.flatMap(effect, afterCheckedCallback)
      const rest = runInline(effect)
      if (rest !== undefined) {
        inline = 0
        pending = rest
        pendingIsCallback = true
        return callbackLoop
      }
      inCallback = false
      finished(notification)
      if (++inline >= inlineBudget) {
        // as often as the fiber's run loop would yield to others had it run these callbacks itself
        inline = 0
        pending = Effect.yieldNow
        pendingIsCallback = false
        return callbackLoop
      }
    }
    if (callbacks > 0) {
      const seconds = Number(clock.monotonicTimeNanosUnsafe() - batchStart) / 1e9
      metrics.duration.updateUnsafe(seconds / callbacks, metricContext)
    }
    batches.batchEnded(listener)
    listener.updateBacklogGauge()
    return Effect.void
  }
  const next: Effect.Effect<void, EH, R> = Effect.suspend(step)
  const recover = (cause: Cause.Cause<EH>): Effect.Effect<void, never, R> => {
    metrics.failures.updateUnsafe(1, metricContext)
    const failed = current
    const wasCallback = inCallback
    inCallback = false
    pending = undefined
    const logged = Effect.logError(
      `${informer}: handler ${listener.name} failed on ${failed === undefined ? "a notification" : describe(failed)}`,
      cause
    )
    // a handler that mutated a cached object and then failed is still reported
    const checked = wasCallback && detectMutations ? Effect.andThen(logged, checkMutation(before, failed)) : logged
    return Effect.andThen(
      checked,
      Effect.suspend(() => {
        if (wasCallback) finished(failed)
        return guarded
      })
    )
  }
  const guarded: Effect.Effect<void, never, R> = Effect.catchCause(next, recover)
  // Until the buffer is shut down (the handler removed): its take then fails, and the loop ends. Not
  // `Effect.forever`, which yields to the scheduler after every turn: a scheduler round trip per batch, on
  // top of the one a take that waits already costs. The run loop still yields after its operation budget.
  //
  // A batch whose callbacks all finished inline goes straight back to the take: no failure frame, no
  // continuation. Only when a callback needs the fiber (or the loop yields) is the rest of the batch run
  // under `catchCause` (`guarded`'s recovery), then the loop goes on.
  const take = Effect.suspend(() => listener.buffer.take(listener.batch))
  const again = (): Effect.Effect<never, ListenerBuffer.BufferClosedError, R> => loop
  const runBatch = (
    taken: ReadonlyArray<Notification<A>>
  ): Effect.Effect<never, ListenerBuffer.BufferClosedError, R> => {
    batch = taken
    index = 0
    callbacks = 0
    batchStart = clock.monotonicTimeNanosUnsafe()
    listener.inFlight = taken.length
    batches.batchStarted(listener)
    let rest: Effect.Effect<void, EH, R>
    try {
      rest = step()
    } catch (defect) {
      // the handler's function threw while building its Effect: this notification's failure
      rest = Effect.die(defect)
    }
    // `step` ends a batch (or stops for a removed handler) with `Effect.void`
    if (rest === Effect.void) return loop
    return Effect.flatMap(Effect.catchCause(rest, recover), again)
  }
  const loop: Effect.Effect<never, ListenerBuffer.BufferClosedError, R> = Effect.flatMap(take, runBatch)
  return loop.pipe(
    Effect.catchTag("BufferClosedError", () => Effect.void),
    Effect.annotateLogs({ informer, handler: listener.name })
  )
}

/**
 * Callbacks finished inline between two yields of the handler's fiber, so that a handler whose callbacks
 * all return `Effect.void` still lets other fibers run.
 */
const inlineBudget = 512

/**
 * What of a callback's `effect` is left for the fiber to run: nothing (`undefined`) when it is a successful
 * `Exit` (`Effect.void`, `Effect.succeed(...)`, which Effect 4 represents as Exits: a documented contract,
 * `Exit` extends `Effect`), else the effect itself. Reads public API only (`Exit.isExit`,
 * `Exit.isSuccess`); a failed Exit goes to the fiber, which fails with it.
 *
 * @internal
 */
export const runInline = <E, R>(
  effect: Effect.Effect<unknown, E, R>
): Effect.Effect<unknown, E, R> | undefined => Exit.isExit(effect) && Exit.isSuccess(effect) ? undefined : effect

const describe = <A>(notification: Notification<A>): string => {
  const obj = notification._tag === "Update" ? notification.newObject : notification.object
  const key = deletionHandlingMetaNamespaceKey(obj)
  return `${notification._tag.toLowerCase()} of ${Result.getOrElse(key, () => "<unknown>")}`
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

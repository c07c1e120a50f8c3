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
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import type * as Fiber from "effect/Fiber"
import * as MetricLabel from "effect/MetricLabel"
import * as RuntimeFlags from "effect/RuntimeFlags"
import type * as Tracer from "effect/Tracer"
import { deletionHandlingMetaNamespaceKey } from "../../Indexer.js"
import type { Handler, InformerStoppedError, Notification } from "../../SharedInformer.js"
import * as CoalescingBuffer from "./coalescingBuffer.js"
import * as ListenerBuffer from "./listenerBuffer.js"
import * as Metrics from "./metrics.js"
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
  readonly fiber: Fiber.RuntimeFiber<void>
  /** The same fiber in a batch. */
  readonly busy: Busy
}

/** @internal */
export interface Busy {
  readonly _tag: "Busy"
  readonly fiber: Fiber.RuntimeFiber<void>
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
  | { readonly _tag: "Attached"; readonly fiber: Fiber.RuntimeFiber<void> }
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
export const attached = (fiber: Fiber.RuntimeFiber<void>): Event => ({ _tag: "Attached", fiber })

/** A fiber's `Idle` state, with its `Busy` twin. */
const idleOf = (fiber: Fiber.RuntimeFiber<void>): Idle => {
  const idle: { readonly _tag: "Idle"; readonly fiber: Fiber.RuntimeFiber<void>; busy: Busy } = {
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
export const fiberOf = (state: State): Fiber.RuntimeFiber<void> | undefined =>
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
  /** Where the listener is in its life; written by the processor only, through `transition`. */
  state: State = created
  /**
   * The labels of this handler's metrics. Updating a base metric with one stable label array hits Effect's
   * per-array hook cache; a `Metric.tagged` metric builds (and hashes) a new metric key on every update.
   */
  readonly metricLabels: ReadonlyArray<MetricLabel.MetricLabel>

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
    readonly batch: number
  ) {
    this.metricLabels = [MetricLabel.make("informer", informer), MetricLabel.make("handler", name)]
  }

  /** Buffers a notification; never waits. Runs inside the controller's synchronous step. */
  offer(notification: Notification<A>): void {
    if (notification._tag === "Add" && notification.isInInitialList) this.sync.started()
    const coalesced = this.buffer.offer(notification)
    if (coalesced > 0) Metrics.handlerCoalesced.unsafeUpdate(coalesced, this.metricLabels)
  }

  /** Notifications not yet handled, besides the one in progress. */
  backlog(): number {
    return this.state._tag === "Removed" ? 0 : this.buffer.size() + this.inFlight
  }

  updateBacklogGauge(): void {
    Metrics.handlerBacklog.unsafeUpdate(this.backlog(), this.metricLabels)
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
  const labels = listener.metricLabels
  const { clock, detectMutations, informer } = options
  const sync = listener.sync
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
    if (notification._tag === "Add" && notification.isInInitialList) sync.finished()
  }

  // The hot loop. Per callback it runs the user's Effect; the continuations are built once per handler, the
  // notification in progress lives in `current`, and the bookkeeping is plain code between callbacks.
  // Failures are caught once per batch: the loop is re-entrant (its position is `index`), so after logging a
  // failed callback it goes on with the next notification. Time is measured per batch.
  //
  // Most handlers return an Effect that is synchronous from the start: `Effect.sync(...)`, `Effect.void`, a
  // `suspend` of one of these (a WorkQueue `add`). Those are run here, inline (`runInline`), as the fiber's
  // run loop would run them, without handing each to the run loop: through the fiber it costs a `flatMap`
  // and four turns of the loop per callback, each allocating its closures. With this and the loop below, a
  // handler's cost per notification at 100 handlers went from ~1.2 µs and 1.1 KB allocated to ~0.25 µs and
  // 400 B, 150 B of them the handler's own Effect (bench/perf16.ts; docs/BENCHMARKS.md, "Issue 16: the
  // hot-path work"). Anything else, or what a `suspend` returns that is not one of these, goes to the fiber
  // as before (`flatMap` back into this loop).
  let batch: ReadonlyArray<Notification<A>> = []
  let index = 0
  let current: Notification<A> = undefined as never
  let inCallback = false
  let callbacks = 0
  let batchStart = 0n
  /** Callbacks run inline since this fiber last yielded (see `inlineBudget`). */
  let inline = 0
  /** Set when the loop starts: whether effects may be run inline, and the fiber's tracer to run them with. */
  let inlineOk = false
  let fiber: Fiber.RuntimeFiber<unknown, unknown> = undefined as never
  let tracer: Tracer.Tracer = undefined as never
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
  const yieldThenNext: Effect.Effect<void, EH, R> = Effect.zipRight(Effect.yieldNow(), Effect.suspend(() => step()))
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
      if (!inlineOk) return Effect.flatMap(effect, afterCallback)
      const rest = runInline(effect, fiber, tracer)
      if (rest !== undefined) {
        inline = 0
        return Effect.flatMap(rest, afterCallback)
      }
      inCallback = false
      finished(notification)
      if (++inline >= inlineBudget) {
        // as often as the fiber's run loop would yield to others had it run these callbacks itself
        inline = 0
        return yieldThenNext
      }
    }
    if (callbacks > 0) {
      const seconds = Number(clock.unsafeCurrentTimeNanos() - batchStart) / 1e9
      Metrics.handlerDuration.unsafeUpdate(seconds / callbacks, labels)
    }
    batches.batchEnded(listener)
    listener.updateBacklogGauge()
    return Effect.void
  }
  const next: Effect.Effect<void, EH, R> = Effect.suspend(step)
  const recover = (cause: Cause.Cause<EH>): Effect.Effect<void, never, R> => {
    Metrics.handlerFailures.unsafeUpdate(1, labels)
    const failed = current
    const wasCallback = inCallback
    inCallback = false
    const logged = Effect.logError(
      `${informer}: handler ${listener.name} failed on ${failed === undefined ? "a notification" : describe(failed)}`,
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
  // Until the buffer is shut down (the handler removed): its take then fails, and the loop ends. Not
  // `Effect.forever`, which yields to the scheduler after every turn: a scheduler round trip per batch, on
  // top of the one a take that waits already costs. The run loop still yields every 2048 operations.
  //
  // A batch whose callbacks all ran inline goes straight back to the take: no failure frame, no
  // continuation. Only when a callback needs the fiber (or the loop yields) is the rest of the batch run
  // under `catchAllCause` (`guarded`'s recovery), then the loop goes on.
  const take = Effect.suspend(() => listener.buffer.take(listener.batch))
  const again = (): Effect.Effect<never, ListenerBuffer.BufferClosedError, R> => loop
  const runBatch = (
    taken: ReadonlyArray<Notification<A>>
  ): Effect.Effect<never, ListenerBuffer.BufferClosedError, R> => {
    batch = taken
    index = 0
    callbacks = 0
    batchStart = clock.unsafeCurrentTimeNanos()
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
    return Effect.flatMap(Effect.catchAllCause(rest, recover), again)
  }
  const loop: Effect.Effect<never, ListenerBuffer.BufferClosedError, R> = Effect.flatMap(take, runBatch)
  return Effect.withFiberRuntime<never, ListenerBuffer.BufferClosedError, R>((self, status) => {
    fiber = self as Fiber.RuntimeFiber<unknown, unknown>
    tracer = self.currentTracer
    // A supervisor that watches every operation (OpSupervision) must see the callbacks' too.
    inlineOk = !RuntimeFlags.isEnabled(status.runtimeFlags, RuntimeFlags.OpSupervision)
    return loop
  }).pipe(
    Effect.catchTag("BufferClosedError", () => Effect.void),
    Effect.annotateLogs({ informer, handler: listener.name })
  )
}

/**
 * Inline callbacks between two yields of the handler's fiber. Effect's run loop yields after 2048 operations
 * (`maxOpsBeforeYield`); through the fiber a callback took four.
 */
const inlineBudget = 512

/**
 * Runs `effect` here, as the fiber's run loop would, while it is `Effect.succeed` / `Effect.void` (done),
 * `Effect.sync` (its thunk is called: done) or a `suspend` (its thunk is called, and what it returns runs
 * the same way); returns the part left for the fiber (an Effect of any other kind), or `undefined` when it
 * ran to its end. A thunk that throws leaves a defect for the fiber, as in the run loop. The thunks run
 * inside the fiber's tracer context, as the run loop runs every operation.
 *
 * This reads Effect's primitive representation (`_op`, `effect_instruction_i0`, `commit`: effect 3.x's
 * `internal/core.js`). An effect of a shape it does not know is left to the fiber, so a change there
 * costs speed, never behaviour (test/listenerInline.test.ts checks that the common shapes run inline).
 *
 * @internal
 */
export const runInline = <E, R>(
  effect: Effect.Effect<unknown, E, R>,
  fiber: Fiber.RuntimeFiber<unknown, unknown>,
  tracer: Tracer.Tracer
): Effect.Effect<unknown, E, R> | undefined => {
  let cur = effect as unknown as Primitive
  for (let depth = 0; depth < 16; depth++) {
    switch (cur._op) {
      case "Success":
        return undefined
      case "Sync": {
        const thunk = cur.effect_instruction_i0 as () => unknown
        try {
          if (tracer === defaultTracer) thunk()
          else tracer.context(thunk, fiber)
        } catch (defect) {
          return Effect.die(defect)
        }
        return undefined
      }
      case "Commit": {
        // `Effect.suspend`, also what a Context.Tag or another Effectable commits to: the run loop calls it too
        const primitive = cur
        if (typeof primitive.commit !== "function") return cur as never
        let committed: unknown
        try {
          committed = tracer === defaultTracer ? primitive.commit() : tracer.context(() => primitive.commit!(), fiber)
        } catch (defect) {
          return Effect.die(defect)
        }
        if (!Effect.isEffect(committed)) return committed as never
        cur = committed as unknown as Primitive
        continue
      }
      default:
        return cur as never
    }
  }
  return cur as never
}

/** Effect's own tracer, whose `context` only calls its function. */
const defaultTracer: Tracer.Tracer = Effect.runSync(Effect.tracer)

/** The fields of Effect's primitives that `runInline` reads. */
interface Primitive {
  readonly _op?: unknown
  readonly effect_instruction_i0?: unknown
  readonly commit?: (() => unknown) | undefined
}

const describe = <A>(notification: Notification<A>): string => {
  const obj = notification._tag === "Update" ? notification.newObject : notification.object
  const key = deletionHandlingMetaNamespaceKey(obj)
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

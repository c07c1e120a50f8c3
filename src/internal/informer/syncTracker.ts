/**
 * Every `HasSynced` of one informer, and every wait on one: client-go's `synctrack` package
 * (`SingleFileTracker`, whose `UpstreamHasSynced` is the informer's `HasSynced`) with its waits and the
 * stop that ends them, in one object.
 *
 * Three levels, each synced only once the level above is:
 * - **the queue** (`QueueTracker`, owned by the DeltaFifo's pops): client-go's `populated` and
 *   `initialPopulationCount`. Synced once an add, update or delete happened before the first replace, or
 *   once everything the first replace queued has been popped. The FIFO says when an item counts as popped
 *   (coalescing: when taken; in-order: after it was processed).
 * - **the informer**: the queue is synced and no batch the FIFO handed to the controller is still being
 *   applied: one full list is in the cache and in the handlers' buffers. Decided after each batch
 *   (`batchDone`) and after each replace (an empty first list syncs without any batch).
 * - **a registration**: the informer is synced and every initial-list add handed to its buffer has
 *   returned from the handler (also when the handler failed on it) or was dropped by a coalescing buffer.
 *
 * Each level, once synced, stays synced, also after the stop. `stop` (the informer's scope closing, after
 * the controller stopped and before the handlers' fibers do) fails the informer's wait and every pending
 * registration's with the informer's error, now and for later waits, and nothing syncs after it: a
 * `hasSynced` read after the stop agrees with the wait. A registration removed before it synced has its
 * waits interrupted instead (the caller gave it up; nothing failed).
 *
 * Every transition is one synchronous step, taken by whichever fiber caused it (the Reflector's for a
 * replace, the controller's for a batch, a handler's for an initial add it returned from, the scope's for
 * the stop), so the three levels agree at every suspension point.
 *
 * @internal
 */
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"

/**
 * A wait on `signal`. A Deferred completed from synchronous code resumes its waiters at once, inside the
 * completing call (Effect 4): here inside the controller's or the Reflector's step. The waiter yields first
 * (it is scheduled on its own dispatcher), so that no waiting code runs before that step has ended, as
 * with Effect 3's scheduled resumption. A wait on a decided signal ends at once.
 */
const awaitSignal = <E>(signal: Deferred.Deferred<void, E>): Effect.Effect<void, E> => {
  const waiting = Effect.ensuring(Deferred.await(signal), Effect.yieldNow)
  return Effect.suspend(() => Deferred.isDoneUnsafe(signal) ? Deferred.await(signal) : waiting)
}

// -------------------------------------------------------------------------------------------------
// the queue
// -------------------------------------------------------------------------------------------------

/**
 * The queue's initial population (client-go's `DeltaFIFO`/`RealFIFO` `populated` and
 * `initialPopulationCount`). A DeltaFifo made without an informer has one of its own; an informer's FIFO
 * gets the informer's tracker's, which then learns of every replace.
 *
 * @internal
 */
export class QueueTracker {
  /** An add, update, delete or replace reached the queue. */
  populated = false
  /** Items the first replace queued that have not been popped yet. */
  initialPopulation = 0

  constructor(private readonly owner: SyncTracker<unknown> | undefined = undefined) {}

  /** An add, update or delete reached the queue: if before the first replace, there is no list to wait for. */
  touched(): void {
    this.populated = true
  }

  /** A replace queued `queued` items; the first one sets the initial population. */
  replaced(queued: number): void {
    if (!this.populated) {
      this.populated = true
      this.initialPopulation = queued
    }
    if (this.owner !== undefined) this.owner.decide()
  }

  /** `count` items have been popped (taken or processed, as the FIFO's mode counts). */
  popped(count: number): void {
    if (this.initialPopulation > 0) this.initialPopulation = Math.max(0, this.initialPopulation - count)
  }

  hasSynced(): boolean {
    return this.populated && this.initialPopulation === 0
  }
}

// -------------------------------------------------------------------------------------------------
// registrations
// -------------------------------------------------------------------------------------------------

/**
 * One registration's sync (client-go's per-listener `SingleFileTracker`). The handler's buffer and fiber
 * report initial adds through `started` and `finished`; the tracker decides.
 *
 * @internal
 */
export class RegistrationTracker<E> {
  /** Initial adds handed to the handler's buffer that have neither returned from the handler nor been dropped. */
  pending = 0
  /** `"synced"` (the wait succeeded) or `"failed"` (informer stopped, or registration removed) once decided. */
  state: "pending" | "synced" | "failed" = "pending"
  readonly signal: Deferred.Deferred<void, E> = Deferred.makeUnsafe<void, E>()
  /** Waits until synced; fails or is interrupted as the tracker decides. */
  readonly synced: Effect.Effect<void, E> = awaitSignal(this.signal)

  constructor(
    private readonly tracker: SyncTracker<E>,
    readonly handler: string
  ) {}

  /** An initial-list add was handed to the handler's buffer. */
  started(): void {
    this.pending++
  }

  /** An initial-list add returned from the handler (or failed in it), or the buffer dropped it. */
  finished(): void {
    if (--this.pending <= 0) this.tracker.decideRegistration(this)
  }

  hasSynced(): boolean {
    return this.state === "synced"
  }
}

// -------------------------------------------------------------------------------------------------
// the informer
// -------------------------------------------------------------------------------------------------

/**
 * The informer's tracker: owns the queue's tracker, the informer's synced signal, and the registrations
 * that have joined and not synced yet.
 *
 * @internal
 */
export class SyncTracker<E> {
  readonly queue: QueueTracker = new QueueTracker(this as SyncTracker<unknown>)
  private informerSynced = false
  private stopped = false
  /** Batches the FIFO handed to the controller that it has not finished yet. */
  private unapplied = 0
  private readonly signal = Deferred.makeUnsafe<void, E>()
  /** Joined registrations whose sync is not decided yet. */
  private readonly pending = new Set<RegistrationTracker<E>>()
  /** Waits until the informer has synced; fails with the stop error if it stops first. */
  readonly synced: Effect.Effect<void, E> = awaitSignal(this.signal)

  /** `stoppedError(handler)`: what waits fail with at the stop (`handler` absent for the informer's own). */
  constructor(private readonly stoppedError: (handler: string | undefined) => E) {}

  hasSynced(): boolean {
    return this.informerSynced
  }

  // --- the controller ---------------------------------------------------------------------------

  /** The FIFO handed a batch to the controller (called in the step that takes it). */
  batchTaken(): void {
    this.unapplied++
  }

  /** The controller applied and distributed that batch, and the FIFO counted it as popped. */
  batchDone(): void {
    this.unapplied--
    this.decide()
  }

  /** Marks the informer synced if it now is; then each joined registration that is. */
  decide(): void {
    if (this.informerSynced || this.stopped || this.unapplied > 0 || !this.queue.hasSynced()) return
    this.informerSynced = true
    Deferred.doneUnsafe(this.signal, Exit.void)
    for (const registration of this.pending) this.decideRegistration(registration)
  }

  // --- registrations ----------------------------------------------------------------------------

  /** A tracker for a handler about to join; it counts from now, and is decided once it `join`s. */
  registration(handler: string): RegistrationTracker<E> {
    return new RegistrationTracker(this, handler)
  }

  /** The registration joined the processor (its initial adds, if any, are in its buffer). */
  join(registration: RegistrationTracker<E>): void {
    if (registration.state !== "pending") return
    this.pending.add(registration)
    this.decideRegistration(registration)
  }

  /**
   * The registration was removed: a pending wait never ends in success, so it is interrupted (also later
   * waits). Removed after the informer stopped unsynced, its waits keep failing with the stop error.
   */
  leave(registration: RegistrationTracker<E>): void {
    this.pending.delete(registration)
    if (registration.state !== "pending") return
    registration.state = "failed"
    Deferred.doneUnsafe(registration.signal, Exit.interrupt())
  }

  /** Marks a registration synced if it now is. Never after the stop: its wait failed then. */
  decideRegistration(registration: RegistrationTracker<E>): void {
    if (registration.state !== "pending" || !this.informerSynced || this.stopped || registration.pending > 0) return
    registration.state = "synced"
    this.pending.delete(registration)
    Deferred.doneUnsafe(registration.signal, Exit.void)
  }

  // --- the stop ---------------------------------------------------------------------------------

  /**
   * The informer stopped (its controller has): nothing syncs any more. The informer's wait, if not
   * synced, and every pending registration's fail with the stop error, now and later (client-go's
   * `WaitForCacheSync` returning false once `stopCh` is closed).
   */
  stop(): void {
    if (this.stopped) return
    this.stopped = true
    if (!this.informerSynced) Deferred.doneUnsafe(this.signal, Exit.fail(this.stoppedError(undefined)))
    for (const registration of this.pending) {
      registration.state = "failed"
      Deferred.doneUnsafe(registration.signal, Exit.fail(this.stoppedError(registration.handler)))
    }
    this.pending.clear()
  }
}

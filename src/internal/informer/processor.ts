/**
 * The informer's set of listeners: client-go's `sharedProcessor`. It distributes each notification to
 * every listener (a resync only to the listeners due for one), decides which listeners are due when the
 * Reflector's resync timer asks, and lets a listener join late: it gets the current cache as initial adds
 * in the step that adds it to the set, so it sees every later notification and nothing twice.
 *
 * Every method is one synchronous step. `distribute` runs inside the controller's step that applies a
 * batch to the cache, so a join or removal (another fiber's step) sees all of a batch or none of it.
 *
 * @internal
 */
import type * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import type { InformerStoppedError, Notification, Registration } from "../../SharedInformer.js"
import type { Batches, Listener } from "./listener.js"
import * as L from "./listener.js"
import type { SyncTracker } from "./syncTracker.js"

/** Resync periods under this are raised to it (client-go's `minimumResyncPeriod`). @internal */
export const minimumResyncPeriod = 1000

/** A resync period in milliseconds; absent or negative is 0 (no resync). @internal */
export const toResync = (input: Duration.Input | undefined): number =>
  input === undefined ? 0 : Math.max(0, Duration.toMillis(Duration.fromInputUnsafe(input)))

/** client-go's `determineResyncPeriod`. */
const effectiveResync = (desired: number, check: number): number =>
  desired === 0 || check === 0 ? 0 : Math.max(desired, check)

/** The listener and the processor behind each registration of any informer: `behindRegistration`. */
const behind = new WeakMap<Registration, { readonly listener: Listener<any>; readonly processor: Processor<any> }>()

/**
 * The listener behind a registration (whether its handler has settled, `Listener.settled`) and its
 * informer's processor: what the Controller's `quiet` reads, and tests (`listenerCount`). `undefined` for an
 * object that no informer made.
 *
 * @internal
 */
export const behindRegistration = (
  registration: Registration
): { readonly listener: Listener<unknown>; readonly processor: Processor<unknown> } | undefined =>
  behind.get(registration)

/** What the processor reads of the cache: the objects a late listener gets as initial adds. */
interface Cache<A> {
  readonly unsafeValues: () => Iterable<A>
}

/**
 * The only writer of its listeners' state (`listener.ts` `State`): it attaches a listener's fiber, marks its
 * batches as its fiber reports them, and removes it.
 *
 * @internal
 */
export class Processor<A> implements Batches<A> {
  private readonly listeners = new Map<number, Listener<A>>()
  /** The listeners a resync (an update with equal resourceVersions) goes to: those found due by `shouldResync`. */
  private syncing = new Set<Listener<A>>()
  private readonly registrations = new WeakMap<Registration, Listener<A>>()
  private nextId = 0

  /** `resyncCheckPeriod`: the informer's resync period, which handlers added before start may lower. */
  constructor(
    private readonly cache: Cache<A>,
    private readonly tracker: SyncTracker<InformerStoppedError>,
    private readonly clock: Clock.Clock,
    private resyncCheckPeriod: number
  ) {}

  /** The Reflector's resync timer period. */
  checkPeriod(): number {
    return this.resyncCheckPeriod
  }

  /** A new listener id. */
  id(): number {
    return this.nextId++
  }

  // --- distribution (inside the controller's synchronous step) ---------------------------------

  distribute(notification: Notification<A>, isSync: boolean): void {
    const targets = isSync ? this.syncing : this.listeners.values()
    for (const listener of targets) listener.offer(notification)
  }

  /**
   * Distributes the notifications of one batch to every listener (none of them a resync: those go to
   * `distribute` one by one), in order: one push per listener for the whole batch. The array is shared by
   * the listeners' buffers and must not change after.
   */
  distributeAll(notifications: ReadonlyArray<Notification<A>>): void {
    if (notifications.length === 0) return
    let initialAdds = 0
    for (let i = 0; i < notifications.length; i++) {
      const n = notifications[i]
      if (n._tag === "Add" && n.isInInitialList) initialAdds++
    }
    for (const listener of this.listeners.values()) listener.offerAll(notifications, initialAdds)
  }

  /** Asked by the Reflector's resync timer: marks the listeners due for resync; whether there are any. */
  readonly shouldResync: Effect.Effect<boolean> = Effect.sync(() => {
    const now = this.clock.currentTimeMillisUnsafe()
    const due = new Set<Listener<A>>()
    for (const listener of this.listeners.values()) {
      if (listener.dueForResync(now)) due.add(listener)
    }
    this.syncing = due
    return due.size > 0
  })

  /**
   * Publishes the backlog of every listener in a batch (also a stuck handler's, whose own fiber cannot). A
   * listener between batches publishes its own when its fiber ends the next batch, so that with many
   * handlers a FIFO batch does not cost one gauge update per handler.
   */
  updateBacklogGauges(): void {
    for (const listener of this.listeners.values()) if (listener.state._tag === "Busy") listener.updateBacklogGauge()
  }

  // --- a listener's life ------------------------------------------------------------------------

  /** The listener's fiber was forked (before it joins). */
  attach(listener: Listener<A>, fiber: Fiber.Fiber<void>): void {
    listener.state = L.transition(listener.state, L.attached(fiber))
  }

  /** Told by the listener's fiber when it takes a batch. Allocates nothing. */
  batchStarted(listener: Listener<A>): void {
    listener.state = L.transition(listener.state, L.batchStarted)
  }

  /** Told by the listener's fiber when it has finished a batch. Allocates nothing. */
  batchEnded(listener: Listener<A>): void {
    listener.state = L.transition(listener.state, L.batchEnded)
    listener.wakeIfSettled()
  }

  /** The handlers registered now (tests: removed ones are gone). */
  listenerCount(): number {
    return this.listeners.size
  }

  // --- joining and leaving ----------------------------------------------------------------------

  /**
   * Adds a listener, in one synchronous step serialised with the controller's steps and with the stop
   * (the caller checks that the informer has not stopped in this same step): the resync decision (which
   * reads and, before start, may lower the check period), the replay of the cache when started, the
   * listener set, and the registration's join of the sync tracker. `"raised"`: the period asked for was
   * under the check period after start, and was raised to it.
   */
  join(listener: Listener<A>, requested: number, started: boolean): "joined" | "raised" {
    let raised = false
    if (requested > 0 && requested < this.resyncCheckPeriod) {
      if (started) {
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
    listener.nextResync = this.clock.currentTimeMillisUnsafe() + listener.resyncPeriod
    if (started) {
      for (const obj of this.cache.unsafeValues()) {
        listener.offer({ _tag: "Add", object: obj, isInInitialList: true })
      }
    }
    this.listeners.set(listener.id, listener)
    this.syncing.add(listener)
    this.tracker.join(listener.sync)
    return raised ? "raised" : "joined"
  }

  /** The registration handed to the caller of `addEventHandler`. */
  registration(listener: Listener<A>): Registration {
    const sync = listener.sync
    const registration: Registration = {
      name: listener.name,
      hasSynced: Effect.sync(() => sync.hasSynced()),
      synced: sync.synced,
      backlog: Effect.sync(() => listener.backlog()),
      remove: this.remove(listener)
    }
    this.registrations.set(registration, listener)
    behind.set(registration, { listener, processor: this })
    return registration
  }

  /** The listener behind a registration of this processor. */
  listenerOf(registration: Registration): Listener<A> | undefined {
    return this.registrations.get(registration)
  }

  /**
   * Stops delivery to a listener and ends it: leaves the set and the sync tracker in one step (its
   * pending `synced` waits are interrupted), then drops its backlog and interrupts its fiber. Idempotent.
   */
  remove(listener: Listener<A>): Effect.Effect<void> {
    return Effect.suspend(() => {
      if (listener.state._tag === "Removed") return Effect.void
      const fiber = L.fiberOf(listener.state)
      listener.state = L.transition(listener.state, L.removal)
      this.listeners.delete(listener.id)
      this.syncing.delete(listener)
      this.tracker.leave(listener.sync)
      listener.updateBacklogGauge()
      listener.wakeIfSettled()
      // Buffer first: a handler removing itself from its own callback interrupts its own fiber, and whatever
      // follows that interruption never runs.
      return Effect.andThen(
        listener.buffer.shutdown,
        fiber === undefined ? Effect.void : Fiber.interrupt(fiber)
      )
    })
  }
}

/**
 * The Reflector's loop as a state machine, as kube-rs's `watcher` is written: a `State` says where the loop
 * is, `step` takes one state to the next (`state = yield* step(state)`), and every failure goes through one
 * pure policy, `recovery` (`internal/reflectorPolicy.ts`), whose `Action` `apply` turns into the next
 * state: `step` writes where each phase goes when it succeeds, `apply` where a failure leads.
 *
 * What the loop learns and keeps across cycles (the watch position, watch-list rejections, ...) is its
 * `Memory`; the state carries what one phase needs. The hot path (`applyChunk`, `countEvents`) writes the
 * position once per event and updates counters once per chunk; with a store that has synchronous
 * operations (the DeltaFifo) a chunk is one Effect, not one per event.
 *
 * @internal
 */
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import type * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as FiberHandle from "effect/FiberHandle"
import type * as Metric from "effect/Metric"
import * as Option from "effect/Option"
import * as Pull from "effect/Pull"
import * as Random from "effect/Random"
import * as Result from "effect/Result"
import * as Schedule from "effect/Schedule"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import { DecodeError } from "../../ApiError.js"
import { deletionHandlingMetaNamespaceKey } from "../../Indexer.js"
import type { KubeObject } from "../../KubeObject.js"
import { resourceVersion } from "../../KubeObject.js"
import type { ListerWatcher, ListerWatcherError, ListOptions, ListPage, WatchEvent } from "../../ListerWatcher.js"
import { isInitialEventsEnd } from "../../ListerWatcher.js"
import type {
  Action,
  ErrorContext,
  Options,
  Phase,
  RecoveryContext,
  Reflector,
  ReflectorError,
  RelistCause,
  Status,
  StopReason,
  Store
} from "../../Reflector.js"
import { tagged } from "../metricTags.js"
import * as InformerMetrics from "./metrics.js"
import { describeError, ProtocolError, reasonOf, StoreError, UnexpectedError } from "./reflectorErrors.js"
import {
  defaultMaxRetryAfter,
  honourRetryAfterUpTo,
  jitteredExponential,
  listPageSize,
  recovery,
  watchListRetryDelay
} from "./reflectorPolicy.js"

// -------------------------------------------------------------------------------------------------
// the state
// -------------------------------------------------------------------------------------------------

/**
 * Where the loop is. A cycle runs from one `Relisting` to the next: it syncs the store (`WatchListing` or
 * `Listing`), then watches (`Watching`, with `BackingOff` between watches that a 429 or a refused connection
 * ends). The resync timer belongs to a cycle: it starts when the cycle synced and stops when the next begins.
 *
 * @internal
 */
export type State = Relisting | Listing | WatchListing | Watching | BackingOff | Stopped

/**
 * A cycle begins (the first one too): watch-list if it is wanted and not rejected lately, a paged LIST
 * otherwise, at the resourceVersion `relistResourceVersion` gives.
 */
interface Relisting {
  readonly _tag: "Relisting"
  /** A Gone or a too-large resourceVersion sent the loop here: read at `""` until a sync succeeds. */
  readonly afterGone: boolean
}

/** A paged LIST at `resourceVersion`, then a replace of the store. */
interface Listing {
  readonly _tag: "Listing"
  readonly resourceVersion: string
  /** This list is the consistent read a Gone asked for: a second Gone backs off. */
  readonly afterGone: boolean
}

/**
 * A WATCH with `sendInitialEvents=true` from `resourceVersion`: its events until the initial-events-end
 * bookmark replace the store, after which the same stream is the watch.
 */
interface WatchListing {
  readonly _tag: "WatchListing"
  readonly resourceVersion: string
  readonly afterGone: boolean
}

/** A WATCH from `resourceVersion` (the position when the state was entered). */
interface Watching {
  readonly _tag: "Watching"
  readonly resourceVersion: string
}

/** The backoff's wait for `error` (never shorter than its `Retry-After`), then `then`. */
interface BackingOff {
  readonly _tag: "BackingOff"
  readonly error: ReflectorError
  readonly then: State
}

/** The loop ends: a LIST answered 404 NotFound (`ResourceGone`). */
interface Stopped {
  readonly _tag: "Stopped"
  readonly reason: StopReason
  readonly error: ReflectorError
}

/** What the loop keeps across states and cycles (client-go keeps these as Reflector fields). */
interface Memory {
  /** The resourceVersion of the last list, event or bookmark: `lastSyncResourceVersion`, never `""` once set. */
  position: string
  /** Gones on a watch since a watch last delivered an event or stayed open for a second: from the second on, the relist waits. */
  goneStreak: number
  /** Rejections of watch-list in a row, and when it may be asked again (`watchListRetryDelay`). */
  watchListRejections: number
  watchListRetryAt: number
  /** The first any-age list came back paginated (client-go's `paginatedResult`): relists stay paged. */
  paginatedResult: boolean
  /** For `status`: the state the loop is in. */
  state: State
  /** Whether a list or watch-list replaced the store: never yet, in an earlier cycle, or in this one. */
  synced: Synced
  /** For `status`: when the current backoff's wait ends (Clock milliseconds). */
  backoffUntil: number
}

/**
 * How far the store is synced: no list or watch-list has replaced it yet (`Never`), one did in an earlier
 * cycle (`Earlier`), or this cycle's did (`ThisCycle`). The one record of "the cycle synced": `status`,
 * the recovery from a defect and the watch-list's switch to watching read it.
 *
 * @internal
 */
export type Synced = "Never" | "Earlier" | "ThisCycle"

/** What changes `Synced`: a cycle begins, or its list or watch-list replaced the store. @internal */
export type SyncEvent = "cycleStarted" | "replaced"

/**
 * The next `Synced`:
 *
 * | synced | cycleStarted | replaced |
 * |---|---|---|
 * | Never | Never | ThisCycle |
 * | Earlier | Earlier | ThisCycle |
 * | ThisCycle | Earlier | ThisCycle |
 *
 * @internal
 */
export const nextSynced = (synced: Synced, event: SyncEvent): Synced =>
  event === "replaced" ? "ThisCycle" : synced === "Never" ? "Never" : "Earlier"

/** The resync timer's hold on the current cycle. */
interface Cycle {
  /** Done when the cycle's list or watch-list replaced the store: the timer's first period starts. */
  readonly synced: Deferred.Deferred<void>
  /** Done by the timer when a resync failed: the state to go to, instead of the current step's. */
  readonly ended: Deferred.Deferred<State>
}

// -------------------------------------------------------------------------------------------------
// make
// -------------------------------------------------------------------------------------------------

/** @internal */
export const make = <A, E>(
  lw: ListerWatcher.Service<A>,
  store: Store<A, E>,
  options: Options<A> = {}
): Effect.Effect<Reflector, never, Scope.Scope> =>
  Effect.suspend(() => {
    const name = options.name ?? lw.description ?? "reflector"
    const memory = initialMemory()
    const stopped = Deferred.makeUnsafe<StopReason>()
    const reflector: Reflector = {
      name,
      lastSyncResourceVersion: Effect.sync(() => memory.position),
      status: Effect.sync(() => statusOf(memory.state, memory.synced, memory.backoffUntil)),
      awaitStop: Deferred.await(stopped)
    }
    return Effect.as(
      Effect.forkScoped(
        Effect.interruptible(
          Effect.flatMap(loop(lw, store, options, name, memory), (reason) => Deferred.succeed(stopped, reason))
        )
      ),
      reflector
    )
  })

/** @internal */
export const run = <A, E>(
  lw: ListerWatcher.Service<A>,
  store: Store<A, E>,
  options: Options<A> = {}
): Effect.Effect<StopReason> =>
  Effect.suspend(() => loop(lw, store, options, options.name ?? lw.description ?? "reflector", initialMemory()))

const initialMemory = (): Memory => ({
  position: "",
  goneStreak: 0,
  watchListRejections: 0,
  watchListRetryAt: 0,
  paginatedResult: false,
  state: { _tag: "Relisting", afterGone: false },
  synced: "Never",
  backoffUntil: 0
})

/**
 * What `Reflector.status` reports for where the loop is, how far the store is synced, and when a backoff
 * ends: a watch-list past its end bookmark is watching; a list is `Syncing` until one first synced, then
 * `Relisting`.
 *
 * @internal
 */
export const statusOf = (state: State, synced: Synced, backoffUntil: number): Status => {
  switch (state._tag) {
    case "BackingOff":
      return { _tag: "BackingOff", until: backoffUntil, error: state.error._tag }
    case "Stopped":
      return { _tag: "Stopped", reason: state.reason }
    case "Watching":
      return { _tag: "Watching" }
    case "WatchListing":
      if (synced === "ThisCycle") return { _tag: "Watching" }
      return synced === "Never" ? { _tag: "Syncing" } : { _tag: "Relisting" }
    default:
      return synced === "Never" ? { _tag: "Syncing" } : { _tag: "Relisting" }
  }
}

/** The loop: one step after another, until it stops (a LIST answered 404 NotFound) or is interrupted. */
const loop = <A, E>(
  lw: ListerWatcher.Service<A>,
  store: Store<A, E>,
  options: Options<A>,
  name: string,
  memory: Memory
): Effect.Effect<StopReason> =>
  Effect.gen(function*() {
    const m = yield* machine(lw, store, options, name, memory)
    yield* countRelist(m, "initial")
    let state: State = { _tag: "Relisting", afterGone: false }
    while (true) {
      memory.state = state
      const next: State = yield* guarded(m, state)
      if (next._tag === "Stopped") {
        yield* endCycle(m)
        memory.state = next
        yield* Effect.logWarning(
          `${m.name}: stopped: the API server no longer serves the resource (a LIST answered 404 NotFound: ` +
            `${next.error.message}); it must be watched anew once it is served again`
        ).pipe(Effect.annotateLogs({ reflector: m.name, reason: next.reason }))
        return next.reason
      }
      if (next._tag === "Relisting" || (next._tag === "BackingOff" && next.then._tag === "Relisting")) {
        yield* endCycle(m)
      }
      // until the backoff's decision says when its wait ends
      if (next._tag === "BackingOff") memory.backoffUntil = m.clock.currentTimeMillisUnsafe()
      state = next
    }
  }).pipe(Effect.scoped, Effect.annotateLogs({ module: "Reflector" }))

/**
 * One step, with a defect (something threw) reported as `UnexpectedError` and recovered from as the
 * policy says; raced against the resync timer while it holds the cycle. A backoff's defect (a custom
 * schedule that throws) is not caught: recovering from it would back off again at once, forever.
 */
const guarded = <A, E>(m: Machine<A, E>, state: State): Effect.Effect<State> => {
  const stepped = state._tag === "BackingOff" ?
    step(m, state) :
    Effect.catchCause(step(m, state), (cause) =>
      Cause.hasInterruptsOnly(cause)
        ? Effect.failCause(cause)
        : recover(m, new UnexpectedError({ cause }), "watch", noContext, {
          resourceVersion: m.memory.position,
          // a cycle that synced read at its list's version: the next one need not be consistent
          afterGone: state._tag !== "Watching" && state._tag !== "Stopped" && state.afterGone &&
            m.memory.synced !== "ThisCycle"
        }))
  return m.cycle === undefined ? stepped : Effect.raceFirst(stepped, Deferred.await(m.cycle.ended))
}

// -------------------------------------------------------------------------------------------------
// step
// -------------------------------------------------------------------------------------------------

/**
 * From one state to the next. Successes are written here; failures go to `recover` with the phase they
 * happened in and what the policy needs to know.
 */
const step = <A, E>(m: Machine<A, E>, state: State): Effect.Effect<State> => {
  switch (state._tag) {
    case "Relisting":
      return Effect.map(startCycle(m), (): State => {
        const resourceVersion = relistResourceVersion(m, state.afterGone)
        return watchListAllowed(m)
          ? { _tag: "WatchListing", resourceVersion, afterGone: state.afterGone }
          : { _tag: "Listing", resourceVersion, afterGone: state.afterGone }
      })
    case "Listing":
      return Effect.matchEffect(list(m, state.resourceVersion), {
        onFailure: (error) => recover(m, error, "list", { ...noContext, afterGone: state.afterGone }, state),
        onSuccess: (resourceVersion) => Effect.succeed<State>({ _tag: "Watching", resourceVersion })
      })
    case "WatchListing":
      return Effect.flatMap(watchList(m, state.resourceVersion), (end) =>
        end.synced
          // after its end bookmark the stream was the watch, and it ends as a watch does
          ? watchEnded(m, end.result, end.progress, true)
          : recover(
            m,
            end.error,
            "watch-list",
            { ...noContext, consistent: state.resourceVersion === "", connected: end.connected },
            state
          ))
    case "Watching":
      return Effect.flatMap(
        watch(m, state.resourceVersion),
        (end) => watchEnded(m, end.result, end.events > 0 || end.lasted, end.connected)
      )
    case "BackingOff":
      return Effect.as(m.backoff(state.error), state.then)
    case "Stopped":
      // the loop ends before it would step from here
      return Effect.succeed(state)
  }
}

/**
 * A watch ended (or a watch-list after its end bookmark). A normal close of an established watch re-watches
 * at once; a watch that closed within a second without events is a `ProtocolError` `VeryShortWatch`.
 * `progress`: the watch delivered an event or stayed open for a second (`shortWatch`). It ends a streak of
 * Gones: a Gone after it relists at once. Only a Gone that follows a relist with neither (the server
 * answering Gone right after every list) waits for the backoff, so that it cannot become a hot loop of
 * relists; a watch that was open for a second before the server compacted past it is a watch that worked.
 */
const watchEnded = <A, E>(
  m: Machine<A, E>,
  result: Result.Result<void, ReflectorError>,
  progress: boolean,
  connected: boolean
): Effect.Effect<State> => {
  if (progress) m.memory.goneStreak = 0
  if (Result.isSuccess(result) && connected) return Effect.succeed(watching(m))
  const error = Result.isFailure(result)
    ? result.failure
    : new ProtocolError({
      reason: "VeryShortWatch",
      message: "very short watch: watch closed within 1s without events"
    })
  return recover(m, error, "watch", {
    ...noContext,
    connected,
    goneWithoutProgress: m.memory.goneStreak > 0
  }, { resourceVersion: m.memory.position, afterGone: false })
}

const noContext: RecoveryContext = { consistent: false, afterGone: false, connected: false, goneWithoutProgress: false }

/** Reports a failure (logged once, counted, handed to `onError`), then goes where the policy says. */
const recover = <A, E>(
  m: Machine<A, E>,
  error: ReflectorError,
  phase: Exclude<Phase, "event">,
  context: RecoveryContext,
  from: { readonly resourceVersion: string; readonly afterGone: boolean }
): Effect.Effect<State> => {
  const decided = recovery(error, phase, context)
  const action: Action = decided._tag === "Stop" && m.options.stopOnResourceGone === false
    ? { _tag: "Relist", backoff: true, consistent: false, cause: "error" }
    : decided
  const reported = report(m, error, phase)
  const counted = action._tag === "Rewatch" || action._tag === "Stop" || action.cause === undefined
    ? reported
    : Effect.andThen(reported, countRelist(m, action.cause))
  return Effect.map(counted, () => apply(m, action, error, phase, from))
}

/** The state an action leads to. */
const apply = <A, E>(
  m: Machine<A, E>,
  action: Action,
  error: ReflectorError,
  phase: Exclude<Phase, "event">,
  from: { readonly resourceVersion: string; readonly afterGone: boolean }
): State => {
  switch (action._tag) {
    case "Rewatch":
      return afterBackoff(action.backoff, error, watching(m))
    case "List":
      if (action.rejectWatchList) rejectWatchList(m)
      return action.consistent
        ? { _tag: "Listing", resourceVersion: "", afterGone: true }
        : { _tag: "Listing", resourceVersion: from.resourceVersion, afterGone: from.afterGone }
    case "Relist":
      // A Gone on a watch: the next one, unless a watch delivers an event first, waits for the backoff.
      if (phase === "watch" && action.consistent) m.memory.goneStreak++
      return afterBackoff(action.backoff, error, { _tag: "Relisting", afterGone: action.consistent || from.afterGone })
    case "Stop":
      return { _tag: "Stopped", reason: action.reason, error }
  }
}

const afterBackoff = (backoff: boolean, error: ReflectorError, then: State): State =>
  backoff ? { _tag: "BackingOff", error, then } : then

const watching = <A, E>(m: Machine<A, E>): State => ({ _tag: "Watching", resourceVersion: m.memory.position })

/** The resourceVersion for a (re)list or watch-list. */
const relistResourceVersion = <A, E>(m: Machine<A, E>, afterGone: boolean): string => {
  if (afterGone) return ""
  if (m.memory.position !== "") return m.memory.position
  return m.options.initialList === "any" ? "0" : ""
}

/** Whether this cycle starts with watch-list. */
const watchListAllowed = <A, E>(m: Machine<A, E>): boolean =>
  m.watchListWanted && m.clock.currentTimeMillisUnsafe() >= m.memory.watchListRetryAt

/** The server rejected or ignored watch-list: LIST until `watchListRetryDelay` has passed. */
const rejectWatchList = <A, E>(m: Machine<A, E>): void => {
  m.memory.watchListRejections++
  m.memory.watchListRetryAt = m.clock.currentTimeMillisUnsafe() +
    Duration.toMillis(watchListRetryDelay(m.memory.watchListRejections))
}

// -------------------------------------------------------------------------------------------------
// the machine: what the steps share
// -------------------------------------------------------------------------------------------------

interface Machine<A, E> {
  readonly name: string
  readonly lw: ListerWatcher.Service<A>
  readonly store: Store<A, E>
  readonly options: Options<A>
  readonly memory: Memory
  readonly clock: Clock.Clock
  /** `false`: never (the option, or a ListerWatcher without it). */
  readonly watchListWanted: boolean
  readonly watchListTimeout: number
  readonly watchTimeoutMin: number
  readonly resyncPeriod: Duration.Duration | undefined
  /** The backoff's next wait for an error (a schedule that stops starts over). */
  readonly backoff: (error: ReflectorError) => Effect.Effect<void>
  readonly resyncTimer: FiberHandle.FiberHandle<void, never>
  /** The current cycle, while a resync timer may end it. */
  cycle: Cycle | undefined
  readonly onStoreAdd: (e: E) => Effect.Effect<void>
  readonly onStoreUpdate: (e: E) => Effect.Effect<void>
  readonly onStoreDelete: (e: E) => Effect.Effect<void>
  readonly onStoreBookmark: (e: E) => Effect.Effect<void>
  readonly eventCounters: {
    readonly ADDED: Metric.Counter<number>
    readonly MODIFIED: Metric.Counter<number>
    readonly DELETED: Metric.Counter<number>
    readonly BOOKMARK: Metric.Counter<number>
  }
  readonly listedCounter: Metric.Counter<number>
  readonly errorCounters: Map<string, Metric.Counter<number>>
  readonly relistCounters: Map<string, Metric.Counter<number>>
  /** The context the metrics are updated in (their registry, and attributes the program added). */
  readonly metricContext: Context.Context<never>
}

const minimumWatchTimeout = Duration.minutes(5)
/** A watch open for less than this without events is a very short watch. */
const shortWatch = 1000
/** How often a watch-list waiting for its initial-events-end bookmark says so (client-go: 10 s). */
const initialEventsTick = 10_000

const machine = <A, E>(
  lw: ListerWatcher.Service<A>,
  store: Store<A, E>,
  options: Options<A>,
  name: string,
  memory: Memory
): Effect.Effect<Machine<A, E>, never, Scope.Scope> =>
  Effect.gen(function*() {
    const clock = yield* Clock.clockWith(Effect.succeed)
    const metricContext = yield* Effect.context<never>()
    const schedule = honourRetryAfterUpTo(options.maxRetryAfter ?? defaultMaxRetryAfter)(
      options.backoff ?? jitteredExponential
    )
    // The backoff's steps: each says how long to wait (set for `status` before the wait), or that the
    // schedule is done, and then it starts over with its first wait.
    let backoffStep = yield* Schedule.toStep(schedule)
    const wait = (now: number, error: ReflectorError): Effect.Effect<void, Cause.Done<unknown>> =>
      Effect.flatMap(backoffStep(now, error), ([, delay]) => {
        memory.backoffUntil = now + Duration.toMillis(delay)
        return Effect.sleep(delay)
      })
    const resyncTimer = yield* FiberHandle.make<void, never>()
    const min = options.minWatchTimeout === undefined
      ? minimumWatchTimeout
      : Duration.fromInputUnsafe(options.minWatchTimeout)
    const period = options.resyncPeriod === undefined ? Duration.zero : Duration.fromInputUnsafe(options.resyncPeriod)
    const counter = (type: string) => tagged(InformerMetrics.watchEvents, { informer: name, type })
    const m: Machine<A, E> = {
      name,
      lw,
      store,
      options,
      memory,
      clock,
      watchListWanted: (options.watchList ?? true) && lw.supportsWatchList !== false,
      watchListTimeout: Duration.toMillis(Duration.fromInputUnsafe(options.watchListTimeout ?? "60 seconds")),
      watchTimeoutMin: Math.ceil(Duration.toSeconds(Duration.max(min, minimumWatchTimeout))),
      resyncPeriod: Duration.isGreaterThan(period, Duration.zero) ? period : undefined,
      // A schedule that stops (a custom one with a limit) starts over, with its first wait.
      backoff: (error) =>
        Effect.suspend(() => {
          const now = clock.currentTimeMillisUnsafe()
          return wait(now, error).pipe(
            Pull.catchDone(() =>
              Effect.flatMap(Schedule.toStep(schedule), (fresh) => {
                backoffStep = fresh
                return Effect.ignore(wait(now, error))
              })
            )
          )
        }),
      resyncTimer,
      cycle: undefined,
      onStoreAdd: (cause) => report(m, new StoreError({ operation: "add", cause }), "event"),
      onStoreUpdate: (cause) => report(m, new StoreError({ operation: "update", cause }), "event"),
      onStoreDelete: (cause) => report(m, new StoreError({ operation: "delete", cause }), "event"),
      onStoreBookmark: (cause) => report(m, new StoreError({ operation: "bookmark", cause }), "event"),
      eventCounters: {
        ADDED: counter("ADDED"),
        MODIFIED: counter("MODIFIED"),
        DELETED: counter("DELETED"),
        BOOKMARK: counter("BOOKMARK")
      },
      listedCounter: tagged(InformerMetrics.listedObjects, { informer: name }),
      errorCounters: new Map(),
      relistCounters: new Map(),
      metricContext
    }
    return m
  })

// -------------------------------------------------------------------------------------------------
// the cycle and its resync timer
// -------------------------------------------------------------------------------------------------

/** A cycle begins: with a resync period, its timer starts, to wait until the cycle has synced. */
const startCycle = <A, E>(m: Machine<A, E>): Effect.Effect<void> => {
  m.memory.synced = nextSynced(m.memory.synced, "cycleStarted")
  if (m.resyncPeriod === undefined) return Effect.void
  const cycle: Cycle = { synced: Deferred.makeUnsafe(), ended: Deferred.makeUnsafe() }
  m.cycle = cycle
  return Effect.asVoid(FiberHandle.run(m.resyncTimer, resync(m, m.resyncPeriod, cycle)))
}

/** The cycle's list or watch-list replaced the store. */
const markSynced = <A, E>(m: Machine<A, E>): void => {
  m.memory.synced = nextSynced(m.memory.synced, "replaced")
  if (m.cycle !== undefined) Deferred.doneUnsafe(m.cycle.synced, Exit.void)
}

/** The cycle ends (its relist, or the backoff before it, comes next): the resync timer stops. */
const endCycle = <A, E>(m: Machine<A, E>): Effect.Effect<void> => {
  if (m.cycle === undefined) return Effect.void
  m.cycle = undefined
  return FiberHandle.clear(m.resyncTimer)
}

/**
 * Every `period` after the cycle synced, asks `shouldResync` and resyncs the store. A failure ends the
 * cycle as the policy says (phase `resync`; a defect is an `UnexpectedError`).
 */
const resync = <A, E>(m: Machine<A, E>, period: Duration.Duration, cycle: Cycle): Effect.Effect<void> => {
  const shouldResync = m.options.shouldResync ?? Effect.succeed(true)
  const once = Effect.flatMap(shouldResync, (yes) =>
    yes
      ? Effect.mapError(m.store.resync, (cause) => new StoreError({ operation: "resync", cause }))
      : Effect.void)
  return Deferred.await(cycle.synced).pipe(
    Effect.andThen(once.pipe(Effect.repeat(Schedule.spaced(period)), Effect.delay(period))),
    Effect.catchCause((cause) => {
      if (Cause.hasInterruptsOnly(cause)) return Effect.interrupt
      const failure = Cause.findErrorOption(cause)
      // the cycle synced: the relist reads at the last version
      const from = { resourceVersion: m.memory.position, afterGone: false }
      const next = Option.isSome(failure)
        ? recover(m, failure.value, "resync", noContext, from)
        : recover(m, new UnexpectedError({ cause }), "watch", noContext, from)
      return Effect.flatMap(next, (state) => Deferred.succeed(cycle.ended, state))
    }),
    Effect.asVoid
  )
}

// -------------------------------------------------------------------------------------------------
// LIST
// -------------------------------------------------------------------------------------------------

/**
 * A paged LIST into the store; succeeds with the list's resourceVersion. An expired `continue` token falls
 * back to one full list at the same version; a token the server already sent fails with `ContinueRepeated`
 * (a cycle would page forever), and a list without a resourceVersion with a `DecodeError` (watching from `""`
 * would lose deletes).
 */
const list = <A, E>(m: Machine<A, E>, rv: string): Effect.Effect<string, ReflectorError> =>
  Effect.gen(function*() {
    const pageSize = listPageSize({
      pageSize: m.options.pageSize,
      resourceVersion: rv,
      paginatedResult: m.memory.paginatedResult
    })
    const items: Array<A> = []
    const first: ListOptions = { resourceVersion: rv, ...(pageSize === undefined ? {} : { limit: pageSize }) }
    let page: ListPage<A> = yield* m.lw.list(first)
    let listRV = page.resourceVersion
    if (rv === "0" && page.continue !== undefined) m.memory.paginatedResult = true
    collect(m, items, page.items)
    let pages = 1
    let tokens: Set<string> | undefined
    while (page.continue !== undefined) {
      const token = page.continue
      if ((tokens ??= new Set()).has(token)) {
        return yield* new ProtocolError({
          reason: "ContinueRepeated",
          pages,
          message: `the server repeated a continue token after ${pages} pages (${items.length} items): ` +
            `paging would never end`
        })
      }
      tokens.add(token)
      const next: Option.Option<ListPage<A>> = yield* m.lw.list({ continue: token, limit: pageSize }).pipe(
        Effect.map(Option.some),
        Effect.catchIf(
          (error) => error._tag === "StatusError" && error.reason === "Gone",
          () => Effect.succeed(Option.none())
        )
      )
      if (Option.isNone(next)) {
        // The continue token expired: list everything at once at the original version.
        yield* Effect.logInfo(`${m.name}: continue token expired, listing without pagination`)
        items.length = 0
        tokens = undefined
        page = yield* m.lw.list({ resourceVersion: rv })
        listRV = page.resourceVersion
        collect(m, items, page.items)
        break
      }
      page = next.value
      pages++
      collect(m, items, page.items)
    }
    if (listRV === "") {
      return yield* new DecodeError({
        reason: "MissingResourceVersion",
        message: `the list response has no resourceVersion (${items.length} items): a watch from "" would miss ` +
          `changes, so the list is not used`
      })
    }
    m.listedCounter.updateUnsafe(items.length, m.metricContext)
    yield* m.store.replace(items, listRV).pipe(
      Effect.mapError((cause) => new StoreError({ operation: "replace", cause }))
    )
    m.memory.position = listRV
    markSynced(m)
    return listRV
  }).pipe(Effect.withSpan("Reflector.list", { attributes: { reflector: m.name } }))

/**
 * Collects listed objects, swapping each for the equal object the caller already holds (`reuse`), page
 * by page: a relist of unchanged objects then never keeps two copies of the whole collection alive.
 */
const collect = <A, E>(m: Machine<A, E>, into: Array<A>, objects: Iterable<A>): void => {
  const reuse = m.options.reuse
  if (reuse === undefined) { for (const obj of objects) into.push(obj) }
  else for (const obj of objects) into.push(reuse(obj))
}

// -------------------------------------------------------------------------------------------------
// WATCH
// -------------------------------------------------------------------------------------------------

const watchTimeoutSeconds = <A, E>(m: Machine<A, E>): Effect.Effect<number> =>
  Random.nextIntBetween(m.watchTimeoutMin, 2 * m.watchTimeoutMin + 1, { halfOpen: true })

/**
 * One watch into the store, until it ends. `lasted`: it stayed open for a second; `connected`: it delivered
 * an event or lasted.
 */
const watch = <A, E>(m: Machine<A, E>, rv: string): Effect.Effect<{
  readonly result: Result.Result<void, ReflectorError>
  readonly events: number
  readonly lasted: boolean
  readonly connected: boolean
}> =>
  Effect.gen(function*() {
    const timeoutSeconds = yield* watchTimeoutSeconds(m)
    const started = yield* Clock.currentTimeMillis
    const counter = { events: 0 }
    const result = yield* consume(
      m,
      m.lw.watch({ resourceVersion: rv, allowWatchBookmarks: true, timeoutSeconds }),
      counter
    )
      .pipe(
        Effect.withSpan("Reflector.watch", { attributes: { reflector: m.name, resourceVersion: rv } }),
        Effect.result
      )
    const lasted = (yield* Clock.currentTimeMillis) - started >= shortWatch
    return { result, events: counter.events, lasted, connected: counter.events > 0 || lasted }
  })

// -------------------------------------------------------------------------------------------------
// WATCH-LIST
// -------------------------------------------------------------------------------------------------

/** How a watch-list stream ended: before its end bookmark (`error`), or after it, as a watch. */
type WatchListEnd =
  | {
    readonly synced: false
    readonly error: ReflectorError
    /** It delivered events and lasted a second or more. */
    readonly connected: boolean
  }
  | {
    readonly synced: true
    readonly result: Result.Result<void, ReflectorError>
    /** Events after the end bookmark, or a second after it: the watch part made progress. */
    readonly progress: boolean
  }

/**
 * Watch-list: collects the initial events into a temporary map until the end bookmark, replaces the store,
 * then applies the rest of the stream as a watch. Until the end bookmark, a stream that delivers nothing
 * for `watchListTimeout` fails with `WatchListTimeout`, and one that ends with `WatchListEndedEarly`; every
 * 10 s the loop logs what it waits for (client-go's initial-events-end bookmark ticker).
 */
const watchList = <A, E>(m: Machine<A, E>, rv: string): Effect.Effect<WatchListEnd> =>
  Effect.gen(function*() {
    const timeoutSeconds = yield* watchTimeoutSeconds(m)
    const started = m.clock.currentTimeMillisUnsafe()
    // Until the end bookmark replaced the store (`m.memory.synced` turns `ThisCycle`: the cycle began with
    // this watch-list), events go to a temporary map; after it, the stream is the watch.
    const temp = new Map<string, A>()
    const counter = { events: 0 }
    /** When the end bookmark replaced the store. */
    let syncedAt = started
    const stream = m.lw.watch({
      resourceVersion: rv,
      resourceVersionMatch: "NotOlderThan",
      sendInitialEvents: true,
      allowWatchBookmarks: true,
      timeoutSeconds
    })
    const initialPhase = (event: WatchEvent<A>): Effect.Effect<void, ReflectorError> => {
      switch (event.type) {
        case "ADDED":
        case "MODIFIED": {
          const key = deletionHandlingMetaNamespaceKey(event.object)
          if (Result.isFailure(key)) return report(m, new StoreError({ operation: "add", cause: key.failure }), "event")
          const reuse = m.options.reuse
          temp.set(key.success, reuse === undefined ? event.object : reuse(event.object))
          return Effect.void
        }
        case "DELETED": {
          const key = deletionHandlingMetaNamespaceKey(event.object)
          if (Result.isFailure(key)) {
            return report(m, new StoreError({ operation: "delete", cause: key.failure }), "event")
          }
          temp.delete(key.success)
          return Effect.void
        }
        case "BOOKMARK": {
          if (!isInitialEventsEnd(event.object)) {
            return Effect.void
          }
          const bookmarkRV = event.object.metadata.resourceVersion
          // The state cannot be placed in time: fall back to a LIST rather than watch from "".
          if (bookmarkRV === "") return Effect.fail(emptyResourceVersion(event))
          const objects = Array.from(temp.values())
          temp.clear()
          m.listedCounter.updateUnsafe(objects.length, m.metricContext)
          return m.store.replace(objects, bookmarkRV).pipe(
            Effect.mapError((cause): ReflectorError => new StoreError({ operation: "replace", cause })),
            Effect.tap(() =>
              Effect.sync(() => {
                m.memory.watchListRejections = 0
                m.memory.position = bookmarkRV
                syncedAt = m.clock.currentTimeMillisUnsafe()
                markSynced(m)
              })
            )
          )
        }
      }
    }
    /** Events after the end bookmark: the watch part of the stream made progress. */
    let eventsAfterSync = 0
    let lastProgress = started
    const consumed = Stream.runForEachArray(stream, (chunk) => {
      lastProgress = m.clock.currentTimeMillisUnsafe()
      counter.events += countEvents(m, chunk)
      if (m.memory.synced === "ThisCycle") {
        eventsAfterSync += chunk.length
        return applyChunk(m, chunk)
      }
      return Effect.forEach(
        chunk,
        (event): Effect.Effect<void, ReflectorError> => {
          if (m.memory.synced !== "ThisCycle") return initialPhase(event)
          eventsAfterSync++
          return applyEvent(m, event)
        },
        { discard: true }
      )
    })
    // Until the end bookmark: fail when no event arrived for `watchListTimeout`. A large initial stream
    // that keeps delivering is never cut; a server that stops short (or ignores watch-list) is.
    // Meanwhile, every 10 s, say what it waits for (client-go's initial-events-end bookmark ticker).
    const timeout = m.watchListTimeout
    let nextTick = started + initialEventsTick
    const timer: Effect.Effect<never, ReflectorError> = Effect.suspend(() => {
      if (m.memory.synced === "ThisCycle") return Effect.never
      const now = m.clock.currentTimeMillisUnsafe()
      const idle = now - lastProgress
      if (idle >= timeout) {
        return Effect.fail(
          new ProtocolError({
            reason: "WatchListTimeout",
            message: `no initial-events-end bookmark: no event for ${Duration.format(Duration.millis(idle))}`
          })
        )
      }
      let log: Effect.Effect<void> = Effect.void
      if (now >= nextTick) {
        nextTick = now + initialEventsTick
        log = Effect.logInfo(
          `${m.name}: awaiting the initial-events-end bookmark: ${counter.events} events in ` +
            `${Duration.format(Duration.millis(now - started))}, the last one ${
              idle < 1 ? "just now" : `${Duration.format(Duration.millis(idle))} ago`
            }`
        )
      }
      return log.pipe(
        Effect.andThen(Effect.sleep(Duration.millis(Math.min(timeout - idle, nextTick - now)))),
        Effect.andThen(timer)
      )
    })
    const result = yield* Effect.raceFirst(consumed, timer).pipe(
      Effect.withSpan("Reflector.watchList", { attributes: { reflector: m.name } }),
      Effect.result
    )
    if (m.memory.synced === "ThisCycle") {
      const lasted = m.clock.currentTimeMillisUnsafe() - syncedAt >= shortWatch
      return { synced: true, result, progress: eventsAfterSync > 0 || lasted }
    }
    const elapsed = (yield* Clock.currentTimeMillis) - started
    return {
      synced: false,
      error: Result.isFailure(result)
        ? result.failure
        : new ProtocolError({
          reason: "WatchListEndedEarly",
          message: "watch-list stream ended before the initial-events-end bookmark"
        }),
      connected: elapsed >= shortWatch && counter.events > 0
    }
  })

// -------------------------------------------------------------------------------------------------
// applying watch events (the hot path)
// -------------------------------------------------------------------------------------------------

const consume = <A, E>(
  m: Machine<A, E>,
  stream: Stream.Stream<WatchEvent<A>, ListerWatcherError>,
  counter: { events: number }
) =>
  Stream.runForEachArray(stream, (chunk) => {
    counter.events += countEvents(m, chunk)
    return applyChunk(m, chunk)
  })

/** Counts a chunk's events by type: one counter update per type and chunk. */
const countEvents = <A, E>(m: Machine<A, E>, chunk: Iterable<WatchEvent<A>>): number => {
  let added = 0, modified = 0, deleted = 0, bookmarks = 0
  for (const event of chunk) {
    switch (event.type) {
      case "ADDED":
        added++
        break
      case "MODIFIED":
        modified++
        break
      case "DELETED":
        deleted++
        break
      case "BOOKMARK":
        bookmarks++
    }
  }
  if (added > 0) m.eventCounters.ADDED.updateUnsafe(added, m.metricContext)
  if (modified > 0) m.eventCounters.MODIFIED.updateUnsafe(modified, m.metricContext)
  if (deleted > 0) m.eventCounters.DELETED.updateUnsafe(deleted, m.metricContext)
  if (bookmarks > 0) m.eventCounters.BOOKMARK.updateUnsafe(bookmarks, m.metricContext)
  return added + modified + deleted + bookmarks
}

/**
 * Applies a chunk of watch events: in one synchronous step when the store has synchronous operations (the
 * informer's DeltaFifo does), one Effect per event otherwise. Store errors are reported per event.
 */
const applyChunk = <A, E>(m: Machine<A, E>, chunk: ReadonlyArray<WatchEvent<A>>): Effect.Effect<void> => {
  const unsafe = m.store.unsafe
  if (unsafe === undefined) return Effect.forEach(chunk, (event) => applyEvent(m, event), { discard: true })
  return Effect.suspend(() => {
    const memory = m.memory
    let failures: Array<readonly [ReflectorError, string]> | undefined
    for (const event of chunk) {
      let error: E | undefined
      let operation: StoreError["operation"]
      if (event.type === "BOOKMARK") {
        operation = "bookmark"
        const rv = event.object.metadata.resourceVersion
        if (rv === "") {
          ;(failures ??= []).push([emptyResourceVersion(event), memory.position])
          continue
        }
        memory.position = rv
        error = unsafe.bookmark(rv)
      } else {
        // as `track` does: the event's version is the Reflector's before the store sees the event
        const rv = resourceVersion(event.object)
        if (rv !== undefined && rv !== "") memory.position = rv
        else (failures ??= []).push([emptyResourceVersion(event), memory.position])
        if (event.type === "ADDED") {
          operation = "add"
          error = unsafe.add(event.object)
        } else if (event.type === "MODIFIED") {
          operation = "update"
          error = unsafe.update(event.object)
        } else {
          operation = "delete"
          error = unsafe.delete(event.object)
        }
      }
      // reported after the chunk, with the resourceVersion the Reflector had at this event
      if (error !== undefined) (failures ??= []).push([new StoreError({ operation, cause: error }), memory.position])
    }
    return failures === undefined
      ? Effect.void
      : Effect.forEach(failures, ([failure, rv]) => report(m, failure, "event", rv), { discard: true })
  })
}

/** Applies one watch event to the store and advances the resourceVersion. */
const applyEvent = <A, E>(m: Machine<A, E>, event: WatchEvent<A>): Effect.Effect<void> => {
  switch (event.type) {
    case "ADDED":
      return track(m, event.object, Effect.catch(m.store.add(event.object), m.onStoreAdd))
    case "MODIFIED":
      return track(m, event.object, Effect.catch(m.store.update(event.object), m.onStoreUpdate))
    case "DELETED":
      return track(m, event.object, Effect.catch(m.store.delete(event.object), m.onStoreDelete))
    case "BOOKMARK": {
      const rv = event.object.metadata.resourceVersion
      if (rv === "") return report(m, emptyResourceVersion(event), "event")
      m.memory.position = rv
      return m.store.bookmark === undefined
        ? Effect.void
        : Effect.catch(m.store.bookmark(rv), m.onStoreBookmark)
    }
  }
}

/** Adopts the object's resourceVersion (never `""`: the last good one is kept, and the event reported). */
const track = <A, E>(m: Machine<A, E>, obj: A, effect: Effect.Effect<void>): Effect.Effect<void> => {
  const rv = resourceVersion(obj)
  if (rv !== undefined && rv !== "") {
    m.memory.position = rv
    return effect
  }
  return Effect.andThen(effect, report(m, emptyResourceVersion({ type: "object", object: obj }), "event"))
}

/** The typed error for an event whose resourceVersion is empty: it is never adopted as the position. */
const emptyResourceVersion = (
  event: { readonly type: string; readonly object?: unknown }
): DecodeError => {
  const meta = (event.object as { readonly metadata?: KubeObject["metadata"] } | undefined)?.metadata
  const what = event.type === "BOOKMARK"
    ? "a BOOKMARK"
    : `${event.type === "object" ? "an" : `a ${event.type}`} event for ${
      meta?.namespace === undefined || meta.namespace === "" ? "" : `${meta.namespace}/`
    }${meta?.name ?? "(no name)"}`
  return new DecodeError({
    reason: "MissingResourceVersion",
    message: `${what} has no resourceVersion: the last good one is kept as the watch position`
  })
}

// -------------------------------------------------------------------------------------------------
// reporting
// -------------------------------------------------------------------------------------------------

/** Logs an error once (Gone at info), counts it by phase and reason, and hands it to `onError`. */
const report = <A, E>(
  m: Machine<A, E>,
  error: ReflectorError,
  phase: Phase,
  resourceVersion: string = m.memory.position
): Effect.Effect<void> => {
  const context: ErrorContext = { phase, resourceVersion, reflector: m.name }
  const log = error._tag === "StatusError" && error.reason === "Gone"
    ? Effect.logInfo(`${m.name}: ${phase}: ${error.message}`)
    : Effect.logWarning(`${m.name}: ${phase} failed: ${describeError(error)}: ${error.message}`)
  const detail = error._tag === "DecodeError" && error.detail !== undefined
    ? Effect.logDebug(`${m.name}: ${phase}: ${describeError(error)} in detail:\n${error.detail}`)
    : Effect.void
  const counter = errorCounter(m, phase, error)
  const count = Effect.sync(() => counter.updateUnsafe(1, m.metricContext))
  const handler = m.options.onError === undefined
    ? Effect.void
    : m.options.onError(error, context).pipe(
      Effect.catchCause((cause) => Effect.logError(`${m.name}: watch-error handler failed`, cause))
    )
  return Effect.andThen(Effect.andThen(Effect.andThen(log, detail), count), handler).pipe(
    Effect.annotateLogs({ reflector: m.name, phase, resourceVersion })
  )
}

/** `effect_informers_errors_total{informer, phase, error, reason}`, made once per phase, tag and reason. */
const errorCounter = <A, E>(m: Machine<A, E>, phase: Phase, error: ReflectorError): Metric.Counter<number> => {
  const reason = reasonOf(error)
  const key = `${phase} ${error._tag} ${reason}`
  let counter = m.errorCounters.get(key)
  if (counter === undefined) {
    counter = tagged(InformerMetrics.errors, { informer: m.name, phase, error: error._tag, reason })
    m.errorCounters.set(key, counter)
  }
  return counter
}

/** Counts a relist in `effect_informers_relists_total{informer, cause}`. */
const countRelist = <A, E>(m: Machine<A, E>, cause: RelistCause | "initial"): Effect.Effect<void> => {
  let counter = m.relistCounters.get(cause)
  if (counter === undefined) {
    counter = tagged(InformerMetrics.relists, { informer: m.name, cause })
    m.relistCounters.set(cause, counter)
  }
  const relisted = counter
  return Effect.sync(() => relisted.updateUnsafe(1, m.metricContext))
}

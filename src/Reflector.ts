/**
 * The Reflector keeps a store (normally the informer's DeltaFifo) true to the API server: it lists, then
 * watches from the list's resourceVersion, and recovers from every failure by re-watching, backing off or
 * relisting. It is client-go's `Reflector.ListAndWatch` loop, with the faults client-go documents fixed:
 * every error is observable, stop is immediate wherever the loop is, and `Retry-After` is honoured.
 *
 * The loop, in order:
 * 1. **Sync.** With watch-list (default), a WATCH with `sendInitialEvents=true` streams the current state
 *    into a temporary map until the bookmark annotated `k8s.io/initial-events-end: "true"`, then replaces
 *    the store and keeps using the same stream as the watch. If the server rejects or ignores watch-list,
 *    or the stream stalls (no event for `watchListTimeout`) before the end bookmark, the Reflector falls back to a paged LIST
 *    (pages of 500 following `continue`; an expired continue token falls back to one full list) and
 *    replaces the store with the list's resourceVersion. Watch-list is asked again on a later cycle, once
 *    `watchListRetryDelay` (1 minute, doubling to 30) has passed. As in client-go, a relist at a concrete
 *    resourceVersion carries no `limit` (the API server's watch cache serves it) unless the first any-age
 *    list came back paginated (`listPageSize`). A server that repeats a `continue` token fails the list
 *    with `PaginationError`.
 * 2. **Watch** from the last resourceVersion with bookmarks and a `timeoutSeconds` drawn from
 *    [5, 10] minutes. Every event and bookmark advances the resourceVersion, except an empty one, which is
 *    never adopted (a watch from `""` starts from "now" and would miss a delete): the event is applied, the
 *    last good resourceVersion kept, and a `Decode` error reported; a list or initial-events-end bookmark
 *    without one is not used at all. A normal close (timeout, EOF, a connection reset after events)
 *    re-watches at once without relisting.
 * 3. **Failures** go to the watch-error handler and are logged once, then:
 *    - `Gone` or `ResourceVersionTooLarge` (list or watch): relist at once with a consistent read
 *      (`resourceVersion=""`); a second one in a row without progress backs off first;
 *    - `TooManyRequests` or a connection failure when opening a watch: back off, re-watch (no relist);
 *    - anything else (5xx, decode errors, a watch that closes within 1 s without events, a failed
 *      resync, even a defect — reported as `UnexpectedError`): back off, relist. The loop never dies.
 *
 * Backoff is a `Schedule` (`defaultBackoff`: 800 ms doubling to a 30 s cap, each wait jittered into
 * [base, 2·base), reset after 2 minutes without failures, never shorter than a 429's `Retry-After`, which
 * is cut to `maxRetryAfter`, 30 s by default, so that no server can silence the informer for days). The
 * resync timer is a `Schedule` too. Closing the Reflector's scope interrupts it wherever it is, in a LIST,
 * a backoff wait or mid-stream, and interrupting the stream closes the request.
 *
 * @since 0.1.0
 */
import * as Cause from "effect/Cause"
import * as Chunk from "effect/Chunk"
import * as Clock from "effect/Clock"
import * as Data from "effect/Data"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Metric from "effect/Metric"
import * as Option from "effect/Option"
import * as Random from "effect/Random"
import * as Schedule from "effect/Schedule"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import { deletionHandlingMetaNamespaceKey } from "./Indexer.js"
import type { KubeObject } from "./KubeObject.js"
import { resourceVersion } from "./KubeObject.js"
import type { ListerWatcherError, ListOptions, ListPage, WatchEvent, WatchOptions } from "./ListerWatcher.js"
import { Decode, isInitialEventsEnd, ListerWatcher } from "./ListerWatcher.js"
import * as Metrics from "./Metrics.js"

// -------------------------------------------------------------------------------------------------
// errors
// -------------------------------------------------------------------------------------------------

/**
 * A watch closed within a second without delivering any event: something is wrong (client-go's
 * `VeryShortWatchError`); the Reflector backs off and relists.
 *
 * @since 0.1.0
 * @category errors
 */
export class VeryShortWatchError extends Data.TaggedError("VeryShortWatchError")<{
  readonly message: string
}> {}

/**
 * A watch-list stream did not deliver its initial-events-end bookmark: it ended early (`EndedEarly`) or
 * stalled, with no event for `watchListTimeout` (`Timeout`).
 *
 * @since 0.1.0
 * @category errors
 */
export class WatchListError extends Data.TaggedError("WatchListError")<{
  readonly reason: "Timeout" | "EndedEarly"
  readonly message: string
}> {}

/**
 * A paged LIST the server does not bring to an end: it answered a `continue` token with one it had already
 * sent (`ContinueRepeated`), which would otherwise page forever. The Reflector backs off and relists.
 *
 * @since 0.1.0
 * @category errors
 */
export class PaginationError extends Data.TaggedError("PaginationError")<{
  readonly reason: "ContinueRepeated"
  readonly message: string
  /** Pages received before the repeat. */
  readonly pages: number
}> {}

/**
 * The store refused a write (a key or transform error on an event, a failed replace or resync).
 *
 * @since 0.1.0
 * @category errors
 */
export class StoreError extends Data.TaggedError("StoreError")<{
  readonly operation: "add" | "update" | "delete" | "replace" | "resync" | "bookmark"
  readonly cause: unknown
}> {
  override get message(): string {
    const cause = this.cause
    const detail = typeof cause === "object" && cause !== null && "message" in cause ? cause.message : String(cause)
    return `store ${this.operation} failed: ${String(detail)}`
  }
}

/**
 * A defect (a bug: something threw) in the ListerWatcher, the store or a hook. The Reflector reports it,
 * backs off and relists: it never dies.
 *
 * @since 0.1.0
 * @category errors
 */
export class UnexpectedError extends Data.TaggedError("UnexpectedError")<{
  readonly cause: Cause.Cause<unknown>
}> {
  override get message(): string {
    return `unexpected failure: ${Cause.pretty(this.cause)}`
  }
}

/**
 * @since 0.1.0
 * @category errors
 */
export type ReflectorError =
  | ListerWatcherError
  | VeryShortWatchError
  | WatchListError
  | PaginationError
  | StoreError
  | UnexpectedError

/**
 * Where in the loop an error happened.
 *
 * @since 0.1.0
 * @category models
 */
export type Phase = "list" | "watch-list" | "watch" | "event" | "resync"

/**
 * What the watch-error handler receives with each error.
 *
 * @since 0.1.0
 * @category models
 */
export interface ErrorContext {
  readonly phase: Phase
  /** The resourceVersion the Reflector had when the error happened. */
  readonly resourceVersion: string
  readonly reflector: string
}

// -------------------------------------------------------------------------------------------------
// models
// -------------------------------------------------------------------------------------------------

/**
 * What the Reflector writes to: the informer's DeltaFifo, or any store with these operations
 * (an `Indexer` works too).
 *
 * @since 0.1.0
 * @category models
 */
export interface Store<A, E = unknown> {
  readonly add: (obj: A) => Effect.Effect<void, E>
  readonly update: (obj: A) => Effect.Effect<void, E>
  readonly delete: (obj: A) => Effect.Effect<void, E>
  readonly replace: (objects: ReadonlyArray<A>, resourceVersion: string) => Effect.Effect<void, E>
  readonly resync: Effect.Effect<void, E>
  readonly bookmark?: ((resourceVersion: string) => Effect.Effect<void, E>) | undefined
  /**
   * Synchronous variants returning the error (as `DeltaFifo` has). When present, the Reflector applies a whole
   * chunk of watch events in one synchronous step instead of one Effect per event.
   */
  readonly unsafe?: {
    readonly add: (obj: A) => E | undefined
    readonly update: (obj: A) => E | undefined
    readonly delete: (obj: A) => E | undefined
    readonly bookmark: (resourceVersion: string) => E | undefined
  } | undefined
}

/** How often a watch-list waiting for its initial-events-end bookmark says so (client-go: 10 s). */
const initialEventsTick = 10_000

/**
 * @since 0.1.0
 * @category models
 */
export interface Options<A> {
  /** For logs, spans and metrics. Defaults to the ListerWatcher's description. */
  readonly name?: string | undefined
  /**
   * LIST page size; `0` lists without pagination. Default: client-go's policy (`listPageSize`): pages of 500
   * for consistent (`resourceVersion=""`) and any-age (`"0"`) lists, and no `limit` on a relist at a
   * concrete resourceVersion, so that the API server's watch cache serves it instead of etcd, unless the
   * first any-age list came back paginated (the server pages even from its cache).
   */
  readonly pageSize?: number | undefined
  /**
   * First list: `"consistent"` (`resourceVersion=""`, default: never older than the server's state) or
   * `"any"` (`resourceVersion="0"`, may be served stale from the watch cache).
   */
  readonly initialList?: "consistent" | "any" | undefined
  /**
   * Try watch-list (`sendInitialEvents`) first. Defaults to `true`. A server that rejects it (400, 405,
   * 422) or ignores it (no initial-events-end bookmark within `watchListTimeout`) is asked again on a later
   * list-and-watch cycle, no sooner than `watchListRetryDelay` says (1 minute, doubling to 30 minutes), so
   * that an API server upgraded in place is used without a restart and a server without watch-list costs
   * at most a request per delay.
   */
  readonly watchList?: boolean | undefined
  /**
   * How long the initial events may stall (no event at all) before the initial-events-end bookmark.
   * Defaults to 60 seconds. A stall disables watch-list for this Reflector (the server ignores it).
   */
  readonly watchListTimeout?: Duration.DurationInput | undefined
  /** Resync period; zero or absent disables resync. */
  readonly resyncPeriod?: Duration.DurationInput | undefined
  /** Asked before each resync; resync happens only when it answers `true`. */
  readonly shouldResync?: Effect.Effect<boolean> | undefined
  /** Backoff between failed attempts. Defaults to `defaultBackoff`. */
  readonly backoff?: Schedule.Schedule<unknown, ReflectorError> | undefined
  /**
   * The longest wait a 429's `Retry-After` may impose (longer ones are cut to it). Defaults to 30 seconds,
   * the backoff's cap: a server asking for days would otherwise silence the informer.
   */
  readonly maxRetryAfter?: Duration.DurationInput | undefined
  /** Watch `timeoutSeconds` is drawn from [min, 2·min]; only values above 5 minutes raise it. */
  readonly minWatchTimeout?: Duration.DurationInput | undefined
  /** Receives every error, after it is logged. */
  readonly onError?: ((error: ReflectorError, context: ErrorContext) => Effect.Effect<void>) | undefined
  /**
   * Called for each listed object; may return an equal object the caller already holds (same key, uid
   * and resourceVersion) so that a relist of unchanged objects does not keep two copies alive.
   */
  readonly reuse?: ((obj: A) => A) | undefined
}

/**
 * A running Reflector.
 *
 * @since 0.1.0
 * @category models
 */
export interface Reflector {
  readonly name: string
  /** The resourceVersion of the last list, event or bookmark the Reflector processed. */
  readonly lastSyncResourceVersion: Effect.Effect<string>
}

// -------------------------------------------------------------------------------------------------
// backoff
// -------------------------------------------------------------------------------------------------

/**
 * Resets `self` to its initial state when more than `duration` passed since its previous step, i.e.
 * after that long without failures. (`Schedule.resetAfter` resets on elapsed time since the *first*
 * step, which would reset periodically during a long outage.)
 *
 * @since 0.1.0
 * @category backoff
 */
export const resetAfterIdle =
  (duration: Duration.DurationInput) =>
  <Out, In, R>(self: Schedule.Schedule<Out, In, R>): Schedule.Schedule<Out, In, R> => {
    const millis = Duration.toMillis(duration)
    return Schedule.makeWithState<readonly [unknown, number | undefined], In, Out, R>(
      [self.initial, undefined],
      (now, input, [state, last]) =>
        Effect.map(
          self.step(now, input, last !== undefined && now - last > millis ? self.initial : state),
          ([next, out, decision]) => [[next, now] as const, out, decision] as const
        )
    )
  }

/**
 * The longest `Retry-After` honoured by default: 30 seconds, the cap of `defaultBackoff`.
 *
 * @since 0.1.0
 * @category backoff
 */
export const defaultMaxRetryAfter: Duration.Duration = Duration.seconds(30)

/**
 * The wait a `TooManyRequests` error asks for, cut to `max`; zero for other errors.
 *
 * @since 0.1.0
 * @category backoff
 */
export const retryAfterDelay = (error: ReflectorError, max: Duration.DurationInput): Duration.Duration =>
  error._tag === "TooManyRequests" && Option.isSome(error.retryAfter)
    ? Duration.min(error.retryAfter.value, Duration.decode(max))
    : Duration.zero

/**
 * Never waits less than a `TooManyRequests` error's `Retry-After`, up to `max`.
 *
 * @since 0.1.0
 * @category backoff
 */
export const honourRetryAfterUpTo = (max: Duration.DurationInput) =>
<Out, In, R>(
  self: Schedule.Schedule<Out, In, R>
): Schedule.Schedule<Out, In & ReflectorError, R> =>
  Schedule.intersect(
    self,
    Schedule.identity<ReflectorError>().pipe(Schedule.addDelay((error) => retryAfterDelay(error, max)))
  ).pipe(Schedule.map(([out]) => out))

/**
 * Never waits less than a `TooManyRequests` error's `Retry-After`, up to `defaultMaxRetryAfter` (30 s).
 *
 * @since 0.1.0
 * @category backoff
 */
export const honourRetryAfter: <Out, In, R>(
  self: Schedule.Schedule<Out, In, R>
) => Schedule.Schedule<Out, In & ReflectorError, R> = honourRetryAfterUpTo(defaultMaxRetryAfter)

/** `defaultBackoff` before `Retry-After` is honoured (the Reflector adds it with its own cap). */
const jitteredExponential: Schedule.Schedule<unknown, ReflectorError> = Schedule.exponential("800 millis", 2).pipe(
  Schedule.union(Schedule.spaced("30 seconds")),
  Schedule.jitteredWith({ min: 1, max: 2 }),
  resetAfterIdle("2 minutes")
)

/**
 * client-go's reflector backoff: 800 ms, doubling, capped at 30 s, each wait jittered into
 * [base, 2·base) through the `Random` service, reset after 2 minutes without failures, and never shorter
 * than a 429's `Retry-After` (up to 30 s: `defaultMaxRetryAfter`).
 *
 * @since 0.1.0
 * @category backoff
 */
export const defaultBackoff: Schedule.Schedule<unknown, ReflectorError> = honourRetryAfter(jitteredExponential)

// -------------------------------------------------------------------------------------------------
// policies
// -------------------------------------------------------------------------------------------------

/** client-go's pager page size. */
const defaultPageSize = 500

/**
 * The `limit` of a LIST (`undefined`: no pagination), as client-go's Reflector chooses it: the page size
 * asked for if any (`0`: none); otherwise pages of 500, except for a relist at a concrete resourceVersion
 * when the first any-age list was not paginated: that one has no `limit`, so that the API server's watch
 * cache serves it rather than etcd.
 *
 * @since 0.1.0
 * @category policies
 */
export const listPageSize = (options: {
  readonly pageSize: number | undefined
  readonly resourceVersion: string
  readonly paginatedResult: boolean
}): number | undefined => {
  if (options.pageSize !== undefined) return options.pageSize > 0 ? options.pageSize : undefined
  if (options.paginatedResult) return defaultPageSize
  if (options.resourceVersion !== "" && options.resourceVersion !== "0") return undefined
  return defaultPageSize
}

/**
 * How long after its `rejections`-th rejection (a 400/405/422, or no initial-events-end bookmark in time)
 * watch-list is tried again: 1 minute, doubling, at most 30 minutes.
 *
 * @since 0.1.0
 * @category policies
 */
export const watchListRetryDelay = (rejections: number): Duration.Duration =>
  Duration.minutes(Math.min(30, 2 ** Math.max(0, Math.min(rejections, 16) - 1)))

// -------------------------------------------------------------------------------------------------
// the loop
// -------------------------------------------------------------------------------------------------

/** How a list-and-watch session ended. */
type SessionEnd = {
  readonly immediate: boolean
  readonly error?: ReflectorError | undefined
}

/** The typed error for an event whose resourceVersion is empty: it is never adopted as the position. */
const emptyResourceVersion = (
  event: { readonly type: string; readonly object?: unknown }
): Decode => {
  const meta = (event.object as { readonly metadata?: KubeObject["metadata"] } | undefined)?.metadata
  const what = event.type === "BOOKMARK"
    ? "a BOOKMARK"
    : `${event.type === "object" ? "an" : `a ${event.type}`} event for ${
      meta?.namespace === undefined || meta.namespace === "" ? "" : `${meta.namespace}/`
    }${meta?.name ?? "(no name)"}`
  return new Decode({
    message: `${what} has no resourceVersion: the last good one is kept as the watch position`
  })
}

const minimumWatchTimeout = Duration.minutes(5)
const shortWatch = 1000

class ReflectorImpl<A, E> implements Reflector {
  readonly name: string
  private lastSyncRV = ""
  /** Set by Gone / too-large: the next list or watch-list must be a consistent read. */
  private forceConsistent = false
  /** `false`: never (the option, or a ListerWatcher without it). */
  private readonly watchListWanted: boolean
  /** Rejections of watch-list in a row, and when it may be tried again (`watchListRetryDelay`). */
  private watchListRejections = 0
  private watchListRetryAt = 0
  /** The first any-age list came back paginated (client-go's `paginatedResult`). */
  private paginatedResult = false
  private readonly maxRetryAfter: Duration.Duration
  /** Relists made at once because of Gone, without a watch delivering anything in between. */
  private immediateRelists = 0
  private readonly watchTimeoutMin: number
  /** Completed when the current session's list or watch-list has replaced the store. */
  private sessionSynced: Deferred.Deferred<void> | undefined = undefined
  private clock: Clock.Clock = undefined as never
  private readonly onStoreAdd: (e: E) => Effect.Effect<void>
  private readonly onStoreUpdate: (e: E) => Effect.Effect<void>
  private readonly onStoreDelete: (e: E) => Effect.Effect<void>
  private readonly onStoreBookmark: (e: E) => Effect.Effect<void>
  private readonly eventCounters: {
    readonly ADDED: Metric.Metric.Counter<number>
    readonly MODIFIED: Metric.Metric.Counter<number>
    readonly DELETED: Metric.Metric.Counter<number>
    readonly BOOKMARK: Metric.Metric.Counter<number>
  }
  private readonly listedCounter: Metric.Metric.Counter<number>

  constructor(
    readonly lw: ListerWatcher.Service<A>,
    readonly store: Store<A, E>,
    readonly options: Options<A>
  ) {
    this.name = options.name ?? lw.description ?? "reflector"
    this.watchListWanted = (options.watchList ?? true) && lw.supportsWatchList !== false
    this.maxRetryAfter = Duration.decode(options.maxRetryAfter ?? defaultMaxRetryAfter)
    const min = options.minWatchTimeout === undefined ? minimumWatchTimeout : Duration.decode(options.minWatchTimeout)
    this.watchTimeoutMin = Math.ceil(Duration.toSeconds(Duration.max(min, minimumWatchTimeout)))
    const storeFailure = (operation: StoreError["operation"]) => (cause: E) =>
      this.report(new StoreError({ operation, cause }), "event")
    this.onStoreAdd = storeFailure("add")
    this.onStoreUpdate = storeFailure("update")
    this.onStoreDelete = storeFailure("delete")
    this.onStoreBookmark = storeFailure("bookmark")
    const counter = (type: string) => Metrics.withTags(Metrics.watchEvents, [["informer", this.name], ["type", type]])
    this.eventCounters = {
      ADDED: counter("ADDED"),
      MODIFIED: counter("MODIFIED"),
      DELETED: counter("DELETED"),
      BOOKMARK: counter("BOOKMARK")
    }
    this.listedCounter = Metrics.withTags(Metrics.listedObjects, [["informer", this.name]])
  }

  readonly lastSyncResourceVersion: Effect.Effect<string> = Effect.sync(() => this.lastSyncRV)

  /** Logs an error once, counts it, and hands it to the user's handler. */
  report(error: ReflectorError, phase: Phase, resourceVersion: string = this.lastSyncRV): Effect.Effect<void> {
    const context: ErrorContext = { phase, resourceVersion, reflector: this.name }
    const log = error._tag === "Gone"
      ? Effect.logInfo(`${this.name}: ${phase}: ${error.message}`)
      : Effect.logWarning(`${this.name}: ${phase} failed: ${error._tag}: ${error.message}`)
    const detail = error._tag === "Decode" && error.detail !== undefined
      ? Effect.logDebug(`${this.name}: ${phase}: ${error._tag} in detail:\n${error.detail}`)
      : Effect.void
    const count = Metric.increment(
      Metric.tagged(
        Metric.tagged(Metric.tagged(Metrics.errors, "informer", this.name), "phase", phase),
        "reason",
        error._tag
      )
    )
    const handler = this.options.onError === undefined
      ? Effect.void
      : this.options.onError(error, context).pipe(
        Effect.catchAllCause((cause) => Effect.logError(`${this.name}: watch-error handler failed`, cause))
      )
    return Effect.zipRight(Effect.zipRight(Effect.zipRight(log, detail), count), handler).pipe(
      Effect.annotateLogs({ reflector: this.name, phase, resourceVersion: context.resourceVersion })
    )
  }

  private countRelist(cause: string): Effect.Effect<void> {
    return Metric.increment(Metric.tagged(Metric.tagged(Metrics.relists, "informer", this.name), "cause", cause))
  }

  private watchTimeoutSeconds(): Effect.Effect<number> {
    return Random.nextIntBetween(this.watchTimeoutMin, 2 * this.watchTimeoutMin + 1)
  }

  private markSynced(): void {
    if (this.sessionSynced !== undefined) Deferred.unsafeDone(this.sessionSynced, Exit.void)
  }

  /** Whether this list-and-watch cycle starts with watch-list. */
  private watchListAllowed(): boolean {
    return this.watchListWanted && this.clock.unsafeCurrentTimeMillis() >= this.watchListRetryAt
  }

  /** The server rejected or ignored watch-list: LIST until `watchListRetryDelay` has passed. */
  private rejectWatchList(): void {
    this.watchListRejections++
    this.watchListRetryAt = this.clock.unsafeCurrentTimeMillis() +
      Duration.toMillis(watchListRetryDelay(this.watchListRejections))
  }

  /** The resourceVersion for a (re)list or watch-list. */
  private relistResourceVersion(): string {
    if (this.forceConsistent) return ""
    if (this.lastSyncRV !== "") return this.lastSyncRV
    return this.options.initialList === "any" ? "0" : ""
  }

  /**
   * Collects listed objects, swapping each for the equal object the caller already holds (`reuse`), page
   * by page: a relist of unchanged objects then never keeps two copies of the whole collection alive.
   */
  private collect(into: Array<A>, objects: Iterable<A>): void {
    const reuse = this.options.reuse
    if (reuse === undefined) { for (const obj of objects) into.push(obj) }
    else for (const obj of objects) into.push(reuse(obj))
  }

  // --- LIST ------------------------------------------------------------------------------------

  /**
   * A paged LIST into the store. Gone and too-large versions retry at once with a consistent read. A
   * `continue` token the server already sent fails with `PaginationError` (a cycle would page forever),
   * and a list without a resourceVersion with `Decode` (watching from `""` would lose deletes).
   */
  private list(): Effect.Effect<void, ReflectorError> {
    const self = this
    return Effect.gen(function*() {
      const rv = self.relistResourceVersion()
      const pageSize = listPageSize({
        pageSize: self.options.pageSize,
        resourceVersion: rv,
        paginatedResult: self.paginatedResult
      })
      const items: Array<A> = []
      const first: ListOptions = { resourceVersion: rv, ...(pageSize === undefined ? {} : { limit: pageSize }) }
      const firstPage = yield* self.lw.list(first).pipe(
        Effect.catchTags({
          Gone: (error) => self.retryConsistent(error),
          ResourceVersionTooLarge: (error) => self.retryConsistent(error)
        })
      )
      if (firstPage === undefined) return yield* self.list()
      let page: ListPage<A> = firstPage
      let listRV = page.resourceVersion
      if (rv === "0" && page.continue !== undefined) self.paginatedResult = true
      self.collect(items, page.items)
      let pages = 1
      let tokens: Set<string> | undefined
      while (page.continue !== undefined) {
        const token = page.continue
        if ((tokens ??= new Set()).has(token)) {
          return yield* new PaginationError({
            reason: "ContinueRepeated",
            pages,
            message: `the server repeated a continue token after ${pages} pages (${items.length} items): ` +
              `paging would never end`
          })
        }
        tokens.add(token)
        const next: Option.Option<ListPage<A>> = yield* self.lw.list({ continue: token, limit: pageSize }).pipe(
          Effect.map(Option.some),
          Effect.catchTag("Gone", () => Effect.succeed(Option.none()))
        )
        if (Option.isNone(next)) {
          // The continue token expired: list everything at once at the original version.
          yield* Effect.logInfo(`${self.name}: continue token expired, listing without pagination`)
          items.length = 0
          tokens = undefined
          page = yield* self.lw.list({ resourceVersion: rv })
          listRV = page.resourceVersion
          self.collect(items, page.items)
          break
        }
        page = next.value
        pages++
        self.collect(items, page.items)
      }
      if (listRV === "") {
        return yield* new Decode({
          message: `the list response has no resourceVersion (${items.length} items): a watch from "" would miss ` +
            `changes, so the list is not used`
        })
      }
      self.listedCounter.unsafeUpdate(items.length, [])
      yield* self.store.replace(items, listRV).pipe(
        Effect.mapError((cause) => new StoreError({ operation: "replace", cause }))
      )
      self.lastSyncRV = listRV
      self.forceConsistent = false
      self.markSynced()
    }).pipe(Effect.withSpan("Reflector.list", { attributes: { reflector: this.name } }))
  }

  /** On Gone or too-large: retry the list at once with `resourceVersion=""`, unless it already was. */
  private retryConsistent(error: ReflectorError): Effect.Effect<undefined, ReflectorError> {
    if (this.forceConsistent || this.relistResourceVersion() === "") return Effect.fail(error)
    this.forceConsistent = true
    return Effect.as(Effect.zipRight(this.report(error, "list"), this.countRelist("gone")), undefined)
  }

  // --- WATCH -----------------------------------------------------------------------------------

  /** Applies one watch event to the store and advances the resourceVersion. */
  private applyEvent(event: WatchEvent<A>): Effect.Effect<void> {
    switch (event.type) {
      case "ADDED":
        return this.track(event.object, Effect.catchAll(this.store.add(event.object), this.onStoreAdd))
      case "MODIFIED":
        return this.track(event.object, Effect.catchAll(this.store.update(event.object), this.onStoreUpdate))
      case "DELETED":
        return this.track(event.object, Effect.catchAll(this.store.delete(event.object), this.onStoreDelete))
      case "BOOKMARK": {
        const rv = event.object.metadata.resourceVersion
        if (rv === "") return this.report(emptyResourceVersion(event), "event")
        this.lastSyncRV = rv
        return this.store.bookmark === undefined
          ? Effect.void
          : Effect.catchAll(this.store.bookmark(rv), this.onStoreBookmark)
      }
    }
  }

  /** Adopts the object's resourceVersion (never `""`: the last good one is kept, and the event reported). */
  private track(obj: A, effect: Effect.Effect<void>): Effect.Effect<void> {
    const rv = resourceVersion(obj)
    if (rv !== undefined && rv !== "") {
      this.lastSyncRV = rv
      return effect
    }
    return Effect.zipRight(effect, this.report(emptyResourceVersion({ type: "object", object: obj }), "event"))
  }

  private countEvents(chunk: Iterable<WatchEvent<A>>): number {
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
    if (added > 0) this.eventCounters.ADDED.unsafeUpdate(added, [])
    if (modified > 0) this.eventCounters.MODIFIED.unsafeUpdate(modified, [])
    if (deleted > 0) this.eventCounters.DELETED.unsafeUpdate(deleted, [])
    if (bookmarks > 0) this.eventCounters.BOOKMARK.unsafeUpdate(bookmarks, [])
    return added + modified + deleted + bookmarks
  }

  /** Consumes a watch stream into the store; returns the number of events received. */
  /**
   * Applies a chunk of watch events: in one synchronous step when the store has synchronous operations (the
   * informer's DeltaFifo does), one Effect per event otherwise. Store errors are reported per event.
   */
  private applyChunk(chunk: Chunk.Chunk<WatchEvent<A>>): Effect.Effect<void> {
    const unsafe = this.store.unsafe
    if (unsafe === undefined) return Effect.forEach(chunk, (event) => this.applyEvent(event), { discard: true })
    return Effect.suspend(() => {
      let failures: Array<readonly [ReflectorError, string]> | undefined
      for (const event of chunk) {
        let error: E | undefined
        let operation: StoreError["operation"]
        if (event.type === "BOOKMARK") {
          operation = "bookmark"
          const rv = event.object.metadata.resourceVersion
          if (rv === "") {
            ;(failures ??= []).push([emptyResourceVersion(event), this.lastSyncRV])
            continue
          }
          this.lastSyncRV = rv
          error = unsafe.bookmark(rv)
        } else {
          // as `track` does: the event's version is the Reflector's before the store sees the event
          const rv = resourceVersion(event.object)
          if (rv !== undefined && rv !== "") this.lastSyncRV = rv
          else (failures ??= []).push([emptyResourceVersion(event), this.lastSyncRV])
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
        if (error !== undefined) (failures ??= []).push([new StoreError({ operation, cause: error }), this.lastSyncRV])
      }
      return failures === undefined
        ? Effect.void
        : Effect.forEach(failures, ([failure, rv]) => this.report(failure, "event", rv), { discard: true })
    })
  }

  private consume(stream: Stream.Stream<WatchEvent<A>, ListerWatcherError>, counter: { events: number }) {
    return Stream.runForEachChunk(stream, (chunk) => {
      counter.events += this.countEvents(chunk)
      return this.applyChunk(chunk)
    })
  }

  private watchOptions(timeoutSeconds: number): WatchOptions {
    return { resourceVersion: this.lastSyncRV, allowWatchBookmarks: true, timeoutSeconds }
  }

  /**
   * Watches until a failure needs a relist. Normal closes re-watch at once; 429s and failures to connect
   * back off (on the shared backoff) and re-watch.
   */
  private watchLoop(backoff: (error: ReflectorError) => Effect.Effect<void>): Effect.Effect<SessionEnd> {
    const self = this
    return Effect.gen(function*() {
      while (true) {
        const timeoutSeconds = yield* self.watchTimeoutSeconds()
        const started = yield* Clock.currentTimeMillis
        const counter = { events: 0 }
        const result = yield* self.consume(self.lw.watch(self.watchOptions(timeoutSeconds)), counter).pipe(
          Effect.withSpan("Reflector.watch", {
            attributes: { reflector: self.name, resourceVersion: self.lastSyncRV }
          }),
          Effect.either
        )
        const elapsed = (yield* Clock.currentTimeMillis) - started
        if (counter.events > 0) self.immediateRelists = 0
        const connected = counter.events > 0 || elapsed >= shortWatch
        if (Either.isRight(result)) {
          if (connected) continue
          const error = new VeryShortWatchError({ message: "very short watch: watch closed within 1s without events" })
          yield* self.report(error, "watch")
          yield* self.countRelist("very-short-watch")
          return { immediate: false, error }
        }
        const error = result.left
        yield* self.report(error, "watch")
        switch (error._tag) {
          case "Gone":
          case "ResourceVersionTooLarge":
            self.forceConsistent = true
            yield* self.countRelist("gone")
            return { immediate: self.immediateRelists++ === 0, error }
          case "TooManyRequests":
            yield* backoff(error)
            continue
          case "Transport":
            if (!connected) yield* backoff(error)
            continue
          default:
            yield* self.countRelist("error")
            return { immediate: false, error }
        }
      }
    })
  }

  // --- WATCH-LIST ------------------------------------------------------------------------------

  /**
   * Watch-list: collect the initial events into a temporary map until the end bookmark, replace the
   * store, then keep the same stream as the watch. Returns how the session ended, or `undefined` to fall
   * back to LIST+WATCH in this session.
   */
  private watchList(
    backoff: (error: ReflectorError) => Effect.Effect<void>
  ): Effect.Effect<SessionEnd | "fallback" | "synced-watching"> {
    const self = this
    return Effect.gen(function*() {
      const timeoutSeconds = yield* self.watchTimeoutSeconds()
      const started = self.clock.unsafeCurrentTimeMillis()
      const rv = self.relistResourceVersion()
      let synced = false
      const temp = new Map<string, A>()
      const counter = { events: 0 }
      const stream = self.lw.watch({
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
            if (Either.isLeft(key)) return self.report(new StoreError({ operation: "add", cause: key.left }), "event")
            const reuse = self.options.reuse
            temp.set(key.right, reuse === undefined ? event.object : reuse(event.object))
            return Effect.void
          }
          case "DELETED": {
            const key = deletionHandlingMetaNamespaceKey(event.object)
            if (Either.isLeft(key)) {
              return self.report(new StoreError({ operation: "delete", cause: key.left }), "event")
            }
            temp.delete(key.right)
            return Effect.void
          }
          case "BOOKMARK": {
            if (!isInitialEventsEnd(event.object)) return Effect.void
            const bookmarkRV = event.object.metadata.resourceVersion
            // The state cannot be placed in time: fall back to a LIST rather than watch from "".
            if (bookmarkRV === "") return Effect.fail(emptyResourceVersion(event))
            const objects = Array.from(temp.values())
            temp.clear()
            self.listedCounter.unsafeUpdate(objects.length, [])
            return self.store.replace(objects, bookmarkRV).pipe(
              Effect.mapError((cause): ReflectorError => new StoreError({ operation: "replace", cause })),
              Effect.tap(() =>
                Effect.sync(() => {
                  synced = true
                  self.watchListRejections = 0
                  self.lastSyncRV = bookmarkRV
                  self.forceConsistent = false
                  self.markSynced()
                })
              )
            )
          }
        }
      }
      /** Events after the end bookmark: the watch part of the stream made progress. */
      let eventsAfterSync = 0
      let lastProgress = started
      const consumed = Stream.runForEachChunk(stream, (chunk) => {
        lastProgress = self.clock.unsafeCurrentTimeMillis()
        counter.events += self.countEvents(chunk)
        if (synced) {
          eventsAfterSync += Chunk.size(chunk)
          return self.applyChunk(chunk)
        }
        return Effect.forEach(
          chunk,
          (event): Effect.Effect<void, ReflectorError> => {
            if (!synced) return initialPhase(event)
            eventsAfterSync++
            return self.applyEvent(event)
          },
          { discard: true }
        )
      })
      // Until the end bookmark: fail when no event arrived for `watchListTimeout`. A large initial stream
      // that keeps delivering is never cut; a server that stops short (or ignores watch-list) is.
      // Meanwhile, every 10 s, say what it waits for (client-go's initial-events-end bookmark ticker).
      const timeout = Duration.toMillis(Duration.decode(self.options.watchListTimeout ?? "60 seconds"))
      let nextTick = started + initialEventsTick
      const timer: Effect.Effect<never, ReflectorError> = Effect.suspend(() => {
        if (synced) return Effect.never
        const now = self.clock.unsafeCurrentTimeMillis()
        const idle = now - lastProgress
        if (idle >= timeout) {
          return Effect.fail(
            new WatchListError({
              reason: "Timeout",
              message: `no initial-events-end bookmark: no event for ${Duration.format(Duration.millis(idle))}`
            })
          )
        }
        let log: Effect.Effect<void> = Effect.void
        if (now >= nextTick) {
          nextTick = now + initialEventsTick
          log = Effect.logInfo(
            `${self.name}: awaiting the initial-events-end bookmark: ${counter.events} events in ` +
              `${Duration.format(Duration.millis(now - started))}, the last one ${
                idle < 1 ? "just now" : `${Duration.format(Duration.millis(idle))} ago`
              }`
          )
        }
        return log.pipe(
          Effect.zipRight(Effect.sleep(Duration.millis(Math.min(timeout - idle, nextTick - now)))),
          Effect.zipRight(timer)
        )
      })
      const result = yield* Effect.raceFirst(consumed, timer).pipe(
        Effect.withSpan("Reflector.watchList", { attributes: { reflector: self.name } }),
        Effect.either
      )
      const elapsed = (yield* Clock.currentTimeMillis) - started
      if (synced) {
        // The watch part of the stream ended: classify as a watch would be.
        if (eventsAfterSync > 0) self.immediateRelists = 0
        if (Either.isRight(result)) return "synced-watching" as const
        const error = result.left
        yield* self.report(error, "watch")
        switch (error._tag) {
          case "Gone":
          case "ResourceVersionTooLarge":
            // As in `watchLoop`: a second one in a row without progress backs off (no relist hot loop).
            self.forceConsistent = true
            yield* self.countRelist("gone")
            return { immediate: self.immediateRelists++ === 0, error }
          case "TooManyRequests":
          case "Transport":
            if (error._tag === "TooManyRequests") yield* backoff(error)
            return "synced-watching" as const
          default:
            yield* self.countRelist("error")
            return { immediate: false, error }
        }
      }
      const error: ReflectorError = Either.isLeft(result)
        ? result.left
        : new WatchListError({
          reason: "EndedEarly",
          message: "watch-list stream ended before the initial-events-end bookmark"
        })
      yield* self.report(error, "watch-list")
      switch (error._tag) {
        case "Gone":
        case "ResourceVersionTooLarge":
          if (rv === "") break
          self.forceConsistent = true
          return { immediate: true, error }
        case "TooManyRequests":
          return { immediate: false, error }
        case "Transport":
          return { immediate: false, error }
        case "WatchListError":
          if (error.reason === "EndedEarly") return { immediate: elapsed >= shortWatch && counter.events > 0, error }
          // No end bookmark in time: the server ignores watch-list. Ask again later.
          self.rejectWatchList()
          break
        case "ServerError":
          if (error.code === 400 || error.code === 422 || error.code === 405) self.rejectWatchList()
          break
      }
      yield* self.countRelist("watch-list-fallback")
      return "fallback" as const
    })
  }

  // --- session and main loop -------------------------------------------------------------------

  /** One list(-or-watch-list)-and-watch session. */
  private session(backoff: (error: ReflectorError) => Effect.Effect<void>): Effect.Effect<SessionEnd> {
    const self = this
    const synced = Deferred.unsafeMake<void>(undefined as never)
    this.sessionSynced = synced
    const sync = Effect.gen(function*() {
      if (self.watchListAllowed()) {
        const outcome = yield* self.watchList(backoff)
        if (outcome === "synced-watching") return yield* self.watchLoop(backoff)
        if (outcome !== "fallback") return outcome
      }
      const listed = yield* Effect.either(self.list())
      if (Either.isLeft(listed)) {
        const error = listed.left
        yield* self.report(error, "list")
        if ((error._tag === "Gone" || error._tag === "ResourceVersionTooLarge") && !self.forceConsistent) {
          self.forceConsistent = true
          yield* self.countRelist("gone")
          return { immediate: true, error }
        }
        yield* self.countRelist("error")
        return { immediate: false, error }
      }
      return yield* self.watchLoop(backoff)
    })
    const period = this.options.resyncPeriod === undefined ? Duration.zero : Duration.decode(this.options.resyncPeriod)
    if (!Duration.greaterThan(period, Duration.zero)) return sync
    const shouldResync = this.options.shouldResync ?? Effect.succeed(true)
    // The resync timer starts once this session has synced (its list or watch-list replaced the store).
    const resyncOnce = Effect.gen(function*() {
      if (!(yield* shouldResync)) return
      yield* self.store.resync.pipe(Effect.mapError((cause) => new StoreError({ operation: "resync", cause })))
    })
    const resync = Deferred.await(synced).pipe(
      Effect.zipRight(resyncOnce.pipe(Effect.repeat(Schedule.spaced(period)), Effect.delay(period))),
      Effect.matchEffect({
        onFailure: (error): Effect.Effect<SessionEnd> =>
          Effect.zipRight(
            Effect.zipRight(self.report(error, "resync"), self.countRelist("resync-error")),
            Effect.succeed({ immediate: false, error })
          ),
        onSuccess: () => Effect.never
      })
    )
    return Effect.raceFirst(sync, resync)
  }

  readonly run: Effect.Effect<never> = Effect.gen(this, function*() {
    const self = this
    this.clock = yield* Effect.clock
    const driver = yield* Schedule.driver(
      honourRetryAfterUpTo(this.maxRetryAfter)(this.options.backoff ?? jitteredExponential)
    )
    // A schedule that stops (a custom one with a limit) starts over, with its first wait.
    const backoff = (error: ReflectorError): Effect.Effect<void> =>
      driver.next(error).pipe(
        Effect.catchAll(() => Effect.zipRight(driver.reset, Effect.ignore(driver.next(error))))
      )
    yield* self.countRelist("initial")
    while (true) {
      const end = yield* self.session(backoff).pipe(
        Effect.catchAllCause((cause): Effect.Effect<SessionEnd> => {
          if (Cause.isInterruptedOnly(cause)) return Effect.failCause(cause) as never
          const error = new UnexpectedError({ cause })
          return Effect.as(self.report(error, "watch"), { immediate: false, error })
        })
      )
      if (!end.immediate && end.error !== undefined) yield* backoff(end.error)
    }
  }).pipe(Effect.annotateLogs({ module: "Reflector" }))
}

/**
 * Starts a Reflector in the current scope: it runs until the scope closes.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { FakeListerWatcher, Indexer, Reflector } from "effect-informers"
 *
 * const program = Effect.gen(function*() {
 *   const fake = yield* FakeListerWatcher.make()
 *   yield* fake.add({ metadata: { namespace: "default", name: "web" } })
 *   const store = yield* Indexer.make()
 *   const reflector = yield* Reflector.make(fake, store, { watchList: false })
 *   return reflector
 * }).pipe(Effect.scoped)
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = <A, E>(
  lw: ListerWatcher.Service<A>,
  store: Store<A, E>,
  options: Options<A> = {}
): Effect.Effect<Reflector, never, Scope.Scope> =>
  Effect.gen(function*() {
    const reflector = new ReflectorImpl(lw, store, options)
    yield* Effect.forkScoped(Effect.interruptible(reflector.run))
    return reflector
  })

/**
 * Like `make`, with the ListerWatcher taken from the context.
 *
 * @since 0.1.0
 * @category constructors
 */
export const makeFromContext = <E>(
  store: Store<KubeObject, E>,
  options: Options<KubeObject> = {}
): Effect.Effect<Reflector, never, Scope.Scope | ListerWatcher> =>
  Effect.flatMap(ListerWatcher, (lw) => make(lw, store, options))

/**
 * Runs a Reflector in the current fiber, forever (until interrupted). For callers that manage fibers
 * themselves; `make` is the usual entry point.
 *
 * @since 0.1.0
 * @category constructors
 */
export const run = <A, E>(
  lw: ListerWatcher.Service<A>,
  store: Store<A, E>,
  options: Options<A> = {}
): Effect.Effect<never> => new ReflectorImpl(lw, store, options).run

/**
 * The Reflector keeps a store (normally the informer's DeltaFifo) true to the API server: it lists, then
 * watches from the list's resourceVersion, and recovers from every failure by re-watching, backing off or
 * relisting. It is client-go's `Reflector.ListAndWatch` loop, with the faults client-go documents fixed:
 * every error is observable, stop is immediate wherever the loop is, and `Retry-After` is honoured.
 *
 * The loop is a state machine (as kube-rs's `watcher` is): one step at a time from one phase to the next,
 * each failure decided by one pure policy, `recovery`. In order:
 * 1. **Relisting.** A list-and-watch cycle begins. With watch-list (default) it goes on with
 *    **WatchListing**, otherwise, or while watch-list is rejected, with **Listing**.
 * 2. **WatchListing.** A WATCH with `sendInitialEvents=true` streams the current state into a temporary map
 *    until the bookmark annotated `k8s.io/initial-events-end: "true"`, then replaces the store and keeps
 *    using the same stream as the watch. Until then it says every 10 s what it waits for. If the server
 *    rejects watch-list (400, 405, 422) or ignores it (no event for `watchListTimeout` before the end
 *    bookmark), it is not asked again for a while (1 minute after the first rejection, doubling to 30);
 *    that failure and most others fall back to **Listing** in the same cycle.
 * 3. **Listing.** A paged LIST (pages of 500 following `continue`; an expired continue token falls back to
 *    one full list) replaces the store with the list's resourceVersion. As in client-go, a relist at a
 *    concrete resourceVersion carries no `limit` (the API server's watch cache serves it) unless the first
 *    any-age list came back paginated. A server that repeats a `continue` token fails the
 *    list with a `ProtocolError` (`ContinueRepeated`). Once the store is replaced, the resync timer (if any) starts; it stops
 *    when the next cycle begins.
 * 4. **Watching** from the last resourceVersion with bookmarks and a `timeoutSeconds` drawn from
 *    [5, 10] minutes. Every event and bookmark advances the resourceVersion, except an empty one, which is
 *    never adopted (a watch from `""` starts from "now" and would miss a delete): the event is applied, the
 *    last good resourceVersion kept, and a `DecodeError` reported; a list or initial-events-end bookmark
 *    without one is not used at all. A normal close (timeout, EOF, a connection reset after events)
 *    re-watches at once without relisting.
 * 5. **Failures** go to the watch-error handler and are logged once, then `recovery` decides:
 *    - a `StatusError` `Gone` or `ResourceVersionTooLarge` (list or watch): relist at once with a consistent read
 *      (`resourceVersion=""`); a second one in a row without progress (no watch event, and no watch
 *      that stayed open for a second, since the first) backs off first;
 *    - `TooManyRequests` or a `TransportError` when opening a watch: back off, re-watch (no relist);
 *    - anything else (5xx, decode errors, a watch that closes within 1 s without events, a failed
 *      resync, even a defect — reported as `UnexpectedError`): back off, relist;
 *    - a `NotFound` on a LIST: stop (**Stopped**, below). No other error ends the loop.
 * 6. **Stopped.** A LIST answered `404 NotFound`: the API server no longer serves the resource (its CRD was
 *    deleted; a LIST in a namespace that does not exist answers 200 with no items, so a 404 on a LIST is
 *    the resource itself). The loop stops, logs it once as a warning and says so (`awaitStop`, `status`),
 *    instead of backing off for ever as client-go does; the informer over it stops with it
 *    (`SharedInformer`'s `awaitStop` answers `"ResourceGone"`) and a factory forgets it, so that it can be
 *    asked for again once the resource is back, as controller-runtime's cache does. A WATCH answered 404
 *    (the CRD deleted mid-watch) relists as before, and that LIST decides. `stopOnResourceGone: false`
 *    keeps client-go's behaviour: back off and relist.
 * 7. **BackingOff.** Backoff is a `Schedule` (`defaultBackoff`: 800 ms doubling to a 30 s cap, each wait
 *    jittered into [base, 2·base), reset after 2 minutes without failures, never shorter than a 429's
 *    `Retry-After`, which is cut to `maxRetryAfter`, 30 s by default, so that no server can silence the
 *    informer for days).
 *
 * Closing the Reflector's scope interrupts it wherever it is, in a LIST, a backoff wait or mid-stream, and
 * interrupting the stream closes the request. The machinery is in `internal/reflector.ts`.
 *
 * @since 0.1.0
 */
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as Schedule from "effect/Schedule"
import type * as Scope from "effect/Scope"
import type { ApiError } from "./ApiError.js"
import * as internal from "./internal/informer/reflector.js"
import * as errors from "./internal/informer/reflectorErrors.js"
import * as policy from "./internal/informer/reflectorPolicy.js"
import type { KubeObject } from "./KubeObject.js"
import { ListerWatcher } from "./ListerWatcher.js"

// -------------------------------------------------------------------------------------------------
// errors
// -------------------------------------------------------------------------------------------------

/**
 * The server did not keep to the list-and-watch protocol; `reason` says how:
 * - `VeryShortWatch`: a watch closed within a second without delivering any event (client-go's
 *   `VeryShortWatchError`); the Reflector backs off and relists;
 * - `WatchListTimeout`, `WatchListEndedEarly`: a watch-list stream did not deliver its initial-events-end
 *   bookmark: it stalled, with no event for `watchListTimeout`, or it ended early;
 * - `ContinueRepeated`: a paged LIST the server does not bring to an end: it answered a `continue` token
 *   with one it had already sent, which would otherwise page forever; `pages` says how many pages came
 *   before the repeat. The Reflector backs off and relists.
 *
 * @since 0.2.0
 * @category errors
 */
export const ProtocolError: typeof errors.ProtocolError = errors.ProtocolError

/**
 * @since 0.2.0
 * @category errors
 */
export type ProtocolError = errors.ProtocolError

/**
 * The store refused a write (a key or transform error on an event, a failed replace or resync); `operation`
 * says which.
 *
 * @since 0.1.0
 * @category errors
 */
export const StoreError: typeof errors.StoreError = errors.StoreError

/**
 * @since 0.1.0
 * @category errors
 */
export type StoreError = errors.StoreError

/**
 * A defect (a bug: something threw) in the ListerWatcher, the store or a hook. The Reflector reports it,
 * backs off and relists: it never dies.
 *
 * @since 0.1.0
 * @category errors
 */
export const UnexpectedError: typeof errors.UnexpectedError = errors.UnexpectedError

/**
 * @since 0.1.0
 * @category errors
 */
export type UnexpectedError = errors.UnexpectedError

/**
 * @since 0.1.0
 * @category errors
 */
export type ReflectorError =
  | ApiError
  | ProtocolError
  | StoreError
  | UnexpectedError

/**
 * Where in the loop an error happened: a LIST, a watch-list before its end bookmark, a watch (or a
 * watch-list after its end bookmark), one event (the stream goes on), or a resync.
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
 * (an `Indexer.Service` you built works too, as does a `DeltaFifo.Service`).
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
   * Synchronous variants returning the error (as the informer's own DeltaFifo has; a store of yours may offer
   * them too). When present, the Reflector applies a whole chunk of watch events in one synchronous step
   * instead of one Effect per event.
   */
  readonly unsafe?: {
    readonly add: (obj: A) => E | undefined
    readonly update: (obj: A) => E | undefined
    readonly delete: (obj: A) => E | undefined
    readonly bookmark: (resourceVersion: string) => E | undefined
  } | undefined
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
  /**
   * Where the loop is now (read-only; for status displays and probes).
   *
   * @since 0.2.0
   */
  readonly status: Effect.Effect<Status>
  /**
   * Waits until the loop stops by itself and says why (at once once it has). It runs until its scope
   * closes but for one case: a LIST answered `404 NotFound` (`"ResourceGone"`; not with
   * `stopOnResourceGone: false`). Closing the scope does not complete it.
   *
   * @since 0.2.0
   */
  readonly awaitStop: Effect.Effect<StopReason>
}

/**
 * Why a Reflector stopped by itself: `"ResourceGone"`, a LIST answered `404 NotFound`, so the API server no
 * longer serves the resource (its CustomResourceDefinition was deleted).
 *
 * @since 0.2.0
 * @category models
 */
export type StopReason = "ResourceGone"

/**
 * Where a Reflector's loop is:
 * - `Syncing`: the first LIST (or watch-list, until its initial-events-end bookmark) has not completed;
 * - `Relisting`: a later LIST or watch-list (after a Gone, an error, a watch-list fallback);
 * - `Watching`: a WATCH is open or being opened (a watch-list after its end bookmark too);
 * - `BackingOff`: waiting after `error` (the tag of the error), until `until` (Clock milliseconds, the
 *   backoff's wait and any `Retry-After`), then watching or relisting again;
 * - `Stopped`: the loop stopped by itself for `reason` (see `awaitStop`) and does nothing any more.
 *
 * @since 0.2.0
 * @category models
 */
export type Status =
  | { readonly _tag: "Syncing" }
  | { readonly _tag: "Relisting" }
  | { readonly _tag: "Watching" }
  | { readonly _tag: "BackingOff"; readonly until: number; readonly error: ReflectorError["_tag"] }
  | { readonly _tag: "Stopped"; readonly reason: StopReason }

/**
 * The `cause` tag a relist is counted under in `Metrics.relists` (besides `initial`, the first sync).
 *
 * @since 0.1.0
 * @category models
 */
export type RelistCause = "gone" | "error" | "very-short-watch" | "watch-list-fallback" | "resync-error"

/**
 * What the loop does after a failure (`recovery` decides):
 * - `Rewatch`: watch again from the last resourceVersion, without relisting, after the backoff if `backoff`;
 * - `List`: LIST now, in this cycle: at `resourceVersion=""` if `consistent` (a Gone on a list), at the
 *   cycle's resourceVersion otherwise (a watch-list that failed before its end bookmark); with
 *   `rejectWatchList`, watch-list is not asked for again for a while (1 minute, doubling to 30);
 * - `Relist`: a new list-and-watch cycle, after the backoff if `backoff`, reading at `resourceVersion=""`
 *   if `consistent` (and, if the failed phase read so already, until a sync succeeds);
 * - `Stop`: the loop ends for `reason` (`ResourceGone`: a LIST answered 404 NotFound); with
 *   `stopOnResourceGone: false` the loop backs off and relists instead (counted as `error`).
 *
 * `cause` is the relist's tag in `Metrics.relists` (`undefined`: not counted).
 *
 * @since 0.1.0
 * @category models
 */
export type Action =
  | { readonly _tag: "Rewatch"; readonly backoff: boolean }
  | {
    readonly _tag: "List"
    readonly consistent: boolean
    readonly rejectWatchList: boolean
    readonly cause: RelistCause
  }
  | {
    readonly _tag: "Relist"
    readonly backoff: boolean
    readonly consistent: boolean
    readonly cause: RelistCause | undefined
  }
  | { readonly _tag: "Stop"; readonly reason: StopReason }

/**
 * What `recovery` knows of the failed phase besides the error. Each field matters in one phase only and is
 * `false` elsewhere.
 *
 * @since 0.1.0
 * @category models
 */
export interface RecoveryContext {
  /** watch-list: the request read at `resourceVersion=""` (a Gone then cannot be cured by reading at `""`). */
  readonly consistent: boolean
  /** list: this list is the consistent read an earlier Gone asked for. */
  readonly afterGone: boolean
  /**
   * watch: the watch was established (it delivered an event or stayed open a second; a watch-list after its
   * end bookmark always was). watch-list: the stream delivered events and lasted a second or more.
   */
  readonly connected: boolean
  /** watch: an earlier Gone on a watch relisted, and no watch has delivered an event since. */
  readonly goneWithoutProgress: boolean
}

// -------------------------------------------------------------------------------------------------
// options
// -------------------------------------------------------------------------------------------------

/**
 * @since 0.1.0
 * @category models
 */
export interface Options<A> {
  /** For logs, spans and metrics. Defaults to the ListerWatcher's description. */
  readonly name?: string | undefined
  /**
   * LIST page size; `0` lists without pagination. Default: client-go's policy: pages of 500
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
   * list-and-watch cycle, no sooner than 1 minute after the first rejection (doubling to 30 minutes), so
   * that an API server upgraded in place is used without a restart and a server without watch-list costs
   * at most a request per delay.
   */
  readonly watchList?: boolean | undefined
  /**
   * How long the initial events may stall (no event at all) before the initial-events-end bookmark.
   * Defaults to 60 seconds. A stall counts as a rejection of watch-list (the server ignores it): the cycle
   * falls back to LIST and watch-list waits as after a rejection.
   */
  readonly watchListTimeout?: Duration.Input | undefined
  /** Resync period; zero or absent disables resync. */
  readonly resyncPeriod?: Duration.Input | undefined
  /** Asked before each resync; resync happens only when it answers `true`. */
  readonly shouldResync?: Effect.Effect<boolean> | undefined
  /** Backoff between failed attempts. Defaults to `defaultBackoff`. */
  readonly backoff?: Schedule.Schedule<unknown, ReflectorError> | undefined
  /**
   * The longest wait a 429's `Retry-After` may impose (longer ones are cut to it). Defaults to 30 seconds,
   * the backoff's cap: a server asking for days would otherwise silence the informer.
   */
  readonly maxRetryAfter?: Duration.Input | undefined
  /** Watch `timeoutSeconds` is drawn from [min, 2·min]; only values above 5 minutes raise it. */
  readonly minWatchTimeout?: Duration.Input | undefined
  /** Receives every error, after it is logged. */
  readonly onError?: ((error: ReflectorError, context: ErrorContext) => Effect.Effect<void>) | undefined
  /**
   * Called for each listed object; may return an equal object the caller already holds (same key, uid
   * and resourceVersion) so that a relist of unchanged objects does not keep two copies alive.
   */
  readonly reuse?: ((obj: A) => A) | undefined
  /**
   * Stop when a LIST answers `404 NotFound` (the resource is no longer served: its CRD was deleted), with a
   * warning, instead of backing off and relisting for ever. Defaults to `true` (controller-runtime's cache
   * stops such an informer too); `false` keeps client-go's behaviour.
   *
   * @since 0.2.0
   */
  readonly stopOnResourceGone?: boolean | undefined
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
export const resetAfterIdle: (
  duration: Duration.Input
) => <Out, In, R>(self: Schedule.Schedule<Out, In, R>) => Schedule.Schedule<Out, In, R> = policy.resetAfterIdle

/**
 * The longest `Retry-After` honoured by default: 30 seconds, the cap of `defaultBackoff`.
 *
 * @since 0.1.0
 * @category backoff
 */
export const defaultMaxRetryAfter: Duration.Duration = policy.defaultMaxRetryAfter

/**
 * Never waits less than a `TooManyRequests` error's `Retry-After`, up to `max`.
 *
 * @since 0.1.0
 * @category backoff
 */
export const honourRetryAfterUpTo: (
  max: Duration.Input
) => <Out, In, R>(self: Schedule.Schedule<Out, In, R>) => Schedule.Schedule<Out, In & ReflectorError, R> =
  policy.honourRetryAfterUpTo

/**
 * Never waits less than a `TooManyRequests` error's `Retry-After`, up to `defaultMaxRetryAfter` (30 s).
 *
 * @since 0.1.0
 * @category backoff
 */
export const honourRetryAfter: <Out, In, R>(
  self: Schedule.Schedule<Out, In, R>
) => Schedule.Schedule<Out, In & ReflectorError, R> = policy.honourRetryAfter

/**
 * client-go's reflector backoff: 800 ms, doubling, capped at 30 s, each wait jittered into
 * [base, 2·base) through the `Random` service, reset after 2 minutes without failures, and never shorter
 * than a 429's `Retry-After` (up to 30 s: `defaultMaxRetryAfter`).
 *
 * @since 0.1.0
 * @category backoff
 */
export const defaultBackoff: Schedule.Schedule<unknown, ReflectorError> = policy.defaultBackoff

// -------------------------------------------------------------------------------------------------
// policies
// -------------------------------------------------------------------------------------------------

/**
 * What the loop does after `error` in `phase`: the one place where failures are decided. Every failure is
 * reported (logged once, counted, handed to `onError`) before its action is taken; errors of phase
 * `event` never end a stream and are not decided here.
 *
 * | phase | error | context | action |
 * |---|---|---|---|
 * | any | `UnexpectedError` (a defect) | | back off, relist (not counted) |
 * | list | `Gone`, `ResourceVersionTooLarge` | not `afterGone` | LIST again at once at `""` (`gone`) |
 * | list | `Gone`, `ResourceVersionTooLarge` | `afterGone` | back off, relist at `""` (`error`) |
 * | list | `NotFound` | | stop: `ResourceGone` (with `stopOnResourceGone: false`: back off, relist (`error`)) |
 * | list | anything else (`TooManyRequests`, `TransportError`, `DecodeError`, `ContinueRepeated`, `StoreError`...) | | back off, relist (`error`) |
 * | watch-list | `Gone`, `ResourceVersionTooLarge` | not `consistent` | relist at once at `""` (not counted) |
 * | watch-list | `Gone`, `ResourceVersionTooLarge` | `consistent` | LIST now (`watch-list-fallback`) |
 * | watch-list | `TooManyRequests`, `TransportError` | | back off, relist (watch-list again; not counted) |
 * | watch-list | `WatchListEndedEarly` | `connected` | relist at once (not counted) |
 * | watch-list | `WatchListEndedEarly` | not `connected` | back off, relist (not counted) |
 * | watch-list | `WatchListTimeout`; a `StatusError` of code 400, 405, 422 | | reject watch-list, LIST now (`watch-list-fallback`) |
 * | watch-list | anything else (5xx, `DecodeError`, `StoreError`...) | | LIST now (`watch-list-fallback`) |
 * | watch | `Gone`, `ResourceVersionTooLarge` | not `goneWithoutProgress` | relist at once at `""` (`gone`) |
 * | watch | `Gone`, `ResourceVersionTooLarge` | `goneWithoutProgress` | back off, relist at `""` (`gone`) |
 * | watch | `TooManyRequests` | | back off, re-watch |
 * | watch | `TransportError` | `connected` | re-watch at once |
 * | watch | `TransportError` | not `connected` | back off, re-watch |
 * | watch | `VeryShortWatch` | | back off, relist (`very-short-watch`) |
 * | watch | anything else (5xx, `Forbidden`, `DecodeError`...) | | back off, relist (`error`) |
 * | resync | any | | back off, relist (`resync-error`) |
 *
 * @example
 * ```ts
 * import { ApiError, Reflector, Wire } from "effect-informers"
 *
 * const context = { consistent: false, afterGone: false, connected: true, goneWithoutProgress: false }
 * const gone = ApiError.fromStatus(Wire.failureStatus(410, "Expired", "too old resource version"))
 * const action = Reflector.recovery(gone, "watch", context)
 * console.log(action) // { _tag: "Relist", backoff: false, consistent: true, cause: "gone" }
 * ```
 *
 * @since 0.1.0
 * @category policies
 */
export const recovery: (error: ReflectorError, phase: Exclude<Phase, "event">, context: RecoveryContext) => Action =
  policy.recovery

// -------------------------------------------------------------------------------------------------
// constructors
// -------------------------------------------------------------------------------------------------

/**
 * Starts a Reflector in the current scope: it runs until the scope closes.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Indexer, Reflector } from "effect-informers"
 * import { FakeListerWatcher } from "effect-informers/testing"
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
export const make: <A, E>(
  lw: ListerWatcher.Service<A>,
  store: Store<A, E>,
  options?: Options<A>
) => Effect.Effect<Reflector, never, Scope.Scope> = internal.make

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
  Effect.flatMap(Effect.service(ListerWatcher), (lw) => make(lw, store, options))

/**
 * Runs a Reflector in the current fiber until interrupted, or until it stops by itself (a LIST answered
 * 404 NotFound: see `Reflector.awaitStop`), which it returns. For callers that manage fibers themselves;
 * `make` is the usual entry point.
 *
 * @since 0.1.0
 * @category constructors
 */
export const run: <A, E>(
  lw: ListerWatcher.Service<A>,
  store: Store<A, E>,
  options?: Options<A>
) => Effect.Effect<StopReason> = internal.run

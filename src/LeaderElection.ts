/**
 * Leader election over a `coordination.k8s.io/v1` Lease, as client-go's `tools/leaderelection`: one
 * replica at a time leads, and only the leader's work runs.
 *
 * - Timings are client-go's: a lease of `leaseDuration` (15 s), renewed every `retryPeriod` (2 s) by the
 *   leader, which gives up after `renewDeadline` (10 s) without a successful renewal; candidates try every
 *   `retryPeriod · (1 + random · jitterFactor)` (2 to 4.4 s). They are validated as client-go validates them.
 * - Rules are client-go's: a candidate takes only a released Lease (no holder) or one that expired, judged by
 *   its own Clock: the time at which it saw the record last change, plus the record's `leaseDurationSeconds`.
 *   Timestamps inside the record are never compared with local time. Every write carries the resourceVersion
 *   read (optimistic concurrency): of two candidates, one wins, the other gets a conflict. `leaseTransitions`
 *   counts changes of holder; `acquireTime` and `renewTime` are MicroTime strings (RFC 3339, microseconds).
 * - Leading is a scope: `whileLeading(work)` runs `work` each time this replica becomes leader, in a scope
 *   that is closed (the work interrupted, its finalizers run) as soon as renewals have failed for
 *   `renewDeadline`, or a renewal finds another holder. Since `renewDeadline < leaseDuration`, that is
 *   before any other replica may take the lease. The replica then campaigns again: losing the lease never
 *   ends the process.
 * - Closing the service's scope stops the work, then releases the Lease (holder cleared, as client-go's
 *   `ReleaseOnCancel` writes it): a graceful shutdown hands over at the next attempt of a candidate. A replica
 *   killed without releasing is replaced once its lease expired for the others (`leaseDuration` after they
 *   saw its last renewal).
 * - Observable: `state` and `changes` (the state machine: `Acquiring`, `Following`, `Leading`,
 *   `SteppingDown`, `Releasing`, `Stopped`), `holder`, `isLeader`, and metrics tagged with the election's
 *   `name`: `leader_election_master_status` and `leader_election_slowpath_total` (client-go's names),
 *   `effect_informers_leader_election_transitions_total`, `..._renew_failures_total`, `..._step_downs_total`
 *   (`Metrics.isLeader`, `slowPaths`, `leaderTransitions`, `renewFailures`, `stepDowns`; docs/METRICS.md).
 * - Time is read from the `Clock` and the jitter from `Random` only, so `TestClock` drives every timing.
 *   The Lease is reached through a `LeaseLock`: `clientLock` over the `Client`, or `makeMemoryLeases`
 *   (in memory, with partitions, latency and errors, for tests).
 *
 * - Fenced by the local clock: the work of a term runs in a `Term`, valid while the last successful renewal
 *   was sent less than `renewDeadline` ago by the monotonic clock and the Lease was not seen to change
 *   hands. The `Client` sends no write of a stale term (`TermError`), a Controller's workers take no key,
 *   and the elector steps down at once. While leading, the elector watches its Lease (the lock's `watch`):
 *   another holder, or a deletion, ends the term at once.
 * - A Lease spec the elector cannot use as is (a string or negative duration, a holder that is not a
 *   string) is read leniently (`recordFromSpec`) and logged once, with what the elector does.
 *
 * What is guaranteed, and what is not, is in docs/REPLICAS.md: a write already on the wire when leadership
 * ends can land after the next leader started; guard writes with resourceVersion preconditions.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Client, LeaderElection } from "effect-informers"
 *
 * const reconcileForever = Effect.gen(function*() {
 *   yield* Effect.log("leading: reconciling")
 *   yield* Effect.addFinalizer(() => Effect.log("no longer leading"))
 *   return yield* Effect.never
 * })
 *
 * const main = Effect.gen(function*() {
 *   const election = yield* LeaderElection.LeaderElection
 *   // runs reconcileForever each time this replica leads, interrupted when it stops leading
 *   return yield* election.whileLeading(reconcileForever)
 * }).pipe(
 *   Effect.provide(LeaderElection.layerClient({
 *     namespace: "default",
 *     leaseName: "my-controller",
 *     identity: "my-controller-7d9f-x2x4z"
 *   })),
 *   Effect.provide(Client.layerLive({ userAgent: "my-controller/1.0" }))
 * )
 * ```
 *
 * @since 0.2.0
 */
import * as Context from "effect/Context"
import type * as Data from "effect/Data"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Option from "effect/Option"
import type * as Result from "effect/Result"
import type * as Scope from "effect/Scope"
import type * as Stream from "effect/Stream"
import type { DeriveOptions } from "./Client.js"
import { Client } from "./Client.js"
import * as internal from "./internal/coordination/leaderElection.js"
import * as policy from "./internal/coordination/leaderElectionPolicy.js"
import * as locks from "./internal/coordination/leaseLock.js"

// -------------------------------------------------------------------------------------------------
// the record
// -------------------------------------------------------------------------------------------------

/**
 * What a Lease's spec says about the election, as client-go's `LeaderElectionRecord`: the holder (`""`
 * when none), the duration it advertises, when it acquired and last renewed (MicroTime strings, never
 * compared with local time), the count of holder changes, and the coordinated-election fields, kept as
 * they are.
 *
 * @since 0.2.0
 * @category models
 */
export interface LeaderElectionRecord {
  readonly holderIdentity: string
  readonly leaseDurationSeconds: number
  readonly acquireTime?: string | undefined
  readonly renewTime?: string | undefined
  readonly leaseTransitions: number
  readonly strategy?: string | undefined
  readonly preferredHolder?: string | undefined
}

/**
 * A record and the resourceVersion of the Lease it was read from or written to: the precondition of the
 * next write; `problems`, what the Lease's spec held that could not be used as is (`specProblems`).
 *
 * @since 0.2.0
 * @category models
 */
export interface VersionedRecord {
  readonly record: LeaderElectionRecord
  readonly resourceVersion: string
  /** What the Lease's spec had that could not be used as is, and how it was read (`specProblems`). */
  readonly problems?: ReadonlyArray<string> | undefined
}

/**
 * A Lease's `spec` as read from the wire.
 *
 * @since 0.2.0
 * @category models
 */
export interface LeaseSpec {
  readonly holderIdentity?: string | undefined
  readonly leaseDurationSeconds?: number | undefined
  readonly acquireTime?: string | undefined
  readonly renewTime?: string | undefined
  readonly leaseTransitions?: number | undefined
  readonly strategy?: string | undefined
  readonly preferredHolder?: string | undefined
}

/**
 * A Lease's `spec` as written: every field of the record, `strategy` and `preferredHolder` only when set.
 *
 * @since 0.2.0
 * @category models
 */
export interface WrittenLeaseSpec {
  readonly holderIdentity: string
  readonly leaseDurationSeconds: number
  readonly leaseTransitions: number
  readonly acquireTime?: string
  readonly renewTime?: string
  readonly strategy?: string
  readonly preferredHolder?: string
}

/**
 * The record of a Lease's spec (absent fields: no holder, duration 0, no transitions), whatever the spec
 * holds: a holder that is not a string is read as its JSON text; a held Lease's duration that is not a
 * positive int32 (missing, negative, a string) as 15 s (`fallbackLeaseDurationSeconds`), a free one's as 0
 * unless it is a whole number; transitions that are not a non-negative int32 as 0; times, strategy and
 * preferred holder that are not strings as absent. For a `LeaseLock` of your own.
 *
 * @since 0.2.0
 * @category records
 */
export const recordFromSpec: (spec: LeaseSpec | undefined) => LeaderElectionRecord = policy.recordFromSpec

/**
 * What a Lease's spec holds that `recordFromSpec` cannot use as is, each with how it is read (empty for a
 * spec kube-apiserver accepts, but a held Lease without a duration).
 *
 * @example
 * ```ts
 * import { LeaderElection } from "effect-informers"
 *
 * console.log(LeaderElection.specProblems({ holderIdentity: "a", leaseDurationSeconds: -1 }))
 * // [ "leaseDurationSeconds -1 is not a positive whole number of seconds: read as 15" ]
 * ```
 *
 * @since 0.2.0
 * @category records
 */
export const specProblems: (spec: LeaseSpec | undefined) => ReadonlyArray<string> = policy.specProblems

/**
 * What `recordFromSpec` reads a held Lease's unusable duration as: 15 s, client-go's default lease duration.
 *
 * @since 0.2.0
 * @category records
 */
export const fallbackLeaseDurationSeconds: number = policy.fallbackLeaseDurationSeconds

/**
 * A Lease's spec and resourceVersion as a `VersionedRecord`: `recordFromSpec`, and its `specProblems` when
 * it has any. For a `LeaseLock` of your own: what its `get` returns.
 *
 * @since 0.2.0
 * @category records
 */
export const versionedFromSpec: (spec: LeaseSpec | undefined, resourceVersion: string) => VersionedRecord =
  policy.versionedFromSpec

/**
 * The spec of a record: `recordFromSpec(recordToSpec(r))` is `r`, and `recordToSpec(recordFromSpec(s))`
 * is `s` for a spec with every field set. For a `LeaseLock` of your own: what its `create` and `update`
 * write.
 *
 * @since 0.2.0
 * @category records
 */
export const recordToSpec: (record: LeaderElectionRecord) => WrittenLeaseSpec = policy.recordToSpec

// -------------------------------------------------------------------------------------------------
// configuration
// -------------------------------------------------------------------------------------------------

/**
 * client-go's `LeaseDuration` of core components: 15 seconds.
 *
 * @since 0.2.0
 * @category constants
 */
export const defaultLeaseDuration: Duration.Duration = policy.defaultLeaseDuration

/**
 * client-go's `RenewDeadline` of core components: 10 seconds.
 *
 * @since 0.2.0
 * @category constants
 */
export const defaultRenewDeadline: Duration.Duration = policy.defaultRenewDeadline

/**
 * client-go's `RetryPeriod` of core components: 2 seconds.
 *
 * @since 0.2.0
 * @category constants
 */
export const defaultRetryPeriod: Duration.Duration = policy.defaultRetryPeriod

/**
 * client-go's `JitterFactor`: 1.2.
 *
 * @since 0.2.0
 * @category constants
 */
export const defaultJitterFactor: number = policy.defaultJitterFactor

/**
 * Options that fail validation (of an elector's, or of a sharding member's: `Sharding.validate`);
 * `message` is client-go's where client-go checks the same thing.
 *
 * @since 0.2.0
 * @category errors
 */
export const InvalidConfigError: typeof policy.InvalidConfigError = policy.InvalidConfigError

/**
 * @since 0.2.0
 * @category errors
 */
export type InvalidConfigError = policy.InvalidConfigError

/**
 * The timings, each defaulting to client-go's:
 * - `leaseDuration`: how long candidates wait, from the time they saw the record last change, before
 *   taking the lease; written in the Lease as `leaseDurationSeconds`, so a whole number of seconds;
 * - `renewDeadline`: how long the leader keeps trying to renew before it stops its work and steps down;
 * - `retryPeriod`: the pause between two attempts (of the leader to renew, of candidates to acquire);
 * - `jitterFactor`: candidates wait `retryPeriod · (1 + random · jitterFactor)`.
 *
 * @since 0.2.0
 * @category models
 */
export interface TimingOptions {
  readonly leaseDuration?: Duration.Input | undefined
  readonly renewDeadline?: Duration.Input | undefined
  readonly retryPeriod?: Duration.Input | undefined
  readonly jitterFactor?: number | undefined
}

/**
 * Validated timings.
 *
 * @since 0.2.0
 * @category models
 */
export interface Timing {
  readonly leaseDuration: Duration.Duration
  readonly renewDeadline: Duration.Duration
  readonly retryPeriod: Duration.Duration
  readonly jitterFactor: number
}

/**
 * Validates timings as client-go does, in its order and with its messages: "leaseDuration must be greater
 * than renewDeadline", "renewDeadline must be greater than retryPeriod*JitterFactor", then each must be
 * greater than zero; then this library's: a finite non-negative jitter factor, a lease duration of whole
 * seconds, a finite retry period. `make` validates its options so; this checks timings earlier (flags,
 * configuration files).
 *
 * @example
 * ```ts
 * import { Result } from "effect"
 * import { LeaderElection } from "effect-informers"
 *
 * const checked = LeaderElection.validateTiming({ leaseDuration: "10 seconds", renewDeadline: "10 seconds" })
 * if (Result.isFailure(checked)) console.log(checked.failure.message) // "leaseDuration must be greater than renewDeadline"
 * ```
 *
 * @since 0.2.0
 * @category configuration
 */
export const validateTiming: (options: TimingOptions) => Result.Result<Timing, InvalidConfigError> =
  policy.validateTiming

/**
 * The options of an elector:
 * - `lock`: the Lease (`clientLock`, or a lock of `makeMemoryLeases`);
 * - `identity`: this replica's name, unique among the candidates (a pod name, with a random suffix when
 *   one pod may run the process twice); it is written as `holderIdentity`;
 * - `name`: the election's name in metrics and logs, default the lock's `describe` (`namespace/name`);
 * - `releaseOnCancel`: release the Lease when the service's scope closes (default `true`); with `false`,
 *   the others wait for the lease to expire (what a killed process leaves behind).
 *
 * @since 0.2.0
 * @category models
 */
export interface Options extends TimingOptions {
  readonly lock: LeaseLock
  readonly identity: string
  readonly name?: string | undefined
  readonly releaseOnCancel?: boolean | undefined
}

// -------------------------------------------------------------------------------------------------
// the state machine
// -------------------------------------------------------------------------------------------------

/**
 * Why a leader stopped leading: its renewals failed for `renewDeadline`, a renewal found another holder,
 * the elector's loop died of a defect (it stops the work at once, then campaigns again), or the service's
 * scope closed.
 *
 * @since 0.2.0
 * @category state machine
 */
export type StepDownReason = "RenewDeadline" | "LeaseLost" | "Failure" | "Shutdown"

/**
 * Where an elector is (`state`, `changes`):
 * - `Acquiring`: campaigning, and no other replica holds a lease that has not expired, as far as this one
 *   saw (never read, free, released, expired, or unreadable): its next attempt may succeed;
 * - `Following`: campaigning, `leader` holds the lease;
 * - `Leading`: the work of `term` (1, 2, ... for this replica) runs;
 * - `SteppingDown`: the work of `term` is being stopped (interrupted, finalizers running);
 * - `Releasing`: the service's scope closed, the work stopped: the Lease is being released;
 * - `Stopped`: done.
 *
 * @since 0.2.0
 * @category state machine
 */
export type State = Data.TaggedEnum<{
  Acquiring: {}
  Following: { readonly leader: string }
  Leading: { readonly term: number }
  SteppingDown: { readonly term: number; readonly reason: StepDownReason }
  Releasing: {}
  Stopped: {}
}>

/**
 * Constructors and matchers of `State` (`State.$is("Leading")`, `State.$match`).
 *
 * @since 0.2.0
 * @category state machine
 */
export const State: typeof policy.State = policy.State

/**
 * What moves the state machine: an unsuccessful attempt (`Observed`, with the valid holder seen),
 * `Acquired`, `Renewed`, `RenewFailed`, `DeadlineReached`, `LeaseLost`, `Failed` (a defect of the loop),
 * `WorkStopped`, `ShutdownStarted`, `Released`.
 *
 * @since 0.2.0
 * @category state machine
 */
export type Event = Data.TaggedEnum<{
  Observed: { readonly leader: Option.Option<string> }
  Acquired: { readonly term: number }
  Renewed: {}
  RenewFailed: {}
  DeadlineReached: {}
  LeaseLost: { readonly leader: string }
  Failed: {}
  WorkStopped: {}
  ShutdownStarted: {}
  Released: {}
}>

/**
 * Constructors and matchers of `Event`.
 *
 * @since 0.2.0
 * @category state machine
 */
export const Event: typeof policy.Event = policy.Event

/**
 * The state machine: the next state after an event; an event that does not apply leaves the state as it is.
 *
 * | from | event | to |
 * |---|---|---|
 * | `Acquiring`, `Following` | `Observed` (holder / none) | `Following` / `Acquiring` |
 * | `Acquiring`, `Following` | `Acquired` | `Leading` |
 * | `Acquiring`, `Following` | `Failed` | `Acquiring` |
 * | `Acquiring`, `Following` | `ShutdownStarted` | `Releasing` |
 * | `Leading` | `DeadlineReached`, `LeaseLost`, `Failed`, `ShutdownStarted` | `SteppingDown` (the reason) |
 * | `SteppingDown` | `WorkStopped` | `Acquiring`; `Releasing` when the reason is `Shutdown` |
 * | `SteppingDown` | `ShutdownStarted` | `SteppingDown` (`Shutdown`) |
 * | `Releasing` | `Released` | `Stopped` |
 *
 * @example
 * ```ts
 * import { LeaderElection } from "effect-informers"
 *
 * const { Event, State, transition } = LeaderElection
 * const next = transition(State.Leading({ term: 1 }), Event.DeadlineReached())
 * console.log(next) // { _tag: "SteppingDown", term: 1, reason: "RenewDeadline" }
 * ```
 *
 * @since 0.2.0
 * @category state machine
 */
export const transition: (state: State, event: Event) => State = policy.transition

// -------------------------------------------------------------------------------------------------
// locks
// -------------------------------------------------------------------------------------------------

/**
 * Why a lock operation failed: `NotFound` (an update of a Lease that is gone), `AlreadyExists` (a create
 * that lost a race), `Conflict` (a stale resourceVersion: another replica wrote first), `Failed` (anything
 * else: transport, permissions, a timeout, a partition).
 *
 * @since 0.2.0
 * @category locks
 */
export type LockErrorReason = "NotFound" | "AlreadyExists" | "Conflict" | "Failed"

/**
 * A lock operation failed; `cause` is the `ApiError` for the Client lock.
 *
 * @since 0.2.0
 * @category errors
 */
export const LockError: typeof locks.LockError = locks.LockError

/**
 * @since 0.2.0
 * @category errors
 */
export type LockError = locks.LockError

/**
 * The Lease an election runs over, as client-go's `resourcelock.Interface` without the identity (the
 * elector's): `get` (`None` when there is no Lease), `create`, and `update` with the resourceVersion read
 * as a precondition (`Conflict` when stale). `describe` names it (`namespace/name`). `watch`, optional,
 * streams the Lease's changes after a resourceVersion (`LeaseChange`): a leader watching it ends its term at
 * once when the Lease shows another holder or is deleted; without it, the change is found at the next
 * renewal.
 *
 * @since 0.2.0
 * @category locks
 */
export interface LeaseLock {
  readonly describe: string
  readonly get: Effect.Effect<Option.Option<VersionedRecord>, LockError>
  readonly create: (record: LeaderElectionRecord) => Effect.Effect<VersionedRecord, LockError>
  readonly update: (record: LeaderElectionRecord, resourceVersion: string) => Effect.Effect<VersionedRecord, LockError>
  readonly watch?: ((resourceVersion: string) => Stream.Stream<LeaseChange, LockError>) | undefined
}

/**
 * A change of a watched Lease: its record as written, `None` when it was deleted.
 *
 * @since 0.2.0
 * @category locks
 */
export type LeaseChange = Option.Option<VersionedRecord>

/**
 * Options of `clientLock`: the Lease's namespace and name, and labels written on it (merged into its
 * labels on every update, as client-go's lock labels).
 *
 * @since 0.2.0
 * @category locks
 */
export interface ClientLockOptions {
  readonly namespace: string
  readonly name: string
  readonly labels?: { readonly [key: string]: string } | undefined
}

/**
 * A lock over a `coordination.k8s.io/v1` Lease through the `Client`. As client-go's Lease lock, it keeps
 * the Lease it last read or wrote: an update replaces the spec of that object (its other metadata kept)
 * with the resourceVersion as precondition. Its `watch` is the Client's, with `fieldSelector`
 * `metadata.name=<name>`. It uses the `Client` of the context as it is: give it one of its own
 * (`Client.Service.derive`, as `layerClient` does) so that renewals never wait behind the work.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { LeaderElection } from "effect-informers"
 *
 * const elector = Effect.gen(function*() {
 *   const lock = yield* LeaderElection.clientLock({ namespace: "kube-system", name: "my-controller" })
 *   return yield* LeaderElection.make({ lock, identity: "replica-a", leaseDuration: "30 seconds", renewDeadline: "20 seconds" })
 * })
 * ```
 *
 * @since 0.2.0
 * @category locks
 */
export const clientLock: (options: ClientLockOptions) => Effect.Effect<LeaseLock, never, Client> = locks.clientLock

/**
 * A Lease as a list returns it (`MemoryLeases.list`, a sharding backend's `list`): its name, labels, record
 * and resourceVersion.
 *
 * @since 0.2.0
 * @category locks
 */
export interface LeaseEntry extends VersionedRecord {
  readonly name: string
  readonly labels: { readonly [key: string]: string }
}

/**
 * The verbs of the in-memory store.
 *
 * @since 0.2.0
 * @category testing
 */
export type Verb = "get" | "create" | "update" | "list"

/**
 * How a partitioned client of the in-memory store fails: `fail` (at once: nothing reaches the store),
 * `hang` (no answer, ever: the attempt's timeout ends it), `drop-responses` (requests are applied, their
 * answers lost: the client sees `Failed` although its write landed).
 *
 * @since 0.2.0
 * @category testing
 */
export type PartitionMode = "fail" | "hang" | "drop-responses"

/**
 * One operation of the in-memory store, in the order they took effect.
 *
 * @since 0.2.0
 * @category testing
 */
export interface Operation {
  /** The store's Clock time when the operation took effect (or failed). */
  readonly at: number
  readonly client: string
  readonly verb: Verb
  /** The Lease's name (`*` for a list). */
  readonly name: string
  /** `ok`, the reason it failed, or `lost` (applied, its answer dropped by a partition). */
  readonly outcome: "ok" | "lost" | LockErrorReason
}

/**
 * Options of an in-memory lock: the `client` it calls as (faults are per client) and its labels.
 *
 * @since 0.2.0
 * @category testing
 */
export interface MemoryLockOptions {
  /** Who is calling: faults are set per client. Default `"default"`. */
  readonly client?: string | undefined
  /** Labels written on create and merged on update. */
  readonly labels?: { readonly [key: string]: string } | undefined
}

/**
 * Leases in memory, for tests (under `TestClock`): `lock(name, { client })` gives each replica its own
 * lock on a shared Lease (with a `watch` of the store's changes, nothing reaching a partitioned client);
 * `list` (by labels), `partition` and `heal`, `setLatency` (a request is applied after the latency even
 * when its client stopped waiting: a write in flight), `failNext` (scripted errors), `write` (another
 * writer), `remove`, `read` and `operations` (what each client did, when).
 *
 * @since 0.2.0
 * @category testing
 */
export interface MemoryLeases {
  readonly lock: (name: string, options?: MemoryLockOptions) => LeaseLock
  readonly list: (
    selector?: { readonly [key: string]: string },
    options?: { readonly client?: string | undefined }
  ) => Effect.Effect<ReadonlyArray<LeaseEntry>, LockError>
  readonly read: (name: string) => Effect.Effect<Option.Option<LeaseEntry>>
  readonly write: (
    name: string,
    record: LeaderElectionRecord,
    labels?: { readonly [key: string]: string }
  ) => Effect.Effect<LeaseEntry>
  readonly remove: (name: string) => Effect.Effect<void>
  readonly partition: (client: string, mode?: PartitionMode) => Effect.Effect<void>
  readonly heal: (client: string) => Effect.Effect<void>
  readonly setLatency: (client: string, latency: Duration.Input) => Effect.Effect<void>
  readonly failNext: (client: string, verb: Verb, reason: LockErrorReason, times?: number) => Effect.Effect<void>
  readonly operations: Effect.Effect<ReadonlyArray<Operation>>
}

/**
 * A new in-memory store; requests in flight belong to the scope.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { LeaderElection } from "effect-informers"
 *
 * const twoCandidates = Effect.gen(function*() {
 *   const leases = yield* LeaderElection.makeMemoryLeases
 *   const a = yield* LeaderElection.make({ lock: leases.lock("leader", { client: "a" }), identity: "a" })
 *   const b = yield* LeaderElection.make({ lock: leases.lock("leader", { client: "b" }), identity: "b" })
 *   yield* leases.partition("a", "hang")
 *   return [a, b]
 * })
 * ```
 *
 * @since 0.2.0
 * @category testing
 */
export const makeMemoryLeases: Effect.Effect<MemoryLeases, never, Scope.Scope> = locks.makeMemoryLeases

// -------------------------------------------------------------------------------------------------
// the service
// -------------------------------------------------------------------------------------------------

/**
 * @since 0.2.0
 */
export declare namespace LeaderElection {
  /**
   * A running elector.
   *
   * @since 0.2.0
   * @category models
   */
  export interface Service {
    readonly identity: string
    /** The election's name in metrics and logs. */
    readonly name: string
    readonly state: Effect.Effect<State>
    /** The current state, then each change. */
    readonly changes: Stream.Stream<State>
    /** The holder in the record this replica last read or wrote (client-go's `GetLeader`), `None` when none. */
    readonly holder: Effect.Effect<Option.Option<string>>
    /** Whether the state is `Leading`. */
    readonly isLeader: Effect.Effect<boolean>
    /**
     * Runs `work` each time this replica becomes leader, in a scope of the term (its `Scope` requirement),
     * interrupted and closed when the term ends, and within the term's `Term` (its writes through the
     * `Client`, and `Term.check`, fail with `TermError` once the term is stale by the monotonic clock); `work` starts at once when it is registered during a term.
     * A `work` that completes waits for the next term; one that fails ends `whileLeading` with its failure
     * (leadership goes on: retry, or end the process). Never completes; interrupted when the elector
     * stops; interrupting it stops its work.
     */
    readonly whileLeading: <A, E, R>(work: Effect.Effect<A, E, R>) => Effect.Effect<never, E, Exclude<R, Scope.Scope>>
  }
}

/**
 * The LeaderElection service tag.
 *
 * @since 0.2.0
 * @category tags
 */
export class LeaderElection extends Context.Service<LeaderElection, LeaderElection.Service>()(
  "effect-informers/LeaderElection"
) {}

/**
 * Starts an elector: it campaigns at once and until its scope closes. Closing the scope stops the work
 * of a term in progress, then releases the Lease (unless `releaseOnCancel` is `false`). Fails with
 * `InvalidConfigError` when the options are invalid.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { LeaderElection } from "effect-informers"
 *
 * const program = Effect.gen(function*() {
 *   const leases = yield* LeaderElection.makeMemoryLeases
 *   const election = yield* LeaderElection.make({ lock: leases.lock("leader"), identity: "replica-a" })
 *   yield* Effect.forkChild(election.whileLeading(Effect.log("leading")))
 * }).pipe(Effect.scoped)
 * ```
 *
 * @since 0.2.0
 * @category constructors
 */
export const make: (options: Options) => Effect.Effect<LeaderElection.Service, InvalidConfigError, Scope.Scope> =
  internal.make

/**
 * Provides `LeaderElection` with `make`.
 *
 * @since 0.2.0
 * @category layers
 */
export const layer = (options: Options): Layer.Layer<LeaderElection, InvalidConfigError> =>
  Layer.effect(LeaderElection, make(options))

/**
 * Options of `layerClient`: those of `make`, with the Lease named instead of a lock, and the options of
 * the elector's own Client (`client`: `Client.DeriveOptions`; absent, the context's Client's values).
 *
 * @since 0.2.0
 * @category models
 */
export interface ClientOptions extends Omit<Options, "lock"> {
  readonly namespace: string
  readonly leaseName: string
  readonly labels?: { readonly [key: string]: string } | undefined
  /**
   * The rate limit (`qps`, `burst`), request `timeout` and `userAgent` of the Client the elector's
   * requests go through: one derived from the context's (`Client.Service.derive`), with a token bucket of
   * its own. Default: the context's Client's values.
   */
  readonly client?: DeriveOptions | undefined
}

/**
 * Provides `LeaderElection` over the Lease `namespace/leaseName`, through a Client derived from the
 * `Client` of the context (`Client.Service.derive`): the same connections and credentials, with a rate
 * limiter of its own, so that renewals, acquisitions and the release never wait behind the work's
 * requests (as controller-runtime builds its leader-election client apart from the manager's). Each
 * request is then bounded by the elector's request timeout alone (client-go's max(1 s, `renewDeadline` / 2)),
 * not by a queue it shares.
 *
 * @since 0.2.0
 * @category layers
 */
export const layerClient = (options: ClientOptions): Layer.Layer<LeaderElection, InvalidConfigError, Client> => {
  const { client: clientOptions, labels, leaseName, namespace, ...rest } = options
  return Layer.effect(
    LeaderElection,
    Effect.gen(function*() {
      const client = yield* (yield* Client).derive(clientOptions)
      const lock = locks.makeClientLock(client, { namespace, name: leaseName, labels })
      return yield* make({ ...rest, lock })
    })
  )
}

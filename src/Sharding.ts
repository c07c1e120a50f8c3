/**
 * Sharding over Leases: the replicas of a controller split its keys among themselves, each key reconciled
 * by one replica at a time.
 *
 * - Membership: each replica (a member) holds one `coordination.k8s.io/v1` Lease named after its identity,
 *   labelled `effect-informers.io/shard-group=<group>`, acquired, renewed and released as a leader lease
 *   (it is a `LeaderElection` whose only candidate is the member itself: same rules; timings 15 s, 5 s,
 *   2 s by default).
 * - View: every `retryPeriod` a member lists the Leases of its group. The live members are the Leases held
 *   by their own name whose lease has not expired, judged as leader election judges it: by this member's
 *   Clock, from the time it saw the record last change (never from `renewTime`). A Lease that disappears
 *   is kept until it would have expired; a released one (no holder) leaves at once.
 * - Assignment: a key belongs to the live member of highest rendezvous score
 *   `mix64(fnv1a64(member + "\n" + key))` (highest random weight hashing; ties: the greater identity).
 *   Rendezvous hashing needs no ring or virtual nodes, gives every member an equal share in expectation,
 *   and moves the fewest keys: a member that joins takes only keys from others, a member that leaves
 *   gives only its own keys away; every replica computes the same owner from the same members.
 * - Fencing through timing: a member takes keys (`Active`) only while it holds its Lease, after it has seen
 *   itself a member for one whole `leaseDuration` in its current term (a newcomer waits until every other
 *   member must have seen it), and while its view is younger than `viewTimeout` (a member that cannot list
 *   stops). It stops a key as soon as it sees a member that outranks it for that key; it takes the keys of a
 *   member that disappeared only after that member's Lease expired by its own observation, which is after
 *   that member stopped (at its renew deadline). The argument and its clock assumptions (bounded rate skew,
 *   no bound on offsets) are in docs/REPLICAS.md.
 * - For a Controller: `owns(key)` (check at the start of a reconcile), `whileOwned(key, effect)` (runs the
 *   reconcile only if owned, interrupted as soon as the key leaves), and `changes` (requeue the keys
 *   `gained`).
 * - Metrics (tag `group`): `Metrics.shardMembers`, `shardActive`, `shardAssignmentChanges`,
 *   `shardInterruptions` (docs/METRICS.md).
 *
 * @example
 * ```ts
 * import { Effect, Stream } from "effect"
 * import { Client, Sharding } from "effect-informers"
 *
 * declare const cachedKeys: Effect.Effect<ReadonlyArray<string>>
 * declare const requeue: (key: string) => Effect.Effect<void>
 * declare const reconcile: (key: string) => Effect.Effect<void>
 *
 * const program = Effect.gen(function*() {
 *   const sharding = yield* Sharding.Sharding
 *   // requeue the keys this member gains, so they are reconciled by their new owner
 *   yield* Effect.forkScoped(Stream.runForEach(sharding.changes, (change) =>
 *     Effect.flatMap(cachedKeys, (keys) =>
 *       Effect.forEach(keys.filter((key) => Sharding.gained(change, key)), requeue, { discard: true }))))
 *   // a reconcile runs only on the key's owner, and stops if the key moves away
 *   yield* sharding.whileOwned("default/web", reconcile("default/web"))
 * }).pipe(
 *   Effect.scoped,
 *   Effect.provide(Sharding.layerClient({ namespace: "default", group: "replicator", identity: "replicator-0" })),
 *   Effect.provide(Client.layerLive())
 * )
 * ```
 *
 * @since 0.2.0
 */
import * as Context from "effect/Context"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Option from "effect/Option"
import type * as Result from "effect/Result"
import type * as Scope from "effect/Scope"
import type * as Stream from "effect/Stream"
import type { DeriveOptions } from "./Client.js"
import { Client } from "./Client.js"
import * as internal from "./internal/coordination/sharding.js"
import * as policy from "./internal/coordination/shardingPolicy.js"
import type * as LeaderElection from "./LeaderElection.js"

// -------------------------------------------------------------------------------------------------
// the owner of a key
// -------------------------------------------------------------------------------------------------

/**
 * The owner of a key among members, by rendezvous hashing: the member of highest score
 * `mix64(fnv1a64(member + "\n" + key))` (ties: the greater identity; every replica, of every version,
 * computes the same); `None` without members. The order of `members` does not matter.
 *
 * @example
 * ```ts
 * import { Option } from "effect"
 * import { Sharding } from "effect-informers"
 *
 * const owner = Sharding.ownerOf(["replica-0", "replica-1", "replica-2"], "default/web")
 * console.log(Option.isSome(owner)) // true
 * ```
 *
 * @since 0.2.0
 * @category hashing
 */
export const ownerOf: (members: Iterable<string>, key: string) => Option.Option<string> = policy.ownerOf

// -------------------------------------------------------------------------------------------------
// configuration
// -------------------------------------------------------------------------------------------------

/**
 * The label on every membership Lease: `effect-informers.io/shard-group`, its value the group.
 *
 * @since 0.2.0
 * @category constants
 */
export const groupLabel: string = policy.groupLabel

/**
 * Sharding's default renew deadline of a membership Lease: 5 seconds, not leader election's 10, so that
 * `viewTimeout + renewDeadline < leaseDuration` leaves a margin with the default lease of 15 s.
 *
 * @since 0.2.0
 * @category constants
 */
export const defaultRenewDeadline: Duration.Duration = policy.defaultRenewDeadline

/**
 * A member's timings: leader election's for its Lease (`leaseDuration` 15 s, `renewDeadline` 5 s here,
 * `retryPeriod` 2 s, `jitterFactor` 1.2; the group is listed every `retryPeriod`), and `viewTimeout`: how
 * long a view stays valid after the list it came from was sent (default `(leaseDuration − renewDeadline) /
 * 2`, 5 s). A member whose lists fail that long takes no key.
 *
 * @since 0.2.0
 * @category models
 */
export interface TimingOptions extends LeaderElection.TimingOptions {
  readonly viewTimeout?: Duration.Input | undefined
}

/**
 * Validated timings.
 *
 * @since 0.2.0
 * @category models
 */
export interface Timing extends LeaderElection.Timing {
  readonly viewTimeout: Duration.Duration
}

/**
 * The member's identity (its Lease's name) and its group.
 *
 * @since 0.2.0
 * @category models
 */
export interface Names {
  readonly identity: string
  readonly group: string
}

/**
 * Validates a member's options: leader election's checks of the timings (with a renew deadline of 5 s by
 * default), then "viewTimeout must be greater than retryPeriod", "viewTimeout + renewDeadline must be less
 * than leaseDuration" (the timing argument of docs/REPLICAS.md), the group as a label value, the identity as
 * a Lease name.
 *
 * @example
 * ```ts
 * import { Result } from "effect"
 * import { Sharding } from "effect-informers"
 *
 * const checked = Sharding.validate({ identity: "replica-0", group: "replicator", renewDeadline: "10 seconds" })
 * // 2.5 s + 10 s < 15 s: valid, with a smaller margin than the defaults'
 * console.log(Result.isSuccess(checked)) // true
 * ```
 *
 * @since 0.2.0
 * @category configuration
 */
export const validate: (options: TimingOptions & Names) => Result.Result<Timing, LeaderElection.InvalidConfigError> =
  policy.validate

// -------------------------------------------------------------------------------------------------
// the assignment
// -------------------------------------------------------------------------------------------------

/**
 * Where a member stands: `NotMember` (it does not hold its Lease), `WarmingUp` (it has not yet seen itself
 * a member for a whole lease duration), `Stale` (its view is older than `viewTimeout`), `Active` (it takes
 * its keys), `Left` (its scope closed).
 *
 * @since 0.2.0
 * @category assignment
 */
export type Status = "NotMember" | "WarmingUp" | "Stale" | "Active" | "Left"

/**
 * A member's assignment: its status and the live members it sees. It owns a key when `Active` and the
 * key's owner among `members` is itself. A plain object: compared by value (`Equal.equals`, structural in
 * Effect 4); `changes` drops an assignment equal to the previous one (same status and members).
 *
 * @since 0.2.0
 * @category assignment
 */
export interface Assignment {
  readonly identity: string
  readonly status: Status
  readonly members: ReadonlyArray<string>
}

/**
 * An assignment, comparable by value (to build the changes a test of a Controller feeds it).
 *
 * @since 0.2.0
 * @category assignment
 */
export const makeAssignment: (identity: string, status: Status, members: ReadonlyArray<string>) => Assignment =
  policy.makeAssignment

/**
 * Whether an assignment gives `key` to its member.
 *
 * @example
 * ```ts
 * import { Sharding } from "effect-informers"
 *
 * const assignment = Sharding.makeAssignment("replica-0", "Active", ["replica-0"])
 * console.log(Sharding.isOwned(assignment, "default/web")) // true: the only member
 * ```
 *
 * @since 0.2.0
 * @category assignment
 */
export const isOwned: (assignment: Assignment, key: string) => boolean = policy.owns

/**
 * One change of a member's assignment. The first change a subscriber sees has no `previous`: it is the
 * assignment at subscription.
 *
 * @since 0.2.0
 * @category assignment
 */
export interface AssignmentChange {
  readonly previous: Option.Option<Assignment>
  readonly current: Assignment
}

/**
 * Whether `key` came to the member with `change`: owned now, not before (every owned key for a first
 * change). A Controller requeues the keys it gained.
 *
 * @since 0.2.0
 * @category assignment
 */
export const gained: (change: AssignmentChange, key: string) => boolean = policy.gained

/**
 * Whether `key` left the member with `change`.
 *
 * @since 0.2.0
 * @category assignment
 */
export const lost: (change: AssignmentChange, key: string) => boolean = policy.lost

// -------------------------------------------------------------------------------------------------
// backends
// -------------------------------------------------------------------------------------------------

/**
 * Where the membership Leases are: a lock per Lease name, and a list of the Leases with given labels.
 *
 * @since 0.2.0
 * @category backends
 */
export interface Backend {
  readonly describe: string
  readonly lock: (name: string, labels: { readonly [key: string]: string }) => LeaderElection.LeaseLock
  readonly list: (
    labels: { readonly [key: string]: string }
  ) => Effect.Effect<ReadonlyArray<LeaderElection.LeaseEntry>, LeaderElection.LockError>
}

/**
 * The membership Leases of `namespace`, through the `Client` of the context as it is: give it one of its
 * own (`Client.Service.derive`, as `layerClient` does) so that renewals and lists never wait behind the work.
 *
 * @since 0.2.0
 * @category backends
 */
export const clientBackend: (namespace: string) => Effect.Effect<Backend, never, Client> = internal.clientBackend

/**
 * The membership Leases in an in-memory store (`LeaderElection.makeMemoryLeases`), calling as `client`
 * (faults are per client), for TestClock tests.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { LeaderElection, Sharding } from "effect-informers"
 *
 * const twoMembers = Effect.gen(function*() {
 *   const leases = yield* LeaderElection.makeMemoryLeases
 *   const a = yield* Sharding.make({ backend: Sharding.memoryBackend(leases, "a"), identity: "a", group: "g" })
 *   const b = yield* Sharding.make({ backend: Sharding.memoryBackend(leases, "b"), identity: "b", group: "g" })
 *   return [a, b]
 * })
 * ```
 *
 * @since 0.2.0
 * @category backends
 */
export const memoryBackend: (leases: LeaderElection.MemoryLeases, client?: string) => Backend = internal.memoryBackend

// -------------------------------------------------------------------------------------------------
// the service
// -------------------------------------------------------------------------------------------------

/**
 * A member's options: its backend, identity (its Lease's name: unique in the namespace) and group, and its
 * timings (`TimingOptions`).
 *
 * @since 0.2.0
 * @category models
 */
export interface Options extends TimingOptions, Names {
  readonly backend: Backend
}

/**
 * @since 0.2.0
 */
export declare namespace Sharding {
  /**
   * A running member.
   *
   * @since 0.2.0
   * @category models
   */
  export interface Service {
    readonly identity: string
    readonly group: string
    /** The assignment now (computed at the call, from the view and the Clock). */
    readonly assignment: Effect.Effect<Assignment>
    /** The assignment when subscribing, then each change. */
    readonly changes: Stream.Stream<AssignmentChange>
    /** Whether this member owns `key` now. */
    readonly owns: (key: string) => Effect.Effect<boolean>
    /** Who owns `key` in this member's view (the others' views may differ for a while). */
    readonly ownerOf: (key: string) => Effect.Effect<Option.Option<string>>
    /** The live members in this member's view, sorted. */
    readonly members: Effect.Effect<ReadonlyArray<string>>
    /**
     * Runs `effect` if this member owns `key` now (`Some` of its result), else not (`None`). When the key
     * leaves this member while `effect` runs (a member that outranks it appears, the view times out, the
     * Lease is lost, the scope closes), `effect` is interrupted and awaited before the change is published:
     * `None`. Its failures are this effect's. `effect` runs within a `Term` valid while the membership is
     * (its last renewal sent less than `renewDeadline` ago by the monotonic clock, its Lease not taken or
     * deleted) and the key is this member's: a write of the `Client` (or a `Term.check`) after that fails
     * with `TermError`, is not sent, and interrupts `effect`; a stale membership also steps the member
     * down at once.
     */
    readonly whileOwned: <A, E, R>(key: string, effect: Effect.Effect<A, E, R>) => Effect.Effect<Option.Option<A>, E, R>
    /** The election over this member's own Lease. */
    readonly election: LeaderElection.LeaderElection.Service
  }
}

/**
 * The Sharding service tag.
 *
 * @since 0.2.0
 * @category tags
 */
export class Sharding extends Context.Service<Sharding, Sharding.Service>()("effect-informers/Sharding") {}

/**
 * Starts a member: it creates (or takes back) its Lease and lists its group at once, and takes keys once
 * warmed up. Closing the scope stops the work of `whileOwned`, then releases the Lease, so the others take
 * its keys at their next list. Fails with `InvalidConfigError` on invalid options.
 *
 * @since 0.2.0
 * @category constructors
 */
export const make: (
  options: Options
) => Effect.Effect<Sharding.Service, LeaderElection.InvalidConfigError, Scope.Scope> = internal.make

/**
 * Provides `Sharding` with `make`.
 *
 * @since 0.2.0
 * @category layers
 */
export const layer = (options: Options): Layer.Layer<Sharding, LeaderElection.InvalidConfigError> =>
  Layer.effect(Sharding, make(options))

/**
 * Options of `layerClient`: those of `make`, with the namespace of the Leases instead of a backend, and the
 * options of the member's own Client (`client`: `Client.DeriveOptions`; absent, the context's Client's
 * values).
 *
 * @since 0.2.0
 * @category models
 */
export interface ClientOptions extends TimingOptions, Names {
  readonly namespace: string
  /**
   * The rate limit (`qps`, `burst`), request `timeout` and `userAgent` of the Client the member's Lease
   * requests (renewals, lists of the group, the release) go through: one derived from the context's
   * (`Client.Service.derive`), with a token bucket of its own. Default: the context's Client's values.
   */
  readonly client?: DeriveOptions | undefined
}

/**
 * Provides `Sharding` over the Leases of `namespace`, through a Client derived from the `Client` of the
 * context (`Client.Service.derive`): the same connections and credentials, with a rate limiter of its
 * own, so that the membership's renewals and lists never wait behind the work's requests.
 *
 * @since 0.2.0
 * @category layers
 */
export const layerClient = (
  options: ClientOptions
): Layer.Layer<Sharding, LeaderElection.InvalidConfigError, Client> => {
  const { client: clientOptions, namespace, ...rest } = options
  return Layer.effect(
    Sharding,
    Effect.gen(function*() {
      const client = yield* (yield* Client).derive(clientOptions)
      const backend = yield* Effect.provideService(internal.clientBackend(namespace), Client, client)
      return yield* make({ ...rest, backend })
    })
  )
}

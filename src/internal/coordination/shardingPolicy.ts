/**
 * The pure part of sharding: the rendezvous hash, the timings, a member's view of the membership Leases
 * (observed as leader election observes a Lease: by the local time of the last change), and the
 * assignment a view gives at an instant. The types a user sees are declared in `Sharding` (imported here
 * as types), which re-exports the few functions a user calls; the member in `sharding.ts` is built on the
 * rest, and the tests import them from here.
 *
 * @internal
 */
import * as Duration from "effect/Duration"
import * as Option from "effect/Option"
import * as Result from "effect/Result"
import type { LeaseEntry, State } from "../../LeaderElection.js"
import type { Assignment, AssignmentChange, Names, Status, Timing, TimingOptions } from "../../Sharding.js"
import type { Observation } from "./leaderElectionPolicy.js"
import { InvalidConfigError, isExpired, observe, validateTiming } from "./leaderElectionPolicy.js"

// -------------------------------------------------------------------------------------------------
// the hash
// -------------------------------------------------------------------------------------------------

const mask64 = 0xffffffffffffffffn
const fnvOffset = 0xcbf29ce484222325n
const fnvPrime = 0x100000001b3n
const encoder = new TextEncoder()

/** FNV-1a, 64 bits, of the UTF-8 bytes of `text`. @internal */
export const fnv1a64 = (text: string): bigint => {
  let hash = fnvOffset
  for (const byte of encoder.encode(text)) {
    hash ^= BigInt(byte)
    hash = (hash * fnvPrime) & mask64
  }
  return hash
}

/** MurmurHash3's 64-bit finaliser: every input bit moves every output bit. @internal */
export const mix64 = (value: bigint): bigint => {
  let k = value
  k ^= k >> 33n
  k = (k * 0xff51afd7ed558ccdn) & mask64
  k ^= k >> 33n
  k = (k * 0xc4ceb9fe1a85ec53n) & mask64
  k ^= k >> 33n
  return k
}

/** The rendezvous score of `member` for `key`: mix64(fnv1a64(member + "\n" + key)). @internal */
export const score = (member: string, key: string): bigint => mix64(fnv1a64(`${member}\n${key}`))

/**
 * The owner of `key` among `members` by rendezvous (highest random weight) hashing: the member of the
 * highest score, the greater identity on a tie. `None` when there is no member.
 *
 * @internal
 */
export const ownerOf = (members: Iterable<string>, key: string): Option.Option<string> => {
  let best: string | undefined
  let bestScore = -1n
  for (const member of members) {
    const s = score(member, key)
    if (s > bestScore || (s === bestScore && best !== undefined && member > best)) {
      best = member
      bestScore = s
    }
  }
  return Option.fromUndefinedOr(best)
}

// -------------------------------------------------------------------------------------------------
// timings and names
// -------------------------------------------------------------------------------------------------

/** The label on every membership Lease, its value the group. @internal */
export const groupLabel = "effect-informers.io/shard-group"

/** Sharding's default renew deadline of a membership Lease: 5 s (leader election's is 10 s). @internal */
export const defaultRenewDeadline: Duration.Duration = Duration.seconds(5)

/** How long a member's view stays valid after the list it came from was sent, in milliseconds. @internal */
export const viewTimeout = (timing: Timing): number => Duration.toMillis(timing.viewTimeout)

const labelValue = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/
const subdomain = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/

/**
 * Leader election's checks of the timings (the renew deadline defaulting to 5 s), then the view timeout
 * (default `(leaseDuration − renewDeadline) / 2`): longer than `retryPeriod` (a view is refreshed before it
 * times out), and `viewTimeout + renewDeadline < leaseDuration` (the timing argument of docs/REPLICAS.md);
 * the group is a label value, the identity a Lease name.
 *
 * @internal
 */
export const validate = (options: TimingOptions & Names): Result.Result<Timing, InvalidConfigError> =>
  Result.flatMap(
    validateTiming({ ...options, renewDeadline: options.renewDeadline ?? defaultRenewDeadline }),
    (timing): Result.Result<Timing, InvalidConfigError> => {
      const fail = (message: string) => Result.fail(new InvalidConfigError({ message }))
      const lease = Duration.toMillis(timing.leaseDuration)
      const renew = Duration.toMillis(timing.renewDeadline)
      const view = options.viewTimeout === undefined
        ? Duration.millis((lease - renew) / 2)
        : Duration.fromInputUnsafe(options.viewTimeout)
      const viewMillis = Duration.toMillis(view)
      if (!Number.isFinite(viewMillis) || viewMillis <= Duration.toMillis(timing.retryPeriod)) {
        return fail("viewTimeout must be greater than retryPeriod")
      }
      if (viewMillis + renew >= lease) return fail("viewTimeout + renewDeadline must be less than leaseDuration")
      if (options.group === "" || options.group.length > 63 || !labelValue.test(options.group)) {
        return fail(
          `group must be a label value (63 characters at most, alphanumeric, '-', '_' or '.'): "${options.group}"`
        )
      }
      if (options.identity === "" || options.identity.length > 253 || !subdomain.test(options.identity)) {
        return fail(`identity must be a Lease name (a lower-case DNS subdomain): "${options.identity}"`)
      }
      return Result.succeed({ ...timing, viewTimeout: view })
    }
  )

// -------------------------------------------------------------------------------------------------
// the view
// -------------------------------------------------------------------------------------------------

/** What a member knows of its group. @internal */
export interface View {
  readonly identity: string
  /** Every Lease of the group seen and not yet expired, by name; one missing from a list is kept until it expires. */
  readonly peers: ReadonlyMap<string, Observation>
  /** When the last successful list was sent. */
  readonly listedAt: Option.Option<number>
  /** Since when this member has seen its own Lease held by itself, in the election term it is in. */
  readonly self: Option.Option<{ readonly term: number; readonly since: number }>
}

/** The view of a member that has listed nothing yet. @internal */
export const emptyView = (identity: string): View => ({
  identity,
  peers: new Map(),
  listedAt: Option.none(),
  self: Option.none()
})

/** Whether the Lease `name` is a live member for the observer: held by `name` itself, not expired. @internal */
export const isLiveMember = (name: string, observation: Observation, now: number): boolean =>
  observation.record.holderIdentity === name && !isExpired(observation, now)

/**
 * The view after a list sent at `sentAt` answered `entries` at `receivedAt`. Each Lease's time of
 * observation moves only when its record changed; a Lease missing from the list is kept until it expires
 * (so a deleted Lease is not taken for a departure); this member counts as seen since the first list, in
 * its current election term (`term`, `None` when it does not hold its Lease), that showed its own Lease
 * held by itself.
 *
 * @internal
 */
export const observeList = (
  view: View,
  entries: ReadonlyArray<LeaseEntry>,
  sentAt: number,
  receivedAt: number,
  term: Option.Option<number>
): View => {
  const peers = new Map<string, Observation>()
  for (const entry of entries) {
    peers.set(entry.name, observe(Option.fromUndefinedOr(view.peers.get(entry.name)), entry, receivedAt))
  }
  for (const [name, previous] of view.peers) {
    if (!peers.has(name) && !isExpired(previous, receivedAt)) peers.set(name, previous)
  }
  const mine = entries.find((entry) => entry.name === view.identity)
  const seen = mine !== undefined && mine.record.holderIdentity === view.identity
  const self = Option.isSome(term) && seen
    ? Option.isSome(view.self) && view.self.value.term === term.value
      ? view.self
      : Option.some({ term: term.value, since: receivedAt })
    : Option.none()
  const listedAt = Option.some(
    Option.match(view.listedAt, { onNone: () => sentAt, onSome: (t) => Math.max(t, sentAt) })
  )
  return { identity: view.identity, peers, listedAt, self }
}

/** The live members of a view at `now`, sorted. @internal */
export const membersAt = (view: View, now: number): ReadonlyArray<string> =>
  [...view.peers].filter(([name, o]) => isLiveMember(name, o, now)).map(([name]) => name).sort()

// -------------------------------------------------------------------------------------------------
// the assignment
// -------------------------------------------------------------------------------------------------

/**
 * An assignment: a plain object, so comparable by value (`Equal.equals` compares plain objects and arrays
 * structurally in Effect 4); the member itself compares with `sameAssignment`. @internal
 */
export const makeAssignment = (identity: string, status: Status, members: ReadonlyArray<string>): Assignment => ({
  identity,
  status,
  members: members.slice()
})

/**
 * Whether two assignments are the same: the same identity, status and members, in order (`membersAt` sorts
 * them). The equality `changes` and the publisher use, stated rather than left to `Equal.equals`. @internal
 */
export const sameAssignment = (a: Assignment, b: Assignment): boolean => {
  if (a === b) return true
  if (a.identity !== b.identity || a.status !== b.status || a.members.length !== b.members.length) return false
  for (let i = 0; i < a.members.length; i++) if (a.members[i] !== b.members[i]) return false
  return true
}

/**
 * The assignment of a view at `now`: the members, and whether this member takes keys (`Active`): it holds
 * its Lease (`Leading`), has seen itself a member for a whole lease duration in this term, and its view is
 * younger than `viewTimeout`.
 *
 * @internal
 */
export const assignmentAt = (
  view: View,
  election: State,
  leaving: boolean,
  now: number,
  timing: Timing
): Assignment => {
  const members = membersAt(view, now)
  const status: Status = leaving
    ? "Left"
    : election._tag !== "Leading"
    ? "NotMember"
    : Option.isNone(view.self) || view.self.value.term !== election.term ||
        now < view.self.value.since + Duration.toMillis(timing.leaseDuration)
    ? "WarmingUp"
    : Option.isNone(view.listedAt) || now >= view.listedAt.value + viewTimeout(timing)
    ? "Stale"
    : "Active"
  return makeAssignment(view.identity, status, members)
}

/** Whether `assignment` gives `key` to its member. @internal */
export const owns = (assignment: Assignment, key: string): boolean =>
  assignment.status === "Active" &&
  Option.contains(ownerOf(assignment.members, key), assignment.identity)

/**
 * The next instant after `now` at which the assignment of `view` changes by itself (a warm-up ends, the
 * view times out, a member's Lease expires), if any.
 *
 * @internal
 */
export const nextChangeAt = (view: View, now: number, timing: Timing): Option.Option<number> => {
  const instants: Array<number> = []
  if (Option.isSome(view.self)) instants.push(view.self.value.since + Duration.toMillis(timing.leaseDuration))
  if (Option.isSome(view.listedAt)) instants.push(view.listedAt.value + viewTimeout(timing))
  for (const [, o] of view.peers) instants.push(o.observedAt + o.record.leaseDurationSeconds * 1000)
  const future = instants.filter((t) => t > now)
  return future.length === 0 ? Option.none() : Option.some(Math.min(...future))
}

/** Whether `key` came to this member with `change` (every owned key, for the first change of a stream). @internal */
export const gained = (change: AssignmentChange, key: string): boolean =>
  owns(change.current, key) && !Option.exists(change.previous, (previous) => owns(previous, key))

/** Whether `key` left this member with `change`. @internal */
export const lost = (change: AssignmentChange, key: string): boolean =>
  !owns(change.current, key) && Option.exists(change.previous, (previous) => owns(previous, key))

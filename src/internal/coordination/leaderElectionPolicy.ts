/**
 * The pure part of leader election: the record, its MicroTime stamps, the validation of the timings, the
 * rules of client-go's `tryAcquireOrRenew` (what a replica observed, whether the lease expired for it,
 * what it may write), the waits of the two loops and the state machine. The types a user sees are declared
 * in `LeaderElection` (imported here as types), which re-exports the few functions a user calls; the loop
 * in `leaderElection.ts` is built on the rest, and the tests import them from here.
 *
 * Times are milliseconds of the replica's own Clock; none is ever compared with a timestamp inside a record.
 *
 * @internal
 */
import * as Data from "effect/Data"
import * as Duration from "effect/Duration"
import * as Option from "effect/Option"
import * as Result from "effect/Result"
import type * as LE from "../../LeaderElection.js"
import { oneLine } from "../text.js"

type LeaderElectionRecord = LE.LeaderElectionRecord
type VersionedRecord = LE.VersionedRecord
type LeaseSpec = LE.LeaseSpec
type WrittenLeaseSpec = LE.WrittenLeaseSpec
type Timing = LE.Timing
type TimingOptions = LE.TimingOptions

// -------------------------------------------------------------------------------------------------
// the record
// -------------------------------------------------------------------------------------------------

/** What a replica knows of the Lease: the record it last read, and when (its Clock) it first saw it as it is. @internal */
export interface Observation extends VersionedRecord {
  readonly observedAt: number
}

/** The fields of a record, in one string: two records are the same record when their keys are equal. @internal */
export const recordKey = (record: LeaderElectionRecord): string =>
  JSON.stringify([
    record.holderIdentity,
    record.leaseDurationSeconds,
    record.acquireTime ?? "",
    record.renewTime ?? "",
    record.leaseTransitions,
    record.strategy ?? "",
    record.preferredHolder ?? ""
  ])

/** @internal */
export const sameRecord = (a: LeaderElectionRecord, b: LeaderElectionRecord): boolean => recordKey(a) === recordKey(b)

const maxInt32 = 2_147_483_647
const isPositiveInt32 = (u: unknown): u is number =>
  Number.isInteger(u) && (u as number) > 0 && (u as number) <= maxInt32
const isNonNegativeInt32 = (u: unknown): u is number =>
  Number.isInteger(u) && (u as number) >= 0 && (u as number) <= maxInt32
const optionalString = (u: unknown): string | undefined => typeof u === "string" ? u : undefined
const show = (u: unknown): string => u === undefined ? "missing" : oneLine(String(JSON.stringify(u)), 60)

/**
 * What `recordFromSpec` reads a held Lease's unusable duration as: client-go's default lease duration
 * (15 s), so that a holder that writes a bad spec but keeps renewing is waited for, and one that stopped is
 * taken over.
 *
 * @internal
 */
export const fallbackLeaseDurationSeconds = 15

/**
 * The record of a Lease's spec, whatever the spec holds (kube-apiserver rejects the specs this reads
 * leniently; a spec written by other means or another server may still carry them): a holder that is not
 * a string is read as its JSON text; a held Lease's duration that is not a positive int32 (missing,
 * negative, a string) as `fallbackLeaseDurationSeconds`, a free one's as 0 unless it is a whole number;
 * transitions that are not a non-negative int32 as 0; times, strategy and preferred holder that are not
 * strings as absent. `specProblems` says what was read so.
 *
 * @internal
 */
export const recordFromSpec = (spec: LeaseSpec | undefined): LeaderElectionRecord => {
  const raw: Record<string, unknown> = { ...spec }
  const holder = raw.holderIdentity
  const holderIdentity = holder === undefined || holder === null
    ? ""
    : typeof holder === "string"
    ? holder
    : String(JSON.stringify(holder))
  const duration = raw.leaseDurationSeconds
  return {
    holderIdentity,
    leaseDurationSeconds: holderIdentity === ""
      ? (Number.isInteger(duration) ? duration as number : 0)
      : isPositiveInt32(duration)
      ? duration
      : fallbackLeaseDurationSeconds,
    acquireTime: optionalString(raw.acquireTime),
    renewTime: optionalString(raw.renewTime),
    leaseTransitions: isNonNegativeInt32(raw.leaseTransitions) ? raw.leaseTransitions : 0,
    strategy: optionalString(raw.strategy),
    preferredHolder: optionalString(raw.preferredHolder)
  }
}

/**
 * What a Lease's spec holds that `recordFromSpec` cannot use as is, each with how it is read (none for a
 * spec kube-apiserver accepts, but a held Lease without a duration).
 *
 * @internal
 */
export const specProblems = (spec: LeaseSpec | undefined): ReadonlyArray<string> => {
  const raw: Record<string, unknown> = { ...spec }
  const problems: Array<string> = []
  const holder = raw.holderIdentity
  const held = holder !== undefined && holder !== null && holder !== ""
  if (held && typeof holder !== "string") {
    problems.push(
      `holderIdentity ${show(holder)} is not a string: read as the holder ${show(String(JSON.stringify(holder)))}`
    )
  }
  if (held && !isPositiveInt32(raw.leaseDurationSeconds)) {
    problems.push(
      `leaseDurationSeconds ${
        show(raw.leaseDurationSeconds)
      } is not a positive whole number of seconds: read as ${fallbackLeaseDurationSeconds}`
    )
  }
  if (
    raw.leaseTransitions !== undefined && raw.leaseTransitions !== null && !isNonNegativeInt32(raw.leaseTransitions)
  ) {
    problems.push(`leaseTransitions ${show(raw.leaseTransitions)} is not a non-negative whole number: read as 0`)
  }
  for (const field of ["acquireTime", "renewTime", "strategy", "preferredHolder"] as const) {
    const value = raw[field]
    if (value !== undefined && value !== null && typeof value !== "string") {
      problems.push(`${field} ${show(value)} is not a string: ignored`)
    }
  }
  return problems
}

/** A Lease's spec and resourceVersion, read by `recordFromSpec`, with its `specProblems` when it has any. @internal */
export const versionedFromSpec = (spec: LeaseSpec | undefined, resourceVersion: string): VersionedRecord => {
  const problems = specProblems(spec)
  return problems.length === 0
    ? { record: recordFromSpec(spec), resourceVersion }
    : { record: recordFromSpec(spec), resourceVersion, problems }
}

/** @internal */
export const recordToSpec = (record: LeaderElectionRecord): WrittenLeaseSpec => {
  const spec: {
    holderIdentity: string
    leaseDurationSeconds: number
    leaseTransitions: number
    acquireTime?: string
    renewTime?: string
    strategy?: string
    preferredHolder?: string
  } = {
    holderIdentity: record.holderIdentity,
    leaseDurationSeconds: record.leaseDurationSeconds,
    leaseTransitions: record.leaseTransitions
  }
  if (record.acquireTime !== undefined) spec.acquireTime = record.acquireTime
  if (record.renewTime !== undefined) spec.renewTime = record.renewTime
  // as client-go: written only when set
  if (record.strategy !== undefined && record.strategy !== "") spec.strategy = record.strategy
  if (record.preferredHolder !== undefined && record.preferredHolder !== "") {
    spec.preferredHolder = record.preferredHolder
  }
  return spec
}

/** RFC 3339 with microseconds, in UTC (`metav1.MicroTime`'s wire form), from nanoseconds since the epoch. @internal */
export const formatMicroTime = (epochNanos: bigint): string => {
  const micros = epochNanos / 1000n
  const millis = micros / 1000n
  const iso = new Date(Number(millis)).toISOString() // YYYY-MM-DDTHH:MM:SS.mmmZ
  const fraction = (micros - millis * 1000n + 1000n).toString().slice(1) // the three digits after the millis
  return `${iso.slice(0, 23)}${fraction}Z`
}

// -------------------------------------------------------------------------------------------------
// configuration
// -------------------------------------------------------------------------------------------------

/** @internal */
export const defaultLeaseDuration: Duration.Duration = Duration.seconds(15)
/** @internal */
export const defaultRenewDeadline: Duration.Duration = Duration.seconds(10)
/** @internal */
export const defaultRetryPeriod: Duration.Duration = Duration.seconds(2)
/** @internal */
export const defaultJitterFactor = 1.2

/** Options that fail validation; `LeaderElection` re-exports it. @internal */
export class InvalidConfigError extends Data.TaggedError("InvalidConfigError")<{ readonly message: string }> {}

const positive = (d: Duration.Duration) => Duration.isGreaterThan(d, Duration.zero)

/**
 * client-go's checks, in its order and with its messages, then this library's: the jitter factor is a
 * finite non-negative number, and the lease duration is a finite whole number of seconds (the Lease stores
 * `leaseDurationSeconds`, an integer: a fraction cut off would shorten the wait of the other replicas).
 *
 * @internal
 */
export const validateTiming = (options: TimingOptions): Result.Result<Timing, InvalidConfigError> => {
  const leaseDuration = Duration.fromInputUnsafe(options.leaseDuration ?? defaultLeaseDuration)
  const renewDeadline = Duration.fromInputUnsafe(options.renewDeadline ?? defaultRenewDeadline)
  const retryPeriod = Duration.fromInputUnsafe(options.retryPeriod ?? defaultRetryPeriod)
  const jitterFactor = options.jitterFactor ?? defaultJitterFactor
  const fail = (message: string) => Result.fail(new InvalidConfigError({ message }))
  if (Duration.isLessThanOrEqualTo(leaseDuration, renewDeadline)) {
    return fail("leaseDuration must be greater than renewDeadline")
  }
  if (
    Number.isFinite(jitterFactor) &&
    Duration.toMillis(renewDeadline) <= Duration.toMillis(retryPeriod) * jitterFactor
  ) {
    return fail("renewDeadline must be greater than retryPeriod*JitterFactor")
  }
  if (!positive(leaseDuration)) return fail("leaseDuration must be greater than zero")
  if (!positive(renewDeadline)) return fail("renewDeadline must be greater than zero")
  if (!positive(retryPeriod)) return fail("retryPeriod must be greater than zero")
  if (!Number.isFinite(jitterFactor) || jitterFactor < 0) return fail("jitterFactor must be a non-negative number")
  const leaseMillis = Duration.toMillis(leaseDuration)
  if (!Number.isFinite(leaseMillis) || leaseMillis % 1000 !== 0) {
    return fail("leaseDuration must be a whole number of seconds")
  }
  if (!Number.isFinite(Duration.toMillis(retryPeriod))) return fail("retryPeriod must be finite")
  return Result.succeed({ leaseDuration, renewDeadline, retryPeriod, jitterFactor })
}

// -------------------------------------------------------------------------------------------------
// the rules of an attempt
// -------------------------------------------------------------------------------------------------

/**
 * Whether the lease expired for the replica that made `observation`: its own time of the last change it
 * saw, plus the record's own `leaseDurationSeconds` (the holder's, not this replica's), is not after `now`.
 *
 * @internal
 */
export const isExpired = (observation: Observation, now: number): boolean =>
  observation.observedAt + observation.record.leaseDurationSeconds * 1000 <= now

/** The holder of a lease that is held and has not expired for this replica (it may be this replica). @internal */
export const validHolder = (observation: Option.Option<Observation>, now: number): Option.Option<string> =>
  Option.flatMap(
    observation,
    (o) => o.record.holderIdentity === "" || isExpired(o, now) ? Option.none() : Option.some(o.record.holderIdentity)
  )

/**
 * What the replica knows after reading `fetched` at `now`: the time of the observation moves only when the
 * record changed (any field); the resourceVersion is always the fetched one.
 *
 * @internal
 */
export const observe = (
  previous: Option.Option<Observation>,
  fetched: VersionedRecord,
  now: number
): Observation =>
  Option.isSome(previous) && sameRecord(previous.value.record, fetched.record)
    ? { record: fetched.record, resourceVersion: fetched.resourceVersion, observedAt: previous.value.observedAt }
    : { record: fetched.record, resourceVersion: fetched.resourceVersion, observedAt: now }

/** @internal */
export type Decision = Data.TaggedEnum<{
  /** Another replica holds a lease that has not expired: wait. */
  Wait: { readonly holder: string }
  /** The lease is free (never held, released) or expired: take it, one more transition. */
  Take: { readonly record: LeaderElectionRecord }
  /** This replica holds it (expired or not): renew it, keeping the acquire time and the transitions. */
  Renew: { readonly record: LeaderElectionRecord }
}>

/** @internal */
export const Decision = Data.taggedEnum<Decision>()

/** @internal */
export interface Stamp {
  /** The replica's time, milliseconds. */
  readonly now: number
  /** The same instant as a MicroTime, for the record. */
  readonly time: string
}

/** The record a replica creates when there is no Lease. @internal */
export const initialRecord = (identity: string, leaseDurationSeconds: number, stamp: Stamp): LeaderElectionRecord => ({
  holderIdentity: identity,
  leaseDurationSeconds,
  acquireTime: stamp.time,
  renewTime: stamp.time,
  leaseTransitions: 0
})

/**
 * client-go's steps 4 and 5 of `tryAcquireOrRenew`, on the record just observed: wait when another replica
 * holds a lease that has not expired for this one; otherwise write, keeping `strategy` and
 * `preferredHolder` as they are (client-go drops them).
 *
 * @internal
 */
export const decide = (
  identity: string,
  observation: Observation,
  leaseDurationSeconds: number,
  stamp: Stamp
): Decision => {
  const current = observation.record
  if (current.holderIdentity !== "" && current.holderIdentity !== identity && !isExpired(observation, stamp.now)) {
    return Decision.Wait({ holder: current.holderIdentity })
  }
  const base = {
    holderIdentity: identity,
    leaseDurationSeconds,
    renewTime: stamp.time,
    strategy: current.strategy,
    preferredHolder: current.preferredHolder
  }
  return current.holderIdentity === identity
    ? Decision.Renew({
      record: { ...base, acquireTime: current.acquireTime ?? stamp.time, leaseTransitions: current.leaseTransitions }
    })
    : Decision.Take({ record: { ...base, acquireTime: stamp.time, leaseTransitions: current.leaseTransitions + 1 } })
}

/**
 * The fast path of a renewal (step 1): when this replica observed itself as the holder of a lease that has
 * not expired, it writes over the resourceVersion it knows without reading first.
 *
 * @internal
 */
export const fastRenewal = (
  identity: string,
  observation: Option.Option<Observation>,
  leaseDurationSeconds: number,
  stamp: Stamp
): Option.Option<LeaderElectionRecord> =>
  Option.flatMap(observation, (o) =>
    o.record.holderIdentity === identity && !isExpired(o, stamp.now)
      ? Option.some({ ...o.record, leaseDurationSeconds, renewTime: stamp.time })
      : Option.none())

/**
 * The record `release` writes (client-go's `ReleaseOnCancel`): no holder, `leaseDurationSeconds` 1,
 * acquire and renew times now, the transitions kept.
 *
 * @internal
 */
export const releasedRecord = (current: LeaderElectionRecord, stamp: Stamp): LeaderElectionRecord => ({
  holderIdentity: "",
  leaseDurationSeconds: 1,
  acquireTime: stamp.time,
  renewTime: stamp.time,
  leaseTransitions: current.leaseTransitions,
  strategy: current.strategy,
  preferredHolder: current.preferredHolder
})

// -------------------------------------------------------------------------------------------------
// the waits
// -------------------------------------------------------------------------------------------------

/**
 * The pause between two acquire attempts: `retryPeriod · (1 + random · jitterFactor)`, `random` in [0, 1),
 * in whole milliseconds (rounded).
 *
 * @internal
 */
export const jitteredDelay = (retryPeriodMillis: number, jitterFactor: number, random: number): number =>
  Math.round(retryPeriodMillis * (1 + random * jitterFactor))

/** The longest one request to the lock may take: client-go's lock client timeout, max(1 s, renewDeadline / 2). @internal */
export const requestTimeout = (timing: Timing): number => Math.max(1000, Duration.toMillis(timing.renewDeadline) / 2)

/** @internal */
export type LeaderStep = Data.TaggedEnum<{
  /** Renew now, giving up after `timeout` milliseconds (what is left before the deadline). */
  Renew: { readonly timeout: number }
  /** The renew deadline ran out: stop the work and step down. */
  StepDown: {}
}>

/** @internal */
export const LeaderStep = Data.taggedEnum<LeaderStep>()

/**
 * What a leader does when it wakes at `now`, the last successful write having been sent at `renewedAt`:
 * renew, within what is left before `renewedAt + renewDeadline`, or step down when nothing is left.
 *
 * @internal
 */
export const leaderStep = (now: number, renewedAt: number, timing: Timing): LeaderStep => {
  const left = renewedAt + Duration.toMillis(timing.renewDeadline) - now
  return left <= 0 ? LeaderStep.StepDown() : LeaderStep.Renew({ timeout: left })
}

/** How long a leader sleeps after an attempt ended at `now`: `retryPeriod`, cut at the renew deadline. @internal */
export const leaderSleep = (now: number, renewedAt: number, timing: Timing): number =>
  Math.max(
    0,
    Math.min(Duration.toMillis(timing.retryPeriod), renewedAt + Duration.toMillis(timing.renewDeadline) - now)
  )

// -------------------------------------------------------------------------------------------------
// the state machine
// -------------------------------------------------------------------------------------------------

/** Constructors and matchers of `LeaderElection.State`. @internal */
export const State = Data.taggedEnum<LE.State>()

/** Constructors and matchers of `LeaderElection.Event`. @internal */
export const Event = Data.taggedEnum<LE.Event>()

/**
 * Whether two states are the same state: the same tag and the same fields (`leader`, `term`, `reason`).
 * What `changes` drops repeats by, stated rather than left to `Equal.equals`. @internal
 */
export const sameState = (a: LE.State, b: LE.State): boolean => {
  if (a === b) return true
  switch (a._tag) {
    case "Following":
      return b._tag === "Following" && a.leader === b.leader
    case "Leading":
      return b._tag === "Leading" && a.term === b.term
    case "SteppingDown":
      return b._tag === "SteppingDown" && a.term === b.term && a.reason === b.reason
    default:
      return a._tag === b._tag
  }
}

/** The next state; an event that does not apply to a state leaves it as it is. @internal */
export const transition = (state: LE.State, event: LE.Event): LE.State => {
  switch (state._tag) {
    case "Acquiring":
    case "Following":
      switch (event._tag) {
        case "Observed":
          return Option.match(event.leader, {
            onNone: () => State.Acquiring(),
            onSome: (leader) => State.Following({ leader })
          })
        case "Acquired":
          return State.Leading({ term: event.term })
        case "Failed":
          return State.Acquiring()
        case "ShutdownStarted":
          return State.Releasing()
        default:
          return state
      }
    case "Leading":
      switch (event._tag) {
        case "DeadlineReached":
          return State.SteppingDown({ term: state.term, reason: "RenewDeadline" })
        case "LeaseLost":
          return State.SteppingDown({ term: state.term, reason: "LeaseLost" })
        case "Failed":
          return State.SteppingDown({ term: state.term, reason: "Failure" })
        case "ShutdownStarted":
          return State.SteppingDown({ term: state.term, reason: "Shutdown" })
        default:
          return state
      }
    case "SteppingDown":
      switch (event._tag) {
        case "WorkStopped":
          return state.reason === "Shutdown" ? State.Releasing() : State.Acquiring()
        case "ShutdownStarted":
          return State.SteppingDown({ term: state.term, reason: "Shutdown" })
        default:
          return state
      }
    case "Releasing":
      return event._tag === "Released" ? State.Stopped() : state
    case "Stopped":
      return state
  }
}

/**
 * Terms: the time during which work may write to the cluster on behalf of a leadership or an ownership,
 * and the check that stops a write sent after it ended (fencing by the local clock).
 *
 * - A `Term` has a name, a synchronous `check(nowMillis)` (a `TermError` once the term is no longer valid,
 *   `undefined` while it is) and `end(error)`, which ends it: the one who granted it (an elector, a shard
 *   member) stops its work at once. A term that failed a check has ended, for good.
 * - `LeaderElection`'s `whileLeading(work)` runs `work` within a term that is valid while the last
 *   successful renewal of the Lease was sent less than `renewDeadline` ago, by this process's monotonic
 *   clock, and while no one else took the Lease; `Sharding`'s `whileOwned(key, work)` within a term that is
 *   valid while the membership is (likewise) and the key is still this member's.
 * - The current terms are a `Context.Reference` (`currentTerms`, outermost first: work of a shard inside a leader's
 *   term is in both); fibers forked within a term inherit it. `check` reads it and the `Clock` in one
 *   synchronous step: a stale term fails with `TermError` and ends.
 * - The library's `Client` checks before every write it sends (`POST`, `PUT`, `PATCH`, `DELETE`), after the
 *   rate limiter's wait, in the same step as the request is handed to the HTTP client: a write of a stale
 *   term fails with `TermError` and is not sent. A Controller's workers check before each key they take.
 *   Reads are not checked. Code that acts on the world by other means calls `check` before it does.
 *
 * What is guaranteed, and what is not (the clock's rate, a request already on the wire), is in
 * docs/REPLICAS.md.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Term } from "effect-informers"
 *
 * declare const sendEmail: Effect.Effect<void>
 *
 * // inside whileLeading / whileOwned: nothing is sent once the term is stale
 * const notify = Effect.andThen(Term.check, sendEmail)
 * ```
 *
 * @since 0.2.0
 */
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import { dual } from "effect/Function"
import * as Predicate from "effect/Predicate"

// -------------------------------------------------------------------------------------------------
// errors
// -------------------------------------------------------------------------------------------------

/**
 * Why a term is no longer valid:
 * - `DeadlinePassed`: the last successful renewal (of the Lease, of the membership) was sent at least the
 *   renew deadline ago, by the local monotonic clock (a process paused, a server that does not answer);
 * - `LeaseLost`: the Lease is held by someone else, or was deleted;
 * - `NotOwned`: the key is no longer this shard member's;
 * - `Ended`: the term ended (stepped down, the work's scope closed).
 *
 * @since 0.2.0
 * @category errors
 */
export type TermErrorReason = "DeadlinePassed" | "LeaseLost" | "NotOwned" | "Ended"

const reasonText: Record<TermErrorReason, string> = {
  DeadlinePassed: "the renew deadline passed since the last successful renewal",
  LeaseLost: "the lease is no longer held by this replica",
  NotOwned: "the key is no longer owned by this member",
  Ended: "the term ended"
}

/**
 * @since 0.2.0
 * @category type ids
 */
export const TypeId: unique symbol = Symbol.for("effect-informers/Term/TermError")

/**
 * @since 0.2.0
 * @category type ids
 */
export type TypeId = typeof TypeId

/**
 * Work of a term that is no longer valid tried to act (a write of the `Client`, a `check`): it was not
 * done. `term` names the term, `detail` says what was seen.
 *
 * @example
 * ```ts
 * import { Term } from "effect-informers"
 *
 * const error = new Term.TermError({ reason: "DeadlinePassed", term: "default/leader term 3 (replica-a)" })
 * console.log(error.message)
 * // "default/leader term 3 (replica-a): the renew deadline passed since the last successful renewal"
 * ```
 *
 * @since 0.2.0
 * @category errors
 */
export class TermError extends Data.TaggedError("TermError")<{
  readonly reason: TermErrorReason
  readonly term: string
  readonly detail?: string | undefined
}> {
  /**
   * @since 0.2.0
   */
  readonly [TypeId]: TypeId = TypeId

  /**
   * @since 0.2.0
   */
  override get message(): string {
    return `${this.term}: ${reasonText[this.reason]}${this.detail === undefined ? "" : ` (${this.detail})`}`
  }
}

/**
 * Whether a value is a `TermError`.
 *
 * @since 0.2.0
 * @category guards
 */
export const isTermError = (u: unknown): u is TermError => Predicate.hasProperty(u, TypeId)

// -------------------------------------------------------------------------------------------------
// the model
// -------------------------------------------------------------------------------------------------

/**
 * A term: `check(nowMillis)` is `undefined` while the term is valid at `nowMillis` (the monotonic
 * milliseconds of `nowMillis(clock)`), its error otherwise; `end(error)` ends it (idempotent), and work
 * running in it is stopped by the one who granted it. After `end`, `check` fails.
 *
 * @since 0.2.0
 * @category models
 */
export interface Term {
  readonly name: string
  readonly check: (nowMillis: number) => TermError | undefined
  readonly end: (error: TermError) => void
}

/**
 * A term of your own: `check` as given, ended for good at its first failure or at `end` (then `onEnd`
 * runs once, synchronously: it should stop the work running in the term).
 *
 * @example
 * ```ts
 * import { Term } from "effect-informers"
 *
 * const deadline = 60_000
 * const term = Term.make({
 *   name: "batch 7",
 *   check: (now) => now < deadline ? undefined : new Term.TermError({ reason: "DeadlinePassed", term: "batch 7" })
 * })
 * console.log(term.check(1_000)) // undefined
 * ```
 *
 * @since 0.2.0
 * @category constructors
 */
export const make = (options: {
  readonly name: string
  readonly check: (nowMillis: number) => TermError | undefined
  readonly onEnd?: ((error: TermError) => void) | undefined
}): Term => {
  let ended: TermError | undefined
  const end = (error: TermError) => {
    if (ended !== undefined) return
    ended = error
    options.onEnd?.(error)
  }
  return {
    name: options.name,
    check: (now) => {
      if (ended !== undefined) return ended
      const error = options.check(now)
      if (error !== undefined) end(error)
      return error
    },
    end
  }
}

// -------------------------------------------------------------------------------------------------
// the clock
// -------------------------------------------------------------------------------------------------

/**
 * The clock's monotonic time in milliseconds (from `monotonicTimeNanos`, which Effect's default Clock reads
 * from the process's monotonic clock; `TestClock`'s moves with its time): what terms are judged by, so that a
 * change of the wall clock neither extends nor shortens one.
 *
 * @since 0.2.0
 * @category clock
 */
export const nowMillis = (clock: Clock.Clock): number => Number(clock.monotonicTimeNanosUnsafe() / 1_000_000n)

/**
 * `nowMillis` of the `Clock` in the context.
 *
 * @since 0.2.0
 * @category clock
 */
export const currentMillis: Effect.Effect<number> = Effect.clockWith((clock) => Effect.sync(() => nowMillis(clock)))

// -------------------------------------------------------------------------------------------------
// the current terms
// -------------------------------------------------------------------------------------------------

const noTerms: ReadonlyArray<Term> = []

/**
 * The terms the current fiber works in, outermost first (none by default); inherited by forked fibers
 * (a `Context.Reference`: read it with `yield* Term.currentTerms`).
 *
 * @since 0.2.0
 * @category references
 */
export const currentTerms: Context.Reference<ReadonlyArray<Term>> = Context.Reference<ReadonlyArray<Term>>(
  "effect-informers/Term/currentTerms",
  { defaultValue: () => noTerms }
)

/**
 * Checks `terms` at `now`, outermost first: the error of the first that is not valid (which has ended),
 * or `undefined`. Synchronous: what the `Client` and the Controller's workers call.
 *
 * @since 0.2.0
 * @category checks
 */
export const unsafeCheck = (terms: ReadonlyArray<Term>, now: number): TermError | undefined => {
  for (let i = 0; i < terms.length; i++) {
    const term = terms[i]
    const error = term.check(now)
    if (error !== undefined) {
      term.end(error)
      return error
    }
  }
  return undefined
}

/**
 * Fails with `TermError` when a term the fiber works in is no longer valid by the `Clock` (and ends it);
 * succeeds at once outside any term. Reads the terms and the clock in one synchronous step: nothing runs
 * between the check and what follows it in the same fiber.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Term } from "effect-informers"
 *
 * declare const chargeCard: Effect.Effect<void>
 *
 * const charge = Term.check.pipe(Effect.andThen(chargeCard))
 * ```
 *
 * @since 0.2.0
 * @category checks
 */
export const check: Effect.Effect<void, TermError> = Effect.withFiber((fiber) => {
  const terms = fiber.getRef(currentTerms)
  if (terms.length === 0) return Effect.void
  const error = unsafeCheck(terms, nowMillis(fiber.getRef(Clock.Clock)))
  return error === undefined ? Effect.void : Effect.fail(error)
})

/**
 * Runs `self` within `term` (inside the terms it already runs in): its writes through the `Client`, its
 * `check`s and the fibers it forks are fenced by `term` too.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Term } from "effect-informers"
 *
 * const term = Term.make({ name: "demo", check: () => undefined })
 * const program = Term.check.pipe(Term.within(term))
 * ```
 *
 * @since 0.2.0
 * @category combinators
 */
export const within: {
  (term: Term): <A, E, R>(self: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
  <A, E, R>(self: Effect.Effect<A, E, R>, term: Term): Effect.Effect<A, E, R>
} = dual(
  2,
  <A, E, R>(self: Effect.Effect<A, E, R>, term: Term): Effect.Effect<A, E, R> =>
    Effect.updateService(self, currentTerms, (terms) => [...terms, term])
)

/**
 * Runs `self` outside of any term: what coordination itself does (a Lease renewal must be sent even when
 * the term it renews is stale).
 *
 * @since 0.2.0
 * @category combinators
 */
export const outside = <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.provideService(self, currentTerms, noTerms)

/**
 * The leader-election suite's fixtures: electors over a shared in-memory store, each in a scope of its own
 * (closed to shut one down), a timeline of what happened when (the Clock's time), and work that marks when
 * it starts and when its scope closes.
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as Scope from "effect/Scope"
import * as TestClock from "effect/testing/TestClock"
import * as LeaderElection from "../../../src/LeaderElection.js"

export interface Timeline {
  readonly entries: Array<{ readonly at: number; readonly what: string }>
  readonly mark: (what: string) => Effect.Effect<void>
  /** The time of the first entry that is `what`. */
  readonly at: (what: string) => number | undefined
  readonly whats: () => ReadonlyArray<string>
}

export const makeTimeline = Effect.sync((): Timeline => {
  const entries: Array<{ readonly at: number; readonly what: string }> = []
  return {
    entries,
    mark: (what) =>
      Effect.map(Clock.currentTimeMillis, (at) => {
        entries.push({ at, what })
      }),
    at: (what) => entries.find((entry) => entry.what === what)?.at,
    whats: () => entries.map((entry) => entry.what)
  }
})

/** Work that marks `<who> start` and, when its scope closes, `<who> stop`; runs until interrupted. */
export const markedWork = (timeline: Timeline, who: string) =>
  Effect.gen(function*() {
    yield* timeline.mark(`${who} start`)
    yield* Effect.addFinalizer(() => timeline.mark(`${who} stop`))
    return yield* Effect.never
  })

export interface Elector {
  readonly service: LeaderElection.LeaderElection.Service
  /** Closes the elector's scope (stops its work, releases unless `releaseOnCancel: false`). */
  readonly close: Effect.Effect<void>
}

/**
 * An elector named `identity` over the Lease `leader` of `leases`, calling as client `identity`, with the
 * default timings unless `options` says otherwise, in a scope of its own.
 */
export const startElector = (
  leases: LeaderElection.MemoryLeases,
  identity: string,
  options: Partial<LeaderElection.Options> = {}
): Effect.Effect<Elector> =>
  Effect.gen(function*() {
    const scope = yield* Scope.make()
    const service = yield* Effect.orDie(
      Scope.provide(
        LeaderElection.make({ lock: leases.lock("leader", { client: identity }), identity, ...options }),
        scope
      )
    )
    return { service, close: Scope.close(scope, Exit.void) }
  })

/** The record of the Lease `name` (it must exist). */
export const recordOf = (leases: LeaderElection.MemoryLeases, name = "leader") =>
  Effect.map(leases.read(name), (entry) => Option.getOrThrow(entry).record)

/** The verbs `client` used, in order, with the failed ones as `verb(reason)`. */
export const verbsOf = (leases: LeaderElection.MemoryLeases, client: string) =>
  Effect.map(
    leases.operations,
    (ops) =>
      ops.filter((op) => op.client === client).map((op) => op.outcome === "ok" ? op.verb : `${op.verb}(${op.outcome})`)
  )

/**
 * Lets forked fibers run at the current instant (a fiber forked just before has not started yet: TestClock's
 * `adjust` alone does not wait for it, a yield does).
 */
export const settle = Effect.andThen(Effect.yieldNow, TestClock.adjust(0))

/**
 * Advances the TestClock by `millis` (sleeps due meanwhile run in time order), in steps of `step` when a test
 * samples in between; `advance(0)` settles.
 */
export const advance = (millis: number, step = millis) =>
  millis <= 0 ? settle : Effect.gen(function*() {
    for (let t = 0; t < millis; t += step) yield* TestClock.adjust(Math.min(step, millis - t))
  })

/** A record as a test writes it for another holder. */
export const heldBy = (holder: string, leaseDurationSeconds = 15, leaseTransitions = 0) => ({
  holderIdentity: holder,
  leaseDurationSeconds,
  acquireTime: "2024-01-01T00:00:00.000000Z",
  renewTime: "2024-01-01T00:00:00.000000Z",
  leaseTransitions
})

/**
 * A sharding member: its own membership Lease held by a leader elector (one candidate: itself), a loop
 * listing the group's Leases into its view, and a publisher that recomputes the assignment whenever the
 * view, the election or the time changes it, stopping the work of keys it lost before it publishes.
 *
 * @internal
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Metric from "effect/Metric"
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"
import * as Result from "effect/Result"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as SubscriptionRef from "effect/SubscriptionRef"
import { Client } from "../../Client.js"
import type { MemoryLeases } from "../../LeaderElection.js"
import type { Assignment, AssignmentChange, Backend, Options, Sharding } from "../../Sharding.js"
import * as Term from "../../Term.js"
import { tagged } from "../metricTags.js"
import { makeElector } from "./leaderElection.js"
import type { InvalidConfigError } from "./leaderElectionPolicy.js"
import type { Labels } from "./leaseLock.js"
import { clientList, makeClientLock } from "./leaseLock.js"
import * as metrics from "./metrics.js"
import {
  assignmentAt,
  emptyView,
  groupLabel,
  makeAssignment,
  nextChangeAt,
  observeList,
  ownerOf,
  owns,
  sameAssignment,
  validate,
  viewTimeout
} from "./shardingPolicy.js"

// -------------------------------------------------------------------------------------------------
// backends
// -------------------------------------------------------------------------------------------------

/** @internal */
export const clientBackend = (namespace: string): Effect.Effect<Backend, never, Client> =>
  Effect.map(Client, (client) => ({
    describe: namespace,
    lock: (name, labels) => makeClientLock(client, { namespace, name, labels }),
    list: (labels) => clientList(client, namespace, labels)
  }))

/** @internal */
export const memoryBackend = (leases: MemoryLeases, client?: string): Backend => ({
  describe: "memory",
  lock: (name, labels) => leases.lock(name, { client, labels }),
  list: (labels) => leases.list(labels, { client })
})

// -------------------------------------------------------------------------------------------------
// the service
// -------------------------------------------------------------------------------------------------

interface Running {
  readonly key: string
  fiber: Fiber.Fiber<unknown, unknown> | undefined
  lost: boolean
}

/** @internal */
export const make = (options: Options): Effect.Effect<Sharding.Service, InvalidConfigError, Scope.Scope> =>
  Effect.gen(function*() {
    const timing = yield* Effect.fromResult(validate(options))
    const { backend, group, identity } = options
    const labels: Labels = { [groupLabel]: group }
    const annotations = { package: "effect-informers", module: "Sharding", group, identity }
    // the membership Lease: an election with one candidate, released when the scope closes (its
    // finalizer registered first, so it runs last: after the work stopped)
    const elector = yield* makeElector({
      lock: backend.lock(identity, labels),
      identity,
      name: `${group}/${identity}`,
      leaseDuration: timing.leaseDuration,
      renewDeadline: timing.renewDeadline,
      retryPeriod: timing.retryPeriod,
      jitterFactor: timing.jitterFactor
    })
    const election = elector.service
    const members = tagged(metrics.shardMembers, { group })
    const active = tagged(metrics.shardActive, { group, identity })
    const changesMetric = tagged(metrics.shardAssignmentChanges, { group })
    const interrupted = tagged(metrics.shardInterruptions, { group })
    yield* Metric.update(active, 0)

    let view = emptyView(identity)
    let leaving = false
    // times are the monotonic clock's (`Term.nowMillis`), as the election's and the fences'
    const now = Term.currentMillis
    const assignmentNow = Effect.zipWith(
      election.state,
      now,
      (state, at) => assignmentAt(view, state, leaving, at, timing)
    )
    const published = yield* SubscriptionRef.make(makeAssignment(identity, "NotMember", []))
    const running = new Set<Running>()
    const wake = yield* Queue.sliding<void>(1)

    /** Publishes the assignment of now, after stopping the work of the keys it takes away. */
    const publish = Effect.gen(function*() {
      const next = yield* assignmentNow
      const previous = yield* SubscriptionRef.get(published)
      if (sameAssignment(previous, next)) return
      const losing = [...running].filter((r) => !r.lost && !owns(next, r.key))
      for (const r of losing) r.lost = true
      yield* Effect.forEach(losing, (r) => r.fiber === undefined ? Effect.void : Fiber.interrupt(r.fiber), {
        concurrency: "unbounded",
        discard: true
      })
      if (losing.length > 0) yield* Metric.update(interrupted, losing.length)
      yield* SubscriptionRef.set(published, next)
      yield* Metric.update(changesMetric, 1)
      yield* Metric.update(members, next.members.length)
      yield* Metric.update(active, next.status === "Active" ? 1 : 0)
      if (previous.status !== next.status) {
        yield* Effect.logInfo(`${identity} is ${next.status} in shard group ${group} (${next.members.length} members)`)
      }
    })

    const publisher = Effect.gen(function*() {
      while (true) {
        yield* publish
        const at = yield* now
        const next = nextChangeAt(view, at, timing)
        const timer = Option.match(next, {
          onNone: () => Effect.never,
          onSome: (then) => Effect.sleep(Duration.millis(then - at))
        })
        yield* Effect.raceFirst(timer, Queue.take(wake))
      }
    })

    /** Completes when the election enters a term after `term`: the member lists at once to see itself. */
    const newTerm = (term: number) =>
      Stream.runHead(Stream.filter(election.changes, (state) => state._tag === "Leading" && state.term > term))

    const lister = Effect.gen(function*() {
      while (true) {
        const sentAt = yield* now
        const result = yield* Effect.result(
          Effect.timeoutOrElse(backend.list(labels), {
            duration: Duration.millis(viewTimeout(timing)),
            orElse: () => Effect.fail("no answer" as const)
          })
        )
        if (Result.isSuccess(result)) {
          const receivedAt = yield* now
          const current = yield* election.state
          view = observeList(
            view,
            result.success,
            sentAt,
            receivedAt,
            current._tag === "Leading" ? Option.some(current.term) : Option.none()
          )
          yield* Queue.offer(wake, undefined)
        } else {
          const reason = result.failure
          yield* Effect.logWarning(
            `${identity} could not list shard group ${group}: ${typeof reason === "string" ? reason : reason.message}`
          )
        }
        const state = yield* election.state
        yield* Effect.raceFirst(
          Effect.sleep(timing.retryPeriod),
          newTerm(state._tag === "Leading" || state._tag === "SteppingDown" ? state.term : 0)
        )
      }
    })

    const watcher = Stream.runForEach(election.changes, () => Queue.offer(wake, undefined))

    // on close: the loops stop first (forked after), then every key's work, then the election releases
    yield* Effect.addFinalizer(() =>
      Effect.suspend(() => {
        leaving = true
        return publish
      }).pipe(Effect.annotateLogs(annotations))
    )
    for (const loop of [publisher, lister, watcher]) {
      yield* loop.pipe(
        Effect.catchCause((cause) => Effect.logError("sharding loop failed; starting it again", cause)),
        Effect.andThen(Effect.sleep(timing.retryPeriod)),
        Effect.forever,
        Effect.annotateLogs(annotations),
        Effect.forkScoped,
        Effect.interruptible
      )
    }

    /**
     * Whether this member may still act for `key` at `at`: its membership term is valid (the last renewal
     * of its Lease sent less than the renew deadline ago, no one else took the Lease) and the assignment
     * of now gives it the key. A stale membership ends the membership's term too (the member steps down).
     */
    const ownership = (key: string, name: string, at: number): Term.TermError | undefined => {
      const membership = elector.currentTerm()
      if (membership === undefined) {
        return new Term.TermError({ reason: "NotOwned", term: name, detail: `${identity} is not a member` })
      }
      const stale = Term.unsafeCheck([membership], at)
      if (stale !== undefined) return new Term.TermError({ reason: stale.reason, term: name, detail: stale.message })
      if (!owns(assignmentAt(view, elector.stateUnsafe(), leaving, at, timing), key)) {
        return new Term.TermError({ reason: "NotOwned", term: name })
      }
      return undefined
    }

    const whileOwned = <A, E, R>(key: string, effect: Effect.Effect<A, E, R>): Effect.Effect<Option.Option<A>, E, R> =>
      Effect.gen(function*() {
        const entry: Running = { key, fiber: undefined, lost: false }
        const name = `${group}/${identity} key ${key}`
        // the work of the key runs in a term of its own, ended (the work interrupted) as soon as a check
        // finds the key gone or the membership stale
        const fence = Term.make({
          name,
          check: (at) => ownership(key, name, at),
          onEnd: () => {
            entry.lost = true
            // asynchronously, as a message to the fiber: `onEnd` runs inside whatever check ended the term
            const fiber = entry.fiber
            if (fiber !== undefined) fiber.currentDispatcher.scheduleTask(() => fiber.interruptUnsafe(), 0)
          }
        })
        if (Term.unsafeCheck([fence], yield* now) !== undefined) return Option.none()
        running.add(entry)
        const fiber = yield* Effect.forkChild(Term.within(Effect.interruptible(effect), fence))
        entry.fiber = fiber
        if (entry.lost) yield* Fiber.interrupt(fiber)
        const exit = yield* Fiber.await(fiber).pipe(
          Effect.onInterrupt(() => Fiber.interrupt(fiber)),
          Effect.ensuring(Effect.sync(() => running.delete(entry)))
        )
        if (Exit.isSuccess(exit)) return Option.some(exit.value)
        if (entry.lost && Exit.hasInterrupts(exit)) return Option.none()
        return yield* Effect.failCause(exit.cause)
      })

    return {
      identity,
      group,
      assignment: assignmentNow,
      // repeats dropped by `sameAssignment` (identity, status, members), stated rather than left to `Equal.equals`
      changes: SubscriptionRef.changes(published).pipe(
        Stream.changesWith(sameAssignment),
        Stream.mapAccum(
          () => Option.none<Assignment>(),
          (previous, current): [Option.Option<Assignment>, ReadonlyArray<AssignmentChange>] => [Option.some(current), [{
            previous,
            current
          }]]
        )
      ),
      owns: (key) => Effect.map(assignmentNow, (a) => owns(a, key)),
      ownerOf: (key) => Effect.map(assignmentNow, (a) => ownerOf(a.members, key)),
      members: Effect.map(assignmentNow, (a) => a.members),
      whileOwned,
      election
    }
  })

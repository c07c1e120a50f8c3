/**
 * Controller gated on leadership (warm standby): caches and queue on every replica, workers per term.
 */
import { assert, describe, it } from "@effect/vitest"
import type { Scope } from "effect"
import { Deferred, Effect, Stream, SubscriptionRef } from "effect"
import { TestClock } from "effect/testing"
import * as Controller from "../../src/Controller.js"
import { settle } from "../fixtures/index.js"
import { configMaps, eventually, obj, recorder, source } from "./fixtures.js"

/** An elector driven by the test: `lead(true)` starts a term, `lead(false)` ends it. */
const fakeElection = Effect.gen(function*() {
  const leading = yield* SubscriptionRef.make(false)
  return {
    lead: (value: boolean) => SubscriptionRef.set(leading, value),
    whileLeading: <A, E, R>(work: Effect.Effect<A, E, R>): Effect.Effect<never, E, Exclude<R, Scope.Scope>> =>
      SubscriptionRef.changes(leading).pipe(
        Stream.changes,
        Stream.switchMap((isLeader) => isLeader ? Stream.fromEffect(Effect.scoped(work)) : Stream.empty),
        Stream.runDrain,
        Effect.andThen(Effect.never)
      ) as never
  }
})

const quiet = Effect.gen(function*() {
  for (let i = 0; i < 30; i++) yield* settle
})

describe("Controller: leader election", () => {
  it.effect("a follower keeps its caches and queue warm and reconciles nothing; a leader reconciles the backlog", () =>
    Effect.gen(function*() {
      const cms = yield* source(configMaps, [obj("ns", "a"), obj("ns", "b")])
      const election = yield* fakeElection
      const r = recorder()
      const controller = yield* Controller.make({
        name: "gated",
        for: cms,
        leaderElection: election,
        reconcile: (request) => r.around(request, () => Effect.void)
      })
      yield* cms.fake.add(obj("ns", "c"))
      yield* quiet
      assert.strictEqual(r.seen.length, 0)
      assert.strictEqual(yield* controller.queue.len, 3, "the queue holds the keys for a future term")
      yield* election.lead(true)
      yield* eventually(() => r.seen.length === 3, "the backlog reconciled")
      yield* cms.fake.add(obj("ns", "d"))
      yield* eventually(() => r.seen.length === 4, "and new events")
    }))

  it.effect("stepping down: no new keys, the reconcile in progress gets stepDownTimeout then is interrupted; its key waits for the next term", () =>
    Effect.gen(function*() {
      const cms = yield* source(configMaps, [obj("ns", "slow")])
      const election = yield* fakeElection
      const r = recorder()
      const events: Array<string> = []
      const release = yield* Deferred.make<void>()
      const controller = yield* Controller.make({
        name: "stepping-down",
        for: cms,
        leaderElection: { ...election, stepDownTimeout: "2 seconds" },
        reconcile: (request) =>
          r.around(request, () =>
            request.name === "slow" && r.count(request.key) === 1
              ? Deferred.await(release).pipe(
                Effect.onInterrupt(() => Effect.sync(() => void events.push("interrupted")))
              )
              : Effect.sync(() => void events.push(`reconciled ${request.name}`)))
      })
      yield* election.lead(true)
      yield* eventually(() => r.seen.length === 1, "the first term's reconcile")
      yield* election.lead(false)
      yield* quiet // the term's end has begun (its wait is registered with the clock)
      yield* TestClock.adjust("1999 millis")
      assert.deepStrictEqual(events, [])
      yield* cms.fake.add(obj("ns", "other"))
      yield* TestClock.adjust("1 millis")
      yield* eventually(() => events.length === 1, "the interruption")
      assert.deepStrictEqual(events, ["interrupted"])
      yield* quiet
      assert.strictEqual(r.seen.length, 1, "nothing taken after the term ended")
      yield* election.lead(true)
      yield* eventually(() => r.count("ns/slow") === 2 && r.count("ns/other") === 1, "the next term")
      assert.includeMembers(events, ["reconciled slow", "reconciled other"])
      assert.strictEqual(yield* controller.active, 0, "the interrupted reconcile is not counted as running")
    }))
})

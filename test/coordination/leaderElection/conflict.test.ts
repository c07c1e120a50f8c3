/**
 * Conflicting updates: two candidates on one in-memory Lease. Both create at the same instant (one gets
 * AlreadyExists), both take an expired Lease over the same resourceVersion (one gets a Conflict): one
 * leader, one transition, the loser follows.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as LeaderElection from "../../../src/LeaderElection.js"
import { withRandomFixed } from "../../fixtures/random.js"
import { advance, heldBy, makeTimeline, markedWork, recordOf, settle, startElector, verbsOf } from "./fixtures.js"

describe("LeaderElection: two candidates, one Lease", () => {
  it.effect("both create at once: one leads, the other got AlreadyExists and follows it", () =>
    Effect.gen(function*() {
      const leases = yield* LeaderElection.makeMemoryLeases
      // each create is applied 100 ms after it is sent, so both read "no Lease" first
      yield* leases.setLatency("a", "100 millis")
      yield* leases.setLatency("b", "100 millis")
      const a = yield* startElector(leases, "a")
      const b = yield* startElector(leases, "b")
      yield* advance(2500)
      const leaders = [(yield* a.service.isLeader) ? "a" : undefined, (yield* b.service.isLeader) ? "b" : undefined]
        .filter((x) => x !== undefined)
      assert.deepStrictEqual(leaders, ["a"])
      assert.deepStrictEqual((yield* verbsOf(leases, "b")).slice(0, 2), ["get", "create(AlreadyExists)"])
      assert.deepStrictEqual(yield* b.service.state, LeaderElection.State.Following({ leader: "a" }))
    }).pipe(withRandomFixed([0])))

  it.effect("both take an expired Lease over the same resourceVersion: one wins, the other gets a Conflict", () =>
    Effect.gen(function*() {
      const timeline = yield* makeTimeline
      const leases = yield* LeaderElection.makeMemoryLeases
      yield* leases.write("leader", heldBy("bing", 3, 5))
      yield* leases.setLatency("a", "100 millis")
      yield* leases.setLatency("b", "100 millis")
      const a = yield* startElector(leases, "a", { retryPeriod: "3 seconds" })
      const b = yield* startElector(leases, "b", { retryPeriod: "3 seconds" })
      yield* Effect.forkScoped(a.service.whileLeading(markedWork(timeline, "a")))
      yield* Effect.forkScoped(b.service.whileLeading(markedWork(timeline, "b")))
      // attempts at 0 and 3 s (taken at 3.2 s); the loser learns who won at its next read, at 6.1 s
      yield* advance(4000)
      const loser = (yield* a.service.isLeader) ? "b" : "a"
      assert.deepStrictEqual(yield* (loser === "a" ? a : b).service.state, LeaderElection.State.Acquiring())
      yield* advance(3000)
      const states = [yield* a.service.state, yield* b.service.state].map((s) => s._tag).sort()
      assert.deepStrictEqual(states, ["Following", "Leading"])
      assert.include(yield* verbsOf(leases, loser), "update(Conflict)")
      const record = yield* recordOf(leases)
      assert.strictEqual(record.leaseTransitions, 6)
      assert.strictEqual(record.holderIdentity, loser === "a" ? "b" : "a")
      assert.deepStrictEqual(timeline.whats(), [`${record.holderIdentity} start`])
    }).pipe(withRandomFixed([0])))

  it.effect("many attempts of three candidates over a minute: never two holders, the Lease taken once", () =>
    Effect.gen(function*() {
      const timeline = yield* makeTimeline
      const leases = yield* LeaderElection.makeMemoryLeases
      const names = ["a", "b", "c"]
      for (const name of names) {
        yield* leases.setLatency(name, "50 millis")
        const elector = yield* startElector(leases, name)
        yield* Effect.forkScoped(elector.service.whileLeading(markedWork(timeline, name)))
      }
      yield* settle
      yield* advance(60_000)
      assert.strictEqual(timeline.entries.length, 1)
      assert.strictEqual((yield* recordOf(leases)).leaseTransitions, 0)
    }).pipe(withRandomFixed([0, 0.3, 0.7, 0.2, 0.9])))
})

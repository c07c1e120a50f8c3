/**
 * Renewing: the fast path (no read), the slow path after a conflict (client-go's statement: get, create,
 * update, update(409), get, update, update), and the renew deadline: a leader whose renewals fail steps
 * down exactly `renewDeadline` after it sent its last successful write, its work stopped then, and
 * campaigns again.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as LeaderElection from "../../../src/LeaderElection.js"
import { withRandomFixed } from "../../fixtures/random.js"
import { advance, makeTimeline, markedWork, recordOf, settle, startElector, verbsOf } from "./fixtures.js"

describe("LeaderElection: renewing", () => {
  it.effect("the fast path: two renewals without a read (get, create, update, update); times move, the rest is kept", () =>
    Effect.gen(function*() {
      const leases = yield* LeaderElection.makeMemoryLeases
      const { service } = yield* startElector(leases, "baz")
      yield* advance(4000)
      assert.deepStrictEqual(yield* verbsOf(leases, "baz"), ["get", "create", "update", "update"])
      const ops = yield* leases.operations
      assert.deepStrictEqual(ops.map((op) => op.at), [0, 0, 2000, 4000])
      const record = yield* recordOf(leases)
      assert.strictEqual(record.renewTime, "1970-01-01T00:00:04.000000Z")
      assert.strictEqual(record.acquireTime, "1970-01-01T00:00:00.000000Z")
      assert.strictEqual(record.leaseTransitions, 0)
      assert.deepStrictEqual(yield* service.state, LeaderElection.State.Leading({ term: 1 }))
    }).pipe(withRandomFixed([0])))

  it.effect("a conflict on the fast path: read, then renew over the fresh resourceVersion; leadership goes on", () =>
    Effect.gen(function*() {
      const leases = yield* LeaderElection.makeMemoryLeases
      const { service } = yield* startElector(leases, "baz")
      yield* advance(2000)
      yield* leases.failNext("baz", "update", "Conflict")
      yield* advance(4000)
      assert.deepStrictEqual(yield* verbsOf(leases, "baz"), [
        "get",
        "create",
        "update",
        "update(Conflict)",
        "get",
        "update",
        "update"
      ])
      assert.deepStrictEqual(yield* service.state, LeaderElection.State.Leading({ term: 1 }))
    }).pipe(withRandomFixed([0])))

  it.effect("renewals failing at once: the leader steps down at lastSent + renewDeadline, work stopped then", () =>
    Effect.gen(function*() {
      const timeline = yield* makeTimeline
      const leases = yield* LeaderElection.makeMemoryLeases
      const { service } = yield* startElector(leases, "baz")
      yield* Effect.forkScoped(service.whileLeading(markedWork(timeline, "baz")))
      yield* advance(2000) // renewed at 2 s: the last success
      yield* leases.partition("baz", "fail")
      yield* advance(9999)
      assert.isTrue(yield* service.isLeader)
      assert.deepStrictEqual(timeline.whats(), ["baz start"])
      yield* advance(1)
      assert.isFalse(yield* service.isLeader)
      assert.deepStrictEqual(timeline.entries, [{ at: 0, what: "baz start" }, { at: 12_000, what: "baz stop" }])
      // failed attempts at 4, 6, 8 and 10 s (each: the fast update, then a get), then the campaign's at 12 s
      assert.deepStrictEqual(
        (yield* leases.operations).filter((op) => op.outcome !== "ok").map((op) => `${op.verb}@${op.at}`),
        [4000, 6000, 8000, 10_000, 12_000].flatMap((at) => [`update@${at}`, `get@${at}`])
      )
      assert.deepStrictEqual(yield* service.state, LeaderElection.State.Acquiring())
    }).pipe(withRandomFixed([0])))

  it.effect("renewals that hang: each attempt is cut by its timeout and by the deadline; step down at 12 s", () =>
    Effect.gen(function*() {
      const timeline = yield* makeTimeline
      const leases = yield* LeaderElection.makeMemoryLeases
      const { service } = yield* startElector(leases, "baz")
      yield* Effect.forkScoped(service.whileLeading(markedWork(timeline, "baz")))
      yield* advance(3000)
      yield* leases.partition("baz", "hang")
      // the attempt at 4 s: its update gets no answer within 5 s (max(1 s, renewDeadline / 2)), then its read
      // hangs until the attempt is cut at the deadline
      yield* advance(8999)
      assert.isTrue(yield* service.isLeader)
      yield* advance(1)
      assert.isFalse(yield* service.isLeader)
      assert.strictEqual(timeline.at("baz stop"), 12_000)
    }).pipe(withRandomFixed([0])))

  it.effect("the deadline counts from when the last successful write was sent: renewals that land after 3 s keep the lease", () =>
    Effect.gen(function*() {
      const leases = yield* LeaderElection.makeMemoryLeases
      const { service } = yield* startElector(leases, "baz")
      yield* settle
      yield* leases.setLatency("baz", "3 seconds")
      yield* advance(60_000)
      assert.deepStrictEqual(yield* service.state, LeaderElection.State.Leading({ term: 1 }))
      // renewals every 2 s after the previous answer: sent at 2, 7, 12, ... and applied 3 s later
      const renewals = (yield* leases.operations).filter((op) => op.verb === "update").map((op) => op.at)
      assert.deepStrictEqual(renewals.slice(0, 3), [5000, 10_000, 15_000])
    }).pipe(withRandomFixed([0])))

  it.effect("after stepping down the replica campaigns; healed, it renews its own record: term 2, transitions kept", () =>
    Effect.gen(function*() {
      const timeline = yield* makeTimeline
      const leases = yield* LeaderElection.makeMemoryLeases
      const { service } = yield* startElector(leases, "baz")
      yield* Effect.forkScoped(service.whileLeading(markedWork(timeline, "baz")))
      yield* settle
      yield* leases.partition("baz", "fail")
      yield* advance(10_000)
      assert.isFalse(yield* service.isLeader)
      yield* leases.heal("baz")
      yield* advance(2000)
      assert.deepStrictEqual(yield* service.state, LeaderElection.State.Leading({ term: 2 }))
      assert.deepStrictEqual(timeline.whats(), ["baz start", "baz stop", "baz start"])
      const record = yield* recordOf(leases)
      assert.strictEqual(record.leaseTransitions, 0)
      assert.strictEqual(record.acquireTime, "1970-01-01T00:00:00.000000Z")
      assert.deepStrictEqual(yield* service.holder, Option.some("baz"))
    }).pipe(withRandomFixed([0])))

  it.effect("a Lease written by someone else ends the term at once (the watch), not at the next renewal", () =>
    Effect.gen(function*() {
      const timeline = yield* makeTimeline
      const leases = yield* LeaderElection.makeMemoryLeases
      const { service } = yield* startElector(leases, "baz")
      yield* Effect.forkScoped(service.whileLeading(markedWork(timeline, "baz")))
      yield* advance(1000)
      // someone else writes the Lease (an operator, a misconfigured replica)
      yield* leases.write("leader", {
        holderIdentity: "intruder",
        leaseDurationSeconds: 15,
        acquireTime: "2024-01-01T00:00:00.000000Z",
        renewTime: "2024-01-01T00:00:00.000000Z",
        leaseTransitions: 7
      })
      yield* settle
      assert.strictEqual(timeline.at("baz stop"), 1000)
      yield* advance(1000)
      assert.deepStrictEqual(yield* service.state, LeaderElection.State.Following({ leader: "intruder" }))
      // the campaign's first attempt at once: a read (the watch's change was observed: no fast renewal over the
      // resourceVersion it replaced, a write sure to fail)
      assert.deepStrictEqual(yield* verbsOf(leases, "baz"), ["get", "create", "get"])
    }).pipe(withRandomFixed([0])))
})

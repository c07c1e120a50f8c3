/**
 * A partitioned leader steps down before its lease can be taken: its work scope closes at the renew
 * deadline (10 s after it sent its last successful renewal), strictly before a candidate may take the Lease
 * (15 s after it saw that renewal), and it follows once healed. The same when the leader's writes land but
 * their answers are lost. Never two leaders' work at once.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as LeaderElection from "../../../src/LeaderElection.js"
import { withRandomFixed } from "../../fixtures/random.js"
import type { Timeline } from "./fixtures.js"
import { advance, makeTimeline, markedWork, recordOf, settle, startElector } from "./fixtures.js"

/** At every point of the timeline, at most one replica's work runs. */
const assertOneAtATime = (timeline: Timeline) => {
  const working = new Set<string>()
  for (const { at, what } of timeline.entries) {
    const [who, event] = what.split(" ")
    if (event === "start") {
      assert.deepStrictEqual([...working], [], `${who} started at ${at} while ${[...working].join(", ")} worked`)
      working.add(who)
    } else {
      working.delete(who)
    }
  }
}

describe("LeaderElection: a partitioned leader", () => {
  it.effect("steps down at its renew deadline, before the follower may take the Lease; healed, it follows", () =>
    Effect.gen(function*() {
      const timeline = yield* makeTimeline
      const leases = yield* LeaderElection.makeMemoryLeases
      const a = yield* startElector(leases, "a")
      yield* Effect.forkScoped(a.service.whileLeading(markedWork(timeline, "a")))
      yield* settle
      const b = yield* startElector(leases, "b")
      yield* Effect.forkScoped(b.service.whileLeading(markedWork(timeline, "b")))
      yield* advance(5000) // a renewed at 2 and 4 s
      yield* leases.partition("a", "hang")
      yield* advance(30_000)
      const aStop = timeline.at("a stop")!
      const bStart = timeline.at("b start")!
      assert.strictEqual(aStop, 14_000) // sent at 4 s + renewDeadline
      assert.isAbove(bStart, aStop)
      assert.isAtLeast(bStart - aStop, 5000) // leaseDuration - renewDeadline
      assert.deepStrictEqual(yield* b.service.state, LeaderElection.State.Leading({ term: 1 }))
      assert.deepStrictEqual(yield* a.service.state, LeaderElection.State.Acquiring())
      yield* leases.heal("a")
      // a request that hung stays unanswered until its attempt times out (5 s), then a retries
      yield* advance(10_000)
      assert.deepStrictEqual(yield* a.service.state, LeaderElection.State.Following({ leader: "b" }))
      assert.strictEqual((yield* recordOf(leases)).leaseTransitions, 1)
      assertOneAtATime(timeline)
    }).pipe(withRandomFixed([0])))

  it.effect("its writes land but the answers are lost: it steps down all the same, and the follower takes over after", () =>
    Effect.gen(function*() {
      const timeline = yield* makeTimeline
      const leases = yield* LeaderElection.makeMemoryLeases
      const a = yield* startElector(leases, "a")
      yield* Effect.forkScoped(a.service.whileLeading(markedWork(timeline, "a")))
      yield* settle
      const b = yield* startElector(leases, "b")
      yield* Effect.forkScoped(b.service.whileLeading(markedWork(timeline, "b")))
      yield* advance(3000)
      yield* leases.partition("a", "drop-responses")
      yield* advance(30_000)
      const ops = yield* leases.operations
      assert.isTrue(ops.some((op) => op.client === "a" && op.outcome === "lost" && op.verb === "update"))
      assert.strictEqual(timeline.at("a stop"), 12_000)
      assert.isAbove(timeline.at("b start")!, timeline.at("a stop")!)
      assertOneAtATime(timeline)
    }).pipe(withRandomFixed([0])))

  it.effect("a partition shorter than the renew deadline: the leader keeps leading, the follower never takes over", () =>
    Effect.gen(function*() {
      const timeline = yield* makeTimeline
      const leases = yield* LeaderElection.makeMemoryLeases
      const a = yield* startElector(leases, "a")
      yield* Effect.forkScoped(a.service.whileLeading(markedWork(timeline, "a")))
      yield* settle
      const b = yield* startElector(leases, "b")
      yield* advance(3000)
      yield* leases.partition("a", "fail")
      yield* advance(6000) // last success sent at 2 s: the deadline is at 12 s; the attempt at 10 s succeeds
      yield* leases.heal("a")
      yield* advance(30_000)
      assert.deepStrictEqual(yield* a.service.state, LeaderElection.State.Leading({ term: 1 }))
      assert.deepStrictEqual(yield* b.service.state, LeaderElection.State.Following({ leader: "a" }))
      assert.deepStrictEqual(timeline.whats(), ["a start"])
    }).pipe(withRandomFixed([0])))

  it.effect("the follower partitioned instead: it cannot take the Lease, and the leader goes on", () =>
    Effect.gen(function*() {
      const leases = yield* LeaderElection.makeMemoryLeases
      const a = yield* startElector(leases, "a")
      yield* settle
      const b = yield* startElector(leases, "b")
      yield* advance(3000)
      yield* leases.partition("b", "fail")
      yield* advance(60_000)
      assert.isTrue(yield* a.service.isLeader)
      assert.isFalse(yield* b.service.isLeader)
      // b saw a's lease before the partition; it still names a (it cannot read any more)
      assert.deepStrictEqual(yield* b.service.state, LeaderElection.State.Acquiring())
    }).pipe(withRandomFixed([0])))
})

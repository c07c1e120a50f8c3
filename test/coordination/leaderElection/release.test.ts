/**
 * Releasing on shutdown (client-go's `ReleaseOnCancel`, here the default): the work stops first, then the
 * Lease is read and written with no holder; a candidate takes it at its next attempt. A 409 on the release
 * is retried from a read; a renewal in flight when the scope closes lands first; a follower writes
 * nothing; without release, a candidate waits the lease duration.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as LeaderElection from "../../../src/LeaderElection.js"
import { withRandomFixed } from "../../fixtures/random.js"
import { advance, makeTimeline, markedWork, recordOf, settle, startElector, verbsOf } from "./fixtures.js"

describe("LeaderElection: releasing", () => {
  it.effect("closing the leader's scope: work stopped, then get + update with no holder, duration 1, transitions kept", () =>
    Effect.gen(function*() {
      const timeline = yield* makeTimeline
      const leases = yield* LeaderElection.makeMemoryLeases
      const a = yield* startElector(leases, "baz")
      let holderWhenWorkStopped = ""
      yield* Effect.forkScoped(a.service.whileLeading(
        Effect.gen(function*() {
          yield* timeline.mark("baz start")
          yield* Effect.addFinalizer(() =>
            Effect.flatMap(recordOf(leases), (record) =>
              Effect.sync(() => {
                holderWhenWorkStopped = record.holderIdentity
              }))
          )
          return yield* Effect.never
        })
      ))
      yield* advance(3000)
      yield* a.close
      assert.strictEqual(holderWhenWorkStopped, "baz")
      assert.deepStrictEqual(yield* verbsOf(leases, "baz"), ["get", "create", "update", "get", "update"])
      const record = yield* recordOf(leases)
      assert.deepStrictEqual(record, {
        holderIdentity: "",
        leaseDurationSeconds: 1,
        acquireTime: "1970-01-01T00:00:03.000000Z",
        renewTime: "1970-01-01T00:00:03.000000Z",
        leaseTransitions: 0,
        strategy: undefined,
        preferredHolder: undefined
      })
      assert.deepStrictEqual(yield* a.service.state, LeaderElection.State.Stopped())
      assert.deepStrictEqual(yield* a.service.holder, Option.none())
    }).pipe(withRandomFixed([0])))

  it.effect("a graceful shutdown hands over at the candidate's next attempt, one more transition", () =>
    Effect.gen(function*() {
      const timeline = yield* makeTimeline
      const leases = yield* LeaderElection.makeMemoryLeases
      const a = yield* startElector(leases, "a")
      yield* Effect.forkScoped(a.service.whileLeading(markedWork(timeline, "a")))
      yield* settle
      const b = yield* startElector(leases, "b")
      yield* Effect.forkScoped(b.service.whileLeading(markedWork(timeline, "b")))
      yield* advance(5000)
      assert.deepStrictEqual(yield* b.service.state, LeaderElection.State.Following({ leader: "a" }))
      yield* a.close // at 5 s; b tries at 0, 2, 4, 6 s
      yield* advance(1000)
      assert.deepStrictEqual(yield* b.service.state, LeaderElection.State.Leading({ term: 1 }))
      assert.deepStrictEqual(timeline.entries, [
        { at: 0, what: "a start" },
        { at: 5000, what: "a stop" },
        { at: 6000, what: "b start" }
      ])
      assert.strictEqual((yield* recordOf(leases)).leaseTransitions, 1)
    }).pipe(withRandomFixed([0])))

  it.effect("a 409 on the release update is retried from a read, and the release succeeds", () =>
    Effect.gen(function*() {
      const leases = yield* LeaderElection.makeMemoryLeases
      const a = yield* startElector(leases, "baz")
      yield* advance(1000)
      yield* leases.failNext("baz", "update", "Conflict")
      yield* a.close
      assert.deepStrictEqual(yield* verbsOf(leases, "baz"), [
        "get",
        "create",
        "get",
        "update(Conflict)",
        "get",
        "update"
      ])
      assert.strictEqual((yield* recordOf(leases)).holderIdentity, "")
    }).pipe(withRandomFixed([0])))

  it.effect("a renewal in flight when the scope closes lands; the release reads after it and then writes", () =>
    Effect.gen(function*() {
      const leases = yield* LeaderElection.makeMemoryLeases
      const a = yield* startElector(leases, "baz")
      yield* settle
      yield* leases.setLatency("baz", "1 second")
      yield* advance(2500) // the renewal sent at 2 s lands at 3 s
      const closing = yield* Effect.forkChild(a.close)
      yield* advance(3000)
      yield* Fiber.await(closing)
      const ops = (yield* leases.operations).map((op) => `${op.verb}@${op.at}`)
      assert.deepStrictEqual(ops, ["get@0", "create@0", "update@3000", "get@3500", "update@4500"])
      assert.strictEqual((yield* recordOf(leases)).holderIdentity, "")
    }).pipe(withRandomFixed([0])))

  it.effect("a follower's shutdown writes nothing", () =>
    Effect.gen(function*() {
      const leases = yield* LeaderElection.makeMemoryLeases
      yield* startElector(leases, "a")
      yield* settle
      const b = yield* startElector(leases, "b")
      yield* advance(3000)
      const before = yield* verbsOf(leases, "b")
      yield* b.close
      assert.deepStrictEqual(yield* verbsOf(leases, "b"), before)
      assert.deepStrictEqual(yield* b.service.state, LeaderElection.State.Stopped())
      assert.strictEqual((yield* recordOf(leases)).holderIdentity, "a")
    }).pipe(withRandomFixed([0])))

  it.effect("without release (releaseOnCancel false: a killed replica), the candidate waits the lease duration", () =>
    Effect.gen(function*() {
      const timeline = yield* makeTimeline
      const leases = yield* LeaderElection.makeMemoryLeases
      const a = yield* startElector(leases, "a", { releaseOnCancel: false })
      yield* Effect.forkScoped(a.service.whileLeading(markedWork(timeline, "a")))
      yield* settle
      const b = yield* startElector(leases, "b")
      yield* Effect.forkScoped(b.service.whileLeading(markedWork(timeline, "b")))
      yield* advance(4500) // a renewed at 2 and 4 s; b saw the record of 4 s at 4 s (or at 6 s)
      yield* a.close
      assert.strictEqual((yield* recordOf(leases)).holderIdentity, "a")
      yield* advance(15_000)
      assert.isFalse(yield* b.service.isLeader)
      yield* advance(6000)
      assert.isTrue(yield* b.service.isLeader)
      const start = timeline.at("b start")!
      // b's first sight of the last record was at 4 or 6 s: it takes over at the first attempt 15 s later
      assert.include([20_000, 22_000], start)
      assert.strictEqual(timeline.at("a stop"), 4500)
    }).pipe(withRandomFixed([0])))

  it.effect("a replica shut down after stepping down (partitioned) tries to release; the failure is logged, not raised", () =>
    Effect.gen(function*() {
      const leases = yield* LeaderElection.makeMemoryLeases
      const a = yield* startElector(leases, "a")
      yield* settle
      yield* leases.partition("a", "fail")
      yield* advance(11_000)
      assert.isFalse(yield* a.service.isLeader)
      yield* a.close
      assert.deepStrictEqual(yield* a.service.state, LeaderElection.State.Stopped())
      assert.strictEqual((yield* recordOf(leases)).holderIdentity, "a")
    }).pipe(withRandomFixed([0])))
})

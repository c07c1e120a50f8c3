/**
 * Acquiring a Lease, as client-go's leaderelection_test.go states it: from no Lease, from an empty or
 * released record, from another holder whose lease expired by local observation, not from one whose lease
 * has not, and a replica's own record renewed with its transitions kept. Jitter is 0 (a fixed Random), so
 * candidates try exactly every retry period.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as LeaderElection from "../../../src/LeaderElection.js"
import { withRandomFixed } from "../../fixtures/random.js"
import { advance, heldBy, recordOf, settle, startElector, verbsOf } from "./fixtures.js"

describe("LeaderElection: acquiring", () => {
  it.effect("no Lease: get (NotFound), create; the replica leads, holder baz, no transition", () =>
    Effect.gen(function*() {
      const leases = yield* LeaderElection.makeMemoryLeases
      const { service } = yield* startElector(leases, "baz")
      yield* settle
      assert.isTrue(yield* service.isLeader)
      assert.deepStrictEqual(yield* service.holder, Option.some("baz"))
      assert.deepStrictEqual(yield* service.state, LeaderElection.State.Leading({ term: 1 }))
      assert.deepStrictEqual(yield* verbsOf(leases, "baz"), ["get", "create"])
      const record = yield* recordOf(leases)
      assert.strictEqual(record.holderIdentity, "baz")
      assert.strictEqual(record.leaseDurationSeconds, 15)
      assert.strictEqual(record.leaseTransitions, 0)
      assert.strictEqual(record.acquireTime, "1970-01-01T00:00:00.000000Z")
      assert.strictEqual(record.renewTime, record.acquireTime)
    }).pipe(withRandomFixed([0])))

  it.effect("a Lease with an empty spec: taken at once, one transition", () =>
    Effect.gen(function*() {
      const leases = yield* LeaderElection.makeMemoryLeases
      yield* leases.write("leader", LeaderElection.recordFromSpec({}))
      const { service } = yield* startElector(leases, "baz")
      yield* settle
      assert.isTrue(yield* service.isLeader)
      assert.deepStrictEqual(yield* verbsOf(leases, "baz"), ["get", "update"])
      const record = yield* recordOf(leases)
      assert.strictEqual(record.holderIdentity, "baz")
      assert.strictEqual(record.leaseTransitions, 1)
    }).pipe(withRandomFixed([0])))

  it.effect("a released record (no holder), even one just written: taken at once, one more transition", () =>
    Effect.gen(function*() {
      const leases = yield* LeaderElection.makeMemoryLeases
      yield* leases.write("leader", { ...heldBy("", 1, 4) })
      const { service } = yield* startElector(leases, "baz")
      yield* settle
      assert.isTrue(yield* service.isLeader)
      const record = yield* recordOf(leases)
      assert.strictEqual(record.holderIdentity, "baz")
      assert.strictEqual(record.leaseTransitions, 5)
      assert.strictEqual(record.leaseDurationSeconds, 15)
    }).pipe(withRandomFixed([0])))

  it.effect("held by bing for 3 s: the first attempt fails (newly observed); 3 s later, unchanged, it is expired: get, get, update", () =>
    Effect.gen(function*() {
      const leases = yield* LeaderElection.makeMemoryLeases
      yield* leases.write("leader", heldBy("bing", 3))
      const { service } = yield* startElector(leases, "baz", { retryPeriod: "3 seconds" })
      yield* settle
      assert.isFalse(yield* service.isLeader)
      assert.deepStrictEqual(yield* service.state, LeaderElection.State.Following({ leader: "bing" }))
      assert.deepStrictEqual(yield* service.holder, Option.some("bing"))
      assert.deepStrictEqual(yield* verbsOf(leases, "baz"), ["get"])
      yield* advance(3000)
      assert.isTrue(yield* service.isLeader)
      assert.deepStrictEqual(yield* verbsOf(leases, "baz"), ["get", "get", "update"])
      const record = yield* recordOf(leases)
      assert.strictEqual(record.holderIdentity, "baz")
      assert.strictEqual(record.leaseTransitions, 1)
      assert.strictEqual(record.acquireTime, "1970-01-01T00:00:03.000000Z")
    }).pipe(withRandomFixed([0])))

  it.effect("held by bing, observed recently: not taken before 15 s of an unchanged record; taken at the first attempt after", () =>
    Effect.gen(function*() {
      const leases = yield* LeaderElection.makeMemoryLeases
      yield* leases.write("leader", heldBy("bing"))
      const { service } = yield* startElector(leases, "baz")
      yield* settle
      assert.deepStrictEqual(yield* verbsOf(leases, "baz"), ["get"])
      yield* advance(14_000)
      assert.isFalse(yield* service.isLeader)
      assert.deepStrictEqual(yield* service.holder, Option.some("bing"))
      assert.deepStrictEqual(yield* verbsOf(leases, "baz"), ["get", "get", "get", "get", "get", "get", "get", "get"])
      yield* advance(2000) // the attempt at 16 s
      assert.isTrue(yield* service.isLeader)
      assert.strictEqual((yield* recordOf(leases)).leaseTransitions, 1)
    }).pipe(withRandomFixed([0])))

  it.effect("the holder renewing resets the wait: a record that keeps changing is never taken", () =>
    Effect.gen(function*() {
      const leases = yield* LeaderElection.makeMemoryLeases
      yield* leases.write("leader", heldBy("bing"))
      const { service } = yield* startElector(leases, "baz")
      for (let i = 1; i <= 10; i++) {
        yield* advance(5000)
        yield* leases.write("leader", { ...heldBy("bing"), renewTime: `2024-01-01T00:00:${10 + i}.000000Z` })
      }
      assert.isFalse(yield* service.isLeader)
      assert.deepStrictEqual(yield* service.state, LeaderElection.State.Following({ leader: "bing" }))
    }).pipe(withRandomFixed([0])))

  it.effect("its own record (a previous run of the same identity): get, update; acquire time and transitions kept", () =>
    Effect.gen(function*() {
      const leases = yield* LeaderElection.makeMemoryLeases
      yield* leases.write("leader", heldBy("baz", 15, 3))
      const { service } = yield* startElector(leases, "baz")
      yield* settle
      assert.isTrue(yield* service.isLeader)
      assert.deepStrictEqual(yield* verbsOf(leases, "baz"), ["get", "update"])
      const record = yield* recordOf(leases)
      assert.strictEqual(record.leaseTransitions, 3)
      assert.strictEqual(record.acquireTime, "2024-01-01T00:00:00.000000Z")
      assert.strictEqual(record.renewTime, "1970-01-01T00:00:00.000000Z")
    }).pipe(withRandomFixed([0])))

  it.effect("jitter: a candidate waits retryPeriod · (1 + random · 1.2) between attempts", () =>
    Effect.gen(function*() {
      const leases = yield* LeaderElection.makeMemoryLeases
      yield* leases.write("leader", heldBy("bing", 60))
      yield* startElector(leases, "baz")
      yield* settle
      // random 0.5: 2 s · 1.6 = 3.2 s between attempts
      yield* advance(3100)
      assert.strictEqual((yield* verbsOf(leases, "baz")).length, 1)
      yield* advance(200)
      assert.strictEqual((yield* verbsOf(leases, "baz")).length, 2)
      const ops = yield* leases.operations
      assert.deepStrictEqual(ops.map((op) => op.at), [0, 3200])
    }).pipe(withRandomFixed([0.5])))
})

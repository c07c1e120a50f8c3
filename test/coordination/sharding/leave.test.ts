/**
 * Leaving and dying: a member whose scope closes stops its keys' work, then releases its Lease, and the
 * others take its keys at their next list; a member killed without release keeps its keys away from the
 * others until its Lease expired by their observation; a partitioned member stops its keys when its view
 * times out, before the others may take them.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as LeaderElection from "../../../src/LeaderElection.js"
import * as Sharding from "../../../src/Sharding.js"
import { withRandomFixed } from "../../fixtures/random.js"
import { advance, keys, makeTimeline, oneOwnerAtATime, owned, startMember, workOnGainedKeys } from "./fixtures.js"

const ownedBy = (member: string, members: ReadonlyArray<string>) =>
  keys.filter((key) => Option.contains(Sharding.ownerOf(members, key), member))

describe("Sharding: leaving, dying, partitions", () => {
  it.effect("leave: work stopped, Lease released, the keys taken at the others' next list", () =>
    Effect.gen(function*() {
      const timeline = yield* makeTimeline
      const leases = yield* LeaderElection.makeMemoryLeases
      const a = yield* startMember(leases, "a")
      const b = yield* startMember(leases, "b")
      yield* workOnGainedKeys(a, timeline)
      yield* workOnGainedKeys(b, timeline)
      yield* advance(20_000)
      const bKeys = ownedBy("b", ["a", "b"])
      assert.deepStrictEqual(yield* owned(b), bKeys)
      yield* advance(500)
      let leaseWhenWorkStopped = ""
      yield* Effect.forkScoped(b.service.whileOwned(
        bKeys[0],
        Effect.addFinalizer(() =>
          Effect.map(leases.read("b"), (entry) => {
            leaseWhenWorkStopped = Option.getOrThrow(entry).record.holderIdentity
          })
        ).pipe(Effect.andThen(Effect.never), Effect.scoped)
      ))
      yield* advance(0)
      yield* b.close // at 20.5 s
      assert.strictEqual(leaseWhenWorkStopped, "b")
      assert.strictEqual(Option.getOrThrow(yield* leases.read("b")).record.holderIdentity, "")
      assert.deepStrictEqual((yield* b.service.assignment).status, "Left")
      yield* advance(1500) // a lists at 22 s
      assert.deepStrictEqual(yield* owned(a), keys)
      for (const key of bKeys) {
        assert.strictEqual(timeline.at(`b ${key} stop`), 20_500)
        assert.strictEqual(timeline.entries.filter((e) => e.what === `a ${key} start`).pop()?.at, 22_000)
      }
      assert.deepStrictEqual(oneOwnerAtATime(timeline), [])
    }).pipe(withRandomFixed([0])))

  it.effect("death: the keys of a member killed without release are taken once its Lease expired for the others", () =>
    Effect.gen(function*() {
      const timeline = yield* makeTimeline
      const leases = yield* LeaderElection.makeMemoryLeases
      // b starts a second after a: a lists at even seconds, b renews at odd ones (no two requests at one
      // instant, whose order the TestClock does not promise)
      const a = yield* startMember(leases, "a")
      yield* workOnGainedKeys(a, timeline)
      yield* advance(1000)
      const b = yield* startMember(leases, "b")
      yield* workOnGainedKeys(b, timeline)
      yield* advance(19_500)
      const bKeys = ownedBy("b", ["a", "b"])
      // killed at 20.5 s: nothing it writes lands any more (its release neither)
      yield* leases.partition("b", "fail")
      yield* b.close
      // b's last renewal was at 19 s; a saw it at 20 s: a takes b's keys at its first list from 35 s on
      yield* advance(14_000)
      assert.deepStrictEqual(yield* a.service.members, ["a", "b"])
      assert.deepStrictEqual(yield* owned(a), keys.filter((key) => !bKeys.includes(key)))
      yield* advance(1000)
      assert.deepStrictEqual(yield* a.service.members, ["a"])
      assert.deepStrictEqual(yield* owned(a), keys)
      for (const key of bKeys) {
        const stop = timeline.at(`b ${key} stop`)!
        const start = timeline.entries.filter((e) => e.what === `a ${key} start`).pop()!.at
        assert.isAtLeast(start - stop, 14_000)
      }
      assert.deepStrictEqual(oneOwnerAtATime(timeline), [])
    }).pipe(withRandomFixed([0])))

  it.effect("a partitioned member stops its keys at its view timeout and renew deadline (5 s), long before the others take them", () =>
    Effect.gen(function*() {
      const timeline = yield* makeTimeline
      const leases = yield* LeaderElection.makeMemoryLeases
      const a = yield* startMember(leases, "a")
      const b = yield* startMember(leases, "b")
      yield* workOnGainedKeys(a, timeline)
      yield* workOnGainedKeys(b, timeline)
      yield* advance(20_500)
      const bKeys = ownedBy("b", ["a", "b"])
      yield* leases.partition("b", "hang")
      // b's last list and renewal were sent at 20 s: its view times out, and its renew deadline runs out, at 25 s
      yield* advance(4499)
      assert.deepStrictEqual(yield* owned(b), bKeys)
      yield* advance(1)
      assert.include(["Stale", "NotMember"], (yield* b.service.assignment).status)
      assert.deepStrictEqual(yield* owned(b), [])
      for (const key of bKeys) assert.strictEqual(timeline.at(`b ${key} stop`), 25_000)
      yield* advance(5000)
      assert.deepStrictEqual((yield* b.service.assignment).status, "NotMember")
      yield* advance(10_000)
      assert.deepStrictEqual(yield* owned(a), keys)
      for (const key of bKeys) {
        const start = timeline.entries.filter((e) => e.what === `a ${key} start`).pop()!.at
        assert.isAtLeast(start, 35_000)
      }
      // healed: b comes back, warms up again, and takes its keys back from a
      yield* leases.heal("b")
      yield* advance(30_000)
      assert.deepStrictEqual(yield* owned(b), bKeys)
      assert.deepStrictEqual(oneOwnerAtATime(timeline), [])
    }).pipe(withRandomFixed([0])))

  it.effect("a member that cannot list but still renews: it stops at the view timeout; the others never take its keys", () =>
    Effect.gen(function*() {
      const leases = yield* LeaderElection.makeMemoryLeases
      const a = yield* startMember(leases, "a")
      const b = yield* startMember(leases, "b")
      yield* advance(20_500)
      const bKeys = ownedBy("b", ["a", "b"])
      yield* leases.failNext("b", "list", "Failed", 1000)
      yield* advance(30_000)
      assert.deepStrictEqual((yield* b.service.assignment).status, "Stale")
      assert.deepStrictEqual(yield* owned(b), [])
      assert.deepStrictEqual(yield* owned(a), keys.filter((key) => !bKeys.includes(key)))
      assert.deepStrictEqual(yield* a.service.members, ["a", "b"])
    }).pipe(withRandomFixed([0])))
})

/**
 * Joining: a member takes keys only after it has seen itself a member for a whole lease duration; an
 * existing member stops the keys a newcomer outranks it for as soon as it sees the newcomer; the
 * newcomer starts them after its warm-up: old owner stopped strictly before the new owner started.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as LeaderElection from "../../../src/LeaderElection.js"
import * as Sharding from "../../../src/Sharding.js"
import { withRandomFixed } from "../../fixtures/random.js"
import {
  advance,
  keys,
  makeTimeline,
  oneOwnerAtATime,
  owned,
  settle,
  startMember,
  workOnGainedKeys
} from "./fixtures.js"

describe("Sharding: joining", () => {
  it.effect("a lone member warms up for a lease duration, then owns every key", () =>
    Effect.gen(function*() {
      const leases = yield* LeaderElection.makeMemoryLeases
      const a = yield* startMember(leases, "a")
      yield* settle
      const lease = yield* leases.read("a")
      assert.isTrue(lease._tag === "Some" && lease.value.labels[Sharding.groupLabel] === "g")
      assert.deepStrictEqual((yield* a.service.assignment).status, "WarmingUp")
      assert.deepStrictEqual(yield* a.service.members, ["a"])
      assert.deepStrictEqual(yield* owned(a), [])
      yield* advance(14_999)
      assert.deepStrictEqual(yield* owned(a), [])
      yield* advance(1)
      assert.deepStrictEqual((yield* a.service.assignment).status, "Active")
      assert.deepStrictEqual(yield* owned(a), keys)
    }).pipe(withRandomFixed([0])))

  it.effect("a newcomer: the old owner stops its keys when it sees it, the newcomer starts them a lease duration later", () =>
    Effect.gen(function*() {
      const timeline = yield* makeTimeline
      const leases = yield* LeaderElection.makeMemoryLeases
      const a = yield* startMember(leases, "a")
      yield* workOnGainedKeys(a, timeline)
      yield* advance(20_000)
      assert.deepStrictEqual(yield* owned(a), keys)
      const b = yield* startMember(leases, "b")
      yield* workOnGainedKeys(b, timeline)
      const joined = 20_000
      yield* advance(2000) // a lists every 2 s: it sees b by 22 s
      const bKeys = keys.filter((key) =>
        Sharding.ownerOf(["a", "b"], key)._tag === "Some" &&
        Sharding.ownerOf(["a", "b"], key).pipe((o) => o._tag === "Some" && o.value === "b")
      )
      assert.isAbove(bKeys.length, 0)
      assert.deepStrictEqual(yield* owned(a), keys.filter((key) => !bKeys.includes(key)))
      assert.deepStrictEqual(yield* owned(b), [])
      yield* advance(13_000)
      assert.deepStrictEqual(yield* owned(b), bKeys)
      for (const key of bKeys) {
        const stop = timeline.at(`a ${key} stop`)!
        const start = timeline.at(`b ${key} start`)!
        assert.isAtMost(stop, joined + 2000)
        assert.isAtLeast(start, joined + 15_000)
        assert.isAbove(start, stop)
      }
      assert.deepStrictEqual(oneOwnerAtATime(timeline), [])
    }).pipe(withRandomFixed([0])))
})

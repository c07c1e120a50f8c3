/**
 * Fencing of a shard's work (issue 22): `whileOwned(key, work)` runs `work` in a `Term` that is valid while
 * the membership is (its last renewal sent less than the renew deadline ago, its Lease not taken or
 * deleted) and the key is still the member's. A stale check ends the term: the work is interrupted and
 * the membership steps down at once; a membership Lease changed by someone else ends it at once.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"
import * as Result from "effect/Result"
import * as LeaderElection from "../../../src/LeaderElection.js"
import * as Term from "../../../src/Term.js"
import { withJumpClock } from "../../fixtures/clock.js"
import { withRandomFixed } from "../../fixtures/random.js"
import { advance, keys, makeTimeline, settle, startMember } from "./fixtures.js"

/**
 * Work that runs `Term.check` each time it is asked to, and says what came of it (before the interruption
 * that a failed check brings: the term's end interrupts the work).
 */
const checking = (asks: Queue.Queue<void>, results: Array<string>) =>
  Effect.forever(Effect.andThen(
    Queue.take(asks),
    Effect.flatMap(Effect.result(Term.check), (r) =>
      Effect.sync(() => void results.push(Result.isSuccess(r) ? "ok" : r.failure.reason))).pipe(Effect.uninterruptible)
  ))

describe("Sharding: fencing by the local clock", () => {
  it.effect("a member resumed past its renew deadline: the key's work fails its check, is interrupted, and the membership steps down at once", () =>
    withJumpClock((clock) =>
      Effect.gen(function*() {
        const leases = yield* LeaderElection.makeMemoryLeases
        const a = yield* startMember(leases, "a")
        yield* advance(15_000, 1000)
        const asks = yield* Queue.unbounded<void>()
        const results: Array<string> = []
        const work = yield* Effect.forkChild(a.service.whileOwned(keys[0], checking(asks, results)))
        yield* Queue.offer(asks, undefined)
        yield* settle
        assert.deepStrictEqual(results, ["ok"])
        // paused 6 s (the renew deadline is 5 s): the first check after resuming fails
        yield* clock.jump(6000)
        yield* Queue.offer(asks, undefined)
        yield* settle
        assert.deepStrictEqual(results, ["ok", "DeadlinePassed"])
        assert.deepStrictEqual(yield* Fiber.join(work), Option.none(), "the work was interrupted: the key is not its")
        const state = yield* a.service.election.state
        assert.notStrictEqual(state, LeaderElection.State.Leading({ term: 1 }))
        assert.isFalse(yield* a.service.owns(keys[0]))
        // and it does not run new work before it warmed up again in a new term
        assert.deepStrictEqual(yield* a.service.whileOwned(keys[0], Effect.void), Option.none())
      })
    ).pipe(withRandomFixed([0])))

  it.effect("a membership Lease written to another holder ends the key's work at once, not at the next renewal", () =>
    Effect.gen(function*() {
      const timeline = yield* makeTimeline
      const leases = yield* LeaderElection.makeMemoryLeases
      const a = yield* startMember(leases, "a")
      yield* advance(15_500, 500)
      const work = yield* Effect.forkChild(a.service.whileOwned(
        keys[0],
        Effect.gen(function*() {
          yield* timeline.mark("start")
          yield* Effect.addFinalizer(() => timeline.mark("stop"))
          return yield* Effect.never
        }).pipe(Effect.scoped)
      ))
      yield* settle
      const own = Option.getOrThrow(yield* leases.read("a"))
      yield* leases.write("a", { ...own.record, holderIdentity: "intruder" })
      yield* settle
      assert.deepStrictEqual(timeline.entries, [{ at: 15_500, what: "start" }, { at: 15_500, what: "stop" }])
      assert.deepStrictEqual(yield* Fiber.join(work), Option.none())
    }).pipe(withRandomFixed([0])))
})

/**
 * The Controller's workers check the leader's term before each key they take (issue 22): a key taken when
 * the term is stale (a leader resumed past its renew deadline) is not reconciled; the check ends the term,
 * the workers stop and the key goes back to the queue, to be reconciled once in the next term, after the
 * renewal.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import * as Controller from "../../src/Controller.js"
import * as LeaderElection from "../../src/LeaderElection.js"
import { withJumpClock } from "../fixtures/clock.js"
import { settle } from "../fixtures/index.js"
import { withRandomFixed } from "../fixtures/random.js"
import { configMaps, eventually, obj, recorder, source } from "./fixtures.js"

const timings = { leaseDuration: "5 seconds", renewDeadline: "3 seconds", retryPeriod: "1 second" } as const

describe("Controller: workers fenced by the leader's term", () => {
  it.effect("a resumed leader takes no key before it renewed: the key goes back to the queue and is reconciled once, in the next term", () =>
    withJumpClock((clock) =>
      Effect.gen(function*() {
        const cms = yield* source(configMaps, [obj("ns", "a")])
        const leases = yield* LeaderElection.makeMemoryLeases
        const election = yield* LeaderElection.make({
          lock: leases.lock("leader", { client: "r" }),
          identity: "r",
          ...timings
        })
        const r = recorder()
        const terms: Array<string> = []
        yield* Controller.make({
          name: "fenced",
          for: cms,
          leaderElection: election,
          reconcile: (request) =>
            r.around(request, () =>
              Effect.flatMap(election.state, (state) =>
                Effect.sync(() =>
                  void terms.push(`${request.name}: ${state._tag === "Leading" ? state.term : "-"}`)
                )))
        })
        yield* eventually(() =>
          r.seen.length === 1, "the first term's reconcile")
        assert.deepStrictEqual(terms, ["a: 1"])

        // paused 10 s: an event arrives before any timer fires
        yield* clock.jump(10_000)
        const before = (yield* leases.operations).length
        yield* cms.fake.add(obj("ns", "b"))
        yield* eventually(() =>
          r.seen.length === 2, "the key reconciled in the next term")
        for (let i = 0; i < 20; i++) yield* settle
        assert.deepStrictEqual(terms, ["a: 1", "b: 2"], "not in the stale term; once, in the next")
        assert.strictEqual(r.count("ns/b"), 1)
        // the renewal came first: the Lease was written after the pause, before b's reconcile
        const after = (yield* leases.operations).slice(before)
        assert.isTrue(after.some((op) => op.verb === "update" && op.outcome === "ok"), JSON.stringify(after))
        assert.deepStrictEqual(yield* election.state, LeaderElection.State.Leading({ term: 2 }))
        assert.isTrue(Option.isSome(yield* election.holder))
      })
    ).pipe(withRandomFixed([0])))
})

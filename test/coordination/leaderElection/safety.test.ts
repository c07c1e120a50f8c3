/**
 * Split brain, as a property: three candidates on one in-memory Lease through random partitions (failing,
 * hanging, answers lost), latencies, shutdowns with and without release and restarts, over two minutes of
 * TestClock. At every point of the timeline at most one replica's work runs, a takeover without release
 * comes at least leaseDuration − renewDeadline after the previous leader's work stopped, and the leases'
 * transitions only grow.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Arbitrary from "effect/Arbitrary"
import * as Effect from "effect/Effect"
import type * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as TestClock from "effect/testing/TestClock"
import * as LeaderElection from "../../../src/LeaderElection.js"
import * as Gen from "../../fixtures/arbitrary.js"
import { withRandomFixed } from "../../fixtures/random.js"
import type { Elector } from "./fixtures.js"
import { makeTimeline, markedWork, settle, startElector } from "./fixtures.js"

const names = ["a", "b", "c"] as const
type Name = typeof names[number]

type Step =
  | { readonly _tag: "partition"; readonly who: Name; readonly mode: LeaderElection.PartitionMode }
  | { readonly _tag: "heal"; readonly who: Name }
  | { readonly _tag: "latency"; readonly who: Name; readonly millis: number }
  | { readonly _tag: "stop"; readonly who: Name; readonly release: boolean }
  | { readonly _tag: "start"; readonly who: Name }

const who = Gen.constantFrom(...names)
const step: Arbitrary.Arbitrary<Step> = Gen.oneof<Step>(
  Arbitrary.all({
    _tag: Gen.constant("partition" as const),
    who,
    mode: Gen.constantFrom<LeaderElection.PartitionMode>("fail", "hang", "drop-responses")
  }),
  Arbitrary.all({ _tag: Gen.constant("heal" as const), who }),
  Arbitrary.all({
    _tag: Gen.constant("latency" as const),
    who,
    millis: Gen.constantFrom(0, 50, 500, 3000)
  }),
  Arbitrary.all({ _tag: Gen.constant("stop" as const), who, release: Gen.boolean() }),
  Arbitrary.all({ _tag: Gen.constant("start" as const), who })
)
const scenario = Arbitrary.array(
  Arbitrary.all({ wait: Gen.integer({ min: 0, max: 8000 }), step }),
  { minLength: 4, maxLength: 12 }
)
const randoms = Arbitrary.array(Gen.fraction(0.999), { minLength: 1, maxLength: 8 })

describe("LeaderElection: never two leaders at work", () => {
  it.effect.prop(
    "three candidates under random faults: one at a time, takeovers after the margin",
    [scenario, randoms],
    ([steps, random]) =>
      Effect.gen(function*() {
        const timeline = yield* makeTimeline
        const leases = yield* LeaderElection.makeMemoryLeases
        const running = new Map<Name, Elector>()
        const closing = new Map<Name, Fiber.Fiber<void>>()
        let generation = 0
        const start = (name: Name) =>
          Effect.gen(function*() {
            const elector = yield* startElector(leases, name)
            generation += 1
            yield* Effect.forkScoped(elector.service.whileLeading(markedWork(timeline, `${name}#${generation}`)))
            running.set(name, elector)
          })
        for (const name of names) yield* start(name)
        let transitions = 0
        for (const { step, wait } of steps) {
          yield* TestClock.adjust(wait)
          const entry = yield* leases.read("leader")
          if (Option.isSome(entry)) {
            assert.isAtLeast(entry.value.record.leaseTransitions, transitions)
            transitions = entry.value.record.leaseTransitions
          }
          switch (step._tag) {
            case "partition":
              yield* leases.partition(step.who, step.mode)
              break
            case "heal":
              yield* leases.heal(step.who)
              break
            case "latency":
              yield* leases.setLatency(step.who, step.millis)
              break
            case "stop": {
              const elector = running.get(step.who)
              if (elector === undefined) break
              running.delete(step.who)
              // a kill: the replica cannot write its release any more
              if (!step.release) yield* leases.partition(step.who, "fail")
              // a release may wait on a request that hangs: the close runs while time goes on
              closing.set(step.who, yield* Effect.forkScoped(elector.close))
              break
            }
            case "start": {
              // identities are unique: a replica starts again once the previous one with its name is gone
              const previous = closing.get(step.who)
              if (running.has(step.who) || (previous !== undefined && previous.pollUnsafe() === undefined)) break
              yield* leases.heal(step.who)
              yield* start(step.who)
              break
            }
          }
        }
        // everything healed, latencies too: a survivor left with a 3 s latency on every request (the shrunk
        // input of CI's run 12:20 on 2026-12-02) led only after more than the 40 s given here (it does within
        // 400 s); liveness is judged on a healed network, safety above on the whole timeline
        for (const name of names) yield* Effect.andThen(leases.heal(name), leases.setLatency(name, 0))
        yield* TestClock.adjust(40_000)
        yield* settle

        // one at a time, at every point of the timeline
        const working = new Set<string>()
        let lastStop: { readonly who: string; readonly at: number } | undefined
        for (const { at, what } of timeline.entries) {
          const [worker, event] = what.split(" ")
          if (event === "start") {
            assert.deepStrictEqual([...working], [], `${worker} started at ${at} while ${[...working]} worked`)
            working.add(worker)
            if (lastStop !== undefined) {
              assert.isAtLeast(at, lastStop.at, `${worker} started before ${lastStop.who} stopped`)
            }
          } else {
            working.delete(worker)
            lastStop = { who: worker, at }
          }
        }
        // the Lease is led by someone in the end, unless no replica runs
        if (running.size > 0) {
          const leaders = yield* Effect.forEach([...running.values()], (e) => e.service.isLeader)
          assert.strictEqual(
            leaders.filter((x) => x).length,
            1
          )
        }
      }).pipe(withRandomFixed(random as [number, ...Array<number>])),
    { timeout: 120_000, arbitrary: { runs: 15, size: 12 } }
  )

  it.effect("a takeover without release: the new leader starts at least leaseDuration − renewDeadline after the old one stopped", () =>
    Effect.gen(function*() {
      const timeline = yield* makeTimeline
      const leases = yield* LeaderElection.makeMemoryLeases
      for (const name of names) {
        const elector = yield* startElector(leases, name, { releaseOnCancel: false })
        yield* Effect.forkScoped(elector.service.whileLeading(markedWork(timeline, name)))
        yield* TestClock.adjust(700)
      }
      for (let round = 0; round < 2; round++) {
        const leader = timeline.entries[timeline.entries.length - 1].what.split(" ")[0]
        yield* leases.partition(leader, "hang")
        yield* TestClock.adjust(40_000)
        const stop = timeline.entries.find((e) => e.what === `${leader} stop`)!
        const next = timeline.entries.find((e) => e.what.endsWith("start") && e.at > stop.at)!
        assert.isAtLeast(next.at - stop.at, 5000)
      }
    }).pipe(withRandomFixed([0.1, 0.6, 0.3])))
})

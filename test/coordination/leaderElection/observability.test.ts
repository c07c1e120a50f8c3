/**
 * What an elector shows: the stream of its states (each change once), the holder it last saw (client-go's
 * `GetLeader`, also after a release), `isLeader`, and the metrics tagged with the election's name.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Metric from "effect/Metric"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import * as metrics from "../../../src/internal/coordination/metrics.js"
import * as LeaderElection from "../../../src/LeaderElection.js"
import { withRandomFixed } from "../../fixtures/random.js"
import { advance, heldBy, settle, startElector } from "./fixtures.js"

const { State } = LeaderElection

const gauge = (name: string) =>
  Effect.map(Metric.value(Metric.withAttributes(metrics.isLeader, { name })), (state) => state.value)
const counter = (metric: Metric.Counter<number>, name: string, ...tags: ReadonlyArray<string>) =>
  Effect.map(
    Metric.value(
      tags.length === 2
        ? Metric.withAttributes(metric, { name, [tags[0]]: tags[1] })
        : Metric.withAttributes(metric, { name })
    ),
    (state) => state.count
  )

describe("LeaderElection: observing", () => {
  it.effect("changes: each state once, in order, through a term lost and won again and the shutdown", () =>
    Effect.gen(function*() {
      const leases = yield* LeaderElection.makeMemoryLeases
      yield* leases.write("leader", heldBy("bing", 3))
      const elector = yield* startElector(leases, "baz", { retryPeriod: "3 seconds" })
      // subscribed at once, before the elector's first attempt has run (a forked fiber starts later in Effect 4)
      const collected = yield* Effect.forkChild(
        Stream.runCollect(Stream.takeUntil(elector.service.changes, (s) => s._tag === "Stopped")),
        { startImmediately: true }
      )
      yield* settle
      yield* advance(3000) // takes the expired lease: term 1
      yield* leases.partition("baz", "fail")
      yield* advance(11_000) // steps down at 13 s
      yield* leases.heal("baz")
      yield* advance(3000) // term 2
      yield* elector.close
      const states = yield* Fiber.join(collected)
      assert.deepStrictEqual(states, [
        State.Acquiring(),
        State.Following({ leader: "bing" }),
        State.Leading({ term: 1 }),
        State.SteppingDown({ term: 1, reason: "RenewDeadline" }),
        State.Acquiring(),
        State.Leading({ term: 2 }),
        State.SteppingDown({ term: 2, reason: "Shutdown" }),
        State.Releasing(),
        State.Stopped()
      ])
    }).pipe(withRandomFixed([0])))

  it.effect("holder: the holder of the record last seen; none before any read and after the release", () =>
    Effect.gen(function*() {
      const leases = yield* LeaderElection.makeMemoryLeases
      yield* leases.write("leader", heldBy("bing"))
      const a = yield* startElector(leases, "a")
      assert.deepStrictEqual(yield* a.service.holder, Option.none())
      yield* settle
      assert.deepStrictEqual(yield* a.service.holder, Option.some("bing"))
      assert.isFalse(yield* a.service.isLeader)
      // bing releases: a sees no holder, then itself
      yield* leases.write("leader", { ...heldBy("", 1) })
      yield* advance(2000)
      assert.deepStrictEqual(yield* a.service.holder, Option.some("a"))
      assert.isTrue(yield* a.service.isLeader)
      yield* a.close
      assert.deepStrictEqual(yield* a.service.holder, Option.none())
      assert.isFalse(yield* a.service.isLeader)
    }).pipe(withRandomFixed([0])))

  it.effect("metrics: is_leader 1 then 0, transitions, renew failures, slow path, step downs by reason", () =>
    Effect.gen(function*() {
      const name = "observability/metrics"
      const leases = yield* LeaderElection.makeMemoryLeases
      const elector = yield* startElector(leases, "baz", { name })
      assert.strictEqual(yield* gauge(name), 0)
      yield* settle
      assert.strictEqual(yield* gauge(name), 1)
      assert.strictEqual(yield* counter(metrics.leaderTransitions, name), 1)
      yield* leases.failNext("baz", "update", "Conflict")
      yield* advance(2000)
      assert.strictEqual(yield* counter(metrics.slowPaths, name), 1)
      yield* leases.partition("baz", "fail")
      yield* advance(12_000) // attempts at 4, 6, 8, 10 s fail; steps down at 12 s
      assert.strictEqual(yield* gauge(name), 0)
      assert.strictEqual(yield* counter(metrics.renewFailures, name), 4)
      assert.strictEqual(yield* counter(metrics.stepDowns, name, "reason", "RenewDeadline"), 1)
      yield* leases.heal("baz")
      yield* advance(2000)
      assert.strictEqual(yield* gauge(name), 1)
      assert.strictEqual(yield* counter(metrics.leaderTransitions, name), 2)
      yield* elector.close
      assert.strictEqual(yield* gauge(name), 0)
      assert.strictEqual(yield* counter(metrics.stepDowns, name, "reason", "Shutdown"), 1)
    }).pipe(withRandomFixed([0])))

  it.effect("the election's name defaults to the lock's", () =>
    Effect.gen(function*() {
      const leases = yield* LeaderElection.makeMemoryLeases
      const { service } = yield* startElector(leases, "baz")
      assert.strictEqual(service.name, "memory/leader")
      assert.strictEqual(service.identity, "baz")
    }))

  it.effect("make fails with InvalidConfigError on invalid options", () =>
    Effect.gen(function*() {
      const leases = yield* LeaderElection.makeMemoryLeases
      const error = yield* Effect.flip(
        LeaderElection.make({ lock: leases.lock("leader"), identity: "baz", leaseDuration: "5 seconds" })
      )
      assert.strictEqual(error._tag, "InvalidConfigError")
      assert.strictEqual(error.message, "leaseDuration must be greater than renewDeadline")
    }))
})

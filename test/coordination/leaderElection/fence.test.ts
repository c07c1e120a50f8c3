/**
 * Fencing by the local clock (issue 22): the work of a term runs in a `Term` that is valid while the last
 * successful renewal was sent less than the renew deadline ago and no one else took the Lease. A leader
 * that resumes after a pause sends no write before it renewed; a Lease written or deleted by someone else
 * ends the term at once (the lock's watch); a Lease spec the elector cannot use is reported once and
 * never blocks a takeover.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"
import * as Result from "effect/Result"
import * as Client from "../../../src/Client.js"
import * as LeaderElection from "../../../src/LeaderElection.js"
import * as Resource from "../../../src/Resource.js"
import * as Term from "../../../src/Term.js"
import { withJumpClock } from "../../fixtures/clock.js"
import { eventually } from "../../fixtures/index.js"
import { captureLogs } from "../../fixtures/logs.js"
import { withRandomFixed } from "../../fixtures/random.js"
import { clientLayer, configMap, stub } from "../../transport/client/fixtures.js"
import { advance, heldBy, makeTimeline, markedWork, settle, startElector, verbsOf } from "./fixtures.js"

const timings = { leaseDuration: "5 seconds", renewDeadline: "3 seconds", retryPeriod: "1 second" } as const

/**
 * Work that creates a ConfigMap for each name offered, and says what came of it (before the interruption
 * that the end of its term brings: in Effect 4 the elector hears of the end within a scheduler round, which
 * may come before the write's own check, so the write and its record are one uninterruptible step).
 */
const writer = (
  client: Client.Client.Service,
  names: Queue.Queue<string>,
  outcomes: Array<string>,
  gate: Effect.Effect<void> = Effect.void
) =>
  Effect.gen(function*() {
    while (true) {
      const name = yield* Queue.take(names)
      yield* Effect.uninterruptible(Effect.flatMap(
        Effect.andThen(gate, Effect.result(client.create(Resource.configMaps, configMap(name)))),
        (result) =>
          Effect.sync(() =>
            void outcomes.push(
              Result.isSuccess(result) ? `sent ${name}` : `${result.failure._tag}(${result.failure.reason}) ${name}`
            )
          )
      ))
    }
  })

/** A stub API server that answers every create, and a Client of it. */
const recordingServer = Effect.gen(function*() {
  const server = yield* stub((request) => ({ code: 201, body: configMap(JSON.parse(request.body).metadata.name) }))
  const client = yield* Effect.provide(Client.Client, clientLayer(server.url))
  return { server, client, sent: () => server.requests.map((r) => JSON.parse(r.body).metadata.name as string) }
})

describe("LeaderElection: fencing by the local clock", () => {
  it.effect("a leader resumed past its renew deadline sends no write before it renewed; then it writes again", () =>
    withJumpClock((clock) =>
      Effect.gen(function*() {
        const { client, sent } = yield* recordingServer
        const leases = yield* LeaderElection.makeMemoryLeases
        const { service } = yield* startElector(leases, "a", timings)
        const names = yield* Queue.unbounded<string>()
        const outcomes: Array<string> = []
        yield* Effect.forkScoped(service.whileLeading(writer(client, names, outcomes)))
        yield* settle
        yield* Queue.offer(names, "one")
        yield* eventually(Effect.sync(() => outcomes.length === 1), {
          what: "the first write",
          interval: 5,
          clock: "real"
        })
        yield* advance(1500)

        // paused for 10 s: the clock moved, no timer fired yet; the first thing that runs is a write
        yield* clock.jump(10_000)
        yield* Queue.offer(names, "two")
        yield* eventually(Effect.sync(() => outcomes.length === 2), {
          what: "the stale write",
          interval: 5,
          clock: "real"
        })
        assert.deepStrictEqual(outcomes, ["sent one", "TermError(DeadlinePassed) two"])
        assert.deepStrictEqual(sent(), ["one"], "the stale write never reached the server")

        // the check ended the term: the elector stepped down at once, renewed, and leads a new term
        yield* eventually(Effect.map(service.state, (s) => s._tag === "Leading" && s.term === 2), {
          what: "term 2",
          interval: 5,
          clock: "real"
        })
        const ops = yield* leases.operations
        const renewal = ops.find((op) => op.verb === "update" && op.outcome === "ok" && op.at >= 11_500)
        assert.isDefined(renewal, "renewed after the pause")
        yield* Queue.offer(names, "three")
        yield* eventually(Effect.sync(() => outcomes.length === 3), {
          what: "the write of term 2",
          interval: 5,
          clock: "real"
        })
        assert.deepStrictEqual(outcomes, ["sent one", "TermError(DeadlinePassed) two", "sent three"])
        assert.deepStrictEqual(sent(), ["one", "three"])
      })
    ).pipe(withRandomFixed([0])))

  it.effect("Term.check in the work: valid while renewed; stale once the renew deadline passed unrenewed", () =>
    withJumpClock((clock) =>
      Effect.gen(function*() {
        const leases = yield* LeaderElection.makeMemoryLeases
        const { service } = yield* startElector(leases, "a", timings)
        const checks = yield* Queue.unbounded<void>()
        const results: Array<string> = []
        yield* Effect.forkScoped(service.whileLeading(Effect.forever(
          Effect.andThen(
            Queue.take(checks),
            Effect.flatMap(Effect.result(Term.check), (r) =>
              Effect.sync(() =>
                results.push(Result.isSuccess(r) ? "ok" : `${r.failure.reason}: ${r.failure.message}`)
              ))
          )
        )))
        yield* settle
        // renewed every second: still valid after 20 s
        yield* advance(20_000, 1000)
        yield* Queue.offer(checks, undefined)
        yield* settle
        // the last renewal was sent at 20 s; 2.9 s later (no timer fired since): valid; 3 s: stale
        yield* clock.jump(2900)
        yield* Queue.offer(checks, undefined)
        yield* settle
        yield* clock.jump(100)
        yield* Queue.offer(checks, undefined)
        yield* settle
        assert.strictEqual(results.length, 3)
        assert.deepStrictEqual(results.slice(0, 2), ["ok", "ok"])
        assert.match(
          results[2],
          /^DeadlinePassed: memory\/leader term 1 of a: the renew deadline passed since the last successful renewal \(last renewal sent 3000 ms ago, renew deadline 3s\)$/
        )
      })
    ).pipe(withRandomFixed([0])))

  it.effect("a Lease written to another holder ends the term at once: the next write is not sent", () =>
    Effect.gen(function*() {
      const { client, sent } = yield* recordingServer
      const timeline = yield* makeTimeline
      const leases = yield* LeaderElection.makeMemoryLeases
      const { service } = yield* startElector(leases, "a", timings)
      const names = yield* Queue.unbounded<string>()
      const outcomes: Array<string> = []
      // the work holds its write at a gate (one step with the write): it is on its way to a write when the
      // Lease changes hands (a name offered after the edit may not reach it: its term ends first)
      const gate = yield* Deferred.make<void>()
      yield* Effect.forkScoped(service.whileLeading(writer(client, names, outcomes, Deferred.await(gate))))
      yield* Effect.forkScoped(service.whileLeading(markedWork(timeline, "a")))
      yield* advance(500)
      yield* Queue.offer(names, "after-edit")
      yield* settle
      // an operator hands the Lease to b, between two renewals; then the write goes out
      yield* leases.write("leader", heldBy("b", 5))
      yield* Deferred.succeed(gate, undefined)
      yield* eventually(Effect.sync(() => outcomes.length === 1), {
        what: "the write after the edit",
        interval: 5,
        clock: "real"
      })
      assert.deepStrictEqual(outcomes, ["TermError(LeaseLost) after-edit"])
      assert.deepStrictEqual(sent(), [])
      yield* settle
      assert.strictEqual(timeline.at("a stop"), 500, "the work stopped when the Lease changed, not at a renewal")
      assert.deepStrictEqual(yield* service.state, LeaderElection.State.Following({ leader: "b" }))
      // a name offered once the term ended is never written
      yield* Queue.offer(names, "later")
      yield* settle
      assert.deepStrictEqual(outcomes, ["TermError(LeaseLost) after-edit"])
      assert.deepStrictEqual(sent(), [])
    }).pipe(withRandomFixed([0])))

  it.effect("a deleted Lease ends the term at once; the elector creates it again and leads a new term", () =>
    Effect.gen(function*() {
      const timeline = yield* makeTimeline
      const leases = yield* LeaderElection.makeMemoryLeases
      const { service } = yield* startElector(leases, "a", timings)
      yield* Effect.forkScoped(service.whileLeading(markedWork(timeline, "a")))
      yield* advance(700)
      yield* leases.remove("leader")
      yield* settle
      assert.deepStrictEqual(timeline.entries, [
        { at: 0, what: "a start" },
        { at: 700, what: "a stop" },
        { at: 700, what: "a start" }
      ])
      assert.deepStrictEqual(yield* service.state, LeaderElection.State.Leading({ term: 2 }))
      // the deletion was observed: the new campaign reads and creates (no fast renewal of a deleted Lease)
      assert.deepStrictEqual(yield* verbsOf(leases, "a"), ["get", "create", "get", "create"])
    }).pipe(withRandomFixed([0])))

  it.effect("a lock that cannot watch: the change is found at the next renewal (a conflict, then a read)", () =>
    Effect.gen(function*() {
      const timeline = yield* makeTimeline
      const leases = yield* LeaderElection.makeMemoryLeases
      const lock: LeaderElection.LeaseLock = { ...leases.lock("leader", { client: "a" }), watch: undefined }
      const service = yield* LeaderElection.make({ lock, identity: "a", ...timings })
      yield* Effect.forkScoped(service.whileLeading(markedWork(timeline, "a")))
      yield* advance(500)
      yield* leases.write("leader", heldBy("b", 5))
      yield* advance(499)
      assert.strictEqual(timeline.at("a stop"), undefined)
      yield* advance(1)
      assert.strictEqual(timeline.at("a stop"), 1000)
      assert.deepStrictEqual(yield* service.state, LeaderElection.State.Following({ leader: "b" }))
    }).pipe(withRandomFixed([0])))
})

describe("LeaderElection: a Lease spec the elector cannot use", () => {
  const cases = [
    {
      what: "a string duration",
      spec: { holderIdentity: "ghost", leaseDurationSeconds: "abc" },
      problem: `leaseDurationSeconds "abc" is not a positive whole number of seconds: read as 15`
    },
    {
      what: "a negative duration",
      spec: { holderIdentity: "ghost", leaseDurationSeconds: -5 },
      problem: "leaseDurationSeconds -5 is not a positive whole number of seconds: read as 15"
    },
    {
      what: "no duration",
      spec: { holderIdentity: "ghost" },
      problem: "leaseDurationSeconds missing is not a positive whole number of seconds: read as 15"
    },
    {
      what: "a numeric holder",
      spec: { holderIdentity: 42, leaseDurationSeconds: 5 },
      problem: `holderIdentity 42 is not a string: read as the holder "42"`,
      takeover: 5000
    }
  ] as const

  for (const c of cases) {
    it.effect(`${c.what}: reported once, with what the elector does; the Lease is taken over once expired so read`, () =>
      Effect.gen(function*() {
        const logs = captureLogs()
        const leases = yield* LeaderElection.makeMemoryLeases
        yield* leases.write("leader", c.spec as unknown as LeaderElection.LeaderElectionRecord)
        const { service } = yield* logs.capture(startElector(leases, "b", timings))
        const takeover = "takeover" in c ? c.takeover : 15_000
        yield* advance(takeover - 1000, 1000)
        assert.deepStrictEqual(
          yield* service.state,
          LeaderElection.State.Following({ leader: String(c.spec.holderIdentity) })
        )
        yield* advance(1000)
        assert.deepStrictEqual(yield* service.state, LeaderElection.State.Leading({ term: 1 }))
        const warnings = logs.lines.filter((line) => line.includes("cannot use"))
        assert.strictEqual(warnings.length, 1, logs.lines.join("\n"))
        assert.include(warnings[0], `WARN lease memory/leader has a spec this replica cannot use as is: ${c.problem};`)
        assert.include(warnings[0], "taken over once expired so read")
        // the spec written on takeover is a valid one
        const entry = Option.getOrThrow(yield* leases.read("leader"))
        assert.strictEqual(entry.record.holderIdentity, "b")
        assert.strictEqual(entry.record.leaseDurationSeconds, 5)
      }).pipe(withRandomFixed([0])))
  }
})

/**
 * The pure policies of leader election as tables: expiry by local observation, observing, deciding,
 * the fast renewal, the released record, the waits of both loops, validation (client-go's messages and
 * order), the record's wire form, and the state machine; with properties over random inputs.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Arbitrary from "effect/Arbitrary"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Equal from "effect/Equal"
import * as Option from "effect/Option"
import * as Result from "effect/Result"
import * as internal from "../../../src/internal/coordination/leaderElection.js"
import * as policy from "../../../src/internal/coordination/leaderElectionPolicy.js"
import * as LeaderElection from "../../../src/LeaderElection.js"
import * as Gen from "../../fixtures/arbitrary.js"

const { Decision, LeaderStep } = policy
const { Event, State } = LeaderElection

const stamp = (now: number): policy.Stamp => ({
  now,
  time: policy.formatMicroTime(BigInt(now) * 1_000_000n)
})

const record = (
  holderIdentity: string,
  leaseDurationSeconds = 15,
  extra: Partial<LeaderElection.LeaderElectionRecord> = {}
) => ({
  holderIdentity,
  leaseDurationSeconds,
  acquireTime: "2024-01-01T00:00:00.000000Z",
  renewTime: "2024-01-01T00:00:05.000000Z",
  leaseTransitions: 2,
  ...extra
})

const observation = (
  r: LeaderElection.LeaderElectionRecord,
  observedAt: number,
  resourceVersion = "10"
): policy.Observation => ({ record: r, resourceVersion, observedAt })

const timing = Result.getOrThrow(LeaderElection.validateTiming({}))

describe("LeaderElection policies", () => {
  describe("isExpired: observedAt + the record's leaseDurationSeconds <= now", () => {
    it.each(
      [
        [0, 15, 14_999, false],
        [0, 15, 15_000, true],
        [1000, 3, 3999, false],
        [1000, 3, 4000, true],
        [0, 0, 0, true], // an empty spec: expired at once
        [5000, 60, 20_000, false] // the holder's duration counts, not this replica's
      ] as const
    )("observed at %d, %d s, now %d: %s", (observedAt, seconds, now, expected) => {
      assert.strictEqual(policy.isExpired(observation(record("bing", seconds), observedAt), now), expected)
    })

    it("renewTime is never read: a record renewed 'in the future' expires as any other", () => {
      const future = record("bing", 15, { renewTime: "2999-01-01T00:00:00.000000Z" })
      assert.isTrue(policy.isExpired(observation(future, 0), 15_000))
    })
  })

  describe("validHolder", () => {
    it.each(
      [
        ["never observed", Option.none(), 0, Option.none()],
        ["held, not expired", Option.some(observation(record("bing"), 0)), 1000, Option.some("bing")],
        ["held, expired", Option.some(observation(record("bing"), 0)), 15_000, Option.none()],
        ["released", Option.some(observation(record(""), 0)), 0, Option.none()]
      ] as const
    )("%s", (_, observed, now, expected) => {
      assert.deepStrictEqual(policy.validHolder(observed, now), expected)
    })
  })

  describe("observe: the time moves only when the record changed", () => {
    const fetched = (r: LeaderElection.LeaderElectionRecord, resourceVersion = "11") => ({ record: r, resourceVersion })
    it.each(
      [
        ["first read", Option.none(), fetched(record("bing")), 30, 30],
        [
          "unchanged record, new resourceVersion",
          Option.some(observation(record("bing"), 5)),
          fetched(record("bing")),
          30,
          5
        ],
        [
          "renewTime changed",
          Option.some(observation(record("bing"), 5)),
          fetched(record("bing", 15, { renewTime: "2024-01-01T00:00:07.000000Z" })),
          30,
          30
        ],
        ["holder changed", Option.some(observation(record("bing"), 5)), fetched(record("baz")), 30, 30],
        [
          "preferredHolder set",
          Option.some(observation(record("bing"), 5)),
          fetched(record("bing", 15, { preferredHolder: "baz" })),
          30,
          30
        ],
        [
          "duration changed",
          Option.some(observation(record("bing"), 5)),
          fetched(record("bing", 30)),
          30,
          30
        ]
      ] as const
    )("%s", (_, previous, got, now, observedAt) => {
      const next = policy.observe(previous, got, now)
      assert.strictEqual(next.observedAt, observedAt)
      assert.strictEqual(next.resourceVersion, "11")
      assert.deepStrictEqual(next.record, got.record)
    })
  })

  describe("decide (steps 4 and 5 of tryAcquireOrRenew)", () => {
    it.each(
      [
        ["another holder, not expired", record("bing"), 0, 14_999, "Wait", undefined, undefined],
        ["another holder, expired", record("bing"), 0, 15_000, "Take", 3, "1970-01-01T00:00:15.000000Z"],
        ["no holder (released), just observed", record("", 1), 0, 0, "Take", 3, "1970-01-01T00:00:00.000000Z"],
        ["this replica, not expired", record("baz"), 0, 5000, "Renew", 2, "2024-01-01T00:00:00.000000Z"],
        ["this replica, expired", record("baz"), 0, 60_000, "Renew", 2, "2024-01-01T00:00:00.000000Z"]
      ] as const
    )("%s", (_, r, observedAt, now, tag, transitions, acquireTime) => {
      const decision = policy.decide("baz", observation(r, observedAt), 15, stamp(now))
      assert.strictEqual(decision._tag, tag)
      if (decision._tag === "Wait") {
        assert.strictEqual(decision.holder, "bing")
        return
      }
      assert.strictEqual(decision.record.holderIdentity, "baz")
      assert.strictEqual(decision.record.leaseDurationSeconds, 15)
      assert.strictEqual(decision.record.leaseTransitions, transitions)
      assert.strictEqual(decision.record.acquireTime, acquireTime)
      assert.strictEqual(decision.record.renewTime, stamp(now).time)
    })

    it("keeps strategy and preferredHolder (client-go drops them)", () => {
      const r = record("bing", 15, { strategy: "OldestEmulationVersion", preferredHolder: "baz" })
      const decision = policy.decide("baz", observation(r, 0), 15, stamp(20_000))
      assert.isTrue(Decision.$is("Take")(decision))
      if (decision._tag !== "Take") return
      assert.strictEqual(decision.record.strategy, "OldestEmulationVersion")
      assert.strictEqual(decision.record.preferredHolder, "baz")
    })

    it("property: never writes over another holder whose lease has not expired; Renew only for itself", () => {
      Gen.assert(
        Gen.property(
          Gen.constantFrom("", "baz", "bing", "bong"),
          Gen.integer({ min: 0, max: 120 }),
          Gen.integer({ min: 0, max: 1_000_000 }),
          Gen.integer({ min: 0, max: 1_000_000 }),
          (holder, seconds, observedAt, elapsed) => {
            const o = observation(record(holder, seconds), observedAt)
            const now = observedAt + elapsed
            const decision = policy.decide("baz", o, 15, stamp(now))
            const heldByOther = holder !== "" && holder !== "baz" && !policy.isExpired(o, now)
            if (heldByOther) return decision._tag === "Wait"
            if (holder === "baz") return decision._tag === "Renew" && decision.record.leaseTransitions === 2
            return decision._tag === "Take" && decision.record.leaseTransitions === 3
          }
        ),
        { numRuns: 500 }
      )
    })
  })

  describe("fastRenewal (step 1)", () => {
    it.each(
      [
        ["never observed", Option.none(), 0, false],
        ["held by this replica, not expired", Option.some(observation(record("baz"), 0)), 14_999, true],
        ["held by this replica, expired", Option.some(observation(record("baz"), 0)), 15_000, false],
        ["held by another", Option.some(observation(record("bing"), 0)), 0, false]
      ] as const
    )("%s: %s", (_, observed, now, fast) => {
      const renewal = policy.fastRenewal("baz", observed, 20, stamp(now))
      assert.strictEqual(Option.isSome(renewal), fast)
      if (Option.isNone(renewal)) return
      assert.strictEqual(renewal.value.leaseDurationSeconds, 20)
      assert.strictEqual(renewal.value.renewTime, stamp(now).time)
      assert.strictEqual(renewal.value.acquireTime, "2024-01-01T00:00:00.000000Z")
      assert.strictEqual(renewal.value.leaseTransitions, 2)
    })
  })

  it("initialRecord: this replica, acquired and renewed now, no transition", () => {
    assert.deepStrictEqual(policy.initialRecord("baz", 15, stamp(1500)), {
      holderIdentity: "baz",
      leaseDurationSeconds: 15,
      acquireTime: "1970-01-01T00:00:01.500000Z",
      renewTime: "1970-01-01T00:00:01.500000Z",
      leaseTransitions: 0
    })
  })

  it("releasedRecord: no holder, leaseDurationSeconds 1, times now, transitions kept (client-go's ReleaseOnCancel)", () => {
    assert.deepStrictEqual(policy.releasedRecord(record("baz"), stamp(2000)), {
      holderIdentity: "",
      leaseDurationSeconds: 1,
      acquireTime: "1970-01-01T00:00:02.000000Z",
      renewTime: "1970-01-01T00:00:02.000000Z",
      leaseTransitions: 2,
      strategy: undefined,
      preferredHolder: undefined
    })
  })

  describe("the waits", () => {
    it.each(
      [
        [2000, 1.2, 0, 2000],
        [2000, 1.2, 0.5, 3200],
        [2000, 1.2, 0.999, 4398], // whole milliseconds
        [2000, 1.2, 2.0833325805232525e-10, 2000],
        [2000, 0, 0.7, 2000]
      ] as const
    )("jitteredDelay(%d, %d, %d) = %d", (retry, jitter, random, expected) => {
      assert.closeTo(policy.jitteredDelay(retry, jitter, random), expected, 1e-9)
    })

    it.each(
      [
        ["10 seconds", 5000],
        ["4 seconds", 2000],
        ["1500 millis", 1000]
      ] as const
    )("attemptTimeout with renewDeadline %s: %d ms", (renewDeadline, expected) => {
      const t = Result.getOrThrow(
        LeaderElection.validateTiming({ leaseDuration: "15 seconds", renewDeadline, retryPeriod: "200 millis" })
      )
      assert.strictEqual(policy.requestTimeout(t), expected)
    })

    it.each(
      [
        [2000, 0, LeaderStep.Renew({ timeout: 8000 })],
        [9000, 0, LeaderStep.Renew({ timeout: 1000 })],
        [9999, 0, LeaderStep.Renew({ timeout: 1 })],
        [10_000, 0, LeaderStep.StepDown()],
        [12_000, 0, LeaderStep.StepDown()],
        [14_000, 6000, LeaderStep.Renew({ timeout: 2000 })]
      ] as const
    )("leaderStep(now %d, renewed at %d)", (now, renewedAt, expected) => {
      assert.deepStrictEqual(policy.leaderStep(now, renewedAt, timing), expected)
    })

    it.each(
      [
        [100, 0, 2000],
        [9000, 0, 1000],
        [10_500, 0, 0]
      ] as const
    )("leaderSleep(now %d, renewed at %d) = %d", (now, renewedAt, expected) => {
      assert.strictEqual(policy.leaderSleep(now, renewedAt, timing), expected)
    })
  })

  describe("validation", () => {
    const message = (options: LeaderElection.TimingOptions) =>
      Result.match(LeaderElection.validateTiming(options), { onFailure: (e) => e.message, onSuccess: () => "ok" })

    it.each(
      [
        ["defaults", {}, "ok"],
        ["short leases", { leaseDuration: "2 seconds", renewDeadline: "1500 millis", retryPeriod: "200 millis" }, "ok"],
        ["lease = renew", { leaseDuration: "10 seconds" }, "leaseDuration must be greater than renewDeadline"],
        ["lease < renew", { leaseDuration: "5 seconds" }, "leaseDuration must be greater than renewDeadline"],
        [
          "renew = retry · jitter",
          { renewDeadline: "2400 millis" },
          "renewDeadline must be greater than retryPeriod*JitterFactor"
        ],
        [
          "renew < retry · jitter, jitter 2",
          { renewDeadline: "3 seconds", jitterFactor: 2 },
          "renewDeadline must be greater than retryPeriod*JitterFactor"
        ],
        ["retry 0", { retryPeriod: 0 }, "retryPeriod must be greater than zero"],
        ["both checks fail: client-go's order", {
          leaseDuration: "1 second",
          renewDeadline: "2 seconds",
          retryPeriod: "5 seconds"
        }, "leaseDuration must be greater than renewDeadline"],
        ["negative jitter", { jitterFactor: -1 }, "jitterFactor must be a non-negative number"],
        ["NaN jitter", { jitterFactor: Number.NaN }, "jitterFactor must be a non-negative number"],
        [
          "a fraction of a second",
          { leaseDuration: "15500 millis" },
          "leaseDuration must be a whole number of seconds"
        ],
        ["infinite lease", { leaseDuration: Duration.infinity }, "leaseDuration must be a whole number of seconds"],
        ["no jitter", { jitterFactor: 0, renewDeadline: "2 seconds", leaseDuration: "3 seconds" }, "ok"]
      ] as const
    )("%s: %s", (_, options, expected) => {
      assert.strictEqual(message(options), expected)
    })

    it("validate: the identity must not be empty; the name defaults to the lock's; release on cancel by default", () => {
      const lock: LeaderElection.LeaseLock = {
        describe: "ns/lock",
        get: Effect.succeed(Option.none()),
        create: () => Effect.fail(new LeaderElection.LockError({ reason: "Failed", message: "no" })),
        update: () => Effect.fail(new LeaderElection.LockError({ reason: "Failed", message: "no" }))
      }
      const empty = internal.validate({ lock, identity: "" })
      assert.isTrue(Result.isFailure(empty) && empty.failure.message === "Lock identity is empty")
      const config = Result.getOrThrow(internal.validate({ lock, identity: "baz" }))
      assert.strictEqual(config.name, "ns/lock")
      assert.isTrue(config.releaseOnCancel)
      assert.strictEqual(Duration.toMillis(config.leaseDuration), 15_000)
      assert.strictEqual(Duration.toMillis(config.renewDeadline), 10_000)
      assert.strictEqual(Duration.toMillis(config.retryPeriod), 2000)
      assert.strictEqual(config.jitterFactor, 1.2)
      const invalid = internal.validate({ lock, identity: "", leaseDuration: "1 second" })
      assert.isTrue(
        Result.isFailure(invalid) && invalid.failure.message === "leaseDuration must be greater than renewDeadline"
      )
    })
  })

  describe("the record on the wire", () => {
    it("spec → record → spec is the identity for a spec with every field", () => {
      const spec = {
        holderIdentity: "baz",
        leaseDurationSeconds: 15,
        acquireTime: "2024-01-01T00:00:00.000000Z",
        renewTime: "2024-01-01T00:00:02.123456Z",
        leaseTransitions: 4,
        strategy: "OldestEmulationVersion",
        preferredHolder: "bing"
      }
      assert.deepStrictEqual(LeaderElection.recordToSpec(LeaderElection.recordFromSpec(spec)), spec)
    })

    it("record → spec → record is the identity; empty strategy and preferredHolder are not written", () => {
      const r = record("baz")
      assert.deepStrictEqual(LeaderElection.recordFromSpec(LeaderElection.recordToSpec(r)), {
        ...r,
        strategy: undefined,
        preferredHolder: undefined
      })
      assert.deepStrictEqual(
        Object.keys(LeaderElection.recordToSpec({ ...r, strategy: "", preferredHolder: "" })).sort(),
        ["acquireTime", "holderIdentity", "leaseDurationSeconds", "leaseTransitions", "renewTime"]
      )
    })

    it("an empty spec: no holder, duration 0, no transitions", () => {
      assert.deepStrictEqual(LeaderElection.recordFromSpec(undefined), {
        holderIdentity: "",
        leaseDurationSeconds: 0,
        acquireTime: undefined,
        renewTime: undefined,
        leaseTransitions: 0,
        strategy: undefined,
        preferredHolder: undefined
      })
    })

    it.each(
      [
        [0n, "1970-01-01T00:00:00.000000Z"],
        [1_500_000n, "1970-01-01T00:00:00.001500Z"],
        [1_700_000_000_123_456_789n, "2023-11-14T22:13:20.123456Z"],
        [999n, "1970-01-01T00:00:00.000000Z"]
      ] as const
    )("formatMicroTime(%s) = %s", (nanos, expected) => {
      assert.strictEqual(policy.formatMicroTime(nanos), expected)
    })

    it("MicroTime strings are RFC 3339 with six fractional digits", () => {
      Gen.assert(Gen.property(Gen.bigInt({ min: 0n, max: 4_000_000_000_000_000_000n }), (nanos) => {
        const text = policy.formatMicroTime(nanos)
        return /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/.test(text) &&
          Date.parse(text) === Number(nanos / 1_000_000n)
      }))
    })
  })

  describe("the state machine", () => {
    const leading = State.Leading({ term: 3 })
    it.each(
      [
        [State.Acquiring(), Event.Observed({ leader: Option.some("bing") }), State.Following({ leader: "bing" })],
        [State.Following({ leader: "bing" }), Event.Observed({ leader: Option.none() }), State.Acquiring()],
        [
          State.Following({ leader: "bing" }),
          Event.Observed({ leader: Option.some("bong") }),
          State.Following({ leader: "bong" })
        ],
        [State.Acquiring(), Event.Acquired({ term: 1 }), State.Leading({ term: 1 })],
        [State.Following({ leader: "bing" }), Event.Acquired({ term: 2 }), State.Leading({ term: 2 })],
        [State.Acquiring(), Event.ShutdownStarted(), State.Releasing()],
        [State.Following({ leader: "bing" }), Event.ShutdownStarted(), State.Releasing()],
        [leading, Event.Renewed(), leading],
        [leading, Event.RenewFailed(), leading],
        [leading, Event.DeadlineReached(), State.SteppingDown({ term: 3, reason: "RenewDeadline" })],
        [leading, Event.LeaseLost({ leader: "bing" }), State.SteppingDown({ term: 3, reason: "LeaseLost" })],
        [leading, Event.ShutdownStarted(), State.SteppingDown({ term: 3, reason: "Shutdown" })],
        [leading, Event.Failed(), State.SteppingDown({ term: 3, reason: "Failure" })],
        [State.Following({ leader: "bing" }), Event.Failed(), State.Acquiring()],
        [State.SteppingDown({ term: 3, reason: "Failure" }), Event.WorkStopped(), State.Acquiring()],
        [State.SteppingDown({ term: 3, reason: "RenewDeadline" }), Event.WorkStopped(), State.Acquiring()],
        [State.SteppingDown({ term: 3, reason: "LeaseLost" }), Event.WorkStopped(), State.Acquiring()],
        [State.SteppingDown({ term: 3, reason: "Shutdown" }), Event.WorkStopped(), State.Releasing()],
        [
          State.SteppingDown({ term: 3, reason: "RenewDeadline" }),
          Event.ShutdownStarted(),
          State.SteppingDown({ term: 3, reason: "Shutdown" })
        ],
        [State.Releasing(), Event.Released(), State.Stopped()],
        // events that do not apply
        [leading, Event.Acquired({ term: 4 }), leading],
        [leading, Event.Observed({ leader: Option.some("bing") }), leading],
        [State.Acquiring(), Event.DeadlineReached(), State.Acquiring()],
        [
          State.SteppingDown({ term: 3, reason: "RenewDeadline" }),
          Event.Acquired({ term: 4 }),
          State.SteppingDown({ term: 3, reason: "RenewDeadline" })
        ],
        [State.Releasing(), Event.Acquired({ term: 4 }), State.Releasing()],
        [State.Stopped(), Event.Acquired({ term: 4 }), State.Stopped()]
      ] as const
    )("%o + %o", (from, event, to) => {
      assert.deepStrictEqual(LeaderElection.transition(from, event), to)
      assert.isTrue(Equal.equals(LeaderElection.transition(from, event), to))
      assert.isTrue(policy.sameState(LeaderElection.transition(from, event), to))
    })

    const events = Gen.oneof<LeaderElection.Event>(
      Arbitrary.map(Gen.constantFrom("bing", "bong"), (leader) => Event.Observed({ leader: Option.some(leader) })),
      Gen.constant(Event.Observed({ leader: Option.none() })),
      Arbitrary.map(Gen.integer({ min: 1, max: 9 }), (term) => Event.Acquired({ term })),
      Gen.constantFrom(
        Event.Renewed(),
        Event.RenewFailed(),
        Event.DeadlineReached(),
        Event.LeaseLost({ leader: "bing" }),
        Event.Failed(),
        Event.WorkStopped(),
        Event.ShutdownStarted(),
        Event.Released()
      )
    )

    it("property: Leading is entered only by Acquired, left only through SteppingDown; after ShutdownStarted it is never entered again; Stopped is final", () => {
      Gen.assert(
        Gen.property(Arbitrary.array(events, { maxLength: 40 }), (sequence) => {
          let state: LeaderElection.State = State.Acquiring()
          let shutdown = false
          for (const event of sequence) {
            const next = LeaderElection.transition(state, event)
            if (next._tag === "Leading" && state._tag !== "Leading" && event._tag !== "Acquired") return false
            if (state._tag === "Leading" && next._tag !== "Leading" && next._tag !== "SteppingDown") return false
            if (state._tag === "Stopped" && next._tag !== "Stopped") return false
            if (event._tag === "ShutdownStarted") shutdown = true
            if (shutdown && next._tag === "Leading") return false
            if (next._tag === "Stopped" && !shutdown) return false
            state = next
          }
          return true
        }),
        { numRuns: 1000 }
      )
    })
  })
})

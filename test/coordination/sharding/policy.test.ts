/**
 * The pure part of sharding as tables and properties: the hash (fixed vectors: it is a contract between
 * replicas), rendezvous assignment (order-free, minimal movement, balance), validation, the view (change
 * times, tombstones, seeing itself), the assignment's status, the next instant it changes by itself, and
 * gained/lost.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Arbitrary from "effect/Arbitrary"
import * as Duration from "effect/Duration"
import * as Equal from "effect/Equal"
import * as Option from "effect/Option"
import * as Result from "effect/Result"
import * as policy from "../../../src/internal/coordination/shardingPolicy.js"
import * as LeaderElection from "../../../src/LeaderElection.js"
import * as Sharding from "../../../src/Sharding.js"
import * as Gen from "../../fixtures/arbitrary.js"

const { State } = LeaderElection
const timing = Result.getOrThrow(Sharding.validate({ identity: "a", group: "g" }))

const entry = (
  name: string,
  holder = name,
  renewTime = "t0",
  leaseDurationSeconds = 15
): LeaderElection.LeaseEntry => ({
  name,
  labels: { [Sharding.groupLabel]: "g" },
  resourceVersion: "1",
  record: { holderIdentity: holder, leaseDurationSeconds, renewTime, leaseTransitions: 0 }
})

describe("Sharding policies", () => {
  describe("the hash", () => {
    it.each(
      [
        ["", 0xcbf29ce484222325n],
        ["a", 0xaf63dc4c8601ec8cn],
        ["foobar", 0x85944171f73967e8n]
      ] as const
    )("fnv1a64(%j) is FNV-1a's published value", (text, expected) => {
      assert.strictEqual(policy.fnv1a64(text), expected)
    })

    it("mix64 is MurmurHash3's fmix64: 0 stays 0, and known values", () => {
      assert.strictEqual(policy.mix64(0n), 0n)
      assert.strictEqual(policy.mix64(1n), 0xb456bcfc34c2cb2cn)
    })

    it("scores are fixed (the assignment is a contract between replicas and versions)", () => {
      assert.strictEqual(
        policy.score("replica-0", "default/web"),
        policy.mix64(policy.fnv1a64("replica-0\ndefault/web"))
      )
      assert.deepStrictEqual(
        Sharding.ownerOf(["replica-0", "replica-1", "replica-2"], "default/web"),
        Sharding.ownerOf(["replica-2", "replica-0", "replica-1"], "default/web")
      )
      assert.deepStrictEqual(Sharding.ownerOf([], "default/web"), Option.none())
      assert.deepStrictEqual(Sharding.ownerOf(["solo"], "default/web"), Option.some("solo"))
    })

    const members = Gen.uniqueArray(Gen.stringMatching(/^[a-z][a-z0-9-]{0,10}$/), {
      minLength: 1,
      maxLength: 8
    })
    const key = Gen.string({ maxLength: 30 })

    it("property: the owner is a member, the same whatever the members' order", () => {
      Gen.assert(
        Gen.property(members, key, (ms, k) => {
          const owner = Option.getOrThrow(Sharding.ownerOf(ms, k))
          return ms.includes(owner) && Option.contains(Sharding.ownerOf([...ms].reverse(), k), owner)
        }),
        { numRuns: 300 }
      )
    })

    it("property: a member that joins takes keys only for itself; one that leaves gives only its own keys", () => {
      Gen.assert(
        Gen.property(
          members,
          Gen.stringMatching(/^[a-z][a-z0-9-]{0,10}$/),
          Arbitrary.array(key, { minLength: 1, maxLength: 20 }),
          (ms, newcomer, ks) => {
            if (ms.includes(newcomer)) return true
            const joined = [...ms, newcomer]
            return ks.every((k) => {
              const before = Option.getOrThrow(Sharding.ownerOf(ms, k))
              const after = Option.getOrThrow(Sharding.ownerOf(joined, k))
              return after === before || after === newcomer
            })
          }
        ),
        { numRuns: 300 }
      )
    })

    it("balance: 10,000 keys over 5 members, each within 10% of its share", () => {
      const ms = ["replica-0", "replica-1", "replica-2", "replica-3", "replica-4"]
      const counts = new Map(ms.map((m) => [m, 0]))
      for (let i = 0; i < 10_000; i++) {
        const owner = Option.getOrThrow(Sharding.ownerOf(ms, `namespace-${i % 37}/object-${i}`))
        counts.set(owner, counts.get(owner)! + 1)
      }
      for (const [, count] of counts) assert.isTrue(count > 1800 && count < 2200, `${count}`)
    })
  })

  describe("validation", () => {
    const message = (options: Sharding.TimingOptions & Sharding.Names) =>
      Result.match(Sharding.validate(options), { onFailure: (e) => e.message, onSuccess: () => "ok" })
    it.each(
      [
        ["defaults", { identity: "replica-0", group: "replicator" }, "ok"],
        ["short leases", {
          identity: "a",
          group: "g",
          leaseDuration: "2 seconds",
          renewDeadline: "1500 millis",
          retryPeriod: "200 millis"
        }, "ok"],
        [
          "leader election's checks first",
          { identity: "a", group: "g", leaseDuration: "5 seconds" },
          "leaseDuration must be greater than renewDeadline"
        ],
        [
          "leader election's renew deadline of 10 s: a view timeout of 2.5 s",
          { identity: "a", group: "g", renewDeadline: "10 seconds" },
          "ok"
        ],
        [
          "a view timeout no longer than the retry period",
          { identity: "a", group: "g", viewTimeout: "2 seconds" },
          "viewTimeout must be greater than retryPeriod"
        ],
        [
          "view timeout + renew deadline = lease duration",
          { identity: "a", group: "g", renewDeadline: "10 seconds", viewTimeout: "5 seconds" },
          "viewTimeout + renewDeadline must be less than leaseDuration"
        ],
        [
          "a renew deadline that leaves a view timeout of 1 s, with the retry period of 2 s",
          { identity: "a", group: "g", renewDeadline: "13 seconds" },
          "viewTimeout must be greater than retryPeriod"
        ],
        [
          "an identity that is not a Lease name",
          { identity: "Replica_0", group: "g" },
          "identity must be a Lease name (a lower-case DNS subdomain): \"Replica_0\""
        ],
        [
          "an empty identity",
          { identity: "", group: "g" },
          "identity must be a Lease name (a lower-case DNS subdomain): \"\""
        ],
        [
          "a group that is not a label value",
          { identity: "a", group: "-g" },
          "group must be a label value (63 characters at most, alphanumeric, '-', '_' or '.'): \"-g\""
        ],
        [
          "a group too long",
          { identity: "a", group: "g".repeat(64) },
          `group must be a label value (63 characters at most, alphanumeric, '-', '_' or '.'): "${"g".repeat(64)}"`
        ]
      ] as const
    )("%s", (_, options, expected) => {
      assert.strictEqual(message(options), expected)
    })

    it("the defaults: lease 15 s, renew deadline 5 s, retry 2 s, view timeout (15 − 5) / 2 = 5 s", () => {
      assert.strictEqual(Duration.toMillis(timing.leaseDuration), 15_000)
      assert.strictEqual(Duration.toMillis(timing.renewDeadline), 5000)
      assert.strictEqual(Duration.toMillis(timing.retryPeriod), 2000)
      assert.strictEqual(policy.viewTimeout(timing), 5000)
      assert.strictEqual(Duration.toMillis(Sharding.defaultRenewDeadline), 5000)
    })
  })

  describe("the view", () => {
    const view0 = policy.emptyView("a")

    it("a first list: every Lease observed at its answer, the list's send time kept, itself seen in its term", () => {
      const view = policy.observeList(view0, [entry("a"), entry("b")], 1000, 1200, Option.some(1))
      assert.deepStrictEqual([...view.peers.keys()], ["a", "b"])
      assert.strictEqual(view.peers.get("b")!.observedAt, 1200)
      assert.deepStrictEqual(view.listedAt, Option.some(1000))
      assert.deepStrictEqual(view.self, Option.some({ term: 1, since: 1200 }))
      assert.deepStrictEqual(policy.membersAt(view, 1200), ["a", "b"])
    })

    it("an unchanged Lease keeps its time of observation; a changed one gets the new one", () => {
      const first = policy.observeList(view0, [entry("a"), entry("b")], 0, 0, Option.some(1))
      const second = policy.observeList(first, [entry("a", "a", "t1"), entry("b")], 2000, 2000, Option.some(1))
      assert.strictEqual(second.peers.get("a")!.observedAt, 2000)
      assert.strictEqual(second.peers.get("b")!.observedAt, 0)
      assert.deepStrictEqual(policy.membersAt(second, 14_999), ["a", "b"])
      assert.deepStrictEqual(policy.membersAt(second, 15_000), ["a"])
    })

    it("a Lease missing from a list is kept until it expires (a deletion is not a departure), then dropped", () => {
      const first = policy.observeList(view0, [entry("a"), entry("b")], 0, 0, Option.some(1))
      const second = policy.observeList(first, [entry("a", "a", "t1")], 2000, 2000, Option.some(1))
      assert.deepStrictEqual(policy.membersAt(second, 2000), ["a", "b"])
      const third = policy.observeList(second, [entry("a", "a", "t2")], 16_000, 16_000, Option.some(1))
      assert.isFalse(third.peers.has("b"))
    })

    it("a released Lease (no holder) or one held by another name is no member", () => {
      const view = policy.observeList(
        view0,
        [entry("a"), entry("b", ""), entry("c", "intruder")],
        0,
        0,
        Option.some(1)
      )
      assert.deepStrictEqual(policy.membersAt(view, 0), ["a"])
    })

    it.each(
      [
        ["its Lease held by itself, in a term", [entry("a")], Option.some(1), Option.some({ term: 1, since: 500 })],
        ["no term (it does not hold its Lease)", [entry("a")], Option.none(), Option.none()],
        ["its Lease missing", [entry("b")], Option.some(1), Option.none()],
        ["its Lease held by another", [entry("a", "b")], Option.some(1), Option.none()]
      ] as const
    )("seeing itself: %s", (_, entries, term, self) => {
      assert.deepStrictEqual(policy.observeList(view0, entries, 400, 500, term).self, self)
    })

    it("seen since the first sighting of the term; a new term starts again", () => {
      const first = policy.observeList(view0, [entry("a")], 0, 100, Option.some(1))
      const second = policy.observeList(first, [entry("a", "a", "t1")], 2000, 2100, Option.some(1))
      assert.deepStrictEqual(second.self, Option.some({ term: 1, since: 100 }))
      const third = policy.observeList(second, [entry("a", "a", "t2")], 4000, 4100, Option.some(2))
      assert.deepStrictEqual(third.self, Option.some({ term: 2, since: 4100 }))
    })
  })

  describe("the assignment", () => {
    const seen = policy.observeList(policy.emptyView("a"), [entry("a"), entry("b")], 0, 0, Option.some(1))
    const leading = State.Leading({ term: 1 })
    it.each(
      [
        ["leaving", seen, leading, true, 16_000, "Left"],
        ["not holding its Lease", seen, State.Following({ leader: "x" }), false, 16_000, "NotMember"],
        ["stepping down", seen, State.SteppingDown({ term: 1, reason: "RenewDeadline" }), false, 16_000, "NotMember"],
        ["warming up", seen, leading, false, 14_999, "WarmingUp"],
        ["seen in another term", seen, State.Leading({ term: 2 }), false, 16_000, "WarmingUp"],
        ["never seen itself", policy.emptyView("a"), leading, false, 16_000, "WarmingUp"],
        ["warmed up, view too old", seen, leading, false, 15_000, "Stale"],
        [
          "warmed up, fresh view",
          policy.observeList(seen, [entry("a", "a", "t1"), entry("b", "b", "t1")], 12_000, 12_000, Option.some(1)),
          leading,
          false,
          15_000,
          "Active"
        ],
        [
          "active until the view is leaseDuration − renewDeadline old",
          policy.observeList(seen, [entry("a", "a", "t1"), entry("b", "b", "t1")], 12_000, 12_000, Option.some(1)),
          leading,
          false,
          16_999,
          "Active"
        ],
        [
          "stale from then on",
          policy.observeList(seen, [entry("a", "a", "t1"), entry("b", "b", "t1")], 12_000, 12_000, Option.some(1)),
          leading,
          false,
          17_000,
          "Stale"
        ]
      ] as const
    )("%s: %s", (_, view, election, leaving, now, status) => {
      assert.strictEqual(policy.assignmentAt(view, election, leaving, now, timing).status, status)
    })

    it("isOwned: only when Active, and only the keys whose owner among the members is itself", () => {
      const active = Sharding.makeAssignment("a", "Active", ["a", "b"])
      const warming = Sharding.makeAssignment("a", "WarmingUp", ["a", "b"])
      for (let i = 0; i < 50; i++) {
        const key = `k${i}`
        assert.strictEqual(Sharding.isOwned(active, key), Option.contains(Sharding.ownerOf(["a", "b"], key), "a"))
        assert.isFalse(Sharding.isOwned(warming, key))
      }
      assert.isFalse(Sharding.isOwned(Sharding.makeAssignment("a", "Active", ["b"]), "k"))
    })

    it("assignments compare by value", () => {
      const x = Sharding.makeAssignment("a", "Active", ["a", "b"])
      const y = Sharding.makeAssignment("a", "Active", ["a", "b"])
      assert.deepStrictEqual(x, y)
      assert.isTrue(Equal.equals(x, y))
      assert.isTrue(policy.sameAssignment(x, y))
      for (
        const z of [
          Sharding.makeAssignment("b", "Active", ["a", "b"]),
          Sharding.makeAssignment("a", "Stale", ["a", "b"]),
          Sharding.makeAssignment("a", "Active", ["a"]),
          Sharding.makeAssignment("a", "Active", ["a", "c"])
        ]
      ) {
        assert.isFalse(Equal.equals(x, z))
        assert.isFalse(policy.sameAssignment(x, z))
      }
    })

    it.each(
      [
        ["the end of the warm-up first", 1000, Option.some(15_000)],
        ["then the view's timeout and the expiries", 15_000, Option.some(17_000)],
        ["nothing after the last expiry", 40_000, Option.none()]
      ] as const
    )("nextChangeAt: %s", (_, now, expected) => {
      const view = policy.observeList(seen, [entry("a", "a", "t1"), entry("b")], 12_000, 12_000, Option.some(1))
      // a: observed at 12 s (expires 27 s), b: at 0 (expires 15 s), warm-up ends 15 s, view times out 17 s
      assert.deepStrictEqual(policy.nextChangeAt(view, now, timing), expected)
    })

    it("gained and lost", () => {
      const before = Sharding.makeAssignment("a", "Active", ["a"])
      const after = Sharding.makeAssignment("a", "Active", ["a", "b"])
      const moved = Array.from({ length: 40 }, (_, i) => `k${i}`).filter((k) =>
        Option.contains(Sharding.ownerOf(["a", "b"], k), "b")
      )
      assert.isAbove(moved.length, 0)
      for (const key of moved) {
        assert.isTrue(Sharding.lost({ previous: Option.some(before), current: after }, key))
        assert.isTrue(Sharding.gained({ previous: Option.some(after), current: before }, key))
        assert.isFalse(Sharding.gained({ previous: Option.some(before), current: after }, key))
      }
      assert.isTrue(Sharding.gained({ previous: Option.none(), current: before }, "any"))
      assert.isFalse(
        Sharding.lost({ previous: Option.none(), current: Sharding.makeAssignment("a", "Stale", ["a"]) }, "any")
      )
    })
  })
})

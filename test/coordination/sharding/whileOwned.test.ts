/**
 * `whileOwned` and `changes`: work runs only on the key's owner, is interrupted (and awaited) when the key
 * leaves, returns its result when it completes, fails with its error; `changes` starts with the
 * assignment at subscription and says which keys were gained and lost.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import * as LeaderElection from "../../../src/LeaderElection.js"
import * as Sharding from "../../../src/Sharding.js"
import { withRandomFixed } from "../../fixtures/random.js"
import { advance, keys, makeTimeline, settle, startMember } from "./fixtures.js"

describe("Sharding: whileOwned and changes", () => {
  it.effect("not owned: not run (None); owned: run, Some of its result; failures are its own", () =>
    Effect.gen(function*() {
      const leases = yield* LeaderElection.makeMemoryLeases
      const a = yield* startMember(leases, "a")
      let runs = 0
      const work = Effect.sync(() => ++runs)
      assert.deepStrictEqual(yield* a.service.whileOwned(keys[0], work), Option.none())
      yield* advance(15_000)
      assert.deepStrictEqual(yield* a.service.whileOwned(keys[0], work), Option.some(1))
      const failed = yield* Effect.exit(a.service.whileOwned(keys[0], Effect.fail("boom" as const)))
      assert.deepStrictEqual(failed, Exit.fail("boom"))
    }).pipe(withRandomFixed([0])))

  it.effect("a key that moves away: the work is interrupted and its finalizers run before the change is published", () =>
    Effect.gen(function*() {
      const timeline = yield* makeTimeline
      const leases = yield* LeaderElection.makeMemoryLeases
      const a = yield* startMember(leases, "a")
      yield* advance(15_000)
      const moving = keys.find((key) => Option.contains(Sharding.ownerOf(["a", "b"], key), "b"))!
      const staying = keys.find((key) => Option.contains(Sharding.ownerOf(["a", "b"], key), "a"))!
      const work = (key: string) =>
        Effect.gen(function*() {
          yield* Effect.addFinalizer(() => timeline.mark(`stopped ${key}`))
          return yield* Effect.never
        }).pipe(Effect.scoped)
      const movingFiber = yield* Effect.forkChild(a.service.whileOwned(moving, work(moving)))
      const stayingFiber = yield* Effect.forkChild(a.service.whileOwned(staying, work(staying)))
      const changes = yield* Effect.forkChild(
        Stream.runForEach(
          Stream.drop(a.service.changes, 1),
          (change) => timeline.mark(`published ${change.current.members.join(",")}`)
        )
      )
      yield* settle
      yield* startMember(leases, "b")
      yield* advance(2000)
      assert.deepStrictEqual(yield* Fiber.join(movingFiber), Option.none())
      assert.isUndefined(stayingFiber.pollUnsafe(), "the work of the key that stays runs on")
      assert.deepStrictEqual(timeline.whats(), [`stopped ${moving}`, "published a,b"])
      yield* Fiber.interrupt(changes)
    }).pipe(withRandomFixed([0])))

  it.effect("interrupting the caller interrupts the work", () =>
    Effect.gen(function*() {
      const timeline = yield* makeTimeline
      const leases = yield* LeaderElection.makeMemoryLeases
      const a = yield* startMember(leases, "a")
      yield* advance(15_000)
      const fiber = yield* Effect.forkChild(a.service.whileOwned(
        keys[0],
        Effect.addFinalizer(() => timeline.mark("stopped")).pipe(Effect.andThen(Effect.never), Effect.scoped)
      ))
      yield* settle
      yield* Fiber.interrupt(fiber)
      assert.deepStrictEqual(timeline.whats(), ["stopped"])
    }).pipe(withRandomFixed([0])))

  it.effect("changes: the assignment at subscription, then each change; gained and lost", () =>
    Effect.gen(function*() {
      const leases = yield* LeaderElection.makeMemoryLeases
      const a = yield* startMember(leases, "a")
      const changes: Array<Sharding.AssignmentChange> = []
      yield* Effect.forkScoped(Stream.runForEach(a.service.changes, (c) => Effect.sync(() => changes.push(c))))
      yield* settle
      assert.isTrue(Option.isNone(changes[0].previous))
      yield* advance(15_000)
      const b = yield* startMember(leases, "b")
      yield* advance(2000)
      yield* b.close
      yield* advance(2000)
      const described = changes.map((c) => `${c.current.status} ${c.current.members.join(",")}`)
      // the election's first steps, then: warming up, active alone, b seen, b gone
      assert.deepStrictEqual(described.slice(-4), ["WarmingUp a", "Active a", "Active a,b", "Active a"])
      const [warming, active, withB, withoutB] = changes.slice(-4)
      assert.deepStrictEqual(keys.filter((key) => Sharding.gained(warming, key)), [])
      assert.deepStrictEqual(keys.filter((key) => Sharding.gained(active, key)), keys)
      const moved = keys.filter((key) => Option.contains(Sharding.ownerOf(["a", "b"], key), "b"))
      assert.deepStrictEqual(keys.filter((key) => Sharding.lost(withB, key)), moved)
      assert.deepStrictEqual(keys.filter((key) => Sharding.gained(withB, key)), [])
      assert.deepStrictEqual(keys.filter((key) => Sharding.gained(withoutB, key)), moved)
      // a first change gains every key owned at subscription
      const first = { previous: Option.none(), current: active.current }
      assert.deepStrictEqual(keys.filter((key) => Sharding.gained(first, key)), keys)
    }).pipe(withRandomFixed([0])))

  it.effect("make fails with InvalidConfigError on invalid options", () =>
    Effect.gen(function*() {
      const leases = yield* LeaderElection.makeMemoryLeases
      const backend = Sharding.memoryBackend(leases)
      const messages = yield* Effect.forEach(
        [
          { identity: "a", group: "g", viewTimeout: "2 seconds" } as Omit<Sharding.Options, "backend">,
          { identity: "A_b", group: "g" },
          { identity: "a", group: "not a label value" }
        ],
        (options) => Effect.map(Effect.flip(Sharding.make({ backend, ...options })), (e) => e.message)
      )
      assert.deepStrictEqual(messages, [
        "viewTimeout must be greater than retryPeriod",
        "identity must be a Lease name (a lower-case DNS subdomain): \"A_b\"",
        "group must be a label value (63 characters at most, alphanumeric, '-', '_' or '.'): \"not a label value\""
      ])
    }))
})

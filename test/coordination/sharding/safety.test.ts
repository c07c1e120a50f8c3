/**
 * At most one owner per key, as a property: up to four members join, leave (release), die (no release),
 * are partitioned (failing, hanging, answers lost), slowed down, fail to list, heal and come back, at
 * random times over a few minutes of TestClock. Every two seconds, no key is owned by two members by their
 * own local views (`owns`); across the whole timeline, each key's work (`whileOwned`, started on the keys
 * `changes` says were gained) runs on one member at a time. In the end, healed, every key has an owner.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Arbitrary from "effect/Arbitrary"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import type * as Fiber from "effect/Fiber"
import * as TestClock from "effect/testing/TestClock"
import * as LeaderElection from "../../../src/LeaderElection.js"
import * as Gen from "../../fixtures/arbitrary.js"
import { withRandomFixed } from "../../fixtures/random.js"
import type { Member } from "./fixtures.js"
import { makeTimeline, oneOwnerAtATime, settle, startMember, workOnGainedKeys } from "./fixtures.js"

const names = ["m0", "m1", "m2", "m3"] as const
type Name = typeof names[number]
const keys = Array.from({ length: 8 }, (_, i) => `ns/key-${i}`)

type Step =
  | { readonly _tag: "join"; readonly who: Name }
  | { readonly _tag: "leave"; readonly who: Name }
  | { readonly _tag: "die"; readonly who: Name }
  | { readonly _tag: "partition"; readonly who: Name; readonly mode: LeaderElection.PartitionMode }
  | { readonly _tag: "heal"; readonly who: Name }
  | { readonly _tag: "latency"; readonly who: Name; readonly millis: number }
  | { readonly _tag: "listFails"; readonly who: Name; readonly times: number }

const who = Gen.constantFrom(...names)
const step: Arbitrary.Arbitrary<Step> = Gen.oneof<Step>(
  { weight: 3, arbitrary: Arbitrary.all({ _tag: Gen.constant("join" as const), who }) },
  Arbitrary.all({ _tag: Gen.constant("leave" as const), who }),
  Arbitrary.all({ _tag: Gen.constant("die" as const), who }),
  Arbitrary.all({
    _tag: Gen.constant("partition" as const),
    who,
    mode: Gen.constantFrom<LeaderElection.PartitionMode>("fail", "hang", "drop-responses")
  }),
  Arbitrary.all({ _tag: Gen.constant("heal" as const), who }),
  Arbitrary.all({
    _tag: Gen.constant("latency" as const),
    who,
    millis: Gen.constantFrom(0, 300, 1500, 2400)
  }),
  Arbitrary.all({
    _tag: Gen.constant("listFails" as const),
    who,
    times: Gen.integer({ min: 1, max: 5 })
  })
)
const scenario = Arbitrary.array(
  Arbitrary.all({ wait: Gen.integer({ min: 0, max: 20_000 }), step }),
  { minLength: 3, maxLength: 12 }
)
const randoms = Arbitrary.array(Gen.fraction(0.999), { minLength: 1, maxLength: 6 })

describe("Sharding: one owner per key at a time", () => {
  it.effect.prop(
    "members joining, leaving, dying and partitioned at random",
    [scenario, randoms],
    ([steps, random]) =>
      Effect.gen(function*() {
        const timeline = yield* makeTimeline
        const leases = yield* LeaderElection.makeMemoryLeases
        const running = new Map<Name, Member>()
        const closing = new Map<Name, Fiber.Fiber<void>>()
        const join = (name: Name) =>
          Effect.gen(function*() {
            const member = yield* startMember(leases, name)
            yield* workOnGainedKeys(member, timeline, keys)
            running.set(name, member)
          })
        const checkOwners = Effect.gen(function*() {
          for (const key of keys) {
            const owners: Array<string> = []
            for (const [name, member] of running) if (yield* member.service.owns(key)) owners.push(name)
            assert.isAtMost(owners.length, 1, `${key} owned by ${owners} at ${yield* Clock.currentTimeMillis}`)
          }
        })
        const wait = (millis: number) =>
          Effect.gen(function*() {
            for (let t = 0; t < millis; t += 2000) {
              yield* TestClock.adjust(Math.min(2000, millis - t))
              yield* checkOwners
            }
          })
        yield* join("m0")
        yield* join("m1")
        for (const { step, wait: pause } of steps) {
          yield* wait(pause)
          switch (step._tag) {
            case "join": {
              const previous = closing.get(step.who)
              if (running.has(step.who) || (previous !== undefined && previous.pollUnsafe() === undefined)) break
              yield* leases.heal(step.who)
              yield* join(step.who)
              break
            }
            case "leave":
            case "die": {
              const member = running.get(step.who)
              if (member === undefined) break
              running.delete(step.who)
              if (step._tag === "die") yield* leases.partition(step.who, "fail")
              closing.set(step.who, yield* Effect.forkScoped(member.close))
              break
            }
            case "partition":
              yield* leases.partition(step.who, step.mode)
              break
            case "heal":
              yield* leases.heal(step.who)
              break
            case "latency":
              yield* leases.setLatency(step.who, step.millis)
              break
            case "listFails":
              yield* leases.failNext(step.who, "list", "Failed", step.times)
              break
          }
          yield* settle
          yield* checkOwners
        }
        for (const name of names) {
          if (running.has(name)) {
            yield* leases.heal(name)
            yield* leases.setLatency(name, 0)
          }
        }
        yield* wait(45_000)
        assert.deepStrictEqual(oneOwnerAtATime(timeline), [])
        if (running.size > 0) {
          for (const key of keys) {
            const owners: Array<string> = []
            for (const [name, member] of running) if (yield* member.service.owns(key)) owners.push(name)
            assert.strictEqual(owners.length, 1, `${key}: ${owners}`)
          }
        }
      }).pipe(withRandomFixed(random as [number, ...Array<number>])),
    { timeout: 120_000, arbitrary: { runs: 5, size: 12 } }
  )
})

/**
 * At most one owner per key, as a property: up to four members join, leave (release), die (no release),
 * are partitioned (failing, hanging, answers lost), slowed down, fail to list, heal and come back, at
 * random times over a few minutes of TestClock. Every two seconds, no key is owned by two members by their
 * own local views (`owns`); across the whole timeline, each key's work (`whileOwned`, started on the keys
 * `changes` says were gained) runs on one member at a time. In the end, healed, every key has an owner.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as FastCheck from "effect/FastCheck"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as TestClock from "effect/TestClock"
import * as LeaderElection from "../../../src/LeaderElection.js"
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

const who = FastCheck.constantFrom(...names)
const step: FastCheck.Arbitrary<Step> = FastCheck.oneof(
  { weight: 3, arbitrary: FastCheck.record({ _tag: FastCheck.constant("join" as const), who }) },
  FastCheck.record({ _tag: FastCheck.constant("leave" as const), who }),
  FastCheck.record({ _tag: FastCheck.constant("die" as const), who }),
  FastCheck.record({
    _tag: FastCheck.constant("partition" as const),
    who,
    mode: FastCheck.constantFrom<LeaderElection.PartitionMode>("fail", "hang", "drop-responses")
  }),
  FastCheck.record({ _tag: FastCheck.constant("heal" as const), who }),
  FastCheck.record({
    _tag: FastCheck.constant("latency" as const),
    who,
    millis: FastCheck.constantFrom(0, 300, 1500, 2400)
  }),
  FastCheck.record({
    _tag: FastCheck.constant("listFails" as const),
    who,
    times: FastCheck.integer({ min: 1, max: 5 })
  })
)
const scenario = FastCheck.array(
  FastCheck.record({ wait: FastCheck.integer({ min: 0, max: 20_000 }), step }),
  { minLength: 3, maxLength: 12 }
)
const randoms = FastCheck.array(FastCheck.double({ min: 0, max: 0.999, noNaN: true }), { minLength: 1, maxLength: 6 })

describe("Sharding: one owner per key at a time", () => {
  it.scoped.prop(
    "members joining, leaving, dying and partitioned at random",
    [scenario, randoms],
    ([steps, random]) =>
      Effect.gen(function*() {
        const timeline = yield* makeTimeline
        const leases = yield* LeaderElection.makeMemoryLeases
        const running = new Map<Name, Member>()
        const closing = new Map<Name, Fiber.RuntimeFiber<void>>()
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
            assert.isAtMost(owners.length, 1, `${key} owned by ${owners} at ${yield* TestClock.currentTimeMillis}`)
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
              if (running.has(step.who) || (previous !== undefined && Option.isNone(yield* Fiber.poll(previous)))) break
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
      }).pipe(Effect.withRandomFixed(random as [number, ...Array<number>])),
    { timeout: 120_000, fastCheck: { numRuns: 5 } }
  )
})

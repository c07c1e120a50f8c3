/**
 * The sharding suite's fixtures: members of the group `g` over a shared in-memory store (each calling as
 * its own client, in a scope of its own), a set of keys, and each member's work per key driven as a
 * Controller would drive it: started with `whileOwned` for every key `changes` says it gained.
 */
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import type * as LeaderElection from "../../../src/LeaderElection.js"
import * as Sharding from "../../../src/Sharding.js"
import type { Timeline } from "../leaderElection/fixtures.js"

export { advance, makeTimeline, settle } from "../leaderElection/fixtures.js"
export type { Timeline } from "../leaderElection/fixtures.js"

export const keys: ReadonlyArray<string> = Array.from({ length: 24 }, (_, i) => `default/object-${i}`)

export interface Member {
  readonly service: Sharding.Sharding.Service
  readonly close: Effect.Effect<void>
}

export const startMember = (
  leases: LeaderElection.MemoryLeases,
  identity: string,
  options: Partial<Sharding.Options> = {}
): Effect.Effect<Member> =>
  Effect.gen(function*() {
    const scope = yield* Scope.make()
    const service = yield* Effect.orDie(
      Scope.provide(
        Sharding.make({ backend: Sharding.memoryBackend(leases, identity), identity, group: "g", ...options }),
        scope
      )
    )
    return { service, close: Scope.close(scope, Exit.void) }
  })

/** The keys `member` owns now. */
export const owned = (member: Member, among: ReadonlyArray<string> = keys) =>
  Effect.map(
    Effect.forEach(among, (key) => member.service.owns(key)),
    (flags) => among.filter((_, i) => flags[i])
  )

/**
 * Works on each key the member gains (marks `<identity> <key> start` / `stop` on the timeline), with
 * `whileOwned`, as a Controller requeueing gained keys would; the work runs until the key leaves.
 */
export const workOnGainedKeys = (member: Member, timeline: Timeline, among: ReadonlyArray<string> = keys) =>
  Stream.runForEach(member.service.changes, (change) =>
    Effect.forEach(
      among.filter((key) => Sharding.gained(change, key)),
      (key) =>
        Effect.forkScoped(member.service.whileOwned(
          key,
          Effect.gen(function*() {
            yield* timeline.mark(`${member.service.identity} ${key} start`)
            yield* Effect.addFinalizer(() => timeline.mark(`${member.service.identity} ${key} stop`))
            return yield* Effect.never
          }).pipe(Effect.scoped)
        )),
      { discard: true }
    )).pipe(Effect.forkScoped)

/** At every point of the timeline, each key is worked on by one member at most. */
export const oneOwnerAtATime = (timeline: Timeline): Array<string> => {
  const working = new Map<string, string>()
  const violations: Array<string> = []
  for (const { at, what } of timeline.entries) {
    const [who, key, event] = what.split(" ")
    if (event === "start") {
      const other = working.get(key)
      if (other !== undefined) violations.push(`${who} started ${key} at ${at} while ${other} worked on it`)
      working.set(key, who)
    } else if (working.get(key) === who) {
      working.delete(key)
    }
  }
  return violations
}

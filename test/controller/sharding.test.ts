/**
 * Controller with sharding: two members over in-memory Leases; each key reconciled by its owner only; the
 * keys of a member that leaves are reconciled by the other.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, Scope } from "effect"
import * as Controller from "../../src/Controller.js"
import * as LeaderElection from "../../src/LeaderElection.js"
import { advance, settle, startMember } from "../coordination/sharding/fixtures.js"
import { withRandomFixed } from "../fixtures/random.js"
import { configMaps, obj, source } from "./fixtures.js"

describe("Controller: sharding", () => {
  it.effect("each key is reconciled by its owner; a member that leaves hands its keys to the other", () =>
    Effect.gen(function*() {
      const initial = Array.from({ length: 12 }, (_, i) => obj("ns", `o${i}`))
      const cms = yield* source(configMaps, initial)
      const leases = yield* LeaderElection.makeMemoryLeases
      const a = yield* startMember(leases, "a")
      const b = yield* startMember(leases, "b")
      const seen: Record<string, Array<string>> = { a: [], b: [] }
      const controllerOf = (member: typeof a, who: "a" | "b") =>
        Controller.make({
          name: `sharded-${who}`,
          for: cms,
          sharding: member.service,
          reconcile: (request) => Effect.sync(() => void seen[who]!.push(request.key))
        })
      const scopeA = yield* Scope.make()
      yield* controllerOf(a, "a").pipe(Scope.provide(scopeA))
      yield* controllerOf(b, "b")
      // both warm up for a lease duration (15 s), then take their keys
      yield* advance(16_000, 500)
      for (let i = 0; i < 20; i++) yield* settle
      const ownersA = new Set(seen.a)
      const ownersB = new Set(seen.b)
      assert.isAbove(ownersA.size, 0)
      assert.isAbove(ownersB.size, 0)
      assert.strictEqual(ownersA.size + ownersB.size, 12, "every key reconciled")
      for (const key of ownersA) assert.isFalse(ownersB.has(key), `${key} reconciled by both`)
      for (const key of ownersA) assert.isTrue(yield* a.service.owns(key))
      // a leaves (its Lease released): b takes a's keys and reconciles them
      const before = seen.b.length
      yield* Scope.close(scopeA, Exit.void)
      yield* a.close
      yield* advance(20_000, 500)
      for (let i = 0; i < 20; i++) yield* settle
      const later = new Set(seen.b.slice(before))
      for (const key of ownersA) assert.isTrue(later.has(key), `${key} taken over by b`)
    }).pipe(withRandomFixed([0])))
})

/**
 * Leading is a scope: `whileLeading(work)` runs work only while leading, once per term, in a scope closed
 * (work interrupted, its finalizers and the fibers it forked stopped) when the term ends; work registered
 * during a term starts at once; work that completes waits for the next term; work that fails ends
 * `whileLeading` with its error, not the leadership; interrupting `whileLeading` stops its work; the
 * elector's end interrupts it.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as LeaderElection from "../../../src/LeaderElection.js"
import { withRandomFixed } from "../../fixtures/random.js"
import { advance, heldBy, makeTimeline, markedWork, settle, startElector } from "./fixtures.js"

describe("LeaderElection: whileLeading", () => {
  it.effect("work does not run on a follower; it starts when the replica becomes leader", () =>
    Effect.gen(function*() {
      const timeline = yield* makeTimeline
      const leases = yield* LeaderElection.makeMemoryLeases
      yield* leases.write("leader", heldBy("bing", 4))
      const { service } = yield* startElector(leases, "baz")
      yield* Effect.forkScoped(service.whileLeading(markedWork(timeline, "baz")))
      yield* advance(3000)
      assert.deepStrictEqual(timeline.entries, [])
      yield* advance(2000)
      assert.deepStrictEqual(timeline.entries, [{ at: 4000, what: "baz start" }])
    }).pipe(withRandomFixed([0])))

  it.effect("work registered during a term starts at once; several works run side by side", () =>
    Effect.gen(function*() {
      const timeline = yield* makeTimeline
      const leases = yield* LeaderElection.makeMemoryLeases
      const { service } = yield* startElector(leases, "baz")
      yield* Effect.forkScoped(service.whileLeading(markedWork(timeline, "one")))
      yield* advance(3000)
      yield* Effect.forkScoped(service.whileLeading(markedWork(timeline, "two")))
      yield* settle
      assert.deepStrictEqual(timeline.entries, [{ at: 0, what: "one start" }, { at: 3000, what: "two start" }])
    }).pipe(withRandomFixed([0])))

  it.effect("each term runs the work again; the fibers it forked are stopped with it", () =>
    Effect.gen(function*() {
      const timeline = yield* makeTimeline
      const leases = yield* LeaderElection.makeMemoryLeases
      const { service } = yield* startElector(leases, "baz")
      yield* Effect.forkScoped(service.whileLeading(
        Effect.gen(function*() {
          yield* timeline.mark("work start")
          yield* Effect.forkScoped(
            Effect.never.pipe(Effect.onInterrupt(() => timeline.mark("child interrupted")))
          )
          yield* Effect.addFinalizer(() => timeline.mark("work stop"))
          return yield* Effect.never
        })
      ))
      yield* settle
      yield* leases.partition("baz", "fail")
      yield* advance(11_000) // steps down at 10 s
      yield* leases.heal("baz")
      yield* advance(4000)
      assert.deepStrictEqual(yield* service.state, LeaderElection.State.Leading({ term: 2 }))
      assert.deepStrictEqual(timeline.entries, [
        { at: 0, what: "work start" },
        { at: 10_000, what: "work stop" },
        { at: 10_000, what: "child interrupted" },
        { at: 12_000, what: "work start" }
      ])
    }).pipe(withRandomFixed([0])))

  it.effect("work that completes is not run again in the same term, but in the next", () =>
    Effect.gen(function*() {
      const timeline = yield* makeTimeline
      const leases = yield* LeaderElection.makeMemoryLeases
      const { service } = yield* startElector(leases, "baz")
      yield* Effect.forkScoped(service.whileLeading(timeline.mark("ran")))
      yield* advance(9000)
      assert.deepStrictEqual(timeline.whats(), ["ran"])
      yield* leases.partition("baz", "fail")
      yield* advance(12_000)
      yield* leases.heal("baz")
      yield* advance(4000)
      assert.deepStrictEqual(timeline.whats(), ["ran", "ran"])
    }).pipe(withRandomFixed([0])))

  it.effect("work that fails ends whileLeading with its error; the replica goes on leading", () =>
    Effect.gen(function*() {
      const leases = yield* LeaderElection.makeMemoryLeases
      const { service } = yield* startElector(leases, "baz")
      const fiber = yield* Effect.forkChild(
        service.whileLeading(Effect.fail("reconciler broke" as const).pipe(Effect.delay("1 second")))
      )
      yield* advance(1000)
      const exit = yield* Fiber.await(fiber)
      assert.deepStrictEqual(exit, Exit.fail("reconciler broke"))
      yield* advance(10_000)
      assert.isTrue(yield* service.isLeader)
    }).pipe(withRandomFixed([0])))

  it.effect("interrupting whileLeading stops its work; the leadership goes on", () =>
    Effect.gen(function*() {
      const timeline = yield* makeTimeline
      const leases = yield* LeaderElection.makeMemoryLeases
      const { service } = yield* startElector(leases, "baz")
      const fiber = yield* Effect.forkChild(service.whileLeading(markedWork(timeline, "baz")))
      yield* advance(1000)
      yield* Fiber.interrupt(fiber)
      assert.deepStrictEqual(timeline.entries, [{ at: 0, what: "baz start" }, { at: 1000, what: "baz stop" }])
      assert.isTrue(yield* service.isLeader)
    }).pipe(withRandomFixed([0])))

  it.effect("the elector's end stops the work, then interrupts whileLeading", () =>
    Effect.gen(function*() {
      const timeline = yield* makeTimeline
      const leases = yield* LeaderElection.makeMemoryLeases
      const elector = yield* startElector(leases, "baz")
      const fiber = yield* Effect.forkChild(elector.service.whileLeading(markedWork(timeline, "baz")))
      yield* advance(1000)
      yield* elector.close
      const exit = yield* Fiber.await(fiber)
      assert.isTrue(Exit.hasInterrupts(exit))
      assert.deepStrictEqual(timeline.whats(), ["baz start", "baz stop"])
    }).pipe(withRandomFixed([0])))

  it.effect("the work's requirements come from the caller's context", () =>
    Effect.gen(function*() {
      const leases = yield* LeaderElection.makeMemoryLeases
      const { service } = yield* startElector(leases, "baz")
      const seen: Array<string> = []
      class Greeting extends Context.Service<Greeting, { readonly text: string }>()("test/Greeting") {}
      yield* Effect.forkScoped(
        service.whileLeading(Effect.flatMap(Greeting, (g) => Effect.sync(() => seen.push(g.text)))).pipe(
          Effect.provideService(Greeting, { text: "hello" })
        )
      )
      yield* settle
      assert.deepStrictEqual(seen, ["hello"])
    }).pipe(withRandomFixed([0])))
})

/**
 * SharedInformer: a stuck handler slows nothing; lost events and removed registrations; handler misbehaviour.
 */
import { assert, describe, it } from "@effect/vitest"
import { Deferred, Effect, Exit, Fiber } from "effect"
import * as Metrics from "../../../src/Metrics.js"
import { settle } from "../../fixtures/index.js"
import {
  adjust,
  cacheMatchesServer,
  counterValue,
  eventually,
  keyOf,
  namesOf,
  pod,
  range,
  recorder,
  replay,
  setup,
  sortedEntries,
  tagged,
  toMap
} from "./fixtures.js"

describe("SharedInformer: slow handlers", () => {
  it.effect("a handler blocked forever slows neither the cache nor the other handlers", () =>
    Effect.gen(function*() {
      const env = yield* setup()
      const { fake, informer } = env
      const other = recorder("other")
      const stuck = yield* informer.addEventHandler({ name: "stuck", onAdd: () => Effect.never })
      yield* informer.addEventHandler(other.handler)
      yield* informer.start
      yield* settle
      yield* fake.add(pod("first"))
      yield* settle
      const backlogs: Array<number> = []
      for (const i of range(1000)) {
        yield* fake.add(pod(`pod${i}`))
        if (i % 250 === 249) {
          yield* eventually(Effect.sync(() => other.events.length === i + 2), `other handler got ${i + 2}`)
          backlogs.push(yield* stuck.backlog)
        }
      }
      yield* eventually(Effect.map(informer.indexer.size, (n) => n === 1001), "cache complete")
      assert.strictEqual(other.events.length, 1001)
      assert.isTrue(other.events.every((n) => n._tag === "Add"))
      assert.deepStrictEqual(backlogs, [250, 500, 750, 1000])
      assert.isTrue(yield* cacheMatchesServer(env))
    }))
})

describe("SharedInformer: lost events and removed registrations", () => {
  it.effect("a change lost between watches is recovered by the relist resetWatch forces, even after later events", () =>
    Effect.gen(function*() {
      const env = yield* setup({}, [pod("a")])
      const { fake, informer } = env
      yield* informer.start
      yield* settle
      yield* fake.addDropWatch(pod("lost")) // never reaches the informer's watch
      yield* fake.add(pod("b")) // a normal event after it: the watch is up to date again
      yield* settle
      assert.deepStrictEqual(namesOf(yield* informer.indexer.list), ["a", "b"])
      yield* fake.resetWatch
      yield* adjust("1 minute")
      yield* eventually(cacheMatchesServer(env), "cache recovered the lost object")
      assert.deepStrictEqual(namesOf(yield* informer.indexer.list), ["a", "b", "lost"])
    }))

  it.effect("waiting on synced of a registration removed before it synced is interrupted, not hung", () =>
    Effect.gen(function*() {
      const env = yield* setup({}, [pod("a")])
      const registration = yield* env.informer.addEventHandler({ onAdd: () => Effect.never })
      yield* env.informer.start
      const waiting = yield* Effect.forkChild(registration.synced)
      yield* settle
      assert.isFalse(yield* registration.hasSynced)
      yield* registration.remove
      const exit = yield* Fiber.await(waiting)
      assert.isTrue(Exit.hasInterrupts(exit))
    }))
})

describe("SharedInformer: handler misbehaviour, with the coalescing buffer off and on", () => {
  for (const buffer of ["unbounded", "coalescing"] as const) {
    it.effect(`${buffer}: throwing, dying and blocked handlers leave the others and the cache unaffected`, () =>
      Effect.gen(function*() {
        const env = yield* setup({}, [pod("a"), pod("b")])
        const { fake, informer } = env
        const healthy = recorder("healthy")
        const throwing = yield* informer.addEventHandler(
          { name: "throwing", onUpdate: () => Effect.fail("typed failure") },
          { buffer }
        )
        const dying = yield* informer.addEventHandler(
          { name: "dying", onAdd: () => Effect.die(new Error("boom")) },
          { buffer }
        )
        const blocked = yield* informer.addEventHandler({ name: "blocked", onAdd: () => Effect.never }, { buffer })
        yield* informer.addEventHandler(healthy.handler, { buffer })
        yield* informer.start
        yield* settle
        for (const i of range(50)) yield* fake.modify(pod(i % 2 === 0 ? "a" : "b", { spec: { i } }))
        yield* fake.add(pod("c"))
        yield* eventually(Effect.sync(() => healthy.events.length === 53), "healthy handler got everything")
        assert.isTrue(yield* cacheMatchesServer(env))
        // failing handlers keep going and still sync; the blocked one never returns from its first add
        yield* eventually(throwing.hasSynced, "throwing handler synced")
        yield* eventually(dying.hasSynced, "dying handler synced")
        assert.isFalse(yield* blocked.hasSynced)
        assert.strictEqual(yield* throwing.backlog, 0)
        // the blocked handler's backlog: everything when unbounded; per object at most a delete + latest state
        const backlog = yield* blocked.backlog
        // (the notification in progress is not backlog)
        if (buffer === "unbounded") assert.strictEqual(backlog, 52)
        else assert.isAtMost(backlog, 2 * 3)
      }))
  }

  it.effect("coalescing: a stalled handler's memory is bounded by the number of objects, and it catches up to the latest state", () =>
    Effect.gen(function*() {
      const env = yield* setup({}, range(10).map((i) => pod(`p${i}`)))
      const { fake, informer } = env
      const gate = yield* Deferred.make<void>()
      const seen = recorder("stalled")
      const stalled = yield* informer.addEventHandler({
        name: "stalled",
        onAdd: (object, isInInitialList) =>
          Effect.andThen(Deferred.await(gate), seen.handler.onAdd!(object, isInInitialList)),
        onUpdate: seen.handler.onUpdate,
        onDelete: seen.handler.onDelete
      }, { buffer: "coalescing" })
      yield* informer.start
      yield* settle
      const modifyAll = (round: number) =>
        Effect.forEach(range(10), (i) => fake.modify(pod(`p${i}`, { spec: { round } })), { discard: true })
      for (const round of range(10)) yield* modifyAll(round)
      yield* eventually(cacheMatchesServer(env), "cache caught up after 100 updates")
      const early = yield* stalled.backlog
      for (const round of range(90)) yield* modifyAll(10 + round)
      yield* fake.delete(pod("p3"))
      yield* eventually(cacheMatchesServer(env), "cache caught up after 1,000 updates")
      // 900 more events and a delete later, the backlog has not grown: at most a delete and the latest state
      // per object (plus the initial batch the handler had already taken)
      const late = yield* stalled.backlog
      assert.isAtMost(late, early)
      assert.isAtMost(late, 2 * 10)
      yield* Deferred.succeed(gate, undefined)
      yield* eventually(Effect.map(stalled.backlog, (n) => n === 0), "stalled handler caught up")
      yield* eventually(stalled.hasSynced, "stalled handler synced")
      // replaying what it finally got gives the server's state; p3's deletion arrived as a delete
      assert.deepStrictEqual(sortedEntries(replay(seen.events)), sortedEntries(toMap(yield* fake.objects)))
      assert.isTrue(seen.events.some((n) => n._tag === "Delete" && keyOf(n.object) === "ns/p3"))
      assert.isBelow(seen.events.length, 100)
      const coalesced = yield* counterValue(
        tagged(Metrics.handlerCoalesced, { informer: informer.name, handler: "stalled" })
      )
      assert.isAbove(coalesced, 900)
    }))
})

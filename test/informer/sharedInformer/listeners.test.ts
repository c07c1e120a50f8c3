/**
 * SharedInformer: processor and listener behaviours.
 */
import { assert, describe, it } from "@effect/vitest"
import { Context, Deferred, Effect, Exit, Fiber, Metric, Random, Schema, Stream } from "effect"
import { DeletedFinalStateUnknown } from "../../../src/KubeObject.js"
import * as Metrics from "../../../src/Metrics.js"
import { integer } from "../../fixtures/arbitrary.js"
import { captureLogs, type Pod, serverError, settle, statusError } from "../../fixtures/index.js"
import type { Obj, Recorder } from "./fixtures.js"
import {
  adjust,
  cacheMatchesServer,
  counterValue,
  describeError,
  eventually,
  fifoModes,
  gaugeValue,
  isSync,
  keyOf,
  labelsIndex,
  nameOf,
  namesOf,
  pod,
  range,
  recorder,
  replay,
  rvOf,
  setup,
  sortedEntries,
  specOf,
  strictReplay,
  summary,
  syncTimes,
  tagged,
  toMap,
  yieldTimes
} from "./fixtures.js"

describe("SharedInformer: processor and listeners", () => {
  it.effect.prop(
    "late join while events flow: replay equals the cache, no gap, no duplicate",
    [integer(), Schema.Literals(fifoModes)],
    ([seed, fifo]) =>
      Effect.gen(function*() {
        const env = yield* setup({ fifo }, range(4).map((i) => pod(`p${i}`)))
        const { fake, informer } = env
        const early = recorder("early")
        const earlyRegistration = yield* informer.addEventHandler(early.handler)
        yield* informer.start
        yield* settle
        const producer = yield* Effect.forkChild(Effect.gen(function*() {
          const live = new Set(range(4))
          for (let i = 0; i < 150; i++) {
            const k = yield* Random.nextIntBetween(0, 8, { halfOpen: true })
            if (!live.has(k)) {
              yield* fake.add(pod(`p${k}`))
              live.add(k)
            } else if (yield* Random.nextBoolean) {
              yield* fake.modify(pod(`p${k}`, { spec: { i } }))
            } else {
              yield* fake.delete(pod(`p${k}`))
              live.delete(k)
            }
            yield* yieldTimes(yield* Random.nextIntBetween(0, 3, { halfOpen: true }))
          }
        }))
        yield* yieldTimes(yield* Random.nextIntBetween(0, 200, { halfOpen: true }))
        const late = recorder("late")
        const lateRegistration = yield* informer.addEventHandler(late.handler)
        yield* Fiber.join(producer)
        yield* eventually(cacheMatchesServer(env), "cache caught up")
        const cache = toMap(yield* informer.indexer.list)
        const caughtUp = (r: Recorder) =>
          Effect.sync(() => JSON.stringify(sortedEntries(replay(r.events))) === JSON.stringify(sortedEntries(cache)))
        yield* eventually(caughtUp(early), "early handler caught up")
        yield* eventually(caughtUp(late), "late handler caught up")
        // notifications that cancel out (an add and a delete of one object) may still be waiting: drain them
        yield* eventually(Effect.map(earlyRegistration.backlog, (n) => n === 0), "early backlog drained")
        yield* eventually(Effect.map(lateRegistration.backlog, (n) => n === 0), "late backlog drained")
        assert.deepStrictEqual(sortedEntries(strictReplay(early.events)), sortedEntries(cache))
        assert.deepStrictEqual(sortedEntries(strictReplay(late.events)), sortedEntries(cache))
        // The replayed snapshot comes first, flagged as initial; nothing after it is.
        const initial = late.events.findIndex((n) => !(n._tag === "Add" && n.isInInitialList))
        if (initial >= 0) {
          assert.isTrue(late.events.slice(initial).every((n) => !(n._tag === "Add" && n.isInInitialList)))
        }
        assert.isTrue(yield* lateRegistration.hasSynced)
      }).pipe(Random.withSeed(seed)),
    { arbitrary: { runs: 20 } }
  )

  it.effect("start twice: the second call only warns", () =>
    Effect.gen(function*() {
      const logs = captureLogs()
      yield* logs.capture(Effect.gen(function*() {
        const { fake, informer } = yield* setup({ name: "twice" }, [pod("pod1")])
        yield* informer.start
        yield* informer.start
        yield* settle
        assert.strictEqual((yield* fake.requests).length, 1)
        assert.strictEqual(yield* fake.openWatches, 1)
      }))
      assert.isTrue(logs.lines.some((line) => line.includes("twice: informer already started")))
    }))

  it.effect("a handler's callbacks run with the context given to addEventHandler", () =>
    Effect.gen(function*() {
      class Sink extends Context.Service<Sink, Array<string>>()("test/Sink") {}
      const sink: Array<string> = []
      const { informer } = yield* setup({}, [pod("pod1")])
      yield* informer.addEventHandler({
        onAdd: (o) =>
          Effect.flatMap(Sink, (out) =>
            Effect.sync(() => {
              out.push(nameOf(o))
            }))
      }).pipe(Effect.provideService(Sink, sink))
      yield* informer.start
      yield* settle
      assert.deepStrictEqual(sink, ["pod1"])
    }))

  it.effect("removal drops the backlog", () =>
    Effect.gen(function*() {
      const { fake, informer } = yield* setup({}, [pod("pod0")])
      const gate = yield* Deferred.make<void>()
      const seen: Array<string> = []
      const r = yield* informer.addEventHandler({
        onAdd: (o) =>
          Effect.andThen(
            Deferred.await(gate),
            Effect.sync(() => {
              seen.push(nameOf(o))
            })
          )
      })
      yield* informer.start
      yield* settle
      for (const i of range(10)) yield* fake.add(pod(`pod${i + 1}`))
      yield* settle
      assert.strictEqual(yield* r.backlog, 10)
      yield* r.remove
      assert.strictEqual(yield* r.backlog, 0)
      yield* Deferred.succeed(gate, undefined)
      yield* settle
      assert.deepStrictEqual(seen, [])
    }))

  it.effect("backlog: an idle handler has none; items taken but not yet handled count", () =>
    Effect.gen(function*() {
      const { informer } = yield* setup({}, range(100).map((i) => pod(`pod${i}`)))
      const idle = yield* informer.addEventHandler(recorder().handler)
      const stuck = yield* informer.addEventHandler({ onAdd: () => Effect.never })
      assert.strictEqual(yield* idle.backlog, 0)
      yield* informer.start
      yield* settle
      assert.strictEqual(yield* idle.backlog, 0)
      // One is in the stuck callback; the 99 others are waiting.
      assert.strictEqual(yield* stuck.backlog, 99)
    }))

  it.effect("sync vs update: equal resourceVersions reach only the handlers due for resync", () =>
    Effect.gen(function*() {
      const { fake, informer } = yield* setup({ resyncPeriod: "10 seconds" }, [pod("pod1"), pod("pod2")])
      const due = recorder("due")
      const never = recorder("never")
      yield* informer.addEventHandler(due.handler)
      yield* informer.addEventHandler(never.handler, { resyncPeriod: 0 })
      yield* informer.start
      yield* settle
      due.clear()
      never.clear()
      // Before any resync tick every handler is "syncing": a relist's unchanged objects reach both.
      yield* fake.modifyDropWatch(pod("pod2", { spec: { v: 1 } }))
      yield* fake.resetWatch
      yield* adjust("1 second")
      assert.deepStrictEqual(due.events.map(summary), ["update pod1 1->1", "update pod2 2->3"])
      assert.deepStrictEqual(never.events.map(summary), ["update pod1 1->1", "update pod2 2->3"])
      due.clear()
      never.clear()
      // The tick at 10 s marks only `due`; from then on relist syncs reach only it.
      yield* adjust("9 seconds")
      assert.deepStrictEqual(due.events.map(summary), ["update pod1 1->1", "update pod2 3->3"])
      assert.deepStrictEqual(never.events, [])
      due.clear()
      yield* fake.modifyDropWatch(pod("pod2", { spec: { v: 2 } }))
      yield* fake.resetWatch
      yield* adjust("5 seconds")
      assert.deepStrictEqual(due.events.map(summary), ["update pod1 1->1", "update pod2 3->4"])
      assert.deepStrictEqual(never.events.map(summary), ["update pod2 3->4"])
    }))

  describe("resync periods", () => {
    it.effect("a handler added after start cannot go below the check period", () =>
      Effect.gen(function*() {
        const logs = captureLogs()
        const late = syncTimes()
        yield* logs.capture(Effect.gen(function*() {
          const { informer } = yield* setup({ resyncPeriod: "5 seconds" }, [pod("pod1")])
          yield* informer.addEventHandler(recorder().handler)
          yield* informer.start
          yield* settle
          yield* informer.addEventHandler({ name: "late", ...late.handler }, { resyncPeriod: "1 second" })
          yield* adjust("10 seconds")
        }))
        assert.deepStrictEqual(late.times, [5_000, 10_000])
        assert.isTrue(logs.lines.some((line) => line.includes("handler late raised to the informer's check period")))
      }))

    it.effect("periods under 1 s are raised to 1 s", () =>
      Effect.gen(function*() {
        const fast = syncTimes()
        const { informer } = yield* setup({ resyncPeriod: "1 minute" }, [pod("pod1")])
        yield* informer.addEventHandler(fast.handler, { resyncPeriod: "100 millis" })
        yield* informer.start
        yield* settle
        yield* adjust("3 seconds")
        assert.deepStrictEqual(fast.times, [1_000, 2_000, 3_000])
      }))

    it.effect("without an informer resync period, handler periods are ignored (client-go)", () =>
      Effect.gen(function*() {
        const h = syncTimes()
        const { informer } = yield* setup({}, [pod("pod1")])
        yield* informer.addEventHandler(h.handler, { resyncPeriod: "5 seconds" })
        yield* informer.start
        yield* adjust("30 seconds")
        assert.deepStrictEqual(h.times, [])
      }))
  })

  describe.each(fifoModes)("%s", (fifo) => {
    it.effect(`tombstones for deletes seen only at relist`, () =>
      Effect.gen(function*() {
        const { fake, informer } = yield* setup({ fifo }, [pod("pod1"), pod("pod2")])
        const h = recorder()
        yield* informer.addEventHandler(h.handler, { resyncPeriod: 0 })
        yield* informer.start
        yield* settle
        h.clear()
        yield* fake.deleteDropWatch(pod("pod1"))
        yield* fake.resetWatch
        yield* adjust("1 second")
        const deletes = h.events.filter((n) => n._tag === "Delete")
        assert.strictEqual(deletes.length, 1)
        const tombstone = deletes[0].object
        assert.instanceOf(tombstone, DeletedFinalStateUnknown)
        assert.strictEqual((tombstone as DeletedFinalStateUnknown<Obj>).key, "ns/pod1")
        assert.strictEqual(rvOf((tombstone as DeletedFinalStateUnknown<Obj>).obj), "1")
        assert.deepStrictEqual(yield* informer.indexer.listKeys, ["ns/pod2"])
      }))

    it.effect(`TestResetWatch: relist adds and updates are not in the initial list`, () =>
      Effect.gen(function*() {
        const { fake, informer } = yield* setup({ fifo }, [pod("pod-1")])
        const h = recorder()
        yield* informer.addEventHandler(h.handler, { resyncPeriod: 0 })
        yield* informer.start
        yield* settle
        assert.deepStrictEqual(h.events.map(summary), ["add pod-1 (initial)"])
        yield* fake.modifyDropWatch(pod("pod-1", { spec: { v: 2 } }))
        yield* fake.addDropWatch(pod("pod-2"))
        yield* fake.resetWatch
        yield* adjust("1 second")
        assert.deepStrictEqual(h.events.map(summary), ["add pod-1 (initial)", "update pod-1 1->2", "add pod-2"])
      }))
  })

  describe.each(fifoModes)("%s", (fifo) => {
    for (const watchList of [true, false]) {
      it.effect(`an empty first list syncs the informer and its handlers (watchList ${watchList})`, () =>
        Effect.gen(function*() {
          const { fake, informer } = yield* setup({ fifo, reflector: { watchList } })
          const h = recorder()
          const r = yield* informer.addEventHandler(h.handler)
          yield* informer.start
          yield* settle
          assert.isTrue(yield* informer.hasSynced)
          assert.isTrue(yield* r.hasSynced)
          yield* fake.add(pod("pod1"))
          yield* settle
          assert.deepStrictEqual(h.events.map(summary), ["add pod1"])
        }))
    }
  })

  it.effect("TestReplaceEvents: a relist is applied at once, deletions first, then list order", () =>
    Effect.gen(function*() {
      const { fake, informer } = yield* setup({}, [pod("pod-1"), pod("pod-2"), pod("pod-3")])
      const seen: Array<string> = []
      const record = (what: string) =>
        Effect.flatMap(informer.indexer.listKeys, (keys) =>
          Effect.sync(() => {
            seen.push(`${what} [${keys.slice().sort().join(",")}]`)
          }))
      yield* informer.addEventHandler({
        onAdd: (o) => record(`add ${nameOf(o)}`),
        onUpdate: (_, o) => record(`update ${nameOf(o)}`),
        onDelete: (o) => record(`delete ${nameOf(o)}`)
      }, { resyncPeriod: 0 })
      yield* informer.start
      yield* settle
      // The initial list: adds, each seeing the whole list in the store.
      const all = "[ns/pod-1,ns/pod-2,ns/pod-3]"
      assert.deepStrictEqual(seen, [`add pod-1 ${all}`, `add pod-2 ${all}`, `add pod-3 ${all}`])
      seen.length = 0
      yield* fake.modifyDropWatch(pod("pod-1", { spec: { v: 2 } }))
      yield* fake.modifyDropWatch(pod("pod-2", { spec: { v: 2 } }))
      yield* fake.deleteDropWatch(pod("pod-3"))
      yield* fake.addDropWatch(pod("pod-4"))
      yield* fake.resetWatch
      yield* adjust("1 second")
      const after = "[ns/pod-1,ns/pod-2,ns/pod-4]"
      assert.deepStrictEqual(seen, [
        `delete tombstone:ns/pod-3 ${after}`,
        `update pod-1 ${after}`,
        `update pod-2 ${after}`,
        `add pod-4 ${after}`
      ])
      seen.length = 0
      // Replace with nothing: everything deleted, each delete seeing the store already empty.
      for (const name of ["pod-1", "pod-2", "pod-4"]) yield* fake.deleteDropWatch(pod(name))
      yield* fake.resetWatch
      yield* adjust("1 minute")
      assert.deepStrictEqual(seen.slice().sort(), [
        "delete tombstone:ns/pod-1 []",
        "delete tombstone:ns/pod-2 []",
        "delete tombstone:ns/pod-4 []"
      ])
      assert.deepStrictEqual(yield* informer.indexer.listKeys, [])
    }))

  it.effect("TestReplaceEvents (coalescing): same notifications, per-key order only", () =>
    Effect.gen(function*() {
      const { fake, informer } = yield* setup({ fifo: "coalescing" }, [pod("pod-1"), pod("pod-2"), pod("pod-3")])
      const h = recorder()
      yield* informer.addEventHandler(h.handler, { resyncPeriod: 0 })
      yield* informer.start
      yield* settle
      h.clear()
      yield* fake.modifyDropWatch(pod("pod-1", { spec: { v: 2 } }))
      yield* fake.modifyDropWatch(pod("pod-2", { spec: { v: 2 } }))
      yield* fake.deleteDropWatch(pod("pod-3"))
      yield* fake.addDropWatch(pod("pod-4"))
      yield* fake.resetWatch
      yield* adjust("1 second")
      assert.deepStrictEqual(h.events.map(summary).sort(), [
        "add pod-4",
        "delete tombstone:ns/pod-3",
        "update pod-1 1->4",
        "update pod-2 2->5"
      ])
      assert.deepStrictEqual((yield* informer.indexer.listKeys).slice().sort(), ["ns/pod-1", "ns/pod-2", "ns/pod-4"])
    }))

  it.effect("TestTransformingInformer: the cache and every callback (old and new) see transformed objects", () =>
    Effect.gen(function*() {
      let retransformed = 0
      const transform = (o: Obj): Obj => {
        if (specOf(o).transformed === true) retransformed++
        return { ...o, spec: { ...specOf(o), transformed: true } } as Pod
      }
      const { fake, informer } = yield* setup({ transform, resyncPeriod: "1 second" }, [pod("pod1")])
      const h = recorder()
      yield* informer.addEventHandler(h.handler)
      yield* informer.start
      yield* settle
      yield* fake.modify(pod("pod1", { spec: { v: 2 } }))
      yield* fake.add(pod("pod2"))
      yield* fake.delete(pod("pod1"))
      yield* fake.modifyDropWatch(pod("pod2", { spec: { v: 3 } }))
      yield* fake.addDropWatch(pod("pod3"))
      yield* fake.resetWatch
      yield* adjust("5 seconds")
      const objects = h.events.flatMap((n): Array<Obj | undefined> =>
        n._tag === "Update"
          ? [n.oldObject, n.newObject]
          : n.object instanceof DeletedFinalStateUnknown
          ? [n.object.obj]
          : [n.object]
      )
      assert.isTrue(h.events.some((n) => n._tag === "Delete"))
      assert.isTrue(h.events.some(isSync), "resyncs happened")
      for (const obj of objects) assert.isTrue(specOf(obj).transformed === true, JSON.stringify(obj))
      for (const obj of yield* informer.indexer.list) assert.isTrue(specOf(obj).transformed === true)
      assert.deepStrictEqual((yield* informer.indexer.listKeys).slice().sort(), ["ns/pod2", "ns/pod3"])
      // TestTransformingInformerRace: resyncs and relists of unchanged objects are not transformed again.
      assert.strictEqual(retransformed, 0)
    }))

  it.effect("TestStoreResourceVersion: the cache's resourceVersion follows watch events and bookmarks", () =>
    Effect.gen(function*() {
      const { fake, informer } = yield* setup({}, [pod("pod1"), pod("pod2")])
      yield* informer.start
      yield* settle
      assert.strictEqual(yield* informer.indexer.lastResourceVersion, "2")
      yield* fake.modify(pod("pod1", { spec: { v: 2 } }))
      yield* settle
      assert.strictEqual(yield* informer.indexer.lastResourceVersion, "3")
      yield* fake.delete(pod("pod2"))
      yield* settle
      assert.strictEqual(yield* informer.indexer.lastResourceVersion, "4")
      // A change elsewhere, seen only through a bookmark.
      yield* fake.addDropWatch(pod("elsewhere"))
      yield* fake.bookmark
      yield* settle
      assert.strictEqual(yield* informer.indexer.lastResourceVersion, "5")
      assert.strictEqual(yield* informer.lastSyncResourceVersion, "5")
    }))

  it.effect("TestStoreResourceVersion (coalescing): events move it, bookmarks only move the Reflector's", () =>
    Effect.gen(function*() {
      const { fake, informer } = yield* setup({ fifo: "coalescing" }, [pod("pod1")])
      yield* informer.start
      yield* settle
      yield* fake.modify(pod("pod1", { spec: { v: 2 } }))
      yield* settle
      assert.strictEqual(yield* informer.indexer.lastResourceVersion, "2")
      yield* fake.addDropWatch(pod("elsewhere"))
      yield* fake.bookmark
      yield* settle
      assert.strictEqual(yield* informer.indexer.lastResourceVersion, "2")
      assert.strictEqual(yield* informer.lastSyncResourceVersion, "3")
    }))

  describe.each(fifoModes)("%s", (fifo) => {
    it.effect(`TestUpdate: concurrent writers; every transition valid, one delete per object`, () =>
      Effect.gen(function*() {
        const { fake, informer } = yield* setup({ fifo })
        const invalid: Array<string> = []
        const deletes = new Map<string, number>()
        const state = (o: Obj) => String(specOf(o).state)
        yield* informer.addEventHandler({
          onUpdate: (oldObj, newObj) => {
            const transition = `${state(oldObj)}->${state(newObj)}`
            if (!["from->to", "to->to", "from->from"].includes(transition)) invalid.push(transition)
            return transition === "from->to" ? Effect.asVoid(fake.delete(newObj)) : Effect.void
          },
          onDelete: (o) =>
            Effect.sync(() => {
              deletes.set(keyOf(o), (deletes.get(keyOf(o)) ?? 0) + 1)
            })
        })
        yield* informer.start
        yield* settle
        const writer = (w: number) =>
          Effect.forEach(range(20), (i) =>
            Effect.gen(function*() {
              const name = `w${w}-${i}`
              yield* fake.add(pod(name, { spec: { state: "from" } }))
              yield* Effect.yieldNow
              yield* fake.modify(pod(name, { spec: { state: "to" } }))
            }), { discard: true })
        yield* Effect.forEach(range(3), writer, { concurrency: "unbounded", discard: true })
        yield* eventually(Effect.sync(() => deletes.size === 60), "all deleted")
        yield* settle
        assert.deepStrictEqual(invalid, [])
        assert.isTrue(Array.from(deletes.values()).every((n) => n === 1))
        assert.deepStrictEqual(yield* informer.indexer.listKeys, [])
      }))
  })

  it.effect("addIndexers before start, after start, and after stop", () =>
    Effect.gen(function*() {
      const { fake, informer, stop } = yield* setup({}, [pod("pod1", { labels: { a: "1" } })])
      yield* informer.addIndexers({ before: labelsIndex })
      yield* informer.start
      yield* settle
      yield* informer.addIndexers({ after: labelsIndex })
      yield* fake.add(pod("pod2", { labels: { a: "1" } }))
      yield* settle
      assert.deepStrictEqual(namesOf(yield* informer.indexer.byIndex("before", "a")), ["pod1", "pod2"])
      assert.deepStrictEqual(namesOf(yield* informer.indexer.byIndex("after", "a")), ["pod1", "pod2"])
      assert.strictEqual((yield* Effect.flip(informer.addIndexers({ after: labelsIndex })))._tag, "IndexConflictError")
      yield* stop
      assert.strictEqual((yield* Effect.flip(informer.addIndexers({ late: labelsIndex })))._tag, "InformerStoppedError")
    }))

  it.effect("notifications: a Stream of every notification while it runs", () =>
    Effect.gen(function*() {
      const { fake, informer } = yield* setup({}, [pod("pod1")])
      yield* informer.start
      yield* settle
      const taken = yield* Effect.forkChild(Stream.runCollect(Stream.take(informer.notifications, 3)))
      yield* settle
      yield* fake.add(pod("pod2"))
      yield* fake.modify(pod("pod1", { spec: { v: 2 } }))
      yield* fake.delete(pod("pod2"))
      const notifications = Array.from(yield* Fiber.join(taken))
      assert.deepStrictEqual(notifications.map(summary), ["add pod1 (initial)", "add pod2", "update pod1 1->3"])
      // The stream's handler is gone once the stream ended.
      yield* settle
      const again = yield* Effect.forkChild(Stream.runCollect(Stream.take(informer.notifications, 1)))
      assert.deepStrictEqual(Array.from(yield* Fiber.join(again)).map(summary), ["add pod1 (initial)"])
    }))

  it.effect("errors: a Stream of the Reflector's errors", () =>
    Effect.gen(function*() {
      const { fake, informer } = yield* setup({ reflector: { watchList: false } })
      const taken = yield* Effect.forkChild(Stream.runCollect(Stream.take(informer.errors, 2)))
      yield* settle
      yield* fake.failNextList(statusError(403, "Forbidden", "Access Denied"))
      yield* informer.start
      yield* settle
      yield* adjust("2 seconds")
      yield* fake.failWatches(serverError(500, "InternalError", "boom"))
      yield* settle
      const errors = Array.from(yield* Fiber.join(taken))
      assert.deepStrictEqual(errors.map((e) => `${e.context.phase} ${describeError(e.error)}`), [
        "list StatusError (Forbidden)",
        "watch StatusError (ServerError)"
      ])
      assert.strictEqual(errors[1].context.reflector, informer.name)
    }))

  it.effect("the notifications and errors streams end when the informer stops", () =>
    Effect.gen(function*() {
      const { fake, informer, stop } = yield* setup({}, [pod("pod1")])
      yield* informer.start
      yield* settle
      const notifications = yield* Effect.forkChild(Stream.runCollect(informer.notifications))
      const errors = yield* Effect.forkChild(Stream.runCollect(informer.errors))
      yield* settle
      yield* fake.add(pod("pod2"))
      yield* fake.failWatches(serverError(500, "InternalError", "boom"))
      yield* settle
      yield* stop
      yield* settle
      const n = notifications.pollUnsafe()
      const e = errors.pollUnsafe()
      assert.isTrue(n !== undefined && Exit.isSuccess(n), "notifications ended")
      assert.isTrue(e !== undefined && Exit.isSuccess(e), "errors ended")
      assert.deepStrictEqual(Array.from(yield* Fiber.join(notifications)).map(summary), [
        "add pod1 (initial)",
        "add pod2"
      ])
      assert.deepStrictEqual(Array.from(yield* Fiber.join(errors)).map((w) => describeError(w.error)), [
        "StatusError (ServerError)"
      ])
    }))

  it.effect("detectMutations reports a handler that mutates a cached object", () =>
    Effect.gen(function*() {
      const logs = captureLogs()
      yield* logs.capture(Effect.gen(function*() {
        const { informer } = yield* setup({ detectMutations: true }, range(5).map((i) => pod(`pod${i}`)))
        yield* informer.addEventHandler({ name: "polite", onAdd: () => Effect.void })
        yield* informer.addEventHandler({
          name: "mutator",
          onAdd: (o) =>
            Effect.sync(() => {
              if (nameOf(o) === "pod2") (o.metadata as { labels?: Record<string, string> }).labels = { touched: "yes" }
            })
        })
        // mutates in the function's own body, before returning its Effect
        yield* informer.addEventHandler({
          name: "eager-mutator",
          onAdd: (o) => {
            if (nameOf(o) === "pod3") (o.metadata as { annotations?: Record<string, string> }).annotations = { a: "b" }
            return Effect.void
          }
        })
        // mutates, then fails
        yield* informer.addEventHandler({
          name: "failing-mutator",
          onAdd: (o) =>
            nameOf(o) === "pod4"
              ? Effect.sync(() => {
                ;(o.metadata as { finalizers?: Array<string> }).finalizers = ["x"]
              }).pipe(Effect.andThen(Effect.fail("then fails")))
              : Effect.void
        })
        yield* informer.start
        yield* settle
      }))
      const reports = logs.lines.filter((line) => line.includes("mutated a cached object"))
      assert.strictEqual(reports.length, 3)
      for (
        const [handler, key] of [["mutator", "ns/pod2"], ["eager-mutator", "ns/pod3"], ["failing-mutator", "ns/pod4"]]
      ) {
        assert.isTrue(reports.some((r) => r.includes(`handler ${handler} `) && r.includes(key)), `${handler} ${key}`)
      }
    }))

  it.effect("metrics: notification counters, handler backlog and FIFO depth", () =>
    Effect.gen(function*() {
      const name = "metrics-informer"
      const { fake, informer } = yield* setup({ name }, [pod("pod1"), pod("pod2")])
      const gate = yield* Deferred.make<void>()
      yield* informer.addEventHandler({ name: "blocked", onAdd: () => Deferred.await(gate) })
      yield* informer.start
      yield* settle
      yield* fake.modify(pod("pod1", { spec: { v: 2 } }))
      yield* fake.delete(pod("pod2"))
      yield* fake.add(pod("pod3"))
      yield* settle
      const notifications = (type: string) => counterValue(tagged(Metrics.notifications, { informer: name, type }))
      assert.strictEqual(yield* notifications("add"), 3)
      assert.strictEqual(yield* notifications("update"), 1)
      assert.strictEqual(yield* notifications("delete"), 1)
      assert.strictEqual(yield* gaugeValue(tagged(Metrics.fifoDepth, { informer: name })), 0)
      // pod1 is in the callback; pod2's add and the three later notifications wait.
      const backlog = gaugeValue(tagged(Metrics.handlerBacklog, { informer: name, handler: "blocked" }))
      assert.strictEqual(yield* backlog, 4)
      yield* Deferred.succeed(gate, undefined)
      yield* settle
      assert.strictEqual(yield* backlog, 0)
      // the handler's time per callback: one observation per batch it took
      const durations = yield* Metric.value(tagged(Metrics.handlerDuration, { informer: name, handler: "blocked" }))
      assert.isAtLeast(durations.count, 1)
      // what the Reflector saw: the initial state (watch-list), then one event of each type
      const events = (type: string) => counterValue(tagged(Metrics.watchEvents, { informer: name, type }))
      assert.strictEqual(yield* events("ADDED"), 3)
      assert.strictEqual(yield* events("MODIFIED"), 1)
      assert.strictEqual(yield* events("DELETED"), 1)
      // relists, by cause
      const relists = (cause: string) => counterValue(tagged(Metrics.relists, { informer: name, cause }))
      assert.strictEqual(yield* relists("gone"), 0)
      yield* fake.resetWatch
      yield* settle
      assert.strictEqual(yield* relists("gone"), 1)
      // objects listed: pod1 and pod2 at the first sync, pod1 and pod3 at the relist
      assert.strictEqual(yield* counterValue(tagged(Metrics.listedObjects, { informer: name })), 4)
    }))
})

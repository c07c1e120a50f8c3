/**
 * The SharedInformer suite: ports of client-go's shared_informer_test.go (names keep the client-go test
 * names), processor/listener behaviours, stop order, a property test over random server histories, and
 * slow-handler isolation. Every test builds its own fake and informer and drives time with TestClock.
 */
import { assert, describe, it } from "@effect/vitest"
import {
  Cause,
  Clock,
  Context,
  Deferred,
  Effect,
  Either,
  Exit,
  FastCheck,
  Fiber,
  Metric,
  Option,
  Random,
  Scope,
  Stream,
  Supervisor,
  TestClock
} from "effect"
import * as FakeListerWatcher from "../src/FakeListerWatcher.js"
import * as Indexer from "../src/Indexer.js"
import type { KubeObject } from "../src/KubeObject.js"
import { compareResourceVersions, DeletedFinalStateUnknown, resourceVersion } from "../src/KubeObject.js"
import type { ListerWatcher } from "../src/ListerWatcher.js"
import { Forbidden, ServerError } from "../src/ListerWatcher.js"
import * as Metrics from "../src/Metrics.js"
import * as SharedInformer from "../src/SharedInformer.js"
import {
  captureLogs,
  gone as fixtureGone,
  type Pod,
  pod as fixturePod,
  serverError as fixtureServerError,
  settle
} from "./fixtures/index.js"

// -------------------------------------------------------------------------------------------------
// helpers
// -------------------------------------------------------------------------------------------------

type Obj = KubeObject
type Fake = FakeListerWatcher.FakeListerWatcher.Service<Obj>
type Informer = SharedInformer.SharedInformer.Service<Obj>
type Notification = SharedInformer.Notification<Obj>
type Deleted = Obj | DeletedFinalStateUnknown<Obj>

/** The suite's pods: in namespace "ns", uid = name. */
const pod = (
  name: string,
  fields: { readonly labels?: Record<string, string>; readonly spec?: Record<string, unknown> } = {}
): Pod => fixturePod(name, { uid: name, ...fields })

const specOf = (obj: Obj | undefined): Readonly<Record<string, unknown>> => (obj as Pod | undefined)?.spec ?? {}

const nameOf = (obj: Deleted | undefined): string =>
  obj === undefined
    ? "<none>"
    : obj instanceof DeletedFinalStateUnknown
    ? `tombstone:${obj.key}`
    : obj.metadata?.name ?? "<unnamed>"

const rvOf = (obj: Obj | undefined): string => resourceVersion(obj) ?? ""

const keyOf = (obj: Deleted): string => Either.getOrThrow(Indexer.deletionHandlingMetaNamespaceKey(obj))

const objectOf = (n: Notification): Deleted => n._tag === "Update" ? n.newObject : n.object

const isSync = (n: Notification): boolean => n._tag === "Update" && rvOf(n.oldObject) === rvOf(n.newObject)

const summary = (n: Notification): string => {
  switch (n._tag) {
    case "Add":
      return `add ${nameOf(n.object)}${n.isInInitialList ? " (initial)" : ""}`
    case "Update":
      return `update ${nameOf(n.newObject)} ${rvOf(n.oldObject)}->${rvOf(n.newObject)}`
    case "Delete":
      return `delete ${nameOf(n.object)}`
  }
}

const namesOf = (objects: ReadonlyArray<Obj>): Array<string> => objects.map((o) => nameOf(o)).sort()

const range = (n: number): Array<number> => Array.from({ length: n }, (_, i) => i)

const yieldTimes = (n: number): Effect.Effect<void> =>
  Effect.forEach(range(n), () => Effect.yieldNow(), { discard: true })

/** A handler that records every notification. */
interface Recorder {
  readonly events: Array<Notification>
  readonly handler: SharedInformer.Handler<Obj>
  readonly clear: () => void
}

const recorder = (name?: string): Recorder => {
  const events: Array<Notification> = []
  return {
    events,
    clear: () => {
      events.length = 0
    },
    handler: {
      name,
      onAdd: (object, isInInitialList) =>
        Effect.sync(() => {
          events.push({ _tag: "Add", object, isInInitialList })
        }),
      onUpdate: (oldObject, newObject) =>
        Effect.sync(() => {
          events.push({ _tag: "Update", oldObject, newObject })
        }),
      onDelete: (object) =>
        Effect.sync(() => {
          events.push({ _tag: "Delete", object })
        })
    }
  }
}

/** A handler that records the virtual time of every sync (same-resourceVersion) update. */
const syncTimes = (): { readonly times: Array<number>; readonly handler: SharedInformer.Handler<Obj> } => {
  const times: Array<number> = []
  return {
    times,
    handler: {
      onUpdate: (oldObject, newObject) =>
        rvOf(oldObject) === rvOf(newObject)
          ? Effect.flatMap(Clock.currentTimeMillis, (now) =>
            Effect.sync(() => {
              times.push(now)
            }))
          : Effect.void
    }
  }
}

interface Env {
  readonly fake: Fake
  readonly informer: Informer
  readonly scope: Scope.CloseableScope
  /** Closes the informer's scope: stops it. */
  readonly stop: Effect.Effect<void>
}

/** A fresh fake and informer; the informer lives in its own scope, closed at the latest with the test's. */
const setup = (
  options: SharedInformer.SharedInformer.Options<Obj> = {},
  initial: ReadonlyArray<Obj> = [],
  wrap?: (fake: Fake) => ListerWatcher.Service<Obj>
): Effect.Effect<Env, never, Scope.Scope> =>
  Effect.gen(function*() {
    const scope = yield* Scope.make()
    yield* Effect.addFinalizer(() => Scope.close(scope, Exit.void))
    const fake = yield* FakeListerWatcher.make<Obj>({ initial })
    const informer = yield* SharedInformer.make(wrap === undefined ? fake : wrap(fake), options).pipe(
      Scope.extend(scope)
    )
    return { fake, informer, scope, stop: Scope.close(scope, Exit.void) }
  })

/** Settles until `condition` holds (for work that takes several scheduler turns). */
const eventually = (condition: Effect.Effect<boolean>, what: string): Effect.Effect<void> =>
  Effect.gen(function*() {
    for (let i = 0; i < 500; i++) {
      if (yield* condition) return
      yield* settle
    }
    assert.fail(`never happened: ${what}`)
  })

/** Records every fiber forked inside `Effect.supervised(tracker)`. */
class FiberTracker extends Supervisor.AbstractSupervisor<ReadonlyArray<Fiber.RuntimeFiber<unknown, unknown>>> {
  readonly fibers: Array<Fiber.RuntimeFiber<unknown, unknown>> = []
  readonly value = Effect.sync((): ReadonlyArray<Fiber.RuntimeFiber<unknown, unknown>> => this.fibers)
  override onStart<A, E, R>(
    _context: Context.Context<R>,
    _effect: Effect.Effect<A, E, R>,
    _parent: Option.Option<Fiber.RuntimeFiber<any, any>>,
    fiber: Fiber.RuntimeFiber<A, E>
  ): void {
    this.fibers.push(fiber as unknown as Fiber.RuntimeFiber<unknown, unknown>)
  }
  running(): Array<Fiber.RuntimeFiber<unknown, unknown>> {
    return this.fibers.filter((fiber) => fiber.unsafePoll() === null)
  }
}

/** Replays notifications onto an empty map key -> resourceVersion (Add/Update set, Delete deletes). */
const replay = (events: ReadonlyArray<Notification>): Map<string, string> => {
  const model = new Map<string, string>()
  for (const n of events) {
    if (n._tag === "Delete") model.delete(keyOf(n.object))
    else model.set(keyOf(objectOf(n) as Obj), rvOf(objectOf(n) as Obj))
  }
  return model
}

/**
 * Replays strictly: an add must be for a key the handler does not hold, an update must start from the
 * state the handler last saw, a delete must be for a key it holds. Catches gaps and duplicates.
 */
const strictReplay = (events: ReadonlyArray<Notification>): Map<string, string> => {
  const model = new Map<string, string>()
  for (const n of events) {
    switch (n._tag) {
      case "Add": {
        const key = keyOf(n.object)
        assert.isFalse(model.has(key), `duplicate add of ${key}`)
        model.set(key, rvOf(n.object))
        break
      }
      case "Update": {
        const key = keyOf(n.newObject)
        assert.strictEqual(model.get(key), rvOf(n.oldObject), `update of ${key} from a state the handler never saw`)
        model.set(key, rvOf(n.newObject))
        break
      }
      case "Delete": {
        const key = keyOf(n.object)
        assert.isTrue(model.has(key), `delete of ${key}, which the handler does not hold`)
        model.delete(key)
        break
      }
    }
  }
  return model
}

/** Per key, the resourceVersions a handler sees never go backwards. */
const assertMonotonic = (events: ReadonlyArray<Notification>, who: string): void => {
  const last = new Map<string, string>()
  for (const n of events) {
    const obj = n._tag === "Update"
      ? n.newObject
      : n.object instanceof DeletedFinalStateUnknown
      ? n.object.obj
      : n.object
    if (obj === undefined) continue
    const key = keyOf(objectOf(n))
    const rv = rvOf(obj)
    const previous = last.get(key)
    if (previous !== undefined) {
      assert.isTrue(compareResourceVersions(previous, rv) <= 0, `${who}: ${key} went back from ${previous} to ${rv}`)
    }
    last.set(key, rv)
  }
}

const toMap = (objects: ReadonlyArray<Obj>): Map<string, string> => new Map(objects.map((o) => [keyOf(o), rvOf(o)]))

const sortedEntries = (map: Map<string, string>): Array<[string, string]> =>
  Array.from(map.entries()).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))

const cacheMatchesServer = (env: Env): Effect.Effect<boolean> =>
  Effect.gen(function*() {
    const cache = toMap(yield* env.informer.indexer.list)
    const server = toMap(yield* env.fake.objects)
    return JSON.stringify(sortedEntries(cache)) === JSON.stringify(sortedEntries(server))
  })

const labelsIndex: Indexer.IndexFunction<Obj> = (obj) => Object.keys(obj.metadata?.labels ?? {})

const counterValue = (metric: Metric.Metric.Counter<number>): Effect.Effect<number> =>
  Effect.map(Metric.value(metric), (state) => state.count)

const gaugeValue = (metric: Metric.Metric.Gauge<number>): Effect.Effect<number> =>
  Effect.map(Metric.value(metric), (state) => state.value)

const tagged = <Type, In, Out>(metric: Metric.Metric<Type, In, Out>, tags: Record<string, string>) =>
  Object.entries(tags).reduce((m, [key, value]) => Metric.tagged(m, key, value), metric)

// -------------------------------------------------------------------------------------------------
// 1. ports of client-go's shared_informer_test.go
// -------------------------------------------------------------------------------------------------

describe("SharedInformer: client-go ports", () => {
  it.scoped("TestIndexer: indexes added before and after start are populated", () =>
    Effect.gen(function*() {
      const { fake, informer } = yield* setup({ indexers: { labels: labelsIndex } }, [
        pod("pod1", { labels: { a: "1", b: "1" } }),
        pod("pod2", { labels: { b: "1" } })
      ])
      yield* informer.start
      yield* informer.synced
      assert.deepStrictEqual(namesOf(yield* informer.indexer.byIndex("labels", "a")), ["pod1"])
      yield* fake.add(pod("pod3", { labels: { a: "1" } }))
      yield* eventually(
        Effect.map(Effect.orDie(informer.indexer.byIndex("labels", "a")), (objs) => objs.length === 2),
        "pod3 indexed"
      )
      assert.deepStrictEqual(namesOf(yield* informer.indexer.byIndex("labels", "a")), ["pod1", "pod3"])
      yield* informer.addIndexers({ labelsAgain: labelsIndex })
      assert.deepStrictEqual(namesOf(yield* informer.indexer.byIndex("labelsAgain", "a")), ["pod1", "pod3"])
      assert.deepStrictEqual((yield* informer.indexer.listIndexFuncValues("labels")).slice().sort(), ["a", "b"])
      assert.deepStrictEqual((yield* informer.indexer.listIndexFuncValues("labelsAgain")).slice().sort(), ["a", "b"])
    }))

  it.scoped("TestListenerResyncPeriods: each handler resyncs on its own period", () =>
    Effect.gen(function*() {
      const { informer } = yield* setup({ resyncPeriod: "1 second" }, [pod("pod1"), pod("pod2")])
      const l1 = recorder("l1")
      const l2 = recorder("l2")
      const l3 = recorder("l3")
      yield* informer.addEventHandler(l1.handler, { resyncPeriod: 0 })
      yield* informer.addEventHandler(l2.handler, { resyncPeriod: "2 seconds" })
      yield* informer.addEventHandler(l3.handler, { resyncPeriod: "3 seconds" })
      yield* informer.start
      yield* settle
      for (const l of [l1, l2, l3]) {
        assert.deepStrictEqual(l.events.map(summary), ["add pod1 (initial)", "add pod2 (initial)"])
        l.clear()
      }
      const syncs = (l: Recorder) => l.events.filter(isSync).map((n) => nameOf(objectOf(n))).sort()
      yield* TestClock.adjust("1 second")
      assert.deepStrictEqual([syncs(l1), syncs(l2), syncs(l3)], [[], [], []])
      yield* TestClock.adjust("1 second") // t = 2 s
      assert.deepStrictEqual([syncs(l1), syncs(l2), syncs(l3)], [[], ["pod1", "pod2"], []])
      l2.clear()
      yield* TestClock.adjust("1 second") // t = 3 s
      assert.deepStrictEqual([syncs(l1), syncs(l2), syncs(l3)], [[], [], ["pod1", "pod2"]])
      l3.clear()
      yield* TestClock.adjust("1 second") // t = 4 s
      assert.deepStrictEqual([syncs(l1), syncs(l2), syncs(l3)], [[], ["pod1", "pod2"], []])
      yield* TestClock.adjust("10 seconds")
      assert.deepStrictEqual(l1.events, [])
      for (const l of [l2, l3]) assert.isTrue(l.events.every(isSync))
    }))

  it.scoped("TestListenerResyncPeriodsDelayed: a slow handler added before start changes nobody's schedule", () =>
    Effect.gen(function*() {
      const { informer } = yield* setup({ resyncPeriod: "1 second" }, [pod("pod1"), pod("pod2")])
      const l1 = recorder("l1")
      const l2 = recorder("l2")
      const l3 = recorder("l3")
      let first = true
      const slow: SharedInformer.Handler<Obj> = {
        ...l2.handler,
        onAdd: (object, isInInitialList) =>
          Effect.suspend(() => {
            const delay = first ? Effect.sleep("1 second") : Effect.void
            first = false
            return Effect.zipRight(delay, l2.handler.onAdd!(object, isInInitialList))
          })
      }
      yield* informer.addEventHandler(l1.handler, { resyncPeriod: 0 })
      yield* informer.addEventHandler(slow, { resyncPeriod: "2 seconds" })
      yield* informer.addEventHandler(l3.handler, { resyncPeriod: "3 seconds" })
      yield* informer.start
      yield* settle
      assert.isTrue(yield* informer.hasSynced)
      assert.deepStrictEqual(l1.events.map(summary), ["add pod1 (initial)", "add pod2 (initial)"])
      assert.deepStrictEqual(l3.events.map(summary), ["add pod1 (initial)", "add pod2 (initial)"])
      assert.deepStrictEqual(l2.events, [])
      l1.clear()
      l3.clear()
      yield* TestClock.adjust("1 second")
      assert.deepStrictEqual(l2.events.map(summary), ["add pod1 (initial)", "add pod2 (initial)"])
      l2.clear()
      const syncs = (l: Recorder) => l.events.filter(isSync).map((n) => nameOf(objectOf(n))).sort()
      yield* TestClock.adjust("1 second") // t = 2 s
      assert.deepStrictEqual([syncs(l1), syncs(l2), syncs(l3)], [[], ["pod1", "pod2"], []])
      l2.clear()
      yield* TestClock.adjust("1 second") // t = 3 s
      assert.deepStrictEqual([syncs(l1), syncs(l2), syncs(l3)], [[], [], ["pod1", "pod2"]])
    }))

  it.scoped("TestResyncCheckPeriod: handlers added before start lower the check period; each keeps its own", () =>
    Effect.gen(function*() {
      const { informer } = yield* setup({ resyncPeriod: "12 hours" }, [pod("pod1")])
      const l1 = syncTimes()
      const l2 = syncTimes()
      const l3 = syncTimes()
      const l4 = syncTimes()
      yield* informer.addEventHandler(l1.handler, { resyncPeriod: 0 })
      yield* informer.addEventHandler(l2.handler, { resyncPeriod: "1 minute" })
      yield* informer.addEventHandler(l3.handler, { resyncPeriod: "55 seconds" })
      yield* informer.addEventHandler(l4.handler, { resyncPeriod: "5 seconds" })
      yield* informer.start
      yield* settle
      yield* TestClock.adjust("2 minutes")
      // The check period is 5 s (the smallest), yet l2 and l3 resync on their own periods.
      assert.deepStrictEqual(l1.times, [])
      assert.deepStrictEqual(l2.times, [60_000, 120_000])
      assert.deepStrictEqual(l3.times, [55_000, 110_000])
      assert.deepStrictEqual(l4.times, range(24).map((i) => (i + 1) * 5_000))
    }))

  it.scoped("TestSharedInformerInitializationRace: handlers added concurrently with start", () =>
    Effect.gen(function*() {
      const { informer } = yield* setup({}, [pod("pod1")])
      const recorders = range(30).map((i) => recorder(`h${i}`))
      const starter = yield* Effect.fork(Effect.zipRight(yieldTimes(3), informer.start))
      const registrations = yield* Effect.forEach(
        recorders,
        (r, i) => Effect.zipRight(yieldTimes(i % 7), informer.addEventHandler(r.handler)),
        { concurrency: "unbounded" }
      )
      yield* Fiber.join(starter)
      yield* settle
      assert.isTrue(yield* informer.hasSynced)
      for (const [i, r] of recorders.entries()) {
        assert.deepStrictEqual(r.events.map(summary), ["add pod1 (initial)"], `handler ${i}`)
        assert.isTrue(yield* registrations[i].hasSynced)
      }
    }))

  it.scoped("TestSharedInformerWatchDisruption: lost events come back at relist; unchanged objects only as resyncs", () =>
    Effect.gen(function*() {
      const { fake, informer } = yield* setup({ resyncPeriod: "1 second" }, [pod("pod1"), pod("pod2")])
      const noResync = recorder("no-resync")
      const resync = recorder("resync")
      yield* informer.addEventHandler(noResync.handler, { resyncPeriod: 0 })
      yield* informer.addEventHandler(resync.handler, { resyncPeriod: "1 second" })
      yield* informer.start
      yield* settle
      for (const l of [noResync, resync]) {
        assert.deepStrictEqual(l.events.map(summary), ["add pod1 (initial)", "add pod2 (initial)"])
        l.clear()
      }
      yield* fake.addDropWatch(pod("pod3"))
      yield* fake.modifyDropWatch(pod("pod2", { spec: { v: 2 } }))
      yield* settle
      assert.deepStrictEqual([noResync.events, resync.events], [[], []])
      // Only the resync handler is marked due from now on.
      yield* TestClock.adjust("1 second")
      noResync.clear()
      resync.clear()
      yield* fake.resetWatch
      yield* TestClock.adjust("3 seconds")
      const seen = (l: Recorder) => Array.from(new Set(l.events.map((n) => nameOf(objectOf(n))))).sort()
      assert.deepStrictEqual(seen(noResync), ["pod2", "pod3"])
      assert.deepStrictEqual(noResync.events.map(summary), ["update pod2 2->4", "add pod3"])
      assert.deepStrictEqual(seen(resync), ["pod1", "pod2", "pod3"])
    }))

  describe("TestSharedInformerErrorHandling", () => {
    it.scoped("a forbidden LIST reaches the watch-error handler at once", () =>
      Effect.gen(function*() {
        const { fake, informer } = yield* setup({ reflector: { watchList: false } })
        const received: Array<SharedInformer.WatchError> = []
        yield* informer.setWatchErrorHandler((error, context) =>
          Effect.sync(() => {
            received.push({ error, context })
          })
        )
        yield* fake.failNextList(new Forbidden({ message: "Access Denied" }))
        yield* informer.start
        yield* settle
        assert.strictEqual(received.length, 1)
        assert.strictEqual(received[0].error._tag, "Forbidden")
        assert.strictEqual(received[0].error.message, "Access Denied")
        assert.strictEqual(received[0].context.phase, "list")
        assert.strictEqual(yield* Clock.currentTimeMillis, 0, "no virtual time passed")
        assert.isFalse(yield* informer.hasSynced)
        // The Reflector backs off and lists again.
        yield* TestClock.adjust("2 seconds")
        assert.isTrue(yield* informer.hasSynced)
      }))

    it.scoped("a forbidden watch-list reaches the handler given in the options", () =>
      Effect.gen(function*() {
        const received: Array<string> = []
        const { fake, informer } = yield* setup({
          onWatchError: (error, context) =>
            Effect.sync(() => {
              received.push(`${context.phase} ${error._tag}`)
            })
        }, [pod("pod1")])
        yield* fake.failNextWatch(new Forbidden({ message: "Access Denied" }))
        yield* informer.start
        yield* settle
        assert.deepStrictEqual(received, ["watch-list Forbidden"])
        // The Reflector falls back to LIST and syncs.
        yield* TestClock.adjust("2 seconds")
        assert.isTrue(yield* informer.hasSynced)
        assert.deepStrictEqual(yield* informer.indexer.listKeys, ["ns/pod1"])
      }))
  })

  it.scoped("TestSharedInformerStartRace: setTransform/setWatchErrorHandler after start fail with InformerStartedError", () =>
    Effect.gen(function*() {
      const { informer } = yield* setup({ name: "race" }, [pod("pod1")])
      yield* informer.setTransform((o) => o)
      yield* informer.setWatchErrorHandler(() => Effect.void)
      const hammer = yield* Effect.fork(Effect.forEach(range(50), (i) =>
        Effect.zipRight(
          Effect.yieldNow(),
          Effect.either(
            i % 2 === 0 ? informer.setTransform((o) => o) : informer.setWatchErrorHandler(() => Effect.void)
          )
        )))
      yield* yieldTimes(10)
      yield* informer.start
      const results = yield* Fiber.join(hammer)
      // Successes, then failures: never a success after start.
      const firstFailure = results.findIndex(Either.isLeft)
      assert.isTrue(firstFailure >= 0)
      assert.isTrue(results.slice(firstFailure).every(Either.isLeft))
      for (const result of results) {
        if (Either.isLeft(result)) assert.strictEqual(result.left._tag, "InformerStartedError")
      }
      const transformError = yield* Effect.flip(informer.setTransform((o) => o))
      assert.strictEqual(transformError.setting, "transform")
      assert.include(transformError.message, "informer race has already started")
      const handlerError = yield* Effect.flip(informer.setWatchErrorHandler(() => Effect.void))
      assert.strictEqual(handlerError.setting, "watch error handler")
      yield* settle
      assert.isTrue(yield* informer.hasSynced)
    }))

  it.scoped("TestSharedInformerTransformer: handlers and the cache see transformed objects", () =>
    Effect.gen(function*() {
      const { informer } = yield* setup({}, [pod("pod1"), pod("pod2")])
      const upper = (o: Obj): Obj => ({ ...o, metadata: { ...o.metadata, name: o.metadata?.name?.toUpperCase() } })
      yield* informer.setTransform(upper)
      const r = recorder()
      yield* informer.addEventHandler(r.handler)
      yield* informer.start
      yield* settle
      assert.deepStrictEqual(r.events.map(summary), ["add POD1 (initial)", "add POD2 (initial)"])
      assert.deepStrictEqual((yield* informer.indexer.listKeys).slice().sort(), ["ns/POD1", "ns/POD2"])
    }))

  it.scoped("TestSharedInformerRemoveHandler: removed handlers stop receiving, one at a time", () =>
    Effect.gen(function*() {
      const { fake, informer } = yield* setup()
      const h1 = recorder()
      const h2 = recorder()
      const r1 = yield* informer.addEventHandler(h1.handler)
      const r2 = yield* informer.addEventHandler(h2.handler)
      yield* informer.start
      yield* settle
      yield* fake.add(pod("a"))
      yield* settle
      assert.deepStrictEqual([h1.events.length, h2.events.length], [1, 1])
      yield* informer.removeEventHandler(r2)
      yield* fake.add(pod("b"))
      yield* settle
      assert.deepStrictEqual([h1.events.length, h2.events.length], [2, 1])
      yield* informer.removeEventHandler(r1)
      yield* fake.add(pod("c"))
      yield* settle
      assert.deepStrictEqual([h1.events.length, h2.events.length], [2, 1])
    }))

  it.scoped("TestSharedInformerRemoveForeignHandler: another informer's registration is ignored", () =>
    Effect.gen(function*() {
      const a = yield* setup({ name: "a" })
      const b = yield* setup({ name: "b" })
      const ha1 = recorder()
      const ha2 = recorder()
      const hb = recorder()
      const ra1 = yield* a.informer.addEventHandler(ha1.handler)
      const ra2 = yield* a.informer.addEventHandler(ha2.handler)
      const rb = yield* b.informer.addEventHandler(hb.handler)
      yield* b.informer.removeEventHandler(ra1)
      yield* b.informer.removeEventHandler(ra2)
      yield* a.informer.removeEventHandler(rb)
      yield* a.informer.start
      yield* b.informer.start
      yield* a.fake.add(pod("a1"))
      yield* b.fake.add(pod("b1"))
      yield* settle
      assert.deepStrictEqual([ha1.events.length, ha2.events.length, hb.events.length], [1, 1, 1])
      // Normal removal still works.
      yield* a.informer.removeEventHandler(ra1)
      yield* a.fake.add(pod("a2"))
      yield* settle
      assert.deepStrictEqual([ha1.events.length, ha2.events.length, hb.events.length], [1, 2, 1])
    }))

  it.scoped("TestSharedInformerMultipleRegistration: one handler added twice is two registrations", () =>
    Effect.gen(function*() {
      const { fake, informer } = yield* setup()
      const h = recorder()
      const r1 = yield* informer.addEventHandler(h.handler)
      const r2 = yield* informer.addEventHandler(h.handler)
      assert.notStrictEqual(r1, r2)
      yield* informer.start
      yield* settle
      yield* fake.add(pod("a"))
      yield* settle
      assert.deepStrictEqual(h.events.map(summary), ["add a", "add a"])
      yield* informer.removeEventHandler(r1)
      yield* fake.add(pod("b"))
      yield* settle
      assert.deepStrictEqual(h.events.map(summary), ["add a", "add a", "add b"])
      assert.isTrue(yield* r2.hasSynced)
    }))

  it.scoped("TestRemovingRemovedSharedInformer: removing twice is a no-op", () =>
    Effect.gen(function*() {
      const { fake, informer } = yield* setup()
      const h = recorder()
      const r = yield* informer.addEventHandler(h.handler)
      yield* informer.start
      yield* informer.removeEventHandler(r)
      yield* informer.removeEventHandler(r)
      yield* r.remove
      yield* fake.add(pod("a"))
      yield* settle
      assert.deepStrictEqual(h.events, [])
    }))

  it.scoped("TestSharedInformerHandlerAbuse: fibers add and remove handlers while events flow and the informer stops", () =>
    Effect.gen(function*() {
      const tracker = new FiberTracker()
      const { errors, informer } = yield* Effect.gen(function*() {
        const { fake, informer, stop } = yield* setup({ resyncPeriod: "1 second" })
        yield* informer.start
        const halfway = yield* Deferred.make<void>()
        const producer = yield* Effect.fork(Effect.gen(function*() {
          const live = new Set<number>()
          for (let i = 0; i < 600; i++) {
            const k = yield* Random.nextIntBetween(0, 20)
            if (!live.has(k)) {
              yield* fake.add(pod(`p${k}`))
              live.add(k)
            } else if (yield* Random.nextBoolean) {
              yield* fake.modify(pod(`p${k}`, { spec: { i } }))
            } else {
              yield* fake.delete(pod(`p${k}`))
              live.delete(k)
            }
            if (i === 300) yield* Deferred.succeed(halfway, undefined)
            if (i % 3 === 0) yield* Effect.yieldNow()
          }
        }))
        const abuser = Effect.gen(function*() {
          const registrations: Array<SharedInformer.Registration> = []
          const failures: Array<unknown> = []
          let delivered = 0
          const count = () =>
            Effect.sync(() => {
              delivered++
            })
          while (failures.length < 3) {
            // Each fiber holds 0 to 3 registrations.
            const add = registrations.length === 0 || (registrations.length < 3 && (yield* Random.nextBoolean))
            if (add) {
              const result = yield* Effect.either(informer.addEventHandler({
                onAdd: count,
                onUpdate: count,
                onDelete: count
              }, { resyncPeriod: "1 second" }))
              if (Either.isLeft(result)) failures.push(result.left)
              else registrations.push(result.right)
            } else {
              const i = yield* Random.nextIntBetween(0, registrations.length)
              yield* informer.removeEventHandler(registrations.splice(i, 1)[0])
            }
            yield* Effect.yieldNow()
          }
          // Removing after stop succeeds.
          yield* Effect.forEach(registrations, (r) => informer.removeEventHandler(r), { discard: true })
          return { failures, delivered }
        })
        const abusers = yield* Effect.forEach(range(10), () => Effect.fork(abuser))
        yield* Deferred.await(halfway)
        yield* stop
        yield* Fiber.join(producer)
        const results = yield* Effect.forEach(abusers, Fiber.join)
        assert.isTrue(results.some((r) => r.delivered > 0), "some handler received events before the stop")
        return { errors: results.flatMap((r) => r.failures), informer }
      }).pipe(Effect.supervised(tracker), Effect.withRandom(Random.make("abuse")))
      assert.strictEqual(errors.length, 30)
      for (const error of errors) {
        assert.instanceOf(error, SharedInformer.InformerStoppedError)
        assert.isTrue((error as Error).message.endsWith("because it has stopped already"))
      }
      assert.isTrue(yield* informer.isStopped)
      assert.isTrue(tracker.fibers.length > 10)
      assert.deepStrictEqual(tracker.running(), [])
    }))

  it.scoped("TestStateSharedInformer: isStarted/isStopped before, while and after running", () =>
    Effect.gen(function*() {
      const { informer, stop } = yield* setup()
      assert.deepStrictEqual([yield* informer.isStarted, yield* informer.isStopped], [false, false])
      yield* informer.start
      yield* settle
      assert.deepStrictEqual([yield* informer.isStarted, yield* informer.isStopped], [true, false])
      yield* stop
      assert.deepStrictEqual([yield* informer.isStarted, yield* informer.isStopped], [true, true])
    }))

  it.scoped("TestAddOnStoppedSharedInformer: adding a handler (or starting) after stop fails", () =>
    Effect.gen(function*() {
      const { informer, stop } = yield* setup({ name: "pods" })
      yield* informer.start
      yield* settle
      yield* stop
      const error = yield* Effect.flip(informer.addEventHandler(recorder().handler, { resyncPeriod: "1 second" }))
      assert.strictEqual(error._tag, "InformerStoppedError")
      assert.strictEqual(error.informer, "pods")
      assert.isTrue(error.message.endsWith("was not added to shared informer pods because it has stopped already"))
      assert.strictEqual((yield* Effect.flip(informer.start))._tag, "InformerStoppedError")
    }))

  it.scoped("TestRemoveOnStoppedSharedInformer: removing after stop succeeds", () =>
    Effect.gen(function*() {
      const { informer, stop } = yield* setup()
      const r = yield* informer.addEventHandler(recorder().handler)
      yield* informer.start
      yield* settle
      yield* stop
      yield* informer.removeEventHandler(r)
      yield* r.remove
      assert.strictEqual(yield* r.backlog, 0)
    }))

  it.scoped("TestRemoveWhileActive: a removed handler gets nothing more", () =>
    Effect.gen(function*() {
      const { fake, informer } = yield* setup()
      const h = recorder()
      const r = yield* informer.addEventHandler(h.handler)
      yield* informer.start
      yield* settle
      yield* fake.add(pod("pod1"))
      yield* settle
      assert.deepStrictEqual(h.events.map(summary), ["add pod1"])
      yield* informer.removeEventHandler(r)
      yield* fake.add(pod("pod2"))
      yield* settle
      assert.deepStrictEqual(h.events.map(summary), ["add pod1"])
      assert.strictEqual(yield* r.backlog, 0)
    }))

  it.scoped("TestAddWhileActive: a late handler syncs once its replayed adds have returned", () =>
    Effect.gen(function*() {
      const { fake, informer } = yield* setup({}, [pod("pod1")])
      const h1 = recorder()
      const r1 = yield* informer.addEventHandler(h1.handler)
      assert.isFalse(yield* r1.hasSynced)
      const r1Synced = yield* Effect.fork(r1.synced)
      yield* informer.start
      yield* settle
      assert.deepStrictEqual(h1.events.map(summary), ["add pod1 (initial)"])
      assert.isTrue(yield* r1.hasSynced)
      assert.isTrue(Option.isSome(yield* Fiber.poll(r1Synced)))

      const gate = yield* Deferred.make<void>()
      const h2 = recorder()
      let first = true
      const r2 = yield* informer.addEventHandler({
        ...h2.handler,
        onAdd: (object, isInInitialList) =>
          Effect.suspend(() => {
            const wait = first ? Deferred.await(gate) : Effect.void
            first = false
            return Effect.zipRight(wait, h2.handler.onAdd!(object, isInInitialList))
          })
      })
      assert.isFalse(yield* r2.hasSynced)
      const r2Synced = yield* Effect.fork(r2.synced)
      yield* fake.add(pod("pod2"))
      yield* settle
      assert.isFalse(yield* r2.hasSynced)
      assert.isTrue(Option.isNone(yield* Fiber.poll(r2Synced)))
      assert.deepStrictEqual(h1.events.map(summary), ["add pod1 (initial)", "add pod2"])
      yield* Deferred.succeed(gate, undefined)
      yield* settle
      assert.deepStrictEqual(h2.events.map(summary), ["add pod1 (initial)", "add pod2"])
      assert.isTrue(yield* r2.hasSynced)
      assert.isTrue(Option.isSome(yield* Fiber.poll(r2Synced)))
    }))

  describe("TestShutdown: no fiber outlives the informer", () => {
    it.scoped("handler added before start, removed after stop", () =>
      Effect.gen(function*() {
        const tracker = new FiberTracker()
        const { r, stop } = yield* Effect.gen(function*() {
          const { fake, informer, stop } = yield* setup({}, [pod("pod1")])
          const r = yield* informer.addEventHandler(recorder().handler)
          yield* informer.start
          yield* fake.add(pod("pod2"))
          yield* settle
          return { r, stop }
        }).pipe(Effect.supervised(tracker))
        assert.isTrue(tracker.running().length > 0)
        yield* stop
        yield* r.remove
        assert.isTrue(tracker.fibers.length > 0)
        assert.deepStrictEqual(tracker.running(), [])
      }))

    it.scoped("handler added and removed after sync", () =>
      Effect.gen(function*() {
        const tracker = new FiberTracker()
        const { informer, stop } = yield* setup({}, [pod("pod1")])
        yield* Effect.gen(function*() {
          yield* informer.start
          yield* settle
        }).pipe(Effect.supervised(tracker))
        const before = tracker.running().length
        const handlerTracker = new FiberTracker()
        const r = yield* informer.addEventHandler(recorder().handler).pipe(Effect.supervised(handlerTracker))
        assert.strictEqual(handlerTracker.running().length, 1)
        yield* settle
        yield* r.remove
        assert.deepStrictEqual(handlerTracker.running(), [])
        assert.strictEqual(tracker.running().length, before)
        yield* stop
        assert.deepStrictEqual(tracker.running(), [])
      }))

    it.scoped("informer never run", () =>
      Effect.gen(function*() {
        const tracker = new FiberTracker()
        const { informer, stop } = yield* setup({}, [pod("pod1")]).pipe(Effect.supervised(tracker))
        yield* informer.addEventHandler(recorder().handler).pipe(Effect.supervised(tracker))
        assert.strictEqual(tracker.running().length, 1)
        yield* stop
        assert.deepStrictEqual(tracker.running(), [])
        assert.isTrue(yield* informer.isStopped)
      }))
  })

  it.scoped("TestEventPanics: failing handlers are logged by name, skip the item, go on, and still sync", () =>
    Effect.gen(function*() {
      const logs = captureLogs()
      yield* logs.capture(Effect.gen(function*() {
        const pods = range(5).map((i) => pod(`pod${i}`))
        const { informer } = yield* setup({ name: "panics" }, pods)
        const recovered: Array<string> = []
        const failing = yield* informer.addEventHandler({
          name: "failing-handler",
          onAdd: (o) => Effect.fail(`typed failure on ${nameOf(o)}`)
        })
        const dying = yield* informer.addEventHandler({
          name: "dying-handler",
          onAdd: (o) => Effect.die(new Error(`defect on ${nameOf(o)}`))
        })
        const flaky = yield* informer.addEventHandler({
          name: "flaky-handler",
          onAdd: (o) =>
            nameOf(o) === "pod1" ? Effect.die("boom") : Effect.sync(() => {
              recovered.push(nameOf(o))
            })
        })
        // throws while building its Effect, on its very first notification and on pod3
        const thrownRecovered: Array<string> = []
        const throwing = yield* informer.addEventHandler({
          name: "throwing-handler",
          onAdd: (o) => {
            if (nameOf(o) === "pod0" || nameOf(o) === "pod3") throw new Error(`thrown on ${nameOf(o)}`)
            return Effect.sync(() => {
              thrownRecovered.push(nameOf(o))
            })
          }
        })
        yield* informer.start
        yield* settle
        assert.isTrue(yield* informer.hasSynced)
        // client-go #129024: a panicking handler never syncs; ours does.
        for (const r of [failing, dying, flaky, throwing]) assert.isTrue(yield* r.hasSynced, r.name)
        assert.deepStrictEqual(recovered, ["pod0", "pod2", "pod3", "pod4"])
        assert.deepStrictEqual(thrownRecovered, ["pod1", "pod2", "pod4"])
        // No pause after a failure: all of it happened without virtual time passing.
        assert.strictEqual(yield* Clock.currentTimeMillis, 0)
        const failures = (name: string) =>
          counterValue(tagged(Metrics.handlerFailures, { informer: "panics", handler: name }))
        assert.strictEqual(yield* failures("failing-handler"), 5)
        assert.strictEqual(yield* failures("dying-handler"), 5)
        assert.strictEqual(yield* failures("flaky-handler"), 1)
        assert.strictEqual(yield* failures("throwing-handler"), 2)
      }))
      const logged = (name: string) => logs.lines.filter((line) => line.includes(`handler ${name} failed`))
      assert.strictEqual(logged("failing-handler").length, 5)
      assert.strictEqual(logged("dying-handler").length, 5)
      assert.strictEqual(logged("flaky-handler").length, 1)
      assert.include(logged("failing-handler")[0], "typed failure on pod0")
      assert.include(logged("dying-handler")[0], "defect on pod0")
      assert.include(logged("flaky-handler")[0], "add of ns/pod1")
      assert.strictEqual(logged("throwing-handler").length, 2)
      assert.include(logged("throwing-handler")[0], "add of ns/pod0")
      assert.include(logged("throwing-handler")[0], "thrown on pod0")
      assert.include(logged("throwing-handler")[1], "add of ns/pod3")
    }))

  it.scoped("TestRemoveEventHandler_SynchronousShutdown (and _AsynchronousPanic): remove interrupts the blocked callback and waits", () =>
    Effect.gen(function*() {
      const { fake, informer } = yield* setup({}, [pod("pod1")])
      let interrupted = false
      let ranAfter = false
      let resourceClosed = false
      let touchedAfterClose = false
      const seen: Array<string> = []
      const blocked = yield* Deferred.make<void>()
      const r = yield* informer.addEventHandler({
        onAdd: (o) =>
          nameOf(o) === "pod1"
            ? Deferred.succeed(blocked, undefined).pipe(
              Effect.zipRight(Effect.never),
              Effect.onInterrupt(() =>
                Effect.sync(() => {
                  interrupted = true
                })
              ),
              Effect.zipRight(Effect.sync(() => {
                ranAfter = true
              }))
            )
            : Effect.sync(() => {
              if (resourceClosed) touchedAfterClose = true
              seen.push(nameOf(o))
            })
      })
      yield* informer.start
      yield* Deferred.await(blocked)
      yield* fake.add(pod("pod2"))
      yield* settle
      assert.strictEqual(yield* r.backlog, 1)
      const remover = yield* Effect.fork(r.remove)
      yield* settle
      assert.isTrue(Option.isSome(yield* Fiber.poll(remover)), "remove returned")
      assert.isTrue(interrupted, "the blocked callback was interrupted")
      // What the handler uses can be released now: nothing of it runs any more.
      resourceClosed = true
      yield* fake.add(pod("pod3"))
      yield* TestClock.adjust("1 minute")
      assert.isFalse(ranAfter)
      assert.isFalse(touchedAfterClose)
      assert.deepStrictEqual(seen, [])
    }))

  it.scoped("a handler may remove its own registration from a callback", () =>
    Effect.gen(function*() {
      const { fake, informer } = yield* setup({}, [pod("pod1")])
      const seen: Array<string> = []
      const other = recorder()
      const self = yield* Deferred.make<SharedInformer.Registration>()
      const r = yield* informer.addEventHandler({
        onAdd: (o) =>
          Effect.zipRight(
            Effect.sync(() => {
              seen.push(nameOf(o))
            }),
            nameOf(o) === "pod2" ? Effect.flatMap(Deferred.await(self), (reg) => reg.remove) : Effect.void
          )
      })
      yield* Deferred.succeed(self, r)
      yield* informer.addEventHandler(other.handler)
      yield* informer.start
      yield* settle
      yield* fake.add(pod("pod2"))
      yield* fake.add(pod("pod3"))
      yield* settle
      assert.deepStrictEqual(seen, ["pod1", "pod2"])
      assert.strictEqual(yield* r.backlog, 0)
      yield* fake.add(pod("pod4"))
      yield* settle
      assert.deepStrictEqual(seen, ["pod1", "pod2"])
      assert.deepStrictEqual(other.events.map(summary), ["add pod1 (initial)", "add pod2", "add pod3", "add pod4"])
    }))

  describe("TestShutDownEventHandler_Lifecycles: remove returns promptly", () => {
    const promptly = (r: SharedInformer.Registration) =>
      Effect.gen(function*() {
        const remover = yield* Effect.fork(r.remove)
        yield* settle
        assert.isTrue(Option.isSome(yield* Fiber.poll(remover)))
      })

    it.scoped("informer never started", () =>
      Effect.gen(function*() {
        const { informer } = yield* setup()
        yield* promptly(yield* informer.addEventHandler(recorder().handler))
      }))

    it.scoped("handler added after sync", () =>
      Effect.gen(function*() {
        const { informer } = yield* setup({}, [pod("pod1")])
        yield* informer.start
        yield* settle
        const r = yield* informer.addEventHandler(recorder().handler)
        yield* settle
        assert.isTrue(yield* r.hasSynced)
        yield* promptly(r)
      }))

    it.scoped("handler added before start", () =>
      Effect.gen(function*() {
        const { informer } = yield* setup({}, [pod("pod1")])
        const r = yield* informer.addEventHandler(recorder().handler)
        yield* informer.start
        yield* settle
        yield* promptly(r)
      }))
  })
})

// -------------------------------------------------------------------------------------------------
// 2. processor and listener behaviours
// -------------------------------------------------------------------------------------------------

const fifoModes = ["inOrder", "coalescing"] as const

describe("SharedInformer: processor and listeners", () => {
  it.scoped.prop(
    "late join while events flow: replay equals the cache, no gap, no duplicate",
    [FastCheck.integer(), FastCheck.constantFrom(...fifoModes)],
    ([seed, fifo]) =>
      Effect.gen(function*() {
        const env = yield* setup({ fifo }, range(4).map((i) => pod(`p${i}`)))
        const { fake, informer } = env
        const early = recorder("early")
        const earlyRegistration = yield* informer.addEventHandler(early.handler)
        yield* informer.start
        yield* settle
        const producer = yield* Effect.fork(Effect.gen(function*() {
          const live = new Set(range(4))
          for (let i = 0; i < 150; i++) {
            const k = yield* Random.nextIntBetween(0, 8)
            if (!live.has(k)) {
              yield* fake.add(pod(`p${k}`))
              live.add(k)
            } else if (yield* Random.nextBoolean) {
              yield* fake.modify(pod(`p${k}`, { spec: { i } }))
            } else {
              yield* fake.delete(pod(`p${k}`))
              live.delete(k)
            }
            yield* yieldTimes(yield* Random.nextIntBetween(0, 3))
          }
        }))
        yield* yieldTimes(yield* Random.nextIntBetween(0, 200))
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
      }).pipe(Effect.withRandom(Random.make(seed))),
    { fastCheck: { numRuns: 20 } }
  )

  it.scoped("start twice: the second call only warns", () =>
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

  it.scoped("a handler's callbacks run with the context given to addEventHandler", () =>
    Effect.gen(function*() {
      class Sink extends Context.Tag("test/Sink")<Sink, Array<string>>() {}
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

  it.scoped("removal drops the backlog", () =>
    Effect.gen(function*() {
      const { fake, informer } = yield* setup({}, [pod("pod0")])
      const gate = yield* Deferred.make<void>()
      const seen: Array<string> = []
      const r = yield* informer.addEventHandler({
        onAdd: (o) =>
          Effect.zipRight(
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

  it.scoped("backlog: an idle handler has none; items taken but not yet handled count", () =>
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

  it.scoped("sync vs update: equal resourceVersions reach only the handlers due for resync", () =>
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
      yield* TestClock.adjust("1 second")
      assert.deepStrictEqual(due.events.map(summary), ["update pod1 1->1", "update pod2 2->3"])
      assert.deepStrictEqual(never.events.map(summary), ["update pod1 1->1", "update pod2 2->3"])
      due.clear()
      never.clear()
      // The tick at 10 s marks only `due`; from then on relist syncs reach only it.
      yield* TestClock.adjust("9 seconds")
      assert.deepStrictEqual(due.events.map(summary), ["update pod1 1->1", "update pod2 3->3"])
      assert.deepStrictEqual(never.events, [])
      due.clear()
      yield* fake.modifyDropWatch(pod("pod2", { spec: { v: 2 } }))
      yield* fake.resetWatch
      yield* TestClock.adjust("5 seconds")
      assert.deepStrictEqual(due.events.map(summary), ["update pod1 1->1", "update pod2 3->4"])
      assert.deepStrictEqual(never.events.map(summary), ["update pod2 3->4"])
    }))

  describe("resync periods", () => {
    it.scoped("a handler added after start cannot go below the check period", () =>
      Effect.gen(function*() {
        const logs = captureLogs()
        const late = syncTimes()
        yield* logs.capture(Effect.gen(function*() {
          const { informer } = yield* setup({ resyncPeriod: "5 seconds" }, [pod("pod1")])
          yield* informer.addEventHandler(recorder().handler)
          yield* informer.start
          yield* settle
          yield* informer.addEventHandler({ name: "late", ...late.handler }, { resyncPeriod: "1 second" })
          yield* TestClock.adjust("10 seconds")
        }))
        assert.deepStrictEqual(late.times, [5_000, 10_000])
        assert.isTrue(logs.lines.some((line) => line.includes("handler late raised to the informer's check period")))
      }))

    it.scoped("periods under 1 s are raised to 1 s", () =>
      Effect.gen(function*() {
        const fast = syncTimes()
        const { informer } = yield* setup({ resyncPeriod: "1 minute" }, [pod("pod1")])
        yield* informer.addEventHandler(fast.handler, { resyncPeriod: "100 millis" })
        yield* informer.start
        yield* settle
        yield* TestClock.adjust("3 seconds")
        assert.deepStrictEqual(fast.times, [1_000, 2_000, 3_000])
      }))

    it.scoped("without an informer resync period, handler periods are ignored (client-go)", () =>
      Effect.gen(function*() {
        const h = syncTimes()
        const { informer } = yield* setup({}, [pod("pod1")])
        yield* informer.addEventHandler(h.handler, { resyncPeriod: "5 seconds" })
        yield* informer.start
        yield* TestClock.adjust("30 seconds")
        assert.deepStrictEqual(h.times, [])
      }))
  })

  for (const fifo of fifoModes) {
    it.scoped(`tombstones for deletes seen only at relist (${fifo})`, () =>
      Effect.gen(function*() {
        const { fake, informer } = yield* setup({ fifo }, [pod("pod1"), pod("pod2")])
        const h = recorder()
        yield* informer.addEventHandler(h.handler, { resyncPeriod: 0 })
        yield* informer.start
        yield* settle
        h.clear()
        yield* fake.deleteDropWatch(pod("pod1"))
        yield* fake.resetWatch
        yield* TestClock.adjust("1 second")
        const deletes = h.events.filter((n) => n._tag === "Delete")
        assert.strictEqual(deletes.length, 1)
        const tombstone = deletes[0].object
        assert.instanceOf(tombstone, DeletedFinalStateUnknown)
        assert.strictEqual((tombstone as DeletedFinalStateUnknown<Obj>).key, "ns/pod1")
        assert.strictEqual(rvOf((tombstone as DeletedFinalStateUnknown<Obj>).obj), "1")
        assert.deepStrictEqual(yield* informer.indexer.listKeys, ["ns/pod2"])
      }))

    it.scoped(`TestResetWatch: relist adds and updates are not in the initial list (${fifo})`, () =>
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
        yield* TestClock.adjust("1 second")
        assert.deepStrictEqual(h.events.map(summary), ["add pod-1 (initial)", "update pod-1 1->2", "add pod-2"])
      }))
  }

  for (const fifo of fifoModes) {
    for (const watchList of [true, false]) {
      it.scoped(`an empty first list syncs the informer and its handlers (${fifo}, watchList ${watchList})`, () =>
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
  }

  it.scoped("TestReplaceEvents: a relist is applied at once, deletions first, then list order", () =>
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
      yield* TestClock.adjust("1 second")
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
      yield* TestClock.adjust("1 minute")
      assert.deepStrictEqual(seen.slice().sort(), [
        "delete tombstone:ns/pod-1 []",
        "delete tombstone:ns/pod-2 []",
        "delete tombstone:ns/pod-4 []"
      ])
      assert.deepStrictEqual(yield* informer.indexer.listKeys, [])
    }))

  it.scoped("TestReplaceEvents (coalescing): same notifications, per-key order only", () =>
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
      yield* TestClock.adjust("1 second")
      assert.deepStrictEqual(h.events.map(summary).sort(), [
        "add pod-4",
        "delete tombstone:ns/pod-3",
        "update pod-1 1->4",
        "update pod-2 2->5"
      ])
      assert.deepStrictEqual((yield* informer.indexer.listKeys).slice().sort(), ["ns/pod-1", "ns/pod-2", "ns/pod-4"])
    }))

  it.scoped("TestTransformingInformer: the cache and every callback (old and new) see transformed objects", () =>
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
      yield* TestClock.adjust("5 seconds")
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

  it.scoped("TestStoreResourceVersion: the cache's resourceVersion follows watch events and bookmarks", () =>
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

  it.scoped("TestStoreResourceVersion (coalescing): events move it, bookmarks only move the Reflector's", () =>
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

  for (const fifo of fifoModes) {
    it.scoped(`TestUpdate: concurrent writers; every transition valid, one delete per object (${fifo})`, () =>
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
              yield* Effect.yieldNow()
              yield* fake.modify(pod(name, { spec: { state: "to" } }))
            }), { discard: true })
        yield* Effect.forEach(range(3), writer, { concurrency: "unbounded", discard: true })
        yield* eventually(Effect.sync(() => deletes.size === 60), "all deleted")
        yield* settle
        assert.deepStrictEqual(invalid, [])
        assert.isTrue(Array.from(deletes.values()).every((n) => n === 1))
        assert.deepStrictEqual(yield* informer.indexer.listKeys, [])
      }))
  }

  it.scoped("addIndexers before start, after start, and after stop", () =>
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

  it.scoped("notifications: a Stream of every notification while it runs", () =>
    Effect.gen(function*() {
      const { fake, informer } = yield* setup({}, [pod("pod1")])
      yield* informer.start
      yield* settle
      const taken = yield* Effect.fork(Stream.runCollect(Stream.take(informer.notifications, 3)))
      yield* settle
      yield* fake.add(pod("pod2"))
      yield* fake.modify(pod("pod1", { spec: { v: 2 } }))
      yield* fake.delete(pod("pod2"))
      const notifications = Array.from(yield* Fiber.join(taken))
      assert.deepStrictEqual(notifications.map(summary), ["add pod1 (initial)", "add pod2", "update pod1 1->3"])
      // The stream's handler is gone once the stream ended.
      yield* settle
      const again = yield* Effect.fork(Stream.runCollect(Stream.take(informer.notifications, 1)))
      assert.deepStrictEqual(Array.from(yield* Fiber.join(again)).map(summary), ["add pod1 (initial)"])
    }))

  it.scoped("errors: a Stream of the Reflector's errors", () =>
    Effect.gen(function*() {
      const { fake, informer } = yield* setup({ reflector: { watchList: false } })
      const taken = yield* Effect.fork(Stream.runCollect(Stream.take(informer.errors, 2)))
      yield* settle
      yield* fake.failNextList(new Forbidden({ message: "Access Denied" }))
      yield* informer.start
      yield* settle
      yield* TestClock.adjust("2 seconds")
      yield* fake.failWatches(new ServerError({ message: "boom", code: 500, reason: "InternalError" }))
      yield* settle
      const errors = Array.from(yield* Fiber.join(taken))
      assert.deepStrictEqual(errors.map((e) => `${e.context.phase} ${e.error._tag}`), [
        "list Forbidden",
        "watch ServerError"
      ])
      assert.strictEqual(errors[1].context.reflector, informer.name)
    }))

  it.scoped("the notifications and errors streams end when the informer stops", () =>
    Effect.gen(function*() {
      const { fake, informer, stop } = yield* setup({}, [pod("pod1")])
      yield* informer.start
      yield* settle
      const notifications = yield* Effect.fork(Stream.runCollect(informer.notifications))
      const errors = yield* Effect.fork(Stream.runCollect(informer.errors))
      yield* settle
      yield* fake.add(pod("pod2"))
      yield* fake.failWatches(new ServerError({ message: "boom", code: 500, reason: "InternalError" }))
      yield* settle
      yield* stop
      yield* settle
      const n = yield* Fiber.poll(notifications)
      const e = yield* Fiber.poll(errors)
      assert.isTrue(Option.isSome(n) && Exit.isSuccess(n.value), "notifications ended")
      assert.isTrue(Option.isSome(e) && Exit.isSuccess(e.value), "errors ended")
      assert.deepStrictEqual(Array.from(yield* Fiber.join(notifications)).map(summary), [
        "add pod1 (initial)",
        "add pod2"
      ])
      assert.deepStrictEqual(Array.from(yield* Fiber.join(errors)).map((w) => w.error._tag), ["ServerError"])
    }))

  it.scoped("detectMutations reports a handler that mutates a cached object", () =>
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
              }).pipe(Effect.zipRight(Effect.fail("then fails")))
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

  it.scoped("metrics: notification counters, handler backlog and FIFO depth", () =>
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

// -------------------------------------------------------------------------------------------------
// 3. stop order and leftover fibers
// -------------------------------------------------------------------------------------------------

describe("SharedInformer: stop", () => {
  it.scoped("the controller (watch) stops strictly before the handlers; no fiber is left", () =>
    Effect.gen(function*() {
      const order: Array<string> = []
      const tracker = new FiberTracker()
      const handlerFiber = yield* Deferred.make<Fiber.RuntimeFiber<unknown, unknown>>()
      const { fake, informer, stop } = yield* Effect.gen(function*() {
        const env = yield* setup({}, [pod("pod1")], (fake) => ({
          ...fake,
          watch: (options) =>
            fake.watch(options).pipe(Stream.ensuring(Effect.sync(() => {
              order.push("watch closed")
            })))
        }))
        yield* env.informer.addEventHandler({
          // Hands its own fiber out, then blocks forever.
          onAdd: () =>
            Effect.withFiberRuntime<boolean>((fiber) => Deferred.succeed(handlerFiber, fiber)).pipe(
              Effect.zipRight(Effect.never),
              Effect.onInterrupt(() =>
                Effect.sync(() => {
                  order.push("handler interrupted")
                })
              )
            )
        })
        yield* env.informer.start
        yield* settle
        return env
      }).pipe(Effect.supervised(tracker))
      const fiber = yield* Deferred.await(handlerFiber)
      assert.strictEqual(yield* fake.openWatches, 1)
      assert.deepStrictEqual(order, [])
      yield* stop
      assert.deepStrictEqual(order, ["watch closed", "handler interrupted"])
      assert.isTrue(yield* informer.isStopped)
      assert.strictEqual(yield* fake.openWatches, 0)
      assert.isTrue(Exit.isInterrupted(fiber.unsafePoll()!))
      assert.isTrue(tracker.fibers.length > 3)
      assert.deepStrictEqual(tracker.running(), [])
      const error = yield* Effect.flip(informer.addEventHandler(recorder().handler))
      assert.strictEqual(error._tag, "InformerStoppedError")
    }))

  it.scoped("shutdown in three steps: the controller, then the stop (sync waits fail), then the handlers' fibers", () =>
    Effect.gen(function*() {
      const order: Array<string> = []
      const ref: { informer?: Informer } = {}
      const stoppedNow = Effect.suspend(() => ref.informer!.isStopped)
      const { informer, stop } = yield* setup({}, [pod("pod1")], (fake) => ({
        ...fake,
        watch: (options) =>
          fake.watch(options).pipe(Stream.ensuring(Effect.flatMap(stoppedNow, (stopped) =>
            Effect.sync(() => {
              order.push(`watch closed, stopped: ${stopped}`)
            }))))
      }))
      ref.informer = informer
      // Its initial add never returns: the registration cannot sync, and its wait is pending at the stop.
      const registration = yield* informer.addEventHandler({
        onAdd: () =>
          Effect.never.pipe(Effect.onInterrupt(() =>
            Effect.flatMap(stoppedNow, (stopped) =>
              Effect.sync(() => {
                order.push(`handler interrupted, stopped: ${stopped}`)
              }))
          ))
      })
      yield* informer.start
      yield* informer.synced
      const waiting = yield* Effect.fork(registration.synced)
      yield* settle
      assert.isNull(waiting.unsafePoll())
      yield* stop
      assert.deepStrictEqual(order, ["watch closed, stopped: false", "handler interrupted, stopped: true"])
      const exit = yield* Fiber.await(waiting)
      assert.isTrue(Exit.isFailure(exit) && Cause.isFailType(exit.cause))
      assert.isFalse(yield* registration.hasSynced)
      assert.isTrue(yield* informer.hasSynced)
    }))

  it.scoped("stopping during a relist backoff leaves nothing behind", () =>
    Effect.gen(function*() {
      const tracker = new FiberTracker()
      const { fake, informer, stop } = yield* Effect.gen(function*() {
        const env = yield* setup({ resyncPeriod: "1 second" }, [pod("pod1")])
        yield* env.informer.addEventHandler(recorder().handler)
        yield* env.informer.start
        yield* settle
        yield* env.fake.failNextList(new ServerError({ message: "down", code: 503, reason: "ServiceUnavailable" }), 5)
        yield* env.fake.failNextWatch(new ServerError({ message: "down", code: 503, reason: "ServiceUnavailable" }), 5)
        yield* env.fake.failWatches(new ServerError({ message: "down", code: 503, reason: "ServiceUnavailable" }))
        yield* TestClock.adjust("1 second")
        return env
      }).pipe(Effect.supervised(tracker))
      yield* stop
      assert.isTrue(yield* informer.isStopped)
      assert.strictEqual(yield* fake.openWatches, 0)
      assert.deepStrictEqual(tracker.running(), [])
    }))
})

// -------------------------------------------------------------------------------------------------
// 4. property: random server histories
// -------------------------------------------------------------------------------------------------

type Op =
  | { readonly _tag: "write"; readonly key: number; readonly remove: boolean; readonly drop: boolean }
  | { readonly _tag: "resetWatch" }
  | { readonly _tag: "closeWatches" }
  | { readonly _tag: "failWatches"; readonly gone: boolean }
  | { readonly _tag: "failNextWatch"; readonly gone: boolean }
  | { readonly _tag: "failNextList" }
  | { readonly _tag: "bookmark" }
  | { readonly _tag: "adjust"; readonly millis: number }

const opArbitrary: FastCheck.Arbitrary<Op> = FastCheck.oneof(
  {
    weight: 12,
    arbitrary: FastCheck.record({
      _tag: FastCheck.constant("write" as const),
      key: FastCheck.integer({ min: 0, max: 5 }),
      remove: FastCheck.boolean(),
      drop: FastCheck.boolean() // half of the writes are lost events
    })
  },
  { weight: 2, arbitrary: FastCheck.constant({ _tag: "resetWatch" as const }) },
  { weight: 1, arbitrary: FastCheck.constant({ _tag: "closeWatches" as const }) },
  {
    weight: 1,
    arbitrary: FastCheck.record({ _tag: FastCheck.constant("failWatches" as const), gone: FastCheck.boolean() })
  },
  {
    weight: 1,
    arbitrary: FastCheck.record({ _tag: FastCheck.constant("failNextWatch" as const), gone: FastCheck.boolean() })
  },
  { weight: 1, arbitrary: FastCheck.constant({ _tag: "failNextList" as const }) },
  { weight: 1, arbitrary: FastCheck.constant({ _tag: "bookmark" as const }) },
  {
    weight: 4,
    arbitrary: FastCheck.record({
      _tag: FastCheck.constant("adjust" as const),
      millis: FastCheck.constantFrom(0, 0, 100, 1_000, 5_000, 30_000)
    })
  }
)

const serverError = fixtureServerError(500, "InternalError", "internal error")
const gone = fixtureGone()

const applyOp = (fake: Fake, op: Op): Effect.Effect<void> =>
  Effect.gen(function*() {
    switch (op._tag) {
      case "write": {
        const name = `k${op.key}`
        const exists = (yield* fake.objects).some((o) => o.metadata?.name === name)
        const obj = pod(name, { spec: { at: yield* fake.resourceVersion } })
        if (!exists) yield* op.drop ? fake.addDropWatch(obj) : fake.add(obj)
        else if (op.remove) yield* op.drop ? fake.deleteDropWatch(obj) : fake.delete(obj)
        else yield* op.drop ? fake.modifyDropWatch(obj) : fake.modify(obj)
        return
      }
      case "resetWatch":
        return yield* fake.resetWatch
      case "closeWatches":
        return yield* fake.closeWatches
      case "failWatches":
        return yield* fake.failWatches(op.gone ? gone : serverError)
      case "failNextWatch":
        return yield* fake.failNextWatch(op.gone ? gone : serverError)
      case "failNextList":
        return yield* fake.failNextList(serverError)
      case "bookmark":
        return yield* fake.bookmark
      case "adjust":
        return yield* TestClock.adjust(op.millis)
    }
  })

describe("SharedInformer: property", () => {
  for (const fifo of fifoModes) {
    it.scoped.prop(
      `random server histories converge; handlers replay to the cache; versions never go back (${fifo})`,
      [FastCheck.array(opArbitrary, { minLength: 1, maxLength: 30 }), FastCheck.nat()],
      ([ops, joinAt]) =>
        Effect.gen(function*() {
          const env = yield* setup({ fifo }, [pod("k0"), pod("k1")])
          const { fake, informer } = env
          const early = recorder("early")
          const late = recorder("late")
          yield* informer.addEventHandler(early.handler)
          yield* informer.start
          const join = joinAt % (ops.length + 1)
          for (const [i, op] of ops.entries()) {
            if (i === join) yield* informer.addEventHandler(late.handler)
            yield* applyOp(fake, op)
          }
          if (join === ops.length) yield* informer.addEventHandler(late.handler)
          // Quiescence: past any backoff, then a forced relist so that lost events are recovered.
          yield* TestClock.adjust("2 minutes")
          yield* fake.failWatches(gone)
          yield* TestClock.adjust("2 minutes")
          yield* eventually(cacheMatchesServer(env), "cache equals the server")
          const server = sortedEntries(toMap(yield* fake.objects))
          for (const [who, r] of [["early", early], ["late", late]] as const) {
            yield* eventually(
              Effect.sync(() => JSON.stringify(sortedEntries(replay(r.events))) === JSON.stringify(server)),
              `${who} handler's replay equals the server`
            )
          }
          assertMonotonic(early.events, "early")
          assertMonotonic(late.events, "late")
          assert.isTrue(yield* informer.hasSynced)
        }),
      { timeout: 30_000, fastCheck: { numRuns: 50 } }
    )
  }
})

// -------------------------------------------------------------------------------------------------
// 5. a stuck handler slows nothing
// -------------------------------------------------------------------------------------------------

describe("SharedInformer: slow handlers", () => {
  it.scoped("a handler blocked forever slows neither the cache nor the other handlers", () =>
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
  it.scoped("a change lost between watches is recovered by the relist resetWatch forces, even after later events", () =>
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
      yield* TestClock.adjust("1 minute")
      yield* eventually(cacheMatchesServer(env), "cache recovered the lost object")
      assert.deepStrictEqual(namesOf(yield* informer.indexer.list), ["a", "b", "lost"])
    }))

  it.scoped("waiting on synced of a registration removed before it synced is interrupted, not hung", () =>
    Effect.gen(function*() {
      const env = yield* setup({}, [pod("a")])
      const registration = yield* env.informer.addEventHandler({ onAdd: () => Effect.never })
      yield* env.informer.start
      const waiting = yield* Effect.fork(registration.synced)
      yield* settle
      assert.isFalse(yield* registration.hasSynced)
      yield* registration.remove
      const exit = yield* Fiber.await(waiting)
      assert.isTrue(Exit.isInterrupted(exit))
    }))
})

describe("SharedInformer: handler misbehaviour, with the coalescing buffer off and on", () => {
  for (const buffer of ["unbounded", "coalescing"] as const) {
    it.scoped(`${buffer}: throwing, dying and blocked handlers leave the others and the cache unaffected`, () =>
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

  it.scoped("coalescing: a stalled handler's memory is bounded by the number of objects, and it catches up to the latest state", () =>
    Effect.gen(function*() {
      const env = yield* setup({}, range(10).map((i) => pod(`p${i}`)))
      const { fake, informer } = env
      const gate = yield* Deferred.make<void>()
      const seen = recorder("stalled")
      const stalled = yield* informer.addEventHandler({
        name: "stalled",
        onAdd: (object, isInInitialList) =>
          Effect.zipRight(Deferred.await(gate), seen.handler.onAdd!(object, isInInitialList)),
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

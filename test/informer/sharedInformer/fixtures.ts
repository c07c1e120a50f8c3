/**
 * The SharedInformer suite's fixtures: notification summaries and replays, recording handlers, a fresh
 * fake and informer per test (setup), fiber tracking and metric reads. Every test builds its own fake and
 * informer and drives time with TestClock (objects, clocks and log capture come from ../fixtures).
 */
import { assert } from "@effect/vitest"
import type { Duration } from "effect"
import { Clock, Effect, Exit, Metric, Result, Scope } from "effect"
import * as Option from "effect/Option"
import { TestClock } from "effect/testing"
import * as FakeListerWatcher from "../../../src/FakeListerWatcher.js"
import * as Indexer from "../../../src/Indexer.js"
import type { KubeObject } from "../../../src/KubeObject.js"
import { compareResourceVersions, DeletedFinalStateUnknown, resourceVersion } from "../../../src/KubeObject.js"
import type { ListerWatcher } from "../../../src/ListerWatcher.js"
import type * as Reflector from "../../../src/Reflector.js"
import * as SharedInformer from "../../../src/SharedInformer.js"
import { type Pod, pod as fixturePod, settle } from "../../fixtures/index.js"

/** resourceVersions as the server issues them: integers (0 when either is not one). */
const order = (a: string, b: string): number => Option.getOrElse(compareResourceVersions(a, b), () => 0)

// helpers
// -------------------------------------------------------------------------------------------------

export type Obj = KubeObject
export type Fake = FakeListerWatcher.FakeListerWatcher.Service<Obj>
export type Informer = SharedInformer.SharedInformer.Service<Obj>
export type Notification = SharedInformer.Notification<Obj>
export type Deleted = Obj | DeletedFinalStateUnknown<Obj>

/** The suite's pods: in namespace "ns", uid = name. */
export const pod = (
  name: string,
  fields: { readonly labels?: Record<string, string>; readonly spec?: Record<string, unknown> } = {}
): Pod => fixturePod(name, { uid: name, ...fields })

export const specOf = (obj: Obj | undefined): Readonly<Record<string, unknown>> => (obj as Pod | undefined)?.spec ?? {}

export const nameOf = (obj: Deleted | undefined): string =>
  obj === undefined
    ? "<none>"
    : obj instanceof DeletedFinalStateUnknown
    ? `tombstone:${obj.key}`
    : obj.metadata?.name ?? "<unnamed>"

export const rvOf = (obj: Obj | undefined): string => resourceVersion(obj) ?? ""

export const keyOf = (obj: Deleted): string => Result.getOrThrow(Indexer.deletionHandlingMetaNamespaceKey(obj))

/** `Tag (reason)`, as the Reflector's logs name an error: a StoreError's reason is its operation, an UnexpectedError's `Defect`. */
export const describeError = (error: Reflector.ReflectorError): string =>
  `${error._tag} (${
    error._tag === "StoreError" ? error.operation : error._tag === "UnexpectedError" ? "Defect" : error.reason
  })`

export const objectOf = (n: Notification): Deleted => n._tag === "Update" ? n.newObject : n.object

export const isSync = (n: Notification): boolean => n._tag === "Update" && rvOf(n.oldObject) === rvOf(n.newObject)

export const summary = (n: Notification): string => {
  switch (n._tag) {
    case "Add":
      return `add ${nameOf(n.object)}${n.isInInitialList ? " (initial)" : ""}`
    case "Update":
      return `update ${nameOf(n.newObject)} ${rvOf(n.oldObject)}->${rvOf(n.newObject)}`
    case "Delete":
      return `delete ${nameOf(n.object)}`
  }
}

export const namesOf = (objects: ReadonlyArray<Obj>): Array<string> => objects.map((o) => nameOf(o)).sort()

export const range = (n: number): Array<number> => Array.from({ length: n }, (_, i) => i)

export const yieldTimes = (n: number): Effect.Effect<void> =>
  Effect.forEach(range(n), () => Effect.yieldNow, { discard: true })

/** A handler that records every notification. */
export interface Recorder {
  readonly events: Array<Notification>
  readonly handler: SharedInformer.Handler<Obj>
  readonly clear: () => void
}

export const recorder = (name?: string): Recorder => {
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
export const syncTimes = (): { readonly times: Array<number>; readonly handler: SharedInformer.Handler<Obj> } => {
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

export interface Env {
  readonly fake: Fake
  readonly informer: Informer
  readonly scope: Scope.Closeable
  /** Closes the informer's scope: stops it. */
  readonly stop: Effect.Effect<void>
}

/** A fresh fake and informer; the informer lives in its own scope, closed at the latest with the test's. */
export const setup = (
  options: SharedInformer.SharedInformer.Options<Obj> = {},
  initial: ReadonlyArray<Obj> = [],
  wrap?: (fake: Fake) => ListerWatcher.Service<Obj>
): Effect.Effect<Env, never, Scope.Scope> =>
  Effect.gen(function*() {
    const scope = yield* Scope.make()
    yield* Effect.addFinalizer(() => Scope.close(scope, Exit.void))
    const fake = yield* FakeListerWatcher.make<Obj>({ initial })
    const informer = yield* SharedInformer.make(wrap === undefined ? fake : wrap(fake), options).pipe(
      Scope.provide(scope)
    )
    return { fake, informer, scope, stop: Scope.close(scope, Exit.void) }
  })

/** The shared `eventually`: under the TestClock it settles until the condition holds (500 turns at most). */
export { eventually } from "../../fixtures/index.js"

/**
 * Effect 3's `TestClock.adjust(duration)`: before each sleep it woke, and before it returned, it waited
 * until every fiber of the test was suspended (polling with real `setTimeout(0)`s), so what the test had
 * just done (a watch reset, a write) ran to its next sleep before the clock moved, and what the clock woke
 * ran to completion. Effect 4's `adjust` runs one scheduler round first and waits only for the work each
 * wake schedules: `settle` before and after brings back the rest.
 */
export const adjust = (duration: Duration.Input): Effect.Effect<void> =>
  Effect.andThen(settle, Effect.andThen(TestClock.adjust(duration), settle))

/**
 * Counts the fibers started inside `tracker.track(effect)` and those of them still running (Effect 4 has no
 * Supervisor: the runtime reports every fiber's start and end to the `FiberRuntimeMetrics` service of the context
 * the fiber starts in, and fibers inherit their parent's context).
 */
export class FiberTracker {
  /** How many fibers started inside `track`. */
  started = 0
  /** How many of them have not ended. */
  active = 0
  private readonly service: Metric.FiberRuntimeMetricsService = {
    recordFiberStart: () => {
      this.started++
      this.active++
    },
    recordFiberEnd: () => {
      this.active--
    }
  }
  /** Runs the effect so that every fiber started in it (and in its descendants) is counted. */
  readonly track = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    Effect.provideService(effect, Metric.FiberRuntimeMetrics, this.service)
  /** How many tracked fibers are still running. */
  running(): number {
    return this.active
  }
}

/** Replays notifications onto an empty map key -> resourceVersion (Add/Update set, Delete deletes). */
export const replay = (events: ReadonlyArray<Notification>): Map<string, string> => {
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
export const strictReplay = (events: ReadonlyArray<Notification>): Map<string, string> => {
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
export const assertMonotonic = (events: ReadonlyArray<Notification>, who: string): void => {
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
      assert.isTrue(order(previous, rv) <= 0, `${who}: ${key} went back from ${previous} to ${rv}`)
    }
    last.set(key, rv)
  }
}

export const toMap = (objects: ReadonlyArray<Obj>): Map<string, string> =>
  new Map(objects.map((o) => [keyOf(o), rvOf(o)]))

export const sortedEntries = (map: Map<string, string>): Array<[string, string]> =>
  Array.from(map.entries()).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))

export const cacheMatchesServer = (env: Env): Effect.Effect<boolean> =>
  Effect.gen(function*() {
    const cache = toMap(yield* env.informer.indexer.list)
    const server = toMap(yield* env.fake.objects)
    return JSON.stringify(sortedEntries(cache)) === JSON.stringify(sortedEntries(server))
  })

export const labelsIndex: Indexer.IndexFunction<Obj> = (obj) => Object.keys(obj.metadata?.labels ?? {})

export const counterValue = (metric: Metric.Metric<number, Metric.CounterState<number>>): Effect.Effect<number> =>
  Effect.map(Metric.value(metric), (state) => state.count)

export const gaugeValue = (metric: Metric.Metric<number, Metric.GaugeState<number>>): Effect.Effect<number> =>
  Effect.map(Metric.value(metric), (state) => state.value)

export const tagged = <Input, State>(metric: Metric.Metric<Input, State>, tags: Record<string, string>) =>
  Metric.withAttributes(metric, tags)

/** The FIFO modes the informer suites run through. */
export const fifoModes = ["inOrder", "coalescing"] as const

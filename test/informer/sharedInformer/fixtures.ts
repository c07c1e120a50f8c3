/**
 * The SharedInformer suite's fixtures: notification summaries and replays, recording handlers, a fresh
 * fake and informer per test (setup), fiber tracking and metric reads. Every test builds its own fake and
 * informer and drives time with TestClock (objects, clocks and log capture come from ../fixtures).
 */
import { assert } from "@effect/vitest"
import type { Context, Fiber } from "effect"
import { Clock, Effect, Either, Exit, Metric, Scope, Supervisor } from "effect"
import * as Option from "effect/Option"
import * as FakeListerWatcher from "../../../src/FakeListerWatcher.js"
import * as Indexer from "../../../src/Indexer.js"
import type { KubeObject } from "../../../src/KubeObject.js"
import { compareResourceVersions, DeletedFinalStateUnknown, resourceVersion } from "../../../src/KubeObject.js"
import type { ListerWatcher } from "../../../src/ListerWatcher.js"
import type * as Reflector from "../../../src/Reflector.js"
import * as SharedInformer from "../../../src/SharedInformer.js"
import { type Pod, pod as fixturePod } from "../../fixtures/index.js"

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

export const keyOf = (obj: Deleted): string => Either.getOrThrow(Indexer.deletionHandlingMetaNamespaceKey(obj))

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
  Effect.forEach(range(n), () => Effect.yieldNow(), { discard: true })

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
  readonly scope: Scope.CloseableScope
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
      Scope.extend(scope)
    )
    return { fake, informer, scope, stop: Scope.close(scope, Exit.void) }
  })

/** The shared `eventually`: under the TestClock it settles until the condition holds (500 turns at most). */
export { eventually } from "../../fixtures/index.js"

/** Records every fiber forked inside `Effect.supervised(tracker)`. */
export class FiberTracker extends Supervisor.AbstractSupervisor<ReadonlyArray<Fiber.RuntimeFiber<unknown, unknown>>> {
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

export const counterValue = (metric: Metric.Metric.Counter<number>): Effect.Effect<number> =>
  Effect.map(Metric.value(metric), (state) => state.count)

export const gaugeValue = (metric: Metric.Metric.Gauge<number>): Effect.Effect<number> =>
  Effect.map(Metric.value(metric), (state) => state.value)

export const tagged = <Type, In, Out>(metric: Metric.Metric<Type, In, Out>, tags: Record<string, string>) =>
  Object.entries(tags).reduce((m, [key, value]) => Metric.tagged(m, key, value), metric)

/** The FIFO modes the informer suites run through. */
export const fifoModes = ["inOrder", "coalescing"] as const

/**
 * The Reflector suite's fixtures: events, request logs, scripted ListerWatchers, error handlers,
 * recording stores, scopes and schedules (objects, clocks and errors come from ../fixtures).
 */
import { assert } from "@effect/vitest"
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Pull from "effect/Pull"
import * as Schedule from "effect/Schedule"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import type * as FakeListerWatcher from "../../../src/FakeListerWatcher.js"
import * as Indexer from "../../../src/Indexer.js"
import type { KubeObject } from "../../../src/KubeObject.js"
import type * as ListerWatcher from "../../../src/ListerWatcher.js"
import * as Reflector from "../../../src/Reflector.js"
import * as Wire from "../../../src/Wire.js"
import { settle } from "../../fixtures/index.js"

// -------------------------------------------------------------------------------------------------
// fixtures
// -------------------------------------------------------------------------------------------------

export type LW = ListerWatcher.ListerWatcher.Service<KubeObject>
export type Request = FakeListerWatcher.Request
export type Event = ListerWatcher.WatchEvent<KubeObject>
export type Options = Reflector.Options<KubeObject>

export const nameOf = (obj: KubeObject): string => obj.metadata?.name ?? "?"
export const rvOf = (obj: KubeObject): string | undefined => obj.metadata?.resourceVersion

export const added = (object: KubeObject): Event => ({ type: "ADDED", object })
export const modified = (object: KubeObject): Event => ({ type: "MODIFIED", object })
export const deleted = (object: KubeObject): Event => ({ type: "DELETED", object })
export const bookmarkEvent = (resourceVersion: string, initialEventsEnd?: "true" | "false"): Event => ({
  type: "BOOKMARK",
  object: {
    metadata: {
      resourceVersion,
      ...(initialEventsEnd === undefined
        ? {}
        : { annotations: { [Wire.initialEventsEndAnnotation]: initialEventsEnd } })
    }
  }
})

export const now = Clock.currentTimeMillis

// --- requests --------------------------------------------------------------------------------------

export const listsOf = (requests: ReadonlyArray<Request>): Array<ListerWatcher.ListOptions> =>
  requests.flatMap((r) => (r._tag === "List" ? [r.options] : []))
export const watchesOf = (requests: ReadonlyArray<Request>): Array<ListerWatcher.WatchOptions> =>
  requests.flatMap((r) => (r._tag === "Watch" ? [r.options] : []))
/** "List", "Watch" or "WatchList" per request. */
export const kinds = (requests: ReadonlyArray<Request>): Array<string> =>
  requests.map((r) => r._tag === "List" ? "List" : r.options.sendInitialEvents === true ? "WatchList" : "Watch")

export interface Timed {
  readonly at: number
  readonly request: Request
}

/** Wraps a ListerWatcher to record every request with the (test) time it was made. */
export const timed = (lw: LW) => {
  const log: Array<Timed> = []
  const service: LW = {
    ...lw,
    list: (options) =>
      Effect.flatMap(now, (at) => {
        log.push({ at, request: { _tag: "List", options } })
        return lw.list(options)
      }),
    watch: (options) =>
      Stream.unwrap(Effect.map(now, (at) => {
        log.push({ at, request: { _tag: "Watch", options } })
        return lw.watch(options)
      }))
  }
  return {
    lw: service,
    log,
    times: (kind: string) => log.filter((t) => kinds([t.request])[0] === kind).map((t) => t.at)
  }
}

/**
 * A ListerWatcher whose lists return `list` and whose watches are the given streams in order, then streams
 * that never end. Records requests and how many watch streams are open.
 */
export const scripted = (options: {
  readonly list?: ListerWatcher.ListPage<KubeObject> | undefined
  readonly watches: ReadonlyArray<Stream.Stream<Event, ListerWatcher.ListerWatcherError>>
}) => {
  const requests: Array<Request> = []
  const pending = options.watches.slice()
  const state = { open: 0 }
  const lw: LW = {
    list: (listOptions) =>
      Effect.sync(() => {
        requests.push({ _tag: "List", options: listOptions })
        return options.list ?? { items: [], resourceVersion: "1", continue: undefined }
      }),
    watch: (watchOptions) =>
      Stream.suspend(() => {
        requests.push({ _tag: "Watch", options: watchOptions })
        const stream = pending.shift() ?? Stream.never
        state.open++
        return stream.pipe(Stream.ensuring(Effect.sync(() => state.open--)))
      })
  }
  return { lw, requests, state }
}

// --- error handler -------------------------------------------------------------------------------

/** An error's reason, as the Reflector's logs and metrics name it: a StoreError's operation, `Defect` for an UnexpectedError. */
export const reasonOf = (error: Reflector.ReflectorError): string =>
  error._tag === "StoreError" ? error.operation : error._tag === "UnexpectedError" ? "Defect" : error.reason

export interface Reported {
  readonly error: Reflector.ReflectorError
  readonly context: Reflector.ErrorContext
}

export const errorLog = () => {
  const reported: Array<Reported> = []
  const onError = (error: Reflector.ReflectorError, context: Reflector.ErrorContext): Effect.Effect<void> =>
    Effect.sync(() => {
      reported.push({ error, context })
    })
  /** `phase:Tag(reason)` per reported error. */
  const summary = (): Array<string> =>
    reported.map(({ context, error }) => `${context.phase}:${error._tag}(${reasonOf(error)})`)
  return { reported, onError, summary }
}

// --- stores --------------------------------------------------------------------------------------

export interface StoreCalls {
  readonly add: Array<string>
  readonly update: Array<string>
  readonly delete: Array<string>
  readonly replace: Array<{ readonly resourceVersion: string; readonly names: ReadonlyArray<string> }>
  resync: number
  readonly bookmark: Array<string>
}

/** An Indexer behind a store that records every call and can be told to refuse some. */
export const recordingStore = (options: {
  readonly withBookmark?: boolean | undefined
  readonly refuseAdd?: ((obj: KubeObject) => boolean) | undefined
  readonly refuseResync?: ((call: number) => boolean) | undefined
} = {}) =>
  Effect.gen(function*() {
    const indexer = yield* Indexer.make()
    const calls: StoreCalls = { add: [], update: [], delete: [], replace: [], resync: 0, bookmark: [] }
    const store: Reflector.Store<KubeObject, unknown> = {
      add: (obj) =>
        Effect.suspend((): Effect.Effect<void, unknown> => {
          calls.add.push(nameOf(obj))
          return options.refuseAdd?.(obj) === true ? Effect.fail(`refused ${nameOf(obj)}`) : indexer.add(obj)
        }),
      update: (obj) =>
        Effect.suspend(() => {
          calls.update.push(nameOf(obj))
          return indexer.update(obj)
        }),
      delete: (obj) =>
        Effect.suspend(() => {
          calls.delete.push(nameOf(obj))
          return indexer.delete(obj)
        }),
      replace: (objects, resourceVersion) =>
        Effect.suspend(() => {
          calls.replace.push({ resourceVersion, names: objects.map(nameOf) })
          return indexer.replace(objects, resourceVersion)
        }),
      resync: Effect.suspend(() => {
        calls.resync++
        return options.refuseResync?.(calls.resync) === true ? Effect.fail("resync refused") : Effect.void
      }),
      bookmark: options.withBookmark === false ? undefined : (resourceVersion) =>
        Effect.sync(() => {
          calls.bookmark.push(resourceVersion)
        })
    }
    const names = Effect.map(indexer.list, (objs) => objs.map(nameOf).sort())
    return { indexer, calls, store, names }
  })

// --- scopes --------------------------------------------------------------------------------------

/** Starts a Reflector in a scope of its own, to stop it mid-test. */
export const startInScope = (lw: LW, store: Reflector.Store<KubeObject, unknown>, options: Options) =>
  Effect.gen(function*() {
    const scope = yield* Scope.make()
    const reflector = yield* Scope.provide(Reflector.make(lw, store, options), scope)
    return { scope, reflector }
  })

/** Closes `scope` and asserts it finished without the clock moving. */
export const closeWithoutTime = (scope: Scope.Closeable) =>
  Effect.gen(function*() {
    const before = yield* now
    const closing = yield* Effect.forkChild(Scope.close(scope, Exit.void))
    yield* settle
    assert.isTrue(closing.pollUnsafe() !== undefined, "closing the scope needed the clock to move")
    assert.strictEqual(yield* now, before)
  })

// --- schedules -----------------------------------------------------------------------------------

/** Steps a schedule as the Reflector's backoff does; each call returns the delay in ms (NaN when done). */
export const stepper = <In>(schedule: Schedule.Schedule<unknown, In>) => {
  let step: ((now: number, input: In) => Pull.Pull<[unknown, Duration.Duration], never, unknown>) | undefined
  return (at: number, input: In): Effect.Effect<number> =>
    Effect.gen(function*() {
      step ??= yield* Schedule.toStep(schedule)
      return yield* step(at, input).pipe(
        Effect.map(([, delay]) => Duration.toMillis(delay)),
        Pull.catchDone(() => Effect.succeed(Number.NaN))
      )
    })
}

export const inRange = (value: number, min: number, max: number, what: string): void =>
  assert.isTrue(value >= min && value < max, `${what}: ${value} not in [${min}, ${max})`)

export const bases = [800, 1600, 3200, 6400, 12800, 25600]
export const baseAt = (step: number): number => (step < bases.length ? bases[step] : 30000)

import { assert, describe, it } from "@effect/vitest"
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Logger from "effect/Logger"
import * as Metric from "effect/Metric"
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"
import * as Random from "effect/Random"
import * as Schedule from "effect/Schedule"
import * as ScheduleDecision from "effect/ScheduleDecision"
import * as ScheduleIntervals from "effect/ScheduleIntervals"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as DeltaFifo from "../src/DeltaFifo.js"
import * as FakeListerWatcher from "../src/FakeListerWatcher.js"
import * as Indexer from "../src/Indexer.js"
import type { KubeObject } from "../src/KubeObject.js"
import * as ListerWatcher from "../src/ListerWatcher.js"
import * as Metrics from "../src/Metrics.js"
import * as Reflector from "../src/Reflector.js"
import * as Wire from "../src/Wire.js"
import { advance, gone, pod, podsNamed, serverError, settle, tooManyRequests, transport } from "./fixtures/index.js"

// -------------------------------------------------------------------------------------------------
// fixtures
// -------------------------------------------------------------------------------------------------

type LW = ListerWatcher.ListerWatcher.Service<KubeObject>
type Request = FakeListerWatcher.Request
type Event = ListerWatcher.WatchEvent<KubeObject>
type Options = Reflector.Options<KubeObject>

const nameOf = (obj: KubeObject): string => obj.metadata?.name ?? "?"
const rvOf = (obj: KubeObject): string | undefined => obj.metadata?.resourceVersion

const added = (object: KubeObject): Event => ({ type: "ADDED", object })
const modified = (object: KubeObject): Event => ({ type: "MODIFIED", object })
const deleted = (object: KubeObject): Event => ({ type: "DELETED", object })
const bookmarkEvent = (resourceVersion: string, initialEventsEnd?: "true" | "false"): Event => ({
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

const now = Clock.currentTimeMillis

// --- requests --------------------------------------------------------------------------------------

const listsOf = (requests: ReadonlyArray<Request>): Array<ListerWatcher.ListOptions> =>
  requests.flatMap((r) => (r._tag === "List" ? [r.options] : []))
const watchesOf = (requests: ReadonlyArray<Request>): Array<ListerWatcher.WatchOptions> =>
  requests.flatMap((r) => (r._tag === "Watch" ? [r.options] : []))
/** "List", "Watch" or "WatchList" per request. */
const kinds = (requests: ReadonlyArray<Request>): Array<string> =>
  requests.map((r) => r._tag === "List" ? "List" : r.options.sendInitialEvents === true ? "WatchList" : "Watch")

interface Timed {
  readonly at: number
  readonly request: Request
}

/** Wraps a ListerWatcher to record every request with the (test) time it was made. */
const timed = (lw: LW) => {
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
const scripted = (options: {
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

interface Reported {
  readonly error: Reflector.ReflectorError
  readonly context: Reflector.ErrorContext
}

const errorLog = () => {
  const reported: Array<Reported> = []
  const onError = (error: Reflector.ReflectorError, context: Reflector.ErrorContext): Effect.Effect<void> =>
    Effect.sync(() => {
      reported.push({ error, context })
    })
  /** `phase:Tag` per reported error. */
  const summary = (): Array<string> => reported.map(({ context, error }) => `${context.phase}:${error._tag}`)
  return { reported, onError, summary }
}

// --- stores --------------------------------------------------------------------------------------

interface StoreCalls {
  readonly add: Array<string>
  readonly update: Array<string>
  readonly delete: Array<string>
  readonly replace: Array<{ readonly resourceVersion: string; readonly names: ReadonlyArray<string> }>
  resync: number
  readonly bookmark: Array<string>
}

/** An Indexer behind a store that records every call and can be told to refuse some. */
const recordingStore = (options: {
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
const startInScope = (lw: LW, store: Reflector.Store<KubeObject, unknown>, options: Options) =>
  Effect.gen(function*() {
    const scope = yield* Scope.make()
    const reflector = yield* Scope.extend(Reflector.make(lw, store, options), scope)
    return { scope, reflector }
  })

/** Closes `scope` and asserts it finished without the clock moving. */
const closeWithoutTime = (scope: Scope.CloseableScope) =>
  Effect.gen(function*() {
    const before = yield* now
    const closing = yield* Effect.fork(Scope.close(scope, Exit.void))
    yield* settle
    assert.isTrue(Option.isSome(yield* Fiber.poll(closing)), "closing the scope needed the clock to move")
    assert.strictEqual(yield* now, before)
  })

// --- schedules -----------------------------------------------------------------------------------

/** Steps a schedule as `Schedule.driver` does; each call returns the delay in ms (undefined when done). */
const stepper = <In>(schedule: Schedule.Schedule<unknown, In>) => {
  let state = schedule.initial
  return (at: number, input: In): Effect.Effect<number> =>
    Effect.map(schedule.step(at, input, state), ([next, , decision]) => {
      state = next
      return ScheduleDecision.isDone(decision) ? Number.NaN : ScheduleIntervals.start(decision.intervals) - at
    })
}

const inRange = (value: number, min: number, max: number, what: string): void =>
  assert.isTrue(value >= min && value < max, `${what}: ${value} not in [${min}, ${max})`)

const bases = [800, 1600, 3200, 6400, 12800, 25600]
const baseAt = (step: number): number => (step < bases.length ? bases[step] : 30000)

// -------------------------------------------------------------------------------------------------
// A. the issue's "Done when" list
// -------------------------------------------------------------------------------------------------

describe("Reflector", () => {
  describe("backoff", () => {
    const failure = serverError()

    it.effect("defaultBackoff waits in [base, 2·base) for base 0.8, 1.6, 3.2, 6.4, 12.8, 25.6 s, then 30 s forever", () =>
      Effect.gen(function*() {
        for (let run = 0; run < 5; run++) {
          const step = stepper(Reflector.defaultBackoff)
          let at = 0
          for (let i = 0; i < 40; i++) {
            const delay = yield* step(at, failure)
            inRange(delay, baseAt(i), 2 * baseAt(i), `run ${run} step ${i}`)
            at += delay
          }
        }
      }))

    it.effect("defaultBackoff: still [30, 60) s after half a day of continuous failures (the exponential overflows to infinity)", () =>
      Effect.gen(function*() {
        const step = stepper(Reflector.defaultBackoff)
        let at = 0
        for (let i = 0; i < 1100; i++) {
          const delay = yield* step(at, failure)
          if (i >= 6) inRange(delay, 30000, 60000, `step ${i}`)
          at = Math.ceil(at + delay)
        }
      }))

    it.effect("defaultBackoff: the jitter's bounds give exactly base and just under 2·base", () =>
      Effect.gen(function*() {
        const run = (random: number) =>
          Effect.gen(function*() {
            const step = stepper(Reflector.defaultBackoff)
            const delays: Array<number> = []
            let at = 0
            for (let i = 0; i < 10; i++) {
              const delay = yield* step(at, failure)
              delays.push(delay)
              at += delay
            }
            return delays
          }).pipe(Effect.withRandom(Random.fixed([random])))
        assert.deepStrictEqual(yield* run(0), [800, 1600, 3200, 6400, 12800, 25600, 30000, 30000, 30000, 30000])
        const high = yield* run(0.999)
        high.forEach((delay, i) => inRange(delay, 2 * baseAt(i) * 0.999, 2 * baseAt(i), `step ${i}`))
      }))

    it.effect("defaultBackoff resets after more than 2 minutes without a failure", () =>
      Effect.gen(function*() {
        for (let run = 0; run < 10; run++) {
          const step = stepper(Reflector.defaultBackoff)
          let at = 0
          let last = 0
          for (let i = 0; i < 8; i++) {
            last = at
            // Whole milliseconds, as the clock reports them (no floating-point drift in the 2-minute check).
            at = Math.ceil(at + (yield* step(at, failure)))
          }
          // Exactly 2 minutes after the last failure: not yet healthy.
          last += 120_000
          inRange(yield* step(last, failure), 30000, 60000, "2 minutes after")
          // More than 2 minutes: back to the first step, then growing again.
          last += 120_001
          const first = yield* step(last, failure)
          inRange(first, 800, 1600, "after 2 minutes of health")
          inRange(yield* step(last + first, failure), 1600, 3200, "the step after the reset")
        }
      }))

    it.effect("defaultBackoff never resets while failures keep coming less than 2 minutes apart", () =>
      Effect.gen(function*() {
        const step = stepper(Reflector.defaultBackoff)
        for (let i = 0; i < 40; i++) {
          inRange(yield* step(i * 119_999, failure), baseAt(i), 2 * baseAt(i), `step ${i}`)
        }
      }))

    it.effect("defaultBackoff: a 429's Retry-After is a lower bound, even on the first step", () =>
      Effect.gen(function*() {
        const first = stepper(Reflector.defaultBackoff)
        assert.strictEqual(yield* first(0, tooManyRequests(25)), 25_000)

        // Without Retry-After a 429 is an ordinary failure.
        inRange(yield* stepper(Reflector.defaultBackoff)(0, tooManyRequests()), 800, 1600, "429 without Retry-After")

        // At the cap: the longer of the two; a short Retry-After does not shorten the backoff.
        const step = stepper(Reflector.defaultBackoff)
        let at = 0
        for (let i = 0; i < 8; i++) at += yield* step(at, failure)
        const withRetryAfter = yield* step(at, tooManyRequests(45))
        inRange(withRetryAfter, 30_000, 60_000, "Retry-After 45 s at the cap")
        at += withRetryAfter
        inRange(yield* step(at, tooManyRequests(1)), 30_000, 60_000, "Retry-After 1 s at the cap")
        // A Retry-After longer than the cap is cut to defaultMaxRetryAfter (30 s); 999999 s would be 11.6 days.
        assert.strictEqual(yield* stepper(Reflector.defaultBackoff)(0, tooManyRequests(300)), 30_000)
        assert.strictEqual(yield* stepper(Reflector.defaultBackoff)(0, tooManyRequests(999999)), 30_000)
        // honourRetryAfterUpTo sets another cap
        const upTo = stepper(Reflector.honourRetryAfterUpTo("5 minutes")(Schedule.spaced("1 second")))
        assert.strictEqual(yield* upTo(0, tooManyRequests(300)), 300_000)
        assert.strictEqual(yield* upTo(0, tooManyRequests(999999)), 300_000)
      }))

    it.scoped("Retry-After end to end: a re-watch refused with 429 (Retry-After 20 s) is retried after exactly 20 s", () =>
      Effect.gen(function*() {
        const fake = yield* FakeListerWatcher.make({ initial: [pod("a")] })
        const { log, lw } = timed(fake)
        const { store } = yield* recordingStore()
        const errors = errorLog()
        yield* Reflector.make(lw, store, { watchList: false, onError: errors.onError })
        yield* settle
        yield* advance("1 second")
        yield* fake.failNextWatch(tooManyRequests(20))
        yield* fake.closeWatches
        yield* settle
        const refusedAt = yield* now
        assert.deepStrictEqual(kinds(log.map((t) => t.request)), ["List", "Watch", "Watch"])
        assert.deepStrictEqual(errors.summary(), ["watch:TooManyRequests"])
        yield* advance(19_999)
        assert.strictEqual(log.length, 3)
        yield* advance(1)
        assert.deepStrictEqual(kinds(log.map((t) => t.request)), ["List", "Watch", "Watch", "Watch"])
        assert.strictEqual(log[3].at, refusedAt + 20_000)
        assert.strictEqual(yield* fake.openWatches, 1)
      }))
  })

  describe("resync", () => {
    it.scoped("resyncs every resyncPeriod: one call after 1 s, three after 3 s", () =>
      Effect.gen(function*() {
        const fake = yield* FakeListerWatcher.make({ initial: [pod("a")] })
        const { calls, store } = yield* recordingStore()
        yield* Reflector.make(fake, store, { resyncPeriod: "1 second" })
        yield* settle
        assert.strictEqual(calls.resync, 0)
        yield* advance("999 millis")
        assert.strictEqual(calls.resync, 0)
        yield* advance("1 millis")
        assert.strictEqual(calls.resync, 1)
        yield* advance("2 seconds")
        assert.strictEqual(calls.resync, 3)
      }))

    it.scoped("shouldResync answering false: no resync, and it is asked every period", () =>
      Effect.gen(function*() {
        const fake = yield* FakeListerWatcher.make({ initial: [pod("a")] })
        const { calls, store } = yield* recordingStore()
        let asked = 0
        let answer = false
        yield* Reflector.make(fake, store, {
          resyncPeriod: "1 second",
          shouldResync: Effect.sync(() => {
            asked++
            return answer
          })
        })
        yield* advance("5 seconds")
        assert.strictEqual(calls.resync, 0)
        assert.strictEqual(asked, 5)
        answer = true
        yield* advance("2 seconds")
        assert.strictEqual(calls.resync, 2)
      }))

    it.scoped("no resyncPeriod: no resync", () =>
      Effect.gen(function*() {
        const fake = yield* FakeListerWatcher.make({ initial: [pod("a")] })
        const { calls, store } = yield* recordingStore()
        yield* Reflector.make(fake, store, {})
        yield* advance("10 minutes")
        assert.strictEqual(calls.resync, 0)
      }))
  })

  describe("watch timeoutSeconds (TestWatchTimeout)", () => {
    /** Forces `n` re-watches (each watch open for a second, then closed by the server). */
    const timeouts = (options: Options, n = 20) =>
      Effect.gen(function*() {
        const fake = yield* FakeListerWatcher.make({ initial: [pod("a")] })
        const { store } = yield* recordingStore()
        const errors = errorLog()
        yield* Reflector.make(fake, store, { ...options, onError: errors.onError })
        yield* settle
        for (let i = 0; i < n; i++) {
          yield* advance("1 second")
          yield* fake.closeWatches
          yield* settle
        }
        const requests = yield* fake.requests
        assert.strictEqual(requests.length, n + (options.watchList === false ? 2 : 1))
        assert.deepStrictEqual(errors.summary(), [])
        return watchesOf(requests).map((w) => w.timeoutSeconds!)
      })

    const check = (values: ReadonlyArray<number>, min: number, max: number) => {
      for (const value of values) {
        assert.isTrue(Number.isInteger(value) && value >= min && value <= max, `${value} not in [${min}, ${max}]`)
      }
      assert.isTrue(new Set(values).size > 1, "timeoutSeconds is drawn at random")
    }

    it.scoped("TestWatchTimeout: default timeoutSeconds in [300, 600]", () =>
      Effect.map(timeouts({ watchList: false }), (values) => check(values, 300, 600)))

    it.scoped("TestWatchTimeout: watch-list requests too", () =>
      Effect.map(timeouts({}), (values) => check(values, 300, 600)))

    it.scoped("TestWatchTimeout: minWatchTimeout 30 minutes gives [1800, 3600]", () =>
      Effect.map(timeouts({ watchList: false, minWatchTimeout: "30 minutes" }), (values) => check(values, 1800, 3600)))

    it.scoped("TestWatchTimeout: minWatchTimeout 1 second still gives [300, 600]", () =>
      Effect.map(timeouts({ watchList: false, minWatchTimeout: "1 second" }), (values) => check(values, 300, 600)))
  })

  describe("Gone and too-large resourceVersions", () => {
    it.scoped("Gone on the watch relists at once with a consistent read (resourceVersion \"\")", () =>
      Effect.gen(function*() {
        const fake = yield* FakeListerWatcher.make({ initial: [pod("a"), pod("b")] })
        const { names, store } = yield* recordingStore()
        const errors = errorLog()
        const reflector = yield* Reflector.make(fake, store, { watchList: false, onError: errors.onError })
        yield* settle
        yield* fake.add(pod("c"))
        yield* settle
        assert.strictEqual(yield* reflector.lastSyncResourceVersion, "3")
        yield* fake.addDropWatch(pod("lost"))
        yield* fake.failWatches(gone())
        yield* settle
        assert.strictEqual(yield* now, 0)
        const requests = yield* fake.requests
        assert.deepStrictEqual(requests.map((r) => r.options.resourceVersion), ["", "2", "", "4"])
        assert.deepStrictEqual(listsOf(requests), [{ resourceVersion: "", limit: 500 }, {
          resourceVersion: "",
          limit: 500
        }])
        assert.deepStrictEqual(errors.summary(), ["watch:Gone"])
        assert.strictEqual(errors.reported[0].context.resourceVersion, "3")
        assert.deepStrictEqual(yield* names, ["a", "b", "c", "lost"])
      }))

    it.scoped("Gone twice in a row without a watch event backs off before the second relist; an event resets that", () =>
      Effect.gen(function*() {
        const fake = yield* FakeListerWatcher.make({ initial: [pod("a")] })
        const { log, lw } = timed(fake)
        const { store } = yield* recordingStore()
        const errors = errorLog()
        yield* Reflector.make(lw, store, { watchList: false, onError: errors.onError })
        yield* settle
        yield* fake.failWatches(gone())
        yield* settle
        assert.deepStrictEqual(kinds(log.map((t) => t.request)), ["List", "Watch", "List", "Watch"])
        // The new watch delivered nothing: the second Gone waits for the backoff.
        yield* fake.failWatches(gone())
        yield* settle
        assert.strictEqual(log.length, 4)
        yield* advance("1600 millis")
        assert.deepStrictEqual(kinds(log.map((t) => t.request)), ["List", "Watch", "List", "Watch", "List", "Watch"])
        inRange(log[4].at, 800, 1600, "relist after the second Gone")
        // An event is progress: the next Gone relists at once again.
        yield* fake.add(pod("b"))
        yield* settle
        yield* fake.failWatches(gone())
        yield* settle
        assert.strictEqual(log.length, 8)
        assert.strictEqual(log[6].at, yield* now)
        assert.deepStrictEqual(errors.summary(), ["watch:Gone", "watch:Gone", "watch:Gone"])
      }))

    it.scoped("TestReflectorExpiredExactResourceVersion: a relist at \"10\" getting Gone retries at once with \"\"", () =>
      Effect.gen(function*() {
        const fake = yield* FakeListerWatcher.make({ initial: podsNamed("p", 10) })
        const { log, lw } = timed(fake)
        const { names, store } = yield* recordingStore()
        const errors = errorLog()
        const reflector = yield* Reflector.make(lw, store, {
          watchList: false,
          initialList: "any",
          onError: errors.onError
        })
        yield* settle
        yield* fake.addDropWatch(pod("extra"))
        yield* fake.failNextList(gone())
        yield* fake.failWatches(serverError())
        yield* advance("2 seconds")
        const lists = log.filter((t) => t.request._tag === "List")
        assert.deepStrictEqual(lists.map((t) => t.request.options.resourceVersion), ["0", "10", ""])
        assert.strictEqual(lists[2].at, lists[1].at, "the consistent retry does not wait")
        assert.deepStrictEqual(errors.summary(), ["watch:ServerError", "list:Gone"])
        assert.strictEqual((yield* names).length, 11)
        assert.strictEqual(yield* reflector.lastSyncResourceVersion, "11")
      }))

    it.scoped("TestReflectorFullListIfTooLarge: each too-large format retries at once with \"\"", () =>
      Effect.gen(function*() {
        const formats = [
          Wire.failureStatus(504, "Timeout", "The server was unable to return a response in the time allotted", {
            causes: [{ reason: "ResourceVersionTooLarge", message: "Too large resource version" }]
          }),
          Wire.failureStatus(
            504,
            "Timeout",
            "The server was unable to return a response in the time allotted, but may still be processing the request (Too large resource version)"
          ),
          Wire.failureStatus(504, "Timeout", "too large resource version: 40, current: 30")
        ].map((status) => ListerWatcher.fromStatus(status))
        for (const error of formats) assert.strictEqual(error._tag, "ResourceVersionTooLarge")

        const fake = yield* FakeListerWatcher.make({ initial: podsNamed("p", 10) })
        const { store } = yield* recordingStore()
        const errors = errorLog()
        yield* Reflector.make(fake, store, { watchList: false, initialList: "any", onError: errors.onError })
        yield* settle
        let batch = 0
        for (const error of formats) {
          for (const obj of podsNamed(`b${batch++}-`, 10)) yield* fake.add(obj)
          yield* settle
          yield* fake.failNextList(error)
          yield* fake.failWatches(serverError())
          yield* advance("10 seconds")
        }
        const lists = listsOf(yield* fake.requests)
        assert.deepStrictEqual(lists.map((o) => o.resourceVersion), ["0", "20", "", "30", "", "40", ""])
        assert.deepStrictEqual(errors.summary(), [
          "watch:ServerError",
          "list:ResourceVersionTooLarge",
          "watch:ServerError",
          "list:ResourceVersionTooLarge",
          "watch:ServerError",
          "list:ResourceVersionTooLarge"
        ])
      }))

    it.scoped("a too-large resourceVersion on the watch relists consistently", () =>
      Effect.gen(function*() {
        const fake = yield* FakeListerWatcher.make({ initial: [pod("a")] })
        const { store } = yield* recordingStore()
        const errors = errorLog()
        yield* Reflector.make(fake, store, { watchList: false, onError: errors.onError })
        yield* settle
        yield* advance("1 second")
        yield* fake.failNextWatch(new ListerWatcher.ResourceVersionTooLarge({ message: "Too large resource version" }))
        yield* fake.closeWatches
        yield* settle
        assert.deepStrictEqual(kinds(yield* fake.requests), ["List", "Watch", "Watch", "List", "Watch"])
        assert.deepStrictEqual(listsOf(yield* fake.requests)[1], { resourceVersion: "", limit: 500 })
        assert.deepStrictEqual(errors.summary(), ["watch:ResourceVersionTooLarge"])
      }))
  })

  describe("list failures", () => {
    it.scoped("a failed list is reported (phase list), leaves the store alone, and is retried after [0.8, 1.6) s", () =>
      Effect.gen(function*() {
        const fake = yield* FakeListerWatcher.make({ initial: [pod("a"), pod("b")] })
        yield* fake.failNextList(serverError())
        const { log, lw } = timed(fake)
        const { calls, names, store } = yield* recordingStore()
        const errors = errorLog()
        const reflector = yield* Reflector.make(lw, store, { watchList: false, onError: errors.onError })
        yield* settle
        assert.deepStrictEqual(errors.summary(), ["list:ServerError"])
        assert.deepStrictEqual(errors.reported[0].context, { phase: "list", resourceVersion: "", reflector: "fake" })
        assert.strictEqual(calls.replace.length, 0)
        assert.deepStrictEqual(yield* names, [])
        yield* advance("799 millis")
        assert.strictEqual(log.length, 1)
        yield* advance("801 millis")
        assert.deepStrictEqual(kinds(log.map((t) => t.request)), ["List", "List", "Watch"])
        inRange(log[1].at, 800, 1600, "second list")
        assert.deepStrictEqual(yield* names, ["a", "b"])
        assert.strictEqual(yield* reflector.lastSyncResourceVersion, "2")
        assert.deepStrictEqual(errors.summary(), ["list:ServerError"])
      }))

    it.scoped("a failed store replace is a failed list: reported as StoreError, retried after the backoff", () =>
      Effect.gen(function*() {
        const fake = yield* FakeListerWatcher.make({ initial: [pod("a")] })
        const inner = yield* recordingStore()
        let refuse = true
        const store: Reflector.Store<KubeObject, unknown> = {
          ...inner.store,
          replace: (objects, rv) => refuse ? Effect.fail("nope") : inner.store.replace(objects, rv)
        }
        const errors = errorLog()
        yield* Reflector.make(fake, store, { watchList: false, onError: errors.onError })
        yield* settle
        assert.deepStrictEqual(errors.summary(), ["list:StoreError"])
        assert.strictEqual((errors.reported[0].error as Reflector.StoreError).operation, "replace")
        refuse = false
        yield* advance("2 seconds")
        assert.deepStrictEqual(yield* inner.names, ["a"])
      }))
  })

  describe("bookmarks", () => {
    it.scoped("a bookmark advances lastSyncResourceVersion, reaches store.bookmark, and the next watch starts there", () =>
      Effect.gen(function*() {
        const fake = yield* FakeListerWatcher.make({ initial: [pod("a")] })
        const { calls, names, store } = yield* recordingStore()
        const reflector = yield* Reflector.make(fake, store, { watchList: false })
        yield* settle
        assert.strictEqual(yield* reflector.lastSyncResourceVersion, "1")
        yield* fake.addDropWatch(pod("b"))
        yield* fake.addDropWatch(pod("c"))
        yield* fake.bookmark
        yield* settle
        assert.strictEqual(yield* reflector.lastSyncResourceVersion, "3")
        assert.deepStrictEqual(calls.bookmark, ["3"])
        assert.deepStrictEqual(yield* names, ["a"])
        yield* advance("1 second")
        yield* fake.closeWatches
        yield* settle
        const watches = watchesOf(yield* fake.requests)
        assert.strictEqual(watches[1].resourceVersion, "3")
        assert.isTrue(watches.every((w) => w.allowWatchBookmarks === true))
      }))

    it.scoped("a store without bookmark: the version still advances", () =>
      Effect.gen(function*() {
        const fake = yield* FakeListerWatcher.make({ initial: [pod("a")] })
        const { store } = yield* recordingStore({ withBookmark: false })
        const errors = errorLog()
        const reflector = yield* Reflector.make(fake, store, { watchList: false, onError: errors.onError })
        yield* settle
        yield* fake.addDropWatch(pod("b"))
        yield* fake.bookmark
        yield* settle
        assert.strictEqual(yield* reflector.lastSyncResourceVersion, "2")
        assert.deepStrictEqual(errors.summary(), [])
      }))
  })

  describe("pagination", () => {
    it.scoped("pageSize 4 with 10 objects: three pages following continue, without resourceVersion after the first", () =>
      Effect.gen(function*() {
        const fake = yield* FakeListerWatcher.make({ initial: podsNamed("p", 10) })
        const { calls, names, store } = yield* recordingStore()
        yield* Reflector.make(fake, store, { watchList: false, pageSize: 4 })
        yield* settle
        const lists = listsOf(yield* fake.requests)
        assert.strictEqual(lists.length, 3)
        assert.deepStrictEqual(lists[0], { resourceVersion: "", limit: 4 })
        for (const page of lists.slice(1)) {
          assert.deepStrictEqual(Object.keys(page).sort(), ["continue", "limit"])
          assert.strictEqual(page.limit, 4)
          assert.isTrue(page.continue !== undefined && page.continue !== "")
        }
        assert.notStrictEqual(lists[1].continue, lists[2].continue)
        assert.strictEqual((yield* names).length, 10)
        assert.deepStrictEqual(calls.replace.map((r) => r.resourceVersion), ["10"])
        assert.deepStrictEqual(kinds(yield* fake.requests), ["List", "List", "List", "Watch"])
      }))

    it.scoped("TestReflectorWatchListPageSize: a relist at \"10\" with pageSize 4 pages too", () =>
      Effect.gen(function*() {
        const fake = yield* FakeListerWatcher.make({ initial: podsNamed("p", 10) })
        const { names, store } = yield* recordingStore()
        yield* Reflector.make(fake, store, { watchList: false, pageSize: 4 })
        yield* settle
        yield* fake.clearRequests
        yield* fake.failWatches(serverError())
        yield* advance("2 seconds")
        const lists = listsOf(yield* fake.requests)
        assert.deepStrictEqual(lists.map((o) => [o.resourceVersion, o.limit, o.continue !== undefined]), [
          ["10", 4, false],
          [undefined, 4, true],
          [undefined, 4, true]
        ])
        assert.strictEqual((yield* names).length, 10)
      }))

    it.scoped("TestReflectorFullListIfExpired: an expired continue token falls back to one full list at the original version", () =>
      Effect.gen(function*() {
        const fake = yield* FakeListerWatcher.make({ initial: podsNamed("p", 10) })
        let expireAfterFirstPage = false
        const lw: LW = {
          ...fake,
          list: (options) =>
            fake.list(options).pipe(
              Effect.tap((page) =>
                expireAfterFirstPage && options.continue === undefined && page.continue !== undefined
                  ? fake.expireContinueTokens
                  : Effect.void
              )
            )
        }
        const { calls, names, store } = yield* recordingStore()
        const errors = errorLog()
        yield* Reflector.make(lw, store, {
          watchList: false,
          initialList: "any",
          pageSize: 4,
          onError: errors.onError
        })
        yield* settle
        assert.strictEqual(listsOf(yield* fake.requests).length, 3)
        yield* fake.clearRequests
        yield* fake.addDropWatch(pod("p011"))
        expireAfterFirstPage = true
        yield* fake.failWatches(serverError())
        yield* advance("2 seconds")
        const lists = listsOf(yield* fake.requests)
        assert.deepStrictEqual(lists.map((o) => o.resourceVersion), ["10", undefined, "10"])
        assert.deepStrictEqual(lists[2], { resourceVersion: "10" })
        assert.strictEqual((yield* names).length, 11)
        assert.deepStrictEqual(calls.replace.map((r) => [r.resourceVersion, r.names.length]), [["10", 10], ["11", 11]])
        // The expired token is handled inside the list: only the watch failure was an error.
        assert.deepStrictEqual(errors.summary(), ["watch:ServerError"])
      }))

    // client-go's policy: a relist at a concrete version carries no limit, so that the API server's watch
    // cache serves it instead of etcd.
    it.scoped("TestReflectorNotPaginatingNotConsistentReads: a relist at a concrete version is not paginated", () =>
      Effect.gen(function*() {
        const fake = yield* FakeListerWatcher.make({ initial: podsNamed("p", 10) })
        const { store } = yield* recordingStore()
        yield* Reflector.make(fake, store, { watchList: false })
        yield* settle
        yield* fake.failWatches(serverError())
        yield* advance("2 seconds")
        assert.deepStrictEqual(listsOf(yield* fake.requests), [
          { resourceVersion: "", limit: 500 },
          { resourceVersion: "10" }
        ])
      }))

    it.scoped("a consistent relist after Gone is paginated (etcd serves it)", () =>
      Effect.gen(function*() {
        const fake = yield* FakeListerWatcher.make({ initial: podsNamed("p", 10) })
        const { store } = yield* recordingStore()
        yield* Reflector.make(fake, store, { watchList: false })
        yield* settle
        yield* fake.failWatches(gone())
        yield* settle
        assert.deepStrictEqual(listsOf(yield* fake.requests), [
          { resourceVersion: "", limit: 500 },
          { resourceVersion: "", limit: 500 }
        ])
      }))

    it("listPageSize as a table (client-go's Reflector policy)", () => {
      const cases: ReadonlyArray<readonly [number | undefined, string, boolean, number | undefined]> = [
        // pageSize asked, resourceVersion, paginatedResult, limit sent
        [undefined, "", false, 500],
        [undefined, "0", false, 500],
        [undefined, "10", false, undefined],
        [undefined, "10", true, 500],
        [undefined, "", true, 500],
        [4, "10", false, 4],
        [4, "", false, 4],
        [0, "", false, undefined],
        [0, "10", true, undefined]
      ]
      for (const [pageSize, resourceVersion, paginatedResult, limit] of cases) {
        assert.strictEqual(
          Reflector.listPageSize({ pageSize, resourceVersion, paginatedResult }),
          limit,
          JSON.stringify({ pageSize, resourceVersion, paginatedResult })
        )
      }
    })

    it.scoped("pageSize 0: every list is one unpaginated response", () =>
      Effect.gen(function*() {
        const fake = yield* FakeListerWatcher.make({ initial: podsNamed("p", 10) })
        const { names, store } = yield* recordingStore()
        yield* Reflector.make(fake, store, { watchList: false, pageSize: 0 })
        yield* settle
        assert.strictEqual((yield* names).length, 10)
        yield* fake.failWatches(serverError())
        yield* advance("2 seconds")
        assert.deepStrictEqual(listsOf(yield* fake.requests), [{ resourceVersion: "" }, { resourceVersion: "10" }])
      }))

    it.scoped("TestReflectorPaginatingNonConsistentReadsIfWatchCacheDisabled: a paginated any-age list keeps relists paged", () =>
      Effect.gen(function*() {
        const fake = yield* FakeListerWatcher.make({ initial: podsNamed("p", 501) })
        const { names, store } = yield* recordingStore()
        yield* Reflector.make(fake, store, { watchList: false, initialList: "any" })
        yield* settle
        assert.strictEqual((yield* names).length, 501)
        yield* fake.failWatches(serverError())
        yield* advance("2 seconds")
        const lists = listsOf(yield* fake.requests)
        assert.deepStrictEqual(lists.map((o) => [o.resourceVersion, o.limit]), [
          ["0", 500],
          [undefined, 500],
          ["501", 500],
          [undefined, 500]
        ])
      }))

    it.scoped("an any-age first list that was not paginated: a relist at a concrete version is not paginated", () =>
      Effect.gen(function*() {
        const fake = yield* FakeListerWatcher.make({ initial: podsNamed("p", 3) })
        const { store } = yield* recordingStore()
        yield* Reflector.make(fake, store, { watchList: false, initialList: "any" })
        yield* settle
        yield* fake.failWatches(serverError())
        yield* advance("2 seconds")
        assert.deepStrictEqual(listsOf(yield* fake.requests), [{ resourceVersion: "0", limit: 500 }, {
          resourceVersion: "3"
        }])
      }))
  })

  describe("watch-list", () => {
    it.scoped("happy path: one watch-list request, no List, synced at the bookmark, later events on the same stream", () =>
      Effect.gen(function*() {
        const fake = yield* FakeListerWatcher.make({ initial: [pod("a"), pod("b")] })
        const { calls, names, store } = yield* recordingStore()
        const errors = errorLog()
        const reflector = yield* Reflector.make(fake, store, { onError: errors.onError })
        yield* settle
        const requests = yield* fake.requests
        assert.strictEqual(requests.length, 1)
        const { timeoutSeconds, ...options } = watchesOf(requests)[0]
        assert.deepStrictEqual(options, {
          resourceVersion: "",
          resourceVersionMatch: "NotOlderThan",
          sendInitialEvents: true,
          allowWatchBookmarks: true
        })
        assert.isTrue(timeoutSeconds! >= 300 && timeoutSeconds! <= 600)
        assert.deepStrictEqual(calls.replace, [{ resourceVersion: "2", names: ["a", "b"] }])
        assert.deepStrictEqual(calls.add, [])
        assert.strictEqual(yield* reflector.lastSyncResourceVersion, "2")
        yield* fake.add(pod("c"))
        yield* fake.modify(pod("a", { labels: { x: "y" } }))
        yield* settle
        assert.deepStrictEqual(yield* names, ["a", "b", "c"])
        assert.deepStrictEqual(calls.add, ["c"])
        assert.deepStrictEqual(calls.update, ["a"])
        assert.strictEqual(yield* reflector.lastSyncResourceVersion, "4")
        assert.strictEqual((yield* fake.requests).length, 1)
        assert.strictEqual(yield* fake.openWatches, 1)
        assert.deepStrictEqual(errors.summary(), [])
      }))

    it.scoped("a server that rejects watch-list: List+Watch in the same cycle, and LIST on relists for a minute", () =>
      Effect.gen(function*() {
        const fake = yield* FakeListerWatcher.make({ initial: [pod("a")], watchList: "reject" })
        const { names, store } = yield* recordingStore()
        const errors = errorLog()
        yield* Reflector.make(fake, store, { onError: errors.onError })
        yield* settle
        assert.deepStrictEqual(kinds(yield* fake.requests), ["WatchList", "List", "Watch"])
        assert.deepStrictEqual(errors.summary(), ["watch-list:ServerError"])
        assert.strictEqual((errors.reported[0].error as ListerWatcher.ServerError).code, 422)
        assert.deepStrictEqual(yield* names, ["a"])
        assert.strictEqual(yield* now, 0)
        // A later relist within the retry delay goes straight to LIST.
        yield* fake.failWatches(serverError())
        yield* advance("2 seconds")
        assert.deepStrictEqual(kinds(yield* fake.requests), ["WatchList", "List", "Watch", "List", "Watch"])
      }))

    it.scoped("after a 422, watch-list is tried again on a later cycle once watchListRetryDelay has passed", () =>
      Effect.gen(function*() {
        let reject = true
        const fake = yield* FakeListerWatcher.make({ initial: [pod("a")] })
        const lw: LW = {
          ...fake,
          watch: (options) =>
            options.sendInitialEvents === true && reject
              ? Stream.fail(serverError(422, "Invalid"))
              : fake.watch(options)
        }
        const t = timed(lw)
        const { names, store } = yield* recordingStore()
        const errors = errorLog()
        yield* Reflector.make(t.lw, store, { onError: errors.onError })
        yield* settle
        assert.deepStrictEqual(kinds(t.log.map((x) => x.request)), ["WatchList", "List", "Watch"])
        // the API server is upgraded: it now serves watch-list
        reject = false
        // a relist 30 s later still lists (1 minute has not passed)
        yield* advance("30 seconds")
        yield* fake.failWatches(serverError())
        yield* advance("2 seconds")
        assert.deepStrictEqual(kinds(t.log.map((x) => x.request)).slice(3), ["List", "Watch"])
        // a relist after the minute uses watch-list again, and keeps it
        yield* advance("40 seconds")
        yield* fake.failWatches(serverError())
        yield* advance("4 seconds")
        assert.deepStrictEqual(kinds(t.log.map((x) => x.request)).slice(5), ["WatchList"])
        yield* fake.add(pod("b"))
        yield* settle
        assert.deepStrictEqual(yield* names, ["a", "b"])
        assert.deepStrictEqual(errors.summary(), ["watch-list:ServerError", "watch:ServerError", "watch:ServerError"])
      }))

    it("watchListRetryDelay: 1 minute, doubling, at most 30 minutes", () => {
      const minutes = [1, 2, 3, 4, 5, 6, 10, 100].map((n) => Duration.toMinutes(Reflector.watchListRetryDelay(n)))
      assert.deepStrictEqual(minutes, [1, 2, 4, 8, 16, 30, 30, 30])
    })

    it.scoped("a server that ignores watch-list: WatchListError Timeout after watchListTimeout, then List+Watch", () =>
      Effect.gen(function*() {
        const fake = yield* FakeListerWatcher.make({ initial: [pod("a"), pod("b")], watchList: "ignore" })
        const { calls, names, store } = yield* recordingStore()
        const errors = errorLog()
        yield* Reflector.make(fake, store, { watchListTimeout: "5 seconds", onError: errors.onError })
        yield* settle
        assert.deepStrictEqual(kinds(yield* fake.requests), ["WatchList"])
        yield* advance("4999 millis")
        assert.deepStrictEqual(errors.summary(), [])
        assert.strictEqual(calls.replace.length, 0)
        yield* advance("1 millis")
        assert.deepStrictEqual(errors.summary(), ["watch-list:WatchListError"])
        assert.strictEqual((errors.reported[0].error as Reflector.WatchListError).reason, "Timeout")
        assert.deepStrictEqual(kinds(yield* fake.requests), ["WatchList", "List", "Watch"])
        assert.strictEqual(yield* fake.openWatches, 1)
        assert.deepStrictEqual(yield* names, ["a", "b"])
        yield* fake.failWatches(serverError())
        yield* advance("2 seconds")
        assert.deepStrictEqual(kinds(yield* fake.requests), ["WatchList", "List", "Watch", "List", "Watch"])
      }))

    it.scoped("TestInitialEventsEndBookmarkTicker: every 10 s without the end bookmark, it says what it waits for", () => {
      const lines: Array<string> = []
      const logger = Logger.make(({ message }) => {
        const text = Array.isArray(message) ? message.join(" ") : String(message)
        if (text.includes("awaiting")) lines.push(text)
      })
      return Effect.gen(function*() {
        const fake = yield* FakeListerWatcher.make({ initial: [pod("a"), pod("b")], watchList: "ignore" })
        const store = yield* DeltaFifo.make<KubeObject>()
        yield* Reflector.make(fake, store, { name: "ticking", watchListTimeout: "25 seconds" })
        yield* settle
        yield* advance("9999 millis")
        assert.deepStrictEqual(lines, [])
        yield* advance("1 millis")
        assert.deepStrictEqual(lines, [
          "ticking: awaiting the initial-events-end bookmark: 2 events in 10s, the last one 10s ago"
        ])
        yield* fake.add(pod("c"))
        yield* advance("10 seconds")
        assert.deepStrictEqual(lines.slice(1), [
          "ticking: awaiting the initial-events-end bookmark: 3 events in 20s, the last one 10s ago"
        ])
        yield* advance("10 seconds")
        assert.deepStrictEqual(lines.slice(2), [
          "ticking: awaiting the initial-events-end bookmark: 3 events in 30s, the last one 20s ago"
        ])
        // the timeout counts from the last event (c, at 10 s): at 35 s the fallback to List+Watch; no more ticks
        yield* advance("4999 millis")
        assert.deepStrictEqual(kinds(yield* fake.requests), ["WatchList"])
        yield* advance("1 millis")
        assert.deepStrictEqual(kinds(yield* fake.requests), ["WatchList", "List", "Watch"])
        yield* advance("30 seconds")
        assert.lengthOf(lines, 3)
      }).pipe(Effect.provide(Logger.replace(Logger.defaultLogger, logger)))
    })

    it.scoped("the end-bookmark timeout: 60 s by default, and the stream is closed", () =>
      Effect.gen(function*() {
        const { lw, requests, state } = scripted({
          list: { items: [pod("a", { rv: "1" })], resourceVersion: "1", continue: undefined },
          watches: [Stream.concat(Stream.make(added(pod("a", { rv: "1" }))), Stream.never)]
        })
        const { calls, names, store } = yield* recordingStore()
        const errors = errorLog()
        yield* Reflector.make(lw, store, { onError: errors.onError })
        yield* advance("59999 millis")
        assert.deepStrictEqual(errors.summary(), [])
        assert.strictEqual(state.open, 1)
        yield* advance("1 millis")
        assert.deepStrictEqual(errors.summary(), ["watch-list:WatchListError"])
        assert.deepStrictEqual(kinds(requests), ["WatchList", "List", "Watch"])
        assert.strictEqual(state.open, 1)
        assert.deepStrictEqual(calls.replace, [{ resourceVersion: "1", names: ["a"] }])
        assert.deepStrictEqual(yield* names, ["a"])
      }))

    it.scoped("TestWatchList case 8: a watch-list stream ending before the bookmark: a new watch-list request", () =>
      Effect.gen(function*() {
        const fake = yield* FakeListerWatcher.make({ initial: [pod("a"), pod("b"), pod("c")] })
        yield* fake.endNextWatchAfter(1)
        const { log, lw } = timed(fake)
        const { calls, names, store } = yield* recordingStore()
        const errors = errorLog()
        yield* Reflector.make(lw, store, { onError: errors.onError })
        yield* settle
        assert.deepStrictEqual(errors.summary(), ["watch-list:WatchListError"])
        assert.strictEqual((errors.reported[0].error as Reflector.WatchListError).reason, "EndedEarly")
        assert.strictEqual(calls.replace.length, 0)
        yield* advance("1600 millis")
        assert.deepStrictEqual(kinds(log.map((t) => t.request)), ["WatchList", "WatchList"])
        inRange(log[1].at, 800, 1600, "second watch-list request")
        assert.deepStrictEqual(yield* names, ["a", "b", "c"])
      }))

    it.scoped("TestWatchList case 6: Modified and Deleted during the initial stream are applied", () =>
      Effect.gen(function*() {
        const { lw, requests } = scripted({
          watches: [
            Stream.concat(
              Stream.make(
                added(pod("p1", { rv: "1" })),
                added(pod("p2", { rv: "2" })),
                added(pod("p3", { rv: "3" })),
                modified(pod("p1", { rv: "4", labels: { v: "2" } })),
                deleted(pod("p3", { rv: "5" })),
                bookmarkEvent("5", "true"),
                added(pod("p4", { rv: "6" }))
              ),
              Stream.never
            )
          ]
        })
        const { calls, indexer, names, store } = yield* recordingStore()
        const reflector = yield* Reflector.make(lw, store, {})
        yield* settle
        // p4 came after the end bookmark, in the same chunk: a watch event.
        assert.deepStrictEqual(yield* names, ["p1", "p2", "p4"])
        assert.deepStrictEqual(calls.replace, [{ resourceVersion: "5", names: ["p1", "p2"] }])
        assert.deepStrictEqual(calls.add, ["p4"])
        const p1 = Option.getOrThrow(yield* indexer.getByKey("ns/p1"))
        assert.strictEqual(rvOf(p1), "4")
        assert.strictEqual(yield* reflector.lastSyncResourceVersion, "6")
        assert.strictEqual(requests.length, 1)
      }))

    it.scoped("initialList \"any\" makes the first watch-list request an any-age one (resourceVersion \"0\")", () =>
      Effect.gen(function*() {
        const fake = yield* FakeListerWatcher.make({ initial: [pod("a")] })
        const { names, store } = yield* recordingStore()
        yield* Reflector.make(fake, store, { initialList: "any" })
        yield* settle
        const { timeoutSeconds: _, ...options } = watchesOf(yield* fake.requests)[0]
        assert.deepStrictEqual(options, {
          resourceVersion: "0",
          resourceVersionMatch: "NotOlderThan",
          sendInitialEvents: true,
          allowWatchBookmarks: true
        })
        assert.deepStrictEqual(yield* names, ["a"])
      }))

    it.scoped("TestWatchList case 11: an initial-events-end annotation of \"false\" does not sync", () =>
      Effect.gen(function*() {
        const { lw } = scripted({
          watches: [
            Stream.concat(Stream.make(added(pod("p1", { rv: "1" })), bookmarkEvent("2", "false")), Stream.never)
          ]
        })
        const { calls, names, store } = yield* recordingStore()
        const reflector = yield* Reflector.make(lw, store, {})
        yield* advance("30 seconds")
        assert.strictEqual(calls.replace.length, 0)
        assert.deepStrictEqual(yield* names, [])
        assert.strictEqual(yield* reflector.lastSyncResourceVersion, "")
      }))
  })

  describe("decode errors", () => {
    it.scoped("a Decode error mid-stream is reported (phase watch), then a relist after the backoff loses nothing", () =>
      Effect.gen(function*() {
        const fake = yield* FakeListerWatcher.make({ initial: [pod("a")] })
        const { log, lw } = timed(fake)
        const { indexer, names, store } = yield* recordingStore()
        const errors = errorLog()
        yield* Reflector.make(lw, store, { watchList: false, onError: errors.onError })
        yield* settle
        yield* fake.add(pod("b"))
        yield* settle
        yield* fake.modifyDropWatch(pod("a", { labels: { changed: "yes" } }))
        const decode = new ListerWatcher.Decode({ message: "unexpected end of JSON input" })
        yield* fake.failWatches(decode)
        yield* settle
        assert.deepStrictEqual(errors.summary(), ["watch:Decode"])
        assert.strictEqual(errors.reported[0].error, decode)
        assert.strictEqual(yield* fake.openWatches, 0)
        assert.strictEqual(log.length, 2)
        yield* advance("1600 millis")
        assert.deepStrictEqual(kinds(log.map((t) => t.request)), ["List", "Watch", "List", "Watch"])
        inRange(log[2].at, 800, 1600, "relist")
        assert.strictEqual(log[2].request.options.resourceVersion, "2")
        assert.deepStrictEqual(yield* names, ["a", "b"])
        const a = Option.getOrThrow(yield* indexer.getByKey("ns/a"))
        assert.deepStrictEqual(a.metadata?.labels, { changed: "yes" })
      }))
  })

  describe("recovery paths", () => {
    it.scoped("a connection reset after the watch was established re-watches at once, without backoff or relist", () =>
      Effect.gen(function*() {
        const fake = yield* FakeListerWatcher.make({ initial: [pod("a")] })
        const { store } = yield* recordingStore()
        const errors = errorLog()
        yield* Reflector.make(fake, store, { watchList: false, onError: errors.onError })
        yield* advance("1 second")
        yield* fake.failWatches(transport())
        yield* settle
        assert.deepStrictEqual(kinds(yield* fake.requests), ["List", "Watch", "Watch"])
        assert.strictEqual(watchesOf(yield* fake.requests)[1].resourceVersion, "1")
        assert.deepStrictEqual(errors.summary(), ["watch:Transport"])
        assert.strictEqual(yield* now, 1000)
      }))

    it.scoped("a watch-list request that cannot connect backs off and tries watch-list again", () =>
      Effect.gen(function*() {
        const fake = yield* FakeListerWatcher.make({ initial: [pod("a")] })
        yield* fake.failNextWatch(transport())
        const { log, lw } = timed(fake)
        const { names, store } = yield* recordingStore()
        const errors = errorLog()
        yield* Reflector.make(lw, store, { onError: errors.onError })
        yield* settle
        assert.deepStrictEqual(errors.summary(), ["watch-list:Transport"])
        yield* advance("1600 millis")
        assert.deepStrictEqual(kinds(log.map((t) => t.request)), ["WatchList", "WatchList"])
        inRange(log[1].at, 800, 1600, "second watch-list")
        assert.deepStrictEqual(yield* names, ["a"])
      }))

    it.scoped("after a watch-list sync, a 429 on its stream backs off (Retry-After) and watches on from the last version", () =>
      Effect.gen(function*() {
        const fake = yield* FakeListerWatcher.make({ initial: [pod("a"), pod("b")] })
        const { names, store } = yield* recordingStore()
        const errors = errorLog()
        yield* Reflector.make(fake, store, { onError: errors.onError })
        yield* settle
        yield* fake.add(pod("c"))
        yield* settle
        yield* fake.failWatches(tooManyRequests(5))
        yield* advance("4999 millis")
        assert.deepStrictEqual(kinds(yield* fake.requests), ["WatchList"])
        yield* advance("1 millis")
        assert.deepStrictEqual(kinds(yield* fake.requests), ["WatchList", "Watch"])
        assert.strictEqual(watchesOf(yield* fake.requests)[1].resourceVersion, "3")
        assert.deepStrictEqual(errors.summary(), ["watch:TooManyRequests"])
        assert.deepStrictEqual(yield* names, ["a", "b", "c"])
      }))

    it.scoped("after a watch-list sync, a 500 on its stream backs off and syncs again, not older than the last version", () =>
      Effect.gen(function*() {
        const fake = yield* FakeListerWatcher.make({ initial: [pod("a")] })
        const { log, lw } = timed(fake)
        const { store } = yield* recordingStore()
        const errors = errorLog()
        yield* Reflector.make(lw, store, { onError: errors.onError })
        yield* settle
        yield* fake.failWatches(serverError())
        yield* advance("1600 millis")
        assert.deepStrictEqual(kinds(log.map((t) => t.request)), ["WatchList", "WatchList"])
        inRange(log[1].at, 800, 1600, "second watch-list")
        const second = log[1].request.options as ListerWatcher.WatchOptions
        assert.strictEqual(second.resourceVersion, "1")
        assert.strictEqual(second.resourceVersionMatch, "NotOlderThan")
        assert.deepStrictEqual(errors.summary(), ["watch:ServerError"])
      }))

    it.scoped("Gone right after each watch-list sync: the second in a row without progress backs off (no hot loop)", () =>
      Effect.gen(function*() {
        const syncThenGone = (extra: ReadonlyArray<Event>) =>
          Stream.concat(
            Stream.make(added(pod("p1", { rv: "1" })), bookmarkEvent("1", "true"), ...extra),
            Stream.fail(gone())
          )
        const { lw, requests } = scripted({
          watches: [
            syncThenGone([]),
            syncThenGone([]),
            syncThenGone([added(pod("p2", { rv: "2" }))]),
            syncThenGone([])
          ]
        })
        const { log, lw: timedLw } = timed(lw)
        const { store } = yield* recordingStore()
        const errors = errorLog()
        yield* Reflector.make(timedLw, store, { onError: errors.onError })
        yield* settle
        // The first Gone relists at once; the second, without an event after the sync, waits.
        assert.deepStrictEqual(kinds(requests), ["WatchList", "WatchList"])
        assert.deepStrictEqual(errors.summary(), ["watch:Gone", "watch:Gone"])
        yield* advance("1600 millis")
        // The third stream delivered an event after its sync: progress, so its Gone relists at once.
        assert.deepStrictEqual(kinds(requests), ["WatchList", "WatchList", "WatchList", "WatchList"])
        inRange(log[2].at, 800, 1600, "third watch-list")
        assert.strictEqual(log[3].at, log[2].at)
        assert.isTrue(requests.every((r) => r.options.resourceVersion === ""))
      }))

    it.scoped("Gone on a watch-list request at a known version: a consistent watch-list at once", () =>
      Effect.gen(function*() {
        const fake = yield* FakeListerWatcher.make({ initial: [pod("a")] })
        const { log, lw } = timed(fake)
        const { names, store } = yield* recordingStore()
        const errors = errorLog()
        yield* Reflector.make(lw, store, { onError: errors.onError })
        yield* settle
        yield* fake.failWatches(serverError())
        yield* fake.failNextWatch(gone())
        yield* advance("1600 millis")
        assert.deepStrictEqual(log.map((t) => t.request.options.resourceVersion), ["", "1", ""])
        assert.deepStrictEqual(kinds(log.map((t) => t.request)), ["WatchList", "WatchList", "WatchList"])
        assert.strictEqual(log[2].at, log[1].at)
        assert.deepStrictEqual(errors.summary(), ["watch:ServerError", "watch-list:Gone"])
        assert.deepStrictEqual(yield* names, ["a"])
      }))

    it.scoped("a watch-list stream ending early after more than a second of progress is retried at once", () =>
      Effect.gen(function*() {
        const { lw, requests } = scripted({
          watches: [
            Stream.concat(
              Stream.make(added(pod("p1", { rv: "1" }))),
              Stream.drain(Stream.fromEffect(Effect.sleep("2 seconds")))
            ),
            Stream.concat(Stream.make(added(pod("p1", { rv: "1" })), bookmarkEvent("1", "true")), Stream.never)
          ]
        })
        const { names, store } = yield* recordingStore()
        const errors = errorLog()
        yield* Reflector.make(lw, store, { onError: errors.onError })
        yield* advance("2 seconds")
        assert.deepStrictEqual(kinds(requests), ["WatchList", "WatchList"])
        assert.deepStrictEqual(errors.summary(), ["watch-list:WatchListError"])
        assert.deepStrictEqual(yield* names, ["p1"])
      }))

    it.scoped("a 429 on the LIST waits for its Retry-After", () =>
      Effect.gen(function*() {
        const fake = yield* FakeListerWatcher.make({ initial: [pod("a")] })
        yield* fake.failNextList(tooManyRequests(10))
        const { log, lw } = timed(fake)
        const { names, store } = yield* recordingStore()
        const errors = errorLog()
        yield* Reflector.make(lw, store, { watchList: false, onError: errors.onError })
        yield* advance("9999 millis")
        assert.strictEqual(log.length, 1)
        yield* advance("1 millis")
        assert.deepStrictEqual(log.map((t) => [t.request._tag, t.at]), [["List", 0], ["List", 10000], ["Watch", 10000]])
        assert.deepStrictEqual(errors.summary(), ["list:TooManyRequests"])
        assert.deepStrictEqual(yield* names, ["a"])
      }))

    for (const watchList of [true, false]) {
      it.scoped(`reuse replaces listed objects (watch-list ${watchList ? "on" : "off"})`, () =>
        Effect.gen(function*() {
          const fake = yield* FakeListerWatcher.make({ initial: [pod("a"), pod("b")] })
          const held = new Map((yield* fake.objects).map((obj) => [nameOf(obj), { ...obj }] as const))
          const seen: Array<string> = []
          const { indexer, store } = yield* recordingStore()
          yield* Reflector.make(fake, store, {
            watchList,
            reuse: (obj) => {
              seen.push(nameOf(obj))
              return held.get(nameOf(obj)) ?? obj
            }
          })
          yield* settle
          yield* fake.add(pod("c"))
          yield* settle
          assert.deepStrictEqual(seen.sort(), ["a", "b"])
          assert.strictEqual(Option.getOrThrow(yield* indexer.getByKey("ns/a")), held.get("a"))
          assert.strictEqual(Option.getOrThrow(yield* indexer.getByKey("ns/b")), held.get("b"))
          assert.isTrue(Option.isSome(yield* indexer.getByKey("ns/c")))
        }))
    }
  })

  describe("stop", () => {
    it.effect("closing the scope during a LIST that never returns interrupts it, promptly", () =>
      Effect.gen(function*() {
        const fake = yield* FakeListerWatcher.make({ initial: [pod("a")] })
        let listCalls = 0
        let interrupted = false
        const lw: LW = {
          ...fake,
          list: () =>
            Effect.suspend(() => {
              listCalls++
              return Effect.never
            }).pipe(Effect.onInterrupt(() =>
              Effect.sync(() => {
                interrupted = true
              })
            ))
        }
        const { store } = yield* recordingStore()
        const { scope } = yield* startInScope(lw, store, { watchList: false })
        yield* settle
        assert.strictEqual(listCalls, 1)
        yield* closeWithoutTime(scope)
        assert.isTrue(interrupted)
        yield* advance("10 minutes")
        assert.strictEqual(listCalls, 1)
        assert.deepStrictEqual(yield* fake.requests, [])
      }))

    it.effect("closing the scope during a backoff wait returns promptly; no request afterwards", () =>
      Effect.gen(function*() {
        const fake = yield* FakeListerWatcher.make({ initial: [pod("a")] })
        yield* fake.failNextList(serverError(), 100)
        const { store } = yield* recordingStore()
        const errors = errorLog()
        const { scope } = yield* startInScope(fake, store, { watchList: false, onError: errors.onError })
        yield* settle
        yield* advance("10 seconds")
        const before = (yield* fake.requests).length
        assert.isTrue(before >= 3)
        yield* closeWithoutTime(scope)
        yield* advance("10 minutes")
        assert.strictEqual((yield* fake.requests).length, before)
        assert.strictEqual(errors.reported.length, before)
      }))

    it.effect("closing the scope mid-stream closes the watch; no request afterwards", () =>
      Effect.gen(function*() {
        const fake = yield* FakeListerWatcher.make({ initial: [pod("a")] })
        const { names, store } = yield* recordingStore()
        const { scope } = yield* startInScope(fake, store, { watchList: false })
        yield* settle
        assert.strictEqual(yield* fake.openWatches, 1)
        yield* closeWithoutTime(scope)
        assert.strictEqual(yield* fake.openWatches, 0)
        yield* fake.add(pod("b"))
        yield* advance("10 minutes")
        assert.strictEqual((yield* fake.requests).length, 2)
        assert.deepStrictEqual(yield* names, ["a"])
      }))

    it.effect("closing the scope while a watch-list waits for its bookmark closes the stream", () =>
      Effect.gen(function*() {
        const fake = yield* FakeListerWatcher.make({ initial: [pod("a")], watchList: "ignore" })
        const { calls, store } = yield* recordingStore()
        const { scope } = yield* startInScope(fake, store, {})
        yield* advance("1 second")
        assert.strictEqual(yield* fake.openWatches, 1)
        yield* closeWithoutTime(scope)
        assert.strictEqual(yield* fake.openWatches, 0)
        yield* advance("10 minutes")
        assert.strictEqual((yield* fake.requests).length, 1)
        assert.strictEqual(calls.replace.length, 0)
      }))

    it.effect("closing the scope while the resync timer is pending stops it", () =>
      Effect.gen(function*() {
        const fake = yield* FakeListerWatcher.make({ initial: [pod("a")] })
        const { calls, store } = yield* recordingStore()
        const { scope } = yield* startInScope(fake, store, { resyncPeriod: "1 second" })
        yield* advance("1500 millis")
        assert.strictEqual(calls.resync, 1)
        yield* closeWithoutTime(scope)
        yield* advance("10 seconds")
        assert.strictEqual(calls.resync, 1)
      }))
  })

  // -------------------------------------------------------------------------------------------------
  // B. client-go ports (reflector_test.go, reflector_watchlist_test.go)
  // -------------------------------------------------------------------------------------------------

  describe("hardening", () => {
    it.scoped("resync starts only once the session has synced: a list that never returns never resyncs", () =>
      Effect.gen(function*() {
        const { calls, store } = yield* recordingStore()
        const lw: LW = { list: () => Effect.never, watch: () => Stream.never }
        yield* Reflector.make(lw, store, { watchList: false, resyncPeriod: "1 second" })
        yield* advance("10 seconds")
        assert.strictEqual(calls.resync, 0)
      }))

    it.scoped("a defect in the ListerWatcher is reported as UnexpectedError and the loop recovers", () =>
      Effect.gen(function*() {
        const fake = yield* FakeListerWatcher.make()
        yield* fake.add(pod("a"))
        let calls = 0
        const lw: LW = {
          ...fake,
          list: (options) => (++calls === 1 ? Effect.die(new Error("boom")) : fake.list(options))
        }
        const { indexer, store } = yield* recordingStore()
        const errors = errorLog()
        yield* Reflector.make(lw, store, { watchList: false, onError: errors.onError })
        yield* settle
        assert.deepStrictEqual(errors.summary(), ["watch:UnexpectedError"])
        assert.include(errors.reported[0].error.message, "boom")
        yield* advance("2 seconds")
        assert.deepStrictEqual((yield* indexer.list).map(nameOf), ["a"])
      }))

    it.scoped("a finite custom backoff starts over with its first wait instead of retrying at once", () =>
      Effect.gen(function*() {
        const fake = yield* FakeListerWatcher.make()
        yield* fake.failNextList(serverError(), 3)
        const t = timed(fake)
        const { store } = yield* recordingStore()
        const backoff = Schedule.spaced("5 seconds").pipe(Schedule.intersect(Schedule.recurs(1)))
        yield* Reflector.make(t.lw, store, { watchList: false, backoff })
        yield* advance("30 seconds")
        const lists = t.times("List")
        assert.isAtLeast(lists.length, 4)
        for (let i = 1; i < lists.length; i++) assert.isAtLeast(lists[i] - lists[i - 1], 5000, `list ${i}`)
      }))

    it.scoped("a custom backoff still honours Retry-After", () =>
      Effect.gen(function*() {
        const fake = yield* FakeListerWatcher.make()
        yield* fake.failNextList(tooManyRequests(25))
        const t = timed(fake)
        const { store } = yield* recordingStore()
        yield* Reflector.make(t.lw, store, { watchList: false, backoff: Schedule.spaced("1 second") })
        yield* advance("24 seconds")
        assert.strictEqual(t.times("List").length, 1)
        yield* advance("2 seconds")
        assert.strictEqual(t.times("List").length, 2)
      }))

    it.scoped("the watch-list timeout measures inactivity: a slow initial stream that keeps delivering is not cut", () =>
      Effect.gen(function*() {
        // 10 objects, one every 4 s: 40 s in total, longer than the 10 s timeout, never 10 s idle.
        const initial = Stream.fromIterable(podsNamed("p", 10)).pipe(
          Stream.map((obj) => added({ ...obj, metadata: { ...obj.metadata, resourceVersion: "5" } })),
          Stream.tap(() => Effect.sleep("4 seconds"))
        )
        const { lw, requests } = scripted({
          watches: [Stream.concat(initial, Stream.concat(Stream.make(bookmarkEvent("5", "true")), Stream.never))]
        })
        const { names, store } = yield* recordingStore()
        const errors = errorLog()
        yield* Reflector.make(lw, store, { watchListTimeout: "10 seconds", onError: errors.onError })
        yield* advance("45 seconds")
        assert.deepStrictEqual(errors.summary(), [])
        assert.deepStrictEqual(kinds(requests), ["WatchList"])
        assert.strictEqual((yield* names).length, 10)
      }))

    it.scoped("a watch-list stream that stalls before its end bookmark times out after watchListTimeout of silence", () =>
      Effect.gen(function*() {
        const { lw, requests } = scripted({
          watches: [Stream.concat(Stream.make(added(pod("a", { rv: "2" }))), Stream.never)]
        })
        const { store } = yield* recordingStore()
        const errors = errorLog()
        yield* Reflector.make(lw, store, { watchListTimeout: "10 seconds", onError: errors.onError })
        yield* advance("9 seconds")
        assert.deepStrictEqual(errors.summary(), [])
        yield* advance("2 seconds")
        assert.deepStrictEqual(errors.summary(), ["watch-list:WatchListError"])
        assert.deepStrictEqual(kinds(requests), ["WatchList", "List", "Watch"])
      }))

    it.scoped("reuse is applied page by page as a paged list arrives", () =>
      Effect.gen(function*() {
        const fake = yield* FakeListerWatcher.make()
        for (const obj of podsNamed("p", 10)) yield* fake.add(obj)
        const pagesSeen: Array<number> = []
        let listed = 0
        const lw: LW = {
          ...fake,
          list: (options) => Effect.tap(fake.list(options), () => Effect.sync(() => pagesSeen.push(listed)))
        }
        const { store } = yield* recordingStore()
        yield* Reflector.make(lw, store, {
          watchList: false,
          pageSize: 4,
          reuse: (obj) => {
            listed++
            return obj
          }
        })
        yield* settle
        // Before each page is fetched, every object of the previous pages has already been through `reuse`.
        assert.deepStrictEqual(pagesSeen, [0, 4, 8])
        assert.strictEqual(listed, 10)
      }))
  })

  describe("client-go reflector_test", () => {
    it.scoped("TestCloseWatchChannelOnError: an error on the stream closes the watch and ends the session", () =>
      Effect.gen(function*() {
        const fake = yield* FakeListerWatcher.make({ initial: [pod("a")] })
        const { store } = yield* recordingStore()
        const errors = errorLog()
        yield* Reflector.make(fake, store, { watchList: false, onError: errors.onError })
        yield* settle
        assert.strictEqual(yield* fake.openWatches, 1)
        yield* fake.failWatches(serverError())
        yield* settle
        assert.strictEqual(yield* fake.openWatches, 0)
        assert.deepStrictEqual(errors.summary(), ["watch:ServerError"])
        assert.deepStrictEqual(kinds(yield* fake.requests), ["List", "Watch"])
      }))

    it.effect("TestRunUntil: interrupting Reflector.run while watching returns and stops the watch", () =>
      Effect.gen(function*() {
        const fake = yield* FakeListerWatcher.make({ initial: [pod("a")] })
        const { store } = yield* recordingStore()
        const fiber = yield* Effect.fork(Reflector.run(fake, store, { watchList: false }))
        yield* settle
        assert.strictEqual(yield* fake.openWatches, 1)
        const exit = yield* Fiber.interrupt(fiber)
        assert.isTrue(Exit.isInterrupted(exit))
        assert.strictEqual(yield* fake.openWatches, 0)
      }))

    it.scoped("TestReflectorResyncChan: a 1 ms resync period fires", () =>
      Effect.gen(function*() {
        const fake = yield* FakeListerWatcher.make({ initial: [pod("a")] })
        const { calls, store } = yield* recordingStore()
        yield* Reflector.make(fake, store, { resyncPeriod: "1 millis" })
        yield* settle
        assert.strictEqual(calls.resync, 0)
        yield* advance("1 millis")
        assert.strictEqual(calls.resync, 1)
      }))

    it.effect("TestReflectorWatchStoppedBefore: a Reflector whose scope is already closing makes no request", () =>
      Effect.gen(function*() {
        const fake = yield* FakeListerWatcher.make({ initial: [pod("a")] })
        const { store } = yield* recordingStore()
        yield* Effect.scoped(Reflector.make(fake, store, {}))
        yield* advance("10 minutes")
        assert.deepStrictEqual(yield* fake.requests, [])
        assert.strictEqual(yield* fake.openWatches, 0)
      }))

    it.effect("TestReflectorWatchStoppedAfter: stopped 10 ms into a watch: one watch, closed", () =>
      Effect.gen(function*() {
        const fake = yield* FakeListerWatcher.make({ initial: [pod("a")] })
        const { store } = yield* recordingStore()
        const { scope } = yield* startInScope(fake, store, { watchList: false })
        yield* advance("10 millis")
        yield* closeWithoutTime(scope)
        assert.strictEqual(watchesOf(yield* fake.requests).length, 1)
        assert.strictEqual(yield* fake.openWatches, 0)
      }))

    it.scoped("TestReflectorHandleWatchResultChanClosedBefore: a watch that ends at once: VeryShortWatchError, backoff, relist", () =>
      Effect.gen(function*() {
        const fake = yield* FakeListerWatcher.make({ initial: [pod("a")] })
        let watches = 0
        const { log, lw } = timed({
          ...fake,
          watch: (options) => (watches++ === 0 ? Stream.empty : fake.watch(options))
        })
        const { store } = yield* recordingStore()
        const errors = errorLog()
        yield* Reflector.make(lw, store, { watchList: false, onError: errors.onError })
        yield* settle
        assert.deepStrictEqual(errors.summary(), ["watch:VeryShortWatchError"])
        assert.strictEqual(log.length, 2)
        yield* advance("1600 millis")
        assert.deepStrictEqual(kinds(log.map((t) => t.request)), ["List", "Watch", "List", "Watch"])
        inRange(log[2].at, 800, 1600, "relist")
        assert.strictEqual(yield* fake.openWatches, 1)
      }))

    it.scoped("TestReflectorHandleWatchResultChanClosedAfter: closed after 10 ms without events: VeryShortWatchError", () =>
      Effect.gen(function*() {
        const fake = yield* FakeListerWatcher.make({ initial: [pod("a")] })
        const { log, lw } = timed(fake)
        const { store } = yield* recordingStore()
        const errors = errorLog()
        yield* Reflector.make(lw, store, { watchList: false, onError: errors.onError })
        yield* advance("10 millis")
        yield* fake.closeWatches
        yield* settle
        assert.deepStrictEqual(errors.summary(), ["watch:VeryShortWatchError"])
        yield* advance("1600 millis")
        assert.deepStrictEqual(kinds(log.map((t) => t.request)), ["List", "Watch", "List", "Watch"])
        inRange(log[2].at - 10, 800, 1600, "relist")
      }))

    it.scoped("a watch closed after 1 s without events, or at once after an event, is re-opened at once (no relist)", () =>
      Effect.gen(function*() {
        const fake = yield* FakeListerWatcher.make({ initial: [pod("a")] })
        const { store } = yield* recordingStore()
        const errors = errorLog()
        yield* Reflector.make(fake, store, { watchList: false, onError: errors.onError })
        yield* advance("1 second")
        yield* fake.closeWatches
        yield* settle
        yield* fake.add(pod("b"))
        yield* fake.closeWatches
        yield* settle
        assert.deepStrictEqual(kinds(yield* fake.requests), ["List", "Watch", "Watch", "Watch"])
        assert.deepStrictEqual(watchesOf(yield* fake.requests).map((w) => w.resourceVersion), ["1", "1", "2"])
        assert.deepStrictEqual(errors.summary(), [])
      }))

    it.effect("TestReflectorStopWatch / TestReflectorHandleWatchStopped*: stop while a store write blocks: prompt, watch closed", () =>
      Effect.gen(function*() {
        const fake = yield* FakeListerWatcher.make({ initial: [pod("a")] })
        const inner = yield* recordingStore()
        let interrupted = false
        const store: Reflector.Store<KubeObject, unknown> = {
          ...inner.store,
          add: () =>
            Effect.never.pipe(Effect.onInterrupt(() =>
              Effect.sync(() => {
                interrupted = true
              })
            ))
        }
        const { scope } = yield* startInScope(fake, store, { watchList: false })
        yield* settle
        yield* fake.add(pod("b"))
        yield* settle
        assert.strictEqual(yield* fake.openWatches, 1)
        yield* closeWithoutTime(scope)
        assert.isTrue(interrupted)
        assert.strictEqual(yield* fake.openWatches, 0)
      }))

    it.scoped("TestReflectorWatchHandler: Deleted, Modified and Added events update the store and the version", () =>
      Effect.gen(function*() {
        // client-go's first event is an object of the wrong type, dropped by the reflector; here the HTTP layer
        // decodes (and rejects) objects, so a ListerWatcher only ever yields the expected type.
        const { lw } = scripted({
          list: {
            items: [pod("foo", { rv: "10" }), pod("bar", { rv: "11" })],
            resourceVersion: "11",
            continue: undefined
          },
          watches: [
            Stream.concat(
              Stream.make(
                deleted(pod("foo", { rv: "12" })),
                modified(pod("bar", { rv: "55" })),
                added(pod("baz", { rv: "32" }))
              ),
              Stream.never
            )
          ]
        })
        const { indexer, names, store } = yield* recordingStore()
        const reflector = yield* Reflector.make(lw, store, { watchList: false })
        yield* settle
        assert.deepStrictEqual(yield* names, ["bar", "baz"])
        assert.strictEqual(rvOf(Option.getOrThrow(yield* indexer.getByKey("ns/bar"))), "55")
        assert.strictEqual(rvOf(Option.getOrThrow(yield* indexer.getByKey("ns/baz"))), "32")
        assert.strictEqual(yield* reflector.lastSyncResourceVersion, "32")
      }))

    const popAll = (fifo: DeltaFifo.DeltaFifo.Service<KubeObject>) =>
      Effect.gen(function*() {
        const popped: Array<ReadonlyArray<DeltaFifo.Delta<KubeObject>>> = []
        while ((yield* fifo.length) > 0) popped.push(yield* fifo.pop((p) => Effect.succeed(p.deltas)))
        return popped
      })

    /** key@rv of the newest object of each popped item. */
    const newest = (popped: ReadonlyArray<ReadonlyArray<DeltaFifo.Delta<KubeObject>>>) =>
      popped.map((deltas) => {
        const last = deltas[deltas.length - 1]
        return DeltaFifo.isKeyedDelta(last)
          ? `${nameOf(last.object as KubeObject)}@${rvOf(last.object as KubeObject)}`
          : last._tag
      })

    for (const watchList of [true, false]) {
      it.scoped(`TestReflectorListAndWatch (watch-list ${watchList ? "on" : "off"})`, () =>
        Effect.gen(function*() {
          const fake = yield* FakeListerWatcher.make({ initial: [pod("foo")] })
          const fifo = yield* DeltaFifo.make({ mode: "coalescing" })
          const reflector = yield* Reflector.make(fake, fifo, watchList ? {} : { watchList, initialList: "any" })
          yield* settle
          const requests = yield* fake.requests
          if (watchList) {
            assert.strictEqual(requests.length, 1)
            const { timeoutSeconds: _, ...options } = watchesOf(requests)[0]
            assert.deepStrictEqual(options, {
              resourceVersion: "",
              resourceVersionMatch: "NotOlderThan",
              sendInitialEvents: true,
              allowWatchBookmarks: true
            })
          } else {
            assert.deepStrictEqual(listsOf(requests), [{ resourceVersion: "0", limit: 500 }])
            const { timeoutSeconds: _, ...options } = watchesOf(requests)[0]
            assert.deepStrictEqual(options, { resourceVersion: "1", allowWatchBookmarks: true })
          }
          yield* fake.modify(pod("foo"))
          for (const name of ["bar", "baz", "qux", "zoo"]) yield* fake.add(pod(name))
          yield* settle
          assert.deepStrictEqual(newest(yield* popAll(fifo)), ["foo@2", "bar@3", "baz@4", "qux@5", "zoo@6"])
          assert.strictEqual(yield* reflector.lastSyncResourceVersion, "6")
          assert.strictEqual((yield* fake.requests).length, watchList ? 1 : 2)
        }))
    }

    it.scoped("TestReflectorListAndWatchWithErrors: list and events compose; a failed list leaves the store; a refused watch relists", () =>
      Effect.gen(function*() {
        const fake = yield* FakeListerWatcher.make({ initial: [pod("foo")] })
        const { names, store } = yield* recordingStore()
        const errors = errorLog()
        yield* Reflector.make(fake, store, { watchList: false, onError: errors.onError })
        yield* settle
        yield* fake.add(pod("bar"))
        yield* settle
        assert.deepStrictEqual(yield* names, ["bar", "foo"])
        // The server changes while the next list fails: the store keeps what it had.
        yield* fake.deleteDropWatch(pod("foo"))
        yield* fake.addDropWatch(pod("baz"))
        yield* fake.failNextList(serverError(503, "ServiceUnavailable"))
        yield* fake.failNextWatch(new ListerWatcher.Forbidden({ message: "forbidden" }))
        yield* fake.failWatches(serverError())
        yield* advance("1600 millis")
        assert.deepStrictEqual(errors.summary(), ["watch:ServerError", "list:ServerError"])
        assert.deepStrictEqual(yield* names, ["bar", "foo"])
        // The next list applies, then the watch is refused: reported after the list was applied.
        yield* advance("3200 millis")
        assert.deepStrictEqual(errors.summary(), ["watch:ServerError", "list:ServerError", "watch:Forbidden"])
        assert.deepStrictEqual(yield* names, ["bar", "baz"])
        yield* advance("6400 millis")
        assert.deepStrictEqual(kinds(yield* fake.requests), ["List", "Watch", "List", "List", "Watch", "List", "Watch"])
        yield* fake.add(pod("qux"))
        yield* settle
        assert.deepStrictEqual(yield* names, ["bar", "baz", "qux"])
      }))

    it.scoped("TestReflectorListAndWatchInitConnBackoff: watches refused at connect back off without relisting", () =>
      Effect.gen(function*() {
        const backoff = Schedule.exponential("1 millis", 2).pipe(
          Schedule.union(Schedule.spaced("50 millis")),
          Schedule.jitteredWith({ min: 1, max: 2 }),
          Reflector.resetAfterIdle("100 millis")
        )
        for (const [failures, min, max] of [[5, 31, 62], [40, 1763, 3526]] as const) {
          const fake = yield* FakeListerWatcher.make({ initial: [pod("a")] })
          yield* fake.failNextWatch(transport(), failures)
          const { log, lw } = timed(fake)
          const { store } = yield* recordingStore()
          const errors = errorLog()
          const scope = yield* Scope.make()
          const start = yield* now
          yield* Scope.extend(Reflector.make(lw, store, { watchList: false, backoff, onError: errors.onError }), scope)
          yield* advance(min - 1)
          assert.isTrue(log.length < failures + 2, `${failures} failures: done before ${min} ms`)
          yield* advance(max - min + 1)
          const watches = log.filter((t) => t.request._tag === "Watch")
          assert.strictEqual(watches.length, failures + 1)
          inRange(watches[failures].at - start, min, max, `${failures} failures`)
          assert.strictEqual(log.filter((t) => t.request._tag === "List").length, 1)
          assert.strictEqual(errors.reported.length, failures)
          assert.isTrue(errors.reported.every((r) => r.context.phase === "watch" && r.error._tag === "Transport"))
          assert.strictEqual(yield* fake.openWatches, 1)
          yield* Scope.close(scope, Exit.void)
        }
      }))

    it.scoped("TestNewReflectorWithCustomBackoff: 10 ms doubling, capped at 100 ms, no jitter: 5 refusals take 250 ms", () =>
      Effect.gen(function*() {
        const fake = yield* FakeListerWatcher.make({ initial: [pod("a")] })
        yield* fake.failNextWatch(transport(), 5)
        const { log, lw } = timed(fake)
        const { store } = yield* recordingStore()
        const backoff = Schedule.exponential("10 millis", 2).pipe(Schedule.union(Schedule.spaced("100 millis")))
        yield* Reflector.make(lw, store, { watchList: false, backoff })
        yield* advance("249 millis")
        assert.strictEqual(log.filter((t) => t.request._tag === "Watch").length, 5)
        yield* advance("1 millis")
        assert.deepStrictEqual(log.filter((t) => t.request._tag === "Watch").map((t) => t.at), [
          0,
          10,
          30,
          70,
          150,
          250
        ])
      }))

    it.scoped("TestNewReflectorWithCustomBackoff: the default backoff with 2 refusals finishes within 10 s", () =>
      Effect.gen(function*() {
        const fake = yield* FakeListerWatcher.make({ initial: [pod("a")] })
        yield* fake.failNextWatch(transport(), 2)
        const { log, lw } = timed(fake)
        const { store } = yield* recordingStore()
        yield* Reflector.make(lw, store, { watchList: false })
        yield* advance("10 seconds")
        const watches = log.filter((t) => t.request._tag === "Watch")
        assert.strictEqual(watches.length, 3)
        inRange(watches[2].at, 2400, 4800, "third watch")
      }))

    it.scoped("TestBackoffOnTooManyRequests: a 429 at watch start and one on the stream: exactly 2 backoff steps, no relist", () =>
      Effect.gen(function*() {
        const fake = yield* FakeListerWatcher.make({ initial: [pod("a")] })
        yield* fake.failNextWatch(tooManyRequests())
        let steps = 0
        const backoff = Reflector.defaultBackoff.pipe(Schedule.tapInput(() =>
          Effect.sync(() => {
            steps++
          })
        ))
        const { store } = yield* recordingStore()
        const errors = errorLog()
        yield* Reflector.make(fake, store, { watchList: false, backoff, onError: errors.onError })
        yield* advance("2 seconds")
        assert.strictEqual(steps, 1)
        yield* fake.failWatches(tooManyRequests())
        yield* advance("4 seconds")
        assert.strictEqual(steps, 2)
        assert.deepStrictEqual(kinds(yield* fake.requests), ["List", "Watch", "Watch", "Watch"])
        assert.deepStrictEqual(errors.summary(), ["watch:TooManyRequests", "watch:TooManyRequests"])
        assert.strictEqual(yield* fake.openWatches, 1)
      }))

    it.scoped("TestNoRelistOnTooManyRequests: 4 × 429 at watch start: 1 List, 5 Watch", () =>
      Effect.gen(function*() {
        const fake = yield* FakeListerWatcher.make({ initial: [pod("a")] })
        yield* fake.failNextWatch(tooManyRequests(), 4)
        const { store } = yield* recordingStore()
        yield* Reflector.make(fake, store, { watchList: false })
        yield* advance("30 seconds")
        assert.deepStrictEqual(kinds(yield* fake.requests), ["List", "Watch", "Watch", "Watch", "Watch", "Watch"])
        assert.strictEqual(yield* fake.openWatches, 1)
      }))

    it.scoped("TestRetryInternalError (no retry window): a 500 on the watch backs off and relists", () =>
      Effect.gen(function*() {
        const fake = yield* FakeListerWatcher.make({ initial: [pod("a")] })
        const { log, lw } = timed(fake)
        const { store } = yield* recordingStore()
        yield* Reflector.make(lw, store, { watchList: false })
        yield* settle
        yield* fake.failWatches(serverError())
        yield* advance("1600 millis")
        assert.deepStrictEqual(kinds(log.map((t) => t.request)), ["List", "Watch", "List", "Watch"])
        inRange(log[2].at, 800, 1600, "relist")
      }))

    it.scoped("TestReflectorResync: a resync failing on its 2nd call ends the session (phase resync) and relists", () =>
      Effect.gen(function*() {
        const fake = yield* FakeListerWatcher.make({ initial: [pod("a")] })
        const { calls, store } = yield* recordingStore({ refuseResync: (call) => call === 2 })
        const errors = errorLog()
        yield* Reflector.make(fake, store, { watchList: false, resyncPeriod: "1 second", onError: errors.onError })
        yield* advance("2 seconds")
        assert.strictEqual(calls.resync, 2)
        assert.deepStrictEqual(errors.summary(), ["resync:StoreError"])
        assert.strictEqual((errors.reported[0].error as Reflector.StoreError).operation, "resync")
        assert.strictEqual(yield* fake.openWatches, 0)
        assert.deepStrictEqual(kinds(yield* fake.requests), ["List", "Watch"])
        yield* advance("1600 millis")
        assert.deepStrictEqual(kinds(yield* fake.requests), ["List", "Watch", "List", "Watch"])
        assert.strictEqual(calls.resync, 2)
      }))

    it.scoped("TestReflectorResyncWithResourceVersion: list versions \"0\" then the last synced \"10\"", () =>
      Effect.gen(function*() {
        const fake = yield* FakeListerWatcher.make({ initial: podsNamed("p", 10) })
        const { store } = yield* recordingStore()
        yield* Reflector.make(fake, store, { watchList: false, initialList: "any" })
        yield* settle
        yield* fake.failWatches(serverError())
        yield* advance("2 seconds")
        assert.deepStrictEqual(listsOf(yield* fake.requests).map((o) => o.resourceVersion), ["0", "10"])
      }))

    it.scoped("TestReflectorResourceVersionUpdate: Added, Modified, Bookmark and Deleted each advance the version", () =>
      Effect.gen(function*() {
        const fake = yield* FakeListerWatcher.make({ initial: podsNamed("p", 10) })
        const { calls, store } = yield* recordingStore()
        const reflector = yield* Reflector.make(fake, store, { watchList: false })
        yield* settle
        const versions = [yield* reflector.lastSyncResourceVersion]
        yield* fake.add(pod("new"))
        yield* settle
        versions.push(yield* reflector.lastSyncResourceVersion)
        yield* fake.modify(pod("new", { labels: { a: "b" } }))
        yield* settle
        versions.push(yield* reflector.lastSyncResourceVersion)
        yield* fake.addDropWatch(pod("unseen"))
        yield* fake.bookmark
        yield* settle
        versions.push(yield* reflector.lastSyncResourceVersion)
        yield* fake.delete(pod("new"))
        yield* settle
        versions.push(yield* reflector.lastSyncResourceVersion)
        assert.deepStrictEqual(versions, ["10", "11", "12", "13", "14"])
        assert.deepStrictEqual(calls.replace.map((r) => r.resourceVersion), ["10"])
        assert.deepStrictEqual(calls.bookmark, ["13"])
      }))

    it.scoped("TestReflectorReplacesStoreOnUnsafeDelete: an object from a watch that then fails is gone after the relist", () =>
      Effect.gen(function*() {
        const fake = yield* FakeListerWatcher.make({ initial: podsNamed("p", 5) })
        let watches = 0
        const lw: LW = {
          ...fake,
          watch: (options) =>
            watches++ === 0
              ? Stream.concat(Stream.make(added(pod("corrupt"))), Stream.fail(serverError()))
              : fake.watch(options)
        }
        const { names, store } = yield* recordingStore()
        const errors = errorLog()
        const reflector = yield* Reflector.make(lw, store, { watchList: false, onError: errors.onError })
        yield* settle
        assert.isTrue((yield* names).includes("corrupt"))
        // the corrupt object has no resourceVersion: applied, reported, and never the watch position
        assert.deepStrictEqual(errors.summary(), ["event:Decode", "watch:ServerError"])
        yield* advance("1600 millis")
        assert.deepStrictEqual(yield* names, ["p001", "p002", "p003", "p004", "p005"])
        assert.deepStrictEqual(listsOf(yield* fake.requests).map((o) => o.resourceVersion), ["", "5"])
        assert.strictEqual(yield* reflector.lastSyncResourceVersion, "5")
      }))

    for (const mode of ["inOrder", "coalescing"] as const) {
      it.scoped(`TestReflectorRespectStoreTransformer (${mode}): watch-list objects transformed once each`, () =>
        Effect.gen(function*() {
          const fake = yield* FakeListerWatcher.make({ initial: [pod("a"), pod("b")] })
          let transforms = 0
          const fifo = yield* DeltaFifo.make<KubeObject>({
            mode,
            transform: (obj) => {
              transforms++
              return { ...obj, metadata: { ...obj.metadata, annotations: { transformed: "true" } } }
            }
          })
          yield* Reflector.make(fake, fifo, {})
          yield* settle
          yield* fake.add(pod("c"))
          yield* settle
          // client-go calls the transformer 5 times (2 into the temporary store, 2 on Replace, 1 on Add): the
          // temporary store here is a plain map, so each object is transformed once, by the queue.
          assert.strictEqual(transforms, 3)
          const objects: Array<KubeObject> = []
          for (const deltas of yield* popAll(fifo)) {
            for (const delta of deltas) {
              if (delta._tag === "ReplacedAll") objects.push(...delta.objects)
              else if (DeltaFifo.isKeyedDelta(delta)) objects.push(delta.object as KubeObject)
            }
          }
          assert.deepStrictEqual(objects.map(nameOf), ["a", "b", "c"])
          assert.isTrue(objects.every((o) => o.metadata?.annotations?.transformed === "true"))
          assert.strictEqual((yield* fake.requests).length, 1)
        }))
    }

    it.scoped("TestNewReflectorWithDisablementWatchList: a ListerWatcher reporting no watch-list support is listed", () =>
      Effect.gen(function*() {
        const fake = yield* FakeListerWatcher.make({ initial: [pod("a")], supportsWatchList: false })
        const { store } = yield* recordingStore()
        yield* Reflector.make(fake, store, {})
        yield* settle
        assert.deepStrictEqual(kinds(yield* fake.requests), ["List", "Watch"])
        const supported = yield* FakeListerWatcher.make({ initial: [pod("a")], supportsWatchList: true })
        yield* Reflector.make(supported, (yield* recordingStore()).store, {})
        yield* settle
        assert.deepStrictEqual(kinds(yield* supported.requests), ["WatchList"])
      }))
  })

  describe("client-go reflector_watchlist_test", () => {
    it.scoped("TestWatchListResourceVersion: the version is \"\" until the end bookmark, then its version", () =>
      Effect.gen(function*() {
        const queue = yield* Queue.unbounded<Event>()
        const { lw } = scripted({ watches: [Stream.fromQueue(queue)] })
        const { store } = yield* recordingStore()
        const reflector = yield* Reflector.make(lw, store, {})
        yield* settle
        assert.strictEqual(yield* reflector.lastSyncResourceVersion, "")
        yield* Queue.offer(queue, added(pod("p1", { rv: "1" })))
        yield* settle
        assert.strictEqual(yield* reflector.lastSyncResourceVersion, "")
        yield* Queue.offer(queue, bookmarkEvent("2", "true"))
        yield* settle
        assert.strictEqual(yield* reflector.lastSyncResourceVersion, "2")
      }))

    it.effect("TestWatchList case 1: stopped before the bookmark: no replace, one request", () =>
      Effect.gen(function*() {
        const { lw, requests, state } = scripted({
          watches: [Stream.concat(Stream.make(added(pod("p1", { rv: "1" }))), Stream.never)]
        })
        const { calls, names, store } = yield* recordingStore()
        const { scope } = yield* startInScope(lw, store, {})
        yield* settle
        yield* closeWithoutTime(scope)
        assert.strictEqual(calls.replace.length, 0)
        assert.deepStrictEqual(yield* names, [])
        assert.strictEqual(requests.length, 1)
        assert.strictEqual(state.open, 0)
      }))

    it.scoped("TestWatchList case 2: watch-list off: List {\"0\", 500} and Watch {\"1\"}", () =>
      Effect.gen(function*() {
        const fake = yield* FakeListerWatcher.make({ initial: [pod("p1")] })
        const { names, store } = yield* recordingStore()
        yield* Reflector.make(fake, store, { watchList: false, initialList: "any" })
        yield* settle
        const requests = yield* fake.requests
        assert.deepStrictEqual(listsOf(requests), [{ resourceVersion: "0", limit: 500 }])
        assert.deepStrictEqual(watchesOf(requests).map((w) => w.resourceVersion), ["1"])
        assert.deepStrictEqual(yield* names, ["p1"])
      }))

    it.scoped("TestWatchList case 3: a watch-list request failing with an arbitrary error falls back, and is tried again next cycle", () =>
      Effect.gen(function*() {
        const fake = yield* FakeListerWatcher.make({ initial: [pod("p1"), pod("p2")] })
        yield* fake.failNextWatch(serverError())
        const { names, store } = yield* recordingStore()
        const errors = errorLog()
        yield* Reflector.make(fake, store, { onError: errors.onError })
        yield* settle
        assert.deepStrictEqual(kinds(yield* fake.requests), ["WatchList", "List", "Watch"])
        assert.deepStrictEqual(yield* names, ["p1", "p2"])
        assert.deepStrictEqual(errors.summary(), ["watch-list:ServerError"])
        yield* fake.failWatches(serverError())
        yield* advance("2 seconds")
        assert.deepStrictEqual(kinds(yield* fake.requests), ["WatchList", "List", "Watch", "WatchList"])
      }))

    it.scoped("TestWatchList case 4: an Invalid (422) answer falls back to List+Watch", () =>
      Effect.gen(function*() {
        const fake = yield* FakeListerWatcher.make({ initial: [pod("p1"), pod("p2")] })
        yield* fake.failNextWatch(serverError(422, "Invalid"))
        const { names, store } = yield* recordingStore()
        yield* Reflector.make(fake, store, {})
        yield* settle
        assert.deepStrictEqual(kinds(yield* fake.requests), ["WatchList", "List", "Watch"])
        assert.deepStrictEqual(yield* names, ["p1", "p2"])
      }))

    it.scoped("TestWatchList case 5: two Added and the bookmark: synced with one request", () =>
      Effect.gen(function*() {
        const fake = yield* FakeListerWatcher.make({ initial: [pod("p1"), pod("p2")] })
        const { names, store } = yield* recordingStore()
        yield* Reflector.make(fake, store, {})
        yield* settle
        assert.deepStrictEqual(yield* names, ["p1", "p2"])
        assert.strictEqual((yield* fake.requests).length, 1)
      }))

    it.scoped("TestWatchList case 7: two 429s: three identical watch-list requests", () =>
      Effect.gen(function*() {
        const fake = yield* FakeListerWatcher.make({ initial: [pod("p1")] })
        yield* fake.failNextWatch(tooManyRequests(), 2)
        const { names, store } = yield* recordingStore()
        const errors = errorLog()
        yield* Reflector.make(fake, store, { onError: errors.onError })
        yield* advance("5 seconds")
        const watches = watchesOf(yield* fake.requests).map(({ timeoutSeconds: _, ...options }) => options)
        assert.strictEqual(watches.length, 3)
        assert.deepStrictEqual(watches[1], watches[0])
        assert.deepStrictEqual(watches[2], watches[0])
        assert.deepStrictEqual(kinds(yield* fake.requests), ["WatchList", "WatchList", "WatchList"])
        assert.deepStrictEqual(yield* names, ["p1"])
        assert.deepStrictEqual(errors.summary(), ["watch-list:TooManyRequests", "watch-list:TooManyRequests"])
      }))

    it.scoped("TestWatchList case 9: the stream ending after the bookmark: a plain watch from the last event's version", () =>
      Effect.gen(function*() {
        const fake = yield* FakeListerWatcher.make({ initial: [pod("p1"), pod("p2")] })
        const { names, store } = yield* recordingStore()
        const errors = errorLog()
        yield* Reflector.make(fake, store, { onError: errors.onError })
        yield* settle
        yield* fake.add(pod("p3"))
        yield* settle
        yield* fake.closeWatches
        yield* settle
        yield* fake.add(pod("p4"))
        yield* settle
        const requests = yield* fake.requests
        assert.deepStrictEqual(kinds(requests), ["WatchList", "Watch"])
        const { timeoutSeconds: _, ...options } = watchesOf(requests)[1]
        assert.deepStrictEqual(options, { resourceVersion: "3", allowWatchBookmarks: true })
        assert.deepStrictEqual(yield* names, ["p1", "p2", "p3", "p4"])
        assert.deepStrictEqual(errors.summary(), [])
      }))

    it.scoped("TestWatchList case 10: Gone on the re-watch after sync: a consistent watch-list at once", () =>
      Effect.gen(function*() {
        const fake = yield* FakeListerWatcher.make({ initial: [pod("p1"), pod("p2")] })
        const { names, store } = yield* recordingStore()
        const errors = errorLog()
        yield* Reflector.make(fake, store, { onError: errors.onError })
        yield* settle
        yield* fake.deleteDropWatch(pod("p2"))
        yield* fake.addDropWatch(pod("p3"))
        yield* fake.failNextWatch(gone())
        yield* fake.closeWatches
        yield* settle
        assert.deepStrictEqual(kinds(yield* fake.requests), ["WatchList", "Watch", "WatchList"])
        assert.strictEqual(watchesOf(yield* fake.requests)[2].resourceVersion, "")
        assert.deepStrictEqual(errors.summary(), ["watch:Gone"])
        assert.deepStrictEqual(yield* names, ["p1", "p3"])
        assert.strictEqual(yield* now, 0)
      }))
  })

  // -------------------------------------------------------------------------------------------------
  // C. error reporting
  // -------------------------------------------------------------------------------------------------

  describe("error reporting", () => {
    it.scoped("every error reaches onError exactly once with its phase, and the loop keeps running", () =>
      Effect.gen(function*() {
        const fake = yield* FakeListerWatcher.make({ initial: [pod("a")], watchList: "reject" })
        let resyncing = false
        const { calls, names, store } = yield* recordingStore({
          refuseAdd: (obj) => nameOf(obj) === "poison",
          refuseResync: () => true
        })
        const errors = errorLog()
        const reflector = yield* Reflector.make(fake, store, {
          onError: errors.onError,
          resyncPeriod: "1 minute",
          shouldResync: Effect.sync(() => resyncing)
        })
        yield* settle
        assert.deepStrictEqual(errors.summary(), ["watch-list:ServerError"])
        // watch, then list
        yield* fake.failNextList(serverError(503, "ServiceUnavailable"))
        yield* fake.failWatches(serverError())
        yield* advance("5 seconds")
        assert.deepStrictEqual(errors.summary(), ["watch-list:ServerError", "watch:ServerError", "list:ServerError"])
        assert.deepStrictEqual(yield* names, ["a"])
        // event
        yield* fake.add(pod("poison"))
        yield* fake.add(pod("b"))
        yield* settle
        assert.deepStrictEqual(errors.summary().slice(3), ["event:StoreError"])
        assert.strictEqual((errors.reported[3].error as Reflector.StoreError).operation, "add")
        assert.deepStrictEqual(yield* names, ["a", "b"])
        // resync
        resyncing = true
        yield* advance("1 minute")
        assert.deepStrictEqual(errors.summary().slice(4), ["resync:StoreError"])
        assert.strictEqual(calls.resync, 1)
        resyncing = false
        yield* advance("10 seconds")
        // The relist brought the poison object in through replace.
        assert.deepStrictEqual(yield* names, ["a", "b", "poison"])
        yield* fake.add(pod("final"))
        yield* settle
        assert.deepStrictEqual(yield* names, ["a", "b", "final", "poison"])
        assert.deepStrictEqual(errors.summary(), [
          "watch-list:ServerError",
          "watch:ServerError",
          "list:ServerError",
          "event:StoreError",
          "resync:StoreError",
          // the relist after the resync failure came more than a minute after the 422: watch-list is asked again
          "watch-list:ServerError"
        ])
        assert.strictEqual(yield* reflector.lastSyncResourceVersion, yield* fake.resourceVersion)
      }))

    it.scoped("every error is logged once (Gone at info, others as warnings) and counted by phase and reason", () => {
      const lines: Array<string> = []
      const logger = Logger.make(({ logLevel, message }) => {
        const text = Array.isArray(message) ? message.join(" ") : String(message)
        if (text.includes("failed") || text.includes("too old")) lines.push(`${logLevel.label} ${text}`)
      })
      const name = "pods-error-accounting"
      const errorsOf = (phase: string, reason: string) =>
        Metric.value(
          Metric.tagged(
            Metric.tagged(Metric.tagged(Metrics.errors, "informer", name), "phase", phase),
            "reason",
            reason
          )
        ).pipe(Effect.map((state) => state.count))
      return Effect.gen(function*() {
        const fake = yield* FakeListerWatcher.make({ initial: [pod("a")], watchList: "reject" })
        const store = yield* DeltaFifo.make<KubeObject>()
        yield* Reflector.make(fake, store, { name })
        yield* settle
        yield* fake.failWatches(serverError())
        yield* advance("5 seconds")
        yield* fake.failWatches(gone())
        yield* advance("5 seconds")
        assert.deepStrictEqual(lines, [
          `WARN ${name}: watch-list failed: ServerError: sendInitialEvents is forbidden for watch`,
          `WARN ${name}: watch failed: ServerError: server error 500`,
          `INFO ${name}: watch: too old resource version`
        ])
        assert.strictEqual(yield* errorsOf("watch-list", "ServerError"), 1)
        assert.strictEqual(yield* errorsOf("watch", "ServerError"), 1)
        assert.strictEqual(yield* errorsOf("watch", "Gone"), 1)
      }).pipe(Effect.provide(Logger.replace(Logger.defaultLogger, logger)))
    })

    it.scoped("a DeltaFifo transform throwing for one object: StoreError (phase event), the next events still apply", () =>
      Effect.gen(function*() {
        const fake = yield* FakeListerWatcher.make({ initial: [pod("a")] })
        const fifo = yield* DeltaFifo.make<KubeObject>({
          transform: (obj) => {
            if (nameOf(obj) === "bad") throw new Error("cannot transform")
            return obj
          }
        })
        const errors = errorLog()
        const reflector = yield* Reflector.make(fake, fifo, { onError: errors.onError })
        yield* settle
        yield* fake.add(pod("bad"))
        yield* fake.add(pod("good"))
        yield* fake.modify(pod("a"))
        yield* settle
        assert.deepStrictEqual(errors.summary(), ["event:StoreError"])
        const error = errors.reported[0].error as Reflector.StoreError
        assert.strictEqual(error.operation, "add")
        assert.strictEqual((error.cause as DeltaFifo.TransformError)._tag, "TransformError")
        assert.strictEqual(errors.reported[0].context.resourceVersion, "2")
        assert.deepStrictEqual(yield* fifo.listKeys, ["ns/good", "ns/a"])
        assert.strictEqual(yield* reflector.lastSyncResourceVersion, "4")
      }))

    it.scoped("Gone on the first page of a relist is reported once (phase list) before the consistent retry", () =>
      Effect.gen(function*() {
        const fake = yield* FakeListerWatcher.make({ initial: [pod("a")] })
        const { names, store } = yield* recordingStore()
        const errors = errorLog()
        yield* Reflector.make(fake, store, { watchList: false, onError: errors.onError })
        yield* settle
        yield* fake.failNextList(gone(), 2)
        yield* fake.failWatches(serverError())
        yield* advance("1600 millis")
        // "1" gets Gone (reported, retried at once with ""), "" gets Gone again (reported, backs off).
        assert.deepStrictEqual(listsOf(yield* fake.requests).map((o) => o.resourceVersion), ["", "1", ""])
        assert.deepStrictEqual(errors.summary(), ["watch:ServerError", "list:Gone", "list:Gone"])
        yield* advance("3200 millis")
        assert.deepStrictEqual(listsOf(yield* fake.requests).map((o) => o.resourceVersion), ["", "1", "", ""])
        assert.strictEqual(errors.reported.length, 3)
        yield* fake.add(pod("b"))
        yield* settle
        assert.deepStrictEqual(yield* names, ["a", "b"])
      }))

    it.scoped("store update, delete and bookmark failures: one StoreError each (phase event), the version still advances", () =>
      Effect.gen(function*() {
        const fake = yield* FakeListerWatcher.make({ initial: [pod("a"), pod("b")] })
        const inner = yield* recordingStore()
        const store: Reflector.Store<KubeObject, unknown> = {
          ...inner.store,
          update: () => Effect.fail("update refused"),
          delete: () => Effect.fail("delete refused"),
          bookmark: () => Effect.fail("bookmark refused")
        }
        const errors = errorLog()
        const reflector = yield* Reflector.make(fake, store, { watchList: false, onError: errors.onError })
        yield* settle
        yield* fake.modify(pod("a"))
        yield* fake.delete(pod("b"))
        yield* fake.bookmark
        yield* fake.add(pod("c"))
        yield* settle
        assert.deepStrictEqual(errors.summary(), ["event:StoreError", "event:StoreError", "event:StoreError"])
        assert.deepStrictEqual(errors.reported.map((r) => (r.error as Reflector.StoreError).operation), [
          "update",
          "delete",
          "bookmark"
        ])
        assert.deepStrictEqual(errors.reported.map((r) => r.context.resourceVersion), ["3", "4", "4"])
        assert.deepStrictEqual(yield* inner.names, ["a", "b", "c"])
        assert.strictEqual(yield* reflector.lastSyncResourceVersion, "5")
        assert.deepStrictEqual(kinds(yield* fake.requests), ["List", "Watch"])
      }))

    it.scoped("the context carries the reflector's name and the resourceVersion at the time", () =>
      Effect.gen(function*() {
        const fake = yield* FakeListerWatcher.make({ initial: [pod("a"), pod("b")] })
        const { store } = yield* recordingStore()
        const errors = errorLog()
        yield* Reflector.make(fake, store, { name: "pods", watchList: false, onError: errors.onError })
        yield* settle
        yield* fake.failWatches(serverError())
        yield* settle
        assert.deepStrictEqual(errors.reported[0].context, { phase: "watch", resourceVersion: "2", reflector: "pods" })
      }))

    it.scoped("a failing onError handler does not stop the loop", () =>
      Effect.gen(function*() {
        const fake = yield* FakeListerWatcher.make({ initial: [pod("a")] })
        const { names, store } = yield* recordingStore()
        let calls = 0
        yield* Reflector.make(fake, store, {
          watchList: false,
          onError: () =>
            Effect.suspend(() => {
              calls++
              return Effect.die("handler bug")
            })
        })
        yield* settle
        yield* fake.failWatches(serverError())
        yield* advance("2 seconds")
        yield* fake.add(pod("b"))
        yield* settle
        assert.strictEqual(calls, 1)
        assert.deepStrictEqual(yield* names, ["a", "b"])
      }))
  })

  describe("hostile servers", () => {
    it.scoped("a BOOKMARK with an empty resourceVersion is not adopted: the re-watch resumes from the last good one", () =>
      Effect.gen(function*() {
        const { lw, requests } = scripted({
          list: { items: [pod("a", { rv: "5" })], resourceVersion: "5", continue: undefined },
          watches: [Stream.make(modified(pod("a", { rv: "7" })), bookmarkEvent(""))]
        })
        const { store } = yield* recordingStore()
        const errors = errorLog()
        const reflector = yield* Reflector.make(lw, store, { watchList: false, onError: errors.onError })
        yield* advance("2 seconds")
        assert.strictEqual(yield* reflector.lastSyncResourceVersion, "7")
        const watches = watchesOf(requests)
        assert.deepStrictEqual(watches.map((w) => w.resourceVersion), ["5", "7"])
        assert.deepStrictEqual(errors.summary(), ["event:Decode"])
        assert.include(errors.reported[0].error.message, "has no resourceVersion")
      }))

    it.scoped("an object event with an empty resourceVersion is applied, not adopted, and reported", () =>
      Effect.gen(function*() {
        const { lw, requests } = scripted({
          list: { items: [pod("a", { rv: "5" }), pod("b", { rv: "5" })], resourceVersion: "5", continue: undefined },
          watches: [Stream.make(deleted(pod("a", { rv: "6" })), deleted(pod("b", { rv: "" })))]
        })
        // through the DeltaFifo (the chunked, synchronous path) and through an Indexer (one Effect per event)
        const fifo = yield* DeltaFifo.make()
        const { names, store } = yield* recordingStore()
        const errors = errorLog()
        const viaFifo = yield* Reflector.make(lw, fifo, { watchList: false, onError: errors.onError })
        yield* advance("2 seconds")
        assert.strictEqual(yield* viaFifo.lastSyncResourceVersion, "6")
        assert.deepStrictEqual(watchesOf(requests).map((w) => w.resourceVersion), ["5", "6"])
        assert.deepStrictEqual(errors.summary(), ["event:Decode"])
        assert.include(errors.reported[0].error.message, "a DELETED event for ns/b has no resourceVersion")

        const second = scripted({
          list: { items: [pod("a", { rv: "5" }), pod("b", { rv: "5" })], resourceVersion: "5", continue: undefined },
          watches: [Stream.make(deleted(pod("a", { rv: "6" })), deleted(pod("b")))]
        })
        const errors2 = errorLog()
        const viaStore = yield* Reflector.make(second.lw, store, { watchList: false, onError: errors2.onError })
        yield* advance("2 seconds")
        assert.deepStrictEqual(yield* names, [])
        assert.strictEqual(yield* viaStore.lastSyncResourceVersion, "6")
        assert.deepStrictEqual(watchesOf(second.requests).map((w) => w.resourceVersion), ["5", "6"])
        assert.deepStrictEqual(errors2.summary(), ["event:Decode"])
      }))

    it.scoped("a list without a resourceVersion is not used: Decode, back off, list again", () =>
      Effect.gen(function*() {
        let listed = 0
        const lw: LW = {
          list: () =>
            Effect.sync(() => {
              listed++
              return { items: [pod("a", { rv: "3" })], resourceVersion: listed === 1 ? "" : "3", continue: undefined }
            }),
          watch: () => Stream.never
        }
        const { calls, store } = yield* recordingStore()
        const errors = errorLog()
        const reflector = yield* Reflector.make(lw, store, { watchList: false, onError: errors.onError })
        yield* settle
        assert.deepStrictEqual(calls.replace, [])
        assert.deepStrictEqual(errors.summary(), ["list:Decode"])
        yield* advance("2 seconds")
        assert.deepStrictEqual(calls.replace.map((r) => r.resourceVersion), ["3"])
        assert.strictEqual(yield* reflector.lastSyncResourceVersion, "3")
      }))

    it.scoped("a watch-list whose initial-events-end bookmark has no resourceVersion falls back to LIST", () =>
      Effect.gen(function*() {
        const requests: Array<Request> = []
        const fake = yield* FakeListerWatcher.make({ initial: [pod("a")] })
        const lw: LW = {
          ...fake,
          list: (options) =>
            Effect.zipRight(Effect.sync(() => requests.push({ _tag: "List", options })), fake.list(options)),
          watch: (options) => {
            requests.push({ _tag: "Watch", options })
            return options.sendInitialEvents === true
              ? Stream.make(added(pod("a", { rv: "1" })), bookmarkEvent("", "true")).pipe(Stream.concat(Stream.never))
              : fake.watch(options)
          }
        }
        const { calls, store } = yield* recordingStore()
        const errors = errorLog()
        yield* Reflector.make(lw, store, { onError: errors.onError })
        yield* settle
        assert.deepStrictEqual(kinds(requests), ["WatchList", "List", "Watch"])
        assert.deepStrictEqual(errors.summary(), ["watch-list:Decode"])
        assert.deepStrictEqual(calls.replace.map((r) => r.resourceVersion), ["1"])
      }))

    it.scoped("a continue token the server repeats: PaginationError after a bounded number of pages, then backoff and relist", () =>
      Effect.gen(function*() {
        let lists = 0
        const lw: LW = {
          list: (options) =>
            Effect.sync(() => {
              lists++
              return {
                items: [pod(`p${lists}`, { rv: "9" })],
                resourceVersion: "9",
                // a cycle of two tokens
                continue: options.continue === "b" ? "a" : options.continue === "a" ? "b" : "a"
              }
            }),
          watch: () => Stream.never
        }
        const { calls, store } = yield* recordingStore()
        const errors = errorLog()
        yield* Reflector.make(lw, store, { watchList: false, onError: errors.onError })
        yield* settle
        assert.strictEqual(lists, 3)
        assert.deepStrictEqual(errors.summary(), ["list:PaginationError"])
        const error = errors.reported[0].error as Reflector.PaginationError
        assert.strictEqual(error.reason, "ContinueRepeated")
        assert.strictEqual(error.pages, 3)
        assert.deepStrictEqual(calls.replace, [])
        yield* advance("2 seconds")
        assert.strictEqual(lists, 6)
        assert.deepStrictEqual(errors.summary(), ["list:PaginationError", "list:PaginationError"])
      }))

    it.scoped("Retry-After: 999999 is cut to maxRetryAfter (30 s by default)", () =>
      Effect.gen(function*() {
        const fake = yield* FakeListerWatcher.make({ initial: [pod("a")] })
        const t = timed(fake)
        yield* fake.failNextList(tooManyRequests(999999))
        const { names, store } = yield* recordingStore()
        yield* Reflector.make(t.lw, store, { watchList: false })
        yield* advance("31 seconds")
        assert.deepStrictEqual(t.times("List"), [0, 30_000])
        assert.deepStrictEqual(yield* names, ["a"])
      }))

    it.scoped("maxRetryAfter raises or lowers the cap", () =>
      Effect.gen(function*() {
        const fake = yield* FakeListerWatcher.make({ initial: [pod("a")] })
        const t = timed(fake)
        yield* fake.failNextList(tooManyRequests(999999))
        const { store } = yield* recordingStore()
        yield* Reflector.make(t.lw, store, {
          watchList: false,
          maxRetryAfter: "5 minutes",
          backoff: Schedule.spaced("1 second")
        })
        yield* advance("299 seconds")
        assert.deepStrictEqual(t.times("List"), [0])
        yield* advance("2 seconds")
        assert.deepStrictEqual(t.times("List"), [0, 300_000])
        const fake2 = yield* FakeListerWatcher.make({ initial: [pod("a")] })
        const t2 = timed(fake2)
        yield* fake2.failNextList(tooManyRequests(999999))
        const start = yield* now
        yield* Reflector.make(t2.lw, store, { watchList: false, maxRetryAfter: "3 seconds" })
        yield* advance("4 seconds")
        assert.strictEqual(t2.times("List").length, 2)
        inRange(t2.times("List")[1] - start, 3000, 3001, "second list")
      }))
  })

  // -------------------------------------------------------------------------------------------------
  // D. the state machine: what a state carries from one phase to the next
  // -------------------------------------------------------------------------------------------------

  describe("state machine", () => {
    it.scoped("the resync timer runs through a 429's backoff between watches, stops while a relist waits, restarts after the next sync", () =>
      Effect.gen(function*() {
        const fake = yield* FakeListerWatcher.make({ initial: [pod("a")] })
        const { log, lw } = timed(fake)
        const { calls, store } = yield* recordingStore()
        yield* Reflector.make(lw, store, {
          watchList: false,
          resyncPeriod: "1 second",
          backoff: Schedule.spaced("3 seconds")
        })
        yield* settle
        yield* advance("500 millis")
        // a 429 on the watch: re-watch after its Retry-After (5 s), in the same cycle
        yield* fake.failWatches(tooManyRequests(5))
        yield* advance("5 seconds")
        assert.deepStrictEqual(kinds(log.map((t) => t.request)), ["List", "Watch", "Watch"])
        assert.strictEqual(log[2].at, 5500)
        assert.strictEqual(calls.resync, 5)
        // a 500 on the watch ends the cycle: no resync while the relist waits for the backoff
        yield* advance("700 millis")
        assert.strictEqual(calls.resync, 6)
        yield* fake.failWatches(serverError())
        yield* advance("2999 millis")
        assert.strictEqual(calls.resync, 6)
        yield* advance("1 millis")
        assert.deepStrictEqual(kinds(log.map((t) => t.request)), ["List", "Watch", "Watch", "List", "Watch"])
        assert.strictEqual(log[3].at, 9200)
        // the next cycle synced at 9.2 s: its first resync a period later
        yield* advance("999 millis")
        assert.strictEqual(calls.resync, 6)
        yield* advance("1 millis")
        assert.strictEqual(calls.resync, 7)
      }))

    it.scoped("a resync failing after a watch-list sync closes the stream and ends the cycle; the next one syncs again", () =>
      Effect.gen(function*() {
        const fake = yield* FakeListerWatcher.make({ initial: [pod("a")] })
        const { log, lw } = timed(fake)
        const { calls, store } = yield* recordingStore({ refuseResync: (call) => call === 1 })
        const errors = errorLog()
        yield* Reflector.make(lw, store, { resyncPeriod: "1 second", onError: errors.onError })
        yield* settle
        assert.strictEqual(yield* fake.openWatches, 1)
        yield* advance("1 second")
        assert.deepStrictEqual(errors.summary(), ["resync:StoreError"])
        assert.strictEqual(yield* fake.openWatches, 0)
        yield* advance("1600 millis")
        assert.deepStrictEqual(kinds(log.map((t) => t.request)), ["WatchList", "WatchList"])
        inRange(log[1].at, 1800, 2600, "the second watch-list")
        assert.deepStrictEqual(calls.replace.map((r) => r.resourceVersion), ["1", "1"])
        yield* advance("1 second")
        assert.strictEqual(calls.resync, 2)
      }))

    it.scoped("a Gone on the LIST a watch-list fell back to lists again at once, consistently (no second watch-list)", () =>
      Effect.gen(function*() {
        const fake = yield* FakeListerWatcher.make({ initial: [pod("a")] })
        const { log, lw } = timed(fake)
        const { names, store } = yield* recordingStore()
        const errors = errorLog()
        yield* Reflector.make(lw, store, { onError: errors.onError })
        yield* settle
        yield* fake.failWatches(serverError())
        yield* fake.failNextWatch(serverError())
        yield* fake.failNextList(gone())
        yield* advance("1600 millis")
        assert.deepStrictEqual(kinds(log.map((t) => t.request)), ["WatchList", "WatchList", "List", "List", "Watch"])
        assert.deepStrictEqual(log.map((t) => t.request.options.resourceVersion), ["", "1", "1", "", "1"])
        assert.strictEqual(log[3].at, log[2].at)
        assert.deepStrictEqual(errors.summary(), ["watch:ServerError", "watch-list:ServerError", "list:Gone"])
        assert.deepStrictEqual(yield* names, ["a"])
      }))

    it.scoped("after a Gone, reads stay consistent through a failed list until one succeeds", () =>
      Effect.gen(function*() {
        const fake = yield* FakeListerWatcher.make({ initial: [pod("a")] })
        const { log, lw } = timed(fake)
        const { store } = yield* recordingStore()
        const errors = errorLog()
        yield* Reflector.make(lw, store, { watchList: false, onError: errors.onError })
        yield* settle
        yield* fake.add(pod("b"))
        yield* settle
        yield* fake.failNextList(serverError())
        yield* fake.failWatches(gone())
        yield* advance("1600 millis")
        assert.deepStrictEqual(kinds(log.map((t) => t.request)), ["List", "Watch", "List", "List", "Watch"])
        assert.deepStrictEqual(listsOf(log.map((t) => t.request)).map((o) => o.resourceVersion), ["", "", ""])
        inRange(log[3].at - log[2].at, 800, 1600, "the list after the failed one")
        assert.deepStrictEqual(errors.summary(), ["watch:Gone", "list:ServerError"])
        // once synced, a relist reads at the last version again
        yield* fake.failWatches(serverError())
        yield* advance("3200 millis")
        assert.deepStrictEqual(listsOf(log.map((t) => t.request)).map((o) => o.resourceVersion), ["", "", "", "2"])
      }))

    it.scoped("a Gone remembered through a failed list: the next Gone without a watch event still backs off", () =>
      Effect.gen(function*() {
        const fake = yield* FakeListerWatcher.make({ initial: [pod("a")] })
        const { log, lw } = timed(fake)
        const { store } = yield* recordingStore()
        yield* Reflector.make(lw, store, { watchList: false })
        yield* settle
        yield* fake.failNextList(serverError())
        yield* fake.failWatches(gone())
        yield* advance("1600 millis")
        assert.deepStrictEqual(kinds(log.map((t) => t.request)), ["List", "Watch", "List", "List", "Watch"])
        // the new watch delivered nothing: this Gone waits for the backoff
        yield* fake.failWatches(gone())
        yield* settle
        assert.strictEqual(log.length, 5)
        yield* advance("3200 millis")
        assert.deepStrictEqual(kinds(log.map((t) => t.request)).slice(5), ["List", "Watch"])
      }))
  })
})

/**
 * The Controller's workers: they take keys from the queue, reconcile them (one key at a time, read-your-own-
 * writes and sharding applied), turn each result into what the queue does with the key, and stop: at the
 * controller's end, or at the end of a leadership term, within a deadline, leaving behind what cannot be
 * interrupted. The lifecycles are states with pure transitions (`ControllerState`, `TermState`).
 *
 * @internal
 */
import * as Cause from "effect/Cause"
import type * as Clock from "effect/Clock"
import type * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import type * as Metric from "effect/Metric"
import * as Option from "effect/Option"
import * as Scope from "effect/Scope"
import * as Consistency from "../../Consistency.js"
import type * as Controller from "../../Controller.js"
import type * as Sharding from "../../Sharding.js"
import * as Term from "../../Term.js"
import type * as WorkQueue from "../../WorkQueue.js"
import { tagged } from "../metricTags.js"
import * as ControllerMetrics from "./metrics.js"
import { resumeLater } from "./workQueue.js"

// -------------------------------------------------------------------------------------------------
// results
// -------------------------------------------------------------------------------------------------

/** @internal */
export const done: Controller.Result = { _tag: "Done" }

/** @internal */
export const requeue: Controller.Result = { _tag: "Requeue" }

/**
 * The result as the queue applies it: a `RequeueAfter` without a positive delay is a `Requeue`, through the
 * rate limiter (controller-runtime reads `RequeueAfter: 0` as "no delay asked"; a plain add would re-run the
 * key in a hot loop).
 *
 * @internal
 */
export const effective = (result: Controller.Result): Controller.Result =>
  result._tag === "RequeueAfter" && !(Duration.toMillis(result.delay) > 0) ? requeue : result

/** @internal */
export const request = (key: string): Controller.Request => {
  const slash = key.indexOf("/")
  return slash === -1
    ? { key, namespace: undefined, name: key }
    : { key, namespace: key.slice(0, slash), name: key.slice(slash + 1) }
}

// -------------------------------------------------------------------------------------------------
// lifecycles
// -------------------------------------------------------------------------------------------------

/**
 * The controller's: `Running` until it ends (its scope closes), then `Stopping`: a key handed out from then
 * on is not reconciled.
 *
 * @internal
 */
export type ControllerState = { readonly _tag: "Running" } | { readonly _tag: "Stopping" }

const controllerRunning: ControllerState = { _tag: "Running" }
const controllerStopping: ControllerState = { _tag: "Stopping" }

/** @internal */
export const initialControllerState: ControllerState = controllerRunning

/**
 * The controller's state after `event`: `Stop` ends `Running` for good.
 *
 * @internal
 */
export const controllerTransition = (_state: ControllerState, _event: "Stop"): ControllerState => controllerStopping

/**
 * A term's (the workers of one start: the controller's life, or one leadership term):
 * - `Working`: keys are taken and reconciled; `inFlight` reconciles run;
 * - `Stopping`: no key is taken any more; the `inFlight` reconciles in progress may finish (within the
 *   deadline, then they are interrupted);
 * - `Stopped`: stopped, and no reconcile of the term runs any more.
 *
 * @internal
 */
export type TermState =
  | { readonly _tag: "Working"; readonly inFlight: number }
  | { readonly _tag: "Stopping"; readonly inFlight: number }
  | { readonly _tag: "Stopped" }

/**
 * `Take`: a worker starts a reconcile; `Settle`: a reconcile ended (or was interrupted); `Stop`: the term
 * ends.
 *
 * @internal
 */
export type TermEvent = "Take" | "Settle" | "Stop"

const termStopped: TermState = { _tag: "Stopped" }

/** @internal */
export const initialTermState: TermState = { _tag: "Working", inFlight: 0 }

/**
 * A term's state after `event`. A stopping or stopped term takes no key (`Take` changes nothing: the worker
 * checks the state before it takes one); it is `Stopped` once its last reconcile settles.
 *
 * @internal
 */
export const termTransition = (state: TermState, event: TermEvent): TermState => {
  switch (state._tag) {
    case "Working":
      switch (event) {
        case "Take":
          return { _tag: "Working", inFlight: state.inFlight + 1 }
        case "Settle":
          return { _tag: "Working", inFlight: state.inFlight - 1 }
        case "Stop":
          return state.inFlight === 0 ? termStopped : { _tag: "Stopping", inFlight: state.inFlight }
      }
    case "Stopping":
      switch (event) {
        case "Settle":
          return state.inFlight <= 1 ? termStopped : { _tag: "Stopping", inFlight: state.inFlight - 1 }
        case "Take":
        case "Stop":
          return state
      }
    case "Stopped":
      return state
  }
}

// -------------------------------------------------------------------------------------------------
// the workers
// -------------------------------------------------------------------------------------------------

/**
 * How long the workers' interruption may take once the deadline has passed (the reconciles' own finalizers);
 * a reconcile still running then (an uninterruptible region, a finalizer that hangs) is left behind.
 */
const interruptGrace = Duration.seconds(1)

/** What the workers need from the controller. @internal */
export interface WorkersOptions<E, R> {
  readonly name: string
  readonly queue: WorkQueue.WorkQueue<string>
  readonly clock: Clock.Clock
  /** The context the controller was made in: its metrics' registry. */
  readonly context: Context.Context<never>
  readonly reconcile: (request: Controller.Request) => Effect.Effect<Controller.Result | void, E, R>
  readonly errorPolicy: ((error: E, request: Controller.Request) => Controller.Result) | undefined
  readonly concurrency: number
  /** How long a reconcile may run before it is interrupted (a timeout); `undefined`: no bound. */
  readonly reconcileTimeout: Duration.Duration | undefined
  /** Read-your-own-writes, when on. */
  readonly tracker: Consistency.Tracker | undefined
  readonly sharding: Sharding.Sharding.Service | undefined
}

/** @internal */
export interface Workers<R> {
  /**
   * Starts the workers in `into`, with a finalizer there that stops them: keys handed out from then on go
   * back to the queue, the reconciles in progress may finish within `deadline`, the rest are interrupted.
   * A reconcile still running `interruptGrace` after its interruption (uninterruptible) is reported with
   * its key and left behind: the scope closes anyway. `closing` stops the controller and shuts the queue
   * too (the controller's end, not a leadership term's).
   */
  readonly start: (into: Scope.Scope, deadline: Duration.Duration, closing: boolean) => Effect.Effect<void, never, R>
  /** The controller's end, when it is not a term's (leader election): no key handed out is reconciled. */
  readonly stop: Effect.Effect<void>
  /** Reconciles in progress. */
  readonly active: Effect.Effect<number>
}

/**
 * The workers of a controller, their metrics tagged once (`metricTags.tagged`: an update is then a registry cache
 * hit) and every series at 0 from now on (as controller-runtime initialises them: a scrape before the
 * first reconcile shows the controller, and rates over a fresh counter start from 0).
 *
 * @internal
 */
export const make = <E, R>(options: WorkersOptions<E, R>): Workers<R> => {
  const { clock, concurrency, context, name, queue, sharding, tracker } = options
  const policy = options.errorPolicy

  // ---- metrics ---------------------------------------------------------------------------------------
  const ofController = <T extends Metric.Metric<any, any>>(metric: T, result?: string): T =>
    tagged(metric, result === undefined ? { controller: name } : { controller: name, result })
  const results = {
    success: ofController(ControllerMetrics.reconciles, "success"),
    error: ofController(ControllerMetrics.reconciles, "error"),
    requeue: ofController(ControllerMetrics.reconciles, "requeue"),
    requeueAfter: ofController(ControllerMetrics.reconciles, "requeue_after")
  }
  const errors = ofController(ControllerMetrics.reconcileErrors)
  const panics = ofController(ControllerMetrics.reconcilePanics)
  const terminal = ofController(ControllerMetrics.terminalReconcileErrors)
  const duration = ofController(ControllerMetrics.reconcileDuration)
  const activeGauge = ofController(ControllerMetrics.activeReconciles)
  const stale = ofController(ControllerMetrics.staleSkips)
  const abandoned = ofController(ControllerMetrics.abandonedReconciles)
  const timeouts = ofController(ControllerMetrics.reconcileTimeouts)
  for (const counter of [...Object.values(results), errors, panics, terminal, stale, abandoned, timeouts]) {
    counter.updateUnsafe(0, context)
  }
  activeGauge.updateUnsafe(0, context)
  ofController(ControllerMetrics.maxConcurrentReconciles).updateUnsafe(concurrency, context)

  let state: ControllerState = initialControllerState
  let active = 0

  // ---- requeue ---------------------------------------------------------------------------------------

  /** What a result does to the key in the queue. */
  const requeueBy = (key: string, priority: number, result: Controller.Result): Effect.Effect<void> => {
    // `result` is `effective`: a `RequeueAfter` here has a positive delay
    switch (result._tag) {
      case "Done":
        return queue.forget(key)
      case "Requeue":
        return queue.addRateLimited(key, { priority })
      case "RequeueAfter":
        return Effect.andThen(queue.forget(key), queue.add(key, { after: result.delay, priority }))
    }
  }
  const counted = {
    Done: results.success,
    Requeue: results.requeue,
    RequeueAfter: results.requeueAfter
  } as const

  // ---- finish ----------------------------------------------------------------------------------------

  // The hot path of every key: plain closures and metrics updated in place (`updateUnsafe`), one span
  // without a stack trace; the queue's `runWorker` owns get/done. (An Effect.gen per key and a span with
  // its stack trace cost more than the queue and the reconcile together: bench/controllerMicro.ts.)
  const spanOptions = { attributes: { controller: name }, captureStackTrace: false } as const

  /** The end of one reconcile: its result counted and applied, or its failure logged and requeued. */
  const finish = (
    key: string,
    priority: number,
    req: Controller.Request,
    exit: Exit.Exit<Controller.Result | void, E>
  ) => {
    if (Exit.isSuccess(exit)) {
      const result = exit.value === undefined ? done : effective(exit.value)
      counted[result._tag].updateUnsafe(1, context)
      return requeueBy(key, priority, result)
    }
    // (a reconcile that ended interrupted by itself, e.g. joining a fiber someone interrupted, is a failure
    // like any other: requeued. The worker's own interruption never reaches this point.)
    errors.updateUnsafe(1, context)
    results.error.updateUnsafe(1, context)
    if (Cause.hasDies(exit.cause)) panics.updateUnsafe(1, context)
    const failure = Cause.findErrorOption(exit.cause)
    // a typed failure goes through the error policy; a defect is requeued (as a panic in controller-runtime),
    // and so is a failure when the policy itself throws
    let next: Controller.Result = requeue
    if (Option.isSome(failure) && policy !== undefined) {
      try {
        next = effective(policy(failure.value, req))
      } catch (e) {
        next = requeue
        return Effect.andThen(
          Effect.logError(`${name}: the error policy threw for ${key}: requeued`, Cause.die(e)),
          requeueBy(key, priority, next)
        )
      }
    }
    if (next._tag === "Done") terminal.updateUnsafe(1, context)
    return Effect.andThen(
      Effect.logWarning(`${name}: reconcile of ${key} failed`, exit.cause).pipe(
        Effect.annotateLogs({ controller: name, key })
      ),
      requeueBy(key, priority, next)
    )
  }

  /**
   * The end of a reconcile interrupted by `reconcileTimeout`: counted as a timeout and as an error (as
   * controller-runtime counts the `DeadlineExceeded` of its guard), logged with its key, requeued through the
   * rate limiter (the error policy has no error to decide on).
   */
  const timedOut = (key: string, priority: number, timeout: Duration.Duration) => {
    timeouts.updateUnsafe(1, context)
    errors.updateUnsafe(1, context)
    results.error.updateUnsafe(1, context)
    return Effect.andThen(
      Effect.logWarning(`${name}: reconcile of ${key} timed out after ${Duration.format(timeout)}: interrupted`).pipe(
        Effect.annotateLogs({ controller: name, key })
      ),
      queue.addRateLimited(key, { priority })
    )
  }

  /**
   * `traced` (the reconcile and what wraps it) bounded by `timeout`: `undefined` when the timeout won, else
   * its exit. It runs in a fiber of its own (raced against the Clock's sleep), which the timeout interrupts
   * and awaits: a reconcile in an uninterruptible region runs on to the region's end while its worker waits
   * (its key is never handed out twice), and is interrupted there (Effect discards what an interrupted
   * region returns): a timeout too.
   */
  const bounded = (
    traced: Effect.Effect<Controller.Result | void, E, R>,
    timeout: Duration.Duration
  ): Effect.Effect<Exit.Exit<Controller.Result | void, E> | undefined, never, R> =>
    Effect.map(Effect.exit(Effect.timeoutOption(traced, timeout)), (exit) => {
      if (Exit.isFailure(exit)) return Exit.failCause(exit.cause)
      return Option.isSome(exit.value) ? Exit.succeed(exit.value.value) : undefined
    })

  // ---- reconcile one ---------------------------------------------------------------------------------

  const run = (key: string, priority: number): Effect.Effect<void, never, R> =>
    Effect.suspend(() => {
      const req = request(key)
      activeGauge.updateUnsafe(++active, context)
      let running = true
      const ended = () => {
        if (!running) return
        running = false
        activeGauge.updateUnsafe(--active, context)
      }
      const started = clock.currentTimeMillisUnsafe()
      // a reconcile that throws while building its Effect is a defect of this round, not of the worker
      const reconcile = Effect.suspend(() => options.reconcile(req))
      // the reconcile's writes are recorded only when read-your-own-writes is on
      const recorded0 = tracker === undefined
        ? reconcile
        : Effect.provideService(reconcile, Consistency.Writes, { record: (gr, rv) => tracker.wrote(key, gr, rv) })
      // sharded: only while this member owns the key (not owned: done, the owner reconciles it)
      const recorded = sharding === undefined
        ? recorded0
        : Effect.map(sharding.whileOwned(key, recorded0), Option.getOrElse((): Controller.Result | void => done))
      // (data-first: Effect 4's pipeable `withSpan(name, options)` captures a stack trace per call whatever
      // `captureStackTrace` says, as it reads the options from the wrong argument)
      const traced = Effect.withSpan(
        Effect.annotateLogs(recorded, { controller: name, key }),
        "Controller.reconcile",
        spanOptions
      )
      const timeout = options.reconcileTimeout
      return Effect.flatMap(
        timeout === undefined ? Effect.exit(traced) : bounded(traced, timeout),
        (exit) => {
          ended()
          duration.updateUnsafe((clock.currentTimeMillisUnsafe() - started) / 1000, context)
          return exit === undefined ? timedOut(key, priority, timeout!) : finish(key, priority, req, exit)
        }
      ).pipe(Effect.onInterrupt(() => Effect.sync(ended)))
    })

  /** A key whose own last write a cache has not caught up with yet goes back to the queue (rate limited). */
  const reconcileOne = (key: string, priority: number): Effect.Effect<void, never, R> => {
    if (tracker === undefined) return run(key, priority)
    return Effect.flatMap(tracker.check(key), (behind) => {
      if (Option.isNone(behind)) return run(key, priority)
      stale.updateUnsafe(1, context)
      return Effect.andThen(
        Effect.logDebug(
          `${name}: ${key}: the ${behind.value.groupResource} cache is at ${behind.value.readResourceVersion}, ` +
            `older than this key's own write at ${behind.value.writtenResourceVersion}: later`
        ),
        queue.addRateLimited(key, { priority })
      )
    })
  }

  // ---- start and stop --------------------------------------------------------------------------------

  const stop = Effect.sync(() => void (state = controllerTransition(state, "Stop")))

  const start = (into: Scope.Scope, deadline: Duration.Duration, closing: boolean) =>
    Effect.gen(function*() {
      const term = {
        state: initialTermState as TermState,
        /** Wakes the stopping finalizer when the term's last reconcile settles. */
        idle: undefined as (() => void) | undefined,
        /** The keys of the reconciles in progress (a key is never handed to two workers at once). */
        running: new Set<string>()
      }
      const fences = yield* Term.currentTerms
      const settled = (key: string) => {
        term.running.delete(key)
        const from = term.state
        term.state = termTransition(from, "Settle")
        if (from._tag === "Stopping" && term.state._tag === "Stopped") term.idle?.()
      }
      const worker = queue.runWorker((key, priority) => {
        // Stepping down: a key handed out now is held without work until the workers are interrupted, which
        // queues it again for the next term (the queue is not shut down); at the controller's end, let go.
        if (term.state._tag !== "Working" || state._tag !== "Running") return closing ? Effect.void : Effect.never
        // A stale term (a leader paused past its renew deadline): no reconcile. The check ended the term, and
        // its end stops these workers, which gives the key back to the queue (as when stepping down).
        if (fences.length > 0 && Term.unsafeCheck(fences, Term.nowMillis(clock)) !== undefined) return Effect.never
        term.state = termTransition(term.state, "Take")
        term.running.add(key)
        return Effect.ensuring(reconcileOne(key, priority), Effect.sync(() => settled(key)))
      })
      // The workers are fibers of `into`'s scope tree: forked into `workers`, a scope of their own inside
      // `section` (a child of `into`, sequential whatever `into`'s strategy), whose finalizer below runs
      // first: it stops the term, lets the reconciles in progress finish within the deadline, interrupts the
      // workers and waits for them (`interruptGrace`), then closes `workers`. A worker that does not end (an
      // uninterruptible reconcile) is left behind: `workers` is then closed in a fiber of its own, so that
      // `into` closes anyway instead of waiting for it without bound.
      const section = yield* Scope.fork(into, "sequential")
      const workers = yield* Scope.fork(section, "sequential")
      // (interruptible whatever the caller's region)
      const fibers: Array<Fiber.Fiber<void>> = []
      for (let i = 0; i < concurrency; i++) {
        fibers.push(yield* Effect.forkIn(worker, workers, { uninterruptible: false }))
      }
      yield* Scope.addFinalizer(
        section,
        Effect.gen(function*() {
          term.state = termTransition(term.state, "Stop")
          if (closing) {
            yield* stop
            yield* queue.shutdown
          }
          // (checked again when the wait begins: the last reconcile may have settled in between)
          const idle = Effect.callback<void>((resume) => {
            if (term.state._tag === "Stopped") return resume(Effect.void)
            // (resumed after a yield: not inside the worker whose reconcile settled, see `resumeLater`)
            term.idle = () => resume(resumeLater(Effect.void))
          })
          // (a finalizer is uninterruptible: the wait must be made interruptible for the timeout to end it)
          const finished = yield* Effect.interruptible(idle).pipe(Effect.timeoutOption(deadline))
          if (Option.isNone(finished)) {
            const inFlight = term.state._tag === "Stopped" ? 0 : term.state.inFlight
            yield* Effect.logWarning(
              `${name}: ${inFlight} reconciles still running after ${Duration.format(deadline)}: interrupted`
            )
          }
          const self = yield* Effect.fiberId
          for (const fiber of fibers) fiber.interruptUnsafe(self)
          const ended = yield* Effect.interruptible(Fiber.awaitAll(fibers)).pipe(Effect.timeoutOption(interruptGrace))
          if (Option.isSome(ended)) return yield* Scope.close(workers, Exit.void)
          // left behind: `workers` closes (awaiting them) in a fiber of its own; started at once, so that it
          // leaves `section` before `section` goes on closing
          yield* Effect.forkDetach(Scope.close(workers, Exit.void), { startImmediately: true })
          const left = Array.from(term.running)
          abandoned.updateUnsafe(left.length, context)
          if (left.length === 0) {
            yield* Effect.logError(`${name}: a worker did not end after its interruption: left behind`)
          }
          yield* Effect.forEach(left, (key) =>
            Effect.logError(
              `${name}: the reconcile of ${key} did not end ${Duration.format(interruptGrace)} after its ` +
                `interruption (uninterruptible): left behind`
            ).pipe(Effect.annotateLogs({ controller: name, key })), { discard: true })
        })
      )
    }).pipe(Effect.uninterruptible)

  return { start, stop, active: Effect.sync(() => active) }
}

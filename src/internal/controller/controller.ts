/**
 * The Controller's machinery: event handlers that turn informer events into keys, the workers that take
 * keys from the WorkQueue and reconcile them, read-your-own-writes, and the ordered shutdown. `Controller`
 * documents and re-exports it.
 *
 * @internal
 */
import * as Cause from "effect/Cause"
import * as Data from "effect/Data"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as ExecutionStrategy from "effect/ExecutionStrategy"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as FiberRef from "effect/FiberRef"
import * as Metric from "effect/Metric"
import * as MetricBoundaries from "effect/MetricBoundaries"
import * as Option from "effect/Option"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as Consistency from "../../Consistency.js"
import type * as Controller from "../../Controller.js"
import { fastMetaNamespaceKey } from "../../Indexer.js"
import type { DeletedFinalStateUnknown, KubeObject } from "../../KubeObject.js"
import { unwrapDeleted } from "../../KubeObject.js"
import { withTags } from "../../Metrics.js"
import * as RateLimiter from "../../RateLimiter.js"
import { groupResource } from "../../Resource.js"
import * as Sharding from "../../Sharding.js"
import type { Registration } from "../../SharedInformer.js"
import * as Term from "../../Term.js"
import * as WorkQueue from "../../WorkQueue.js"

// -------------------------------------------------------------------------------------------------
// requests and results
// -------------------------------------------------------------------------------------------------

/** @internal */
export const done: Controller.Result = { _tag: "Done" }

/** @internal */
export const requeue: Controller.Result = { _tag: "Requeue" }

/** @internal */
export const requeueAfter = (delay: Duration.DurationInput): Controller.Result => ({
  _tag: "RequeueAfter",
  delay: Duration.decode(delay)
})

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

/** @internal */
export const requestOf = (obj: unknown): Controller.Request | undefined => {
  const key = fastMetaNamespaceKey(obj)
  return key === undefined ? undefined : request(key)
}

const keyOf = (r: Controller.Request | string): string => typeof r === "string" ? r : r.key

const namespaceOf = (key: string): string => {
  const slash = key.indexOf("/")
  return slash === -1 ? "" : key.slice(0, slash)
}

// -------------------------------------------------------------------------------------------------
// predicates
// -------------------------------------------------------------------------------------------------

const meta = (obj: KubeObject) => obj.metadata

const sameMap = (
  a: { readonly [key: string]: string } | undefined,
  b: { readonly [key: string]: string } | undefined
): boolean => {
  if (a === b) return true
  const ka = a === undefined ? [] : Object.keys(a)
  const kb = b === undefined ? [] : Object.keys(b)
  if (ka.length !== kb.length) return false
  for (const k of ka) if (a![k] !== b?.[k]) return false
  return true
}

/** @internal */
export const generationChanged: Controller.Predicate<KubeObject> = {
  update: (o, n) => meta(o)?.generation !== meta(n)?.generation
}

/** @internal */
export const resourceVersionChanged: Controller.Predicate<KubeObject> = {
  update: (o, n) => meta(o)?.resourceVersion !== meta(n)?.resourceVersion
}

/** @internal */
export const labelsChanged: Controller.Predicate<KubeObject> = {
  update: (o, n) => !sameMap(meta(o)?.labels, meta(n)?.labels)
}

/** @internal */
export const annotationsChanged: Controller.Predicate<KubeObject> = {
  update: (o, n) => !sameMap(meta(o)?.annotations, meta(n)?.annotations)
}

/** @internal */
export const filter = <A>(f: (obj: A) => boolean): Controller.Predicate<A> => ({
  create: f,
  update: (_, n) => f(n),
  delete: f
})

/** @internal */
export const or = <A>(...predicates: ReadonlyArray<Controller.Predicate<A>>): Controller.Predicate<A> => ({
  create: (obj) => predicates.some((p) => p.create === undefined || p.create(obj)),
  update: (o, n) => predicates.some((p) => p.update === undefined || p.update(o, n)),
  delete: (obj) => predicates.some((p) => p.delete === undefined || p.delete(obj))
})

/** @internal */
export const not = <A>(predicate: Controller.Predicate<A>): Controller.Predicate<A> => ({
  create: (obj) => predicate.create !== undefined && !predicate.create(obj),
  update: (o, n) => predicate.update !== undefined && !predicate.update(o, n),
  delete: (obj) => predicate.delete !== undefined && !predicate.delete(obj)
})

const passesCreate = <A>(predicates: ReadonlyArray<Controller.Predicate<A>> | undefined, obj: A): boolean => {
  if (predicates === undefined) return true
  for (const p of predicates) if (p.create !== undefined && !p.create(obj)) return false
  return true
}

const passesUpdate = <A>(predicates: ReadonlyArray<Controller.Predicate<A>> | undefined, o: A, n: A): boolean => {
  if (predicates === undefined) return true
  for (const p of predicates) if (p.update !== undefined && !p.update(o, n)) return false
  return true
}

/** A tombstone without its last state passes: its key is all there is. */
const passesDelete = <A>(
  predicates: ReadonlyArray<Controller.Predicate<A>> | undefined,
  obj: A | undefined
): boolean => {
  if (predicates === undefined || obj === undefined) return true
  for (const p of predicates) if (p.delete !== undefined && !p.delete(obj)) return false
  return true
}

// -------------------------------------------------------------------------------------------------
// owners
// -------------------------------------------------------------------------------------------------

interface OwnerReference {
  readonly apiVersion?: unknown
  readonly kind?: unknown
  readonly name?: unknown
  readonly controller?: unknown
}

const groupOfApiVersion = (apiVersion: string): string => {
  const slash = apiVersion.indexOf("/")
  return slash === -1 ? "" : apiVersion.slice(0, slash)
}

/**
 * The keys of `child`'s owners of the primary's group and kind (the version does not matter, as in
 * controller-runtime): the controller reference only, or every matching one. A namespaced owner lives in
 * its child's namespace.
 */
const ownerKeys = (
  child: unknown,
  primary: { readonly group: string; readonly kind: string; readonly namespaced: boolean },
  everyOwner: boolean,
  into: Array<string>
): void => {
  const metadata = (child as KubeObject | undefined)?.metadata
  const refs = metadata?.ownerReferences
  if (!Array.isArray(refs)) return
  for (const ref of refs as ReadonlyArray<OwnerReference>) {
    if (typeof ref !== "object" || ref === null) continue
    if (!everyOwner && ref.controller !== true) continue
    if (typeof ref.apiVersion !== "string" || typeof ref.name !== "string" || ref.name === "") continue
    if (ref.kind !== primary.kind || groupOfApiVersion(ref.apiVersion) !== primary.group) {
      if (!everyOwner) return // the controller reference is of another kind
      continue
    }
    const namespace = metadata?.namespace
    into.push(primary.namespaced && namespace !== undefined && namespace !== "" ? `${namespace}/${ref.name}` : ref.name)
    if (!everyOwner) return
  }
}

// -------------------------------------------------------------------------------------------------
// errors and metrics
// -------------------------------------------------------------------------------------------------

/** @internal */
export class ControllerError extends Data.TaggedError("ControllerError")<{
  readonly reason: "CacheSyncTimeout" | "SourceStopped"
  readonly controller: string
  readonly message: string
}> {}

/** @internal */
export const durationBoundaries = MetricBoundaries.exponential({ start: 0.005, factor: 2, count: 16 })

/** @internal */
export const reconcileTotal = Metric.counter("effect_informers_reconcile_total", {
  description: "Reconciles by controller and result",
  incremental: true
})

/** @internal */
export const reconcileErrors = Metric.counter("effect_informers_reconcile_errors_total", {
  description: "Failed reconciles",
  incremental: true
})

/** @internal */
export const reconcileDuration = Metric.histogram(
  "effect_informers_reconcile_time_seconds",
  durationBoundaries,
  "The duration of reconciles in seconds"
)

/** @internal */
export const activeWorkers = Metric.gauge("effect_informers_reconcile_active_workers", {
  description: "Reconciles in progress"
})

/** @internal */
export const staleSkips = Metric.counter("effect_informers_reconcile_stale_skips_total", {
  description: "Reconciles postponed until a cache caught up with the key's own write",
  incremental: true
})

/** @internal */
export const reconcilePanics = Metric.counter("effect_informers_reconcile_panics_total", {
  description: "Reconciles that died of a defect (controller-runtime's panics)",
  incremental: true
})

/** @internal */
export const terminalReconcileErrors = Metric.counter("effect_informers_terminal_reconcile_errors_total", {
  description: "Failed reconciles the error policy did not requeue",
  incremental: true
})

/** @internal */
export const reconcilesAbandoned = Metric.counter("effect_informers_reconcile_abandoned_total", {
  description: "Reconciles still running after their interruption at shutdown or step-down, left behind",
  incremental: true
})

/** @internal */
export const maxConcurrentReconciles = Metric.gauge("effect_informers_max_concurrent_reconciles", {
  description: "The controller's number of workers"
})

// -------------------------------------------------------------------------------------------------
// make
// -------------------------------------------------------------------------------------------------

const defaultCacheSyncTimeout = Duration.minutes(2)
const defaultShutdownTimeout = Duration.seconds(30)
/** Inside client-go's margin between the renew deadline (10 s) and the lease duration (15 s). */
const defaultStepDownTimeout = Duration.seconds(2)
/**
 * How long the workers' interruption may take once the deadline has passed (the reconciles' own finalizers);
 * a reconcile still running then (an uninterruptible region, a finalizer that hangs) is left behind.
 */
const interruptGrace = Duration.seconds(1)

/** @internal */
export const make = <A, E, R>(
  options: Controller.Options<A, E, R>
): Effect.Effect<Controller.Controller, ControllerError, Scope.Scope | R> =>
  // built in a scope of its own, closed at once when the controller cannot start (its handlers removed,
  // its queue closed), else with the caller's
  Effect.flatMap(Effect.scope, (outer) =>
    Effect.flatMap(Scope.fork(outer, ExecutionStrategy.sequential), (own) =>
      makeIn(options).pipe(
        Scope.extend(own),
        Effect.onExit((exit) =>
          Exit.isFailure(exit) ? Scope.close(own, exit) : Effect.void
        )
      )))

const makeIn = <A, E, R>(
  options: Controller.Options<A, E, R>
): Effect.Effect<Controller.Controller, ControllerError, Scope.Scope | R> =>
  Effect.gen(function*() {
    const name = options.name
    const scope = yield* Effect.scope
    const clock = yield* Effect.clock

    // ---- the queue (created first: closed last) ----------------------------------------------------
    const queue = yield* WorkQueue.make<string>({
      name,
      rateLimiter: options.rateLimiter ?? RateLimiter.defaultController,
      ...(options.fairness === false ? {} : { group: namespaceOf })
    })

    // ---- read-your-own-writes ----------------------------------------------------------------------
    const sources = [
      options.for,
      ...(options.owns ?? []).map((o) => o.source),
      ...(options.watches ?? []).map((w) => w.source)
    ]
    const caches = new Map<string, Effect.Effect<string>>()
    for (const source of sources) {
      caches.set(groupResource(source.resource), source.informer.indexer.lastResourceVersion)
    }
    const tracker = options.readYourWrites === false
      ? undefined
      : yield* Consistency.makeTracker({ caches, maxWait: options.readYourWrites?.maxWait })

    // ---- events to keys ----------------------------------------------------------------------------
    const low = { priority: WorkQueue.LowPriority }
    const normal = {}
    const addKeys = (keys: ReadonlyArray<string>, priority: WorkQueue.AddOptions) =>
      keys.length === 0 ? Effect.void : queue.addAll(keys, priority)
    const unchanged = (o: unknown, n: unknown) =>
      (o as KubeObject).metadata?.resourceVersion === (n as KubeObject).metadata?.resourceVersion

    const registrations: Array<Registration> = []
    yield* Effect.addFinalizer(() => Effect.forEach(registrations, (r) => r.remove, { discard: true }))

    const primary = options.for
    const predicates = options.predicates
    registrations.push(
      yield* primary.informer.addEventHandler({
        name: `${name}/for`,
        onAdd: (obj, initial) => {
          if (!passesCreate(predicates, obj)) return Effect.void
          const key = fastMetaNamespaceKey(obj)
          return key === undefined ? Effect.void : queue.add(key, initial ? low : normal)
        },
        onUpdate: (o, n) => {
          if (!passesUpdate(predicates, o, n)) return Effect.void
          const key = fastMetaNamespaceKey(n)
          return key === undefined ? Effect.void : queue.add(key, unchanged(o, n) ? low : normal)
        },
        onDelete: (obj) => {
          if (!passesDelete(predicates, unwrapDeleted(obj))) return Effect.void
          const key = fastMetaNamespaceKey(obj)
          if (key === undefined) return Effect.void
          return Effect.zipRight(tracker === undefined ? Effect.void : tracker.clear(key), queue.add(key))
        }
      }).pipe(Effect.mapError(stopped(name)))
    )

    for (const owns of options.owns ?? []) {
      const everyOwner = owns.everyOwner === true
      const keys = (...objs: ReadonlyArray<unknown>) => {
        const into: Array<string> = []
        for (const obj of objs) ownerKeys(obj, primary.resource, everyOwner, into)
        return into.length > 1 ? Array.from(new Set(into)) : into
      }
      registrations.push(
        yield* owns.source.informer.addEventHandler({
          name: `${name}/owns/${groupResource(owns.source.resource)}`,
          onAdd: (obj, initial) =>
            passesCreate(owns.predicates, obj) ? addKeys(keys(obj), initial ? low : normal) : Effect.void,
          onUpdate: (o, n) =>
            passesUpdate(owns.predicates, o, n) ? addKeys(keys(o, n), unchanged(o, n) ? low : normal) : Effect.void,
          onDelete: (obj: unknown) => {
            const last = unwrapDeleted(obj as DeletedFinalStateUnknown<unknown>)
            return passesDelete(owns.predicates, last) ? addKeys(keys(last), normal) : Effect.void
          }
        }).pipe(Effect.mapError(stopped(name)))
      )
    }

    for (const watches of options.watches ?? []) {
      const keys = (...objs: ReadonlyArray<unknown>): Effect.Effect<ReadonlyArray<string>> => {
        const into = new Set<string>()
        let pending: Array<Effect.Effect<Iterable<Controller.Request | string>>> | undefined
        for (const obj of objs) {
          if (obj === undefined) continue
          const mapped = watches.map(obj)
          if (Effect.isEffect(mapped)) (pending ??= []).push(mapped)
          else for (const r of mapped) into.add(keyOf(r))
        }
        if (pending === undefined) return Effect.succeed(Array.from(into))
        return Effect.map(Effect.all(pending), (results) => {
          for (const result of results) for (const r of result) into.add(keyOf(r))
          return Array.from(into)
        })
      }
      registrations.push(
        yield* watches.source.informer.addEventHandler({
          name: `${name}/watches/${groupResource(watches.source.resource)}`,
          onAdd: (obj, initial) =>
            passesCreate(watches.predicates, obj)
              ? Effect.flatMap(keys(obj), (ks) => addKeys(ks, initial ? low : normal))
              : Effect.void,
          onUpdate: (o, n) =>
            passesUpdate(watches.predicates, o, n)
              ? Effect.flatMap(keys(o, n), (ks) => addKeys(ks, unchanged(o, n) ? low : normal))
              : Effect.void,
          onDelete: (obj: unknown) => {
            const last = unwrapDeleted(obj as DeletedFinalStateUnknown<unknown>)
            return passesDelete(watches.predicates, last)
              ? Effect.flatMap(keys(last), (ks) => addKeys(ks, normal))
              : Effect.void
          }
        }).pipe(Effect.mapError(stopped(name)))
      )
    }

    // ---- wait for the sources ------------------------------------------------------------------------
    const syncTimeout = Duration.decode(options.cacheSyncTimeout ?? defaultCacheSyncTimeout)
    yield* Effect.forEach(registrations, (r) => r.synced, { concurrency: "unbounded", discard: true }).pipe(
      Effect.mapError(stopped(name)),
      Effect.timeoutFail({
        duration: syncTimeout,
        onTimeout: () =>
          new ControllerError({
            reason: "CacheSyncTimeout",
            controller: name,
            message: `${name}: the sources did not sync within ${Duration.format(syncTimeout)}`
          })
      })
    )

    // ---- the workers ---------------------------------------------------------------------------------
    // tagged once (`withTags`): an update is then a registry cache hit
    const tagged = <T extends Metric.Metric<any, any, any>>(
      metric: T,
      ...more: ReadonlyArray<readonly [string, string]>
    ): T => withTags(metric, [["controller", name], ...more]) as T
    const results = {
      success: tagged(reconcileTotal, ["result", "success"]),
      error: tagged(reconcileTotal, ["result", "error"]),
      requeue: tagged(reconcileTotal, ["result", "requeue"]),
      requeueAfter: tagged(reconcileTotal, ["result", "requeue_after"])
    }
    const errors = tagged(reconcileErrors)
    const panics = tagged(reconcilePanics)
    const terminal = tagged(terminalReconcileErrors)
    const duration = tagged(reconcileDuration)
    const activeGauge = tagged(activeWorkers)
    const stale = tagged(staleSkips)
    const abandoned = tagged(reconcilesAbandoned)
    const policy = options.errorPolicy
    // every series exists from the start, at 0 (as controller-runtime initialises them): a scrape before the
    // first reconcile shows the controller, and rates over a fresh counter start from 0
    for (const counter of [...Object.values(results), errors, panics, terminal, stale, abandoned]) {
      counter.unsafeUpdate(0, [])
    }
    activeGauge.unsafeUpdate(0, [])

    let stopping = false
    let active = 0

    /** What a result does to the key in the queue. */
    const requeueBy = (key: string, priority: number, result: Controller.Result): Effect.Effect<void> => {
      // `result` is `effective`: a `RequeueAfter` here has a positive delay
      switch (result._tag) {
        case "Done":
          return queue.forget(key)
        case "Requeue":
          return queue.addRateLimited(key, { priority })
        case "RequeueAfter":
          return Effect.zipRight(queue.forget(key), queue.add(key, { after: result.delay, priority }))
      }
    }
    const counted = {
      Done: results.success,
      Requeue: results.requeue,
      RequeueAfter: results.requeueAfter
    } as const

    // The hot path of every key: plain closures and metrics updated in place (`unsafeUpdate`), one span
    // without a stack trace; the queue's `runWorker` owns get/done. (An Effect.gen per key and a span with
    // its stack trace cost more than the queue and the reconcile together: bench/controllerMicro.ts.)
    const spanOptions = { attributes: { controller: name }, captureStackTrace: false } as const

    const finish = (
      key: string,
      priority: number,
      req: Controller.Request,
      exit: Exit.Exit<Controller.Result | void, E>
    ) => {
      if (Exit.isSuccess(exit)) {
        const result = exit.value === undefined ? done : effective(exit.value)
        counted[result._tag].unsafeUpdate(1, [])
        return requeueBy(key, priority, result)
      }
      // (a reconcile that ended interrupted by itself, e.g. joining a fiber someone interrupted, is a failure
      // like any other: requeued. The worker's own interruption never reaches this point.)
      errors.unsafeUpdate(1, [])
      results.error.unsafeUpdate(1, [])
      if (Cause.isDie(exit.cause)) panics.unsafeUpdate(1, [])
      const failure = Cause.failureOption(exit.cause)
      // a typed failure goes through the error policy; a defect is requeued (as a panic in controller-runtime),
      // and so is a failure when the policy itself throws
      let next: Controller.Result = requeue
      if (Option.isSome(failure) && policy !== undefined) {
        try {
          next = effective(policy(failure.value, req))
        } catch (e) {
          next = requeue
          return Effect.zipRight(
            Effect.logError(`${name}: the error policy threw for ${key}: requeued`, Cause.die(e)),
            requeueBy(key, priority, next)
          )
        }
      }
      if (next._tag === "Done") terminal.unsafeUpdate(1, [])
      return Effect.zipRight(
        Effect.logWarning(`${name}: reconcile of ${key} failed`, exit.cause).pipe(
          Effect.annotateLogs({ controller: name, key })
        ),
        requeueBy(key, priority, next)
      )
    }

    const run = (key: string, priority: number): Effect.Effect<void, never, R> =>
      Effect.suspend(() => {
        const req = request(key)
        activeGauge.unsafeUpdate(++active, [])
        let running = true
        const ended = () => {
          if (!running) return
          running = false
          activeGauge.unsafeUpdate(--active, [])
        }
        const started = clock.unsafeCurrentTimeMillis()
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
        return Effect.flatMap(
          Effect.exit(
            recorded.pipe(
              Effect.annotateLogs({ controller: name, key }),
              Effect.withSpan("Controller.reconcile", spanOptions)
            )
          ),
          (exit) => {
            ended()
            duration.unsafeUpdate((clock.unsafeCurrentTimeMillis() - started) / 1000, [])
            return finish(key, priority, req, exit)
          }
        ).pipe(Effect.onInterrupt(() => Effect.sync(ended)))
      })

    const reconcileOne = (key: string, priority: number): Effect.Effect<void, never, R> => {
      if (tracker === undefined) return run(key, priority)
      return Effect.flatMap(tracker.check(key), (behind) => {
        if (Option.isNone(behind)) return run(key, priority)
        stale.unsafeUpdate(1, [])
        return Effect.zipRight(
          Effect.logDebug(
            `${name}: ${key}: the ${behind.value.groupResource} cache is at ${behind.value.readResourceVersion}, ` +
              `older than this key's own write at ${behind.value.writtenResourceVersion}: later`
          ),
          queue.addRateLimited(key, { priority })
        )
      })
    }

    const concurrency = Math.max(1, Math.floor(options.concurrency ?? 1))
    tagged(maxConcurrentReconciles).unsafeUpdate(concurrency, [])
    const sharding = options.sharding
    if (sharding !== undefined) {
      // the keys a change of the assignment gives this member are reconciled again (from the primary's cache)
      yield* sharding.changes.pipe(
        Stream.runForEach((change) =>
          Effect.flatMap(primary.informer.indexer.listKeys, (keys) => {
            const mine = keys.filter((key) => Sharding.gained(change, key))
            return mine.length === 0 ? Effect.void : queue.addAll(mine)
          })
        ),
        Effect.forkIn(scope)
      )
    }

    /**
     * Starts the workers in `into`, with a finalizer there that stops them: keys handed out from then on go
     * back to the queue, the reconciles in progress may finish within `deadline`, the rest are interrupted.
     * A reconcile still running `interruptGrace` after its interruption (uninterruptible) is reported with
     * its key and left behind: the scope closes anyway. `closing` shuts the queue too (the controller's end,
     * not a leadership term's).
     */
    const startWorkers = (into: Scope.Scope, deadline: Duration.Duration, closing: boolean) =>
      Effect.gen(function*() {
        const term = {
          stopping: false,
          inFlight: 0,
          idle: undefined as (() => void) | undefined,
          /** The keys of the reconciles in progress (a key is never handed to two workers at once). */
          running: new Set<string>()
        }
        const fences = yield* FiberRef.get(Term.currentTerms)
        const settled = (key: string) => {
          term.running.delete(key)
          if (--term.inFlight === 0 && term.stopping) term.idle?.()
        }
        const worker = queue.runWorker((key, priority) => {
          // Stepping down: a key handed out now is held without work until the workers are interrupted, which
          // queues it again for the next term (the queue is not shut down); at the controller's end, let go.
          if (term.stopping || stopping) return closing ? Effect.void : Effect.never
          // A stale term (a leader paused past its renew deadline): no reconcile. The check ended the term, and
          // its end stops these workers, which gives the key back to the queue (as when stepping down).
          if (fences.length > 0 && Term.unsafeCheck(fences, Term.nowMillis(clock)) !== undefined) return Effect.never
          term.inFlight++
          term.running.add(key)
          return Effect.ensuring(reconcileOne(key, priority), Effect.sync(() => settled(key)))
        })
        // Daemons, stopped by the finalizer below only: a fiber forked into `into` would be awaited by the
        // scope itself, without bound, when a reconcile cannot be interrupted.
        const fibers: Array<Fiber.RuntimeFiber<void>> = []
        yield* Scope.addFinalizer(
          into,
          Effect.gen(function*() {
            term.stopping = true
            if (closing) {
              stopping = true
              yield* queue.shutdown
            }
            const idle = term.inFlight === 0
              ? Effect.void
              : Effect.async<void>((resume) => {
                term.idle = () => resume(Effect.void)
              })
            // (a finalizer is uninterruptible: the wait must be made interruptible for the timeout to end it)
            const finished = yield* Effect.interruptible(idle).pipe(Effect.timeout(deadline), Effect.option)
            if (Option.isNone(finished)) {
              yield* Effect.logWarning(
                `${name}: ${term.inFlight} reconciles still running after ${Duration.format(deadline)}: interrupted`
              )
            }
            const self = yield* Effect.fiberId
            for (const fiber of fibers) yield* fiber.interruptAsFork(self)
            const ended = yield* Effect.interruptible(Fiber.awaitAll(fibers)).pipe(
              Effect.timeout(interruptGrace),
              Effect.option
            )
            if (Option.isNone(ended)) {
              const left = Array.from(term.running)
              abandoned.unsafeUpdate(left.length, [])
              if (left.length === 0) {
                yield* Effect.logError(`${name}: a worker did not end after its interruption: left behind`)
              }
              yield* Effect.forEach(left, (key) =>
                Effect.logError(
                  `${name}: the reconcile of ${key} did not end ${Duration.format(interruptGrace)} after its ` +
                    `interruption (uninterruptible): left behind`
                ).pipe(Effect.annotateLogs({ controller: name, key })), { discard: true })
            }
          })
        )
        // (interruptible whatever the caller's region: a fork inherits it)
        const interruptibleWorker = Effect.interruptible(worker)
        for (let i = 0; i < concurrency; i++) fibers.push(yield* Effect.forkDaemon(interruptibleWorker))
      }).pipe(Effect.uninterruptible)

    // Started last, so that their finalizer runs first when the scope closes: stop taking work, let the
    // reconciles in progress finish within the deadline, interrupt the rest; then the handlers are removed
    // and the queue closed.
    const shutdownTimeout = Duration.decode(options.shutdownTimeout ?? defaultShutdownTimeout)
    const election = options.leaderElection
    if (election === undefined) {
      yield* startWorkers(scope, shutdownTimeout, true)
    } else {
      // Warm standby: the handlers run and the queue fills on every replica; the workers only while this
      // one leads, each term in a scope of its own, stopped within `stepDownTimeout` when the term ends.
      const stepDown = Duration.decode(election.stepDownTimeout ?? defaultStepDownTimeout)
      const term = Effect.flatMap(Effect.scope, (termScope) => startWorkers(termScope, stepDown, false)).pipe(
        Effect.zipRight(Effect.logInfo(`${name}: leading: reconciling`)),
        Effect.zipRight(Effect.never)
      )
      yield* Effect.forkIn(election.whileLeading(term), scope)
      yield* Scope.addFinalizer(scope, Effect.sync(() => void (stopping = true)))
    }

    return {
      name,
      queue,
      enqueue: (r, addOptions) => queue.add(keyOf(r), addOptions),
      active: Effect.sync(() => active)
    }
  })

const stopped = (name: string) => (error: { readonly message: string }): ControllerError =>
  error instanceof ControllerError
    ? error
    : new ControllerError({ reason: "SourceStopped", controller: name, message: `${name}: ${error.message}` })

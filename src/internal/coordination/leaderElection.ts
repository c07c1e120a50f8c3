/**
 * The elector: client-go's `LeaderElector` as one fiber that campaigns, leads and steps down, driving the
 * state machine of `leaderElectionPolicy.ts`; the work of a term runs in a scope of its own, closed before
 * the renew deadline lets another replica take the lease; the service's scope closes the work, then
 * releases the Lease.
 *
 * @internal
 */
import * as Cause from "effect/Cause"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Metric from "effect/Metric"
import * as Option from "effect/Option"
import * as Random from "effect/Random"
import * as Result from "effect/Result"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as SubscriptionRef from "effect/SubscriptionRef"
import type { Event, LeaderElection, LeaseLock, Options, State, Timing, VersionedRecord } from "../../LeaderElection.js"
import * as Term from "../../Term.js"
import { tagged } from "../metricTags.js"
import type { Observation } from "./leaderElectionPolicy.js"
import {
  decide,
  Event as Events,
  fastRenewal,
  formatMicroTime,
  initialRecord,
  InvalidConfigError,
  jitteredDelay,
  leaderSleep,
  leaderStep,
  observe,
  releasedRecord,
  requestTimeout,
  sameState,
  State as States,
  transition,
  validateTiming,
  validHolder
} from "./leaderElectionPolicy.js"
import { LockError } from "./leaseLock.js"
import * as metrics from "./metrics.js"

// -------------------------------------------------------------------------------------------------
// options and the service
// -------------------------------------------------------------------------------------------------

/** Validated options (`validate`). @internal */
export interface Config extends Timing {
  readonly lock: LeaseLock
  readonly identity: string
  readonly name: string
  readonly releaseOnCancel: boolean
}

/** Validates options: the timings (`validateTiming`), then the identity ("Lock identity is empty"). @internal */
export const validate = (options: Options): Result.Result<Config, InvalidConfigError> =>
  Result.flatMap(validateTiming(options), (timing): Result.Result<Config, InvalidConfigError> =>
    options.identity === ""
      ? Result.fail(new InvalidConfigError({ message: "Lock identity is empty" }))
      : Result.succeed({
        ...timing,
        lock: options.lock,
        identity: options.identity,
        name: options.name ?? options.lock.describe,
        releaseOnCancel: options.releaseOnCancel ?? true
      }))

interface Worker {
  startedTerm: number
  fiber: Fiber.Fiber<void> | undefined
  readonly start: (term: number, scope: Scope.Scope, fence: Term.Term) => Effect.Effect<void>
}

/** A leading term's fence: valid while the last successful renewal was sent less than the renew deadline ago. */
interface Fence {
  readonly term: Term.Term
  /** When the last successful write of the Lease was sent (monotonic milliseconds). */
  renewedAt: number
  /** Why the term ended, once it did. */
  error: Term.TermError | undefined
  /** Completed when the term ends: the elector steps down at once. */
  readonly ended: Deferred.Deferred<void>
}

/** What Sharding needs of its membership elector besides the service. @internal */
export interface Elector {
  readonly service: LeaderElection.Service
  /** The fence of the term in progress, if any. */
  readonly currentTerm: () => Term.Term | undefined
  /** The state, now. */
  readonly stateUnsafe: () => State
}

type Attempt =
  | { readonly _tag: "Success"; readonly sentAt: number }
  | { readonly _tag: "Held"; readonly leader: string }
  | { readonly _tag: "Failed"; readonly error: LockError | undefined }

// the record's times are wall-clock times (MicroTime), never compared with anything local
const microNow = Effect.clockWith((clock) => Effect.sync(() => formatMicroTime(clock.currentTimeNanosUnsafe())))

// every time of the elector is the monotonic clock's (`Term.nowMillis`), as the fences of its terms are judged
const now = Term.currentMillis

/** @internal */
export const make = (options: Options): Effect.Effect<LeaderElection.Service, InvalidConfigError, Scope.Scope> =>
  Effect.map(makeElector(options), (elector) => elector.service)

/** `make`, with the fence of the current term. @internal */
export const makeElector = (options: Options): Effect.Effect<Elector, InvalidConfigError, Scope.Scope> =>
  Effect.gen(function*() {
    const config = yield* Effect.fromResult(validate(options))
    const { identity } = config
    // every request is bounded, as client-go bounds its lock client's (max(1 s, renewDeadline / 2))
    const requestMillis = requestTimeout(config)
    const bounded = <A>(verb: string, request: Effect.Effect<A, LockError>) =>
      Effect.timeoutOrElse(request, {
        duration: Duration.millis(requestMillis),
        orElse: () =>
          Effect.fail(
            new LockError({
              reason: "Failed",
              message: `${verb} ${config.lock.describe}: no answer within ${requestMillis} ms`
            })
          )
      })
    const lock: LeaseLock = {
      ...config.lock,
      describe: config.lock.describe,
      get: bounded("get", config.lock.get),
      create: (record) => bounded("create", config.lock.create(record)),
      update: (record, resourceVersion) => bounded("update", config.lock.update(record, resourceVersion))
    }
    const leaseSeconds = Duration.toSeconds(config.leaseDuration)
    const retryMillis = Duration.toMillis(config.retryPeriod)
    const isLeaderMetric = tagged(metrics.isLeader, { name: config.name })
    const transitions = tagged(metrics.leaderTransitions, { name: config.name })
    const renewFailures = tagged(metrics.renewFailures, { name: config.name })
    const slowPath = tagged(metrics.slowPaths, { name: config.name })
    const stepDownsBy = {
      RenewDeadline: tagged(metrics.stepDowns, { name: config.name, reason: "RenewDeadline" }),
      LeaseLost: tagged(metrics.stepDowns, { name: config.name, reason: "LeaseLost" }),
      Failure: tagged(metrics.stepDowns, { name: config.name, reason: "Failure" }),
      Shutdown: tagged(metrics.stepDowns, { name: config.name, reason: "Shutdown" })
    } as const
    // every series from the start, at 0 (client-go sets the status to 0 at construction)
    yield* Metric.update(isLeaderMetric, 0)
    for (const counter of [transitions, renewFailures, slowPath]) yield* Metric.update(counter, 0)
    for (const counter of Object.values(stepDownsBy)) yield* Metric.update(counter, 0)

    const stateRef = yield* SubscriptionRef.make<State>(States.Acquiring())
    const stopped = yield* Deferred.make<void>()
    // the state, synchronously too (Sharding's fences read it)
    let state: State = States.Acquiring()
    const emit = (event: Event) =>
      Effect.suspend(() => {
        state = transition(state, event)
        return SubscriptionRef.set(stateRef, state)
      })

    // what this replica last saw of the record: the only thing its decisions are made from
    let observation: Option.Option<Observation> = Option.none()
    let term = 0
    let current: { readonly term: number; readonly scope: Scope.Closeable; readonly fence: Fence } | undefined
    const workers = new Set<Worker>()

    const stamp = Effect.zipWith(now, microNow, (now, time) => ({ now, time }))
    // a spec this replica cannot use as is: said once (until the problems change), with what it does
    let reported = ""
    const report = (fetched: VersionedRecord) => {
      const problems = fetched.problems === undefined ? "" : fetched.problems.join("; ")
      if (problems === reported) return Effect.void
      reported = problems
      return problems === ""
        ? Effect.void
        : Effect.logWarning(
          `lease ${lock.describe} has a spec this replica cannot use as is: ${problems}; it is judged so (held by ` +
            `another holder: taken over once expired so read), and this replica's next write of it replaces the spec`
        )
    }
    const seen = (fetched: VersionedRecord) =>
      Effect.flatMap(now, (at) => {
        observation = Option.some(observe(observation, fetched, at))
        return report(fetched)
      })
    const wrote = (written: VersionedRecord) =>
      Effect.map(now, (at) => {
        observation = Option.some({ ...written, observedAt: at })
      })
    const renewDeadlineMillis = Duration.toMillis(config.renewDeadline)

    /** client-go's `tryAcquireOrRenew`. */
    const attempt: Effect.Effect<Attempt> = Effect.gen(function*() {
      const first = yield* stamp
      const sentAt = first.now
      // 1. the fast path: renew over the resourceVersion we know
      const fast = fastRenewal(identity, observation, leaseSeconds, first)
      if (Option.isSome(fast) && Option.isSome(observation)) {
        const renewed = yield* Effect.result(lock.update(fast.value, observation.value.resourceVersion))
        if (Result.isSuccess(renewed)) {
          yield* wrote(renewed.success)
          return { _tag: "Success", sentAt } as const
        }
        yield* Effect.logDebug(`fast renewal of ${lock.describe} failed: ${renewed.failure.message}`)
      }
      // 2. read
      const got = yield* Effect.result(lock.get)
      if (Result.isFailure(got)) return { _tag: "Failed", error: got.failure } as const
      const now = yield* stamp
      if (Option.isNone(got.success)) {
        const created = yield* Effect.result(lock.create(initialRecord(identity, leaseSeconds, now)))
        if (Result.isFailure(created)) return { _tag: "Failed", error: created.failure } as const
        yield* wrote(created.success)
        return { _tag: "Success", sentAt } as const
      }
      // 3. observe, 4. and 5. decide
      yield* seen(got.success.value)
      const observed = Option.getOrThrow(observation)
      const decision = decide(identity, observed, leaseSeconds, now)
      if (decision._tag === "Wait") return { _tag: "Held", leader: decision.holder } as const
      if (decision._tag === "Renew") yield* Metric.update(slowPath, 1)
      const updated = yield* Effect.result(lock.update(decision.record, observed.resourceVersion))
      if (Result.isFailure(updated)) return { _tag: "Failed", error: updated.failure } as const
      yield* wrote(updated.success)
      return { _tag: "Success", sentAt } as const
    })

    /** An attempt of the leader: cut at the renew deadline. */
    const timedAttempt = (timeout: number) =>
      attempt.pipe(
        Effect.timeoutOrElse({
          duration: Duration.millis(timeout),
          orElse: () => Effect.succeed<Attempt>({ _tag: "Failed", error: undefined })
        })
      )

    const describeFailure = (a: Attempt) =>
      a._tag === "Failed" ? (a.error === undefined ? "no success before the renew deadline" : a.error.message) : a._tag

    /** Attempts until one succeeds; returns when the successful attempt was sent. */
    const campaign: Effect.Effect<number> = Effect.gen(function*() {
      while (true) {
        const result = yield* attempt
        if (result._tag === "Success") return result.sentAt
        if (result._tag === "Failed") {
          yield* Effect.logDebug(`could not acquire lease ${lock.describe}: ${describeFailure(result)}`)
        }
        const leader = Option.filter(validHolder(observation, yield* now), (holder) => holder !== identity)
        yield* emit(Events.Observed({ leader }))
        const random = yield* Random.next
        yield* Effect.sleep(Duration.millis(jitteredDelay(retryMillis, config.jitterFactor, random)))
      }
    })

    const closeTerm = Effect.suspend(() => {
      const open = current
      if (open === undefined) return Effect.void
      return Scope.close(open.scope, Exit.void).pipe(
        Effect.andThen(Effect.sync(() => {
          current = undefined
        }))
      )
    }).pipe(Effect.uninterruptible)

    const startWorkers = Effect.suspend(() => {
      const open = current
      if (open === undefined) return Effect.void
      return Effect.forEach([...workers], (worker) => worker.start(open.term, open.scope, open.fence.term), {
        discard: true
      })
    })

    /** The fence of term `n`, acquired by a write sent at `acquiredAt`. */
    const makeFence = (n: number, acquiredAt: number): Effect.Effect<Fence> =>
      Effect.withFiber((elector) => {
        const ended = Deferred.makeUnsafe<void>()
        // the elector's dispatcher: the end of the term reaches the elector as a message (`end` runs inside
        // the check of whoever found the term stale, often the work itself: it sees its `TermError` first)
        const dispatcher = elector.currentDispatcher
        const name = `${config.name} term ${n} of ${identity}`
        const fence: Fence = {
          renewedAt: acquiredAt,
          error: undefined,
          ended,
          term: {
            name,
            check: (at) => {
              if (fence.error !== undefined) return fence.error
              const since = at - fence.renewedAt
              return since < renewDeadlineMillis ? undefined : new Term.TermError({
                reason: "DeadlinePassed",
                term: name,
                detail: `last renewal sent ${since} ms ago, renew deadline ${Duration.format(config.renewDeadline)}`
              })
            },
            end: (error) => {
              if (fence.error !== undefined) return
              fence.error = error
              dispatcher.scheduleTask(() => Deferred.doneUnsafe(ended, Exit.void), 0)
            }
          }
        }
        return Effect.succeed(fence)
      })

    const ending = (fence: Fence, reason: Term.TermErrorReason, detail?: string) =>
      Effect.sync(() => fence.term.end(new Term.TermError({ reason, term: fence.term.name, detail })))

    /**
     * Watches the Lease while leading (when the lock can): a holder other than this replica, or a deleted
     * Lease, ends the term at once instead of at the next renewal.
     */
    const watchLease = (fence: Fence): Effect.Effect<void> => {
      const watch = config.lock.watch
      if (watch === undefined) return Effect.void
      return Effect.gen(function*() {
        while (fence.error === undefined) {
          const from = Option.match(observation, { onNone: () => "", onSome: (o) => o.resourceVersion })
          const result = yield* watch(from).pipe(
            Stream.runForEach((change) => {
              // what the watch saw is observed, as a read's answer is: the next attempt does not try a fast
              // renewal over a resourceVersion that is gone (a write sure to fail), and the step-down names
              // the new holder
              if (Option.isNone(change)) {
                observation = Option.none()
                return ending(fence, "LeaseLost", "the Lease was deleted")
              }
              const holder = change.value.record.holderIdentity
              if (holder === identity) return Effect.void
              return Effect.andThen(
                seen(change.value),
                ending(
                  fence,
                  "LeaseLost",
                  holder === "" ? "the Lease was released" : `the Lease is held by ${holder}`
                )
              )
            }),
            Effect.result
          )
          if (Result.isFailure(result)) {
            yield* Effect.logDebug(`watch of lease ${lock.describe} failed: ${result.failure.message}`)
          }
          yield* Effect.sleep(config.retryPeriod)
        }
      })
    }

    /** Leads from a successful attempt sent at `acquiredAt` until the renew deadline runs out or the lease is lost. */
    const lead = (acquiredAt: number) =>
      Effect.gen(function*() {
        term += 1
        const fence = yield* makeFence(term, acquiredAt)
        const scope = yield* Scope.make()
        current = { term, scope, fence }
        yield* emit(Events.Acquired({ term }))
        yield* Metric.update(isLeaderMetric, 1)
        yield* Metric.update(transitions, 1)
        yield* Effect.logInfo(`${identity} became leader of ${lock.describe} (term ${term})`)
        yield* Effect.forkIn(watchLease(fence), scope)
        yield* startWorkers
        const endedEarly = Deferred.await(fence.ended)
        while (fence.error === undefined) {
          yield* Effect.raceFirst(
            Effect.sleep(Duration.millis(leaderSleep(yield* now, fence.renewedAt, config))),
            endedEarly
          )
          if (fence.error !== undefined) break
          const step = leaderStep(yield* now, fence.renewedAt, config)
          if (step._tag === "StepDown") break
          const result = yield* Effect.raceFirst(
            timedAttempt(step.timeout),
            Effect.as(endedEarly, { _tag: "Failed", error: undefined } as Attempt)
          )
          if (fence.error !== undefined) break
          if (result._tag === "Success") {
            fence.renewedAt = result.sentAt
            yield* emit(Events.Renewed())
          } else if (result._tag === "Held") {
            yield* ending(fence, "LeaseLost", `the Lease is held by ${result.leader}`)
          } else {
            yield* Metric.update(renewFailures, 1)
            yield* emit(Events.RenewFailed())
            yield* Effect.logWarning(`failed to renew lease ${lock.describe}: ${describeFailure(result)}`)
          }
        }
        // the deadline, as the fence judges it
        const error = fence.term.check(yield* now) ?? fence.error
        if (error !== undefined) fence.term.end(error)
        const lost = error !== undefined && error.reason === "LeaseLost"
        const reason = lost ? "LeaseLost" : "RenewDeadline"
        const holder = Option.getOrElse(
          Option.flatMap(observation, (o) => Option.some(o.record.holderIdentity)),
          () => ""
        )
        yield* emit(lost ? Events.LeaseLost({ leader: holder === identity ? "" : holder }) : Events.DeadlineReached())
        yield* Metric.update(isLeaderMetric, 0)
        yield* Metric.update(stepDownsBy[reason], 1)
        yield* closeTerm
        yield* emit(Events.WorkStopped())
        yield* Effect.logWarning(
          lost
            ? `${identity} stopped leading ${lock.describe}: ${error.detail ?? error.message}`
            : `${identity} stopped leading ${lock.describe}: ${
              error === undefined || error.reason === "DeadlinePassed"
                ? `failed to renew within ${Duration.format(config.renewDeadline)}`
                : error.message
            }`
        )
      })

    /** client-go's `release`: clears the holder when the record still names this replica. */
    const release = Effect.gen(function*() {
      if (Option.isNone(observation) || observation.value.record.holderIdentity !== identity) return
      for (let tries = 0; tries < 5; tries++) {
        const got = yield* lock.get
        if (Option.isNone(got)) return
        yield* seen(got.value)
        if (got.value.record.holderIdentity !== identity) return
        const result = yield* Effect.result(
          lock.update(releasedRecord(got.value.record, yield* stamp), got.value.resourceVersion)
        )
        if (Result.isSuccess(result)) {
          yield* wrote(result.success)
          yield* Effect.logInfo(`${identity} released lease ${lock.describe}`)
          return
        }
        if (result.failure.reason !== "Conflict") return yield* result.failure
      }
    }).pipe(
      // a finalizer runs uninterruptibly: let the timeout cut a request that hangs
      Effect.interruptible,
      Effect.timeout(config.renewDeadline),
      Effect.catch((error) => Effect.logWarning(`failed to release lease ${lock.describe}: ${error.message}`))
    )

    const shutdown = Effect.gen(function*() {
      const wasLeading = current !== undefined
      yield* emit(Events.ShutdownStarted())
      yield* Metric.update(isLeaderMetric, 0)
      if (wasLeading) yield* Metric.update(stepDownsBy.Shutdown, 1)
      // the work of a graceful shutdown may finish its writes while the fence holds; then it is over
      const fence = current?.fence
      yield* closeTerm
      if (fence !== undefined) yield* ending(fence, "Ended", "the elector stopped")
      yield* emit(Events.WorkStopped())
      if (config.releaseOnCancel) yield* release
      yield* emit(Events.Released())
      yield* Deferred.succeed(stopped, undefined)
    })

    /** After a defect of the loop (a bug, a lock that throws): stop the work at once, as a lost lease. */
    const recover = (cause: Cause.Cause<unknown>) =>
      Effect.gen(function*() {
        yield* Effect.logError("leader election failed; stepping down and campaigning again", cause)
        const wasLeading = current !== undefined
        yield* emit(Events.Failed())
        if (wasLeading) {
          yield* Metric.update(isLeaderMetric, 0)
          yield* Metric.update(stepDownsBy.Failure, 1)
        }
        if (current !== undefined) yield* ending(current.fence, "Ended", "the elector failed")
        yield* closeTerm
        yield* emit(Events.WorkStopped())
        yield* Effect.sleep(config.retryPeriod)
      })

    const annotations = { package: "effect-informers", module: "LeaderElection", election: config.name }
    // the elector's own requests are never fenced by a term (not even one it was started in): a renewal
    // must go out when the term it renews is stale
    yield* Effect.addFinalizer(() => Term.outside(Effect.annotateLogs(shutdown, annotations)))
    yield* Effect.gen(function*() {
      while (true) yield* lead(yield* campaign)
    }).pipe(
      Effect.catchCause((cause) => Cause.hasInterruptsOnly(cause) ? Effect.failCause(cause) : recover(cause)),
      Effect.forever,
      Effect.annotateLogs(annotations),
      Term.outside,
      Effect.forkScoped,
      Effect.interruptible
    )

    const whileLeading = <A, E, R>(work: Effect.Effect<A, E, R>): Effect.Effect<never, E, Exclude<R, Scope.Scope>> =>
      Effect.gen(function*() {
        const context = yield* Effect.context<Exclude<R, Scope.Scope>>()
        const failed = yield* Deferred.make<never, E>()
        // the caller's context, then the term's fence inside it (the terms are a Reference of the context
        // now: provided outside, the caller's context would replace them), whoever starts the work
        const runOnce = (fence: Term.Term) =>
          Effect.scoped(work).pipe(
            Term.within(fence),
            Effect.provide(context),
            Effect.catchCause((cause) =>
              Cause.hasInterruptsOnly(cause) ? Effect.void : Deferred.failCause(failed, cause)
            ),
            Effect.asVoid,
            // started from the uninterruptible registration too: the term's end must be able to stop it
            Effect.interruptible
          )
        const worker: Worker = {
          startedTerm: 0,
          fiber: undefined,
          start: (term, scope, fence) =>
            Effect.suspend(() => {
              if (worker.startedTerm === term) return Effect.void
              worker.startedTerm = term
              return Effect.map(Effect.forkIn(runOnce(fence), scope), (fiber) => {
                worker.fiber = fiber
              })
            })
        }
        return yield* Effect.acquireUseRelease(
          Effect.andThen(
            Effect.sync(() => workers.add(worker)),
            startWorkers
          ),
          () =>
            Effect.raceFirst(
              Deferred.await(failed),
              Effect.andThen(Deferred.await(stopped), Effect.interrupt)
            ),
          () =>
            Effect.suspend(() => {
              workers.delete(worker)
              const fiber = worker.fiber
              worker.fiber = undefined
              return fiber === undefined ? Effect.void : Fiber.interrupt(fiber)
            })
        )
      })

    const service: LeaderElection.Service = {
      identity,
      name: config.name,
      state: SubscriptionRef.get(stateRef),
      // repeats dropped by `sameState` (tag and fields), stated rather than left to structural equality
      changes: Stream.changesWith(SubscriptionRef.changes(stateRef), sameState),
      holder: Effect.sync(() =>
        Option.flatMap(
          observation,
          (o) => o.record.holderIdentity === "" ? Option.none() : Option.some(o.record.holderIdentity)
        )
      ),
      isLeader: Effect.map(SubscriptionRef.get(stateRef), (state) => state._tag === "Leading"),
      whileLeading
    }
    return { service, currentTerm: () => current?.fence.term, stateUnsafe: () => state }
  })

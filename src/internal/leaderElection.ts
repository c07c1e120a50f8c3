/**
 * The elector: client-go's `LeaderElector` as one fiber that campaigns, leads and steps down, driving the
 * state machine of `leaderElectionPolicy.ts`; the work of a term runs in a scope of its own, closed before
 * the renew deadline lets another replica take the lease; the service's scope closes the work, then
 * releases the Lease.
 *
 * @internal
 */
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Metric from "effect/Metric"
import * as Option from "effect/Option"
import * as Random from "effect/Random"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as SubscriptionRef from "effect/SubscriptionRef"
import type { LeaderElection } from "../LeaderElection.js"
import type { Event, Observation, State, Timing, TimingOptions, VersionedRecord } from "./leaderElectionPolicy.js"
import {
  decide,
  Event as Events,
  fastRenewal,
  formatMicroTime,
  initialRecord,
  InvalidConfig,
  jitteredDelay,
  leaderSleep,
  leaderStep,
  observe,
  releasedRecord,
  requestTimeout,
  State as States,
  transition,
  validateTiming,
  validHolder
} from "./leaderElectionPolicy.js"
import type { LeaseLock } from "./leaseLock.js"
import { LockError } from "./leaseLock.js"

// -------------------------------------------------------------------------------------------------
// metrics (client-go's names where client-go has the metric)
// -------------------------------------------------------------------------------------------------

/** @internal */
export const isLeaderGauge = Metric.gauge("leader_election_master_status", {
  description: "1 while this replica leads the election named by `name`, 0 otherwise"
})

/** @internal */
export const transitionsCounter = Metric.counter("effect_informers_leader_election_transitions_total", {
  description: "Times this replica became the leader of the election named by `name`",
  incremental: true
})

/** @internal */
export const renewFailuresCounter = Metric.counter("effect_informers_leader_election_renew_failures_total", {
  description: "Renewals of the leader that failed (each attempt)",
  incremental: true
})

/** @internal */
export const slowPathCounter = Metric.counter("leader_election_slowpath_total", {
  description: "Renewals that had to read the Lease first (client-go's slowpath)",
  incremental: true
})

/** @internal */
export const stepDownsCounter = Metric.counter("effect_informers_leader_election_step_downs_total", {
  description: "Times this replica stopped leading, by reason",
  incremental: true
})

// -------------------------------------------------------------------------------------------------
// options and the service
// -------------------------------------------------------------------------------------------------

/** @internal */
export interface Options extends TimingOptions {
  readonly lock: LeaseLock
  readonly identity: string
  readonly name?: string | undefined
  readonly releaseOnCancel?: boolean | undefined
}

/** @internal */
export interface Config extends Timing {
  readonly lock: LeaseLock
  readonly identity: string
  readonly name: string
  readonly releaseOnCancel: boolean
}

/** @internal */
export const validate = (options: Options): Either.Either<Config, InvalidConfig> =>
  Either.flatMap(validateTiming(options), (timing) =>
    options.identity === ""
      ? Either.left(new InvalidConfig({ message: "Lock identity is empty" }))
      : Either.right({
        ...timing,
        lock: options.lock,
        identity: options.identity,
        name: options.name ?? options.lock.describe,
        releaseOnCancel: options.releaseOnCancel ?? true
      }))

/** The service `make` builds: the public `LeaderElection.Service` (one declaration, documented there). @internal */
export type Service = LeaderElection.Service

interface Worker {
  startedTerm: number
  fiber: Fiber.RuntimeFiber<void> | undefined
  readonly start: (term: number, scope: Scope.Scope) => Effect.Effect<void>
}

type Attempt =
  | { readonly _tag: "Success"; readonly sentAt: number }
  | { readonly _tag: "Held"; readonly leader: string }
  | { readonly _tag: "Failed"; readonly error: LockError | undefined }

// `unsafeCurrentTimeNanos`: TestClock's `currentTimeNanos` throws at an instant that is not whole nanoseconds
const microNow = Effect.clockWith((clock) => Effect.sync(() => formatMicroTime(clock.unsafeCurrentTimeNanos())))

/** @internal */
export const make = (options: Options): Effect.Effect<Service, InvalidConfig, Scope.Scope> =>
  Effect.gen(function*() {
    const config = yield* validate(options)
    const { identity } = config
    // every request is bounded, as client-go bounds its lock client's (max(1 s, renewDeadline / 2))
    const requestMillis = requestTimeout(config)
    const bounded = <A>(verb: string, request: Effect.Effect<A, LockError>) =>
      Effect.timeoutFail(request, {
        duration: Duration.millis(requestMillis),
        onTimeout: () =>
          new LockError({
            reason: "Failed",
            message: `${verb} ${config.lock.describe}: no answer within ${requestMillis} ms`
          })
      })
    const lock: LeaseLock = {
      describe: config.lock.describe,
      get: bounded("get", config.lock.get),
      create: (record) => bounded("create", config.lock.create(record)),
      update: (record, resourceVersion) => bounded("update", config.lock.update(record, resourceVersion))
    }
    const leaseSeconds = Duration.toSeconds(config.leaseDuration)
    const retryMillis = Duration.toMillis(config.retryPeriod)
    const isLeaderMetric = Metric.tagged(isLeaderGauge, "name", config.name)
    const transitions = Metric.tagged(transitionsCounter, "name", config.name)
    const renewFailures = Metric.tagged(renewFailuresCounter, "name", config.name)
    const slowPath = Metric.tagged(slowPathCounter, "name", config.name)
    const stepDowns = Metric.tagged(stepDownsCounter, "name", config.name)
    // every series from the start, at 0 (client-go sets the status to 0 at construction)
    yield* Metric.set(isLeaderMetric, 0)
    for (const counter of [transitions, renewFailures, slowPath]) yield* Metric.incrementBy(counter, 0)
    for (const reason of ["RenewDeadline", "LeaseLost", "Failure", "Shutdown"]) {
      yield* Metric.incrementBy(Metric.tagged(stepDowns, "reason", reason), 0)
    }

    const stateRef = yield* SubscriptionRef.make<State>(States.Acquiring())
    const stopped = yield* Deferred.make<void>()
    const emit = (event: Event) => SubscriptionRef.update(stateRef, (state) => transition(state, event))

    // what this replica last saw of the record: the only thing its decisions are made from
    let observation: Option.Option<Observation> = Option.none()
    let term = 0
    let current: { readonly term: number; readonly scope: Scope.CloseableScope } | undefined
    const workers = new Set<Worker>()

    const stamp = Effect.zipWith(Clock.currentTimeMillis, microNow, (now, time) => ({ now, time }))
    const seen = (fetched: VersionedRecord) =>
      Effect.map(Clock.currentTimeMillis, (now) => {
        observation = Option.some(observe(observation, fetched, now))
      })
    const wrote = (written: VersionedRecord) =>
      Effect.map(Clock.currentTimeMillis, (now) => {
        observation = Option.some({ ...written, observedAt: now })
      })

    /** client-go's `tryAcquireOrRenew`. */
    const attempt: Effect.Effect<Attempt> = Effect.gen(function*() {
      const first = yield* stamp
      const sentAt = first.now
      // 1. the fast path: renew over the resourceVersion we know
      const fast = fastRenewal(identity, observation, leaseSeconds, first)
      if (Option.isSome(fast) && Option.isSome(observation)) {
        const renewed = yield* Effect.either(lock.update(fast.value, observation.value.resourceVersion))
        if (Either.isRight(renewed)) {
          yield* wrote(renewed.right)
          return { _tag: "Success", sentAt } as const
        }
        yield* Effect.logDebug(`fast renewal of ${lock.describe} failed: ${renewed.left.message}`)
      }
      // 2. read
      const got = yield* Effect.either(lock.get)
      if (Either.isLeft(got)) return { _tag: "Failed", error: got.left } as const
      const now = yield* stamp
      if (Option.isNone(got.right)) {
        const created = yield* Effect.either(lock.create(initialRecord(identity, leaseSeconds, now)))
        if (Either.isLeft(created)) return { _tag: "Failed", error: created.left } as const
        yield* wrote(created.right)
        return { _tag: "Success", sentAt } as const
      }
      // 3. observe, 4. and 5. decide
      yield* seen(got.right.value)
      const observed = Option.getOrThrow(observation)
      const decision = decide(identity, observed, leaseSeconds, now)
      if (decision._tag === "Wait") return { _tag: "Held", leader: decision.holder } as const
      if (decision._tag === "Renew") yield* Metric.increment(slowPath)
      const updated = yield* Effect.either(lock.update(decision.record, observed.resourceVersion))
      if (Either.isLeft(updated)) return { _tag: "Failed", error: updated.left } as const
      yield* wrote(updated.right)
      return { _tag: "Success", sentAt } as const
    })

    /** An attempt of the leader: cut at the renew deadline. */
    const timedAttempt = (timeout: number) =>
      attempt.pipe(
        Effect.timeoutTo({
          duration: Duration.millis(timeout),
          onSuccess: (a): Attempt => a,
          onTimeout: (): Attempt => ({ _tag: "Failed", error: undefined })
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
        const now = yield* Clock.currentTimeMillis
        const leader = Option.filter(validHolder(observation, now), (holder) => holder !== identity)
        yield* emit(Events.Observed({ leader }))
        const random = yield* Random.next
        yield* Effect.sleep(Duration.millis(jitteredDelay(retryMillis, config.jitterFactor, random)))
      }
    })

    const closeTerm = Effect.suspend(() => {
      const open = current
      if (open === undefined) return Effect.void
      return Scope.close(open.scope, Exit.void).pipe(
        Effect.zipRight(Effect.sync(() => {
          current = undefined
        }))
      )
    }).pipe(Effect.uninterruptible)

    const startWorkers = Effect.suspend(() => {
      const open = current
      if (open === undefined) return Effect.void
      return Effect.forEach([...workers], (worker) => worker.start(open.term, open.scope), { discard: true })
    })

    /** Leads from a successful attempt sent at `acquiredAt` until the renew deadline runs out or the lease is lost. */
    const lead = (acquiredAt: number) =>
      Effect.gen(function*() {
        term += 1
        current = { term, scope: yield* Scope.make() }
        yield* emit(Events.Acquired({ term }))
        yield* Metric.set(isLeaderMetric, 1)
        yield* Metric.increment(transitions)
        yield* Effect.logInfo(`${identity} became leader of ${lock.describe} (term ${term})`)
        yield* startWorkers
        let renewedAt = acquiredAt
        let lost: Option.Option<string> = Option.none()
        while (true) {
          yield* Effect.sleep(Duration.millis(leaderSleep(yield* Clock.currentTimeMillis, renewedAt, config)))
          const step = leaderStep(yield* Clock.currentTimeMillis, renewedAt, config)
          if (step._tag === "StepDown") break
          const result = yield* timedAttempt(step.timeout)
          if (result._tag === "Success") {
            renewedAt = result.sentAt
            yield* emit(Events.Renewed())
          } else if (result._tag === "Held") {
            lost = Option.some(result.leader)
            break
          } else {
            yield* Metric.increment(renewFailures)
            yield* emit(Events.RenewFailed())
            yield* Effect.logWarning(`failed to renew lease ${lock.describe}: ${describeFailure(result)}`)
          }
        }
        const reason = Option.isSome(lost) ? "LeaseLost" : "RenewDeadline"
        yield* emit(
          Option.match(lost, {
            onNone: () => Events.DeadlineReached(),
            onSome: (leader) => Events.LeaseLost({ leader })
          })
        )
        yield* Metric.set(isLeaderMetric, 0)
        yield* Metric.increment(Metric.tagged(stepDowns, "reason", reason))
        yield* closeTerm
        yield* emit(Events.WorkStopped())
        yield* Effect.logWarning(
          Option.isSome(lost)
            ? `${identity} stopped leading ${lock.describe}: the lease is held by ${lost.value}`
            : `${identity} stopped leading ${lock.describe}: failed to renew within ${
              Duration.format(config.renewDeadline)
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
        const result = yield* Effect.either(
          lock.update(releasedRecord(got.value.record, yield* stamp), got.value.resourceVersion)
        )
        if (Either.isRight(result)) {
          yield* wrote(result.right)
          yield* Effect.logInfo(`${identity} released lease ${lock.describe}`)
          return
        }
        if (result.left.reason !== "Conflict") return yield* result.left
      }
    }).pipe(
      // a finalizer runs uninterruptibly: let the timeout cut a request that hangs
      Effect.interruptible,
      Effect.timeout(config.renewDeadline),
      Effect.catchAll((error) => Effect.logWarning(`failed to release lease ${lock.describe}: ${error.message}`))
    )

    const shutdown = Effect.gen(function*() {
      const wasLeading = current !== undefined
      yield* emit(Events.ShutdownStarted())
      yield* Metric.set(isLeaderMetric, 0)
      if (wasLeading) yield* Metric.increment(Metric.tagged(stepDowns, "reason", "Shutdown"))
      yield* closeTerm
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
          yield* Metric.set(isLeaderMetric, 0)
          yield* Metric.increment(Metric.tagged(stepDowns, "reason", "Failure"))
        }
        yield* closeTerm
        yield* emit(Events.WorkStopped())
        yield* Effect.sleep(config.retryPeriod)
      })

    const annotations = { package: "effect-informers", module: "LeaderElection", election: config.name }
    yield* Effect.addFinalizer(() => Effect.annotateLogs(shutdown, annotations))
    yield* Effect.gen(function*() {
      while (true) yield* lead(yield* campaign)
    }).pipe(
      Effect.catchAllCause((cause) => Cause.isInterruptedOnly(cause) ? Effect.failCause(cause) : recover(cause)),
      Effect.forever,
      Effect.annotateLogs(annotations),
      Effect.forkScoped,
      Effect.interruptible
    )

    const whileLeading = <A, E, R>(work: Effect.Effect<A, E, R>): Effect.Effect<never, E, Exclude<R, Scope.Scope>> =>
      Effect.gen(function*() {
        const context = yield* Effect.context<Exclude<R, Scope.Scope>>()
        const failed = yield* Deferred.make<never, E>()
        const runOnce = Effect.scoped(work).pipe(
          Effect.provide(context),
          Effect.catchAllCause((cause) =>
            Cause.isInterruptedOnly(cause) ? Effect.void : Deferred.failCause(failed, cause)
          ),
          Effect.asVoid,
          // started from the uninterruptible registration too: the term's end must be able to stop it
          Effect.interruptible
        )
        const worker: Worker = {
          startedTerm: 0,
          fiber: undefined,
          start: (term, scope) =>
            Effect.suspend(() => {
              if (worker.startedTerm === term) return Effect.void
              worker.startedTerm = term
              return Effect.map(Effect.forkIn(runOnce, scope), (fiber) => {
                worker.fiber = fiber
              })
            })
        }
        return yield* Effect.acquireUseRelease(
          Effect.zipRight(
            Effect.sync(() => workers.add(worker)),
            startWorkers
          ),
          () =>
            Effect.raceFirst(
              Deferred.await(failed),
              Effect.zipRight(Deferred.await(stopped), Effect.interrupt)
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

    return {
      identity,
      name: config.name,
      state: SubscriptionRef.get(stateRef),
      changes: Stream.changes(stateRef.changes),
      holder: Effect.sync(() =>
        Option.flatMap(
          observation,
          (o) => o.record.holderIdentity === "" ? Option.none() : Option.some(o.record.holderIdentity)
        )
      ),
      isLeader: Effect.map(SubscriptionRef.get(stateRef), (state) => state._tag === "Leading"),
      whileLeading
    }
  })

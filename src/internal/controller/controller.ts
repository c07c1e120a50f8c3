/**
 * The Controller's machinery: predicates, the sources (one mechanism, `watch`, for `for`, `owns` and
 * `watches`: events to keys, also for the sources a running controller adds), read-your-own-writes, `quiet`
 * (the queue settled and every handler caught up), and `make`, which puts the queue, the sources, the
 * workers (./workers.ts: reconcile, requeue, timeout, stop) and their terms together in their shutdown order.
 * `Controller` documents and re-exports it.
 *
 * @internal
 */
import * as Clock from "effect/Clock"
import * as Data from "effect/Data"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as Consistency from "../../Consistency.js"
import type * as Controller from "../../Controller.js"
import { fastMetaNamespaceKey } from "../../Indexer.js"
import type { DeletedObject, KubeObject } from "../../KubeObject.js"
import { unwrapDeleted } from "../../KubeObject.js"
import * as RateLimiter from "../../RateLimiter.js"
import type { Resource } from "../../Resource.js"
import { groupResource } from "../../Resource.js"
import * as Sharding from "../../Sharding.js"
import type { InformerStoppedError, Registration, SharedInformer } from "../../SharedInformer.js"
import * as WorkQueue from "../../WorkQueue.js"
import { behindRegistration } from "../informer/processor.js"
import * as Workers from "./workers.js"
import type { WorkQueueImpl } from "./workQueue.js"
import { make as makeQueue, resumeLater } from "./workQueue.js"

// -------------------------------------------------------------------------------------------------
// requests (the results and `request` are the workers', in ./workers.ts)
// -------------------------------------------------------------------------------------------------

/** @internal */
export const requeueAfter = (delay: Duration.Input): Controller.Result => ({
  _tag: "RequeueAfter",
  delay: Duration.fromInputUnsafe(delay)
})

/** @internal */
export const requestOf = (obj: unknown): Controller.Request | undefined => {
  const key = fastMetaNamespaceKey(obj)
  return key === undefined ? undefined : Workers.request(key)
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
// errors
// -------------------------------------------------------------------------------------------------

/** @internal */
export class ControllerError extends Data.TaggedError("ControllerError")<{
  readonly reason: "CacheSyncTimeout" | "SourceStopped" | "ControllerStopped"
  readonly controller: string
  readonly message: string
}> {}

const stopped = (name: string) => (error: { readonly message: string }): ControllerError =>
  error instanceof ControllerError
    ? error
    : new ControllerError({ reason: "SourceStopped", controller: name, message: `${name}: ${error.message}` })

// -------------------------------------------------------------------------------------------------
// sources: one mechanism for `for`, `owns` and `watches`
// -------------------------------------------------------------------------------------------------

/**
 * The primary keys of an event: of its object `obj` (an add; a delete, whose `obj` may be a tombstone), or
 * of its old and new states (an update: `old` is defined, and its keys come first). An Effect when they
 * must be looked up.
 *
 * @internal
 */
export type KeysOf = (obj: unknown, old: unknown) => ReadonlyArray<string> | Effect.Effect<ReadonlyArray<string>>

/**
 * The queue options of an event's keys: `quiet` for an add from the informer's initial list and for an
 * update that changes nothing (a resync).
 *
 * @internal
 */
export type PriorityOf = (quiet: boolean) => WorkQueue.AddOptions

/**
 * One source of a controller: an informer, the predicates its events must pass, the primary keys of an
 * event and their priority (controller-runtime's `source.Kind(cache, obj, handler, predicates)`, which its
 * builder makes for `For`, `Owns` and `Watches` alike; kube-rs's `trigger_with`).
 *
 * @internal
 */
export interface Trigger<A> {
  /** The handler's name (logs, metrics). */
  readonly name: string
  readonly informer: SharedInformer.Service<A>
  readonly predicates: ReadonlyArray<Controller.Predicate<A>> | undefined
  readonly keys: KeysOf
  readonly priority: PriorityOf
  /** Runs for each key of a delete, before the keys are queued (the primary's: its writes are forgotten). */
  readonly deleted?: ((key: string) => Effect.Effect<void>) | undefined
}

const noKeys: ReadonlyArray<string> = []

/** Events from the initial list and resyncs are queued at `LowPriority`: a fresh event overtakes a backlog. */
const low: WorkQueue.AddOptions = { priority: WorkQueue.LowPriority }
const normal: WorkQueue.AddOptions = {}

/** @internal */
export const lowWhenQuiet: PriorityOf = (quiet) => quiet ? low : normal

const unchanged = (o: unknown, n: unknown) =>
  (o as KubeObject).metadata?.resourceVersion === (n as KubeObject).metadata?.resourceVersion

/**
 * Registers the handler of `trigger` on its informer: each event that passes the predicates queues its
 * keys. (A delete's predicates see the object's last state; a tombstone without one passes.)
 *
 * @internal
 */
export const watch = <A>(
  trigger: Trigger<A>,
  queue: WorkQueue.WorkQueue<string>
): Effect.Effect<Registration, InformerStoppedError> => {
  const { deleted, keys, predicates, priority } = trigger
  const add = (ks: ReadonlyArray<string>, options: WorkQueue.AddOptions): Effect.Effect<void> =>
    ks.length === 0 ? Effect.void : ks.length === 1 ? queue.add(ks[0], options) : queue.addAll(ks, options)
  const enqueue = (
    ks: ReadonlyArray<string> | Effect.Effect<ReadonlyArray<string>>,
    options: WorkQueue.AddOptions
  ): Effect.Effect<void> => Effect.isEffect(ks) ? Effect.flatMap(ks, (all) => add(all, options)) : add(ks, options)
  return trigger.informer.addEventHandler({
    name: trigger.name,
    onAdd: (obj, initial) =>
      passesCreate(predicates, obj) ? enqueue(keys(obj, undefined), priority(initial)) : Effect.void,
    onUpdate: (o, n) => passesUpdate(predicates, o, n) ? enqueue(keys(n, o), priority(unchanged(o, n))) : Effect.void,
    onDelete: (obj) => {
      if (!passesDelete(predicates, unwrapDeleted(obj))) return Effect.void
      const ks = keys(obj, undefined)
      if (deleted === undefined) return enqueue(ks, priority(false))
      const forget = (all: ReadonlyArray<string>) =>
        Effect.andThen(Effect.forEach(all, deleted, { discard: true }), add(all, priority(false)))
      return Effect.isEffect(ks) ? Effect.flatMap(ks, forget) : forget(ks)
    }
  })
}

/**
 * The primary's keys: its object's own (a tombstone's key when its last state is unknown; an update's old
 * and new states have the same key: the new one's).
 *
 * @internal
 */
export const primaryKeys: KeysOf = (obj) => {
  const key = fastMetaNamespaceKey(obj)
  return key === undefined ? noKeys : [key]
}

/**
 * A child's keys: its owners' of the primary's group and kind (the controller reference only, unless
 * `everyOwner`), of both states for an update.
 *
 * @internal
 */
export const ownerKeysOf = (
  primary: { readonly group: string; readonly kind: string; readonly namespaced: boolean },
  everyOwner: boolean
): KeysOf =>
(obj, old) => {
  const into: Array<string> = []
  if (old !== undefined) ownerKeys(old, primary, everyOwner, into)
  ownerKeys(unwrapDeleted(obj as DeletedObject<unknown>), primary, everyOwner, into)
  return into.length > 1 ? Array.from(new Set(into)) : into
}

/**
 * Another resource's keys: `map`'s, of both states for an update, without duplicates. A delete whose last
 * state is unknown has none.
 *
 * @internal
 */
export const mappedKeys = <A>(map: Controller.Watches<A>["map"]): KeysOf => (obj, old) => {
  const into = new Set<string>()
  let pending: Array<Effect.Effect<Iterable<Controller.Request | string>>> | undefined
  const one = (o: unknown) => {
    if (o === undefined) return
    const mapped = map(o as A)
    if (Effect.isEffect(mapped)) (pending ??= []).push(mapped)
    else for (const r of mapped) into.add(keyOf(r))
  }
  one(old)
  one(unwrapDeleted(obj as DeletedObject<unknown>))
  if (pending === undefined) return Array.from(into)
  return Effect.map(Effect.all(pending), (results) => {
    for (const result of results) for (const r of result) into.add(keyOf(r))
    return Array.from(into)
  })
}

/**
 * The trigger of an `owns` (owner keys) or `watches` (`map`'s keys) source of the controller `name`, whose
 * primary resource is `primary`: what `make` registers for each, and `watch` at runtime.
 *
 * @internal
 */
export const sourceTrigger = (
  name: string,
  primary: Resource<unknown>,
  spec: Controller.Owns<any> | Controller.Watches<any>
): Trigger<unknown> =>
  "map" in spec && typeof spec.map === "function"
    ? {
      name: `${name}/watches/${groupResource(spec.source.resource)}`,
      informer: spec.source.informer,
      predicates: spec.predicates,
      keys: mappedKeys(spec.map),
      priority: lowWhenQuiet
    }
    : {
      name: `${name}/owns/${groupResource(spec.source.resource)}`,
      informer: spec.source.informer,
      predicates: spec.predicates,
      keys: ownerKeysOf(primary, (spec as Controller.Owns<unknown>).everyOwner === true),
      priority: lowWhenQuiet
    }

// -------------------------------------------------------------------------------------------------
// read-your-own-writes: the caches of the sources
// -------------------------------------------------------------------------------------------------

const notCached: Effect.Effect<string> = Effect.succeed("")

/**
 * The caches read-your-own-writes reads, by group-resource, each counted by the sources over it (a runtime
 * `watch` adds one and removes it). A group-resource no longer watched is not tracked any more (`has`), and
 * reads as `""` (never behind: KEP-5504's "any other form") for the keys that wrote to it before.
 */
class Caches extends Map<string, Effect.Effect<string>> {
  private readonly counts = new Map<string, number>()

  acquire<X>(source: Controller.Source<X>): string {
    const gr = groupResource(source.resource)
    const count = this.counts.get(gr) ?? 0
    this.counts.set(gr, count + 1)
    if (count === 0) this.set(gr, source.informer.indexer.lastResourceVersion)
    return gr
  }

  release(gr: string): void {
    const count = (this.counts.get(gr) ?? 1) - 1
    if (count > 0) return void this.counts.set(gr, count)
    this.counts.delete(gr)
    this.delete(gr)
  }

  override get(gr: string): Effect.Effect<string> {
    return super.get(gr) ?? notCached
  }
}

// -------------------------------------------------------------------------------------------------
// quiet
// -------------------------------------------------------------------------------------------------

/**
 * Scheduler turns `quiet` waits, with nothing moving, before it believes the controller is quiet: an event a
 * reconcile caused (its write) travels from the API (or the fake) through the Reflector, the DeltaFifo and the
 * informer's processing step to the handler's buffer in a few turns, unseen by the queue and the handlers.
 */
const quietTurns = 16

/**
 * The controller's `quiet`: waits (on signals: the queue's last key done, a handler's last notification
 * handled) until the queue is settled (no key ready, processing or due) and every source's handler has handled
 * every notification it was sent; then lets `quietTurns` scheduler turns pass and checks that nothing moved
 * (the queue's and the handlers' activity stamps, and the state) — else it waits again. A stopped queue is
 * quiet at once.
 */
const makeQuiet = (queue: WorkQueueImpl<string>, live: ReadonlySet<Registration>): Effect.Effect<void> => {
  const settledNow = (): boolean => {
    if (queue.unsafeShuttingDown()) return true
    if (!queue.unsafeSettled()) return false
    for (const registration of live) {
      const listener = behindRegistration(registration)?.listener
      if (listener !== undefined && !listener.settled()) return false
    }
    return true
  }
  const stamp = (): number => {
    let n = queue.unsafeActivity() + live.size
    for (const registration of live) n += behindRegistration(registration)?.listener.offered ?? 0
    return n
  }
  const settled: Effect.Effect<void> = Effect.callback<void>((resume) => {
    if (settledNow()) return resume(Effect.void)
    const cancels: Array<() => void> = []
    let waiting = true
    const cancel = () => {
      waiting = false
      for (const c of cancels) c()
    }
    // (woken from the queue's or a handler's step: resumed after a yield, not inside it)
    const wake = () => {
      if (!waiting) return
      cancel()
      resume(resumeLater(Effect.void))
    }
    cancels.push(queue.unsafeOnSettled(wake))
    for (const registration of live) {
      const listener = behindRegistration(registration)?.listener
      if (listener !== undefined && !listener.settled()) cancels.push(listener.onSettled(wake))
    }
    return Effect.sync(cancel)
  })
  const confirm = (turns: number, before: number): Effect.Effect<void> =>
    turns === 0 ? Effect.void : Effect.andThen(
      Effect.yieldNow,
      Effect.suspend(() =>
        queue.unsafeShuttingDown()
          ? Effect.void
          : settledNow() && stamp() === before
          ? confirm(turns - 1, before)
          : quiet
      )
    )
  const quiet: Effect.Effect<void> = Effect.flatMap(settled, () => Effect.suspend(() => confirm(quietTurns, stamp())))
  return quiet
}

// -------------------------------------------------------------------------------------------------
// make
// -------------------------------------------------------------------------------------------------

const defaultCacheSyncTimeout = Duration.minutes(2)
const defaultShutdownTimeout = Duration.seconds(30)
/** Inside client-go's margin between the renew deadline (10 s) and the lease duration (15 s). */
const defaultStepDownTimeout = Duration.seconds(2)

/** @internal */
export const make = <A, E, R>(
  options: Controller.Options<A, E, R>
): Effect.Effect<Controller.Controller, ControllerError, Scope.Scope | R> =>
  // built in a scope of its own, closed at once when the controller cannot start (its handlers removed,
  // its queue closed), else with the caller's
  Effect.flatMap(Effect.scope, (outer) =>
    Effect.flatMap(Scope.fork(outer, "sequential"), (own) =>
      makeIn(options).pipe(
        Scope.provide(own),
        Effect.onExit((exit) => Exit.isFailure(exit) ? Scope.close(own, exit) : Effect.void)
      )))

/**
 * The controller in the current scope, in four sections, each closed before the one made before it:
 * the queue (made first, closed last), the sources (their handlers removed after the workers stopped),
 * the workers, and their terms (the first to stop: no key is taken any more, the reconciles in progress
 * finish within the deadline, the rest are interrupted).
 */
const makeIn = <A, E, R>(
  options: Controller.Options<A, E, R>
): Effect.Effect<Controller.Controller, ControllerError, Scope.Scope | R> =>
  Effect.gen(function*() {
    const name = options.name
    const scope = yield* Effect.scope

    // ---- the queue: closed last ------------------------------------------------------------------------
    const queue = yield* makeQueue<string>({
      name,
      rateLimiter: options.rateLimiter ?? RateLimiter.defaultController,
      ...(options.fairness === false ? {} : { group: namespaceOf })
    }, RateLimiter.defaultController)

    // ---- the sources: events to keys; their handlers removed when the workers have stopped -------------
    const primary = options.for
    const sources = [...options.owns ?? [], ...options.watches ?? []]
    // read-your-own-writes: the caches of every source
    const caches = new Caches()
    for (const source of [primary, ...sources.map((s) => s.source)]) caches.acquire(source)
    const tracker = options.readYourWrites === false
      ? undefined
      : yield* Consistency.makeTracker({ caches, maxWait: options.readYourWrites?.maxWait })

    const triggers: Array<Trigger<any>> = [
      {
        name: `${name}/for`,
        informer: primary.informer,
        predicates: options.predicates,
        keys: primaryKeys,
        priority: lowWhenQuiet,
        deleted: tracker?.clear
      },
      ...sources.map((spec) => sourceTrigger(name, primary.resource, spec))
    ]
    // the registrations of every source, those `watch` adds at runtime too, removed at the controller's end
    const live = new Set<Registration>()
    let ended = false
    yield* Effect.addFinalizer(() =>
      Effect.suspend(() => {
        ended = true
        const all = Array.from(live)
        live.clear()
        return Effect.forEach(all, (r) => r.remove, { discard: true })
      })
    )
    const registrations: Array<Registration> = []
    for (const trigger of triggers) {
      const registration = yield* Effect.mapError(watch(trigger, queue), stopped(name))
      live.add(registration)
      registrations.push(registration)
    }

    const syncTimeout = Duration.fromInputUnsafe(options.cacheSyncTimeout ?? defaultCacheSyncTimeout)
    const awaitSynced = (of: ReadonlyArray<Registration>) =>
      Effect.forEach(of, (r) => r.synced, { concurrency: "unbounded", discard: true }).pipe(
        Effect.mapError(stopped(name)),
        Effect.timeoutOrElse({
          duration: syncTimeout,
          orElse: () =>
            Effect.fail(
              new ControllerError({
                reason: "CacheSyncTimeout",
                controller: name,
                message: `${name}: the sources did not sync within ${Duration.format(syncTimeout)}`
              })
            )
        })
      )
    yield* awaitSynced(registrations)

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

    // ---- the workers -----------------------------------------------------------------------------------
    const workers = Workers.make<E, R>({
      name,
      queue,
      clock: yield* Clock.Clock,
      context: yield* Effect.context<never>(),
      reconcile: options.reconcile,
      errorPolicy: options.errorPolicy,
      concurrency: Math.max(1, Math.floor(options.concurrency ?? 1)),
      reconcileTimeout: options.reconcileTimeout === undefined
        ? undefined
        : Duration.fromInputUnsafe(options.reconcileTimeout),
      tracker,
      sharding
    })

    // ---- their terms: started last, so that they stop first --------------------------------------------
    const election = options.leaderElection
    if (election === undefined) {
      // one term, the controller's life: its end shuts the queue
      yield* workers.start(scope, Duration.fromInputUnsafe(options.shutdownTimeout ?? defaultShutdownTimeout), true)
    } else {
      // Warm standby: the handlers run and the queue fills on every replica; the workers only while this
      // one leads, each term in a scope of its own, stopped within `stepDownTimeout` when the term ends.
      const stepDown = Duration.fromInputUnsafe(election.stepDownTimeout ?? defaultStepDownTimeout)
      const term = Effect.flatMap(Effect.scope, (termScope) => workers.start(termScope, stepDown, false)).pipe(
        Effect.andThen(Effect.logInfo(`${name}: leading: reconciling`)),
        Effect.andThen(Effect.never)
      )
      yield* Effect.forkIn(election.whileLeading(term), scope)
      yield* Scope.addFinalizer(scope, workers.stop)
    }

    // ---- sources added at runtime ----------------------------------------------------------------------
    const watchAtRuntime = <B>(
      spec: Controller.Owns<B> | Controller.Watches<B>
    ): Effect.Effect<void, ControllerError, Scope.Scope> =>
      Effect.uninterruptibleMask((restore) =>
        Effect.gen(function*() {
          if (ended) {
            return yield* new ControllerError({
              reason: "ControllerStopped",
              controller: name,
              message: `${name}: the controller has stopped: no source can be added`
            })
          }
          const trigger = sourceTrigger(name, primary.resource, spec)
          const registration = yield* Effect.mapError(watch(trigger, queue), stopped(name))
          const gr = caches.acquire(spec.source)
          live.add(registration)
          let removed = false
          const remove = Effect.suspend(() => {
            if (removed) return Effect.void
            removed = true
            live.delete(registration)
            caches.release(gr)
            return registration.remove
          })
          yield* Effect.addFinalizer(() => remove)
          yield* restore(awaitSynced([registration])).pipe(Effect.onError(() => remove))
        })
      )

    return {
      name,
      queue,
      enqueue: (r, addOptions) => queue.add(keyOf(r), addOptions),
      active: workers.active,
      quiet: makeQuiet(queue, live),
      watch: watchAtRuntime
    }
  })

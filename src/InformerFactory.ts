/**
 * The informer factory: one shared informer per resource and scope (namespace, label selector, field
 * selector), started together, awaited together, stopped together. It fixes what client-go's factory
 * gets wrong:
 * - informers are deduplicated by resource *and* scope, and a second request whose options conflict
 *   with the existing informer's (transform, resync period, an index of the same name with another
 *   function) is a typed `InformerOptionsConflictError`, never silently different options (new index
 *   names are simply added to the shared informer);
 * - `shutdown` stops the informers (closing their scopes) and waits for them; it is idempotent;
 * - `waitForCacheSync` does not wait forever for caches that cannot sync: it fails with a `CacheSyncError`
 *   that names, for each informer that did not sync, the last error it saw (a 403 Forbidden, a 404 for a
 *   missing CRD...), when its timeout passes (`reason: "Timeout"`) or, with or without a timeout, as soon
 *   as an informer it waits on stops before it synced (`reason: "Stopped"`: the factory was shut down or
 *   its scope closed; client-go's `WaitForCacheSync` returns false then).
 *
 * Watches come and go while the factory runs, as with controller-runtime's cache (`GetInformer`,
 * `RemoveInformer`): `informerFor` after `start` adds an informer (the next `start` starts it, as
 * client-go's factory does); `removeInformer` stops one and forgets it (a later `informerFor` builds a new
 * one, which lists again); `informerForScoped` removes it when the last scope that asked for it closes.
 * An informer whose resource is gone (a LIST answered 404 NotFound: its CRD was deleted; see `Reflector`'s
 * `stopOnResourceGone`) stops by itself and the factory forgets it too; `status` and `waitForCacheSync`
 * still name it, with its last error, until it is asked for again or removed.
 *
 * `informerFor(Resource.metadataOnly(r))` is a metadata-only informer (`PartialObjectMetadata` objects,
 * client-go's metadata informers), kept apart from `r`'s full informer; `informerFor(Resource.custom(...))`
 * gives the values its `Schema` decodes. An informer's `indexer` and lister are typed with the index names
 * the request gave.
 *
 * By default every informer drops `metadata.managedFields` from its objects (`stripManagedFields: false`
 * keeps them): they are rarely read and often a third of an object's size.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Equal from "effect/Equal"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Result from "effect/Result"
import * as Scope from "effect/Scope"
import * as Semaphore from "effect/Semaphore"
import type * as DeltaFifo from "./DeltaFifo.js"
import type { FieldSelectorParseError } from "./FieldSelector.js"
import * as FieldSelector from "./FieldSelector.js"
import type { Indexers } from "./Indexer.js"
import { metaNamespaceIndexFunction, namespaceIndex } from "./Indexer.js"
import { describeError } from "./internal/informer/reflectorErrors.js"
import type { KubeObject } from "./KubeObject.js"
import type { LabelSelectorParseError } from "./LabelSelector.js"
import * as LabelSelector from "./LabelSelector.js"
import * as Lister from "./Lister.js"
import type { Scope as ListScope } from "./ListerWatcher.js"
import { ListerWatcherSource } from "./ListerWatcher.js"
import type { ReflectorError } from "./Reflector.js"
import type * as Reflector from "./Reflector.js"
import type { Resource } from "./Resource.js"
import { groupResource } from "./Resource.js"
import * as SharedInformer from "./SharedInformer.js"

// -------------------------------------------------------------------------------------------------
// models and errors
// -------------------------------------------------------------------------------------------------

/**
 * What `informerFor` accepts. Namespace and selectors choose the informer; the rest configures it.
 *
 * @since 0.1.0
 * @category models
 */
export interface InformerOptions<A, I extends string = string> {
  /** Defaults to the factory's namespace; `""` means all namespaces. */
  readonly namespace?: string | undefined
  readonly labelSelector?: string | undefined
  readonly fieldSelector?: string | undefined
  /** Applied after the factory's default transform. */
  readonly transform?: ((obj: A) => A) | undefined
  readonly resyncPeriod?: Duration.Input | undefined
  /**
   * Indexes, added to the shared informer's. Their names type the informer's `indexer` and the lister
   * returned for this request (a query by another name does not compile).
   */
  readonly indexers?: Indexers<A, I> | undefined
  /** Reflector settings of this informer (page size, watch-list, backoff...), over the factory's. */
  readonly reflector?: SharedInformer.SharedInformer.Options<A>["reflector"] | undefined
}

/**
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /** Namespace of every informer that does not name one. Defaults to all namespaces. */
  readonly namespace?: string | undefined
  /** Adjusts the selectors of every informer (client-go's `WithTweakListOptions`). */
  readonly tweakListOptions?: ((scope: ListScope) => ListScope) | undefined
  /** Default resync period. Defaults to none. */
  readonly resyncPeriod?: Duration.Input | undefined
  /** Resync period per resource (`resource.group`, e.g. `"deployments.apps"`). */
  readonly customResync?: { readonly [groupResource: string]: Duration.Input } | undefined
  /** Applied to every object of every informer, after managedFields stripping. */
  readonly defaultTransform?: ((obj: KubeObject) => KubeObject) | undefined
  /** Drop `metadata.managedFields` (default `true`). */
  readonly stripManagedFields?: boolean | undefined
  /** Reflector settings for every informer. */
  readonly reflector?: SharedInformer.SharedInformer.Options<KubeObject>["reflector"]
  readonly fifo?: DeltaFifo.Mode | undefined
}

/**
 * A second `informerFor` asked for the same informer with different options.
 *
 * @since 0.1.0
 * @category errors
 */
export class InformerOptionsConflictError extends Data.TaggedError("InformerOptionsConflictError")<{
  readonly informer: string
  readonly option: "transform" | "resyncPeriod" | "indexers" | "reflector"
  readonly detail: string
}> {
  override get message(): string {
    return `informer ${this.informer} already exists with a different ${this.option}: ${this.detail}`
  }
}

/**
 * The factory was shut down.
 *
 * @since 0.1.0
 * @category errors
 */
export class FactoryShutdownError extends Data.TaggedError("FactoryShutdownError")<{}> {
  override get message(): string {
    return "the informer factory has been shut down"
  }
}

/**
 * One informer's sync state.
 *
 * @since 0.1.0
 * @category models
 */
export interface SyncStatus {
  /** e.g. `pods in default`, `deployments.apps (app=web)`. */
  readonly informer: string
  readonly synced: boolean
  /** The last error the informer's Reflector reported. */
  readonly lastError: Option.Option<ReflectorError>
}

/**
 * Some informers did not sync: `reason: "Timeout"`, not within the wait's timeout; `reason: "Stopped"`,
 * an informer waited on stopped before it synced (the factory was shut down or its scope closed, the
 * informer was removed, or its resource is gone), so it never will. The message names each informer that did not sync and the last error it saw.
 *
 * @since 0.1.0
 * @category errors
 */
export class CacheSyncError extends Data.TaggedError("CacheSyncError")<{
  readonly reason: "Timeout" | "Stopped"
  /** The wait's timeout; `Duration.infinity` when it had none. */
  readonly timeout: Duration.Duration
  /** Every informer waited on (those started when the wait began), at the time of the failure. */
  readonly informers: ReadonlyArray<SyncStatus>
}> {
  override get message(): string {
    const unsynced = this.informers.filter((status) => !status.synced).map((status) =>
      Option.match(status.lastError, {
        onNone: () => `${status.informer} (no error seen)`,
        onSome: (error) => `${status.informer} (last error: ${describeError(error)}: ${error.message})`
      })
    )
    return this.reason === "Timeout"
      ? `caches not synced after ${Duration.format(this.timeout)}: ${unsynced.join("; ")}`
      : `caches never synced: informers stopped before they synced: ${unsynced.join("; ")}`
  }
}

/**
 * Errors of `informerFor`.
 *
 * @since 0.1.0
 * @category errors
 */
export type InformerForError =
  | InformerOptionsConflictError
  | LabelSelectorParseError
  | FieldSelectorParseError
  | FactoryShutdownError

/**
 * Errors of `removeInformer`: the options' selectors, which choose the informer, do not parse.
 *
 * @since 0.2.0
 * @category errors
 */
export type RemoveInformerError = LabelSelectorParseError | FieldSelectorParseError

// -------------------------------------------------------------------------------------------------
// service
// -------------------------------------------------------------------------------------------------

/**
 * @since 0.1.0
 */
export declare namespace InformerFactory {
  /**
   * @since 0.1.0
   * @category models
   */
  export interface Service {
    /**
     * The shared informer for `resource` in the scope the options describe, created on first request.
     * `Resource.metadataOnly(r)` has an informer of its own beside `r`'s (and so does each `Resource.custom`
     * value). The informer's `indexer` is typed with the index names of `options.indexers` (and the
     * namespace index); without `indexers`, with any name.
     */
    readonly informerFor: <A extends KubeObject, I extends string = string>(
      resource: Resource<A>,
      options?: InformerOptions<A, I>
    ) => Effect.Effect<SharedInformer.SharedInformer.Service<A, I>, InformerForError>
    /**
     * `informerFor`, for as long as the current scope: when the last scope that asked for the informer this
     * way closes, it is removed as `removeInformer` removes it, unless it was also asked for by
     * `informerFor` (then only `removeInformer` or the factory's shutdown stops it).
     *
     * @since 0.2.0
     */
    readonly informerForScoped: <A extends KubeObject, I extends string = string>(
      resource: Resource<A>,
      options?: InformerOptions<A, I>
    ) => Effect.Effect<SharedInformer.SharedInformer.Service<A, I>, InformerForError, Scope.Scope>
    /**
     * Stops the informer for `resource` in the scope `options` describe (namespace and selectors: the rest
     * is ignored) and forgets it: its Reflector, processing loop and handlers' fibers end (a callback in
     * progress is interrupted), its `synced` fails if it had not synced (`InformerStoppedError`), and the
     * factory holds its cache no more; those who hold the informer see it stopped (`isStopped`,
     * `awaitStop`). A later `informerFor` builds a new informer, which lists again. Succeeds with whether
     * the factory had that informer (an informer forgotten because its resource was gone counts);
     * removing one it does not have does nothing. Waits until the informer's fibers have ended.
     *
     * @since 0.2.0
     */
    readonly removeInformer: <A extends KubeObject>(
      resource: Resource<A>,
      options?: InformerOptions<A, string>
    ) => Effect.Effect<boolean, RemoveInformerError>
    /** A lister over `informerFor(resource, options)`'s cache, typed with the same index names. */
    readonly listerFor: <A extends KubeObject, I extends string = string>(
      resource: Resource<A>,
      options?: InformerOptions<A, I>
    ) => Effect.Effect<Lister.Lister<A, I | typeof namespaceIndex>, InformerForError>
    /** Starts every informer not started yet; call again to start informers created since. */
    readonly start: Effect.Effect<void>
    /**
     * Waits until every informer started so far has synced and returns their statuses (also after a
     * shutdown, if they had all synced). Fails with a `CacheSyncError` naming each informer that did not
     * sync and its last error: `reason: "Stopped"` as soon as one of them stops unsynced (the factory is
     * shut down or its scope closes, it is removed, or its resource is gone; also for a wait that starts
     * after that), with or without a timeout; `reason: "Timeout"` when the timeout passes first. An
     * informer forgotten because its resource is gone counts until it is asked for again or removed.
     */
    readonly waitForCacheSync: (
      options?: { readonly timeout?: Duration.Input | undefined }
    ) => Effect.Effect<ReadonlyArray<SyncStatus>, CacheSyncError>
    /**
     * The sync state of every informer, now; also of those forgotten because their resource is gone (their
     * last error a `NotFound`), until they are asked for again or removed.
     */
    readonly status: Effect.Effect<ReadonlyArray<SyncStatus>>
    /** Stops every informer and waits for them. Idempotent. */
    readonly shutdown: Effect.Effect<void>
  }
}

/**
 * @since 0.1.0
 * @category tags
 */
export class InformerFactory
  extends Context.Service<InformerFactory, InformerFactory.Service>()("effect-informers/InformerFactory")
{}

interface Entry {
  readonly key: string
  readonly name: string
  readonly informer: SharedInformer.SharedInformer.Service<any>
  readonly scope: Scope.Closeable
  readonly transform: ((obj: any) => any) | undefined
  readonly reflector: unknown
  /** The informer's effective resync period in milliseconds (0: none). */
  readonly resyncPeriod: number
  /** Every index of the informer, the built-in namespace index included. */
  readonly indexers: Map<string, unknown>
  lastError: Option.Option<ReflectorError>
  started: boolean
  /** Asked for by `informerFor`: only `removeInformer` (or the shutdown) removes it. */
  pinned: boolean
  /** Open scopes of `informerForScoped` requests for it. */
  holders: number
}

/**
 * Drops `metadata.managedFields`: returns a shallow copy without it, or `obj` itself when it has none.
 * The input is never mutated (a transform's input may be shared, e.g. by an in-memory source).
 *
 * @since 0.1.0
 * @category transforms
 */
export const stripManagedFields = <A extends KubeObject>(obj: A): A => {
  const metadata = obj.metadata as { readonly managedFields?: unknown } | undefined
  if (metadata === undefined || metadata === null || !("managedFields" in metadata)) return obj
  const { managedFields: _, ...rest } = metadata
  return { ...obj, metadata: rest }
}

/**
 * A setting as a duration, if it is one: a `Duration`, a number of milliseconds, a bigint of nanoseconds or
 * a duration string (what Effect 3's `Duration.decodeUnknown` accepted).
 */
const durationOf = (u: unknown): Option.Option<Duration.Duration> =>
  Duration.isDuration(u) || typeof u === "number" || typeof u === "bigint" || typeof u === "string"
    ? Duration.fromInput(u as Duration.Input)
    : Option.none()

const canonical = <A, E>(
  input: string | undefined,
  parse: (s: string) => Result.Result<A, E>,
  format: (a: A) => string
) => {
  if (input === undefined || input.trim() === "") return Result.succeed(undefined)
  return Result.map(parse(input), (parsed) => {
    const formatted = format(parsed)
    return formatted === "" ? undefined : formatted
  })
}

/** `a==b` and `a in (b)` are `a=b`: equivalent selectors share one informer. */
const normalizeLabelSelector = (
  selector: LabelSelector.LabelSelector
): Result.Result<LabelSelector.LabelSelector, LabelSelectorParseError> =>
  selector.requirements.some((r) => r.operator === "DoubleEquals" || (r.operator === "In" && r.values.length === 1))
    ? LabelSelector.fromRequirements(
      selector.requirements.map((r) =>
        r.operator === "DoubleEquals" || (r.operator === "In" && r.values.length === 1)
          ? { key: r.key, operator: "Equals" as const, values: r.values }
          : r
      )
    )
    : Result.succeed(selector)

const parseLabelSelector = (input: string) => Result.flatMap(LabelSelector.parse(input), normalizeLabelSelector)

const describeScope = (resource: Resource<unknown>, scope: ListScope): string => {
  const what = resource.metadataOnly === true ? `${groupResource(resource)} (metadata)` : groupResource(resource)
  const where = scope.namespace === undefined || scope.namespace === ""
    ? resource.namespaced ? " in all namespaces" : ""
    : ` in ${scope.namespace}`
  const selectors = [scope.labelSelector, scope.fieldSelector].filter((s) => s !== undefined).join(", ")
  return `${what}${where}${selectors === "" ? "" : ` (${selectors})`}`
}

/**
 * Builds a factory in the current scope; closing the scope shuts it down.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { InformerFactory, Resource } from "effect-informers"
 *
 * const program = Effect.gen(function*() {
 *   const factory = yield* InformerFactory.InformerFactory
 *   const pods = yield* factory.informerFor(Resource.pods, { namespace: "default" })
 *   yield* pods.addEventHandler({ onAdd: (pod) => Effect.log(`pod ${pod.metadata?.name}`) })
 *   yield* factory.start
 *   yield* factory.waitForCacheSync({ timeout: "30 seconds" })
 * })
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (
  options: Options = {}
): Effect.Effect<InformerFactory.Service, never, Scope.Scope | ListerWatcherSource> =>
  Effect.gen(function*() {
    const source = yield* Effect.service(ListerWatcherSource)
    const factoryScope = yield* Effect.scope
    const entries = new Map<string, Entry>()
    let shutDown = false
    const shutdownDone = yield* Deferred.make<void>()

    /**
     * Whether two option objects say the same: the same keys (absent and `undefined` alike), each value the
     * same value, an equal duration (`"1 minute"` and `60_000`), or equal by `Equal.equals` where both
     * values implement `Equal` (Effect 4's `Equal.equals` would compare any two plain objects field by
     * field: Effect 3's compared them by identity). Functions, schedules and other objects are compared by
     * identity. So a second `informerFor` with an equal literal is no conflict.
     */
    const sameSettings = (a: unknown, b: unknown): boolean => {
      const left = (a ?? {}) as Record<string, unknown>
      const right = (b ?? {}) as Record<string, unknown>
      const keys = new Set([...Object.keys(left), ...Object.keys(right)])
      for (const key of keys) {
        const x = left[key]
        const y = right[key]
        if (x === y || (Equal.isEqual(x) && Equal.isEqual(y) && Equal.equals(x, y))) continue
        const dx = durationOf(x)
        const dy = durationOf(y)
        if (Option.isSome(dx) && Option.isSome(dy) && Duration.equals(dx.value, dy.value)) continue
        return false
      }
      return true
    }

    /**
     * What tells informers of one collection apart beyond their scope: `""` for full objects as parsed,
     * `metadata` for `Resource.metadataOnly`, one id per decode function for `Resource.custom` (two
     * `Resource.custom` values of one collection are two informers; pass the same value to share one).
     */
    const representationIds = new WeakMap<Function, number>()
    let representations = 0
    const representationOf = (resource: Resource<unknown>): string => {
      if (resource.metadataOnly === true) return "metadata"
      const decode = resource.decode
      if (decode === undefined) return ""
      let id = representationIds.get(decode)
      if (id === undefined) {
        id = ++representations
        representationIds.set(decode, id)
      }
      return `decoded-${id}`
    }

    const toMillis = (input: Duration.Input | undefined): number | undefined =>
      input === undefined ? undefined : Duration.toMillis(Duration.fromInputUnsafe(input))
    const defaultResync = toMillis(options.resyncPeriod)
    // informerFor checks for an existing informer, builds one and records it in steps that may yield:
    // concurrent requests for the same informer are serialised so that it is created once.
    const lock = yield* Semaphore.make(1)

    const composeTransform = <A>(own: ((obj: A) => A) | undefined): ((obj: A) => A) | undefined => {
      const steps: Array<(obj: any) => any> = []
      if (options.stripManagedFields !== false) steps.push(stripManagedFields)
      if (options.defaultTransform !== undefined) steps.push(options.defaultTransform)
      if (own !== undefined) steps.push(own)
      if (steps.length === 0) return undefined
      if (steps.length === 1) return steps[0]
      return (obj) => {
        let out = obj
        for (const step of steps) out = step(out)
        return out
      }
    }

    /** Where an informer request points: its key in `entries`, its name, its list scope (canonical selectors). */
    const locate = <A>(
      resource: Resource<A>,
      informerOptions: InformerOptions<A, any>
    ): Effect.Effect<
      { readonly key: string; readonly name: string; readonly scope: ListScope },
      LabelSelectorParseError | FieldSelectorParseError
    > =>
      Effect.gen(function*() {
        let scope: ListScope = {
          namespace: resource.namespaced ? informerOptions.namespace ?? options.namespace ?? "" : "",
          labelSelector: informerOptions.labelSelector,
          fieldSelector: informerOptions.fieldSelector
        }
        if (options.tweakListOptions !== undefined) scope = options.tweakListOptions(scope)
        const labelSelector = yield* Effect.fromResult(
          canonical(scope.labelSelector, parseLabelSelector, LabelSelector.format)
        )
        const fieldSelector = yield* Effect.fromResult(
          canonical(scope.fieldSelector, FieldSelector.parse, FieldSelector.format)
        )
        scope = {
          namespace: scope.namespace === "" ? undefined : scope.namespace,
          labelSelector,
          fieldSelector
        }
        const key = [
          resource.group,
          resource.version,
          resource.resource,
          scope.namespace ?? "",
          labelSelector ?? "",
          fieldSelector ?? "",
          representationOf(resource)
        ].join("|")
        return { key, name: describeScope(resource, scope), scope }
      })

    /**
     * Informers stopped because their resource is gone (a LIST answered 404 NotFound), by key: forgotten (their
     * scopes closed, their caches no longer held), but still named by `status` and `waitForCacheSync` until
     * they are asked for again or removed.
     */
    const gone = new Map<string, SyncStatus>()

    /**
     * Forgets an entry, if it is still the current one (under the lock), then closes its scope (outside it, so
     * that a slow stop holds no other request up). Uninterruptible: once forgotten, the informer is stopped.
     */
    const forget = (entry: Entry, resourceGone: boolean): Effect.Effect<void> =>
      lock.withPermits(1)(Effect.gen(function*() {
        if (entries.get(entry.key) !== entry) return false
        entries.delete(entry.key)
        if (resourceGone) gone.set(entry.key, yield* statusOf(entry))
        return true
      })).pipe(
        Effect.flatMap((forgotten) => forgotten ? Scope.close(entry.scope, Exit.void) : Effect.void),
        Effect.uninterruptible
      )

    /** The entry for a request, made on first request; `scoped`: held by the caller's scope, else pinned. */
    const acquire = <A extends KubeObject, I extends string = string>(
      resource: Resource<A>,
      informerOptions: InformerOptions<A, I>,
      scoped: boolean
    ): Effect.Effect<Entry, InformerForError> =>
      Effect.gen(function*() {
        if (shutDown) return yield* new FactoryShutdownError()
        const { key, name, scope } = yield* locate(resource, informerOptions)
        const resyncPeriod = toMillis(informerOptions.resyncPeriod)
        let existing = entries.get(key)
        // Stopped because its resource is gone, and not forgotten yet: forget it now and build a new one.
        if (existing !== undefined && (yield* existing.informer.isStopped)) {
          entries.delete(key)
          gone.delete(key)
          yield* Scope.close(existing.scope, Exit.void)
          existing = undefined
        }
        if (existing !== undefined) {
          if (informerOptions.transform !== undefined && informerOptions.transform !== existing.transform) {
            return yield* new InformerOptionsConflictError({
              informer: name,
              option: "transform",
              detail: "another transform function was given"
            })
          }
          if (informerOptions.reflector !== undefined && !sameSettings(informerOptions.reflector, existing.reflector)) {
            return yield* new InformerOptionsConflictError({
              informer: name,
              option: "reflector",
              detail: "other reflector settings were given"
            })
          }
          if (resyncPeriod !== undefined && resyncPeriod !== existing.resyncPeriod) {
            return yield* new InformerOptionsConflictError({
              informer: name,
              option: "resyncPeriod",
              detail: `${resyncPeriod}ms requested, ${existing.resyncPeriod}ms in use`
            })
          }
          const added: Record<string, any> = {}
          for (const [indexName, fn] of Object.entries(informerOptions.indexers ?? {})) {
            const current = existing.indexers.get(indexName)
            if (current === undefined) added[indexName] = fn
            else if (current !== fn) {
              return yield* new InformerOptionsConflictError({
                informer: name,
                option: "indexers",
                detail: `index "${indexName}" is registered with another function`
              })
            }
          }
          if (Object.keys(added).length > 0) {
            yield* existing.informer.addIndexers(added).pipe(Effect.orDie)
            for (const [indexName, fn] of Object.entries(added)) existing.indexers.set(indexName, fn)
          }
          if (scoped) existing.holders++
          else existing.pinned = true
          return existing
        }
        const informerScope = yield* Scope.fork(factoryScope, "sequential")
        const lw = source.listerWatcher(resource, scope)
        const effectiveResync = resyncPeriod ?? toMillis(options.customResync?.[groupResource(resource)]) ??
          defaultResync ?? 0
        const entry: Entry = {
          key,
          name,
          informer: undefined as never,
          scope: informerScope,
          transform: informerOptions.transform,
          reflector: informerOptions.reflector,
          resyncPeriod: Math.max(0, effectiveResync),
          indexers: new Map<string, unknown>([
            [namespaceIndex, metaNamespaceIndexFunction],
            ...Object.entries(informerOptions.indexers ?? {})
          ]),
          lastError: Option.none(),
          started: false,
          pinned: !scoped,
          holders: scoped ? 1 : 0
        }
        const informer = yield* SharedInformer.make<A, I>(lw, {
          name,
          resyncPeriod: effectiveResync,
          indexers: informerOptions.indexers,
          transform: composeTransform(informerOptions.transform),
          reflector: { ...options.reflector as Reflector.Options<A>, ...informerOptions.reflector },
          fifo: options.fifo,
          onWatchError: (error) =>
            Effect.sync(() => {
              entry.lastError = Option.some(error)
            })
        }).pipe(Scope.provide(informerScope))
        ;(entry as { informer: SharedInformer.SharedInformer.Service<any> }).informer = informer
        entries.set(key, entry)
        gone.delete(key)
        // Ends when the informer stops; when its resource is gone, the factory forgets it. In the factory's
        // scope, not the informer's, which it closes.
        yield* informer.awaitStop.pipe(
          Effect.flatMap((reason) => reason === "ResourceGone" ? forget(entry, true) : Effect.void),
          Effect.forkIn(factoryScope)
        )
        return entry
      }).pipe(lock.withPermits(1))

    const informerFor = <A extends KubeObject, I extends string = string>(
      resource: Resource<A>,
      informerOptions: InformerOptions<A, I> = {}
    ): Effect.Effect<SharedInformer.SharedInformer.Service<A, I>, InformerForError> =>
      Effect.map(acquire(resource, informerOptions, false), (entry) => entry.informer)

    const informerForScoped = <A extends KubeObject, I extends string = string>(
      resource: Resource<A>,
      informerOptions: InformerOptions<A, I> = {}
    ): Effect.Effect<SharedInformer.SharedInformer.Service<A, I>, InformerForError, Scope.Scope> =>
      Effect.map(
        Effect.acquireRelease(acquire(resource, informerOptions, true), (entry) =>
          Effect.suspend(() => {
            entry.holders--
            return entry.holders > 0 || entry.pinned ? Effect.void : forget(entry, false)
          })),
        (entry) => entry.informer
      )

    const removeInformer = <A extends KubeObject>(
      resource: Resource<A>,
      informerOptions: InformerOptions<A, string> = {}
    ): Effect.Effect<boolean, RemoveInformerError> =>
      Effect.flatMap(locate(resource, informerOptions), ({ key }) =>
        Effect.suspend(() => {
          if (shutDown) return Effect.succeed(false)
          const entry = entries.get(key)
          const wasGone = gone.delete(key)
          return entry === undefined ? Effect.succeed(wasGone) : Effect.as(forget(entry, false), true)
        }))

    const statusOf = (entry: Entry): Effect.Effect<SyncStatus> =>
      Effect.map(
        entry.informer.hasSynced,
        (synced): SyncStatus => ({ informer: entry.name, synced, lastError: entry.lastError })
      )
    /** The statuses of `started` and of the informers forgotten because their resource is gone. */
    const statusesOf = (
      started: ReadonlyArray<Entry>,
      goneNow: ReadonlyArray<SyncStatus>
    ): Effect.Effect<ReadonlyArray<SyncStatus>> =>
      Effect.map(Effect.forEach(started, statusOf), (live) => goneNow.length === 0 ? live : [...live, ...goneNow])
    // Suspended: the entries are read when the status is asked for, not when the factory is built.
    const status = Effect.suspend(() => statusesOf(Array.from(entries.values()), Array.from(gone.values())))

    const service: InformerFactory.Service = {
      informerFor,
      informerForScoped,
      removeInformer,
      listerFor: (resource, informerOptions) =>
        Effect.map(informerFor(resource, informerOptions), (informer) => Lister.make(informer.indexer, resource)),
      start: Effect.suspend(() => {
        if (shutDown) return Effect.void
        const pending = Array.from(entries.values()).filter((entry) => !entry.started)
        return Effect.forEach(pending, (entry) => {
          entry.started = true
          return Effect.ignore(entry.informer.start)
        }, { discard: true })
      }),
      status,
      waitForCacheSync: (waitOptions = {}) =>
        Effect.gen(function*() {
          const started = Array.from(entries.values()).filter((entry) => entry.started)
          // Those forgotten because their resource is gone: one that had not synced never will.
          const goneNow = Array.from(gone.values())
          const timeout = waitOptions.timeout === undefined
            ? Duration.infinity
            : Duration.fromInputUnsafe(waitOptions.timeout)
          if (goneNow.some((status) => !status.synced)) {
            return yield* new CacheSyncError({
              reason: "Stopped",
              timeout,
              informers: yield* statusesOf(started, goneNow)
            })
          }
          // Fails (and stops waiting on the others) at the first informer that stops unsynced.
          const all = Effect.forEach(started, (entry) => entry.informer.synced, {
            concurrency: "unbounded",
            discard: true
          }).pipe(Effect.result)
          const done = waitOptions.timeout === undefined
            ? yield* Effect.asSome(all)
            : yield* Effect.timeoutOption(all, timeout)
          if (Option.isNone(done) || Result.isFailure(done.value)) {
            const informers = yield* statusesOf(started, goneNow)
            const reason = Option.isNone(done) ? "Timeout" : "Stopped"
            return yield* new CacheSyncError({ reason, timeout, informers })
          }
          // The informers waited for: those started when the wait began (and those gone by then).
          return yield* statusesOf(started, goneNow)
        }),
      // Uninterruptible: once marked, the informers are stopped and `shutdownDone` completed.
      shutdown: Effect.suspend(() => {
        if (shutDown) return Deferred.await(shutdownDone)
        // Under the lock: an informerFor in progress finishes (and is stopped below) or sees the flag.
        return lock.withPermits(1)(Effect.sync(() => {
          const first = !shutDown
          shutDown = true
          return first ? Array.from(entries.values()) : undefined
        })).pipe(
          Effect.flatMap((all) =>
            all === undefined ? Deferred.await(shutdownDone) : Effect.forEach(
              all,
              (entry) => Scope.close(entry.scope, Exit.void),
              { concurrency: "unbounded", discard: true }
            ).pipe(Effect.andThen(Deferred.succeed(shutdownDone, undefined)))
          ),
          Effect.uninterruptible
        )
      })
    }
    yield* Effect.addFinalizer(() => service.shutdown)
    return service
  })

/**
 * The factory as a Layer; it needs a `ListerWatcherSource` (HTTP or fake). Releasing the Layer shuts the
 * informers down before anything the source depends on (such as the HTTP client) is released.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (options: Options = {}): Layer.Layer<InformerFactory, never, ListerWatcherSource> =>
  Layer.effect(InformerFactory, make(options))

/**
 * The informer's cache: a keyed store of objects with named, multi-valued indexes (client-go's
 * `ThreadSafeStore` + `Indexer`), and the key functions that name objects.
 *
 * Invariants kept here:
 * - `items` maps each key to exactly one object; `get` is one `Map` lookup.
 * - For every index `I` and every stored key `k`, `k` is in `indices[I][v]` exactly for the values `v`
 *   that `I`'s index function returns for `items[k]`; value sets are never empty (an emptied set is removed).
 * - A write either applies completely or not at all: index functions are evaluated for the new object
 *   before anything changes, so a throwing index function yields a typed `IndexFunctionError` and leaves
 *   the store as it was (client-go panics here).
 * - An update touches only the index entries whose values changed; the values a key is stored under are
 *   remembered, so an update or delete never re-evaluates index functions on the old object.
 * - `lastResourceVersion` is the resourceVersion of the last object written (added, updated or deleted
 *   with its object), of the last `replace`, or of the last bookmark: last write wins, not the maximum.
 *
 * Every mutation is one synchronous step, so readers in other fibers never see a half-applied write.
 *
 * Who writes: a store you build with `make` is yours (`Indexer.Service`: reads and writes). An informer's
 * store is written by its own machinery only; the informer and its listers hand out `Indexer.Reader`, a
 * read-only view. The machinery is in `internal/indexerStore.ts`.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Option from "effect/Option"
import * as Result from "effect/Result"
import * as internal from "./internal/informer/indexerStore.js"
import type { KubeObject } from "./KubeObject.js"
import { DeletedFinalStateUnknown } from "./KubeObject.js"

// -------------------------------------------------------------------------------------------------
// errors
// -------------------------------------------------------------------------------------------------

/**
 * An object could not be given a key (no metadata, no name), or a key could not be split.
 *
 * @since 0.1.0
 * @category errors
 */
export class KeyError extends Data.TaggedError("KeyError")<{
  readonly reason: "MissingMetadata" | "MissingName" | "MalformedKey" | "KeyFunctionFailed"
  readonly message: string
  readonly key?: string | undefined
  readonly cause?: unknown
}> {}

/**
 * An index function threw. The store is unchanged.
 *
 * @since 0.1.0
 * @category errors
 */
export const IndexFunctionError: typeof internal.IndexFunctionError = internal.IndexFunctionError

/**
 * @since 0.1.0
 * @category errors
 */
export type IndexFunctionError = internal.IndexFunctionError

/**
 * A query named an index that does not exist.
 *
 * @since 0.1.0
 * @category errors
 */
export const IndexNotFoundError: typeof internal.IndexNotFoundError = internal.IndexNotFoundError

/**
 * @since 0.1.0
 * @category errors
 */
export type IndexNotFoundError = internal.IndexNotFoundError

/**
 * `addIndexers` was given a name that is already registered.
 *
 * @since 0.1.0
 * @category errors
 */
export const IndexConflictError: typeof internal.IndexConflictError = internal.IndexConflictError

/**
 * @since 0.1.0
 * @category errors
 */
export type IndexConflictError = internal.IndexConflictError

/**
 * Errors a write to the store can fail with.
 *
 * @since 0.1.0
 * @category errors
 */
export type WriteError = KeyError | IndexFunctionError

// -------------------------------------------------------------------------------------------------
// keys
// -------------------------------------------------------------------------------------------------

/**
 * Names an object (or a tombstone) with a string key.
 *
 * @since 0.1.0
 * @category models
 */
export type KeyFunction<A> = (obj: A | DeletedFinalStateUnknown<A>) => Result.Result<string, KeyError>

/**
 * Returns the index values of an object. May return several values (a multi-valued index) or none.
 * A function that throws makes the write fail with `IndexFunctionError`.
 *
 * @since 0.1.0
 * @category models
 */
export type IndexFunction<A> = (obj: A) => ReadonlyArray<string>

/**
 * Named index functions. `I` is the union of their names: a store, informer or lister made with
 * `{ byNode: ... }` is typed with the name `"byNode"` (and the namespace index), so a query by any other
 * name is a compile error. It defaults to `string` (any name, checked at run time with
 * `IndexNotFoundError`).
 *
 * @example
 * ```ts
 * import type { Indexer } from "effect-informers"
 *
 * const byNode: Indexer.Indexers<{ readonly spec?: { readonly nodeName?: string } }, "byNode"> = {
 *   byNode: (pod) => pod.spec?.nodeName === undefined ? [] : [pod.spec.nodeName]
 * }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export type Indexers<A, I extends string = string> = { readonly [K in I]: IndexFunction<A> }

/**
 * The index names of an `Indexers` value: `IndexName<{ byNode: ... }>` is `"byNode"`.
 *
 * @since 0.2.0
 * @category models
 */
export type IndexName<X> = X extends Indexers<any, infer I> ? I : never

/**
 * `namespace/name` for namespaced objects, `name` for cluster-scoped ones (client-go's
 * `MetaNamespaceKeyFunc`). Tombstones are not accepted: use `deletionHandlingMetaNamespaceKey`.
 *
 * @example
 * ```ts
 * import { Result } from "effect"
 * import { Indexer } from "effect-informers"
 *
 * const key = Indexer.metaNamespaceKey({ metadata: { namespace: "default", name: "web" } })
 * console.log(Result.getOrThrow(key)) // "default/web"
 * ```
 *
 * @since 0.1.0
 * @category keys
 */
export const metaNamespaceKey = (obj: unknown): Result.Result<string, KeyError> => {
  const metadata = typeof obj === "object" && obj !== null ? (obj as KubeObject).metadata : undefined
  if (typeof metadata !== "object" || metadata === null) {
    return Result.fail(new KeyError({ reason: "MissingMetadata", message: "object has no metadata" }))
  }
  const name = metadata.name
  if (typeof name !== "string" || name.length === 0) {
    return Result.fail(new KeyError({ reason: "MissingName", message: "object has no metadata.name" }))
  }
  const namespace = metadata.namespace
  return Result.succeed(typeof namespace === "string" && namespace.length > 0 ? namespace + "/" + name : name)
}

/**
 * `deletionHandlingMetaNamespaceKey` without allocating: the key, or `undefined` when the object has no
 * valid name (the Result-returning functions then say why). For hot paths.
 *
 * @since 0.1.0
 * @category keys
 */
export const fastMetaNamespaceKey = (obj: unknown): string | undefined => {
  if (typeof obj !== "object" || obj === null) return undefined
  if (obj instanceof DeletedFinalStateUnknown) return obj.key
  const metadata = (obj as KubeObject).metadata
  if (typeof metadata !== "object" || metadata === null) return undefined
  const name = metadata.name
  if (typeof name !== "string" || name.length === 0) return undefined
  const namespace = metadata.namespace
  return typeof namespace === "string" && namespace.length > 0 ? namespace + "/" + name : name
}

/**
 * Like `metaNamespaceKey`, but a `DeletedFinalStateUnknown` tombstone is named by the key it carries
 * (client-go's `DeletionHandlingMetaNamespaceKeyFunc`). This is the key function of every informer.
 *
 * @since 0.1.0
 * @category keys
 */
export const deletionHandlingMetaNamespaceKey = <A>(
  obj: A | DeletedFinalStateUnknown<A>
): Result.Result<string, KeyError> =>
  obj instanceof DeletedFinalStateUnknown ? Result.succeed(obj.key) : metaNamespaceKey(obj)

/**
 * Splits a key made by `metaNamespaceKey` into namespace (empty for cluster-scoped objects) and name.
 *
 * @example
 * ```ts
 * import { Result } from "effect"
 * import { Indexer } from "effect-informers"
 *
 * console.log(Result.getOrThrow(Indexer.splitMetaNamespaceKey("default/web"))) // { namespace: "default", name: "web" }
 * console.log(Result.isFailure(Indexer.splitMetaNamespaceKey("a/b/c"))) // true
 * ```
 *
 * @since 0.1.0
 * @category keys
 */
export const splitMetaNamespaceKey = (
  key: string
): Result.Result<{ readonly namespace: string; readonly name: string }, KeyError> => {
  const slash = key.indexOf("/")
  if (slash === -1) {
    return key.length > 0
      ? Result.succeed({ namespace: "", name: key })
      : Result.fail(new KeyError({ reason: "MalformedKey", message: "empty key", key }))
  }
  if (key.indexOf("/", slash + 1) !== -1 || slash === key.length - 1) {
    return Result.fail(new KeyError({ reason: "MalformedKey", message: `unexpected key format: "${key}"`, key }))
  }
  return Result.succeed({ namespace: key.slice(0, slash), name: key.slice(slash + 1) })
}

/**
 * The name of the namespace index every informer has.
 *
 * @since 0.1.0
 * @category indexes
 */
export const namespaceIndex = "namespace"

/**
 * Indexes an object by its namespace (`""` for cluster-scoped objects).
 *
 * @since 0.1.0
 * @category indexes
 */
export const metaNamespaceIndexFunction: IndexFunction<KubeObject> = (obj) => [obj.metadata?.namespace ?? ""]

// -------------------------------------------------------------------------------------------------
// service
// -------------------------------------------------------------------------------------------------

/**
 * @since 0.1.0
 */
export declare namespace Indexer {
  /**
   * A read-only view of a store: what an informer hands out (`informer.indexer`, and what its listers read).
   * Only the informer's own machinery writes its store; this view has no write member, and it is a separate
   * object from the store (built once per store), so no cast of it reaches a write. kube-rs's read-only
   * `Store` beside its `Writer`.
   *
   * The Effect members are the API. The `unsafe*` members are synchronous reads for code that already runs
   * inside one synchronous step (listers, a DeltaFifo's `knownObjects`), in the sense of `Queue.unsafeSize`:
   * they read the live store and copy nothing (`unsafeValues` iterates the store itself: do not hold it
   * across a suspension).
   *
   * Objects are shared and immutable: a reader gets the cached object itself.
   *
   * @since 0.1.0
   * @category models
   */
  export interface Reader<A, I extends string = string> {
    readonly keyFunction: KeyFunction<A>
    /** The stored object with the key of `obj`. */
    readonly get: (obj: A) => Effect.Effect<Option.Option<A>, KeyError>
    readonly getByKey: (key: string) => Effect.Effect<Option.Option<A>>
    readonly list: Effect.Effect<ReadonlyArray<A>>
    readonly listKeys: Effect.Effect<ReadonlyArray<string>>
    readonly size: Effect.Effect<number>
    /** The resourceVersion of the last write, replace or bookmark (last write wins, not the maximum). */
    readonly lastResourceVersion: Effect.Effect<string>
    readonly getIndexers: Effect.Effect<Indexers<A>>
    // The queries by index name are methods: a reader typed with index names `I` rejects other names at
    // compile time, and is still accepted wherever a `Reader<A>` (any name) is expected.
    /** Objects sharing any index value with `obj` in index `name`. */
    index(name: I, obj: A): Effect.Effect<ReadonlyArray<A>, IndexNotFoundError | IndexFunctionError>
    /** Keys stored under `value` in index `name`, sorted. */
    indexKeys(name: I, value: string): Effect.Effect<ReadonlyArray<string>, IndexNotFoundError>
    /** Objects stored under `value` in index `name`. */
    byIndex(name: I, value: string): Effect.Effect<ReadonlyArray<A>, IndexNotFoundError>
    /** The values present in index `name` (empty for an unknown index, as in client-go: any name is accepted). */
    readonly listIndexFuncValues: (name: string) => Effect.Effect<ReadonlyArray<string>>

    readonly unsafeGetByKey: (key: string) => A | undefined
    readonly unsafeKeys: () => IterableIterator<string>
    readonly unsafeValues: () => IterableIterator<A>
    readonly unsafeSize: () => number
    unsafeByIndex(name: I, value: string): ReadonlyArray<A> | IndexNotFoundError
    readonly unsafeHasIndex: (name: string) => boolean
  }

  /**
   * A keyed, indexed store you own and write: what `make` returns. Every read of `Reader`, plus the writes
   * (as Effects). Hand others `reader` rather than the service when they should only read. An informer's
   * own store is never handed out as a `Service`: `informer.indexer` is a `Reader`.
   *
   * @since 0.1.0
   * @category models
   */
  export interface Service<A, I extends string = string> extends Reader<A, I> {
    /** A read-only view of this store, built once: the same object at every access. */
    readonly reader: Reader<A, I>
    readonly add: (obj: A) => Effect.Effect<void, WriteError>
    readonly update: (obj: A) => Effect.Effect<void, WriteError>
    /** Deletes by the object's key; a tombstone is accepted. Deleting an absent key does nothing. */
    readonly delete: (obj: A | DeletedFinalStateUnknown<A>) => Effect.Effect<void, KeyError>
    /** Replaces the whole content and rebuilds every index; all or nothing. */
    readonly replace: (items: Iterable<A>, resourceVersion: string) => Effect.Effect<void, WriteError>
    /** Present for parity with client-go's `Store`: a plain store has nothing to resync. */
    readonly resync: Effect.Effect<void>
    /** Records the resourceVersion of a watch bookmark. */
    readonly bookmark: (resourceVersion: string) => Effect.Effect<void>
    /** Adds indexes; existing objects are indexed at once. All or nothing. */
    readonly addIndexers: (indexers: Indexers<A>) => Effect.Effect<void, IndexConflictError | IndexFunctionError>
  }

  /**
   * @since 0.1.0
   * @category models
   */
  export interface Options<A, I extends string = string> {
    /** Defaults to `deletionHandlingMetaNamespaceKey`. */
    readonly keyFunction?: KeyFunction<A> | undefined
    /** The indexes; their names type the store's queries (`I`). */
    readonly indexers?: Indexers<A, I> | undefined
  }
}

/**
 * The Indexer service tag, for apps that share one store of `KubeObject`s through a Layer.
 * Informers build their own typed indexer with `make`.
 *
 * @since 0.1.0
 * @category tags
 */
export class Indexer extends Context.Service<Indexer, Indexer.Service<KubeObject>>()("effect-informers/Indexer") {}

/**
 * Builds an empty indexer, yours to write. To let others read it only, hand them its `reader`. Its
 * queries accept any index name (`addIndexers` may add more later) unless you name them: with
 * `Indexer.make<A, "byNode">({ indexers })`, a query by another name does not compile. (Informers infer
 * the names from their `indexers`; see `SharedInformer.make`.)
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Indexer } from "effect-informers"
 *
 * const program = Effect.gen(function*() {
 *   const indexer = yield* Indexer.make({ indexers: { [Indexer.namespaceIndex]: Indexer.metaNamespaceIndexFunction } })
 *   yield* indexer.add({ metadata: { namespace: "default", name: "web", resourceVersion: "7" } })
 *   const view = indexer.reader // reads only: no add, update, delete, replace
 *   return yield* view.byIndex(Indexer.namespaceIndex, "default")
 * })
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = <A = KubeObject, I extends string = string>(
  options: Indexer.Options<A, NoInfer<I>> = {}
): Effect.Effect<Indexer.Service<A, I>> => Effect.sync(() => unsafeMake<A, I>(options))

/**
 * Builds an empty indexer synchronously.
 *
 * @since 0.1.0
 * @category constructors
 */
export const unsafeMake = <A = KubeObject, I extends string = string>(
  options: Indexer.Options<A, NoInfer<I>> = {}
): Indexer.Service<A, I> =>
  internal.make<A>({
    keyFunction: options.keyFunction ?? deletionHandlingMetaNamespaceKey,
    indexers: options.indexers as Indexers<A> | undefined
  })

/**
 * A Layer providing an `Indexer` of `KubeObject`s with the namespace index plus `indexers`.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (options: Indexer.Options<KubeObject> = {}): Layer.Layer<Indexer> =>
  Layer.sync(Indexer, () =>
    unsafeMake({
      ...options,
      indexers: { [namespaceIndex]: metaNamespaceIndexFunction, ...options.indexers }
    }))

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
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import type { KubeObject } from "./KubeObject.js"
import { DeletedFinalStateUnknown, resourceVersion } from "./KubeObject.js"

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
export class IndexFunctionError extends Data.TaggedError("IndexFunctionError")<{
  readonly index: string
  readonly key: string
  readonly cause: unknown
}> {
  override get message(): string {
    return `index function "${this.index}" failed for "${this.key}": ${String(this.cause)}`
  }
}

/**
 * A query named an index that does not exist.
 *
 * @since 0.1.0
 * @category errors
 */
export class IndexNotFoundError extends Data.TaggedError("IndexNotFoundError")<{
  readonly index: string
}> {
  override get message(): string {
    return `index "${this.index}" does not exist`
  }
}

/**
 * `addIndexers` was given a name that is already registered.
 *
 * @since 0.1.0
 * @category errors
 */
export class IndexConflictError extends Data.TaggedError("IndexConflictError")<{
  readonly indexes: ReadonlyArray<string>
}> {
  override get message(): string {
    return `indexer conflict: ${this.indexes.join(", ")} already registered`
  }
}

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
export type KeyFunction<A> = (obj: A | DeletedFinalStateUnknown<A>) => Either.Either<string, KeyError>

/**
 * Returns the index values of an object. May return several values (a multi-valued index) or none.
 * A function that throws makes the write fail with `IndexFunctionError`.
 *
 * @since 0.1.0
 * @category models
 */
export type IndexFunction<A> = (obj: A) => ReadonlyArray<string>

/**
 * Named index functions.
 *
 * @since 0.1.0
 * @category models
 */
export interface Indexers<A> {
  readonly [name: string]: IndexFunction<A>
}

/**
 * `namespace/name` for namespaced objects, `name` for cluster-scoped ones (client-go's
 * `MetaNamespaceKeyFunc`). Tombstones are not accepted: use `deletionHandlingMetaNamespaceKey`.
 *
 * @example
 * ```ts
 * import { Either } from "effect"
 * import { Indexer } from "effect-informers"
 *
 * const key = Indexer.metaNamespaceKey({ metadata: { namespace: "default", name: "web" } })
 * console.log(Either.getOrThrow(key)) // "default/web"
 * ```
 *
 * @since 0.1.0
 * @category keys
 */
export const metaNamespaceKey = (obj: unknown): Either.Either<string, KeyError> => {
  const metadata = typeof obj === "object" && obj !== null ? (obj as KubeObject).metadata : undefined
  if (typeof metadata !== "object" || metadata === null) {
    return Either.left(new KeyError({ reason: "MissingMetadata", message: "object has no metadata" }))
  }
  const name = metadata.name
  if (typeof name !== "string" || name.length === 0) {
    return Either.left(new KeyError({ reason: "MissingName", message: "object has no metadata.name" }))
  }
  const namespace = metadata.namespace
  return Either.right(typeof namespace === "string" && namespace.length > 0 ? namespace + "/" + name : name)
}

/**
 * `deletionHandlingMetaNamespaceKey` without allocating: the key, or `undefined` when the object has no
 * valid name (the Either-returning functions then say why). For hot paths.
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
): Either.Either<string, KeyError> =>
  obj instanceof DeletedFinalStateUnknown ? Either.right(obj.key) : metaNamespaceKey(obj)

/**
 * Splits a key made by `metaNamespaceKey` into namespace (empty for cluster-scoped objects) and name.
 *
 * @example
 * ```ts
 * import { Either } from "effect"
 * import { Indexer } from "effect-informers"
 *
 * console.log(Either.getOrThrow(Indexer.splitMetaNamespaceKey("default/web"))) // { namespace: "default", name: "web" }
 * console.log(Either.isLeft(Indexer.splitMetaNamespaceKey("a/b/c"))) // true
 * ```
 *
 * @since 0.1.0
 * @category keys
 */
export const splitMetaNamespaceKey = (
  key: string
): Either.Either<{ readonly namespace: string; readonly name: string }, KeyError> => {
  const slash = key.indexOf("/")
  if (slash === -1) {
    return key.length > 0
      ? Either.right({ namespace: "", name: key })
      : Either.left(new KeyError({ reason: "MalformedKey", message: "empty key", key }))
  }
  if (key.indexOf("/", slash + 1) !== -1 || slash === key.length - 1) {
    return Either.left(new KeyError({ reason: "MalformedKey", message: `unexpected key format: "${key}"`, key }))
  }
  return Either.right({ namespace: key.slice(0, slash), name: key.slice(slash + 1) })
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
   * A keyed, indexed store. Effectful methods are the public API; the `unsafe*` methods are their
   * synchronous counterparts for code that already runs inside one synchronous step (the informer's
   * processing loop, listers), in the same sense as `Queue.unsafeOffer`.
   *
   * @since 0.1.0
   * @category models
   */
  export interface Service<A> {
    readonly keyFunction: KeyFunction<A>
    readonly add: (obj: A) => Effect.Effect<void, WriteError>
    readonly update: (obj: A) => Effect.Effect<void, WriteError>
    /** Deletes by the object's key; a tombstone is accepted. Deleting an absent key does nothing. */
    readonly delete: (obj: A | DeletedFinalStateUnknown<A>) => Effect.Effect<void, KeyError>
    readonly get: (obj: A) => Effect.Effect<Option.Option<A>, KeyError>
    readonly getByKey: (key: string) => Effect.Effect<Option.Option<A>>
    readonly list: Effect.Effect<ReadonlyArray<A>>
    readonly listKeys: Effect.Effect<ReadonlyArray<string>>
    readonly size: Effect.Effect<number>
    /** Replaces the whole content and rebuilds every index; all or nothing. */
    readonly replace: (items: Iterable<A>, resourceVersion: string) => Effect.Effect<void, WriteError>
    /** Present for parity with client-go's `Store`: a plain store has nothing to resync. */
    readonly resync: Effect.Effect<void>
    /** Records the resourceVersion of a watch bookmark. */
    readonly bookmark: (resourceVersion: string) => Effect.Effect<void>
    readonly lastResourceVersion: Effect.Effect<string>
    readonly addIndexers: (indexers: Indexers<A>) => Effect.Effect<void, IndexConflictError | IndexFunctionError>
    readonly getIndexers: Effect.Effect<Indexers<A>>
    /** Objects sharing any index value with `obj` in index `name`. */
    readonly index: (name: string, obj: A) => Effect.Effect<ReadonlyArray<A>, IndexNotFoundError | IndexFunctionError>
    /** Keys stored under `value` in index `name`, sorted. */
    readonly indexKeys: (name: string, value: string) => Effect.Effect<ReadonlyArray<string>, IndexNotFoundError>
    readonly byIndex: (name: string, value: string) => Effect.Effect<ReadonlyArray<A>, IndexNotFoundError>
    /** The values present in index `name` (empty for an unknown index, as in client-go). */
    readonly listIndexFuncValues: (name: string) => Effect.Effect<ReadonlyArray<string>>

    readonly unsafeAdd: (key: string, obj: A) => IndexFunctionError | undefined
    readonly unsafeDelete: (key: string, obj: A | DeletedFinalStateUnknown<A> | undefined) => void
    readonly unsafeReplace: (items: Iterable<A>, resourceVersion: string) => WriteError | undefined
    readonly unsafeBookmark: (resourceVersion: string) => void
    readonly unsafeGetByKey: (key: string) => A | undefined
    readonly unsafeKeys: () => IterableIterator<string>
    readonly unsafeValues: () => IterableIterator<A>
    readonly unsafeSize: () => number
    readonly unsafeByIndex: (name: string, value: string) => ReadonlyArray<A> | IndexNotFoundError
    readonly unsafeHasIndex: (name: string) => boolean
  }

  /**
   * @since 0.1.0
   * @category models
   */
  export interface Options<A> {
    /** Defaults to `deletionHandlingMetaNamespaceKey`. */
    readonly keyFunction?: KeyFunction<A> | undefined
    readonly indexers?: Indexers<A> | undefined
  }
}

/**
 * The Indexer service tag, for apps that share one store of `KubeObject`s through a Layer.
 * Informers build their own typed indexer with `make`.
 *
 * @since 0.1.0
 * @category tags
 */
export class Indexer extends Context.Tag("effect-informers/Indexer")<Indexer, Indexer.Service<KubeObject>>() {}

const EMPTY: ReadonlyArray<never> = []

class Index<A> {
  /** value -> keys */
  readonly values = new Map<string, Set<string>>()
  /** key -> the values it is stored under: an update or delete never re-evaluates the old object. */
  readonly byKey = new Map<string, ReadonlyArray<string>>()
  constructor(readonly name: string, readonly fn: IndexFunction<A>) {}

  /** Stores a new `key` under its values. */
  add(key: string, values: ReadonlyArray<string>): void {
    this.byKey.set(key, values)
    this.insert(key, values)
  }

  /** Moves `key` to its new values, touching only the value sets that change. */
  set(key: string, values: ReadonlyArray<string>): void {
    const old = this.byKey.get(key)
    if (old === undefined) return this.add(key, values)
    if (old.length === 1 && values.length === 1 && old[0] === values[0]) return
    this.byKey.set(key, values)
    this.move(key, old, values)
  }

  /** Removes `key` from the index. */
  drop(key: string): void {
    const old = this.byKey.get(key)
    if (old === undefined) return
    this.byKey.delete(key)
    this.remove(key, old)
  }

  /** Adds `key` under each value. */
  private insert(key: string, values: ReadonlyArray<string>): void {
    for (let i = 0; i < values.length; i++) {
      const value = values[i]
      const set = this.values.get(value)
      if (set === undefined) this.values.set(value, new Set([key]))
      else set.add(key)
    }
  }

  /** Removes `key` from each value, dropping emptied sets. */
  private remove(key: string, values: ReadonlyArray<string>): void {
    for (let i = 0; i < values.length; i++) {
      const set = this.values.get(values[i])
      if (set !== undefined && set.delete(key) && set.size === 0) this.values.delete(values[i])
    }
  }

  /** Moves `key` from the old values to the new ones, touching only the values that differ. */
  private move(key: string, oldValues: ReadonlyArray<string>, newValues: ReadonlyArray<string>): void {
    if (oldValues.length === 1 && newValues.length === 1) {
      if (oldValues[0] === newValues[0]) return
      this.remove(key, oldValues)
      this.insert(key, newValues)
      return
    }
    for (let i = 0; i < oldValues.length; i++) {
      if (!newValues.includes(oldValues[i])) this.remove(key, [oldValues[i]])
    }
    for (let i = 0; i < newValues.length; i++) {
      if (!oldValues.includes(newValues[i])) this.insert(key, [newValues[i]])
    }
  }

  /** The index values of `obj`, or the error its index function raised. */
  compute(key: string, obj: A): ReadonlyArray<string> | IndexFunctionError {
    try {
      const values = this.fn(obj)
      return Array.isArray(values) ? values : EMPTY
    } catch (cause) {
      return new IndexFunctionError({ index: this.name, key, cause })
    }
  }
}

const sortedKeys = (set: Set<string> | undefined): ReadonlyArray<string> =>
  set === undefined ? EMPTY : Array.from(set).sort()

class Store<A> implements Indexer.Service<A> {
  private items = new Map<string, A>()
  private indexes: Array<Index<A>> = []
  private rv = ""
  readonly keyFunction: KeyFunction<A>

  constructor(options: Indexer.Options<A>) {
    this.keyFunction = options.keyFunction ?? deletionHandlingMetaNamespaceKey
    if (options.indexers !== undefined) {
      for (const [name, fn] of Object.entries(options.indexers)) this.indexes.push(new Index(name, fn))
    }
  }

  // --- synchronous core ------------------------------------------------------------------------

  readonly unsafeAdd = (key: string, obj: A): IndexFunctionError | undefined => {
    const indexes = this.indexes
    if (indexes.length === 1) {
      // The common case (the namespace index only): no array of computed values.
      const values = indexes[0].compute(key, obj)
      if (values instanceof IndexFunctionError) return values
      this.items.set(key, obj)
      indexes[0].set(key, values)
    } else if (indexes.length > 1) {
      // Evaluate every index function for the new object before changing anything.
      const newValues: Array<ReadonlyArray<string>> = new Array(indexes.length)
      for (let i = 0; i < indexes.length; i++) {
        const values = indexes[i].compute(key, obj)
        if (values instanceof IndexFunctionError) return values
        newValues[i] = values
      }
      this.items.set(key, obj)
      for (let i = 0; i < indexes.length; i++) indexes[i].set(key, newValues[i])
    } else {
      this.items.set(key, obj)
    }
    this.trackResourceVersion(obj)
    return undefined
  }

  readonly unsafeDelete = (key: string, obj: A | DeletedFinalStateUnknown<A> | undefined): void => {
    if (this.items.delete(key)) {
      for (const index of this.indexes) index.drop(key)
    }
    if (obj !== undefined && !(obj instanceof DeletedFinalStateUnknown)) this.trackResourceVersion(obj)
  }

  readonly unsafeReplace = (items: Iterable<A>, resourceVersion: string): WriteError | undefined => {
    const next = new Map<string, A>()
    for (const obj of items) {
      const key = this.keyFunction(obj)
      if (Either.isLeft(key)) return key.left
      next.set(key.right, obj)
    }
    const rebuilt: Array<Index<A>> = []
    for (const index of this.indexes) {
      const fresh = new Index(index.name, index.fn)
      for (const [key, obj] of next) {
        const values = fresh.compute(key, obj)
        if (values instanceof IndexFunctionError) return values
        fresh.add(key, values)
      }
      rebuilt.push(fresh)
    }
    this.items = next
    this.indexes = rebuilt
    this.rv = resourceVersion
    return undefined
  }

  readonly unsafeBookmark = (resourceVersion: string): void => {
    this.rv = resourceVersion
  }

  readonly unsafeGetByKey = (key: string): A | undefined => this.items.get(key)
  readonly unsafeKeys = (): IterableIterator<string> => this.items.keys()
  readonly unsafeValues = (): IterableIterator<A> => this.items.values()
  readonly unsafeSize = (): number => this.items.size
  readonly unsafeHasIndex = (name: string): boolean => this.findIndex(name) !== undefined

  readonly unsafeByIndex = (name: string, value: string): ReadonlyArray<A> | IndexNotFoundError => {
    const index = this.findIndex(name)
    if (index === undefined) return new IndexNotFoundError({ index: name })
    const set = index.values.get(value)
    if (set === undefined) return EMPTY
    const out: Array<A> = []
    for (const key of set) out.push(this.items.get(key)!)
    return out
  }

  private findIndex(name: string): Index<A> | undefined {
    for (const index of this.indexes) if (index.name === name) return index
    return undefined
  }

  /** Objects with metadata set the store's version (`""` when they have none); other values do not. */
  private trackResourceVersion(obj: A): void {
    const metadata = typeof obj === "object" && obj !== null ? (obj as KubeObject).metadata : undefined
    if (typeof metadata !== "object" || metadata === null) return
    this.rv = resourceVersion(obj) ?? ""
  }

  private write(obj: A): Effect.Effect<void, WriteError> {
    return Effect.suspend((): Effect.Effect<void, WriteError> => {
      const key = this.keyFunction(obj)
      if (Either.isLeft(key)) return Effect.fail(key.left)
      const error = this.unsafeAdd(key.right, obj)
      return error === undefined ? Effect.void : Effect.fail(error)
    })
  }

  // --- Effect API --------------------------------------------------------------------------------

  readonly add = (obj: A): Effect.Effect<void, WriteError> => this.write(obj)
  readonly update = (obj: A): Effect.Effect<void, WriteError> => this.write(obj)

  readonly delete = (obj: A | DeletedFinalStateUnknown<A>): Effect.Effect<void, KeyError> =>
    Effect.suspend(() => {
      const key = this.keyFunction(obj)
      if (Either.isLeft(key)) return Effect.fail(key.left)
      this.unsafeDelete(key.right, obj)
      return Effect.void
    })

  readonly get = (obj: A): Effect.Effect<Option.Option<A>, KeyError> =>
    Effect.suspend(() => {
      const key = this.keyFunction(obj)
      return Either.isLeft(key) ? Effect.fail(key.left) : Effect.succeed(Option.fromNullable(this.items.get(key.right)))
    })

  readonly getByKey = (key: string): Effect.Effect<Option.Option<A>> =>
    Effect.sync(() => Option.fromNullable(this.items.get(key)))

  readonly list: Effect.Effect<ReadonlyArray<A>> = Effect.sync(() => Array.from(this.items.values()))
  readonly listKeys: Effect.Effect<ReadonlyArray<string>> = Effect.sync(() => Array.from(this.items.keys()))
  readonly size: Effect.Effect<number> = Effect.sync(() => this.items.size)

  readonly replace = (items: Iterable<A>, resourceVersion: string): Effect.Effect<void, WriteError> =>
    Effect.suspend(() => {
      const error = this.unsafeReplace(items, resourceVersion)
      return error === undefined ? Effect.void : Effect.fail(error)
    })

  readonly resync: Effect.Effect<void> = Effect.void

  readonly bookmark = (resourceVersion: string): Effect.Effect<void> =>
    Effect.sync(() => this.unsafeBookmark(resourceVersion))

  readonly lastResourceVersion: Effect.Effect<string> = Effect.sync(() => this.rv)

  readonly addIndexers = (indexers: Indexers<A>): Effect.Effect<void, IndexConflictError | IndexFunctionError> =>
    Effect.suspend((): Effect.Effect<void, IndexConflictError | IndexFunctionError> => {
      const names = Object.keys(indexers)
      const conflicts = names.filter((name) => this.findIndex(name) !== undefined)
      if (conflicts.length > 0) return Effect.fail(new IndexConflictError({ indexes: conflicts }))
      const added: Array<Index<A>> = []
      for (const name of names) {
        const index = new Index(name, indexers[name])
        for (const [key, obj] of this.items) {
          const values = index.compute(key, obj)
          if (values instanceof IndexFunctionError) return Effect.fail(values)
          index.add(key, values)
        }
        added.push(index)
      }
      this.indexes = [...this.indexes, ...added]
      return Effect.void
    })

  readonly getIndexers: Effect.Effect<Indexers<A>> = Effect.sync(() =>
    Object.fromEntries(this.indexes.map((index) => [index.name, index.fn]))
  )

  readonly index = (
    name: string,
    obj: A
  ): Effect.Effect<ReadonlyArray<A>, IndexNotFoundError | IndexFunctionError> =>
    Effect.suspend((): Effect.Effect<ReadonlyArray<A>, IndexNotFoundError | IndexFunctionError> => {
      const index = this.findIndex(name)
      if (index === undefined) return Effect.fail(new IndexNotFoundError({ index: name }))
      const key = this.keyFunction(obj)
      const values = index.compute(Either.getOrElse(key, () => "<unknown>"), obj)
      if (values instanceof IndexFunctionError) return Effect.fail(values)
      const keys = new Set<string>()
      for (const value of values) {
        const set = index.values.get(value)
        if (set !== undefined) { for (const k of set) keys.add(k) }
      }
      return Effect.succeed(Array.from(keys, (k) => this.items.get(k)!))
    })

  readonly indexKeys = (name: string, value: string): Effect.Effect<ReadonlyArray<string>, IndexNotFoundError> =>
    Effect.suspend(() => {
      const index = this.findIndex(name)
      return index === undefined
        ? Effect.fail(new IndexNotFoundError({ index: name }))
        : Effect.succeed(sortedKeys(index.values.get(value)))
    })

  readonly byIndex = (name: string, value: string): Effect.Effect<ReadonlyArray<A>, IndexNotFoundError> =>
    Effect.suspend(() => {
      const result = this.unsafeByIndex(name, value)
      return result instanceof IndexNotFoundError ? Effect.fail(result) : Effect.succeed(result)
    })

  readonly listIndexFuncValues = (name: string): Effect.Effect<ReadonlyArray<string>> =>
    Effect.sync(() => {
      const index = this.findIndex(name)
      return index === undefined ? EMPTY : Array.from(index.values.keys())
    })
}

/**
 * Builds an empty indexer.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Indexer } from "effect-informers"
 *
 * const program = Effect.gen(function*() {
 *   const indexer = yield* Indexer.make({ indexers: { [Indexer.namespaceIndex]: Indexer.metaNamespaceIndexFunction } })
 *   yield* indexer.add({ metadata: { namespace: "default", name: "web", resourceVersion: "7" } })
 *   return yield* indexer.byIndex(Indexer.namespaceIndex, "default")
 * })
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = <A = KubeObject>(options: Indexer.Options<A> = {}): Effect.Effect<Indexer.Service<A>> =>
  Effect.sync(() => unsafeMake(options))

/**
 * Builds an empty indexer synchronously.
 *
 * @since 0.1.0
 * @category constructors
 */
export const unsafeMake = <A = KubeObject>(options: Indexer.Options<A> = {}): Indexer.Service<A> => new Store(options)

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

/**
 * The machinery of `Indexer`: the keyed store, its indexes, the errors it raises, and the writer
 * interface the informer's controller writes through. `Indexer.ts` holds the types, the invariants and
 * the documentation, and re-exports the errors; the store's invariants are stated there.
 *
 * Three faces of one store:
 * - `IndexerStore<A>` (here, internal): the public `Indexer.Service` plus the synchronous writes
 *   (`unsafeAdd`, `unsafeDelete`, `unsafeReplace`, `unsafeBookmark`) that the informer's controller applies
 *   a batch with, in one synchronous step. It is the store object itself: no indirection on the hot path.
 * - `Indexer.Service<A>`: what `Indexer.make` returns to a user who builds a store of their own (theirs to
 *   write): the Effect writes and every read.
 * - `Indexer.Reader<A>`: the store's `reader`, a separate frozen object built once with the read members
 *   only. It is what an informer hands out (`informer.indexer`, listers): it holds no reference to the
 *   store an outside caller can reach, so no cast of it writes the cache (kube-rs's `Store` beside its
 *   `Writer`).
 *
 * Lives here, not in `Indexer.ts`, so that the informer's machinery can get the writer while the public
 * module offers only the service and the view; the errors live here so that the store raises them
 * without importing the public module that imports it (no import cycle).
 *
 * @internal
 */
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Result from "effect/Result"
import type { Indexer, Indexers, IndexFunction, KeyError, KeyFunction, WriteError } from "../../Indexer.js"
import type { KubeObject } from "../../KubeObject.js"
import { DeletedFinalStateUnknown, resourceVersion } from "../../KubeObject.js"

// -------------------------------------------------------------------------------------------------
// errors (re-exported and documented by Indexer.ts)
// -------------------------------------------------------------------------------------------------

/** @internal */
export class IndexFunctionError extends Data.TaggedError("IndexFunctionError")<{
  readonly index: string
  readonly key: string
  readonly cause: unknown
}> {
  override get message(): string {
    return `index function "${this.index}" failed for "${this.key}": ${String(this.cause)}`
  }
}

/** @internal */
export class IndexNotFoundError extends Data.TaggedError("IndexNotFoundError")<{
  readonly index: string
}> {
  override get message(): string {
    return `index "${this.index}" does not exist`
  }
}

/** @internal */
export class IndexConflictError extends Data.TaggedError("IndexConflictError")<{
  readonly indexes: ReadonlyArray<string>
}> {
  override get message(): string {
    return `indexer conflict: ${this.indexes.join(", ")} already registered`
  }
}

// -------------------------------------------------------------------------------------------------
// the writer
// -------------------------------------------------------------------------------------------------

/**
 * The store as its owner writes it: the public service plus the synchronous writes, for code that already
 * runs inside one synchronous step (the informer's controller applying a batch). They return the error
 * instead of failing.
 *
 * @internal
 */
export interface IndexerStore<A> extends Indexer.Service<A> {
  /** Adds or updates `obj` under `key` (already computed); all or nothing. */
  readonly unsafeAdd: (key: string, obj: A) => IndexFunctionError | undefined
  /** Deletes `key`; `obj` (when an object, not a tombstone) sets the store's resourceVersion. */
  readonly unsafeDelete: (key: string, obj: A | DeletedFinalStateUnknown<A> | undefined) => void
  /** Replaces the whole content and rebuilds every index; all or nothing. */
  readonly unsafeReplace: (items: Iterable<A>, resourceVersion: string) => WriteError | undefined
  readonly unsafeBookmark: (resourceVersion: string) => void
}

/** `Indexer.Options`, with the key function chosen by the caller. @internal */
export interface StoreOptions<A> extends Indexer.Options<A> {
  readonly keyFunction: KeyFunction<A>
}

/** Shared by every empty answer; frozen, since it reaches callers. */
const EMPTY: ReadonlyArray<never> = Object.freeze([])

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

class Store<A> implements IndexerStore<A> {
  private items = new Map<string, A>()
  private indexes: Array<Index<A>> = []
  private rv = ""
  readonly keyFunction: KeyFunction<A>
  /** Built once, in the constructor, from the read members (all bound: they are arrow-function fields). */
  readonly reader: Indexer.Reader<A>

  constructor(options: StoreOptions<A>) {
    this.keyFunction = options.keyFunction
    if (options.indexers !== undefined) {
      for (const [name, fn] of Object.entries(options.indexers)) this.indexes.push(new Index(name, fn))
    }
    // After the field initialisers: every member below exists. A plain frozen object holding the read
    // functions, which close over the store without exposing it.
    const reader: Indexer.Reader<A> = {
      keyFunction: this.keyFunction,
      get: this.get,
      getByKey: this.getByKey,
      list: this.list,
      listKeys: this.listKeys,
      size: this.size,
      lastResourceVersion: this.lastResourceVersion,
      getIndexers: this.getIndexers,
      index: this.index,
      indexKeys: this.indexKeys,
      byIndex: this.byIndex,
      listIndexFuncValues: this.listIndexFuncValues,
      unsafeGetByKey: this.unsafeGetByKey,
      unsafeKeys: this.unsafeKeys,
      unsafeValues: this.unsafeValues,
      unsafeSize: this.unsafeSize,
      unsafeByIndex: this.unsafeByIndex,
      unsafeHasIndex: this.unsafeHasIndex
    }
    this.reader = Object.freeze(reader)
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
      if (Result.isFailure(key)) return key.failure
      next.set(key.success, obj)
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
      if (Result.isFailure(key)) return Effect.fail(key.failure)
      const error = this.unsafeAdd(key.success, obj)
      return error === undefined ? Effect.void : Effect.fail(error)
    })
  }

  // --- Effect API --------------------------------------------------------------------------------

  readonly add = (obj: A): Effect.Effect<void, WriteError> => this.write(obj)
  readonly update = (obj: A): Effect.Effect<void, WriteError> => this.write(obj)

  readonly delete = (obj: A | DeletedFinalStateUnknown<A>): Effect.Effect<void, KeyError> =>
    Effect.suspend(() => {
      const key = this.keyFunction(obj)
      if (Result.isFailure(key)) return Effect.fail(key.failure)
      this.unsafeDelete(key.success, obj)
      return Effect.void
    })

  readonly get = (obj: A): Effect.Effect<Option.Option<A>, KeyError> =>
    Effect.suspend(() => {
      const key = this.keyFunction(obj)
      return Result.isFailure(key)
        ? Effect.fail(key.failure)
        : Effect.succeed(Option.fromNullishOr(this.items.get(key.success)))
    })

  readonly getByKey = (key: string): Effect.Effect<Option.Option<A>> =>
    Effect.sync(() => Option.fromNullishOr(this.items.get(key)))

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
      const values = index.compute(Result.getOrElse(key, () => "<unknown>"), obj)
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
 * An empty store with its writer interface. `Indexer.make` hands the same object to users as the public
 * service; the informer keeps it and hands out `store.reader`.
 *
 * @internal
 */
export const make = <A>(options: StoreOptions<A>): IndexerStore<A> => new Store(options)

/**
 * An in-memory ListerWatcher for tests (client-go's `FakeControllerSource`, and more). Objects live in a
 * map with one global integer resourceVersion; every change is recorded in a bounded history that
 * watches replay from, so watching from a compacted version fails with `Gone`. Changes can be made
 * without emitting watch events ("drop watch" variants) to model lost events; `resetWatch` closes every
 * watch and forgets history, forcing a relist. Failures can be scripted, and every request is recorded so
 * tests can assert the options a Reflector sent.
 *
 * Everything is in memory and never sleeps, so tests drive time with `TestClock`.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Mailbox from "effect/Mailbox"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import * as FieldSelector from "./FieldSelector.js"
import { metaNamespaceKey } from "./Indexer.js"
import type { KubeObject } from "./KubeObject.js"
import * as LabelSelector from "./LabelSelector.js"
import type {
  ListerWatcherError,
  ListOptions,
  ListPage,
  Scope as ListerWatcherScope,
  WatchEvent,
  WatchOptions
} from "./ListerWatcher.js"
import { Gone, ListerWatcher, ListerWatcherSource, ResourceVersionTooLarge, ServerError } from "./ListerWatcher.js"
import type { Resource } from "./Resource.js"
import { groupResource } from "./Resource.js"
import { initialEventsEndAnnotation } from "./Wire.js"

/**
 * A request the fake received.
 *
 * @since 0.1.0
 * @category models
 */
export type Request =
  | { readonly _tag: "List"; readonly options: ListOptions }
  | { readonly _tag: "Watch"; readonly options: WatchOptions }

/**
 * @since 0.1.0
 */
export declare namespace FakeListerWatcher {
  /**
   * The fake: a `ListerWatcher.Service` plus controls.
   *
   * @since 0.1.0
   * @category models
   */
  export interface Service<A> extends ListerWatcher.Service<A> {
    /** Stores `obj` with the next resourceVersion and emits ADDED; returns the stored object. */
    readonly add: (obj: A) => Effect.Effect<A>
    readonly modify: (obj: A) => Effect.Effect<A>
    readonly delete: (obj: A) => Effect.Effect<A>
    /** Like `add`, without a watch event (and not replayable): a lost event. */
    readonly addDropWatch: (obj: A) => Effect.Effect<A>
    readonly modifyDropWatch: (obj: A) => Effect.Effect<A>
    readonly deleteDropWatch: (obj: A) => Effect.Effect<A>
    /** Ends every open watch and forgets history: watches fail with `Gone` until the next list (a relist). */
    readonly resetWatch: Effect.Effect<void>
    /** Ends every open watch normally (as a server-side timeout does). */
    readonly closeWatches: Effect.Effect<void>
    /** Fails every open watch with `error` (as a watch `ERROR` event does). */
    readonly failWatches: (error: ListerWatcherError) => Effect.Effect<void>
    /** Sends a bookmark at the current resourceVersion to every open watch that allows bookmarks. */
    readonly bookmark: Effect.Effect<void>
    /** The next `times` lists fail with `error`. */
    readonly failNextList: (error: ListerWatcherError, times?: number) => Effect.Effect<void>
    /** The next `times` watch requests fail with `error`. */
    readonly failNextWatch: (error: ListerWatcherError, times?: number) => Effect.Effect<void>
    /** The next watch ends after delivering `events` events. */
    readonly endNextWatchAfter: (events: number) => Effect.Effect<void>
    /** Continue tokens issued so far stop working (`Gone`). */
    readonly expireContinueTokens: Effect.Effect<void>
    readonly requests: Effect.Effect<ReadonlyArray<Request>>
    readonly clearRequests: Effect.Effect<void>
    readonly resourceVersion: Effect.Effect<string>
    readonly objects: Effect.Effect<ReadonlyArray<A>>
    readonly openWatches: Effect.Effect<number>
  }

  /**
   * @since 0.1.0
   * @category models
   */
  export interface Options<A> {
    /** Events kept for replay. Defaults to 1000. */
    readonly historySize?: number | undefined
    /**
     * How watch-list requests (`sendInitialEvents=true`) are answered: `"serve"` (default), `"reject"`
     * (422 Invalid, as a server without the feature), or `"ignore"` (the parameter is ignored, as by old
     * servers: initial ADDED events but no end bookmark).
     */
    readonly watchList?: "serve" | "reject" | "ignore" | undefined
    /** What the fake reports as `supportsWatchList`. Defaults to `undefined` (unknown). */
    readonly supportsWatchList?: boolean | undefined
    /** The fake's `description`. Defaults to `"fake"`. */
    readonly description?: string | undefined
    /** Objects present at start (each gets its own resourceVersion). */
    readonly initial?: Iterable<A> | undefined
  }
}

/**
 * The tag of the fake's controls, provided by `layer` next to the `ListerWatcher` it implements.
 *
 * @since 0.1.0
 * @category tags
 */
export class FakeListerWatcher extends Context.Tag("effect-informers/FakeListerWatcher")<
  FakeListerWatcher,
  FakeListerWatcher.Service<KubeObject>
>() {}

interface Watcher<A> {
  readonly mailbox: Mailbox.Mailbox<WatchEvent<A>, ListerWatcherError>
  readonly bookmarks: boolean
  remaining: number
}

interface Recorded<A> {
  readonly rv: number
  readonly event: WatchEvent<A>
}

const keyOf = (obj: unknown): string => {
  const key = metaNamespaceKey(obj)
  if (Either.isLeft(key)) throw new Error(`FakeListerWatcher: ${key.left.message}`)
  return key.right
}

const withResourceVersion = <A>(obj: A, rv: number): A => {
  const o = obj as KubeObject
  return { ...o, metadata: { ...o.metadata, resourceVersion: String(rv) } } as A
}

const bookmarkEvent = <A>(rv: number, end: boolean): WatchEvent<A> => ({
  type: "BOOKMARK",
  object: {
    metadata: {
      resourceVersion: String(rv),
      ...(end ? { annotations: { [initialEventsEndAnnotation]: "true" } } : {})
    }
  }
})

/**
 * Builds a fake.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { FakeListerWatcher } from "effect-informers"
 *
 * const program = Effect.gen(function*() {
 *   const fake = yield* FakeListerWatcher.make()
 *   yield* fake.add({ metadata: { namespace: "default", name: "web" } })
 *   const page = yield* fake.list({})
 *   console.log(page.items.length, page.resourceVersion) // 1 "1"
 * })
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = <A = KubeObject>(
  options: FakeListerWatcher.Options<A> = {}
): Effect.Effect<FakeListerWatcher.Service<A>> => Effect.sync(() => unsafeMake(options))

/**
 * Builds a fake synchronously.
 *
 * @since 0.1.0
 * @category constructors
 */
export const unsafeMake = <A = KubeObject>(
  options: FakeListerWatcher.Options<A> = {}
): FakeListerWatcher.Service<A> => {
  const historySize = options.historySize ?? 1000
  const items = new Map<string, A>()
  const history: Array<Recorded<A>> = []
  const watchers = new Set<Watcher<A>>()
  const requests: Array<Request> = []
  const snapshots = new Map<string, { readonly items: ReadonlyArray<A>; readonly rv: number }>()
  let rv = 0
  /** Watching from a version below this one is `Gone`. */
  let oldestReplayable = 0
  let listFailures: Array<ListerWatcherError> = []
  let watchFailures: Array<ListerWatcherError> = []
  let nextWatchLimit: number | undefined
  /** Set by `resetWatch`: every watch fails with Gone until a list, as after a real history reset. */
  let goneUntilList = false
  let snapshotCounter = 0

  const deliver = (watcher: Watcher<A>, event: WatchEvent<A>): void => {
    watcher.mailbox.unsafeOffer(event)
    if (event.type !== "BOOKMARK" && watcher.remaining > 0 && --watcher.remaining === 0) {
      watcher.mailbox.unsafeDone(Exit.void)
      watchers.delete(watcher)
    }
  }

  const change = (type: "ADDED" | "MODIFIED" | "DELETED", obj: A, emit: boolean): A => {
    const key = keyOf(obj)
    rv++
    const stored = withResourceVersion(obj, rv)
    if (type === "DELETED") items.delete(key)
    else items.set(key, stored)
    if (!emit) return stored
    const event: WatchEvent<A> = { type, object: stored }
    history.push({ rv, event })
    if (history.length > historySize) oldestReplayable = history.shift()!.rv
    for (const watcher of watchers) deliver(watcher, event)
    return stored
  }

  const endAll = (exit: Exit.Exit<void, ListerWatcherError>): void => {
    for (const watcher of watchers) watcher.mailbox.unsafeDone(exit)
    watchers.clear()
  }

  for (const obj of options.initial ?? []) change("ADDED", obj, true)

  const sorted = (): ReadonlyArray<A> =>
    Array.from(items.entries()).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, obj]) => obj)

  const list = (listOptions: ListOptions): Effect.Effect<ListPage<A>, ListerWatcherError> =>
    Effect.suspend(() => {
      requests.push({ _tag: "List", options: listOptions })
      goneUntilList = false
      if (listFailures.length > 0) return Effect.fail(listFailures.shift()!)
      let snapshot: { readonly items: ReadonlyArray<A>; readonly rv: number }
      let offset = 0
      let snapshotId: string
      if (listOptions.continue !== undefined && listOptions.continue !== "") {
        const [id, at] = listOptions.continue.split(":")
        const found = snapshots.get(id)
        if (found === undefined) {
          return Effect.fail(new Gone({ message: "The provided continue parameter is too old" }))
        }
        snapshot = found
        snapshotId = id
        offset = Number(at)
      } else {
        const requested = listOptions.resourceVersion
        if (requested !== undefined && /^\d+$/.test(requested) && Number(requested) > rv) {
          return Effect.fail(
            new ResourceVersionTooLarge({ message: `Too large resource version: ${requested}, current: ${rv}` })
          )
        }
        snapshot = { items: sorted(), rv }
        snapshotId = String(++snapshotCounter)
      }
      const limit = listOptions.limit !== undefined && listOptions.limit > 0 ? listOptions.limit : Infinity
      const page = snapshot.items.slice(offset, offset + limit)
      const next = offset + page.length
      const more = next < snapshot.items.length
      if (more) snapshots.set(snapshotId, snapshot)
      return Effect.succeed({
        items: page,
        resourceVersion: String(snapshot.rv),
        continue: more ? `${snapshotId}:${next}` : undefined,
        remainingItemCount: more ? snapshot.items.length - next : undefined
      })
    })

  const watch = (watchOptions: WatchOptions): Stream.Stream<WatchEvent<A>, ListerWatcherError> =>
    Stream.unwrapScoped(Effect.gen(function*() {
      requests.push({ _tag: "Watch", options: watchOptions })
      if (watchFailures.length > 0) return Stream.fail(watchFailures.shift()!)
      if (goneUntilList) return Stream.fail(new Gone({ message: "watch history was reset: relist" }))
      const watchList = options.watchList ?? "serve"
      if (watchOptions.sendInitialEvents === true && watchList === "reject") {
        return Stream.fail(
          new ServerError({ message: "sendInitialEvents is forbidden for watch", code: 422, reason: "Invalid" })
        )
      }
      const sendInitialEvents = watchOptions.sendInitialEvents === true && watchList === "serve"
      const requested = watchOptions.resourceVersion ?? ""
      const initial: Array<WatchEvent<A>> = []
      if (sendInitialEvents || requested === "" || requested === "0") {
        for (const obj of sorted()) initial.push({ type: "ADDED", object: obj })
        if (sendInitialEvents) initial.push(bookmarkEvent(rv, true))
      } else {
        const from = Number(requested)
        if (!Number.isFinite(from)) {
          return Stream.fail(new Gone({ message: `invalid resource version "${requested}"` }))
        }
        if (from > rv) {
          return Stream.fail(new ResourceVersionTooLarge({ message: `Too large resource version: ${from}` }))
        }
        if (from < oldestReplayable) {
          return Stream.fail(new Gone({ message: `too old resource version: ${from} (${oldestReplayable})` }))
        }
        for (const recorded of history) if (recorded.rv > from) initial.push(recorded.event)
      }
      const mailbox = yield* Mailbox.make<WatchEvent<A>, ListerWatcherError>()
      const watcher: Watcher<A> = {
        mailbox,
        bookmarks: watchOptions.allowWatchBookmarks === true,
        remaining: nextWatchLimit ?? 0
      }
      nextWatchLimit = undefined
      watchers.add(watcher)
      yield* Effect.addFinalizer(() => Effect.sync(() => watchers.delete(watcher)))
      for (const event of initial) {
        if (!watchers.has(watcher)) break
        deliver(watcher, event)
      }
      return Mailbox.toStream(mailbox)
    }))

  const fake: FakeListerWatcher.Service<A> = {
    list,
    watch,
    supportsWatchList: options.supportsWatchList,
    description: options.description ?? "fake",
    add: (obj) => Effect.sync(() => change("ADDED", obj, true)),
    modify: (obj) => Effect.sync(() => change("MODIFIED", obj, true)),
    delete: (obj) => Effect.sync(() => change("DELETED", obj, true)),
    addDropWatch: (obj) => Effect.sync(() => change("ADDED", obj, false)),
    modifyDropWatch: (obj) => Effect.sync(() => change("MODIFIED", obj, false)),
    deleteDropWatch: (obj) => Effect.sync(() => change("DELETED", obj, false)),
    resetWatch: Effect.sync(() => {
      endAll(Exit.void)
      history.length = 0
      oldestReplayable = rv
      goneUntilList = true
    }),
    closeWatches: Effect.sync(() => endAll(Exit.void)),
    failWatches: (error) => Effect.sync(() => endAll(Exit.fail(error))),
    bookmark: Effect.sync(() => {
      for (const watcher of watchers) if (watcher.bookmarks) deliver(watcher, bookmarkEvent(rv, false))
    }),
    failNextList: (error, times = 1) =>
      Effect.sync(() => {
        listFailures = [...listFailures, ...Array.from({ length: times }, () => error)]
      }),
    failNextWatch: (error, times = 1) =>
      Effect.sync(() => {
        watchFailures = [...watchFailures, ...Array.from({ length: times }, () => error)]
      }),
    endNextWatchAfter: (events) =>
      Effect.sync(() => {
        nextWatchLimit = Math.max(1, events)
      }),
    expireContinueTokens: Effect.sync(() => snapshots.clear()),
    requests: Effect.sync(() => requests.slice()),
    clearRequests: Effect.sync(() => {
      requests.length = 0
    }),
    resourceVersion: Effect.sync(() => String(rv)),
    objects: Effect.sync(() => sorted()),
    openWatches: Effect.sync(() => watchers.size)
  }
  return fake
}

/**
 * Provides the fake as the `ListerWatcher` and its controls as `FakeListerWatcher`.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { FakeListerWatcher, ListerWatcher } from "effect-informers"
 *
 * const program = Effect.gen(function*() {
 *   const fake = yield* FakeListerWatcher.FakeListerWatcher
 *   const lw = yield* ListerWatcher.ListerWatcher
 *   yield* fake.add({ metadata: { name: "node-1" } })
 *   return yield* lw.list({})
 * }).pipe(Effect.provide(FakeListerWatcher.layer()))
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (
  options: FakeListerWatcher.Options<KubeObject> = {}
): Layer.Layer<FakeListerWatcher | ListerWatcher> =>
  Layer.effectContext(
    Effect.map(make(options), (fake) => Context.make(FakeListerWatcher, fake).pipe(Context.add(ListerWatcher, fake)))
  )

// -------------------------------------------------------------------------------------------------
// a source of fakes, one per resource
// -------------------------------------------------------------------------------------------------

/**
 * A view of `fake` limited to `scope`: lists and watch events of objects outside the namespace or not
 * matching the selectors are left out. An update that makes an object leave a label or field selector
 * reaches a watch as DELETED when that watch had delivered the object (the API server's semantics for
 * objects seen by the watch).
 *
 * @since 0.1.0
 * @category constructors
 */
export const scoped = <A>(fake: FakeListerWatcher.Service<A>, scope: ListerWatcherScope): ListerWatcher.Service<A> => {
  const namespace = scope.namespace === undefined || scope.namespace === "" ? undefined : scope.namespace
  const labels = scope.labelSelector === undefined
    ? LabelSelector.everything
    : Either.getOrElse(LabelSelector.parse(scope.labelSelector), () => LabelSelector.nothing)
  const fields = scope.fieldSelector === undefined
    ? FieldSelector.everything
    : Either.getOrElse(FieldSelector.parse(scope.fieldSelector), () => FieldSelector.everything)
  const matches = (obj: A): boolean => {
    const metadata = (obj as KubeObject).metadata
    return (namespace === undefined || metadata?.namespace === namespace) &&
      LabelSelector.matches(labels, metadata?.labels) && FieldSelector.matchesObject(fields, obj)
  }
  return {
    description: [fake.description, namespace, scope.labelSelector, scope.fieldSelector].filter(Boolean).join(" "),
    supportsWatchList: fake.supportsWatchList,
    list: (options) => Effect.map(fake.list(options), (page) => ({ ...page, items: page.items.filter(matches) })),
    watch: (options) =>
      Stream.suspend(() => {
        const delivered = new Set<string>()
        return fake.watch(options).pipe(Stream.filterMap((event): Option.Option<WatchEvent<A>> => {
          if (event.type === "BOOKMARK") return Option.some(event)
          const key = keyOf(event.object)
          if (event.type !== "DELETED" && matches(event.object)) {
            delivered.add(key)
            return Option.some(event)
          }
          if (!delivered.delete(key)) return Option.none()
          return Option.some({ type: "DELETED", object: event.object })
        }))
      })
  }
}

/**
 * @since 0.1.0
 */
export declare namespace FakeListerWatcherSource {
  /**
   * @since 0.1.0
   * @category models
   */
  export interface Service {
    /** The fake holding every object of `resource` (created on first use). */
    readonly fakeFor: <A>(resource: Resource<A>) => FakeListerWatcher.Service<A>
  }
}

/**
 * The fakes behind `layerSource`, one per resource, so a test can change the objects an informer factory
 * watches.
 *
 * @since 0.1.0
 * @category tags
 */
export class FakeListerWatcherSource extends Context.Tag("effect-informers/FakeListerWatcherSource")<
  FakeListerWatcherSource,
  FakeListerWatcherSource.Service
>() {}

/**
 * A `ListerWatcherSource` of fakes: each resource has one fake (see `FakeListerWatcherSource`), and each
 * informer sees it through `scoped`.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { FakeListerWatcher, InformerFactory, Resource } from "effect-informers"
 *
 * const program = Effect.gen(function*() {
 *   const fakes = yield* FakeListerWatcher.FakeListerWatcherSource
 *   yield* fakes.fakeFor(Resource.pods).add({ metadata: { namespace: "default", name: "web" } })
 *   const factory = yield* InformerFactory.InformerFactory
 *   const lister = yield* factory.listerFor(Resource.pods)
 *   yield* factory.start
 *   yield* factory.waitForCacheSync()
 *   return yield* lister.list()
 * }).pipe(
 *   Effect.provide(InformerFactory.layer()),
 *   Effect.provide(FakeListerWatcher.layerSource()),
 *   Effect.scoped
 * )
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layerSource = (
  options: FakeListerWatcher.Options<KubeObject> = {}
): Layer.Layer<ListerWatcherSource | FakeListerWatcherSource> =>
  Layer.effectContext(Effect.sync(() => {
    const fakes = new Map<string, FakeListerWatcher.Service<any>>()
    const fakeFor = <A>(resource: Resource<A>): FakeListerWatcher.Service<A> => {
      const key = `${resource.group}/${resource.version}/${resource.resource}`
      let fake = fakes.get(key)
      if (fake === undefined) {
        fake = unsafeMake<any>({ ...options, description: groupResource(resource) })
        fakes.set(key, fake)
      }
      return fake
    }
    return Context.make(FakeListerWatcherSource, { fakeFor }).pipe(
      Context.add(ListerWatcherSource, { listerWatcher: (resource, scope) => scoped(fakeFor(resource), scope) })
    )
  }))

/**
 * An in-memory ListerWatcher for tests (client-go's `FakeControllerSource`, and more): an adapter over
 * the in-memory API store (`ApiStore`), the same one behind the test kit's embedded API server, so the fake
 * and the server answer every request alike. Objects live under one global integer resourceVersion; every
 * change is recorded in a bounded history that watches replay from, so watching from a compacted version
 * fails with `Gone`; lists honour `limit`, `continue`, `resourceVersion` and `resourceVersionMatch`, and
 * watches bookmarks, watch-list and selectors, as the API server does. Failures are the typed errors
 * `ApiError.fromStatus` makes of the API server's answer. Changes can be made without emitting watch
 * events ("drop watch" variants) to model lost events; `resetWatch` closes every watch and forgets
 * history, forcing a relist. Failures can be scripted, and every request is recorded so tests can assert
 * the options a Reflector sent.
 *
 * Everything is in memory and never sleeps, so tests drive time with `TestClock`. `layerFactory` is the
 * informer factory over fakes, what a test provides where an application provides `Informers.live()`.
 *
 * Exported from `effect-informers/testing` (and `effect-informers/FakeListerWatcher`), not from the main
 * entry.
 *
 * @since 0.1.0
 */
import type * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import { identity } from "effect/Function"
import * as Layer from "effect/Layer"
import * as Queue from "effect/Queue"
import * as Result from "effect/Result"
import * as Stream from "effect/Stream"
import { fromStatus } from "./ApiError.js"
import * as ApiStore from "./ApiStore.js"
import { metaNamespaceKey } from "./Indexer.js"
import * as InformerFactory from "./InformerFactory.js"
import { decodingListerWatcher } from "./internal/protocol/objectDecoder.js"
import type { KubeObject } from "./KubeObject.js"
import type * as LabelSelector from "./LabelSelector.js"
import type {
  ListerWatcherError,
  ListOptions,
  ListPage,
  Scope as ListerWatcherScope,
  WatchEvent,
  WatchOptions
} from "./ListerWatcher.js"
import { ListerWatcher, ListerWatcherSource } from "./ListerWatcher.js"
import type { Resource } from "./Resource.js"
import { groupResource } from "./Resource.js"
import { failureStatus, initialEventsEndAnnotation } from "./Wire.js"

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
    /**
     * The resource served: field selectors are checked against its selectable fields (400 BadRequest
     * otherwise, as the API server answers). Without it, any field may be selected. `layerSource` sets it.
     */
    readonly resource?: Resource<any> | undefined
  }
}

/**
 * The tag of the fake's controls, provided by `layer` next to the `ListerWatcher` it implements.
 *
 * @since 0.1.0
 * @category tags
 */
export class FakeListerWatcher extends Context.Service<FakeListerWatcher, FakeListerWatcher.Service<KubeObject>>()(
  "effect-informers/FakeListerWatcher"
) {}

/** One stored version of one object, as the store keeps it. */
class FakeEntry<A> implements ApiStore.Entry {
  constructor(
    readonly key: string,
    readonly namespace: string,
    readonly name: string,
    readonly obj: A,
    readonly rv: number
  ) {}

  get labels(): LabelSelector.Labels {
    const labels = (this.obj as KubeObject).metadata?.labels
    return typeof labels === "object" && labels !== null ? labels : undefined
  }
}

/** One open watch: the store's events as `WatchEvent`s in a queue (ended, or failed, with the watch). */
class FakeWatcher<A> implements ApiStore.Watcher<FakeEntry<A>> {
  done = false

  constructor(
    readonly selection: ApiStore.Selection,
    readonly collection: ApiStore.Collection<FakeEntry<A>>,
    readonly queue: Queue.Queue<WatchEvent<A>, ListerWatcherError | Cause.Done>,
    readonly bookmarks: boolean,
    /** Events (not bookmarks) left before the watch ends; 0: no limit. */
    private remaining: number
  ) {}

  offer(event: WatchEvent<A>): void {
    if (this.done) return
    Queue.offerUnsafe(this.queue, event)
    if (event.type !== "BOOKMARK" && this.remaining > 0 && --this.remaining === 0) this.end(Exit.void)
  }

  end(exit: Exit.Exit<void, ListerWatcherError>): void {
    if (this.done) return
    this.done = true
    this.collection.watchers.delete(this)
    const queue = this.queue
    const finish = Exit.isSuccess(exit)
      ? () => void Queue.endUnsafe(queue)
      : () => void Queue.failCauseUnsafe(queue, exit.cause)
    // Effect 4 resumes a queue's waiting taker inside the call that ends the queue: the end is scheduled, so
    // that the watch's consumer sees it after the control that ended the watch (`closeWatches`,
    // `resetWatch`...) has returned, as it did with Effect 3's Mailbox. The watch is closed (not open, no
    // more events) at once.
    const fiber = Fiber.getCurrent()
    if (fiber === undefined) finish()
    else fiber.currentDispatcher.scheduleTask(finish, 0)
  }

  send(event: ApiStore.HistoryEvent<FakeEntry<A>>, delivery: ApiStore.Delivery): void {
    switch (delivery) {
      case "event":
        return this.offer({ type: event.type, object: event.entry.obj })
      case "entered":
        return this.offer({ type: "ADDED", object: event.entry.obj })
      case "left":
        return this.offer({ type: "DELETED", object: withResourceVersion(event.prev!.obj, event.rv) })
    }
  }

  added(entries: ReadonlyArray<FakeEntry<A>>): void {
    for (let i = 0; i < entries.length && !this.done; i++) this.offer({ type: "ADDED", object: entries[i].obj })
  }

  bookmark(rv: number, initialEventsEnd: boolean): void {
    this.offer(bookmarkEvent(rv, initialEventsEnd))
  }
}

const entryOf = <A>(obj: A, rv: number): FakeEntry<A> => {
  const key = metaNamespaceKey(obj)
  if (Result.isFailure(key)) throw new Error(`FakeListerWatcher: ${key.failure.message}`)
  const metadata = (obj as KubeObject).metadata!
  const namespace = typeof metadata.namespace === "string" ? metadata.namespace : ""
  return new FakeEntry(key.success, namespace, metadata.name!, withResourceVersion(obj, rv), rv)
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

/** A request's selector replaces the scope's, as with the HTTP ListerWatcher. */
const selectorOf = (scope: string | undefined, request: string | undefined): string | undefined => request ?? scope

/** The fake's list and watch within a scope, for `scoped`. */
interface Internals<A> {
  readonly list: (options: ListOptions, scope: ListerWatcherScope) => Effect.Effect<ListPage<A>, ListerWatcherError>
  readonly watch: (
    options: WatchOptions,
    scope: ListerWatcherScope
  ) => Stream.Stream<WatchEvent<A>, ListerWatcherError>
}

const internals = new WeakMap<object, Internals<any>>()

const unscoped: ListerWatcherScope = {}

/**
 * Builds a fake.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { FakeListerWatcher } from "effect-informers/testing"
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
  const store = ApiStore.make<FakeEntry<A>>({ historySize: options.historySize ?? 1000 })
  const fields = options.resource === undefined ? undefined : ApiStore.selectableFields(options.resource)
  const collection = new ApiStore.Collection<FakeEntry<A>>(fields)
  const requests: Array<Request> = []
  let listFailures: Array<ListerWatcherError> = []
  let watchFailures: Array<ListerWatcherError> = []
  let nextWatchLimit: number | undefined
  /** Set by `resetWatch`: every watch fails with Gone until a list, as after a real history reset. */
  let goneUntilList = false

  const change = (type: "ADDED" | "MODIFIED" | "DELETED", obj: A, emit: boolean): A => {
    const entry = entryOf(obj, store.rv + 1)
    store.commit(collection, type, entry, collection.entries.get(entry.key), undefined, !emit)
    return entry.obj
  }

  const endAll = (exit: Exit.Exit<void, ListerWatcherError>): void => {
    // the watches open now: a watch opened while these end is not one of them
    for (const watcher of Array.from(collection.watchers)) (watcher as FakeWatcher<A>).end(exit)
  }

  for (const obj of options.initial ?? []) change("ADDED", obj, true)

  const current = (): ReadonlyArray<A> =>
    store.listPage(collection, store.rv, ApiStore.everything, 0, undefined).items.map((entry) => entry.obj)

  const namespaceOf = (scope: ListerWatcherScope): string | undefined =>
    scope.namespace === undefined || scope.namespace === "" ? undefined : scope.namespace

  const list = (listOptions: ListOptions, scope: ListerWatcherScope): Effect.Effect<ListPage<A>, ListerWatcherError> =>
    Effect.suspend(() => {
      requests.push({ _tag: "List", options: listOptions })
      goneUntilList = false
      if (listFailures.length > 0) return Effect.fail(listFailures.shift()!)
      const outcome = ApiStore.list(store, collection, namespaceOf(scope), {
        ...listOptions,
        labelSelector: selectorOf(scope.labelSelector, listOptions.labelSelector),
        fieldSelector: selectorOf(scope.fieldSelector, listOptions.fieldSelector)
      })
      if (Result.isFailure(outcome)) return Effect.fail(fromStatus(outcome.failure))
      const { continueToken, page } = outcome.success
      return Effect.succeed({
        items: page.items.map((entry) => entry.obj),
        resourceVersion: String(page.rv),
        continue: continueToken,
        remainingItemCount: page.remaining
      })
    })

  const watch = (
    watchOptions: WatchOptions,
    scope: ListerWatcherScope
  ): Stream.Stream<WatchEvent<A>, ListerWatcherError> =>
    Stream.unwrap(Effect.gen(function*() {
      requests.push({ _tag: "Watch", options: watchOptions })
      if (watchFailures.length > 0) return Stream.fail(watchFailures.shift()!)
      if (goneUntilList) {
        return Stream.fail(fromStatus(failureStatus(410, "Expired", "watch history was reset: relist")))
      }
      const watchList = options.watchList ?? "serve"
      if (watchOptions.sendInitialEvents === true && watchList === "reject") {
        return Stream.fail(
          fromStatus(failureStatus(422, "Invalid", "sendInitialEvents is forbidden for watch"))
        )
      }
      // a server that ignores watch-list ignores its parameters: a plain watch
      const ignored = watchOptions.sendInitialEvents !== undefined && watchList === "ignore"
      const plan = ApiStore.planWatch(collection.fields, namespaceOf(scope), {
        labelSelector: selectorOf(scope.labelSelector, watchOptions.labelSelector),
        fieldSelector: selectorOf(scope.fieldSelector, watchOptions.fieldSelector),
        resourceVersion: watchOptions.resourceVersion,
        resourceVersionMatch: ignored ? undefined : watchOptions.resourceVersionMatch,
        sendInitialEvents: ignored ? undefined : watchOptions.sendInitialEvents,
        allowWatchBookmarks: watchOptions.allowWatchBookmarks
      })
      if (Result.isFailure(plan)) return Stream.fail(fromStatus(plan.failure))
      const queue = yield* Queue.unbounded<WatchEvent<A>, ListerWatcherError | Cause.Done>()
      const watcher = new FakeWatcher<A>(
        plan.success.selection,
        collection,
        queue,
        watchOptions.allowWatchBookmarks === true,
        nextWatchLimit ?? 0
      )
      nextWatchLimit = undefined
      const failure = ApiStore.startWatch(store, collection, watcher, plan.success)
      if (failure !== undefined) return Stream.fail(fromStatus(failure))
      yield* Effect.addFinalizer(() => Effect.sync(() => collection.watchers.delete(watcher)))
      return Stream.fromQueue(queue)
    }))

  const fake: FakeListerWatcher.Service<A> = {
    list: (listOptions) => list(listOptions, unscoped),
    watch: (watchOptions) => watch(watchOptions, unscoped),
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
      store.compact()
      goneUntilList = true
    }),
    closeWatches: Effect.sync(() => endAll(Exit.void)),
    failWatches: (error) => Effect.sync(() => endAll(Exit.fail(error))),
    bookmark: Effect.sync(() => {
      for (const watcher of collection.watchers) {
        if ((watcher as FakeWatcher<A>).bookmarks) watcher.bookmark(store.rv, false)
      }
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
    expireContinueTokens: Effect.sync(() => store.expireContinueTokens()),
    requests: Effect.sync(() => requests.slice()),
    clearRequests: Effect.sync(() => {
      requests.length = 0
    }),
    resourceVersion: Effect.sync(() => String(store.rv)),
    objects: Effect.sync(current),
    openWatches: Effect.sync(() => collection.watchers.size)
  }
  internals.set(fake, { list, watch })
  return fake
}

/**
 * Provides the fake as the `ListerWatcher` and its controls as `FakeListerWatcher`.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { ListerWatcher } from "effect-informers"
 * import { FakeListerWatcher } from "effect-informers/testing"
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
 * A view of `fake` limited to `scope`, served by the store as the API server serves a namespaced request
 * with selectors: lists page over the matching objects only, and a watch sees the watch cache's selector
 * rules (an update that makes an object match is ADDED, one that makes it stop matching is DELETED of its
 * previous state, at the update's resourceVersion). `fake` must come from `make` or `unsafeMake`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const scoped = <A>(fake: FakeListerWatcher.Service<A>, scope: ListerWatcherScope): ListerWatcher.Service<A> => {
  const self: Internals<A> | undefined = internals.get(fake)
  if (self === undefined) throw new Error("FakeListerWatcher.scoped: not a fake made by FakeListerWatcher.make")
  const namespace = scope.namespace === undefined || scope.namespace === "" ? undefined : scope.namespace
  return {
    description: [fake.description, namespace, scope.labelSelector, scope.fieldSelector].filter(Boolean).join(" "),
    supportsWatchList: fake.supportsWatchList,
    list: (options) => self.list(options, scope),
    watch: (options) => self.watch(options, scope)
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
    /**
     * The fake holding every object of `resource` (created on first use). `Resource.metadataOnly(r)` and
     * `r` share one fake (of full objects); informers of a resource with `decode` see its objects decoded.
     */
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
export class FakeListerWatcherSource
  extends Context.Service<FakeListerWatcherSource, FakeListerWatcherSource.Service>()(
    "effect-informers/FakeListerWatcherSource"
  )
{}

/**
 * A `ListerWatcherSource` of fakes: each resource has one fake (see `FakeListerWatcherSource`), and each
 * informer sees it through `scoped`.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { InformerFactory, Resource } from "effect-informers"
 * import { FakeListerWatcher } from "effect-informers/testing"
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
        fake = unsafeMake<any>({ ...options, description: groupResource(resource), resource })
        fakes.set(key, fake)
      }
      return fake
    }
    return Context.make(FakeListerWatcherSource, { fakeFor }).pipe(
      Context.add(ListerWatcherSource, {
        listerWatcher: <A>(resource: Resource<A>, scope: ListerWatcherScope): ListerWatcher.Service<A> => {
          const lw = scoped(fakeFor(resource), scope)
          // `Resource.custom` and `Resource.metadataOnly`: the fake of the stored objects, decoded as they leave it
          return resource.decode === undefined
            ? lw
            : decodingListerWatcher(
              lw as ListerWatcher.Service<KubeObject>,
              resource.decode,
              lw.description ?? "",
              identity
            )
        }
      })
    )
  }))

/**
 * The informer factory (`InformerFactory.layer(options)`) over in-memory fakes (`layerSource()`), and the
 * fakes (`FakeListerWatcherSource`) to drive it: what a test provides where an application provides
 * `Informers.live()`. (Before 0.2.0: `Layer.fake()`.)
 *
 * @example
 * ```ts
 * import { Effect, Layer } from "effect"
 * import { Informers, Resource } from "effect-informers"
 * import { FakeListerWatcher } from "effect-informers/testing"
 *
 * const program = Effect.gen(function*() {
 *   const fakes = yield* FakeListerWatcher.FakeListerWatcherSource
 *   yield* fakes.fakeFor(Resource.pods).add({ metadata: { namespace: "default", name: "web" } })
 *   const pods = yield* Informers.Pods
 *   yield* pods.informer.synced
 *   return yield* pods.lister.list()
 * }).pipe(Effect.provide(Informers.pods().pipe(Layer.provideMerge(FakeListerWatcher.layerFactory()))))
 * ```
 *
 * @since 0.2.0
 * @category layers
 */
export const layerFactory = (
  options: InformerFactory.Options = {}
): Layer.Layer<InformerFactory.InformerFactory | FakeListerWatcherSource> =>
  InformerFactory.layer(options).pipe(Layer.provideMerge(layerSource()))

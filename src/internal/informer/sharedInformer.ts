/**
 * The informer's wiring and lifecycle: `SharedInformer.make`. The parts are the controller
 * (`informerController.ts`: the pop loop, the cache update), the processor (`processor.ts`: the listeners,
 * distribution, resync, late join), one listener per handler (`listener.ts`: its buffer and fiber), the
 * sync tracker (`syncTracker.ts`: every `hasSynced` and every wait on one) and the lifecycle
 * (`informerLifecycle.ts`: Created, Running, Stopped).
 *
 * @internal
 */
import type * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as PubSub from "effect/PubSub"
import * as Queue from "effect/Queue"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import type * as DeltaFifo from "../../DeltaFifo.js"
import type { IndexConflictError, Indexers, IndexFunctionError } from "../../Indexer.js"
import * as Indexer from "../../Indexer.js"
import type { KubeObject } from "../../KubeObject.js"
import type { ListerWatcher } from "../../ListerWatcher.js"
import type { ErrorContext, ReflectorError } from "../../Reflector.js"
import type * as Reflector from "../../Reflector.js"
import type {
  Handler,
  HandlerOptions,
  Notification,
  Registration,
  SharedInformer,
  StopReason,
  WatchError
} from "../../SharedInformer.js"
import * as Fifo from "./deltaFifo.js"
import * as IndexerStore from "./indexerStore.js"
import { InformerController } from "./informerController.js"
import { InformerStartedError, InformerStoppedError } from "./informerErrors.js"
import * as Lifecycle from "./informerLifecycle.js"
import * as Listener from "./listener.js"
import * as Processor from "./processor.js"
import * as ReflectorLoop from "./reflector.js"
import { SyncTracker } from "./syncTracker.js"

/**
 * Builds an informer in the current scope (`SharedInformer.make`): wires the controller, the processor, the
 * listeners and the sync tracker, and owns the lifecycle (`informerLifecycle.ts`). The scopes it opens are
 * the shutdown order: the controller's (Reflector, processing loop, FIFO) closes first, then the stop (nothing
 * joins or syncs any more), then the handlers' fibers.
 *
 * @internal
 */
export const make = <A extends KubeObject, I extends string = string>(
  lw: ListerWatcher.Service<A>,
  options: SharedInformer.Options<A, I> = {}
): Effect.Effect<SharedInformer.Service<A, I>, never, Scope.Scope> =>
  Effect.gen(function*() {
    const name = options.name ?? lw.description ?? "informer"
    const clock = yield* Clock.clockWith(Effect.succeed)
    // The context the informer's metrics are updated in (its registry, and attributes the program added).
    const metricContext = yield* Effect.context<never>()
    const defaultResync = Processor.toResync(options.resyncPeriod)
    const detectMutations = options.detectMutations === true

    // --- state --------------------------------------------------------------------------------------
    // Several fibers touch it (the caller's, the Reflector's, the controller's, the handlers', the scope's
    // finalizer); each change is one synchronous step.

    // The store and its writer: the controller writes it; users get `store.reader` only.
    const store = IndexerStore.make<A>({
      keyFunction: Indexer.deletionHandlingMetaNamespaceKey,
      indexers: {
        [Indexer.namespaceIndex]: Indexer.metaNamespaceIndexFunction as Indexer.IndexFunction<A>,
        ...options.indexers as Indexers<A> | undefined
      }
    })
    /**
     * Created, Running or Stopped: changed by `start`, the scope's close and the Reflector's stop (the resource
     * is gone), through `Lifecycle.transition`.
     */
    let state: Lifecycle.State = Lifecycle.created
    /** The `InformerStoppedError` of `operation`, with `reason: "ResourceGone"` when that is why it stopped. */
    const stoppedError = (operation: InformerStoppedError["operation"], handler?: string) =>
      new InformerStoppedError({
        informer: name,
        operation,
        ...(handler === undefined ? {} : { handler }),
        ...(Lifecycle.stopReason(state) === "ResourceGone" ? { reason: "ResourceGone" as const } : {})
      })
    const tracker = new SyncTracker<InformerStoppedError>((handler) => stoppedError("synced", handler))
    const processor = new Processor.Processor<A>(store, tracker, clock, defaultResync)
    const controller = new InformerController<A>(name, store, processor, tracker, metricContext)
    let transform = options.transform
    let watchErrorHandler = options.onWatchError
    let reflector: Reflector.Reflector | undefined = undefined

    // --- scopes: the order they close in is the shutdown order -----------------------------------------

    const scope = yield* Effect.scope
    // Closed after everything else: `awaitStop` answers once every fiber of the informer has ended.
    const stopped = Deferred.makeUnsafe<StopReason>()
    yield* Scope.addFinalizer(
      scope,
      Effect.sync(() => {
        Deferred.doneUnsafe(stopped, Exit.succeed(Lifecycle.stopReason(state) ?? "Closed"))
      })
    )
    // Opened first (after that), closed last: the handlers' fibers.
    const processorScope = yield* Scope.fork(scope, "sequential")
    const errorHub = yield* PubSub.unbounded<WatchError>()
    // Between the two, with the controller stopped: nothing joins and nothing syncs any more (pending and
    // later `synced` waits fail), and the `errors` streams end (the Reflector can publish no more).
    yield* Scope.addFinalizer(
      scope,
      Effect.andThen(
        Effect.sync(() => {
          state = Lifecycle.transition(state, "stop")
          tracker.stop()
        }),
        PubSub.shutdown(errorHub)
      )
    )
    // Opened last, closed first: the Reflector, the controller's loop and the FIFO.
    const controllerScope = yield* Scope.fork(scope, "sequential")

    // --- lifecycle ----------------------------------------------------------------------------------

    const start: Effect.Effect<void, InformerStoppedError> = Effect.suspend(() => {
      const from = state
      state = Lifecycle.transition(from, "start")
      if (from._tag === "Stopped") return Effect.fail(stoppedError("start"))
      if (from._tag === "Running") return Effect.logWarning(`${name}: informer already started`)
      return Effect.gen(function*() {
        // Built by the machinery, with the synchronous enqueues the Reflector uses; never handed out.
        const fifo = Fifo.make<A>({ mode: options.fifo ?? "inOrder", knownObjects: store, transform }, tracker.queue)
        // Closing order within the controller scope: Reflector, then the controller's loop, then the FIFO.
        yield* Scope.addFinalizer(controllerScope, fifo.close)
        yield* controller.run(fifo, options.batchSize ?? 1000).pipe(
          Effect.annotateLogs({ informer: name, fiber: "controller" }),
          Effect.interruptible,
          Effect.forkIn(controllerScope)
        )
        // The handler first, then the stream (also when the handler fails): Effect 4 runs a subscriber woken
        // by the publish at once, so a reader of the stream sees what the handler recorded (the factory's
        // `lastError`), as it did when Effect 3 resumed the subscriber later.
        const onError = (error: ReflectorError, context: ErrorContext): Effect.Effect<void> =>
          Effect.ensuring(
            watchErrorHandler === undefined ? Effect.void : watchErrorHandler(error, context),
            PubSub.publish(errorHub, { error, context })
          )
        // The Reflector writes to the FIFO itself (a chunk of events at once, through its `unsafe` enqueues);
        // the FIFO's replaces reach the sync tracker.
        const sink: Reflector.Store<A, DeltaFifo.EnqueueError> = fifo
        const made = yield* ReflectorLoop.make(lw, sink, {
          ...options.reflector,
          name,
          resyncPeriod: processor.checkPeriod(),
          shouldResync: processor.shouldResync,
          onError,
          reuse: controller.reuseCached
        }).pipe(Scope.provide(controllerScope))
        reflector = made
        // The Reflector stops by itself only when the resource is gone: then the informer stops as its scope's
        // close would stop it, in the same order. In the informer's scope (not the scopes it closes); the close
        // is uninterruptible, so that a concurrent close of the scope waits for it.
        yield* made.awaitStop.pipe(
          Effect.flatMap(() => Effect.uninterruptible(stopResourceGone)),
          Effect.forkIn(scope)
        )
      })
    })

    /** The resource is gone: the controller (its Reflector has ended), then the stop, then the handlers' fibers. */
    const stopResourceGone: Effect.Effect<void> = Effect.gen(function*() {
      yield* Scope.close(controllerScope, Exit.void)
      state = Lifecycle.transition(state, "resourceGone")
      tracker.stop()
      yield* PubSub.shutdown(errorHub)
      yield* Scope.close(processorScope, Exit.void)
      Deferred.doneUnsafe(stopped, Exit.succeed(Lifecycle.stopReason(state) ?? "ResourceGone"))
    })

    // --- handlers -----------------------------------------------------------------------------------

    const addEventHandler = <E, R>(
      handler: Handler<A, E, R>,
      handlerOptions: HandlerOptions = {}
    ): Effect.Effect<Registration, InformerStoppedError, R> =>
      // Uninterruptible: a handler's fiber never runs without its listener having joined, nor the reverse.
      Effect.uninterruptible(Effect.gen(function*() {
        if (Lifecycle.isStopped(state)) {
          return yield* stoppedError("addEventHandler")
        }
        const id = processor.id()
        const handlerName = handlerOptions.name ?? handler.name ?? `handler-${id}`
        let requested = handlerOptions.resyncPeriod === undefined
          ? defaultResync
          : Processor.toResync(handlerOptions.resyncPeriod)
        if (requested > 0 && requested < Processor.minimumResyncPeriod) {
          yield* Effect.logWarning(`${name}: resync period of handler ${handlerName} raised to 1s`)
          requested = Processor.minimumResyncPeriod
        }
        const coalescing = handlerOptions.buffer === "coalescing"
        const sync = tracker.registration(handlerName)
        const buffer = yield* Listener.makeBuffer<A>(coalescing ? "coalescing" : "unbounded", sync)
        const listener = new Listener.Listener<A>(
          id,
          handlerName,
          name,
          sync,
          buffer,
          coalescing ? 64 : 1024,
          metricContext
        )
        const fiber = yield* Listener.run(listener, handler, processor, { informer: name, clock, detectMutations })
          .pipe(
            Effect.interruptible,
            Effect.forkIn(processorScope)
          )
        processor.attach(listener, fiber)
        // The stop check and the join in one step: `start` or the scope's close may run at any yield above.
        const joined = yield* Effect.sync(() =>
          Lifecycle.isStopped(state) ? "stopped" : processor.join(listener, requested, Lifecycle.hasStarted(state))
        )
        if (joined === "stopped") {
          // The fiber was forked into a closed scope, or is about to be stopped.
          yield* Fiber.interrupt(fiber)
          return yield* stoppedError("addEventHandler")
        }
        if (joined === "raised") {
          yield* Effect.logWarning(
            `${name}: resync period of handler ${handlerName} raised to the informer's check period`
          )
        }
        return processor.registration(listener)
      }))

    const removeEventHandler = (registration: Registration): Effect.Effect<void> =>
      Effect.suspend(() => {
        const listener = processor.listenerOf(registration)
        return listener === undefined ? Effect.void : processor.remove(listener)
      })

    // --- settings -----------------------------------------------------------------------------------

    const addIndexers = <J extends string>(
      indexers: Indexers<A, J>
    ): Effect.Effect<
      Indexer.Indexer.Reader<A, I | J | typeof Indexer.namespaceIndex>,
      IndexConflictError | IndexFunctionError | InformerStoppedError
    > =>
      Effect.suspend((): Effect.Effect<
        Indexer.Indexer.Reader<A, I | J | typeof Indexer.namespaceIndex>,
        IndexConflictError | IndexFunctionError | InformerStoppedError
      > =>
        Lifecycle.isStopped(state)
          ? Effect.fail(stoppedError("addIndexers"))
          : Effect.as(store.addIndexers(indexers as Indexers<A>), store.reader)
      )

    const setTransform = (f: (obj: A) => A): Effect.Effect<void, InformerStartedError> =>
      Effect.suspend(() => {
        if (Lifecycle.hasStarted(state)) {
          return Effect.fail(new InformerStartedError({ informer: name, setting: "transform" }))
        }
        transform = f
        return Effect.void
      })

    const setWatchErrorHandler = (
      f: (error: ReflectorError, context: ErrorContext) => Effect.Effect<void>
    ): Effect.Effect<void, InformerStartedError> =>
      Effect.suspend(() => {
        if (Lifecycle.hasStarted(state)) {
          return Effect.fail(new InformerStartedError({ informer: name, setting: "watch error handler" }))
        }
        watchErrorHandler = f
        return Effect.void
      })

    // --- streams ------------------------------------------------------------------------------------

    // A handler of its own that offers to a Queue the stream reads: unbounded (offers never wait, as a
    // handler's own buffer), in order; `end` when the informer stops, so the stream still yields what the
    // handler passed on and then ends; shut down, and the handler removed, when the stream's consumer stops.
    const notifications: Stream.Stream<Notification<A>> = Stream.unwrap(
      Effect.gen(function*() {
        const queue = yield* Effect.acquireRelease(
          Queue.unbounded<Notification<A>, Cause.Done>(),
          (queue) => Queue.shutdown(queue)
        )
        const stop = yield* Effect.acquireRelease(
          Scope.fork(processorScope, "sequential"),
          (stop) => Scope.close(stop, Exit.void)
        )
        // Added to the processor scope before the handler's fiber, so closed after that fiber is interrupted.
        yield* Scope.addFinalizer(stop, Queue.end(queue))
        const registration = yield* addEventHandler({
          name: "notifications-stream",
          onAdd: (object, isInInitialList) => Queue.offer(queue, { _tag: "Add", object, isInInitialList }),
          onUpdate: (oldObject, newObject) => Queue.offer(queue, { _tag: "Update", oldObject, newObject }),
          onDelete: (object) => Queue.offer(queue, { _tag: "Delete", object })
        }).pipe(Effect.orDie)
        yield* Effect.addFinalizer(() => registration.remove)
        return Stream.fromQueue(queue)
      }).pipe(Effect.catchCause(() => Effect.succeed(Stream.empty)))
    )

    const errors: Stream.Stream<WatchError> = Stream.unwrap(Effect.sync(() => Stream.fromPubSub(errorHub)))

    return {
      name,
      addEventHandler,
      removeEventHandler,
      start,
      hasSynced: Effect.sync(() => tracker.hasSynced()),
      synced: tracker.synced,
      isStarted: Effect.sync(() => Lifecycle.hasStarted(state)),
      isStopped: Effect.sync(() => Lifecycle.isStopped(state)),
      awaitStop: Deferred.await(stopped),
      indexer: store.reader,
      addIndexers,
      setTransform,
      setWatchErrorHandler,
      lastSyncResourceVersion: Effect.suspend(() =>
        reflector === undefined ? Effect.succeed("") : reflector.lastSyncResourceVersion
      ),
      status: Effect.suspend(() =>
        reflector === undefined ? Effect.succeed(Option.none()) : Effect.map(reflector.status, Option.some)
      ),
      notifications,
      errors
    }
  })

/**
 * Finalizers: the keys in `metadata.finalizers` that hold an object's deletion until whoever put them there
 * has cleaned up and removed them, and `reconcile`, the flow of kube-rs's `finalizer()` for a Controller's
 * reconcile.
 *
 * - **When to use one.** For cleanup the garbage collector cannot do: anything outside the cluster (a cloud
 *   resource, a DNS record, a row in a database), and objects an owner reference cannot own (cluster-scoped
 *   objects of a namespaced owner, objects in other namespaces). Children in the owner's own namespace need
 *   no finalizer: give them an owner reference (`OwnerReference.setControllerReference`) and the garbage
 *   collector deletes them with their owner. A delete event is no substitute either: a controller that is
 *   down, or relists, can miss it; a finalizer cannot be missed (the object waits).
 * - **The flow** (`reconcile`), from two facts of the object: is it being deleted (`deletionTimestamp`), and
 *   does it have the finalizer:
 *
 *   | finalizer | being deleted | what happens |
 *   |---|---|---|
 *   | absent | no | the finalizer is added, then `apply` runs on the object the patch returned |
 *   | present | no | `apply` runs |
 *   | present | yes | `cleanup` runs; when it ends with `Controller.done` (or nothing), the finalizer is removed (the server then deletes the object if no other finalizer holds it) |
 *   | absent | yes | nothing: `Controller.done` |
 *
 *   Unlike kube-rs, which returns after adding the finalizer and waits for the event of its own patch,
 *   `apply` runs at once: a predicate such as `Controller.generationChanged` hides finalizer changes of
 *   custom resources, and the object would otherwise wait for its next change. A `cleanup` that ends with
 *   `Controller.requeue` or `Controller.requeueAfter` is not finished: the finalizer stays and the result
 *   goes to the controller (to check back on a slow external deletion). A `cleanup` that fails leaves the
 *   finalizer in place and its error goes to the controller, which retries with backoff. Both `apply` and
 *   `cleanup` must be idempotent: either may run again for the same state.
 * - **Safe writes.** The finalizer is added and removed with JSON patches that carry a `test`, so that a
 *   concurrent change fails the patch instead of being overwritten: the current list tested and the name
 *   appended (with no list yet: the resourceVersion tested and the list made), and on removal the entry at
 *   its index tested, then removed. The server answers a failed `test` with `Invalid` (422), a stale
 *   resourceVersion with `Conflict` (409): both are retried on a fresh read (`Client.get`) after the
 *   `retry` schedule's delays (`Client.defaultRetry`: four retries 10 ms apart), and the decision is made
 *   again on what was read (the finalizer already there, the object gone: nothing to write). The user's
 *   `apply` and `cleanup` are never re-run by these retries.
 * - **Errors.** The errors of `apply` and `cleanup` pass through as they are (`E`, for `catchTag`); the
 *   flow's own are a `FinalizerError`: `AddFailed` or `RemoveFailed` (the failed write in `cause`, after
 *   the retries), `InvalidName` (not a qualified name such as `example.com/cleanup`), `UnnamedObject`.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Controller, Finalizer, Informers } from "effect-informers"
 *
 * declare const deleteBucket: (name: string) => Effect.Effect<void, Error>
 * declare const ensureBucket: (name: string) => Effect.Effect<void, Error>
 *
 * const program = Effect.gen(function*() {
 *   const configMaps = yield* Informers.ConfigMaps
 *   yield* Controller.make({
 *     name: "bucket-controller",
 *     for: configMaps,
 *     reconcile: (request) =>
 *       Effect.gen(function*() {
 *         const cm = yield* Effect.option(configMaps.lister.byNamespace(request.namespace ?? "").get(request.name))
 *         if (cm._tag === "None") return Controller.done
 *         return yield* Finalizer.reconcile({
 *           resource: configMaps.resource,
 *           name: "example.com/bucket",
 *           object: cm.value,
 *           apply: (obj) => ensureBucket(obj.metadata?.name ?? ""),
 *           cleanup: (obj) => deleteBucket(obj.metadata?.name ?? "")
 *         })
 *       })
 *   })
 *   return yield* Effect.never
 * }).pipe(Effect.scoped)
 * ```
 *
 * @since 0.2.0
 */
import type * as Effect from "effect/Effect"
import type * as Schedule from "effect/Schedule"
import type * as Client from "./Client.js"
import type * as Controller from "./Controller.js"
import * as internal from "./internal/controller/finalizer.js"
import type { KubeObject } from "./KubeObject.js"
import type { Resource } from "./Resource.js"

// -------------------------------------------------------------------------------------------------
// pure helpers
// -------------------------------------------------------------------------------------------------

/**
 * Whether `obj` has the finalizer `name`.
 *
 * @example
 * ```ts
 * import { Finalizer } from "effect-informers"
 *
 * const obj = { metadata: { name: "web", finalizers: ["example.com/cleanup"] } }
 * console.log(Finalizer.has(obj, "example.com/cleanup")) // true
 * ```
 *
 * @since 0.2.0
 * @category getters
 */
export const has: (obj: KubeObject, name: string) => boolean = internal.has

/**
 * Whether `obj` is being deleted: it has a `metadata.deletionTimestamp` (finalizers hold it).
 *
 * @example
 * ```ts
 * import { Finalizer } from "effect-informers"
 *
 * const obj = { metadata: { name: "web", deletionTimestamp: "2026-01-01T00:00:00Z" } }
 * console.log(Finalizer.isDeleting(obj)) // true
 * ```
 *
 * @since 0.2.0
 * @category getters
 */
export const isDeleting: (obj: KubeObject) => boolean = internal.isDeleting

/**
 * `obj` with the finalizer `name` appended, or `obj` itself when it already has it. `obj` is not modified.
 * For an object in the cluster, prefer `reconcile`, whose patch is safe against concurrent changes.
 *
 * @example
 * ```ts
 * import { Finalizer } from "effect-informers"
 *
 * const obj = { metadata: { name: "web" } }
 * const held = Finalizer.add(obj, "example.com/cleanup")
 * // { metadata: { name: "web", finalizers: ["example.com/cleanup"] } }
 * ```
 *
 * @since 0.2.0
 * @category setters
 */
export const add: <A extends KubeObject>(obj: A, name: string) => A = internal.add

/**
 * `obj` without the finalizer `name` (every occurrence; the list left out when empty), or `obj` itself when
 * it does not have it. `obj` is not modified.
 *
 * @example
 * ```ts
 * import { Finalizer } from "effect-informers"
 *
 * const obj = { metadata: { name: "web", finalizers: ["example.com/cleanup", "other.io/x"] } }
 * const released = Finalizer.remove(obj, "example.com/cleanup")
 * // { metadata: { name: "web", finalizers: ["other.io/x"] } }
 * ```
 *
 * @since 0.2.0
 * @category setters
 */
export const remove: <A extends KubeObject>(obj: A, name: string) => A = internal.remove

/**
 * Whether `name` is a valid finalizer name: a Kubernetes qualified name, an optional DNS subdomain prefix and
 * `/`, then up to 63 characters (`example.com/cleanup`). Use a prefix of your own domain: the API server
 * warns about finalizers without one.
 *
 * @since 0.2.0
 * @category getters
 */
export const isValidName: (name: string) => boolean = internal.isValidName

// -------------------------------------------------------------------------------------------------
// errors
// -------------------------------------------------------------------------------------------------

/**
 * Why the flow failed:
 * - `AddFailed`: the patch adding the finalizer failed (`cause`), after the retries of conflicts;
 * - `RemoveFailed`: `cleanup` succeeded but the patch removing the finalizer failed (`cause`): the next
 *   reconcile runs `cleanup` again;
 * - `InvalidName`: the finalizer's name is not a qualified name;
 * - `UnnamedObject`: the object has no `metadata.name`.
 *
 * @since 0.2.0
 * @category errors
 */
export type FinalizerErrorReason = "AddFailed" | "RemoveFailed" | "InvalidName" | "UnnamedObject"

/**
 * A failure of the flow itself (see `FinalizerErrorReason`); `apply`'s and `cleanup`'s own errors are not
 * wrapped. `finalizer` is the name, `object` the object's `namespace/name`, `cause` the failed write
 * (`ApiError` or `TermError`).
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Controller, Finalizer } from "effect-informers"
 *
 * declare const step: Effect.Effect<Controller.Result, Finalizer.FinalizerError>
 *
 * const logged = step.pipe(
 *   Effect.tapError((error) => Effect.logWarning(`${error.reason}: ${error.message}`))
 * )
 * ```
 *
 * @since 0.2.0
 * @category errors
 */
export const FinalizerError: typeof internal.FinalizerError = internal.FinalizerError

/**
 * @since 0.2.0
 * @category errors
 */
export type FinalizerError = internal.FinalizerError

// -------------------------------------------------------------------------------------------------
// the flow
// -------------------------------------------------------------------------------------------------

/**
 * Options of `reconcile`.
 *
 * @since 0.2.0
 * @category models
 */
export interface Options<A extends KubeObject, E, R> {
  /** The object's resource: the patches and re-reads go to it. */
  readonly resource: Resource<A>
  /** The finalizer: a qualified name of your own domain, e.g. `example.com/cleanup`. */
  readonly name: string
  /** The object as the reconcile read it (the cache's copy is fine: it is never modified). */
  readonly object: A
  /** Makes the world as the object asks (not being deleted; the finalizer is on it). */
  readonly apply: (obj: A) => Effect.Effect<Controller.Result | void, E, R>
  /**
   * Undoes what `apply` did outside the cluster (the object is being deleted). `done` (or nothing): the
   * finalizer is removed; `requeue`/`requeueAfter`: not finished, it stays.
   */
  readonly cleanup: (obj: A) => Effect.Effect<Controller.Result | void, E, R>
  /** The Client of the patches and re-reads. Default: the `Client.Client` in the context. */
  readonly client?: Client.Client.Service | undefined
  /** The delays between retries of a conflicting patch. Default: `Client.defaultRetry`. */
  readonly retry?: Schedule.Schedule<unknown, unknown, never, never> | undefined
}

/**
 * Runs `apply` or `cleanup` on `object`, adding or removing the finalizer `name` around them (see the
 * module's documentation for the table), and returns what the controller should do. The errors of `apply`
 * and `cleanup` come out as they are; the flow's own as a `FinalizerError`. Takes the `Client` from the
 * context unless `client` is given.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Client, Controller, Finalizer, Resource } from "effect-informers"
 *
 * declare const releaseAddress: (ip: string) => Effect.Effect<void>
 *
 * const reconcileService = (request: Controller.Request) =>
 *   Effect.gen(function*() {
 *     const client = yield* Client.Client
 *     const service = yield* client.get(Resource.services, request.name, { namespace: request.namespace })
 *     return yield* Finalizer.reconcile({
 *       resource: Resource.services,
 *       name: "example.com/address",
 *       object: service,
 *       apply: () => Effect.succeed(Controller.requeueAfter("10 minutes")),
 *       cleanup: (svc) => releaseAddress(svc.spec?.clusterIP ?? "")
 *     })
 *   })
 * ```
 *
 * @since 0.2.0
 * @category constructors
 */
export const reconcile: {
  <A extends KubeObject, E, R>(
    options: Options<A, E, R> & { readonly client: Client.Client.Service }
  ): Effect.Effect<Controller.Result, E | FinalizerError, R>
  <A extends KubeObject, E, R>(
    options: Options<A, E, R>
  ): Effect.Effect<Controller.Result, E | FinalizerError, R | Client.Client>
} = internal.reconcile as any

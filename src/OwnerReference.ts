/**
 * Owner references, as controller-runtime's `controllerutil` sets and reads them: who owns an object, and
 * which owner controls it.
 *
 * - **What they are for.** An owner reference ties a child in the cluster to its owner: the garbage collector
 *   deletes the child when the owner is deleted (after it, or before it with `Foreground` deletion and
 *   `blockOwnerDeletion`), and a `Controller`'s `owns` maps each event of a child to its owner's key (the
 *   `controller: true` reference only, unless `everyOwner`), so the owner is reconciled when its children
 *   change. Set the controller reference on every child a reconcile creates (`setControllerReference`).
 * - **What they cannot do.** A reference works only within the cluster and within one namespace: a
 *   namespaced owner cannot own a cluster-scoped object nor an object of another namespace (the garbage
 *   collector would take such a reference for a missing owner and delete the child). For those, and for
 *   anything outside the cluster (a cloud resource, a DNS record, a row in a database), use a finalizer
 *   (`Finalizer`): the owner's deletion waits until the reconcile has cleaned up.
 * - **The rules.** `setControllerReference` refuses, with an `OwnerReferenceError`, what the API server or
 *   the garbage collector would not honour (`ClusterScopedChild`, `CrossNamespace`), an owner without a name
 *   or uid (`MissingName`, `MissingUid`: read the owner from the server or the cache, not from a manifest),
 *   and a child that another owner already controls (`AlreadyOwned`, controller-runtime's
 *   `AlreadyOwnedError`: an object has at most one controller). A reference to the same owner (the same
 *   uid, or the same group, kind and name: a previous owner of that name) is replaced, never duplicated;
 *   the other references are kept.
 * - **Plain values.** Every function works on plain `KubeObject`s and returns a new object: the input (often
 *   an informer's cached object, which must never be mutated) is left untouched.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Client, OwnerReference, Resource } from "effect-informers"
 *
 * // a reconcile of a Deployment that creates its ConfigMap, owned by it
 * const ensureConfig = (namespace: string, name: string) =>
 *   Effect.gen(function*() {
 *     const client = yield* Client.Client
 *     const deployment = yield* client.get(Resource.deployments, name, { namespace })
 *     const configMap = yield* OwnerReference.setControllerReference(
 *       deployment,
 *       Resource.deployments,
 *       { metadata: { name: `${name}-config`, namespace }, data: { mode: "fast" } },
 *       Resource.configMaps
 *     )
 *     return yield* client.apply(Resource.configMaps, configMap, { fieldManager: "web-controller", force: true })
 *   })
 * ```
 *
 * @since 0.2.0
 */
import type * as Effect from "effect/Effect"
import type * as Option from "effect/Option"
import * as internal from "./internal/controller/ownerReference.js"
import type { KubeObject } from "./KubeObject.js"
import type { Resource } from "./Resource.js"

// -------------------------------------------------------------------------------------------------
// models
// -------------------------------------------------------------------------------------------------

/**
 * One entry of `metadata.ownerReferences` (`metav1.OwnerReference`, `@kubernetes/client-node`'s
 * `V1OwnerReference`): the owner's `apiVersion`, `kind`, `name` and `uid`; `controller: true` on the one
 * reference to the owner that controls the object; `blockOwnerDeletion: true` makes a `Foreground` deletion
 * of the owner wait for this object.
 *
 * @since 0.2.0
 * @category models
 */
export interface OwnerReference {
  readonly apiVersion: string
  readonly kind: string
  readonly name: string
  readonly uid: string
  readonly controller?: boolean
  readonly blockOwnerDeletion?: boolean
}

// -------------------------------------------------------------------------------------------------
// errors
// -------------------------------------------------------------------------------------------------

/**
 * Why a reference was refused:
 * - `MissingName`, `MissingUid`: the owner has no `metadata.name` or `metadata.uid` (an object not read
 *   from the server);
 * - `ClusterScopedChild`: the owner is namespaced and the child cluster-scoped;
 * - `CrossNamespace`: the owner is namespaced and the child is in another namespace (or in none yet: set
 *   the child's `metadata.namespace`);
 * - `AlreadyOwned`: the child already has a controller reference to another owner (`existing`).
 *
 * @since 0.2.0
 * @category errors
 */
export type OwnerReferenceErrorReason =
  | "MissingName"
  | "MissingUid"
  | "ClusterScopedChild"
  | "CrossNamespace"
  | "AlreadyOwned"

/**
 * A reference that was refused (see `OwnerReferenceErrorReason`). `object` is the child's
 * `namespace/name`; `existing` the controller reference it already has (`AlreadyOwned`).
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { OwnerReference } from "effect-informers"
 *
 * declare const set: Effect.Effect<{ metadata?: { name?: string } }, OwnerReference.OwnerReferenceError>
 *
 * // adopt only what no one controls yet
 * const adoptOrSkip = set.pipe(
 *   Effect.map((child) => child.metadata?.name),
 *   Effect.catchTag("OwnerReferenceError", (error) =>
 *     error.reason === "AlreadyOwned" ? Effect.succeed(undefined) : Effect.fail(error))
 * )
 * ```
 *
 * @since 0.2.0
 * @category errors
 */
export const OwnerReferenceError: typeof internal.OwnerReferenceError = internal.OwnerReferenceError

/**
 * @since 0.2.0
 * @category errors
 */
export type OwnerReferenceError = internal.OwnerReferenceError

// -------------------------------------------------------------------------------------------------
// constructors
// -------------------------------------------------------------------------------------------------

/**
 * The controller reference to `owner`, an object of `ownerResource` (which gives `apiVersion` and `kind`):
 * its name and uid, `controller: true`, `blockOwnerDeletion: true`. Fails with `MissingName` or
 * `MissingUid`. To put it on a child, prefer `setControllerReference`, which also checks the scopes and an
 * existing controller.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { OwnerReference, Resource } from "effect-informers"
 *
 * const owner = { metadata: { name: "web", namespace: "default", uid: "6b1c-42" } }
 * const ref = Effect.runSync(OwnerReference.controllerReference(owner, Resource.deployments))
 * // { apiVersion: "apps/v1", kind: "Deployment", name: "web", uid: "6b1c-42", controller: true, blockOwnerDeletion: true }
 * ```
 *
 * @since 0.2.0
 * @category constructors
 */
export const controllerReference: (
  owner: KubeObject,
  ownerResource: Resource<unknown>
) => Effect.Effect<OwnerReference, OwnerReferenceError> = internal.controllerReference

/**
 * A plain (not controller) reference to `owner`: `apiVersion`, `kind`, `name` and `uid` only. Fails with
 * `MissingName` or `MissingUid`.
 *
 * @since 0.2.0
 * @category constructors
 */
export const ownerReference: (
  owner: KubeObject,
  ownerResource: Resource<unknown>
) => Effect.Effect<OwnerReference, OwnerReferenceError> = internal.ownerReference

// -------------------------------------------------------------------------------------------------
// setting and removing
// -------------------------------------------------------------------------------------------------

/**
 * `child` (an object of `childResource`) with the controller reference to `owner` (an object of
 * `ownerResource`), as controller-runtime's `SetControllerReference`: a reference to the same owner (same
 * uid, or same group, kind and name) is replaced in place, any other is kept. Refused with an
 * `OwnerReferenceError`: `MissingName`, `MissingUid`, `ClusterScopedChild`, `CrossNamespace`, or
 * `AlreadyOwned` when another owner controls the child. `child` is not modified.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { OwnerReference, Resource } from "effect-informers"
 *
 * const owner = { metadata: { name: "web", namespace: "default", uid: "6b1c-42" } }
 * const child = { metadata: { name: "web-config", namespace: "default" }, data: { mode: "fast" } }
 * const owned = Effect.runSync(
 *   OwnerReference.setControllerReference(owner, Resource.deployments, child, Resource.configMaps)
 * )
 * console.log(OwnerReference.isControlledBy(owned, owner)) // true
 * ```
 *
 * @since 0.2.0
 * @category setters
 */
export const setControllerReference: <A extends KubeObject>(
  owner: KubeObject,
  ownerResource: Resource<unknown>,
  child: A,
  childResource: Resource<unknown>
) => Effect.Effect<A, OwnerReferenceError> = internal.setControllerReference

/**
 * `child` with a plain (not controller) reference to `owner`, as controller-runtime's `SetOwnerReference`:
 * the child is deleted with the owner by the garbage collector, and `owns` with `everyOwner` maps its
 * events to the owner, but no controller claims it. A reference to the same owner is updated in place and
 * keeps its `controller` and `blockOwnerDeletion` (unlike controller-runtime, which drops them). Refused
 * with `MissingName`, `MissingUid`, `ClusterScopedChild` or `CrossNamespace`.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { OwnerReference, Resource } from "effect-informers"
 *
 * const owner = { metadata: { name: "web", namespace: "default", uid: "6b1c-42" } }
 * const child = { metadata: { name: "shared-config", namespace: "default" } }
 * const program = OwnerReference.setOwnerReference(owner, Resource.deployments, child, Resource.configMaps)
 * ```
 *
 * @since 0.2.0
 * @category setters
 */
export const setOwnerReference: <A extends KubeObject>(
  owner: KubeObject,
  ownerResource: Resource<unknown>,
  child: A,
  childResource: Resource<unknown>
) => Effect.Effect<A, OwnerReferenceError> = internal.setOwnerReference

/**
 * `obj` without its references to `owner` (by uid, or by group, kind and name), controller or not:
 * controller-runtime's `RemoveOwnerReference`, except that an object without such a reference is returned
 * as it is (no error). `obj` is not modified; when no reference is left, `ownerReferences` is left out.
 *
 * @example
 * ```ts
 * import { OwnerReference, Resource } from "effect-informers"
 *
 * const owner = { metadata: { name: "web", namespace: "default", uid: "6b1c-42" } }
 * const child = {
 *   metadata: {
 *     name: "web-config",
 *     namespace: "default",
 *     ownerReferences: [{ apiVersion: "apps/v1", kind: "Deployment", name: "web", uid: "6b1c-42", controller: true }]
 *   }
 * }
 * const orphan = OwnerReference.removeOwnerReference(child, owner, Resource.deployments)
 * console.log(orphan.metadata?.ownerReferences) // undefined
 * ```
 *
 * @since 0.2.0
 * @category setters
 */
export const removeOwnerReference: <A extends KubeObject>(
  obj: A,
  owner: KubeObject,
  ownerResource: Resource<unknown>
) => A = internal.removeOwnerReference

// -------------------------------------------------------------------------------------------------
// reading
// -------------------------------------------------------------------------------------------------

/**
 * The controller reference of `obj` (the first with `controller: true`), as `metav1.GetControllerOf`.
 *
 * @example
 * ```ts
 * import { Option } from "effect"
 * import { OwnerReference } from "effect-informers"
 *
 * const pod = {
 *   metadata: {
 *     name: "web-7d9f-x2",
 *     ownerReferences: [{ apiVersion: "apps/v1", kind: "ReplicaSet", name: "web-7d9f", uid: "a1", controller: true }]
 *   }
 * }
 * const owner = OwnerReference.controllerOf(pod).pipe(Option.map((ref) => ref.name)) // Option.some("web-7d9f")
 * ```
 *
 * @since 0.2.0
 * @category getters
 */
export const controllerOf: (obj: KubeObject) => Option.Option<OwnerReference> = internal.controllerOf

/**
 * Whether `owner` controls `obj`: `obj`'s controller reference has `owner`'s uid (controller-runtime's
 * `IsControlledBy`). An owner without a uid controls nothing.
 *
 * @since 0.2.0
 * @category getters
 */
export const isControlledBy: (obj: KubeObject, owner: KubeObject) => boolean = internal.isControlledBy

/**
 * Whether `obj` has a reference (controller or not) to `owner`, an object of `ownerResource`: by uid, or by
 * group, kind and name (controller-runtime's `HasOwnerReference`; the version is not compared).
 *
 * @example
 * ```ts
 * import { OwnerReference, Resource } from "effect-informers"
 *
 * declare const child: { metadata?: { ownerReferences?: ReadonlyArray<unknown> } }
 * const owner = { metadata: { name: "web", namespace: "default", uid: "6b1c-42" } }
 * const owned = OwnerReference.hasOwnerReference(child, owner, Resource.deployments)
 * ```
 *
 * @since 0.2.0
 * @category getters
 */
export const hasOwnerReference: (obj: KubeObject, owner: KubeObject, ownerResource: Resource<unknown>) => boolean =
  internal.hasOwnerReference

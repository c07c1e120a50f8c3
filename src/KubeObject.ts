/**
 * The object model the informer machinery needs from a Kubernetes object: its metadata (name, namespace,
 * uid, resourceVersion, labels) and nothing else. Every store, queue and handler in this package is generic
 * over an `A extends KubeObject`, so typed models such as `@kubernetes/client-node`'s `V1Pod` and plain
 * JSON objects both fit.
 *
 * Objects held by an informer are shared, immutable values: handlers and listers receive the cached object
 * itself, never a copy. Mutating one corrupts the cache (see `SharedInformer`'s mutation detector).
 *
 * @since 0.1.0
 */
import * as Data from "effect/Data"
import * as Option from "effect/Option"

/**
 * The subset of `metav1.ObjectMeta` the machinery reads. Other fields are kept untouched on the object.
 *
 * @since 0.1.0
 * @category models
 */
export interface ObjectMeta {
  readonly name?: string | undefined
  readonly generateName?: string | undefined
  readonly namespace?: string | undefined
  readonly uid?: string | undefined
  readonly resourceVersion?: string | undefined
  readonly generation?: number | undefined
  readonly labels?: { readonly [key: string]: string } | undefined
  readonly annotations?: { readonly [key: string]: string } | undefined
  readonly ownerReferences?: ReadonlyArray<unknown> | undefined
  readonly managedFields?: ReadonlyArray<unknown> | undefined
}

/**
 * Anything with Kubernetes object metadata.
 *
 * @since 0.1.0
 * @category models
 */
export interface KubeObject {
  readonly apiVersion?: string | undefined
  readonly kind?: string | undefined
  readonly metadata?: ObjectMeta | undefined
}

/**
 * Turns a typed model into the shape it has on the wire: `Date` fields become strings, everything else is
 * kept. Objects decoded from list and watch responses are plain JSON, so informers over
 * `@kubernetes/client-node` models are typed `Json<V1Pod>`: the same type for objects from a LIST and from
 * a WATCH (the peer library mixes `Date` and `string` here).
 *
 * @example
 * ```ts
 * import type { V1Pod } from "@kubernetes/client-node"
 * import type { KubeObject } from "effect-informers"
 *
 * declare const pod: KubeObject.Json<V1Pod>
 * const created: string | undefined = pod.metadata?.creationTimestamp
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export type Json<T> = T extends Date ? string
  : T extends ReadonlyArray<infer U> ? ReadonlyArray<Json<U>>
  : T extends object ? { readonly [K in keyof T]: Json<T[K]> }
  : T

/**
 * The tombstone client-go calls `DeletedFinalStateUnknown`: a delete the informer inferred during a relist
 * (the object was in the cache but not in the new list), so the final state of the object is unknown.
 * `obj` is the last state the informer knew, which may be stale.
 *
 * @example
 * ```ts
 * import { KubeObject } from "effect-informers"
 *
 * const tombstone = new KubeObject.DeletedFinalStateUnknown({ key: "default/web", obj: undefined })
 * console.log(KubeObject.isDeletedFinalStateUnknown(tombstone)) // true
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export class DeletedFinalStateUnknown<A> extends Data.TaggedClass("DeletedFinalStateUnknown")<{
  readonly key: string
  readonly obj: A | undefined
}> {}

/**
 * @since 0.1.0
 * @category guards
 */
export const isDeletedFinalStateUnknown = (u: unknown): u is DeletedFinalStateUnknown<unknown> =>
  u instanceof DeletedFinalStateUnknown

/**
 * What a delete handler receives: the last state of the object, or a tombstone when the deletion was
 * inferred from a relist.
 *
 * @since 0.1.0
 * @category models
 */
export type DeletedObject<A> = A | DeletedFinalStateUnknown<A>

/**
 * The object inside a possible tombstone (the tombstone's last known state, which may be `undefined`).
 *
 * @since 0.1.0
 * @category accessors
 */
export const unwrapDeleted = <A>(obj: DeletedObject<A>): A | undefined =>
  obj instanceof DeletedFinalStateUnknown ? obj.obj : obj

/**
 * The object's `metadata.resourceVersion`, or `undefined` for objects without one.
 *
 * @since 0.1.0
 * @category accessors
 */
export const resourceVersion = (obj: unknown): string | undefined => {
  if (typeof obj !== "object" || obj === null) return undefined
  const metadata = (obj as KubeObject).metadata
  if (typeof metadata !== "object" || metadata === null) return undefined
  const rv = metadata.resourceVersion
  return typeof rv === "string" ? rv : undefined
}

const decimal = /^(?:0|[1-9][0-9]*)$/

/**
 * Compares two resourceVersions as KEP-5504 (Kubernetes 1.35) defines it: both must be non-empty decimal
 * strings without leading zeros (`"0"`, the version of nothing yet, is the least), and then the longer is greater, or the lexicographically greater of two
 * of the same length. `None` when either is not of that form: such versions are opaque and must not be
 * ordered (read-your-own-writes, `Consistency`, treats them as caught up).
 *
 * @example
 * ```ts
 * import { KubeObject } from "effect-informers"
 * import { Option } from "effect"
 *
 * console.log(KubeObject.compareResourceVersions("10", "9")) // Option.some(1)
 * console.log(Option.isNone(KubeObject.compareResourceVersions("abc", "9"))) // true
 * ```
 *
 * @since 0.1.0
 * @category utils
 */
export const compareResourceVersions = (a: string, b: string): Option.Option<-1 | 0 | 1> => {
  if (!decimal.test(a) || !decimal.test(b)) return Option.none()
  if (a.length !== b.length) return Option.some(a.length < b.length ? -1 : 1)
  return Option.some(a === b ? 0 : a < b ? -1 : 1)
}

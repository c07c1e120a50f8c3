/**
 * Owner references as controller-runtime's `controllerutil` sets and reads them, on plain objects: every
 * function returns a new object and never touches its input.
 *
 * @internal
 */
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type { KubeObject } from "../../KubeObject.js"
import type * as OwnerReference from "../../OwnerReference.js"
import type { Resource } from "../../Resource.js"
import { apiVersion } from "../../Resource.js"

type Ref = OwnerReference.OwnerReference

// -------------------------------------------------------------------------------------------------
// errors
// -------------------------------------------------------------------------------------------------

/** @internal */
export class OwnerReferenceError extends Data.TaggedError("OwnerReferenceError")<{
  readonly reason: OwnerReference.OwnerReferenceErrorReason
  /** The child's `namespace/name` (or `name`), `""` when it has none. */
  readonly object: string
  /** For `AlreadyOwned`: the controller reference the child already has. */
  readonly existing?: Ref | undefined
  readonly message: string
}> {}

const keyOf = (obj: KubeObject): string => {
  const name = obj.metadata?.name ?? ""
  const namespace = obj.metadata?.namespace
  return namespace === undefined || namespace === "" ? name : `${namespace}/${name}`
}

// -------------------------------------------------------------------------------------------------
// reading references
// -------------------------------------------------------------------------------------------------

const isRef = (u: unknown): u is Ref =>
  typeof u === "object" && u !== null && typeof (u as Ref).uid === "string" && typeof (u as Ref).name === "string"

/** The well-formed references of `obj` (entries without a name or uid are not references to anything). */
const refsOf = (obj: KubeObject): ReadonlyArray<Ref> => {
  const refs = obj.metadata?.ownerReferences
  return Array.isArray(refs) ? (refs as ReadonlyArray<unknown>).filter(isRef) : []
}

const groupOf = (apiVersion: string): string => {
  const slash = apiVersion.indexOf("/")
  return slash === -1 ? "" : apiVersion.slice(0, slash)
}

/**
 * Whether `ref` refers to the owner `target` refers to: the same uid, or the same group, kind and name (a
 * previous owner of that name, deleted and created again: controller-runtime's `referSameObject`). The
 * version is not compared.
 */
const sameOwner = (ref: Ref, target: Ref): boolean =>
  (ref.uid !== "" && ref.uid === target.uid) ||
  (target.name !== "" && ref.name === target.name && ref.kind === target.kind &&
    typeof ref.apiVersion === "string" && groupOf(ref.apiVersion) === groupOf(target.apiVersion))

/** A reference to `owner` (its name and uid, possibly empty: for matching only). */
const targetOf = (owner: KubeObject, ownerResource: Resource<unknown>): Ref => ({
  apiVersion: apiVersion(ownerResource),
  kind: ownerResource.kind,
  name: owner.metadata?.name ?? "",
  uid: owner.metadata?.uid ?? ""
})

/** @internal */
export const controllerOf = (obj: KubeObject): Option.Option<Ref> => {
  for (const ref of refsOf(obj)) if (ref.controller === true) return Option.some(ref)
  return Option.none()
}

/** @internal */
export const isControlledBy = (obj: KubeObject, owner: KubeObject): boolean => {
  const uid = owner.metadata?.uid
  if (uid === undefined || uid === "") return false
  for (const ref of refsOf(obj)) if (ref.controller === true) return ref.uid === uid
  return false
}

/** @internal */
export const hasOwnerReference = (obj: KubeObject, owner: KubeObject, ownerResource: Resource<unknown>): boolean => {
  const target = targetOf(owner, ownerResource)
  return refsOf(obj).some((ref) => sameOwner(ref, target))
}

// -------------------------------------------------------------------------------------------------
// making references
// -------------------------------------------------------------------------------------------------

const fail = (
  reason: OwnerReference.OwnerReferenceErrorReason,
  child: KubeObject | undefined,
  message: string,
  existing?: Ref
): Effect.Effect<never, OwnerReferenceError> =>
  Effect.fail(
    new OwnerReferenceError({
      reason,
      object: child === undefined ? "" : keyOf(child),
      message,
      ...(existing === undefined ? {} : { existing })
    })
  )

const reference = (
  owner: KubeObject,
  ownerResource: Resource<unknown>,
  controller: boolean,
  child?: KubeObject
): Effect.Effect<Ref, OwnerReferenceError> => {
  const name = owner.metadata?.name
  const uid = owner.metadata?.uid
  const kind = ownerResource.kind
  if (name === undefined || name === "") {
    return fail("MissingName", child, `the owner (a ${kind}) has no metadata.name`)
  }
  if (uid === undefined || uid === "") {
    return fail("MissingUid", child, `the owner ${kind} ${keyOf(owner)} has no metadata.uid (read it from the server)`)
  }
  const ref: Ref = controller
    ? { apiVersion: apiVersion(ownerResource), kind, name, uid, controller: true, blockOwnerDeletion: true }
    : { apiVersion: apiVersion(ownerResource), kind, name, uid }
  return Effect.succeed(ref)
}

/** @internal */
export const controllerReference = (
  owner: KubeObject,
  ownerResource: Resource<unknown>
): Effect.Effect<Ref, OwnerReferenceError> => reference(owner, ownerResource, true)

/** @internal */
export const ownerReference = (
  owner: KubeObject,
  ownerResource: Resource<unknown>
): Effect.Effect<Ref, OwnerReferenceError> => reference(owner, ownerResource, false)

/**
 * controller-runtime's `validateOwner`, with the scopes from the resources: a namespaced owner can own only
 * namespaced children of its own namespace.
 */
const validate = (
  owner: KubeObject,
  ownerResource: Resource<unknown>,
  child: KubeObject,
  childResource: Resource<unknown>
): Effect.Effect<void, OwnerReferenceError> => {
  if (!ownerResource.namespaced) return Effect.void
  const ownerNamespace = owner.metadata?.namespace ?? ""
  const owned = `${ownerResource.kind} ${keyOf(owner)}`
  if (!childResource.namespaced) {
    return fail(
      "ClusterScopedChild",
      child,
      `the ${childResource.kind} ${keyOf(child)} is cluster-scoped and cannot have the namespaced owner ${owned}`
    )
  }
  const childNamespace = child.metadata?.namespace ?? ""
  if (ownerNamespace === "" || ownerNamespace !== childNamespace) {
    return fail(
      "CrossNamespace",
      child,
      `cross-namespace owner references are disallowed: the owner ${owned} is in namespace "${ownerNamespace}", ` +
        `the ${childResource.kind} ${keyOf(child)} in "${childNamespace}"`
    )
  }
  return Effect.void
}

const withRefs = <A extends KubeObject>(child: A, refs: ReadonlyArray<unknown>): A => {
  const { ownerReferences: _, ...metadata } = child.metadata ?? {}
  return { ...child, metadata: refs.length === 0 ? metadata : { ...metadata, ownerReferences: refs } }
}

/**
 * `child` with `ref` in place of its references to the same owner (at the first one's position), or
 * appended; `merge` makes the replacement from the reference it replaces. Malformed entries are kept.
 */
const upsert = <A extends KubeObject>(child: A, ref: Ref, merge: (old: Ref) => Ref): A => {
  const refs = child.metadata?.ownerReferences
  const current: ReadonlyArray<unknown> = Array.isArray(refs) ? refs : []
  const next: Array<unknown> = []
  let placed = false
  for (const entry of current) {
    if (isRef(entry) && sameOwner(entry, ref)) {
      if (!placed) next.push(merge(entry))
      placed = true
    } else {
      next.push(entry)
    }
  }
  if (!placed) next.push(ref)
  return withRefs(child, next)
}

/** @internal */
export const setControllerReference = <A extends KubeObject>(
  owner: KubeObject,
  ownerResource: Resource<unknown>,
  child: A,
  childResource: Resource<unknown>
): Effect.Effect<A, OwnerReferenceError> =>
  Effect.flatMap(
    reference(owner, ownerResource, true, child),
    (ref) =>
      Effect.flatMap(validate(owner, ownerResource, child, childResource), () => {
        const existing = controllerOf(child)
        if (Option.isSome(existing) && !sameOwner(existing.value, ref)) {
          const other = existing.value
          return fail(
            "AlreadyOwned",
            child,
            `the ${childResource.kind} ${keyOf(child)} is already controlled by ${other.kind} ${other.name} ` +
              `(uid ${other.uid})`,
            other
          )
        }
        return Effect.succeed(upsert(child, ref, () => ref))
      })
  )

/** @internal */
export const setOwnerReference = <A extends KubeObject>(
  owner: KubeObject,
  ownerResource: Resource<unknown>,
  child: A,
  childResource: Resource<unknown>
): Effect.Effect<A, OwnerReferenceError> =>
  Effect.flatMap(
    reference(owner, ownerResource, false, child),
    (ref) =>
      Effect.map(validate(owner, ownerResource, child, childResource), () =>
        upsert(child, ref, (old) => ({
          ...ref,
          ...(old.controller === undefined ? {} : { controller: old.controller }),
          ...(old.blockOwnerDeletion === undefined ? {} : { blockOwnerDeletion: old.blockOwnerDeletion })
        })))
  )

/** @internal */
export const removeOwnerReference = <A extends KubeObject>(
  obj: A,
  owner: KubeObject,
  ownerResource: Resource<unknown>
): A => {
  const refs = obj.metadata?.ownerReferences
  if (!Array.isArray(refs)) return obj
  const target = targetOf(owner, ownerResource)
  const next = (refs as ReadonlyArray<unknown>).filter((entry) => !(isRef(entry) && sameOwner(entry, target)))
  return next.length === refs.length ? obj : withRefs(obj, next)
}

/**
 * The write rules of the fake Client, as kube-apiserver's registry applies them, as pure functions over
 * JSON objects: create (names, uid, timestamps, generation), replace (optimistic concurrency, the status
 * subresource, generation, finalizers of an object being deleted), delete (preconditions, finalizers), and
 * the `managedFields` entry of a server-side apply. The rules the test kit's server applies too (traits,
 * names, generation, statuses) are in `registry.ts`; the fake has no admission, no garbage collector, no
 * validation of specs.
 *
 * @internal
 */
import * as Result from "effect/Result"
import type { FieldError, ResourceTraits } from "../../ApiStore.js"
import type { Resource } from "../../Resource.js"
import { apiVersion } from "../../Resource.js"
import type { Status } from "../../Wire.js"
import { failureStatus } from "../../Wire.js"
import { badRequest, invalid } from "./apiStore.js"
import type { JsonObject } from "./json.js"
import { isObject, jsonEqual } from "./json.js"
import {
  addedFinalizers,
  alreadyExists,
  finalizersOf,
  formatTime,
  generationChanges,
  modifiedConflict,
  preconditionFailed,
  sameObject,
  validateName
} from "./registry.js"

// -------------------------------------------------------------------------------------------------
// statuses
// -------------------------------------------------------------------------------------------------

/** A strategic merge patch of a custom resource. @internal */
export const unsupportedPatch: Status = failureStatus(
  415,
  "UnsupportedMediaType",
  "the body of the request was in an unknown format - accepted media types include: application/json-patch+json, " +
    "application/merge-patch+json, application/apply-patch+yaml"
)

/** 422 or 413, as the API server answers a patch that does not apply. @internal */
export const patchFailed = (message: string, tooLarge: boolean): Status =>
  tooLarge
    ? failureStatus(413, "RequestEntityTooLarge", `Request entity too large: ${message}`)
    : failureStatus(422, "Invalid", message)

/** @internal */
export { badRequest }

// -------------------------------------------------------------------------------------------------
// validation
// -------------------------------------------------------------------------------------------------

const invalidOf = (resource: Resource<unknown>, name: string, errors: ReadonlyArray<FieldError>): Status =>
  invalid(resource.kind, resource.group, name, errors)

// -------------------------------------------------------------------------------------------------
// helpers
// -------------------------------------------------------------------------------------------------

/** `metadata` of a stored or sent object (`{}` when absent or not an object). @internal */
export const metadataOf = (obj: JsonObject): JsonObject => isObject(obj.metadata) ? obj.metadata : {}

const stringOf = (value: unknown): string => typeof value === "string" ? value : ""

// -------------------------------------------------------------------------------------------------
// writes
// -------------------------------------------------------------------------------------------------

/** What a write does to the store. @internal */
export interface Outcome {
  readonly type: "ADDED" | "MODIFIED" | "DELETED" | "UNCHANGED"
  /** The object as written (its resourceVersion is the store's to set), or the stored one when unchanged. */
  readonly obj: JsonObject
}

/** What a create takes from outside: the time, a uid, the suffix of a `generateName`. @internal */
export interface CreateContext {
  readonly now: number
  readonly uid: string
  readonly suffix: string
}

/**
 * The namespace of a write: the call's; the object's must be absent or the same (400 otherwise, as the
 * API server answers). `undefined` for a cluster-scoped resource.
 *
 * @internal
 */
export const checkNamespace = (
  resource: Resource<unknown>,
  input: JsonObject,
  namespace: string | undefined
): Status | undefined => {
  if (!resource.namespaced) return undefined
  const own = stringOf(metadataOf(input).namespace)
  return own !== "" && own !== namespace
    ? badRequest("the namespace of the provided object does not match the namespace sent on the request")
    : undefined
}

/**
 * A create: `find` says whether a name is taken in the namespace.
 *
 * @internal
 */
export const create = (
  resource: Resource<unknown>,
  traits: ResourceTraits,
  input: JsonObject,
  namespace: string | undefined,
  exists: (name: string) => boolean,
  ctx: CreateContext
): Result.Result<Outcome, Status> => {
  const wrong = checkNamespace(resource, input, namespace)
  if (wrong !== undefined) return Result.fail(wrong)
  const meta: JsonObject = { ...metadataOf(input) }
  let name = stringOf(meta.name)
  if (name === "") {
    const generateName = stringOf(meta.generateName)
    if (generateName === "") {
      return Result.fail(invalidOf(resource, "", [{
        reason: "FieldValueRequired",
        field: "metadata.name",
        message: "Required value: name or generateName is required"
      }]))
    }
    name = generateName + ctx.suffix
  }
  const nameError = validateName(resource, name)
  if (nameError !== undefined) return Result.fail(invalidOf(resource, name, [nameError]))
  if (stringOf(meta.resourceVersion) !== "") {
    return Result.fail(
      failureStatus(500, "InternalError", "resourceVersion should not be set on objects to be created")
    )
  }
  if (exists(name)) return Result.fail(alreadyExists(resource, name))
  const metadata: JsonObject = {
    ...meta,
    name,
    ...(namespace === undefined ? {} : { namespace }),
    uid: ctx.uid,
    ...(traits.tracksGeneration ? { generation: 1 } : {}),
    creationTimestamp: formatTime(ctx.now)
  }
  if (namespace === undefined) delete metadata.namespace
  delete metadata.resourceVersion
  delete metadata.deletionTimestamp
  delete metadata.deletionGracePeriodSeconds
  if (!traits.tracksGeneration) delete metadata.generation
  const obj: JsonObject = { ...input, apiVersion: apiVersion(resource), kind: resource.kind, metadata }
  // kube-apiserver's create strategies reset the status of resources with a status subresource
  if (traits.statusSubresource) delete obj.status
  return Result.succeed({ type: "ADDED", obj })
}

/**
 * A replacement of `existing` by `input` (an update's body, a patched or applied object): `scope`
 * `"object"` keeps the stored status (with a status subresource), `"status"` keeps everything but the
 * status. `managedFields`, when given, is set as the object's. System fields are kept; the generation
 * follows; a new finalizer on an object being deleted is refused; the object goes once a deletion's last
 * finalizer is gone; nothing is written when nothing changes.
 *
 * @internal
 */
export const replace = (
  resource: Resource<unknown>,
  traits: ResourceTraits,
  existing: JsonObject,
  input: JsonObject,
  scope: "object" | "status",
  managedFields?: unknown
): Result.Result<Outcome, Status> => {
  const old = metadataOf(existing)
  const name = stringOf(old.name)
  const meta = metadataOf(input)
  const bodyName = stringOf(meta.name)
  if (bodyName !== "" && bodyName !== name) {
    return Result.fail(badRequest(`the name of the object (${bodyName}) does not match the name on the URL (${name})`))
  }
  const wrong = checkNamespace(resource, input, resource.namespaced ? stringOf(old.namespace) : undefined)
  if (wrong !== undefined) return Result.fail(wrong)
  const rv = stringOf(meta.resourceVersion)
  if (rv !== "" && rv !== stringOf(old.resourceVersion)) return Result.fail(modifiedConflict(resource, name))
  const uid = stringOf(meta.uid)
  if (uid !== "" && uid !== old.uid) return Result.fail(preconditionFailed(resource, name, "UID", uid, old.uid))
  let obj: JsonObject
  let metadata: JsonObject
  if (scope === "status") {
    metadata = { ...old }
    obj = { ...existing, metadata }
    if (input.status === undefined) delete obj.status
    else obj.status = input.status
  } else {
    metadata = { ...meta }
    for (const field of ["name", "namespace", "uid", "creationTimestamp", "deletionTimestamp", "generateName"]) {
      if (old[field] === undefined) delete metadata[field]
      else metadata[field] = old[field]
    }
    // an update can never set, remove or change the deletion's grace period or the generation
    if (old.deletionGracePeriodSeconds === undefined) delete metadata.deletionGracePeriodSeconds
    else metadata.deletionGracePeriodSeconds = old.deletionGracePeriodSeconds
    if (old.generation === undefined) delete metadata.generation
    else metadata.generation = old.generation
    if (old.deletionTimestamp !== undefined) {
      const added = addedFinalizers(old.finalizers, metadata.finalizers)
      if (added !== undefined) return Result.fail(invalidOf(resource, name, [added]))
    }
    obj = { ...input, metadata }
    if (traits.statusSubresource) {
      if (existing.status === undefined) delete obj.status
      else obj.status = existing.status
    }
  }
  if (managedFields !== undefined) metadata.managedFields = managedFields
  metadata.resourceVersion = old.resourceVersion
  obj.apiVersion = apiVersion(resource)
  obj.kind = resource.kind
  if (scope === "object" && typeof old.generation === "number" && generationChanges(traits, existing, obj)) {
    metadata.generation = old.generation + 1
  }
  // a deleting object whose last finalizer is gone goes away
  if (metadata.deletionTimestamp !== undefined && finalizersOf(metadata.finalizers).length === 0) {
    return Result.succeed({ type: "DELETED", obj })
  }
  return Result.succeed(sameObject(obj, existing) ? { type: "UNCHANGED", obj: existing } : { type: "MODIFIED", obj })
}

/** @internal */
export interface Preconditions {
  readonly uid?: string | undefined
  readonly resourceVersion?: string | undefined
}

/**
 * A delete: preconditions, then either the deletion (DELETED, the last state) or, with finalizers, the
 * mark (`deletionTimestamp`, `deletionGracePeriodSeconds: 0`, generation + 1: MODIFIED) or nothing (already
 * marked).
 *
 * @internal
 */
export const remove = (
  resource: Resource<unknown>,
  existing: JsonObject,
  preconditions: Preconditions | undefined,
  now: number
): Result.Result<Outcome, Status> => {
  const old = metadataOf(existing)
  const name = stringOf(old.name)
  if (preconditions?.uid !== undefined && preconditions.uid !== old.uid) {
    return Result.fail(preconditionFailed(resource, name, "UID", preconditions.uid, old.uid))
  }
  if (preconditions?.resourceVersion !== undefined && preconditions.resourceVersion !== old.resourceVersion) {
    return Result.fail(
      preconditionFailed(resource, name, "ResourceVersion", preconditions.resourceVersion, old.resourceVersion)
    )
  }
  if (finalizersOf(old.finalizers).length === 0) return Result.succeed({ type: "DELETED", obj: existing })
  if (old.deletionTimestamp !== undefined) return Result.succeed({ type: "UNCHANGED", obj: existing })
  const metadata: JsonObject = { ...old, deletionTimestamp: formatTime(now), deletionGracePeriodSeconds: 0 }
  if (typeof old.generation === "number" && old.generation > 0) metadata.generation = old.generation + 1
  return Result.succeed({ type: "MODIFIED", obj: { ...existing, metadata } })
}

// -------------------------------------------------------------------------------------------------
// server-side apply
// -------------------------------------------------------------------------------------------------

/** Metadata fields the API server never counts as a manager's. */
const systemMetadata: ReadonlySet<string> = new Set([
  "name",
  "namespace",
  "uid",
  "resourceVersion",
  "generation",
  "creationTimestamp",
  "deletionTimestamp",
  "deletionGracePeriodSeconds",
  "managedFields"
])

/** FieldsV1 of a value: an object's members (`f:<name>`), each with its own; anything else is a leaf. */
const fieldsOf = (value: unknown): JsonObject => {
  if (!isObject(value)) return {}
  const out: JsonObject = {}
  for (const key of Object.keys(value).sort()) out[`f:${key}`] = fieldsOf(value[key])
  return out
}

/**
 * The fields an applied configuration sets, in FieldsV1 form (approximated: lists are atomic): the
 * status only for `/status`; the rest, without `apiVersion`, `kind`, the system metadata and (with a status
 * subresource) the status, otherwise.
 *
 * @internal
 */
export const appliedFields = (config: JsonObject, status: boolean, traits: ResourceTraits): JsonObject => {
  if (status) return config.status === undefined ? {} : { "f:status": fieldsOf(config.status) }
  const out: JsonObject = {}
  for (const key of Object.keys(config).sort()) {
    if (key === "apiVersion" || key === "kind") continue
    if (key === "status" && traits.statusSubresource) continue
    if (key === "metadata") {
      const meta = metadataOf(config)
      const kept: JsonObject = {}
      for (const field of Object.keys(meta)) if (!systemMetadata.has(field)) kept[field] = meta[field]
      if (Object.keys(kept).length > 0) out["f:metadata"] = fieldsOf(kept)
      continue
    }
    out[`f:${key}`] = fieldsOf(config[key])
  }
  return out
}

/**
 * `managedFields` with the `Apply` entry of `manager` (on `/status` or not) set to `fields`: an entry with
 * the same fields is kept as it is (its time too, so that applying the same configuration again writes
 * nothing), another one is replaced.
 *
 * @internal
 */
export const withApplyEntry = (
  current: unknown,
  manager: string,
  status: boolean,
  fields: JsonObject,
  resource: Resource<unknown>,
  now: number
): Array<unknown> => {
  const entries: Array<unknown> = Array.isArray(current) ? current.slice() : []
  const mine = (entry: unknown) =>
    isObject(entry) && entry.manager === manager && entry.operation === "Apply" &&
    (entry.subresource ?? "") === (status ? "status" : "")
  const index = entries.findIndex(mine)
  if (index >= 0 && jsonEqual((entries[index] as JsonObject).fieldsV1, fields)) return entries
  const entry: JsonObject = {
    manager,
    operation: "Apply",
    apiVersion: apiVersion(resource),
    time: formatTime(now),
    fieldsType: "FieldsV1",
    fieldsV1: fields,
    ...(status ? { subresource: "status" } : {})
  }
  if (index >= 0) entries[index] = entry
  else entries.push(entry)
  return entries
}

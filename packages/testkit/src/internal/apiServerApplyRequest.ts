/**
 * A server-side apply request (`PATCH` with `Content-Type: application/apply-patch+yaml`) against the
 * embedded API server's store: the body decoded (JSON, or YAML), the request's checks and preconditions,
 * the engine's merge (`apiServerApply.ts`), then a create (upsert) or a replace through the store's rules.
 *
 * @internal
 */
import * as ApiStore from "effect-informers/ApiStore"
import type { Status } from "effect-informers/Wire"
import * as Result from "effect/Result"
import { CORE_SCHEMA, load } from "js-yaml"
import type { ResetFields } from "./apiServerApply.js"
import { applyConfig, conflictStatus } from "./apiServerApply.js"
import type { Entry, ResourceStore, Store, WriteContext } from "./apiServerStore.js"
import {
  badRequest,
  conflict,
  jsonTextTooDeep,
  jsonValueTooDeep,
  maxJsonDepth,
  modifiedConflict,
  notFound,
  objectKey
} from "./apiServerStore.js"
import type { JsonObject } from "./json.js"
import { isObject } from "./json.js"

const tooDeep = badRequest(
  `the body of the request was in an unknown format: objects and arrays are nested more than ${maxJsonDepth} levels deep`
)

/**
 * The applied configuration: JSON (what kubectl and client libraries send), else YAML (one document, the
 * YAML 1.2 core schema), as kube-apiserver reads `application/apply-patch+yaml`; an empty body is an empty
 * object. 400 otherwise.
 *
 * @internal
 */
export const decodeApplyBody = (text: string): Result.Result<JsonObject, Status> => {
  let value: unknown
  if (text.trim() === "") {
    value = {}
  } else if (jsonTextTooDeep(text, maxJsonDepth)) {
    return Result.fail(tooDeep)
  } else {
    try {
      value = JSON.parse(text)
    } catch {
      try {
        value = load(text, { schema: CORE_SCHEMA })
      } catch (e) {
        const message = e instanceof Error ? e.message.split("\n")[0] : String(e)
        return Result.fail(badRequest(`error encoding patch: yaml: ${message}`))
      }
      if (jsonValueTooDeep(value, maxJsonDepth)) return Result.fail(tooDeep)
      // through JSON, as kube-apiserver converts YAML (dates stay strings with the core schema)
      value = JSON.parse(JSON.stringify(value ?? {}))
    }
  }
  if (value === null) value = {}
  if (!isObject(value)) {
    const type = Array.isArray(value) ? "array" : typeof value === "string" ? "string" : typeof value
    return Result.fail(
      badRequest(`error decoding patch: json: cannot unmarshal ${type} into Go value of type map[string]interface {}`)
    )
  }
  return Result.succeed(value)
}

/** @internal */
export interface ApplyRequest {
  readonly manager: string
  readonly force: boolean
  readonly subresource: string | undefined
  readonly reset: ResetFields
}

/** The outcome of an apply: the stored entry, and whether it was created (201) or not (200). @internal */
export interface Applied {
  readonly entry: Entry
  readonly created: boolean
}

const gvkString = (apiVersion: unknown, kind: unknown): string => {
  const version = typeof apiVersion === "string" ? apiVersion : ""
  return `${version.includes("/") ? version : `/${version}`}, Kind=${typeof kind === "string" ? kind : ""}`
}

/** A 500 the way kube-apiserver answers an error that is not a Status: no reason. */
const internal = (message: string): Status => ({
  kind: "Status",
  apiVersion: "v1",
  metadata: {},
  status: "Failure",
  message,
  code: 500
})

/**
 * Applies `config` to the object `namespace`/`name` of `rs`:
 *
 * - the configuration's `apiVersion` and `kind` must be the resource's (400 `invalid object type`), its
 *   `metadata.managedFields` unset (400);
 * - a missing object is created (`created: true`), with a new uid, creationTimestamp and generation; a
 *   configuration naming a uid then is a conflict (409), and a status subresource is not found (404);
 * - an existing object: `metadata.resourceVersion` and `metadata.uid` in the configuration are
 *   preconditions (409);
 * - conflicts are a 409 with one cause per field; a configuration the merge topology cannot read is a 500,
 *   as in kube-apiserver;
 * - the merged object must keep its name and namespace (400).
 *
 * @internal
 */
export const applyObject = (
  store: Store,
  rs: ResourceStore,
  namespace: string,
  name: string,
  config: JsonObject,
  request: ApplyRequest,
  ctx: WriteContext
): Result.Result<Applied, Status> => {
  const resource = rs.resource
  if (config.apiVersion !== rs.apiVersion || config.kind !== resource.kind) {
    return Result.fail(badRequest(`invalid object type: ${gvkString(config.apiVersion, config.kind)}`))
  }
  const meta = isObject(config.metadata) ? config.metadata : {}
  if (meta.managedFields !== undefined && meta.managedFields !== null) {
    return Result.fail(badRequest("metadata.managedFields must be nil"))
  }
  const existing = rs.entries.get(objectKey(namespace, name))
  const uid = typeof meta.uid === "string" && meta.uid !== "" ? meta.uid : undefined
  if (existing === undefined) {
    if (request.subresource !== undefined) return Result.fail(notFound(rs, name))
    if (uid !== undefined) {
      return Result.fail(
        conflict(rs, name, `uid mismatch: the provided object specified uid ${uid}, and no existing object was found`)
      )
    }
  } else {
    const rv = typeof meta.resourceVersion === "string" ? meta.resourceVersion : ""
    if (rv !== "" && rv !== String(existing.rv)) return Result.fail(modifiedConflict(rs, name))
    const liveUid = existing.metadata.uid
    if (uid !== undefined && uid !== liveUid) {
      return Result.fail(ApiStore.preconditionFailed(rs.resource, name, "UID", uid, liveUid))
    }
  }
  const outcome = applyConfig(existing?.obj, config, {
    manager: request.manager,
    force: request.force,
    apiVersion: rs.apiVersion,
    kind: resource.kind,
    subresource: request.subresource,
    reset: request.reset,
    now: ctx.now
  })
  switch (outcome._tag) {
    case "Conflicts":
      return Result.fail(conflictStatus(outcome.conflicts))
    case "Invalid":
      return Result.fail(internal(outcome.message))
  }
  const object = outcome.object
  const metadata = object.metadata as JsonObject
  const objectName = typeof metadata.name === "string" ? metadata.name : ""
  if (objectName !== name) {
    return Result.fail(
      badRequest(`the name of the object (${objectName}) does not match the name on the URL (${name})`)
    )
  }
  const objectNamespace = typeof metadata.namespace === "string" ? metadata.namespace : ""
  if (resource.namespaced && objectNamespace !== "" && objectNamespace !== namespace) {
    return Result.fail(
      badRequest(
        `the namespace of the object (${objectNamespace}) does not match the namespace on the request (${namespace})`
      )
    )
  }
  if (existing === undefined) {
    // create-by-apply wipes what a create does not take from the client
    delete metadata.resourceVersion
    return Result.map(store.create(rs, object, namespace, ctx), (entry) => ({ entry, created: true }))
  }
  return Result.map(store.replace(rs, existing, object, { ...metadata }), (entry) => ({ entry, created: false }))
}

/**
 * Patches as the in-memory fakes and the test kit's embedded API server apply them: JSON merge patch
 * (RFC 7386), an approximation of Kubernetes' strategic merge patch (merge patch plus merging of
 * well-known lists by their merge key and the `$patch` directives), and JSON patch (RFC 6902). Inputs are
 * never mutated; unchanged parts are shared. Exposed by `ApiStore` (`mergePatch`, `strategicMergePatch`,
 * `jsonPatch`).
 *
 * @internal
 */
import * as Data from "effect/Data"
import type { JsonObject } from "./json.js"
import { isObject, jsonEqual } from "./json.js"

type Json = unknown

/**
 * RFC 7386.
 *
 * @internal
 */
export const mergePatch = (target: Json, patch: Json): Json => {
  if (!isObject(patch)) return patch
  const base: JsonObject = isObject(target) ? target : {}
  const out: JsonObject = { ...base }
  for (const key of Object.keys(patch)) {
    const value = patch[key]
    if (value === null) delete out[key]
    else out[key] = mergePatch(base[key], value)
  }
  return out
}

/** The merge keys of the lists Kubernetes merges by key (`patchMergeKey` in the API types). */
const mergeKeys: { readonly [field: string]: string } = {
  containers: "name",
  initContainers: "name",
  ephemeralContainers: "name",
  volumes: "name",
  volumeMounts: "mountPath",
  volumeDevices: "devicePath",
  env: "name",
  ports: "containerPort",
  imagePullSecrets: "name",
  conditions: "type",
  ownerReferences: "uid",
  hostAliases: "ip",
  topologySpreadConstraints: "topologyKey",
  resourceClaims: "name",
  containerStatuses: "name",
  initContainerStatuses: "name"
}

/**
 * Strategic merge patch, approximated: objects merge as in a merge patch, lists with a known merge key
 * merge by that key (`{"$patch":"delete"}` items are removed), other lists are replaced; `$`-directives
 * other than `$patch` are ignored.
 *
 * @internal
 */
export const strategicMergePatch = (target: Json, patch: Json): Json => {
  if (!isObject(patch)) return patch
  if (patch.$patch === "replace") {
    const { $patch: _, ...rest } = patch
    return stripDirectives(rest)
  }
  if (patch.$patch === "delete") return undefined
  const base: JsonObject = isObject(target) ? target : {}
  const out: JsonObject = { ...base }
  for (const key of Object.keys(patch)) {
    if (key.startsWith("$")) continue
    const value = patch[key]
    if (value === null) {
      delete out[key]
    } else if (Array.isArray(value) && Array.isArray(base[key]) && mergeKeys[key] !== undefined) {
      out[key] = mergeList(base[key] as ReadonlyArray<unknown>, value, mergeKeys[key])
    } else {
      const merged = strategicMergePatch(base[key], value)
      if (merged === undefined) delete out[key]
      else out[key] = merged
    }
  }
  return out
}

const stripDirectives = (value: Json): Json => {
  if (Array.isArray(value)) return value.map(stripDirectives)
  if (!isObject(value)) return value
  const out: JsonObject = {}
  for (const key of Object.keys(value)) if (!key.startsWith("$")) out[key] = stripDirectives(value[key])
  return out
}

const mergeList = (base: ReadonlyArray<unknown>, patch: ReadonlyArray<unknown>, mergeKey: string): Array<unknown> => {
  if (!patch.every((item) => isObject(item) && mergeKey in item)) return patch.map(stripDirectives)
  const out = base.slice()
  for (const item of patch as ReadonlyArray<JsonObject>) {
    const index = out.findIndex((current) => isObject(current) && current[mergeKey] === item[mergeKey])
    if (item.$patch === "delete") {
      if (index >= 0) out.splice(index, 1)
    } else if (index >= 0) {
      out[index] = strategicMergePatch(out[index], item)
    } else {
      out.push(stripDirectives(item))
    }
  }
  return out
}

/**
 * Why a JSON patch could not be applied: `Invalid` (a malformed patch, a missing path, a failed `test`:
 * the API server's 422) or `TooLarge` (a limit of `JsonPatchLimits` exceeded: 413).
 *
 * @internal
 */
export class JsonPatchError extends Data.TaggedError("JsonPatchError")<{
  readonly reason: "Invalid" | "TooLarge"
  readonly message: string
}> {
  /** A limit of `JsonPatchLimits` was exceeded (413 rather than 422). */
  get tooLarge(): boolean {
    return this.reason === "TooLarge"
  }
}

const invalidPatch = (message: string): JsonPatchError => new JsonPatchError({ reason: "Invalid", message })

/**
 * Bounds of one JSON patch, as kube-apiserver sets them.
 *
 * @internal
 */
export interface JsonPatchLimits {
  /** Operations in one patch (kube-apiserver: 10,000). */
  readonly maxOperations: number
  /** The total size, as JSON, of the values that `copy` operations duplicate (kube-apiserver: its body limit). */
  readonly maxCopyBytes: number
}

/** @internal */
export const defaultJsonPatchLimits: JsonPatchLimits = { maxOperations: 10_000, maxCopyBytes: 3 * 1024 * 1024 }

const decodePointer = (pointer: string): Array<string> => {
  if (pointer === "") return []
  if (!pointer.startsWith("/")) throw invalidPatch(`invalid JSON pointer: ${pointer}`)
  return pointer.slice(1).split("/").map((token) => token.replace(/~1/g, "/").replace(/~0/g, "~"))
}

const clone = (value: Json): Json => value === undefined ? undefined : JSON.parse(JSON.stringify(value))

const parentOf = (doc: Json, tokens: ReadonlyArray<string>, op: string): Json => {
  let current = doc
  for (let i = 0; i < tokens.length - 1; i++) {
    const token = tokens[i]
    if (Array.isArray(current)) current = current[Number(token)]
    else if (isObject(current)) current = current[token]
    else current = undefined
    if (current === undefined) {
      throw invalidPatch(`${op} operation does not apply: doc is missing path: /${tokens.join("/")}`)
    }
  }
  return current
}

const getAt = (doc: Json, tokens: ReadonlyArray<string>, op: string): Json => {
  if (tokens.length === 0) return doc
  const parent = parentOf(doc, tokens, op)
  const last = tokens[tokens.length - 1]
  const value = Array.isArray(parent) ? parent[Number(last)] : isObject(parent) ? parent[last] : undefined
  if (value === undefined) {
    throw invalidPatch(`${op} operation does not apply: doc is missing path: /${tokens.join("/")}`)
  }
  return value
}

const removeAt = (doc: Json, tokens: ReadonlyArray<string>, op: string): Json => {
  const value = getAt(doc, tokens, op)
  const parent = parentOf(doc, tokens, op)
  const last = tokens[tokens.length - 1]
  if (Array.isArray(parent)) parent.splice(Number(last), 1)
  else delete (parent as JsonObject)[last]
  return value
}

const addAt = (doc: Json, tokens: ReadonlyArray<string>, value: Json, op: string, replace: boolean): Json => {
  if (tokens.length === 0) return value
  const parent = parentOf(doc, tokens, op)
  const last = tokens[tokens.length - 1]
  if (Array.isArray(parent)) {
    const index = last === "-" ? parent.length : Number(last)
    if (!Number.isInteger(index) || index < 0 || index > parent.length || (replace && index >= parent.length)) {
      throw invalidPatch(`${op} operation does not apply: index out of bounds: ${last}`)
    }
    if (replace) parent[index] = value
    else parent.splice(index, 0, value)
  } else if (isObject(parent)) {
    if (replace && !(last in parent)) {
      throw invalidPatch(`${op} operation does not apply: doc is missing key: /${tokens.join("/")}`)
    }
    parent[last] = value
  } else {
    throw invalidPatch(`${op} operation does not apply: doc is missing path: /${tokens.join("/")}`)
  }
  return doc
}

/**
 * RFC 6902. Throws `JsonPatchError`.
 *
 * @internal
 */
export const jsonPatch = (target: Json, operations: Json, limits: JsonPatchLimits = defaultJsonPatchLimits): Json => {
  if (!Array.isArray(operations)) throw invalidPatch("json patch must be an array of operations")
  if (operations.length > limits.maxOperations) {
    throw new JsonPatchError({
      reason: "TooLarge",
      message: `The allowed maximum operations in a JSON patch is ${limits.maxOperations}, got ${operations.length}`
    })
  }
  let copied = 0
  let doc = clone(target)
  for (const operation of operations) {
    if (!isObject(operation) || typeof operation.op !== "string" || typeof operation.path !== "string") {
      throw invalidPatch("invalid json patch operation")
    }
    const path = decodePointer(operation.path)
    switch (operation.op) {
      case "add":
        doc = addAt(doc, path, clone(operation.value), "add", false)
        break
      case "remove":
        removeAt(doc, path, "remove")
        break
      case "replace":
        getAt(doc, path, "replace")
        doc = addAt(doc, path, clone(operation.value), "replace", true)
        break
      case "move": {
        const from = decodePointer(String(operation.from))
        const value = removeAt(doc, from, "move")
        doc = addAt(doc, path, value, "move", false)
        break
      }
      case "copy": {
        const from = decodePointer(String(operation.from))
        const json = JSON.stringify(getAt(doc, from, "copy"))
        copied += json.length
        if (copied > limits.maxCopyBytes) {
          throw new JsonPatchError({
            reason: "TooLarge",
            message:
              `Unable to complete the copy, the accumulated size increase of copy is ${copied}, exceeding the limit ${limits.maxCopyBytes}`
          })
        }
        doc = addAt(doc, path, JSON.parse(json), "copy", false)
        break
      }
      case "test": {
        const value = getAt(doc, path, "test")
        if (!jsonEqual(value, operation.value)) {
          throw invalidPatch(`testing value /${path.join("/")} failed: test failed`)
        }
        break
      }
      default:
        throw invalidPatch(`Unexpected kind: ${operation.op}`)
    }
  }
  return doc
}

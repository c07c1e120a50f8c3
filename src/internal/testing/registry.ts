/**
 * kube-apiserver's registry rules that every in-memory front end applies alike (the fake `Client`, the test
 * kit's server): how each resource is treated (status subresource, generation, default propagation), the
 * name rules, when a write bumps the generation or changes nothing, and the failure statuses of a write, in
 * kube-apiserver's words. Reached by the test kit through `ApiStore`.
 *
 * @internal
 */
import type { FieldError, ResourceTraits } from "../../ApiStore.js"
import type { Resource } from "../../Resource.js"
import { catalog, groupResource } from "../../Resource.js"
import type { Status } from "../../Wire.js"
import { failureStatus } from "../../Wire.js"
import type { JsonObject } from "./json.js"
import { jsonEqual } from "./json.js"

// -------------------------------------------------------------------------------------------------
// traits
// -------------------------------------------------------------------------------------------------

/**
 * The built-in resources (by group-resource) with a status subresource or a maintained
 * `metadata.generation`, as kube-apiserver's registry strategies have them: group-resource, status, generation.
 * The catalog's other resources have neither.
 */
const builtinTable: ReadonlyArray<readonly [string, boolean, boolean]> = [
  ["pods", true, true],
  ["services", true, false],
  ["nodes", true, false],
  ["namespaces", true, false],
  ["persistentvolumes", true, false],
  ["persistentvolumeclaims", true, false],
  ["replicationcontrollers", true, true],
  ["resourcequotas", true, false],
  ["deployments.apps", true, true],
  ["replicasets.apps", true, true],
  ["statefulsets.apps", true, true],
  ["daemonsets.apps", true, true],
  ["jobs.batch", true, true],
  ["cronjobs.batch", true, true],
  ["ingresses.networking.k8s.io", true, true],
  ["networkpolicies.networking.k8s.io", false, true],
  ["horizontalpodautoscalers.autoscaling", true, false],
  ["poddisruptionbudgets.policy", true, true],
  ["certificatesigningrequests.certificates.k8s.io", true, false],
  ["customresourcedefinitions.apiextensions.k8s.io", true, true],
  ["apiservices.apiregistration.k8s.io", true, false]
]

let builtins: ReadonlyMap<string, { readonly status: boolean; readonly generation: boolean }> | undefined

/** @internal */
export const resourceTraits = (resource: Resource<unknown>, status?: boolean | undefined): ResourceTraits => {
  builtins ??= new Map([
    ...catalog.map((r) => [groupResource(r), { status: false, generation: false }] as const),
    ...builtinTable.map(([gr, status, generation]) => [gr, { status, generation }] as const)
  ])
  const gr = groupResource(resource)
  const builtin = builtins.get(gr)
  return {
    statusSubresource: status ?? (builtin === undefined || builtin.status),
    tracksGeneration: builtin === undefined || builtin.generation,
    custom: builtin === undefined,
    generationOnAnnotations: gr === "deployments.apps",
    defaultPropagation: gr === "jobs.batch" && resource.version === "v1" ? "Orphan" : "Background"
  }
}

// -------------------------------------------------------------------------------------------------
// names
// -------------------------------------------------------------------------------------------------

const dns1123Subdomain = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/
const dns1123Label = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/

const subdomainMessage =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start " +
  "and end with an alphanumeric character (e.g. 'example.com', regex used for validation is " +
  "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
const labelMessage =
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end " +
  "with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is " +
  "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')"

/** @internal */
export const validateName = (resource: Resource<unknown>, name: string): FieldError | undefined => {
  const label = groupResource(resource) === "namespaces"
  if (label ? name.length > 63 || !dns1123Label.test(name) : name.length > 253 || !dns1123Subdomain.test(name)) {
    return {
      reason: "FieldValueInvalid",
      field: "metadata.name",
      message: `Invalid value: ${JSON.stringify(name)}: ${label ? labelMessage : subdomainMessage}`
    }
  }
  return undefined
}

// -------------------------------------------------------------------------------------------------
// writes
// -------------------------------------------------------------------------------------------------

/** @internal */
export const formatTime = (millis: number): string => new Date(millis).toISOString().replace(/\.\d{3}Z$/, "Z")

/** @internal */
export const finalizersOf = (value: unknown): ReadonlyArray<string> =>
  Array.isArray(value) ? value.filter((f): f is string => typeof f === "string") : []

/** @internal */
export const addedFinalizers = (before: unknown, after: unknown): FieldError | undefined => {
  const had = new Set(finalizersOf(before))
  const added = [...new Set(finalizersOf(after))].filter((f) => !had.has(f)).sort()
  if (added.length === 0) return undefined
  // Go's `%#v` of a `[]string`, as kube-apiserver quotes them
  const quoted = `[]string{${added.map((v) => JSON.stringify(v)).join(", ")}}`
  return {
    reason: "FieldValueForbidden",
    field: "metadata.finalizers",
    message: `Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers ${quoted}`
  }
}

/** @internal */
export const generationChanges = (traits: ResourceTraits, before: JsonObject, after: JsonObject): boolean => {
  if (traits.custom) {
    for (const key of new Set([...Object.keys(before), ...Object.keys(after)])) {
      if (key === "metadata" || key === "kind" || key === "apiVersion") continue
      if (key === "status" && traits.statusSubresource) continue
      if (!jsonEqual(before[key], after[key])) return true
    }
    return false
  }
  if (!jsonEqual(before.spec, after.spec)) return true
  return traits.generationOnAnnotations &&
    !jsonEqual((before.metadata as JsonObject).annotations, (after.metadata as JsonObject).annotations)
}

/** @internal */
export const sameObject = (a: JsonObject, b: JsonObject): boolean => {
  const keys = Object.keys(a)
  if (keys.length !== Object.keys(b).length) return false
  for (const key of keys) {
    if (!Object.prototype.hasOwnProperty.call(b, key)) return false
    if (key === "metadata") {
      const ma = a.metadata as JsonObject
      const mb = b.metadata as JsonObject
      const mk = Object.keys(ma)
      if (mk.length !== Object.keys(mb).length) return false
      for (const k of mk) {
        if (k === "resourceVersion") continue
        if (!Object.prototype.hasOwnProperty.call(mb, k) || !jsonEqual(ma[k], mb[k])) return false
      }
    } else if (!jsonEqual(a[key], b[key])) {
      return false
    }
  }
  return true
}

// -------------------------------------------------------------------------------------------------
// statuses
// -------------------------------------------------------------------------------------------------

const details = (resource: Resource<unknown>, name: string): Status["details"] =>
  resource.group === ""
    ? { name, kind: resource.resource }
    : { name, group: resource.group, kind: resource.resource }

/** @internal */
export const notFound = (resource: Resource<unknown>, name: string): Status =>
  failureStatus(404, "NotFound", `${groupResource(resource)} "${name}" not found`, details(resource, name))

/** @internal */
export const alreadyExists = (resource: Resource<unknown>, name: string): Status =>
  failureStatus(409, "AlreadyExists", `${groupResource(resource)} "${name}" already exists`, details(resource, name))

/** @internal */
export const conflict = (resource: Resource<unknown>, name: string, message: string): Status =>
  failureStatus(
    409,
    "Conflict",
    `Operation cannot be fulfilled on ${groupResource(resource)} "${name}": ${message}`,
    details(resource, name)
  )

/** @internal */
export const modifiedConflict = (resource: Resource<unknown>, name: string): Status =>
  conflict(
    resource,
    name,
    "the object has been modified; please apply your changes to the latest version and try again"
  )

/** @internal */
export const preconditionFailed = (
  resource: Resource<unknown>,
  name: string,
  field: "UID" | "ResourceVersion",
  given: string,
  actual: unknown
): Status =>
  conflict(
    resource,
    name,
    `Precondition failed: ${field} in precondition: ${given}, ${field} in object meta: ${String(actual)}`
  )

/** @internal */
export const resourceNotFound: Status = {
  ...failureStatus(404, "NotFound", "the server could not find the requested resource"),
  details: {}
}

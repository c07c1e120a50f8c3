/**
 * kube-apiserver's checks of the objects of a built-in resource beyond their metadata, where the library's
 * own machinery depends on them: a `coordination.k8s.io/v1` Lease (leader election, shard membership).
 *
 * Two stages, as kube-apiserver has them:
 * - **decoding** into the typed object: a field of the wrong JSON type, an integer out of `int32`, a
 *   MicroTime that is not `2006-01-02T15:04:05.000000Z07:00` fails the request before any validation. A
 *   create or an update answers 400 (`Lease in version "v1" cannot be handled as a Lease: json: cannot
 *   unmarshal string into Go struct field LeaseSpec.spec.leaseDurationSeconds of type int32`), a patch 422
 *   Invalid on the field `patch` (`decodeFailure`, `patchDecodeFailure`);
 * - **validation** of the decoded object (`ValidateLeaseSpec`): `spec.leaseDurationSeconds` greater than 0,
 *   `spec.leaseTransitions` not negative, each a `FieldValueInvalid` cause of a 422 Invalid
 *   (`Lease.coordination.k8s.io "x" is invalid: spec.leaseDurationSeconds: Invalid value: -1: must be
 *   greater than 0`) (`specErrors`).
 *
 * @internal
 */
import * as ApiStore from "effect-informers/ApiStore"
import type { Status } from "effect-informers/Wire"
import { failureStatus } from "effect-informers/Wire"
import type { JsonObject } from "./json.js"
import { isObject } from "./json.js"

/** The group-resource whose objects are checked here. */
const leases = "leases.coordination.k8s.io"

const int32Min = -2147483648
const int32Max = 2147483647

/** Go's `encoding/json` name of a JSON value's type in an `UnmarshalTypeError`. */
const jsonType = (value: unknown): string =>
  typeof value === "string"
    ? "string"
    : typeof value === "boolean"
    ? "bool"
    : Array.isArray(value)
    ? "array"
    : typeof value === "number"
    ? "number"
    : "object"

const typeError = (value: unknown, field: string, type: string): string =>
  `json: cannot unmarshal ${jsonType(value)} into Go struct field ${field} of type ${type}`

/** An `int32` field: a whole number in range (Go names a number it cannot store by its literal). */
const int32Error = (value: unknown, field: string): string | undefined => {
  if (typeof value !== "number") return typeError(value, field, "int32")
  return Number.isInteger(value) && value >= int32Min && value <= int32Max
    ? undefined
    : `json: cannot unmarshal number ${JSON.stringify(value)} into Go struct field ${field} of type int32`
}

/** `metav1.RFC3339Micro`, as `MicroTime.UnmarshalJSON` parses it: six fractional digits, `Z` or an offset. */
const microTime = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}(Z|[+-]\d{2}:\d{2})$/
const microLayout = "2006-01-02T15:04:05.000000Z07:00"

const microTimeError = (value: unknown, field: string): string | undefined => {
  if (typeof value !== "string") return typeError(value, field, "string")
  if (!microTime.test(value) || Number.isNaN(Date.parse(value))) {
    return `parsing time ${JSON.stringify(value)} as ${JSON.stringify(microLayout)}: cannot parse ${
      JSON.stringify(value)
    } as ${JSON.stringify(microLayout)}`
  }
  return undefined
}

/** The first field of a Lease's `spec` that does not decode (in the order of the body, as Go reports it). */
const leaseDecodeError = (obj: JsonObject): string | undefined => {
  const spec = obj.spec
  if (spec === undefined || spec === null) return undefined
  if (!isObject(spec)) return typeError(spec, "Lease.spec", "v1.LeaseSpec")
  for (const [key, value] of Object.entries(spec)) {
    if (value === null) continue
    const field = `LeaseSpec.spec.${key}`
    let error: string | undefined
    switch (key) {
      case "holderIdentity":
      case "strategy":
      case "preferredHolder":
        error = typeof value === "string" ? undefined : typeError(value, field, "string")
        break
      case "leaseDurationSeconds":
      case "leaseTransitions":
        error = int32Error(value, field)
        break
      case "acquireTime":
      case "renewTime":
        error = microTimeError(value, field)
        break
    }
    if (error !== undefined) return error
  }
  return undefined
}

/**
 * Why `obj`, an object of the resource `groupResource` as a write would store it, cannot be decoded by
 * kube-apiserver, if it cannot: the text of its decoding error.
 *
 * @internal
 */
export const decodeError = (groupResource: string, obj: JsonObject): string | undefined =>
  groupResource === leases ? leaseDecodeError(obj) : undefined

/**
 * The 400 kube-apiserver answers a create or an update whose body does not decode.
 *
 * @internal
 */
export const decodeFailure = (kind: string, version: string, error: string): Status =>
  failureStatus(
    400,
    "BadRequest",
    `${kind} in version ${JSON.stringify(version)} cannot be handled as a ${kind}: ${error}`
  )

/**
 * The 422 kube-apiserver answers a patch whose result does not decode: an Invalid of no kind or name,
 * on the field `patch`, whose value is the patched object.
 *
 * @internal
 */
export const patchDecodeFailure = (patched: JsonObject, error: string): Status =>
  ApiStore.invalid("", "", "", [{
    reason: "FieldValueInvalid",
    field: "patch",
    message: `Invalid value: ${JSON.stringify(JSON.stringify(patched))}: ${error}`
  }])

/**
 * The field errors of a decoded object of `groupResource` (a Lease's `ValidateLeaseSpec`), in
 * kube-apiserver's order.
 *
 * @internal
 */
export const specErrors = (groupResource: string, obj: JsonObject): Array<ApiStore.FieldError> => {
  if (groupResource !== leases || !isObject(obj.spec)) return []
  const spec = obj.spec
  const errors: Array<ApiStore.FieldError> = []
  const duration = spec.leaseDurationSeconds
  if (typeof duration === "number" && duration <= 0) {
    errors.push({
      reason: "FieldValueInvalid",
      field: "spec.leaseDurationSeconds",
      message: `Invalid value: ${duration}: must be greater than 0`
    })
  }
  const transitions = spec.leaseTransitions
  if (typeof transitions === "number" && transitions < 0) {
    errors.push({
      reason: "FieldValueInvalid",
      field: "spec.leaseTransitions",
      message: `Invalid value: ${transitions}: must be greater than or equal to 0`
    })
  }
  return errors
}

/**
 * The wire schemas of `Wire.ts` as hand-written predicates, for the watch and LIST hot paths: each gives
 * the answer `Schema.is` gives for its schema (`test/wireGuard.test.ts` compares them on arbitrary and on
 * mutated valid values), without the parser's per-property `Either`s and output objects. A change to a
 * schema in `Wire.ts` is a change here. Schema's own decoder still explains a value that fails
 * (`internal/text.ts`'s `explain`).
 *
 * `Schema.is` checks with `exact: true`: a required property must be the object's own; an optional one
 * (`Schema.optional`, so `T | undefined`) is skipped when not the object's own, whatever an inherited
 * property of that name holds. Objects are non-null, non-array `object`s; arrays are checked element by
 * element (a hole is `undefined`); a `Record`'s entries are its own enumerable string keys.
 *
 * @internal
 */
import type { BookmarkEvent, ErrorEvent, ListEnvelope, ObjectEvent, ObjectWithMeta, Status } from "../../Wire.js"

type Obj = Readonly<Record<string, unknown>>
type Type<S extends { readonly Type: unknown }> = S["Type"]

const hasOwn = Object.prototype.hasOwnProperty

const isObject = (u: unknown): u is Obj => typeof u === "object" && u !== null && !Array.isArray(u)

/** A required property: the object's own. */
const own = (o: Obj, key: string): boolean => hasOwn.call(o, key)

/** An optional `string | undefined` property. */
const optString = (o: Obj, key: string): boolean => {
  const v = o[key]
  return v === undefined || typeof v === "string" || !own(o, key)
}

/** An optional `number | undefined` property. */
const optNumber = (o: Obj, key: string): boolean => {
  const v = o[key]
  return v === undefined || typeof v === "number" || !own(o, key)
}

/** An optional property of another shape (or `undefined`). */
const opt = (o: Obj, key: string, is: (u: unknown) => boolean): boolean => {
  const v = o[key]
  return v === undefined || is(v) || !own(o, key)
}

const isStringRecord = (u: unknown): boolean => {
  if (!isObject(u)) return false
  const keys = Object.keys(u)
  for (let i = 0; i < keys.length; i++) if (typeof u[keys[i]] !== "string") return false
  return true
}

/** `Wire.ObjectMeta`: `name` a non-empty string. */
const isObjectMeta = (u: unknown): boolean => {
  if (!isObject(u)) return false
  const name = u.name
  return typeof name === "string" && name.length >= 1 && own(u, "name") &&
    optString(u, "namespace") && optString(u, "uid") && optString(u, "resourceVersion")
}

/**
 * `Wire.ObjectWithMeta`.
 *
 * @internal
 */
export const isObjectWithMeta = (u: unknown): u is Type<typeof ObjectWithMeta> =>
  isObject(u) && isObjectMeta(u.metadata) && own(u, "metadata") && optString(u, "kind")

/**
 * `Wire.ObjectEvent`.
 *
 * @internal
 */
export const isObjectEvent = (u: unknown): u is Type<typeof ObjectEvent> => {
  if (!isObject(u)) return false
  const type = u.type
  return (type === "ADDED" || type === "MODIFIED" || type === "DELETED") && own(u, "type") &&
    isObjectWithMeta(u.object) && own(u, "object")
}

const isBookmarkMeta = (u: unknown): boolean =>
  isObject(u) && typeof u.resourceVersion === "string" && own(u, "resourceVersion") &&
  opt(u, "annotations", isStringRecord)

const isBookmarkObject = (u: unknown): boolean => isObject(u) && isBookmarkMeta(u.metadata) && own(u, "metadata")

/**
 * `Wire.BookmarkEvent`.
 *
 * @internal
 */
export const isBookmarkEvent = (u: unknown): u is Type<typeof BookmarkEvent> =>
  isObject(u) && u.type === "BOOKMARK" && own(u, "type") && isBookmarkObject(u.object) && own(u, "object")

/** `Wire.StatusCause`. */
const isStatusCause = (u: unknown): boolean =>
  isObject(u) && optString(u, "reason") && optString(u, "message") && optString(u, "field")

const isCauses = (u: unknown): boolean => {
  if (!Array.isArray(u)) return false
  for (let i = 0; i < u.length; i++) if (!isStatusCause(u[i])) return false
  return true
}

const isStatusMeta = (u: unknown): boolean => isObject(u) && optString(u, "resourceVersion")

const isStatusDetails = (u: unknown): boolean =>
  isObject(u) && optString(u, "name") && optString(u, "group") && optString(u, "kind") && optString(u, "uid") &&
  opt(u, "causes", isCauses) && optNumber(u, "retryAfterSeconds")

/**
 * `Wire.Status` (any object of its shape; `Wire.isStatus` also asks for `kind: "Status"`).
 *
 * @internal
 */
export const isStatusValue = (u: unknown): u is Type<typeof Status> =>
  isObject(u) && optString(u, "kind") && optString(u, "apiVersion") && opt(u, "metadata", isStatusMeta) &&
  optString(u, "status") && optString(u, "message") && optString(u, "reason") &&
  opt(u, "details", isStatusDetails) && optNumber(u, "code")

/**
 * `Wire.ErrorEvent`.
 *
 * @internal
 */
export const isErrorEvent = (u: unknown): u is Type<typeof ErrorEvent> =>
  isObject(u) && u.type === "ERROR" && own(u, "type") && isStatusValue(u.object) && own(u, "object")

const isListMeta = (u: unknown): boolean =>
  isObject(u) && optString(u, "resourceVersion") && optString(u, "continue") && optNumber(u, "remainingItemCount")

/**
 * `Wire.ListEnvelope`: the items are any values (each is checked with `isObjectWithMeta` by the caller).
 *
 * @internal
 */
export const isListEnvelope = (u: unknown): u is Type<typeof ListEnvelope> =>
  isObject(u) && optString(u, "kind") && optString(u, "apiVersion") && isListMeta(u.metadata) &&
  own(u, "metadata") && Array.isArray(u.items) && own(u, "items")

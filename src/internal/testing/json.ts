/**
 * JSON values as the in-memory fakes handle them: objects, and their structural equality.
 *
 * @internal
 */

/** @internal */
export type JsonObject = { [key: string]: unknown }

/** A JSON object: not `null`, not an array. @internal */
export const isObject = (u: unknown): u is JsonObject => typeof u === "object" && u !== null && !Array.isArray(u)

/**
 * Structural equality of JSON values: same type and value, arrays item by item, objects by their members
 * in any order (RFC 6902's equality for `test`).
 *
 * @internal
 */
export const jsonEqual = (a: unknown, b: unknown): boolean => {
  if (a === b) return true
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false
    for (let i = 0; i < a.length; i++) if (!jsonEqual(a[i], b[i])) return false
    return true
  }
  if (Array.isArray(b)) return false
  const ka = Object.keys(a)
  if (ka.length !== Object.keys(b).length) return false
  for (const k of ka) {
    if (!Object.prototype.hasOwnProperty.call(b, k)) return false
    if (!jsonEqual((a as JsonObject)[k], (b as JsonObject)[k])) return false
  }
  return true
}

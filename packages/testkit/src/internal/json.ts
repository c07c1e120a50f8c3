/**
 * JSON values as the embedded API server handles them: objects, and their structural equality (the
 * library's, `ApiStore.jsonEqual`, as its patches compare values).
 *
 * @internal
 */
import * as ApiStore from "effect-informers/ApiStore"

/** @internal */
export type JsonObject = { [key: string]: unknown }

/** A JSON object: not `null`, not an array. @internal */
export const isObject = (u: unknown): u is JsonObject => typeof u === "object" && u !== null && !Array.isArray(u)

/** @internal */
export const jsonEqual: (a: unknown, b: unknown) => boolean = ApiStore.jsonEqual

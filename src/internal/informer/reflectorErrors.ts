/**
 * The errors the Reflector raises itself (the API's are in `ApiError`). `Reflector` re-exports
 * each with its documentation; they live here so that the loop in `internal/reflector.ts` can raise them
 * without importing the public module that imports it (no import cycle).
 *
 * @internal
 */
import * as Cause from "effect/Cause"
import * as Data from "effect/Data"
import type { ReflectorError } from "../../Reflector.js"

/** @internal */
export class ProtocolError extends Data.TaggedError("ProtocolError")<{
  readonly reason: "VeryShortWatch" | "WatchListTimeout" | "WatchListEndedEarly" | "ContinueRepeated"
  readonly message: string
  /** `ContinueRepeated`: the pages received before the repeat. */
  readonly pages?: number | undefined
}> {}

/** @internal */
export class StoreError extends Data.TaggedError("StoreError")<{
  readonly operation: "add" | "update" | "delete" | "replace" | "resync" | "bookmark"
  readonly cause: unknown
}> {
  override get message(): string {
    const cause = this.cause
    const detail = typeof cause === "object" && cause !== null && "message" in cause ? cause.message : String(cause)
    return `store ${this.operation} failed: ${String(detail)}`
  }
}

/** @internal */
export class UnexpectedError extends Data.TaggedError("UnexpectedError")<{
  readonly cause: Cause.Cause<unknown>
}> {
  override get message(): string {
    return `unexpected failure: ${Cause.pretty(this.cause)}`
  }
}

/** What logs and metrics call an error's reason: its `reason`, a `StoreError`'s operation, `Defect`. @internal */
export const reasonOf = (error: ReflectorError): string =>
  error._tag === "StoreError" ? error.operation : error._tag === "UnexpectedError" ? "Defect" : error.reason

/** An error's tag and reason, as logs and messages name it: `StatusError (Forbidden)`. @internal */
export const describeError = (error: ReflectorError): string => `${error._tag} (${reasonOf(error)})`

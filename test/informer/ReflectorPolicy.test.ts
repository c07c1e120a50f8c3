import { assert, describe, it } from "@effect/vitest"
import * as Cause from "effect/Cause"
import * as ApiError from "../../src/ApiError.js"
import * as Reflector from "../../src/Reflector.js"
import { gone, serverError, statusError, tooManyRequests, transport } from "../fixtures/index.js"

// -------------------------------------------------------------------------------------------------
// fixtures
// -------------------------------------------------------------------------------------------------

type Phase = Exclude<Reflector.Phase, "event">
type Context = Reflector.RecoveryContext

const none: Context = { consistent: false, afterGone: false, connected: false, goneWithoutProgress: false }

const errors = {
  gone: gone(),
  tooLarge: statusError(504, "Timeout", "Too large resource version"),
  tooManyRequests: tooManyRequests(5),
  forbidden: statusError(403, "Forbidden", "forbidden"),
  unauthorized: statusError(401, "Unauthorized", "unauthorized"),
  notFound: statusError(404, "NotFound", "not found"),
  badRequest: serverError(400, "BadRequest", "bad request"),
  methodNotAllowed: serverError(405, "MethodNotAllowed", "not allowed"),
  invalid: serverError(422, "Invalid", "invalid"),
  internal: serverError(500, "InternalError", "internal"),
  unavailable: serverError(503, "ServiceUnavailable", "unavailable"),
  transport: transport(),
  decode: new ApiError.DecodeError({ reason: "Malformed", message: "unexpected end of JSON input" }),
  veryShort: new Reflector.ProtocolError({ reason: "VeryShortWatch", message: "very short watch" }),
  timeout: new Reflector.ProtocolError({ reason: "WatchListTimeout", message: "no initial-events-end bookmark" }),
  endedEarly: new Reflector.ProtocolError({ reason: "WatchListEndedEarly", message: "ended before the bookmark" }),
  pagination: new Reflector.ProtocolError({ reason: "ContinueRepeated", message: "repeated", pages: 3 }),
  replace: new Reflector.StoreError({ operation: "replace", cause: "refused" }),
  resync: new Reflector.StoreError({ operation: "resync", cause: "refused" }),
  unexpected: new Reflector.UnexpectedError({ cause: Cause.die(new Error("boom")) })
} satisfies Record<string, Reflector.ReflectorError>

type ErrorName = keyof typeof errors

/** A resourceVersion the server cannot serve: a `StatusError` `Gone` or `ResourceVersionTooLarge`. */
const isGone = (error: Reflector.ReflectorError): boolean =>
  error._tag === "StatusError" && (error.reason === "Gone" || error.reason === "ResourceVersionTooLarge")

/** `Tag (reason)`, as the Reflector's logs name an error. */
const show = (error: Reflector.ReflectorError): string =>
  `${error._tag} (${
    error._tag === "StoreError" ? error.operation : error._tag === "UnexpectedError" ? "Defect" : error.reason
  })`

// the actions, as the table below writes them
const rewatch: Reflector.Action = { _tag: "Rewatch", backoff: false }
const rewatchAfterBackoff: Reflector.Action = { _tag: "Rewatch", backoff: true }
const listConsistently: Reflector.Action = { _tag: "List", consistent: true, rejectWatchList: false, cause: "gone" }
const fallBack: Reflector.Action = {
  _tag: "List",
  consistent: false,
  rejectWatchList: false,
  cause: "watch-list-fallback"
}
const rejectAndFallBack: Reflector.Action = { ...fallBack, rejectWatchList: true }
const stopResourceGone: Reflector.Action = { _tag: "Stop", reason: "ResourceGone" }
const relist = (
  backoff: boolean,
  consistent: boolean,
  cause: Reflector.RelistCause | undefined
): Reflector.Action => ({ _tag: "Relist", backoff, consistent, cause })

// -------------------------------------------------------------------------------------------------
// the table
// -------------------------------------------------------------------------------------------------

/** [error, phase, context, action]: every row of the Reflector's recovery policy. */
const table: ReadonlyArray<readonly [ErrorName, Phase, Partial<Context>, Reflector.Action]> = [
  // --- list ---
  // Gone / too large on a list: a consistent list at once; on that consistent list, back off first
  ["gone", "list", {}, listConsistently],
  ["gone", "list", { consistent: true }, listConsistently],
  ["gone", "list", { afterGone: true, consistent: true }, relist(true, true, "error")],
  ["tooLarge", "list", {}, listConsistently],
  ["tooLarge", "list", { afterGone: true, consistent: true }, relist(true, true, "error")],
  // anything else: back off, relist (a 429 waits at least its Retry-After, through the backoff)
  ["tooManyRequests", "list", {}, relist(true, false, "error")],
  ["transport", "list", {}, relist(true, false, "error")],
  ["internal", "list", {}, relist(true, false, "error")],
  ["unavailable", "list", {}, relist(true, false, "error")],
  ["badRequest", "list", {}, relist(true, false, "error")],
  ["forbidden", "list", {}, relist(true, false, "error")],
  ["unauthorized", "list", {}, relist(true, false, "error")],
  // NotFound on a list: the resource is no longer served (its CRD was deleted): stop
  ["notFound", "list", {}, stopResourceGone],
  ["notFound", "list", { afterGone: true, consistent: true }, stopResourceGone],
  ["decode", "list", {}, relist(true, false, "error")],
  ["pagination", "list", {}, relist(true, false, "error")],
  ["replace", "list", {}, relist(true, false, "error")],
  ["decode", "list", { afterGone: true, consistent: true }, relist(true, false, "error")],
  ["unexpected", "list", {}, relist(true, false, undefined)],

  // --- watch-list (before the initial-events-end bookmark) ---
  // Gone at a known version: a consistent watch-list at once; at "" it cannot help: LIST
  ["gone", "watch-list", {}, relist(false, true, undefined)],
  ["gone", "watch-list", { afterGone: true }, relist(false, true, undefined)],
  ["gone", "watch-list", { consistent: true }, fallBack],
  ["tooLarge", "watch-list", {}, relist(false, true, undefined)],
  ["tooLarge", "watch-list", { consistent: true }, fallBack],
  // throttled or unreachable: back off and ask for watch-list again
  ["tooManyRequests", "watch-list", {}, relist(true, false, undefined)],
  ["transport", "watch-list", {}, relist(true, false, undefined)],
  ["transport", "watch-list", { connected: true }, relist(true, false, undefined)],
  // a stream that ended before its bookmark: again at once after a second of progress, else after the backoff
  ["endedEarly", "watch-list", { connected: true }, relist(false, false, undefined)],
  ["endedEarly", "watch-list", {}, relist(true, false, undefined)],
  // the server rejects or ignores watch-list: LIST now, and not watch-list for watchListRetryDelay
  ["timeout", "watch-list", {}, rejectAndFallBack],
  ["timeout", "watch-list", { connected: true }, rejectAndFallBack],
  ["badRequest", "watch-list", {}, rejectAndFallBack],
  ["methodNotAllowed", "watch-list", {}, rejectAndFallBack],
  ["invalid", "watch-list", {}, rejectAndFallBack],
  // anything else: LIST now, watch-list again next cycle
  ["internal", "watch-list", {}, fallBack],
  ["unavailable", "watch-list", {}, fallBack],
  ["forbidden", "watch-list", {}, fallBack],
  ["notFound", "watch-list", {}, fallBack],
  ["decode", "watch-list", {}, fallBack],
  ["replace", "watch-list", {}, fallBack],
  ["unexpected", "watch-list", {}, relist(true, false, undefined)],

  // --- watch (or a watch-list after its end bookmark) ---
  // Gone / too large: a consistent relist at once; the second in a row without a watch event backs off
  ["gone", "watch", { connected: true }, relist(false, true, "gone")],
  ["gone", "watch", {}, relist(false, true, "gone")],
  ["gone", "watch", { connected: true, goneWithoutProgress: true }, relist(true, true, "gone")],
  ["tooLarge", "watch", {}, relist(false, true, "gone")],
  ["tooLarge", "watch", { goneWithoutProgress: true }, relist(true, true, "gone")],
  // throttled: back off, watch again (no relist)
  ["tooManyRequests", "watch", {}, rewatchAfterBackoff],
  ["tooManyRequests", "watch", { connected: true }, rewatchAfterBackoff],
  // the connection failed: at once if the watch was established, else after the backoff (no relist)
  ["transport", "watch", { connected: true }, rewatch],
  ["transport", "watch", {}, rewatchAfterBackoff],
  ["transport", "watch", { goneWithoutProgress: true }, rewatchAfterBackoff],
  // closed within a second without events
  ["veryShort", "watch", {}, relist(true, false, "very-short-watch")],
  // anything else: back off, relist
  ["internal", "watch", { connected: true }, relist(true, false, "error")],
  ["unavailable", "watch", {}, relist(true, false, "error")],
  ["badRequest", "watch", {}, relist(true, false, "error")],
  ["invalid", "watch", {}, relist(true, false, "error")],
  ["forbidden", "watch", {}, relist(true, false, "error")],
  ["unauthorized", "watch", {}, relist(true, false, "error")],
  ["notFound", "watch", {}, relist(true, false, "error")],
  ["decode", "watch", { connected: true }, relist(true, false, "error")],
  ["timeout", "watch", {}, relist(true, false, "error")],
  ["unexpected", "watch", {}, relist(true, false, undefined)],
  ["unexpected", "watch", { connected: true, goneWithoutProgress: true }, relist(true, false, undefined)],

  // --- resync ---
  ["resync", "resync", {}, relist(true, false, "resync-error")],
  ["unexpected", "resync", {}, relist(true, false, undefined)]
]

describe("Reflector.recovery", () => {
  it("the table's errors are the families and reasons their names say", () => {
    const shown = Object.fromEntries(Object.entries(errors).map(([name, error]) => [name, show(error)]))
    assert.deepStrictEqual(shown, {
      gone: "StatusError (Gone)",
      tooLarge: "StatusError (ResourceVersionTooLarge)",
      tooManyRequests: "StatusError (TooManyRequests)",
      forbidden: "StatusError (Forbidden)",
      unauthorized: "StatusError (Unauthorized)",
      notFound: "StatusError (NotFound)",
      badRequest: "StatusError (BadRequest)",
      methodNotAllowed: "StatusError (MethodNotAllowed)",
      invalid: "StatusError (Invalid)",
      internal: "StatusError (ServerError)",
      unavailable: "StatusError (ServerError)",
      transport: "TransportError (RequestFailed)",
      decode: "DecodeError (Malformed)",
      veryShort: "ProtocolError (VeryShortWatch)",
      timeout: "ProtocolError (WatchListTimeout)",
      endedEarly: "ProtocolError (WatchListEndedEarly)",
      pagination: "ProtocolError (ContinueRepeated)",
      replace: "StoreError (replace)",
      resync: "StoreError (resync)",
      unexpected: "UnexpectedError (Defect)"
    })
    assert.deepStrictEqual(
      [errors.badRequest, errors.methodNotAllowed, errors.invalid, errors.internal, errors.unavailable].map((e) =>
        e.code
      ),
      [400, 405, 422, 500, 503]
    )
  })

  it("the policy as a table: (error, phase, context) -> action", () => {
    for (const [name, phase, context, action] of table) {
      assert.deepStrictEqual(
        Reflector.recovery(errors[name], phase, { ...none, ...context }),
        action,
        `${name} in ${phase} with ${JSON.stringify(context)}`
      )
    }
  })

  const phases: ReadonlyArray<Phase> = ["list", "watch-list", "watch", "resync"]
  const contexts: ReadonlyArray<Context> = [false, true].flatMap((consistent) =>
    [false, true].flatMap((afterGone) =>
      [false, true].flatMap((connected) =>
        [false, true].map((goneWithoutProgress) => ({ consistent, afterGone, connected, goneWithoutProgress }))
      )
    )
  )
  const everything = Object.keys(errors).flatMap((name) =>
    phases.flatMap((phase) => contexts.map((context) => [errors[name as ErrorName], phase, context] as const))
  )

  it("every error in every phase and context has an action, of the phase's kinds", () => {
    for (const [error, phase, context] of everything) {
      const action = Reflector.recovery(error, phase, context)
      const what = `${show(error)} in ${phase} with ${JSON.stringify(context)}: ${JSON.stringify(action)}`
      // only a watch is re-watched; only a list or a watch-list lists within its cycle
      if (action._tag === "Rewatch") assert.strictEqual(phase, "watch", what)
      if (action._tag === "List") assert.include(["list", "watch-list"], phase, what)
      // only a watch-list is rejected, and only as a fallback to LIST
      if (action._tag === "List" && action.rejectWatchList) assert.strictEqual(phase, "watch-list", what)
      // only a NotFound on a list stops the loop
      if (action._tag === "Stop") {
        assert.strictEqual(phase, "list", what)
        assert.strictEqual(show(error), "StatusError (NotFound)", what)
      }
    }
  })

  it("a Gone or a too-large resourceVersion on a list or a watch makes the next read consistent; nothing else does", () => {
    for (const [error, phase, context] of everything) {
      const action = Reflector.recovery(error, phase, context)
      const gone = isGone(error)
      // a watch-list that read at "" already falls back to LIST (at "" too); a resync never reads
      const expected = gone && phase !== "resync" && !(phase === "watch-list" && context.consistent)
      assert.strictEqual(
        action._tag !== "Rewatch" && action._tag !== "Stop" && action.consistent,
        expected,
        `${show(error)} in ${phase} with ${JSON.stringify(context)}: ${JSON.stringify(action)}`
      )
    }
  })

  it("a relist at once (no backoff) follows only a Gone, a too-large resourceVersion or a watch-list that made progress", () => {
    for (const [error, phase, context] of everything) {
      const action = Reflector.recovery(error, phase, context)
      if (action._tag !== "Relist" || action.backoff) continue
      const endedAfterProgress = error._tag === "ProtocolError" && error.reason === "WatchListEndedEarly" &&
        context.connected
      assert.isTrue(isGone(error) || endedAfterProgress, `${show(error)} in ${phase} with ${JSON.stringify(context)}`)
    }
  })

  it("a defect backs off and relists in every phase, uncounted", () => {
    for (const phase of phases) {
      for (const context of contexts) {
        assert.deepStrictEqual(Reflector.recovery(errors.unexpected, phase, context), relist(true, false, undefined))
      }
    }
  })
})

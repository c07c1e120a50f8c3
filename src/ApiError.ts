/**
 * The errors of talking to a Kubernetes API server, as families in the way `@effect/platform`'s
 * `HttpClientError` models them: one class per family, a `reason` that callers branch on, typed fields for
 * what a caller needs (the HTTP `code`, the `Status`, `retryAfter`).
 *
 * - `StatusError`: the server answered with an error `Status` (an error response, or a watch `ERROR`
 *   event). `reason` names the Kubernetes reason, normalised as client-go's `errors.Is...` predicates read
 *   it (410 and `Expired` are both `Gone`).
 * - `TransportError`: the request did not complete (connection refused or reset, TLS, credentials that
 *   could not be obtained, an inactivity bound, a body cut mid-line).
 * - `DecodeError`: an answer that could not be read (malformed JSON, a wrong shape, a line over the limit,
 *   a list without a resourceVersion).
 *
 * Every message is one line, scrubbed of the request's credentials. Whatever an error holds is safe to
 * print in any way (`util.inspect`, `JSON.stringify`, `String`, `Cause.pretty`, every logger): the
 * constructors keep only the known fields of a `Status`, each text scrubbed of whatever looks like a
 * credential, and replace a `cause` by a scrubbed copy (its message, stack and system fields).
 *
 * @example
 * ```ts
 * import { ApiError } from "effect-informers"
 * import { Effect } from "effect"
 *
 * declare const get: Effect.Effect<string, ApiError.ApiError>
 *
 * const orEmpty = get.pipe(
 *   Effect.catchTag("StatusError", (error) => error.reason === "NotFound" ? Effect.succeed("") : Effect.fail(error))
 * )
 * ```
 *
 * @since 0.2.0
 */
import * as Data from "effect/Data"
import * as Duration from "effect/Duration"
import * as Option from "effect/Option"
import * as Predicate from "effect/Predicate"
import { scrubCause, scrubPatterns, scrubStatus } from "./internal/redact.js"
import { oneLine } from "./internal/text.js"
import type { Status } from "./Wire.js"

/** The longest message an error keeps, as one line. */
const maxMessage = 2000

/** A message as every error of this module keeps it: one line, bounded, whatever looks like a credential removed. */
const safeMessage = (message: string): string => oneLine(scrubPatterns(String(message)), maxMessage)

/**
 * @since 0.2.0
 * @category type ids
 */
export const TypeId: unique symbol = Symbol.for("effect-informers/ApiError")

/**
 * @since 0.2.0
 * @category type ids
 */
export type TypeId = typeof TypeId

/**
 * Whether a value is one of this module's errors.
 *
 * @since 0.2.0
 * @category guards
 */
export const isApiError = (u: unknown): u is ApiError => Predicate.hasProperty(u, TypeId)

/**
 * @since 0.2.0
 * @category errors
 */
export type ApiError = StatusError | TransportError | DecodeError

// -------------------------------------------------------------------------------------------------
// StatusError
// -------------------------------------------------------------------------------------------------

/**
 * What a `StatusError` means, as a caller branches on it:
 *
 * | reason | from |
 * |---|---|
 * | `BadRequest` | 400 |
 * | `Unauthorized` | 401 |
 * | `Forbidden` | 403 |
 * | `NotFound` | 404 |
 * | `MethodNotAllowed` | 405 |
 * | `NotAcceptable` | 406 |
 * | `Conflict` | 409 (a stale resourceVersion, an apply conflict) |
 * | `AlreadyExists` | 409 with reason `AlreadyExists` |
 * | `Gone` | 410, or reason `Expired` / `Gone`: a resourceVersion or continue token older than the server keeps |
 * | `RequestEntityTooLarge` | 413 |
 * | `UnsupportedMediaType` | 415 |
 * | `Invalid` | 422 (its `causes` say which fields) |
 * | `TooManyRequests` | 429 (with `retryAfter`) |
 * | `Timeout` | 504, or reason `Timeout` / `ServerTimeout` |
 * | `ResourceVersionTooLarge` | a resourceVersion newer than the server has seen (a cause or the message says so) |
 * | `ServerError` | any other code: 5xx, or a code this list does not name |
 *
 * @since 0.2.0
 * @category models
 */
export type StatusReason =
  | "BadRequest"
  | "Unauthorized"
  | "Forbidden"
  | "NotFound"
  | "MethodNotAllowed"
  | "NotAcceptable"
  | "Conflict"
  | "AlreadyExists"
  | "Gone"
  | "RequestEntityTooLarge"
  | "UnsupportedMediaType"
  | "Invalid"
  | "TooManyRequests"
  | "Timeout"
  | "ResourceVersionTooLarge"
  | "ServerError"

/**
 * The fields of a `StatusError`.
 *
 * @since 0.2.0
 * @category models
 */
export interface StatusErrorFields {
  readonly reason: StatusReason
  /** The HTTP status code (the body's `code`, or the response's). */
  readonly code: number
  readonly message: string
  readonly status: Status
  /** How long the server asked the client to wait (`Retry-After`, or the Status's `retryAfterSeconds`). */
  readonly retryAfter: Option.Option<Duration.Duration>
}

/**
 * The server answered with an error `Status`. `status` is the body's known fields (`kind`, `status`,
 * `message`, `reason`, `code`, and the details' `name`, `group`, `kind`, `uid`, `retryAfterSeconds` and
 * causes), each text scrubbed and bounded; `apiVersion`, `metadata` and any other field are dropped. When
 * the body was not a `Status`, it is one made from the HTTP code. The message is one line.
 *
 * @since 0.2.0
 * @category errors
 */
export class StatusError extends Data.TaggedError("StatusError")<StatusErrorFields> {
  /**
   * @since 0.2.0
   */
  readonly [TypeId]: TypeId = TypeId

  constructor(fields: StatusErrorFields) {
    super({
      reason: fields.reason,
      code: fields.code,
      message: safeMessage(fields.message),
      status: scrubStatus(fields.status, scrubPatterns),
      retryAfter: fields.retryAfter
    })
  }

  /**
   * The `Status`'s causes: for `Invalid`, the fields that failed validation; for an apply `Conflict`, the
   * conflicting fields.
   *
   * @since 0.2.0
   */
  get causes(): NonNullable<NonNullable<Status["details"]>["causes"]> {
    return this.status.details?.causes ?? []
  }
}

/** The Kubernetes reason an HTTP code stands for, when a body does not say (apimachinery's `reasonForCode`). */
const reasonByCode: Record<number, string> = {
  400: "BadRequest",
  401: "Unauthorized",
  403: "Forbidden",
  404: "NotFound",
  405: "MethodNotAllowed",
  406: "NotAcceptable",
  409: "Conflict",
  410: "Expired",
  413: "RequestEntityTooLarge",
  415: "UnsupportedMediaType",
  422: "Invalid",
  429: "TooManyRequests",
  500: "InternalError",
  503: "ServiceUnavailable",
  504: "Timeout"
}

/**
 * The Kubernetes `Status` reason for an HTTP code (`BadRequest` for 400, `Expired` for 410...), and
 * `InternalError` for a code without one.
 *
 * @example
 * ```ts
 * import { ApiError } from "effect-informers"
 *
 * console.log(ApiError.reasonForCode(409)) // "Conflict"
 * ```
 *
 * @since 0.2.0
 * @category constructors
 */
export const reasonForCode = (code: number): string => reasonByCode[code] ?? "InternalError"

const tooLargeMessage = /too large resource version/i

const statusReason = (status: Status, code: number, reason: string, message: string): StatusReason => {
  const causes = status.details?.causes ?? []
  if (causes.some((cause) => cause.reason === "ResourceVersionTooLarge") || tooLargeMessage.test(message)) {
    return "ResourceVersionTooLarge"
  }
  if (code === 410 || reason === "Expired" || reason === "Gone") return "Gone"
  if (reason === "AlreadyExists") return "AlreadyExists"
  if (reason === "Timeout" || reason === "ServerTimeout" || code === 504) return "Timeout"
  switch (code) {
    case 400:
      return "BadRequest"
    case 401:
      return "Unauthorized"
    case 403:
      return "Forbidden"
    case 404:
      return "NotFound"
    case 405:
      return "MethodNotAllowed"
    case 406:
      return "NotAcceptable"
    case 409:
      return "Conflict"
    case 413:
      return "RequestEntityTooLarge"
    case 415:
      return "UnsupportedMediaType"
    case 422:
      return "Invalid"
    case 429:
      return "TooManyRequests"
    default:
      return "ServerError"
  }
}

const seconds = /^\d+$/

/**
 * The typed error of a Kubernetes `Status` (an error response's body, or a watch `ERROR` event).
 * `httpStatus` is used when the body has no `code`; `retryAfterHeader` is the response's `Retry-After`
 * (whole seconds), which wins over the Status's `retryAfterSeconds`.
 *
 * @example
 * ```ts
 * import { ApiError, Wire } from "effect-informers"
 *
 * const error = ApiError.fromStatus(Wire.failureStatus(410, "Expired", "too old resource version"))
 * console.log(error.reason) // "Gone"
 * ```
 *
 * @since 0.2.0
 * @category constructors
 */
export const fromStatus = (
  status: Status,
  httpStatus?: number | undefined,
  retryAfterHeader?: string | undefined
): StatusError => {
  const code = status.code ?? httpStatus ?? 500
  const reason = status.reason ?? ""
  const message = status.message ?? (reason === "" ? `status ${code}` : reason)
  const header = retryAfterHeader?.trim()
  const wait = header !== undefined && seconds.test(header) ? Number(header) : status.details?.retryAfterSeconds
  return new StatusError({
    reason: statusReason(status, code, reason, message),
    code,
    message,
    status,
    retryAfter: wait === undefined || wait <= 0 ? Option.none() : Option.some(Duration.seconds(wait))
  })
}

// -------------------------------------------------------------------------------------------------
// TransportError
// -------------------------------------------------------------------------------------------------

/**
 * Why a request did not complete:
 * - `RequestFailed`: connection refused or reset, DNS, TLS, the connection closed before a response;
 * - `Credentials`: the kubeconfig's credentials could not be obtained (an exec plugin failed, a token file
 *   is missing);
 * - `Timeout`: no response headers, or no bytes of a body, within the configured bound;
 * - `BodyCut`: the body ended in the middle of a watch line.
 *
 * @since 0.2.0
 * @category models
 */
export type TransportReason = "RequestFailed" | "Credentials" | "Timeout" | "BodyCut"

/**
 * The request did not complete. A caller retries it after a backoff; the Reflector does. The message is
 * one line; `cause`, when there is one, is a copy of the failure's cause (an `Error` of the same name,
 * `code` and `syscall`, its message and stack scrubbed), never the raw error.
 *
 * @since 0.2.0
 * @category errors
 */
export class TransportError extends Data.TaggedError("TransportError")<TransportErrorFields> {
  /**
   * @since 0.2.0
   */
  readonly [TypeId]: TypeId = TypeId

  constructor(fields: TransportErrorFields) {
    const cause = scrubCause(fields.cause, scrubPatterns)
    super({
      reason: fields.reason,
      message: safeMessage(fields.message),
      ...(cause === undefined ? {} : { cause })
    })
  }
}

/**
 * The fields of a `TransportError`. `cause` is kept as a scrubbed copy (see `TransportError`).
 *
 * @since 0.2.0
 * @category models
 */
export interface TransportErrorFields {
  readonly reason: TransportReason
  readonly message: string
  readonly cause?: unknown
}

// -------------------------------------------------------------------------------------------------
// DecodeError
// -------------------------------------------------------------------------------------------------

/**
 * Why an answer could not be read:
 * - `Malformed`: not JSON, or not the shape of a list, an object or a watch event (an object without
 *   `metadata` included);
 * - `TooLarge`: a watch line over the configured limit, a response body over the Client's bound, or a
 *   paged list (`listAll`) past its bound (`maxPages` pages or `maxItems` objects), which a server
 *   answering endless distinct `continue` tokens would otherwise never end;
 * - `MissingResourceVersion`: a list, a bookmark or an event whose resourceVersion is empty, which a watch
 *   cannot resume from (the Reflector raises it);
 * - `SchemaMismatch`: an object of a `Resource.custom` resource that its `Schema` does not decode (the
 *   message names the object and the first issue);
 * - `UnexpectedObject`: the Client asked for (or wrote) one object and was answered with another: another
 *   kind, API group, name or namespace (the message names what was expected and what came);
 * - `ContinueRepeated`: a paged list (the Client's `listAll`) the server does not bring to an end: it
 *   answered a `continue` token with one it had already sent (as the Reflector's `ProtocolError` of that
 *   reason).
 *
 * @since 0.2.0
 * @category models
 */
export type DecodeReason =
  | "Malformed"
  | "TooLarge"
  | "MissingResourceVersion"
  | "SchemaMismatch"
  | "UnexpectedObject"
  | "ContinueRepeated"

/**
 * An answer could not be read. The Reflector reports it and relists, so nothing is lost. The message is
 * one line; `detail` and `cause` are scrubbed like a `TransportError`'s.
 *
 * @since 0.2.0
 * @category errors
 */
export class DecodeError extends Data.TaggedError("DecodeError")<DecodeErrorFields> {
  /**
   * @since 0.2.0
   */
  readonly [TypeId]: TypeId = TypeId

  constructor(fields: DecodeErrorFields) {
    const cause = scrubCause(fields.cause, scrubPatterns)
    super({
      reason: fields.reason,
      message: safeMessage(fields.message),
      ...(fields.detail === undefined ? {} : { detail: scrubPatterns(String(fields.detail)) }),
      ...(cause === undefined ? {} : { cause })
    })
  }
}

/**
 * The fields of a `DecodeError`. `cause` is kept as a scrubbed copy (see `TransportError`).
 *
 * @since 0.2.0
 * @category models
 */
export interface DecodeErrorFields {
  readonly reason: DecodeReason
  readonly message: string
  /** The full explanation when there is more than a line of it (a schema error tree): logged at debug level. */
  readonly detail?: string | undefined
  readonly cause?: unknown
}

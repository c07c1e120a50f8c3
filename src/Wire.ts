/**
 * The Kubernetes list/watch wire format as Schemas: `Status`, list envelopes, watch events and the object
 * metadata the machinery relies on (`metadata.name`, `namespace`, `uid`, `resourceVersion`).
 *
 * Decoding validates only what the machinery reads and hands on the parsed object itself: an event costs
 * one `JSON.parse` and one validation of its envelope and metadata, never a copy of the object.
 *
 * @since 0.1.0
 */
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import {
  isBookmarkEvent,
  isErrorEvent,
  isListEnvelope,
  isObjectEvent,
  isObjectWithMeta,
  isStatusValue
} from "./internal/protocol/wireGuard.js"
import { explain, oneLine } from "./internal/text.js"
import type { KubeObject } from "./KubeObject.js"

/**
 * A cause in a `Status`'s details (`metav1.StatusCause`).
 *
 * @since 0.1.0
 * @category schemas
 */
export const StatusCause = Schema.Struct({
  /** The cause's type (`metav1.CauseType`), which the API sends under the JSON key `reason`. */
  reason: Schema.optional(Schema.String),
  message: Schema.optional(Schema.String),
  field: Schema.optional(Schema.String)
})

/**
 * `metav1.Status`: the body of every API error and of watch `ERROR` events.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Status = Schema.Struct({
  kind: Schema.optional(Schema.String),
  apiVersion: Schema.optional(Schema.String),
  metadata: Schema.optional(Schema.Struct({
    resourceVersion: Schema.optional(Schema.String)
  })),
  status: Schema.optional(Schema.String),
  message: Schema.optional(Schema.String),
  reason: Schema.optional(Schema.String),
  details: Schema.optional(Schema.Struct({
    name: Schema.optional(Schema.String),
    group: Schema.optional(Schema.String),
    kind: Schema.optional(Schema.String),
    uid: Schema.optional(Schema.String),
    causes: Schema.optional(Schema.Array(StatusCause)),
    retryAfterSeconds: Schema.optional(Schema.Number)
  })),
  code: Schema.optional(Schema.Number)
})

/**
 * @since 0.1.0
 * @category models
 */
export interface Status extends Schema.Schema.Type<typeof Status> {}

/**
 * Builds a `Status` of `status: "Failure"` the way the API server shapes its errors.
 *
 * @example
 * ```ts
 * import { Wire } from "effect-informers"
 *
 * const gone = Wire.failureStatus(410, "Expired", "too old resource version: 5 (10)")
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const failureStatus = (
  code: number,
  reason: string,
  message: string,
  details?: Status["details"]
): Status => ({
  kind: "Status",
  apiVersion: "v1",
  metadata: {},
  status: "Failure",
  message,
  reason,
  ...(details === undefined ? {} : { details }),
  code
})

/**
 * The object metadata every listed or watched object must carry.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ObjectMeta = Schema.Struct({
  name: Schema.String.check(Schema.isMinLength(1)),
  namespace: Schema.optional(Schema.String),
  uid: Schema.optional(Schema.String),
  resourceVersion: Schema.optional(Schema.String)
})

/**
 * An object as the machinery needs it: anything with valid `metadata`.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ObjectWithMeta = Schema.Struct({
  kind: Schema.optional(Schema.String),
  metadata: ObjectMeta
})

/**
 * `metav1.ListMeta`.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ListMeta = Schema.Struct({
  resourceVersion: Schema.optional(Schema.String),
  continue: Schema.optional(Schema.String),
  remainingItemCount: Schema.optional(Schema.Number)
})

/**
 * A list response: `{ kind, apiVersion, metadata, items }`. Items are validated one by one with
 * `ObjectWithMeta` by `decodeList`.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ListEnvelope = Schema.Struct({
  kind: Schema.optional(Schema.String),
  apiVersion: Schema.optional(Schema.String),
  metadata: ListMeta,
  items: Schema.Array(Schema.Unknown)
})

/**
 * The annotation a watch-list stream puts on the bookmark that ends the initial events.
 *
 * @since 0.1.0
 * @category constants
 */
export const initialEventsEndAnnotation = "k8s.io/initial-events-end"

/**
 * A watch event about an object.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ObjectEvent = Schema.Struct({
  type: Schema.Literals(["ADDED", "MODIFIED", "DELETED"]),
  object: ObjectWithMeta
})

/**
 * A bookmark: only `metadata.resourceVersion` (and annotations) are meaningful.
 *
 * @since 0.1.0
 * @category schemas
 */
export const BookmarkEvent = Schema.Struct({
  type: Schema.Literal("BOOKMARK"),
  object: Schema.Struct({
    metadata: Schema.Struct({
      resourceVersion: Schema.String,
      annotations: Schema.optional(Schema.Record(Schema.String, Schema.String))
    })
  })
})

/**
 * A watch `ERROR` event carrying a `Status`.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ErrorEvent = Schema.Struct({
  type: Schema.Literal("ERROR"),
  object: Status
})

/**
 * @since 0.1.0
 * @category schemas
 */
export const WatchEvent = Schema.Union([ObjectEvent, BookmarkEvent, ErrorEvent])

/**
 * A decoded watch line. `object` of an object event is the parsed JSON itself.
 *
 * @since 0.1.0
 * @category models
 */
export type DecodedEvent<A> =
  | { readonly type: "ADDED" | "MODIFIED" | "DELETED"; readonly object: A }
  | { readonly type: "BOOKMARK"; readonly object: BookmarkObject }
  | { readonly type: "ERROR"; readonly object: Status }
  | { readonly type: "UNKNOWN"; readonly eventType: string }

/**
 * The object of a `BOOKMARK` event.
 *
 * @since 0.1.0
 * @category models
 */
export interface BookmarkObject {
  readonly metadata: {
    readonly resourceVersion: string
    readonly annotations?: { readonly [key: string]: string } | undefined
  }
}

/**
 * Why a line or a body could not be decoded.
 *
 * @since 0.1.0
 * @category models
 */
export interface DecodeFailure {
  /** One line. */
  readonly message: string
  /** The full explanation (a schema error tree, several lines), for debug logs. */
  readonly detail?: string | undefined
  readonly cause?: unknown
}

// The checks are the hand-written predicates of internal/wireGuard.ts: the same answers as Schema.is of the
// schemas above (test/wireGuard.test.ts), without its allocations; a change to a schema is a change there.
// Schema's own decoder explains a failure.

const invalid = (prefix: string, explained: { readonly line: string; readonly tree: string | undefined }) =>
  Result.fail<DecodeFailure>({ message: `${prefix}: ${explained.line}`, detail: explained.tree })

const identity = (text: string): string => text

const preview = (text: string): string => oneLine(text.length > 400 ? text.slice(0, 400) : text)

/**
 * Decodes one line of a watch body. Unknown event types decode to `{ type: "UNKNOWN" }` so that callers
 * can skip them with a warning.
 *
 * @example
 * ```ts
 * import { Result } from "effect"
 * import { Wire } from "effect-informers"
 *
 * const event = Wire.decodeWatchLine('{"type":"ADDED","object":{"metadata":{"name":"a","resourceVersion":"3"}}}')
 * console.log(Result.isSuccess(event)) // true
 * ```
 *
 * @since 0.1.0
 * @category decoding
 */
export const decodeWatchLine = <A = KubeObject>(
  line: string,
  scrub: (text: string) => string = identity
): Result.Result<DecodedEvent<A>, DecodeFailure> => {
  let u: unknown
  try {
    u = JSON.parse(line)
  } catch (cause) {
    // scrubbed before it is cut: a secret the cut went through would no longer be recognised
    return Result.fail({ message: `malformed JSON in watch event: ${preview(scrub(line.slice(0, 8192)))}`, cause })
  }
  return decodeWatchValue<A>(u)
}

/**
 * Decodes a parsed watch event (see `decodeWatchLine`).
 *
 * @since 0.1.0
 * @category decoding
 */
export const decodeWatchValue = <A = KubeObject>(u: unknown): Result.Result<DecodedEvent<A>, DecodeFailure> => {
  if (typeof u !== "object" || u === null) {
    return Result.fail({ message: "watch event is not a JSON object" })
  }
  const type = (u as { readonly type?: unknown }).type
  switch (type) {
    case "ADDED":
    case "MODIFIED":
    case "DELETED":
      return isObjectEvent(u)
        ? Result.succeed(u as DecodedEvent<A>)
        : invalid(`invalid ${type} event`, explain(ObjectEvent, u))
    case "BOOKMARK":
      return isBookmarkEvent(u)
        ? Result.succeed(u as DecodedEvent<A>)
        : invalid("invalid BOOKMARK event", explain(BookmarkEvent, u))
    case "ERROR":
      return isErrorEvent(u)
        ? Result.succeed(u as DecodedEvent<A>)
        : invalid("invalid ERROR event", explain(ErrorEvent, u))
    default:
      return typeof type === "string"
        ? Result.succeed({ type: "UNKNOWN", eventType: type })
        : Result.fail({ message: "watch event has no type" })
  }
}

/**
 * A decoded list page.
 *
 * @since 0.1.0
 * @category models
 */
export interface DecodedList<A> {
  readonly items: ReadonlyArray<A>
  readonly resourceVersion: string
  readonly continue: string | undefined
  readonly remainingItemCount: number | undefined
}

/**
 * Validates a parsed list response: the envelope and every item's metadata. The items are the parsed
 * objects themselves.
 *
 * @since 0.1.0
 * @category decoding
 */
export const decodeList = <A = KubeObject>(u: unknown): Result.Result<DecodedList<A>, DecodeFailure> => {
  if (!isListEnvelope(u)) return invalid("invalid list response", explain(ListEnvelope, u))
  const items = u.items
  for (let i = 0; i < items.length; i++) {
    if (!isObjectWithMeta(items[i])) {
      return invalid(`invalid list item ${i}`, explain(ObjectWithMeta, items[i]))
    }
  }
  const cont = u.metadata.continue
  return Result.succeed({
    items: items as ReadonlyArray<A>,
    resourceVersion: u.metadata.resourceVersion ?? "",
    continue: cont === undefined || cont === "" ? undefined : cont,
    remainingItemCount: u.metadata.remainingItemCount
  })
}

/**
 * Whether a value is a `Status` object (`kind: "Status"`).
 *
 * @since 0.1.0
 * @category guards
 */
export const isStatus = (u: unknown): u is Status =>
  typeof u === "object" && u !== null && (u as { kind?: unknown }).kind === "Status" && isStatusValue(u)

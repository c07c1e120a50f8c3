/**
 * The ListerWatcher service: the only thing the Reflector knows about the API server. `list` fetches one
 * page of a collection; `watch` is a Stream of watch events that opens the request when it runs and closes
 * it when it ends or is interrupted. Errors are typed, one class per reason the Reflector and users branch
 * on. The HTTP implementation lives in `HttpListerWatcher`, the in-memory one for tests in
 * `FakeListerWatcher`.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Duration from "effect/Duration"
import type * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Predicate from "effect/Predicate"
import type * as Stream from "effect/Stream"
import type { KubeObject } from "./KubeObject.js"
import type { Resource } from "./Resource.js"
import type { BookmarkObject, Status } from "./Wire.js"
import { initialEventsEndAnnotation } from "./Wire.js"

// -------------------------------------------------------------------------------------------------
// options and results
// -------------------------------------------------------------------------------------------------

/**
 * Options of a LIST request (`metav1.ListOptions` without the watch fields).
 *
 * @since 0.1.0
 * @category models
 */
export interface ListOptions {
  readonly labelSelector?: string | undefined
  readonly fieldSelector?: string | undefined
  /** `""`: most recent (consistent read); `"0"`: any age; otherwise "not older than" unless `resourceVersionMatch`. */
  readonly resourceVersion?: string | undefined
  readonly resourceVersionMatch?: "NotOlderThan" | "Exact" | undefined
  readonly limit?: number | undefined
  readonly continue?: string | undefined
  readonly timeoutSeconds?: number | undefined
}

/**
 * Options of a WATCH request.
 *
 * @since 0.1.0
 * @category models
 */
export interface WatchOptions {
  readonly labelSelector?: string | undefined
  readonly fieldSelector?: string | undefined
  readonly resourceVersion?: string | undefined
  readonly resourceVersionMatch?: "NotOlderThan" | "Exact" | undefined
  readonly timeoutSeconds?: number | undefined
  readonly allowWatchBookmarks?: boolean | undefined
  /** Watch-list: stream the current state as ADDED events, ended by an annotated bookmark. */
  readonly sendInitialEvents?: boolean | undefined
}

/**
 * One page of a list.
 *
 * @since 0.1.0
 * @category models
 */
export interface ListPage<A> {
  readonly items: ReadonlyArray<A>
  readonly resourceVersion: string
  readonly continue: string | undefined
  readonly remainingItemCount?: number | undefined
}

/**
 * A watch event. `ERROR` events never appear: a ListerWatcher turns them into a typed stream failure.
 *
 * @since 0.1.0
 * @category models
 */
export type WatchEvent<A> =
  | { readonly type: "ADDED" | "MODIFIED" | "DELETED"; readonly object: A }
  | { readonly type: "BOOKMARK"; readonly object: BookmarkObject }

/**
 * Whether a bookmark ends the initial events of a watch-list stream.
 *
 * @since 0.1.0
 * @category guards
 */
export const isInitialEventsEnd = (bookmark: BookmarkObject): boolean =>
  bookmark.metadata.annotations?.[initialEventsEndAnnotation] === "true"

// -------------------------------------------------------------------------------------------------
// errors
// -------------------------------------------------------------------------------------------------

/**
 * @since 0.1.0
 * @category type ids
 */
export const ErrorTypeId: unique symbol = Symbol.for("effect-informers/ListerWatcherError")

/**
 * @since 0.1.0
 * @category type ids
 */
export type ErrorTypeId = typeof ErrorTypeId

interface StatusFields {
  readonly message: string
  readonly status?: Status | undefined
}

/**
 * 410 Gone / `Expired`: the requested resourceVersion (or continue token) is older than the server keeps.
 * The Reflector relists with a consistent read.
 *
 * @since 0.1.0
 * @category errors
 */
export class Gone extends Data.TaggedError("Gone")<StatusFields> {
  readonly [ErrorTypeId]: ErrorTypeId = ErrorTypeId
}

/**
 * The requested resourceVersion is newer than the server has seen. The Reflector relists consistently.
 *
 * @since 0.1.0
 * @category errors
 */
export class ResourceVersionTooLarge extends Data.TaggedError("ResourceVersionTooLarge")<StatusFields> {
  readonly [ErrorTypeId]: ErrorTypeId = ErrorTypeId
}

/**
 * 429: the server asks the client to slow down, possibly saying for how long.
 *
 * @since 0.1.0
 * @category errors
 */
export class TooManyRequests extends Data.TaggedError("TooManyRequests")<
  StatusFields & {
    readonly retryAfter: Option.Option<Duration.Duration>
  }
> {
  readonly [ErrorTypeId]: ErrorTypeId = ErrorTypeId
}

/**
 * 403.
 *
 * @since 0.1.0
 * @category errors
 */
export class Forbidden extends Data.TaggedError("Forbidden")<StatusFields> {
  readonly [ErrorTypeId]: ErrorTypeId = ErrorTypeId
}

/**
 * 401.
 *
 * @since 0.1.0
 * @category errors
 */
export class Unauthorized extends Data.TaggedError("Unauthorized")<StatusFields> {
  readonly [ErrorTypeId]: ErrorTypeId = ErrorTypeId
}

/**
 * 404: the resource type (e.g. a CRD not installed) or namespace does not exist.
 *
 * @since 0.1.0
 * @category errors
 */
export class NotFound extends Data.TaggedError("NotFound")<StatusFields> {
  readonly [ErrorTypeId]: ErrorTypeId = ErrorTypeId
}

/**
 * Any other error Status: 5xx, or a 4xx such as 400 BadRequest or 422 Invalid (`reason` tells).
 *
 * @since 0.1.0
 * @category errors
 */
export class ServerError extends Data.TaggedError("ServerError")<
  StatusFields & {
    readonly code: number
    readonly reason: string
  }
> {
  readonly [ErrorTypeId]: ErrorTypeId = ErrorTypeId
}

/**
 * The request did not complete: connection refused or reset, TLS failure, a stream cut mid-line, an
 * inactivity timeout.
 *
 * @since 0.1.0
 * @category errors
 */
export class Transport extends Data.TaggedError("Transport")<{
  readonly message: string
  readonly cause?: unknown
}> {
  readonly [ErrorTypeId]: ErrorTypeId = ErrorTypeId
}

/**
 * A response or watch line could not be decoded (malformed JSON, wrong shape, missing metadata, a line
 * over the size limit). The Reflector reports it and relists, so nothing is lost.
 *
 * @since 0.1.0
 * @category errors
 */
export class Decode extends Data.TaggedError("Decode")<{
  /** One line, scrubbed of the request's credentials. */
  readonly message: string
  /** The full explanation when there is more than a line of it (a schema error tree): logged at debug level. */
  readonly detail?: string | undefined
  readonly cause?: unknown
}> {
  readonly [ErrorTypeId]: ErrorTypeId = ErrorTypeId
}

/**
 * @since 0.1.0
 * @category errors
 */
export type ListerWatcherError =
  | Gone
  | ResourceVersionTooLarge
  | TooManyRequests
  | Forbidden
  | Unauthorized
  | NotFound
  | ServerError
  | Transport
  | Decode

/**
 * @since 0.1.0
 * @category guards
 */
export const isListerWatcherError = (u: unknown): u is ListerWatcherError => Predicate.hasProperty(u, ErrorTypeId)

const tooLargeMessage = /too large resource version/i

/**
 * Maps a Kubernetes `Status` (from an error response or a watch `ERROR` event) to its typed error.
 * `httpStatus` is used when the body has no `code`; `retryAfterHeader` is the response's `Retry-After`.
 *
 * @example
 * ```ts
 * import { ListerWatcher, Wire } from "effect-informers"
 *
 * const error = ListerWatcher.fromStatus(Wire.failureStatus(410, "Expired", "too old resource version"))
 * console.log(error._tag) // "Gone"
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export const fromStatus = (
  status: Status,
  httpStatus?: number | undefined,
  retryAfterHeader?: string | undefined
): ListerWatcherError => {
  const code = status.code ?? httpStatus ?? 500
  const reason = status.reason ?? ""
  const message = status.message ?? (reason === "" ? `status ${code}` : reason)
  const fields = { message, status }
  const causes = status.details?.causes ?? []
  if (causes.some((cause) => cause.reason === "ResourceVersionTooLarge") || tooLargeMessage.test(message)) {
    return new ResourceVersionTooLarge(fields)
  }
  if (code === 410 || reason === "Expired" || reason === "Gone") return new Gone(fields)
  switch (code) {
    case 429: {
      const seconds = retryAfterHeader !== undefined && /^\d+$/.test(retryAfterHeader.trim())
        ? Number(retryAfterHeader.trim())
        : status.details?.retryAfterSeconds
      return new TooManyRequests({
        ...fields,
        retryAfter: seconds === undefined || seconds <= 0 ? Option.none() : Option.some(Duration.seconds(seconds))
      })
    }
    case 401:
      return new Unauthorized(fields)
    case 403:
      return new Forbidden(fields)
    case 404:
      return new NotFound(fields)
    default:
      return new ServerError({ ...fields, code, reason: reason === "" ? "InternalError" : reason })
  }
}

// -------------------------------------------------------------------------------------------------
// service
// -------------------------------------------------------------------------------------------------

/**
 * @since 0.1.0
 */
export declare namespace ListerWatcher {
  /**
   * @since 0.1.0
   * @category models
   */
  export interface Service<A> {
    /** One page of the collection. */
    readonly list: (options: ListOptions) => Effect.Effect<ListPage<A>, ListerWatcherError>
    /** Watch events; running the stream opens the request, ending or interrupting it closes it. */
    readonly watch: (options: WatchOptions) => Stream.Stream<WatchEvent<A>, ListerWatcherError>
    /** `false` when the server is known not to support watch-list (`sendInitialEvents`). */
    readonly supportsWatchList?: boolean | undefined
    /** What is listed, for logs and metrics, e.g. `"pods in default"`. */
    readonly description?: string | undefined
  }
}

/**
 * The ListerWatcher service tag. A Reflector or informer built from the context uses whatever layer
 * provides it: `HttpListerWatcher.layer` against a cluster, `FakeListerWatcher.layer` in tests.
 *
 * @since 0.1.0
 * @category tags
 */
export class ListerWatcher extends Context.Tag("effect-informers/ListerWatcher")<
  ListerWatcher,
  ListerWatcher.Service<KubeObject>
>() {}

/**
 * Which objects of a resource a ListerWatcher covers.
 *
 * @since 0.1.0
 * @category models
 */
export interface Scope {
  /** Absent or `""`: all namespaces (and cluster-scoped resources). */
  readonly namespace?: string | undefined
  readonly labelSelector?: string | undefined
  readonly fieldSelector?: string | undefined
}

/**
 * @since 0.1.0
 */
export declare namespace ListerWatcherSource {
  /**
   * @since 0.1.0
   * @category models
   */
  export interface Service {
    /** A ListerWatcher for `resource` objects in `scope`. */
    readonly listerWatcher: <A>(resource: Resource<A>, scope: Scope) => ListerWatcher.Service<A>
  }
}

/**
 * Makes a ListerWatcher for any resource and scope: the informer factory's only way to reach a server.
 * `HttpListerWatcher.layerSource` talks to a cluster; `FakeListerWatcher.layerSource` serves fakes.
 *
 * @since 0.1.0
 * @category tags
 */
export class ListerWatcherSource extends Context.Tag("effect-informers/ListerWatcherSource")<
  ListerWatcherSource,
  ListerWatcherSource.Service
>() {}

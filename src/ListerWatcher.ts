/**
 * The ListerWatcher service: the only thing the Reflector knows about the API server. `list` fetches one
 * page of a collection; `watch` is a Stream of watch events that opens the request when it runs and closes
 * it when it ends or is interrupted. Errors are typed: the families of `ApiError`, with a `reason` the Reflector
 * and users branch on. The HTTP implementation lives in `HttpListerWatcher`, the in-memory one for tests in
 * `FakeListerWatcher`.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import type * as Stream from "effect/Stream"
import type { ApiError } from "./ApiError.js"
import type { KubeObject } from "./KubeObject.js"
import type { Resource } from "./Resource.js"
import type { BookmarkObject } from "./Wire.js"
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
 * What `list` and `watch` fail with: the families of `ApiError` (`StatusError`, `TransportError`,
 * `DecodeError`), each with a `reason`.
 *
 * @since 0.1.0
 * @category errors
 */
export type ListerWatcherError = ApiError

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
export class ListerWatcher extends Context.Service<
  ListerWatcher,
  ListerWatcher.Service<KubeObject>
>()("effect-informers/ListerWatcher") {}

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
export class ListerWatcherSource extends Context.Service<
  ListerWatcherSource,
  ListerWatcherSource.Service
>()("effect-informers/ListerWatcherSource") {}

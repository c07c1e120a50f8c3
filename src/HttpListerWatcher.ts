/**
 * The ListerWatcher over HTTP: LIST and WATCH requests for one resource, sent with the `HttpClient` in
 * the context to the API server the `KubeConfig` describes, with its credentials.
 *
 * - LIST decodes the body as it arrives: each item is parsed and validated (envelope and item metadata, as
 *   `Wire.decodeList`) when its bytes are complete, so a list of any size that fits in memory as objects is
 *   accepted and the body is never held whole, as bytes or as one string (V8's limit is ~512 MB; an
 *   unpaginated list of 150,000 pods is ~450 MB of JSON). Objects are the parsed JSON, never copied. A LIST
 *   whose response headers, or next bytes, take longer than `listIdleTimeout` (60 s) fails with a `TransportError`.
 * - WATCH streams the body: bytes are split into lines and decoded chunk by chunk (`Wire.decodeWatchLine`),
 *   never buffered whole. `ERROR` events become the stream's typed failure, unknown event types and objects
 *   of another kind are skipped with a warning, a line over `maxLineBytes` fails with a `DecodeError`, a reset
 *   connection or a body cut mid-line fails with a `TransportError`, and a clean end of the body ends the stream.
 *   Interrupting the stream aborts the request, which closes its connection.
 * - Error responses map to the typed errors of `ListerWatcher` through `fromStatus` (the body's `Status`
 *   when there is one, the HTTP code otherwise; `Retry-After` on 429). At most 8 KiB of an error body are
 *   read.
 * - Text from the server that goes into an error or a log line (Status messages and causes, previews of
 *   malformed bodies and lines, warnings) is scrubbed of the request's credentials first: the bearer token,
 *   the basic-auth password (plain and base64), the client key's lines, and anything credential-shaped
 *   (`Bearer x`, `https://user:pass@host`, PEM private keys).
 * - Resources with a `decode` (`Resource.custom`, `Resource.metadataOnly`): each list item and watch
 *   event's object is decoded once, after the checks above; an object that does not decode fails the LIST
 *   or WATCH with a `DecodeError` (`SchemaMismatch`) naming it. A `metadataOnly` resource asks for
 *   `PartialObjectMetadata` (`Metadata.listAccept`, `Metadata.watchAccept`) and accepts objects of any
 *   kind (full objects from a server that ignores the header are cut down to their metadata). Resources
 *   without `decode` are not touched: which path runs is chosen once, when the ListerWatcher is made.
 *
 * The `HttpClient` they are sent with is `ClusterHttpClient.layer`'s: one keep-alive agent pool with the
 * cluster's TLS material, so LIST and WATCH requests reuse connections. This module's `layerHttpClient`,
 * `layerHttpClientWith`, `makeHttpClient` and `HttpClientOptions` are the same, under their first names.
 *
 * @since 0.1.0
 */
import type * as Duration from "effect/Duration"
import type * as Effect from "effect/Effect"
import type * as HttpClient from "effect/http/HttpClient"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import * as ClusterHttpClient from "./ClusterHttpClient.js"
import * as internal from "./internal/transport/httpListerWatcher.js"
import type { KubeConfig } from "./KubeConfig.js"
import type { KubeObject } from "./KubeObject.js"
import { ListerWatcher, ListerWatcherSource } from "./ListerWatcher.js"
import type { Resource } from "./Resource.js"

// -------------------------------------------------------------------------------------------------
// options
// -------------------------------------------------------------------------------------------------

/**
 * What to list and watch, and how.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /** Namespace of a namespaced resource; all namespaces when absent. Ignored for cluster-scoped ones. */
  readonly namespace?: string | undefined
  /** Applied to every LIST and WATCH (an option passed per call replaces it). */
  readonly labelSelector?: string | undefined
  /** Applied to every LIST and WATCH (an option passed per call replaces it). */
  readonly fieldSelector?: string | undefined
  /**
   * Fail a watch with a `TransportError` when no bytes arrive for this long (bookmarks count). Pair it with
   * `allowWatchBookmarks` so that a quiet but healthy watch keeps receiving bytes. Default: no watchdog.
   */
  readonly watchInactivityTimeout?: Duration.Input | undefined
  /** The longest watch line accepted, in bytes. Default 64 MiB. */
  readonly maxLineBytes?: number | undefined
  /**
   * Fail a LIST with a `TransportError` when its response headers, or the next bytes of its body, take longer than
   * this: an idle timeout, not a bound on a large list's total time. The Reflector then backs off and
   * retries. An error response's body (LIST or WATCH, at most 8 KiB read) gets the same bound in total.
   * Default 60 seconds; `Duration.infinity` turns it off.
   */
  readonly listIdleTimeout?: Duration.Input | undefined
  /** `User-Agent` header. Default `effect-informers/0.1.0`. */
  readonly userAgent?: string | undefined
}

/**
 * Options of `layerSource`: those of `Options` that do not depend on the scope of each ListerWatcher.
 *
 * @since 0.1.0
 * @category models
 */
export interface SourceOptions extends Omit<Options, "namespace" | "labelSelector" | "fieldSelector"> {}

/**
 * Options of the Node HTTP client built for a `KubeConfig`: `ClusterHttpClient.Options`, under its first name.
 *
 * @since 0.1.0
 * @category models
 */
export interface HttpClientOptions extends ClusterHttpClient.Options {}

// -------------------------------------------------------------------------------------------------
// constructors
// -------------------------------------------------------------------------------------------------

/**
 * A ListerWatcher for `resource`, talking to the server of the `KubeConfig` in the context through the
 * `HttpClient` in the context.
 *
 * @example
 * ```ts
 * import { Effect, Layer, Stream } from "effect"
 * import { ClusterHttpClient, HttpListerWatcher, KubeConfig, Resource } from "effect-informers"
 *
 * const program = Effect.gen(function*() {
 *   const pods = yield* HttpListerWatcher.make(Resource.pods, { namespace: "default" })
 *   const page = yield* pods.list({ limit: 500 })
 *   yield* pods.watch({ resourceVersion: page.resourceVersion, allowWatchBookmarks: true }).pipe(
 *     Stream.runForEach((event) => Effect.log(event.type))
 *   )
 * })
 *
 * program.pipe(
 *   Effect.provide(ClusterHttpClient.layer),
 *   Effect.provide(KubeConfig.layerFromDefault()),
 *   Effect.runFork
 * )
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const make: <A = KubeObject>(
  resource: Resource<A>,
  options?: Options
) => Effect.Effect<ListerWatcher.Service<A>, never, KubeConfig | HttpClient.HttpClient> = internal.make

/**
 * Provides the `ListerWatcher` tag for `resource`.
 *
 * @example
 * ```ts
 * import { Layer } from "effect"
 * import { ClusterHttpClient, HttpListerWatcher, KubeConfig, Resource } from "effect-informers"
 *
 * const PodsListerWatcher = HttpListerWatcher.layer(Resource.pods, { labelSelector: "app=web" }).pipe(
 *   Layer.provide(ClusterHttpClient.layer),
 *   Layer.provide(KubeConfig.layerFromDefault())
 * )
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (
  resource: Resource<KubeObject>,
  options: Options = {}
): Layer.Layer<ListerWatcher, never, KubeConfig | HttpClient.HttpClient> =>
  Layer.effect(ListerWatcher, make(resource, options))

/**
 * A `ListerWatcherSource` making HTTP ListerWatchers for any resource and scope (what an informer factory
 * needs), all sharing the `KubeConfig` and `HttpClient` in the context.
 *
 * @since 0.1.0
 * @category constructors
 */
export const makeSource: (
  options?: SourceOptions
) => Effect.Effect<ListerWatcherSource.Service, never, KubeConfig | HttpClient.HttpClient> = internal.makeSource

/**
 * Provides the `ListerWatcherSource` tag with `makeSource`.
 *
 * @example
 * ```ts
 * import { Layer } from "effect"
 * import { ClusterHttpClient, HttpListerWatcher, KubeConfig } from "effect-informers"
 *
 * const Source = HttpListerWatcher.layerSource({ watchInactivityTimeout: "5 minutes" }).pipe(
 *   Layer.provide(ClusterHttpClient.layer),
 *   Layer.provide(KubeConfig.layerFromDefault())
 * )
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layerSource = (
  options: SourceOptions = {}
): Layer.Layer<ListerWatcherSource, never, KubeConfig | HttpClient.HttpClient> =>
  Layer.effect(ListerWatcherSource, makeSource(options))

/**
 * `ClusterHttpClient.make`, under its first name: the Node `HttpClient` for the `KubeConfig` in the context.
 *
 * @since 0.1.0
 * @category constructors
 */
export const makeHttpClient: (
  options?: HttpClientOptions
) => Effect.Effect<HttpClient.HttpClient, never, KubeConfig | Scope.Scope> = ClusterHttpClient.make

/**
 * `ClusterHttpClient.layerWith`, under its first name: `makeHttpClient` with options, as a layer.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerHttpClientWith: (
  options: HttpClientOptions
) => Layer.Layer<HttpClient.HttpClient, never, KubeConfig> = ClusterHttpClient.layerWith

/**
 * `ClusterHttpClient.layer`, under its first name: the Node `HttpClient` for the `KubeConfig` in the context.
 * Share one instance between all ListerWatchers of an application so that they share the connection pool.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerHttpClient: Layer.Layer<HttpClient.HttpClient, never, KubeConfig> = ClusterHttpClient.layer

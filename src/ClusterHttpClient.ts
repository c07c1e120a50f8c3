/**
 * The `HttpClient` for a cluster: Node's HTTP client over one keep-alive agent pool with the TLS material of
 * the `KubeConfig` in the context (the cluster CA, the client certificate and key, the server name, and
 * certificate verification unless the configuration skips it). LIST and WATCH requests (`HttpListerWatcher`)
 * and the `Client`'s reads and writes reuse its connections: give them one instance.
 *
 * @example
 * ```ts
 * import { Layer } from "effect"
 * import { Client, ClusterHttpClient, HttpListerWatcher, KubeConfig } from "effect-informers"
 *
 * const Transport = ClusterHttpClient.layer.pipe(Layer.provideMerge(KubeConfig.layerFromDefault()))
 * const App = Layer.mergeAll(Client.layer(), HttpListerWatcher.layerSource()).pipe(Layer.provide(Transport))
 * ```
 *
 * @since 0.2.0
 */
import type * as Duration from "effect/Duration"
import type * as Effect from "effect/Effect"
import type * as HttpClient from "effect/http/HttpClient"
import type * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import * as internal from "./internal/transport/clusterHttpClient.js"
import type { KubeConfig } from "./KubeConfig.js"

/**
 * Options of the connection pool.
 *
 * @since 0.2.0
 * @category models
 */
export interface Options {
  /** Maximum concurrent connections per host (every open watch holds one). Default: unlimited. */
  readonly maxSockets?: number | undefined
  /** Idle connections kept for reuse per host. Default 256. */
  readonly maxFreeSockets?: number | undefined
  /** Initial delay of TCP keep-alive probes on idle connections. Default 30 seconds. */
  readonly tcpKeepAlive?: Duration.Input | undefined
}

/**
 * Builds the Node `HttpClient` for the `KubeConfig` in the context: one `http`/`https` agent pair with
 * keep-alive (idle connections are reused by later requests, most recently used first), the cluster CA, the
 * client certificate and key, and certificate verification unless the configuration skips it. The agents are
 * destroyed when the scope closes.
 *
 * @since 0.2.0
 * @category constructors
 */
export const make: (options?: Options) => Effect.Effect<HttpClient.HttpClient, never, KubeConfig | Scope.Scope> =
  internal.make

/**
 * `make` with options, as a layer.
 *
 * @example
 * ```ts
 * import { Layer } from "effect"
 * import { ClusterHttpClient, KubeConfig } from "effect-informers"
 *
 * const Transport = ClusterHttpClient.layerWith({ maxSockets: 64 }).pipe(
 *   Layer.provideMerge(KubeConfig.layerInCluster())
 * )
 * ```
 *
 * @since 0.2.0
 * @category layers
 */
export const layerWith: (options: Options) => Layer.Layer<HttpClient.HttpClient, never, KubeConfig> = internal.layerWith

/**
 * The `HttpClient` for the `KubeConfig` in the context, with the default options (see `make`). Share one
 * instance between all ListerWatchers and Clients of an application so that they share the connection pool.
 *
 * @since 0.2.0
 * @category layers
 */
export const layer: Layer.Layer<HttpClient.HttpClient, never, KubeConfig> = internal.layerWith({})

/**
 * The machinery of `ClusterHttpClient`: a Node `HttpClient` over one keep-alive agent with the cluster's TLS
 * material.
 *
 * @internal
 */
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as HttpClient from "effect/http/HttpClient"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import type * as Scope from "effect/Scope"
import type * as ClusterHttpClient from "../../ClusterHttpClient.js"
import { KubeConfig } from "../../KubeConfig.js"

/** `ClusterHttpClient.make`. */
export const make = (
  options: ClusterHttpClient.Options = {}
): Effect.Effect<HttpClient.HttpClient, never, KubeConfig | Scope.Scope> =>
  Effect.gen(function*() {
    const config = yield* KubeConfig
    const tls = config.tls
    const agent = yield* NodeHttpClient.makeAgent({
      keepAlive: true,
      keepAliveMsecs: Duration.toMillis(options.tcpKeepAlive ?? "30 seconds"),
      maxFreeSockets: options.maxFreeSockets ?? 256,
      scheduling: "lifo",
      ...(options.maxSockets === undefined ? {} : { maxSockets: options.maxSockets }),
      ...(tls.ca === undefined ? {} : { ca: tls.ca }),
      ...(tls.cert === undefined ? {} : { cert: tls.cert }),
      ...(tls.key === undefined ? {} : { key: Redacted.value(tls.key) }),
      ...(tls.serverName === undefined ? {} : { servername: tls.serverName }),
      rejectUnauthorized: tls.rejectUnauthorized
    })
    return yield* Effect.provideService(NodeHttpClient.makeNodeHttp, NodeHttpClient.HttpAgent, agent)
  })

/** `ClusterHttpClient.layerWith`. */
export const layerWith = (
  options: ClusterHttpClient.Options
): Layer.Layer<HttpClient.HttpClient, never, KubeConfig> => Layer.effect(HttpClient.HttpClient, make(options))

/**
 * The library's metrics (every Effect `Metric` of the process: informers, work queues, controllers, leader
 * election...) served over HTTP in the Prometheus text format, for `effect-informers replicate
 * --metrics-port`.
 *
 * Effect's `PrometheusMetrics` (`effect/observability`) renders the process's metric registry in the text
 * format, after a `target_info` series naming the service. The HTTP server is a plain `node:http` one, so
 * that the command loads no HTTP framework to serve one path: it binds `host:port` (port 0: any free one)
 * in the current scope, a bind that fails is a `MetricsServerError`, and closing the scope closes the server
 * and its connections, so the port is free again.
 *
 * @since 0.2.0
 */
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as PrometheusMetrics from "effect/observability/PrometheusMetrics"
import type * as Scope from "effect/Scope"
import * as Http from "node:http"
import type { AddressInfo } from "node:net"

/**
 * The metrics could not be served: the address is in use (`AddressInUse`), the host is not an address of
 * this machine or does not resolve (`AddressNotAvailable`), binding needs privileges (`PermissionDenied`),
 * the port is not one (`InvalidPort`), or another reason (`Unknown`, with the system's code in the message).
 *
 * @since 0.2.0
 * @category errors
 */
export class MetricsServerError extends Data.TaggedError("MetricsServerError")<{
  readonly reason: "AddressInUse" | "AddressNotAvailable" | "PermissionDenied" | "InvalidPort" | "Unknown"
  readonly host: string
  readonly port: number
  readonly cause?: unknown
}> {
  override get message(): string {
    const where = `cannot serve the metrics on ${this.host}:${this.port}`
    switch (this.reason) {
      case "AddressInUse":
        return `${where}: the address is in use`
      case "AddressNotAvailable":
        return `${where}: the host is not an address of this machine (or does not resolve)`
      case "PermissionDenied":
        return `${where}: permission denied`
      case "InvalidPort":
        return `${where}: the port must be an integer from 0 to 65535`
      case "Unknown": {
        const code = (this.cause as { readonly code?: unknown } | undefined)?.code
        return `${where}: ${typeof code === "string" ? code : "the server failed"}`
      }
    }
  }
}

/**
 * Where to serve: `port` (0: any free one) on `host` (default `127.0.0.1`: this machine only; `0.0.0.0` for
 * every interface); `serviceName` is the `service_name` of the `target_info` series (default
 * `effect-informers`).
 *
 * @since 0.2.0
 * @category models
 */
export interface ServeOptions {
  readonly port: number
  readonly host?: string | undefined
  readonly serviceName?: string | undefined
}

/**
 * A running metrics endpoint: `url` is the address to scrape (`http://host:port/metrics`), `port` the port
 * it is bound to (the chosen one when 0 was asked).
 *
 * @since 0.2.0
 * @category models
 */
export interface MetricsServer {
  readonly url: string
  readonly host: string
  readonly port: number
}

/**
 * The default host: this machine only.
 *
 * @since 0.2.0
 * @category constants
 */
export const defaultHost = "127.0.0.1"

const reasonOf = (code: unknown): MetricsServerError["reason"] => {
  switch (code) {
    case "EADDRINUSE":
      return "AddressInUse"
    case "EADDRNOTAVAIL":
    case "ENOTFOUND":
    case "EAI_AGAIN":
    case "EAI_FAIL":
      return "AddressNotAvailable"
    case "EACCES":
    case "EPERM":
      return "PermissionDenied"
    case "ERR_SOCKET_BAD_PORT":
      return "InvalidPort"
    default:
      return "Unknown"
  }
}

/** A label value as the text format writes it: backslash, double quote and line feed escaped. */
const labelValue = (value: string): string => value.replace(/\\/g, "\\\\").replace(/"/g, "\\\"").replace(/\n/g, "\\n")

/** The `target_info` series: the service, as OpenTelemetry's resource named it before. */
const targetInfo = (serviceName: string): string =>
  "# HELP target_info Target metadata\n# TYPE target_info gauge\n" +
  `target_info{service_name="${labelValue(serviceName)}",telemetry_sdk_name="effect",` +
  `telemetry_sdk_language="nodejs"} 1\n`

/**
 * Serves the process's Effect metrics at `http://host:port/metrics` in the Prometheus text format (counters
 * named as they are, e.g. `..._total`; histograms as `_bucket`/`_sum`/`_count`; the attributes as labels;
 * plus `target_info`), until the scope closes; any other path answers 404.
 *
 * @since 0.2.0
 * @category constructors
 */
export const serve = (options: ServeOptions): Effect.Effect<MetricsServer, MetricsServerError, Scope.Scope> =>
  Effect.gen(function*() {
    const host = options.host ?? defaultHost
    const port = options.port
    if (!Number.isInteger(port) || port < 0 || port > 65535) {
      return yield* new MetricsServerError({ reason: "InvalidPort", host, port })
    }

    // the metric registry is the one of this context (the process's, unless a test gave its own)
    const context = yield* Effect.context<never>()
    const info = targetInfo(options.serviceName ?? "effect-informers")

    const server = Http.createServer((req, res) => {
      // the path by hand: `new URL` throws on request targets such as `//[`, and a throw here would end the process
      const target = req.url ?? "/"
      const query = target.indexOf("?")
      const path = query < 0 ? target : target.slice(0, query)
      if (path !== "/metrics" || (req.method !== "GET" && req.method !== "HEAD")) {
        res.writeHead(404, { "content-type": "text/plain" })
        res.end("not found\n")
        return
      }
      let body: string
      try {
        body = info + PrometheusMetrics.formatUnsafe(context)
      } catch {
        res.writeHead(500, { "content-type": "text/plain" })
        res.end("cannot render the metrics\n")
        return
      }
      res.writeHead(200, { "content-type": "text/plain; version=0.0.4; charset=utf-8" })
      res.end(req.method === "HEAD" ? undefined : body)
    })
    const bound = yield* Effect.acquireRelease(
      Effect.callback<number, MetricsServerError>((resume) => {
        const failed = (cause: unknown) =>
          resume(
            Effect.fail(
              new MetricsServerError({
                reason: reasonOf((cause as { readonly code?: unknown }).code),
                host,
                port,
                cause
              })
            )
          )
        server.once("error", failed)
        try {
          server.listen(port, host, () => {
            // (an error event without a listener would end the process: a server error once listening
            // leaves the scrapes failing, never the command)
            server.off("error", failed)
            server.on("error", () => {})
            resume(Effect.succeed((server.address() as AddressInfo).port))
          })
        } catch (cause) {
          failed(cause)
        }
      }),
      () =>
        Effect.callback<void>((resume) => {
          server.closeAllConnections()
          server.close(() => resume(Effect.void))
        })
    )
    const shown = host.includes(":") ? `[${host}]` : host
    return { url: `http://${shown}:${bound}/metrics`, host, port: bound }
  })

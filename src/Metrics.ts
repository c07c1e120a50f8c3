/**
 * Every metric of the library, as Effect `Metric`s, in one module: the informers' (`fifoDepth`,
 * `watchEvents`, `relists`, `errors`, `notifications`, `handlerBacklog`...), and, from their subsystems, the
 * work queues', the controllers', the elections', the shard groups' and the event recorders'. Each is defined
 * in the metrics file of its subsystem (`internal/<subsystem>/metrics.ts`) and reached here. docs/METRICS.md
 * lists them all: their names in code (`Metrics.<name>`), their names as Prometheus shows them, and their
 * labels. An informer's metrics are tagged with `informer` (the informer's name); per-handler metrics also
 * with `handler`.
 *
 * They are Effect metrics, in the context's `Metric.MetricRegistry` (Effect's default registry unless a
 * program provides its own): read one with `Metric.value`, or export them all with any Effect metrics
 * exporter. `effect/observability`'s `PrometheusMetrics.format` renders the registry in Prometheus' text
 * format, and `PrometheusMetrics.layerHttp` serves it at `/metrics` on an `effect/http` router
 * (`effect-informers replicate --metrics-port` serves it with its own server):
 *
 * @example
 * ```ts
 * import * as Informers from "effect-informers/Layer"
 * import * as Effect from "effect/Effect"
 * import { PrometheusMetrics } from "effect/observability"
 *
 * const program = Effect.gen(function*() {
 *   const pods = yield* Informers.Pods
 *   yield* pods.informer.synced
 *   // every metric of the registry, as a Prometheus scrape would read it
 *   const text = yield* PrometheusMetrics.format()
 *   yield* Effect.log(text)
 * })
 *
 * // against the cluster of ~/.kube/config
 * const main = program.pipe(
 *   Effect.provide(Informers.pods()),
 *   Effect.provide(Informers.live())
 * )
 * ```
 *
 * @since 0.1.0
 */
import type * as Metric from "effect/Metric"
import * as internalTags from "./internal/metricTags.js"

/**
 * The informers' metrics: `fifoDepth`, `watchEvents`, `listedObjects`, `relists`, `errors`,
 * `notifications`, `handlerBacklog`, `handlerDuration`, `handlerFailures`, `handlerCoalesced`.
 *
 * @since 0.1.0
 * @category metrics
 */
export * from "./internal/informer/metrics.js"

/**
 * The work queues', the controllers' and the event recorders' metrics.
 *
 * @since 0.2.0
 * @category metrics
 */
export * from "./internal/controller/metrics.js"

/**
 * The leader elections' and the shard groups' metrics.
 *
 * @since 0.2.0
 * @category metrics
 */
export * from "./internal/coordination/metrics.js"

/**
 * The REST client's metrics, client-go's: `restClientRequests` (`rest_client_requests_total`) and
 * `restClientRequestDuration` (`rest_client_request_duration_seconds`), for every request sent to the API
 * server.
 *
 * @since 0.2.0
 * @category metrics
 */
export * from "./internal/transport/metrics.js"

/**
 * `metric` with fixed tags (Effect 4 attributes), made once, for hot paths. Values are shared with
 * `Metric.withAttributes(metric, { k1: v1, ... })`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const withTags: <Input, State>(
  metric: Metric.Metric<Input, State>,
  tags: ReadonlyArray<readonly [string, string]>
) => Metric.Metric<Input, State> = internalTags.withTags

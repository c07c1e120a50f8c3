/**
 * Every metric of the library, as Effect `Metric`s, in one module: the informers' (`fifoDepth`,
 * `watchEvents`, `relists`, `errors`, `notifications`, `handlerBacklog`...), and, from their subsystems, the
 * work queues', the controllers', the elections', the shard groups' and the event recorders'. Each is defined
 * in the metrics file of its subsystem (`internal/<subsystem>/metrics.ts`) and reached here. docs/METRICS.md
 * lists them all: their names in code (`Metrics.<name>`), their names as Prometheus shows them, and their
 * labels. An informer's metrics are tagged with `informer` (the informer's name); per-handler metrics also
 * with `handler`.
 *
 * They are Effect metrics, in Effect's global registry: read one with `Metric.value`, or export them all
 * with any Effect metrics exporter. With `@effect/opentelemetry`, `Metrics.layer` hands the registry to
 * OpenTelemetry `MetricReader`s, e.g. `@opentelemetry/exporter-prometheus`'s, which serves
 * `http://localhost:9464/metrics` (`effect-informers replicate --metrics-port` does the same with its own
 * server):
 *
 * @example
 * ```ts
 * import * as OtelMetrics from "@effect/opentelemetry/Metrics"
 * import * as OtelResource from "@effect/opentelemetry/Resource"
 * import { PrometheusExporter } from "@opentelemetry/exporter-prometheus"
 * import type { MetricReader } from "@opentelemetry/sdk-metrics"
 * import * as Informers from "effect-informers/Layer"
 * import * as Effect from "effect/Effect"
 * import * as Layer from "effect/Layer"
 *
 * // the reader starts its HTTP server when made and stops it when the layer's scope closes
 * const MetricsLive = OtelMetrics.layer(
 *   () => new PrometheusExporter({ port: 9464, host: "127.0.0.1" }) as unknown as MetricReader
 * ).pipe(Layer.provide(OtelResource.layer({ serviceName: "my-controller" })))
 *
 * const program = Effect.gen(function*() {
 *   const pods = yield* Informers.Pods
 *   yield* pods.informer.synced
 *   yield* Effect.never
 * })
 *
 * // against the cluster of ~/.kube/config, its metrics at http://127.0.0.1:9464/metrics
 * const main = program.pipe(
 *   Effect.provide(Informers.pods()),
 *   Effect.provide(Informers.live()),
 *   Effect.provide(MetricsLive)
 * )
 * ```
 *
 * (The cast: `@opentelemetry/exporter-prometheus` 0.223.0 pins `@opentelemetry/sdk-metrics` 2.12.0, one
 * patch apart from the copy `@effect/opentelemetry` resolves here; the classes are the same at run time.)
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
 * `metric` with fixed tags, cheap to update from a hot path. `Metric.tagged` builds its tag list anew on
 * every update, which defeats the registry's hook cache (a new metric key and a registry lookup per
 * update); here the tag list is built once, so updates hit the cache. Values are shared with
 * `Metric.tagged(metric, k1, v1)` ... applied in the same order.
 *
 * @since 0.1.0
 * @category constructors
 */
export const withTags: <Type, In, Out>(
  metric: Metric.Metric<Type, In, Out>,
  tags: ReadonlyArray<readonly [string, string]>
) => Metric.Metric<Type, In, Out> = internalTags.withTags

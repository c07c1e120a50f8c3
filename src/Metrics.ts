/**
 * The informer metrics, as Effect `Metric`s. Each is tagged with `informer` (the informer's name);
 * per-handler metrics also with `handler`. The other modules have theirs (`WorkQueue`, `Controller`,
 * `LeaderElection`, `Sharding`, `EventRecorder`); docs/METRICS.md lists them all, with their names as
 * Prometheus shows them.
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
import * as Metric from "effect/Metric"
import * as MetricBoundaries from "effect/MetricBoundaries"
import * as MetricLabel from "effect/MetricLabel"

/**
 * Deltas waiting in the informer's DeltaFifo.
 *
 * @since 0.1.0
 * @category metrics
 */
export const fifoDepth = Metric.gauge("effect_informers_fifo_depth", {
  description: "Deltas waiting in the informer's DeltaFifo"
})

/**
 * Watch events received, tagged with `type` (ADDED, MODIFIED, DELETED, BOOKMARK).
 *
 * @since 0.1.0
 * @category metrics
 */
export const watchEvents = Metric.counter("effect_informers_watch_events_total", {
  description: "Watch events received by the Reflector",
  incremental: true
})

/**
 * Objects received in LIST responses (and watch-list initial events).
 *
 * @since 0.1.0
 * @category metrics
 */
export const listedObjects = Metric.counter("effect_informers_listed_objects_total", {
  description: "Objects received by LIST or watch-list initial events",
  incremental: true
})

/**
 * Relists (full LIST or watch-list syncs), tagged with `cause`: `initial`, `gone`, `error`,
 * `very-short-watch`, `resync-error`, `watch-list-fallback`.
 *
 * @since 0.1.0
 * @category metrics
 */
export const relists = Metric.counter("effect_informers_relists_total", {
  description: "Full relists by cause",
  incremental: true
})

/**
 * Errors reported by the Reflector, tagged with `phase`, `error` (the error's tag: `StatusError`,
 * `TransportError`...) and `reason` (its `reason`; a `StoreError`'s operation; `Defect` for an `UnexpectedError`).
 *
 * @since 0.1.0
 * @category metrics
 */
export const errors = Metric.counter("effect_informers_errors_total", {
  description: "Errors reported by the Reflector",
  incremental: true
})

/**
 * Notifications distributed to handlers, tagged with `type` (add, update, delete).
 *
 * @since 0.1.0
 * @category metrics
 */
export const notifications = Metric.counter("effect_informers_notifications_total", {
  description: "Notifications distributed to handlers",
  incremental: true
})

/**
 * Notifications buffered for a handler and not yet processed.
 *
 * @since 0.1.0
 * @category metrics
 */
export const handlerBacklog = Metric.gauge("effect_informers_handler_backlog", {
  description: "Notifications buffered for a handler"
})

/**
 * Mean time of a handler's callbacks, in seconds: one observation per batch of notifications the handler
 * took (timing each callback would cost more than a fast callback itself).
 *
 * @since 0.1.0
 * @category metrics
 */
export const handlerDuration = Metric.histogram(
  "effect_informers_handler_duration_seconds",
  MetricBoundaries.exponential({ start: 0.0001, factor: 4, count: 10 }),
  "Mean time of a handler's callbacks, observed per batch"
)

/**
 * Handler callbacks that failed (typed error or defect), tagged with `handler`.
 *
 * @since 0.1.0
 * @category metrics
 */
export const handlerFailures = Metric.counter("effect_informers_handler_failures_total", {
  description: "Handler callbacks that failed",
  incremental: true
})

/**
 * Notifications a bounded handler buffer coalesced away (a newer state of the same key replaced them).
 *
 * @since 0.1.0
 * @category metrics
 */
export const handlerCoalesced = Metric.counter("effect_informers_handler_coalesced_total", {
  description: "Notifications replaced by a newer state of the same key in a bounded handler buffer",
  incremental: true
})

/**
 * `metric` with fixed tags, cheap to update from a hot path. `Metric.tagged` builds its tag list anew on
 * every update, which defeats the registry's hook cache (a new metric key and a registry lookup per
 * update); here the tag list is built once, so updates hit the cache. Values are shared with
 * `Metric.tagged(metric, k1, v1)` ... applied in the same order.
 *
 * @since 0.1.0
 * @category constructors
 */
export const withTags = <Type, In, Out>(
  metric: Metric.Metric<Type, In, Out>,
  tags: ReadonlyArray<readonly [string, string]>
): Metric.Metric<Type, In, Out> => {
  const labels = tags.map(([key, value]) => MetricLabel.make(key, value))
  const all = (extra: ReadonlyArray<MetricLabel.MetricLabel>) => extra.length === 0 ? labels : [...labels, ...extra]
  return Metric.make(
    metric.keyType,
    (input, extra) => metric.unsafeUpdate(input, all(extra)),
    (extra) => metric.unsafeValue(all(extra)),
    (input, extra) => metric.unsafeModify(input, all(extra))
  )
}

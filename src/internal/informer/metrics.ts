/**
 * The informers' metrics: the Reflector's (watch events, listed objects, relists, errors), the DeltaFifo's
 * depth, the processor's notifications, and each handler's backlog, duration, failures and coalesced
 * notifications. Each is tagged with `informer` (the informer's name); per-handler metrics also with
 * `handler`. Public through `effect-informers/Metrics`; docs/METRICS.md lists them with their Prometheus
 * names.
 *
 * Defined with the shared helper (`../metricTags.ts`), so that the informer, its Reflector and each handler
 * make their series once (`tagged`) and update them from the hot path.
 *
 * @internal
 */
import * as Metric from "effect/Metric"
import * as Tags from "../metricTags.js"

/** The boundaries of `handlerDuration`: Effect 3's `MetricBoundaries.exponential` with the same arguments. */
const durationBoundaries = Metric.exponentialBoundaries({ start: 0.0001, factor: 4, count: 10 })

/**
 * Deltas waiting in the informer's DeltaFifo.
 *
 * Prometheus: `effect_informers_fifo_depth{informer}`.
 *
 * @since 0.1.0
 * @category metrics
 */
export const fifoDepth: Metric.Gauge<number> = Tags.gauge(
  "effect_informers_fifo_depth",
  "Deltas waiting in the informer's DeltaFifo"
)

/**
 * Watch events received, tagged with `type` (ADDED, MODIFIED, DELETED, BOOKMARK).
 *
 * Prometheus: `effect_informers_watch_events_total{informer, type}`.
 *
 * @since 0.1.0
 * @category metrics
 */
export const watchEvents: Metric.Counter<number> = Tags.counter(
  "effect_informers_watch_events_total",
  "Watch events received by the Reflector"
)

/**
 * Objects received in LIST responses (and watch-list initial events).
 *
 * Prometheus: `effect_informers_listed_objects_total{informer}`.
 *
 * @since 0.1.0
 * @category metrics
 */
export const listedObjects: Metric.Counter<number> = Tags.counter(
  "effect_informers_listed_objects_total",
  "Objects received by LIST or watch-list initial events"
)

/**
 * Relists (full LIST or watch-list syncs), tagged with `cause`: `initial`, `gone`, `error`,
 * `very-short-watch`, `resync-error`, `watch-list-fallback`.
 *
 * Prometheus: `effect_informers_relists_total{informer, cause}`.
 *
 * @since 0.1.0
 * @category metrics
 */
export const relists: Metric.Counter<number> = Tags.counter("effect_informers_relists_total", "Full relists by cause")

/**
 * Errors reported by the Reflector, tagged with `phase`, `error` (the error's tag: `StatusError`,
 * `TransportError`...) and `reason` (its `reason`; a `StoreError`'s operation; `Defect` for an `UnexpectedError`).
 *
 * Prometheus: `effect_informers_errors_total{informer, phase, error, reason}`.
 *
 * @since 0.1.0
 * @category metrics
 */
export const errors: Metric.Counter<number> = Tags.counter(
  "effect_informers_errors_total",
  "Errors reported by the Reflector"
)

/**
 * Notifications distributed to handlers, tagged with `type` (add, update, delete).
 *
 * Prometheus: `effect_informers_notifications_total{informer, type}`.
 *
 * @since 0.1.0
 * @category metrics
 */
export const notifications: Metric.Counter<number> = Tags.counter(
  "effect_informers_notifications_total",
  "Notifications distributed to handlers"
)

/**
 * Notifications buffered for a handler and not yet processed.
 *
 * Prometheus: `effect_informers_handler_backlog{informer, handler}`.
 *
 * @since 0.1.0
 * @category metrics
 */
export const handlerBacklog: Metric.Gauge<number> = Tags.gauge(
  "effect_informers_handler_backlog",
  "Notifications buffered for a handler"
)

/**
 * Mean time of a handler's callbacks, in seconds: one observation per batch of notifications the handler
 * took (timing each callback would cost more than a fast callback itself).
 *
 * Prometheus: `effect_informers_handler_duration_seconds{informer, handler}`.
 *
 * @since 0.1.0
 * @category metrics
 */
export const handlerDuration: Metric.Histogram<number> = Tags.histogram(
  "effect_informers_handler_duration_seconds",
  "Mean time of a handler's callbacks, observed per batch",
  durationBoundaries
)

/**
 * Handler callbacks that failed (typed error or defect), tagged with `handler`.
 *
 * Prometheus: `effect_informers_handler_failures_total{informer, handler}`.
 *
 * @since 0.1.0
 * @category metrics
 */
export const handlerFailures: Metric.Counter<number> = Tags.counter(
  "effect_informers_handler_failures_total",
  "Handler callbacks that failed"
)

/**
 * Notifications a bounded handler buffer coalesced away (a newer state of the same key replaced them).
 *
 * Prometheus: `effect_informers_handler_coalesced_total{informer, handler}`.
 *
 * @since 0.1.0
 * @category metrics
 */
export const handlerCoalesced: Metric.Counter<number> = Tags.counter(
  "effect_informers_handler_coalesced_total",
  "Notifications replaced by a newer state of the same key in a bounded handler buffer"
)

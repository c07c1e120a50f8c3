/**
 * The informers' metrics as constructors: each call makes the metric (no attributes: the public one in
 * `metrics.ts`) or one of its series, with fixed attributes (`informer`, `handler`, `type`...).
 *
 * Effect 4 keys a series by its metric's name, description, type and attributes, so `fifoDepth({ informer })`
 * is the same series as `Metric.withAttributes(Metrics.fifoDepth, { informer })`: what a reader of
 * `Metrics.fifoDepth` filtered by the informer's name sees. A series made once per informer (or handler)
 * keeps its key cached, so an update from the hot path is one registry lookup; `Metric.withAttributes`
 * would add a context per update, and series of one base metric updated in turn would recompute its key.
 *
 * @internal
 */
import * as Metric from "effect/Metric"

type Attributes = Metric.Metric.Attributes | undefined

/** @internal */
export const fifoDepth = (attributes?: Attributes): Metric.Gauge<number> =>
  Metric.gauge("effect_informers_fifo_depth", {
    description: "Deltas waiting in the informer's DeltaFifo",
    attributes
  })

/** @internal */
export const watchEvents = (attributes?: Attributes): Metric.Counter<number> =>
  Metric.counter("effect_informers_watch_events_total", {
    description: "Watch events received by the Reflector",
    incremental: true,
    attributes
  })

/** @internal */
export const listedObjects = (attributes?: Attributes): Metric.Counter<number> =>
  Metric.counter("effect_informers_listed_objects_total", {
    description: "Objects received by LIST or watch-list initial events",
    incremental: true,
    attributes
  })

/** @internal */
export const relists = (attributes?: Attributes): Metric.Counter<number> =>
  Metric.counter("effect_informers_relists_total", {
    description: "Full relists by cause",
    incremental: true,
    attributes
  })

/** @internal */
export const errors = (attributes?: Attributes): Metric.Counter<number> =>
  Metric.counter("effect_informers_errors_total", {
    description: "Errors reported by the Reflector",
    incremental: true,
    attributes
  })

/** @internal */
export const notifications = (attributes?: Attributes): Metric.Counter<number> =>
  Metric.counter("effect_informers_notifications_total", {
    description: "Notifications distributed to handlers",
    incremental: true,
    attributes
  })

/** @internal */
export const handlerBacklog = (attributes?: Attributes): Metric.Gauge<number> =>
  Metric.gauge("effect_informers_handler_backlog", {
    description: "Notifications buffered for a handler",
    attributes
  })

/** The boundaries of `handlerDuration`: Effect 3's `MetricBoundaries.exponential` with the same arguments. */
const durationBoundaries = Metric.exponentialBoundaries({ start: 0.0001, factor: 4, count: 10 })

/** @internal */
export const handlerDuration = (attributes?: Attributes): Metric.Histogram<number> =>
  Metric.histogram("effect_informers_handler_duration_seconds", {
    description: "Mean time of a handler's callbacks, observed per batch",
    boundaries: durationBoundaries,
    attributes
  })

/** @internal */
export const handlerFailures = (attributes?: Attributes): Metric.Counter<number> =>
  Metric.counter("effect_informers_handler_failures_total", {
    description: "Handler callbacks that failed",
    incremental: true,
    attributes
  })

/** @internal */
export const handlerCoalesced = (attributes?: Attributes): Metric.Counter<number> =>
  Metric.counter("effect_informers_handler_coalesced_total", {
    description: "Notifications replaced by a newer state of the same key in a bounded handler buffer",
    incremental: true,
    attributes
  })

/**
 * The controller subsystem's metrics are defined here (`counter`, `gauge`, `histogram`) so that a series
 * with fixed attributes (a queue's `name`, a controller's `controller` and `result`) can be made once as a
 * metric of its own (`tagged`), for the hot paths: `Metric.withAttributes` maps the context on every update
 * (a context added per update, and the base metric's series key recomputed whenever two tag sets
 * alternate), while a metric made with its attributes computes its series key once. Both address the same
 * series: `Metric.withAttributes(base, attributes)` reads what `tagged(base, attributes)` writes.
 *
 * The hot paths update synchronously (`updateUnsafe`) in the context captured when the queue, the
 * controller or the recorder was made (its `Metric.MetricRegistry`).
 *
 * @internal
 */
import * as Metric from "effect/Metric"

type Make = (attributes: Metric.Metric.AttributeSet | undefined) => Metric.Metric<any, any>

const makers = new WeakMap<Metric.Metric<any, any>, Make>()

const define = <M extends Metric.Metric<any, any>>(
  make: (attributes: Metric.Metric.AttributeSet | undefined) => M
): M => {
  const base = make(undefined)
  makers.set(base, make)
  return base
}

/** An incremental counter. @internal */
export const counter = (name: string, description: string): Metric.Counter<number> =>
  define((attributes) => Metric.counter(name, { description, incremental: true, attributes }))

/** @internal */
export const gauge = (name: string, description: string): Metric.Gauge<number> =>
  define((attributes) => Metric.gauge(name, { description, attributes }))

/** @internal */
export const histogram = (
  name: string,
  description: string,
  boundaries: ReadonlyArray<number>
): Metric.Histogram<number> => define((attributes) => Metric.histogram(name, { description, boundaries, attributes }))

/**
 * `base` with `attributes` added, as a metric of its own (its series key computed once). A metric not
 * defined here gets `Metric.withAttributes`.
 *
 * @internal
 */
export const tagged = <M extends Metric.Metric<any, any>>(base: M, attributes: Metric.Metric.AttributeSet): M => {
  const make = makers.get(base)
  return (make === undefined
    ? Metric.withAttributes(base, attributes)
    : make({ ...base.attributes, ...attributes })) as M
}

/**
 * The library's metrics with fixed attributes, made once, for the hot paths of every subsystem (the
 * informers', the work queues', the controllers', the elections' and the shard groups'). Public as
 * `Metrics.withTags`.
 *
 * Each subsystem defines its metrics here (`counter`, `gauge`, `histogram`), so that a series with fixed
 * attributes (an informer's `informer` and `handler`, a queue's `name`, a controller's `controller` and
 * `result`) can be made once as a metric of its own (`tagged`). `Metric.withAttributes` maps the context on
 * every update (a context added per update, and the base metric's series key recomputed whenever two tag
 * sets alternate), while a metric made with its attributes computes its series key once, so an update from
 * the hot path is one registry lookup. Both address the same series: Effect 4 keys a series by its
 * metric's name, description, type and attributes, so `Metric.withAttributes(base, attributes)` reads what
 * `tagged(base, attributes)` writes.
 *
 * The hot paths update synchronously (`updateUnsafe`) in the context captured when the informer, the
 * handler, the queue, the controller or the recorder was made (its `Metric.MetricRegistry`).
 *
 * @internal
 */
import * as Metric from "effect/Metric"

type Make = (attributes: Metric.Metric.AttributeSet | undefined) => Metric.Metric<any, any>

/** How to make each metric defined here again, with attributes. */
const makers = new WeakMap<Metric.Metric<any, any>, Make>()

const define = <M extends Metric.Metric<any, any>>(
  make: (attributes: Metric.Metric.AttributeSet | undefined) => M
): M => {
  const base = make(undefined)
  makers.set(base, make)
  return base
}

/**
 * An incremental counter (no attributes), which `tagged` makes again with attributes.
 *
 * @internal
 */
export const counter = (name: string, description: string): Metric.Counter<number> =>
  define((attributes) => Metric.counter(name, { description, incremental: true, attributes }))

/**
 * A gauge (no attributes), which `tagged` makes again with attributes.
 *
 * @internal
 */
export const gauge = (name: string, description: string): Metric.Gauge<number> =>
  define((attributes) => Metric.gauge(name, { description, attributes }))

/**
 * A histogram with `boundaries` (no attributes), which `tagged` makes again with attributes.
 *
 * @internal
 */
export const histogram = (
  name: string,
  description: string,
  boundaries: ReadonlyArray<number>
): Metric.Histogram<number> => define((attributes) => Metric.histogram(name, { description, boundaries, attributes }))

/**
 * `base` with `attributes` added, as a metric of its own (its series key computed once): make it once per
 * informer, handler, queue or controller, not per update. A metric not defined here gets
 * `Metric.withAttributes`.
 *
 * @internal
 */
export const tagged = <M extends Metric.Metric<any, any>>(base: M, attributes: Metric.Metric.AttributeSet): M => {
  const make = makers.get(base)
  return (make === undefined
    ? Metric.withAttributes(base, attributes)
    : make({ ...base.attributes, ...attributes })) as M
}

/**
 * `metric` with fixed tags (Effect 4's attributes): `Metric.withAttributes(metric, { k1: v1, ... })` (a later
 * tag of the same key wins; the tags win over the fiber's metric attributes). The library's own hot paths
 * use `tagged`, which makes the series once.
 *
 * @since 0.1.0
 * @category constructors
 */
export const withTags = <Input, State>(
  metric: Metric.Metric<Input, State>,
  tags: ReadonlyArray<readonly [string, string]>
): Metric.Metric<Input, State> => {
  const attributes: Record<string, string> = {}
  for (const [key, value] of tags) attributes[key] = value
  return Metric.withAttributes(metric, attributes)
}

/**
 * `withTags`: a metric with fixed tags, made once, for the hot paths of every subsystem (the informers'
 * counters, the work queues', the controllers'). Public as `Metrics.withTags`.
 *
 * @internal
 */
import * as Metric from "effect/Metric"
import * as MetricLabel from "effect/MetricLabel"

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

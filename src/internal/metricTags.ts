/**
 * `withTags`: a metric with fixed tags, made once, for the hot paths of every subsystem (the informers'
 * counters, the work queues', the controllers'). Public as `Metrics.withTags`.
 *
 * @internal
 */
import * as Metric from "effect/Metric"

/**
 * `metric` with fixed tags (Effect 4's attributes), made once: the attribute set is built here, not per
 * update, and Effect 4's `withAttributes` merges it with the fiber's attributes once per attribute set, so
 * updates reuse its series key. Values are shared with `Metric.withAttributes(metric, { k1: v1, ... })`
 * (the tags in the same order; a later tag of the same key wins).
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

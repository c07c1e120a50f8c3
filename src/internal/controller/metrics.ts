/**
 * The metrics of the controller subsystem: the work queues' (client-go's names), the controllers'
 * (controller-runtime's, prefixed `effect_informers_`) and the event recorders'. `Metrics` re-exports
 * them; docs/METRICS.md lists them with their names as Prometheus shows them.
 *
 * Only their definitions live here (this module imports nothing of the library but the shared
 * `../metricTags.ts`, so that `Metrics` can re-export it): the queue, the controller and the recorder tag
 * them with their names once (`metricTags.tagged`) and update them.
 *
 * @since 0.2.0
 */
import * as Metric from "effect/Metric"
import * as Tags from "../metricTags.js"

// -------------------------------------------------------------------------------------------------
// work queues (client-go's names)
// -------------------------------------------------------------------------------------------------

/** component-base's buckets: 1e-8 s times 10, ten buckets. */
const workQueueBoundaries = Metric.exponentialBoundaries({ start: 1e-8, factor: 10, count: 10 })

/**
 * `workqueue_depth`: dirty keys, i.e. ready ones and ones added again while processing (not the delayed).
 * Tagged `name` (only a queue with a name records its metrics; a controller's queue is named after it).
 *
 * @since 0.2.0
 * @category metrics
 */
export const workQueueDepth: Metric.Gauge<number> = Tags.gauge(
  "workqueue_depth",
  "Current depth of the work queue: keys waiting to be handed out"
)

/**
 * `workqueue_adds_total`: adds that made a key dirty (collapsed adds do not count; a delayed key counts
 * when it becomes ready). Tagged `name`.
 *
 * @since 0.2.0
 * @category metrics
 */
export const workQueueAdds: Metric.Counter<number> = Tags.counter(
  "workqueue_adds_total",
  "Adds that made a key dirty (adds that collapse into a waiting one do not count)"
)

/**
 * `workqueue_queue_duration_seconds`: from a key becoming dirty to its hand-out. Tagged `name`.
 *
 * @since 0.2.0
 * @category metrics
 */
export const workQueueWaitDuration: Metric.Histogram<number> = Tags.histogram(
  "workqueue_queue_duration_seconds",
  "How long in seconds a key waits in the work queue before it is handed out",
  workQueueBoundaries
)

/**
 * `workqueue_work_duration_seconds`: from hand-out to `done`. Tagged `name`.
 *
 * @since 0.2.0
 * @category metrics
 */
export const workQueueWorkDuration: Metric.Histogram<number> = Tags.histogram(
  "workqueue_work_duration_seconds",
  "How long in seconds processing a key takes (get to done)",
  workQueueBoundaries
)

/**
 * `workqueue_unfinished_work_seconds`: the summed age of the keys processing, set every 500 ms until
 * shutdown ("large values indicate stuck threads"). Tagged `name`.
 *
 * @since 0.2.0
 * @category metrics
 */
export const workQueueUnfinishedWork: Metric.Gauge<number> = Tags.gauge(
  "workqueue_unfinished_work_seconds",
  "Seconds of work in progress not yet observed by work_duration; large values indicate stuck workers"
)

/**
 * `workqueue_longest_running_processor_seconds`: the age of the oldest key processing, set every 500 ms
 * until shutdown. Tagged `name`.
 *
 * @since 0.2.0
 * @category metrics
 */
export const workQueueLongestRunning: Metric.Gauge<number> = Tags.gauge(
  "workqueue_longest_running_processor_seconds",
  "Seconds the longest-running key has been processing"
)

/**
 * `workqueue_retries_total`: adds with a positive delay (`addAfter`, `addRateLimited`, `after`). Tagged
 * `name`.
 *
 * @since 0.2.0
 * @category metrics
 */
export const workQueueRetries: Metric.Counter<number> = Tags.counter(
  "workqueue_retries_total",
  "Adds with a positive delay (addAfter, addRateLimited)"
)

// -------------------------------------------------------------------------------------------------
// controllers (controller-runtime's, prefixed)
// -------------------------------------------------------------------------------------------------

/** 5 ms doubling, 16 buckets (to 81.92 s, then `+Inf`). */
const reconcileBoundaries = Metric.exponentialBoundaries({ start: 0.005, factor: 2, count: 16 })

/**
 * `controller_runtime_reconcile_total`: reconciles by `controller` and `result` (`success`, `error`, `requeue`,
 * `requeue_after`). Every series of a controller (here and below) exists from its start, at 0.
 *
 * @since 0.2.0
 * @category metrics
 */
export const reconciles: Metric.Counter<number> = Tags.counter(
  "controller_runtime_reconcile_total",
  "Reconciles by controller and result"
)

/**
 * `controller_runtime_reconcile_errors_total`: failed reconciles (typed errors and defects), by `controller`.
 *
 * @since 0.2.0
 * @category metrics
 */
export const reconcileErrors: Metric.Counter<number> = Tags.counter(
  "controller_runtime_reconcile_errors_total",
  "Failed reconciles"
)

/**
 * `controller_runtime_reconcile_panics_total`: reconciles that died of a defect (a throw, `Effect.die`), by
 * `controller`: controller-runtime's `reconcile_panics_total`. Counted in `reconcileErrors` too; the key is
 * requeued.
 *
 * @since 0.2.0
 * @category metrics
 */
export const reconcilePanics: Metric.Counter<number> = Tags.counter(
  "controller_runtime_reconcile_panics_total",
  "Reconciles that died of a defect (controller-runtime's panics)"
)

/**
 * `controller_runtime_terminal_reconcile_errors_total`: failed reconciles the `errorPolicy` answered `done` for
 * (not requeued), by `controller`: controller-runtime's `terminal_reconcile_errors_total`. Counted in
 * `reconcileErrors` too.
 *
 * @since 0.2.0
 * @category metrics
 */
export const terminalReconcileErrors: Metric.Counter<number> = Tags.counter(
  "controller_runtime_terminal_reconcile_errors_total",
  "Failed reconciles the error policy did not requeue"
)

/**
 * `controller_runtime_reconcile_time_seconds`: the duration of reconciles, in seconds, by `controller`.
 *
 * @since 0.2.0
 * @category metrics
 */
export const reconcileDuration: Metric.Histogram<number> = Tags.histogram(
  "controller_runtime_reconcile_time_seconds",
  "The duration of reconciles in seconds",
  reconcileBoundaries
)

/**
 * `controller_runtime_active_workers`: reconciles in progress, by `controller`.
 *
 * @since 0.2.0
 * @category metrics
 */
export const activeReconciles: Metric.Gauge<number> = Tags.gauge(
  "controller_runtime_active_workers",
  "Reconciles in progress"
)

/**
 * `controller_runtime_max_concurrent_reconciles`: the controller's number of workers (`concurrency`), by
 * `controller`: controller-runtime's `max_concurrent_reconciles`.
 *
 * @since 0.2.0
 * @category metrics
 */
export const maxConcurrentReconciles: Metric.Gauge<number> = Tags.gauge(
  "controller_runtime_max_concurrent_reconciles",
  "The controller's number of workers"
)

/**
 * `effect_informers_reconcile_stale_skips_total`: keys requeued because a cache had not caught up with the
 * key's own last write (read-your-own-writes), by `controller`.
 *
 * @since 0.2.0
 * @category metrics
 */
export const staleSkips: Metric.Counter<number> = Tags.counter(
  "effect_informers_reconcile_stale_skips_total",
  "Reconciles postponed until a cache caught up with the key's own write"
)

/**
 * `effect_informers_reconcile_abandoned_total`: reconciles still running 1 s after their interruption at the
 * controller's shutdown or at the end of a leadership term (an uninterruptible region, a finalizer that
 * hangs), by `controller`. Each is logged with its key and left behind, so that the shutdown ends.
 *
 * @since 0.2.0
 * @category metrics
 */
export const abandonedReconciles: Metric.Counter<number> = Tags.counter(
  "effect_informers_reconcile_abandoned_total",
  "Reconciles still running after their interruption at shutdown or step-down, left behind"
)

/**
 * `controller_runtime_reconcile_timeouts_total`: reconciles interrupted because they ran longer than the
 * controller's `reconcileTimeout`, by `controller`: controller-runtime's `reconcile_timeouts_total`. Counted
 * in `reconcileErrors` and `reconciles{result="error"}` too (as controller-runtime counts the
 * `DeadlineExceeded` its guard causes); the key is requeued through the rate limiter.
 *
 * @since 0.2.0
 * @category metrics
 */
export const reconcileTimeouts: Metric.Counter<number> = Tags.counter(
  "controller_runtime_reconcile_timeouts_total",
  "Reconciles interrupted because they ran longer than the controller's reconcile timeout"
)

// -------------------------------------------------------------------------------------------------
// event recorders
// -------------------------------------------------------------------------------------------------

/**
 * `effect_informers_events_dropped_total`: Kubernetes Events an `EventRecorder` did not write, by `reason`:
 * `full` (its buffer was full), `spam` (the spam filter refused it), `failed` (the write failed).
 *
 * @since 0.2.0
 * @category metrics
 */
export const droppedEvents: Metric.Counter<number> = Tags.counter(
  "effect_informers_events_dropped_total",
  "Events not written: the buffer was full, the spam filter refused them, or the write failed"
)

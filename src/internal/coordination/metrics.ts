/**
 * The metrics of the coordination subsystem: leader election (client-go's names where client-go has the
 * metric) and sharding. `Metrics` re-exports them; docs/METRICS.md lists them with their Prometheus names.
 * Defined with the shared helper (`../metricTags.ts`): an elector and a shard member make their series
 * once (`tagged`, with the election's `name` or the `group`).
 *
 * @since 0.2.0
 */
import type * as Metric from "effect/Metric"
import * as Tags from "../metricTags.js"

// -------------------------------------------------------------------------------------------------
// leader election (tag `name`: the election's name)
// -------------------------------------------------------------------------------------------------

/**
 * `leader_election_master_status` (client-go's name): 1 while this replica leads the election (tag `name`),
 * 0 otherwise; set to 0 when the elector starts.
 *
 * @since 0.2.0
 * @category metrics
 */
export const isLeader: Metric.Gauge<number> = Tags.gauge(
  "leader_election_master_status",
  "1 while this replica leads the election named by `name`, 0 otherwise"
)

/**
 * `effect_informers_leader_election_transitions_total`: times this replica became leader (tag `name`).
 *
 * @since 0.2.0
 * @category metrics
 */
export const leaderTransitions: Metric.Counter<number> = Tags.counter(
  "effect_informers_leader_election_transitions_total",
  "Times this replica became the leader of the election named by `name`"
)

/**
 * `effect_informers_leader_election_renew_failures_total`: failed renewal attempts of the leader (tag `name`).
 *
 * @since 0.2.0
 * @category metrics
 */
export const renewFailures: Metric.Counter<number> = Tags.counter(
  "effect_informers_leader_election_renew_failures_total",
  "Renewals of the leader that failed (each attempt)"
)

/**
 * `leader_election_slowpath_total` (client-go's name): renewals that read the Lease first (tag `name`).
 *
 * @since 0.2.0
 * @category metrics
 */
export const slowPaths: Metric.Counter<number> = Tags.counter(
  "leader_election_slowpath_total",
  "Renewals that had to read the Lease first (client-go's slowpath)"
)

/**
 * `effect_informers_leader_election_step_downs_total`: times this replica stopped leading (tags `name`,
 * `reason`: `RenewDeadline`, `LeaseLost`, `Failure`, `Shutdown`).
 *
 * @since 0.2.0
 * @category metrics
 */
export const stepDowns: Metric.Counter<number> = Tags.counter(
  "effect_informers_leader_election_step_downs_total",
  "Times this replica stopped leading, by reason"
)

// -------------------------------------------------------------------------------------------------
// sharding (tag `group`: the shard group)
// -------------------------------------------------------------------------------------------------

/**
 * `effect_informers_sharding_members`: live members in this member's view (tag `group`).
 *
 * @since 0.2.0
 * @category metrics
 */
export const shardMembers: Metric.Gauge<number> = Tags.gauge(
  "effect_informers_sharding_members",
  "Live members of the shard group in this member's view"
)

/**
 * `effect_informers_sharding_active`: 1 while this member takes keys (tags `group`, `identity`), 0
 * otherwise.
 *
 * @since 0.2.0
 * @category metrics
 */
export const shardActive: Metric.Gauge<number> = Tags.gauge(
  "effect_informers_sharding_active",
  "1 while this member takes keys (its status is Active), 0 otherwise"
)

/**
 * `effect_informers_sharding_assignment_changes_total`: changes of this member's assignment (tag `group`).
 *
 * @since 0.2.0
 * @category metrics
 */
export const shardAssignmentChanges: Metric.Counter<number> = Tags.counter(
  "effect_informers_sharding_assignment_changes_total",
  "Changes of this member's assignment"
)

/**
 * `effect_informers_sharding_interrupted_total`: work of `whileOwned` interrupted because its key left the
 * member (tag `group`).
 *
 * @since 0.2.0
 * @category metrics
 */
export const shardInterruptions: Metric.Counter<number> = Tags.counter(
  "effect_informers_sharding_interrupted_total",
  "Work of whileOwned interrupted because its key left this member"
)

/**
 * The metrics of the coordination subsystem: leader election (client-go's names where client-go has the
 * metric) and sharding. `Metrics` re-exports them; docs/METRICS.md lists them with their Prometheus names.
 *
 * @since 0.2.0
 */
import * as Metric from "effect/Metric"

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
export const isLeader: Metric.Gauge<number> = Metric.gauge("leader_election_master_status", {
  description: "1 while this replica leads the election named by `name`, 0 otherwise"
})

/**
 * `effect_informers_leader_election_transitions_total`: times this replica became leader (tag `name`).
 *
 * @since 0.2.0
 * @category metrics
 */
export const leaderTransitions: Metric.Counter<number> = Metric.counter(
  "effect_informers_leader_election_transitions_total",
  {
    description: "Times this replica became the leader of the election named by `name`",
    incremental: true
  }
)

/**
 * `effect_informers_leader_election_renew_failures_total`: failed renewal attempts of the leader (tag `name`).
 *
 * @since 0.2.0
 * @category metrics
 */
export const renewFailures: Metric.Counter<number> = Metric.counter(
  "effect_informers_leader_election_renew_failures_total",
  {
    description: "Renewals of the leader that failed (each attempt)",
    incremental: true
  }
)

/**
 * `leader_election_slowpath_total` (client-go's name): renewals that read the Lease first (tag `name`).
 *
 * @since 0.2.0
 * @category metrics
 */
export const slowPaths: Metric.Counter<number> = Metric.counter("leader_election_slowpath_total", {
  description: "Renewals that had to read the Lease first (client-go's slowpath)",
  incremental: true
})

/**
 * `effect_informers_leader_election_step_downs_total`: times this replica stopped leading (tags `name`,
 * `reason`: `RenewDeadline`, `LeaseLost`, `Failure`, `Shutdown`).
 *
 * @since 0.2.0
 * @category metrics
 */
export const stepDowns: Metric.Counter<number> = Metric.counter(
  "effect_informers_leader_election_step_downs_total",
  {
    description: "Times this replica stopped leading, by reason",
    incremental: true
  }
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
export const shardMembers: Metric.Gauge<number> = Metric.gauge("effect_informers_sharding_members", {
  description: "Live members of the shard group in this member's view"
})

/**
 * `effect_informers_sharding_active`: 1 while this member takes keys (tags `group`, `identity`), 0
 * otherwise.
 *
 * @since 0.2.0
 * @category metrics
 */
export const shardActive: Metric.Gauge<number> = Metric.gauge("effect_informers_sharding_active", {
  description: "1 while this member takes keys (its status is Active), 0 otherwise"
})

/**
 * `effect_informers_sharding_assignment_changes_total`: changes of this member's assignment (tag `group`).
 *
 * @since 0.2.0
 * @category metrics
 */
export const shardAssignmentChanges: Metric.Counter<number> = Metric.counter(
  "effect_informers_sharding_assignment_changes_total",
  {
    description: "Changes of this member's assignment",
    incremental: true
  }
)

/**
 * `effect_informers_sharding_interrupted_total`: work of `whileOwned` interrupted because its key left the
 * member (tag `group`).
 *
 * @since 0.2.0
 * @category metrics
 */
export const shardInterruptions: Metric.Counter<number> = Metric.counter(
  "effect_informers_sharding_interrupted_total",
  {
    description: "Work of whileOwned interrupted because its key left this member",
    incremental: true
  }
)

/**
 * The election's series exist from the elector's start, at 0 (client-go sets the status to 0 at
 * construction), under client-go's names where client-go has the metric.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Metric from "effect/Metric"
import * as LeaderElection from "../../../src/LeaderElection.js"
import { withRandomFixed } from "../../fixtures/random.js"
import { heldBy, settle, startElector } from "./fixtures.js"

/** The series the registry holds for election `name`, as `metric{other tags} value`. */
const series = (name: string) =>
  Effect.map(Metric.snapshot, (snapshots) =>
    snapshots
      .filter((snapshot) => snapshot.attributes?.name === name)
      .map((snapshot) => {
        const tags = Object.entries(snapshot.attributes ?? {}).filter(([key]) => key !== "name").map(([key, value]) =>
          `${key}=${value}`
        )
        const state = snapshot.state as { readonly count?: number; readonly value?: number }
        return `${snapshot.id}{${tags.join(",")}} ${state.count ?? state.value}`
      })
      .sort())

describe("LeaderElection: metrics", () => {
  it.effect("a follower shows every series at 0 before anything happened", () =>
    Effect.gen(function*() {
      const leases = yield* LeaderElection.makeMemoryLeases
      yield* leases.write("leader", heldBy("other", 3))
      yield* startElector(leases, "me", { name: "metrics-follower" })
      yield* settle
      assert.deepStrictEqual(yield* series("metrics-follower"), [
        "effect_informers_leader_election_renew_failures_total{} 0",
        "effect_informers_leader_election_step_downs_total{reason=Failure} 0",
        "effect_informers_leader_election_step_downs_total{reason=LeaseLost} 0",
        "effect_informers_leader_election_step_downs_total{reason=RenewDeadline} 0",
        "effect_informers_leader_election_step_downs_total{reason=Shutdown} 0",
        "effect_informers_leader_election_transitions_total{} 0",
        "leader_election_master_status{} 0",
        "leader_election_slowpath_total{} 0"
      ])
    }).pipe(withRandomFixed([0])))
})

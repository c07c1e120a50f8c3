/**
 * A SharedInformer's life as a table (`internal/informer/informerLifecycle.ts`): Created, Running, Stopped
 * (before or after a start; closed, or its resource gone), the three events `start`, `stop` and
 * `resourceGone`, and what `isStarted` / `isStopped` read of each state. The informer's own tests (test/informer/sharedInformer/) check the same through `make`.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Lifecycle from "../../src/internal/informer/informerLifecycle.js"

const created = Lifecycle.created
const running = Lifecycle.transition(created, "start")
const stoppedBeforeStart = Lifecycle.transition(created, "stop")
const stoppedAfterStart = Lifecycle.transition(running, "stop")
const goneAfterStart = Lifecycle.transition(running, "resourceGone")

const show = (state: Lifecycle.State): string =>
  state._tag === "Stopped"
    ? `Stopped(${state.started ? "started" : "not started"}${state.reason === "Closed" ? "" : `, ${state.reason}`})`
    : state._tag

/** (state, event) -> next state. */
const table: ReadonlyArray<readonly [Lifecycle.State, Lifecycle.Event, string]> = [
  [created, "start", "Running"],
  [created, "stop", "Stopped(not started)"],
  [running, "start", "Running"],
  [running, "stop", "Stopped(started)"],
  [stoppedBeforeStart, "start", "Stopped(not started)"],
  [stoppedBeforeStart, "stop", "Stopped(not started)"],
  [stoppedAfterStart, "start", "Stopped(started)"],
  [stoppedAfterStart, "stop", "Stopped(started)"],
  // the Reflector stopped because the resource is gone (a LIST answered 404): the first stop's reason stays
  [created, "resourceGone", "Stopped(not started, ResourceGone)"],
  [running, "resourceGone", "Stopped(started, ResourceGone)"],
  [goneAfterStart, "start", "Stopped(started, ResourceGone)"],
  [goneAfterStart, "stop", "Stopped(started, ResourceGone)"],
  [stoppedAfterStart, "resourceGone", "Stopped(started)"]
]

/** state -> [isStarted, isStopped], as client-go's HasStarted / IsStopped. */
const reads: ReadonlyArray<readonly [Lifecycle.State, boolean, boolean]> = [
  [created, false, false],
  [running, true, false],
  [stoppedBeforeStart, false, true],
  [stoppedAfterStart, true, true],
  [goneAfterStart, true, true]
]

describe("informer lifecycle", () => {
  it("transitions as a table: (state, event) -> state", () => {
    for (const [state, event, next] of table) {
      assert.strictEqual(show(Lifecycle.transition(state, event)), next, `${show(state)} on ${event}`)
    }
  })

  it("what isStarted and isStopped read of each state", () => {
    for (const [state, started, stopped] of reads) {
      assert.deepStrictEqual([Lifecycle.hasStarted(state), Lifecycle.isStopped(state)], [started, stopped], show(state))
    }
  })

  it("a second start and every event after the stop keep the state itself (nothing allocated)", () => {
    assert.strictEqual(Lifecycle.transition(running, "start"), running)
    assert.strictEqual(Lifecycle.transition(stoppedAfterStart, "start"), stoppedAfterStart)
    assert.strictEqual(Lifecycle.transition(stoppedBeforeStart, "stop"), stoppedBeforeStart)
  })
})

/**
 * The controller subsystem's lifecycles as tables of transitions: the work queue's (client-go's shutdown
 * and drain), the controller's and a term's (the workers of one start).
 */
import { assert, describe, it } from "@effect/vitest"
import type { ControllerState, TermEvent, TermState } from "../../src/internal/controller/workers.js"
import {
  controllerTransition,
  initialControllerState,
  initialTermState,
  termTransition
} from "../../src/internal/controller/workers.js"
import type { QueueEvent, QueueState } from "../../src/internal/controller/workQueue.js"
import { initialQueueState, queueTransition } from "../../src/internal/controller/workQueue.js"

const Running: QueueState = { _tag: "Running" }
const ShuttingDown: QueueState = { _tag: "ShuttingDown" }
const Draining: QueueState = { _tag: "Draining" }

const working = (inFlight: number): TermState => ({ _tag: "Working", inFlight })
const stopping = (inFlight: number): TermState => ({ _tag: "Stopping", inFlight })
const Stopped: TermState = { _tag: "Stopped" }

describe("WorkQueue lifecycle", () => {
  it("starts Running", () => {
    assert.deepStrictEqual(initialQueueState, Running)
  })

  const table: ReadonlyArray<readonly [QueueState, QueueEvent, QueueState]> = [
    [Running, "Shutdown", ShuttingDown],
    [Running, "ShutdownWithDrain", Draining],
    // client-go: ShutDown cancels a drain in progress, ShutDownWithDrain (re)enables it
    [Draining, "Shutdown", ShuttingDown],
    [Draining, "ShutdownWithDrain", Draining],
    [ShuttingDown, "ShutdownWithDrain", Draining],
    [ShuttingDown, "Shutdown", ShuttingDown]
  ]
  for (const [from, event, to] of table) {
    it(`${from._tag} --${event}--> ${to._tag}`, () => {
      assert.deepStrictEqual(queueTransition(from, event), to)
    })
  }
})

describe("Controller lifecycle", () => {
  const table: ReadonlyArray<readonly [ControllerState, "Stop", ControllerState]> = [
    [{ _tag: "Running" }, "Stop", { _tag: "Stopping" }],
    [{ _tag: "Stopping" }, "Stop", { _tag: "Stopping" }]
  ]
  it("starts Running", () => {
    assert.deepStrictEqual(initialControllerState, { _tag: "Running" })
  })
  for (const [from, event, to] of table) {
    it(`${from._tag} --${event}--> ${to._tag}`, () => {
      assert.deepStrictEqual(controllerTransition(from, event), to)
    })
  }
})

describe("a term of workers", () => {
  it("starts Working, nothing in flight", () => {
    assert.deepStrictEqual(initialTermState, working(0))
  })

  const table: ReadonlyArray<readonly [TermState, TermEvent, TermState]> = [
    [working(0), "Take", working(1)],
    [working(2), "Settle", working(1)],
    [working(1), "Settle", working(0)],
    // the end of a term: nothing in flight, stopped at once; else stopping until the last one settles
    [working(0), "Stop", Stopped],
    [working(2), "Stop", stopping(2)],
    [stopping(2), "Settle", stopping(1)],
    [stopping(1), "Settle", Stopped],
    // a stopping or stopped term takes no key, and stops once
    [stopping(1), "Take", stopping(1)],
    [stopping(1), "Stop", stopping(1)],
    [Stopped, "Take", Stopped],
    [Stopped, "Stop", Stopped],
    [Stopped, "Settle", Stopped]
  ]
  for (const [from, event, to] of table) {
    it(`${JSON.stringify(from)} --${event}--> ${JSON.stringify(to)}`, () => {
      assert.deepStrictEqual(termTransition(from, event), to)
    })
  }

  it("a run of events: two reconciles, a stop between their ends", () => {
    const events: ReadonlyArray<TermEvent> = ["Take", "Take", "Settle", "Stop", "Settle"]
    const states = events.reduce<Array<TermState>>(
      (acc, event) => [...acc, termTransition(acc[acc.length - 1], event)],
      [initialTermState]
    )
    assert.deepStrictEqual(states, [working(0), working(1), working(2), working(1), stopping(1), Stopped])
  })
})

/**
 * The fault injector of the demo, `serve --faults` and the campaign: an outage does not pile up on a client
 * that sends no request (one backing off): while an injected fault waits for a request, nothing is added.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Fiber } from "effect"
import { TestClock } from "effect/testing"
import * as ApiServer from "../src/ApiServer.js"
import * as Chaos from "../src/Chaos.js"

describe("Chaos.injectFaults", () => {
  for (const level of ["chaos", "mild"] as const) {
    it.effect(`${level}: at most one injected fault waits for a request; none once it stops`, () =>
      Effect.gen(function*() {
        const server = yield* ApiServer.make().pipe(Effect.orDie)
        const injector = yield* Effect.forkChild(Chaos.injectFaults(server, level))
        let most = 0
        // a minute with no request: a fault every 0.2-0.6 s (chaos) or 1-3 s (mild) would otherwise pile up
        for (let i = 0; i < 600; i++) {
          yield* TestClock.adjust("100 millis")
          most = Math.max(most, yield* server.faults.pending)
        }
        assert.isAbove(most, 0, "a fault was injected")
        // one injection's shots: a count of 2 at most (ServerError on lists, Delay)
        assert.isAtMost(most, 2)
        yield* Fiber.interrupt(injector)
        assert.strictEqual(yield* server.faults.pending, 0, "stopped: nothing left armed")
      }).pipe(Effect.scoped))
  }
})

/**
 * The demo (`effect-informers demo`, `npm start`) at each fault level ends with every cache equal to the
 * server's state.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as Demo from "../src/Demo.js"

/** The Reflectors log every injected fault as a warning: expected here. */
const quiet = Logger.withMinimumLogLevel(LogLevel.Error)

describe("Demo", () => {
  for (
    const [faults, duration] of [["none", "1 second"], ["mild", "3 seconds"], ["chaos", "4 seconds"]] as const
  ) {
    it.scopedLive(`Demo.run with faults "${faults}" ends consistent`, () =>
      Effect.gen(function*() {
        const summary = yield* Demo.run({
          pods: 200,
          namespaces: 4,
          deployments: 10,
          churn: 50,
          duration,
          faults,
          settleTimeout: "40 seconds"
        }).pipe(Effect.orDie)
        assert.isTrue(
          summary.consistent,
          `not consistent: ${JSON.stringify(summary.informers.filter((r) => !r.consistent))}`
        )
        assert.isAbove(summary.objects, 150)
        assert.isAbove(summary.events, 200) // at least the initial adds
        if (faults === "none") {
          // relists are this run's own, not those of earlier informers of the same name in the process
          assert.strictEqual(summary.faults, 0)
          assert.strictEqual(summary.relists, 0)
        }
      }).pipe(quiet), 60_000)
  }
})

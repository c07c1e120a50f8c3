/**
 * The demo (`effect-informers demo`, `npm start`) at each fault level ends with every cache equal to the
 * server's state.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as References from "effect/References"
import * as Demo from "../src/Demo.js"

/** The Reflectors log every injected fault as a warning: expected here. */
const quiet = Effect.provideService(References.MinimumLogLevel, "Error")

describe("Demo", () => {
  for (
    const [faults, duration] of [["none", "1 second"], ["mild", "3 seconds"], ["chaos", "4 seconds"]] as const
  ) {
    it.live(`Demo.run with faults "${faults}" ends consistent`, () =>
      Effect.gen(function*() {
        const progress: Array<Demo.Progress> = []
        const summary = yield* Demo.run({
          pods: 200,
          namespaces: 4,
          deployments: 10,
          churn: 50,
          duration,
          faults,
          settleTimeout: "40 seconds",
          onProgress: (p) => Effect.sync(() => progress.push(p))
        }).pipe(Effect.orDie)
        assert.isFalse(summary.interrupted)
        // the live line's figures: every informer's state from its Reflector, a rate while events flow
        const churning = progress.filter((p) => p.phase === "churning")
        assert.isAbove(churning.length, 2)
        for (const p of churning) {
          assert.deepStrictEqual(p.informers.map((i) => i.name), [
            "pods in all namespaces",
            "deployments.apps in all namespaces"
          ])
          for (const i of p.informers) {
            assert.oneOf(i.state, ["syncing", "watching", "backing off", "relisting"])
            assert.strictEqual(i.backoffLeft !== undefined, i.state === "backing off")
          }
        }
        assert.isTrue(churning.some((p) => p.informers.every((i) => i.state === "watching")))
        assert.isTrue(churning.slice(1).every((p) => p.eventsPerSecond > 0), "the rate read 0 during churn")
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

  it.live("Demo.run with stop: the churn ends early, the summary says interrupted", () =>
    Effect.gen(function*() {
      const started = Date.now()
      const summary = yield* Demo.run({
        pods: 200,
        namespaces: 4,
        deployments: 10,
        churn: 50,
        duration: "5 minutes",
        faults: "mild",
        stop: Effect.sleep("4 seconds")
      }).pipe(Effect.orDie)
      assert.isTrue(summary.interrupted)
      assert.isTrue(summary.consistent, JSON.stringify(summary.informers.filter((r) => !r.consistent)))
      assert.isBelow(summary.churnSeconds, 5)
      assert.isBelow(Date.now() - started, 30_000) // 4 s, then 10 s of settling at most
      assert.isAbove(summary.churn.updated, 0)
    }).pipe(quiet), 60_000)
})

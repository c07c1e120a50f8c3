// Runs examples/app.ts against the embedded API server, over HTTP as against a cluster.
import { ApiServer, ChurnSimulator } from "@effect-informers/testkit"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { Informers, Resource } from "effect-informers"
import { appLayer, program } from "./app.js"

describe("example: an Effect app over the Layers", () => {
  it.live("indexes pods by node and counts deployments", () =>
    Effect.gen(function*() {
      const server = yield* ApiServer.make()
      yield* ChurnSimulator.seed(server, { pods: 60, namespaces: 3, deployments: 6 })
      const expected: Record<string, number> = {}
      for (const pod of yield* server.objects.snapshot(Resource.pods)) {
        const node = pod.spec?.nodeName
        if (node !== undefined) expected[node] = (expected[node] ?? 0) + 1
      }
      const factory = Informers.fromKubeConfig(Informers.kubeConfigFromOptions({ server: server.url }))
      // the app's Layers live as long as this test's scope: its handlers keep reacting after the report
      const context = yield* Layer.build(appLayer(factory))
      const report = yield* program.pipe(Effect.provide(context))
      assert.deepStrictEqual(report.nodes, expected)
      assert.strictEqual(report.deployments, 6)
      assert.deepStrictEqual(report.events, [])

      const probe = ChurnSimulator.makePod({ name: "probe", namespace: "ns-0", app: "probe", now: 0 })
      // the ReplicaSet its owner reference names: without it, the garbage collector would delete the probe
      yield* server.bench.load(Resource.replicaSets, [
        ChurnSimulator.makeReplicaSet({ namespace: "ns-0", app: "probe" })
      ])
      yield* server.objects.create(Resource.pods, probe)
      yield* server.objects.delete(Resource.pods, { namespace: "ns-0", name: "probe" })
      const deadline = Date.now() + 10_000
      while (report.events.length < 2 && Date.now() < deadline) yield* Effect.sleep("20 millis")
      assert.deepStrictEqual(report.events, ["added probe", "deleted probe"])
    }), 30_000)
})

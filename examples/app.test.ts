// Runs examples/app.ts against the embedded API server, over HTTP as against a cluster.
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { Layer as Informers, Resource } from "effect-informers"
import { ApiServer, ChurnSimulator } from "effect-informers/testing"
import { appLayer, program } from "./app.js"

describe("example: an Effect app over the Layers", () => {
  it.scopedLive("indexes pods by node and counts deployments", () =>
    Effect.gen(function*() {
      const server = yield* ApiServer.make()
      yield* ChurnSimulator.seed(server, { pods: 60, namespaces: 3, deployments: 6 })
      const expected: Record<string, number> = {}
      for (const pod of yield* server.snapshot(Resource.pods)) {
        const node = pod.spec?.nodeName
        if (node !== undefined) expected[node] = (expected[node] ?? 0) + 1
      }
      const factory = Informers.fromKubeConfig(Informers.kubeConfigFromOptions({ server: server.url }))
      const report = yield* program.pipe(Effect.provide(appLayer(factory)))
      assert.deepStrictEqual(report.nodes, expected)
      assert.strictEqual(report.deployments, 6)
    }), 30_000)
})

/**
 * An Effect application built from effect-informers' Layers: it watches pods and deployments, indexes
 * pods by node, reacts to events, and reads through listers.
 *
 * Run it against the cluster of your kubeconfig:
 *
 *   npx tsx examples/app.ts
 *
 * or against the embedded API server: `npm run cli -- serve --pods 100` in another terminal, then
 * `npx tsx examples/app.ts --server http://127.0.0.1:PORT`.
 */
import { NodeRuntime } from "@effect/platform-node"
import { Console, Effect, Layer } from "effect"
import type { InformerFactory } from "effect-informers"
import { Informers } from "effect-informers"

/** An index of pods by the node they run on. */
export const byNode = "byNode"

/** What the app does: return a short report so that tests can check it. */
export const program = Effect.gen(function*() {
  const pods = yield* Informers.Pods
  const deployments = yield* Informers.Deployments

  yield* pods.informer.addIndexers({
    [byNode]: (pod) => (pod.spec?.nodeName === undefined ? [] : [pod.spec.nodeName])
  })
  const events: Array<string> = []
  yield* pods.informer.addEventHandler({
    name: "pod-events",
    onAdd: (pod, isInInitialList) =>
      isInInitialList ? Effect.void : Effect.sync(() => events.push(`added ${pod.metadata?.name}`)),
    onDelete: (pod) => Effect.sync(() => events.push(`deleted ${"key" in pod ? pod.key : pod.metadata?.name}`))
  })

  yield* Effect.all([pods.informer.synced, deployments.informer.synced], { concurrency: 2 })
  const nodes = yield* pods.informer.indexer.listIndexFuncValues(byNode)
  const perNode = yield* Effect.forEach(
    nodes,
    (node) => Effect.map(pods.informer.indexer.byIndex(byNode, node), (onNode) => [node, onNode.length] as const)
  )
  const allDeployments = yield* deployments.lister.list()
  yield* Console.log(
    `${(yield* pods.lister.list()).length} pods on ${nodes.length} nodes, ${allDeployments.length} deployments`
  )
  return { nodes: Object.fromEntries(perNode), deployments: allDeployments.length, events }
})

/** The app's Layers over any informer factory (a cluster, the embedded server, or fakes). */
export const appLayer = <E, R>(factory: Layer.Layer<InformerFactory.InformerFactory, E, R>) =>
  Layer.mergeAll(Informers.pods(), Informers.deployments()).pipe(Layer.provideMerge(factory))

if (import.meta.url === `file://${process.argv[1]}`) {
  const server = process.argv.indexOf("--server")
  const factory = server === -1
    ? Informers.live()
    : Informers.fromKubeConfig(Informers.kubeConfigFromOptions({ server: process.argv[server + 1] }))
  NodeRuntime.runMain(program.pipe(Effect.provide(appLayer(factory)), Effect.tap(Console.log)))
}

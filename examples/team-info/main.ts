/**
 * The team-info controller as a program: the cluster of the default kubeconfig (`KUBECONFIG`...), leader
 * election over the Lease `default/team-info` (run two or more; one reconciles), Ctrl-C or SIGTERM releases
 * the Lease. `npx tsx examples/team-info/main.ts [identity]`; `LEASE_DURATION` shortens the leases (tests).
 */
import { NodeRuntime } from "@effect/platform-node"
import { Effect, Layer } from "effect"
import { Client, Informers, LeaderElection } from "effect-informers"
import { hostname } from "node:os"
import * as TeamInfo from "./controller.js"

const identity = process.argv[2] ?? `${hostname()}-${process.pid}`
const seconds = Number(process.env["LEASE_DURATION"] ?? 15)
const election = LeaderElection.layerClient({
  identity,
  namespace: "default",
  leaseName: TeamInfo.name,
  leaseDuration: `${seconds} seconds`,
  renewDeadline: `${seconds * 2 / 3} seconds`,
  retryPeriod: `${seconds * 2 / 15} seconds`
})

const App = Layer.mergeAll(Informers.namespaces(), Informers.configMaps(), election).pipe(
  Layer.provideMerge(Layer.mergeAll(Informers.live(), Client.layerLive({ userAgent: TeamInfo.name })))
)

Effect.gen(function*() {
  yield* TeamInfo.make(yield* LeaderElection.LeaderElection)
  yield* Effect.log(`${identity}: running`)
  return yield* Effect.never
}).pipe(Effect.scoped, Effect.provide(App), NodeRuntime.runMain)

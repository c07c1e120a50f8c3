/**
 * End to end over real HTTP on loopback: informers from `Layer.fromKubeConfig` watch the embedded API
 * server while the churn simulator changes it and every fault class is injected; once churn stops, every
 * cache, and every handler's view rebuilt from its notifications, must equal the server's state. The
 * demo itself (`Demo.run`) at each fault level is tested with the CLI (packages/cli/test/Demo.test.ts).
 */
import * as ApiServer from "@effect-informers/testkit/ApiServer"
import * as Chaos from "@effect-informers/testkit/Chaos"
import * as ChurnSimulator from "@effect-informers/testkit/ChurnSimulator"
import { assert, describe, it } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as References from "effect/References"
import * as Schedule from "effect/Schedule"
import { deletionHandlingMetaNamespaceKey } from "../src/Indexer.js"
import * as InformerFactory from "../src/InformerFactory.js"
import type { DeletedObject, KubeObject } from "../src/KubeObject.js"
import { compareResourceVersions, resourceVersion, unwrapDeleted } from "../src/KubeObject.js"
import * as Informers from "../src/Layer.js"
import type { ReflectorError } from "../src/Reflector.js"
import * as Resource from "../src/Resource.js"
import type * as SharedInformer from "../src/SharedInformer.js"
import { eventually } from "./fixtures/index.js"

/** resourceVersions as the server issues them: integers (0 when either is not one). */
const order = (a: string, b: string): number => Option.getOrElse(compareResourceVersions(a, b), () => 0)

// -------------------------------------------------------------------------------------------------
// helpers
// -------------------------------------------------------------------------------------------------

/** The Reflectors log every injected fault as a warning: expected here. */
const quiet = <A, E, R>(self: Effect.Effect<A, E, R>) =>
  Effect.provideService(self, References.MinimumLogLevel, "Error")

/** Short waits so that a campaign of faults does not push the backoff to client-go's 30 s. */
const fastBackoff: Schedule.Schedule<unknown, ReflectorError> = Schedule.min([
  Schedule.exponential("50 millis", 2),
  Schedule.spaced("1 second")
]).pipe(Schedule.jittered)

const keyOf = (obj: DeletedObject<KubeObject>): string => {
  const key = deletionHandlingMetaNamespaceKey(obj)
  return key._tag === "Success" ? key.success : "<invalid>"
}

const rvOf = (obj: DeletedObject<KubeObject>): string => resourceVersion(unwrapDeleted(obj)) ?? ""

/**
 * A handler that replays its notifications onto a map (key -> resourceVersion) and records every
 * violation of the informer's contract: an add for a key it already has, an update or delete for a key
 * it does not have, an update whose old object is not the one it was last told about, a resourceVersion
 * going backwards for a key.
 */
interface Replay {
  readonly state: Map<string, string>
  readonly violations: Array<string>
  notifications: number
}

const replayHandler = (replay: Replay): SharedInformer.Handler<KubeObject> => {
  const latest = new Map<string, string>()
  const see = (what: string, key: string, rv: string) => {
    const previous = latest.get(key)
    if (previous !== undefined && order(rv, previous) < 0) {
      replay.violations.push(`${what} ${key}: resourceVersion went back from ${previous} to ${rv}`)
    }
    if (previous === undefined || order(rv, previous) > 0) latest.set(key, rv)
  }
  return {
    name: "replay",
    onAdd: (obj) =>
      Effect.sync(() => {
        replay.notifications++
        const key = keyOf(obj)
        if (replay.state.has(key)) replay.violations.push(`add ${key}: already present`)
        see("add", key, rvOf(obj))
        replay.state.set(key, rvOf(obj))
      }),
    onUpdate: (oldObj, newObj) =>
      Effect.sync(() => {
        replay.notifications++
        const key = keyOf(newObj)
        const known = replay.state.get(key)
        if (known === undefined) replay.violations.push(`update ${key}: not present`)
        else if (known !== rvOf(oldObj)) {
          replay.violations.push(`update ${key}: old object at ${rvOf(oldObj)}, last notified ${known}`)
        }
        see("update", key, rvOf(newObj))
        replay.state.set(key, rvOf(newObj))
      }),
    onDelete: (obj) =>
      Effect.sync(() => {
        replay.notifications++
        const key = keyOf(obj)
        if (!replay.state.has(key)) replay.violations.push(`delete ${key}: not present`)
        see("delete", key, rvOf(obj))
        replay.state.delete(key)
      })
  }
}

/** Differences between a replayed map and the server's objects (at most 5). */
const replayDifferences = (state: ReadonlyMap<string, string>, server: ReadonlyArray<KubeObject>) => {
  const differences: Array<string> = []
  const onServer = new Map(server.map((obj) => [keyOf(obj), resourceVersion(obj) ?? ""] as const))
  for (const [key, rv] of onServer) {
    const seen = state.get(key)
    if (seen === undefined) differences.push(`${key}: never notified`)
    else if (seen !== rv) differences.push(`${key}: notified at ${seen}, server at ${rv}`)
  }
  for (const key of state.keys()) if (!onServer.has(key)) differences.push(`${key}: deleted but not notified`)
  return differences.slice(0, 5)
}

/** For `eventually`: holds when `check` finds no differences; otherwise fails with them, for the failure. */
const noDifferences = (check: Effect.Effect<ReadonlyArray<string>>): Effect.Effect<true, string> =>
  Effect.flatMap(
    check,
    (differences) => differences.length === 0 ? Effect.succeed(true as const) : Effect.fail(differences.join("; "))
  )

// -------------------------------------------------------------------------------------------------
// tests
// -------------------------------------------------------------------------------------------------

describe("Integration - informers over HTTP against the embedded API server", () => {
  it.live(
    "under churn and every fault class, caches and handlers converge to the server's state",
    () =>
      Effect.gen(function*() {
        const server = yield* ApiServer.make({ bookmarkInterval: "1 second" }).pipe(Effect.orDie)
        yield* ChurnSimulator.seed(server, { pods: 300, namespaces: 6, deployments: 30 }).pipe(Effect.orDie)

        const stack = Informers.fromKubeConfig(Informers.kubeConfigFromOptions({ server: server.url }), {
          http: { watchInactivityTimeout: "3 seconds" },
          factory: { reflector: { backoff: fastBackoff } }
        })
        const factory = Context.get(yield* Layer.build(stack).pipe(Effect.orDie), InformerFactory.InformerFactory)
        const watched: Array<{
          readonly resource: Resource.Resource<KubeObject>
          readonly informer: SharedInformer.SharedInformer.Service<KubeObject>
          readonly replay: Replay
        }> = []
        for (const resource of [Resource.pods, Resource.deployments] as ReadonlyArray<Resource.Resource<KubeObject>>) {
          // pods through watch-list, deployments through paged LIST + WATCH (pages of 10)
          const informer = yield* factory.informerFor(
            resource,
            resource === Resource.deployments ? { reflector: { watchList: false, pageSize: 10 } } : {}
          ).pipe(Effect.orDie)
          const replay: Replay = { state: new Map(), violations: [], notifications: 0 }
          yield* informer.addEventHandler(replayHandler(replay)).pipe(Effect.orDie)
          watched.push({ resource, informer, replay })
        }
        yield* factory.start
        yield* factory.waitForCacheSync({ timeout: "20 seconds" }).pipe(Effect.orDie)
        assert.strictEqual(yield* watched[0].informer.indexer.size, 300)
        assert.strictEqual(yield* watched[1].informer.indexer.size, 30)

        // churn: pods through the simulator, deployments patched, created and deleted here
        const churn = yield* ChurnSimulator.make(server, { rate: 150 })
        const podChurn = yield* Effect.forkChild(churn.run)
        let deploymentSerial = 0
        const deploymentChurn = yield* Effect.gen(function*() {
          const n = deploymentSerial++
          yield* server.objects.patch(Resource.deployments, {
            namespace: `ns-${n % 6}`,
            name: `app-${(n * 6 + n % 6) % 30}`
          }, {
            metadata: { annotations: { "test/tick": String(n) } }
          }).pipe(Effect.ignore)
          if (n % 10 === 0) {
            const namespace = `ns-${n % 6}`
            yield* server.objects.create(
              Resource.deployments,
              ChurnSimulator.makeDeployment({ name: `extra-${n}`, namespace })
            ).pipe(Effect.ignore)
            if (n >= 20) {
              yield* server.objects.delete(Resource.deployments, {
                namespace: `ns-${(n - 20) % 6}`,
                name: `extra-${n - 20}`
              })
                .pipe(Effect.ignore)
            }
          }
        }).pipe(Effect.repeat(Schedule.spaced("50 millis")), Effect.forkChild)

        // faults: every class at least once, each awaited until it took effect
        const fired = (tag: ApiServer.FaultTag) => Effect.map(server.stats, (stats) => stats.faults[tag])
        const closeWatches = server.faults.inject({ _tag: "CloseWatches" })
        /** Injects, then pokes every 500 ms until `done`, for at most 15 s. */
        const provoke = (
          what: string,
          inject: Effect.Effect<void>,
          poke: Effect.Effect<void>,
          done: Effect.Effect<boolean>
        ) =>
          Effect.gen(function*() {
            yield* inject
            const deadline = Date.now() + 15_000
            let lastPoke = Date.now()
            while (!(yield* done)) {
              if (Date.now() > deadline) return yield* Effect.die(new Error(`fault ${what} never took effect`))
              if (Date.now() - lastPoke >= 500) {
                lastPoke = Date.now()
                yield* poke
              }
              yield* Effect.sleep("50 millis")
            }
            yield* Effect.sleep("150 millis") // let churn flow between faults
          })
        const once = (fault: ApiServer.Fault, poke: "inject" | "close") =>
          Effect.flatMap(fired(fault._tag), (before) =>
            provoke(
              ApiServer.formatFault(fault),
              server.faults.inject(fault),
              poke === "inject" ? server.faults.inject(fault) : closeWatches,
              Effect.map(fired(fault._tag), (now) => now > before)
            ))

        yield* once({ _tag: "DropWatches" }, "inject")
        yield* once({ _tag: "CloseWatches" }, "inject")
        yield* once({ _tag: "WatchGone", count: 1, mode: "event" }, "close")
        yield* once({ _tag: "WatchGone", count: 1, mode: "http" }, "close")
        yield* once({ _tag: "ServerError", count: 1, status: 500, on: "watch" }, "close")
        // A LIST happens when a watch-list fails with a 5xx (fallback) or on a plain relist. Arm one 503
        // for LIST, then 500s for watches until the LIST took its 503: once every armed fault fired,
        // the LIST one did too.
        {
          const before = yield* fired("ServerError")
          let watchFaults = 0
          const armWatches = Effect.suspend(() => {
            watchFaults += 3
            return Effect.andThen(server.faults.inject({ _tag: "ServerError", count: 3, on: "watch" }), closeWatches)
          })
          yield* provoke(
            "error:on=list",
            Effect.andThen(
              server.faults.inject({ _tag: "ServerError", count: 1, status: 503, on: "list" }),
              armWatches
            ),
            armWatches,
            Effect.map(fired("ServerError"), (now) => now === before + 1 + watchFaults)
          )
        }
        // A continue token is only sent by a paged LIST (the deployments informer's relist): provoke one
        // with a 410 on the next watches.
        {
          const before = yield* fired("ContinueGone")
          const relist = server.faults.inject({ _tag: "WatchGone", count: 2, mode: "http" }).pipe(
            Effect.andThen(closeWatches)
          )
          yield* provoke(
            "continue-gone",
            Effect.andThen(server.faults.inject({ _tag: "ContinueGone", count: 1 }), relist),
            relist,
            Effect.map(fired("ContinueGone"), (now) => now > before)
          )
        }
        yield* once({ _tag: "TooManyRequests", count: 1, retryAfterSeconds: 1 }, "close")
        yield* once({ _tag: "StallWatches" }, "inject")
        yield* once({ _tag: "Delay", millis: 300, count: 2 }, "close")
        yield* once({ _tag: "MalformedLine" }, "close")
        yield* once({ _tag: "PartialLine" }, "close")
        yield* once({ _tag: "MissingMetadata" }, "close")
        yield* once({ _tag: "Restart", rejectMillis: 300 }, "inject")
        yield* server.faults.compact
        yield* closeWatches
        // then a few seconds of random chaos, as the demo injects it
        yield* Chaos.injectFaults(server, "chaos").pipe(Effect.timeout("3 seconds"), Effect.ignore)

        const stats = yield* server.stats
        for (const tag of ApiServer.faultTags) assert.isAtLeast(stats.faults[tag], 1, tag)

        // churn stops: within a bounded time every cache and every handler's view equals the server
        yield* Fiber.interrupt(podChurn)
        yield* Fiber.interrupt(deploymentChurn)
        const counts = yield* churn.counts
        assert.isAbove(counts.created + counts.updated + counts.deleted, 100)
        yield* eventually(
          noDifferences(Effect.map(
            Effect.forEach(watched, (w) =>
              Effect.zipWith(
                w.informer.indexer.list,
                server.objects.snapshot(w.resource),
                (cached, objects) => Chaos.compare(w.informer.name, cached, objects)
              )),
            (results) => results.flatMap((r) => r.differences.map((d) => `${r.informer}: ${d}`))
          )),
          { what: "caches equal the server", timeout: "25 seconds", interval: "100 millis" }
        )
        yield* eventually(
          noDifferences(Effect.map(
            Effect.forEach(watched, (w) =>
              Effect.map(
                server.objects.snapshot(w.resource),
                (objects) => replayDifferences(w.replay.state, objects).map((d) => `${w.informer.name}: ${d}`)
              )),
            (differences) => differences.flat()
          )),
          { what: "handlers' views equal the server", timeout: "10 seconds", interval: "100 millis" }
        )
        for (const w of watched) {
          assert.deepStrictEqual(w.replay.violations.slice(0, 10), [], w.informer.name)
          assert.isAbove(w.replay.notifications, 30)
        }
      }).pipe(quiet),
    60_000
  )
})

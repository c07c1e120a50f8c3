/**
 * `@kubernetes/client-node`'s own informer (the peer of the benchmarks) against the embedded API server:
 * the server must speak the API well enough for it to list, watch, resume and stop. Driving it over
 * plain http needs `skipTLSVerify: true`; its `stop()` emits an `error` event (an AbortError) by design.
 */
import * as ApiServer from "@effect-informers/testkit/ApiServer"
import * as ChurnSimulator from "@effect-informers/testkit/ChurnSimulator"
import { assert, describe, it } from "@effect/vitest"
import * as k8s from "@kubernetes/client-node"
import * as Effect from "effect/Effect"
import * as Resource from "../../src/Resource.js"
import { eventually } from "../fixtures/index.js"

// -------------------------------------------------------------------------------------------------
// helpers
// -------------------------------------------------------------------------------------------------

interface Meta {
  readonly metadata?: {
    readonly namespace?: string | undefined
    readonly name?: string | undefined
    readonly resourceVersion?: string | undefined
  } | undefined
}

const keyOf = (obj: Meta) => `${obj.metadata?.namespace ?? ""}/${obj.metadata?.name ?? ""}`

/** `namespace/name@resourceVersion` of each object, sorted. */
const versions = (objects: ReadonlyArray<Meta>): Array<string> =>
  objects.map((obj) => `${keyOf(obj)}@${obj.metadata?.resourceVersion ?? ""}`).sort()

/** Waits until the server has `n` open watches. */
const watchesOpen = (server: ApiServer.ApiServer.Service, n: number) =>
  eventually(
    Effect.flatMap(server.stats, ({ watchesOpen }) =>
      watchesOpen === n ? Effect.succeed(true) : Effect.fail(`expected ${n} open watches, found ${watchesOpen}`)),
    { what: `${n} open watches`, timeout: "10 seconds", interval: "50 millis" }
  )

const isAbort = (error: unknown): boolean =>
  typeof error === "object" && error !== null && "name" in error && error.name === "AbortError"

// the test kit's realistic pod (containers, status, owner), as a cluster holds it: not the fixtures' bare one
const pod = (name: string) => ChurnSimulator.makePod({ name, namespace: "ns-1", app: "probe" })

// -------------------------------------------------------------------------------------------------
// tests
// -------------------------------------------------------------------------------------------------

describe("ClientNode - @kubernetes/client-node's informer against the embedded API server", () => {
  it.live(
    "syncs, follows add/update/delete across a closed watch, and stops cleanly",
    () =>
      Effect.gen(function*() {
        const server = yield* ApiServer.make().pipe(Effect.orDie)
        yield* ChurnSimulator.seed(server, { pods: 60, namespaces: 3 }).pipe(Effect.orDie)
        // the probes' ReplicaSet, which their owner references name (else the garbage collector takes them)
        yield* server.bench.load(Resource.replicaSets, [
          ChurnSimulator.makeReplicaSet({ namespace: "ns-1", app: "probe" })
        ])
          .pipe(Effect.orDie)

        const kc = new k8s.KubeConfig()
        kc.loadFromClusterAndUser({ name: "embedded", server: server.url, skipTLSVerify: true }, { name: "anon" })
        const core = kc.makeApiClient(k8s.CoreV1Api)
        const informer = k8s.makeInformer(kc, "/api/v1/pods", () => core.listPodForAllNamespaces())
        const events: Array<string> = []
        const errors: Array<unknown> = []
        informer.on("add", (obj) => events.push(`add ${keyOf(obj)}@${obj.metadata?.resourceVersion}`))
        informer.on("update", (obj) => events.push(`update ${keyOf(obj)}@${obj.metadata?.resourceVersion}`))
        informer.on("delete", (obj) => events.push(`delete ${keyOf(obj)}`))
        informer.on("error", (error) => errors.push(error))

        // start() resolves once the LIST is applied and the watch's response headers arrived
        let stopped = false
        const stop = Effect.promise(() => {
          stopped = true
          return informer.stop()
        })
        yield* Effect.acquireRelease(
          Effect.promise(() => informer.start()),
          () => stopped ? Effect.void : stop
        )
        const seeded = yield* server.objects.snapshot(Resource.pods)
        assert.strictEqual(seeded.length, 60)
        assert.deepStrictEqual(versions(informer.list()), versions(seeded))
        assert.strictEqual(events.filter((e) => e.startsWith("add ")).length, 60)
        assert.strictEqual(
          informer.get(seeded[0].metadata!.name!, seeded[0].metadata!.namespace)?.metadata?.uid,
          seeded[0].metadata?.uid
        )
        yield* watchesOpen(server, 1)

        // add, update, delete made on the server reach it
        events.length = 0
        const created = yield* server.objects.create(Resource.pods, pod("probe")).pipe(Effect.orDie)
        yield* eventually(() => events.includes(`add ns-1/probe@${created.metadata?.resourceVersion}`), {
          what: "ADDED",
          timeout: "10 seconds",
          interval: "50 millis"
        })
        const patched = yield* server.objects.patch(Resource.pods, { namespace: "ns-1", name: "probe" }, {
          metadata: { labels: { app: "probe", version: "2" } }
        }).pipe(Effect.orDie)
        yield* eventually(() => events.includes(`update ns-1/probe@${patched.metadata?.resourceVersion}`), {
          what: "MODIFIED",
          timeout: "10 seconds",
          interval: "50 millis"
        })
        assert.strictEqual(informer.get("probe", "ns-1")?.metadata?.labels?.version, "2")
        yield* server.objects.delete(Resource.pods, { namespace: "ns-1", name: "probe" }).pipe(Effect.orDie)
        yield* eventually(() => events.includes("delete ns-1/probe"), {
          what: "DELETED",
          timeout: "10 seconds",
          interval: "50 millis"
        })
        assert.isUndefined(informer.get("probe", "ns-1"))

        // a watch the server ends cleanly is resumed from the last resourceVersion, without a relist
        const listsBefore = (yield* server.stats).requestsByVerb.list ?? 0
        assert.strictEqual(listsBefore, 1)
        yield* server.faults.inject({ _tag: "CloseWatches" })
        const again = yield* server.objects.create(Resource.pods, pod("after-close")).pipe(Effect.orDie)
        yield* eventually(() => events.includes(`add ns-1/after-close@${again.metadata?.resourceVersion}`), {
          what: "ADDED after the close",
          timeout: "10 seconds",
          interval: "50 millis"
        })
        assert.strictEqual((yield* server.stats).requestsByVerb.list ?? 0, listsBefore)
        assert.deepStrictEqual(versions(informer.list()), versions(yield* server.objects.snapshot(Resource.pods)))
        assert.deepStrictEqual(errors, [])

        // stop(): the only error is the AbortError it emits itself; the watch closes, nothing follows
        yield* stop
        assert.isTrue(errors.every(isAbort), String(errors.find((e) => !isAbort(e))))
        yield* watchesOpen(server, 0)
        events.length = 0
        yield* server.objects.create(Resource.pods, pod("after-stop")).pipe(Effect.orDie)
        yield* Effect.sleep("300 millis")
        assert.deepStrictEqual(events, [])
      }),
    30_000
  )
})

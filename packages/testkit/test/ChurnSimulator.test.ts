import { assert, describe, it } from "@effect/vitest"
import * as Resource from "effect-informers/Resource"
import * as Effect from "effect/Effect"
import * as Random from "effect/Random"
import * as TestClock from "effect/testing/TestClock"
import * as ApiServer from "../src/ApiServer.js"
import * as ChurnSimulator from "../src/ChurnSimulator.js"

const start = ApiServer.make().pipe(Effect.orDie)

describe("ChurnSimulator generators", () => {
  it.effect("makes kubelet-shaped pods of about 3 KB once stored", () =>
    Effect.gen(function*() {
      const pod = ChurnSimulator.makePod({ name: ChurnSimulator.podName("web", 7), namespace: "shop" })
      const server = yield* ApiServer.make({ namespaces: ["shop"] }).pipe(Effect.orDie)
      const stored = yield* server.objects.create(Resource.pods, pod)
      const size = JSON.stringify(stored).length
      assert.isAtLeast(size, 2600)
      assert.isAtMost(size, 3500)
      const metadata = stored.metadata!
      assert.match(metadata.name!, /^web-[a-z0-9]{10}-[a-z0-9]{5}$/)
      assert.strictEqual(metadata.labels!.app, "web")
      assert.strictEqual(metadata.labels!["pod-template-hash"], ChurnSimulator.templateHash("web"))
      assert.strictEqual(metadata.ownerReferences![0].kind, "ReplicaSet")
      assert.isAbove(metadata.managedFields!.length, 0)
      const spec = stored.spec!
      assert.strictEqual(spec.containers[0].resources!.requests!.cpu, "100m")
      assert.isAbove(spec.volumes!.length, 0)
      assert.isAbove(spec.tolerations!.length, 0)
      const status = stored.status!
      assert.strictEqual(status.phase, "Running")
      assert.deepStrictEqual(status.conditions!.map((c) => c.type), [
        "Initialized",
        "Ready",
        "ContainersReady",
        "PodScheduled"
      ])
      assert.strictEqual(status.containerStatuses![0].ready, true)
    }))

  it("is deterministic", () => {
    const a = ChurnSimulator.makePod({ name: "web-abc-1", namespace: "shop", now: 1_700_000_000_000 })
    const b = ChurnSimulator.makePod({ name: "web-abc-1", namespace: "shop", now: 1_700_000_000_000 })
    assert.deepStrictEqual(a, b)
    assert.notDeepEqual(a, ChurnSimulator.makePod({ name: "web-abc-2", namespace: "shop", now: 1_700_000_000_000 }))
    const deployment = ChurnSimulator.makeDeployment({ name: "web", namespace: "shop", replicas: 5 })
    assert.strictEqual(deployment.spec!.replicas, 5)
    assert.deepStrictEqual(deployment.spec!.selector.matchLabels, { app: "web" })
    assert.strictEqual(deployment.status!.availableReplicas, 5)
  })
})

describe("ChurnSimulator seed and churn", () => {
  it.effect("seeds namespaces, deployments and pods spread over them", () =>
    Effect.gen(function*() {
      const server = yield* start
      const seeded = yield* ChurnSimulator.seed(server, { pods: 60, namespaces: 3, deployments: 6 })
      assert.deepStrictEqual(seeded.namespaces, ["ns-0", "ns-1", "ns-2"])
      const pods = yield* server.objects.snapshot(Resource.pods)
      assert.strictEqual(pods.length, 60)
      // the seeded namespaces, beside a fresh cluster's
      assert.deepStrictEqual(
        (yield* server.objects.snapshot(Resource.namespaces)).map((n) => n.metadata!.name!).sort(),
        [...ApiServer.initialNamespaces, "ns-0", "ns-1", "ns-2"].sort()
      )
      const deployments = yield* server.objects.snapshot(Resource.deployments)
      assert.strictEqual(deployments.length, 6)
      for (const namespace of seeded.namespaces) {
        assert.strictEqual((yield* server.objects.snapshot(Resource.pods, namespace)).length, 20)
      }
      // every pod belongs to a deployment of its namespace
      const apps = new Set(deployments.map((d) => `${d.metadata!.namespace}/${d.metadata!.name}`))
      for (const pod of pods) assert.isTrue(apps.has(`${pod.metadata!.namespace}/${pod.metadata!.labels!.app}`))
      // seeding again changes nothing
      const rv = yield* server.resourceVersion
      yield* ChurnSimulator.seed(server, { pods: 60, namespaces: 3, deployments: 6 })
      assert.strictEqual(yield* server.resourceVersion, rv)
    }))

  it.effect("makes the changes it counts, with one write each", () =>
    Effect.gen(function*() {
      const server = yield* start
      yield* ChurnSimulator.seed(server, { pods: 50, namespaces: 2 })
      const before = Number(yield* server.resourceVersion)
      const churn = yield* ChurnSimulator.make(server, { rate: 0, mix: { create: 2, update: 5, delete: 3 } })
      yield* churn.step(400)
      const counts = yield* churn.counts
      assert.strictEqual(counts.failed, 0)
      assert.strictEqual(counts.created + counts.updated + counts.deleted, 400)
      assert.isAbove(counts.created, 40)
      assert.isAbove(counts.updated, 100)
      assert.isAbove(counts.deleted, 60)
      assert.strictEqual(Number(yield* server.resourceVersion) - before, 400)
      const pods = yield* server.objects.snapshot(Resource.pods)
      assert.strictEqual(pods.length, 50 + counts.created - counts.deleted)
      assert.isTrue(pods.every((p) => ["ns-0", "ns-1"].includes(p.metadata!.namespace!)))
    }))

  it.effect("updates like a kubelet and a user: restarts, annotations and label flips", () =>
    Effect.gen(function*() {
      const server = yield* start
      yield* ChurnSimulator.seed(server, { pods: 30 })
      const churn = yield* ChurnSimulator.make(server, { rate: 0, mix: { update: 1 } })
      yield* churn.step(150)
      assert.deepStrictEqual(yield* churn.counts, { created: 0, updated: 150, deleted: 0, failed: 0 })
      const pods = yield* server.objects.snapshot(Resource.pods)
      assert.strictEqual(pods.length, 30)
      // label flips move pods in and out of selectors
      assert.isTrue(pods.some((p) => p.metadata!.labels!.track === "canary"))
      assert.isTrue(pods.some((p) => p.status!.containerStatuses![0].restartCount! > 0))
      assert.isTrue(pods.some((p) => p.metadata!.annotations!["churn.effect-informers.io/tick"] !== undefined))
    }))

  it.effect("is reproducible with a seeded Random", () =>
    Effect.gen(function*() {
      const runOnce = Effect.gen(function*() {
        const server = yield* start
        yield* ChurnSimulator.seed(server, { pods: 20, namespaces: 2 })
        const churn = yield* ChurnSimulator.make(server, { rate: 0 })
        yield* churn.step(200)
        const pods = yield* server.objects.snapshot(Resource.pods)
        return {
          counts: yield* churn.counts,
          pods: pods.map((p) =>
            [p.metadata!.name, p.metadata!.labels!.track, p.status!.containerStatuses![0].restartCount] as const
          )
        }
      }).pipe(Random.withSeed(42))
      const a = yield* runOnce
      const b = yield* runOnce
      assert.deepStrictEqual(a, b)
    }))

  it.effect("runs at the requested rate on the Clock", () =>
    Effect.gen(function*() {
      const server = yield* start
      yield* ChurnSimulator.seed(server, { pods: 20 })
      const churn = yield* ChurnSimulator.make(server, { rate: 200, namespaces: ["ns-0"] })
      yield* Effect.forkScoped(churn.run)
      yield* TestClock.adjust("1 second")
      const first = yield* churn.counts
      assert.strictEqual(first.created + first.updated + first.deleted + first.failed, 200)
      yield* TestClock.adjust("500 millis")
      const second = yield* churn.counts
      assert.strictEqual(second.created + second.updated + second.deleted + second.failed, 300)
      const other = yield* ChurnSimulator.make(server, { rate: 100, mix: { create: 1 } })
      yield* Effect.forkScoped(other.run)
      yield* TestClock.adjust("1 second")
      const third = yield* churn.counts
      assert.strictEqual(third.created + third.updated + third.deleted + third.failed, 500)
      const created = yield* other.counts
      assert.strictEqual(created.created + created.failed, 100)
    }))
})

describe("ChurnSimulator namespaces", () => {
  it.effect("make creates the namespaces it is told to churn in, as a real cluster needs them first", () =>
    Effect.gen(function*() {
      const server = yield* start
      const churn = yield* ChurnSimulator.make(server, {
        rate: 0,
        mix: { create: 1 },
        namespaces: ["fresh", "default"]
      })
      const fresh = yield* server.objects.get(Resource.namespaces, { name: "fresh" })
      assert.strictEqual(fresh.status!.phase, "Active")
      yield* churn.step(20)
      const counts = yield* churn.counts
      assert.deepStrictEqual([counts.created, counts.failed], [20, 0])
      assert.isAbove((yield* server.objects.snapshot(Resource.pods, "fresh")).length, 0)
    }))
})

describe("ChurnSimulator nodes", () => {
  it.effect("seed creates the nodes the pods run on, Ready, with the pods' hostIP as InternalIP; churn needs no more", () =>
    Effect.gen(function*() {
      const server = yield* start
      const seeded = yield* ChurnSimulator.seed(server, { pods: 80, namespaces: 2 })
      assert.deepStrictEqual(seeded.nodes, ChurnSimulator.nodeNames)
      const nodes = yield* server.objects.snapshot(Resource.nodes)
      const byName = new Map(nodes.map((n) => [n.metadata!.name!, n]))
      assert.strictEqual(nodes.length, 16)
      for (const pod of yield* server.objects.snapshot(Resource.pods)) {
        const node = byName.get(pod.spec!.nodeName!)
        assert.isDefined(node, pod.spec!.nodeName)
        assert.strictEqual(node!.status!.addresses!.find((a) => a.type === "InternalIP")!.address, pod.status!.hostIP)
      }
      for (const node of nodes) {
        const ready = node.status!.conditions!.find((c) => c.type === "Ready")!
        assert.strictEqual(ready.status, "True")
        assert.strictEqual(node.status!.nodeInfo!.kubeletVersion, "v1.32.0")
        assert.strictEqual(node.status!.allocatable!.pods, "110")
      }
      // churn creates pods on these nodes: no node is written
      const churn = yield* ChurnSimulator.make(server, { rate: 0, mix: { create: 1 } })
      const rv = Number(yield* server.resourceVersion)
      yield* churn.step(30)
      assert.strictEqual(Number(yield* server.resourceVersion) - rv, 30)
      assert.strictEqual((yield* server.objects.snapshot(Resource.nodes)).length, 16)
    }))

  it.effect("make creates the nodes on a server seeded without them", () =>
    Effect.gen(function*() {
      const server = yield* start
      yield* ChurnSimulator.make(server, { rate: 0 })
      assert.deepStrictEqual(
        (yield* server.objects.snapshot(Resource.nodes)).map((n) => n.metadata!.name!).sort(),
        [...ChurnSimulator.nodeNames].sort()
      )
      const cordoned = ChurnSimulator.makeNode({ name: "spare", ready: false, unschedulable: true })
      assert.strictEqual(cordoned.spec!.unschedulable, true)
      assert.strictEqual(cordoned.status!.conditions!.find((c) => c.type === "Ready")!.status, "Unknown")
    }))
})

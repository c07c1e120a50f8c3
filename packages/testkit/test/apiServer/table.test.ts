/**
 * ApiServer: `meta.k8s.io` Table responses (kubectl get): negotiation, the printers' cells, includeObject,
 * and Tables in a watch.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Resource from "effect-informers/Resource"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as ChurnSimulator from "../../src/ChurnSimulator.js"
import { wantsMetadata } from "../../src/internal/apiServerMetadata.js"
import type { TableRequest } from "../../src/internal/apiServerTable.js"
import {
  formatSelector,
  humanDuration,
  includeObject,
  tableJson,
  tableVersion,
  TableWatchEncoder
} from "../../src/internal/apiServerTable.js"
import type { JsonObject } from "../../src/internal/json.js"
import { pod as fixturePod } from "../fixtures.js"
import { assertStatus, call, start } from "./fixtures.js"

const kubectlAccept =
  "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json"

const now = Date.UTC(2024, 0, 1, 1, 0, 0)
const created = "2024-01-01T00:00:00Z"
const metadataOnly: TableRequest = { version: "v1", include: "Metadata" }

const table = (groupResource: string, objects: ReadonlyArray<JsonObject>, request = metadataOnly) =>
  JSON.parse(tableJson(groupResource, objects.map((obj) => ({ obj })), { resourceVersion: "7" }, request, now))

const cells = (groupResource: string, obj: JsonObject) => table(groupResource, [obj]).rows[0].cells

/** A pod with one container per entry of `containers` (its status), created an hour before `now`. */
const pod = (
  options: {
    readonly phase?: string
    readonly containers?: ReadonlyArray<JsonObject>
    readonly deleting?: boolean
    readonly reason?: string
    readonly conditions?: ReadonlyArray<JsonObject>
  }
): JsonObject => {
  const statuses = options.containers ?? []
  return fixturePod("web", {
    typed: true,
    namespace: "default",
    metadata: {
      creationTimestamp: created,
      ...(options.deleting === true ? { deletionTimestamp: "2024-01-01T00:59:00Z" } : {})
    },
    spec: { nodeName: "node-3", containers: statuses.map((_, i) => ({ name: `c${i}`, image: "nginx" })) },
    status: {
      phase: options.phase ?? "Running",
      ...(options.reason === undefined ? {} : { reason: options.reason }),
      conditions: options.conditions ?? [],
      podIPs: [{ ip: "10.244.3.7" }],
      containerStatuses: statuses.map((s, i) => ({ name: `c${i}`, restartCount: 0, ...s }))
    }
  }) as JsonObject
}

const running = { ready: true, state: { running: { startedAt: created } } }

describe("ApiServer Tables", () => {
  it("negotiates as kubectl asks: Table v1 first, v1beta1, else JSON", () => {
    assert.strictEqual(tableVersion(kubectlAccept), "v1")
    assert.strictEqual(tableVersion("application/json;as=Table;v=v1beta1;g=meta.k8s.io, application/json"), "v1beta1")
    assert.strictEqual(tableVersion("application/json"), undefined)
    assert.strictEqual(tableVersion("application/vnd.kubernetes.protobuf,application/json"), undefined)
    assert.strictEqual(tableVersion("application/json, application/json;as=Table;v=v1;g=meta.k8s.io"), undefined)
    assert.strictEqual(tableVersion("application/json;as=Table;v=v2;g=meta.k8s.io,application/json"), undefined)
    assert.strictEqual(tableVersion(undefined), undefined)
  })

  it("the first range the server can answer wins, between Table, metadata and the full object", () => {
    const table = "application/json;as=Table;v=v1;g=meta.k8s.io"
    const metaList = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1"
    const meta = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1"
    // Table first: a Table, never metadata
    assert.strictEqual(tableVersion(`${table},${metaList},application/json`), "v1")
    assert.isFalse(wantsMetadata(`${table},${metaList},application/json`, "list"))
    assert.isFalse(wantsMetadata(`${table},${meta},application/json`, "watch"))
    // metadata first: metadata, never a Table
    assert.isTrue(wantsMetadata(`${metaList},${table},application/json`, "list"))
    assert.strictEqual(tableVersion(`${metaList},${table},application/json`), undefined)
    assert.strictEqual(tableVersion(`${meta},${table},application/json`), undefined)
    // plain protobuf or JSON first: the full object
    assert.isFalse(wantsMetadata(`application/vnd.kubernetes.protobuf,${meta}`, "get"))
    assert.isFalse(wantsMetadata(`application/json,${meta}`, "get"))
    assert.strictEqual(tableVersion(`application/vnd.kubernetes.protobuf,${table}`), undefined)
  })

  it("validates includeObject", () => {
    assert.deepStrictEqual(includeObject(undefined), Result.succeed("Metadata"))
    assert.deepStrictEqual(includeObject("Object"), Result.succeed("Object"))
    const bad = includeObject("Everything")
    assert.isTrue(Result.isFailure(bad) && bad.failure.code === 400)
  })

  it("prints ages as kubectl does", () => {
    const s = 1000
    const cases: ReadonlyArray<readonly [number, string]> = [
      [-5 * s, "<invalid>"],
      [0, "0s"],
      [119 * s, "119s"],
      [200 * s, "3m20s"],
      [300 * s, "5m"],
      [15 * 60 * s, "15m"],
      [(5 * 3600 + 180) * s, "5h3m"],
      [20 * 3600 * s, "20h"],
      [(3 * 24 + 4) * 3600 * s, "3d4h"],
      [40 * 24 * 3600 * s, "40d"],
      [(2 * 365 + 30) * 24 * 3600 * s, "2y30d"],
      [9 * 365 * 24 * 3600 * s, "9y"]
    ]
    for (const [millis, text] of cases) assert.strictEqual(humanDuration(millis), text, String(millis))
  })

  it("pods: READY, STATUS, RESTARTS, AGE, IP, NODE for pods in known states", () => {
    // running and ready
    assert.deepStrictEqual(cells("pods", pod({ containers: [running, running] })), [
      "web",
      "2/2",
      "Running",
      "0",
      "60m",
      "10.244.3.7",
      "node-3",
      "<none>",
      "<none>"
    ])
    // pending: a container waiting for its image
    assert.deepStrictEqual(
      cells(
        "pods",
        pod({ phase: "Pending", containers: [{ ready: false, state: { waiting: { reason: "ContainerCreating" } } }] })
      )
        .slice(0, 4),
      ["web", "0/1", "ContainerCreating", "0"]
    )
    // pending, no container status yet
    assert.deepStrictEqual(
      cells("pods", { ...pod({ phase: "Pending" }), spec: { containers: [{ name: "c" }] } }).slice(1, 3),
      [
        "0/1",
        "Pending"
      ]
    )
    // terminating
    assert.strictEqual(cells("pods", pod({ containers: [running], deleting: true }))[2], "Terminating")
    // restarts: summed, with the age of the last one
    const restarted = pod({
      containers: [
        {
          ...running,
          restartCount: 2,
          lastState: { terminated: { exitCode: 137, reason: "OOMKilled", finishedAt: "2024-01-01T00:55:00Z" } }
        },
        { ...running, restartCount: 1 }
      ]
    })
    assert.deepStrictEqual(cells("pods", restarted).slice(1, 4), ["2/2", "Running", "3 (5m ago)"])
    // crash loop: the waiting reason
    assert.strictEqual(
      cells(
        "pods",
        pod({ containers: [{ ready: false, restartCount: 4, state: { waiting: { reason: "CrashLoopBackOff" } } }] })
      )[2],
      "CrashLoopBackOff"
    )
    // done: the terminated reason, and the row's Completed condition
    const done = table("pods", [
      pod({
        phase: "Succeeded",
        containers: [{ ready: false, state: { terminated: { exitCode: 0, reason: "Completed" } } }]
      })
    ])
    assert.deepStrictEqual(done.rows[0].cells.slice(1, 3), ["0/1", "Completed"])
    assert.deepStrictEqual(done.rows[0].conditions, [{
      type: "Completed",
      status: "True",
      reason: "Succeeded",
      message: "The pod has completed successfully."
    }])
    // evicted: the pod's reason
    assert.strictEqual(cells("pods", pod({ phase: "Failed", reason: "Evicted" }))[2], "Evicted")
    // an init container still running
    const initializing: JsonObject = {
      ...pod({ phase: "Pending", containers: [{ ready: false, state: { waiting: { reason: "PodInitializing" } } }] }),
      spec: { initContainers: [{ name: "init" }], containers: [{ name: "c0" }] }
    }
    ;(initializing.status as JsonObject).initContainerStatuses = [{
      name: "init",
      restartCount: 0,
      state: { running: {} }
    }]
    assert.strictEqual(cells("pods", initializing)[2], "Init:0/1")
  })

  it("pods: the column definitions, wide ones at priority 1, and the row object as PartialObjectMetadata", () => {
    const t = table("pods", [pod({ containers: [running] })])
    assert.strictEqual(t.kind, "Table")
    assert.strictEqual(t.apiVersion, "meta.k8s.io/v1")
    assert.deepStrictEqual(t.metadata, { resourceVersion: "7" })
    assert.deepStrictEqual(
      t.columnDefinitions.map((c: { name: string; priority: number }) => `${c.name}:${c.priority}`),
      [
        "Name:0",
        "Ready:0",
        "Status:0",
        "Restarts:0",
        "Age:0",
        "IP:1",
        "Node:1",
        "Nominated Node:1",
        "Readiness Gates:1"
      ]
    )
    assert.deepStrictEqual(t.rows[0].object, {
      kind: "PartialObjectMetadata",
      apiVersion: "meta.k8s.io/v1",
      metadata: { name: "web", namespace: "default", creationTimestamp: created }
    })
    const whole = table("pods", [pod({})], { version: "v1beta1", include: "Object" })
    assert.strictEqual(whole.apiVersion, "meta.k8s.io/v1beta1")
    assert.strictEqual(whole.rows[0].object.kind, "Pod")
    assert.strictEqual(whole.rows[0].object.spec.nodeName, "node-3")
    assert.notProperty(table("pods", [pod({})], { version: "v1", include: "None" }).rows[0], "object")
  })

  it("nodes, namespaces, deployments, config maps, secrets, service accounts; NAME and AGE elsewhere", () => {
    const node = ChurnSimulator.makeNode({ name: "node-4", now: Date.UTC(2024, 0, 1) }) as unknown as JsonObject // the server sets creationTimestamp
    ;(node.metadata as JsonObject).creationTimestamp = created
    assert.deepStrictEqual(cells("nodes", node), [
      "node-4",
      "Ready",
      "<none>",
      "60m",
      "v1.32.0",
      "10.0.0.14",
      "<none>",
      "Debian GNU/Linux 12 (bookworm)",
      "6.1.0-18-amd64",
      "containerd://1.7.13"
    ])
    const cordoned = ChurnSimulator.makeNode({ name: "cp", ready: false, unschedulable: true }) as unknown as JsonObject
    ;(cordoned.metadata as JsonObject).labels = { "node-role.kubernetes.io/control-plane": "" }
    assert.deepStrictEqual(cells("nodes", cordoned).slice(1, 3), ["NotReady,SchedulingDisabled", "control-plane"])

    const meta = { name: "x", creationTimestamp: created }
    assert.deepStrictEqual(cells("namespaces", { metadata: meta, status: { phase: "Active" } }), ["x", "Active", "60m"])
    assert.deepStrictEqual(
      cells("deployments.apps", {
        metadata: meta,
        spec: {
          replicas: 3,
          selector: {
            matchLabels: { app: "web" },
            matchExpressions: [{ key: "tier", operator: "NotIn", values: ["b", "a"] }]
          },
          template: { spec: { containers: [{ name: "web", image: "nginx" }, { name: "log", image: "busybox" }] } }
        },
        status: { readyReplicas: 2, updatedReplicas: 3, availableReplicas: 2 }
      }),
      ["x", "2/3", 3, 2, "60m", "web,log", "nginx,busybox", "app=web,tier notin (a,b)"]
    )
    assert.deepStrictEqual(
      cells("configmaps", { metadata: meta, data: { a: "1", b: "2" }, binaryData: { c: "AA==" } }),
      [
        "x",
        3,
        "60m"
      ]
    )
    assert.deepStrictEqual(cells("secrets", { metadata: meta, type: "Opaque", data: { a: "MQ==" } }), [
      "x",
      "Opaque",
      1,
      "60m"
    ])
    assert.deepStrictEqual(cells("serviceaccounts", { metadata: meta, secrets: [{ name: "t" }] }), ["x", 1, "60m"])
    assert.deepStrictEqual(
      cells("services", {
        metadata: meta,
        spec: {
          type: "NodePort",
          clusterIP: "10.96.0.7",
          selector: { tier: "web", app: "x" },
          ports: [{ port: 80, protocol: "TCP", nodePort: 30080 }, { port: 53, protocol: "UDP" }]
        }
      }),
      ["x", "NodePort", "10.96.0.7", "<none>", "80:30080/TCP,53/UDP", "60m", "app=x,tier=web"]
    )
    assert.strictEqual(cells("services", { metadata: meta, spec: { type: "LoadBalancer" } })[3], "<pending>")
    const other = table("endpoints", [{ metadata: meta }])
    assert.deepStrictEqual(other.columnDefinitions.map((c: { name: string }) => c.name), ["Name", "Age"])
    assert.deepStrictEqual(other.rows[0].cells, ["x", "60m"])
    assert.strictEqual(formatSelector(undefined), "<none>")
    assert.strictEqual(
      formatSelector({ matchExpressions: [{ key: "a", operator: "Exists" }, { key: "b", operator: "DoesNotExist" }] }),
      "a,!b"
    )
  })

  it("rewrites watch lines into Tables: column definitions on the first event only, ERROR as it is", () => {
    const encoder = new TableWatchEncoder("pods", metadataOnly)
    const line = (type: string, name: string) =>
      JSON.stringify({
        type,
        object: {
          ...pod({ containers: [running] }),
          metadata: { name, creationTimestamp: created, resourceVersion: "9" }
        }
      })
    const error = JSON.stringify({ type: "ERROR", object: { kind: "Status", code: 410 } })
    const text = `${line("ADDED", "a")}\n${line("MODIFIED", "b")}\n${error}\n${line("DELETED", "c")}`
    const split = Buffer.from(text + "\n")
    // the bytes arrive in two pieces, cut inside a line
    const first = Buffer.from(encoder.transform(split.subarray(0, 50), now)).toString()
    const second = Buffer.from(encoder.transform(split.subarray(50), now)).toString()
    assert.strictEqual(first, "")
    const events = second.trim().split("\n").map((l) => JSON.parse(l))
    assert.deepStrictEqual(events.map((e) => e.type), ["ADDED", "MODIFIED", "ERROR", "DELETED"])
    assert.strictEqual(events[0].object.kind, "Table")
    assert.strictEqual(events[0].object.columnDefinitions.length, 9)
    assert.deepStrictEqual(events[0].object.metadata, { resourceVersion: "9" })
    assert.isNull(events[1].object.columnDefinitions)
    assert.deepStrictEqual(events[1].object.rows[0].cells.slice(0, 3), ["b", "1/1", "Running"])
    assert.deepStrictEqual(events[2].object, { kind: "Status", code: 410 })
    assert.strictEqual(encoder.rest().length, 0)
  })

  it.live("GET, LIST and WATCH answer Tables when asked, JSON otherwise; a bad includeObject is a 400", () =>
    Effect.gen(function*() {
      const server = yield* start()
      // the pods' owner, so that the garbage collector keeps them
      yield* server.bench.load(Resource.replicaSets, [
        ChurnSimulator.makeReplicaSet({ namespace: "default", app: "web" })
      ])
      for (let i = 0; i < 3; i++) {
        yield* server.objects.create(
          Resource.pods,
          ChurnSimulator.makePod({ name: `web-${i}`, namespace: "default", app: "web" })
        )
      }
      const base = `${server.url}/api/v1/namespaces/default/pods`
      const headers = { accept: kubectlAccept }
      const listed = yield* call(`${base}?limit=2`, { headers })
      assert.strictEqual(listed.status, 200, listed.text)
      assert.strictEqual(listed.json.kind, "Table")
      assert.deepStrictEqual(listed.json.rows.map((r: { cells: Array<unknown> }) => r.cells[0]), ["web-0", "web-1"])
      assert.isString(listed.json.metadata.continue)
      assert.strictEqual(listed.json.metadata.remainingItemCount, 1)
      const rest = yield* call(`${base}?limit=2&continue=${encodeURIComponent(listed.json.metadata.continue)}`, {
        headers
      })
      assert.deepStrictEqual(rest.json.rows.map((r: { cells: Array<unknown> }) => r.cells[0]), ["web-2"])

      const one = yield* call(`${base}/web-1?includeObject=Object`, { headers })
      assert.strictEqual(one.json.kind, "Table")
      assert.strictEqual(one.json.rows.length, 1)
      assert.strictEqual(one.json.rows[0].object.kind, "Pod")
      assert.strictEqual(one.json.metadata.resourceVersion, one.json.rows[0].object.metadata.resourceVersion)

      assert.strictEqual((yield* call(`${base}/web-1`)).json.kind, "Pod")
      assert.strictEqual((yield* call(base, { headers: { accept: "application/json" } })).json.kind, "PodList")
      assertStatus(yield* call(`${base}?includeObject=All`, { headers }), 400, "BadRequest")

      const watched = yield* call(`${base}?watch=true&timeoutSeconds=1`, { headers })
      const events = watched.text.trim().split("\n").map((l) => JSON.parse(l))
      assert.deepStrictEqual(events.map((e) => e.type), ["ADDED", "ADDED", "ADDED"])
      assert.isArray(events[0].object.columnDefinitions)
      assert.isNull(events[1].object.columnDefinitions)
      assert.deepStrictEqual(events.map((e) => e.object.rows[0].cells[0]), ["web-0", "web-1", "web-2"])
    }))
})

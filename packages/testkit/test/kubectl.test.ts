/**
 * Drives the real kubectl against the embedded API server (see kubectlFixtures.ts: kubectl is required).
 */
import { assert, describe, it } from "@effect/vitest"
import * as Resource from "effect-informers/Resource"
import * as Effect from "effect/Effect"
import * as Schedule from "effect/Schedule"
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import type * as ApiServer from "../src/ApiServer.js"
import * as ChurnSimulator from "../src/ChurnSimulator.js"
import { eventually } from "./fixtures.js"
import type { Cluster } from "./kubectlFixtures.js"
import { attempt, cluster, clusterWith, kubectl, manifest, printedRows, run, runFailing } from "./kubectlFixtures.js"

/** A ConfigMap's manifest, written to `name` in the cluster's directory: the metadata given, then `data` lines. */
const configMapManifest = (
  c: Cluster,
  name: string,
  metadata: {
    readonly name: string
    readonly namespace?: string
    readonly resourceVersion?: string
    readonly labels?: { readonly [key: string]: string }
  },
  data: ReadonlyArray<string>
): string =>
  manifest(c, name, [
    "apiVersion: v1",
    "kind: ConfigMap",
    "metadata:",
    `  name: ${metadata.name}`,
    ...(metadata.namespace === undefined ? [] : [`  namespace: ${metadata.namespace}`]),
    ...(metadata.resourceVersion === undefined ? [] : [`  resourceVersion: "${metadata.resourceVersion}"`]),
    ...(metadata.labels === undefined
      ? []
      : ["  labels:", ...Object.entries(metadata.labels).map(([key, value]) => `    ${key}: ${value}`)]),
    "data:",
    ...data.map((line) => `  ${line}`)
  ])

/** The managers of an object, as `kubectl get -o json --show-managed-fields` prints them. */
const managers = (c: Cluster, ...target: Array<string>) =>
  Effect.map(
    run(c, "get", ...target, "-o", "json", "--show-managed-fields"),
    (out) =>
      ((JSON.parse(out).metadata.managedFields ?? []) as Array<
        { manager: string; operation: string; fieldsV1: unknown }
      >)
        .map((e) => ({ manager: e.manager, operation: e.operation, fieldsV1: e.fieldsV1 }))
  )

const firstColumn = (output: string, column = 0): Array<string> =>
  output.trim().split("\n").slice(1).map((line) => line.trim().split(/\s+/)[column])

describe("kubectl against the embedded API server", () => {
  it("finds kubectl", () => {
    if (kubectl instanceof Error) throw kubectl
  })

  it.live("get pods -A --chunk-size=50 follows continue tokens and prints every pod", () =>
    Effect.gen(function*() {
      const c = yield* cluster
      yield* ChurnSimulator.seed(c.server, { pods: 120, namespaces: 3 })
      const before = (yield* c.server.stats).requestsByVerb.list ?? 0
      const out = yield* run(c, "get", "pods", "-A", "--chunk-size=50")
      const printed = firstColumn(out, 1).sort()
      const expected = (yield* c.server.objects.snapshot(Resource.pods)).map((p) => p.metadata!.name!).sort()
      assert.strictEqual(printed.length, 120)
      assert.deepStrictEqual(printed, expected)
      assert.deepStrictEqual([...new Set(firstColumn(out, 0))].sort(), ["ns-0", "ns-1", "ns-2"])
      const pages = ((yield* c.server.stats).requestsByVerb.list ?? 0) - before
      assert.isAtLeast(pages, 3)
    }))

  it.live("get pods -l selects by label", () =>
    Effect.gen(function*() {
      const c = yield* cluster
      yield* ChurnSimulator.seed(c.server, { pods: 30, namespaces: ["default"], apps: 3 })
      const out = yield* run(c, "get", "pods", "-l", "app=app-1")
      const expected = yield* c.server.objects.list(Resource.pods, { namespace: "default", labelSelector: "app=app-1" })
      assert.strictEqual(expected.items.length, 10)
      assert.deepStrictEqual(firstColumn(out).sort(), expected.items.map((p) => p.metadata!.name!).sort())
    }))

  it.live("get pod NAME -n NS -o json prints the stored object", () =>
    Effect.gen(function*() {
      const c = yield* cluster
      yield* ChurnSimulator.seed(c.server, { pods: 4, namespaces: 2 })
      const [pod] = yield* c.server.objects.snapshot(Resource.pods, "ns-1")
      const out = yield* run(c, "get", "pod", pod.metadata!.name!, "-n", "ns-1", "-o", "json")
      const printed = JSON.parse(out)
      const stored = JSON.parse(JSON.stringify(pod))
      // kubectl >= 1.21 hides managedFields by default
      delete printed.metadata.managedFields
      delete stored.metadata.managedFields
      assert.deepStrictEqual(printed, stored)
    }))

  it.live("create -f FILE creates the object (with kubectl's validation on) and delete removes it", () =>
    Effect.gen(function*() {
      const c = yield* cluster
      const file = manifest(c, "pod.yaml", [
        "apiVersion: v1",
        "kind: Pod",
        "metadata:",
        "  name: from-kubectl",
        "  labels:",
        "    app: demo",
        "spec:",
        "  containers:",
        "  - name: web",
        "    image: nginx:1.27"
      ])
      const created = yield* run(c, "create", "-f", file)
      assert.match(created, /pod\/from-kubectl created/)
      const stored = yield* c.server.objects.get(Resource.pods, { name: "from-kubectl", namespace: "default" })
      assert.strictEqual(stored.metadata!.labels!.app, "demo")
      assert.strictEqual(stored.spec!.containers[0].image, "nginx:1.27")
      const deleted = yield* run(c, "delete", "pod", "from-kubectl")
      assert.match(deleted, /pod "from-kubectl" deleted/)
      const error = yield* Effect.flip(
        c.server.objects.get(Resource.pods, { name: "from-kubectl", namespace: "default" })
      )
      assert.strictEqual(error.reason, "NotFound")
    }))

  it.live("a Lease kube-apiserver would reject: create and patch get its errors, nothing is stored", () =>
    Effect.gen(function*() {
      const c = yield* cluster
      const leaseManifest = (name: string, duration: string) =>
        manifest(c, `${name}.yaml`, [
          "apiVersion: coordination.k8s.io/v1",
          "kind: Lease",
          "metadata:",
          `  name: ${name}`,
          "spec:",
          "  holderIdentity: replica-a",
          `  leaseDurationSeconds: ${duration}`
        ])
      const negative = yield* runFailing(c, "create", "-f", leaseManifest("negative", "-1"))
      assert.include(
        negative,
        `The Lease "negative" is invalid: spec.leaseDurationSeconds: Invalid value: -1: must be greater than 0`
      )
      const text = yield* runFailing(c, "create", "-f", leaseManifest("text", `"15"`))
      assert.include(text, "LeaseSpec.spec.leaseDurationSeconds of type int32")
      assert.match(
        yield* run(c, "create", "-f", leaseManifest("good", "15")),
        /lease.coordination.k8s.io\/good created/
      )
      const holder = yield* runFailing(
        c,
        "patch",
        "lease",
        "good",
        "--type=merge",
        "-p",
        `{"spec":{"holderIdentity":5}}`
      )
      assert.include(holder, "LeaseSpec.spec.holderIdentity of type string")
      const zero = yield* runFailing(
        c,
        "patch",
        "lease",
        "good",
        "--type=merge",
        "-p",
        `{"spec":{"leaseDurationSeconds":0}}`
      )
      assert.include(zero, `spec.leaseDurationSeconds: Invalid value: 0: must be greater than 0`)
      const stored = yield* c.server.objects.snapshot(Resource.leases)
      assert.deepStrictEqual(
        stored.map((l) => [l.metadata?.name, l.spec?.holderIdentity, l.spec?.leaseDurationSeconds]),
        [
          ["good", "replica-a", 15]
        ]
      )
    }))

  it.live("apply --server-side creates, updates, reports conflicts, forces and removes (ConfigMap)", () =>
    Effect.gen(function*() {
      const c = yield* cluster
      const configMap = (data: ReadonlyArray<string>) =>
        configMapManifest(c, "cm.yaml", { name: "settings", labels: { app: "demo" } }, data)
      const ref = { name: "settings", namespace: "default" }
      const created = yield* run(c, "apply", "--server-side", "-f", configMap(["color: blue", "size: \"3\""]))
      assert.match(created, /configmap\/settings serverside-applied/)
      assert.deepStrictEqual((yield* c.server.objects.get(Resource.configMaps, ref)).data, { color: "blue", size: "3" })
      assert.deepStrictEqual(yield* managers(c, "configmap", "settings"), [{
        manager: "kubectl",
        operation: "Apply",
        fieldsV1: { "f:data": { "f:color": {}, "f:size": {} }, "f:metadata": { "f:labels": { "f:app": {} } } }
      }])

      // the file changes: the object follows
      yield* run(c, "apply", "--server-side", "-f", configMap(["color: green", "size: \"3\""]))
      assert.deepStrictEqual((yield* c.server.objects.get(Resource.configMaps, ref)).data, {
        color: "green",
        size: "3"
      })

      // another manager applying another value for a field kubectl owns: a conflict naming both
      const other = configMapManifest(c, "other.yaml", { name: "settings" }, ["color: red"])
      const conflict = yield* attempt(c, "apply", "--server-side", "--field-manager=ops", "-f", other)
      assert.notStrictEqual(conflict.code, 0)
      assert.include(conflict.stderr, "Apply failed with 1 conflict: conflict with \"kubectl\": .data.color")
      assert.include(conflict.stderr, "--force-conflicts")
      assert.deepStrictEqual((yield* c.server.objects.get(Resource.configMaps, ref)).data, {
        color: "green",
        size: "3"
      })
      const forced = yield* run(c, "apply", "--server-side", "--field-manager=ops", "--force-conflicts", "-f", other)
      assert.match(forced, /serverside-applied/)
      assert.deepStrictEqual((yield* c.server.objects.get(Resource.configMaps, ref)).data, { color: "red", size: "3" })
      const owners = yield* managers(c, "configmap", "settings")
      assert.deepStrictEqual(owners.map((e) => [e.manager, e.fieldsV1]), [
        ["kubectl", { "f:data": { "f:size": {} }, "f:metadata": { "f:labels": { "f:app": {} } } }],
        ["ops", { "f:data": { "f:color": {} } }]
      ])

      // a field removed from the file is removed from the object (nobody else owns it)
      yield* run(c, "apply", "--server-side", "-f", configMap(["color: red"]))
      const after = yield* c.server.objects.get(Resource.configMaps, ref)
      assert.deepStrictEqual(after.data, { color: "red" })
      // a label kubectl stops applying goes too; and `get` prints the object as stored
      yield* run(
        c,
        "apply",
        "--server-side",
        "-f",
        configMapManifest(c, "cm.yaml", { name: "settings" }, ["color: red"])
      )
      assert.isUndefined((yield* c.server.objects.get(Resource.configMaps, ref)).metadata!.labels)
    }))

  it.live("apply --server-side merges a Deployment's containers by name and removes what it stops applying", () =>
    Effect.gen(function*() {
      const c = yield* cluster
      const deployment = (replicas: number, containers: ReadonlyArray<ReadonlyArray<string>>) =>
        manifest(c, "deployment.yaml", [
          "apiVersion: apps/v1",
          "kind: Deployment",
          "metadata:",
          "  name: web",
          "spec:",
          `  replicas: ${replicas}`,
          "  selector:",
          "    matchLabels: {app: web}",
          "  template:",
          "    metadata:",
          "      labels: {app: web}",
          "    spec:",
          "      containers:",
          ...containers.flatMap((lines) => lines.map((line, i) => `${i === 0 ? "      - " : "        "}${line}`))
        ])
      /** The tuner's configuration: only the web container, its lines as given. */
      const tuner = (file: string, container: ReadonlyArray<string>) =>
        manifest(c, file, [
          "apiVersion: apps/v1",
          "kind: Deployment",
          "metadata:",
          "  name: web",
          "spec:",
          "  template:",
          "    spec:",
          "      containers:",
          ...container
        ])
      const ref = { name: "web", namespace: "default" }
      const web = ["name: web", "image: nginx:1.27", "ports:", "- containerPort: 80"]
      const sidecar = ["name: sidecar", "image: busybox:1"]
      yield* run(c, "apply", "--server-side", "-f", deployment(2, [web, sidecar]))
      const created = yield* c.server.objects.get(Resource.deployments, ref)
      assert.strictEqual(created.metadata!.generation, 1)
      assert.deepStrictEqual(created.spec!.template.spec!.containers.map((x) => x.name), ["web", "sidecar"])

      // another manager sets the web container's environment: merged into that container, by name
      const env = tuner("env.yaml", ["      - name: web", "        env:", "        - {name: MODE, value: fast}"])
      yield* run(c, "apply", "--server-side", "--field-manager=tuner", "-f", env)
      const tuned = yield* c.server.objects.get(Resource.deployments, ref)
      assert.deepStrictEqual(tuned.spec!.template.spec!.containers[0], {
        name: "web",
        image: "nginx:1.27",
        ports: [{ containerPort: 80 }],
        env: [{ name: "MODE", value: "fast" }]
      })

      // kubectl drops the sidecar and scales: the sidecar goes, the tuner's env stays
      yield* run(c, "apply", "--server-side", "-f", deployment(3, [web]))
      const after = yield* c.server.objects.get(Resource.deployments, ref)
      assert.strictEqual(after.spec!.replicas, 3)
      assert.strictEqual(after.metadata!.generation, 3)
      assert.deepStrictEqual(after.spec!.template.spec!.containers, [{
        name: "web",
        image: "nginx:1.27",
        ports: [{ containerPort: 80 }],
        env: [{ name: "MODE", value: "fast" }]
      }])

      // the tuner changing the image kubectl applies conflicts, naming the container's field
      const image = yield* attempt(
        c,
        "apply",
        "--server-side",
        "--field-manager=tuner",
        "-f",
        tuner("image.yaml", ["      - {name: web, image: nginx:1.28}"])
      )
      assert.notStrictEqual(image.code, 0)
      assert.include(
        image.stderr,
        "conflict with \"kubectl\": .spec.template.spec.containers[name=\"web\"].image"
      )
    }))

  it.live("apply --server-side on a Pod: status ignored, removed env and labels removed, kubectl label owns its label", () =>
    Effect.gen(function*() {
      const c = yield* cluster
      // a manifest file for kubectl (YAML text), not an object
      const pod = (env: ReadonlyArray<string>, labels: string) =>
        manifest(c, "pod.yaml", [
          "apiVersion: v1",
          "kind: Pod",
          "metadata:",
          "  name: worker",
          `  labels: {${labels}}`,
          "spec:",
          "  containers:",
          "  - name: main",
          "    image: busybox",
          "    env:",
          ...env.map((line) => `    - ${line}`),
          "  tolerations:",
          "  - {key: dedicated, operator: Exists}",
          "status:",
          "  phase: Running"
        ])
      const ref = { name: "worker", namespace: "default" }
      yield* run(
        c,
        "apply",
        "--server-side",
        "-f",
        pod(["{name: A, value: \"1\"}", "{name: B, value: \"2\"}"], "app: w, tier: x")
      )
      const created = yield* c.server.objects.get(Resource.pods, ref)
      assert.isUndefined(created.status)
      assert.deepStrictEqual(created.spec!.containers[0].env, [{ name: "A", value: "1" }, { name: "B", value: "2" }])
      yield* run(c, "label", "pod", "worker", "owner=me")
      yield* run(c, "apply", "--server-side", "-f", pod(["{name: A, value: \"1\"}"], "app: w"))
      const after = yield* c.server.objects.get(Resource.pods, ref)
      assert.deepStrictEqual(after.spec!.containers[0].env, [{ name: "A", value: "1" }])
      assert.deepStrictEqual(after.metadata!.labels, { app: "w", owner: "me" })
      assert.deepStrictEqual(after.spec!.tolerations, [{ key: "dedicated", operator: "Exists" }])
      const owners = yield* managers(c, "pod", "worker")
      assert.deepStrictEqual(owners.map((e) => [e.manager, e.operation]), [["kubectl", "Apply"], [
        "kubectl-label",
        "Update"
      ]])
      assert.deepStrictEqual(owners[1].fieldsV1, { "f:metadata": { "f:labels": { "f:owner": {} } } })
    }))

  it.live("client-side apply (strategic merge patch, last-applied annotation) still works, then moves to server-side", () =>
    Effect.gen(function*() {
      const c = yield* cluster
      const configMap = (data: ReadonlyArray<string>) => configMapManifest(c, "csa.yaml", { name: "legacy" }, data)
      const ref = { name: "legacy", namespace: "default" }
      assert.match(yield* run(c, "apply", "-f", configMap(["a: \"1\"", "b: \"2\""])), /configmap\/legacy created/)
      assert.match(yield* run(c, "apply", "-f", configMap(["a: \"3\""])), /configmap\/legacy configured/)
      const configured = yield* c.server.objects.get(Resource.configMaps, ref)
      assert.deepStrictEqual(configured.data, { a: "3" })
      assert.isString(configured.metadata!.annotations!["kubectl.kubernetes.io/last-applied-configuration"])
      assert.deepStrictEqual((yield* managers(c, "configmap", "legacy")).map((e) => [e.manager, e.operation]), [
        ["kubectl-client-side-apply", "Update"]
      ])
      // server-side apply by kubectl takes over what client-side apply owned, without a conflict
      assert.match(yield* run(c, "apply", "--server-side", "-f", configMap(["a: \"4\""])), /serverside-applied/)
      assert.deepStrictEqual((yield* c.server.objects.get(Resource.configMaps, ref)).data, { a: "4" })
      const owners = yield* managers(c, "configmap", "legacy")
      assert.deepStrictEqual(owners.find((e) => e.manager === "kubectl")?.fieldsV1, { "f:data": { "f:a": {} } })
    }))

  it.live("get pods -w prints a new pod within a few seconds", () =>
    Effect.gen(function*() {
      const c = yield* cluster
      yield* ChurnSimulator.seed(c.server, { pods: 3, namespaces: ["default"] })
      let output = ""
      yield* Effect.acquireRelease(
        Effect.sync(() => {
          const child = spawn(kubectl as string, [...c.args, "get", "pods", "-w"], {
            env: { ...process.env, KUBECONFIG: "" },
            stdio: ["ignore", "pipe", "pipe"]
          })
          child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")))
          child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")))
          return child
        }),
        (child) => Effect.sync(() => child.kill())
      )
      const existing = (yield* c.server.objects.snapshot(Resource.pods, "default")).map((p) => p.metadata!.name!)
      yield* eventually(() => existing.every((name) => output.includes(name)), {
        what: "the initial list",
        timeout: 10_000,
        interval: 20
      })
      // the watch request follows the list: wait until the server has it open
      yield* c.server.stats.pipe(
        Effect.filterOrFail((stats) => stats.watchesOpen > 0),
        Effect.retry(Schedule.spaced("20 millis")),
        Effect.timeout("10 seconds"),
        Effect.orDie
      )
      yield* c.server.bench.load(Resource.replicaSets, [
        ChurnSimulator.makeReplicaSet({ namespace: "default", app: "watched" })
      ])
      yield* c.server.objects.create(
        Resource.pods,
        ChurnSimulator.makePod({ name: "watched-pod", namespace: "default", app: "watched" })
      )
      yield* eventually(() => output.includes("watched-pod"), {
        what: "the new pod in kubectl's output",
        timeout: 5_000,
        interval: 20
      })
      // the watch serves Tables (kubectl asks for them): the server's columns, computed for the new pod
      assert.match(output, /^NAME\s+READY\s+STATUS\s+RESTARTS\s+AGE$/m)
      // (the service API keeps the status it is given: makePod's Running, ready container)
      yield* eventually(() => /^watched-pod\s+1\/1\s+Running\s+0\s+\d+s$/m.test(output), {
        what: "the new pod's row",
        timeout: 5_000,
        interval: 20
      })
    }))
  it.live("replace -f with a stale resourceVersion gets the Conflict error", () =>
    Effect.gen(function*() {
      const c = yield* cluster
      const created = yield* c.server.objects.create(Resource.configMaps, {
        metadata: { name: "settings", namespace: "default" },
        data: { mode: "a" }
      })
      yield* c.server.objects.patch(Resource.configMaps, { name: "settings", namespace: "default" }, {
        data: { mode: "b" }
      })
      const file = configMapManifest(c, "settings.yaml", {
        name: "settings",
        namespace: "default",
        resourceVersion: created.metadata!.resourceVersion!
      }, ["mode: c"])
      const stderr = yield* runFailing(c, "replace", "-f", file)
      assert.match(stderr, /Error from server \(Conflict\)/)
      assert.include(
        stderr,
        `Operation cannot be fulfilled on configmaps "settings": the object has been modified; please apply your changes to the latest version and try again`
      )
      const stored = yield* c.server.objects.get(Resource.configMaps, { name: "settings", namespace: "default" })
      assert.strictEqual(stored.data!.mode, "b")
      // the current resourceVersion replaces it
      const current = configMapManifest(c, "current.yaml", {
        name: "settings",
        namespace: "default",
        resourceVersion: stored.metadata!.resourceVersion!
      }, ["mode: c"])
      assert.match(yield* run(c, "replace", "-f", current), /configmap\/settings replaced/)
    }))

  it.live("delete of an owner deletes its dependents (garbage collection)", () =>
    Effect.gen(function*() {
      const c = yield* clusterWith({ garbageCollection: { delay: "20 millis" } })
      const deployment = yield* c.server.objects.create(Resource.deployments, {
        metadata: { name: "web", namespace: "default" },
        spec: { selector: { matchLabels: { app: "web" } }, template: { metadata: { labels: { app: "web" } } } }
      } as Resource.Deployment)
      const owner = (o: { readonly metadata?: { readonly name?: string; readonly uid?: string } }, kind: string) => ({
        apiVersion: "apps/v1",
        kind,
        name: o.metadata!.name!,
        uid: o.metadata!.uid!,
        controller: true,
        blockOwnerDeletion: true
      })
      const rs = yield* c.server.objects.create(Resource.replicaSets, {
        metadata: { name: "web-1", namespace: "default", ownerReferences: [owner(deployment, "Deployment")] },
        spec: { selector: { matchLabels: { app: "web" } } }
      } as Resource.ReplicaSet)
      for (const name of ["web-1-a", "web-1-b"]) {
        yield* c.server.objects.create(Resource.pods, {
          metadata: { name, namespace: "default", ownerReferences: [owner(rs, "ReplicaSet")] },
          spec: { containers: [{ name: "c", image: "nginx" }] }
        } as Resource.Pod)
      }
      const deleted = yield* run(c, "delete", "deployment", "web")
      assert.match(deleted, /deployment.apps "web" deleted/)
      yield* eventually(
        Effect.map(
          Effect.zip(c.server.objects.snapshot(Resource.replicaSets), c.server.objects.snapshot(Resource.pods)),
          ([sets, pods]) => sets.length === 0 && pods.length === 0
        ),
        { what: "the ReplicaSet and the pods collected", timeout: 10_000, interval: 20 }
      )
      const pods = yield* run(c, "get", "pods", "-o", "name")
      assert.strictEqual(pods.trim(), "")
    }))

  it.live("an object with a finalizer stays after delete --wait=false until patch removes it", () =>
    Effect.gen(function*() {
      const c = yield* cluster
      yield* c.server.objects.create(Resource.configMaps, {
        metadata: { name: "held", namespace: "default", finalizers: ["example.com/hold"] },
        data: { a: "b" }
      })
      assert.match(yield* run(c, "delete", "configmap", "held", "--wait=false"), /configmap "held" deleted/)
      const deleting = JSON.parse(yield* run(c, "get", "configmap", "held", "-o", "json"))
      assert.isString(deleting.metadata.deletionTimestamp)
      assert.deepStrictEqual(deleting.metadata.finalizers, ["example.com/hold"])
      const patched = yield* run(
        c,
        "patch",
        "configmap",
        "held",
        "--type=merge",
        "-p",
        `{"metadata":{"finalizers":null}}`
      )
      assert.match(patched, /configmap\/held patched/)
      const error = yield* Effect.flip(
        c.server.objects.get(Resource.configMaps, { name: "held", namespace: "default" })
      )
      assert.strictEqual(error.reason, "NotFound")
      const stderr = yield* runFailing(c, "get", "configmap", "held")
      assert.match(stderr, /NotFound/)
    }))

  it.live("the audit log records kubectl's writes, with kubectl's user agent and the impersonated user", () =>
    Effect.gen(function*() {
      const records: Array<ApiServer.AuditEvent> = []
      const c = yield* clusterWith({ auditLog: (event) => records.push(event) })
      const file = configMapManifest(c, "cm.yaml", { name: "audited" }, ["a: b"])
      yield* run(c, "create", "-f", file)
      yield* run(c, "label", "configmap", "audited", "tier=web", "--as", "jane")
      yield* run(c, "get", "configmap", "audited")
      yield* run(c, "delete", "configmap", "audited")
      assert.deepStrictEqual(
        records.map((r) => `${r.verb} ${r.resource} ${r.namespace}/${r.name} ${r.code}`),
        [
          "create configmaps default/audited 201",
          "patch configmaps default/audited 200",
          "delete configmaps default/audited 200"
        ]
      )
      assert.isTrue(records.every((r) => r.userAgent?.startsWith("kubectl") === true), JSON.stringify(records))
      assert.deepStrictEqual(records.map((r) => r.user), [undefined, "jane", undefined])
    }))
})

const minutesAgo = (minutes: number): string =>
  new Date(Date.now() - minutes * 60_000).toISOString().replace(/\.\d{3}Z$/, "Z")

describe("kubectl's imperative commands and tables against the embedded API server", () => {
  it.live("create namespace, configmap, secret generic, serviceaccount, deployment (protobuf bodies) store what kubectl built", () =>
    Effect.gen(function*() {
      const records: Array<ApiServer.AuditEvent> = []
      const c = yield* clusterWith({ auditLog: (event) => records.push(event) })
      /** What kubectl builds for the same command, as JSON (`--dry-run=client -o json`). */
      const dryRun = (...args: Array<string>) => {
        const end = args.includes("--") ? args.indexOf("--") : args.length
        const flags = ["--dry-run=client", "-o", "json"]
        return Effect.map(run(c, ...args.slice(0, end), ...flags, ...args.slice(end)), (out) => JSON.parse(out))
      }

      assert.match(yield* run(c, "create", "namespace", "team"), /namespace\/team created/)
      const team = yield* c.server.objects.get(Resource.namespaces, { name: "team" })
      assert.deepStrictEqual(team.spec, { finalizers: ["kubernetes"] })
      assert.strictEqual(team.status?.phase, "Active")

      const cm = ["create", "configmap", "settings", "--from-literal=color=blue", "--from-literal=empty="]
      assert.match(yield* run(c, ...cm), /configmap\/settings created/)
      const settings = yield* c.server.objects.get(Resource.configMaps, { name: "settings", namespace: "default" })
      assert.deepStrictEqual(settings.data, { color: "blue", empty: "" })
      assert.deepStrictEqual(settings.data, (yield* dryRun(...cm)).data)

      const binary = path.join(c.dir, "blob.bin")
      fs.writeFileSync(binary, Buffer.from([0, 159, 146, 150, 255]))
      yield* run(c, "create", "configmap", "blob", `--from-file=blob=${binary}`)
      const blob = yield* c.server.objects.get(Resource.configMaps, { name: "blob", namespace: "default" })
      assert.deepStrictEqual(blob.binaryData, { blob: Buffer.from([0, 159, 146, 150, 255]).toString("base64") })

      const secret = [
        "create",
        "secret",
        "generic",
        "creds",
        "--from-literal=password=s3cr3t",
        "--type=example.com/token"
      ]
      assert.match(yield* run(c, ...secret), /secret\/creds created/)
      const creds = yield* c.server.objects.get(Resource.secrets, { name: "creds", namespace: "default" })
      assert.strictEqual(Buffer.from(creds.data!.password, "base64").toString("utf8"), "s3cr3t")
      assert.strictEqual(creds.type, "example.com/token")
      assert.deepStrictEqual(creds.data, (yield* dryRun(...secret)).data)
      assert.strictEqual(
        yield* run(c, "get", "secret", "creds", "-o", "jsonpath={.data.password}"),
        Buffer.from("s3cr3t").toString("base64")
      )

      // without --type, the server's default
      yield* run(c, "create", "secret", "generic", "plain", "--from-literal=a=1", "--from-literal=b=2")
      assert.strictEqual(
        (yield* c.server.objects.get(Resource.secrets, { name: "plain", namespace: "default" })).type,
        "Opaque"
      )
      assert.deepStrictEqual(
        printedRows(yield* run(c, "get", "secrets")).map((r) => [r.NAME, r.TYPE, r.DATA]),
        [["creds", "example.com/token", "1"], ["plain", "Opaque", "2"]]
      )

      assert.match(yield* run(c, "create", "serviceaccount", "robot", "-n", "team"), /serviceaccount\/robot created/)
      const robot = yield* c.server.objects.get(Resource.serviceAccounts, { name: "robot", namespace: "team" })
      assert.strictEqual(robot.metadata!.namespace, "team")

      const deployment = ["create", "deployment", "web", "--image=nginx:1.27", "--replicas=3", "--port=8080"]
      assert.match(yield* run(c, ...deployment, "--", "nginx", "-g", "daemon off;"), /deployment.apps\/web created/)
      const web = yield* c.server.objects.get(Resource.deployments, { name: "web", namespace: "default" })
      assert.deepStrictEqual(web.metadata!.labels, { app: "web" })
      assert.strictEqual(web.spec!.replicas, 3)
      assert.deepStrictEqual(web.spec!.selector, { matchLabels: { app: "web" } })
      const [container] = web.spec!.template.spec!.containers
      assert.strictEqual(container.image, "nginx:1.27")
      assert.deepStrictEqual(container.command, ["nginx", "-g", "daemon off;"])
      assert.deepStrictEqual(container.ports, [{ containerPort: 8080 }])
      assert.deepStrictEqual(
        JSON.parse(JSON.stringify(web.spec)),
        (yield* dryRun(...deployment, "--", "nginx", "-g", "daemon off;")).spec
      )
      // the JSON read back through kubectl
      const printed = JSON.parse(yield* run(c, "get", "deployment", "web", "-o", "json"))
      assert.strictEqual(printed.spec.template.spec.containers[0].image, "nginx:1.27")

      const service = ["create", "service", "nodeport", "front", "--tcp=80:8080", "--node-port=30080"]
      assert.match(yield* run(c, ...service), /service\/front created/)
      const front = yield* c.server.objects.get(Resource.services, { name: "front", namespace: "default" })
      assert.deepStrictEqual(JSON.parse(JSON.stringify(front.spec)), (yield* dryRun(...service)).spec)
      assert.match(
        yield* run(c, "expose", "deployment", "web", "--port=80", "--target-port=8080"),
        /service\/web exposed/
      )
      const exposed = yield* c.server.objects.get(Resource.services, { name: "web", namespace: "default" })
      assert.deepStrictEqual(exposed.spec!.selector, { app: "web" })
      assert.deepStrictEqual(JSON.parse(JSON.stringify(exposed.spec!.ports)), [{
        port: 80,
        protocol: "TCP",
        targetPort: 8080
      }])
      assert.deepStrictEqual(
        printedRows(yield* run(c, "get", "services")).map((r) => [r.NAME, r.TYPE, r["PORT(S)"]]),
        [["front", "NodePort", "80:30080/TCP"], ["web", "ClusterIP", "80/TCP"]]
      )

      const job = ["create", "job", "once", "--image=busybox"]
      assert.match(yield* run(c, ...job, "--", "echo", "hi"), /job.batch\/once created/)
      const once = yield* c.server.objects.get(Resource.jobs, { name: "once", namespace: "default" })
      assert.deepStrictEqual(JSON.parse(JSON.stringify(once.spec)), (yield* dryRun(...job, "--", "echo", "hi")).spec)

      assert.deepStrictEqual(
        records.map((r) => `${r.verb} ${r.resource} ${r.code}`),
        [
          "create namespaces 201",
          "create configmaps 201",
          "create configmaps 201",
          "create secrets 201",
          "create secrets 201",
          "create serviceaccounts 201",
          "create deployments 201",
          "create services 201",
          "create services 201",
          "create jobs 201"
        ]
      )
    }))

  it.live("a protobuf body of a kind the server does not decode gets 415 naming the type, and nothing is created", () =>
    Effect.gen(function*() {
      const records: Array<ApiServer.AuditEvent> = []
      const c = yield* clusterWith({ auditLog: (event) => records.push(event) })
      const cronJob = yield* runFailing(c, "create", "cronjob", "nightly", "--image=busybox", "--schedule=0 3 * * *")
      assert.include(cronJob, "batch/v1, Kind=CronJob")
      assert.include(cronJob, "application/json")
      const ingress = yield* runFailing(c, "create", "ingress", "front", "--rule=example.com/=web:80")
      assert.include(ingress, "networking.k8s.io/v1, Kind=Ingress")
      assert.deepStrictEqual(records.map((r) => `${r.verb} ${r.resource} ${r.code}`), [
        "create cronjobs 415",
        "create ingresses 415"
      ])
      assert.strictEqual((yield* c.server.objects.snapshot(Resource.cronJobs)).length, 0)
      assert.strictEqual((yield* c.server.objects.snapshot(Resource.ingresses)).length, 0)
    }))

  it.live("get pods and get pods -o wide print the server's columns for running, pending, terminating and restarted pods", () =>
    Effect.gen(function*() {
      const c = yield* cluster
      yield* c.server.bench.load(Resource.replicaSets, [
        ChurnSimulator.makeReplicaSet({ namespace: "default", app: "web" })
      ])
      // the test kit's realistic pod (container statuses, node, restarts), which `get pods` prints columns of
      const pod = (name: string, options: Partial<ChurnSimulator.PodOptions> = {}) => {
        const p = ChurnSimulator.makePod({ name, namespace: "default", app: "web", ...options })
        return { ...p, metadata: { ...p.metadata, creationTimestamp: minutesAgo(60) } } as Resource.Pod
      }
      const restarted = pod("web-restarted", { restartCount: 3 })
      const [status] = restarted.status!.containerStatuses!
      ;(status as { lastState: unknown }).lastState = {
        terminated: { exitCode: 137, reason: "OOMKilled", startedAt: minutesAgo(40), finishedAt: minutesAgo(20) }
      }
      const { nodeName: _, ...unscheduledSpec } = pod("web-unscheduled").spec!
      yield* c.server.bench.load(Resource.pods, [
        pod("web-running"),
        pod("web-creating", { phase: "Pending" }),
        restarted,
        {
          ...pod("web-unscheduled"),
          spec: unscheduledSpec,
          status: { phase: "Pending", conditions: [{ type: "PodScheduled", status: "False", reason: "Unschedulable" }] }
        } as Resource.Pod,
        {
          ...pod("web-stopping"),
          metadata: { ...pod("web-stopping").metadata, finalizers: ["example.com/hold"] }
        } as Resource.Pod
      ])
      yield* run(c, "delete", "pod", "web-stopping", "--wait=false")

      const rows = printedRows(yield* run(c, "get", "pods"))
      assert.deepStrictEqual(Object.keys(rows[0]), ["NAME", "READY", "STATUS", "RESTARTS", "AGE"])
      const byName = Object.fromEntries(rows.map((r) => [r.NAME, r]))
      assert.deepStrictEqual(byName["web-running"], {
        NAME: "web-running",
        READY: "1/1",
        STATUS: "Running",
        RESTARTS: "0",
        AGE: "60m"
      })
      assert.deepStrictEqual([byName["web-creating"].READY, byName["web-creating"].STATUS], [
        "0/1",
        "ContainerCreating"
      ])
      assert.deepStrictEqual([byName["web-unscheduled"].READY, byName["web-unscheduled"].STATUS], ["0/1", "Pending"])
      assert.deepStrictEqual([byName["web-stopping"].READY, byName["web-stopping"].STATUS], ["1/1", "Terminating"])
      assert.strictEqual(byName["web-restarted"].RESTARTS, "3 (20m ago)")

      const wide = printedRows(yield* run(c, "get", "pods", "-o", "wide"))
      assert.deepStrictEqual(Object.keys(wide[0]), [
        "NAME",
        "READY",
        "STATUS",
        "RESTARTS",
        "AGE",
        "IP",
        "NODE",
        "NOMINATED NODE",
        "READINESS GATES"
      ])
      const running = wide.find((r) => r.NAME === "web-running")!
      const stored = yield* c.server.objects.get(Resource.pods, { name: "web-running", namespace: "default" })
      assert.strictEqual(running.IP, stored.status!.podIP)
      assert.strictEqual(running.NODE, stored.spec!.nodeName)
      assert.deepStrictEqual([running["NOMINATED NODE"], running["READINESS GATES"]], ["<none>", "<none>"])
      const pending = wide.find((r) => r.NAME === "web-unscheduled")!
      assert.deepStrictEqual([pending.IP, pending.NODE], ["<none>", "<none>"])

      // one pod, by name
      const one = printedRows(yield* run(c, "get", "pod", "web-restarted"))
      assert.deepStrictEqual(one.map((r) => [r.NAME, r.READY, r.RESTARTS]), [["web-restarted", "1/1", "3 (20m ago)"]])
      // the namespace column comes from the rows' objects
      const all = printedRows(yield* run(c, "get", "pods", "-A"))
      assert.isTrue(all.every((r) => r.NAMESPACE === "default"))
      // labels too (`--show-labels` reads them from the rows' objects)
      const labelled = printedRows(yield* run(c, "get", "pod", "web-running", "--show-labels"))
      assert.include(labelled[0].LABELS, "app=web")
    }))

  it.live("get nodes prints the nodes the seeded pods run on", () =>
    Effect.gen(function*() {
      const c = yield* cluster
      const seeded = yield* ChurnSimulator.seed(c.server, { pods: 40, namespaces: 2 })
      const pods = yield* c.server.objects.snapshot(Resource.pods)
      assert.deepStrictEqual(seeded.nodes, ChurnSimulator.nodeNames)
      const nodes = printedRows(yield* run(c, "get", "nodes"))
      assert.deepStrictEqual(Object.keys(nodes[0]), ["NAME", "STATUS", "ROLES", "AGE", "VERSION"])
      assert.deepStrictEqual(nodes.map((n) => n.NAME).sort(), [...seeded.nodes].sort())
      // every pod runs on one of them
      const printed = new Set(nodes.map((n) => n.NAME))
      assert.isTrue(pods.every((p) => printed.has(p.spec!.nodeName!)))
      assert.isTrue(nodes.every((n) => n.STATUS === "Ready" && n.ROLES === "<none>" && n.VERSION === "v1.32.0"))
      const wide = printedRows(yield* run(c, "get", "nodes", "-o", "wide"))
      for (const node of wide) {
        // the node's InternalIP is the hostIP of its pods
        const hostIPs = new Set(pods.filter((p) => p.spec!.nodeName === node.NAME).map((p) => p.status!.hostIP))
        assert.isAtMost(hostIPs.size, 1)
        if (hostIPs.size === 1) assert.deepStrictEqual([...hostIPs], [node["INTERNAL-IP"]])
        assert.strictEqual(node["OS-IMAGE"], "Debian GNU/Linux 12 (bookworm)")
        assert.strictEqual(node["CONTAINER-RUNTIME"], "containerd://1.7.13")
      }
      const json = JSON.parse(yield* run(c, "get", "node", seeded.nodes[0], "-o", "json"))
      assert.strictEqual(json.status.capacity.pods, "110")
      assert.strictEqual(json.status.conditions.find((x: { type: string }) => x.type === "Ready").status, "True")
      // and the other tables: namespaces, deployments, config maps
      const namespaces = printedRows(yield* run(c, "get", "namespaces"))
      assert.deepStrictEqual(
        namespaces.filter((n) => n.NAME.startsWith("ns-")).map((n) => [n.NAME, n.STATUS]),
        [["ns-0", "Active"], ["ns-1", "Active"]]
      )
    }))
})

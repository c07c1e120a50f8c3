/**
 * kubectl against the embedded API server: namespaces as on a real cluster (a fresh cluster's four,
 * kube-apiserver's NamespaceLifecycle admission, `kubectl delete ns` emptying then removing).
 */
import { assert, describe, it } from "@effect/vitest"
import * as Resource from "effect-informers/Resource"
import * as Effect from "effect/Effect"
import { clusterWith, manifest, printedRows, run, runFailing } from "./kubectlFixtures.js"

const cluster = clusterWith({ garbageCollection: { delay: "10 millis" } })

describe("kubectl: namespaces", () => {
  it.live("get ns shows a fresh cluster's four namespaces, Active", () =>
    Effect.gen(function*() {
      const c = yield* cluster
      const rows = printedRows(yield* run(c, "get", "ns"))
      assert.deepStrictEqual(Object.keys(rows[0]), ["NAME", "STATUS", "AGE"])
      assert.deepStrictEqual(rows.map((r) => [r.NAME, r.STATUS]), [
        ["default", "Active"],
        ["kube-node-lease", "Active"],
        ["kube-public", "Active"],
        ["kube-system", "Active"]
      ])
      const labels = yield* run(c, "get", "ns", "kube-system", "-o", "jsonpath={.metadata.labels}")
      assert.deepStrictEqual(JSON.parse(labels), { "kubernetes.io/metadata.name": "kube-system" })
      const refused = yield* runFailing(c, "delete", "ns", "default")
      assert.strictEqual(
        refused.trim(),
        `Error from server (Forbidden): namespaces "default" is forbidden: this namespace may not be deleted`
      )
    }))

  it.live("create in a namespace that does not exist: NotFound; in one being deleted: Forbidden", () =>
    Effect.gen(function*() {
      const c = yield* cluster
      // kubectl's imperative create wraps the server's message in its own
      const missing = yield* runFailing(c, "create", "configmap", "x", "-n", "nope")
      assert.strictEqual(missing.trim(), `error: failed to create configmap: namespaces "nope" not found`)
      const file = manifest(c, "cm.yaml", ["apiVersion: v1", "kind: ConfigMap", "metadata:", "  name: x"])
      const created = yield* runFailing(c, "create", "-f", file, "-n", "nope")
      assert.strictEqual(
        created.trim(),
        `Error from server (NotFound): error when creating "${file}": namespaces "nope" not found`
      )
      const applied = yield* runFailing(c, "apply", "--server-side", "-f", file, "-n", "nope")
      assert.match(applied, /^Error from server \(NotFound\): .*namespaces "nope" not found/)
      assert.deepStrictEqual(yield* c.server.objects.snapshot(Resource.configMaps), [])

      // a namespace held in Terminating by a finalizer of its content
      yield* run(c, "create", "namespace", "doomed")
      yield* c.server.objects.create(Resource.configMaps, {
        metadata: { name: "held", namespace: "doomed", finalizers: ["example.com/hold"] }
      })
      assert.match(yield* run(c, "delete", "ns", "doomed", "--wait=false"), /namespace "doomed" deleted/)
      assert.strictEqual(
        printedRows(yield* run(c, "get", "ns", "doomed"))[0].STATUS,
        "Terminating"
      )
      const forbidden =
        `configmaps "late" is forbidden: unable to create new content in namespace doomed because it is being terminated`
      const refused = yield* runFailing(c, "create", "configmap", "late", "-n", "doomed")
      assert.strictEqual(refused.trim(), `error: failed to create configmap: ${forbidden}`)
      const other = manifest(c, "late.yaml", ["apiVersion: v1", "kind: ConfigMap", "metadata:", "  name: late"])
      const refusedFile = yield* runFailing(c, "create", "-f", other, "-n", "doomed")
      assert.strictEqual(
        refusedFile.trim(),
        `Error from server (Forbidden): error when creating "${other}": ${forbidden}`
      )
    }))

  it.live("delete ns empties the namespace of every resource (Events and Leases too), then removes it", () =>
    Effect.gen(function*() {
      const c = yield* cluster
      yield* run(c, "create", "namespace", "team")
      yield* run(c, "create", "configmap", "settings", "-n", "team", "--from-literal=a=1")
      yield* run(c, "create", "secret", "generic", "token", "-n", "team", "--from-literal=t=x")
      const lease = manifest(c, "lease.yaml", [
        "apiVersion: coordination.k8s.io/v1",
        "kind: Lease",
        "metadata:",
        "  name: leader",
        "  namespace: team",
        "spec:",
        "  holderIdentity: me"
      ])
      yield* run(c, "create", "-f", lease)
      yield* c.server.objects.create(Resource.eventsV1, {
        metadata: { name: "settings.1", namespace: "team" },
        eventTime: "2024-01-01T00:00:00.000000Z",
        regarding: { kind: "ConfigMap", namespace: "team", name: "settings" },
        reason: "Synced",
        action: "Sync",
        type: "Normal",
        reportingController: "example.com/test",
        reportingInstance: "t"
      })
      assert.strictEqual(printedRows(yield* run(c, "get", "events", "-n", "team")).length, 1)

      // kubectl waits until the namespace is gone
      assert.match(yield* run(c, "delete", "ns", "team"), /namespace "team" deleted/)
      const notFound = yield* runFailing(c, "get", "ns", "team")
      assert.strictEqual(notFound.trim(), `Error from server (NotFound): namespaces "team" not found`)
      for (
        const resource of [Resource.configMaps, Resource.secrets, Resource.leases, Resource.events, Resource.eventsV1]
      ) {
        assert.deepStrictEqual(yield* c.server.objects.snapshot(resource, "team"), [], resource.resource)
      }
      const none = yield* run(c, "get", "configmaps,leases,events", "-n", "team")
      assert.strictEqual(none, "")
    }))
})

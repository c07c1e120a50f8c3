/**
 * ApiServer: namespaces as on a real cluster (a fresh cluster's four, kube-apiserver's NamespaceLifecycle
 * admission, the namespace controller emptying a deleted namespace of every resource).
 */
import { assert, describe, it } from "@effect/vitest"
import * as Resource from "effect-informers/Resource"
import * as Effect from "effect/Effect"
import * as ApiServer from "../../src/ApiServer.js"
import { eventually } from "../fixtures.js"
import { assertStatus, call, merge, send, start } from "./fixtures.js"

const gone = (url: string) => Effect.map(call(url), (reply) => reply.status === 404)

describe("ApiServer namespaces", () => {
  it.live("a fresh cluster's namespaces exist at start: Active, with the kubernetes finalizer and the name label", () =>
    Effect.gen(function*() {
      const server = yield* start({ namespaces: ["team"] })
      const list = yield* call(`${server.url}/api/v1/namespaces`)
      assert.deepStrictEqual(
        list.json.items.map((n: { metadata: { name: string } }) => n.metadata.name),
        ["default", "kube-node-lease", "kube-public", "kube-system", "team"]
      )
      for (const namespace of list.json.items) {
        const name = namespace.metadata.name
        assert.strictEqual(namespace.status.phase, "Active")
        assert.deepStrictEqual(namespace.spec, { finalizers: ["kubernetes"] })
        assert.deepStrictEqual(namespace.metadata.labels, { "kubernetes.io/metadata.name": name })
        assert.isString(namespace.metadata.uid)
        assert.isString(namespace.metadata.creationTimestamp)
      }
      assert.deepStrictEqual(ApiServer.initialNamespaces, ["default", "kube-system", "kube-public", "kube-node-lease"])
      // the name label is kube-apiserver's: kept on every write
      const relabeled = yield* send(
        `${server.url}/api/v1/namespaces/team`,
        "PATCH",
        { metadata: { labels: { "kubernetes.io/metadata.name": null, tier: "x" } } },
        merge
      )
      assert.deepStrictEqual(relabeled.json.metadata.labels, { "kubernetes.io/metadata.name": "team", tier: "x" })
    }))

  it.live("creating in a namespace that does not exist is 404 NotFound, over HTTP, by apply and programmatically", () =>
    Effect.gen(function*() {
      const server = yield* start()
      const expected = {
        kind: "Status",
        apiVersion: "v1",
        metadata: {},
        status: "Failure",
        message: "namespaces \"nope\" not found",
        reason: "NotFound",
        details: { name: "nope", kind: "namespaces" },
        code: 404
      }
      const posted = yield* send(`${server.url}/api/v1/namespaces/nope/configmaps`, "POST", { metadata: { name: "c" } })
      assert.deepStrictEqual(posted.json, expected)
      // any namespaced resource, a generateName too
      const lease = yield* send(
        `${server.url}/apis/coordination.k8s.io/v1/namespaces/nope/leases`,
        "POST",
        { metadata: { generateName: "l-" } }
      )
      assert.deepStrictEqual(lease.json, expected)
      const applied = yield* send(
        `${server.url}/api/v1/namespaces/nope/configmaps/c?fieldManager=test`,
        "PATCH",
        { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "c" } },
        "application/apply-patch+yaml"
      )
      assert.deepStrictEqual(applied.json, expected)
      const programmatic = yield* Effect.flip(
        server.objects.create(Resource.configMaps, { metadata: { name: "c", namespace: "nope" } })
      )
      assert.strictEqual(programmatic.reason, "NotFound")
      assert.strictEqual(programmatic.message, "namespaces \"nope\" not found")
      // nothing was stored; cluster-scoped objects need no namespace
      assert.deepStrictEqual(yield* server.objects.snapshot(Resource.configMaps), [])
      assert.strictEqual((yield* send(`${server.url}/api/v1/nodes`, "POST", { metadata: { name: "n" } })).status, 201)
      // once the namespace exists, the same create succeeds
      yield* server.objects.create(Resource.namespaces, { metadata: { name: "nope" } })
      assert.strictEqual(
        (yield* send(`${server.url}/api/v1/namespaces/nope/configmaps`, "POST", { metadata: { name: "c" } })).status,
        201
      )
    }))

  it.live("default, kube-system and kube-public may not be deleted; kube-node-lease may", () =>
    Effect.gen(function*() {
      const server = yield* start({ garbageCollection: { delay: "10 millis" } })
      for (const name of ["default", "kube-system", "kube-public"]) {
        const refused = yield* call(`${server.url}/api/v1/namespaces/${name}`, { method: "DELETE" })
        assertStatus(refused, 403, "Forbidden")
        assert.strictEqual(refused.json.message, `namespaces "${name}" is forbidden: this namespace may not be deleted`)
        assert.deepStrictEqual(refused.json.details, { name, kind: "namespaces" })
      }
      const deleted = yield* call(`${server.url}/api/v1/namespaces/kube-node-lease`, { method: "DELETE" })
      assert.strictEqual(deleted.status, 200)
      yield* eventually(gone(`${server.url}/api/v1/namespaces/kube-node-lease`), "kube-node-lease deleted")
    }))

  it.live("a deleted namespace is emptied of every namespaced resource, Events and Leases included", () =>
    Effect.gen(function*() {
      const server = yield* start({ garbageCollection: { delay: "10 millis" }, namespaces: ["team"] })
      const team = `${server.url}/api/v1/namespaces/team`
      const urls = [
        `${team}/configmaps/c`,
        `${team}/events/e1`,
        `${server.url}/apis/events.k8s.io/v1/namespaces/team/events/e1`,
        `${server.url}/apis/events.k8s.io/v1/namespaces/team/events/e2`,
        `${server.url}/apis/coordination.k8s.io/v1/namespaces/team/leases/l`,
        `${team}/secrets/s`,
        `${team}/serviceaccounts/sa`
      ]
      yield* send(`${team}/configmaps`, "POST", { metadata: { name: "c" } })
      yield* send(`${team}/events`, "POST", {
        metadata: { name: "e1" },
        involvedObject: { kind: "ConfigMap", namespace: "team", name: "c" },
        reason: "Test",
        message: "core"
      })
      yield* send(`${server.url}/apis/events.k8s.io/v1/namespaces/team/events`, "POST", {
        metadata: { name: "e2" },
        eventTime: "2024-01-01T00:00:00.000000Z",
        regarding: { kind: "ConfigMap", namespace: "team", name: "c" },
        reason: "Test",
        note: "events.k8s.io"
      })
      yield* send(`${server.url}/apis/coordination.k8s.io/v1/namespaces/team/leases`, "POST", {
        metadata: { name: "l" }
      })
      yield* send(`${team}/secrets`, "POST", { metadata: { name: "s" } })
      yield* send(`${team}/serviceaccounts`, "POST", { metadata: { name: "sa" } })
      for (const url of urls) assert.strictEqual((yield* call(url)).status, 200, url)
      assert.strictEqual((yield* call(team, { method: "DELETE" })).json.status.phase, "Terminating")
      for (const url of urls) yield* eventually(gone(url), url)
      yield* eventually(gone(team), "the namespace deleted")
    }))
})

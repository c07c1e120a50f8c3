/**
 * Each Client verb against the embedded ApiServer over real HTTP.
 */
import * as ApiServer from "@effect-informers/testkit/ApiServer"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
import * as Client from "../../../src/Client.js"
import * as KubeConfig from "../../../src/KubeConfig.js"
import * as Resource from "../../../src/Resource.js"
import { configMap, TOKEN, withApiServer } from "./fixtures.js"

const widgets = Resource.make<{
  readonly apiVersion?: string
  readonly kind?: string
  readonly metadata?: { readonly name?: string; readonly namespace?: string; readonly resourceVersion?: string }
  readonly spec?: { readonly size?: number; readonly tags?: ReadonlyArray<string> }
}>({ group: "example.com", version: "v1", resource: "widgets", kind: "Widget", namespaced: true })

describe("Client verbs against the embedded ApiServer", () => {
  it.live("create, get: the object as stored, typed by the resource", () =>
    withApiServer((server, client) =>
      Effect.gen(function*() {
        const created = yield* client.create(Resource.configMaps, configMap("settings", { data: { a: "1" } }))
        assert.strictEqual(created.metadata?.name, "settings")
        assert.isString(created.metadata?.uid)
        assert.strictEqual(created.metadata?.resourceVersion, yield* server.resourceVersion)
        const got = yield* client.get(Resource.configMaps, "settings", { namespace: "default" })
        assert.deepStrictEqual(got, created)
        const stored = yield* server.objects.get(Resource.configMaps, { name: "settings", namespace: "default" })
        assert.deepStrictEqual(stored.data, { a: "1" })
      })
    ))

  it.live("create with generateName; apiVersion and kind filled in from the resource", () =>
    withApiServer((_, client) =>
      Effect.gen(function*() {
        const created = yield* client.create(Resource.configMaps, { metadata: { generateName: "job-" } }, {
          namespace: "batch"
        })
        assert.match(created.metadata?.name ?? "", /^job-[a-z0-9]{5}$/)
        assert.strictEqual(created.metadata?.namespace, "batch")
        assert.strictEqual(created.kind, "ConfigMap")
        assert.strictEqual(created.apiVersion, "v1")
      }), { server: { namespaces: ["batch"] } }))

  it.live("the namespace: the call's, else the object's, else the kubeconfig's, else default", () =>
    withApiServer((server, client) =>
      Effect.gen(function*() {
        yield* client.create(Resource.configMaps, { metadata: { name: "a" } })
        yield* client.create(Resource.configMaps, { metadata: { name: "b", namespace: "ns1" } })
        yield* client.create(Resource.configMaps, { metadata: { name: "c" } }, { namespace: "ns2" })
        const all = yield* server.objects.snapshot(Resource.configMaps)
        assert.deepStrictEqual(all.map((cm) => `${cm.metadata?.namespace}/${cm.metadata?.name}`), [
          "default/a",
          "ns1/b",
          "ns2/c"
        ])
        assert.strictEqual((yield* client.get(Resource.configMaps, "a")).metadata?.namespace, "default")
      }), { server: { namespaces: ["ns1", "ns2"] } }))

  it.live("cluster-scoped resources: no namespace in the path", () =>
    withApiServer((_, client) =>
      Effect.gen(function*() {
        const ns = yield* client.create(Resource.namespaces, { metadata: { name: "team-a", namespace: "ignored" } })
        assert.strictEqual(ns.metadata?.name, "team-a")
        assert.isUndefined(ns.metadata?.namespace)
        const got = yield* client.get(Resource.namespaces, "team-a", { namespace: "ignored" })
        assert.strictEqual(got.metadata?.uid, ns.metadata?.uid)
        const page = yield* client.list(Resource.namespaces)
        // beside a fresh cluster's namespaces
        assert.deepStrictEqual(
          page.items.map((n) => n.metadata?.name),
          ["default", "kube-node-lease", "kube-public", "kube-system", "team-a"]
        )
      })
    ))

  it.live("a custom resource: create, update, patch, list, delete", () =>
    withApiServer((_, client) =>
      Effect.gen(function*() {
        const created = yield* client.create(widgets, { metadata: { name: "w" }, spec: { size: 1 } })
        assert.strictEqual(created.apiVersion, "example.com/v1")
        const updated = yield* client.update(widgets, { ...created, spec: { size: 2 } })
        assert.strictEqual(updated.spec?.size, 2)
        const patched = yield* client.patch(widgets, "w", Client.mergePatch({ spec: { tags: ["x"] } }))
        assert.deepStrictEqual(patched.spec, { size: 2, tags: ["x"] })
        const page = yield* client.list(widgets, { namespace: "default" })
        assert.deepStrictEqual(page.items.map((w) => w.spec?.size), [2])
        const deleted = yield* client.delete(widgets, "w")
        assert.strictEqual(deleted._tag, "Object")
      }), { server: { resources: [widgets] } }))

  it.live("update with the current resourceVersion: a new one; unchanged: the same", () =>
    withApiServer((_, client) =>
      Effect.gen(function*() {
        const created = yield* client.create(Resource.configMaps, configMap("cm", { data: { a: "1" } }))
        const updated = yield* client.update(Resource.configMaps, { ...created, data: { a: "2" } })
        assert.deepStrictEqual(updated.data, { a: "2" })
        assert.notStrictEqual(updated.metadata?.resourceVersion, created.metadata?.resourceVersion)
        const again = yield* client.update(Resource.configMaps, updated)
        assert.strictEqual(again.metadata?.resourceVersion, updated.metadata?.resourceVersion)
        // without a resourceVersion: unconditional
        const { resourceVersion: _, ...metadata } = updated.metadata!
        const blind = yield* client.update(Resource.configMaps, { ...updated, metadata, data: { a: "3" } })
        assert.deepStrictEqual(blind.data, { a: "3" })
      })
    ))

  it.live("patch: JSON merge, JSON patch, strategic merge (built-in type)", () =>
    withApiServer((_, client) =>
      Effect.gen(function*() {
        yield* client.create(Resource.pods, {
          metadata: { name: "web", labels: { app: "web", old: "x" } },
          spec: { containers: [{ name: "app", image: "app:1" }, { name: "sidecar", image: "proxy:1" }] }
        })
        const merged = yield* client.patch(
          Resource.pods,
          "web",
          Client.mergePatch({ metadata: { labels: { old: null, tier: "front" } } })
        )
        assert.deepStrictEqual(merged.metadata?.labels, { app: "web", tier: "front" })
        const json = yield* client.patch(
          Resource.pods,
          "web",
          Client.jsonPatch([
            { op: "test", path: "/metadata/labels/app", value: "web" },
            { op: "add", path: "/metadata/annotations", value: { note: "hi" } }
          ])
        )
        assert.deepStrictEqual(json.metadata?.annotations, { note: "hi" })
        const strategic = yield* client.patch(
          Resource.pods,
          "web",
          Client.strategicMergePatch({ spec: { containers: [{ name: "app", image: "app:2" }] } })
        )
        // merged by name: the sidecar stays
        assert.deepStrictEqual(strategic.spec?.containers.map((c) => `${c.name}=${c.image}`), [
          "app=app:2",
          "sidecar=proxy:1"
        ])
      })
    ))

  it.live("list: one page and its continue token; listAll: every page, one snapshot", () =>
    withApiServer((server, client) =>
      Effect.gen(function*() {
        for (let i = 0; i < 7; i++) yield* server.objects.create(Resource.configMaps, configMap(`cm-${i}`))
        yield* server.objects.create(Resource.configMaps, { metadata: { name: "elsewhere", namespace: "other" } })
        const first = yield* client.list(Resource.configMaps, { namespace: "default", limit: 3 })
        assert.strictEqual(first.items.length, 3)
        assert.isString(first.continue)
        const second = yield* client.list(Resource.configMaps, {
          namespace: "default",
          limit: 3,
          continue: first.continue
        })
        assert.deepStrictEqual(second.items.map((cm) => cm.metadata?.name), ["cm-3", "cm-4", "cm-5"])
        const stats = (yield* server.stats).requestsByVerb.list ?? 0
        const all = yield* client.listAll(Resource.configMaps, { namespace: "default", limit: 2 })
        assert.strictEqual(all.items.length, 7)
        assert.isUndefined(all.continue)
        assert.strictEqual(all.resourceVersion, first.resourceVersion)
        assert.strictEqual(((yield* server.stats).requestsByVerb.list ?? 0) - stats, 4)
        const everywhere = yield* client.listAll(Resource.configMaps, { labelSelector: "" })
        assert.strictEqual(everywhere.items.length, 8)
        const none = yield* client.listAll(Resource.configMaps, { namespace: "empty" })
        assert.deepStrictEqual(none.items, [])
      }), { server: { namespaces: ["other"] } }))

  it.live("listAll: a continue token that expired mid-way, one full list (client-go's pager)", () =>
    withApiServer((server, client) =>
      Effect.gen(function*() {
        for (let i = 0; i < 5; i++) yield* server.objects.create(Resource.configMaps, configMap(`cm-${i}`))
        yield* server.faults.inject({ _tag: "ContinueGone" })
        const before = (yield* server.stats).requestsByVerb.list ?? 0
        const all = yield* client.listAll(Resource.configMaps, { namespace: "default", limit: 2 })
        assert.strictEqual(all.items.length, 5)
        // page 1, page 2 (410), the full list
        assert.strictEqual(((yield* server.stats).requestsByVerb.list ?? 0) - before, 3)
      })
    ))

  it.live("layerFromKubeConfig: the Client over its own Node HTTP client", () =>
    Effect.gen(function*() {
      const server = yield* Effect.orDie(ApiServer.make())
      yield* server.objects.create(Resource.configMaps, configMap("cm"))
      const layer = Client.layerFromKubeConfig(
        KubeConfig.layerFromOptions({ server: server.url, token: Redacted.make(TOKEN), namespace: "default" }),
        { qps: 100, burst: 100, maxSockets: 4 }
      )
      const got = yield* Effect.flatMap(Client.Client, (client) => client.get(Resource.configMaps, "cm")).pipe(
        Effect.provide(layer)
      )
      assert.strictEqual(got.metadata?.name, "cm")
    }))

  it.live("get at resourceVersion 0", () =>
    withApiServer((_, client) =>
      Effect.gen(function*() {
        yield* client.create(Resource.configMaps, configMap("cm"))
        const got = yield* client.get(Resource.configMaps, "cm", { resourceVersion: "0" })
        assert.strictEqual(got.metadata?.name, "cm")
      })
    ))

  it.live("delete: the last state; with finalizers the object stays, deleting, until they are gone", () =>
    withApiServer((server, client) =>
      Effect.gen(function*() {
        yield* client.create(Resource.configMaps, configMap("plain"))
        const plain = yield* client.delete(Resource.configMaps, "plain")
        assert.strictEqual(plain._tag, "Object")
        assert.deepStrictEqual(yield* server.objects.snapshot(Resource.configMaps), [])

        yield* client.create(
          Resource.configMaps,
          configMap("held", { metadata: { name: "held", finalizers: ["x/y"] } })
        )
        const held = yield* client.delete(Resource.configMaps, "held")
        assert(held._tag === "Object")
        assert.isString(held.object.metadata?.deletionTimestamp)
        assert.strictEqual((yield* server.objects.snapshot(Resource.configMaps)).length, 1)
        yield* client.patch(
          Resource.configMaps,
          "held",
          Client.jsonPatch([{ op: "remove", path: "/metadata/finalizers" }])
        )
        assert.deepStrictEqual(yield* server.objects.snapshot(Resource.configMaps), [])
      })
    ))

  it.live("delete with preconditions: the matching uid and resourceVersion delete", () =>
    withApiServer((server, client) =>
      Effect.gen(function*() {
        const cm = yield* client.create(Resource.configMaps, configMap("cm"))
        yield* client.delete(Resource.configMaps, "cm", {
          preconditions: { uid: cm.metadata?.uid, resourceVersion: cm.metadata?.resourceVersion }
        })
        assert.deepStrictEqual(yield* server.objects.snapshot(Resource.configMaps), [])
      })
    ))

  it.live("the status subresource path: updateStatus and patchStatus write (the server's status rules aside)", () =>
    withApiServer((_, client) =>
      Effect.gen(function*() {
        const pod = yield* client.create(Resource.pods, { metadata: { name: "p" }, spec: { containers: [] } })
        const updated = yield* client.updateStatus(Resource.pods, { ...pod, status: { phase: "Running" } })
        assert.strictEqual(updated.status?.phase, "Running")
        const patched = yield* client.patchStatus(
          Resource.pods,
          "p",
          Client.mergePatch({ status: { podIP: "10.0.0.1" } })
        )
        assert.strictEqual(patched.status?.podIP, "10.0.0.1")
      })
    ))
})

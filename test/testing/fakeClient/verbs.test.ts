/**
 * The fake Client's verbs and errors, as kube-apiserver answers them.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Fiber, Stream } from "effect"
import { TestClock } from "effect/testing"
import * as Resource from "../../../src/Resource.js"
import { widgets } from "../../fixtures/index.js"
import type { ConfigMap } from "./fixtures.js"
import { configMap, configMaps, deployment, deployments, failureOf, fakes, layer } from "./fixtures.js"

describe("FakeClient: verbs", () => {
  it.effect("create sets uid, creationTimestamp (Clock), resourceVersion, generation where tracked; get reads it", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(Date.parse("2026-03-01T10:20:30.456Z"))
      const { client, source } = yield* fakes
      const cm = yield* client.create(configMaps, configMap("a", { k: "v" }))
      assert.strictEqual(cm.metadata?.resourceVersion, "1")
      assert.match(cm.metadata?.uid ?? "", /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
      assert.strictEqual(cm.metadata?.creationTimestamp, "2026-03-01T10:20:30Z")
      assert.strictEqual(cm.metadata?.generation, undefined, "configmaps track no generation")
      assert.deepStrictEqual([cm.apiVersion, cm.kind, cm.data], ["v1", "ConfigMap", { k: "v" }])
      assert.deepStrictEqual(yield* client.get(configMaps, "a", { namespace: "ns" }), cm)
      // the store is the fake ListerWatcher's
      assert.deepStrictEqual(yield* source.fakeFor(configMaps).objects, [cm])
      const d = yield* client.create(deployments, deployment("web", 2, { replicas: 2 }))
      assert.strictEqual(d.metadata?.generation, 1)
      assert.strictEqual(d.status, undefined, "a create drops the status of a resource with a status subresource")
      assert.notStrictEqual(d.metadata?.uid, cm.metadata?.uid)
    }).pipe(Effect.provide(layer())))

  it.effect("the namespace: the call's, else the object's, else the fake's; a mismatch is BadRequest", () =>
    Effect.gen(function*() {
      const { client } = yield* fakes
      const noNamespace = { metadata: { name: "a" } }
      assert.strictEqual((yield* client.create(configMaps, noNamespace)).metadata?.namespace, "team")
      assert.strictEqual((yield* client.create(configMaps, noNamespace, { namespace: "x" })).metadata?.namespace, "x")
      assert.strictEqual((yield* client.create(configMaps, configMap("b"))).metadata?.namespace, "ns")
      assert.strictEqual((yield* client.get(configMaps, "a")).metadata?.namespace, "team")
      assert.strictEqual(
        yield* failureOf(client.create(configMaps, configMap("c"), { namespace: "other" })),
        "BadRequest 400: the namespace of the provided object does not match the namespace sent on the request"
      )
      // cluster-scoped: no namespace
      const node = yield* client.create(Resource.nodes, { metadata: { name: "n1", namespace: "ignored" } })
      assert.strictEqual(node.metadata?.namespace, undefined)
    }).pipe(Effect.provide(layer({ namespace: "team" }))))

  it.effect("generateName: a random suffix; no name is Invalid; an invalid name is Invalid; a taken one AlreadyExists", () =>
    Effect.gen(function*() {
      const { client } = yield* fakes
      const a = yield* client.create(configMaps, { metadata: { namespace: "ns", generateName: "cfg-" } })
      const b = yield* client.create(configMaps, { metadata: { namespace: "ns", generateName: "cfg-" } })
      assert.match(a.metadata?.name ?? "", /^cfg-[a-z0-9]{5}$/)
      assert.notStrictEqual(a.metadata?.name, b.metadata?.name)
      assert.strictEqual(
        yield* failureOf(client.create(configMaps, { metadata: { namespace: "ns" } })),
        "Invalid 422: ConfigMap \"\" is invalid: metadata.name: Required value: name or generateName is required"
      )
      const invalid = yield* Effect.flip(client.create(configMaps, configMap("Not_Valid")))
      assert.isTrue(invalid._tag === "StatusError" && invalid.reason === "Invalid")
      assert.deepStrictEqual(
        invalid._tag === "StatusError" ? invalid.causes.map((c) => c.field) : [],
        ["metadata.name"]
      )
      yield* client.create(configMaps, configMap("x"))
      assert.strictEqual(
        yield* failureOf(client.create(configMaps, configMap("x"))),
        "AlreadyExists 409: configmaps \"x\" already exists"
      )
      assert.strictEqual(
        yield* failureOf(
          client.create(deployments, { ...deployment("web"), metadata: { name: "web", resourceVersion: "3" } })
        ),
        "ServerError 500: resourceVersion should not be set on objects to be created"
      )
    }).pipe(Effect.provide(layer())))

  it.effect("NotFound for get, update, patch and delete of an absent object; an empty name is a BadRequest, unsent", () =>
    Effect.gen(function*() {
      const { client, fake } = yield* fakes
      assert.strictEqual(
        yield* failureOf(client.get(configMaps, "x", { namespace: "ns" })),
        "NotFound 404: configmaps \"x\" not found"
      )
      assert.strictEqual(
        yield* failureOf(client.get(deployments, "x", { namespace: "ns" })),
        "NotFound 404: deployments.apps \"x\" not found"
      )
      assert.strictEqual(
        yield* failureOf(client.update(configMaps, configMap("x"))),
        "NotFound 404: configmaps \"x\" not found"
      )
      assert.strictEqual(
        yield* failureOf(client.patch(configMaps, "x", { _tag: "MergePatch", patch: {} }, { namespace: "ns" })),
        "NotFound 404: configmaps \"x\" not found"
      )
      assert.strictEqual(
        yield* failureOf(client.delete(configMaps, "x", { namespace: "ns" })),
        "NotFound 404: configmaps \"x\" not found"
      )
      assert.strictEqual(
        yield* failureOf(client.update(configMaps, { metadata: { namespace: "ns" } })),
        "BadRequest 400: update configmaps in ns: resource name may not be empty"
      )
      assert.strictEqual(
        yield* failureOf(client.get(configMaps, "a/b", { namespace: "ns" })),
        "BadRequest 400: get configmaps \"a/b\" in ns: invalid resource name \"a/b\": may not contain '/'"
      )
      // the four writes were received; the empty name was not sent
      assert.deepStrictEqual((yield* fake.writes).map((w) => w.verb), ["update", "patch", "delete"])
    }).pipe(Effect.provide(layer())))

  it.effect("update: a stale resourceVersion is a Conflict; none replaces; generation grows with the spec only", () =>
    Effect.gen(function*() {
      const { client } = yield* fakes
      const created = yield* client.create(deployments, deployment("web", 1))
      const scaled = yield* client.update(deployments, { ...created, spec: { replicas: 3 } })
      assert.strictEqual(scaled.metadata?.generation, 2)
      assert.strictEqual(scaled.metadata?.resourceVersion, "2")
      assert.strictEqual(
        yield* failureOf(client.update(deployments, { ...created, spec: { replicas: 4 } })),
        "Conflict 409: Operation cannot be fulfilled on deployments.apps \"web\": the object has been modified; " +
          "please apply your changes to the latest version and try again"
      )
      const labelled = yield* client.update(deployments, {
        metadata: { namespace: "ns", name: "web", labels: { a: "b" } },
        spec: { replicas: 3 }
      })
      assert.strictEqual(labelled.metadata?.generation, 2, "metadata only: same generation")
      assert.strictEqual(labelled.metadata?.uid, created.metadata?.uid, "system fields are kept")
      assert.strictEqual(labelled.metadata?.creationTimestamp, created.metadata?.creationTimestamp)
      // the same object again: nothing written
      const same = yield* client.update(deployments, labelled)
      assert.strictEqual(same.metadata?.resourceVersion, labelled.metadata?.resourceVersion)
      // kube-apiserver's Deployment strategy: an annotation change moves the generation too
      const annotated = yield* client.update(deployments, {
        metadata: { namespace: "ns", name: "web", labels: { a: "b" }, annotations: { note: "x" } },
        spec: { replicas: 3 }
      })
      assert.strictEqual(annotated.metadata?.generation, 3, "a Deployment's annotations: generation + 1")
    }).pipe(Effect.provide(layer())))

  it.effect("status subresource: update keeps the stored status, updateStatus writes only the status", () =>
    Effect.gen(function*() {
      const { client } = yield* fakes
      const created = yield* client.create(deployments, deployment("web", 1))
      const withStatus = yield* client.updateStatus(deployments, {
        ...created,
        spec: { replicas: 9 },
        status: { readyReplicas: 1 }
      })
      assert.deepStrictEqual(withStatus.status, { readyReplicas: 1 })
      assert.deepStrictEqual(withStatus.spec, { replicas: 1 }, "updateStatus leaves the spec")
      assert.strictEqual(withStatus.metadata?.generation, 1)
      const updated = yield* client.update(deployments, {
        ...withStatus,
        spec: { replicas: 2 },
        status: { readyReplicas: 7 }
      })
      assert.deepStrictEqual(updated.status, { readyReplicas: 1 }, "update leaves the status")
      assert.deepStrictEqual(updated.spec, { replicas: 2 })
      // configmaps have no status subresource
      yield* client.create(configMaps, configMap("a"))
      assert.strictEqual(
        yield* failureOf(client.updateStatus(configMaps, configMap("a"))),
        "NotFound 404: the server could not find the requested resource"
      )
      // a custom resource has one
      const widget = yield* client.create(
        widgets,
        { metadata: { namespace: "ns", name: "w" }, spec: { a: 1 } } as never
      )
      assert.strictEqual((widget as { metadata: { generation?: number } }).metadata.generation, 1)
    }).pipe(Effect.provide(layer())))

  it.effect("dryRun: every write answers as it would and writes nothing", () =>
    Effect.gen(function*() {
      const { client, source } = yield* fakes
      const store = source.fakeFor(configMaps)
      const dry = yield* client.create(configMaps, configMap("a", { k: "1" }), { dryRun: true })
      assert.strictEqual(dry.metadata?.name, "a")
      assert.strictEqual(dry.metadata?.resourceVersion, undefined)
      assert.deepStrictEqual(yield* store.objects, [])
      const real = yield* client.create(configMaps, configMap("a", { k: "1" }))
      const updated = yield* client.update(configMaps, { ...real, data: { k: "2" } }, { dryRun: true })
      assert.deepStrictEqual(updated.data, { k: "2" })
      yield* client.patch(configMaps, "a", { _tag: "MergePatch", patch: { data: { k: "3" } } }, {
        namespace: "ns",
        dryRun: true
      })
      yield* client.apply(configMaps, { metadata: { namespace: "ns", name: "a" }, data: { k: "4" } }, { dryRun: true })
      const deleted = yield* client.delete(configMaps, "a", { namespace: "ns", dryRun: true })
      assert.strictEqual(deleted._tag, "Object")
      assert.deepStrictEqual(yield* store.objects, [real])
      assert.strictEqual(yield* store.resourceVersion, "1")
    }).pipe(Effect.provide(layer())))

  it.effect("delete: the last state at a new resourceVersion; preconditions on uid and resourceVersion", () =>
    Effect.gen(function*() {
      const { client, source } = yield* fakes
      const cm = yield* client.create(configMaps, configMap("a"))
      assert.strictEqual(
        yield* failureOf(client.delete(configMaps, "a", { namespace: "ns", preconditions: { uid: "other" } })),
        `Conflict 409: Operation cannot be fulfilled on configmaps "a": Precondition failed: UID in precondition: ` +
          `other, UID in object meta: ${cm.metadata?.uid}`
      )
      assert.strictEqual(
        yield* failureOf(client.delete(configMaps, "a", { namespace: "ns", preconditions: { resourceVersion: "9" } })),
        `Conflict 409: Operation cannot be fulfilled on configmaps "a": Precondition failed: ResourceVersion in ` +
          `precondition: 9, ResourceVersion in object meta: 1`
      )
      const deleted = yield* client.delete(configMaps, "a", {
        namespace: "ns",
        preconditions: { uid: cm.metadata?.uid, resourceVersion: "1" }
      })
      assert.strictEqual(deleted._tag === "Object" ? deleted.object.metadata?.resourceVersion : undefined, "2")
      assert.deepStrictEqual(yield* source.fakeFor(configMaps).objects, [])
    }).pipe(Effect.provide(layer())))

  it.effect("list, listAll and watch read the store, with selectors; derive is the same fake", () =>
    Effect.gen(function*() {
      const { client } = yield* fakes
      yield* client.create(configMaps, configMap("a", {}, { labels: { app: "web" } }))
      yield* client.create(configMaps, configMap("b"))
      yield* client.create(configMaps, { metadata: { namespace: "other", name: "c", labels: { app: "web" } } })
      const web = yield* client.list(configMaps, { labelSelector: "app=web" })
      assert.deepStrictEqual(web.items.map((cm) => cm.metadata?.name), ["a", "c"])
      const inNs = yield* client.list(configMaps, { namespace: "ns", limit: 1 })
      assert.deepStrictEqual(inNs.items.map((cm) => cm.metadata?.name), ["a"])
      assert.isDefined(inNs.continue)
      const all = yield* client.listAll(configMaps, { fieldSelector: "metadata.name!=b" })
      assert.deepStrictEqual(all.items.map((cm) => cm.metadata?.name), ["a", "c"])
      assert.strictEqual(all.resourceVersion, "3")
      const tooMany = yield* failureOf(client.listAll(configMaps, { maxItems: 2 }))
      assert.match(tooMany, /^DecodeError: .*more than listAll's maxItems \(2\)/)

      const derived = yield* client.derive({ qps: 1 })
      const events = yield* derived.watch(configMaps, { namespace: "ns", resourceVersion: "3" }).pipe(
        Stream.take(2),
        Stream.runCollect,
        Effect.forkScoped
      )
      yield* derived.update(configMaps, configMap("b", { k: "v" }))
      yield* client.delete(configMaps, "a", { namespace: "ns" })
      yield* client.delete(configMaps, "c", { namespace: "other" })
      const seen = yield* Fiber.join(events)
      assert.deepStrictEqual(
        seen.map((e) => `${e.type} ${(e.object as ConfigMap).metadata?.name}@${e.object.metadata?.resourceVersion}`),
        ["MODIFIED b@4", "DELETED a@5"]
      )
    }).pipe(Effect.provide(layer())))
})

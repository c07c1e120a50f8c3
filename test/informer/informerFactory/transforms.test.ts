/**
 * InformerFactory: managedFields stripped by default (or kept), and the default transform before the informer's.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { TestClock } from "effect/testing"
import * as InformerFactory from "../../../src/InformerFactory.js"
import type { KubeObject } from "../../../src/KubeObject.js"
import * as Resource from "../../../src/Resource.js"
import { obj, setup } from "./fixtures.js"

describe("InformerFactory - options", () => {
  it.effect("managedFields are stripped by default, without touching the source's objects", () =>
    Effect.gen(function*() {
      const { factory, fakes } = yield* setup()
      const managedFields = [{ manager: "kubectl", operation: "Apply" }]
      const fake = fakes.fakeFor(Resource.pods)
      yield* fake.add({ metadata: { namespace: "ns", name: "a", uid: "a", managedFields } })
      const informer = yield* factory.informerFor(Resource.pods)
      yield* factory.start
      yield* factory.waitForCacheSync()
      yield* fake.add({ metadata: { namespace: "ns", name: "b", uid: "b", managedFields } })
      yield* TestClock.adjust(0)
      const cached = yield* informer.indexer.list
      assert.lengthOf(cached, 2)
      for (const o of cached) {
        assert.isUndefined(o.metadata?.managedFields)
        assert.notProperty(o.metadata, "managedFields")
        assert.strictEqual(o.metadata?.namespace, "ns")
      }
      // the objects the source handed out are shared: they must not be mutated
      for (const o of yield* fake.objects) assert.deepStrictEqual(o.metadata?.managedFields, managedFields)
    }))

  it.effect("stripManagedFields: false keeps managedFields", () =>
    Effect.gen(function*() {
      const { factory, fakes } = yield* setup({ stripManagedFields: false })
      const managedFields = [{ manager: "kubectl", operation: "Apply" }]
      yield* fakes.fakeFor(Resource.pods).add({ metadata: { namespace: "ns", name: "a", managedFields } })
      const informer = yield* factory.informerFor(Resource.pods)
      yield* factory.start
      yield* factory.waitForCacheSync()
      const [cached] = yield* informer.indexer.list
      assert.deepStrictEqual(cached.metadata?.managedFields, managedFields)
    }))

  it("stripManagedFields returns the object unchanged when there is nothing to strip", () => {
    const plain: KubeObject = { metadata: { name: "a" } }
    assert.strictEqual(InformerFactory.stripManagedFields(plain), plain)
    const withFields: KubeObject = { metadata: { name: "a", managedFields: [] }, spec: { x: 1 } } as KubeObject
    const stripped = InformerFactory.stripManagedFields(withFields)
    assert.deepStrictEqual(stripped, { metadata: { name: "a" }, spec: { x: 1 } } as KubeObject)
    assert.deepStrictEqual(withFields.metadata?.managedFields, [])
  })

  it.effect("defaultTransform runs on every informer, before the informer's own transform", () =>
    Effect.gen(function*() {
      const { factory, fakes } = yield* setup({
        defaultTransform: (o) => ({ ...o, metadata: { ...o.metadata, annotations: { seen: "default" } } })
      })
      yield* fakes.fakeFor(Resource.pods).add(obj("ns", "a"))
      yield* fakes.fakeFor(Resource.configMaps).add(obj("ns", "c"))
      const pods = yield* factory.informerFor(Resource.pods, {
        transform: (o) => ({
          ...o,
          metadata: { ...o.metadata, labels: { after: o.metadata?.annotations?.seen ?? "none" } }
        })
      })
      const configMaps = yield* factory.informerFor(Resource.configMaps)
      yield* factory.start
      yield* factory.waitForCacheSync()
      const [pod] = yield* pods.indexer.list
      assert.deepStrictEqual(pod.metadata?.annotations, { seen: "default" })
      assert.deepStrictEqual(pod.metadata?.labels, { after: "default" })
      const [configMap] = yield* configMaps.indexer.list
      assert.deepStrictEqual(configMap.metadata?.annotations, { seen: "default" })
    }))
})

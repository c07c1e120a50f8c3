/**
 * InformerFactory: informerFor deduplicates by resource and scope (equivalent selectors, the default and ignored
 * namespaces, concurrent requests); malformed selectors are typed errors.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Scheduler } from "effect"
import * as Resource from "../../../src/Resource.js"
import { widgets } from "../../fixtures/index.js"
import { setup } from "./fixtures.js"

describe("InformerFactory - informerFor", () => {
  it.effect("same resource and scope returns the same informer, also for equivalent selectors", () =>
    Effect.gen(function*() {
      const { factory } = yield* setup()
      const a = yield* factory.informerFor(Resource.pods, { namespace: "default", labelSelector: "a=b,c=d" })
      const b = yield* factory.informerFor(Resource.pods, { namespace: "default", labelSelector: "c=d, a=b" })
      assert.strictEqual(a, b)
      const c = yield* factory.informerFor(Resource.pods, { namespace: "default", labelSelector: "x in (2, 1)" })
      const d = yield* factory.informerFor(Resource.pods, { namespace: "default", labelSelector: "x in (1,2,1)" })
      assert.strictEqual(c, d)
      // "==" and "=" are the same requirement
      const e = yield* factory.informerFor(Resource.pods, { labelSelector: "a==b" })
      const f = yield* factory.informerFor(Resource.pods, { labelSelector: "a=b" })
      assert.strictEqual(e, f)
      // an all-blank selector is no selector; the default namespace is all namespaces
      const all = yield* factory.informerFor(Resource.pods)
      assert.strictEqual(yield* factory.informerFor(Resource.pods, { namespace: "", labelSelector: "  " }), all)
      // a cluster-scoped resource ignores the namespace
      const nodes = yield* factory.informerFor(Resource.nodes)
      assert.strictEqual(yield* factory.informerFor(Resource.nodes, { namespace: "x" }), nodes)
      assert.strictEqual(nodes.name, "nodes")
      assert.strictEqual(all.name, "pods in all namespaces")
      assert.strictEqual(a.name, "pods in default (a=b,c=d)")
      assert.lengthOf(yield* factory.status, 5)
    }))

  it.effect("a different namespace, selector or resource gives a different informer", () =>
    Effect.gen(function*() {
      const { factory } = yield* setup()
      const base = yield* factory.informerFor(Resource.pods, { namespace: "default" })
      const others = [
        yield* factory.informerFor(Resource.pods, { namespace: "other" }),
        yield* factory.informerFor(Resource.pods),
        yield* factory.informerFor(Resource.pods, { namespace: "default", labelSelector: "app=web" }),
        yield* factory.informerFor(Resource.pods, { namespace: "default", fieldSelector: "metadata.name=x" }),
        yield* factory.informerFor(Resource.configMaps, { namespace: "default" }),
        yield* factory.informerFor(widgets, { namespace: "default" })
      ]
      assert.strictEqual(new Set([base, ...others]).size, 7)
    }))

  it.effect("concurrent requests for the same informer create it once", () =>
    Effect.gen(function*() {
      const { factory } = yield* setup()
      // Yield every 32 operations so that the two requests interleave (creating an informer takes more).
      const [a, b] = yield* Effect.all(
        [factory.informerFor(Resource.pods), factory.informerFor(Resource.pods)],
        { concurrency: "unbounded" }
      ).pipe(Effect.provideService(Scheduler.MaxOpsBeforeYield, 32))
      assert.strictEqual(a, b)
      assert.lengthOf(yield* factory.status, 1)
    }))

  it.effect("malformed selectors are typed parse errors", () =>
    Effect.gen(function*() {
      const { factory } = yield* setup()
      const label = yield* Effect.flip(factory.informerFor(Resource.pods, { labelSelector: "a in (b" }))
      assert.strictEqual(label._tag, "LabelSelectorParseError")
      const field = yield* Effect.flip(factory.informerFor(Resource.pods, { fieldSelector: "a~b" }))
      assert.strictEqual(field._tag, "FieldSelectorParseError")
      const lister = yield* Effect.flip(factory.listerFor(Resource.pods, { labelSelector: "=" }))
      assert.strictEqual(lister._tag, "LabelSelectorParseError")
      assert.lengthOf(yield* factory.status, 0)
    }))
})

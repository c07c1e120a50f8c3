/**
 * Indexer: failures are typed and leave the store unchanged (objects without a name, unknown indexes, throwing
 * index functions).
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Indexer from "../../../src/Indexer.js"
import type { KubeObject } from "../../../src/KubeObject.js"
import type { Pod } from "./fixtures.js"
import { pod, writable } from "./fixtures.js"

describe("Indexer", () => {
  it.effect("an object without metadata.name is rejected with KeyError on add/update/delete/get, store unchanged", () =>
    Effect.gen(function*() {
      const store = Indexer.unsafeMake<KubeObject>({
        indexers: { [Indexer.namespaceIndex]: Indexer.metaNamespaceIndexFunction }
      })
      yield* store.add(pod("ok", { namespace: "ns", rv: "1" }))
      const nameless: KubeObject = { metadata: { namespace: "ns", resourceVersion: "2" } }
      const noMetadata: KubeObject = {}
      for (const obj of [nameless, noMetadata]) {
        for (const write of [store.add(obj), store.update(obj), store.delete(obj), store.get(obj)]) {
          const error = yield* Effect.flip(write)
          assert.strictEqual(error._tag, "KeyError")
        }
        const replaceError = yield* Effect.flip(store.replace([pod("x"), obj], "9"))
        assert.strictEqual(replaceError._tag, "KeyError")
      }
      assert.deepStrictEqual(yield* store.listKeys, ["ns/ok"])
      assert.deepStrictEqual(yield* store.indexKeys(Indexer.namespaceIndex, "ns"), ["ns/ok"])
      assert.strictEqual(yield* store.lastResourceVersion, "1")
    }))

  it.effect("unknown index -> IndexNotFoundError (index, indexKeys, byIndex); listIndexFuncValues -> empty", () =>
    Effect.gen(function*() {
      const store = Indexer.unsafeMake<Pod>()
      yield* store.add(pod("a"))
      const errors = [
        yield* Effect.flip(store.index("nope", pod("a"))),
        yield* Effect.flip(store.indexKeys("nope", "v")),
        yield* Effect.flip(store.byIndex("nope", "v"))
      ]
      for (const error of errors) {
        assert.strictEqual(error._tag, "IndexNotFoundError")
        assert.isTrue(error._tag === "IndexNotFoundError" && error.index === "nope")
      }
      assert.strictEqual((store.unsafeByIndex("nope", "v") as Indexer.IndexNotFoundError)._tag, "IndexNotFoundError")
      assert.deepStrictEqual(yield* store.listIndexFuncValues("nope"), [])
    }))

  describe("a throwing index function yields IndexFunctionError and leaves the store unchanged", () => {
    const strict = () =>
      writable<Pod>({
        indexers: {
          [Indexer.namespaceIndex]: Indexer.metaNamespaceIndexFunction,
          byApp: (obj) => {
            const app = obj.metadata.labels?.app
            if (app === "boom") throw new Error("boom")
            return [app ?? ""]
          }
        }
      })
    const snapshot = (store: Indexer.Indexer.Service<Pod>) =>
      Effect.gen(function*() {
        return {
          items: (yield* store.list).map((p) => `${p.metadata.name}:${p.metadata.labels?.app}`).sort(),
          web: yield* store.indexKeys("byApp", "web"),
          db: yield* store.indexKeys("byApp", "db"),
          ns: yield* store.indexKeys(Indexer.namespaceIndex, "ns"),
          apps: [...(yield* store.listIndexFuncValues("byApp"))].sort(),
          rv: yield* store.lastResourceVersion
        }
      })
    const seeded = Effect.gen(function*() {
      const store = strict()
      yield* store.add(pod("a", { namespace: "ns", rv: "1", labels: { app: "web" } }))
      yield* store.add(pod("b", { namespace: "ns", rv: "2", labels: { app: "db" } }))
      return store
    })
    const boom = (name: string, rv: string) => pod(name, { namespace: "ns", rv, labels: { app: "boom" } })

    it.effect("add", () =>
      Effect.gen(function*() {
        const store = yield* seeded
        const before = yield* snapshot(store)
        const error = yield* Effect.flip(store.add(boom("c", "3")))
        assert.strictEqual(error._tag, "IndexFunctionError")
        assert.isTrue(error._tag === "IndexFunctionError" && error.index === "byApp" && error.key === "ns/c")
        assert.deepStrictEqual(yield* snapshot(store), before)
        assert.isUndefined(store.unsafeGetByKey("ns/c"))
        assert.instanceOf(store.unsafeAdd("ns/c", boom("c", "3")), Indexer.IndexFunctionError)
        assert.deepStrictEqual(yield* snapshot(store), before)
      }))

    it.effect("update", () =>
      Effect.gen(function*() {
        const store = yield* seeded
        const before = yield* snapshot(store)
        const error = yield* Effect.flip(store.update(boom("a", "3")))
        assert.strictEqual(error._tag, "IndexFunctionError")
        assert.deepStrictEqual(yield* snapshot(store), before)
        assert.strictEqual(store.unsafeGetByKey("ns/a")?.metadata.labels?.app, "web")
      }))

    it.effect("replace", () =>
      Effect.gen(function*() {
        const store = yield* seeded
        const before = yield* snapshot(store)
        const error = yield* Effect.flip(
          store.replace([pod("x", { namespace: "ns", rv: "5", labels: { app: "web" } }), boom("y", "6")], "7")
        )
        assert.strictEqual(error._tag, "IndexFunctionError")
        assert.deepStrictEqual(yield* snapshot(store), before)
      }))

    it.effect("addIndexers", () =>
      Effect.gen(function*() {
        const store = yield* seeded
        const before = yield* snapshot(store)
        const error = yield* Effect.flip(store.addIndexers({
          fine: () => ["x"],
          picky: (obj) => {
            if (obj.metadata.name === "b") throw new Error("no b")
            return ["y"]
          }
        }))
        assert.strictEqual(error._tag, "IndexFunctionError")
        assert.deepStrictEqual(Object.keys(yield* store.getIndexers).sort(), ["byApp", "namespace"])
        assert.isFalse(store.unsafeHasIndex("fine"))
        assert.isFalse(store.unsafeHasIndex("picky"))
        assert.deepStrictEqual(yield* snapshot(store), before)
      }))

    it.effect("index(name, probe) with a throwing probe", () =>
      Effect.gen(function*() {
        const store = yield* seeded
        const error = yield* Effect.flip(store.index("byApp", boom("q", "1")))
        assert.strictEqual(error._tag, "IndexFunctionError")
      }))
  })
})

/**
 * Indexer: keys (metaNamespaceKey, deletionHandlingMetaNamespaceKey, splitMetaNamespaceKey).
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as Indexer from "../../../src/Indexer.js"
import type { KubeObject } from "../../../src/KubeObject.js"
import { DeletedFinalStateUnknown } from "../../../src/KubeObject.js"
import type { Pod } from "./fixtures.js"
import { pod } from "./fixtures.js"

describe("keys", () => {
  it.effect("metaNamespaceKey: ns/name for namespaced objects, name for cluster-scoped ones", () =>
    Effect.sync(() => {
      assert.deepStrictEqual(
        Indexer.metaNamespaceKey(pod("web", { namespace: "default" })),
        Result.succeed("default/web")
      )
      assert.deepStrictEqual(Indexer.metaNamespaceKey(pod("node-1")), Result.succeed("node-1"))
      assert.deepStrictEqual(Indexer.metaNamespaceKey(pod("node-1", { namespace: "" })), Result.succeed("node-1"))
    }))

  it.effect("metaNamespaceKey: no metadata / no name / empty name / non-object -> KeyError, never a crash", () =>
    Effect.sync(() => {
      const reason = (u: unknown) =>
        Result.match(Indexer.metaNamespaceKey(u), { onFailure: (e) => e.reason, onSuccess: (key) => `key ${key}` })
      assert.strictEqual(reason({}), "MissingMetadata")
      assert.strictEqual(reason({ metadata: null }), "MissingMetadata")
      assert.strictEqual(reason(null), "MissingMetadata")
      assert.strictEqual(reason(42), "MissingMetadata")
      assert.strictEqual(reason({ metadata: {} }), "MissingName")
      assert.strictEqual(reason({ metadata: { name: "" } }), "MissingName")
      assert.strictEqual(reason({ metadata: { name: 7 } }), "MissingName")
    }))

  it.effect("deletionHandlingMetaNamespaceKey: a tombstone is named by its key, an object by metaNamespaceKey", () =>
    Effect.sync(() => {
      const tombstone = new DeletedFinalStateUnknown<Pod>({ key: "ns/gone", obj: undefined })
      assert.deepStrictEqual(Indexer.deletionHandlingMetaNamespaceKey(tombstone), Result.succeed("ns/gone"))
      const withObj = new DeletedFinalStateUnknown({ key: "other/key", obj: pod("web", { namespace: "default" }) })
      assert.deepStrictEqual(Indexer.deletionHandlingMetaNamespaceKey(withObj), Result.succeed("other/key"))
      assert.deepStrictEqual(
        Indexer.deletionHandlingMetaNamespaceKey(pod("web", { namespace: "default" })),
        Result.succeed("default/web")
      )
      assert.isTrue(Result.isFailure(Indexer.deletionHandlingMetaNamespaceKey<KubeObject>({})))
    }))

  it.effect("splitMetaNamespaceKey: 1 part, 2 parts, 3 parts -> KeyError, empty -> KeyError", () =>
    Effect.sync(() => {
      assert.deepStrictEqual(Indexer.splitMetaNamespaceKey("web"), Result.succeed({ namespace: "", name: "web" }))
      assert.deepStrictEqual(
        Indexer.splitMetaNamespaceKey("default/web"),
        Result.succeed({ namespace: "default", name: "web" })
      )
      const malformed = (key: string) =>
        Result.match(Indexer.splitMetaNamespaceKey(key), { onFailure: (e) => e.reason, onSuccess: () => "ok" })
      assert.strictEqual(malformed("a/b/c"), "MalformedKey")
      // client-go returns ("", "", nil) for "" and a name "" for "ns/": we reject both, they name no object.
      assert.strictEqual(malformed(""), "MalformedKey")
      assert.strictEqual(malformed("ns/"), "MalformedKey")
      // As client-go: a leading slash is an empty namespace.
      assert.deepStrictEqual(Indexer.splitMetaNamespaceKey("/web"), Result.succeed({ namespace: "", name: "web" }))
    }))

  it.effect("splitMetaNamespaceKey inverts metaNamespaceKey", () =>
    Effect.sync(() => {
      for (const obj of [pod("a"), pod("b", { namespace: "ns" })]) {
        const key = Result.getOrThrow(Indexer.metaNamespaceKey(obj))
        const split = Result.getOrThrow(Indexer.splitMetaNamespaceKey(key))
        assert.deepStrictEqual(split, { namespace: obj.metadata.namespace ?? "", name: obj.metadata.name })
      }
    }))
})

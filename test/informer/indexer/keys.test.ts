/**
 * Indexer: keys (metaNamespaceKey, deletionHandlingMetaNamespaceKey, splitMetaNamespaceKey).
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
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
        Either.right("default/web")
      )
      assert.deepStrictEqual(Indexer.metaNamespaceKey(pod("node-1")), Either.right("node-1"))
      assert.deepStrictEqual(Indexer.metaNamespaceKey(pod("node-1", { namespace: "" })), Either.right("node-1"))
    }))

  it.effect("metaNamespaceKey: no metadata / no name / empty name / non-object -> KeyError, never a crash", () =>
    Effect.sync(() => {
      const reason = (u: unknown) =>
        Either.match(Indexer.metaNamespaceKey(u), { onLeft: (e) => e.reason, onRight: (key) => `key ${key}` })
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
      assert.deepStrictEqual(Indexer.deletionHandlingMetaNamespaceKey(tombstone), Either.right("ns/gone"))
      const withObj = new DeletedFinalStateUnknown({ key: "other/key", obj: pod("web", { namespace: "default" }) })
      assert.deepStrictEqual(Indexer.deletionHandlingMetaNamespaceKey(withObj), Either.right("other/key"))
      assert.deepStrictEqual(
        Indexer.deletionHandlingMetaNamespaceKey(pod("web", { namespace: "default" })),
        Either.right("default/web")
      )
      assert.isTrue(Either.isLeft(Indexer.deletionHandlingMetaNamespaceKey<KubeObject>({})))
    }))

  it.effect("splitMetaNamespaceKey: 1 part, 2 parts, 3 parts -> KeyError, empty -> KeyError", () =>
    Effect.sync(() => {
      assert.deepStrictEqual(Indexer.splitMetaNamespaceKey("web"), Either.right({ namespace: "", name: "web" }))
      assert.deepStrictEqual(
        Indexer.splitMetaNamespaceKey("default/web"),
        Either.right({ namespace: "default", name: "web" })
      )
      const malformed = (key: string) =>
        Either.match(Indexer.splitMetaNamespaceKey(key), { onLeft: (e) => e.reason, onRight: () => "ok" })
      assert.strictEqual(malformed("a/b/c"), "MalformedKey")
      // client-go returns ("", "", nil) for "" and a name "" for "ns/": we reject both, they name no object.
      assert.strictEqual(malformed(""), "MalformedKey")
      assert.strictEqual(malformed("ns/"), "MalformedKey")
      // As client-go: a leading slash is an empty namespace.
      assert.deepStrictEqual(Indexer.splitMetaNamespaceKey("/web"), Either.right({ namespace: "", name: "web" }))
    }))

  it.effect("splitMetaNamespaceKey inverts metaNamespaceKey", () =>
    Effect.sync(() => {
      for (const obj of [pod("a"), pod("b", { namespace: "ns" })]) {
        const key = Either.getOrThrow(Indexer.metaNamespaceKey(obj))
        const split = Either.getOrThrow(Indexer.splitMetaNamespaceKey(key))
        assert.deepStrictEqual(split, { namespace: obj.metadata.namespace ?? "", name: obj.metadata.name })
      }
    }))
})

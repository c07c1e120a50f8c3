/**
 * The keys of the Controller's one source mechanism (`watch`): the primary's own key, a child's owners',
 * another resource's mapped keys; an update's old state first, a tombstone's key, no duplicates.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { mappedKeys, ownerKeysOf, primaryKeys } from "../../src/internal/controller/controller.js"
import { DeletedFinalStateUnknown } from "../../src/KubeObject.js"

const cm = (namespace: string, name: string, owners: ReadonlyArray<{ name: string; controller?: boolean }> = []) => ({
  metadata: {
    namespace,
    name,
    ownerReferences: owners.map((o) => ({ apiVersion: "apps/v1", kind: "Deployment", ...o }))
  }
})

const deployments = { group: "apps", kind: "Deployment", namespaced: true }

describe("Controller sources: keys of an event", () => {
  it("the primary: its own key; a tombstone's key even without its last state; none without a name", () => {
    assert.deepStrictEqual(primaryKeys(cm("ns", "a"), undefined), ["ns/a"])
    assert.deepStrictEqual(primaryKeys(cm("ns", "a"), cm("ns", "a")), ["ns/a"])
    assert.deepStrictEqual(primaryKeys(new DeletedFinalStateUnknown({ key: "ns/b", obj: undefined }), undefined), [
      "ns/b"
    ])
    assert.deepStrictEqual(primaryKeys({ metadata: {} }, undefined), [])
  })

  it("a child: its controller owner's key, or every owner's; an update's old owners first, without duplicates", () => {
    const child = cm("ns", "c", [{ name: "x" }, { name: "y", controller: true }])
    assert.deepStrictEqual(ownerKeysOf(deployments, false)(child, undefined), ["ns/y"])
    assert.deepStrictEqual(ownerKeysOf(deployments, true)(child, undefined), ["ns/x", "ns/y"])
    const before = cm("ns", "c", [{ name: "z", controller: true }])
    assert.deepStrictEqual(ownerKeysOf(deployments, false)(child, before), ["ns/z", "ns/y"])
    assert.deepStrictEqual(ownerKeysOf(deployments, false)(child, child), ["ns/y"])
    // a tombstone: its last state's owners; none when unknown
    assert.deepStrictEqual(
      ownerKeysOf(deployments, false)(new DeletedFinalStateUnknown({ key: "ns/c", obj: child }), undefined),
      ["ns/y"]
    )
    assert.deepStrictEqual(
      ownerKeysOf(deployments, false)(new DeletedFinalStateUnknown({ key: "ns/c", obj: undefined }), undefined),
      []
    )
  })

  it.effect("another resource: map's keys (plain or an Effect), old state first, without duplicates", () =>
    Effect.gen(function*() {
      const plain = mappedKeys((o: { metadata: { name: string } }) => [`ns/${o.metadata.name}`, "ns/shared"])
      assert.deepStrictEqual(plain(cm("x", "new"), cm("x", "old")), ["ns/old", "ns/shared", "ns/new"])
      assert.deepStrictEqual(plain(new DeletedFinalStateUnknown({ key: "x/gone", obj: undefined }), undefined), [])
      const looked = mappedKeys((o: { metadata: { name: string } }) =>
        Effect.succeed([{ key: `ns/${o.metadata.name}`, namespace: "ns", name: o.metadata.name }])
      )
      const keys = looked(cm("x", "a"), undefined)
      assert.isTrue(Effect.isEffect(keys))
      assert.deepStrictEqual(yield* (keys as Effect.Effect<ReadonlyArray<string>>), ["ns/a"])
    }))
})

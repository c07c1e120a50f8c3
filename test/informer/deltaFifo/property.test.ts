/**
 * DeltaFifo property tests: a consumer that applies every delta as an informer would ends where the server is.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Arbitrary from "effect/Arbitrary"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Schema from "effect/Schema"
import * as DeltaFifo from "../../../src/DeltaFifo.js"
import * as Indexer from "../../../src/Indexer.js"
import * as IndexerStore from "../../../src/internal/informer/indexerStore.js"
import { boolean, integer, oneof } from "../../fixtures/arbitrary.js"
import type { Delta, Options, TestObj } from "./fixtures.js"
import { obj, objectOf, tomb } from "./fixtures.js"

type Op =
  | { readonly _tag: "add" | "update" | "delete" | "deleteTombstone"; readonly key: number }
  | { readonly _tag: "replace"; readonly keys: ReadonlyArray<number>; readonly reuseHeld: boolean }
  | { readonly _tag: "resync" | "bookmark" }
  | { readonly _tag: "pop"; readonly max: number }

const keyArb = integer({ min: 0, max: 5 })
const opArb: Arbitrary.Arbitrary<Op> = oneof<Op>(
  { arbitrary: Arbitrary.all({ _tag: Arbitrary.Constant("add"), key: keyArb }), weight: 4 },
  { arbitrary: Arbitrary.all({ _tag: Arbitrary.Constant("update"), key: keyArb }), weight: 4 },
  { arbitrary: Arbitrary.all({ _tag: Arbitrary.Constant("delete"), key: keyArb }), weight: 3 },
  { arbitrary: Arbitrary.all({ _tag: Arbitrary.Constant("deleteTombstone"), key: keyArb }), weight: 1 },
  {
    arbitrary: Arbitrary.all({
      _tag: Arbitrary.Constant("replace"),
      keys: Arbitrary.schema(
        Schema.Array(Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 5 }))).check(
          Schema.isUnique(),
          Schema.isMaxLength(6)
        )
      ),
      reuseHeld: boolean()
    }),
    weight: 2
  },
  { arbitrary: Arbitrary.all({ _tag: Arbitrary.schema(Schema.Literals(["resync", "bookmark"])) }), weight: 1 },
  {
    arbitrary: Arbitrary.all({ _tag: Arbitrary.Constant("pop"), max: integer({ min: 1, max: 4 }) }),
    weight: 5
  }
)

const runScenario = (options: Options, ops: ReadonlyArray<Op>): void => {
  let counter = 0
  const next = () => ++counter
  // the consumer as the informer's controller is: the store with its internal writer
  const consumer = IndexerStore.make<TestObj>({ keyFunction: Indexer.deletionHandlingMetaNamespaceKey })
  const transform = (o: TestObj): TestObj => ({ ...o, xfrm: (o.xfrm ?? 0) + 1 })
  const fifo = DeltaFifo.unsafeMake<TestObj>({ ...options, knownObjects: consumer, transform })
  const coalescing = fifo.mode === "coalescing"
  // The reference: the last replace's list, then every later add/update/delete.
  let model = new Map<string, string>()
  let wasSynced = false

  const transformedOnce = (o: TestObj | undefined, what: string) => {
    if (o !== undefined) assert.strictEqual(o.xfrm, 1, `${what} transformed ${o.xfrm ?? 0} times`)
  }
  const apply = (delta: Delta): void => {
    switch (delta._tag) {
      case "Added":
      case "Updated":
      case "Replaced":
      case "Sync": {
        transformedOnce(delta.object, delta._tag)
        consumer.unsafeAdd(delta.key, delta.object)
        return
      }
      case "Deleted": {
        transformedOnce(objectOf(delta), "Deleted")
        consumer.unsafeDelete(delta.key, delta.object)
        return
      }
      case "ReplacedAll": {
        for (const o of delta.objects) transformedOnce(o, "ReplacedAll")
        assert.isUndefined(consumer.unsafeReplace(delta.objects, delta.resourceVersion))
        return
      }
      case "SyncAll":
      case "Bookmark":
        return
    }
  }
  const popOnce = (max: number) => {
    const synced = Effect.runSync(fifo.hasSynced)
    Effect.runSync(fifo.popBatch(max, (popped) =>
      Effect.sync(() => {
        assert.strictEqual(popped.isInInitialList, !synced)
        assert.isAbove(popped.deltas.length, 0)
        assert.isAtMost(popped.deltas.length, coalescing ? Infinity : max)
        popped.deltas.forEach(apply)
      })))
  }
  const run = (effect: Effect.Effect<void, DeltaFifo.EnqueueError>) => {
    const exit = Effect.runSyncExit(effect)
    assert.isTrue(Exit.isSuccess(exit), String(exit))
  }

  for (const op of ops) {
    switch (op._tag) {
      case "add":
      case "update": {
        const o = obj(`k${op.key}`, next())
        run(op._tag === "add" ? fifo.add(o) : fifo.update(o))
        model.set(o.metadata.name, o.metadata.resourceVersion)
        break
      }
      case "delete": {
        run(fifo.delete(obj(`k${op.key}`, next())))
        model.delete(`k${op.key}`)
        break
      }
      case "deleteTombstone": {
        const key = `k${op.key}`
        run(fifo.delete(tomb(key, consumer.unsafeGetByKey(key))))
        model.delete(key)
        break
      }
      case "replace": {
        const list = op.keys.map((k) => {
          const held = op.reuseHeld ? consumer.unsafeGetByKey(`k${k}`) : undefined
          return held ?? obj(`k${k}`, next())
        })
        run(fifo.replace(list, String(next())))
        model = new Map(list.map((o) => [o.metadata.name, o.metadata.resourceVersion]))
        break
      }
      case "resync": {
        run(fifo.resync)
        break
      }
      case "bookmark": {
        run(fifo.bookmark(String(next())))
        break
      }
      case "pop": {
        if (fifo.unsafeLength() > 0) popOnce(op.max)
        break
      }
    }
    if (coalescing) {
      const keys = Effect.runSync(fifo.listKeys)
      assert.strictEqual(new Set(keys).size, keys.length, `duplicate queued key in ${keys.join(",")}`)
      assert.strictEqual(keys.length, fifo.unsafeLength())
    }
    const synced = Effect.runSync(fifo.hasSynced)
    assert.isTrue(synced || !wasSynced, "hasSynced went back to false")
    wasSynced = synced
  }
  while (fifo.unsafeLength() > 0) popOnce(3)

  const state = new Map(Array.from(consumer.unsafeValues(), (o) => [o.metadata.name, o.metadata.resourceVersion]))
  assert.deepStrictEqual(state, model)
}

describe("property: draining the queue into an informer-like consumer reproduces the server state", () => {
  const scenarios: ReadonlyArray<readonly [string, Options]> = [
    ["coalescing", { mode: "coalescing" }],
    ["coalescing (Sync from replace)", { mode: "coalescing", emitReplaced: false }],
    ["inOrder atomic", { mode: "inOrder", atomic: true }],
    ["inOrder non-atomic", { mode: "inOrder", atomic: false }]
  ]
  for (const [name, options] of scenarios) {
    it.prop(
      `${name}: random add/update/delete/replace/resync/pop on 6 keys`,
      [Arbitrary.array(opArb, { maxLength: 60 })],
      ([ops]) => runScenario(options, ops),
      // size: arrays up to their maxLength, as fast-check generates them when maxLength is given
      { arbitrary: { runs: 250, size: 60 } }
    )
  }
})

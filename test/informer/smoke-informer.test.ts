import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, Scope } from "effect"
import * as FakeListerWatcher from "../../src/FakeListerWatcher.js"
import type { KubeObject } from "../../src/KubeObject.js"
import * as SharedInformer from "../../src/SharedInformer.js"
import { advance, pod as fixturePod, settle } from "../fixtures/index.js"

const pod = (name: string, extra: Record<string, unknown> = {}): KubeObject => ({
  ...fixturePod(name, { uid: name }),
  ...extra
})

describe("smoke informer", () => {
  describe.each(["inOrder", "coalescing"] as const)("%s", (fifo) => {
    it.effect(`informer end to end`, () =>
      Effect.gen(function*() {
        const scope = yield* Scope.make()
        const fake = yield* FakeListerWatcher.make()
        yield* fake.add(pod("a"))
        const informer = yield* SharedInformer.make(fake, { fifo }).pipe(Scope.provide(scope))
        const seen: Array<string> = []
        const reg = yield* informer.addEventHandler({
          onAdd: (o, init) => Effect.sync(() => seen.push(`add ${o.metadata?.name} ${init}`)),
          onUpdate: (o, n) =>
            Effect.sync(() => seen.push(`update ${o.metadata?.resourceVersion}->${n.metadata?.resourceVersion}`)),
          onDelete: (o) => Effect.sync(() => seen.push(`delete ${"_tag" in o ? "tomb " + o.key : o.metadata?.name}`))
        })
        yield* informer.start
        yield* settle
        assert.isTrue(yield* informer.hasSynced)
        assert.isTrue(yield* reg.hasSynced)
        yield* fake.add(pod("b"))
        yield* fake.modify(pod("a", { v: 2 }))
        yield* settle
        const late: Array<string> = []
        yield* informer.addEventHandler({
          onAdd: (o, init) => Effect.sync(() => late.push(`add ${o.metadata?.name} ${init}`))
        })
        yield* fake.deleteDropWatch(pod("b"))
        yield* fake.resetWatch
        yield* advance("1 minute")
        // The relist re-delivers unchanged a as a sync update: without a resync timer every handler stays "syncing".
        const expected = ["add a true", "add b false", "update 1->3", "delete tomb ns/b", "update 3->3"]
        // coalescing mode (DeltaFIFO) only keeps per-key order: the relist's Replaced precede its tombstones
        assert.deepStrictEqual(
          fifo === "inOrder" ? seen : seen.slice().sort(),
          fifo === "inOrder" ? expected : expected.slice().sort()
        )
        assert.deepStrictEqual(late, ["add a true", "add b true"])
        assert.deepStrictEqual(yield* informer.indexer.listKeys, ["ns/a"])
        yield* Scope.close(scope, Exit.void)
        assert.isTrue(yield* informer.isStopped)
        assert.strictEqual(yield* fake.openWatches, 0)
      }))
  })
})

/**
 * WorkQueue fairness across key groups (`group`): round robin across groups within a priority, FIFO within
 * a group, priorities first. controller-runtime's open PR #3261 describes the same behaviour.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as TestClock from "effect/testing/TestClock"
import { drain, makeQueue } from "./fixtures.js"

const byNamespace = (key: string) => key.slice(0, key.indexOf("/"))

describe("WorkQueue fairness", () => {
  it.effect("within a priority, keys are taken round robin across groups; FIFO within a group", () =>
    Effect.gen(function*() {
      const queue = yield* makeQueue({ group: byNamespace })
      yield* queue.addAll(["a/1", "a/2", "a/3", "a/4", "b/1", "b/2", "c/1"])
      assert.deepStrictEqual(yield* drain(queue), ["a/1", "b/1", "c/1", "a/2", "b/2", "a/3", "a/4"])
    }))

  it.effect("a busy group cannot starve another: one key of a quiet group waits at most one turn per group", () =>
    Effect.gen(function*() {
      const queue = yield* makeQueue({ group: byNamespace })
      yield* queue.addAll(Array.from({ length: 10_000 }, (_, i) => `busy/${i}`))
      yield* queue.process(() => Effect.void)
      yield* queue.add("quiet/1")
      assert.strictEqual(yield* queue.get, "busy/1")
      assert.strictEqual(yield* queue.get, "quiet/1")
    }))

  it.effect("without group the same adds are plain FIFO", () =>
    Effect.gen(function*() {
      const queue = yield* makeQueue()
      yield* queue.addAll(["a/1", "a/2", "b/1", "c/1"])
      assert.deepStrictEqual(yield* drain(queue), ["a/1", "a/2", "b/1", "c/1"])
    }))

  it.effect("priorities come first: the round robin runs within each priority", () =>
    Effect.gen(function*() {
      const queue = yield* makeQueue({ group: byNamespace })
      yield* queue.addAll(["a/1", "a/2", "b/1"], { priority: -100 })
      yield* queue.addAll(["a/3", "b/2", "b/3"], { priority: 0 })
      assert.deepStrictEqual(yield* drain(queue), ["a/3", "b/2", "b/3", "a/1", "b/1", "a/2"])
    }))

  it.effect("a group that empties and comes back joins the end of the ring", () =>
    Effect.gen(function*() {
      const queue = yield* makeQueue({ group: byNamespace })
      yield* queue.addAll(["a/1", "b/1", "b/2", "c/1", "c/2"])
      assert.strictEqual(yield* queue.get, "a/1") // group a is empty now
      yield* queue.add("a/2")
      assert.deepStrictEqual(yield* drain(queue), ["b/1", "c/1", "a/2", "b/2", "c/2"])
    }))

  it.effect("raising a key's priority takes it out of its group's line into the new priority's ring", () =>
    Effect.gen(function*() {
      const queue = yield* makeQueue({ group: byNamespace })
      yield* queue.addAll(["a/1", "a/2", "b/1"])
      yield* queue.add("a/2", { priority: 1 })
      assert.deepStrictEqual(yield* drain(queue), ["a/2", "a/1", "b/1"])
      // the emptied groups of the old level are cleaned up as the ring comes round
      yield* queue.addAll(["b/2", "a/3"])
      assert.deepStrictEqual(yield* drain(queue), ["b/2", "a/3"])
    }))

  it.effect("delayed keys join their group's line when they become ready", () =>
    Effect.gen(function*() {
      const queue = yield* makeQueue({ group: byNamespace })
      yield* queue.addAfter("b/1", "1 second")
      yield* queue.addAll(["a/1", "a/2"])
      yield* TestClock.adjust("1 second")
      assert.deepStrictEqual(yield* drain(queue), ["a/1", "b/1", "a/2"])
    }))

  it.effect("a key re-added while processing rejoins its group at done", () =>
    Effect.gen(function*() {
      const queue = yield* makeQueue({ group: byNamespace })
      yield* queue.addAll(["a/1", "a/2", "b/1"])
      assert.strictEqual(yield* queue.get, "a/1")
      yield* queue.add("a/1")
      yield* queue.done("a/1")
      assert.deepStrictEqual(yield* drain(queue), ["b/1", "a/2", "a/1"])
    }))

  it.effect("the group function is called once per key entering the queue", () =>
    Effect.gen(function*() {
      let calls = 0
      const queue = yield* makeQueue({
        group: (key: string) => {
          calls++
          return byNamespace(key)
        }
      })
      yield* queue.addAll(["a/1", "a/1", "a/1", "b/1"])
      assert.strictEqual(calls, 2)
      yield* drain(queue)
      yield* queue.add("a/1")
      assert.strictEqual(calls, 3)
    }))

  it.effect("group with non-string keys", () =>
    Effect.gen(function*() {
      const queue = yield* makeQueue<{ readonly ns: string; readonly n: number }>({
        key: (k) => `${k.ns}/${k.n}`,
        group: (k) => k.ns
      })
      yield* queue.addAll([{ ns: "x", n: 1 }, { ns: "x", n: 2 }, { ns: "y", n: 1 }])
      assert.deepStrictEqual((yield* drain(queue)).map((k) => `${k.ns}/${k.n}`), ["x/1", "y/1", "x/2"])
    }))
})

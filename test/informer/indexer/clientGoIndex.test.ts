/**
 * Indexer: client-go's index_test.go (index function values, a multi-valued index through add, delete
 * and update).
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Indexer from "../../../src/Indexer.js"
import type { Pod } from "./fixtures.js"
import { pod } from "./fixtures.js"

const names = (objs: ReadonlyArray<Pod>): ReadonlyArray<string> => objs.map((o) => o.metadata.name).sort()

describe("index_test", () => {
  it.effect("TestGetIndexFuncValues: index on label foo, pods bar,bar,biz -> values {bar,biz}", () =>
    Effect.gen(function*() {
      const index = Indexer.unsafeMake<Pod>({
        indexers: { testmodes: (obj) => [obj.metadata.labels?.foo ?? ""] }
      })
      yield* index.add(pod("one", { labels: { foo: "bar" } }))
      yield* index.add(pod("two", { labels: { foo: "bar" } }))
      yield* index.add(pod("tre", { labels: { foo: "biz" } }))
      const values = yield* index.listIndexFuncValues("testmodes")
      assert.deepStrictEqual([...values].sort(), ["bar", "biz"])
    }))

  it.effect("TestMultiIndexKeys: multi-valued byUser index follows add, delete and update", () =>
    Effect.gen(function*() {
      const index = Indexer.unsafeMake<Pod>({
        indexers: { byUser: (obj) => (obj.metadata.annotations?.users ?? "").split(",") }
      })
      const pod1 = pod("one", { annotations: { users: "ernie,bert" } })
      const pod2 = pod("two", { annotations: { users: "bert,oscar" } })
      const pod3 = pod("tre", { annotations: { users: "ernie,elmo" } })
      yield* index.add(pod1)
      yield* index.add(pod2)
      yield* index.add(pod3)

      const expected: ReadonlyArray<readonly [string, ReadonlyArray<string>]> = [
        ["ernie", ["one", "tre"]],
        ["bert", ["one", "two"]],
        ["elmo", ["tre"]],
        ["oscar", ["two"]],
        ["elmo1", []]
      ]
      for (const [user, pods] of expected) {
        assert.deepStrictEqual(names(yield* index.byIndex("byUser", user)), pods, user)
      }

      yield* index.delete(pod3)
      assert.deepStrictEqual(names(yield* index.byIndex("byUser", "ernie")), ["one"])
      assert.deepStrictEqual(names(yield* index.byIndex("byUser", "elmo")), [])

      yield* index.update(pod("two", { annotations: { users: "oscar" } }))
      assert.deepStrictEqual(names(yield* index.byIndex("byUser", "bert")), ["one"])
    }))
})

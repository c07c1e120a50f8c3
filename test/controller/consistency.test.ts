import { assert, describe, it } from "@effect/vitest"
import type { Duration } from "effect"
import { Effect, Option } from "effect"
import { TestClock } from "effect/testing"
import * as Consistency from "../../src/Consistency.js"
import * as KubeObject from "../../src/KubeObject.js"
import { captureLogs } from "../fixtures/index.js"

describe("KubeObject.compareResourceVersions (KEP-5504)", () => {
  it.each(
    [
      ["1", "1", 0],
      ["0", "1", -1],
      ["2", "10", -1],
      ["10", "9", 1],
      ["123", "124", -1],
      ["99999999999999999999999999", "100000000000000000000000000", -1]
    ] as const
  )("%s against %s is %i", (a, b, order) => {
    assert.deepStrictEqual(KubeObject.compareResourceVersions(a, b), Option.some(order))
  })

  it.each([["", "1"], ["01", "1"], ["00", "1"], ["1a", "1"], ["-1", "1"], ["1.5", "2"], [" 1", "1"]])(
    "%j against %j is not comparable",
    (a, b) => {
      assert.isTrue(Option.isNone(KubeObject.compareResourceVersions(a, b)))
      assert.isTrue(Option.isNone(KubeObject.compareResourceVersions(b, a)))
      assert.isTrue(Consistency.isCaughtUp(a, b))
    }
  )
})

describe("Consistency.makeTracker", () => {
  const setup = (maxWait?: Duration.Input) =>
    Effect.gen(function*() {
      const versions = { configmaps: "5", namespaces: "5" }
      const tracker = yield* Consistency.makeTracker({
        caches: new Map([
          ["configmaps", Effect.sync(() => versions.configmaps)],
          ["namespaces", Effect.sync(() => versions.namespaces)]
        ]),
        maxWait
      })
      return { tracker, versions }
    })

  it.effect("a key is stale until every cache it wrote to has caught up, then its record is gone", () =>
    Effect.gen(function*() {
      const { tracker, versions } = yield* setup()
      yield* tracker.wrote("default/a", "configmaps", "7")
      yield* tracker.wrote("default/a", "namespaces", "6")
      assert.deepStrictEqual(
        yield* tracker.check("default/a"),
        Option.some({ groupResource: "configmaps", readResourceVersion: "5", writtenResourceVersion: "7" })
      )
      versions.configmaps = "7"
      assert.deepStrictEqual(
        yield* tracker.check("default/a"),
        Option.some({ groupResource: "namespaces", readResourceVersion: "5", writtenResourceVersion: "6" })
      )
      versions.namespaces = "8"
      assert.isTrue(Option.isNone(yield* tracker.check("default/a")))
      assert.strictEqual(yield* tracker.size, 0)
      // other keys were never blocked
      assert.isTrue(Option.isNone(yield* tracker.check("default/b")))
    }))

  it.effect("the highest written resourceVersion per group-resource is kept", () =>
    Effect.gen(function*() {
      const { tracker, versions } = yield* setup()
      yield* tracker.wrote("k", "configmaps", "9")
      yield* tracker.wrote("k", "configmaps", "7")
      versions.configmaps = "8"
      assert.isTrue(Option.isSome(yield* tracker.check("k")))
      versions.configmaps = "9"
      assert.isTrue(Option.isNone(yield* tracker.check("k")))
    }))

  it.effect("writes to untracked group-resources, empty and opaque resourceVersions never block", () =>
    Effect.gen(function*() {
      const { tracker } = yield* setup()
      yield* tracker.wrote("k", "secrets", "99")
      yield* tracker.wrote("k", "configmaps", "")
      assert.strictEqual(yield* tracker.size, 0)
      yield* tracker.wrote("k", "configmaps", "opaque-7")
      assert.isTrue(Option.isNone(yield* tracker.check("k")))
    }))

  it.effect("the wait is bounded: after maxWait the record is dropped with a warning", () =>
    Effect.gen(function*() {
      const logs = captureLogs()
      const { tracker } = yield* setup("3 seconds")
      yield* tracker.wrote("default/a", "configmaps", "7")
      yield* TestClock.adjust("2999 millis")
      assert.isTrue(Option.isSome(yield* tracker.check("default/a")))
      yield* TestClock.adjust("1 millis")
      assert.isTrue(Option.isNone(yield* logs.capture(tracker.check("default/a"))))
      assert.strictEqual(yield* tracker.size, 0)
      assert.isTrue(logs.lines.some((line) => line.startsWith("WARN") && line.includes("still at resourceVersion 5")))
    }))

  it.effect("clear forgets a key", () =>
    Effect.gen(function*() {
      const { tracker } = yield* setup()
      yield* tracker.wrote("k", "configmaps", "9")
      yield* tracker.clear("k")
      assert.isTrue(Option.isNone(yield* tracker.check("k")))
    }))
})

describe("Consistency.recordWrite", () => {
  it.effect("records into the context's Writes, and does nothing without one", () =>
    Effect.gen(function*() {
      const seen: Array<string> = []
      yield* Consistency.recordWrite("configmaps", "3")
      yield* Consistency.recordWrite("configmaps", "4").pipe(
        Effect.provideService(Consistency.Writes, {
          record: (groupResource, rv) => Effect.sync(() => void seen.push(`${groupResource}@${rv}`))
        })
      )
      assert.deepStrictEqual(seen, ["configmaps@4"])
    }))
})

import { assert, describe, it } from "@effect/vitest"
import { Effect, Result, Stream } from "effect"
import * as FakeListerWatcher from "../../src/FakeListerWatcher.js"
import type { KubeObject } from "../../src/KubeObject.js"
import type { WatchEvent } from "../../src/ListerWatcher.js"
import { pod as fixturePod } from "../fixtures/index.js"

const pod = (name: string): KubeObject => fixturePod(name, { typed: true })

/** The first `n` events of a watch from `resourceVersion`, or its error. */
const replay = (fake: FakeListerWatcher.FakeListerWatcher.Service<KubeObject>, resourceVersion: string, n = 1) =>
  Effect.gen(function*() {
    const result = yield* fake.watch({ resourceVersion }).pipe(Stream.take(n), Stream.runCollect, Effect.result)
    return Result.map(
      result,
      (events) =>
        events.map((e: WatchEvent<KubeObject>) =>
          e.type === "BOOKMARK"
            ? "BOOKMARK"
            : `${e.type} ${e.object.metadata?.name}@${e.object.metadata?.resourceVersion}`
        )
    )
  })

describe("FakeListerWatcher", () => {
  it.effect("keeps a bounded history: watching from a version older than it is Gone, newer ones replay", () =>
    Effect.gen(function*() {
      const fake = yield* FakeListerWatcher.make<KubeObject>({ historySize: 2 })
      for (const name of ["a", "b", "c", "d"]) yield* fake.add(pod(name))
      assert.strictEqual(yield* fake.resourceVersion, "4")
      const tooOld = yield* replay(fake, "1")
      assert.isTrue(
        Result.isFailure(tooOld) && tooOld.failure._tag === "StatusError" && tooOld.failure.reason === "Gone"
      )
      assert.deepStrictEqual(yield* replay(fake, "2", 2), Result.succeed(["ADDED c@3", "ADDED d@4"]))
      const tooLarge = yield* replay(fake, "9")
      assert.isTrue(
        Result.isFailure(tooLarge) && tooLarge.failure._tag === "StatusError" &&
          tooLarge.failure.reason === "ResourceVersionTooLarge"
      )
    }))

  it.effect("resetWatch: every watch is Gone until the next list, then the history starts again", () =>
    Effect.gen(function*() {
      const fake = yield* FakeListerWatcher.make<KubeObject>({ initial: [pod("a")] })
      yield* fake.resetWatch
      const gone = yield* replay(fake, "1")
      assert.isTrue(Result.isFailure(gone) && gone.failure._tag === "StatusError" && gone.failure.reason === "Gone")
      const page = yield* fake.list({})
      assert.deepStrictEqual(page.items.map((o) => o.metadata?.name), ["a"])
      yield* fake.add(pod("b"))
      assert.deepStrictEqual(yield* replay(fake, page.resourceVersion), Result.succeed(["ADDED b@2"]))
    }))
})

/**
 * Controller: read-your-own-writes (a key waits for its caches to catch up with its own last write).
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Metric } from "effect"
import { TestClock } from "effect/testing"
import * as Consistency from "../../src/Consistency.js"
import * as Controller from "../../src/Controller.js"
import * as ControllerMetrics from "../../src/internal/controller/metrics.js"
import * as Resource from "../../src/Resource.js"
import { captureLogs, settle } from "../fixtures/index.js"
import { configMaps, eventually, obj, pods, recorder, source } from "./fixtures.js"

const quiet = Effect.gen(function*() {
  for (let i = 0; i < 30; i++) yield* settle
})

describe("Controller: read-your-own-writes", () => {
  it.effect("a key is not reconciled again until the cache of what it wrote has caught up", () =>
    Effect.gen(function*() {
      const cms = yield* source(configMaps, [obj("ns", "parent")])
      const children = yield* source(pods)
      const r = recorder()
      yield* Controller.make({
        name: "ryow",
        for: cms,
        watches: [{ source: children, map: () => [] }],
        reconcile: (request) =>
          r.around(request, () =>
            r.count(request.key) === 1
              // a write the cache will not see yet: the event is lost until the next bookmark
              ? Effect.flatMap(
                children.fake.addDropWatch(obj("ns", "child")),
                (written) => Consistency.recordWrite(Resource.groupResource(pods), written.metadata?.resourceVersion)
              )
              : Effect.void)
      })
      yield* eventually(() => r.seen.length === 1, "the first reconcile")
      const controller = "ryow"
      yield* cms.fake.modify(obj("ns", "parent", { data: { x: "1" } }))
      // the key is requeued, not reconciled, while the pods cache is behind the write
      for (let i = 0; i < 10; i++) yield* TestClock.adjust("100 millis")
      assert.strictEqual(r.count("ns/parent"), 1)
      const skips = yield* Metric.value(
        ControllerMetrics.staleSkips.pipe(Metric.withAttributes({ controller }))
      )
      assert.isAtLeast(skips.count, 1)
      // a bookmark brings the cache to the written version: the key runs
      yield* children.fake.bookmark
      for (let i = 0; i < 20 && r.count("ns/parent") < 2; i++) yield* TestClock.adjust("1 second")
      assert.strictEqual(r.count("ns/parent"), 2)
    }))

  it.effect("other keys are not held back by one key's pending write", () =>
    Effect.gen(function*() {
      const cms = yield* source(configMaps, [obj("ns", "a"), obj("ns", "b")])
      const children = yield* source(pods)
      const r = recorder()
      yield* Controller.make({
        name: "ryow-others",
        for: cms,
        watches: [{ source: children, map: () => [] }],
        reconcile: (request) =>
          r.around(request, () =>
            request.name === "a" && r.count(request.key) === 1
              ? Effect.flatMap(
                children.fake.addDropWatch(obj("ns", "child")),
                (written) => Consistency.recordWrite("pods", written.metadata?.resourceVersion)
              )
              : Effect.void)
      })
      yield* eventually(() => r.seen.length === 2, "both")
      yield* cms.fake.modify(obj("ns", "a", { data: { x: "1" } }))
      yield* cms.fake.modify(obj("ns", "b", { data: { x: "1" } }))
      yield* eventually(() => r.count("ns/b") === 2, "b again")
      yield* quiet
      assert.strictEqual(r.count("ns/a"), 1)
    }))

  it.effect("the wait is bounded: after maxWait the key is reconciled anyway, with a warning", () =>
    Effect.gen(function*() {
      const logs = captureLogs()
      const cms = yield* source(configMaps, [obj("ns", "parent")])
      const children = yield* source(pods)
      const r = recorder()
      yield* logs.capture(Controller.make({
        name: "ryow-bounded",
        for: cms,
        watches: [{ source: children, map: () => [] }],
        readYourWrites: { maxWait: "3 seconds" },
        reconcile: (request) =>
          r.around(request, () =>
            r.count(request.key) === 1
              ? Effect.flatMap(
                children.fake.addDropWatch(obj("ns", "child")),
                (written) => Consistency.recordWrite("pods", written.metadata?.resourceVersion)
              )
              : Effect.void)
      }))
      yield* eventually(() => r.seen.length === 1, "first")
      yield* cms.fake.modify(obj("ns", "parent", { data: { x: "1" } }))
      for (let i = 0; i < 40 && r.count("ns/parent") < 2; i++) yield* TestClock.adjust("250 millis")
      assert.strictEqual(r.count("ns/parent"), 2)
      assert.isTrue(logs.lines.some((line) => line.startsWith("WARN") && line.includes("reconciling without waiting")))
    }))

  it.effect("readYourWrites: false reconciles at once; writes outside the watched resources never hold a key", () =>
    Effect.gen(function*() {
      const cms = yield* source(configMaps, [obj("ns", "p"), obj("ns", "q")])
      const children = yield* source(pods)
      const r = recorder()
      const writeAndRecord = (group: string) =>
        Effect.flatMap(
          children.fake.addDropWatch(obj("ns", `c-${group}-${Math.random()}`)),
          (written) => Consistency.recordWrite(group, written.metadata?.resourceVersion)
        )
      yield* Controller.make({
        name: "ryow-off",
        for: cms,
        watches: [{ source: children, map: () => [] }],
        readYourWrites: false,
        reconcile: (request) => r.around(request, () => request.name === "p" ? writeAndRecord("pods") : Effect.void)
      })
      yield* Controller.make({
        name: "ryow-untracked",
        for: cms,
        reconcile: (request) => r.around(request, () => request.name === "q" ? writeAndRecord("secrets") : Effect.void)
      })
      yield* eventually(() => r.seen.length === 4, "both controllers, both keys")
      yield* cms.fake.modify(obj("ns", "p", { data: { x: "1" } }))
      yield* cms.fake.modify(obj("ns", "q", { data: { x: "1" } }))
      yield* eventually(() => r.count("ns/p") === 4 && r.count("ns/q") === 4, "every reconcile at once")
    }))
})

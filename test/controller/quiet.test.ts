/**
 * Controller: `quiet`, for tests that assert after convergence without sleeping: it completes once the
 * queue has nothing ready, processing or due, and every source's handler has handled what it was sent,
 * including events that a reconcile's writes cause and that map back to keys.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, Fiber, Option, Scope } from "effect"
import * as Controller from "../../src/Controller.js"
import { advance, settle } from "../fixtures/index.js"
import type { FakeSource, Obj } from "./fixtures.js"
import { configMaps, obj, pods, source } from "./fixtures.js"

/** The generation a pod carries, 0 when there is none. */
const generationOf = (pod: Obj | undefined): number => Number(pod?.data?.["generation"] ?? "0")

/**
 * A controller of ConfigMaps that owns one pod per ConfigMap (`<name>-pod`, labelled with the ConfigMap's
 * name): each reconcile creates the pod, or bumps its generation until it reaches the ConfigMap's `target`.
 * Every write comes back as a pod event, mapped back to the ConfigMap: a chain of `target` round trips.
 */
const chain = (cms: FakeSource, children: FakeSource, seen: Array<string>) =>
  Controller.make({
    name: "quiet-chain",
    for: cms,
    watches: [{
      source: children,
      map: (pod: Obj) => {
        const owner = pod.metadata?.labels?.["owner"]
        return owner === undefined ? [] : [`${pod.metadata?.namespace}/${owner}`]
      }
    }],
    reconcile: (request) =>
      Effect.gen(function*() {
        seen.push(request.key)
        const cm = yield* cms.informer.indexer.getByKey(request.key)
        if (Option.isNone(cm)) return Controller.done
        const target = Number(cm.value.data?.["target"] ?? "1")
        const podName = `${request.name}-pod`
        const pod = yield* children.informer.indexer.getByKey(`${request.namespace}/${podName}`)
        const generation = Option.isSome(pod) ? generationOf(pod.value) : 0
        if (generation >= target) return Controller.done
        const next = obj(request.namespace, podName, {
          metadata: { labels: { owner: request.name } },
          data: { generation: String(generation + 1) }
        })
        if (Option.isNone(pod)) yield* children.fake.add(next)
        else yield* children.fake.modify(next)
        return Controller.done
      })
  })

describe("Controller: quiet", () => {
  it.effect("a chain of reconciles, writes and their events mapped back runs to its end before quiet completes", () =>
    Effect.gen(function*() {
      const cms = yield* source(configMaps)
      const children = yield* source(pods)
      const seen: Array<string> = []
      const controller = yield* chain(cms, children, seen)
      yield* controller.quiet
      assert.deepStrictEqual(seen, [])
      // 20 rounds, without settling or sleeping: each asserts right after quiet
      for (let i = 0; i < 20; i++) {
        const target = 1 + (i % 5)
        seen.length = 0
        yield* cms.fake.add(obj("ns", `cm-${i}`, { data: { target: String(target) } }))
        yield* controller.quiet
        const pod = yield* children.informer.indexer.getByKey(`ns/cm-${i}-pod`)
        assert.isTrue(Option.isSome(pod), `round ${i}: the pod`)
        assert.strictEqual(generationOf(Option.getOrUndefined(pod)), target, `round ${i}: its generation`)
        // one reconcile per write, and the last one, which finds nothing to do
        assert.deepStrictEqual(seen, Array.from({ length: target + 1 }, () => `ns/cm-${i}`), `round ${i}`)
        assert.strictEqual(yield* controller.queue.len, 0)
        assert.strictEqual(yield* controller.active, 0)
      }
    }))

  it.live("with the live clock too", () =>
    Effect.gen(function*() {
      const cms = yield* source(configMaps)
      const children = yield* source(pods)
      const seen: Array<string> = []
      const controller = yield* chain(cms, children, seen)
      for (let i = 0; i < 10; i++) {
        seen.length = 0
        yield* cms.fake.add(obj("ns", `cm-${i}`, { data: { target: "3" } }))
        yield* controller.quiet
        const pod = yield* children.informer.indexer.getByKey(`ns/cm-${i}-pod`)
        assert.strictEqual(generationOf(Option.getOrUndefined(pod)), 3, `round ${i}`)
        assert.strictEqual(seen.length, 4, `round ${i}`)
      }
    }))

  it.effect("waits for a reconcile in progress", () =>
    Effect.gen(function*() {
      const cms = yield* source(configMaps, [obj("a", "slow")])
      let ended = false
      const controller = yield* Controller.make({
        name: "quiet-slow",
        for: cms,
        reconcile: () => Effect.andThen(Effect.sleep("10 seconds"), Effect.sync(() => void (ended = true)))
      })
      const quiet = yield* Effect.forkChild(controller.quiet)
      yield* settle
      assert.isUndefined(quiet.pollUnsafe(), "not while the reconcile runs")
      yield* advance("10 seconds")
      yield* Fiber.join(quiet)
      assert.isTrue(ended)
    }))

  it.effect("waits for a handler whose callback is in progress (a map that looks its keys up)", () =>
    Effect.gen(function*() {
      const cms = yield* source(configMaps, [obj("ns", "x")])
      const children = yield* source(pods)
      const seen: Array<string> = []
      const controller = yield* Controller.make({
        name: "quiet-handler",
        for: cms,
        watches: [{ source: children, map: () => Effect.as(Effect.sleep("1 second"), ["ns/x"]) }],
        reconcile: (request) => Effect.sync(() => void seen.push(request.key))
      })
      yield* controller.quiet
      assert.deepStrictEqual(seen, ["ns/x"])
      yield* children.fake.add(obj("ns", "p"))
      const quiet = yield* Effect.forkChild(controller.quiet)
      yield* settle
      assert.isUndefined(quiet.pollUnsafe(), "not while the handler maps the pod")
      yield* advance("1 second")
      yield* Fiber.join(quiet)
      assert.deepStrictEqual(seen, ["ns/x", "ns/x"])
    }))

  it.effect("a key waiting for a later time does not count; once its time has come it does", () =>
    Effect.gen(function*() {
      const cms = yield* source(configMaps, [obj("a", "later")])
      let rounds = 0
      const controller = yield* Controller.make({
        name: "quiet-later",
        for: cms,
        reconcile: () => Effect.sync(() => ++rounds === 1 ? Controller.requeueAfter("1 hour") : Controller.done)
      })
      yield* controller.quiet
      assert.strictEqual(rounds, 1, "quiet while the key waits for its hour")
      yield* advance("1 hour")
      yield* controller.quiet
      assert.strictEqual(rounds, 2, "its round, once due")
    }))

  it.effect("a stopped controller is quiet", () =>
    Effect.gen(function*() {
      const cms = yield* source(configMaps)
      const scope = yield* Scope.make()
      const controller = yield* Controller.make({ name: "quiet-stopped", for: cms, reconcile: () => Effect.never })
        .pipe(
          Scope.provide(scope)
        )
      yield* controller.enqueue("a/never")
      yield* settle
      yield* Effect.forkChild(Scope.close(scope, Exit.void))
      yield* advance("31 seconds")
      yield* controller.quiet
    }))
})

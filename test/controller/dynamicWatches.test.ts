/**
 * Controller: sources added while it runs (`controller.watch`): `watches` and `owns` alike, with their
 * predicates; synced before `watch` returns; removed when the scope closes (the handler goes, its events no
 * longer queue keys), without a leak of handlers over many rounds.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, Fiber, Scope } from "effect"
import * as Controller from "../../src/Controller.js"
import * as FakeListerWatcher from "../../src/FakeListerWatcher.js"
import { behindRegistration } from "../../src/internal/informer/processor.js"
import * as SharedInformer from "../../src/SharedInformer.js"
import { advance } from "../fixtures/index.js"
import type { Obj } from "./fixtures.js"
import { configMaps, deployments, obj, pods, source } from "./fixtures.js"

/** The pods' owner, by the `owner` label, in the pod's namespace. */
const byOwnerLabel = (pod: Obj) => {
  const owner = pod.metadata?.labels?.["owner"]
  return owner === undefined ? [] : [`${pod.metadata?.namespace}/${owner}`]
}

/** The number of handlers `informer` has now, read through a probe registration of its own. */
const handlerCount = (informer: SharedInformer.SharedInformer.Service<Obj>) =>
  Effect.gen(function*() {
    const probe = yield* Effect.orDie(informer.addEventHandler<never, never>({ name: "probe" }))
    const count = behindRegistration(probe)!.processor.listenerCount() - 1
    yield* probe.remove
    return count
  })

describe("Controller: watches added at runtime", () => {
  it.effect("a watch added at runtime queues keys until its scope closes; 100 rounds leave no handler behind", () =>
    Effect.gen(function*() {
      const cms = yield* source(configMaps, [obj("ns", "x")])
      const children = yield* source(pods, [obj("ns", "p", { metadata: { labels: { owner: "x" } } })])
      const seen: Array<string> = []
      const controller = yield* Controller.make({
        name: "dynamic",
        for: cms,
        reconcile: (request) => Effect.sync(() => void seen.push(request.key))
      })
      yield* controller.quiet
      assert.deepStrictEqual(seen, ["ns/x"])
      const before = yield* handlerCount(children.informer)
      for (let round = 0; round < 100; round++) {
        seen.length = 0
        const scope = yield* Scope.make()
        yield* controller.watch({ source: children, map: byOwnerLabel }).pipe(Scope.provide(scope))
        assert.strictEqual(yield* handlerCount(children.informer), before + 1, `round ${round}: registered`)
        // synced: the initial list's pod has queued its owner
        yield* controller.quiet
        assert.deepStrictEqual(seen, ["ns/x"], `round ${round}: the initial list`)
        yield* children.fake.modify(
          obj("ns", "p", { metadata: { labels: { owner: "x" } }, data: { round: `${round}` } })
        )
        yield* controller.quiet
        assert.deepStrictEqual(seen, ["ns/x", "ns/x"], `round ${round}: an event`)
        yield* Scope.close(scope, Exit.void)
        assert.strictEqual(yield* handlerCount(children.informer), before, `round ${round}: removed`)
        yield* children.fake.modify(
          obj("ns", "p", { metadata: { labels: { owner: "x" } }, data: { gone: `${round}` } })
        )
        yield* controller.quiet
        assert.deepStrictEqual(seen, ["ns/x", "ns/x"], `round ${round}: no key once removed`)
      }
    }))

  it.effect("owns at runtime, with predicates; the controller's end removes it", () =>
    Effect.gen(function*() {
      const deploys = yield* source(deployments, [obj("ns", "web")])
      const children = yield* source(pods)
      const seen: Array<string> = []
      const controllerScope = yield* Scope.make()
      const controller = yield* Controller.make({
        name: "dynamic-owns",
        for: deploys,
        reconcile: (request) => Effect.sync(() => void seen.push(request.key))
      }).pipe(Scope.provide(controllerScope))
      yield* controller.quiet
      seen.length = 0
      const before = yield* handlerCount(children.informer)
      // a scope that outlives the controller: the controller's end removes the source
      yield* controller.watch({
        source: children,
        predicates: [Controller.filter((pod: Obj) => pod.metadata?.labels?.["skip"] !== "true")]
      })
      const owned = (name: string, labels: Record<string, string> = {}) =>
        obj("ns", name, {
          metadata: {
            labels,
            ownerReferences: [{ apiVersion: "apps/v1", kind: "Deployment", name: "web", uid: "u", controller: true }]
          }
        })
      yield* children.fake.add(owned("web-1"))
      yield* controller.quiet
      assert.deepStrictEqual(seen, ["ns/web"])
      yield* children.fake.add(owned("web-2", { skip: "true" }))
      yield* controller.quiet
      assert.deepStrictEqual(seen, ["ns/web"], "filtered out by the predicate")
      assert.strictEqual(yield* handlerCount(children.informer), before + 1)
      yield* Scope.close(controllerScope, Exit.void)
      assert.strictEqual(yield* handlerCount(children.informer), before, "removed at the controller's end")
      const error = yield* Effect.flip(controller.watch({ source: children, map: byOwnerLabel }))
      assert.strictEqual(error.reason, "ControllerStopped")
    }))

  it.effect("a source that does not sync within cacheSyncTimeout fails the watch, and its handler is removed", () =>
    Effect.gen(function*() {
      const cms = yield* source(configMaps)
      // an informer never started: it never syncs
      const fake = yield* FakeListerWatcher.make<Obj>({ resource: pods })
      const informer = yield* SharedInformer.make(fake, { name: "pods, never started" })
      const controller = yield* Controller.make({
        name: "dynamic-unsynced",
        for: cms,
        cacheSyncTimeout: "5 seconds",
        reconcile: () => Effect.void
      })
      const before = yield* handlerCount(informer)
      const attempt = yield* Effect.forkChild(
        Effect.scoped(controller.watch({ source: { resource: pods, informer }, map: byOwnerLabel }))
      )
      yield* advance("5 seconds")
      const exit = yield* Fiber.await(attempt)
      assert.isTrue(Exit.isFailure(exit))
      const error = yield* Effect.flip(exit)
      assert.strictEqual(error.reason, "CacheSyncTimeout")
      assert.strictEqual(yield* handlerCount(informer), before)
    }))
})

/**
 * Manager: controllers started together, and the probes a Deployment points at.
 */
import { assert, describe, it } from "@effect/vitest"
import { Deferred, Effect, Exit, Fiber, Scope } from "effect"
import { TestClock } from "effect/testing"
import * as Controller from "../../../src/Controller.js"
import * as FakeListerWatcher from "../../../src/FakeListerWatcher.js"
import * as Manager from "../../../src/Manager.js"
import * as SharedInformer from "../../../src/SharedInformer.js"
import { configMaps, obj, source } from "../fixtures.js"
import type { Obj } from "../fixtures.js"

const get = (url: string) =>
  Effect.promise(() => fetch(url).then(async (res) => ({ status: res.status, body: await res.text() })))

describe("Manager", () => {
  it.live("serves /healthz at once and /readyz once every controller has started", () =>
    Effect.gen(function*() {
      const cms = yield* source(configMaps, [obj("ns", "a")])
      // a second source that syncs only when the test starts its informer
      const fake = yield* FakeListerWatcher.make<Obj>({ resource: configMaps })
      const late = yield* SharedInformer.make(fake, { name: "late" })
      const extra = yield* Deferred.make<boolean>()
      const starting = yield* Effect.forkChild(Manager.make({
        probes: { port: 0, host: "127.0.0.1" },
        readyChecks: [{ name: "extra", check: Deferred.isDone(extra) }],
        controllers: [
          Controller.make({ name: "first", for: cms, reconcile: () => Effect.void }),
          Controller.make({
            name: "second",
            for: { resource: configMaps, informer: late },
            reconcile: () => Effect.void
          })
        ]
      }))
      // make waits for every controller: not done while the late source has not synced
      yield* Effect.sleep("200 millis")
      assert.isUndefined(starting.pollUnsafe(), "the manager finished before the late source synced")
      yield* Effect.orDie(late.start)
      const manager = yield* Fiber.join(starting)
      assert.deepStrictEqual(manager.controllers.map((c) => c.name).sort(), ["first", "second"])
      const probes = manager.probesUrl!
      assert.deepStrictEqual(yield* get(`${probes}/healthz`), { status: 200, body: "ok" })
      const notReady = yield* get(`${probes}/readyz`)
      assert.strictEqual(notReady.status, 503)
      assert.include(notReady.body, "[-]extra failed")
      yield* Deferred.succeed(extra, true)
      assert.deepStrictEqual(yield* get(`${probes}/readyz`), { status: 200, body: "ok" })
      const verbose = yield* get(`${probes}/readyz?verbose`)
      assert.include(verbose.body, "[+]controllers ok")
      assert.include(verbose.body, "[+]extra ok")
      assert.strictEqual((yield* get(`${probes}/nowhere`)).status, 404)
    }).pipe(Effect.scoped))

  it.live("a port in use fails with ProbeServerError; closing the scope closes the probes", () =>
    Effect.gen(function*() {
      const scope = yield* Scope.make()
      const first = yield* Manager.make<never>({ probes: { port: 0, host: "127.0.0.1" }, controllers: [] }).pipe(
        Scope.provide(scope)
      )
      const port = Number(new URL(first.probesUrl!).port)
      const error = yield* Effect.flip(
        Manager.make<never>({ probes: { port, host: "127.0.0.1" }, controllers: [] }).pipe(Effect.scoped)
      )
      assert.strictEqual(error._tag, "ProbeServerError")
      assert.include(error.message, `127.0.0.1:${port}`)
      yield* Scope.close(scope, Exit.void)
      const after = yield* Effect.promise(() =>
        fetch(`${first.probesUrl}/healthz`).then(() => "answered", () => "closed")
      )
      assert.strictEqual(after, "closed")
    }))
})

describe("Manager: shutdown", () => {
  it.effect("closing the scope stops every controller, each letting its reconcile in progress finish", () =>
    Effect.gen(function*() {
      const cms = yield* source(configMaps, [obj("ns", "a")])
      const scope = yield* Scope.make()
      let running = 0
      const slow = (name: string) =>
        Controller.make({
          name,
          for: cms,
          reconcile: () =>
            Effect.acquireUseRelease(
              Effect.sync(() => running++),
              () => Effect.sleep("2 seconds"),
              () => Effect.sync(() => running--)
            )
        })
      yield* Manager.make({ controllers: [slow("one"), slow("two"), slow("three")] }).pipe(Scope.provide(scope))
      for (let i = 0; i < 50 && running < 3; i++) yield* TestClock.adjust(0)
      assert.strictEqual(running, 3)
      const closing = yield* Effect.forkChild(Scope.close(scope, Exit.void))
      for (let i = 0; i < 20; i++) yield* TestClock.adjust(0)
      yield* TestClock.adjust("2 seconds")
      yield* Fiber.join(closing)
      assert.strictEqual(running, 0, "the three reconciles in progress finished")
    }))
})

/**
 * SharedInformer: ports of client-go's shared_informer_test.go (names keep the client-go test names): shutdown, panicking handlers, removal during callbacks, handler lifecycles.
 */
import { assert, describe, it } from "@effect/vitest"
import { Clock, Deferred, Effect } from "effect"
import * as Metrics from "../../../src/Metrics.js"
import type * as SharedInformer from "../../../src/SharedInformer.js"
import { captureLogs, settle } from "../../fixtures/index.js"
import { adjust, counterValue, FiberTracker, nameOf, pod, range, recorder, setup, summary, tagged } from "./fixtures.js"

describe("SharedInformer: client-go ports", () => {
  describe("TestShutdown: no fiber outlives the informer", () => {
    it.effect("handler added before start, removed after stop", () =>
      Effect.gen(function*() {
        const tracker = new FiberTracker()
        const { r, stop } = yield* Effect.gen(function*() {
          const { fake, informer, stop } = yield* setup({}, [pod("pod1")])
          const r = yield* informer.addEventHandler(recorder().handler)
          yield* informer.start
          yield* fake.add(pod("pod2"))
          yield* settle
          return { r, stop }
        }).pipe(tracker.track)
        assert.isTrue(tracker.running() > 0)
        yield* stop
        yield* r.remove
        assert.isTrue(tracker.started > 0)
        assert.strictEqual(tracker.running(), 0)
      }))

    it.effect("handler added and removed after sync", () =>
      Effect.gen(function*() {
        const tracker = new FiberTracker()
        const { informer, stop } = yield* setup({}, [pod("pod1")])
        yield* Effect.gen(function*() {
          yield* informer.start
          yield* settle
        }).pipe(tracker.track)
        const before = tracker.running()
        const handlerTracker = new FiberTracker()
        const r = yield* informer.addEventHandler(recorder().handler).pipe(handlerTracker.track)
        assert.strictEqual(handlerTracker.running(), 1)
        yield* settle
        yield* r.remove
        assert.strictEqual(handlerTracker.running(), 0)
        assert.strictEqual(tracker.running(), before)
        yield* stop
        assert.strictEqual(tracker.running(), 0)
      }))

    it.effect("informer never run", () =>
      Effect.gen(function*() {
        const tracker = new FiberTracker()
        const { informer, stop } = yield* setup({}, [pod("pod1")]).pipe(tracker.track)
        yield* informer.addEventHandler(recorder().handler).pipe(tracker.track)
        assert.strictEqual(tracker.running(), 1)
        yield* stop
        assert.strictEqual(tracker.running(), 0)
        assert.isTrue(yield* informer.isStopped)
      }))
  })

  it.effect("TestEventPanics: failing handlers are logged by name, skip the item, go on, and still sync", () =>
    Effect.gen(function*() {
      const logs = captureLogs()
      yield* logs.capture(Effect.gen(function*() {
        const pods = range(5).map((i) => pod(`pod${i}`))
        const { informer } = yield* setup({ name: "panics" }, pods)
        const recovered: Array<string> = []
        const failing = yield* informer.addEventHandler({
          name: "failing-handler",
          onAdd: (o) => Effect.fail(`typed failure on ${nameOf(o)}`)
        })
        const dying = yield* informer.addEventHandler({
          name: "dying-handler",
          onAdd: (o) => Effect.die(new Error(`defect on ${nameOf(o)}`))
        })
        const flaky = yield* informer.addEventHandler({
          name: "flaky-handler",
          onAdd: (o) =>
            nameOf(o) === "pod1" ? Effect.die("boom") : Effect.sync(() => {
              recovered.push(nameOf(o))
            })
        })
        // throws while building its Effect, on its very first notification and on pod3
        const thrownRecovered: Array<string> = []
        const throwing = yield* informer.addEventHandler({
          name: "throwing-handler",
          onAdd: (o) => {
            if (nameOf(o) === "pod0" || nameOf(o) === "pod3") throw new Error(`thrown on ${nameOf(o)}`)
            return Effect.sync(() => {
              thrownRecovered.push(nameOf(o))
            })
          }
        })
        yield* informer.start
        yield* settle
        assert.isTrue(yield* informer.hasSynced)
        // client-go #129024: a panicking handler never syncs; ours does.
        for (const r of [failing, dying, flaky, throwing]) assert.isTrue(yield* r.hasSynced, r.name)
        assert.deepStrictEqual(recovered, ["pod0", "pod2", "pod3", "pod4"])
        assert.deepStrictEqual(thrownRecovered, ["pod1", "pod2", "pod4"])
        // No pause after a failure: all of it happened without virtual time passing.
        assert.strictEqual(yield* Clock.currentTimeMillis, 0)
        const failures = (name: string) =>
          counterValue(tagged(Metrics.handlerFailures, { informer: "panics", handler: name }))
        assert.strictEqual(yield* failures("failing-handler"), 5)
        assert.strictEqual(yield* failures("dying-handler"), 5)
        assert.strictEqual(yield* failures("flaky-handler"), 1)
        assert.strictEqual(yield* failures("throwing-handler"), 2)
      }))
      const logged = (name: string) => logs.lines.filter((line) => line.includes(`handler ${name} failed`))
      assert.strictEqual(logged("failing-handler").length, 5)
      assert.strictEqual(logged("dying-handler").length, 5)
      assert.strictEqual(logged("flaky-handler").length, 1)
      assert.include(logged("failing-handler")[0], "typed failure on pod0")
      assert.include(logged("dying-handler")[0], "defect on pod0")
      assert.include(logged("flaky-handler")[0], "add of ns/pod1")
      assert.strictEqual(logged("throwing-handler").length, 2)
      assert.include(logged("throwing-handler")[0], "add of ns/pod0")
      assert.include(logged("throwing-handler")[0], "thrown on pod0")
      assert.include(logged("throwing-handler")[1], "add of ns/pod3")
    }))

  it.effect("TestRemoveEventHandler_SynchronousShutdown (and _AsynchronousPanic): remove interrupts the blocked callback and waits", () =>
    Effect.gen(function*() {
      const { fake, informer } = yield* setup({}, [pod("pod1")])
      let interrupted = false
      let ranAfter = false
      let resourceClosed = false
      let touchedAfterClose = false
      const seen: Array<string> = []
      const blocked = yield* Deferred.make<void>()
      const r = yield* informer.addEventHandler({
        onAdd: (o) =>
          nameOf(o) === "pod1"
            ? Deferred.succeed(blocked, undefined).pipe(
              Effect.andThen(Effect.never),
              Effect.onInterrupt(() =>
                Effect.sync(() => {
                  interrupted = true
                })
              ),
              Effect.andThen(Effect.sync(() => {
                ranAfter = true
              }))
            )
            : Effect.sync(() => {
              if (resourceClosed) touchedAfterClose = true
              seen.push(nameOf(o))
            })
      })
      yield* informer.start
      yield* Deferred.await(blocked)
      yield* fake.add(pod("pod2"))
      yield* settle
      assert.strictEqual(yield* r.backlog, 1)
      const remover = yield* Effect.forkChild(r.remove)
      yield* settle
      assert.isDefined(remover.pollUnsafe(), "remove returned")
      assert.isTrue(interrupted, "the blocked callback was interrupted")
      // What the handler uses can be released now: nothing of it runs any more.
      resourceClosed = true
      yield* fake.add(pod("pod3"))
      yield* adjust("1 minute")
      assert.isFalse(ranAfter)
      assert.isFalse(touchedAfterClose)
      assert.deepStrictEqual(seen, [])
    }))

  it.effect("a handler may remove its own registration from a callback", () =>
    Effect.gen(function*() {
      const { fake, informer } = yield* setup({}, [pod("pod1")])
      const seen: Array<string> = []
      const other = recorder()
      const self = yield* Deferred.make<SharedInformer.Registration>()
      const r = yield* informer.addEventHandler({
        onAdd: (o) =>
          Effect.andThen(
            Effect.sync(() => {
              seen.push(nameOf(o))
            }),
            nameOf(o) === "pod2" ? Effect.flatMap(Deferred.await(self), (reg) => reg.remove) : Effect.void
          )
      })
      yield* Deferred.succeed(self, r)
      yield* informer.addEventHandler(other.handler)
      yield* informer.start
      yield* settle
      yield* fake.add(pod("pod2"))
      yield* fake.add(pod("pod3"))
      yield* settle
      assert.deepStrictEqual(seen, ["pod1", "pod2"])
      assert.strictEqual(yield* r.backlog, 0)
      yield* fake.add(pod("pod4"))
      yield* settle
      assert.deepStrictEqual(seen, ["pod1", "pod2"])
      assert.deepStrictEqual(other.events.map(summary), ["add pod1 (initial)", "add pod2", "add pod3", "add pod4"])
    }))

  describe("TestShutDownEventHandler_Lifecycles: remove returns promptly", () => {
    const promptly = (r: SharedInformer.Registration) =>
      Effect.gen(function*() {
        const remover = yield* Effect.forkChild(r.remove)
        yield* settle
        assert.isDefined(remover.pollUnsafe())
      })

    it.effect("informer never started", () =>
      Effect.gen(function*() {
        const { informer } = yield* setup()
        yield* promptly(yield* informer.addEventHandler(recorder().handler))
      }))

    it.effect("handler added after sync", () =>
      Effect.gen(function*() {
        const { informer } = yield* setup({}, [pod("pod1")])
        yield* informer.start
        yield* settle
        const r = yield* informer.addEventHandler(recorder().handler)
        yield* settle
        assert.isTrue(yield* r.hasSynced)
        yield* promptly(r)
      }))

    it.effect("handler added before start", () =>
      Effect.gen(function*() {
        const { informer } = yield* setup({}, [pod("pod1")])
        const r = yield* informer.addEventHandler(recorder().handler)
        yield* informer.start
        yield* settle
        yield* promptly(r)
      }))
  })
})

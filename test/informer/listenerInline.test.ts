/**
 * The handler loop's inline path (`internal/listener.ts`, `runInline`): which Effects it runs itself, that
 * it runs each thunk exactly once and leaves the rest to the fiber, defects, the fiber's tracer, and the
 * behaviour through an informer (failures logged and skipped, order kept, a supervisor that watches every
 * operation still sees the callbacks').
 */
import { assert, describe, it } from "@effect/vitest"
import type { Fiber } from "effect"
import { Cause, Context, Effect, Exit, Layer, Option, Supervisor, Tracer } from "effect"
import * as RuntimeFlags from "effect/RuntimeFlags"
import { runInline } from "../../src/internal/informer/listener.js"
import { captureLogs, settle } from "../fixtures/index.js"
import { eventually, pod, recorder, setup } from "./sharedInformer/fixtures.js"

/** `runInline(effect)` in the current fiber, with its tracer. */
const inline = <E, R = never>(effect: Effect.Effect<unknown, E, R>) =>
  Effect.withFiberRuntime<Effect.Effect<unknown, E, R> | undefined>((fiber) =>
    Effect.succeed(runInline(effect, fiber as Fiber.RuntimeFiber<unknown, unknown>, fiber.currentTracer))
  )

class Service extends Context.Tag("test/Service")<Service, { readonly n: number }>() {}

describe("listener: the inline path", () => {
  it.effect("succeed, void, sync and suspend of these run inline, each thunk once", () =>
    Effect.gen(function*() {
      assert.isUndefined(yield* inline(Effect.void))
      assert.isUndefined(yield* inline(Effect.succeed(1)))
      let calls = 0
      assert.isUndefined(yield* inline(Effect.sync(() => calls++)))
      assert.strictEqual(calls, 1)
      assert.isUndefined(yield* inline(Effect.suspend(() => Effect.sync(() => calls++))))
      assert.strictEqual(calls, 2)
      assert.isUndefined(yield* inline(Effect.suspend(() => Effect.suspend(() => Effect.void))))
    }))

  it.effect("anything else is left to the fiber, and what ran inline does not run again", () =>
    Effect.gen(function*() {
      let calls = 0
      const failing = yield* inline(Effect.fail("no"))
      assert.isDefined(failing)
      assert.deepStrictEqual(yield* Effect.exit(failing!), Exit.fail("no"))
      // a suspend is called here; what it returns (a flatMap) is the fiber's, and runs once
      const rest = yield* inline(Effect.suspend(() => {
        calls++
        return Effect.flatMap(Effect.sync(() => calls++), () => Effect.sync(() => calls++))
      }))
      assert.strictEqual(calls, 1)
      assert.isDefined(rest)
      yield* rest!
      assert.strictEqual(calls, 3)
      // an Effect that needs the context goes to the fiber
      const service = yield* inline(Effect.map(Service, (s) => s.n))
      assert.isDefined(service)
      assert.strictEqual(
        yield* Effect.provideService(service! as Effect.Effect<number, never, Service>, Service, { n: 7 }),
        7
      )
      // async
      assert.isDefined(yield* inline(Effect.sleep("1 millis")))
    }))

  it.effect("a thunk that throws leaves a defect", () =>
    Effect.gen(function*() {
      const boom = new Error("boom")
      const rest = yield* inline(Effect.sync(() => {
        throw boom
      }))
      assert.isDefined(rest)
      const exit = yield* Effect.exit(rest!)
      assert.isTrue(Exit.isFailure(exit) && Option.getOrUndefined(Cause.dieOption(exit.cause)) === boom)
    }))

  it.effect("the thunks run inside the fiber's tracer context", () =>
    Effect.gen(function*() {
      let contexts = 0
      const native = yield* Effect.tracer
      const counting = Tracer.make({
        span: (...args) => native.span(...args),
        context: (f, fiber) => {
          contexts++
          return native.context(f, fiber)
        }
      })
      let calls = 0
      const before = yield* Effect.sync(() => contexts)
      const done = yield* inline(Effect.suspend(() => Effect.sync(() => calls++))).pipe(Effect.withTracer(counting))
      assert.isUndefined(done)
      assert.strictEqual(calls, 1)
      // the suspend's thunk and the sync's, each inside `context` (the run loop's own turns are on top)
      assert.isAtLeast(contexts - before, 2)
    }))
})

describe("listener: inline callbacks through an informer", () => {
  it.scoped("a callback that throws inside Effect.sync is logged and skipped; the next ones run, in order", () =>
    Effect.gen(function*() {
      const logs = captureLogs()
      const seen: Array<string> = []
      yield* logs.capture(Effect.gen(function*() {
        const { fake, informer } = yield* setup({ name: "inline" }, [pod("a"), pod("b"), pod("c")])
        yield* informer.addEventHandler({
          name: "thrower",
          onAdd: (obj) =>
            Effect.sync(() => {
              if (obj.metadata?.name === "b") throw new Error("thrown in sync")
              seen.push(obj.metadata!.name!)
            })
        })
        yield* informer.start
        yield* eventually(Effect.sync(() => seen.length === 2), "a and c handled")
        yield* fake.add(pod("d"))
        yield* eventually(Effect.sync(() => seen.length === 3), "d handled")
      }))
      assert.deepStrictEqual(seen, ["a", "c", "d"])
      assert.isTrue(logs.lines.some((line) => line.includes("handler thrower failed on add of ns/b")))
      assert.isTrue(logs.lines.some((line) => line.includes("thrown in sync")))
    }))

  it.scoped("handlers mixing inline and fiber callbacks keep their order", () =>
    Effect.gen(function*() {
      const seen: Array<string> = []
      const { fake, informer } = yield* setup({ name: "mixed" }, [])
      yield* informer.addEventHandler({
        name: "mixed",
        onAdd: (obj) => {
          const name = obj.metadata!.name!
          const record = Effect.sync(() => void seen.push(name))
          // every third one through the fiber (a sleep of zero is async)
          return Number(name.slice(1)) % 3 === 0 ? Effect.zipRight(Effect.sleep(0), record) : record
        }
      })
      yield* informer.start
      yield* settle
      for (let i = 0; i < 30; i++) yield* fake.add(pod(`p${i}`))
      yield* eventually(Effect.sync(() => seen.length === 30), "all handled")
      assert.deepStrictEqual(seen, Array.from({ length: 30 }, (_, i) => `p${i}`))
    }))

  it.scoped("with op supervision on, callbacks go through the fiber, where the supervisor sees them", () =>
    Effect.gen(function*() {
      const seenOps: Array<unknown> = []
      const thunk = () => undefined
      const watching = new (class extends Supervisor.AbstractSupervisor<void> {
        value = Effect.void
        override onEffect(
          _fiber: Fiber.RuntimeFiber<unknown, unknown>,
          effect: Effect.Effect<unknown, unknown, unknown>
        ) {
          if ((effect as { readonly effect_instruction_i0?: unknown }).effect_instruction_i0 === thunk) {
            seenOps.push(effect)
          }
        }
      })()
      const healthy = recorder("healthy")
      yield* Effect.gen(function*() {
        const { fake, informer } = yield* setup({ name: "supervised" }, [])
        yield* informer.addEventHandler({ name: "watched", onAdd: () => Effect.sync(thunk) })
        yield* informer.addEventHandler(healthy.handler)
        yield* informer.start
        yield* settle
        yield* fake.add(pod("a"))
        yield* fake.add(pod("b"))
        yield* eventually(Effect.sync(() => healthy.events.length === 2), "both handled")
        yield* eventually(Effect.sync(() => seenOps.length === 2), "the supervisor saw both callbacks")
      }).pipe(
        Effect.provide(Layer.merge(Supervisor.addSupervisor(watching), RuntimeFlags.enableOpSupervision))
      )
    }))
})

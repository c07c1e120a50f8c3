/**
 * The handler loop's inline path (`internal/listener.ts`, `runInline`): on Effect 4 it finishes only the
 * callbacks whose Effect is already a successful `Exit` (`Effect.void`, `Effect.succeed`) and leaves every
 * other Effect, untouched, to the handler's fiber: that each thunk runs exactly once and in the fiber,
 * defects, and the behaviour through an informer (failures logged and skipped, order kept, callbacks run in
 * the handler's fiber with its context).
 */
import { assert, describe, it } from "@effect/vitest"
import { Cause, Context, Effect, Exit, Fiber, References } from "effect"
import { runInline } from "../../src/internal/informer/listener.js"
import { captureLogs, settle } from "../fixtures/index.js"
import { eventually, pod, recorder, setup } from "./sharedInformer/fixtures.js"

class Service extends Context.Service<Service, { readonly n: number }>()("test/Service") {}

describe("listener: the inline path", () => {
  it.effect("succeed and void finish inline; sync and suspend go to the fiber, each thunk run once, there", () =>
    Effect.gen(function*() {
      assert.isUndefined(runInline(Effect.void))
      assert.isUndefined(runInline(Effect.succeed(1)))
      let calls = 0
      const sync = Effect.sync(() => calls++)
      assert.strictEqual(runInline(sync), sync)
      assert.strictEqual(calls, 0)
      yield* runInline(sync)!
      assert.strictEqual(calls, 1)
      const suspended = Effect.suspend(() => Effect.sync(() => calls++))
      assert.strictEqual(runInline(suspended), suspended)
      assert.strictEqual(calls, 1)
      yield* runInline(suspended)!
      assert.strictEqual(calls, 2)
      const nested = Effect.suspend(() => Effect.suspend(() => Effect.void))
      assert.strictEqual(runInline(nested), nested)
    }))

  it.effect("anything else is left to the fiber as it is, and runs once there", () =>
    Effect.gen(function*() {
      let calls = 0
      // a failed Exit is not finished inline: the fiber fails with it
      const failing = runInline(Effect.fail("no"))
      assert.isDefined(failing)
      assert.deepStrictEqual(yield* Effect.exit(failing!), Exit.fail("no"))
      // a suspend is not called here; what it returns (a flatMap) runs once, in the fiber
      const rest = runInline(Effect.suspend(() => {
        calls++
        return Effect.flatMap(Effect.sync(() => calls++), () => Effect.sync(() => calls++))
      }))
      assert.strictEqual(calls, 0)
      assert.isDefined(rest)
      yield* rest!
      assert.strictEqual(calls, 3)
      // an Effect that needs the context goes to the fiber
      const service = runInline(Effect.map(Effect.service(Service), (s) => s.n))
      assert.isDefined(service)
      assert.strictEqual(
        yield* Effect.provideService(service! as Effect.Effect<number, never, Service>, Service, { n: 7 }),
        7
      )
      // async
      assert.isDefined(runInline(Effect.sleep("1 millis")))
    }))

  it.effect("a thunk that throws is a defect of the fiber that runs it", () =>
    Effect.gen(function*() {
      const boom = new Error("boom")
      const rest = runInline(Effect.sync(() => {
        throw boom
      }))
      assert.isDefined(rest)
      const exit = yield* Effect.exit(rest!)
      assert.isTrue(
        Exit.isFailure(exit) && exit.cause.reasons.some((reason) => Cause.isDieReason(reason) && reason.defect === boom)
      )
    }))

  it.effect("the thunks run in the fiber, inside its context", () =>
    Effect.gen(function*() {
      const self = yield* Effect.fiber
      let ranIn: Fiber.Fiber<unknown, unknown> | undefined = undefined
      let annotations: Readonly<Record<string, unknown>> = {}
      const rest = runInline(Effect.suspend(() =>
        Effect.sync(() => {
          ranIn = Fiber.getCurrent()
        }).pipe(Effect.andThen(Effect.withFiber((fiber) => {
          annotations = fiber.getRef(References.CurrentLogAnnotations)
          return Effect.void
        })))
      ))
      assert.isUndefined(ranIn)
      yield* rest!.pipe(Effect.annotateLogs({ span: "caller" }))
      assert.strictEqual(ranIn, self)
      assert.strictEqual(annotations.span, "caller")
    }))
})

describe("listener: inline callbacks through an informer", () => {
  it.effect("a callback that throws inside Effect.sync is logged and skipped; the next ones run, in order", () =>
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

  it.effect("handlers mixing inline and fiber callbacks keep their order", () =>
    Effect.gen(function*() {
      const seen: Array<string> = []
      const { fake, informer } = yield* setup({ name: "mixed" }, [])
      yield* informer.addEventHandler({
        name: "mixed",
        onAdd: (obj) => {
          const name = obj.metadata!.name!
          const record = Effect.sync(() => void seen.push(name))
          // every third one through the fiber (a sleep of zero is async)
          return Number(name.slice(1)) % 3 === 0 ? Effect.andThen(Effect.sleep(0), record) : record
        }
      })
      yield* informer.start
      yield* settle
      for (let i = 0; i < 30; i++) yield* fake.add(pod(`p${i}`))
      yield* eventually(Effect.sync(() => seen.length === 30), "all handled")
      assert.deepStrictEqual(seen, Array.from({ length: 30 }, (_, i) => `p${i}`))
    }))

  it.effect("callbacks run in the handler's fiber, with its context (its log annotations)", () =>
    Effect.gen(function*() {
      const seen: Array<Readonly<Record<string, unknown>>> = []
      const healthy = recorder("healthy")
      const { fake, informer } = yield* setup({ name: "annotated" }, [])
      yield* informer.addEventHandler({
        name: "watched",
        // a callback the fiber runs: it reads the fiber's references
        onAdd: () =>
          Effect.withFiber((fiber) => Effect.sync(() => seen.push(fiber.getRef(References.CurrentLogAnnotations))))
      })
      yield* informer.addEventHandler(healthy.handler)
      yield* informer.start
      yield* settle
      yield* fake.add(pod("a"))
      yield* fake.add(pod("b"))
      yield* eventually(Effect.sync(() => healthy.events.length === 2), "both handled")
      yield* eventually(Effect.sync(() => seen.length === 2), "the callbacks ran")
      for (const annotations of seen) {
        assert.strictEqual(annotations.informer, "annotated")
        assert.strictEqual(annotations.handler, "watched")
      }
    }))
})

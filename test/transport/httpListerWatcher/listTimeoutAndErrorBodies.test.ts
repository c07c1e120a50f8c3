/**
 * HttpListerWatcher: the LIST idle timeout (listIdleTimeout) and error bodies.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Stream from "effect/Stream"
import * as TestClock from "effect/testing/TestClock"
import { controlled, fake, pod, pods } from "./fixtures.js"

describe("LIST idle timeout (listIdleTimeout)", () => {
  it.effect("no response headers for 60 s (the default): TransportError (Timeout), not a hang", () => {
    const { layer } = fake(() => Effect.never)
    return Effect.gen(function*() {
      const lw = yield* pods()
      const fiber = yield* Effect.forkChild(Effect.flip(lw.list({})))
      yield* TestClock.adjust("59 seconds")
      assert.isUndefined(fiber.pollUnsafe())
      yield* TestClock.adjust("2 seconds")
      const error = yield* Fiber.join(fiber)
      assert.strictEqual(error._tag, "TransportError")
      assert.strictEqual(error.reason, "Timeout")
      assert.strictEqual(error.message, "list pods in default: no response headers for 1m")
    }).pipe(Effect.provide(layer))
  })

  it.effect("a body that stops sending bytes fails; a slow body that keeps sending is never cut", () => {
    const body = controlled()
    const { layer } = fake(() => new Response(body.body, { status: 200 }))
    return Effect.gen(function*() {
      const lw = yield* pods({ listIdleTimeout: "10 seconds" })
      // 60 s in all, a piece every 8 s: longer than the idle timeout in total, never idle for it
      const slow = yield* Effect.forkChild(lw.list({}))
      const text = JSON.stringify({ kind: "PodList", metadata: { resourceVersion: "7" }, items: [pod("a", "7")] })
      const step = Math.ceil(text.length / 8)
      for (let i = 0; i < text.length; i += step) {
        body.push(text.slice(i, i + step))
        yield* TestClock.adjust("8 seconds")
      }
      body.end()
      const page = yield* Fiber.join(slow)
      assert.strictEqual(page.resourceVersion, "7")
      assert.deepStrictEqual(page.items.map((o) => o.metadata?.name), ["a"])
    }).pipe(Effect.provide(layer))
  })

  it.effect("a body that goes quiet mid-list fails with TransportError (Timeout) after the idle timeout", () => {
    const body = controlled()
    const { layer } = fake(() => new Response(body.body, { status: 200 }))
    return Effect.gen(function*() {
      const lw = yield* pods({ listIdleTimeout: "10 seconds" })
      const fiber = yield* Effect.forkChild(Effect.flip(lw.list({})))
      body.push(`{"kind":"PodList","metadata":{"resourceVersion":"7"},"items":[`)
      yield* TestClock.adjust("9 seconds")
      assert.isUndefined(fiber.pollUnsafe())
      yield* TestClock.adjust("2 seconds")
      const error = yield* Fiber.join(fiber)
      assert.strictEqual(error._tag, "TransportError")
      assert.strictEqual(error.reason, "Timeout")
      assert.strictEqual(error.message, "list pods in default: no bytes received for 10s")
    }).pipe(Effect.provide(layer))
  })

  it.effect("Duration.infinity turns it off", () => {
    const { layer } = fake(() => Effect.never)
    return Effect.gen(function*() {
      const lw = yield* pods({ listIdleTimeout: Duration.infinity })
      const fiber = yield* Effect.forkChild(lw.list({}))
      yield* TestClock.adjust("1 hour")
      assert.isUndefined(fiber.pollUnsafe())
      yield* Fiber.interrupt(fiber)
    }).pipe(Effect.provide(layer))
  })
})

describe("error bodies", () => {
  it.effect("only the first 8 KiB of an error body are read: a huge error body costs nothing", () => {
    let pulled = 0
    const huge = new ReadableStream<Uint8Array>({
      pull(controller) {
        pulled++
        controller.enqueue(new Uint8Array(64 * 1024).fill(120))
        if (pulled > 100_000) controller.close()
      }
    })
    const { layer } = fake(() => new Response(huge, { status: 500 }))
    return Effect.gen(function*() {
      const lw = yield* pods()
      const error = yield* Effect.flip(lw.list({}))
      assert.strictEqual(error._tag, "StatusError")
      assert(error._tag === "StatusError")
      assert.strictEqual(error.reason, "ServerError")
      assert.strictEqual(error.code, 500)
      assert.isBelow(pulled, 10)
      assert.isBelow(error.message.length, 400)
      assert.notInclude(error.message, "\n")
    }).pipe(Effect.provide(layer))
  })

  it.effect("error headers, then a body that stalls: TransportError (Timeout) after the idle bound, for a LIST and a WATCH", () => {
    const { layer } = fake(() => {
      const body = controlled()
      body.push(`{"kind":"Status","message":"half`)
      return new Response(body.body, { status: 500 })
    })
    return Effect.gen(function*() {
      const lw = yield* pods({ listIdleTimeout: "10 seconds" })
      const listing = yield* Effect.forkChild(Effect.flip(lw.list({})))
      const watching = yield* Effect.forkChild(Effect.flip(Stream.runDrain(lw.watch({}))))
      yield* TestClock.adjust("9 seconds")
      assert.isUndefined(listing.pollUnsafe())
      yield* TestClock.adjust("2 seconds")
      const listError = yield* Fiber.join(listing)
      const watchError = yield* Fiber.join(watching)
      assert.strictEqual(listError._tag, "TransportError")
      assert.strictEqual(listError.reason, "Timeout")
      assert.strictEqual(listError.message, "list pods in default: HTTP 500, then no body for 10s")
      assert.strictEqual(watchError._tag, "TransportError")
      assert.strictEqual(watchError.reason, "Timeout")
    }).pipe(Effect.provide(layer))
  })
})

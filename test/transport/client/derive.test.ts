/**
 * `Client.Service.derive`: a Client over the same connections and credentials with a rate limiter of its
 * own (its requests never wait for the parent's tokens), the parent's qps, burst, timeout and user agent
 * unless given, and the same scrubbing of what a server echoes.
 */
import * as ApiServer from "@effect-informers/testkit/ApiServer"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as TestClock from "effect/testing/TestClock"
import * as Client from "../../../src/Client.js"
import * as Resource from "../../../src/Resource.js"
import { eventually } from "../../fixtures/index.js"
import { clientLayer, configMap, failure, realSleep, status, TOKEN, withStub } from "./fixtures.js"

const gets = (server: ApiServer.ApiServer.Service) => Effect.map(server.stats, (stats) => stats.requestsByVerb.get ?? 0)

describe("Client.derive", () => {
  it.effect("a bucket of its own: its requests go while the parent's wait for tokens (TestClock)", () =>
    Effect.gen(function*() {
      const server = yield* Effect.orDie(ApiServer.make())
      yield* server.objects.create(Resource.configMaps, { metadata: { name: "cm", namespace: "default" } })
      const parent = yield* Effect.provide(Client.Client, clientLayer(server.url, { qps: 5, burst: 10 }))
      const derived = yield* parent.derive()
      // the parent's bucket is empty and 5 of its requests wait (the last one until 1 s)
      const flood = yield* Effect.forkChild(
        Effect.forEach(Array.from({ length: 15 }), () => parent.get(Resource.configMaps, "cm"), {
          concurrency: "unbounded"
        })
      )
      yield* TestClock.adjust(0)
      yield* eventually(Effect.map(gets(server), (n) => n === 10), {
        what: "the parent's burst",
        interval: 5,
        clock: "real"
      })
      // the derived Client's requests go at once, the TestClock standing still: a burst of the parent's 10
      const mine = yield* Effect.forkChild(
        Effect.forEach(Array.from({ length: 10 }), () => derived.get(Resource.configMaps, "cm"), {
          concurrency: "unbounded"
        })
      )
      yield* eventually(Effect.map(gets(server), (n) => n === 20), {
        what: "the derived Client's burst",
        interval: 5,
        clock: "real"
      })
      assert.strictEqual((yield* Fiber.join(mine)).length, 10)
      // its 11th waits for its own next token (200 ms at the parent's 5 qps), not behind the parent's queue
      const eleventh = yield* Effect.forkChild(derived.get(Resource.configMaps, "cm"))
      yield* realSleep(50)
      assert.strictEqual(yield* gets(server), 20)
      yield* TestClock.adjust(200)
      yield* Fiber.join(eleventh)
      // the parent's first waiting request was due at 200 ms too; the rest at 400 .. 1000 ms
      yield* eventually(Effect.map(gets(server), (n) => n === 22), { what: "22 gets", interval: 5, clock: "real" })
      yield* TestClock.adjust(800)
      assert.strictEqual((yield* Fiber.join(flood)).length, 15)
      assert.strictEqual(yield* gets(server), 26)
    }))

  it.effect("options given replace the parent's: qps 1, burst 1 (TestClock)", () =>
    Effect.gen(function*() {
      const server = yield* Effect.orDie(ApiServer.make())
      yield* server.objects.create(Resource.configMaps, { metadata: { name: "cm", namespace: "default" } })
      const parent = yield* Effect.provide(Client.Client, clientLayer(server.url, { qps: Infinity }))
      const slow = yield* parent.derive({ qps: 1, burst: 1 })
      const both = yield* Effect.forkChild(
        Effect.all([slow.get(Resource.configMaps, "cm"), slow.get(Resource.configMaps, "cm")], {
          concurrency: "unbounded"
        })
      )
      yield* TestClock.adjust(0)
      yield* eventually(Effect.map(gets(server), (n) => n === 1), { what: "the first get", interval: 5, clock: "real" })
      // the parent is not limited by its child's bucket
      yield* Effect.forEach(Array.from({ length: 20 }), () => parent.get(Resource.configMaps, "cm"))
      assert.strictEqual(yield* gets(server), 21)
      yield* TestClock.adjust(999)
      yield* realSleep(50)
      assert.strictEqual(yield* gets(server), 21)
      yield* TestClock.adjust(1)
      yield* Fiber.join(both)
      assert.strictEqual(yield* gets(server), 22)
    }))

  it.effect("a qps or burst out of range dies, as make does", () =>
    Effect.gen(function*() {
      const parent = yield* Effect.provide(Client.Client, clientLayer("http://127.0.0.1:1", { qps: 5 }))
      for (const options of [{ qps: 0 }, { qps: -1 }, { burst: 0 }, { burst: 1.5 }]) {
        const exit = yield* Effect.exit(parent.derive(options))
        assert.isTrue(
          Exit.isFailure(exit) && exit.cause.reasons.length === 1 && exit.cause.reasons[0]._tag === "Die",
          JSON.stringify(options)
        )
      }
    }))

  it.live("the same credentials, scrubbing and user agent, unless the user agent is given", () =>
    withStub(
      (request) =>
        request.url.pathname.endsWith("/echo")
          ? { code: 403, body: status(403, "Forbidden", `you sent ${request.headers.authorization}`) }
          : { code: 200, body: configMap("cm") },
      (stub, parent) =>
        Effect.gen(function*() {
          const same = yield* parent.derive()
          const renamed = yield* parent.derive({ userAgent: "my-controller/1.0 (leader-election)" })
          yield* same.get(Resource.configMaps, "cm")
          yield* renamed.get(Resource.configMaps, "cm")
          const [first, second] = stub.requests
          assert.strictEqual(first!.headers.authorization, `Bearer ${TOKEN}`)
          assert.strictEqual(first!.headers["user-agent"], "my-controller/1.0")
          assert.strictEqual(second!.headers.authorization, `Bearer ${TOKEN}`)
          assert.strictEqual(second!.headers["user-agent"], "my-controller/1.0 (leader-election)")
          // what a server echoes is scrubbed, as the parent scrubs it
          const echoed = yield* failure(same.get(Resource.configMaps, "echo"))
          assert.strictEqual(echoed.kind, "StatusError (Forbidden)")
          assert.notInclude(echoed.error.message, TOKEN)
          assert.include(echoed.error.message, "you sent")
        }),
      { qps: Infinity, userAgent: "my-controller/1.0" }
    ))

  it.live("a timeout of its own; absent, the parent's", () =>
    withStub(
      () => "hang",
      (_, parent) =>
        Effect.gen(function*() {
          const quick = yield* parent.derive({ timeout: "100 millis" })
          const started = Date.now()
          const cut = yield* failure(quick.get(Resource.configMaps, "cm"))
          assert.strictEqual(cut.kind, "TransportError (Timeout)")
          assert.include(cut.error.message, "100ms")
          assert.isBelow(Date.now() - started, 1000)
          const inherited = yield* failure((yield* parent.derive()).get(Resource.configMaps, "cm"))
          assert.strictEqual(inherited.kind, "TransportError (Timeout)")
          assert.include(inherited.error.message, "300ms")
        }),
      { qps: Infinity, timeout: "300 millis" }
    ))
})

/**
 * `retryOnConflict`: client-go's `retry.RetryOnConflict` with `retry.DefaultRetry`.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Schedule from "effect/Schedule"
import * as TestClock from "effect/testing/TestClock"
import * as ApiError from "../../../src/ApiError.js"
import * as Client from "../../../src/Client.js"
import * as Resource from "../../../src/Resource.js"
import * as Wire from "../../../src/Wire.js"
import { configMap, failure, withApiServer } from "./fixtures.js"

const conflict = () =>
  ApiError.fromStatus(
    Wire.failureStatus(
      409,
      "Conflict",
      `Operation cannot be fulfilled on configmaps "cm": the object has been modified`
    )
  )

describe("Client.retryOnConflict", () => {
  it.live("a concurrent writer makes the first update conflict; the whole get-modify-update runs again", () =>
    withApiServer((server, client) =>
      Effect.gen(function*() {
        yield* client.create(Resource.configMaps, configMap("counter", { data: { n: "0" } }))
        let attempts = 0
        const increment = Effect.gen(function*() {
          attempts++
          const cm = yield* client.get(Resource.configMaps, "counter")
          if (attempts === 1) {
            // another writer, between our read and our write
            yield* server.objects.patch(Resource.configMaps, { name: "counter", namespace: "default" }, {
              data: { n: "10" }
            })
          }
          return yield* client.update(Resource.configMaps, { ...cm, data: { n: String(Number(cm.data?.n) + 1) } })
        })
        const updated = yield* Client.retryOnConflict(increment)
        assert.strictEqual(attempts, 2)
        assert.deepStrictEqual(updated.data, { n: "11" })
      })
    ))

  it.live("pipeable, and without retry a stale update fails with Conflict", () =>
    withApiServer((server, client) =>
      Effect.gen(function*() {
        const cm = yield* client.create(Resource.configMaps, configMap("cm", { data: { a: "1" } }))
        yield* server.objects.patch(Resource.configMaps, { name: "cm", namespace: "default" }, { data: { a: "2" } })
        const stale = client.update(Resource.configMaps, { ...cm, data: { a: "3" } })
        assert.strictEqual((yield* failure(stale)).kind, "StatusError (Conflict)")
        // the same stale object every time: five attempts, then the last Conflict
        let attempts = 0
        const counted = Effect.andThen(Effect.sync(() => attempts++), stale)
        const error = yield* failure(counted.pipe(Client.retryOnConflict()))
        assert.strictEqual(error.kind, "StatusError (Conflict)")
        assert.strictEqual(attempts, 5)
      })
    ))

  it.effect("only Conflict is retried: AlreadyExists, NotFound, transport errors are returned at once", () =>
    Effect.gen(function*() {
      const errors = [
        ApiError.fromStatus(Wire.failureStatus(409, "AlreadyExists", "exists")),
        ApiError.fromStatus(Wire.failureStatus(404, "NotFound", "not found")),
        new ApiError.TransportError({ reason: "RequestFailed", message: "refused" }),
        "not an ApiError"
      ]
      for (const error of errors) {
        let attempts = 0
        const result = yield* Effect.flip(Client.retryOnConflict(Effect.suspend(() => {
          attempts++
          return Effect.fail<unknown>(error)
        })))
        assert.strictEqual(result, error)
        assert.strictEqual(attempts, 1)
      }
    }))

  it.effect("a custom schedule", () =>
    Effect.gen(function*() {
      let attempts = 0
      const effect = Effect.suspend(() => ++attempts < 3 ? Effect.fail(conflict()) : Effect.succeed(attempts))
      assert.strictEqual(yield* Client.retryOnConflict(effect, Schedule.recurs(5)), 3)
      attempts = 0
      const once = yield* Effect.flip(Client.retryOnConflict(Schedule.recurs(1))(effect))
      assert.strictEqual(once.reason, "Conflict")
      assert.strictEqual(attempts, 2)
    }))

  it.effect("defaultRetry is client-go's DefaultRetry: 10 to 11 ms between attempts (jitter 0.1), five attempts in all", () =>
    Effect.gen(function*() {
      const times: Array<number> = []
      const fiber = yield* Effect.forkChild(Effect.flip(Client.retryOnConflict(
        Effect.flatMap(Clock.currentTimeMillis, (now) => {
          times.push(now)
          return Effect.fail(conflict())
        })
      )))
      // 1 ms at a time: each wait ends at the first whole millisecond after it is due
      for (let i = 0; i < 100; i++) yield* TestClock.adjust("1 millis")
      const error = yield* Fiber.join(fiber)
      assert.strictEqual(error.reason, "Conflict")
      assert.strictEqual(times.length, 5)
      for (let i = 1; i < times.length; i++) {
        const gap = times[i] - times[i - 1]
        assert.isAtLeast(gap, 10)
        assert.isAtMost(gap, 11)
      }
    }))
})

/**
 * Writes are fenced by the current `Term`: every write verb checks it after its rate-limiter wait, in the
 * step that sends the request; a write of a stale term fails with `TermError`, is not sent (the server
 * sees nothing), and ends the term. Reads are not fenced. Outside any term nothing changes.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as TestClock from "effect/testing/TestClock"
import * as Client from "../../../src/Client.js"
import * as Resource from "../../../src/Resource.js"
import * as Term from "../../../src/Term.js"
import { eventually } from "../../fixtures/index.js"
import { configMap, withStub } from "./fixtures.js"

/** A term valid until `deadline` (Clock milliseconds), recording its end. */
const termUntil = (deadline: number, ended: Array<string>) =>
  Term.make({
    name: "test term",
    check: (now) =>
      now < deadline
        ? undefined
        : new Term.TermError({ reason: "DeadlinePassed", term: "test term", detail: `at ${now}` }),
    onEnd: (error) => void ended.push(error.reason)
  })

const answer = (request: { readonly method: string }) =>
  request.method === "DELETE"
    ? { code: 200, body: { kind: "Status", apiVersion: "v1", status: "Success" } }
    : { code: 200, body: configMap("cm", { metadata: { name: "cm", namespace: "default", resourceVersion: "5" } }) }

describe("Client: writes fenced by the term", () => {
  it.effect("every write verb of a stale term fails with TermError and is not sent; reads still are", () =>
    withStub(answer, (stub, client) =>
      Effect.gen(function*() {
        const ended: Array<string> = []
        const term = termUntil(1000, ended)
        yield* TestClock.adjust(1000)
        const writes: ReadonlyArray<readonly [string, Effect.Effect<unknown, unknown>]> = [
          ["create", client.create(Resource.configMaps, configMap("cm"))],
          ["update", client.update(Resource.configMaps, configMap("cm"))],
          ["updateStatus", client.updateStatus(Resource.configMaps, configMap("cm"))],
          ["patch", client.patch(Resource.configMaps, "cm", Client.mergePatch({}))],
          ["patchStatus", client.patchStatus(Resource.configMaps, "cm", Client.mergePatch({}))],
          ["apply", client.apply(Resource.configMaps, configMap("cm"))],
          ["applyStatus", client.applyStatus(Resource.configMaps, configMap("cm"))],
          ["delete", client.delete(Resource.configMaps, "cm")]
        ]
        for (const [verb, write] of writes) {
          const error = yield* Effect.flip(Term.within(write, term))
          assert.isTrue(Term.isTermError(error), verb)
          assert.strictEqual(
            (error as Term.TermError).message,
            "test term: the renew deadline passed since the last successful renewal (at 1000)"
          )
        }
        assert.deepStrictEqual(ended, ["DeadlinePassed"], "the term ended at its first failed check, once")
        assert.deepStrictEqual(stub.requests, [], "nothing was sent")
        // a read within the same stale term is sent
        yield* Term.within(client.get(Resource.configMaps, "cm"), term)
        assert.deepStrictEqual(stub.requests.map((r) => r.method), ["GET"])
      })))

  it.effect("within a valid term, and outside any term, writes are sent", () =>
    withStub(answer, (stub, client) =>
      Effect.gen(function*() {
        const ended: Array<string> = []
        const term = termUntil(1000, ended)
        yield* Term.within(client.create(Resource.configMaps, configMap("cm")), term)
        yield* TestClock.adjust(999)
        yield* Term.within(client.delete(Resource.configMaps, "cm"), term)
        yield* TestClock.adjust(5000)
        yield* client.update(Resource.configMaps, configMap("cm"))
        assert.deepStrictEqual(stub.requests.map((r) => r.method), ["POST", "DELETE", "PUT"])
        assert.deepStrictEqual(ended, [])
      })))

  it.effect("a write that waits for the rate limiter past the term's end is not sent: the check follows the wait", () =>
    withStub(answer, (stub, client) =>
      Effect.gen(function*() {
        const ended: Array<string> = []
        const term = termUntil(500, ended)
        // the first write takes the only token; the second waits 1 s for the next (qps 1, burst 1)
        yield* Term.within(client.create(Resource.configMaps, configMap("cm")), term)
        const waiting = yield* Effect.forkChild(Term.within(client.create(Resource.configMaps, configMap("cm")), term))
        yield* TestClock.adjust(999)
        assert.strictEqual(stub.requests.length, 1)
        assert.deepStrictEqual(ended, [], "the term's end is found by the check after the wait, not before")
        yield* TestClock.adjust(1)
        const error = yield* Effect.flip(Fiber.join(waiting))
        assert.strictEqual(error._tag, "TermError")
        assert.deepStrictEqual(ended, ["DeadlinePassed"])
        assert.strictEqual(stub.requests.length, 1, "the stale write was not sent")
      }), { qps: 1, burst: 1 }))

  it.effect("fibers forked within a term inherit it; nested terms are all checked, outermost first", () =>
    withStub(answer, (stub, client) =>
      Effect.gen(function*() {
        const outerEnded: Array<string> = []
        const innerEnded: Array<string> = []
        const outer = termUntil(100, outerEnded)
        const inner = termUntil(10_000, innerEnded)
        const forked = yield* Effect.forkChild(
          Effect.andThen(Effect.sleep(200), client.create(Resource.configMaps, configMap("cm")))
        ).pipe(Term.within(inner), Term.within(outer))
        yield* TestClock.adjust(200)
        const error = yield* Effect.flip(Fiber.join(forked))
        assert.strictEqual(error._tag, "TermError")
        assert.deepStrictEqual([outerEnded, innerEnded], [["DeadlinePassed"], []])
        yield* eventually(Effect.succeed(true), { what: "nothing in flight", interval: 5, clock: "real" })
        assert.strictEqual(stub.requests.length, 0)
      })))
})

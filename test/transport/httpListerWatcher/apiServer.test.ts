/**
 * HttpListerWatcher end to end against the embedded ApiServer.
 */
import * as ApiServer from "@effect-informers/testkit/ApiServer"
import { assert, describe, it } from "@effect/vitest"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import type * as HttpClient from "effect/http/HttpClient"
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"
import * as Redacted from "effect/Redacted"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import type * as ApiError from "../../../src/ApiError.js"
import type * as KubeConfig from "../../../src/KubeConfig.js"
import * as Resource from "../../../src/Resource.js"
import { live, pods, TOKEN } from "./fixtures.js"

describe("HttpListerWatcher against the embedded ApiServer", () => {
  const withApiServer = <A, E>(
    f: (
      server: ApiServer.ApiServer.Service
    ) => Effect.Effect<A, E, KubeConfig.KubeConfig | HttpClient.HttpClient | Scope.Scope>
  ) =>
    Effect.gen(function*() {
      const server = yield* Effect.orDie(ApiServer.make({ bookmarkInterval: "100 millis" }))
      return yield* f(server).pipe(Effect.provide(live({ server: server.url, token: Redacted.make(TOKEN) })))
    })

  const labelled = (name: string, app: string) => ({ metadata: { name, namespace: "default", labels: { app } } })

  it.live("list and watch, the label selector applied to both", () =>
    withApiServer((server) =>
      Effect.gen(function*() {
        yield* server.objects.create(Resource.pods, labelled("web-1", "web"))
        yield* server.objects.create(Resource.pods, labelled("db-1", "db"))
        const lw = yield* pods({ labelSelector: "app=web" })
        const page = yield* lw.list({})
        assert.deepStrictEqual(page.items.map((p) => p.metadata?.name), ["web-1"])
        const received = yield* Queue.unbounded<string>()
        yield* lw.watch({ resourceVersion: page.resourceVersion }).pipe(
          Stream.runForEach((e) =>
            e.type === "BOOKMARK" ? Effect.void : Queue.offer(received, `${e.type} ${e.object.metadata?.name}`)
          ),
          Effect.forkScoped
        )
        yield* server.objects.create(Resource.pods, labelled("db-2", "db"))
        yield* server.objects.create(Resource.pods, labelled("web-2", "web"))
        yield* server.objects.patch(Resource.pods, { name: "web-1", namespace: "default" }, {
          metadata: { annotations: { a: "b" } }
        })
        yield* server.objects.delete(Resource.pods, { name: "web-2", namespace: "default" })
        const events = [yield* Queue.take(received), yield* Queue.take(received), yield* Queue.take(received)]
        assert.deepStrictEqual(events, ["ADDED web-2", "MODIFIED web-1", "DELETED web-2"])
      })
    ))

  const faults: ReadonlyArray<
    readonly [ApiServer.Fault, "list" | "watch", ApiError.ApiError["_tag"], ApiError.ApiError["reason"]]
  > = [
    [{ _tag: "WatchGone" }, "watch", "StatusError", "Gone"],
    [{ _tag: "WatchGone", mode: "http" }, "watch", "StatusError", "Gone"],
    [{ _tag: "TooManyRequests", retryAfterSeconds: 2, on: "list" }, "list", "StatusError", "TooManyRequests"],
    [{ _tag: "ServerError", status: 503, on: "watch" }, "watch", "StatusError", "ServerError"],
    [{ _tag: "MalformedLine" }, "watch", "DecodeError", "Malformed"],
    [{ _tag: "MissingMetadata" }, "watch", "DecodeError", "Malformed"],
    [{ _tag: "PartialLine" }, "watch", "TransportError", "BodyCut"]
  ]
  for (const [fault, verb, tag, reason] of faults) {
    it.live(`fault ${ApiServer.formatFault(fault)} -> ${tag} (${reason})`, () =>
      withApiServer((server) =>
        Effect.gen(function*() {
          yield* server.objects.create(Resource.pods, labelled("a", "web"))
          const lw = yield* pods()
          const page = yield* lw.list({})
          yield* server.faults.inject(fault)
          const error = verb === "list"
            ? yield* Effect.flip(lw.list({}))
            : yield* Effect.flip(Stream.runDrain(lw.watch({ resourceVersion: page.resourceVersion })))
          assert.strictEqual(error._tag, tag)
          assert.strictEqual(error.reason, reason)
          if (error._tag === "StatusError" && error.reason === "TooManyRequests") {
            assert.deepStrictEqual(error.retryAfter, Option.some(Duration.seconds(2)))
          }
        })
      ))
  }

  it.live("dropped and stalled watches fail with TransportError", () =>
    withApiServer((server) =>
      Effect.gen(function*() {
        const lw = yield* pods({ watchInactivityTimeout: "300 millis" })
        const page = yield* lw.list({})
        const received = yield* Queue.unbounded<string>()
        const dropped = yield* lw.watch({ resourceVersion: page.resourceVersion }).pipe(
          Stream.runForEach((e) => Queue.offer(received, e.type)),
          Effect.flip,
          Effect.forkChild
        )
        yield* server.objects.create(Resource.pods, labelled("a", "web"))
        assert.strictEqual(yield* Queue.take(received), "ADDED")
        yield* server.faults.inject({ _tag: "DropWatches" })
        const drop = yield* Fiber.join(dropped)
        assert.strictEqual(drop._tag, "TransportError")
        assert.strictEqual(drop.reason, "RequestFailed")

        yield* server.faults.inject({ _tag: "StallWatches", count: 1 })
        const stalled = yield* Effect.flip(Stream.runDrain(lw.watch({ allowWatchBookmarks: true })))
        assert.strictEqual(stalled._tag, "TransportError")
        assert.strictEqual(stalled.reason, "Timeout")
        assert.strictEqual(stalled.message, "watch pods in default: no bytes received for 300ms")
      })
    ))
})

/**
 * client-go's REST client metrics (`rest_client_requests_total{code,method,host}`,
 * `rest_client_request_duration_seconds{verb,host}`), recorded for every request the library sends: the
 * Client's verbs and an informer's LIST and WATCH against the embedded ApiServer, a request no server
 * answers (`<error>`), a GET sent again after a reset (two requests), and the time to the headers by the Clock.
 */
import * as ApiServer from "@effect-informers/testkit/ApiServer"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Metric from "effect/Metric"
import * as Queue from "effect/Queue"
import * as Stream from "effect/Stream"
import * as TestClock from "effect/testing/TestClock"
import * as Net from "node:net"
import * as Client from "../../src/Client.js"
import * as HttpListerWatcher from "../../src/HttpListerWatcher.js"
import * as Metrics from "../../src/Metrics.js"
import * as Resource from "../../src/Resource.js"
import * as SharedInformer from "../../src/SharedInformer.js"
import { clientLayer, configMap, transport, withApiServer, withStub } from "./client/fixtures.js"

/** `rest_client_requests_total` of `code` and `method` to `url`'s server. */
const requests = (url: string, code: string, method: string) =>
  Effect.map(
    Metric.value(Metric.withAttributes(Metrics.restClientRequests, { code, method, host: new URL(url).host })),
    (state) => state.count
  )

/** `rest_client_request_duration_seconds` of `verb` to `url`'s server. */
const durations = (url: string, verb: string) =>
  Metric.value(Metric.withAttributes(Metrics.restClientRequestDuration, { verb, host: new URL(url).host }))

/** The cumulative count of the bucket `le` of a histogram's state. */
const bucket = (state: Metric.HistogramState, le: number) => state.buckets.find(([bound]) => bound === le)?.[1]

/** A 127.0.0.1 port nothing listens on: a server's, closed. */
const closedPort = Effect.callback<number>((resume) => {
  const server = Net.createServer()
  server.listen(0, "127.0.0.1", () => {
    const { port } = server.address() as Net.AddressInfo
    server.close(() => resume(Effect.succeed(port)))
  })
})

describe("rest_client_requests_total and rest_client_request_duration_seconds", () => {
  it.live("the Client's verbs: each request counted by code, method and host, and timed by verb", () =>
    withApiServer((server, client) =>
      Effect.gen(function*() {
        const created = yield* client.create(Resource.configMaps, configMap("settings", { data: { a: "1" } }))
        yield* client.get(Resource.configMaps, "settings", { namespace: "default" })
        const missing = yield* Effect.flip(client.get(Resource.configMaps, "absent", { namespace: "default" }))
        assert.strictEqual(missing._tag, "StatusError")
        yield* client.update(Resource.configMaps, { ...created, data: { a: "2" } })
        yield* client.patch(Resource.configMaps, "settings", { _tag: "MergePatch", patch: { data: { b: "3" } } }, {
          namespace: "default"
        })
        yield* client.delete(Resource.configMaps, "settings", { namespace: "default" })

        assert.strictEqual(yield* requests(server.url, "201", "POST"), 1)
        assert.strictEqual(yield* requests(server.url, "200", "GET"), 1)
        assert.strictEqual(yield* requests(server.url, "404", "GET"), 1)
        assert.strictEqual(yield* requests(server.url, "200", "PUT"), 1)
        assert.strictEqual(yield* requests(server.url, "200", "PATCH"), 1)
        assert.strictEqual(yield* requests(server.url, "200", "DELETE"), 1)
        assert.strictEqual(yield* requests(server.url, "<error>", "GET"), 0)

        const gets = yield* durations(server.url, "GET")
        assert.strictEqual(gets.count, 2, "the 200 and the 404")
        assert.isAtLeast(gets.sum, 0)
        assert.strictEqual(bucket(gets, 60), 2, "within client-go's last bucket")
        for (const verb of ["POST", "PUT", "PATCH", "DELETE"]) {
          const timed = yield* durations(server.url, verb)
          assert.strictEqual(timed.count, 1, verb)
          assert.isAtLeast(timed.sum, 0)
        }
        assert.deepStrictEqual(
          (yield* durations(server.url, "GET")).buckets.map(([le]) => le),
          [0.005, 0.025, 0.1, 0.25, 0.5, 1, 2, 4, 8, 15, 30, 60],
          "client-go's buckets"
        )
      })
    ).pipe(Effect.scoped))

  it.live("an informer's LIST and WATCH: two GETs, the watch timed to its headers while it stays open", () =>
    Effect.gen(function*() {
      const server = yield* Effect.orDie(ApiServer.make())
      yield* server.objects.create(Resource.configMaps, configMap("first"))
      const added = yield* Queue.unbounded<string>()
      yield* Effect.gen(function*() {
        const lw = yield* HttpListerWatcher.make(Resource.configMaps, {})
        const informer = yield* SharedInformer.make(lw, { name: "configmaps", reflector: { watchList: false } })
        yield* informer.addEventHandler({
          onAdd: (object) => Queue.offer(added, object.metadata?.name ?? "")
        })
        yield* informer.start
        yield* informer.synced
        assert.strictEqual(yield* Queue.take(added), "first")
        // an object created now reaches the informer by its watch: the watch is open
        yield* server.objects.create(Resource.configMaps, configMap("second"))
        assert.strictEqual(yield* Queue.take(added), "second")

        assert.strictEqual(yield* requests(server.url, "200", "GET"), 2, "one LIST, one WATCH")
        const gets = yield* durations(server.url, "GET")
        assert.strictEqual(gets.count, 2, "the open watch observed at its headers")
        assert.isAtLeast(gets.sum, 0)
      }).pipe(Effect.provide(transport(server.url)))
    }).pipe(Effect.scoped))

  it.live("no server: the request counted with code <error>, and timed", () =>
    Effect.gen(function*() {
      const url = `http://127.0.0.1:${yield* closedPort}`
      const failed = yield* Effect.flip(
        Effect.flatMap(
          Effect.provide(Client.Client, clientLayer(url)),
          (client) => client.get(Resource.configMaps, "settings", { namespace: "default" })
        )
      )
      assert.strictEqual(failed._tag, "TransportError")
      const refused = yield* Effect.flip(
        Effect.flatMap(
          Effect.provide(Client.Client, clientLayer(url)),
          (client) => client.create(Resource.configMaps, configMap("settings"))
        )
      )
      assert.strictEqual(refused._tag, "TransportError")
      assert.strictEqual(yield* requests(url, "<error>", "GET"), 1, "a refused connection is not sent again")
      assert.strictEqual(yield* requests(url, "<error>", "POST"), 1)
      assert.strictEqual((yield* durations(url, "GET")).count, 1)
      assert.strictEqual((yield* durations(url, "POST")).count, 1)

      // a watch to no server too
      const watchFailed = yield* Effect.flip(
        Stream.runDrain(
          Stream.unwrap(Effect.map(HttpListerWatcher.make(Resource.configMaps, {}), (lw) => lw.watch({})))
        ).pipe(Effect.provide(transport(url)))
      )
      assert.strictEqual(watchFailed._tag, "TransportError")
      assert.strictEqual(yield* requests(url, "<error>", "GET"), 2)
    }))

  it.live("a GET sent again after its connection was reset: two requests, <error> then 200", () => {
    let sends = 0
    return withStub(
      () => sends++ === 0 ? "reset" : { code: 200, body: configMap("settings") },
      (stub, client) =>
        Effect.gen(function*() {
          yield* client.get(Resource.configMaps, "settings", { namespace: "default" })
          assert.strictEqual(stub.requests.length, 2)
          assert.strictEqual(yield* requests(stub.url, "<error>", "GET"), 1)
          assert.strictEqual(yield* requests(stub.url, "200", "GET"), 1)
          assert.strictEqual((yield* durations(stub.url, "GET")).count, 2)
        })
    ).pipe(Effect.scoped)
  })

  it.effect("the time to the answer is the Clock's: a request the server holds, timed out after 2 s", () =>
    Effect.gen(function*() {
      let received!: () => void
      const arrived = new Promise<void>((resolve) => received = resolve)
      yield* withStub(
        () => {
          received()
          return "hang"
        },
        (stub, client) =>
          Effect.gen(function*() {
            const fiber = yield* Effect.forkChild(
              Effect.flip(client.get(Resource.configMaps, "settings", { namespace: "default" }))
            )
            yield* Effect.promise(() => arrived)
            yield* TestClock.adjust("2 seconds")
            const error = yield* Fiber.join(fiber)
            assert.strictEqual(error._tag, "TransportError")
            assert.strictEqual(error.reason, "Timeout")
            // interrupted before any answer: client-go's `<error>` of a cancelled request
            assert.strictEqual(yield* requests(stub.url, "<error>", "GET"), 1)
            const timed = yield* durations(stub.url, "GET")
            assert.strictEqual(timed.count, 1)
            assert.strictEqual(timed.sum, 2)
            assert.strictEqual(bucket(timed, 1), 0)
            assert.strictEqual(bucket(timed, 2), 1)
          }),
        { timeout: "2 seconds" }
      )
    }).pipe(Effect.scoped))
})

/**
 * HttpListerWatcher against a real node:http / node:https server.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Queue from "effect/Queue"
import * as Redacted from "effect/Redacted"
import * as Result from "effect/Result"
import * as Stream from "effect/Stream"
import * as TestClock from "effect/testing/TestClock"
import type { TLSSocket } from "node:tls"
import { inspect } from "node:util"
import * as KubeConfig from "../../../src/KubeConfig.js"
import * as Informers from "../../../src/Layer.js"
import { ListerWatcherSource } from "../../../src/ListerWatcher.js"
import * as Resource from "../../../src/Resource.js"
import * as Wire from "../../../src/Wire.js"
import { captureLogs } from "../../fixtures/index.js"
import { event, eventually, isWatch, live, names, pki, pod, podList, pods, runWatch, serve, TOKEN } from "./fixtures.js"

describe("HttpListerWatcher against a node:http server", () => {
  it.live("keep-alive: LIST and WATCH requests reuse one TCP connection", () =>
    Effect.gen(function*() {
      let rv = 100
      const server = yield* serve((request, response) => {
        response.setHeader("content-type", "application/json")
        if (isWatch(request)) {
          response.write(event("ADDED", pod(`w${rv}`, String(++rv))))
          response.end(event("BOOKMARK", { metadata: { resourceVersion: String(++rv) } }))
        } else {
          response.end(podList([pod("a", "1")], String(++rv)))
        }
      })
      yield* Effect.gen(function*() {
        const lw = yield* pods()
        for (let i = 0; i < 3; i++) {
          const page = yield* lw.list({})
          assert.strictEqual(page.items.length, 1)
          const { error, events } = yield* runWatch(lw.watch({ resourceVersion: page.resourceVersion }))
          assert.isUndefined(error)
          assert.strictEqual(events.length, 2)
        }
      }).pipe(Effect.provide(live({ server: server.url, token: Redacted.make(TOKEN) })))
      assert.strictEqual(server.requests.length, 6)
      assert.strictEqual(server.connections(), 1)
      assert.strictEqual(server.requests[0]!.headers.authorization, `Bearer ${TOKEN}`)
      assert.strictEqual(server.requests[0]!.headers.connection, "keep-alive")
    }))

  it.live("interrupting a watch aborts the request: the server sees its connection close", () =>
    Effect.gen(function*() {
      const server = yield* serve((_request, response) => {
        response.writeHead(200, { "content-type": "application/json" })
        response.write(event("ADDED", pod("a", "1")))
      })
      yield* Effect.gen(function*() {
        const lw = yield* pods()
        const received = yield* Queue.unbounded<string>()
        const fiber = yield* lw.watch({}).pipe(
          Stream.runForEach((e) => Queue.offer(received, e.type)),
          Effect.forkChild
        )
        assert.strictEqual(yield* Queue.take(received), "ADDED")
        assert.strictEqual(server.closed.length, 0)
        yield* Fiber.interrupt(fiber)
        yield* eventually(() => server.closed.length === 1, { what: "1 closed connection", timeout: "1 second" })

        // ending the stream early (take) closes the connection too
        const first = yield* lw.watch({}).pipe(Stream.take(1), Stream.runCollect)
        assert.strictEqual(first.length, 1)
        yield* eventually(() => server.closed.length === 2, { what: "2 closed connections", timeout: "1 second" })
      }).pipe(Effect.provide(live({ server: server.url })))
    }))

  it.live("interrupting a watch still waiting for response headers aborts the request", () =>
    Effect.gen(function*() {
      const server = yield* serve(() => {
        // never answers
      })
      yield* Effect.gen(function*() {
        const lw = yield* pods()
        const fiber = yield* Effect.forkChild(Stream.runDrain(lw.watch({})))
        yield* eventually(() => server.requests.length === 1, { what: "1 request", timeout: "1 second" })
        yield* Fiber.interrupt(fiber)
        yield* eventually(() => server.closed.length === 1, { what: "1 closed connection", timeout: "1 second" })
      }).pipe(Effect.provide(live({ server: server.url })))
    }))

  it.effect("Layer.http turns the watchdog on: a body that goes quiet fails after 75 s (TestClock)", () =>
    Effect.gen(function*() {
      const server = yield* TestClock.withLive(serve((_request, response) => {
        response.writeHead(200, { "content-type": "application/json" })
        response.write(event("ADDED", pod("a", "1"))) // then nothing, the connection stays open
      }))
      yield* Effect.gen(function*() {
        const source = yield* ListerWatcherSource
        const lw = source.listerWatcher(Resource.pods, {})
        const received = yield* Queue.unbounded<string>()
        const fiber = yield* lw.watch({}).pipe(
          Stream.runForEach((e) => Queue.offer(received, e.type)),
          Effect.flip,
          Effect.forkChild
        )
        assert.strictEqual(
          yield* TestClock.withLive(Queue.take(received).pipe(Effect.timeout("5 seconds"))),
          "ADDED"
        )
        yield* TestClock.adjust("74 seconds")
        assert.isUndefined(fiber.pollUnsafe())
        yield* TestClock.adjust("2 seconds")
        const error = yield* Fiber.join(fiber)
        assert.strictEqual(error._tag, "TransportError")
        assert.strictEqual(error.reason, "Timeout")
        assert.strictEqual(error.message, "watch pods in all namespaces: no bytes received for 1m 15s")
      }).pipe(
        Effect.provide(
          Informers.http().pipe(Layer.provide(Layer.orDie(KubeConfig.layerFromOptions({ server: server.url }))))
        )
      )
    }))

  it.live("a connection destroyed mid-stream fails the watch with TransportError", () =>
    Effect.gen(function*() {
      const server = yield* serve((request, response) => {
        response.writeHead(200, { "content-type": "application/json" })
        const midLine = new URL(request.url!, "http://x").searchParams.get("resourceVersion") === "mid-line"
        response.write(event("ADDED", pod("a", "1")) + (midLine ? "{\"type\":\"ADD" : ""), () => {
          setTimeout(() => response.socket?.destroy(), 20)
        })
      })
      yield* Effect.gen(function*() {
        const lw = yield* pods()
        for (const resourceVersion of ["between-lines", "mid-line"]) {
          const { error, events } = yield* runWatch(lw.watch({ resourceVersion }))
          assert.deepStrictEqual(names(events), ["a"])
          assert.strictEqual(error?._tag, "TransportError", resourceVersion)
          assert.strictEqual(error?.reason, "RequestFailed", resourceVersion)
          assert.include(error!.message, "watch pods in default: ")
        }
      }).pipe(Effect.provide(live({ server: server.url })))
    }))

  it.live("connection refused is a TransportError (RequestFailed)", () =>
    Effect.gen(function*() {
      const server = yield* Effect.scoped(serve(() => {}))
      const error = yield* Effect.flatMap(pods(), (lw) => Effect.flip(lw.list({}))).pipe(
        Effect.provide(live({ server: server.url }))
      )
      assert.strictEqual(error._tag, "TransportError")
      assert.strictEqual(error.reason, "RequestFailed")
      assert.include(error.message, "ECONNREFUSED")
    }))

  it.live("https: the cluster CA verifies the server, the client certificate is presented", () =>
    Effect.gen(function*() {
      const server = yield* serve((request, response) => {
        const peer = (request.socket as TLSSocket).getPeerCertificate()
        response.setHeader("content-type", "application/json")
        response.end(podList([pod(String(peer.subject?.CN ?? "anonymous"), "1")]))
      }, {
        key: pki.serverKey,
        cert: pki.serverCert,
        ca: pki.ca,
        requestCert: true,
        rejectUnauthorized: false
      })
      const list = (options: Omit<KubeConfig.Options, "server">) =>
        Effect.flatMap(pods(), (lw) => Effect.result(lw.list({}))).pipe(
          Effect.provide(live({ server: server.url, ...options }))
        )
      const verified = yield* list({
        caData: Buffer.from(pki.ca).toString("base64"),
        certData: Buffer.from(pki.clientCert).toString("base64"),
        keyData: Redacted.make(Buffer.from(pki.clientKey).toString("base64"))
      })
      assert.deepStrictEqual(Result.map(verified, (page) => page.items[0]?.metadata?.name), Result.succeed("test-user"))

      const unverified = yield* list({})
      assert.isTrue(Result.isFailure(unverified))
      if (Result.isFailure(unverified)) {
        assert.strictEqual(unverified.failure._tag, "TransportError")
        assert.strictEqual(unverified.failure.reason, "RequestFailed")
        assert.match(unverified.failure.message, /self[- ]signed|unable to verify|certificate/i)
      }

      const skipped = yield* list({ skipTLSVerify: true })
      assert.deepStrictEqual(Result.map(skipped, (page) => page.items[0]?.metadata?.name), Result.succeed("anonymous"))
    }))

  it.live("credentials never appear in errors, messages or logs (401 and transport errors)", () => {
    const logs = captureLogs()
    return Effect.gen(function*() {
      const server = yield* serve((request, response) => {
        response.writeHead(401, { "content-type": "application/json" })
        // a misbehaving server echoing the credentials back
        response.end(
          JSON.stringify(Wire.failureStatus(401, "Unauthorized", `bad token ${request.headers.authorization}`))
        )
      })
      const closed = yield* Effect.scoped(serve(() => {}))
      const attempt = (url: string) =>
        Effect.gen(function*() {
          const lw = yield* pods()
          const listError = yield* Effect.flip(lw.list({}))
          const { error: watchError } = yield* runWatch(lw.watch({}))
          yield* Effect.logError("list failed", Cause.fail(listError))
          yield* Effect.logError("watch failed", watchError)
          yield* Effect.flip(Effect.tapCause(lw.list({}), Effect.logError))
          return [listError, watchError!] as const
        }).pipe(Effect.provide(live({ server: url, token: Redacted.make(TOKEN) })))

      const unauthorized = yield* attempt(server.url)
      for (const error of unauthorized) {
        assert.strictEqual(error._tag, "StatusError")
        assert.strictEqual(error.reason, "Unauthorized")
      }
      const refused = yield* attempt(closed.url)
      for (const error of refused) {
        assert.strictEqual(error._tag, "TransportError")
        assert.strictEqual(error.reason, "RequestFailed")
      }

      const errors = [...unauthorized, ...refused]
      const rendered = [
        ...errors.flatMap((e) => [e.message, String(e), JSON.stringify(e), inspect(e, { depth: 10 })]),
        ...errors.map((e) => Cause.pretty(Cause.fail(e))),
        ...logs.lines
      ]
      assert.isAbove(logs.lines.length, 3)
      for (const text of rendered) assert.notInclude(text, TOKEN)
    }).pipe(Effect.provide(logs.layer))
  })
})

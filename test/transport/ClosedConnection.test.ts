/**
 * Kept-alive connections that the server closes while idle: the embedded API server keeps them open as
 * long as kube-apiserver (90 s, not Node's 5 s), and the HTTP ListerWatcher sends a GET again, on a new
 * connection, when it met one that the server had closed before answering (as Go's transport does).
 */
import * as ApiServer from "@effect-informers/testkit/ApiServer"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import * as Http from "node:http"
import type { AddressInfo, Socket } from "node:net"
import * as HttpListerWatcher from "../../src/HttpListerWatcher.js"
import * as KubeConfig from "../../src/KubeConfig.js"
import * as Resource from "../../src/Resource.js"

const live = (server: string) =>
  HttpListerWatcher.layerHttpClient.pipe(Layer.provideMerge(Layer.orDie(KubeConfig.layerFromOptions({ server }))))

const podList = (rv: string) =>
  JSON.stringify({
    kind: "PodList",
    apiVersion: "v1",
    metadata: { resourceVersion: rv },
    items: [{ apiVersion: "v1", kind: "Pod", metadata: { namespace: "default", name: "a", resourceVersion: rv } }]
  })

/** A node:http server answering every request with `body()`, its server-side sockets exposed. */
const serve = (body: (request: Http.IncomingMessage) => string) =>
  Effect.acquireRelease(
    Effect.callback<{ readonly server: Http.Server; readonly url: string; readonly sockets: Set<Socket> }>((resume) => {
      const sockets = new Set<Socket>()
      const server = Http.createServer((request, response) => {
        response.setHeader("content-type", "application/json")
        response.end(body(request))
      })
      server.on("connection", (socket: Socket) => {
        sockets.add(socket)
        socket.once("close", () => sockets.delete(socket))
      })
      server.listen(0, "127.0.0.1", () =>
        resume(Effect.succeed({
          server,
          url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
          sockets
        })))
    }),
    ({ server, sockets }) =>
      Effect.callback<void>((resume) => {
        for (const socket of sockets) socket.destroy()
        server.close(() => resume(Effect.void))
      })
  )

/** The server closes every connection, idle ones included, as its keep-alive timeout does. */
const closeAll = (sockets: Set<Socket>) => {
  for (const socket of sockets) socket.destroy()
}

describe("connections closed while idle", () => {
  it.live("the embedded API server keeps idle connections 90 s, as kube-apiserver", () =>
    Effect.gen(function*() {
      const server = yield* ApiServer.make()
      const keepAlive = yield* Effect.callback<string | undefined>((resume) => {
        const request = Http.get(`${server.url}/api/v1/namespaces/default/pods`, (response) => {
          response.resume()
          const value = response.headers["keep-alive"]
          resume(Effect.succeed(typeof value === "string" ? value : undefined))
        })
        request.on("error", () => resume(Effect.succeed(undefined)))
      })
      assert.strictEqual(keepAlive, "timeout=90")
    }))

  it.live("a LIST sent on a connection the server has just closed is sent again on a new one", () =>
    Effect.gen(function*() {
      let requests = 0
      let connections = 0
      const { server, sockets, url } = yield* serve(() => podList(String(++requests)))
      server.on("connection", () => connections++)
      yield* Effect.gen(function*() {
        const lw = yield* HttpListerWatcher.make(Resource.pods, { namespace: "default" })
        assert.strictEqual((yield* lw.list({})).resourceVersion, "1")
        // the connection is idle in the pool; the server closes it and, before this process has read its
        // end (no I/O in between), the next LIST takes it from the pool: "socket hang up" (ECONNRESET)
        for (let i = 0; i < 3; i++) {
          const page = yield* Effect.suspend(() => {
            closeAll(sockets)
            return lw.list({})
          })
          assert.strictEqual(page.items.length, 1)
        }
        // every LIST after a close needed a new connection (the request sent on the closed one never
        // reached the server)
        assert.strictEqual(requests, 4)
        assert.strictEqual(connections, 4)
      }).pipe(Effect.provide(live(url)))
    }))

  it.live("a WATCH opened on a connection the server has just closed is opened again on a new one", () =>
    Effect.gen(function*() {
      let connections = 0
      const { server, sockets, url } = yield* serve((request) =>
        new URL(request.url!, "http://x").searchParams.get("watch") === "true"
          ? JSON.stringify({
            type: "ADDED",
            object: {
              apiVersion: "v1",
              kind: "Pod",
              metadata: { namespace: "default", name: "b", resourceVersion: "2" }
            }
          }) + "\n"
          : podList("1")
      )
      server.on("connection", () => connections++)
      yield* Effect.gen(function*() {
        const lw = yield* HttpListerWatcher.make(Resource.pods, { namespace: "default" })
        yield* lw.list({})
        const events = yield* Effect.suspend(() => {
          closeAll(sockets)
          return Stream.runCollect(lw.watch({ resourceVersion: "1" }))
        })
        assert.deepStrictEqual([...events].map((e) => e.type), ["ADDED"])
        assert.strictEqual(connections, 2)
      }).pipe(Effect.provide(live(url)))
    }))

  it.live("a server that resets every connection still fails the LIST with TransportError", () =>
    Effect.gen(function*() {
      let requests = 0
      const { server, url } = yield* serve(() => podList("1"))
      server.removeAllListeners("request")
      server.on("request", (request: Http.IncomingMessage) => {
        requests++
        request.socket.destroy()
      })
      const error = yield* Effect.gen(function*() {
        const lw = yield* HttpListerWatcher.make(Resource.pods, { namespace: "default" })
        return yield* Effect.flip(lw.list({}))
      }).pipe(Effect.provide(live(url)))
      assert.strictEqual(error._tag, "TransportError")
      assert.strictEqual(error.reason, "RequestFailed")
      assert.include(error.message, "socket hang up")
      // the first send and two more
      assert.strictEqual(requests, 3)
    }))
})

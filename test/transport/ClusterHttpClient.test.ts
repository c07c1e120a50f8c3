/**
 * ClusterHttpClient: the cluster's `HttpClient` (one keep-alive agent pool), and its first names in
 * HttpListerWatcher.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as HttpClient from "effect/http/HttpClient"
import * as Layer from "effect/Layer"
import * as Http from "node:http"
import type { AddressInfo, Socket } from "node:net"
import * as ClusterHttpClient from "../../src/ClusterHttpClient.js"
import * as HttpListerWatcher from "../../src/HttpListerWatcher.js"
import * as KubeConfig from "../../src/KubeConfig.js"

/** A node:http server answering `{}`, counting the connections it accepted. */
const serve = Effect.acquireRelease(
  Effect.callback<{ readonly server: Http.Server; readonly url: string; readonly connections: () => number }>(
    (resume) => {
      let connections = 0
      const sockets = new Set<Socket>()
      const server = Http.createServer((_, response) => {
        response.setHeader("content-type", "application/json")
        response.end("{}")
      })
      server.on("connection", (socket: Socket) => {
        connections++
        sockets.add(socket)
        socket.once("close", () => sockets.delete(socket))
      })
      server.on("close", () => {
        for (const socket of sockets) socket.destroy()
      })
      server.listen(0, "127.0.0.1", () =>
        resume(Effect.succeed({
          server,
          url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
          connections: () => connections
        })))
    }
  ),
  ({ server }) =>
    Effect.callback<void>((resume) => {
      server.close(() => resume(Effect.void))
      server.closeAllConnections()
    })
)

describe("ClusterHttpClient", () => {
  it("HttpListerWatcher's layerHttpClient, layerHttpClientWith and makeHttpClient are its layer, layerWith and make", () => {
    assert.strictEqual(HttpListerWatcher.layerHttpClient, ClusterHttpClient.layer)
    assert.strictEqual(HttpListerWatcher.layerHttpClientWith, ClusterHttpClient.layerWith)
    assert.strictEqual(HttpListerWatcher.makeHttpClient, ClusterHttpClient.make)
  })

  it.effect("sends requests to the KubeConfig's server and reuses the idle connection", () =>
    Effect.gen(function*() {
      const { connections, url } = yield* serve
      const statuses = yield* Effect.gen(function*() {
        const client = yield* HttpClient.HttpClient
        // the body read to its end: the connection goes back to the pool
        const get = Effect.scoped(
          Effect.flatMap(client.get(`${url}/api`), (response) => Effect.as(response.text, response.status))
        )
        return [yield* get, yield* get, yield* get]
      }).pipe(
        Effect.provide(
          ClusterHttpClient.layerWith({ maxSockets: 4 }).pipe(
            Layer.provide(Layer.orDie(KubeConfig.layerFromOptions({ server: url })))
          )
        )
      )
      assert.deepStrictEqual(statuses, [200, 200, 200])
      assert.strictEqual(connections(), 1)
    }))
})

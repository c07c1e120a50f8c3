/**
 * The Client suite's fixtures: a Client against a fresh embedded ApiServer over real HTTP, a stub server
 * answering as kube-apiserver would where the embedded one lacks a feature (recording each request with
 * its body), and small helpers.
 */
import * as ApiServer from "@effect-informers/testkit/ApiServer"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import type * as Scope from "effect/Scope"
import * as Http from "node:http"
import type { AddressInfo, Socket } from "node:net"
import type { ApiError } from "../../../src/ApiError.js"
import * as Client from "../../../src/Client.js"
import * as HttpListerWatcher from "../../../src/HttpListerWatcher.js"
import * as KubeConfig from "../../../src/KubeConfig.js"
import type { TermError } from "../../../src/Term.js"
import * as Wire from "../../../src/Wire.js"

export const TOKEN = "tok-client-5e1d9a0c77f2-SECRET"

/** The transport of the tests: the library's Node HTTP client and a KubeConfig with a bearer token. */
export const transport = (server: string, options: Partial<KubeConfig.Options> = {}) =>
  HttpListerWatcher.layerHttpClient.pipe(
    Layer.provideMerge(Layer.orDie(KubeConfig.layerFromOptions({ server, token: Redacted.make(TOKEN), ...options })))
  )

/** A Client (rate limiting off unless `options` sets it) over `transport(url)`. */
export const clientLayer = (url: string, options: Client.Options = {}, kubeConfig: Partial<KubeConfig.Options> = {}) =>
  Client.layer({ qps: Infinity, ...options }).pipe(Layer.provide(transport(url, kubeConfig)))

/**
 * Runs `f` with a fresh embedded ApiServer and a Client pointed at it.
 */
export const withApiServer = <A, E>(
  f: (server: ApiServer.ApiServer.Service, client: Client.Client.Service) => Effect.Effect<A, E, Scope.Scope>,
  options: { readonly client?: Client.Options; readonly server?: ApiServer.Options } = {}
): Effect.Effect<A, E, Scope.Scope> =>
  Effect.gen(function*() {
    const server = yield* Effect.orDie(ApiServer.make(options.server))
    const client = yield* Effect.provide(Client.Client, clientLayer(server.url, options.client))
    return yield* f(server, client)
  })

// -------------------------------------------------------------------------------------------------
// a stub server
// -------------------------------------------------------------------------------------------------

export interface StubRequest {
  readonly method: string
  readonly url: URL
  readonly headers: Http.IncomingHttpHeaders
  readonly body: string
}

export interface StubReply {
  readonly code: number
  readonly body?: unknown
  readonly headers?: Record<string, string> | undefined
}

export interface Stub {
  readonly url: string
  readonly requests: Array<StubRequest>
}

/** What a stub does with a request: answers, never answers (`"hang"`), or resets the connection (`"reset"`). */
export type StubAction = StubReply | "hang" | "reset"

/**
 * A node:http server answering each request (its body read whole) with `handler`: a JSON body (a string
 * is sent as is), no answer at all, or a reset connection.
 */
export const stub = (handler: (request: StubRequest) => StubAction) =>
  Effect.acquireRelease(
    Effect.callback<{ readonly server: Http.Server; readonly sockets: Set<Socket>; readonly stub: Stub }>((resume) => {
      const requests: Array<StubRequest> = []
      const sockets = new Set<Socket>()
      const server = Http.createServer((req, res) => {
        const chunks: Array<Buffer> = []
        req.on("data", (chunk: Buffer) => chunks.push(chunk))
        req.on("end", () => {
          const request: StubRequest = {
            method: req.method ?? "GET",
            url: new URL(req.url ?? "/", "http://stub"),
            headers: req.headers,
            body: Buffer.concat(chunks).toString("utf8")
          }
          requests.push(request)
          const reply = handler(request)
          if (reply === "hang") return
          if (reply === "reset") {
            req.socket.destroy()
            return
          }
          res.writeHead(reply.code, { "content-type": "application/json", ...reply.headers })
          res.end(
            reply.body === undefined ? "" : typeof reply.body === "string" ? reply.body : JSON.stringify(reply.body)
          )
        })
      })
      server.on("connection", (socket: Socket) => {
        sockets.add(socket)
        socket.on("close", () => sockets.delete(socket))
      })
      server.listen(0, "127.0.0.1", () => {
        const { port } = server.address() as AddressInfo
        resume(Effect.succeed({ server, sockets, stub: { url: `http://127.0.0.1:${port}`, requests } }))
      })
    }),
    ({ server, sockets }) =>
      Effect.callback<void>((resume) => {
        for (const socket of sockets) socket.destroy()
        server.close(() => resume(Effect.void))
      })
  ).pipe(Effect.map(({ stub }) => stub))

/** Runs `f` with a stub server and a Client pointed at it. */
export const withStub = <A, E>(
  handler: (request: StubRequest) => StubAction,
  f: (stub: Stub, client: Client.Client.Service) => Effect.Effect<A, E, Scope.Scope>,
  options: Client.Options = {}
): Effect.Effect<A, E, Scope.Scope> =>
  Effect.gen(function*() {
    const server = yield* stub(handler)
    const client = yield* Effect.provide(Client.Client, clientLayer(server.url, options))
    return yield* f(server, client)
  })

// -------------------------------------------------------------------------------------------------
// kube-apiserver's answers
// -------------------------------------------------------------------------------------------------

/** A Failure `Status` as kube-apiserver shapes its errors: the library's `Wire.failureStatus`. */
export const status = Wire.failureStatus

export const configMap = (name: string, extra: Record<string, unknown> = {}) => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name, namespace: "default" },
  ...extra
})

/** Sleeps `ms` of real time (the Clock's may be a TestClock). */
export const realSleep = (ms: number) => Effect.promise(() => new Promise((resolve) => setTimeout(resolve, ms)))

/** The error of `effect`, which must fail with an ApiError (a write's: or a TermError); `tag (reason)` as a string alongside. */
export const failure = <A, E extends ApiError | TermError, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.map(Effect.flip(effect), (error) => ({ error, kind: `${error._tag} (${error.reason})` }))

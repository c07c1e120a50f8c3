/**
 * The HttpListerWatcher suite's fixtures: a test PKI and token, pods, lists and watch lines, streamed
 * bodies, a fake HttpClient that records requests, and a real node:http / node:https test server.
 */
import * as Effect from "effect/Effect"
import * as HttpClient from "effect/http/HttpClient"
import type * as HttpClientError from "effect/http/HttpClientError"
import * as HttpClientResponse from "effect/http/HttpClientResponse"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import * as Result from "effect/Result"
import * as Stream from "effect/Stream"
import * as Http from "node:http"
import * as Https from "node:https"
import type { AddressInfo, Socket } from "node:net"
import * as HttpListerWatcher from "../../../src/HttpListerWatcher.js"
import * as KubeConfig from "../../../src/KubeConfig.js"
import type * as KubeObject from "../../../src/KubeObject.js"
import type * as ListerWatcher from "../../../src/ListerWatcher.js"
import type * as Reflector from "../../../src/Reflector.js"
import * as Resource from "../../../src/Resource.js"
import { pod as fixturePod } from "../../fixtures/index.js"

// Test-only PKI (EC P-256, valid until 2126): a CA, a server certificate for 127.0.0.1/localhost and a client
// certificate (CN=test-user) signed by it. Generated with openssl for these tests; not used anywhere else.
export const pki = {
  ca: `-----BEGIN CERTIFICATE-----
MIIBnDCCAUOgAwIBAgIUSf0LKodVQtKHuBe2pHx/Dcb7gqMwCgYIKoZIzj0EAwIw
IzEhMB8GA1UEAwwYZWZmZWN0LWluZm9ybWVycy10ZXN0LWNhMCAXDTI2MTEzMDA2
NDM0NloYDzIxMjYxMTA2MDY0MzQ2WjAjMSEwHwYDVQQDDBhlZmZlY3QtaW5mb3Jt
ZXJzLXRlc3QtY2EwWTATBgcqhkjOPQIBBggqhkjOPQMBBwNCAAR/Wq74E+qad+QH
Daefjbzny2lw/y/dG9RbKa8lYR8KHx8lRXkajQRRiX+UuaQQTy8x7zZgO2dYNnd2
voX31VBRo1MwUTAdBgNVHQ4EFgQUeEBEhx40N133F+cHeK+nFmPiEJ0wHwYDVR0j
BBgwFoAUeEBEhx40N133F+cHeK+nFmPiEJ0wDwYDVR0TAQH/BAUwAwEB/zAKBggq
hkjOPQQDAgNHADBEAiBsWt2vTHdyTEvOKo9Ew1eeZ1npoZMrEOVBSYPahAFFRwIg
acri1Nz0acJ9uqqgfJMhCqWxI7AD9mm5qZK7U83rgWg=
-----END CERTIFICATE-----
`,
  serverCert: `-----BEGIN CERTIFICATE-----
MIIBrTCCAVSgAwIBAgIUYqNk30w7qzTbutymRITLb7i5MzIwCgYIKoZIzj0EAwIw
IzEhMB8GA1UEAwwYZWZmZWN0LWluZm9ybWVycy10ZXN0LWNhMCAXDTI2MTEzMDA2
NDM0NloYDzIxMjYxMTA2MDY0MzQ2WjAUMRIwEAYDVQQDDAlsb2NhbGhvc3QwWTAT
BgcqhkjOPQIBBggqhkjOPQMBBwNCAAQoHTckYlrT/Y7DWBxv7OL1/UufXbPnzUh1
7+/9Y+Zu63epVaeYs+gDigeW0PgIj7NQQMJ5J73ggK/ft+YXDDOLo3MwcTAaBgNV
HREEEzARhwR/AAABgglsb2NhbGhvc3QwEwYDVR0lBAwwCgYIKwYBBQUHAwEwHQYD
VR0OBBYEFLLhVbyHWrRtxPxRHB/DYzvCJZCcMB8GA1UdIwQYMBaAFHhARIceNDdd
9xfnB3ivpxZj4hCdMAoGCCqGSM49BAMCA0cAMEQCIDOYghhM2VJUnWB7utpVWXhv
oRtzPZA1xWgOjQqU6IEXAiBqqPcXchlgsCG3u1IVxsSQGrbBAdFt4VM5r8ZBkQ2T
dw==
-----END CERTIFICATE-----
`,
  serverKey: `-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgQKJEPZ4mesXft+SD
UWn/M86OtXdkJncGjNIUXhxvlfqhRANCAAQoHTckYlrT/Y7DWBxv7OL1/UufXbPn
zUh17+/9Y+Zu63epVaeYs+gDigeW0PgIj7NQQMJ5J73ggK/ft+YXDDOL
-----END PRIVATE KEY-----
`,
  clientCert: `-----BEGIN CERTIFICATE-----
MIIBqzCCAVGgAwIBAgIUYqNk30w7qzTbutymRITLb7i5MzMwCgYIKoZIzj0EAwIw
IzEhMB8GA1UEAwwYZWZmZWN0LWluZm9ybWVycy10ZXN0LWNhMCAXDTI2MTEzMDA2
NDM0NloYDzIxMjYxMTA2MDY0MzQ2WjAtMRIwEAYDVQQDDAl0ZXN0LXVzZXIxFzAV
BgNVBAoMDnN5c3RlbTptYXN0ZXJzMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE
4x/AHLzhMCW0p/9iRQ1+CBmxWNs30vG4BebmgFFpbepM7vNMElsw0OvCyuwiYt25
eW5PKsrI1MP/je0QSRnjGKNXMFUwEwYDVR0lBAwwCgYIKwYBBQUHAwIwHQYDVR0O
BBYEFPi65AvC78md4/QLptvRq+we8ThMMB8GA1UdIwQYMBaAFHhARIceNDdd9xfn
B3ivpxZj4hCdMAoGCCqGSM49BAMCA0gAMEUCIQC6srSI0OgWz73XWIyvzHRF6SeD
IfOWUcyxXO/tI4wxxgIgCcfypQtdz5UDdqXAkbmbH3tLuM1nvMe4UZIIWaVQxDk=
-----END CERTIFICATE-----
`,
  clientKey: `-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgpdZTtmp6Ebl9kzTG
+JU2zWv9wv8gTA4RE/gkzmJ7FOqhRANCAATjH8AcvOEwJbSn/2JFDX4IGbFY2zfS
8bgF5uaAUWlt6kzu80wSWzDQ68LK7CJi3bl5bk8qysjUw/+N7RBJGeMY
-----END PRIVATE KEY-----
`
}

export const TOKEN = "tok-7b1f0c2e9d4a-SECRET"

// -------------------------------------------------------------------------------------------------
// fixtures
// -------------------------------------------------------------------------------------------------

/** The suite's pods, as the server sends them: in "default", uid `uid-<name>`; `extra` top-level fields over them. */
export const pod = (name: string, resourceVersion: string, extra: Record<string, unknown> = {}) => ({
  ...fixturePod(name, { typed: true, namespace: "default", uid: `uid-${name}`, rv: resourceVersion }),
  ...extra
})

export const event = (type: string, object: unknown): string => JSON.stringify({ type, object }) + "\n"

export const podList = (items: ReadonlyArray<unknown>, resourceVersion = "100", extra: Record<string, unknown> = {}) =>
  JSON.stringify({ kind: "PodList", apiVersion: "v1", metadata: { resourceVersion, ...extra }, items })

export const encoder = new TextEncoder()
export const bytes = (chunk: string | Uint8Array): Uint8Array =>
  typeof chunk === "string" ? encoder.encode(chunk) : chunk

/** A body delivering each chunk on its own read, then ending (or failing with `error`). */
export const chunked = (chunks: ReadonlyArray<string | Uint8Array>, error?: Error): ReadableStream<Uint8Array> => {
  let i = 0
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      if (i < chunks.length) controller.enqueue(bytes(chunks[i++]!))
      else if (error !== undefined) controller.error(error)
      else controller.close()
    }
  })
}

/** A body the test writes to. */
export const controlled = () => {
  let controller!: ReadableStreamDefaultController<Uint8Array>
  const body = new ReadableStream<Uint8Array>({
    start(c) {
      controller = c
    }
  })
  return {
    body,
    push: (chunk: string | Uint8Array) => controller.enqueue(bytes(chunk)),
    end: () => controller.close()
  }
}

export const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
  new Response(typeof body === "string" ? body : JSON.stringify(body), {
    status,
    headers: { "content-type": "application/json", ...headers }
  })

export interface Recorded {
  readonly url: URL
  readonly headers: Readonly<Record<string, string>>
}

/** A fake HttpClient answering with `handler`, plus a KubeConfig with a bearer token. */
export const fake = (handler: (url: URL) => Response | Effect.Effect<Response, HttpClientError.HttpClientError>) => {
  const requests: Array<Recorded> = []
  const client = HttpClient.make((request, url) => {
    requests.push({ url, headers: { ...request.headers } })
    const result = handler(url)
    return Effect.map(
      Effect.isEffect(result) ? result : Effect.succeed(result),
      (response) => HttpClientResponse.fromWeb(request, response)
    )
  })
  const layer = Layer.merge(
    Layer.succeed(HttpClient.HttpClient, client),
    Layer.orDie(KubeConfig.layerFromOptions({ server: "https://kube.test:6443", token: Redacted.make(TOKEN) }))
  )
  return { requests, layer }
}

export const pods = (options: HttpListerWatcher.Options = {}) =>
  HttpListerWatcher.make(Resource.pods, { namespace: "default", ...options })

export const params = (url: URL): Array<[string, string]> => [...url.searchParams.entries()]

/** Runs a watch to its end, keeping the events emitted before a failure. */
export const runWatch = <A>(stream: Stream.Stream<ListerWatcher.WatchEvent<A>, ListerWatcher.ListerWatcherError>) =>
  Effect.map(Stream.runCollect(Stream.result(stream)), (chunk) => {
    const events: Array<ListerWatcher.WatchEvent<A>> = []
    let error: ListerWatcher.ListerWatcherError | undefined
    for (const item of chunk) {
      if (Result.isSuccess(item)) events.push(item.success)
      else error = item.failure
    }
    return { events, error }
  })

export const names = (events: ReadonlyArray<ListerWatcher.WatchEvent<KubeObject.KubeObject>>) =>
  events.map((e) => e.type === "BOOKMARK" ? `BOOKMARK:${e.object.metadata.resourceVersion}` : e.object.metadata?.name)

/** A store that keeps nothing. */
export const noopStore: Reflector.Store<KubeObject.KubeObject, never> = {
  add: () => Effect.void,
  update: () => Effect.void,
  delete: () => Effect.void,
  replace: () => Effect.void,
  resync: Effect.void
}

// -------------------------------------------------------------------------------------------------
// integration tests (a real node:http / node:https server)
// -------------------------------------------------------------------------------------------------

export interface TestServer {
  readonly url: string
  /** TCP connections accepted so far. */
  readonly connections: () => number
  /** Resolves when the server side of a connection closes, in order of closing. */
  readonly closed: Array<Socket>
  readonly requests: Array<Http.IncomingMessage>
}

export type Handler = (request: Http.IncomingMessage, response: Http.ServerResponse) => void

export const serve = (handler: Handler, tls?: Https.ServerOptions) =>
  Effect.acquireRelease(
    Effect.callback<{ readonly server: Http.Server; readonly sockets: Set<Socket>; readonly info: TestServer }>(
      (resume) => {
        const server: Http.Server = tls === undefined ? Http.createServer() : Https.createServer(tls)
        const sockets = new Set<Socket>()
        const closed: Array<Socket> = []
        const requests: Array<Http.IncomingMessage> = []
        let connections = 0
        server.on("connection", (socket: Socket) => {
          connections++
          sockets.add(socket)
          socket.on("close", () => {
            sockets.delete(socket)
            closed.push(socket)
          })
        })
        server.on("request", (request: Http.IncomingMessage, response: Http.ServerResponse) => {
          requests.push(request)
          handler(request, response)
        })
        server.listen(0, "127.0.0.1", () => {
          const { port } = server.address() as AddressInfo
          resume(Effect.succeed({
            server,
            sockets,
            info: {
              url: `${tls === undefined ? "http" : "https"}://127.0.0.1:${port}`,
              connections: () => connections,
              closed,
              requests
            }
          }))
        })
      }
    ),
    ({ server, sockets }) =>
      Effect.callback<void>((resume) => {
        for (const socket of sockets) socket.destroy()
        server.close(() => resume(Effect.void))
      })
  ).pipe(Effect.map(({ info }) => info))

export const isWatch = (request: Http.IncomingMessage) =>
  new URL(request.url!, "http://x").searchParams.get("watch") === "true"

export const live = (options: KubeConfig.Options) =>
  HttpListerWatcher.layerHttpClient.pipe(Layer.provideMerge(Layer.orDie(KubeConfig.layerFromOptions(options))))

/** The shared `eventually` (live: polls every 10 ms; these tests give it a second). */
export { eventually } from "../../fixtures/index.js"

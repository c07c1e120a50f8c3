import * as ApiServer from "@effect-informers/testkit/ApiServer"
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientError from "@effect/platform/HttpClientError"
import type * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import * as HttpClientResponse from "@effect/platform/HttpClientResponse"
import { assert, describe, it } from "@effect/vitest"
import * as Cause from "effect/Cause"
import * as Chunk from "effect/Chunk"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"
import * as Redacted from "effect/Redacted"
import * as Schedule from "effect/Schedule"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as TestClock from "effect/TestClock"
import * as TestServices from "effect/TestServices"
import * as Http from "node:http"
import * as Https from "node:https"
import type { AddressInfo, Socket } from "node:net"
import type { TLSSocket } from "node:tls"
import { inspect } from "node:util"
import * as HttpListerWatcher from "../src/HttpListerWatcher.js"
import * as KubeConfig from "../src/KubeConfig.js"
import type * as KubeObject from "../src/KubeObject.js"
import * as Informers from "../src/Layer.js"
import type * as ListerWatcher from "../src/ListerWatcher.js"
import { ListerWatcherSource } from "../src/ListerWatcher.js"
import * as Reflector from "../src/Reflector.js"
import * as Resource from "../src/Resource.js"
import * as Wire from "../src/Wire.js"
import { captureLogs } from "./fixtures/index.js"

// Test-only PKI (EC P-256, valid until 2126): a CA, a server certificate for 127.0.0.1/localhost and a client
// certificate (CN=test-user) signed by it. Generated with openssl for these tests; not used anywhere else.
const pki = {
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

const TOKEN = "tok-7b1f0c2e9d4a-SECRET"

// -------------------------------------------------------------------------------------------------
// fixtures
// -------------------------------------------------------------------------------------------------

const pod = (name: string, resourceVersion: string, extra: Record<string, unknown> = {}) => ({
  apiVersion: "v1",
  kind: "Pod",
  metadata: { name, namespace: "default", uid: `uid-${name}`, resourceVersion },
  ...extra
})

const event = (type: string, object: unknown): string => JSON.stringify({ type, object }) + "\n"

const podList = (items: ReadonlyArray<unknown>, resourceVersion = "100", extra: Record<string, unknown> = {}) =>
  JSON.stringify({ kind: "PodList", apiVersion: "v1", metadata: { resourceVersion, ...extra }, items })

const encoder = new TextEncoder()
const bytes = (chunk: string | Uint8Array): Uint8Array => typeof chunk === "string" ? encoder.encode(chunk) : chunk

/** A body delivering each chunk on its own read, then ending (or failing with `error`). */
const chunked = (chunks: ReadonlyArray<string | Uint8Array>, error?: Error): ReadableStream<Uint8Array> => {
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
const controlled = () => {
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

const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
  new Response(typeof body === "string" ? body : JSON.stringify(body), {
    status,
    headers: { "content-type": "application/json", ...headers }
  })

interface Recorded {
  readonly url: URL
  readonly headers: Readonly<Record<string, string>>
}

/** A fake HttpClient answering with `handler`, plus a KubeConfig with a bearer token. */
const fake = (handler: (url: URL) => Response | Effect.Effect<Response, HttpClientError.HttpClientError>) => {
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

const pods = (options: HttpListerWatcher.Options = {}) =>
  HttpListerWatcher.make(Resource.pods, { namespace: "default", ...options })

const params = (url: URL): Array<[string, string]> => [...url.searchParams.entries()]

/** Runs a watch to its end, keeping the events emitted before a failure. */
const runWatch = <A>(stream: Stream.Stream<ListerWatcher.WatchEvent<A>, ListerWatcher.ListerWatcherError>) =>
  Effect.map(Stream.runCollect(Stream.either(stream)), (chunk) => {
    const events: Array<ListerWatcher.WatchEvent<A>> = []
    let error: ListerWatcher.ListerWatcherError | undefined
    for (const item of chunk) {
      if (Either.isRight(item)) events.push(item.right)
      else error = item.left
    }
    return { events, error }
  })

const names = (events: ReadonlyArray<ListerWatcher.WatchEvent<KubeObject.KubeObject>>) =>
  events.map((e) => e.type === "BOOKMARK" ? `BOOKMARK:${e.object.metadata.resourceVersion}` : e.object.metadata?.name)

/** A store that keeps nothing. */
const noopStore: Reflector.Store<KubeObject.KubeObject, never> = {
  add: () => Effect.void,
  update: () => Effect.void,
  delete: () => Effect.void,
  replace: () => Effect.void,
  resync: Effect.void
}

// -------------------------------------------------------------------------------------------------
// unit tests (fake HttpClient)
// -------------------------------------------------------------------------------------------------

describe("HttpListerWatcher with a fake HttpClient", () => {
  it.effect("list: path, query parameters, headers and page", () => {
    const { layer, requests } = fake(() =>
      json(200, podList([pod("a", "5"), pod("b", "6")], "100", { continue: "next", remainingItemCount: 7 }))
    )
    return Effect.gen(function*() {
      const lw = yield* pods({ labelSelector: "app=web", fieldSelector: "status.phase=Running" })
      const page = yield* lw.list({
        resourceVersion: "0",
        resourceVersionMatch: "NotOlderThan",
        limit: 500,
        continue: "tok",
        timeoutSeconds: 30
      })
      assert.deepStrictEqual(page.items.map((p) => p.metadata?.name), ["a", "b"])
      assert.strictEqual(page.resourceVersion, "100")
      assert.strictEqual(page.continue, "next")
      assert.strictEqual(page.remainingItemCount, 7)
      const { headers, url } = requests[0]!
      assert.strictEqual(url.origin + url.pathname, "https://kube.test:6443/api/v1/namespaces/default/pods")
      assert.deepStrictEqual(params(url), [
        ["labelSelector", "app=web"],
        ["fieldSelector", "status.phase=Running"],
        ["resourceVersion", "0"],
        ["resourceVersionMatch", "NotOlderThan"],
        ["limit", "500"],
        ["continue", "tok"],
        ["timeoutSeconds", "30"]
      ])
      assert.strictEqual(headers["accept"], "application/json")
      assert.strictEqual(headers["authorization"], `Bearer ${TOKEN}`)
      assert.strictEqual(headers["user-agent"], "effect-informers/0.1.0")
      assert.strictEqual(lw.description, "pods in default")
      assert.strictEqual(lw.supportsWatchList, undefined)
    }).pipe(Effect.provide(layer))
  })

  it.effect("list: unset parameters are omitted, per-call options replace the defaults", () => {
    const { layer, requests } = fake((url) =>
      url.searchParams.has("watch") ? new Response(chunked([])) : json(200, podList([]))
    )
    return Effect.gen(function*() {
      const plain = yield* pods()
      yield* plain.list({})
      assert.deepStrictEqual(params(requests[0]!.url), [])
      const selected = yield* pods({ labelSelector: "app=web", fieldSelector: "spec.nodeName=n1" })
      yield* selected.list({ labelSelector: "app=db", resourceVersion: "" })
      assert.deepStrictEqual(params(requests[1]!.url), [["labelSelector", "app=db"], [
        "fieldSelector",
        "spec.nodeName=n1"
      ]])
      yield* selected.watch({ fieldSelector: "spec.nodeName=n2" }).pipe(Stream.runDrain)
      assert.deepStrictEqual(params(requests[2]!.url), [
        ["watch", "true"],
        ["labelSelector", "app=web"],
        ["fieldSelector", "spec.nodeName=n2"]
      ])
    }).pipe(Effect.provide(layer))
  })

  it.effect("paths and descriptions: all namespaces, cluster-scoped, named groups", () => {
    const { layer, requests } = fake(() => json(200, podList([])))
    return Effect.gen(function*() {
      const all = yield* HttpListerWatcher.make(Resource.pods)
      const nodes = yield* HttpListerWatcher.make(Resource.nodes, { namespace: "ignored" })
      const deployments = yield* HttpListerWatcher.make(Resource.deployments, { namespace: "prod" })
      yield* all.list({})
      yield* nodes.list({})
      yield* deployments.list({})
      assert.deepStrictEqual(requests.map((r) => r.url.pathname), [
        "/api/v1/pods",
        "/api/v1/nodes",
        "/apis/apps/v1/namespaces/prod/deployments"
      ])
      assert.deepStrictEqual([all.description, nodes.description, deployments.description], [
        "pods in all namespaces",
        "nodes",
        "deployments.apps in prod"
      ])
    }).pipe(Effect.provide(layer))
  })

  it.effect("layerSource: ListerWatchers for any resource and scope", () => {
    const { layer, requests } = fake(() => json(200, podList([])))
    return Effect.gen(function*() {
      const source = yield* ListerWatcherSource
      const lw = source.listerWatcher(Resource.configMaps, { namespace: "kube-system", labelSelector: "a=b" })
      yield* lw.list({ limit: 10 })
      assert.strictEqual(requests[0]!.url.pathname, "/api/v1/namespaces/kube-system/configmaps")
      assert.deepStrictEqual(params(requests[0]!.url), [["labelSelector", "a=b"], ["limit", "10"]])
      assert.strictEqual(lw.description, "configmaps in kube-system")
    }).pipe(Effect.provide(HttpListerWatcher.layerSource()), Effect.provide(layer))
  })

  it.effect("watch: query parameters; events in order; clean end", () => {
    const { layer, requests } = fake(() =>
      new Response(
        chunked([
          event("ADDED", pod("a", "11")),
          event("MODIFIED", pod("a", "12")) + event("DELETED", pod("a", "13")),
          event("BOOKMARK", { kind: "Pod", metadata: { resourceVersion: "14" } })
        ])
      )
    )
    return Effect.gen(function*() {
      const lw = yield* pods({ labelSelector: "app=web" })
      const { error, events } = yield* runWatch(lw.watch({
        resourceVersion: "10",
        resourceVersionMatch: "NotOlderThan",
        allowWatchBookmarks: true,
        sendInitialEvents: true,
        timeoutSeconds: 300
      }))
      assert.isUndefined(error)
      assert.deepStrictEqual(events.map((e) => e.type), ["ADDED", "MODIFIED", "DELETED", "BOOKMARK"])
      assert.deepStrictEqual(names(events), ["a", "a", "a", "BOOKMARK:14"])
      assert.deepStrictEqual(params(requests[0]!.url), [
        ["watch", "true"],
        ["labelSelector", "app=web"],
        ["resourceVersion", "10"],
        ["resourceVersionMatch", "NotOlderThan"],
        ["allowWatchBookmarks", "true"],
        ["sendInitialEvents", "true"],
        ["timeoutSeconds", "300"]
      ])
      assert.strictEqual(requests[0]!.headers["authorization"], `Bearer ${TOKEN}`)
    }).pipe(Effect.provide(layer))
  })

  describe("error responses map to typed errors (LIST and WATCH)", () => {
    const cases: ReadonlyArray<{
      readonly name: string
      readonly response: () => Response
      readonly check: (error: ListerWatcher.ListerWatcherError) => void
    }> = [
      {
        name: "410 Expired",
        response: () => json(410, Wire.failureStatus(410, "Expired", "too old resource version: 5 (10)")),
        check: (e) => {
          assert.strictEqual(e._tag, "Gone")
          assert.strictEqual(e.message, "too old resource version: 5 (10)")
        }
      },
      {
        name: "410 without a Status body",
        response: () => new Response("gone", { status: 410 }),
        check: (e) => assert.strictEqual(e._tag, "Gone")
      },
      {
        name: "too large resource version (message)",
        response: () => json(504, Wire.failureStatus(504, "Timeout", "Too large resource version: 20, current: 10")),
        check: (e) => assert.strictEqual(e._tag, "ResourceVersionTooLarge")
      },
      {
        name: "too large resource version (cause)",
        response: () =>
          json(
            504,
            Wire.failureStatus(504, "Timeout", "Timeout: request did not complete", {
              causes: [{ reason: "ResourceVersionTooLarge", message: "Too large resource version" }],
              retryAfterSeconds: 1
            })
          ),
        check: (e) => assert.strictEqual(e._tag, "ResourceVersionTooLarge")
      },
      {
        name: "429 with a Retry-After header",
        response: () => json(429, Wire.failureStatus(429, "TooManyRequests", "slow down"), { "retry-after": "7" }),
        check: (e) => {
          assert.strictEqual(e._tag, "TooManyRequests")
          if (e._tag === "TooManyRequests") assert.deepStrictEqual(e.retryAfter, Option.some(Duration.seconds(7)))
        }
      },
      {
        name: "429 with details.retryAfterSeconds",
        response: () => json(429, Wire.failureStatus(429, "TooManyRequests", "slow down", { retryAfterSeconds: 3 })),
        check: (e) => {
          assert.strictEqual(e._tag, "TooManyRequests")
          if (e._tag === "TooManyRequests") assert.deepStrictEqual(e.retryAfter, Option.some(Duration.seconds(3)))
        }
      },
      {
        name: "429 without a body, Retry-After header only",
        response: () => new Response("", { status: 429, headers: { "retry-after": "2" } }),
        check: (e) => {
          assert.strictEqual(e._tag, "TooManyRequests")
          if (e._tag === "TooManyRequests") assert.deepStrictEqual(e.retryAfter, Option.some(Duration.seconds(2)))
        }
      },
      {
        name: "401",
        response: () => json(401, Wire.failureStatus(401, "Unauthorized", "Unauthorized")),
        check: (e) => assert.strictEqual(e._tag, "Unauthorized")
      },
      {
        name: "403",
        response: () =>
          json(403, Wire.failureStatus(403, "Forbidden", "pods is forbidden: User \"x\" cannot list resource")),
        check: (e) => {
          assert.strictEqual(e._tag, "Forbidden")
          assert.include(e.message, "cannot list resource")
        }
      },
      {
        name: "404",
        response: () => json(404, Wire.failureStatus(404, "NotFound", "the server could not find the resource")),
        check: (e) => assert.strictEqual(e._tag, "NotFound")
      },
      {
        name: "500",
        response: () => json(500, Wire.failureStatus(500, "InternalError", "etcd is sad")),
        check: (e) => {
          assert.strictEqual(e._tag, "ServerError")
          if (e._tag === "ServerError") assert.strictEqual(e.code, 500)
        }
      },
      {
        name: "422 Invalid",
        response: () => json(422, Wire.failureStatus(422, "Invalid", "invalid field selector")),
        check: (e) => {
          assert.strictEqual(e._tag, "ServerError")
          if (e._tag === "ServerError") {
            assert.strictEqual(e.code, 422)
            assert.strictEqual(e.reason, "Invalid")
          }
        }
      },
      {
        name: "503 with an HTML body",
        response: () =>
          new Response("<html><body>bad gateway</body></html>", {
            status: 503,
            headers: { "content-type": "text/html" }
          }),
        check: (e) => {
          assert.strictEqual(e._tag, "ServerError")
          if (e._tag === "ServerError") {
            assert.strictEqual(e.code, 503)
            assert.strictEqual(e.reason, "ServiceUnavailable")
          }
          assert.include(e.message, "HTTP 503")
        }
      }
    ]
    for (const { check, name, response } of cases) {
      it.effect(name, () => {
        const { layer } = fake(response)
        return Effect.gen(function*() {
          const lw = yield* pods()
          check(yield* Effect.flip(lw.list({})))
          const { error, events } = yield* runWatch(lw.watch({}))
          assert.strictEqual(events.length, 0)
          assert.isDefined(error)
          check(error!)
        }).pipe(Effect.provide(layer))
      })
    }
  })

  it.effect("list decode errors: malformed JSON, no metadata, item without metadata", () => {
    const bodies = [
      ["{\"kind\":\"PodList\",", "malformed JSON"],
      [JSON.stringify({ kind: "PodList", items: [] }), "invalid list response"],
      [JSON.stringify({ kind: "PodList", metadata: { resourceVersion: "1" }, items: [{ kind: "Pod" }] }), "item 0"]
    ] as const
    return Effect.forEach(bodies, ([body, expected]) => {
      const { layer } = fake(() => json(200, body))
      return Effect.gen(function*() {
        const lw = yield* pods()
        const error = yield* Effect.flip(lw.list({}))
        assert.strictEqual(error._tag, "Decode")
        assert.include(error.message, "list pods in default: ")
        assert.include(error.message, expected)
      }).pipe(Effect.provide(layer))
    }, { discard: true })
  })

  it.effect("watch decode errors: malformed line, object without metadata (events before are kept)", () => {
    const bodies = [
      [event("ADDED", pod("a", "1")) + "{\"type\":\"ADDED\",\"obj\n", "malformed JSON"],
      [event("ADDED", pod("a", "1")) + event("MODIFIED", { kind: "Pod" }), "invalid MODIFIED event"],
      [event("ADDED", pod("a", "1")) + "[1,2]\n", "watch event has no type"],
      [event("ADDED", pod("a", "1")) + "42\n", "not a JSON object"]
    ] as const
    return Effect.forEach(bodies, ([body, expected]) => {
      const { layer } = fake(() => new Response(chunked([body, event("ADDED", pod("never", "9"))])))
      return Effect.gen(function*() {
        const lw = yield* pods()
        const { error, events } = yield* runWatch(lw.watch({}))
        assert.deepStrictEqual(names(events), ["a"])
        assert.strictEqual(error?._tag, "Decode")
        assert.include(error!.message, "watch pods in default: ")
        assert.include(error!.message, expected)
      }).pipe(Effect.provide(layer))
    }, { discard: true })
  })

  it.effect("decode failures are one line; the schema's error tree is in detail, logged at debug level", () => {
    // several issues at once: the tree spans many lines
    const bad = { metadata: { name: "", namespace: 7, uid: [1], resourceVersion: {} } }
    const list = fake(() => json(200, { kind: "PodList", metadata: { resourceVersion: "1" }, items: [bad] }))
    const watch = fake(() => new Response(chunked([event("MODIFIED", bad)])))
    return Effect.gen(function*() {
      const listError = yield* Effect.flip(Effect.flatMap(pods(), (lw) => lw.list({}))).pipe(Effect.provide(list.layer))
      const { error: watchError } = yield* Effect.flatMap(pods(), (lw) => runWatch(lw.watch({}))).pipe(
        Effect.provide(watch.layer)
      )
      for (const error of [listError, watchError]) {
        assert.strictEqual(error?._tag, "Decode")
        const decode = error as ListerWatcher.Decode
        assert.notInclude(decode.message, "\n")
        assert.include(decode.message, "metadata.name")
        assert.isTrue(decode.detail !== undefined && decode.detail.split("\n").length > 3, decode.detail)
      }
      // through the Reflector: one warning line, and the tree at debug level
      const logs = captureLogs()
      const lines = logs.lines
      yield* Effect.gen(function*() {
        const lw = yield* pods()
        const reflector = yield* Reflector.make(lw, { ...noopStore }, { watchList: false })
        yield* TestClock.adjust("1 second")
        return reflector
      }).pipe(
        Effect.provide(list.layer),
        Effect.provide(logs.layer),
        Effect.provide(Logger.minimumLogLevel(LogLevel.Debug)),
        Effect.scoped
      )
      const warning = lines.find((line) => line.startsWith("WARN") && line.includes("Decode"))
      assert.isDefined(warning)
      assert.strictEqual(warning!.trim().split("\n").length, 1, warning)
      const debug = lines.find((line) => line.startsWith("DEBUG") && line.includes("in detail"))
      assert.isDefined(debug)
      assert.isAbove(debug!.split("\n").length, 3)
    })
  })

  it.effect("watch: a line over maxLineBytes fails with Decode", () => {
    const { layer } = fake(() =>
      new Response(chunked([event("ADDED", pod("a", "1")), event("ADDED", pod("b".repeat(300), "2"))]))
    )
    return Effect.gen(function*() {
      const lw = yield* pods({ maxLineBytes: 200 })
      const { error, events } = yield* runWatch(lw.watch({}))
      assert.deepStrictEqual(names(events), ["a"])
      assert.strictEqual(error?._tag, "Decode")
      assert.include(error!.message, "exceeds the limit of 200 bytes")
    }).pipe(Effect.provide(layer))
  })

  it.effect("watch: the limit holds while a line is still unterminated (an endless line fails)", () => {
    let reads = 0
    const endless = new ReadableStream<Uint8Array>({
      pull(controller) {
        reads++
        controller.enqueue(encoder.encode("x".repeat(1000)))
      }
    })
    const { layer } = fake(() => new Response(endless))
    return Effect.gen(function*() {
      const lw = yield* pods({ maxLineBytes: 10_000 })
      const { error } = yield* runWatch(lw.watch({}))
      assert.strictEqual(error?._tag, "Decode")
      assert.isBelow(reads, 20)
    }).pipe(Effect.provide(layer))
  })

  it.effect("watch: UNKNOWN event types and objects of another kind are skipped with a warning", () => {
    const { layer } = fake(() =>
      new Response(
        chunked([
          event("ADDED", pod("a", "1")),
          event("SURPRISE", pod("b", "2")),
          event("ADDED", {
            kind: "Table",
            apiVersion: "meta.k8s.io/v1",
            metadata: { name: "t", resourceVersion: "3" }
          }),
          event("MODIFIED", { metadata: { name: "no-kind", resourceVersion: "4" } }),
          event("DELETED", pod("a", "5"))
        ])
      )
    )
    const logs = captureLogs()
    return Effect.gen(function*() {
      const lw = yield* pods()
      const { error, events } = yield* runWatch(lw.watch({}))
      assert.isUndefined(error)
      assert.deepStrictEqual(names(events), ["a", "no-kind", "a"])
      const warnings = logs.lines.filter((line) => line.startsWith("WARN"))
      assert.strictEqual(warnings.length, 2)
      assert.include(warnings[0], "unknown type \"SURPRISE\"")
      assert.include(warnings[1], "kind \"Table\", expected \"Pod\"")
    }).pipe(Effect.provide(layer), Effect.provide(logs.layer))
  })

  it.effect("watch: an ERROR event fails the stream after the events before it", () => {
    const { layer } = fake(() =>
      new Response(
        chunked([
          event("ADDED", pod("a", "1")) +
          event("ERROR", Wire.failureStatus(410, "Expired", "too old resource version: 1 (5)")) +
          event("ADDED", pod("never", "9"))
        ])
      )
    )
    return Effect.gen(function*() {
      const lw = yield* pods()
      const { error, events } = yield* runWatch(lw.watch({}))
      assert.deepStrictEqual(names(events), ["a"])
      assert.strictEqual(error?._tag, "Gone")
      assert.strictEqual(error?.message, "too old resource version: 1 (5)")
    }).pipe(Effect.provide(layer))
  })

  it.effect("watch: lines and multi-byte characters split across chunks, CRLF and blank lines", () => {
    const name = "ünïcødé-🚀-名前"
    const line = encoder.encode(event("ADDED", pod(name, "1")))
    // split in the middle of the 4-byte rocket and of a 3-byte CJK character
    const rocket = line.indexOf(0xf0)
    const cjk = line.indexOf(0xe5)
    const chunks = [
      line.slice(0, rocket + 2),
      line.slice(rocket + 2, cjk + 1),
      line.slice(cjk + 1, cjk + 2),
      line.slice(cjk + 2),
      "\n",
      event("MODIFIED", pod("b", "2")).slice(0, 10),
      event("MODIFIED", pod("b", "2")).slice(10, 30),
      event("MODIFIED", pod("b", "2")).slice(30, -1) + "\r",
      "\n",
      event("DELETED", pod("c", "3")).replace("\n", "\r\n") + "\n  \n"
    ]
    const { layer } = fake(() => new Response(chunked(chunks)))
    return Effect.gen(function*() {
      const lw = yield* pods()
      const { error, events } = yield* runWatch(lw.watch({}))
      assert.isUndefined(error)
      assert.deepStrictEqual(names(events), [name, "b", "c"])
    }).pipe(Effect.provide(layer))
  })

  it.effect("watch: a body cut mid-line fails with Transport; a complete last line without newline is kept", () =>
    Effect.gen(function*() {
      const cut = fake(() =>
        new Response(chunked([event("ADDED", pod("a", "1")), event("ADDED", pod("b", "2")).slice(0, 25)]))
      )
      const cutResult = yield* Effect.flatMap(pods(), (lw) => runWatch(lw.watch({}))).pipe(Effect.provide(cut.layer))
      assert.deepStrictEqual(names(cutResult.events), ["a"])
      assert.strictEqual(cutResult.error?._tag, "Transport")
      assert.include(cutResult.error!.message, "ended in the middle of a line")

      const unterminated = fake(() =>
        new Response(chunked([event("ADDED", pod("a", "1")) + event("ADDED", pod("b", "2")).trim()]))
      )
      const whole = yield* Effect.flatMap(pods(), (lw) => runWatch(lw.watch({}))).pipe(
        Effect.provide(unterminated.layer)
      )
      assert.isUndefined(whole.error)
      assert.deepStrictEqual(names(whole.events), ["a", "b"])
    }))

  it.effect("transport failures: request error and a body error mid-stream", () =>
    Effect.gen(function*() {
      const refused = fake(() =>
        Effect.fail(
          new HttpClientError.RequestError({
            request: undefined as unknown as HttpClientRequest.HttpClientRequest,
            reason: "Transport",
            cause: new Error("connect ECONNREFUSED 127.0.0.1:6443")
          })
        )
      )
      const listError = yield* Effect.flatMap(pods(), (lw) => Effect.flip(lw.list({}))).pipe(
        Effect.provide(refused.layer)
      )
      assert.strictEqual(listError._tag, "Transport")
      assert.strictEqual(listError.message, "list pods in default: connect ECONNREFUSED 127.0.0.1:6443")
      const watchResult = yield* Effect.flatMap(pods(), (lw) => runWatch(lw.watch({}))).pipe(
        Effect.provide(refused.layer)
      )
      assert.strictEqual(watchResult.error?._tag, "Transport")

      const reset = fake(() => new Response(chunked([event("ADDED", pod("a", "1"))], new Error("socket hang up"))))
      const resetResult = yield* Effect.flatMap(pods(), (lw) => runWatch(lw.watch({}))).pipe(
        Effect.provide(reset.layer)
      )
      assert.deepStrictEqual(names(resetResult.events), ["a"])
      assert.strictEqual(resetResult.error?._tag, "Transport")
      assert.include(resetResult.error!.message, "watch pods in default: ")
    }))

  it.effect("watch inactivity timeout also covers waiting for the response headers", () => {
    const { layer } = fake(() => Effect.never)
    return Effect.gen(function*() {
      const lw = yield* pods({ watchInactivityTimeout: "10 seconds" })
      const fiber = yield* Effect.fork(Effect.flip(Stream.runDrain(lw.watch({}))))
      yield* TestClock.adjust("11 seconds")
      const error = yield* Fiber.join(fiber)
      assert.strictEqual(error._tag, "Transport")
      assert.strictEqual(error.message, "watch pods in default: no bytes received for 10s")
    }).pipe(Effect.provide(layer))
  })

  it.effect("watch inactivity timeout: fails with Transport when no bytes arrive; bytes re-arm it", () => {
    const body = controlled()
    const { layer } = fake(() => new Response(body.body))
    return Effect.gen(function*() {
      const lw = yield* pods({ watchInactivityTimeout: "30 seconds" })
      const received = yield* Queue.unbounded<string>()
      const fiber = yield* lw.watch({ allowWatchBookmarks: true }).pipe(
        Stream.runForEach((e) => Queue.offer(received, e.type)),
        Effect.flip,
        Effect.fork
      )
      body.push(event("ADDED", pod("a", "1")))
      assert.strictEqual(yield* Queue.take(received), "ADDED")
      yield* TestClock.adjust("20 seconds")
      body.push(event("BOOKMARK", { metadata: { resourceVersion: "2" } }))
      assert.strictEqual(yield* Queue.take(received), "BOOKMARK")
      yield* TestClock.adjust("20 seconds")
      assert.isNull(fiber.unsafePoll())
      yield* TestClock.adjust("11 seconds")
      const error = yield* Fiber.join(fiber)
      assert.strictEqual(error._tag, "Transport")
      assert.strictEqual(error.message, "watch pods in default: no bytes received for 30s")
    }).pipe(Effect.provide(layer))
  })
})

describe("LIST idle timeout (listIdleTimeout)", () => {
  it.effect("no response headers for 60 s (the default): Transport, not a hang", () => {
    const { layer } = fake(() => Effect.never)
    return Effect.gen(function*() {
      const lw = yield* pods()
      const fiber = yield* Effect.fork(Effect.flip(lw.list({})))
      yield* TestClock.adjust("59 seconds")
      assert.isNull(fiber.unsafePoll())
      yield* TestClock.adjust("2 seconds")
      const error = yield* Fiber.join(fiber)
      assert.strictEqual(error._tag, "Transport")
      assert.strictEqual(error.message, "list pods in default: no response headers for 1m")
    }).pipe(Effect.provide(layer))
  })

  it.effect("a body that stops sending bytes fails; a slow body that keeps sending is never cut", () => {
    const body = controlled()
    const { layer } = fake(() => new Response(body.body, { status: 200 }))
    return Effect.gen(function*() {
      const lw = yield* pods({ listIdleTimeout: "10 seconds" })
      // 60 s in all, a piece every 8 s: longer than the idle timeout in total, never idle for it
      const slow = yield* Effect.fork(lw.list({}))
      const text = JSON.stringify({ kind: "PodList", metadata: { resourceVersion: "7" }, items: [pod("a", "7")] })
      const step = Math.ceil(text.length / 8)
      for (let i = 0; i < text.length; i += step) {
        body.push(text.slice(i, i + step))
        yield* TestClock.adjust("8 seconds")
      }
      body.end()
      const page = yield* Fiber.join(slow)
      assert.strictEqual(page.resourceVersion, "7")
      assert.deepStrictEqual(page.items.map((o) => o.metadata?.name), ["a"])
    }).pipe(Effect.provide(layer))
  })

  it.effect("a body that goes quiet mid-list fails with Transport after the idle timeout", () => {
    const body = controlled()
    const { layer } = fake(() => new Response(body.body, { status: 200 }))
    return Effect.gen(function*() {
      const lw = yield* pods({ listIdleTimeout: "10 seconds" })
      const fiber = yield* Effect.fork(Effect.flip(lw.list({})))
      body.push(`{"kind":"PodList","metadata":{"resourceVersion":"7"},"items":[`)
      yield* TestClock.adjust("9 seconds")
      assert.isNull(fiber.unsafePoll())
      yield* TestClock.adjust("2 seconds")
      const error = yield* Fiber.join(fiber)
      assert.strictEqual(error._tag, "Transport")
      assert.strictEqual(error.message, "list pods in default: no bytes received for 10s")
    }).pipe(Effect.provide(layer))
  })

  it.effect("Duration.infinity turns it off", () => {
    const { layer } = fake(() => Effect.never)
    return Effect.gen(function*() {
      const lw = yield* pods({ listIdleTimeout: Duration.infinity })
      const fiber = yield* Effect.fork(lw.list({}))
      yield* TestClock.adjust("1 hour")
      assert.isNull(fiber.unsafePoll())
      yield* Fiber.interrupt(fiber)
    }).pipe(Effect.provide(layer))
  })
})

describe("error bodies", () => {
  it.effect("only the first 8 KiB of an error body are read: a huge error body costs nothing", () => {
    let pulled = 0
    const huge = new ReadableStream<Uint8Array>({
      pull(controller) {
        pulled++
        controller.enqueue(new Uint8Array(64 * 1024).fill(120))
        if (pulled > 100_000) controller.close()
      }
    })
    const { layer } = fake(() => new Response(huge, { status: 500 }))
    return Effect.gen(function*() {
      const lw = yield* pods()
      const error = yield* Effect.flip(lw.list({}))
      assert.strictEqual(error._tag, "ServerError")
      assert.isBelow(pulled, 10)
      assert.isBelow(error.message.length, 400)
      assert.notInclude(error.message, "\n")
    }).pipe(Effect.provide(layer))
  })
})

// -------------------------------------------------------------------------------------------------
// integration tests (a real node:http / node:https server)
// -------------------------------------------------------------------------------------------------

interface TestServer {
  readonly url: string
  /** TCP connections accepted so far. */
  readonly connections: () => number
  /** Resolves when the server side of a connection closes, in order of closing. */
  readonly closed: Array<Socket>
  readonly requests: Array<Http.IncomingMessage>
}

type Handler = (request: Http.IncomingMessage, response: Http.ServerResponse) => void

const serve = (handler: Handler, tls?: Https.ServerOptions) =>
  Effect.acquireRelease(
    Effect.async<{ readonly server: Http.Server; readonly sockets: Set<Socket>; readonly info: TestServer }>(
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
      Effect.async<void>((resume) => {
        for (const socket of sockets) socket.destroy()
        server.close(() => resume(Effect.void))
      })
  ).pipe(Effect.map(({ info }) => info))

const isWatch = (request: Http.IncomingMessage) =>
  new URL(request.url!, "http://x").searchParams.get("watch") === "true"

const live = (options: KubeConfig.Options) =>
  HttpListerWatcher.layerHttpClient.pipe(Layer.provideMerge(Layer.orDie(KubeConfig.layerFromOptions(options))))

/** Polls (real time) until `predicate` holds, failing after a second. */
const eventually = (predicate: () => boolean) =>
  Effect.suspend(() => predicate() ? Effect.void : Effect.fail("not yet")).pipe(
    Effect.retry({ times: 100, schedule: Schedule.spaced("10 millis") }),
    Effect.orDie
  )

describe("HttpListerWatcher against a node:http server", () => {
  it.scopedLive("keep-alive: LIST and WATCH requests reuse one TCP connection", () =>
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

  it.scopedLive("interrupting a watch aborts the request: the server sees its connection close", () =>
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
          Effect.fork
        )
        assert.strictEqual(yield* Queue.take(received), "ADDED")
        assert.strictEqual(server.closed.length, 0)
        yield* Fiber.interrupt(fiber)
        yield* eventually(() => server.closed.length === 1)

        // ending the stream early (take) closes the connection too
        const first = yield* lw.watch({}).pipe(Stream.take(1), Stream.runCollect)
        assert.strictEqual(Chunk.size(first), 1)
        yield* eventually(() => server.closed.length === 2)
      }).pipe(Effect.provide(live({ server: server.url })))
    }))

  it.scopedLive("interrupting a watch still waiting for response headers aborts the request", () =>
    Effect.gen(function*() {
      const server = yield* serve(() => {
        // never answers
      })
      yield* Effect.gen(function*() {
        const lw = yield* pods()
        const fiber = yield* Effect.fork(Stream.runDrain(lw.watch({})))
        yield* eventually(() => server.requests.length === 1)
        yield* Fiber.interrupt(fiber)
        yield* eventually(() => server.closed.length === 1)
      }).pipe(Effect.provide(live({ server: server.url })))
    }))

  it.scoped("Layer.http turns the watchdog on: a body that goes quiet fails after 75 s (TestClock)", () =>
    Effect.gen(function*() {
      const server = yield* TestServices.provideLive(serve((_request, response) => {
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
          Effect.fork
        )
        assert.strictEqual(
          yield* TestServices.provideLive(Queue.take(received).pipe(Effect.timeout("5 seconds"))),
          "ADDED"
        )
        yield* TestClock.adjust("74 seconds")
        assert.isNull(fiber.unsafePoll())
        yield* TestClock.adjust("2 seconds")
        const error = yield* Fiber.join(fiber)
        assert.strictEqual(error._tag, "Transport")
        assert.strictEqual(error.message, "watch pods in all namespaces: no bytes received for 1m 15s")
      }).pipe(
        Effect.provide(
          Informers.http().pipe(Layer.provide(Layer.orDie(KubeConfig.layerFromOptions({ server: server.url }))))
        )
      )
    }))

  it.scopedLive("a connection destroyed mid-stream fails the watch with Transport", () =>
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
          assert.strictEqual(error?._tag, "Transport", resourceVersion)
          assert.include(error!.message, "watch pods in default: ")
        }
      }).pipe(Effect.provide(live({ server: server.url })))
    }))

  it.scopedLive("connection refused is a Transport error", () =>
    Effect.gen(function*() {
      const server = yield* Effect.scoped(serve(() => {}))
      const error = yield* Effect.flatMap(pods(), (lw) => Effect.flip(lw.list({}))).pipe(
        Effect.provide(live({ server: server.url }))
      )
      assert.strictEqual(error._tag, "Transport")
      assert.include(error.message, "ECONNREFUSED")
    }))

  it.scopedLive("https: the cluster CA verifies the server, the client certificate is presented", () =>
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
        Effect.flatMap(pods(), (lw) => Effect.either(lw.list({}))).pipe(
          Effect.provide(live({ server: server.url, ...options }))
        )
      const verified = yield* list({
        caData: Buffer.from(pki.ca).toString("base64"),
        certData: Buffer.from(pki.clientCert).toString("base64"),
        keyData: Redacted.make(Buffer.from(pki.clientKey).toString("base64"))
      })
      assert.deepStrictEqual(Either.map(verified, (page) => page.items[0]?.metadata?.name), Either.right("test-user"))

      const unverified = yield* list({})
      assert.isTrue(Either.isLeft(unverified))
      if (Either.isLeft(unverified)) {
        assert.strictEqual(unverified.left._tag, "Transport")
        assert.match(unverified.left.message, /self[- ]signed|unable to verify|certificate/i)
      }

      const skipped = yield* list({ skipTLSVerify: true })
      assert.deepStrictEqual(Either.map(skipped, (page) => page.items[0]?.metadata?.name), Either.right("anonymous"))
    }))

  it.scopedLive("credentials never appear in errors, messages or logs (401 and transport errors)", () => {
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
          yield* Effect.flip(Effect.tapErrorCause(lw.list({}), Effect.logError))
          return [listError, watchError!] as const
        }).pipe(Effect.provide(live({ server: url, token: Redacted.make(TOKEN) })))

      const unauthorized = yield* attempt(server.url)
      assert.strictEqual(unauthorized[0]._tag, "Unauthorized")
      assert.strictEqual(unauthorized[1]._tag, "Unauthorized")
      const refused = yield* attempt(closed.url)
      assert.strictEqual(refused[0]._tag, "Transport")
      assert.strictEqual(refused[1]._tag, "Transport")

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

// -------------------------------------------------------------------------------------------------
// end to end against the embedded ApiServer
// -------------------------------------------------------------------------------------------------

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

  it.scopedLive("list and watch, the label selector applied to both", () =>
    withApiServer((server) =>
      Effect.gen(function*() {
        yield* server.create(Resource.pods, labelled("web-1", "web"))
        yield* server.create(Resource.pods, labelled("db-1", "db"))
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
        yield* server.create(Resource.pods, labelled("db-2", "db"))
        yield* server.create(Resource.pods, labelled("web-2", "web"))
        yield* server.patch(Resource.pods, { name: "web-1", namespace: "default" }, {
          metadata: { annotations: { a: "b" } }
        })
        yield* server.delete(Resource.pods, { name: "web-2", namespace: "default" })
        const events = [yield* Queue.take(received), yield* Queue.take(received), yield* Queue.take(received)]
        assert.deepStrictEqual(events, ["ADDED web-2", "MODIFIED web-1", "DELETED web-2"])
      })
    ))

  const faults: ReadonlyArray<readonly [ApiServer.Fault, "list" | "watch", ListerWatcher.ListerWatcherError["_tag"]]> =
    [
      [{ _tag: "WatchGone" }, "watch", "Gone"],
      [{ _tag: "WatchGone", mode: "http" }, "watch", "Gone"],
      [{ _tag: "TooManyRequests", retryAfterSeconds: 2, on: "list" }, "list", "TooManyRequests"],
      [{ _tag: "ServerError", status: 503, on: "watch" }, "watch", "ServerError"],
      [{ _tag: "MalformedLine" }, "watch", "Decode"],
      [{ _tag: "MissingMetadata" }, "watch", "Decode"],
      [{ _tag: "PartialLine" }, "watch", "Transport"]
    ]
  for (const [fault, verb, tag] of faults) {
    it.scopedLive(`fault ${ApiServer.formatFault(fault)} -> ${tag}`, () =>
      withApiServer((server) =>
        Effect.gen(function*() {
          yield* server.create(Resource.pods, labelled("a", "web"))
          const lw = yield* pods()
          const page = yield* lw.list({})
          yield* server.inject(fault)
          const error = verb === "list"
            ? yield* Effect.flip(lw.list({}))
            : yield* Effect.flip(Stream.runDrain(lw.watch({ resourceVersion: page.resourceVersion })))
          assert.strictEqual(error._tag, tag)
          if (error._tag === "TooManyRequests") {
            assert.deepStrictEqual(error.retryAfter, Option.some(Duration.seconds(2)))
          }
        })
      ))
  }

  it.scopedLive("dropped and stalled watches fail with Transport", () =>
    withApiServer((server) =>
      Effect.gen(function*() {
        const lw = yield* pods({ watchInactivityTimeout: "300 millis" })
        const page = yield* lw.list({})
        const received = yield* Queue.unbounded<string>()
        const dropped = yield* lw.watch({ resourceVersion: page.resourceVersion }).pipe(
          Stream.runForEach((e) => Queue.offer(received, e.type)),
          Effect.flip,
          Effect.fork
        )
        yield* server.create(Resource.pods, labelled("a", "web"))
        assert.strictEqual(yield* Queue.take(received), "ADDED")
        yield* server.inject({ _tag: "DropWatches" })
        assert.strictEqual((yield* Fiber.join(dropped))._tag, "Transport")

        yield* server.inject({ _tag: "StallWatches", count: 1 })
        const stalled = yield* Effect.flip(Stream.runDrain(lw.watch({ allowWatchBookmarks: true })))
        assert.strictEqual(stalled._tag, "Transport")
        assert.strictEqual(stalled.message, "watch pods in default: no bytes received for 300ms")
      })
    ))
})

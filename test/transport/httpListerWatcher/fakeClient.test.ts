/**
 * HttpListerWatcher with a fake HttpClient: requests, pages, watch decoding, typed errors.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as HttpClientError from "effect/http/HttpClientError"
import type * as HttpClientRequest from "effect/http/HttpClientRequest"
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"
import * as References from "effect/References"
import * as Stream from "effect/Stream"
import * as TestClock from "effect/testing/TestClock"
import type * as ApiError from "../../../src/ApiError.js"
import * as HttpListerWatcher from "../../../src/HttpListerWatcher.js"
import type * as ListerWatcher from "../../../src/ListerWatcher.js"
import { ListerWatcherSource } from "../../../src/ListerWatcher.js"
import * as Reflector from "../../../src/Reflector.js"
import * as Resource from "../../../src/Resource.js"
import * as Wire from "../../../src/Wire.js"
import { captureLogs } from "../../fixtures/index.js"
import {
  chunked,
  controlled,
  encoder,
  event,
  fake,
  json,
  names,
  noopStore,
  params,
  pod,
  podList,
  pods,
  runWatch,
  TOKEN
} from "./fixtures.js"

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
    /** Asserts a `StatusError` of `reason`, and narrows to it. */
    const status = (e: ApiError.ApiError, reason: ApiError.StatusReason): ApiError.StatusError => {
      assert.strictEqual(e._tag, "StatusError")
      assert(e._tag === "StatusError")
      assert.strictEqual(e.reason, reason)
      return e
    }
    const cases: ReadonlyArray<{
      readonly name: string
      readonly response: () => Response
      readonly check: (error: ListerWatcher.ListerWatcherError) => void
    }> = [
      {
        name: "410 Expired",
        response: () => json(410, Wire.failureStatus(410, "Expired", "too old resource version: 5 (10)")),
        check: (e) => {
          status(e, "Gone")
          assert.strictEqual(e.message, "too old resource version: 5 (10)")
        }
      },
      {
        name: "410 without a Status body",
        response: () => new Response("gone", { status: 410 }),
        check: (e) => status(e, "Gone")
      },
      {
        name: "too large resource version (message)",
        response: () => json(504, Wire.failureStatus(504, "Timeout", "Too large resource version: 20, current: 10")),
        check: (e) => status(e, "ResourceVersionTooLarge")
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
        check: (e) => status(e, "ResourceVersionTooLarge")
      },
      {
        name: "429 with a Retry-After header",
        response: () => json(429, Wire.failureStatus(429, "TooManyRequests", "slow down"), { "retry-after": "7" }),
        check: (e) => {
          assert.deepStrictEqual(status(e, "TooManyRequests").retryAfter, Option.some(Duration.seconds(7)))
        }
      },
      {
        name: "429 with details.retryAfterSeconds",
        response: () => json(429, Wire.failureStatus(429, "TooManyRequests", "slow down", { retryAfterSeconds: 3 })),
        check: (e) => {
          assert.deepStrictEqual(status(e, "TooManyRequests").retryAfter, Option.some(Duration.seconds(3)))
        }
      },
      {
        name: "429 without a body, Retry-After header only",
        response: () => new Response("", { status: 429, headers: { "retry-after": "2" } }),
        check: (e) => {
          assert.deepStrictEqual(status(e, "TooManyRequests").retryAfter, Option.some(Duration.seconds(2)))
        }
      },
      {
        name: "401",
        response: () => json(401, Wire.failureStatus(401, "Unauthorized", "Unauthorized")),
        check: (e) => status(e, "Unauthorized")
      },
      {
        name: "403",
        response: () =>
          json(403, Wire.failureStatus(403, "Forbidden", "pods is forbidden: User \"x\" cannot list resource")),
        check: (e) => {
          status(e, "Forbidden")
          assert.include(e.message, "cannot list resource")
        }
      },
      {
        name: "404",
        response: () => json(404, Wire.failureStatus(404, "NotFound", "the server could not find the resource")),
        check: (e) => status(e, "NotFound")
      },
      {
        name: "500",
        response: () => json(500, Wire.failureStatus(500, "InternalError", "etcd is sad")),
        check: (e) => {
          assert.strictEqual(status(e, "ServerError").code, 500)
        }
      },
      {
        name: "422 Invalid",
        response: () => json(422, Wire.failureStatus(422, "Invalid", "invalid field selector")),
        check: (e) => {
          const error = status(e, "Invalid")
          assert.strictEqual(error.code, 422)
          assert.strictEqual(error.status.reason, "Invalid")
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
          const error = status(e, "ServerError")
          assert.strictEqual(error.code, 503)
          assert.strictEqual(error.status.reason, "ServiceUnavailable")
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
        assert.strictEqual(error._tag, "DecodeError")
        assert.strictEqual(error.reason, "Malformed")
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
        assert.strictEqual(error?._tag, "DecodeError")
        assert.strictEqual(error?.reason, "Malformed")
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
        assert.strictEqual(error?._tag, "DecodeError")
        assert(error?._tag === "DecodeError")
        assert.strictEqual(error.reason, "Malformed")
        const decode = error
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
        Effect.provideService(References.MinimumLogLevel, "Debug"),
        Effect.scoped
      )
      const warning = lines.find((line) => line.startsWith("WARN") && line.includes("DecodeError (Malformed)"))
      assert.isDefined(warning)
      assert.strictEqual(warning!.trim().split("\n").length, 1, warning)
      const debug = lines.find((line) => line.startsWith("DEBUG") && line.includes("in detail"))
      assert.isDefined(debug)
      assert.isAbove(debug!.split("\n").length, 3)
    })
  })

  it.effect("watch: a line over maxLineBytes fails with DecodeError (TooLarge)", () => {
    const { layer } = fake(() =>
      new Response(chunked([event("ADDED", pod("a", "1")), event("ADDED", pod("b".repeat(300), "2"))]))
    )
    return Effect.gen(function*() {
      const lw = yield* pods({ maxLineBytes: 200 })
      const { error, events } = yield* runWatch(lw.watch({}))
      assert.deepStrictEqual(names(events), ["a"])
      assert.strictEqual(error?._tag, "DecodeError")
      assert.strictEqual(error?.reason, "TooLarge")
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
      assert.strictEqual(error?._tag, "DecodeError")
      assert.strictEqual(error?.reason, "TooLarge")
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
      assert.strictEqual(error?._tag, "StatusError")
      assert.strictEqual(error?.reason, "Gone")
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

  it.effect("watch: a body cut mid-line fails with TransportError (BodyCut); a complete last line without newline is kept", () =>
    Effect.gen(function*() {
      const cut = fake(() =>
        new Response(chunked([event("ADDED", pod("a", "1")), event("ADDED", pod("b", "2")).slice(0, 25)]))
      )
      const cutResult = yield* Effect.flatMap(pods(), (lw) => runWatch(lw.watch({}))).pipe(Effect.provide(cut.layer))
      assert.deepStrictEqual(names(cutResult.events), ["a"])
      assert.strictEqual(cutResult.error?._tag, "TransportError")
      assert.strictEqual(cutResult.error?.reason, "BodyCut")
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
          new HttpClientError.HttpClientError({
            reason: new HttpClientError.TransportError({
              request: undefined as unknown as HttpClientRequest.HttpClientRequest,
              cause: new Error("connect ECONNREFUSED 127.0.0.1:6443")
            })
          })
        )
      )
      const listError = yield* Effect.flatMap(pods(), (lw) => Effect.flip(lw.list({}))).pipe(
        Effect.provide(refused.layer)
      )
      assert.strictEqual(listError._tag, "TransportError")
      assert.strictEqual(listError.reason, "RequestFailed")
      assert.strictEqual(listError.message, "list pods in default: connect ECONNREFUSED 127.0.0.1:6443")
      const watchResult = yield* Effect.flatMap(pods(), (lw) => runWatch(lw.watch({}))).pipe(
        Effect.provide(refused.layer)
      )
      assert.strictEqual(watchResult.error?._tag, "TransportError")
      assert.strictEqual(watchResult.error?.reason, "RequestFailed")

      const reset = fake(() => new Response(chunked([event("ADDED", pod("a", "1"))], new Error("socket hang up"))))
      const resetResult = yield* Effect.flatMap(pods(), (lw) => runWatch(lw.watch({}))).pipe(
        Effect.provide(reset.layer)
      )
      assert.deepStrictEqual(names(resetResult.events), ["a"])
      assert.strictEqual(resetResult.error?._tag, "TransportError")
      assert.strictEqual(resetResult.error?.reason, "RequestFailed")
      assert.include(resetResult.error!.message, "watch pods in default: ")
    }))

  it.effect("watch inactivity timeout also covers waiting for the response headers", () => {
    const { layer } = fake(() => Effect.never)
    return Effect.gen(function*() {
      const lw = yield* pods({ watchInactivityTimeout: "10 seconds" })
      const fiber = yield* Effect.forkChild(Effect.flip(Stream.runDrain(lw.watch({}))))
      yield* TestClock.adjust("11 seconds")
      const error = yield* Fiber.join(fiber)
      assert.strictEqual(error._tag, "TransportError")
      assert.strictEqual(error.reason, "Timeout")
      assert.strictEqual(error.message, "watch pods in default: no bytes received for 10s")
    }).pipe(Effect.provide(layer))
  })

  it.effect("watch inactivity timeout: fails with TransportError (Timeout) when no bytes arrive; bytes re-arm it", () => {
    const body = controlled()
    const { layer } = fake(() => new Response(body.body))
    return Effect.gen(function*() {
      const lw = yield* pods({ watchInactivityTimeout: "30 seconds" })
      const received = yield* Queue.unbounded<string>()
      const fiber = yield* lw.watch({ allowWatchBookmarks: true }).pipe(
        Stream.runForEach((e) => Queue.offer(received, e.type)),
        Effect.flip,
        Effect.forkChild
      )
      body.push(event("ADDED", pod("a", "1")))
      assert.strictEqual(yield* Queue.take(received), "ADDED")
      yield* TestClock.adjust("20 seconds")
      body.push(event("BOOKMARK", { metadata: { resourceVersion: "2" } }))
      assert.strictEqual(yield* Queue.take(received), "BOOKMARK")
      yield* TestClock.adjust("20 seconds")
      assert.isUndefined(fiber.pollUnsafe())
      yield* TestClock.adjust("11 seconds")
      const error = yield* Fiber.join(fiber)
      assert.strictEqual(error._tag, "TransportError")
      assert.strictEqual(error.reason, "Timeout")
      assert.strictEqual(error.message, "watch pods in default: no bytes received for 30s")
    }).pipe(Effect.provide(layer))
  })
})

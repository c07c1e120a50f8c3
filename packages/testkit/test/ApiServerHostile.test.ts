import { assert, describe, it } from "@effect/vitest"
import * as Resource from "effect-informers/Resource"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as HttpEffect from "effect/http/HttpEffect"
import * as Http from "node:http"
import * as ApiServer from "../src/ApiServer.js"
import type { ServerState } from "../src/internal/apiServerHttp.js"
import { FaultState, makeApp, makeDiscovery } from "../src/internal/apiServerHttp.js"
import { Store } from "../src/internal/apiServerStore.js"
import { eventually } from "./fixtures.js"

// -------------------------------------------------------------------------------------------------
// helpers
// -------------------------------------------------------------------------------------------------

interface StatusBody {
  readonly kind: string
  readonly apiVersion: string
  readonly status: string
  readonly reason: string
  readonly code: number
  readonly message: string
}

interface Meta {
  readonly name: string
  readonly namespace?: string
  readonly resourceVersion: string
  readonly labels?: { readonly [key: string]: string }
  readonly annotations?: { readonly [key: string]: string }
}

interface Obj {
  readonly kind: string
  readonly metadata: Meta
  readonly spec?: { readonly [key: string]: unknown }
}

interface ObjList {
  readonly metadata: { readonly resourceVersion: string }
  readonly items: ReadonlyArray<Obj>
}

interface WatchEvent {
  readonly type: string
  readonly object: Obj
}

interface RawReply {
  readonly status: number
  readonly text: string
  readonly json: unknown
}

const parse = (text: string): unknown => {
  try {
    return text === "" ? undefined : JSON.parse(text)
  } catch {
    return undefined
  }
}

/** Collects a response; `onResponse` runs as soon as its headers arrive. */
const collect = (
  response: Http.IncomingMessage,
  resolve: (reply: RawReply) => void,
  reject: (error: Error) => void
) => {
  const chunks: Array<Buffer> = []
  response.on("data", (chunk: Buffer) => chunks.push(chunk))
  response.once("error", reject)
  response.once("end", () => {
    const text = Buffer.concat(chunks).toString("utf8")
    resolve({ status: response.statusCode ?? 0, text, json: parse(text) })
  })
}

/** One raw HTTP request with a body sent at once (with its Content-Length), on a fresh connection. */
const raw = (
  url: string,
  method: string,
  body: string | Buffer | undefined,
  contentType = "application/json"
): Effect.Effect<RawReply> =>
  Effect.callback<RawReply, Error>((resume) => {
    const request = Http.request(url, {
      method,
      agent: false,
      headers: body === undefined ? {} : { "content-type": contentType, "content-length": Buffer.byteLength(body) }
    }, (response) => collect(response, (reply) => resume(Effect.succeed(reply)), (error) => resume(Effect.fail(error))))
    // the server may answer (and close) before the whole body is sent
    request.once("error", (error) => resume(Effect.fail(error)))
    request.end(body)
    return Effect.sync(() => request.destroy())
  }).pipe(Effect.timeout("20 seconds"), Effect.orDie)

/**
 * A body streamed in 64 KiB chunks without a Content-Length (chunked), until the server answers or
 * `total` bytes were sent: `head`, then filler characters, then `tail`. The connection is dropped once the
 * answer is read.
 */
const streamed = (
  url: string,
  method: string,
  head: string,
  tail: string,
  total: number,
  declaredLength?: number,
  agent: Http.Agent | false = false
): Effect.Effect<RawReply & { readonly sent: number }> =>
  Effect.callback<RawReply & { readonly sent: number }, Error>((resume) => {
    let answered = false
    let sent = 0
    const headers: Record<string, string | number> = { "content-type": "application/json" }
    if (declaredLength !== undefined) headers["content-length"] = declaredLength
    const request = Http.request(url, { method, agent, headers }, (response) => {
      answered = true
      collect(response, (reply) => {
        request.destroy()
        resume(Effect.succeed({ ...reply, sent }))
      }, (error) => resume(Effect.fail(error)))
    })
    request.once("error", (error) => {
      if (!answered) resume(Effect.fail(error))
    })
    const filler = Buffer.alloc(64 * 1024, "x")
    const pump = () => {
      if (sent === 0) {
        request.write(head)
        sent += head.length
      }
      while (!answered && sent + filler.length + tail.length < total) {
        sent += filler.length
        if (!request.write(filler)) {
          request.once("drain", pump)
          return
        }
      }
      if (!answered && declaredLength === undefined) {
        sent += tail.length
        request.end(tail)
      }
    }
    pump()
    return Effect.sync(() => request.destroy())
  }).pipe(Effect.timeout("20 seconds"), Effect.orDie)

const assertStatus = (reply: RawReply, codes: ReadonlyArray<number>, reasons: ReadonlyArray<string>) => {
  assert.include(codes, reply.status, reply.text.slice(0, 500))
  const status = reply.json as StatusBody
  assert.isObject(status, `a Status body, got: ${JSON.stringify(reply.text.slice(0, 200))}`)
  assert.strictEqual(status.kind, "Status")
  assert.strictEqual(status.apiVersion, "v1")
  assert.strictEqual(status.status, "Failure")
  assert.include(reasons, status.reason)
  assert.strictEqual(status.code, reply.status)
  assert.isString(status.message)
  assert.isAbove(status.message.length, 0)
}

const assertTooLarge = (reply: RawReply) => {
  assertStatus(reply, [413], ["RequestEntityTooLarge"])
  assert.strictEqual((reply.json as StatusBody).message, "Request entity too large: limit is 3145728")
}

const MiB = 1024 * 1024

const start = (options: ApiServer.Options = {}) => ApiServer.make(options).pipe(Effect.orDie)

const configMapsUrl = (server: ApiServer.ApiServer.Service) => `${server.url}/api/v1/namespaces/default/configmaps`

/** A ConfigMap whose JSON is exactly `size` bytes. */
const configMapOfSize = (name: string, size: number): string => {
  const empty = JSON.stringify({ apiVersion: "v1", kind: "ConfigMap", metadata: { name }, data: { big: "" } })
  return JSON.stringify({
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name },
    data: { big: "x".repeat(size - empty.length) }
  })
}

/** `{"a":{"a":...1...}}`, `depth` objects deep. */
const nestedObject = (depth: number): string => "{\"a\":".repeat(depth) + "1" + "}".repeat(depth)

/** `[[[...]]]`, `depth` arrays deep. */
const nestedArray = (depth: number): string => "[".repeat(depth) + "]".repeat(depth)

/** The server still answers a LIST after a hostile request. */
const assertServing = (server: ApiServer.ApiServer.Service) =>
  Effect.gen(function*() {
    const reply = yield* raw(configMapsUrl(server), "GET", undefined)
    assert.strictEqual(reply.status, 200, reply.text.slice(0, 500))
    assert.strictEqual((reply.json as { readonly kind: string }).kind, "ConfigMapList")
  })

/** Opens a watch whose lines accumulate in the background; aborted when the scope closes. */
const openWatch = (url: string) =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      const controller = new AbortController()
      const response = await fetch(url, { signal: controller.signal })
      const state = { lines: [] as Array<string>, controller }
      const reader = response.body!.getReader()
      const decoder = new TextDecoder()
      void (async () => {
        let rest = ""
        try {
          for (;;) {
            const { done, value } = await reader.read()
            if (done) break
            rest += decoder.decode(value, { stream: true })
            let i: number
            while ((i = rest.indexOf("\n")) >= 0) {
              state.lines.push(rest.slice(0, i))
              rest = rest.slice(i + 1)
            }
          }
        } catch {
          // aborted
        }
      })()
      return state
    }),
    (state) => Effect.sync(() => state.controller.abort())
  )

// -------------------------------------------------------------------------------------------------
// request bodies
// -------------------------------------------------------------------------------------------------

describe("ApiServer request body limit", () => {
  it.live("answers a 4 MiB create with 413 RequestEntityTooLarge and stores nothing", () =>
    Effect.gen(function*() {
      const server = yield* start()
      const rv = yield* server.resourceVersion
      const reply = yield* raw(configMapsUrl(server), "POST", configMapOfSize("big", 4 * MiB))
      assertTooLarge(reply)
      const get = yield* raw(`${configMapsUrl(server)}/big`, "GET", undefined)
      assertStatus(get, [404], ["NotFound"])
      assert.strictEqual(yield* server.resourceVersion, rv)
      yield* assertServing(server)
    }))

  it.live("accepts a body just under the limit", () =>
    Effect.gen(function*() {
      const server = yield* start()
      const body = configMapOfSize("almost", 3 * MiB - 1024)
      const reply = yield* raw(configMapsUrl(server), "POST", body)
      assert.strictEqual(reply.status, 201, reply.text.slice(0, 500))
      const get = yield* raw(`${configMapsUrl(server)}/almost`, "GET", undefined)
      assert.strictEqual(get.status, 200)
      assert.deepStrictEqual(
        (get.json as { readonly data: { readonly big: string } }).data,
        (JSON.parse(body) as { readonly data: { readonly big: string } }).data
      )
    }))

  it.live("accepts a body of exactly the limit", () =>
    Effect.gen(function*() {
      const server = yield* start()
      const reply = yield* raw(configMapsUrl(server), "POST", configMapOfSize("exact", 3 * MiB))
      assert.strictEqual(reply.status, 201, reply.text.slice(0, 500))
      const over = yield* raw(configMapsUrl(server), "POST", configMapOfSize("over", 3 * MiB + 1))
      assertTooLarge(over)
    }))

  it.live("honours a configured limit", () =>
    Effect.gen(function*() {
      const server = yield* start({ maxRequestBodyBytes: 1024 })
      const small = yield* raw(configMapsUrl(server), "POST", configMapOfSize("small", 1024))
      assert.strictEqual(small.status, 201, small.text.slice(0, 500))
      const big = yield* raw(configMapsUrl(server), "POST", configMapOfSize("big", 1025))
      assertStatus(big, [413], ["RequestEntityTooLarge"])
      assert.strictEqual((big.json as StatusBody).message, "Request entity too large: limit is 1024")
    }))

  it.live("stops reading a streamed body without Content-Length at the limit, and keeps serving", () =>
    Effect.gen(function*() {
      const server = yield* start()
      const head =
        "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"streamed\"},\"data\":{\"big\":\""
      const keepAlive = yield* Effect.acquireRelease(
        Effect.sync(() => new Http.Agent({ keepAlive: true })),
        (agent) => Effect.sync(() => agent.destroy())
      )
      // `Connection: close` (no agent), then a kept-alive connection
      for (const agent of [false, keepAlive] as const) {
        const reply = yield* streamed(configMapsUrl(server), "POST", head, "\"}}", 64 * MiB, undefined, agent)
        assertTooLarge(reply)
        // answered long before the whole body was sent
        assert.isBelow(reply.sent, 32 * MiB)
        const get = yield* raw(`${configMapsUrl(server)}/streamed`, "GET", undefined)
        assertStatus(get, [404], ["NotFound"])
        yield* assertServing(server)
      }
    }))

  it.live("answers a Content-Length over the limit before the body is sent", () =>
    Effect.gen(function*() {
      const server = yield* start()
      const head = "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"huge\"},\"data\":{\"big\":\""
      // 600 MB announced, only 1 MiB sent: the answer comes without waiting for the rest
      const reply = yield* streamed(configMapsUrl(server), "POST", head, "", MiB, 600 * 1000 * 1000)
      assertTooLarge(reply)
      yield* assertServing(server)
    }))

  it.live("limits updates, patches and deletes too", () =>
    Effect.gen(function*() {
      const server = yield* start()
      const created = yield* raw(configMapsUrl(server), "POST", configMapOfSize("cm", 1024))
      assert.strictEqual(created.status, 201)
      const url = `${configMapsUrl(server)}/cm`
      assertTooLarge(yield* raw(url, "PUT", configMapOfSize("cm", 4 * MiB)))
      assertTooLarge(yield* raw(url, "PATCH", configMapOfSize("cm", 4 * MiB), "application/merge-patch+json"))
      assertTooLarge(yield* raw(url, "PATCH", configMapOfSize("cm", 4 * MiB), "application/strategic-merge-patch+json"))
      const ops = JSON.stringify([{ op: "add", path: "/data/big", value: "x".repeat(4 * MiB) }])
      assertTooLarge(yield* raw(url, "PATCH", ops, "application/json-patch+json"))
      assertTooLarge(yield* raw(url, "DELETE", JSON.stringify({ kind: "DeleteOptions", pad: "x".repeat(4 * MiB) })))
      const get = yield* raw(url, "GET", undefined)
      assert.strictEqual(get.status, 200)
      assert.strictEqual(
        (get.json as { readonly data: { readonly big: string } }).data.big.length,
        (created.json as { readonly data: { readonly big: string } }).data.big.length
      )
    }))

  it.live("bounds the copies of a JSON patch", () =>
    Effect.gen(function*() {
      const server = yield* start()
      const created = yield* raw(configMapsUrl(server), "POST", configMapOfSize("cm", 64 * 1024))
      assert.strictEqual(created.status, 201)
      // each copy doubles the object: 64 KiB * 2^40 without a bound
      const ops = Array.from({ length: 40 }, (_, i) => ({ op: "copy", from: "/data", path: `/data/c${i}` }))
      const reply = yield* raw(
        `${configMapsUrl(server)}/cm`,
        "PATCH",
        JSON.stringify(ops),
        "application/json-patch+json"
      )
      assertStatus(reply, [413], ["RequestEntityTooLarge"])
      yield* assertServing(server)
    }))
})

// -------------------------------------------------------------------------------------------------
// nesting
// -------------------------------------------------------------------------------------------------

describe("ApiServer deeply nested JSON", () => {
  // a pod as JSON text around a spec given as text (the hostile bodies are written as text), not an object
  const podBody = (name: string, spec: string) =>
    `{"apiVersion":"v1","kind":"Pod","metadata":{"name":${JSON.stringify(name)}},"spec":${spec}}`

  it.live("answers a 6,000-deep create with a 400 Status, and keeps serving", () =>
    Effect.gen(function*() {
      const server = yield* start()
      const url = `${server.url}/api/v1/namespaces/default/pods`
      for (const [name, spec] of [["objects", nestedObject(6000)], ["arrays", `{"a":${nestedArray(6000)}}`]]) {
        const reply = yield* raw(url, "POST", podBody(name, spec))
        assertStatus(reply, [400, 422], ["BadRequest", "Invalid"])
        assertStatus(yield* raw(`${url}/${name}`, "GET", undefined), [404], ["NotFound"])
      }
      // the pod is 1 level, its spec n more: at the bound, accepted, one more, refused
      const ok = yield* raw(url, "POST", podBody("deep-ok", nestedObject(ApiServer.maxJsonDepth - 1)))
      assert.strictEqual(ok.status, 201, ok.text.slice(0, 300))
      // brackets inside strings do not count
      const text = yield* raw(url, "POST", podBody("text", `{"a":${JSON.stringify("[{\\\"".repeat(3000))}}`))
      assert.strictEqual(text.status, 201, text.text.slice(0, 300))
      const over = yield* raw(url, "POST", podBody("deep-over", nestedObject(ApiServer.maxJsonDepth)))
      assertStatus(over, [400], ["BadRequest"])
      yield* assertServing(server)
    }))

  it.live("answers 6,000-deep updates and patches (merge, strategic, json, apply) with a 4xx Status", () =>
    Effect.gen(function*() {
      const server = yield* start()
      const url = `${server.url}/api/v1/namespaces/default/pods/p`
      const created = yield* raw(`${server.url}/api/v1/namespaces/default/pods`, "POST", podBody("p", "{}"))
      assert.strictEqual(created.status, 201)
      const rv = yield* server.resourceVersion
      assertStatus(yield* raw(url, "PUT", podBody("p", nestedObject(6000))), [400, 422], ["BadRequest", "Invalid"])
      for (const type of ["merge-patch", "strategic-merge-patch"]) {
        const reply = yield* raw(url, "PATCH", `{"spec":${nestedObject(6000)}}`, `application/${type}+json`)
        assertStatus(reply, [400, 422], ["BadRequest", "Invalid"])
        const arrays = yield* raw(url, "PATCH", `{"spec":{"a":${nestedArray(6000)}}}`, `application/${type}+json`)
        assertStatus(arrays, [400, 422], ["BadRequest", "Invalid"])
      }
      const ops = `[{"op":"add","path":"/spec/a","value":${nestedObject(6000)}}]`
      assertStatus(yield* raw(url, "PATCH", ops, "application/json-patch+json"), [400, 422], ["BadRequest", "Invalid"])
      const apply = yield* raw(url, "PATCH", `{"spec":${nestedObject(6000)}}`, "application/apply-patch+yaml")
      assertStatus(apply, [400, 415, 422], ["BadRequest", "UnsupportedMediaType", "Invalid"])
      // nothing was written
      assert.strictEqual(yield* server.resourceVersion, rv)
      yield* assertServing(server)
    }))

  it.live("rejects a JSON patch whose result is nested too deeply", () =>
    Effect.gen(function*() {
      const server = yield* start()
      const half = Math.floor(ApiServer.maxJsonDepth / 2)
      const created = yield* raw(
        `${server.url}/api/v1/namespaces/default/pods`,
        "POST",
        podBody("p", `{"a":${nestedObject(half)},"b":${nestedObject(half)}}`)
      )
      assert.strictEqual(created.status, 201, created.text.slice(0, 300))
      const url = `${server.url}/api/v1/namespaces/default/pods/p`
      // a copy of one branch under the deepest point of the other: 2 + 500 + 500 levels
      const deepest = "/spec/a" + "/a".repeat(half - 1)
      const ops = JSON.stringify([{ op: "copy", from: "/spec/b", path: `${deepest}/b` }])
      const reply = yield* raw(url, "PATCH", ops, "application/json-patch+json")
      assertStatus(reply, [422], ["Invalid"])
      yield* assertServing(server)
    }))
})

// -------------------------------------------------------------------------------------------------
// unexpected errors
// -------------------------------------------------------------------------------------------------

describe("ApiServer unexpected errors", () => {
  it.effect("answers an exception in a handler with a 500 Status that says what happened", () =>
    Effect.gen(function*() {
      const resources = Resource.catalog
      const store = new Store(10, resources)
      store.storeOf = () => {
        throw new Error("boom")
      }
      const state: ServerState = {
        store,
        resources,
        byPath: new Map(resources.map((r) => [`${r.group}/${r.version}/${r.resource}`, r])),
        watchers: new Set(),
        faults: new FaultState(),
        stats: { requests: 0, byVerb: {}, watchesOpen: 0, watchesTotal: 0 },
        bookmarkInterval: Duration.seconds(10),
        maxTimeoutSeconds: 60,
        watchBufferBytes: 1024 * 1024,
        maxRequestBodyBytes: ApiServer.defaultMaxRequestBodyBytes,
        discovery: makeDiscovery(resources)
      }
      const handler = HttpEffect.toWebHandler(makeApp(state, () => "127.0.0.1:0"))
      const response = yield* Effect.promise(() => handler(new Request("http://localhost/api/v1/pods")))
      const text = yield* Effect.promise(() => response.text())
      assertStatus({ status: response.status, text, json: parse(text) }, [500], ["InternalError"])
      assert.include((parse(text) as StatusBody).message, "boom")
    }).pipe(Effect.catchCause(Effect.die)))

  it.live("serves selectors over objects whose labels are null or not an object", () =>
    Effect.gen(function*() {
      const server = yield* start()
      const podsUrl = `${server.url}/api/v1/namespaces/default/pods`
      const watch = yield* openWatch(`${podsUrl}?watch=true&labelSelector=app`)
      const bodies = [
        { apiVersion: "v1", kind: "Pod", metadata: { name: "null", labels: null } },
        { apiVersion: "v1", kind: "Pod", metadata: { name: "text", labels: "app" } },
        { apiVersion: "v1", kind: "Pod", metadata: { name: "web", labels: { app: "web" } } }
      ]
      for (const body of bodies) assert.strictEqual((yield* raw(podsUrl, "POST", JSON.stringify(body))).status, 201)
      for (const selector of ["app", "app%3Dweb", "app!%3Dweb", "!app"]) {
        const reply = yield* raw(`${podsUrl}?labelSelector=${selector}`, "GET", undefined)
        assert.strictEqual(reply.status, 200, reply.text)
      }
      const list = (yield* raw(`${podsUrl}?labelSelector=app`, "GET", undefined)).json as ObjList
      assert.deepStrictEqual(list.items.map((o) => o.metadata.name), ["web"])
      yield* eventually(() => watch.lines.length >= 1, "the ADDED event")
      assert.deepStrictEqual(
        watch.lines.map((line) => (JSON.parse(line) as WatchEvent).object.metadata.name),
        ["web"]
      )
    }))
})

// -------------------------------------------------------------------------------------------------
// resourceVersion
// -------------------------------------------------------------------------------------------------

describe("ApiServer resourceVersion", () => {
  it.live("reads an object's resourceVersion from its metadata, not from a label, annotation or spec", () =>
    Effect.gen(function*() {
      const server = yield* start()
      const base = Number(yield* server.resourceVersion)
      const podsUrl = `${server.url}/api/v1/namespaces/default/pods`
      const watch = yield* openWatch(`${podsUrl}?watch=true&resourceVersion=${base}`)
      // the label, the annotation and the spec field carry the very resourceVersions the writes will get
      const labels = { resourceVersion: String(base + 1), app: "web" }
      const annotations = { resourceVersion: String(base + 2) }
      const spec = { resourceVersion: String(base + 2), containers: [{ name: "c", image: "nginx" }] }
      const body = (extra: object) =>
        JSON.stringify({ spec, apiVersion: "v1", kind: "Pod", metadata: { name: "p", labels, ...extra } })
      const created = yield* raw(podsUrl, "POST", body({}))
      assert.strictEqual(created.status, 201, created.text)
      assert.strictEqual((created.json as Obj).metadata.resourceVersion, String(base + 1))
      const updated = yield* raw(
        `${podsUrl}/p`,
        "PUT",
        body({ annotations, resourceVersion: String(base + 1) })
      )
      assert.strictEqual(updated.status, 200, updated.text)
      assert.strictEqual((updated.json as Obj).metadata.resourceVersion, String(base + 2))

      const get = yield* raw(`${podsUrl}/p`, "GET", undefined)
      assert.strictEqual((get.json as Obj).metadata.resourceVersion, String(base + 2))
      const list = (yield* raw(podsUrl, "GET", undefined)).json as ObjList
      assert.strictEqual(list.metadata.resourceVersion, String(base + 2))
      assert.deepStrictEqual(list.items.map((o) => o.metadata.resourceVersion), [String(base + 2)])

      const deleted = yield* raw(`${podsUrl}/p`, "DELETE", undefined)
      assert.strictEqual(deleted.status, 200, deleted.text)
      assert.strictEqual((deleted.json as Obj).metadata.resourceVersion, String(base + 3))
      assert.strictEqual(yield* server.resourceVersion, String(base + 3))

      yield* eventually(() => watch.lines.length >= 3, "3 watch events")
      const events = watch.lines.map((line) => JSON.parse(line) as WatchEvent)
      assert.deepStrictEqual(
        events.map((e) => [e.type, e.object.metadata.resourceVersion]),
        [["ADDED", String(base + 1)], ["MODIFIED", String(base + 2)], ["DELETED", String(base + 3)]]
      )
      for (const reply of [created, updated, get, deleted]) {
        const o = reply.json as Obj
        assert.deepStrictEqual(o.metadata.labels, labels)
        assert.deepStrictEqual(o.spec, spec)
      }
      for (const event of events) {
        assert.deepStrictEqual(event.object.metadata.labels, labels)
        assert.deepStrictEqual(event.object.spec, spec)
        if (event.type !== "ADDED") assert.deepStrictEqual(event.object.metadata.annotations, annotations)
      }
      assert.deepStrictEqual((deleted.json as Obj).metadata.annotations, annotations)
    }))

  it.live("keeps the metadata resourceVersion through touches (modifyMany) of such an object", () =>
    Effect.gen(function*() {
      const server = yield* start()
      const base = Number(yield* server.resourceVersion)
      const podsUrl = `${server.url}/api/v1/namespaces/default/pods`
      const body = JSON.stringify({
        apiVersion: "v1",
        kind: "Pod",
        metadata: { name: "p", labels: { resourceVersion: String(base + 1) } }
      })
      assert.strictEqual((yield* raw(podsUrl, "POST", body)).status, 201)
      yield* server.bench.modifyMany(Resource.pods, { count: 3 }).pipe(Effect.orDie)
      const get = (yield* raw(`${podsUrl}/p`, "GET", undefined)).json as Obj
      assert.strictEqual(get.metadata.resourceVersion, String(base + 4))
      assert.deepStrictEqual(get.metadata.labels, { resourceVersion: String(base + 1) })
    }))
})

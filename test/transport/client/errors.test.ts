/**
 * The typed errors of the Client: from the embedded ApiServer (its real answers and its injected faults),
 * from stub servers (bodies that cannot be read, no answer at all) and from checks made before sending.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type * as ApiError from "../../../src/ApiError.js"
import * as Client from "../../../src/Client.js"
import * as Resource from "../../../src/Resource.js"
import type { TermError } from "../../../src/Term.js"
import { widgets } from "../../fixtures/index.js"
import { clientLayer, configMap, failure, status, withApiServer, withStub } from "./fixtures.js"

describe("Client errors", () => {
  it.live("404 NotFound: get, update, patch, delete of a missing object", () =>
    withApiServer((_, client) =>
      Effect.gen(function*() {
        const get = yield* failure(client.get(Resource.configMaps, "missing"))
        assert.strictEqual(get.kind, "StatusError (NotFound)")
        assert.strictEqual(get.error.message, `configmaps "missing" not found`)
        assert(get.error._tag === "StatusError")
        assert.strictEqual(get.error.code, 404)
        assert.strictEqual(get.error.status.details?.name, "missing")
        const writes: ReadonlyArray<Effect.Effect<unknown, ApiError.ApiError | TermError>> = [
          client.update(Resource.configMaps, configMap("missing")),
          client.patch(Resource.configMaps, "missing", Client.mergePatch({})),
          client.delete(Resource.configMaps, "missing")
        ]
        for (const effect of writes) {
          assert.strictEqual((yield* failure(effect)).kind, "StatusError (NotFound)")
        }
      })
    ))

  it.live("409 Conflict: an update with a stale resourceVersion", () =>
    withApiServer((server, client) =>
      Effect.gen(function*() {
        const cm = yield* client.create(Resource.configMaps, configMap("cm", { data: { a: "1" } }))
        yield* server.objects.patch(Resource.configMaps, { name: "cm", namespace: "default" }, { data: { a: "other" } })
        const { error, kind } = yield* failure(client.update(Resource.configMaps, { ...cm, data: { a: "2" } }))
        assert.strictEqual(kind, "StatusError (Conflict)")
        assert.include(error.message, "the object has been modified")
        // a patch carrying the stale resourceVersion too
        const patch = yield* failure(
          client.patch(
            Resource.configMaps,
            "cm",
            Client.mergePatch({ metadata: { resourceVersion: cm.metadata?.resourceVersion } })
          )
        )
        assert.strictEqual(patch.kind, "StatusError (Conflict)")
      })
    ))

  it.live("409 Conflict: delete preconditions that no longer hold", () =>
    withApiServer((_, client) =>
      Effect.gen(function*() {
        const cm = yield* client.create(Resource.configMaps, configMap("cm"))
        yield* client.patch(Resource.configMaps, "cm", Client.mergePatch({ data: { b: "2" } }))
        const stale = yield* failure(
          client.delete(Resource.configMaps, "cm", { preconditions: { resourceVersion: cm.metadata?.resourceVersion } })
        )
        assert.strictEqual(stale.kind, "StatusError (Conflict)")
        assert.include(stale.error.message, "Precondition failed: ResourceVersion")
        const uid = yield* failure(client.delete(Resource.configMaps, "cm", { preconditions: { uid: "not-it" } }))
        assert.strictEqual(uid.kind, "StatusError (Conflict)")
        assert.include(uid.error.message, "Precondition failed: UID")
      })
    ))

  it.live("409 AlreadyExists: create of a taken name", () =>
    withApiServer((_, client) =>
      Effect.gen(function*() {
        yield* client.create(Resource.configMaps, configMap("cm"))
        const { error, kind } = yield* failure(client.create(Resource.configMaps, configMap("cm")))
        assert.strictEqual(kind, "StatusError (AlreadyExists)")
        assert.strictEqual(error.message, `configmaps "cm" already exists`)
      })
    ))

  it.live("422 Invalid, with causes: an invalid name; a failed JSON patch test", () =>
    withApiServer((_, client) =>
      Effect.gen(function*() {
        const { error, kind } = yield* failure(client.create(Resource.configMaps, configMap("Not_Valid")))
        assert.strictEqual(kind, "StatusError (Invalid)")
        assert(error._tag === "StatusError")
        assert.strictEqual(error.code, 422)
        assert.deepStrictEqual(error.causes.map((cause) => [cause.reason, cause.field]), [
          ["FieldValueInvalid", "metadata.name"]
        ])
        yield* client.create(Resource.configMaps, configMap("cm", { data: { a: "1" } }))
        const test = yield* failure(
          client.patch(Resource.configMaps, "cm", Client.jsonPatch([{ op: "test", path: "/data/a", value: "2" }]))
        )
        assert.strictEqual(test.kind, "StatusError (Invalid)")
      })
    ))

  const injected = [
    [403, "StatusError (Forbidden)"],
    [401, "StatusError (Unauthorized)"],
    [500, "StatusError (ServerError)"],
    [503, "StatusError (ServerError)"],
    [504, "StatusError (Timeout)"]
  ] as const
  for (const [code, kind] of injected) {
    it.live(`HTTP ${code} (the server's fault injection) -> ${kind}`, () =>
      withApiServer((server, client) =>
        Effect.gen(function*() {
          yield* server.faults.inject({ _tag: "ServerError", status: code })
          const error = yield* failure(client.get(Resource.configMaps, "any"))
          assert.strictEqual(error.kind, kind)
          assert(error.error._tag === "StatusError")
          assert.strictEqual(error.error.code, code)
        })
      ))
  }

  it.live("429 TooManyRequests with its Retry-After", () =>
    withApiServer((server, client) =>
      Effect.gen(function*() {
        yield* server.faults.inject({ _tag: "TooManyRequests", retryAfterSeconds: 7 })
        const { error, kind } = yield* failure(client.create(Resource.configMaps, configMap("cm")))
        assert.strictEqual(kind, "StatusError (TooManyRequests)")
        assert(error._tag === "StatusError")
        assert.deepStrictEqual(error.retryAfter, Option.some(Duration.seconds(7)))
        // not retried by the Client: the next request goes through
        yield* client.create(Resource.configMaps, configMap("cm"))
      })
    ))

  it.live("a custom resource the server does not serve: NotFound (the server's 404 page)", () =>
    withApiServer((_, client) =>
      Effect.gen(function*() {
        const { error, kind } = yield* failure(client.get(widgets, "w"))
        assert.strictEqual(kind, "StatusError (NotFound)")
        assert.strictEqual(error.message, "the server could not find the requested resource")
      })
    ))

  it.live("an error body that is not a Status: the HTTP code's reason, the body quoted on one line", () =>
    withStub(
      () => ({ code: 403, body: "<html>\n  no entry\n</html>", headers: { "content-type": "text/html" } }),
      (_, client) =>
        Effect.gen(function*() {
          const { error, kind } = yield* failure(client.get(Resource.configMaps, "cm", { namespace: "ns" }))
          assert.strictEqual(kind, "StatusError (Forbidden)")
          assert.strictEqual(error.message, `get configmaps "cm" in ns: HTTP 403: <html> no entry </html>`)
        })
    ))

  it.live("415 UnsupportedMediaType: a strategic merge patch of a custom resource (kube-apiserver's answer)", () =>
    withStub(
      () => ({
        code: 415,
        body: status(
          415,
          "UnsupportedMediaType",
          "the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml"
        )
      }),
      (stub, client) =>
        Effect.gen(function*() {
          const { kind } = yield* failure(client.patch(widgets, "w", Client.strategicMergePatch({ spec: {} })))
          assert.strictEqual(kind, "StatusError (UnsupportedMediaType)")
          assert.strictEqual(stub.requests[0].headers["content-type"], "application/strategic-merge-patch+json")
        })
    ))

  it.live("DecodeError: a 2xx body that is not JSON, an object without metadata, another kind, an empty body", () => {
    const bodies: Array<unknown> = [
      "{\"kind\":\"ConfigMap\",",
      { kind: "ConfigMap", apiVersion: "v1" },
      { kind: "Secret", apiVersion: "v1", metadata: { name: "cm" } },
      ""
    ]
    let i = 0
    return withStub(() => ({ code: 200, body: bodies[i++] }), (_, client) =>
      Effect.gen(function*() {
        const malformed = yield* failure(client.get(Resource.configMaps, "cm"))
        assert.strictEqual(malformed.kind, "DecodeError (Malformed)")
        assert.match(malformed.error.message, /^get configmaps "cm" in default: malformed JSON in response: /)
        const noMeta = yield* failure(client.get(Resource.configMaps, "cm"))
        assert.strictEqual(noMeta.kind, "DecodeError (Malformed)")
        assert.match(noMeta.error.message, /invalid object in response: metadata/)
        const other = yield* failure(client.get(Resource.configMaps, "cm"))
        assert.strictEqual(other.kind, "DecodeError (UnexpectedObject)")
        assert.strictEqual(
          other.error.message,
          `get configmaps "cm" in default: expected a ConfigMap in response, got Secret`
        )
        const empty = yield* failure(client.get(Resource.configMaps, "cm"))
        assert.strictEqual(empty.error.message, `get configmaps "cm" in default: empty response body (HTTP 200)`)
      }))
  })

  it.live("DecodeError: a list item without metadata", () =>
    withStub(
      () => ({ code: 200, body: { kind: "ConfigMapList", metadata: { resourceVersion: "5" }, items: [{ data: {} }] } }),
      (_, client) =>
        Effect.gen(function*() {
          const { error, kind } = yield* failure(client.list(Resource.configMaps))
          assert.strictEqual(kind, "DecodeError (Malformed)")
          assert.match(error.message, /^list configmaps in all namespaces: invalid list item 0/)
        })
    ))

  it.live("listAll: a server repeating its continue token fails instead of looping", () =>
    withStub(
      () => ({
        code: 200,
        body: { kind: "ConfigMapList", metadata: { resourceVersion: "5", continue: "again" }, items: [] }
      }),
      (stub, client) =>
        Effect.gen(function*() {
          const { error, kind } = yield* failure(client.listAll(Resource.configMaps))
          assert.strictEqual(kind, "DecodeError (ContinueRepeated)")
          assert.strictEqual(
            error.message,
            "list configmaps in all namespaces: the server repeated a continue token after 2 pages (0 items): " +
              "paging would never end"
          )
          assert.strictEqual(stub.requests.length, 2)
        })
    ))

  it.live("TransportError (RequestFailed): nothing listening", () =>
    Effect.gen(function*() {
      const client = yield* Effect.provide(Client.Client, clientLayer("http://127.0.0.1:1"))
      const { error, kind } = yield* failure(client.get(Resource.configMaps, "cm"))
      assert.strictEqual(kind, "TransportError (RequestFailed)")
      assert.match(error.message, /^get configmaps "cm" in default: .*ECONNREFUSED/)
    }))

  it.live("a connection reset before any answer: a GET is sent again (twice at most), a write is not", () => {
    let resets = 0
    return withStub((request) => {
      if (request.method === "GET" && resets < 2) {
        resets++
        return "reset"
      }
      return request.method === "GET" ? { code: 200, body: configMap("cm") } : "reset"
    }, (stub, client) =>
      Effect.gen(function*() {
        const got = yield* client.get(Resource.configMaps, "cm")
        assert.strictEqual(got.metadata?.name, "cm")
        assert.strictEqual(stub.requests.length, 3)
        const { error, kind } = yield* failure(client.create(Resource.configMaps, configMap("cm")))
        assert.strictEqual(kind, "TransportError (RequestFailed)")
        assert.match(error.message, /^create configmaps "cm" in default: /)
        assert.strictEqual(stub.requests.length, 4)
        resets = -1 // three resets in a row: the GET's failure is returned
        const third = yield* failure(client.get(Resource.configMaps, "cm"))
        assert.strictEqual(third.kind, "TransportError (RequestFailed)")
        assert.strictEqual(stub.requests.length, 7)
      }))
  })

  it.live("TransportError (Timeout): a server that never answers, after `timeout`", () =>
    withStub(() => "hang", (_, client) =>
      Effect.gen(function*() {
        const { error, kind } = yield* failure(client.create(Resource.configMaps, configMap("cm")))
        assert.strictEqual(kind, "TransportError (Timeout)")
        assert.strictEqual(error.message, `create configmaps "cm" in default: no complete answer within 200ms`)
      }), { timeout: "200 millis" }))

  it.live("BadRequest before sending: an empty name, a name or namespace that is not a path segment", () =>
    withStub(() => ({ code: 500 }), (stub, client) =>
      Effect.gen(function*() {
        const empty = yield* failure(client.get(Resource.configMaps, ""))
        assert.strictEqual(empty.kind, "StatusError (BadRequest)")
        assert.strictEqual(empty.error.message, `get configmaps in default: resource name may not be empty`)
        const dots = yield* failure(client.delete(Resource.configMaps, ".."))
        assert.strictEqual(
          dots.error.message,
          `delete configmaps ".." in default: invalid resource name "..": may not be '..'`
        )
        const slash = yield* failure(client.get(Resource.configMaps, "a/b"))
        assert.include(slash.error.message, "may not contain '/'")
        const namespace = yield* failure(client.list(Resource.configMaps, { namespace: "." }))
        assert.include(namespace.error.message, `invalid namespace ".": may not be '.'`)
        const unnamed = yield* failure(client.update(Resource.configMaps, { metadata: {} }))
        assert.strictEqual(unnamed.error.message, `update configmaps in default: resource name may not be empty`)
        const apply = yield* failure(client.apply(Resource.configMaps, { data: { a: "1" } }))
        assert.strictEqual(apply.error.message, `apply configmaps in default: resource name may not be empty`)
        assert.strictEqual(stub.requests.length, 0)
      })))
})

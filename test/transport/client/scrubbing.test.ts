/**
 * Credentials never reach a Client error, whatever the server echoes: a stub server quotes the request's
 * Authorization header (and the decoded basic-auth password) on every failure path of every verb, and no
 * text of the errors (message, Status, detail, cause) may contain them.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import type * as ApiError from "../../../src/ApiError.js"
import * as Client from "../../../src/Client.js"
import * as HttpListerWatcher from "../../../src/HttpListerWatcher.js"
import * as KubeConfig from "../../../src/KubeConfig.js"
import * as Resource from "../../../src/Resource.js"
import type { TermError } from "../../../src/Term.js"
import type { StubReply, StubRequest } from "./fixtures.js"
import { configMap, status, stub, TOKEN } from "./fixtures.js"

const user = "alice"
const password = "pa55-CLIENT-w0rd-SECRET"

const forbidden = [
  TOKEN,
  password,
  encodeURIComponent(password),
  Buffer.from(`${user}:${password}`).toString("base64"),
  `${user}:${password}`
]

/** What the server says back: the request's credentials, in every form. */
const echoOf = (request: StubRequest): string => {
  const authorization = request.headers.authorization ?? ""
  const [scheme, credential = ""] = authorization.split(" ")
  const decoded = scheme === "Basic" ? Buffer.from(credential, "base64").toString("utf8") : ""
  const pw = decoded.slice(decoded.indexOf(":") + 1)
  return `you sent ${authorization} (${decoded}, password ${pw}, ${encodeURIComponent(pw)}) ` +
    `from https://${decoded}@example.com/ and token=${credential} raw ${credential}`
}

/** The failure paths, one per request in turn. */
const replies: ReadonlyArray<(echo: string) => StubReply> = [
  // an error Status quoting the credentials in every text it has
  (echo) => ({
    code: 403,
    body: {
      ...status(403, echo, echo, {
        name: echo,
        group: echo,
        kind: echo,
        uid: echo,
        causes: [{ reason: echo, message: echo, field: echo }]
      }),
      status: echo
    }
  }),
  // a Status without a message: the reason stands in for it
  (echo) => ({ code: 409, body: { kind: "Status", apiVersion: "v1", status: "Failure", reason: echo, code: 409 } }),
  // an error body that is not a Status
  (echo) => ({ code: 500, body: `<html>${echo}</html>`, headers: { "content-type": "text/html" } }),
  (echo) => ({ code: 429, body: status(429, "TooManyRequests", echo), headers: { "retry-after": "1" } }),
  // 2xx bodies that cannot be read
  (echo) => ({ code: 200, body: `{"kind":"ConfigMap","metadata":${echo}` }),
  (echo) => ({ code: 200, body: { kind: "ConfigMap", metadata: { name: { echo } } } }),
  (echo) => ({ code: 200, body: { kind: echo, metadata: { name: "cm" } } }),
  (echo) => ({ code: 201, body: `${echo}`.repeat(50) })
]

/** A list's failure paths. */
const listReplies: ReadonlyArray<(echo: string) => StubReply> = [
  (echo) => ({ code: 200, body: `{"kind":"ConfigMapList","metadata":{},"items":[${echo}` }),
  (echo) => ({
    code: 200,
    body: { kind: "ConfigMapList", metadata: { resourceVersion: "1" }, items: [{ metadata: { echo } }] }
  }),
  (echo) => ({ code: 401, body: echo })
]

/** Every text an error carries, its nested Status and cause included. */
const texts = (error: ApiError.ApiError | TermError): Array<string> => {
  const out: Array<string> = [error.message, JSON.stringify(error)]
  if (error._tag === "StatusError") out.push(JSON.stringify(error.status))
  if (error._tag === "DecodeError" && error.detail !== undefined) out.push(error.detail)
  const cause = (error as { readonly cause?: unknown }).cause
  if (cause instanceof Error) out.push(cause.message, String(cause.stack))
  else if (cause !== undefined) out.push(String(cause))
  return out
}

const run = (config: Partial<KubeConfig.Options>) =>
  Effect.gen(function*() {
    let i = 0
    let l = 0
    const server = yield* stub((request) => {
      const echo = echoOf(request)
      if (request.method === "GET" && !request.url.pathname.endsWith("/cm")) {
        return (listReplies[l++ % listReplies.length])(echo)
      }
      return (replies[i++ % replies.length])(echo)
    })
    const client = yield* Effect.provide(
      Client.Client,
      Client.layer({ qps: Infinity }).pipe(
        Layer.provide(HttpListerWatcher.layerHttpClient),
        Layer.provide(Layer.orDie(KubeConfig.layerFromOptions({ server: server.url, ...config })))
      )
    )
    const verbs: ReadonlyArray<Effect.Effect<unknown, ApiError.ApiError | TermError>> = [
      client.get(Resource.configMaps, "cm"),
      client.create(Resource.configMaps, configMap("cm")),
      client.update(Resource.configMaps, configMap("cm")),
      client.patch(Resource.configMaps, "cm", Client.mergePatch({})),
      client.apply(Resource.configMaps, configMap("cm")),
      client.updateStatus(Resource.configMaps, configMap("cm")),
      client.delete(Resource.configMaps, "cm"),
      client.get(Resource.configMaps, "cm")
    ]
    const errors: Array<ApiError.ApiError | TermError> = []
    // every verb meets every failure path
    for (let round = 0; round < replies.length; round++) {
      for (const verb of verbs) errors.push(yield* Effect.flip(verb))
    }
    for (let round = 0; round < listReplies.length; round++) {
      errors.push(yield* Effect.flip(client.list(Resource.configMaps)))
      errors.push(yield* Effect.flip(client.listAll(Resource.configMaps)))
    }
    return errors
  }).pipe(Effect.scoped)

const assertClean = (errors: ReadonlyArray<ApiError.ApiError | TermError>) => {
  let redacted = 0
  for (const error of errors) {
    for (const text of texts(error)) {
      if (text.includes("<redacted>")) redacted++
      for (const secret of forbidden) {
        assert.notInclude(text, secret, `${error._tag} (${error.reason}): ${text.slice(0, 300)}`)
      }
    }
  }
  assert.isAbove(redacted, 0, "the echo was scrubbed, not absent")
}

describe("Client: credentials in errors", () => {
  it.live("bearer token: no failure path of any verb quotes it", () =>
    Effect.gen(function*() {
      const errors = yield* run({ token: Redacted.make(TOKEN) })
      assert.strictEqual(errors.length, replies.length * 8 + listReplies.length * 2)
      const kinds = new Set(errors.map((error) => `${error._tag} (${error.reason})`))
      for (
        const kind of [
          "StatusError (Forbidden)",
          "StatusError (Conflict)",
          "StatusError (ServerError)",
          "StatusError (TooManyRequests)",
          "StatusError (Unauthorized)",
          "DecodeError (Malformed)"
        ]
      ) assert.isTrue(kinds.has(kind), kind)
      assertClean(errors)
    }))

  it.live("basic auth: neither the base64 form nor the plain password", () =>
    Effect.gen(function*() {
      assertClean(yield* run({ username: user, password: Redacted.make(password) }))
    }))

  it.live("messages are one line", () =>
    Effect.gen(function*() {
      for (const error of yield* run({ token: Redacted.make(TOKEN) })) {
        assert.notMatch(error.message, /[\r\n]/)
      }
    }))
})

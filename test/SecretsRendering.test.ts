// Every error the library makes from what a server said is safe to print in any way: a stub server echoes the
// request's credentials in every field of a Status (known, unknown, nested, metadata), in headers, in bodies
// that are not JSON, and JSON-escaped (`\u002d` inside the token); each error is then rendered with
// util.inspect (depth Infinity, hidden fields too), JSON.stringify, toString, String, Cause.pretty and each of
// Effect's loggers, and no rendering may hold a credential.
import { afterEach, assert, describe, it, vi } from "@effect/vitest"
import { Cause, Effect, Layer, Logger, Redacted, References, Stream } from "effect"
import * as HttpClient from "effect/http/HttpClient"
import * as HttpClientError from "effect/http/HttpClientError"
import * as Util from "node:util"
import * as ApiError from "../src/ApiError.js"
import * as Client from "../src/Client.js"
import * as HttpListerWatcher from "../src/HttpListerWatcher.js"
import { makeClientLock } from "../src/internal/coordination/leaseLock.js"
import * as KubeConfig from "../src/KubeConfig.js"
import * as Resource from "../src/Resource.js"
import type { StubReply, StubRequest } from "./transport/client/fixtures.js"
import { configMap, stub } from "./transport/client/fixtures.js"

const token = "tok-SECRET-7f3a9c2e1b"
const user = "alice"
const password = "pa55-SECRET-w0rd\"q"
/** A password in a URL of the user's own (a kubeconfig's server): only the generic patterns know it. */
const urlPassword = "hunter2-SECRET-x9"
const basic = Buffer.from(`${user}:${password}`).toString("base64")

/** A secret, or a part of one that would identify it, in any form a rendering could show. */
const forbidden = [
  token,
  "7f3a9c2e1b",
  "tok-SECRET",
  "tok\\u002dSECRET",
  password,
  "pa55-SECRET",
  "pa55\\u002dSECRET",
  JSON.stringify(password).slice(1, -1),
  encodeURIComponent(password),
  basic,
  basic.slice(0, 12),
  "hunter2"
]

/** `text` with every character but letters and digits written as a JSON `\uXXXX` escape. */
const escapeAll = (text: string): string =>
  Array.from(text, (c) => /[a-z0-9]/i.test(c) ? c : `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`).join("")

/** What the server quotes back: the request's credentials, plain, as a header, in a URL and as a field. */
const echoOf = (request: StubRequest): string => {
  const authorization = request.headers.authorization ?? ""
  const [scheme, credential = ""] = authorization.split(" ")
  const decoded = scheme === "Basic" ? Buffer.from(credential, "base64").toString("utf8") : ""
  const pw = decoded.slice(decoded.indexOf(":") + 1)
  return `you sent ${authorization} (${decoded}, password ${pw}) from https://${decoded}@example.com/ ` +
    `token=${credential} raw ${credential}`
}

/** A Status quoting `echo` in every field it has, in fields it should not have, and in nested ones. */
const hostileStatus = (code: number, echo: string) => ({
  kind: "Status",
  apiVersion: echo,
  metadata: { resourceVersion: echo, continue: echo, selfLink: echo, remainingItemCount: 1, extra: echo },
  status: echo,
  message: echo,
  reason: echo,
  code,
  details: {
    name: echo,
    group: echo,
    kind: echo,
    uid: echo,
    retryAfterSeconds: 1,
    causes: [{ reason: echo, message: echo, field: echo, extra: echo }, { extra: echo }],
    extra: echo,
    nested: { deeper: [echo] }
  },
  unknown: echo,
  nested: { deeper: { deepest: [echo, { echo }] } }
})

/**
 * The failure paths of a GET, one per request in turn. `escaped` is the echo with the credential written in
 * JSON escapes, spliced into raw JSON text (a parser decodes it; a preview of a malformed body shows it).
 */
const replies: ReadonlyArray<(echo: string, escaped: string) => StubReply> = [
  (echo) => ({ code: 403, body: hostileStatus(403, echo), headers: { "x-echo": echo, warning: `299 - "${echo}"` } }),
  // the same Status as raw JSON text, every text JSON-escaped
  (_, escaped) => ({ code: 500, body: JSON.stringify(hostileStatus(500, "ECHO")).replaceAll("ECHO", escaped) }),
  // a Status the schema rejects (a cause that is a string): described by the HTTP code, its body previewed
  (echo) => ({ code: 403, body: { ...hostileStatus(403, echo), details: { causes: [echo] } } }),
  // a Status without a message: the reason stands in for it
  (echo) => ({
    code: 409,
    body: { kind: "Status", reason: echo, code: 409, details: { causes: [{ message: echo }] } }
  }),
  // a body that is not a Status
  (echo, escaped) => ({ code: 502, body: `<html>${echo} ${escaped}</html>`, headers: { "content-type": "text/html" } }),
  (echo) => ({ code: 429, body: hostileStatus(429, echo), headers: { "retry-after": echo } }),
  // 2xx bodies that cannot be read: malformed JSON (its preview), a wrong shape (its detail), a wrong kind
  (_, escaped) => ({ code: 200, body: `{"kind":"ConfigMap","metadata":{"name":"${escaped}` }),
  (_, escaped) => ({ code: 200, body: `{"kind":"ConfigMap","metadata":"${escaped}"` }),
  (echo) => ({ code: 200, body: { kind: "ConfigMap", metadata: { name: { echo } } } }),
  (echo) => ({ code: 200, body: { kind: echo, metadata: { name: "cm" } } })
]

/** The failure paths of a LIST. */
const listReplies: ReadonlyArray<(echo: string, escaped: string) => StubReply> = [
  (_, escaped) => ({ code: 200, body: `{"kind":"ConfigMapList","metadata":{},"items":[{"a":"${escaped}" x` }),
  (_, escaped) => ({ code: 200, body: `{"kind":"ConfigMapList","items":[${escaped}]}` }),
  (echo) => ({
    code: 200,
    body: { kind: "ConfigMapList", metadata: { resourceVersion: "1" }, items: [{ metadata: { echo } }] }
  }),
  (echo) => ({ code: 401, body: hostileStatus(401, echo) })
]

/** The failure paths of a WATCH: the lines of one watch each. */
const watchReplies: ReadonlyArray<(echo: string, escaped: string) => string> = [
  (echo) => JSON.stringify({ type: "ERROR", object: hostileStatus(500, echo) }),
  (_, escaped) => JSON.stringify({ type: "ERROR", object: hostileStatus(410, "ECHO") }).replaceAll("ECHO", escaped),
  (_, escaped) => `{"type":"MODIFIED","object":{"metadata":"${escaped}" x`,
  (echo) => JSON.stringify({ type: "MODIFIED", object: { metadata: { name: { echo } } } })
]

const configMaps = Resource.configMaps

/** The errors of every verb, list and watch, and of a Lease lock, against the echoing server. */
const collect = (credentials: Partial<KubeConfig.Options>) =>
  Effect.gen(function*() {
    let get = 0
    let list = 0
    let watch = 0
    let reset = false
    const server = yield* stub((request) => {
      if (reset) return "reset"
      const echo = echoOf(request)
      const escaped = escapeAll(echo)
      if (request.url.searchParams.get("watch") === "true") {
        const line = watchReplies[watch++ % watchReplies.length](echo, escaped)
        return { code: 200, body: line + "\n" }
      }
      if (request.method === "GET" && !/\/(cm|lease)$/.test(request.url.pathname)) {
        return listReplies[list++ % listReplies.length](echo, escaped)
      }
      return replies[get++ % replies.length](echo, escaped)
    })
    const transport = HttpListerWatcher.layerHttpClient.pipe(
      Layer.provideMerge(Layer.orDie(KubeConfig.layerFromOptions({ server: server.url, ...credentials })))
    )
    const client = yield* Effect.provide(Client.Client, Client.layer({ qps: Infinity }).pipe(Layer.provide(transport)))
    const errors: Array<unknown> = []
    for (let i = 0; i < replies.length; i++) {
      errors.push(yield* Effect.flip(client.get(configMaps, "cm")))
      errors.push(yield* Effect.flip(client.create(configMaps, configMap("cm"))))
    }
    for (let i = 0; i < listReplies.length; i++) errors.push(yield* Effect.flip(client.list(configMaps)))
    // connections reset: TransportErrors with a cause
    reset = true
    errors.push(yield* Effect.flip(client.get(configMaps, "cm")))
    errors.push(yield* Effect.flip(client.create(configMaps, configMap("cm"))))
    reset = false
    const lw = yield* Effect.provide(HttpListerWatcher.make(configMaps), transport)
    for (let i = 0; i < listReplies.length; i++) errors.push(yield* Effect.flip(lw.list({})))
    for (let i = 0; i < watchReplies.length; i++) {
      errors.push(yield* Effect.flip(Stream.runDrain(lw.watch({ resourceVersion: "1" }))))
    }
    // a Lease lock's errors wrap the Client's
    const lock = makeClientLock(client, { namespace: "default", name: "lease" })
    for (let i = 0; i < replies.length; i++) errors.push(yield* Effect.flip(lock.get))
    return errors
  })

/** Every way an error may be printed, but through a logger. */
const renderings = (error: unknown): Array<string> => [
  Util.inspect(error, { depth: Infinity }),
  Util.inspect(error, { depth: Infinity, showHidden: true }),
  Util.format("%s %o %O %j", error, error, error, error),
  JSON.stringify(error),
  String(error),
  (error as Error).toString(),
  // Effect 4's `Cause.pretty` renders an error's `cause` chain (what `renderErrorCause: true` did in Effect 3)
  Cause.pretty(Cause.fail(error)),
  Cause.pretty(Cause.die(error)),
  ...Cause.prettyErrors(Cause.fail(error), { includeCauseInStack: true }).map((e) => `${e.stack}`),
  ...Cause.prettyErrors(Cause.die(error), { includeCauseInStack: true }).map((e) => `${e.stack}`),
  ...((error as { readonly status?: unknown }).status === undefined
    ? []
    : [
      Util.inspect((error as { readonly status?: unknown }).status, { depth: Infinity }),
      JSON.stringify(
        (error as { readonly status?: unknown }).status
      )
    ])
]

/** Effect's loggers, each writing its lines to `lines`. */
const loggers = (lines: Array<string>): ReadonlyArray<Logger.Logger<unknown, void>> => [
  Logger.map(Logger.formatLogFmt, (line) => void lines.push(line)),
  Logger.map(Logger.formatJson, (line) => void lines.push(line)),
  Logger.map(Logger.formatSimple, (line) => void lines.push(line)),
  Logger.map(Logger.formatStructured, (entry) => {
    lines.push(JSON.stringify(entry), Util.inspect(entry, { depth: Infinity }))
  }),
  // the pretty logger writes to the console (captured below)
  Logger.consolePretty({ colors: false }),
  Logger.defaultLogger
]

/** What every logger writes for `error`: logged as the message, as an annotation, and as the cause. */
const logged = (error: unknown) =>
  Effect.gen(function*() {
    const lines: Array<string> = []
    const capture = (...args: ReadonlyArray<unknown>) => void lines.push(Util.format(...args))
    const spies = [
      vi.spyOn(console, "log").mockImplementation(capture),
      vi.spyOn(console, "error").mockImplementation(capture),
      vi.spyOn(console, "group").mockImplementation(() => {}),
      vi.spyOn(console, "groupEnd").mockImplementation(() => {})
    ]
    try {
      for (const logger of loggers(lines)) {
        yield* Effect.all([
          Effect.logError(error),
          Effect.logError("failed", error),
          Effect.logError("failed", Cause.fail(error)),
          Effect.logWarning("failed").pipe(Effect.annotateLogs("error", error)),
          Effect.logError((error as { readonly status?: unknown }).status ?? "no status")
        ]).pipe(
          Effect.provide(Logger.layer([logger])),
          Effect.provideService(References.MinimumLogLevel, "All")
        )
      }
    } finally {
      for (const spy of spies) spy.mockRestore()
    }
    assert.isAbove(lines.length, 20)
    return lines
  })

const assertClean = (error: unknown, texts: ReadonlyArray<string>) => {
  for (const text of texts) {
    for (const secret of forbidden) {
      if (text.includes(secret)) {
        assert.fail(`${String((error as { _tag?: string })._tag)}: "${secret}" in: ${text.slice(0, 2000)}`)
      }
    }
  }
}

afterEach(() => {
  vi.restoreAllMocks()
})

const checkAll = (errors: ReadonlyArray<unknown>) =>
  Effect.gen(function*() {
    const tags = new Set<string>()
    for (const error of errors) {
      tags.add(`${(error as { _tag: string })._tag}`)
      assertClean(error, renderings(error))
      assertClean(error, yield* logged(error))
      // messages stay one line
      assert.notMatch((error as Error).message, /[\n\r]/)
    }
    return tags
  })

describe("no rendering of an error holds a credential", () => {
  it.live("bearer token, echoed in every field, header and escape", () =>
    Effect.gen(function*() {
      const errors = yield* collect({ token: Redacted.make(token) })
      const tags = yield* checkAll(errors)
      assert.deepStrictEqual([...tags].sort(), ["DecodeError", "LockError", "StatusError", "TransportError"])
      // the echo was scrubbed (not absent), and a StatusError keeps the known fields only
      const status = errors.find((e): e is ApiError.StatusError =>
        ApiError.isApiError(e) && e._tag === "StatusError" && e.code === 403
      )!
      assert.include(status.message, "<redacted>")
      assert.deepStrictEqual(Object.keys(status.status).sort(), ["code", "details", "kind", "message", "reason"])
      assert.deepStrictEqual(Object.keys(status.status.details!).sort(), [
        "causes",
        "group",
        "kind",
        "name",
        "retryAfterSeconds",
        "uid"
      ])
      assert.deepStrictEqual(Object.keys(status.causes[0]).sort(), ["field", "message", "reason"])
      assert.deepStrictEqual(status.causes[1], {})
    }), 60_000)

  it.live(
    "basic auth, a password holding a quote, echoed in every field, header and escape",
    () =>
      Effect.gen(function*() {
        const errors = yield* collect({ username: user, password: Redacted.make(password) })
        const tags = yield* checkAll(errors)
        assert.isTrue(tags.has("StatusError") && tags.has("DecodeError") && tags.has("TransportError"))
      }),
    60_000
  )

  it.live("a transport failure whose raw cause quotes the token: the cause is a scrubbed copy", () =>
    Effect.gen(function*() {
      const raw = new Error(`proxy refused ${token} (Bearer ${token})`, { cause: new Error(`inner ${token}`) })
      Object.assign(raw, { code: "ECONNREFUSED", config: { headers: { authorization: `Bearer ${token}` } } })
      const failing = HttpClient.make((request) =>
        Effect.fail(
          new HttpClientError.HttpClientError({ reason: new HttpClientError.TransportError({ request, cause: raw }) })
        )
      )
      const client = yield* Effect.provide(
        Client.Client,
        Client.layer({ qps: Infinity }).pipe(
          Layer.provide(Layer.succeed(HttpClient.HttpClient, failing)),
          Layer.provide(
            Layer.orDie(KubeConfig.layerFromOptions({ server: "http://127.0.0.1:1", token: Redacted.make(token) }))
          )
        )
      )
      const error = yield* Effect.flip(client.get(configMaps, "cm"))
      assert.strictEqual(error._tag, "TransportError")
      const cause = (error as ApiError.TransportError).cause as Error & { readonly code?: string }
      assert.strictEqual(cause.code, "ECONNREFUSED", "the system code is kept")
      assert.include(cause.message, "<redacted>")
      yield* checkAll([error])
    }))
})

describe("errors built directly, without a request's secrets", () => {
  it.effect("fromStatus keeps the known fields; the generic patterns scrub credential-shaped text", () =>
    Effect.gen(function*() {
      const echo = `Bearer ${token} https://${user}:${urlPassword}@example.com token=${token}`
      const error = ApiError.fromStatus(
        { ...hostileStatus(500, echo), apiVersion: token, metadata: { continue: token } } as never
      )
      assert.isUndefined((error.status as Record<string, unknown>).apiVersion)
      assert.isUndefined((error.status as Record<string, unknown>).metadata)
      assert.isUndefined((error.status as Record<string, unknown>).unknown)
      yield* checkAll([
        error,
        new ApiError.TransportError({
          reason: "RequestFailed",
          message: `connect to https://${user}:${urlPassword}@host failed:\n${echo}`,
          cause: { headers: { authorization: `Bearer ${token}` }, url: `https://${user}:${urlPassword}@host` }
        }),
        new ApiError.DecodeError({
          reason: "Malformed",
          message: echo,
          detail: `line one\n${echo}`,
          cause: new Error(echo)
        }),
        new KubeConfig.KubeConfigError({ reason: "InvalidServer", message: `server ${echo}` })
      ])
    }))

  it.effect("a KubeConfigError for a server URL with credentials", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(KubeConfig.fromOptions({ server: `https://${user}:${urlPassword}@exa mple` }))
      assert.strictEqual(error._tag, "KubeConfigError")
      yield* checkAll([error])
    }))
})

// Credentials never reach a log or an error message, whatever the server echoes: a scripted server quotes the
// request's Authorization header (and the decoded basic-auth password, and a URL with credentials) on every
// failure path of LIST and WATCH, and the informer's logs, errors and error fields must not contain them.
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer, Logger, Option, Redacted, References, Result, Schedule, Stream } from "effect"
import * as Http from "node:http"
import type { AddressInfo } from "node:net"
import * as HttpListerWatcher from "../src/HttpListerWatcher.js"
import { keyLinesOf, makeScrub, scrubPatterns, scrubStatus, secretsOf } from "../src/internal/redact.js"
import { ListBodyDecoder } from "../src/internal/transport/listBodyDecoder.js"
import * as KubeConfig from "../src/KubeConfig.js"
import type { KubeObject } from "../src/KubeObject.js"
import * as Resource from "../src/Resource.js"
import * as SharedInformer from "../src/SharedInformer.js"
import * as Wire from "../src/Wire.js"
import { pod as fixturePod } from "./fixtures/index.js"

const token = "tok-SECRET-7f3a9c2e1b"
const user = "alice"
const password = "pa55-SECRET-w0rd"

/** Every form a secret could take in a message. */
const forbidden = [
  token,
  password,
  encodeURIComponent(password),
  Buffer.from(`${user}:${password}`).toString("base64"),
  `${user}:${password}`
]

const pod = (name: string, rv: number): KubeObject => fixturePod(name, { typed: true, uid: name, rv: String(rv) })

const status = (code: number, reason: string, message: string, extra: object = {}) => ({
  kind: "Status",
  apiVersion: "v1",
  status: "Failure",
  code,
  reason,
  message,
  ...extra
})

type Reply = { readonly code: number; readonly body: string; readonly headers?: Record<string, string> }

/** What the server says back, quoting the request's credentials. */
const echoOf = (req: Http.IncomingMessage): string => {
  const authorization = req.headers.authorization ?? ""
  const [scheme, credential = ""] = authorization.split(" ")
  const decoded = scheme === "Basic" ? Buffer.from(credential, "base64").toString("utf8") : ""
  const pw = decoded.slice(decoded.indexOf(":") + 1)
  return `you sent ${authorization} (${decoded}, password ${pw}, ${encodeURIComponent(pw)}) ` +
    `from https://${decoded}@example.com/ and token=${credential}`
}

/** The failure paths of LIST, one per request until they are used up; then a good list. */
const listFailures: ReadonlyArray<(echo: string) => Reply> = [
  (echo) => ({ code: 500, body: JSON.stringify(status(500, "InternalError", echo)) }),
  (echo) => ({ code: 500, body: `<html>${echo}</html>` }),
  (echo) => ({ code: 200, body: `{"kind":"PodList","items":[${echo}` }),
  (echo) => ({
    code: 200,
    body: JSON.stringify({
      kind: "PodList",
      metadata: { resourceVersion: "1" },
      items: [{ metadata: { name: { echo }, namespace: "ns" } }]
    })
  }),
  (echo) => ({
    code: 403,
    body: JSON.stringify(
      status(403, "Forbidden", echo, { details: { name: echo, causes: [{ reason: "x", message: echo, field: echo }] } })
    )
  }),
  (echo) => ({
    code: 429,
    body: JSON.stringify(status(429, "TooManyRequests", echo)),
    headers: { "retry-after": "0" }
  }),
  (echo) => ({ code: 401, body: echo })
]

/** The failure paths of WATCH: lines sent on one watch each; then a quiet watch. */
const watchFailures: ReadonlyArray<(echo: string) => ReadonlyArray<string>> = [
  (echo) => [JSON.stringify({ type: "ERROR", object: status(500, "InternalError", echo) })],
  (echo) => [`{"type":"MODIFIED","object":${echo}`],
  (echo) => [JSON.stringify({ type: "MODIFIED", object: { metadata: { name: { echo } } } })],
  (
    echo
  ) => [
    JSON.stringify({ type: echo, object: {} }),
    JSON.stringify({ type: "ERROR", object: status(410, "Gone", echo) })
  ],
  (echo) => [
    JSON.stringify({ type: "ADDED", object: { ...pod("x", 9), kind: echo } }),
    JSON.stringify({ type: "ERROR", object: status(403, "Forbidden", echo) })
  ]
]

const startEchoServer = Effect.acquireRelease(
  Effect.callback<
    { readonly url: string; readonly server: Http.Server; readonly counts: { lists: number; watches: number } }
  >(
    (resume) => {
      const counts = { lists: 0, watches: 0 }
      const server = Http.createServer((req, res) => {
        const url = new URL(req.url ?? "/", "http://localhost")
        const echo = echoOf(req)
        if (url.searchParams.get("watch") !== "true") {
          const failure = listFailures[counts.lists++]
          const reply = failure === undefined
            ? {
              code: 200,
              body: JSON.stringify({ kind: "PodList", metadata: { resourceVersion: "5" }, items: [pod("a", 5)] })
            }
            : failure(echo)
          res.writeHead(reply.code, { "content-type": "application/json", ...reply.headers })
          res.end(reply.body)
          return
        }
        const failure = watchFailures[counts.watches++]
        res.writeHead(200, { "content-type": "application/json" })
        res.flushHeaders()
        if (failure === undefined) return // a quiet watch, left open
        for (const line of failure(echo)) res.write(line + "\n")
        res.end()
      })
      server.listen(0, "127.0.0.1", () => {
        const port = (server.address() as AddressInfo).port
        resume(Effect.succeed({ url: `http://127.0.0.1:${port}`, server, counts }))
      })
    }
  ),
  ({ server }) =>
    Effect.callback<void>((resume) => {
      server.closeAllConnections()
      server.close(() => resume(Effect.void))
    })
)

const pods = Resource.make<KubeObject>({ group: "", version: "v1", resource: "pods", kind: "Pod", namespaced: true })

const runAgainstEcho = (config: Omit<KubeConfig.Options, "server">) =>
  Effect.gen(function*() {
    const { counts, url } = yield* startEchoServer
    const lines: Array<string> = []
    const logger = Logger.make((options) => {
      lines.push(Logger.formatLogFmt.log(options))
    })
    const errors: Array<string> = []
    yield* Effect.gen(function*() {
      const lw = yield* HttpListerWatcher.make(pods, {})
      const informer = yield* SharedInformer.make(lw, {
        name: "pods",
        reflector: { watchList: false, backoff: Schedule.spaced("5 millis") }
      })
      yield* informer.errors.pipe(
        Stream.runForEach(({ error }) =>
          Effect.sync(() => {
            errors.push(`${error._tag}: ${error.message} ${JSON.stringify(error)}`)
          })
        ),
        Effect.forkScoped
      )
      yield* informer.start
      const deadline = Date.now() + 20_000
      while (counts.watches <= watchFailures.length && Date.now() < deadline) yield* Effect.sleep("20 millis")
      yield* Effect.sleep("100 millis")
    }).pipe(
      Effect.provide(
        HttpListerWatcher.layerHttpClient.pipe(
          Layer.provideMerge(KubeConfig.layerFromOptions({ server: url, ...config }))
        )
      ),
      Effect.provide(Logger.layer([logger])),
      Effect.provideService(References.MinimumLogLevel, "All"),
      Effect.scoped
    )
    assert.isAbove(counts.lists, listFailures.length, "every list failure path was taken")
    assert.isAbove(counts.watches, watchFailures.length, "every watch failure path was taken")
    return { lines, errors }
  })

const assertClean = (texts: ReadonlyArray<string>) => {
  for (const text of texts) {
    for (const secret of forbidden) {
      assert.notInclude(text, secret, `a secret in: ${text.slice(0, 300)}`)
    }
  }
}

describe("credentials in messages", () => {
  it.live(
    "bearer token: no failure path of LIST or WATCH quotes it in a log or an error",
    () =>
      Effect.gen(function*() {
        const { errors, lines } = yield* runAgainstEcho({ token: Redacted.make(token) })
        assert.isAtLeast(errors.length, listFailures.length + watchFailures.length - 1)
        assert.isTrue(lines.some((line) => line.includes("<redacted>")), "the echo was scrubbed, not absent")
        assertClean(lines)
        assertClean(errors)
      }),
    30_000
  )

  it.live(
    "basic auth: neither the base64 form nor the plain password, on any path",
    () =>
      Effect.gen(function*() {
        const { errors, lines } = yield* runAgainstEcho({ username: user, password: Redacted.make(password) })
        assert.isAtLeast(errors.length, listFailures.length + watchFailures.length - 1)
        assertClean(lines)
        assertClean(errors)
      }),
    30_000
  )

  it("the scrubber: verbatim secrets, URL credentials, PEM keys and credential-shaped fields", () => {
    const key = [
      "-----BEGIN RSA PRIVATE KEY-----",
      "MIIEowIBAAKCAQEAx7SECRETKEYLINE0000000000000000000000000000000",
      "ZmFrZWtleW1hdGVyaWFsZmFrZWtleW1hdGVyaWFsZmFrZWtleW1hdGVyaWFs",
      "-----END RSA PRIVATE KEY-----"
    ].join("\n")
    const scrub = makeScrub(
      secretsOf({ authorization: `Basic ${Buffer.from(`${user}:${password}`).toString("base64")}` }, keyLinesOf(key))
    )
    const text = [
      `password ${password}`,
      `url https://bob:hunter22@example.com/x`,
      `a key line ZmFrZWtleW1hdGVyaWFsZmFrZWtleW1hdGVyaWFsZmFrZWtleW1hdGVyaWFs in the middle`,
      key,
      `Bearer abc.def.ghi`,
      `token=zzz-111`
    ].join(" | ")
    const out = scrub(text)
    for (const secret of [password, "hunter22", "ZmFrZWtleW1hdGVyaWFs", "SECRETKEYLINE", "abc.def.ghi", "zzz-111"]) {
      assert.notInclude(out, secret)
    }
    assert.include(out, "https://<redacted>@example.com/x")
    // text without secrets is unchanged
    assert.strictEqual(scrubPatterns("list pods in ns: HTTP 500: boom"), "list pods in ns: HTTP 500: boom")
  })
})

describe("the scrubber on hostile text", () => {
  it("stays linear: 1 MB of scheme-like and URL-like text is scrubbed in well under a second", () => {
    const scrub = makeScrub(secretsOf({ authorization: `Bearer ${token}` }))
    for (const text of ["a.".repeat(500_000), "a://".repeat(250_000), `x://${"b".repeat(1_000_000)}`]) {
      const started = performance.now()
      scrub(text)
      assert.isBelow(performance.now() - started, 1000, text.slice(0, 12))
    }
  })

  it("a Status of any size is cut to a few KB", () => {
    const scrub = makeScrub([])
    const huge = "m".repeat(1_000_000)
    const status = scrubStatus(
      { message: huge, details: { causes: Array.from({ length: 1000 }, () => ({ message: huge })) } },
      scrub
    )
    assert.isBelow(status.message!.length, 2100)
    assert.strictEqual(status.details!.causes!.length, 20)
    assert.isBelow(status.details!.causes![0].message!.length, 2100)
  })
})

/** The shortest part of the token that would identify it. */
const minShown = 6

describe("a secret cut by a preview", () => {
  const long = "tok-" + "Z9y8X7w6V5".repeat(10)
  const scrub = makeScrub(secretsOf({ authorization: `Bearer ${long}` }))

  it("the scrubber removes a secret's start at a window's end and its end at a window's start", () => {
    assert.strictEqual(scrub(`found ${long.slice(0, 30)}…`), "found <redacted>…")
    assert.strictEqual(scrub(`${long.slice(-25)} and more`), "<redacted> and more")
    assert.strictEqual(scrub("nothing secret here"), "nothing secret here")
  })

  it("a malformed watch line whose preview cuts through the token", () => {
    const line = "{" + "x".repeat(190) + long + " garbage"
    const result = Wire.decodeWatchLine(line, scrub)
    assert.isTrue(Result.isFailure(result))
    const message = Result.isFailure(result) ? result.failure.message : ""
    assert.notInclude(message, long.slice(0, minShown))
    assert.include(message, "<redact") // the preview may cut the marker itself
  })

  it("a malformed LIST body whose preview cuts through the token", () => {
    const decoder = new ListBodyDecoder({ description: "pods", scrub })
    const body = `{"kind":"PodList","items":[{"metadata":{"name":"a"}}, ${"y".repeat(60)}${long} ]}`
    const failure = decoder.push(Buffer.from(body)) ?? Result.getFailure(decoder.end()).pipe(Option.getOrUndefined)
    assert.isDefined(failure)
    assert.notInclude(failure!.message, long.slice(0, minShown))
    assert.notInclude(failure!.message, long.slice(-minShown))
  })
})

describe("a secret the server JSON-escaped", () => {
  const long = "tok-" + "Z9y8X7w6V5".repeat(10)
  const escaped = long.replace("-", "\\u002d")
  const scrub = makeScrub(secretsOf({ authorization: `Bearer ${long}` }))

  it("whole, or cut by a window at either end, in the middle of an escape too", () => {
    assert.strictEqual(scrub(`echo ${escaped} done`), "echo <redacted> done")
    assert.strictEqual(scrub(`echo ${escaped.replace(/Z/g, "\\u005a")} done`), "echo <redacted> done")
    assert.strictEqual(scrub(`found ${escaped.slice(0, 20)}…`), "found <redacted>…")
    // the window's end cut the escape itself
    assert.strictEqual(scrub(`found ${escaped.slice(0, 3)}\\u00`), `found ${escaped.slice(0, 3)}\\u00`, "too short")
    assert.strictEqual(scrub(`found tok\\u002dZ9y8X7w6\\u00`), "found <redacted>")
    // the window's start is the rest of an escape, then the secret's end
    assert.strictEqual(scrub(`2d${long.slice(4)} and more`), "<redacted> and more")
  })

  it("a text of several cut parts (a schema error quoting values): each cut is looked at", () => {
    const text = `a: actual "${long.slice(0, 30)}…"; b: actual "${escaped.slice(0, 25)}…"; c: fine`
    const out = scrub(text)
    assert.notInclude(out, long.slice(0, 6))
    assert.notInclude(out, "Z9y8X7")
    assert.include(out, "c: fine")
  })

  it("a password holding a quote or a backslash, as JSON writes it", () => {
    const pw = `pa"ss\\word-SECRET`
    const basic = makeScrub(secretsOf({ authorization: `Basic ${Buffer.from(`alice:${pw}`).toString("base64")}` }))
    const json = JSON.stringify({ echo: `alice:${pw}`, password: pw })
    const out = basic(json)
    assert.notInclude(out, "SECRET")
    assert.notInclude(basic(`cut: ${JSON.stringify(pw).slice(1, 12)}…`), "pa\\\"ss")
  })

  it("a malformed LIST body whose preview window holds the escaped token", () => {
    const decoder = new ListBodyDecoder({ description: "pods", scrub })
    const body = `{"kind":"PodList","items":[{"metadata":{"name":"a"}}, {"x":"${escaped}" ]}`
    const failure = decoder.push(Buffer.from(body)) ?? Result.getFailure(decoder.end()).pipe(Option.getOrUndefined)
    assert.isDefined(failure)
    assert.notInclude(failure!.message, "Z9y8X7w6")
  })

  it("a malformed watch line holding the escaped token", () => {
    const result = Wire.decodeWatchLine(`{"type":"ADDED","object":{"a":"${escaped}"} garbage`, scrub)
    const message = Result.isFailure(result) ? result.failure.message : ""
    assert.include(message, "<redacted>")
    assert.notInclude(message, "Z9y8X7w6")
  })
})

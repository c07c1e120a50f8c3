/**
 * The `effect-informers` command line, driven as a child process (`node --import tsx
 * packages/cli/src/bin.ts ...` from the repository root, as `npm run cli` runs it): the demo's JSON summary, `serve` then `watch` against it (JSON and events output,
 * a pod created during the watch), one-line errors, and Ctrl-C.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import type { ChildProcess } from "node:child_process"
import { execFile, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { colorsEnabled, presentOutput, version } from "../src/Cli.js"
import { renderProgress } from "../src/commands/demo.js"
import { stringifyJson } from "../src/commands/watch.js"
import { eventually, exitedEarly } from "./fixtures.js"

// -------------------------------------------------------------------------------------------------
// helpers
// -------------------------------------------------------------------------------------------------

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..")

interface Exited {
  readonly code: number | null
  readonly signal: NodeJS.Signals | null
  readonly stdout: string
  readonly stderr: string
}

interface Running {
  readonly child: ChildProcess
  readonly stdout: () => string
  readonly stderr: () => string
  /** Complete stdout lines so far. */
  readonly lines: () => Array<string>
  /** Waits for the process to exit and its output to be read. */
  readonly exited: Effect.Effect<Exited>
}

/** Starts the CLI; the process is killed (SIGKILL) when the scope closes, if still running. */
const start = (
  args: ReadonlyArray<string>,
  options: { readonly discardStdout?: boolean } = {}
): Effect.Effect<Running, never, Scope.Scope> =>
  Effect.gen(function*() {
    const done = yield* Deferred.make<Exited>()
    const child = yield* Effect.acquireRelease(
      Effect.sync(() =>
        spawn(process.execPath, ["--import", "tsx", "packages/cli/src/bin.ts", ...args], {
          cwd: root,
          env: { ...process.env, NO_COLOR: "1", FORCE_COLOR: "0" },
          stdio: ["ignore", "pipe", "pipe"]
        })
      ),
      (child) =>
        Effect.sync(() => {
          if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL")
        })
    )
    let stdout = ""
    let stderr = ""
    child.stdout!.setEncoding("utf8")
    child.stderr!.setEncoding("utf8")
    // a reader that went away at once: the CLI must cope with EPIPE
    if (options.discardStdout === true) child.stdout!.destroy()
    else child.stdout!.on("data", (chunk: string) => stdout += chunk)
    child.stderr!.on("data", (chunk: string) => stderr += chunk)
    child.on("close", (code, signal) => Deferred.doneUnsafe(done, Effect.succeed({ code, signal, stdout, stderr })))
    return {
      child,
      stdout: () => stdout,
      stderr: () => stderr,
      lines: () => stdout.split("\n").slice(0, -1),
      exited: Deferred.await(done)
    }
  })

/** Runs the CLI to completion (at most `timeout`). */
const run = (args: ReadonlyArray<string>, timeout: Duration.Input = "60 seconds") =>
  Effect.scoped(Effect.flatMap(start(args), (cli) => awaitExit(cli, args, timeout)))

const awaitExit = (cli: Running, args: ReadonlyArray<string>, timeout: Duration.Input) =>
  cli.exited.pipe(
    Effect.timeoutOrElse({
      duration: timeout,
      orElse: () =>
        Effect.fail(
          new Error(
            `effect-informers ${args.join(" ")} still running after ${
              Duration.format(Duration.fromInputUnsafe(timeout))
            }\n` +
              `stdout: ${cli.stdout()}\nstderr: ${cli.stderr()}`
          )
        )
    }),
    Effect.orDie
  )

/** Waits (at most 60 s) for `serve` to say where it serves the Kubernetes API; that URL. */
const servedUrl = (serve: Running) => {
  const served = /serving the Kubernetes API on (http:\/\/\S+)/
  return Effect.map(
    eventually(() => served.test(serve.stdout()), {
      what: "the URL",
      timeout: "60 seconds",
      interval: "50 millis",
      giveUpIf: () => exitedEarly(serve),
      detail: () => `stdout: ${serve.stdout()}\nstderr: ${serve.stderr()}`
    }),
    () => served.exec(serve.stdout())![1]
  )
}

const assertNoStackTrace = (stderr: string) => {
  assert.notMatch(stderr, /^\s+at /m, `stack trace on stderr:\n${stderr}`)
  assert.notInclude(stderr, "node:internal", `stack trace on stderr:\n${stderr}`)
}

const nonEmptyLines = (text: string): Array<string> => text.split("\n").filter((line) => line.trim() !== "")

const keyOf = (obj: any): string => `${obj.metadata.namespace}/${obj.metadata.name}`

const getJson = (url: string) =>
  Effect.promise(async () => {
    const response = await fetch(url)
    return { status: response.status, json: await response.json() as any }
  })

/** `{"level":{"level":...{"leaf":true}}}`, `depth` levels of `level`, as JSON text (built without recursion). */
const deepJson = (depth: number): string => `${"{\"level\":".repeat(depth)}{"leaf":true}${"}".repeat(depth)}`

/** How deep `obj.level.level...` goes, and what is at the bottom (walked without recursion). */
const depthOf = (obj: any): { readonly depth: number; readonly leaf: unknown } => {
  let depth = 0
  while (typeof obj === "object" && obj !== null && "level" in obj) {
    obj = obj.level
    depth++
  }
  return { depth, leaf: obj }
}

/**
 * A scripted API server (plain `node:http`, so that no limit of the embedded server's gets in the way):
 * it refuses watch-lists with a 400, so that the informer LISTs; the LIST holds `items` (JSON text); every
 * watch stays open, without events.
 */
const scriptedServer = (items: ReadonlyArray<string>): Effect.Effect<string, never, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.callback<http.Server>((resume) => {
      const server = http.createServer((req, res) => {
        const url = new URL(req.url ?? "/", "http://localhost")
        if (url.pathname !== "/api/v1/pods") {
          res.writeHead(404, { "content-type": "application/json" })
          res.end(JSON.stringify({ kind: "Status", apiVersion: "v1", status: "Failure", code: 404 }))
        } else if (url.searchParams.get("sendInitialEvents") === "true") {
          res.writeHead(400, { "content-type": "application/json" })
          res.end(JSON.stringify({
            kind: "Status",
            apiVersion: "v1",
            status: "Failure",
            reason: "BadRequest",
            code: 400,
            message: "sendInitialEvents is not supported"
          }))
        } else if (url.searchParams.get("watch") === "true") {
          res.writeHead(200, { "content-type": "application/json" })
          res.flushHeaders()
        } else {
          res.writeHead(200, { "content-type": "application/json" })
          res.end(
            `{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"10"},"items":[${items.join(",")}]}`
          )
        }
      })
      server.listen(0, "127.0.0.1", () => resume(Effect.succeed(server)))
    }),
    (server) =>
      Effect.callback<void>((resume) => {
        server.closeAllConnections()
        server.close(() => resume(Effect.void))
      })
  ).pipe(Effect.map((server) => `http://127.0.0.1:${(server.address() as AddressInfo).port}`))

// a pod as JSON text around a spec given as text (the hostile bodies are written as text), not an object
const podJson = (name: string, spec: string): string =>
  `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"${name}","namespace":"default","resourceVersion":"5"},` +
  `"spec":${spec}}`

// -------------------------------------------------------------------------------------------------
// tests
// -------------------------------------------------------------------------------------------------

describe("Cli - stringifyJson", () => {
  const sample = {
    number: 1,
    negativeZero: -0,
    big: 1e21,
    notFinite: [NaN, Infinity, -Infinity],
    text: "quote \" backslash \\ newline \n separator \u2028 lone surrogate \ud800",
    list: [1, "x", null, undefined, () => 1, Symbol("s"), true, false],
    skipped: undefined,
    fn: () => 1,
    symbol: Symbol("s"),
    date: new Date(0),
    toJSON: { toJSON: (key: string) => `toJSON(${key})` },
    boxed: [new Number(3), new String("s"), new Boolean(false)],
    empty: { object: {}, array: [], allSkipped: { a: undefined } },
    nested: { a: [{ b: [[], {}] }, [[1]]] }
  }

  /** Equal texts; else where they first differ (not both texts: they are megabytes long). */
  const assertSameText = (actual: string, expected: string) => {
    if (actual === expected) return
    let i = 0
    while (actual[i] === expected[i]) i++
    assert.fail(
      `the texts differ at ${i} (lengths ${actual.length}, ${expected.length}): ` +
        `${JSON.stringify(actual.slice(Math.max(0, i - 40), i + 40))} instead of ` +
        JSON.stringify(expected.slice(Math.max(0, i - 40), i + 40))
    )
  }

  /** `n` nested arrays around `inner`. */
  const wrap = (inner: unknown, n: number): unknown => {
    let value = inner
    for (let i = 0; i < n; i++) value = [value]
    return value
  }

  it("is JSON.stringify wherever JSON.stringify works", () => {
    for (const value of [sample, [sample], 1, "s", null, { toJSON: () => undefined }]) {
      for (const indent of [0, 2]) assert.strictEqual(stringifyJson(value, indent), JSON.stringify(value, null, indent))
    }
  })

  it("writes what JSON.stringify would, at depths that overflow JSON.stringify", () => {
    const n = 100_000
    const deep = wrap(sample, n)
    assert.throws(() => JSON.stringify(deep), RangeError)
    assertSameText(stringifyJson(deep)!, `${"[".repeat(n)}${JSON.stringify(sample)}${"]".repeat(n)}`)

    // indented: the first 100 levels as JSON.stringify indents them (the object, then 99 arrays), the
    // deeper ones (the other n - 99 arrays) compact
    const chain = { sample, deep: wrap(undefined, n) }
    assert.throws(() => JSON.stringify(chain, null, 2), RangeError)
    const placeholder = "\u0000rest"
    const expected = JSON.stringify({ sample, deep: wrap(placeholder, 99) }, null, 2).replace(
      JSON.stringify(placeholder),
      `${"[".repeat(n - 99)}null${"]".repeat(n - 99)}`
    )
    const printed = stringifyJson(chain, 2)!
    assertSameText(printed, expected)
    assert.isBelow(printed.length, 3 * n, "the output grows linearly with the depth")
  })

  it("throws what JSON.stringify throws, also at depth", () => {
    const cyclic: Array<unknown> = []
    cyclic.push(cyclic)
    for (const value of [{ n: 1n }, cyclic]) {
      assert.throws(() => stringifyJson(value), TypeError)
      assert.throws(() => stringifyJson(wrap(value, 100_000)), TypeError)
    }
    assert.isUndefined(stringifyJson(wrap({ toJSON: () => undefined }, 0)))
  })
})

describe("Cli - presentation", () => {
  it("colors only to a terminal, never with NO_COLOR (not empty) or FORCE_COLOR=0", () => {
    assert.isTrue(colorsEnabled({ isTTY: true }, {}))
    assert.isTrue(colorsEnabled({ isTTY: true }, { NO_COLOR: "" }))
    assert.isFalse(colorsEnabled({ isTTY: false }, {}))
    assert.isFalse(colorsEnabled({}, {}))
    assert.isFalse(colorsEnabled({ isTTY: true }, { NO_COLOR: "1" }))
    assert.isFalse(colorsEnabled({ isTTY: true }, { FORCE_COLOR: "0" }))
  })

  it("presentOutput: ANSI stripped without color, usage lines as typed in help texts, the version alone", () => {
    const help = `\x1b[0;1meffect-informers\x1b[0m\n\neffect-informers ${version}\n\n\x1b[0;1mUSAGE\x1b[0m\n\n` +
      "$ demo [--pods integer]\n\n"
    assert.strictEqual(
      presentOutput(help, false),
      `effect-informers\n\neffect-informers ${version}\n\nUSAGE\n\neffect-informers demo [--pods integer]`
    )
    assert.include(presentOutput(help, true), "\x1b[0;1mUSAGE")
    assert.include(presentOutput(help, true), "\neffect-informers demo [--pods integer]")
    const rootHelp = `effect-informers\n\neffect-informers ${version}\n\nUSAGE\n\n$ effect-informers\n`
    assert.match(presentOutput(rootHelp, false), /\nUSAGE\n\neffect-informers$/)
    assert.strictEqual(presentOutput(`${version}\n`, false), version)
    // anything else passes through, a "$ " line included
    assert.strictEqual(presentOutput("$ not help\n", false), "$ not help\n")
    assert.strictEqual(presentOutput("\x1b[31mred\x1b[0m", false), "red")
    assert.strictEqual(presentOutput("\x1b[31mred\x1b[0m", true), "\x1b[31mred\x1b[0m")
  })

  it("renderProgress: each informer's state, backing off with the wait left, events/s, lag in ms", () => {
    const line = renderProgress({
      phase: "churning",
      elapsed: Duration.millis(4300),
      informers: [
        { name: "pods in all namespaces", cached: 2013, state: "watching" },
        {
          name: "deployments.apps in all namespaces",
          cached: 200,
          state: "backing off",
          backoffLeft: Duration.millis(1240),
          error: "StatusError"
        }
      ],
      events: 8321,
      eventsPerSecond: 412,
      relists: 3,
      backlog: 0,
      lag: Duration.millis(14.4),
      maxLag: Duration.millis(80),
      faults: 12
    })
    assert.strictEqual(
      line,
      "[churning 4.3s] pods 2,013 watching · deployments.apps 200 backing off 1.2s · 412 events/s · 8,321 events · " +
        "relists 3 · lag 14 ms · backlog 0 · faults 12"
    )
  })
})

describe("Cli - effect-informers as a child process", () => {
  it.live("demo --json prints exactly one JSON summary line and exits 0", () =>
    Effect.gen(function*() {
      const args = [
        "demo",
        "--duration",
        "3s",
        "--pods",
        "200",
        "--namespaces",
        "4",
        "--deployments",
        "10",
        "--churn",
        "50",
        "--faults",
        "mild",
        "--json"
      ]
      const result = yield* run(args, "80 seconds")
      assert.strictEqual(result.code, 0, result.stderr)
      assertNoStackTrace(result.stderr)
      const lines = nonEmptyLines(result.stdout)
      assert.strictEqual(lines.length, 1, result.stdout)
      const summary = JSON.parse(lines[0])
      assert.strictEqual(summary.consistent, true, lines[0])
      assert.isAtLeast(summary.objects, 150)
      assert.isAtLeast(summary.events, 210) // the initial adds at least
      assert.isNumber(summary.relists)
      assert.isNumber(summary.faults)
      assert.isArray(summary.informers)
    }), 90_000)

  it.live(
    "errors are one clear line on stderr, without a stack trace; an unreachable server warns, then fails at --duration",
    () =>
      Effect.gen(function*() {
        const [unknown, kubeconfig, badDuration, unreachable] = yield* Effect.all([
          run(["watch", "nosuchthing", "--server", "http://127.0.0.1:1"]),
          run(["watch", "pods", "--kubeconfig", "/nonexistent/kubeconfig"]),
          run(["demo", "--duration", "banana"]),
          // nothing listens on port 1: the informer never syncs, the watch fails after its duration
          run(["watch", "pods", "--server", "http://127.0.0.1:1", "--duration", "1s"])
        ], { concurrency: "unbounded" })

        assert.strictEqual(unknown.code, 1)
        assert.strictEqual(unknown.stdout, "")
        assert.lengthOf(nonEmptyLines(unknown.stderr), 1, unknown.stderr)
        assert.match(unknown.stderr, /^error: unknown resource "nosuchthing"/)

        assert.strictEqual(kubeconfig.code, 1)
        assert.lengthOf(nonEmptyLines(kubeconfig.stderr), 1, kubeconfig.stderr)
        // named as the library's errors are: its tag and reason
        assert.match(kubeconfig.stderr, /^error: KubeConfigError \(FileNotFound\): /)
        assert.include(kubeconfig.stderr, "/nonexistent/kubeconfig")

        assert.notStrictEqual(badDuration.code, 0)
        assert.include(badDuration.stderr, "banana")
        // warnings while the informer retries, then the error: it never synced
        assert.strictEqual(unreachable.code, 1, unreachable.stderr)
        assert.strictEqual(unreachable.stdout, "")
        const unreachableLines = nonEmptyLines(unreachable.stderr)
        for (const line of unreachableLines.slice(0, -1)) {
          assert.match(line, /^warning: [\w-]+: TransportError \(RequestFailed\): .*ECONNREFUSED/)
        }
        assert.match(unreachableLines[unreachableLines.length - 1], /^error: not synced after 1s: .*ECONNREFUSED/)

        for (const result of [unknown, kubeconfig, badDuration, unreachable]) assertNoStackTrace(result.stderr)
      }),
    90_000
  )

  it.live(
    "serve, then watch it: JSON output, events with a pod created meanwhile, Ctrl-C",
    () =>
      Effect.gen(function*() {
        const serve = yield* start([
          "serve",
          "--port",
          "0",
          "--pods",
          "20",
          "--namespaces",
          "2",
          "--inject",
          "error:count=1,status=503,on=list"
        ])
        const url = yield* servedUrl(serve)
        // --inject: the first LIST gets the injected 503, the next one the pods
        const injected = yield* getJson(`${url}/api/v1/pods`)
        assert.strictEqual(injected.status, 503)
        assert.strictEqual(injected.json.kind, "Status")
        const listed = yield* getJson(`${url}/api/v1/pods`)
        assert.strictEqual(listed.status, 200)
        assert.lengthOf(listed.json.items, 20)

        // -l: only the pods the label selector matches
        const app: string = listed.json.items[0].metadata.labels.app
        const selected = yield* run([
          "watch",
          "pods",
          "--server",
          url,
          "-l",
          `app=${app}`,
          "-o",
          "json",
          "--duration",
          "1s"
        ])
        assert.strictEqual(selected.code, 0, selected.stderr)
        const matching = listed.json.items.filter((pod: any) => pod.metadata.labels.app === app).map(keyOf).sort()
        assert.isAbove(matching.length, 0)
        assert.isBelow(matching.length, 20)
        assert.deepStrictEqual(JSON.parse(selected.stdout).map(keyOf).sort(), matching)

        // `-o json` and a reader that goes away (EPIPE), side by side
        const [json, piped] = yield* Effect.all([
          run(["watch", "pods", "--server", url, "--output", "json", "--duration", "1s"]),
          Effect.scoped(Effect.flatMap(
            start(["watch", "pods", "--server", url, "-o", "json", "--duration", "1s"], { discardStdout: true }),
            (cli) => awaitExit(cli, ["watch (stdout closed)"], "60 seconds")
          ))
        ], { concurrency: "unbounded" })
        assert.strictEqual(json.code, 0, json.stderr)
        assertNoStackTrace(json.stderr)
        const objects = JSON.parse(json.stdout)
        assert.isArray(objects)
        assert.lengthOf(objects, 20)
        const keys = objects.map(keyOf)
        assert.deepStrictEqual(keys, [...keys].sort())
        assert.deepStrictEqual([...keys].sort(), listed.json.items.map(keyOf).sort())
        assert.isTrue(
          objects.every((obj: any) => obj.kind === "Pod" && typeof obj.metadata.resourceVersion === "string")
        )
        assert.strictEqual(piped.code, 0, piped.stderr)
        assertNoStackTrace(piped.stderr)

        // events for ns-0: one EXISTING line per pod there, then ADDED for a pod created through the API;
        // beside it, a watch without a duration, interrupted with Ctrl-C
        const inNs0 = yield* getJson(`${url}/api/v1/namespaces/ns-0/pods`)
        const expected: Array<string> = inNs0.json.items.map((pod: any) =>
          `${pod.metadata.namespace}/${pod.metadata.name} rv=${pod.metadata.resourceVersion}`
        )
        assert.lengthOf(expected, 10)
        const eventArgs = ["watch", "pods", "-n", "ns-0", "--server", url, "--duration", "4s"]
        const events = yield* start(eventArgs)
        const endless = yield* start(["watch", "pods", "--server", url])
        yield* eventually(
          () => events.lines().filter((line) => line.startsWith("EXISTING")).length >= expected.length,
          {
            what: "an EXISTING line per pod of ns-0",
            timeout: "60 seconds",
            interval: "50 millis",
            giveUpIf: () => exitedEarly(events),
            detail: () => `stdout: ${events.stdout()}\nstderr: ${events.stderr()}`
          }
        )
        const created = yield* Effect.promise(async () => {
          const response = await fetch(`${url}/api/v1/namespaces/ns-0/pods`, {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify({
              apiVersion: "v1",
              kind: "Pod",
              metadata: { name: "cli-probe" },
              spec: { containers: [{ name: "main", image: "nginx" }] }
            })
          })
          return { status: response.status, json: await response.json() as any }
        })
        assert.strictEqual(created.status, 201)
        const result = yield* awaitExit(events, eventArgs, "30 seconds")
        assert.strictEqual(result.code, 0, result.stderr)
        assertNoStackTrace(result.stderr)
        const lines = nonEmptyLines(result.stdout)
        assert.deepStrictEqual(
          lines.filter((line) => line.startsWith("EXISTING")).map((line) => line.replace(/^EXISTING\s+/, "")).sort(),
          [...expected].sort()
        )
        assert.include(lines, `ADDED    ns-0/cli-probe rv=${created.json.metadata.resourceVersion}`)
        assert.lengthOf(lines, expected.length + 1, result.stdout)

        // Ctrl-C during a watch: prompt, quiet exit
        yield* eventually(() => endless.lines().some((l) => l.startsWith("EXISTING")), {
          what: "an EXISTING line",
          timeout: "60 seconds",
          interval: "50 millis",
          giveUpIf: () => exitedEarly(endless),
          detail: () => `stdout: ${endless.stdout()}\nstderr: ${endless.stderr()}`
        })
        const interrupted = Date.now()
        endless.child.kill("SIGINT")
        const watchExit = yield* awaitExit(endless, ["watch (SIGINT)"], "10 seconds")
        assert.isBelow(Date.now() - interrupted, 5000)
        assert.isNull(watchExit.signal)
        assert.strictEqual(watchExit.code, 0)
        assertNoStackTrace(watchExit.stderr)

        // Ctrl-C ends serve promptly and quietly too
        const stopping = Date.now()
        serve.child.kill("SIGINT")
        const serveExit = yield* awaitExit(serve, ["serve (SIGINT)"], "10 seconds")
        assert.isBelow(Date.now() - stopping, 5000)
        assert.strictEqual(serveExit.code, 0)
        assertNoStackTrace(serveExit.stderr)
        assert.strictEqual(serveExit.stderr.trim(), "")
      }),
    150_000
  )

  it.live(
    "watch of a 6,000-deep object: -o json prints it, events print it, no stack trace",
    () =>
      Effect.gen(function*() {
        const depth = 6000
        const url = yield* scriptedServer([
          podJson("deep", `{"containers":[],"level":${deepJson(depth)}}`),
          podJson("shallow", `{"containers":[]}`)
        ])
        const args = ["watch", "pods", "--server", url, "-o", "json", "--duration", "1s"]
        const [json, events] = yield* Effect.all([
          run(args),
          Effect.gen(function*() {
            const cli = yield* start(["watch", "pods", "--server", url])
            yield* eventually(() => cli.lines().filter((line) => line.startsWith("EXISTING")).length >= 2, {
              what: "an EXISTING line per pod",
              timeout: "60 seconds",
              interval: "50 millis",
              giveUpIf: () => exitedEarly(cli),
              detail: () => `stdout: ${cli.stdout()}\nstderr: ${cli.stderr()}`
            })
            cli.child.kill("SIGINT")
            return yield* awaitExit(cli, ["watch (SIGINT)"], "10 seconds")
          })
        ], { concurrency: "unbounded" })

        assert.strictEqual(json.code, 0, json.stderr)
        assertNoStackTrace(json.stderr)
        // the informer's warning that watch-lists are refused, nothing else
        for (const line of nonEmptyLines(json.stderr)) assert.match(line, /^warning: watch-list: /, json.stderr)
        const objects = JSON.parse(json.stdout)
        assert.deepStrictEqual(objects.map(keyOf), ["default/deep", "default/shallow"])
        assert.deepStrictEqual(depthOf(objects[0].spec), { depth: depth + 1, leaf: { leaf: true } })
        assert.deepStrictEqual(objects[1], JSON.parse(podJson("shallow", `{"containers":[]}`)))
        // as JSON.stringify(objects, null, 2) starts it, and compact once deep (not 72 MB of indentation)
        assert.isTrue(json.stdout.startsWith(`[\n  {\n    "apiVersion": "v1",\n    "kind": "Pod",\n`), json.stdout)
        assert.isBelow(json.stdout.length, 200_000)

        assert.strictEqual(events.code, 0, events.stderr)
        assertNoStackTrace(events.stderr)
        for (const line of nonEmptyLines(events.stderr)) assert.match(line, /^warning: watch-list: /, events.stderr)
        assert.deepStrictEqual(nonEmptyLines(events.stdout).sort(), [
          "EXISTING default/deep rv=5",
          "EXISTING default/shallow rv=5"
        ])
      }),
    90_000
  )
  it.live(
    "serve --audit-log FILE: one JSON line per kubectl write, the file complete once serve has stopped",
    () =>
      Effect.gen(function*() {
        const dir = yield* Effect.acquireRelease(
          Effect.sync(() => fs.mkdtempSync(path.join(os.tmpdir(), "effect-informers-cli-audit-"))),
          (dir) => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true }))
        )
        const file = path.join(dir, "audit.log")
        const serve = yield* start(["serve", "--port", "0", "--audit-log", file])
        const url = yield* servedUrl(serve)
        const manifest = path.join(dir, "cm.yaml")
        fs.writeFileSync(manifest, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: audited\ndata:\n  a: b\n")
        const kubectl = (...args: Array<string>) =>
          Effect.callback<string, Error>((resume) => {
            const child = execFile(
              process.env.KUBECTL ?? "kubectl",
              ["--server", url, "--cache-dir", path.join(dir, "cache"), "-n", "default", ...args],
              { timeout: 20_000, env: { ...process.env, KUBECONFIG: path.join(dir, "none") } },
              (error, stdout, stderr) =>
                resume(
                  error
                    ? Effect.fail(new Error(`kubectl ${args.join(" ")}: ${stderr || error.message}`))
                    : Effect.succeed(stdout)
                )
            )
            return Effect.sync(() => child.kill())
          }).pipe(Effect.orDie)
        yield* kubectl("create", "-f", manifest)
        yield* kubectl("label", "configmap", "audited", "tier=web")
        yield* kubectl("get", "configmap", "audited")
        yield* kubectl("delete", "configmap", "audited")
        serve.child.kill("SIGINT")
        const serveExit = yield* awaitExit(serve, ["serve (SIGINT)"], "10 seconds")
        assert.strictEqual(serveExit.code, 0, serveExit.stderr)
        const records = fs.readFileSync(file, "utf8").split("\n").filter((line) => line !== "").map((line) =>
          JSON.parse(line)
        )
        assert.deepStrictEqual(
          records.map((r) => `${r.verb} ${r.resource} ${r.namespace}/${r.name} ${r.code}`),
          [
            "create configmaps default/audited 201",
            "patch configmaps default/audited 200",
            "delete configmaps default/audited 200"
          ]
        )
        for (const record of records) {
          assert.match(record.time, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)
          assert.match(record.userAgent, /^kubectl/)
          assert.strictEqual(record.group, "")
        }
      }),
    90_000
  )
})

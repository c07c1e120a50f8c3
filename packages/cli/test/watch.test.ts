/**
 * `effect-informers watch` as a child process (`node --import tsx packages/cli/src/bin.ts watch ...` from
 * the repository root) against the embedded ApiServer of this process: the lines of `--output events`
 * (all of them, in order, promptly when the stream is idle, none lost through a pipe read slowly), and
 * the exit codes and durations of watches that sync and of watches that cannot (404, 403, unreachable).
 */
import * as ApiServer from "@effect-informers/testkit/ApiServer"
import { assert, describe, it } from "@effect/vitest"
import * as Resource from "effect-informers/Resource"
import * as Deferred from "effect/Deferred"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import type { ChildProcess } from "node:child_process"
import { execFileSync, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as net from "node:net"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { eventually, exitedEarly, pod } from "./fixtures.js"

// -------------------------------------------------------------------------------------------------
// helpers
// -------------------------------------------------------------------------------------------------

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..")

interface Exited {
  readonly code: number | null
  readonly signal: NodeJS.Signals | null
  /** `Date.now()` at the exit. */
  readonly at: number
}

interface Cli {
  readonly child: ChildProcess
  readonly args: ReadonlyArray<string>
  /** `Date.now()` at the spawn. */
  readonly startedAt: number
  /** Complete stdout lines so far. */
  readonly lines: () => ReadonlyArray<string>
  /** What was read of stdout after its last newline. */
  readonly partial: () => string
  /** `Date.now()` when stdout line `i` was read. */
  readonly lineAt: (i: number) => number
  readonly stderr: () => string
  /** `Date.now()` when the first stderr byte was read (0: none yet). */
  readonly firstStderrAt: () => number
  readonly exited: Effect.Effect<Exited>
}

/**
 * A named pipe: its write end for the child's stdout, its read end as a stream (closed with the scope). A
 * FIFO holds 64 KiB, where the socket pair of `stdio: "pipe"` holds a few hundred.
 */
const fifo = Effect.acquireRelease(
  Effect.sync(() => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "watch-test-"))
    const file = path.join(dir, "stdout")
    execFileSync("mkfifo", [file])
    // the read end first (without waiting for a writer), so that the write end opens at once
    const readFd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK)
    const writeFd = fs.openSync(file, fs.constants.O_WRONLY)
    const reader = new net.Socket({ fd: readFd, readable: true, writable: false })
    return { dir, writeFd, reader }
  }),
  ({ dir, reader, writeFd }) =>
    Effect.sync(() => {
      reader.destroy()
      try {
        fs.closeSync(writeFd)
      } catch {
        // closed after the spawn
      }
      fs.rmSync(dir, { recursive: true, force: true })
    })
)

/**
 * Starts the CLI (killed when the scope closes, if still running). With `slowReader`, stdout is not read
 * until `resume()` is called, then one chunk every `slowReader` ms. With `fifo`, stdout is a named pipe.
 */
const start = (
  args: ReadonlyArray<string>,
  options: { readonly slowReader?: number; readonly fifo?: boolean } = {}
): Effect.Effect<Cli & { readonly resume: () => void }, never, Scope.Scope> =>
  Effect.gen(function*() {
    const done = yield* Deferred.make<Exited>()
    const named = options.fifo === true ? yield* fifo : undefined
    const startedAt = Date.now()
    const child = yield* Effect.acquireRelease(
      Effect.sync(() => {
        const child = spawn(process.execPath, ["--import", "tsx", "packages/cli/src/bin.ts", ...args], {
          cwd: root,
          env: { ...process.env, NO_COLOR: "1", FORCE_COLOR: "0" },
          stdio: ["ignore", named === undefined ? "pipe" : named.writeFd, "pipe"]
        })
        if (named !== undefined) fs.closeSync(named.writeFd)
        return child
      }),
      (child) =>
        Effect.sync(() => {
          if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL")
        })
    )
    const lines: Array<string> = []
    const times: Array<number> = []
    let partial = ""
    let stderr = ""
    let firstStderrAt = 0
    const stdout = named === undefined ? child.stdout! : named.reader
    stdout.setEncoding("utf8")
    child.stderr!.setEncoding("utf8")
    stdout.on("data", (chunk: string) => {
      const now = Date.now()
      const parts = (partial + chunk).split("\n")
      partial = parts.pop()!
      for (const line of parts) {
        lines.push(line)
        times.push(now)
      }
      if (options.slowReader !== undefined) {
        stdout.pause()
        setTimeout(() => stdout.resume(), options.slowReader)
      }
    })
    if (options.slowReader !== undefined) stdout.pause()
    child.stderr!.on("data", (chunk: string) => {
      if (firstStderrAt === 0) firstStderrAt = Date.now()
      stderr += chunk
    })
    // `close` waits for the child's own pipes; a named pipe is read here after the child is gone, so the exit is
    // reported once its reader has also seen the end (what the child wrote is all read, however slowly)
    let exitedAs: Exited | undefined
    let readerEnded = named === undefined
    const report = () => {
      if (exitedAs !== undefined && readerEnded) Deferred.doneUnsafe(done, Effect.succeed(exitedAs))
    }
    child.on("close", (code, signal) => {
      exitedAs = { code, signal, at: Date.now() }
      report()
    })
    if (named !== undefined) {
      stdout.on("end", () => {
        readerEnded = true
        report()
      })
    }
    return {
      child,
      args,
      startedAt,
      lines: () => lines,
      partial: () => partial,
      lineAt: (i: number) => times[i],
      stderr: () => stderr,
      firstStderrAt: () => firstStderrAt,
      exited: Deferred.await(done),
      resume: () => stdout.resume()
    }
  })

const describeCli = (cli: Cli) =>
  `effect-informers ${cli.args.join(" ")}\nstdout (${cli.lines().length} lines): ${
    cli.lines().slice(-5).join("\n")
  }\nstderr: ${cli.stderr()}`

/** Waits for the process to exit (at most `timeout`). */
const awaitExit = (cli: Cli, timeout: Duration.Input = "90 seconds") =>
  cli.exited.pipe(
    Effect.timeoutOrElse({
      duration: timeout,
      orElse: () => Effect.fail(new Error(`still running: ${describeCli(cli)}`))
    }),
    Effect.orDie
  )

const nonEmptyLines = (text: string): Array<string> => text.split("\n").filter((line) => line.trim() !== "")

const assertNoStackTrace = (stderr: string) => {
  assert.notMatch(stderr, /^\s+at /m, `stack trace on stderr:\n${stderr}`)
  assert.notInclude(stderr, "node:internal", `stack trace on stderr:\n${stderr}`)
}

/** `count` small pods named `pod-NNNN` over `namespaces` namespaces `ns-N`. */
const podsOf = (count: number, namespaces: number): Array<Resource.Pod> =>
  Array.from({ length: count }, (_, i) =>
    pod(`pod-${String(i).padStart(4, "0")}`, {
      typed: true,
      namespace: `ns-${i % namespaces}`,
      labels: { app: "web" },
      spec: { containers: [{ name: "main", image: "nginx" }] }
    }) as Resource.Pod)

const keyOf = (pod: Resource.Pod): string => `${pod.metadata?.namespace}/${pod.metadata?.name}`

const line = (type: string, pod: Resource.Pod): string =>
  `${type.padEnd(8)} ${keyOf(pod)} rv=${pod.metadata?.resourceVersion}`

const rvOf = (text: string): number => Number(/ rv=(\d+)$/.exec(text)?.[1])

const median = (xs: ReadonlyArray<number>): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]

/** A server with the namespaces of `podsOf`'s pods. */
const withServer = ApiServer.make({
  garbageCollection: false,
  watchBufferBytes: 256 * 1024 * 1024,
  namespaces: ["ns-0", "ns-1", "ns-2"]
}).pipe(Effect.orDie)

// -------------------------------------------------------------------------------------------------
// tests
// -------------------------------------------------------------------------------------------------

describe("watch --output events: the lines", () => {
  it.live(
    "EXISTING for every pod, then each change in order; a change on an idle stream is printed promptly",
    () =>
      Effect.gen(function*() {
        const server = yield* withServer
        yield* server.bench.load(Resource.pods, podsOf(500, 3)).pipe(Effect.orDie)
        const initial = yield* server.objects.snapshot(Resource.pods)
        const cli = yield* start(["watch", "pods", "--server", server.url])
        yield* eventually(() => cli.lines().length >= initial.length, {
          what: "an EXISTING line per pod",
          timeout: "90 seconds",
          interval: "10 millis",
          giveUpIf: () => exitedEarly(cli),
          detail: () => describeCli(cli)
        })
        assert.deepStrictEqual([...cli.lines()].sort(), initial.map((pod) => line("EXISTING", pod)).sort())

        // changes, one after the other: their lines come in the same order
        const expected: Array<string> = []
        for (let i = 0; i < 60; i++) {
          const ref = { namespace: `ns-${i % 3}`, name: `pod-${String(i).padStart(4, "0")}` }
          const patched = yield* server.objects.patch(Resource.pods, ref, { metadata: { labels: { step: `${i}` } } })
            .pipe(Effect.orDie)
          expected.push(line("MODIFIED", patched))
          if (i % 3 === 0) {
            yield* server.objects.delete(Resource.pods, ref).pipe(Effect.orDie)
            expected.push(`DELETED  ${ref.namespace}/${ref.name}`)
          }
        }
        for (let i = 0; i < 20; i++) {
          const created = yield* server.objects.create(
            Resource.pods,
            podsOf(1, 1).map((pod) => ({
              ...pod,
              metadata: { ...pod.metadata, name: `new-${i}`, namespace: "ns-1" }
            }))[0]
          ).pipe(Effect.orDie)
          expected.push(line("ADDED", created))
        }
        const total = initial.length + expected.length
        yield* eventually(() => cli.lines().length >= total, {
          what: "a line per change",
          timeout: "90 seconds",
          interval: "10 millis",
          giveUpIf: () => exitedEarly(cli),
          detail: () => describeCli(cli)
        })
        const changes = cli.lines().slice(initial.length)
        // a DELETED line carries the resourceVersion of the deletion, which the API did not return
        assert.deepStrictEqual(
          changes.map((text) => text.startsWith("DELETED") ? text.replace(/ rv=\d+$/, "") : text),
          expected
        )
        const rvs = changes.map(rvOf)
        for (let i = 1; i < rvs.length; i++) assert.isAbove(rvs[i], rvs[i - 1], changes.join("\n"))

        // idle stream: each new pod's line arrives well within a second (the batches wait 20 ms at most)
        const latencies: Array<number> = []
        for (let i = 0; i < 5; i++) {
          yield* Effect.sleep("300 millis")
          const before = cli.lines().length
          const created = yield* server.objects.create(Resource.pods, {
            ...podsOf(1, 1)[0],
            metadata: { name: `probe-${i}`, namespace: "ns-2" }
          }).pipe(Effect.orDie)
          const sent = Date.now()
          yield* eventually(() => cli.lines().length > before, {
            what: `the line of probe-${i}`,
            timeout: "90 seconds",
            interval: "10 millis",
            giveUpIf: () => exitedEarly(cli),
            detail: () => describeCli(cli)
          })
          assert.strictEqual(cli.lines()[before], line("ADDED", created))
          latencies.push(cli.lineAt(before) - sent)
        }
        assert.isBelow(median(latencies), 500, `latencies ${latencies.join(", ")} ms`)

        // Ctrl-C: a quiet exit, code 0, nothing more printed
        cli.child.kill("SIGINT")
        const exited = yield* awaitExit(cli, "20 seconds")
        assert.strictEqual(exited.code, 0, cli.stderr())
        assert.lengthOf(cli.lines(), total + 5)
        assertNoStackTrace(cli.stderr())
        assert.strictEqual(cli.stderr(), "")
      }),
    180_000
  )

  it.live(
    "a pipe read slowly loses nothing: a burst of 20,000 changes, every line in order",
    () =>
      Effect.gen(function*() {
        const server = yield* withServer
        yield* server.bench.load(Resource.pods, podsOf(2000, 4)).pipe(Effect.orDie)
        const initial = yield* server.objects.snapshot(Resource.pods)
        // not read at all until the burst has been sent, then a chunk every 20 ms
        const cli = yield* start(["watch", "pods", "--server", server.url], { slowReader: 20 })
        yield* Effect.sleep("100 millis")
        // the watch is open once the server counts it
        const deadline = Date.now() + 90_000
        while ((yield* server.stats).watchesOpen === 0) {
          if (Date.now() > deadline) return yield* Effect.die(new Error(`no watch opened\n${describeCli(cli)}`))
          yield* Effect.sleep("20 millis")
        }
        const burst = yield* server.bench.modifyMany(Resource.pods, { count: 20_000 }).pipe(Effect.orDie)
        assert.strictEqual(cli.lines().length, 0)
        cli.resume()
        const total = initial.length + 20_000
        yield* eventually(() => cli.lines().length >= total, {
          what: "every line",
          timeout: "120 seconds",
          interval: "10 millis",
          giveUpIf: () => exitedEarly(cli),
          detail: () => describeCli(cli)
        })
        const lines = cli.lines()
        assert.deepStrictEqual(
          [...lines.slice(0, initial.length)].sort(),
          initial.map((pod) => line("EXISTING", pod)).sort()
        )
        const modified = lines.slice(initial.length)
        assert.isTrue(modified.every((text) => text.startsWith("MODIFIED ")), modified.slice(0, 3).join("\n"))
        // one line per event, in the order the server wrote them: consecutive resourceVersions
        const first = Number(burst.firstResourceVersion)
        assert.strictEqual(Number(burst.lastResourceVersion) - first + 1, 20_000)
        for (let i = 0; i < modified.length; i++) {
          if (rvOf(modified[i]) !== first + i) assert.fail(`line ${i}: ${modified[i]}, expected rv=${first + i}`)
        }
        // round-robin over the pods in key order
        const keys = initial.map(keyOf)
        assert.deepStrictEqual(modified.slice(0, 3).map((text) => text.split(" ").filter((s) => s !== "")[1]), [
          keys[0],
          keys[1],
          keys[2]
        ])
        cli.child.kill("SIGINT")
        const exited = yield* awaitExit(cli, "30 seconds")
        assert.strictEqual(exited.code, 0, cli.stderr())
        assert.lengthOf(cli.lines(), total)
        assert.strictEqual(cli.stderr(), "")
      }),
    240_000
  )
})

describe("watch --output events: the exit", () => {
  it.live(
    "Ctrl-C while the pipe is full: what the writer holds gets out, in order, with no gap and no partial line",
    () =>
      Effect.gen(function*() {
        const server = yield* withServer
        yield* server.bench.load(Resource.pods, podsOf(2000, 4)).pipe(Effect.orDie)
        const initial = yield* server.objects.snapshot(Resource.pods)
        const cli = yield* start(["watch", "pods", "--server", server.url], { slowReader: 5, fifo: true })
        const deadline = Date.now() + 90_000
        while ((yield* server.stats).watchesOpen === 0) {
          if (Date.now() > deadline) return yield* Effect.die(new Error(`no watch opened\n${describeCli(cli)}`))
          yield* Effect.sleep("20 millis")
        }
        const burst = yield* server.bench.modifyMany(Resource.pods, { count: 20_000 }).pipe(Effect.orDie)
        // the CLI has had the time to fill the pipe (64 KiB), its stream's buffer and its own
        yield* Effect.sleep("3 seconds")
        assert.strictEqual(cli.lines().length, 0)
        cli.child.kill("SIGINT")
        yield* Effect.sleep("200 millis")
        cli.resume()
        const exited = yield* awaitExit(cli, "60 seconds")
        assert.strictEqual(exited.code, 0, cli.stderr())
        assert.strictEqual(cli.stderr(), "")
        const lines = cli.lines()
        assert.strictEqual(cli.partial(), "")
        // more than the pipe holds: what waited in the process was written before it exited
        const bytes = lines.reduce((n, text) => n + text.length + 1, 0)
        assert.isAbove(bytes, 128 * 1024, `${lines.length} lines`)
        // a prefix of the whole sequence: the EXISTING lines, then MODIFIED at consecutive resourceVersions
        const existing = new Set(initial.map((pod) => line("EXISTING", pod)))
        const first = Number(burst.firstResourceVersion)
        for (let i = 0; i < lines.length; i++) {
          if (i < initial.length) {
            if (!existing.has(lines[i])) assert.fail(`line ${i}: ${lines[i]}`)
          } else if (!lines[i].startsWith("MODIFIED ") || rvOf(lines[i]) !== first + i - initial.length) {
            assert.fail(`line ${i}: ${lines[i]}, expected MODIFIED rv=${first + i - initial.length}`)
          }
        }
      }),
    180_000
  )
})

describe("watch: exit codes and --duration", () => {
  it.live(
    "synced: exit 0 at --duration; unsynced (404, 403, 500, unreachable): warnings and one error line naming the reason and code, exit 1, on time",
    () =>
      Effect.gen(function*() {
        const server = yield* withServer
        yield* server.bench.load(Resource.pods, podsOf(30, 2)).pipe(Effect.orDie)
        const forbidden = yield* withServer
        yield* forbidden.faults.inject({ _tag: "ServerError", status: 403, count: 1_000_000, on: "any" })
        const failing = yield* withServer
        yield* failing.faults.inject({ _tag: "ServerError", status: 500, count: 1_000_000, on: "any" })
        const unknown = "example.com/v1/widgets"
        const unreachable = "http://127.0.0.1:1"
        const duration = 3
        const cases = [
          { name: "events, synced", args: ["pods", "--server", server.url], synced: true },
          { name: "json, synced", args: ["pods", "--server", server.url, "-o", "json"], synced: true },
          {
            name: "events, 404",
            args: [unknown, "--server", server.url],
            warning: /^warning: (?:watch-)?list: StatusError \(NotFound, 404\): /,
            error: /^error: not synced after 3s: StatusError \(NotFound, 404\): /
          },
          {
            name: "json, 404",
            args: [unknown, "--server", server.url, "-o", "json"],
            warning: /^warning: (?:watch-)?list: StatusError \(NotFound, 404\): /,
            error: /^error: not synced after 3s: StatusError \(NotFound, 404\): /
          },
          {
            name: "events, 403",
            args: ["pods", "--server", forbidden.url],
            warning: /^warning: (?:watch-)?list: StatusError \(Forbidden, 403\): injected fault$/,
            error: /^error: not synced after 3s: StatusError \(Forbidden, 403\): injected fault$/
          },
          {
            name: "json, 403",
            args: ["pods", "--server", forbidden.url, "-o", "json"],
            warning: /^warning: (?:watch-)?list: StatusError \(Forbidden, 403\): injected fault$/,
            error: /^error: not synced after 3s: StatusError \(Forbidden, 403\): injected fault$/
          },
          {
            name: "events, 500",
            args: ["pods", "--server", failing.url],
            warning: /^warning: (?:watch-)?list: StatusError \(InternalError, 500\): /,
            error: /^error: not synced after 3s: StatusError \(InternalError, 500\): /
          },
          {
            name: "events, unreachable",
            args: ["pods", "--server", unreachable],
            warning: /^warning: (?:watch-)?list: TransportError \(RequestFailed\): .*ECONNREFUSED/,
            error: /^error: not synced after 3s: TransportError \(RequestFailed\): .*ECONNREFUSED/
          },
          {
            name: "json, unreachable",
            args: ["pods", "--server", unreachable, "-o", "json"],
            warning: /^warning: (?:watch-)?list: TransportError \(RequestFailed\): .*ECONNREFUSED/,
            error: /^error: not synced after 3s: TransportError \(RequestFailed\): .*ECONNREFUSED/
          }
        ]
        // two at a time: the machine may be small
        const results = yield* Effect.forEach(cases, (c) =>
          Effect.scoped(Effect.gen(function*() {
            const cli = yield* start(["watch", ...c.args, "--duration", `${duration}s`])
            const exited = yield* awaitExit(cli)
            return { ...c, cli, exited }
          })), { concurrency: 2 })

        for (const { args, cli, exited, name, ...c } of results) {
          const where = `${name}: ${describeCli(cli)}`
          assertNoStackTrace(cli.stderr())
          assert.isNull(exited.signal, where)
          if ("synced" in c) {
            assert.strictEqual(exited.code, 0, where)
            assert.strictEqual(cli.stderr(), "", where)
            if (args.includes("json")) assert.lengthOf(JSON.parse(cli.lines().join("\n")), 30, where)
            else assert.lengthOf(cli.lines(), 30, where)
            // ends at --duration, not before: from the first line (the informer had started by then) to the exit
            assert.isAtLeast(exited.at - cli.startedAt, duration * 1000, where)
            if (!args.includes("json")) assert.isBelow(exited.at - cli.lineAt(0), duration * 1000 + 4000, where)
            continue
          }
          assert.strictEqual(exited.code, 1, where)
          assert.deepStrictEqual(cli.lines(), [], where)
          const stderr = nonEmptyLines(cli.stderr())
          // the informer's warnings as it retries, each naming the error's reason (and HTTP code), then the one
          // error line
          assert.isAbove(stderr.length, 1, where)
          for (const text of stderr.slice(0, -1)) assert.match(text, c.warning!, where)
          assert.match(stderr[stderr.length - 1], c.error!, where)
          assert.notInclude(stderr[stderr.length - 1], "\n")
          // on time: from the first warning (the informer had started) to the exit, not the 30 s json default
          const elapsed = exited.at - cli.firstStderrAt()
          assert.isAbove(cli.firstStderrAt(), 0, where)
          assert.isAtLeast(exited.at - cli.startedAt, duration * 1000, where)
          assert.isBelow(elapsed, duration * 1000 + 4000, where)
        }
      }),
    300_000
  )
})

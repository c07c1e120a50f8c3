/**
 * The BUILT `effect-informers` binary (`node packages/cli/dist/bin.js`, what `npm install -g
 * @effect-informers/cli` installs), through a pipe: the help of every command (usage lines as typed, a
 * description and a default for every option, no ANSI escapes off a terminal or with NO_COLOR /
 * FORCE_COLOR=0, colors on a terminal otherwise), `--version`, `serve` on a port in use, and the demo
 * through its JSON progress, ended by SIGINT: the summary, and exit code 130.
 *
 * The build (`npm run build:packages`) runs first when a `dist/` is missing or older than its sources.
 */
import { assert, beforeAll, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { execFile, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as net from "node:net"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..")
const bin = path.join(root, "packages/cli/dist/bin.js")
const version: string = JSON.parse(fs.readFileSync(path.join(root, "packages/cli/package.json"), "utf8")).version

/** The newest modification time of the files under `dir` (0 when it does not exist). */
const newest = (dir: string): number => {
  if (!fs.existsSync(dir)) return 0
  let latest = 0
  for (const entry of fs.readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) latest = Math.max(latest, fs.statSync(path.join(entry.parentPath, entry.name)).mtimeMs)
  }
  return latest
}

/** Each package's `dist/` is newer than its `src/`, its `scripts/` (the CLI's bundle script) and its package.json. */
const built = (): boolean =>
  ["", "packages/testkit", "packages/cli"].every((pkg) => {
    const dist = newest(path.join(root, pkg, "dist"))
    return dist > 0 &&
      dist >= Math.max(
          newest(path.join(root, pkg, "src")),
          pkg === "" ? 0 : newest(path.join(root, pkg, "scripts")),
          fs.statSync(path.join(root, pkg, "package.json")).mtimeMs
        )
  })

beforeAll(async () => {
  // asynchronously: a build that blocked the worker's event loop for minutes would time out vitest's RPC
  if (!built()) {
    await new Promise<void>((resolve, reject) =>
      execFile(
        "npm",
        ["run", "build:packages"],
        { cwd: root, timeout: 600_000 },
        (error, stdout, stderr) =>
          error ? reject(new Error(`npm run build:packages failed:\n${stdout}${stderr}`)) : resolve()
      )
    )
  }
  assert.isTrue(fs.existsSync(bin), `${bin} was not built`)
}, 600_000)

interface Exited {
  readonly code: number | null
  readonly signal: NodeJS.Signals | null
  readonly stdout: string
  readonly stderr: string
}

/** The environment without any color setting of the test runner's. */
const plainEnv = (extra: Record<string, string> = {}): NodeJS.ProcessEnv => {
  const env = { ...process.env }
  delete env.NO_COLOR
  delete env.FORCE_COLOR
  return { ...env, ...extra }
}

/** Runs `command args` through pipes; `onStdout` sees the output so far and may act on the child. */
const exec = (
  command: string,
  args: ReadonlyArray<string>,
  options: {
    readonly env?: NodeJS.ProcessEnv | undefined
    readonly timeout?: number
    readonly onStdout?: (stdout: string, kill: (signal: NodeJS.Signals) => void) => void
  } = {}
) =>
  Effect.callback<Exited>((resume) => {
    const child = spawn(command, args, { cwd: root, env: options.env ?? plainEnv(), stdio: ["ignore", "pipe", "pipe"] })
    let stdout = ""
    let stderr = ""
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      stdout += chunk
      options.onStdout?.(stdout, (signal) => child.kill(signal))
    })
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => stderr += chunk)
    const timer = setTimeout(() => child.kill("SIGKILL"), options.timeout ?? 60_000)
    child.on("close", (code, signal) => {
      clearTimeout(timer)
      resume(Effect.succeed({ code, signal, stdout, stderr }))
    })
    return Effect.sync(() => child.kill("SIGKILL"))
  })

const cli = (args: ReadonlyArray<string>, env?: NodeJS.ProcessEnv) => exec(process.execPath, [bin, ...args], { env })

const nonEmptyLines = (text: string) => text.split("\n").filter((line) => line.trim() !== "")

/** The lines a stream has ended so far (the last one may still be coming). */
const completeLines = (text: string) => nonEmptyLines(text.slice(0, text.lastIndexOf("\n") + 1))

/**
 * The `--json-progress` lines that saw events flow: their count rose over a line less than 4 s before them (inside
 * the 5 s window of the rate).
 */
const flowingLines = (churning: ReadonlyArray<any>): Array<any> =>
  churning.filter((line, i) =>
    churning.slice(0, i).some((before) => line.elapsedMs - before.elapsedMs <= 4000 && line.events > before.events)
  )

/** The entries of the OPTIONS section of a help text: the header line, and the indented lines under it. */
const optionEntries = (help: string): Array<{ readonly header: string; readonly body: Array<string> }> => {
  const lines = help.split("\n")
  const start = lines.indexOf("OPTIONS")
  if (start < 0) return []
  const entries: Array<{ header: string; body: Array<string> }> = []
  for (const line of lines.slice(start + 1)) {
    if (line.trim() === "") continue
    if (/^\S/.test(line)) {
      if (!/^(--|\(-)/.test(line)) break // the footer
      entries.push({ header: line, body: [] })
    } else {
      entries[entries.length - 1]?.body.push(line.trim())
    }
  }
  return entries
}

/** Options each command has at least (other options are checked all the same). */
const commands: { readonly [command: string]: ReadonlyArray<string> } = {
  demo: ["--pods", "--namespaces", "--deployments", "--churn", "--duration", "--faults", "--json", "--json-progress"],
  serve: ["--port", "--pods", "--namespaces", "--deployments", "--churn", "--faults", "--inject", "--audit-log"],
  watch: [
    "--namespace",
    "--selector",
    "--field-selector",
    "--kubeconfig",
    "--context",
    "--server",
    "--cluster-scoped",
    "--output",
    "--duration"
  ],
  chaos: ["--seeds", "--first-seed", "--duration", "--pods", "--namespaces", "--churn", "--json"],
  replicate: ["--kubeconfig", "--context", "--server", "--identity", "--concurrency", "--leader-elect", "--sharded"]
}

const ansi = "\x1b["

describe("effect-informers (the built binary)", () => {
  it.live("--version prints the package's version alone and exits 0", () =>
    Effect.gen(function*() {
      const result = yield* cli(["--version"])
      assert.strictEqual(result.code, 0, result.stderr)
      assert.strictEqual(result.stdout, `${version}\n`)
      assert.strictEqual(result.stderr, "")
    }), 60_000)

  it.live(
    "--help of the root and of every command: usage as typed, every option described with its default, no ANSI",
    () =>
      Effect.gen(function*() {
        const rootHelp = yield* cli(["--help"])
        assert.strictEqual(rootHelp.code, 0, rootHelp.stderr)
        assert.notInclude(rootHelp.stdout, ansi)
        assert.include(rootHelp.stdout.split("\n"), "effect-informers")
        for (const command of Object.keys(commands)) assert.include(rootHelp.stdout, `  - ${command} `)

        const helps = yield* Effect.all(
          Object.keys(commands).map((command) =>
            Effect.map(cli([command, "--help"]), (result) => [command, result] as const)
          ),
          { concurrency: 2 }
        )
        for (const [command, result] of helps) {
          assert.strictEqual(result.code, 0, `${command}: ${result.stderr}`)
          assert.notInclude(result.stdout, ansi, command)
          assert.notMatch(result.stdout, /^\$ /m, `${command}: a usage line starts with "$ "`)
          assert.match(result.stdout, new RegExp(`^effect-informers ${command} \\S`, "m"), `${command}: no usage line`)
          const entries = optionEntries(result.stdout)
          const headers = entries.map((entry) => entry.header)
          for (const option of commands[command]) {
            assert.isTrue(headers.some((header) => header.includes(option)), `${command} has no ${option}: ${headers}`)
          }
          for (const entry of entries) {
            // the type line (e.g. "An integer."), then the description, which ends with the default (or says
            // that the option is required)
            const described = entry.body.find((line) => /\((default: [^)]+|required)\)$/.test(line))
            assert.isDefined(
              described,
              `${command} ${entry.header}: no description with its default:\n${entry.body.join("\n")}`
            )
          }
          // the built-in options are not listed without a default; the footer names them
          assert.include(result.stdout, "--version prints the version")
        }
        const demoHelp = helps.find(([command]) => command === "demo")![1].stdout
        assert.include(demoHelp, "pods to seed (default: 2000)")
        assert.include(demoHelp, "(default: 20s)")
      }),
    120_000
  )

  it.live(
    "NO_COLOR and FORCE_COLOR=0 turn colors off on a terminal too; a terminal gets them otherwise",
    () =>
      Effect.gen(function*() {
        // `script` runs the binary on a pseudo-terminal and copies what it printed to our pipe
        const onTerminal = (env: Record<string, string>) =>
          exec("script", ["-q", "-e", "-c", `${process.execPath} ${bin} demo --help`, "/dev/null"], {
            env: plainEnv(env)
          })
        const [colored, noColor, forceColor0] = yield* Effect.all([
          onTerminal({}),
          onTerminal({ NO_COLOR: "1" }),
          onTerminal({ FORCE_COLOR: "0" })
        ], { concurrency: 3 })
        for (const result of [colored, noColor, forceColor0]) assert.strictEqual(result.code, 0, result.stderr)
        assert.include(colored.stdout, ansi, "no colors on a terminal")
        assert.notInclude(noColor.stdout, ansi, "NO_COLOR=1")
        assert.notInclude(forceColor0.stdout, ansi, "FORCE_COLOR=0")
        assert.include(noColor.stdout, "effect-informers demo [--pods integer]")
      }),
    60_000
  )

  it.live(
    "a bad value: effect/cli's error on stderr, without ANSI escapes, exit code 1",
    () =>
      Effect.gen(function*() {
        const result = yield* cli(["demo", "--pods", "many"])
        assert.strictEqual(result.code, 1)
        assert.include(result.stderr, "many")
        assert.notInclude(result.stderr, ansi)
        assert.strictEqual(result.stdout, "")
      }),
    60_000
  )

  it.live("serve on a port in use: the reason in one line, exit code 1", () =>
    Effect.gen(function*() {
      const holder = yield* Effect.acquireRelease(
        Effect.callback<net.Server>((resume) => {
          const server = net.createServer()
          server.listen(0, "127.0.0.1", () => resume(Effect.succeed(server)))
        }),
        (server) => Effect.callback<void>((resume) => void server.close(() => resume(Effect.void)))
      )
      const port = (holder.address() as net.AddressInfo).port
      const [inUse, notAPort] = yield* Effect.all([
        cli(["serve", "--port", String(port)]),
        cli(["serve", "--port", "70000"])
      ], { concurrency: 2 })
      assert.strictEqual(inUse.code, 1, inUse.stdout)
      assert.deepStrictEqual(nonEmptyLines(inUse.stderr), [
        `error: cannot serve on 127.0.0.1:${port}: address already in use (EADDRINUSE)`
      ])
      assert.strictEqual(notAPort.code, 1, notAPort.stdout)
      assert.deepStrictEqual(nonEmptyLines(notAPort.stderr), [
        "error: cannot serve on 127.0.0.1:70000: not a port (0 to 65535; 0 picks a free one)"
      ])
    }), 60_000)

  it.live(
    "demo --json-progress: informer states and a rate that is not 0 while events flow; SIGINT: the summary, exit 130",
    () =>
      Effect.gen(function*() {
        let sent = false
        const result = yield* exec(
          process.execPath,
          [
            bin,
            "demo",
            "--json-progress",
            "--duration",
            "120s",
            "--pods",
            "200",
            "--namespaces",
            "4",
            "--deployments",
            "10",
            "--churn",
            "100",
            "--faults",
            "chaos"
          ],
          {
            timeout: 120_000,
            // Ctrl-C after 8 progress lines of churn, once an informer was seen watching and a line saw events
            // flow (under chaos both informers can be backing off for seconds at a time: the faults start with
            // the churn)
            onStdout: (stdout, kill) => {
              if (sent || (stdout.match(/"phase":"churning"/g) ?? []).length < 8) return
              if (!/"phase":"churning".*"state":"watching"/.test(stdout)) return
              const churning = completeLines(stdout).map((line) => JSON.parse(line)).filter((line) =>
                line.type === "progress" && line.phase === "churning"
              )
              if (flowingLines(churning).length > 0) {
                sent = true
                kill("SIGINT")
              }
            }
          }
        )
        assert.isTrue(sent, `no churn seen:\n${result.stdout}\n${result.stderr}`)
        assert.strictEqual(result.code, 130, result.stderr)
        assert.isNull(result.signal)
        const lines = nonEmptyLines(result.stdout).map((line) => JSON.parse(line))
        const progress = lines.filter((line) => line.type === "progress")
        const churning = progress.filter((line) => line.phase === "churning")
        assert.isAtLeast(churning.length, 8)
        const states = new Set<string>()
        for (const line of churning) {
          assert.deepStrictEqual(line.informers.map((i: any) => i.name), [
            "pods in all namespaces",
            "deployments.apps in all namespaces"
          ])
          for (const informer of line.informers) {
            assert.oneOf(informer.state, ["starting", "syncing", "watching", "backing off", "relisting"])
            states.add(informer.state)
            if (informer.state === "backing off") assert.isAtLeast(informer.backoffLeftMs, 0)
            assert.isAbove(informer.cached, 0)
          }
        }
        assert.isTrue(states.has("watching"), [...states].join(", "))
        // the rate never reads 0 while events flow: a line whose count rose over a line less than 4 s before
        // it (inside the 5 s window) has a rate above 0. Under chaos both informers can back off at once, and
        // then no event flows and 0 is right.
        const flowing = flowingLines(churning)
        for (const line of flowing) assert.isAbove(line.eventsPerSecond, 0, JSON.stringify(line))
        assert.isAbove(flowing.length, 0, "no line saw events flow")
        assert.isTrue(churning.some((line) => typeof line.lagMs === "number"), "no lag in ms")
        // the summary is the last line, after Ctrl-C
        const summary = lines[lines.length - 1]
        assert.isUndefined(summary.type)
        assert.strictEqual(summary.interrupted, true)
        assert.strictEqual(summary.consistent, true, JSON.stringify(summary.informers))
        assert.isBelow(summary.churnSeconds, 120)
        assert.isAtLeast(summary.events, churning[churning.length - 1].events)
      }),
    150_000
  )
})

/**
 * `npm run bench [-- --quick] [-- --json] [-- --profile]`: effect-informers against three peers and the
 * floor, on the same bytes, under the same node:
 *
 * - the peers (bench/peers.ts): `peer`, @kubernetes/client-node 2.0.x's `makeInformer` (bench/peer.ts);
 *   `peer14`, the same code on client-node 1.4.x (the devDependency `@kubernetes/client-node-1.4`, an npm
 *   alias); `fluent`, kubernetes-fluent-client 3.x's `K8s(kind.Pod).Watch(callback)` (bench/fluent.ts, with a
 *   kubeconfig file for the bench's server). Each lists unpaged. A row's `peer` is the fastest of them on that
 *   row (the highest rate, the lowest time or heap): `oursOverPeer` and the targets against the peer use it;
 *   `peers` has each one's figure by name and version (the JSON's `peerNames`). No peer can express W5 (a
 *   stalled handler) or W9, and the W6 live relist is not sampled for them.
 *
 * - The embedded API server runs in a child process of its own (bench/server.ts), driven over a control
 *   endpoint; it is reset before every session to the same deterministic pods, so every contender reads
 *   the same bytes, resourceVersions included. A burst to a throw-away watch warms the server up first.
 * - Each client session runs in a fresh child process (bench/client.ts, `--expose-gc`): clean heap, one
 *   core for the client, one for the server. Sessions run one at a time. `--quick` reuses one process per
 *   contender (saving ~3 s of start-up per session); heap figures are differences taken after full GCs.
 * - `--quick`: 10,000 pods, 20,000 events (5,000 with 100 handlers), one burst per session. Default:
 *   50,000 pods, 100,000 events, the best of three bursts for W2, W4 with 10 handlers and W5, one burst for
 *   W4 with 100 handlers.
 * - `--scale`: the Kubernetes envelope, 150,000 pods (`--pods` still overrides): W1, W2 and W3 for the floor,
 *   ours and the three peers, ours' watch-list variant (W1, W2), and W6 (relists in a row) for the floor and
 *   both variants of ours, against issue 26's targets as the other runs (W4, W5, W9, the CLI not run; W7 and
 *   W8 only with `--only`); timeouts grow with the pods and the processes get `--max-old-space-size=12288`
 *   (a contender that runs out of heap is a failure, not a crash).
 * - The CLI sessions (`cli-floor`, `cli-ours`, `cli-peer`, `cli-peer14`, `cli-fluent`, bench/cli.ts):
 *   `effect-informers watch pods --output events` (the built packages/cli/dist/bin.js, rebuilt with
 *   `npm run build:packages` when older than the sources) against line printers doing the same job
 *   (bench/cliFloor.mjs; bench/cliPeer.mjs on client-node 2.0 or 1.4; bench/cliFluent.mjs), each a fresh
 *   process whose stdout is a pipe read here: spawn -> the Nth line (synced), then bursts -> their last line.
 * - `--json`: the machine-readable results on stdout (progress goes to stderr); `npx tsx bench/chart.ts
 *   FILE > chart.svg` draws its targets.
 * - `--profile` (`--profile=all`: every contender): `--cpu-prof` for the sessions of effect-informers and
 *   W7/W8, into .bench/profiles/<session>/ (summarise one with `npx tsx bench/profile.ts .bench/profiles/<session>`).
 * - `--pods=N`, `--events=N`, `--bursts=N`: override the sizes; `--relists=N`: W6 forces N relists in a row
 *   (default 3: heapUsed sampled every ~10 ms, then the last one with a full GC before each sample);
 *   `--only=ID,...`: run only these sessions
 *   (ids: floor, ours, peer, peer14, fluent, ours-watchlist, ours-nostrip,
 *   {floor,ours,peer,peer14,fluent}-fanout-{10,100}, ours-controller, ours-stalled, cli-floor, cli-ours,
 *   cli-peer, cli-peer14, cli-fluent, micro, workqueue). When only micro and workqueue run, no server
 *   is started. `--wait-timeout=MS`: every wait of a session gives up after MS.
 * - `--from=FILE`: print the table of a run saved with `--json`, without running anything.
 * - `--client-flags="..."`: extra node flags for the client processes (e.g. `--max-semi-space-size=64`).
 *
 * Every wait has a timeout; the children are killed on exit, on SIGINT/SIGTERM and on failure. A measurement
 * that fails or times out is a failure in the output: under `failures` in the JSON (by session id, with the
 * message), `FAILED` in its cells of the table and a `FAILED` line below it, and a non-zero exit code.
 */
import type { ChildProcess } from "node:child_process"
import { fork, spawn } from "node:child_process"
import * as Fs from "node:fs"
import * as Http from "node:http"
import * as Os from "node:os"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import { runCliSession } from "./cli.js"
import type { PeerId } from "./peers.js"
import { installedPeerNames, peerIds } from "./peers.js"
import type {
  ChildMessage,
  CliResult,
  Contender,
  Job,
  MicroResult,
  ResetResponse,
  Result,
  ServerMessage,
  SessionJob,
  SessionResult,
  WorkQueueResult
} from "./protocol.js"
import { control, withTimeout } from "./protocol.js"
import { rows, table } from "./report.js"

const here = Path.dirname(fileURLToPath(import.meta.url))
const root = Path.resolve(here, "..")

// -------------------------------------------------------------------------------------------------
// options
// -------------------------------------------------------------------------------------------------

const args = process.argv.slice(2)
const flag = (name: string) => args.includes(`--${name}`)
const option = (name: string): string | undefined => {
  const found = args.find((a) => a.startsWith(`--${name}=`))
  return found === undefined ? undefined : found.slice(name.length + 3)
}
const numberOption = (name: string, fallback: number): number => {
  const value = option(name)
  if (value === undefined) return fallback
  const n = Number(value.replace(/_/g, ""))
  if (!Number.isInteger(n) || n <= 0) throw new Error(`--${name} must be a positive integer`)
  return n
}

const quick = flag("quick")
const scale = flag("scale")
if (quick && scale) throw new Error("--quick and --scale do not go together")
const json = flag("json")
const profileAll = flag("profile=all")
const profile = flag("profile") || profileAll
const pods = numberOption("pods", quick ? 10_000 : scale ? 150_000 : 50_000)
/** Timeouts grow with the pods beyond 50,000 (the peer's unpaged LIST of 150,000 pods is one ~470 MB body). */
const podFactor = Math.max(1, pods / 50_000)
const config = {
  quick,
  scale,
  pods,
  events: numberOption("events", quick ? 20_000 : 100_000),
  bursts: numberOption("bursts", quick ? 1 : 3),
  relists: numberOption("relists", 3),
  microObjects: 100_000,
  microOperations: quick ? 100_000 : 1_000_000,
  workqueueKeys: quick ? 20_000 : 100_000,
  workqueueWorkers: [1, 4, 16],
  workqueueRepeats: quick ? 3 : 5,
  sessionTimeoutMs: Math.round((quick ? 90_000 : 600_000) * podFactor),
  /** Every wait of a session (sync, a burst, a relist); `--wait-timeout=MS` overrides it. */
  waitTimeoutMs: numberOption("wait-timeout", Math.round((quick ? 60_000 : 300_000) * podFactor)),
  /** Server commands that build or load every pod (`/reset`). */
  resetTimeoutMs: Math.round(120_000 * podFactor),
  /** --max-old-space-size of the server and of the client processes, MB. */
  serverHeapMb: scale || pods > 50_000 ? 12_288 : 4_096,
  clientHeapMb: scale || pods > 50_000 ? 12_288 : 8_192
}
const only = option("only")?.split(",").map((s) => s.trim()).filter((s) => s !== "")

const log = (message: string) => process.stderr.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${message}\n`)

// -------------------------------------------------------------------------------------------------
// children
// -------------------------------------------------------------------------------------------------

const children = new Set<ChildProcess>()

const killAll = () => {
  for (const child of children) {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL")
  }
  children.clear()
}

process.on("exit", killAll)
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
  process.on(signal, () => {
    log(`${signal}: stopping`)
    killAll()
    process.exit(130)
  })
}

const spawnChild = (script: string, execArgv: ReadonlyArray<string>): ChildProcess => {
  const child = fork(Path.join(here, script), [], {
    cwd: root,
    execArgv: [...execArgv, "--import", "tsx"],
    // the children's output (logs) goes to stderr: stdout carries only the table or the JSON
    stdio: ["ignore", 2, 2, "ipc"],
    env: { ...process.env, NODE_ENV: "production" }
  })
  children.add(child)
  child.once("exit", () => children.delete(child))
  return child
}

/** Resolves with the child's exit once it is gone; kills it after `ms`. */
const exited = (child: ChildProcess, ms: number) =>
  new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve()
    const timer = setTimeout(() => child.kill("SIGKILL"), ms)
    child.once("exit", () => {
      clearTimeout(timer)
      resolve()
    })
  })

interface Server {
  readonly controlUrl: string
  readonly child: ChildProcess
}

const startServer = async (): Promise<Server> => {
  const child = spawnChild("server.ts", [`--max-old-space-size=${config.serverHeapMb}`])
  const controlUrl = await withTimeout(
    new Promise<string>((resolve, reject) => {
      child.once("message", (message: ServerMessage) => {
        if (message.type === "ready") resolve(message.controlUrl)
        else reject(new Error(`server: ${message.message}`))
      })
      child.once("exit", (code) => reject(new Error(`server exited with ${code} before it was ready`)))
    }),
    60_000,
    "server start"
  )
  return { controlUrl, child }
}

/**
 * Warms the server up (JIT) before the first session, which would otherwise meet a cold server: a burst to a
 * watch that this process opens and discards.
 */
const warmUp = async (server: Server): Promise<void> => {
  const reset = await control<ResetResponse>(
    server.controlUrl,
    "/reset",
    { pods: Math.min(config.pods, 10_000) },
    120_000
  )
  const request = Http.get(
    `${reset.url}/api/v1/pods?watch=true&resourceVersion=${reset.resourceVersion}`,
    (response) => {
      response.resume()
      response.on("error", () => undefined)
    }
  )
  request.on("error", () => undefined)
  try {
    const deadline = Date.now() + 30_000
    while ((await control<{ readonly watchesOpen: number }>(server.controlUrl, "/stats", {}, 10_000)).watchesOpen < 1) {
      if (Date.now() > deadline) throw new Error("warm-up: the watch did not open")
      await new Promise((resolve) => setTimeout(resolve, 10))
    }
    const count = quick ? 20_000 : 100_000
    await control(server.controlUrl, "/prepare", { count }, 120_000)
    await control(server.controlUrl, "/burst", { count }, 120_000)
  } finally {
    request.destroy()
  }
}

const profileDir = Path.join(root, ".bench", "profiles")

/** Client processes kept for reuse (`--quick`), by contender. */
const reusable = new Map<string, ChildProcess>()

/** `--client-flags="--max-semi-space-size=64 ..."`: more node flags for the client processes. */
const clientFlags = (option("client-flags") ?? "").split(" ").filter((flag) => flag !== "")

const clientArgv = (job: Job, name: string, reused: boolean): Array<string> => {
  const execArgv = ["--expose-gc", `--max-old-space-size=${config.clientHeapMb}`, ...clientFlags]
  if (!reused && profile && (profileAll || job.kind !== "session" || job.contender === "ours")) {
    // a directory per session: the loader's worker thread writes a profile of its own beside the main one
    const dir = Path.join(profileDir, name)
    Fs.rmSync(dir, { recursive: true, force: true })
    Fs.mkdirSync(dir, { recursive: true })
    execArgv.push("--cpu-prof", `--cpu-prof-dir=${dir}`)
  }
  return execArgv
}

/** Ends a client process: disconnecting makes it exit (and write its profile). */
const release = async (child: ChildProcess) => {
  if (child.connected) child.disconnect()
  await exited(child, 15_000)
}

/**
 * Runs one job in a client process: a fresh one (clean heap), or with `reuseAs` the process kept under
 * that name (started on first use), which `--quick` does to save the start-up of each process.
 */
const runJob = async (job: Job, name: string, reuseAs?: string): Promise<Result> => {
  const reuse = reuseAs !== undefined && !profile
  let child = reuse ? reusable.get(reuseAs) : undefined
  if (child === undefined || !child.connected) {
    child = spawnChild("client.ts", clientArgv(job, name, reuse))
    if (reuse) reusable.set(reuseAs, child)
  }
  const running = child
  const listeners: Array<() => void> = []
  let ok = false
  let clean = false
  try {
    const result = await withTimeout(
      new Promise<Result>((resolve, reject) => {
        const onMessage = (message: ChildMessage) => {
          if (message.type === "result") resolve(message.result)
          else if (message.type === "error") reject(new Error(`${name}: ${message.message}`))
          else log(`${name}: ${message.message}`)
        }
        const onExit = (code: number | null, signal: string | null) =>
          reject(new Error(`${name}: client exited (${code ?? signal})`))
        running.on("message", onMessage)
        running.once("exit", onExit)
        listeners.push(() => running.off("message", onMessage), () => running.off("exit", onExit))
        running.send(job)
      }),
      config.sessionTimeoutMs,
      `session ${name}`
    )
    ok = true
    // a session with a failed measurement (a burst, a relist) may still be running it: not reused either
    clean = result.kind !== "session" || result.failed === undefined
    return result
  } finally {
    for (const remove of listeners) remove()
    // a process whose job failed may still run parts of it: never reuse it
    if (!reuse || !ok || !clean) {
      if (reuse) reusable.delete(reuseAs)
      if (ok) await release(running)
      else {
        running.kill("SIGKILL")
        await exited(running, 5_000)
      }
    }
  }
}

// -------------------------------------------------------------------------------------------------
// the plan
// -------------------------------------------------------------------------------------------------

type SessionSpec = Omit<SessionJob, "kind" | "serverUrl" | "controlUrl" | "pods" | "events" | "timeoutMs"> & {
  readonly kind?: "session" | undefined
  /** Events per burst, when not `config.events`. */
  readonly events?: number | undefined
}

const base = { bursts: config.bursts, handlers: 1, relists: config.relists }

/** The CLI sessions: a contender and how to run it (the server URL is appended). */
interface CliSpec {
  readonly kind: "cli"
  readonly contender: Contender
  readonly label: string
  readonly argv: ReadonlyArray<string>
}

/** The built `effect-informers` binary (packages/cli/package.json's bin), run with node. */
const cliBin = Path.join(root, "packages", "cli", "dist", "bin.js")

const cliPlan: ReadonlyArray<readonly [string, CliSpec]> = [
  ["cli-floor", {
    kind: "cli",
    contender: "floor",
    label: "cli floor (node:http line printer)",
    argv: [process.execPath, Path.join(here, "cliFloor.mjs")]
  }],
  ["cli-ours", {
    kind: "cli",
    contender: "ours",
    label: "cli ours (effect-informers watch pods --output events)",
    argv: [process.execPath, cliBin, "watch", "pods", "--output", "events", "--server"]
  }],
  ["cli-peer", {
    kind: "cli",
    contender: "peer",
    label: "cli peer (client-node 2.0 makeInformer line printer)",
    argv: [process.execPath, Path.join(here, "cliPeer.mjs")]
  }],
  ["cli-peer14", {
    kind: "cli",
    contender: "peer14",
    label: "cli peer (client-node 1.4 makeInformer line printer)",
    argv: [process.execPath, Path.join(here, "cliPeer.mjs"), "@kubernetes/client-node-1.4"]
  }],
  ["cli-fluent", {
    kind: "cli",
    contender: "fluent",
    label: "cli peer (kubernetes-fluent-client Watch line printer)",
    argv: [process.execPath, Path.join(here, "cliFluent.mjs")]
  }]
]

/**
 * `--scale`: the Kubernetes envelope (150,000 pods): W1, W2 and W3 for the floor, ours and the peers; ours'
 * watch-list variant (W1 against ours paged, W2); W6 (forced relists in a row) for the floor and both variants
 * of ours, so that ours' slowest relist and live peak are measured against the floor's. The peers do not
 * relist here (their unpaged LIST of 150,000 pods is one ~470 MB body each time).
 */
const scalePlan: ReadonlyArray<readonly [string, SessionSpec]> = [
  ["floor", { ...base, contender: "floor", label: "floor (paged)", relist: true }],
  ["ours", { ...base, contender: "ours", label: "ours (paged)", watchList: false, relist: true }],
  ["peer", { ...base, contender: "peer", label: "peer (client-node 2.0)" }],
  ["peer14", { ...base, contender: "peer14", label: "peer (client-node 1.4)" }],
  ["fluent", { ...base, contender: "fluent", label: "peer (kubernetes-fluent-client)" }],
  ["ours-watchlist", { ...base, contender: "ours", label: "ours (watch-list)", watchList: true, relist: true }]
]

/** Session id -> what it runs. Interleaved by workload, so that drifting load hits every contender. */
const fullPlan: ReadonlyArray<readonly [string, SessionSpec | CliSpec]> = [
  // W1 (sync), W3 (heap), W2 (bursts), W6 (relist)
  ["floor", { ...base, contender: "floor", label: "floor (paged)", relist: true }],
  ["ours", { ...base, contender: "ours", label: "ours (paged)", watchList: false, relist: true }],
  ["peer", { ...base, contender: "peer", label: "peer (client-node 2.0)", relist: true }],
  ["peer14", { ...base, contender: "peer14", label: "peer (client-node 1.4)", relist: true }],
  ["fluent", { ...base, contender: "fluent", label: "peer (kubernetes-fluent-client)", relist: true }],
  ["ours-watchlist", { ...base, contender: "ours", label: "ours (watch-list)", watchList: true, relist: true }],
  // W3 without stripping (and its W2, for information)
  ["ours-nostrip", {
    ...base,
    bursts: 1,
    contender: "ours",
    label: "ours (paged, stripManagedFields: false)",
    watchList: false,
    stripManagedFields: false
  }],
  // W4: the best of the bursts with 10 handlers (the target's figure), one burst with 100; with 100
  // handlers a quarter of the events in --quick
  ...[10, 100].flatMap((n) =>
    (["floor", "ours", ...peerIds] as const).map((contender) =>
      [`${contender}-fanout-${n}`, {
        ...base,
        bursts: n === 10 ? config.bursts : 1,
        contender,
        label: `${contender} (${n} handlers)`,
        handlers: n,
        ...(quick && n === 100 ? { events: Math.max(1, Math.floor(config.events / 4)) } : {}),
        ...(contender === "ours" ? { watchList: false } : {})
      }] as const
    )
  ),
  // W9: informer -> WorkQueue -> reconcile
  ["ours-controller", {
    ...base,
    contender: "ours",
    label: "ours (informer -> queue -> reconcile)",
    watchList: false,
    controller: true
  }],
  // W5
  ["ours-stalled", { ...base, contender: "ours", label: "ours (stalled + running)", watchList: false, stalled: true }],
  // the CLI, a fresh process each
  ...cliPlan
]

const plan: ReadonlyArray<readonly [string, SessionSpec | CliSpec]> = scale ? scalePlan : fullPlan

// -------------------------------------------------------------------------------------------------
// main
// -------------------------------------------------------------------------------------------------

/** ` (quick)`, ` (scale)` or nothing, for the table's first line. */
const title = (c: { readonly quick: boolean; readonly scale?: boolean | undefined }) =>
  c.quick ? " (quick)" : c.scale === true ? " (scale)" : ""

/** The newest modification time of the files under `dir` (0 when there is none). */
const newest = (dir: string): number => {
  let latest = 0
  if (!Fs.existsSync(dir)) return latest
  for (const entry of Fs.readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile()) continue
    const mtime = Fs.statSync(Path.join(entry.parentPath, entry.name)).mtimeMs
    if (mtime > latest) latest = mtime
  }
  return latest
}

/**
 * `cli-ours` runs the built binary: when packages/cli/dist/bin.js is missing or older than a source of the
 * library, the test kit or the CLI, or than the CLI's bundle script (which makes bin.js),
 * `npm run build:packages` first (its output goes to stderr).
 */
const ensureBuilt = async (): Promise<void> => {
  const built = Fs.existsSync(cliBin) ? Fs.statSync(cliBin).mtimeMs : 0
  const bundleScript = Path.join(root, "packages", "cli", "scripts", "bundle.mjs")
  const sources = Math.max(
    ...["src", "packages/testkit/src", "packages/cli/src"].map((dir) => newest(Path.join(root, dir))),
    Fs.existsSync(bundleScript) ? Fs.statSync(bundleScript).mtimeMs : 0
  )
  if (built >= sources) return
  log(`${built === 0 ? "no" : "a stale"} ${Path.relative(root, cliBin)}: npm run build:packages`)
  const child = spawn("npm", ["run", "build:packages"], { cwd: root, stdio: ["ignore", 2, 2] })
  children.add(child)
  const code = await withTimeout(
    new Promise<number | null>((resolve, reject) => {
      child.once("exit", resolve)
      child.once("error", reject)
    }),
    600_000,
    "npm run build:packages"
  ).finally(() => children.delete(child))
  if (code !== 0) throw new Error(`npm run build:packages exited with ${code}: cli-ours needs the built binary`)
}

const cpuModel = (): string => {
  try {
    const text = Fs.readFileSync("/proc/cpuinfo", "utf8")
    const match = /^model name\s*:\s*(.*)$/m.exec(text)
    if (match !== null) return match[1].trim()
  } catch {
    // not Linux
  }
  return Os.cpus()[0]?.model ?? "unknown"
}

const main = async () => {
  const started = Date.now()
  const machine = {
    node: process.version,
    cpu: cpuModel(),
    cores: Os.cpus().length,
    memoryGiB: Math.round(Os.totalmem() / 1024 ** 3),
    loadAverageAtStart: Os.loadavg().map((n) => Number(n.toFixed(2)))
  }
  log(
    `node ${machine.node}, ${machine.cpu}, ${machine.cores} cores, load ${machine.loadAverageAtStart.join(" ")}; ` +
      `${config.pods} pods, ${config.events} events x ${config.bursts} burst(s)${title(config)}`
  )
  // micro and workqueue need no API server
  const needsServer = plan.some(([id]) => only === undefined || only.includes(id))
  let server: Server | undefined
  let warmedUp = false
  /** The server, started (again, if its process is gone) and warmed up on first use. */
  const ensureServer = async (): Promise<Server> => {
    if (server !== undefined && server.child.exitCode === null && server.child.signalCode === null) return server
    if (server !== undefined) log("the server process is gone: starting a new one")
    server = undefined
    const started = await startServer()
    server = started
    if (!warmedUp) {
      warmedUp = true
      await warmUp(started).catch((error: unknown) => {
        failures["server-warmup"] = error instanceof Error ? error.message : String(error)
        log(`server warm-up: FAILED: ${failures["server-warmup"]}`)
      })
    }
    return started
  }
  const sessions: Record<string, SessionResult | undefined> = {}
  const cli: Record<string, CliResult | undefined> = {}
  const failures: Record<string, string> = {}
  let micro: MicroResult | undefined
  let workqueue: WorkQueueResult | undefined
  try {
    if (needsServer) await ensureServer().catch(() => undefined)
    for (const [id, spec] of plan) {
      if (only !== undefined && !only.includes(id)) continue
      try {
        const srv = await ensureServer()
        if (spec.kind === "cli" && spec.contender === "ours") await ensureBuilt()
        const reset = await control<ResetResponse>(
          srv.controlUrl,
          "/reset",
          { pods: config.pods },
          config.resetTimeoutMs
        )
        if (spec.kind === "cli") {
          const result = await withTimeout(
            runCliSession({
              contender: spec.contender,
              label: spec.label,
              argv: [...spec.argv, reset.url],
              serverUrl: reset.url,
              controlUrl: srv.controlUrl,
              pods: config.pods,
              events: config.events,
              bursts: config.bursts,
              timeoutMs: config.waitTimeoutMs,
              track: (child) => {
                children.add(child)
                child.once("exit", () => children.delete(child))
              }
            }),
            config.sessionTimeoutMs,
            `session ${id}`
          )
          cli[id] = result
          log(
            `${id}: synced (${config.pods} lines) ${result.syncMs.toFixed(0)} ms${
              (result.syncRuns?.length ?? 0) > 1
                ? ` (best of ${result.syncRuns!.map((ms) => ms.toFixed(0)).join(" / ")})`
                : ""
            }, ` +
              `${result.bursts.map((b) => Math.round(b.rate)).join(" / ")} events/s, sha1 ${
                result.digest?.slice(0, 12) ?? "-"
              } (server reset ${reset.ms.toFixed(0)} ms)`
          )
          if (result.failed?.bursts !== undefined) {
            failures[id] = result.failed.bursts
            log(`${id}: FAILED: ${failures[id]}`)
          }
          continue
        }
        const job: SessionJob = {
          ...spec,
          kind: "session",
          serverUrl: reset.url,
          controlUrl: srv.controlUrl,
          pods: config.pods,
          events: spec.events ?? config.events,
          timeoutMs: config.waitTimeoutMs
        }
        const result = await runJob(job, id, quick ? job.contender : undefined) as SessionResult
        sessions[id] = result
        const relists = [...(result.relists ?? []), ...(result.liveRelist === undefined ? [] : [result.liveRelist])]
        log(
          `${id}: sync ${result.syncMs.toFixed(0)} ms, ${result.heapPerObject.toFixed(0)} B/object, ` +
            `${result.bursts.map((b) => Math.round(b.rate)).join(" / ")} events/s` +
            (result.bursts.length === 0 || result.bursts[0].cpuUsPerEvent === undefined
              ? ""
              : ` (client CPU ${result.bursts.map((b) => b.cpuUsPerEvent!.toFixed(1)).join(" / ")} µs/event)`) +
            (result.relist === undefined ? "" : `, relist peak/steady ${result.relist.ratio.toFixed(2)}`) +
            (relists.length === 0 ? "" : `, relists ${relists.map((r) => (r.ms / 1000).toFixed(1)).join(" / ")} s`) +
            (result.heapGrowth === undefined ? "" : `, heap growth ${(result.heapGrowth / 1048576).toFixed(0)} MB`) +
            ` (server reset ${reset.ms.toFixed(0)} ms)`
        )
        // a measurement that failed inside a session that otherwise completed
        const failed = Object.values(result.failed ?? {}).filter((m): m is string => m !== undefined)
        if (failed.length > 0) {
          failures[id] = failed.join("; ")
          log(`${id}: FAILED: ${failures[id]}`)
        }
      } catch (error) {
        failures[id] = error instanceof Error ? error.message : String(error)
        log(`${id}: FAILED: ${failures[id]}`)
      }
    }
    if (only === undefined ? !scale : only.includes("micro")) {
      try {
        micro = await runJob({
          kind: "micro",
          objects: config.microObjects,
          operations: config.microOperations,
          timeoutMs: config.waitTimeoutMs
        }, "micro") as MicroResult
        log(
          `micro: fifo ${Math.round(micro.fifoInOrder)} / ${Math.round(micro.fifoCoalescing)} ops/s, indexer ${
            Math.round(micro.indexerUnsafe)
          } updates/s`
        )
      } catch (error) {
        failures.micro = error instanceof Error ? error.message : String(error)
        log(`micro: FAILED: ${failures.micro}`)
      }
    }
    if (only === undefined ? !scale : only.includes("workqueue")) {
      try {
        workqueue = await runJob({
          kind: "workqueue",
          keys: config.workqueueKeys,
          workers: config.workqueueWorkers,
          repeats: config.workqueueRepeats,
          timeoutMs: config.waitTimeoutMs
        }, "workqueue") as WorkQueueResult
        log(
          `workqueue: ${
            workqueue.rows.map((r) =>
              `${r.shape}/${r.workers}w ${Math.round(r.ours)} keys/s (${(r.ours / r.floor).toFixed(2)}x)`
            )
              .join(", ")
          }`
        )
      } catch (error) {
        failures.workqueue = error instanceof Error ? error.message : String(error)
        log(`workqueue: FAILED: ${failures.workqueue}`)
      }
    }
  } finally {
    for (const child of reusable.values()) await release(child)
    reusable.clear()
    const last = server as Server | undefined
    if (last !== undefined) {
      await control(last.controlUrl, "/quit", {}, 5_000).catch(() => undefined)
      await exited(last.child, 5_000)
    }
  }
  const peerNames = installedPeerNames()
  const results = rows({
    sessions,
    cli,
    micro,
    workqueue,
    pods: config.pods,
    events: config.events,
    scale,
    failures,
    peerNames
  })
  const finished = {
    seconds: Math.round((Date.now() - started) / 100) / 10,
    loadAverageAtEnd: Os.loadavg().map((n) => Number(n.toFixed(2)))
  }
  if (json) {
    process.stdout.write(
      JSON.stringify(
        {
          machine: { ...machine, ...finished },
          config,
          peerNames,
          rows: results,
          sessions,
          cli,
          micro,
          workqueue,
          failures
        },
        null,
        2
      ) +
        "\n"
    )
  } else {
    process.stdout.write(
      `\neffect-informers benchmark${title(config)}: ${config.pods} pods, ${config.events} MODIFIED events` +
        ` per burst, best of ${config.bursts}; node ${machine.node}, ${machine.cpu}, ${machine.cores} cores; load ` +
        `${machine.loadAverageAtStart.join(" ")} -> ${finished.loadAverageAtEnd.join(" ")}; ${finished.seconds} s\n\n` +
        table(results) + "\n"
    )
    for (const [id, message] of Object.entries(failures)) process.stdout.write(`FAILED ${id}: ${message}\n`)
  }
  process.exitCode = Object.keys(failures).length === 0 ? 0 : 1
}

/** `--from=FILE`: prints the table of a run saved with `--json`, without running anything. */
const replay = (file: string) => {
  const saved = JSON.parse(Fs.readFileSync(file, "utf8")) as {
    readonly machine: {
      readonly node: string
      readonly cpu: string
      readonly cores: number
      readonly loadAverageAtStart: ReadonlyArray<number>
      readonly loadAverageAtEnd: ReadonlyArray<number>
      readonly seconds: number
    }
    readonly config:
      & { readonly quick: boolean; readonly scale?: boolean | undefined }
      & Omit<typeof config, "quick" | "scale">
    readonly sessions: Record<string, SessionResult | undefined>
    readonly cli?: Record<string, CliResult | undefined> | undefined
    readonly micro: MicroResult | undefined
    readonly workqueue?: WorkQueueResult | undefined
    readonly failures: Record<string, string>
    readonly peerNames?: Partial<Record<PeerId, string>> | undefined
  }
  const { config: saved_, machine } = saved
  process.stdout.write(
    `effect-informers benchmark${title(saved_)}: ${saved_.pods} pods, ${saved_.events} MODIFIED ` +
      `events per burst, best of ${saved_.bursts}; node ${machine.node}, ${machine.cpu}, ${machine.cores} cores; ` +
      `load ${machine.loadAverageAtStart.join(" ")} -> ${
        machine.loadAverageAtEnd.join(" ")
      }; ${machine.seconds} s\n\n` +
      table(
        rows({
          sessions: saved.sessions,
          cli: saved.cli,
          micro: saved.micro,
          workqueue: saved.workqueue,
          pods: saved_.pods,
          events: saved_.events,
          scale: saved_.scale,
          failures: saved.failures,
          peerNames: saved.peerNames
        })
      ) + "\n"
  )
  for (const [id, message] of Object.entries(saved.failures)) process.stdout.write(`FAILED ${id}: ${message}\n`)
  process.exitCode = Object.keys(saved.failures).length === 0 ? 0 : 1
}

const from = option("from")
;(from === undefined ? main() : Promise.resolve(replay(from))).catch((error: unknown) => {
  log(`fatal: ${error instanceof Error ? error.stack ?? error.message : String(error)}`)
  killAll()
  process.exit(1)
})

/**
 * The CLI session: `effect-informers watch pods --server URL --output events` (the built binary, run with
 * `node`) against line printers doing the same job, `bench/cliFloor.mjs` (node:http, line split,
 * `JSON.parse`, a `Map`), `bench/cliPeer.mjs` (client-node's `makeInformer`, 2.0 or 1.4) and
 * `bench/cliFluent.mjs` (kubernetes-fluent-client's `Watch`). Each is a fresh process
 * spawned with the same server URL; its stdout is a pipe read here, in the orchestrator.
 *
 * - **Synced**: from the spawn until the Nth line has arrived (N = the pods: one `EXISTING` line each).
 * - **Watch rate**: after the sync, bursts of MODIFIED events (as W2: the server builds them first, untimed,
 *   and starts once the child's watch is open); from the burst request until the burst's last line has
 *   arrived. The best burst is the rate.
 *
 * The reader counts lines and checks the first byte of each (`E`xisting, `M`odified, ...): at the end the
 * child must have printed N `EXISTING` lines and one `MODIFIED` line per event, and nothing else. The lines
 * after the sync are hashed (sha1): the contenders read the same bytes, so they print the same text
 * for the bursts, and the digests say whether they did.
 */
import type { ChildProcess } from "node:child_process"
import { spawn } from "node:child_process"
import * as Crypto from "node:crypto"
import type { BurstResponse, BurstResult, CliResult, Contender } from "./protocol.js"
import { control, deferred, withTimeout } from "./protocol.js"

export interface CliJob {
  readonly contender: Contender
  readonly label: string
  /** `node` and its arguments, the server URL last. */
  readonly argv: ReadonlyArray<string>
  readonly serverUrl: string
  readonly controlUrl: string
  readonly pods: number
  readonly events: number
  readonly bursts: number
  readonly timeoutMs: number
  /** Called with the child once spawned (the orchestrator kills it on exit). */
  readonly track: (child: ChildProcess) => void
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

const E = 0x45 // EXISTING
const M = 0x4d // MODIFIED
const A = 0x41 // ADDED
const D = 0x44 // DELETED

/** The last bytes of the child's stderr, for a failure's message (one line). */
const tail = (chunks: ReadonlyArray<Buffer>) => {
  const text = Buffer.concat(chunks).toString("utf8").trim()
  const last = text.split("\n").slice(-3).join(" | ")
  return last.length > 400 ? `...${last.slice(-400)}` : last
}

/** Spawns of a session, at least: the sync figure is the best of them. */
const minSpawns = 3

/**
 * The session: `max(3, job.bursts)` spawns, each timed from the spawn to its Nth line (the best is the sync
 * figure, as the best burst is the rate); the last one goes on to the bursts. A spawn's time moves with the
 * machine (the server's LIST, the start-up) by up to 2x between two runs on this machine; the best of a few is
 * steadier.
 */
export const runCliSession = async (job: CliJob): Promise<CliResult> => {
  const earlier: Array<number> = []
  for (let i = 1; i < Math.max(minSpawns, job.bursts); i++) {
    earlier.push((await spawnOnce(job, false)).syncMs)
    // the killed child's watch is gone before the next one starts (a burst starts once a watch is open)
    const deadline = Date.now() + job.timeoutMs
    while (
      (await control<{ readonly watchesOpen: number }>(job.controlUrl, "/stats", {}, job.timeoutMs)).watchesOpen > 0
    ) {
      if (Date.now() > deadline) throw new Error(`${job.label}: a watch still open ${job.timeoutMs} ms after a kill`)
      await sleep(10)
    }
  }
  const last = await spawnOnce(job, true)
  const syncRuns = [...earlier, last.syncMs]
  return { ...last, syncMs: Math.min(...syncRuns), syncRuns }
}

/** One spawn: until the Nth line (`bursts`: false), or on through the bursts and the checks of the lines. */
const spawnOnce = async (job: CliJob, bursts_: boolean): Promise<CliResult> => {
  const counts = { existing: 0, modified: 0, added: 0, deleted: 0, other: 0 }
  let lines = 0
  /** Resolves once `lines` reaches `target`. */
  let target = Infinity
  let reached = deferred<number>()
  const hash = Crypto.createHash("sha1")
  const stderr: Array<Buffer> = []
  let stderrBytes = 0
  /** Whether the next byte starts a line. */
  let atLineStart = true

  const onData = (chunk: Buffer) => {
    const now = performance.now()
    let start = 0
    // lines after the sync are hashed: from the byte after the Nth newline
    let hashFrom = lines >= job.pods ? 0 : -1
    for (;;) {
      if (atLineStart && start < chunk.length) {
        switch (chunk[start]) {
          case E:
            counts.existing++
            break
          case M:
            counts.modified++
            break
          case A:
            counts.added++
            break
          case D:
            counts.deleted++
            break
          default:
            counts.other++
        }
        atLineStart = false
      }
      const end = chunk.indexOf(0x0a, start)
      if (end < 0) break
      lines++
      atLineStart = true
      if (lines === job.pods) hashFrom = end + 1
      if (lines === target) reached.resolve(now)
      start = end + 1
    }
    if (hashFrom >= 0 && hashFrom < chunk.length) hash.update(hashFrom === 0 ? chunk : chunk.subarray(hashFrom))
  }

  const [command, ...rest] = job.argv
  const spawned = performance.now()
  const child = spawn(command, rest, {
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, NODE_ENV: "production" }
  })
  job.track(child)
  const exited = deferred<never>()
  exited.promise.catch(() => undefined)
  child.once("exit", (code, signal) =>
    exited.reject(
      new Error(
        `${job.label}: exited (${code ?? signal}) after ${lines} lines${stderr.length > 0 ? `: ${tail(stderr)}` : ""}`
      )
    ))
  child.once("error", (error) => exited.reject(new Error(`${job.label}: cannot spawn: ${error.message}`)))
  child.stdout.on("data", onData)
  child.stderr.on("data", (chunk: Buffer) => {
    // keep the last 16 KB
    stderr.push(chunk)
    stderrBytes += chunk.length
    while (stderrBytes > 16_384 && stderr.length > 1) stderrBytes -= stderr.shift()!.length
  })
  const guard = <A>(promise: Promise<A>) => Promise.race([promise, exited.promise])
  /** Resolves with the time at which line `n` arrived. */
  const line = (n: number): Promise<number> => {
    target = n
    reached = deferred<number>()
    if (lines >= n) reached.resolve(performance.now())
    return reached.promise
  }
  const describe = () =>
    `${lines} lines (EXISTING ${counts.existing}, MODIFIED ${counts.modified}, ADDED ${counts.added}, ` +
    `DELETED ${counts.deleted}, other ${counts.other})`
  /** `withTimeout`, whose error says what had arrived when it failed. */
  const within = <A>(promise: Promise<A>, what: string): Promise<A> =>
    withTimeout(guard(promise), job.timeoutMs, `${job.label}: ${what}`).catch((error: unknown) => {
      throw new Error(`${error instanceof Error ? error.message : String(error)}; got ${describe()}`)
    })
  try {
    const synced = await within(line(job.pods), `${job.pods} lines (synced)`)
    const syncMs = synced - spawned
    const bursts: Array<BurstResult> = []
    const result = (failed?: string): CliResult => ({
      kind: "cli",
      contender: job.contender,
      label: job.label,
      command: job.argv.slice(0, -1).join(" ").replace(process.execPath, "node"),
      pods: job.pods,
      syncMs,
      bursts,
      rate: failed === undefined ? Math.max(...bursts.map((b) => b.rate)) : undefined,
      lines,
      digest: failed === undefined ? hash.digest("hex") : undefined,
      ...(failed === undefined ? {} : { failed: { bursts: failed } })
    })
    if (!bursts_) return result()
    // a failed burst keeps the sync figure
    try {
      for (let i = 0; i < job.bursts; i++) {
        // a burst starts once the child's watch is open on the server (it is paced by it)
        const deadline = Date.now() + job.timeoutMs
        while (
          (await control<{ readonly watchesOpen: number }>(job.controlUrl, "/stats", {}, job.timeoutMs)).watchesOpen < 1
        ) {
          if (Date.now() > deadline) throw new Error(`${job.label}: no watch open after ${job.timeoutMs} ms`)
          await guard(sleep(10))
        }
        await control(job.controlUrl, "/prepare", { count: job.events }, job.timeoutMs)
        const done = line(job.pods + (i + 1) * job.events)
        const started = performance.now()
        const produced = control<BurstResponse>(job.controlUrl, "/burst", { count: job.events }, job.timeoutMs)
        const [last] = await within(Promise.all([done, produced]), `burst ${i + 1} of ${job.events} events`)
        const ms = last - started
        bursts.push({ events: job.events, ms, rate: job.events / (ms / 1000) })
      }
      // nothing more should come: a moment for stray lines, then the checks
      await guard(sleep(200))
      const expected = job.pods + job.bursts * job.events
      if (
        lines !== expected || counts.existing !== job.pods || counts.modified !== job.bursts * job.events ||
        counts.other + counts.added + counts.deleted !== 0
      ) {
        throw new Error(
          `${job.label}: printed ${describe()}; expected ${job.pods} EXISTING and ${job.bursts * job.events} MODIFIED`
        )
      }
    } catch (error) {
      return result(error instanceof Error ? error.message : String(error))
    }
    return result()
  } finally {
    child.stdout.off("data", onData)
    if (child.exitCode === null && child.signalCode === null) {
      child.kill("SIGKILL")
      await withTimeout(exited.promise.catch(() => undefined), 5_000, "exit").catch(() => undefined)
    }
  }
}

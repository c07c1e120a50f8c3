/**
 * `effect-informers watch pods --output events` through a pipe, against the floor and client-node: time to
 * synced and watch rate as the reader of the pipe sees them. Not the official benchmark (that is
 * `bench/`); a quick before/after check of the CLI's output path.
 *
 *   node --import tsx scripts/watch-pipe.ts [--pods=N] [--events=M] [--runs=R] [--only=ours,floor,peer]
 *     [--ours=dist|src] [--before=BIN.ts] [--cpu-prof=DIR]
 *
 * One embedded ApiServer (in this process) holds N pods (`ChurnSimulator.makePod`, ~3 KB each). Per client
 * and run, a child process watches pods with its stdout on a pipe read here, line by line:
 * - sync: from the first request the server sees to the N-th line read (every pod printed once);
 * - rate: `M` MODIFIED events (`server.bench.prepareModifyMany`, paced by the slowest watcher), from the
 *   start of the burst to the M-th MODIFIED line read, in lines/s.
 * Clients: `ours` (`watch pods --server URL`, from `packages/cli/dist/bin.js` after `npm run
 * build:packages`, or the sources through tsx), `floor` (node:http, paged LIST then WATCH, `JSON.parse`,
 * a Map, the same lines written in one `write` per 64 KiB or 20 ms) and `peer` (client-node 1.4's
 * `makeInformer`, one `console.log` per notification). The latter two are this file run as
 * `floor URL` / `peer URL`. `--before=BIN.ts` adds the client `before` (to `--only`): another CLI entry point
 * run through tsx (e.g. an earlier `Cli.ts` copied beside the current one).
 */
import * as ApiServer from "@effect-informers/testkit/ApiServer"
import { makePod, podName } from "@effect-informers/testkit/ChurnSimulator"
import * as k8s from "@kubernetes/client-node"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Scope from "effect/Scope"
import type { ChildProcess } from "node:child_process"
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as Http from "node:http"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import type { KubeObject } from "../src/KubeObject.js"
import * as Resource from "../src/Resource.js"

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..")
const self = fileURLToPath(import.meta.url)

// -------------------------------------------------------------------------------------------------
// the floor and the peer (child modes)
// -------------------------------------------------------------------------------------------------

interface Obj {
  readonly metadata: { readonly name: string; readonly namespace?: string; readonly resourceVersion: string }
}

const floor = async (server: string): Promise<void> => {
  const agent = new Http.Agent({ keepAlive: true })
  let buffer = ""
  let timer: ReturnType<typeof setTimeout> | undefined
  let draining: Promise<void> | undefined
  const flush = () => {
    if (timer !== undefined) clearTimeout(timer)
    timer = undefined
    if (buffer === "") return
    const ok = process.stdout.write(buffer)
    buffer = ""
    if (!ok && draining === undefined) {
      draining = new Promise((resolve) =>
        process.stdout.once("drain", () => {
          draining = undefined
          resolve()
        })
      )
    }
  }
  const print = (type: string, obj: Obj) => {
    buffer += `${type.padEnd(8)} ${obj.metadata.namespace}/${obj.metadata.name} rv=${obj.metadata.resourceVersion}\n`
    if (buffer.length >= 65536) flush()
    else if (timer === undefined) timer = setTimeout(flush, 20)
  }
  const get = (p: string) =>
    new Promise<Http.IncomingMessage>((resolve, reject) => {
      Http.get(`${server}${p}`, { agent, headers: { accept: "application/json" } }, resolve).on("error", reject)
    })
  const cache = new Map<string, Obj>()
  let cont: string | undefined
  let rv = ""
  do {
    const response = await get(
      `/api/v1/pods?limit=500${cont === undefined ? "" : `&continue=${encodeURIComponent(cont)}`}`
    )
    const chunks: Array<Buffer> = []
    for await (const chunk of response) chunks.push(chunk as Buffer)
    const page = JSON.parse(Buffer.concat(chunks).toString("utf8"))
    for (const obj of page.items as Array<Obj>) {
      cache.set(`${obj.metadata.namespace}/${obj.metadata.name}`, obj)
      print("EXISTING", obj)
    }
    if (draining !== undefined) await draining
    rv = page.metadata.resourceVersion
    cont = page.metadata.continue || undefined
  } while (cont !== undefined)
  const response = await get(`/api/v1/pods?watch=true&allowWatchBookmarks=true&resourceVersion=${rv}`)
  let rest = ""
  for await (const chunk of response) {
    const lines = (rest + (chunk as Buffer).toString("utf8")).split("\n")
    rest = lines.pop()!
    for (const line of lines) {
      if (line === "") continue
      const event = JSON.parse(line) as { type: string; object: Obj }
      if (event.type === "BOOKMARK") continue
      const key = `${event.object.metadata.namespace}/${event.object.metadata.name}`
      if (event.type === "DELETED") cache.delete(key)
      else cache.set(key, event.object)
      print(event.type, event.object)
    }
    if (draining !== undefined) await draining
  }
}

const peer = async (server: string): Promise<void> => {
  const kc = new k8s.KubeConfig()
  kc.loadFromClusterAndUser({ name: "bench", server, skipTLSVerify: true }, { name: "anon" })
  const core = kc.makeApiClient(k8s.CoreV1Api)
  const informer = k8s.makeInformer(kc, "/api/v1/pods", () => core.listPodForAllNamespaces())
  const line = (type: string, pod: k8s.V1Pod) =>
    console.log(
      `${type.padEnd(8)} ${pod.metadata?.namespace}/${pod.metadata?.name} rv=${pod.metadata?.resourceVersion}`
    )
  informer.on("add", (pod) => line("ADDED", pod))
  informer.on("update", (pod) => line("MODIFIED", pod))
  informer.on("delete", (pod) => line("DELETED", pod))
  await informer.start()
  await new Promise(() => undefined)
}

// -------------------------------------------------------------------------------------------------
// the driver
// -------------------------------------------------------------------------------------------------

const flag = (name: string, fallback: string): string =>
  process.argv.find((arg) => arg.startsWith(`--${name}=`))?.slice(name.length + 3) ?? fallback

interface Result {
  readonly client: string
  readonly startMs: number
  readonly syncMs: number
  readonly rate: number
  /** CPU time of the child (user + system) during the sync, ms. */
  readonly syncCpuMs: number
  /** Lines per CPU second of the child during the burst. */
  readonly cpuRate: number
}

/** User + system CPU time of process `pid` so far, in ms (Linux: /proc/PID/stat, in clock ticks of 10 ms). */
const cpuMs = (pid: number): number => {
  const fields = fs.readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ")
  return (Number(fields[11]) + Number(fields[12])) * 10
}

const measure = async (
  server: ApiServer.ApiServer.Service,
  client: string,
  pods: number,
  events: number
): Promise<Result> => {
  const dist = path.join(root, "packages/cli/dist/bin.js")
  const args = client === "before"
    ? ["--import", "tsx", path.resolve(flag("before", "")), "watch", "pods", "--server", server.url]
    : client === "ours"
    ? [
      ...(flag("ours", "src") === "dist"
        ? [dist]
        : ["--import", "tsx", path.join(root, "packages/cli/src/bin.ts")]),
      "watch",
      "pods",
      "--server",
      server.url
    ]
    : ["--import", "tsx", self, client, server.url]
  const before = (await Effect.runPromise(server.stats)).requests
  const spawned = performance.now()
  const profile = flag("cpu-prof", "") === "" ? [] : ["--cpu-prof", `--cpu-prof-dir=${flag("cpu-prof", "")}`]
  const child: ChildProcess = spawn(process.execPath, [...profile, ...args], {
    cwd: root,
    stdio: ["ignore", "pipe", "inherit"]
  })
  let firstRequest = 0
  let firstCpu = 0
  const poll = setInterval(() => {
    if (firstRequest === 0 && Effect.runSync(server.stats).requests > before) {
      firstRequest = performance.now()
      firstCpu = cpuMs(child.pid!)
    }
  }, 1)
  let lines = 0
  let target = pods
  let reached: () => void = () => undefined
  let wait = new Promise<void>((resolve) => (reached = resolve))
  child.stdout!.on("data", (chunk: Buffer) => {
    for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) lines++
    if (lines >= target) reached()
  })
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()))
  await wait
  const synced = performance.now()
  const syncedCpu = cpuMs(child.pid!)
  clearInterval(poll)
  // let the watch open before the burst
  await new Promise((resolve) => setTimeout(resolve, 500))
  const burst = await Effect.runPromise(server.bench.prepareModifyMany(Resource.pods, { count: events }))
  target = pods + events
  wait = new Promise<void>((resolve) => (reached = resolve))
  const burstStart = performance.now()
  const burstCpu = cpuMs(child.pid!)
  await Effect.runPromise(burst)
  await wait
  const done = performance.now()
  const doneCpu = cpuMs(child.pid!)
  child.kill("SIGINT")
  await exited
  return {
    client,
    startMs: firstRequest - spawned,
    syncMs: synced - firstRequest,
    rate: events / ((done - burstStart) / 1000),
    syncCpuMs: syncedCpu - firstCpu,
    cpuRate: events / ((doneCpu - burstCpu) / 1000)
  }
}

const driver = async (): Promise<void> => {
  const pods = Number(flag("pods", "10000"))
  const events = Number(flag("events", "20000"))
  const runs = Number(flag("runs", "3"))
  const only = flag("only", "floor,ours,peer").split(",")
  const scope = Effect.runSync(Scope.make())
  const server = await Effect.runPromise(
    ApiServer.make({ historySize: 10_000, watchBufferBytes: 1024 ** 3, garbageCollection: false }).pipe(
      Scope.provide(scope)
    )
  )
  const namespaces = Math.max(1, Math.ceil(pods / 1000))
  const objects: Array<KubeObject> = []
  for (let i = 0; i < pods; i++) {
    const namespace = `ns-${i % namespaces}`
    const app = `app-${Math.floor(i / namespaces) % 10}`
    objects.push(makePod({ name: podName(app, i), namespace, app }) as unknown as KubeObject)
  }
  await Effect.runPromise(server.bench.load(Resource.pods, objects))
  console.log(`node ${process.version}, ${pods} pods, bursts of ${events} MODIFIED, ${runs} runs, interleaved`)
  const results: Array<Result> = []
  for (let run = 0; run < runs; run++) {
    for (const client of only) {
      const result = await measure(server, client, pods, events)
      results.push(result)
      console.log(
        `run ${run + 1} ${client.padEnd(5)} start ${result.startMs.toFixed(0).padStart(5)} ms  sync ${
          result.syncMs.toFixed(0).padStart(5)
        } ms (cpu ${result.syncCpuMs.toFixed(0).padStart(5)} ms)  rate ${result.rate.toFixed(0).padStart(6)} lines/s (${
          result.cpuRate.toFixed(0).padStart(6)
        } per cpu s)`
      )
    }
  }
  const median = (xs: Array<number>) => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)]
  for (const client of only) {
    const mine = results.filter((r) => r.client === client)
    console.log(
      `median ${client.padEnd(5)} sync ${median(mine.map((r) => r.syncMs)).toFixed(0)} ms (cpu ${
        median(mine.map((r) => r.syncCpuMs)).toFixed(0)
      } ms), rate ${median(mine.map((r) => r.rate)).toFixed(0)} lines/s (${
        median(mine.map((r) => r.cpuRate)).toFixed(0)
      } per cpu s)`
    )
  }
  await Effect.runPromise(Scope.close(scope, Exit.void))
}

const mode = process.argv[2]
if (mode === "floor") void floor(process.argv[3])
else if (mode === "peer") void peer(process.argv[3])
else {
  driver().then(() => process.exit(0), (error) => {
    console.error(error)
    process.exit(1)
  })
}

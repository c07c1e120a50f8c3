// @ts-check
/**
 * The kubernetes-fluent-client peer of the CLI session: `effect-informers watch pods --server URL --output
 * events` written on `K8s(kind.Pod).Watch(callback)` (one unpaged LIST, then a watch; see bench/fluent.ts),
 * printing the same lines: `EXISTING` for the objects of the first list, `ADDED`/`MODIFIED`/`DELETED` after
 * it, padded to 8, then `namespace/name rv=N` (the CLI's `describeObject`). One `process.stdout.write` per
 * callback, as a program on the Watch callback writes it.
 *
 * The client reads the default kubeconfig: this writes one for URL (plain HTTP, no user, TLS verification off,
 * which client-node 1.4's KubeConfig requires for an http:// server) to a temporary file and points
 * `KUBECONFIG` at it. Plain JavaScript, run with `node bench/cliFluent.mjs URL`. A list or watch error is one
 * line on stderr and exit code 1 (the client would retry it).
 */
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"

const server = process.argv[2]
if (server === undefined) {
  process.stderr.write("usage: node bench/cliFluent.mjs SERVER_URL\n")
  process.exit(2)
}

process.stdout.on("error", (error) => {
  if (/** @type {NodeJS.ErrnoException} */ (error).code === "EPIPE") process.exit(0)
  throw error
})

const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "bench-cli-fluent-"))
const file = Path.join(dir, "kubeconfig")
Fs.writeFileSync(
  file,
  JSON.stringify({
    apiVersion: "v1",
    kind: "Config",
    clusters: [{ name: "bench", cluster: { server, "insecure-skip-tls-verify": true } }],
    users: [{ name: "anon", user: {} }],
    contexts: [{ name: "bench", context: { cluster: "bench", user: "anon" } }],
    "current-context": "bench"
  })
)
process.env.KUBECONFIG = file
process.on("exit", () => Fs.rmSync(dir, { recursive: true, force: true }))

const { K8s, kind, WatchEvent } = await import("kubernetes-fluent-client")

/** Adds still to come from the first list: printed as EXISTING. */
let initialPending = 0
let listed = false

/** @param {any} pod */
const describe = (pod) => {
  const namespace = pod.metadata?.namespace
  const name = pod.metadata?.name ?? "<unknown>"
  const rv = pod.metadata?.resourceVersion
  return `${namespace === undefined || namespace === "" ? name : `${namespace}/${name}`}${
    rv === undefined ? "" : ` rv=${rv}`
  }`
}

/** @param {string} type @param {any} pod */
const print = (type, pod) => process.stdout.write(`${type.padEnd(8)} ${describe(pod)}\n`)

const watcher = K8s(kind.Pod).Watch((pod, phase) => {
  if (phase === "ADDED") {
    if (initialPending > 0) {
      initialPending--
      print("EXISTING", pod)
    } else print("ADDED", pod)
  } else print(phase, pod)
})
watcher.events.on(WatchEvent.LIST, (/** @type {{ items?: Array<unknown> }} */ list) => {
  if (!listed) {
    listed = true
    initialPending = list.items?.length ?? 0
  }
})
for (const event of [WatchEvent.LIST_ERROR, WatchEvent.NETWORK_ERROR, WatchEvent.WATCH_ERROR]) {
  watcher.events.on(event, (/** @type {unknown} */ error) => {
    process.stderr.write(`cliFluent: ${event}: ${error instanceof Error ? error.message : String(error)}\n`)
    process.exit(1)
  })
}

watcher.start().catch((/** @type {unknown} */ error) => {
  process.stderr.write(`cliFluent: ${error instanceof Error ? error.message : String(error)}\n`)
  process.exit(1)
})

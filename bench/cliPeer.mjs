// @ts-check
/**
 * The client-node peers of the CLI session: `effect-informers watch pods --server URL --output events` written
 * on @kubernetes/client-node's `makeInformer` (one unpaged, typed LIST, then a watch), printing the same
 * lines: `EXISTING` for the objects of the first list, `ADDED`/`MODIFIED`/`DELETED` after it, padded to 8,
 * then `namespace/name rv=N` (the CLI's `describeObject`). One `process.stdout.write` per callback, as a
 * program on the informer's callback API writes it.
 *
 * Plain JavaScript, run with `node bench/cliPeer.mjs [MODULE] URL` (no loader: the CLI it is compared with is
 * the built binary). MODULE is the release to drive: `@kubernetes/client-node` (2.0, the default; `cli-peer`)
 * or `@kubernetes/client-node-1.4` (the npm alias of 1.4; `cli-peer14`). An informer error is one line on
 * stderr and exit code 1.
 */

/** @typedef {import("@kubernetes/client-node").V1Pod} V1Pod */

const args = process.argv.slice(2)
const server = args.at(-1)
if (server === undefined || args.length > 2) {
  process.stderr.write("usage: node bench/cliPeer.mjs [MODULE] SERVER_URL\n")
  process.exit(2)
}
/** @type {typeof import("@kubernetes/client-node")} */
const k8s = await import(args.length === 2 ? args[0] : "@kubernetes/client-node")

process.stdout.on("error", (error) => {
  if (/** @type {NodeJS.ErrnoException} */ (error).code === "EPIPE") process.exit(0)
  throw error
})

const kc = new k8s.KubeConfig()
kc.loadFromClusterAndUser({ name: "bench", server, skipTLSVerify: true }, { name: "anon" })
const core = kc.makeApiClient(k8s.CoreV1Api)

/** Adds still to come from the first list: printed as EXISTING. */
let initialPending = 0
let listed = false
const informer = k8s.makeInformer(kc, "/api/v1/pods", async () => {
  const list = await core.listPodForAllNamespaces()
  if (!listed) {
    listed = true
    initialPending = list.items.length
  }
  return list
})

/** @param {V1Pod} pod */
const describe = (pod) => {
  const namespace = pod.metadata?.namespace
  const name = pod.metadata?.name ?? "<unknown>"
  const rv = pod.metadata?.resourceVersion
  return `${namespace === undefined || namespace === "" ? name : `${namespace}/${name}`}${
    rv === undefined ? "" : ` rv=${rv}`
  }`
}

/** @param {string} type @param {V1Pod} pod */
const print = (type, pod) => process.stdout.write(`${type.padEnd(8)} ${describe(pod)}\n`)

informer.on("add", (pod) => {
  if (initialPending > 0) {
    initialPending--
    print("EXISTING", pod)
  } else print("ADDED", pod)
})
informer.on("update", (pod) => print("MODIFIED", pod))
informer.on("delete", (pod) => print("DELETED", pod))
informer.on("error", (/** @type {unknown} */ error) => {
  process.stderr.write(`cliPeer: ${error instanceof Error ? error.message : String(error)}\n`)
  process.exit(1)
})

informer.start().catch((/** @type {unknown} */ error) => {
  process.stderr.write(`cliPeer: ${error instanceof Error ? error.message : String(error)}\n`)
  process.exit(1)
})

// @ts-check
/**
 * The peer of the CLI session: `effect-informers watch pods --server URL --output events` written on
 * @kubernetes/client-node's `makeInformer` (the installed version: 2.0 since the Effect 4 port, 1.4 before)
 * (one unpaged, typed LIST, then a watch), printing the same
 * lines: `EXISTING` for the objects of the first list, `ADDED`/`MODIFIED`/`DELETED` after it, padded to 8,
 * then `namespace/name rv=N` (the CLI's `describeObject`). One `process.stdout.write` per callback, as a
 * program on the informer's callback API writes it.
 *
 * Plain JavaScript, run with `node bench/cliPeer.mjs URL` (no loader: the CLI it is compared with is the
 * built binary). An informer error is one line on stderr and exit code 1.
 */
import * as k8s from "@kubernetes/client-node"

const server = process.argv[2]
if (server === undefined) {
  process.stderr.write("usage: node bench/cliPeer.mjs SERVER_URL\n")
  process.exit(2)
}

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

/** @param {k8s.V1Pod} pod */
const describe = (pod) => {
  const namespace = pod.metadata?.namespace
  const name = pod.metadata?.name ?? "<unknown>"
  const rv = pod.metadata?.resourceVersion
  return `${namespace === undefined || namespace === "" ? name : `${namespace}/${name}`}${
    rv === undefined ? "" : ` rv=${rv}`
  }`
}

/** @param {string} type @param {k8s.V1Pod} pod */
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

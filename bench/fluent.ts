/**
 * The kubernetes-fluent-client peer (3.x): `K8s(kind.Pod).Watch(callback)` then `start()`, as its README
 * shows. Its Watcher lists (one request, no `limit`: unpaged against this server), calls the callback with
 * `ADDED` for every pod, then watches from the list's resourceVersion with undici's `fetch`, splitting the
 * body into lines and awaiting the callback for each event; it keeps its own cache (a Map by uid). A watch
 * that ends re-lists before it watches again (comparing resourceVersions with its cache), and a 410 or an
 * error marks it for its resync timer (every 5 s by default).
 *
 * The client reads its configuration from the default kubeconfig (`KubeConfig.loadFromDefault`, on every
 * request): the session writes a kubeconfig for the bench's server (plain HTTP on localhost, no user) to a
 * temporary file and points `KUBECONFIG` at it. W4's N handlers are N functions the one Watch callback calls
 * in turn (the Watch has one callback; a Watch per handler would be N lists, N connections and N caches). It
 * cannot express a stalled handler (W5): the callback is awaited for each event in turn, so a handler that
 * never returns stops the watch.
 */
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import type { SessionJob } from "./protocol.js"
import { deferred } from "./protocol.js"
import type { Client, Counters } from "./session.js"

const log = (message: string) => process.send?.({ type: "log", message: `fluent: ${message}` })

const describe = (error: unknown) => error instanceof Error ? error.message : String(error)

export const makeFluent = async (job: SessionJob, counters: Counters): Promise<Client> => {
  const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "bench-fluent-"))
  const file = Path.join(dir, "kubeconfig")
  Fs.writeFileSync(
    file,
    JSON.stringify({
      apiVersion: "v1",
      kind: "Config",
      // client-node 1.4's KubeConfig refuses an http:// server unless TLS verification is off
      clusters: [{ name: "bench", cluster: { server: job.serverUrl, "insecure-skip-tls-verify": true } }],
      users: [{ name: "anon", user: {} }],
      contexts: [{ name: "bench", context: { cluster: "bench", user: "anon" } }],
      "current-context": "bench"
    })
  )
  process.env.KUBECONFIG = file
  const { K8s, kind, WatchEvent } = await import("kubernetes-fluent-client")
  const handlers = job.handlers
  const watcher = K8s(kind.Pod).Watch((_pod, phase: string) => {
    if (phase === "ADDED") { for (let h = 0; h < handlers; h++) counters.add(h) }
    else if (phase === "MODIFIED") { for (let h = 0; h < handlers; h++) counters.update(h) }
  })
  let synced = false
  let stopped = false
  const failure = deferred<never>()
  /** The resourceVersion of the last list read, and of the last one applied (the watch that follows opened). */
  let listed = ""
  let applied = ""
  watcher.events.on(WatchEvent.LIST, (list: { readonly metadata?: { readonly resourceVersion?: string } }) => {
    listed = list.metadata?.resourceVersion ?? ""
  })
  watcher.events.on(WatchEvent.CONNECT, () => {
    applied = listed
  })
  // it retries every error on its own; one before the first sync is a setup problem: the session fails at once
  let errors = 0
  for (
    const event of [WatchEvent.LIST_ERROR, WatchEvent.NETWORK_ERROR, WatchEvent.DATA_ERROR, WatchEvent.WATCH_ERROR]
  ) {
    watcher.events.on(event, (error: unknown) => {
      if (stopped) return
      if (!synced) failure.reject(new Error(`${event}: ${describe(error)}`))
      else if (++errors <= 5) log(`${event}: ${describe(error)}`)
    })
  }
  watcher.events.on(WatchEvent.GIVE_UP, (error: unknown) => {
    if (!stopped) failure.reject(new Error(`gave up: ${describe(error)}`))
  })
  return {
    start: async () => {
      await watcher.start()
      synced = true
    },
    failure: failure.promise,
    relistApplied: (rv) => Number(applied) >= Number(rv),
    stop: async () => {
      stopped = true
      watcher.close()
      Fs.rmSync(dir, { recursive: true, force: true })
    }
  }
}

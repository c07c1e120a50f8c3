/**
 * The client-node peers: @kubernetes/client-node's `makeInformer` over the typed
 * `CoreV1Api.listPodForAllNamespaces` (one unpaged LIST, typed deserialisation, then a watch from its
 * resourceVersion; a 410 or a closed watch relists), as the docs of the peer describe it (client-node.md
 * §4.2). The same code drives two releases: `peer` is 2.0.x (the current one, `@kubernetes/client-node`)
 * and `peer14` is 1.4.x (installed under the npm alias `@kubernetes/client-node-1.4`); their informer APIs
 * are the same.
 *
 * Handlers are `on("add")` / `on("update")` callbacks, one pair per handler (W4). It cannot express a stalled
 * handler (W5): its callbacks run synchronously inside the socket's line callback, so a handler that never
 * returns blocks everything.
 */
import type * as k8s from "@kubernetes/client-node"
import type { SessionJob } from "./protocol.js"
import { deferred } from "./protocol.js"
import type { Client, Counters } from "./session.js"

/** The part of the client-node module the peer uses (the same in 1.4 and 2.0). */
export type ClientNode = Pick<typeof k8s, "KubeConfig" | "CoreV1Api" | "makeInformer">

/** `k8s`: the module of the release to drive (`import("@kubernetes/client-node")` or its 1.4 alias). */
export const makePeer = (k8s: ClientNode, job: SessionJob, counters: Counters): Client => {
  const kc = new k8s.KubeConfig()
  kc.loadFromClusterAndUser({ name: "bench", server: job.serverUrl, skipTLSVerify: true }, { name: "anon" })
  const core = kc.makeApiClient(k8s.CoreV1Api)
  const informer = k8s.makeInformer(kc, "/api/v1/pods", () => core.listPodForAllNamespaces())
  for (let h = 0; h < job.handlers; h++) {
    informer.on("add", () => counters.add(h))
    informer.on("update", () => counters.update(h))
  }
  let stopped = false
  const failure = deferred<never>()
  informer.on("error", (error: unknown) => {
    // stop() itself reports an AbortError
    if (!stopped) failure.reject(error instanceof Error ? error : new Error(String(error)))
  })
  return {
    start: () => informer.start(),
    failure: failure.promise,
    // makeInformer returns a ListWatch, whose resourceVersion is set once a list has been applied
    relistApplied: (rv) =>
      Number((informer as unknown as k8s.ListWatch<k8s.V1Pod>).latestResourceVersion()) >= Number(rv),
    stop: async () => {
      stopped = true
      await informer.stop()
    }
  }
}

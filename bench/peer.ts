/**
 * The peer: @kubernetes/client-node's `makeInformer` (the installed version: 2.0 since the Effect 4 port, 1.4
 * before) over the typed `CoreV1Api.listPodForAllNamespaces` (one unpaged LIST, typed deserialisation), as
 * docs of the peer describe it (client-node.md §4.2).
 * Handlers are `on("add")` / `on("update")` callbacks. It cannot express a stalled handler (W5): its
 * callbacks run synchronously inside the socket's line callback, so a handler that never returns blocks
 * everything.
 */
import * as k8s from "@kubernetes/client-node"
import type { SessionJob } from "./protocol.js"
import { deferred } from "./protocol.js"
import type { Client, Counters } from "./session.js"

export const makePeer = (job: SessionJob, counters: Counters): Client => {
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

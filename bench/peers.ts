/**
 * The peers: the informers of other TypeScript Kubernetes clients, each driven the way its docs describe,
 * on the same bytes as ours and the floor (see bench/peer.ts and bench/fluent.ts):
 *
 * - `peer`: @kubernetes/client-node 2.0.x (the current release; the library's own dependency),
 *   `makeInformer` over `CoreV1Api.listPodForAllNamespaces`;
 * - `peer14`: @kubernetes/client-node 1.4.x (installed under the alias `@kubernetes/client-node-1.4`), the same
 *   code on the previous major release;
 * - `fluent`: kubernetes-fluent-client 3.x, `K8s(kind.Pod).Watch(callback)`.
 *
 * A row's `peer` is the fastest of them (the highest rate, the lowest time or heap), `peers` each one's figure
 * by name (with its installed version, from `peerNames`).
 */
import * as Fs from "node:fs"
import { createRequire } from "node:module"

export const peerIds = ["peer", "peer14", "fluent"] as const
export type PeerId = typeof peerIds[number]

export const isPeer = (contender: string): contender is PeerId => (peerIds as ReadonlyArray<string>).includes(contender)

/** The npm package of each peer and the short name shown in the report. */
const packages: Record<PeerId, { readonly pkg: string; readonly name: string }> = {
  peer: { pkg: "@kubernetes/client-node", name: "client-node" },
  peer14: { pkg: "@kubernetes/client-node-1.4", name: "client-node" },
  fluent: { pkg: "kubernetes-fluent-client", name: "kubernetes-fluent-client" }
}

/** Names for a saved run without `peerNames` (before the three peers; its peer was client-node as installed). */
export const defaultPeerNames: Record<PeerId, string> = {
  peer: "client-node",
  peer14: "client-node 1.4",
  fluent: "kubernetes-fluent-client"
}

/** `client-node 2.0.1`: each peer's name with its installed version (the default name when not installed). */
export const installedPeerNames = (): Record<PeerId, string> => {
  const require = createRequire(import.meta.url)
  const entries = peerIds.map((id) => {
    const { pkg, name } = packages[id]
    try {
      const file = require.resolve(`${pkg}/package.json`)
      const { version } = JSON.parse(Fs.readFileSync(file, "utf8")) as { readonly version: string }
      return [id, `${name} ${version}`] as const
    } catch {
      return [id, defaultPeerNames[id]] as const
    }
  })
  return Object.fromEntries(entries) as Record<PeerId, string>
}

/**
 * Which module may import which (docs/ARCHITECTURE.md, "Layers"): every module of the library is placed in
 * a layer, and its run-time imports (not `import type`) may only reach its own layer or those below. The
 * library never imports the test kit, the CLI or `@effect/cli`, and its modules have no import cycle.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"

const src = fileURLToPath(new URL("../src/", import.meta.url))

/** Lowest first. */
const layers = ["data", "protocol", "machinery", "transport", "surface", "testing", "entry"] as const
type LayerName = typeof layers[number]

const layerOf: Record<string, LayerName> = {
  "KubeObject.ts": "data",
  "Consistency.ts": "data",
  "RateLimiter.ts": "data",
  "internal/rateLimiter.ts": "data",
  "WorkQueue.ts": "data",
  "internal/workQueue.ts": "data",
  "Metrics.ts": "data",
  "Indexer.ts": "data",
  "DeltaFifo.ts": "data",
  "internal/indexerStore.ts": "data",
  "internal/deltaFifo.ts": "data",
  "internal/deque.ts": "data",
  "internal/text.ts": "data",
  "internal/syncTracker.ts": "data",
  "ApiError.ts": "protocol",
  "ListerWatcher.ts": "protocol",
  "Wire.ts": "protocol",
  "Resource.ts": "protocol",
  "LabelSelector.ts": "protocol",
  "FieldSelector.ts": "protocol",
  "Term.ts": "protocol",
  "internal/wireGuard.ts": "protocol",
  "Metadata.ts": "protocol",
  "internal/objectDecoder.ts": "protocol",
  // the scrubber: the errors' constructors scrub what they keep
  "internal/redact.ts": "protocol",
  "Reflector.ts": "machinery",
  "SharedInformer.ts": "machinery",
  "internal/reflector.ts": "machinery",
  "internal/reflectorErrors.ts": "machinery",
  "internal/reflectorPolicy.ts": "machinery",
  "internal/informerController.ts": "machinery",
  "internal/processor.ts": "machinery",
  "internal/listener.ts": "machinery",
  "internal/listenerBuffer.ts": "machinery",
  "internal/coalescingBuffer.ts": "machinery",
  "KubeConfig.ts": "transport",
  "HttpListerWatcher.ts": "transport",
  "internal/httpWatchDecoder.ts": "transport",
  "internal/listBodyDecoder.ts": "transport",
  "internal/httpRequest.ts": "transport",
  "Client.ts": "transport",
  "internal/client.ts": "transport",
  "internal/tokenBucket.ts": "data",
  "Lister.ts": "surface",
  "Controller.ts": "surface",
  "EventRecorder.ts": "surface",
  "internal/eventRecorder.ts": "surface",
  "internal/controller.ts": "surface",
  "InformerFactory.ts": "surface",
  "LeaderElection.ts": "surface",
  "internal/leaderElection.ts": "surface",
  "internal/leaderElectionPolicy.ts": "surface",
  "internal/leaseLock.ts": "surface",
  "Sharding.ts": "surface",
  "internal/sharding.ts": "surface",
  "internal/shardingPolicy.ts": "surface",
  "Layer.ts": "entry",
  "Manager.ts": "entry",
  "FakeListerWatcher.ts": "testing",
  "testing.ts": "entry",
  "index.ts": "entry"
}

/** Modules placed by prefix (new files of a known family). */
const layerByPrefix: ReadonlyArray<readonly [string, LayerName]> = [["internal/apiStore", "testing"], [
  "ApiStore",
  "testing"
]]

/** Packages a layer may import besides `effect` (which every layer may). */
const packagesAllowed: Record<LayerName, ReadonlyArray<string>> = {
  data: [],
  protocol: ["@kubernetes/client-node"], // model types only (Resource's catalog): checked as type imports
  machinery: [],
  transport: ["@effect/platform", "@effect/platform-node", "@kubernetes/client-node", "node:"],
  surface: [],
  testing: [],
  entry: ["@effect/platform", "@effect/platform-node", "@kubernetes/client-node", "node:"]
}

const files = (dir: string, prefix = ""): Array<string> =>
  Fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory()
      ? files(Path.join(dir, entry.name), `${prefix}${entry.name}/`)
      : entry.name.endsWith(".ts")
      ? [`${prefix}${entry.name}`]
      : []
  )

/** The run-time imports of a file: `import ... from "x"` and `export ... from "x"`, without `import type`. */
const importsOf = (source: string): Array<string> => {
  // comments (doc examples import "effect-informers") are not imports
  const text = source.replace(/\/\*[\s\S]*?\*\//g, "").replace(/^\s*\/\/.*$/gm, "")
  const out: Array<string> = []
  const pattern = /^(import|export)\s+(type\s+)?[^;]*?from\s+"([^"]+)"/gms
  for (const match of text.matchAll(pattern)) {
    if (match[2] !== undefined) continue
    out.push(match[3])
  }
  for (const match of text.matchAll(/^import\s+"([^"]+)"/gm)) out.push(match[1])
  return out
}

const placed = (file: string): LayerName | undefined =>
  layerOf[file] ?? layerByPrefix.find(([prefix]) => file.startsWith(prefix))?.[1]

describe("layering of the library", () => {
  const all = files(src)
  const graph = new Map<string, Array<string>>()
  for (const file of all) {
    const text = Fs.readFileSync(Path.join(src, file), "utf8")
    const local: Array<string> = []
    for (const spec of importsOf(text)) {
      if (!spec.startsWith(".")) continue
      local.push(Path.posix.normalize(Path.posix.join(Path.posix.dirname(file), spec)).replace(/\.js$/, ".ts"))
    }
    graph.set(file, local)
  }

  it("every module is placed in a layer", () => {
    assert.deepStrictEqual(all.filter((file) => placed(file) === undefined), [])
  })

  it("run-time imports reach only the module's own layer or those below; packages as allowed", () => {
    const violations: Array<string> = []
    for (const file of all) {
      const layer = placed(file)
      if (layer === undefined) continue
      for (const spec of importsOf(Fs.readFileSync(Path.join(src, file), "utf8"))) {
        if (spec.startsWith(".")) continue
        if (spec === "effect" || spec.startsWith("effect/")) continue
        const allowed = packagesAllowed[layer].some((p) => spec === p || spec.startsWith(p.endsWith(":") ? p : `${p}/`))
        if (!allowed) violations.push(`${file} (${layer}) imports ${spec}`)
      }
      for (const target of graph.get(file) ?? []) {
        const targetLayer = placed(target)
        if (targetLayer === undefined) continue
        if (layers.indexOf(targetLayer) > layers.indexOf(layer)) {
          violations.push(`${file} (${layer}) imports ${target} (${targetLayer})`)
        }
      }
    }
    assert.deepStrictEqual(violations, [])
  })

  it("the library imports neither the test kit, the CLI nor @effect/cli", () => {
    const violations = all.filter((file) =>
      importsOf(Fs.readFileSync(Path.join(src, file), "utf8")).some((spec) =>
        /^(@effect-informers\/|@effect\/cli|effect-informers)|packages\//.test(spec)
      )
    )
    assert.deepStrictEqual(violations, [])
  })

  it("no import cycle among the library's modules (run-time imports)", () => {
    const cycles: Array<string> = []
    const state = new Map<string, "visiting" | "done">()
    const visit = (file: string, path: Array<string>) => {
      if (state.get(file) === "done") return
      if (state.get(file) === "visiting") {
        cycles.push([...path.slice(path.indexOf(file)), file].join(" -> "))
        return
      }
      state.set(file, "visiting")
      for (const next of graph.get(file) ?? []) visit(next, [...path, file])
      state.set(file, "done")
    }
    for (const file of all) visit(file, [])
    assert.deepStrictEqual(cycles, [])
  })
})

/**
 * Which module may import which (docs/ARCHITECTURE.md, "Subsystems"), read from the folders, not from a list
 * of files:
 *
 * - a file in `src/internal/<subsystem>/` belongs to that subsystem; a loose file of `src/internal/` is a
 *   shared helper, below every subsystem;
 * - a public module (`src/Name.ts`) belongs to the highest subsystem among what it imports: the folders of
 *   its machinery (`internal/<s>/`), the public modules it uses (placed the same way), and the wire (Node's
 *   modules, `@effect/platform-node` and `effect/http`, which only the transport may use); the protocol when it imports nothing
 *   of these;
 * - the subsystems are ordered; a run-time import (not `import type`) may reach only the importer's own
 *   subsystem, the ones it may use, and the shared helpers; there is no cycle between subsystems, nor between
 *   modules; the library never imports the test kit, the CLI, `effect/cli` or `effect/observability`.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"

const src = fileURLToPath(new URL("../src/", import.meta.url))

/** The subsystems, lowest first, each with those below it that it may import. */
const subsystems = ["protocol", "informer", "transport", "coordination", "controller", "testing", "entry"] as const
type Subsystem = typeof subsystems[number] | "shared"

const mayImport: Record<Subsystem, ReadonlyArray<Subsystem>> = {
  shared: ["shared"],
  protocol: ["shared", "protocol"],
  informer: ["shared", "protocol", "informer"],
  transport: ["shared", "protocol", "transport"],
  // elections and shards read and write Leases through the Client service
  coordination: ["shared", "protocol", "transport", "coordination"],
  // the Controller reads informers, writes through the Client service, and works while leading or owning
  controller: ["shared", "protocol", "informer", "transport", "coordination", "controller"],
  testing: ["shared", "protocol", "informer", "transport", "controller", "coordination", "testing"],
  entry: ["shared", "protocol", "informer", "transport", "controller", "coordination", "testing", "entry"]
}

/** Packages a subsystem may import besides `effect` (which every one may). */
const packagesAllowed: Record<Subsystem, ReadonlyArray<string>> = {
  shared: [],
  protocol: ["@kubernetes/client-node"], // model types only (Resource's catalog): checked as type imports
  informer: [],
  transport: ["effect/http", "@effect/platform-node", "@kubernetes/client-node", "node:"],
  controller: [],
  coordination: [],
  testing: [],
  entry: ["effect/http", "@effect/platform-node", "@kubernetes/client-node", "node:"]
}

/** Entry points: they gather every subsystem (Metrics re-exports each subsystem's metrics.ts). */
const entries = new Set(["index.ts", "testing.ts", "Layer.ts", "Metrics.ts"])

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

const all = files(src)
const sources = new Map(all.map((file) => [file, Fs.readFileSync(Path.join(src, file), "utf8")]))
const graph = new Map<string, Array<string>>()
for (const file of all) {
  const local: Array<string> = []
  for (const spec of importsOf(sources.get(file)!)) {
    if (!spec.startsWith(".")) continue
    local.push(Path.posix.normalize(Path.posix.join(Path.posix.dirname(file), spec)).replace(/\.js$/, ".ts"))
  }
  graph.set(file, local)
}

/** The subsystem of an internal file, from its folder. */
const folderOf = (file: string): Subsystem | undefined => {
  const parts = file.split("/")
  if (parts[0] !== "internal") return undefined
  if (parts.length === 2) return "shared"
  const folder = parts[1] as Subsystem
  return (subsystems as ReadonlyArray<string>).includes(folder) ? folder : undefined
}

const rank = (s: Subsystem): number => s === "shared" ? -1 : subsystems.indexOf(s)

const placement = new Map<string, Subsystem>()
const place = (file: string, visiting: Set<string> = new Set()): Subsystem => {
  const known = placement.get(file)
  if (known !== undefined) return known
  const folder = folderOf(file)
  if (folder !== undefined) {
    placement.set(file, folder)
    return folder
  }
  if (entries.has(file)) {
    placement.set(file, "entry")
    return "entry"
  }
  if (visiting.has(file)) return "protocol"
  visiting.add(file)
  const targets = graph.get(file) ?? []
  const candidates = targets.map((t) => folderOf(t) ?? place(t, visiting))
  if (importsOf(sources.get(file)!).some((spec) => /^(node:|@effect\/platform-node|effect\/http)/.test(spec))) {
    candidates.push("transport")
  }
  const subsystem = candidates.reduce<Subsystem>((a, b) => (rank(b) > rank(a) ? b : a), "protocol")
  placement.set(file, subsystem)
  return subsystem
}
for (const file of all) place(file)

describe("layering of the library, by folder", () => {
  it("every internal file is in a subsystem's folder or is one of at most 5 shared helpers", () => {
    const loose = all.filter((file) => folderOf(file) === "shared")
    const unplaced = all.filter((file) => file.startsWith("internal/") && folderOf(file) === undefined)
    assert.deepStrictEqual(unplaced, [])
    assert.isAtMost(loose.length, 5, loose.join(", "))
  })

  it("the design card's modules are where it puts them", () => {
    const expected: Record<string, Subsystem> = {
      "Reflector.ts": "informer",
      "DeltaFifo.ts": "informer",
      "Indexer.ts": "informer",
      "SharedInformer.ts": "informer",
      "Layer.ts": "entry",
      "HttpListerWatcher.ts": "transport",
      "Client.ts": "transport",
      "WorkQueue.ts": "controller",
      "Controller.ts": "controller",
      "LeaderElection.ts": "coordination",
      "Sharding.ts": "coordination",
      "FakeListerWatcher.ts": "testing",
      "ApiStore.ts": "testing"
    }
    for (const [file, subsystem] of Object.entries(expected)) assert.strictEqual(placement.get(file), subsystem, file)
  })

  it("run-time imports reach only the subsystems the importer may use; packages as allowed", () => {
    const violations: Array<string> = []
    for (const file of all) {
      const subsystem = placement.get(file)!
      for (const spec of importsOf(sources.get(file)!)) {
        if (spec.startsWith(".")) continue
        // effect's modules, but for the wire (effect/http), which is checked like a package
        if (spec === "effect" || (spec.startsWith("effect/") && !spec.startsWith("effect/http"))) continue
        const allowed = packagesAllowed[subsystem].some((p) =>
          spec === p || spec.startsWith(p.endsWith(":") ? p : `${p}/`)
        )
        if (!allowed) violations.push(`${file} (${subsystem}) imports ${spec}`)
      }
      for (const target of graph.get(file) ?? []) {
        const targetSubsystem = placement.get(target)
        if (targetSubsystem === undefined) violations.push(`${file} imports ${target}, which does not exist`)
        else if (!mayImport[subsystem].includes(targetSubsystem)) {
          violations.push(`${file} (${subsystem}) imports ${target} (${targetSubsystem})`)
        }
      }
    }
    assert.deepStrictEqual(violations, [])
  })

  it("no cycle between subsystems", () => {
    const edges = new Map<Subsystem, Set<Subsystem>>()
    for (const file of all) {
      const from = placement.get(file)!
      for (const target of graph.get(file) ?? []) {
        const to = placement.get(target)
        if (to === undefined || to === from) continue
        if (!edges.has(from)) edges.set(from, new Set())
        edges.get(from)!.add(to)
      }
    }
    const cycles: Array<string> = []
    const state = new Map<Subsystem, "visiting" | "done">()
    const visit = (node: Subsystem, path: Array<Subsystem>) => {
      if (state.get(node) === "done") return
      if (state.get(node) === "visiting") {
        cycles.push([...path.slice(path.indexOf(node)), node].join(" -> "))
        return
      }
      state.set(node, "visiting")
      for (const next of edges.get(node) ?? []) visit(next, [...path, node])
      state.set(node, "done")
    }
    for (const node of edges.keys()) visit(node, [])
    assert.deepStrictEqual(cycles, [])
  })

  it("the library imports neither the test kit, the CLI, effect/cli nor effect/observability", () => {
    const violations = all.filter((file) =>
      importsOf(sources.get(file)!).some((spec) =>
        /^(@effect-informers\/|@effect\/cli|effect\/cli|effect\/observability|effect-informers)|packages\//.test(spec)
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

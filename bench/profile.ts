/**
 * Summarises a V8 CPU profile (`node --cpu-prof`, or `npm run bench -- --profile`): the functions with
 * the most self time, and the share of samples under selected functions (inclusive).
 *
 *   npx tsx bench/profile.ts .bench/profiles/ours [--top=30] [--filter=src/]
 *
 * A directory stands for the largest profile in it (the main thread's; Node's module loader thread
 * writes a small one beside it).
 */
import * as Fs from "node:fs"
import * as Os from "node:os"

interface Node {
  readonly id: number
  readonly callFrame: {
    readonly functionName: string
    readonly url: string
    readonly lineNumber: number
    readonly columnNumber?: number
  }
  readonly children?: ReadonlyArray<number>
}

interface Profile {
  readonly nodes: ReadonlyArray<Node>
  readonly samples: ReadonlyArray<number>
  readonly timeDeltas: ReadonlyArray<number>
}

process.stdout.on("error", () => process.exit(0))
const args = process.argv.slice(2)
const file = args.find((a) => !a.startsWith("--"))
if (file === undefined) {
  console.error("usage: tsx bench/profile.ts FILE.cpuprofile|DIR [--top=N] [--filter=TEXT]")
  process.exit(2)
}
const top = Number(args.find((a) => a.startsWith("--top="))?.slice(6) ?? 30)
const filter = args.find((a) => a.startsWith("--filter="))?.slice(9)

const largest = (dir: string): string => {
  const files = Fs.readdirSync(dir).filter((f) => f.endsWith(".cpuprofile")).map((f) => `${dir}/${f}`)
  if (files.length === 0) throw new Error(`no .cpuprofile in ${dir}`)
  return files.sort((a, b) => Fs.statSync(b).size - Fs.statSync(a).size)[0]
}
const path = Fs.statSync(file).isDirectory() ? largest(file) : file
const profile = JSON.parse(Fs.readFileSync(path, "utf8")) as Profile
const byId = new Map<number, Node>()
for (const node of profile.nodes) byId.set(node.id, node)
const parent = new Map<number, number>()
for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id)

// -------------------------------------------------------------------------------------------------
// TypeScript positions: tsx runs each .ts file as one minified line; its cache (os.tmpdir()/tsx-UID,
// JSON files {code, map}) holds the source map back to the .ts lines.
// -------------------------------------------------------------------------------------------------

const VLQ = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"

/** Segments of generated line 0 as [generated column, source line], sorted. */
const decodeFirstLine = (mappings: string): Array<readonly [number, number]> => {
  const out: Array<readonly [number, number]> = []
  const line = mappings.split(";")[0] ?? ""
  let column = 0
  let sourceLine = 0
  for (const segment of line.split(",")) {
    if (segment === "") continue
    const values: Array<number> = []
    let value = 0
    let shift = 0
    for (const ch of segment) {
      const digit = VLQ.indexOf(ch)
      value += (digit & 31) << shift
      if (digit & 32) shift += 5
      else {
        values.push(value & 1 ? -(value >>> 1) : value >>> 1)
        value = 0
        shift = 0
      }
    }
    column += values[0]
    if (values.length >= 4) {
      sourceLine += values[2]
      out.push([column, sourceLine] as const)
    }
  }
  return out
}

const sourceMaps = new Map<string, Array<readonly [number, number]> | undefined>()

const loadSourceMaps = (before: number) => {
  const dir = `${Os.tmpdir()}/tsx-${process.getuid?.() ?? 0}`
  if (!Fs.existsSync(dir)) return
  const newest = new Map<string, { readonly mtime: number; readonly mappings: string }>()
  for (const name of Fs.readdirSync(dir)) {
    const file = `${dir}/${name}`
    const stat = Fs.statSync(file)
    if (!stat.isFile() || stat.mtimeMs > before || stat.size > 5_000_000) continue
    try {
      const cached = JSON.parse(Fs.readFileSync(file, "utf8")) as {
        readonly map?: { readonly sources?: ReadonlyArray<string>; readonly mappings?: string }
      }
      const source = cached.map?.sources?.[0]
      const mappings = cached.map?.mappings
      if (source === undefined || mappings === undefined) continue
      const known = newest.get(source)
      if (known === undefined || known.mtime < stat.mtimeMs) newest.set(source, { mtime: stat.mtimeMs, mappings })
    } catch {
      // not a cache entry
    }
  }
  for (const [source, { mappings }] of newest) sourceMaps.set(source, decodeFirstLine(mappings))
}

const sourceLine = (url: string, line: number, column: number): number => {
  if (line !== 0 || !url.endsWith(".ts")) return line + 1
  const segments = sourceMaps.get(url.replace(/^file:\/\//, ""))
  if (segments === undefined || segments.length === 0) return line + 1
  let lo = 0
  let hi = segments.length - 1
  while (lo < hi) {
    const mid = (lo + hi + 1) >>> 1
    if (segments[mid][0] <= column) lo = mid
    else hi = mid - 1
  }
  return segments[lo][1] + 1
}

const label = (node: Node) => {
  const { columnNumber, functionName, lineNumber, url } = node.callFrame
  const where = url === ""
    ? ""
    : ` ${url.replace(/^.*\/(node_modules\/|src\/|bench\/)/, "$1")}:${sourceLine(url, lineNumber, columnNumber ?? 0)}`
  return `${functionName === "" ? "(anonymous)" : functionName}${where}`
}

loadSourceMaps(Fs.statSync(path).mtimeMs)

// self time per function, and inclusive time (each function counted once per sample)
const self = new Map<string, number>()
const inclusive = new Map<string, number>()
let total = 0
for (let i = 0; i < profile.samples.length; i++) {
  const dt = profile.timeDeltas[i] ?? 0
  total += dt
  let id: number | undefined = profile.samples[i]
  const leaf = byId.get(id)!
  self.set(label(leaf), (self.get(label(leaf)) ?? 0) + dt)
  const seen = new Set<string>()
  while (id !== undefined) {
    const name = label(byId.get(id)!)
    if (!seen.has(name)) {
      seen.add(name)
      inclusive.set(name, (inclusive.get(name) ?? 0) + dt)
    }
    id = parent.get(id)
  }
}

/** Where a function lives: GC, idle, a src/ file, the Effect runtime, Node's internals... */
const category = (name: string): string => {
  if (name.startsWith("(garbage collector)")) return "garbage collector"
  if (name.startsWith("(idle)")) return "idle"
  if (name.startsWith("(program)")) return "(program)"
  const src = / (src\/[^:]+):/.exec(name)
  if (src !== null) return src[1]
  const module = / node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(name)
  if (module !== null) return `node_modules/${module[1]}`
  if (/ bench\//.test(name)) return "bench (harness)"
  if (/ node:internal\/modules|compileSourceTextModule|makeAsyncRequest|makeSyncRequest|waitForWorker/.test(name)) {
    return "module loading"
  }
  if (/ node:/.test(name)) return "node internals (http, net, streams, buffer)"
  return `native: ${name.split(" ")[0]}`
}

const idle = ["(idle)", "(program)", "(garbage collector)"]
const show = (title: string, map: Map<string, number>) => {
  console.log(`\n${title} (of ${(total / 1000).toFixed(0)} ms sampled)`)
  const entries = [...map.entries()]
    .filter(([name]) => filter === undefined || name.includes(filter) || idle.some((i) => name.startsWith(i)))
    .sort((a, b) => b[1] - a[1])
    .slice(0, top)
  for (const [name, t] of entries) {
    console.log(`${((100 * t) / total).toFixed(1).padStart(5)}%  ${(t / 1000).toFixed(0).padStart(6)} ms  ${name}`)
  }
}
const categories = new Map<string, number>()
for (const [name, t] of self) categories.set(category(name), (categories.get(category(name)) ?? 0) + t)
show("self time by place", categories)
show("self time", self)
show("inclusive time", inclusive)

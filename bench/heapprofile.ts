/**
 * Summarises a sampling heap profile (`HEAPPROF=` of bench/perf16.ts): bytes allocated by function
 * (self), largest first. `npx tsx bench/heapprofile.ts FILE.heapprofile [--top=N]`.
 */
import * as Fs from "node:fs"

interface HeapNode {
  readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number }
  readonly selfSize: number
  readonly children: ReadonlyArray<HeapNode>
}

const file = process.argv[2]
const top = Number(process.argv.find((a) => a.startsWith("--top="))?.slice(6) ?? 40)
const profile = JSON.parse(Fs.readFileSync(file, "utf8")) as { head: HeapNode }
const self = new Map<string, number>()
let total = 0
const walk = (node: HeapNode, path: string) => {
  const { functionName, lineNumber, url } = node.callFrame
  const name = `${functionName || "(anonymous)"} ${url.replace(/^.*\/(node_modules\/|src\/|bench\/)/, "$1")}:${
    lineNumber + 1
  }`
  self.set(name, (self.get(name) ?? 0) + node.selfSize)
  total += node.selfSize
  for (const child of node.children) walk(child, path)
}
walk(profile.head, "")
console.log(`${(total / 1e6).toFixed(1)} MB sampled`)
for (const [name, bytes] of [...self].sort((a, b) => b[1] - a[1]).slice(0, top)) {
  console.log(`${((100 * bytes) / total).toFixed(1).padStart(5)}%  ${(bytes / 1e6).toFixed(1).padStart(8)} MB  ${name}`)
}

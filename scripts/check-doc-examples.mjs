// Extracts every ```ts example from the JSDoc of src/**/*.ts and packages/*/src/**/*.ts into doc-examples/ and
// typechecks them against the sources (tsconfig.examples.json maps "effect-informers" to src/index.ts and
// "@effect-informers/testkit" to packages/testkit/src/index.ts). Run by `npm run typecheck`.
import { execFileSync } from "node:child_process"
import { mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs"
import { join, relative } from "node:path"

const root = new URL("..", import.meta.url).pathname
const out = join(root, "doc-examples")
rmSync(out, { recursive: true, force: true })
mkdirSync(out, { recursive: true })

const files = (dir) =>
  readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    return statSync(path).isDirectory() ? (name === "internal" ? [] : files(path)) : path.endsWith(".ts") ? [path] : []
  })

// A `@since` tag names a released or the current version: never one above the package's own version.
const versionOf = (dir) => JSON.parse(readFileSync(join(dir, "..", "package.json"), "utf8")).version
const versionParts = (v) => v.split(".").map(Number)
const above = (a, b) => {
  const [x, y] = [versionParts(a), versionParts(b)]
  for (let i = 0; i < 3; i++) if (x[i] !== y[i]) return x[i] > y[i]
  return false
}
const sinceErrors = []

let count = 0
const packages = readdirSync(join(root, "packages")).map((name) => join(root, "packages", name, "src"))
const sources = [
  join(root, "src"),
  ...packages.filter((dir) => statSync(dir, { throwIfNoEntry: false })?.isDirectory())
]
for (const dir of sources) {
  const version = versionOf(dir)
  for (const file of files(dir)) {
    for (const [, since] of readFileSync(file, "utf8").matchAll(/@since (\S+)/g)) {
      if (above(since, version)) {
        sinceErrors.push(`${relative(root, file)}: @since ${since} is above the package's ${version}`)
      }
    }
  }
}
if (sinceErrors.length > 0) {
  console.error(sinceErrors.join("\n"))
  process.exit(1)
}
for (const file of sources.flatMap(files)) {
  const text = readFileSync(file, "utf8")
  const blocks = text.matchAll(/```ts\n([\s\S]*?)```/g)
  let n = 0
  for (const match of blocks) {
    const code = match[1].split("\n").map((line) => line.replace(/^\s*\* ?/, "")).join("\n")
    const name = relative(root, file).replace(/[/.]/g, "_") + `_${n++}.ts`
    writeFileSync(join(out, name), `// from ${relative(root, file)}\nexport {}\n${code}`)
    count++
  }
}
console.log(`checking ${count} documentation examples`)
execFileSync(join(root, "node_modules/.bin/tsc"), ["-p", join(root, "tsconfig.examples.json")], { stdio: "inherit" })

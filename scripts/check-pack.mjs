// What a library user gets: packs the library as `npm publish` would (`npm pack` at the root, whose
// `prepack` builds dist/), installs the tarball into a fresh app that brings the latest `effect` 4.x and
// `@effect/platform-node` 4.x (what `npm install effect @effect/platform-node` gives a new app), and checks that
// - the tarball holds the library only: no CLI, demo, fault campaign, churn simulator or API server code,
//   no tests, no workspace packages;
// - npm reports no peer dependency problem; the app's tree has exactly one copy of `effect`, and none of
//   `@effect/platform`, `@effect/cli` or a workspace package;
// - `import("effect-informers")` and every subpath export work in Node, unexported paths do not, and the
//   declarations type-check in a TypeScript consumer under the strictest settings (`strict`,
//   `exactOptionalPropertyTypes`, `noUncheckedIndexedAccess`, `skipLibCheck: false`), with the README's
//   application block, which then runs: without a kubeconfig, one `error:` line and exit code 1;
// then packs the test kit and the CLI the same way, adds them to the app as dev dependencies, and checks
// that the app still has one copy of `effect` and that the installed `effect-informers` binary runs the demo.
// Run by `npm test` (`npm run check:pack`). Installs with --prefer-offline: after `npm ci` the npm cache
// holds what the app needs, and the registry is asked only for what it lacks.
import { execFileSync, spawnSync } from "node:child_process"
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"

const root = new URL("..", import.meta.url).pathname
const started = Date.now()
const work = mkdtempSync(join(tmpdir(), "effect-informers-pack-"))
const problems = []
const check = (ok, message) => {
  if (!ok) problems.push(message)
}
const run = (command, args, cwd) => {
  try {
    return execFileSync(command, args, {
      cwd,
      encoding: "utf8",
      stdio: ["ignore", "pipe", "pipe"],
      maxBuffer: 64 << 20
    })
  } catch (error) {
    const output = `${error.stdout ?? ""}${error.stderr ?? ""}`.trim().split("\n").slice(-30).join("\n")
    throw new Error(`${command} ${args.join(" ")} (in ${cwd}) failed:\n${output}`)
  }
}

try {
  // -- the tarball --------------------------------------------------------------------------------------
  const [packed] = JSON.parse(run("npm", ["pack", "--json", "--pack-destination", work], root))
  const tarball = join(work, packed.filename)
  const files = packed.files.map((file) => file.path)
  const forbidden = /(^|\/)(Cli|Demo|Chaos|ChurnSimulator|ApiServer|apiServer\w*|bin)\.(ts|js|d\.ts)(\.map)?$/
  const outside = (path) => !/^(dist|src)\//.test(path) && !/^(package\.json|README\.md|LICENSE)$/.test(path)
  for (const path of files) {
    check(!forbidden.test(path), `the tarball holds ${path}`)
    check(!outside(path), `the tarball holds ${path}, outside dist/ and src/`)
  }
  check(files.includes("dist/index.js") && files.includes("dist/index.d.ts"), "the tarball has no dist/index.js")
  const manifest = JSON.parse(readFileSync(join(root, "package.json"), "utf8"))
  check(manifest.bin === undefined, "the library declares a bin")
  // every module src/index.ts re-exports is also a subpath export (no "./*" to catch a new one)
  const index = readFileSync(join(root, "src/index.ts"), "utf8")
  for (const [, module] of index.matchAll(/export \* as \w+ from "\.\/(\w+)\.js"/g)) {
    check(
      manifest.exports[`./${module}`] !== undefined,
      `src/index.ts exports ${module}, package.json has no "./${module}"`
    )
  }
  // effect/http, effect/cli and effect/observability may change in a minor release of effect: the peers
  // are pinned to the 4.1 line (README, "Install")
  for (const name of ["effect", "@effect/platform-node"]) {
    check(manifest.peerDependencies?.[name]?.startsWith("~4.1"), `${name} is not a ~4.1 peer dependency`)
    check(manifest.dependencies?.[name] === undefined, `${name} is a dependency, not a peer`)
  }
  for (const name of ["@effect/platform", "@effect/cli", "@effect/schema"]) {
    const where = ["dependencies", "peerDependencies", "devDependencies"].filter((key) => manifest[key]?.[name])
    check(where.length === 0, `package.json has ${name} in ${where}`)
  }

  // -- a fresh app: npm install effect @effect/platform-node (the latest 4.x), then the tarball ---------
  const app = join(work, "app")
  run("mkdir", ["-p", app], work)
  writeFileSync(
    join(app, "package.json"),
    JSON.stringify(
      {
        name: "app",
        private: true,
        type: "module",
        dependencies: {
          "effect": "^4.1.0",
          "@effect/platform-node": "^4.1.0",
          "effect-informers": `file:${tarball}`
        },
        // a TypeScript app on Node has Node's types (the declarations of @effect/platform-node and of
        // @kubernetes/client-node refer to them) and a TypeScript
        devDependencies: { "@types/node": "^22.19.0", "typescript": manifest.devDependencies.typescript }
      },
      null,
      2
    )
  )
  const installing = spawnSync(
    "npm",
    ["install", "--prefer-offline", "--no-audit", "--no-fund", "--ignore-scripts", "--loglevel=warn"],
    { cwd: app, encoding: "utf8" }
  )
  if (installing.status !== 0) throw new Error(`npm install (in ${app}) failed:\n${installing.stderr}`)
  const peerWarnings = `${installing.stdout}\n${installing.stderr}`.split("\n").filter((line) =>
    /peer|ERESOLVE/i.test(line)
  )
  check(peerWarnings.length === 0, `npm install warned about peers:\n${peerWarnings.join("\n")}`)

  // every installed package, wherever npm placed it
  const installed = []
  const walk = (dir) => {
    if (!existsSync(dir)) return
    for (const name of readdirSync(dir)) {
      if (name.startsWith(".")) continue
      const path = join(dir, name)
      if (name.startsWith("@")) {
        walk(path)
        continue
      }
      const pkg = join(path, "package.json")
      if (!statSync(path).isDirectory() || !existsSync(pkg)) continue
      const { name: pkgName, version } = JSON.parse(readFileSync(pkg, "utf8"))
      installed.push({ name: pkgName, version, path: path.slice(app.length + 1) })
      walk(join(path, "node_modules"))
    }
  }
  walk(join(app, "node_modules"))
  const libraryTree = [...installed]
  const copies = (name) => installed.filter((p) => p.name === name)
  const effects = copies("effect")
  check(effects.length === 1, `the app has ${effects.length} copies of effect: ${effects.map((p) => p.path)}`)
  for (const name of ["@effect/platform", "@effect/cli", "@effect/schema"]) {
    check(copies(name).length === 0, `the app's tree has ${name}`)
  }
  for (const p of installed.filter((p) => p.name.startsWith("@effect-informers/"))) {
    problems.push(`the app's tree has ${p.name}`)
  }

  // -- importing it -------------------------------------------------------------------------------------
  const subpaths = Object.keys(manifest.exports).filter((key) => key !== "./package.json")
  const specifiers = subpaths.map((key) => key === "." ? "effect-informers" : `effect-informers${key.slice(1)}`)
  const probe = `
    const specifiers = ${JSON.stringify(specifiers)}
    const result = {}
    for (const specifier of specifiers) result[specifier] = Object.keys(await import(specifier)).sort()
    for (const specifier of ["effect-informers/Cli", "effect-informers/Demo", "effect-informers/ApiServer",
      "effect-informers/internal/redact", "effect-informers/dist/index.js"]) {
      try {
        await import(specifier)
        result[specifier] = "importable"
      } catch (error) {
        result[specifier] = error.code
      }
    }
    console.log(JSON.stringify(result))
  `
  const imported = JSON.parse(run("node", ["--input-type=module", "-e", probe], app))
  const main = imported["effect-informers"]
  for (
    const name of ["Indexer", "DeltaFifo", "Reflector", "SharedInformer", "InformerFactory", "Informers", "KubeConfig"]
  ) {
    check(main.includes(name), `import("effect-informers") has no ${name}: ${main}`)
  }
  // no test fakes in the main entry (they are in effect-informers/testing), and the Layer module only as
  // `Informers`, which does not shadow effect's `Layer`
  for (
    const name of ["ApiServer", "ChurnSimulator", "Chaos", "Cli", "Demo", "ApiStore", "FakeListerWatcher", "Layer"]
  ) {
    check(!main.includes(name), `import("effect-informers") has ${name}`)
  }
  check(
    JSON.stringify(imported["effect-informers/testing"]) ===
      JSON.stringify(["ApiStore", "FakeClient", "FakeListerWatcher"]),
    `effect-informers/testing exports ${imported["effect-informers/testing"]}`
  )
  for (const specifier of specifiers) {
    check(imported[specifier].length > 0, `import("${specifier}") is empty`)
  }
  for (const [specifier, outcome] of Object.entries(imported)) {
    if (!specifiers.includes(specifier)) {
      check(outcome === "ERR_PACKAGE_PATH_NOT_EXPORTED", `import("${specifier}"): ${outcome}`)
    }
  }

  // -- the declarations, as a TypeScript app sees them --------------------------------------------------
  writeFileSync(
    join(app, "main.ts"),
    `import { Effect, Layer } from "effect"
import { Informers, Resource } from "effect-informers"
import { FakeListerWatcher } from "effect-informers/testing"
import type { KubeConfig } from "effect-informers/KubeConfig"

const program = Effect.gen(function*() {
  const pods = yield* Informers.Pods
  yield* pods.informer.synced
  const names: ReadonlyArray<string | undefined> = (yield* pods.lister.list()).map((pod) => pod.spec?.nodeName)
  return names
})
export const live = program.pipe(Effect.provide(Layer.mergeAll(Informers.pods()).pipe(Layer.provideMerge(Informers.live()))))
export const fake = FakeListerWatcher.layer
export const fakeApp = Informers.pods().pipe(Layer.provideMerge(FakeListerWatcher.layerFactory()))
export const resource: Resource.Resource = Resource.pods
export type Config = KubeConfig.Service
`
  )
  // the README's application block ("Using it in an Effect application"), as the README has it
  const readme = readFileSync(join(root, "README.md"), "utf8")
  const readmeBlock = /```ts\n([\s\S]*?)```/.exec(readme.slice(readme.indexOf("## Using it in an Effect application")))
  check(readmeBlock !== null, "the README has no application block")
  writeFileSync(join(app, "readme.ts"), readmeBlock?.[1] ?? "")
  writeFileSync(
    join(app, "tsconfig.json"),
    JSON.stringify({
      compilerOptions: {
        target: "ES2022",
        module: "NodeNext",
        moduleResolution: "NodeNext",
        strict: true,
        exactOptionalPropertyTypes: true,
        noUncheckedIndexedAccess: true,
        noEmit: true,
        skipLibCheck: false,
        types: ["node"]
      },
      files: ["main.ts", "readme.ts"]
    })
  )
  try {
    run(join(app, "node_modules/.bin/tsc"), ["-p", "tsconfig.json"], app)
  } catch (error) {
    problems.push(`the declarations do not type-check in an app: ${error.message}`)
  }
  // run as it is (Node strips the types), without a kubeconfig: one `error:` line on stderr, exit code 1
  const home = join(work, "home")
  run("mkdir", ["-p", home], work)
  const readmeRun = spawnSync(process.execPath, ["readme.ts"], {
    cwd: app,
    encoding: "utf8",
    timeout: 60_000,
    env: { PATH: process.env.PATH ?? "", HOME: home, NO_COLOR: "1" }
  })
  const readmeErr = readmeRun.stderr.split("\n").filter((line) => line.trim() !== "")
  check(
    readmeRun.status === 1 && readmeErr.length === 1 && readmeErr[0].startsWith("error: "),
    `the README's block without a kubeconfig: exit ${readmeRun.status}, stderr:\n${readmeRun.stderr}`
  )

  // -- report -------------------------------------------------------------------------------------------
  const size = (path) => Number(run("du", ["-sk", path], work).split("\t")[0])
  const appMiB = (size(join(app, "node_modules")) / 1024).toFixed(0)
  // the README's size figures: the packages each root of the app's dependencies brings (node's resolution
  // from the requiring package), as disk usage of each package's own files (nested node_modules excluded)
  const diskUsage = (dir) => {
    let bytes = 0
    for (const name of readdirSync(dir)) {
      const path = join(dir, name)
      const stat = statSync(path)
      if (stat.isDirectory()) bytes += name === "node_modules" ? 0 : diskUsage(path)
      else bytes += stat.blocks * 512
    }
    return bytes + statSync(dir).blocks * 512
  }
  const resolve = (from, name) => {
    for (let at = from;; at = at.slice(0, Math.max(at.lastIndexOf("/node_modules/"), 0))) {
      const candidate = at === "" ? `node_modules/${name}` : `${at}/node_modules/${name}`
      if (existsSync(join(app, candidate, "package.json"))) return candidate
      if (at === "") return undefined
    }
  }
  const closure = (roots) => {
    const seen = new Set()
    const visit = (path) => {
      if (path === undefined || seen.has(path)) return
      seen.add(path)
      const { dependencies = {}, optionalDependencies = {}, peerDependencies = {} } = JSON.parse(
        readFileSync(join(app, path, "package.json"), "utf8")
      )
      for (const dep of Object.keys({ ...dependencies, ...optionalDependencies, ...peerDependencies })) {
        visit(resolve(path, dep))
      }
    }
    for (const name of roots) visit(resolve("", name))
    return seen
  }
  const mib = (paths) => [...paths].reduce((sum, path) => sum + diskUsage(join(app, path)), 0) / (1 << 20)
  const effectOnly = closure(["effect", "@effect/platform-node"])
  const withLibrary = closure(["effect", "@effect/platform-node", "effect-informers"])
  const sizes = `effect + @effect/platform-node ${mib(effectOnly).toFixed(0)} MiB; with effect-informers ${
    mib(withLibrary).toFixed(0)
  } MiB (the library ${mib(["node_modules/effect-informers"]).toFixed(1)} MiB, @kubernetes/client-node ${
    mib(["node_modules/@kubernetes/client-node"]).toFixed(0)
  } MiB); the whole app, with typescript and @types/node, ${appMiB} MiB`

  // -- the test kit and the CLI, packed and added as dev dependencies ----------------------------------
  const kits = ["@effect-informers/testkit", "@effect-informers/cli"].map((name) => {
    const [kit] = JSON.parse(run("npm", ["pack", "--json", "--pack-destination", work, "-w", name], root))
    return { name, tarball: join(work, kit.filename), files: kit.files.length }
  })
  run(
    "npm",
    [
      "install",
      "--save-dev",
      "--prefer-offline",
      "--no-audit",
      "--no-fund",
      "--ignore-scripts",
      "--loglevel=error",
      ...kits.map((kit) => kit.tarball)
    ],
    app
  )
  installed.length = 0
  walk(join(app, "node_modules"))
  const effectsWithKits = copies("effect")
  check(
    effectsWithKits.length === 1,
    `with the test kit and the CLI, the app has ${effectsWithKits.length} copies of effect`
  )
  check(copies("effect-informers").length === 1, "with the test kit and the CLI, the app has two copies of the library")
  const demo = JSON.parse(
    run(join(app, "node_modules/.bin/effect-informers"), [
      "demo",
      "--pods",
      "100",
      "--deployments",
      "5",
      "--duration",
      "2s",
      "--faults",
      "mild",
      "--json"
    ], app)
  )
  check(demo.consistent === true, `the installed CLI's demo did not end consistent: ${JSON.stringify(demo)}`)

  console.log(
    `pack: ${packed.filename}, ${files.length} files, ${(packed.size / 1024).toFixed(0)} KiB packed, ` +
      `${(packed.unpackedSize / 1024).toFixed(0)} KiB unpacked`
  )
  console.log(
    `app: effect + @effect/platform-node (latest 4.x) + the tarball: ${libraryTree.length} packages, ${appMiB} MiB; ` +
      `effect ${effects.map((p) => `${p.version} at ${p.path}`).join(", ")}; ` +
      `@effect/cli: ${libraryTree.filter((p) => p.name === "@effect/cli").length}`
  )
  console.log(`sizes: ${sizes}`)
  console.log(`README block: tsc (strict, skipLibCheck false) ok; without a kubeconfig: ${readmeErr[0]}`)
  console.log(
    `import: ${specifiers.length} entry points load under Node ${process.version}; effect-informers/testing = [${
      imported["effect-informers/testing"]
    }]`
  )
  console.log(
    `+ ${kits.map((kit) => `${kit.name} (${kit.files} files)`).join(" + ")}: ${installed.length} packages, ` +
      `${effectsWithKits.length} copy of effect; effect-informers demo: consistent ${demo.consistent}, ` +
      `${demo.objects} objects, ${demo.events} events, ${demo.faults} faults`
  )
  if (problems.length > 0) {
    console.error(`check-pack: ${problems.length} problems:\n- ${problems.join("\n- ")}`)
    process.exitCode = 1
  } else {
    console.log(`check-pack: ok (${((Date.now() - started) / 1000).toFixed(0)} s)`)
  }
} catch (error) {
  console.error(`check-pack: ${error.message}`)
  process.exitCode = 1
} finally {
  if (process.exitCode !== 1) rmSync(work, { recursive: true, force: true })
  else console.error(`left ${work} for inspection`)
}

// The CLI's executable as one ES module and its lazily loaded chunks: `dist/bin.js` (tsc's output) bundled
// with what it imports (effect, @effect/platform-node, the library, the test kit) by esbuild, in place.
// Start-up counts for a command line: the unbundled binary resolved and compiled ~320 modules before its first
// request (`effect-informers --version`: ~0.9 s of CPU, bundled ~0.25 s; node itself ~0.1 s). What a command
// imports lazily (the test kit for demo/serve/chaos, the demo, the replicator, the metrics server) stays in
// chunks of its own, loaded when that command runs. @kubernetes/client-node stays outside (a dependency, loaded
// only to read a kubeconfig): bundled, it would add 16 MB to the package.
//
// `dist/bin.js` itself is a few lines that turn on Node's on-disk compile cache (`module.enableCompileCache`,
// Node >= 22.1; the directory Node picks, off with NODE_DISABLE_COMPILE_CACHE=1) and then import the bundle,
// `dist/bin-main.js`: from the second run on, the bundle's code is not compiled again (`--version`: about 45 ms
// less CPU, of about 210).
//
// Run by `npm run build` after tsc; esbuild is a dev dependency of the root (tsx and vitest bring the same).
import { build } from "esbuild"
import * as fs from "node:fs"

const dist = new URL("../dist/", import.meta.url).pathname
await build({
  entryPoints: { "bin-main": `${dist}bin.js` },
  outdir: dist,
  allowOverwrite: true,
  bundle: true,
  splitting: true,
  chunkNames: "chunks/[name]-[hash]",
  format: "esm",
  platform: "node",
  target: "node22",
  external: ["@kubernetes/client-node"],
  // the CommonJS dependencies bundled into an ES module (js-yaml, protobufjs) require node's modules
  banner: {
    js:
      "import { createRequire as __cliCreateRequire } from \"node:module\"; const require = __cliCreateRequire(import.meta.url);"
  },
  legalComments: "none",
  logLevel: "warning"
})
fs.writeFileSync(
  `${dist}bin.js`,
  [
    "#!/usr/bin/env node",
    "// The `effect-informers` executable: Node's compile cache on, then the bundle (scripts/bundle.mjs).",
    "import * as Module from \"node:module\"",
    "Module.enableCompileCache?.()",
    "await import(\"./bin-main.js\")",
    ""
  ].join("\n")
)
fs.chmodSync(`${dist}bin.js`, 0o755)
// tsc's map and declarations of bin.js describe the module it was, not the bundle
for (const stale of ["bin.js.map", "bin.d.ts", "bin.d.ts.map"]) fs.rmSync(`${dist}${stale}`, { force: true })

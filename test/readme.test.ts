/**
 * The README's application snippet ("Using it in an Effect application"), as the README has it: extracted
 * at test time, written to a file at the repository's root (so that its imports resolve as in an
 * application: `effect-informers` through tsconfig.json's paths) and run with tsx as a child process.
 * Without a kubeconfig it fails with one line on stderr and a non-zero exit code; with a kubeconfig for the
 * test kit's embedded API server it lists the web pods and exits 0.
 */
import * as ApiServer from "@effect-informers/testkit/ApiServer"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import * as Resource from "../src/Resource.js"
import { pod as fixturePod } from "./fixtures/index.js"

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..")

/** The first `ts` block of the README's section "Using it in an Effect application". */
const readmeSnippet = (): string => {
  const readme = fs.readFileSync(path.join(root, "README.md"), "utf8")
  const section = readme.indexOf("## Using it in an Effect application")
  assert.isAbove(section, -1, "the README has no section \"Using it in an Effect application\"")
  const block = /```ts\n([\s\S]*?)```/.exec(readme.slice(section))
  assert.isNotNull(block, "the section has no ts block")
  return block![1]
}

/** A scratch directory (an empty HOME, a kubeconfig), removed with the scope. */
const scratch = Effect.acquireRelease(
  Effect.sync(() => fs.mkdtempSync(path.join(os.tmpdir(), "effect-informers-readme-"))),
  (dir) => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true }))
)

/** The snippet in a file at the repository's root, removed with the scope. */
const snippetFile: Effect.Effect<string, never, Scope.Scope> = Effect.acquireRelease(
  Effect.sync(() => {
    const file = path.join(root, `.readme-snippet-${process.pid}-${Date.now()}.ts`)
    fs.writeFileSync(file, readmeSnippet())
    return file
  }),
  (file) => Effect.sync(() => fs.rmSync(file, { force: true }))
)

interface Exited {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

/** Runs `file` with tsx, with `env` as its whole environment besides PATH; killed after 60 s. */
const runTsx = (file: string, env: Record<string, string>) =>
  Effect.callback<Exited>((resume) => {
    const child = spawn(process.execPath, ["--import", "tsx", file], {
      cwd: root,
      env: { PATH: process.env.PATH ?? "", NO_COLOR: "1", ...env },
      stdio: ["ignore", "pipe", "pipe"]
    })
    let stdout = ""
    let stderr = ""
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => stdout += chunk)
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => stderr += chunk)
    const timer = setTimeout(() => child.kill("SIGKILL"), 60_000)
    child.on("close", (code) => {
      clearTimeout(timer)
      resume(Effect.succeed({ code, stdout, stderr }))
    })
    return Effect.sync(() => child.kill("SIGKILL"))
  })

const nonEmptyLines = (text: string) => text.split("\n").filter((line) => line.trim() !== "")

describe("README", () => {
  it.live(
    "the application snippet, without a kubeconfig: one line on stderr, exit code 1",
    () =>
      Effect.gen(function*() {
        const home = yield* scratch
        const file = yield* snippetFile
        const result = yield* runTsx(file, { HOME: home, KUBECONFIG: path.join(home, "missing-kubeconfig") })
        assert.strictEqual(result.code, 1, `stdout: ${result.stdout}\nstderr: ${result.stderr}`)
        assert.strictEqual(result.stdout, "")
        const lines = nonEmptyLines(result.stderr)
        assert.lengthOf(lines, 1, result.stderr)
        assert.match(lines[0], /^error: no kubeconfig file exists among .*missing-kubeconfig/)
      }),
    90_000
  )

  it.live(
    "the application snippet, against the embedded API server: it lists the web pods",
    () =>
      Effect.gen(function*() {
        const server = yield* ApiServer.make()
        const pod = (name: string, app: string) =>
          fixturePod(name, {
            typed: true,
            namespace: "default",
            labels: { app },
            spec: { containers: [{ name: "main", image: "nginx" }] }
          }) as Resource.Pod
        yield* Effect.orDie(server.objects.create(Resource.pods, pod("web-1", "web")))
        yield* Effect.orDie(server.objects.create(Resource.pods, pod("db-1", "db")))
        const home = yield* scratch
        const kubeconfig = path.join(home, "kubeconfig")
        fs.writeFileSync(
          kubeconfig,
          [
            "apiVersion: v1",
            "kind: Config",
            "clusters: [{ name: test, cluster: { server: \"" + server.url + "\" } }]",
            "users: [{ name: test, user: {} }]",
            "contexts: [{ name: test, context: { cluster: test, user: test } }]",
            "current-context: test",
            ""
          ].join("\n")
        )
        const file = yield* snippetFile
        const result = yield* runTsx(file, { HOME: home, KUBECONFIG: kubeconfig })
        assert.strictEqual(result.code, 0, `stdout: ${result.stdout}\nstderr: ${result.stderr}`)
        assert.deepStrictEqual(nonEmptyLines(result.stdout), ["1 web pods"])
        assert.strictEqual(result.stderr, "")
      }),
    90_000
  )
})

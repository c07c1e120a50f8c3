/**
 * Runs the real kubectl against the embedded API server: a server, a kubeconfig pointing at it, kubectl's
 * runs and its table output. kubectl is required (CI installs it): set `KUBECTL=/path/to/kubectl` to use
 * another binary, e.g. Debian bookworm's `kubernetes-client` (1.20).
 */
import * as Effect from "effect/Effect"
import type { ExecFileException } from "node:child_process"
import { execFile, execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as ApiServer from "../src/ApiServer.js"

/** The kubectl to run: `$KUBECTL`, else `kubectl` on the PATH. */
export const kubectlCommand = process.env.KUBECTL ?? "kubectl"

/** The kubectl binary, or a clear failure: these tests never skip. */
export const kubectl = (() => {
  try {
    execFileSync(kubectlCommand, ["version", "--client"], { stdio: "pipe", timeout: 20_000 })
    return kubectlCommand
  } catch (error) {
    return new Error(
      `kubectl is required by the kubectl tests but "${kubectlCommand}" could not be run (${
        String((error as Error).message).split("\n")[0]
      }). Install kubectl (CI does), or set KUBECTL=/path/to/kubectl.`
    )
  }
})()

export interface Cluster {
  readonly server: ApiServer.ApiServer.Service
  readonly dir: string
  readonly args: ReadonlyArray<string>
}

/** A server, a kubeconfig pointing at it and a private discovery cache, removed with the scope. */
export const clusterWith = (options: ApiServer.Options) =>
  Effect.gen(function*() {
    if (kubectl instanceof Error) return yield* Effect.die(kubectl)
    const server = yield* ApiServer.make(options).pipe(Effect.orDie)
    const dir = yield* Effect.acquireRelease(
      Effect.sync(() => fs.mkdtempSync(path.join(os.tmpdir(), "effect-informers-kubectl-"))),
      (dir) => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true }))
    )
    const kubeconfig = path.join(dir, "kubeconfig")
    fs.writeFileSync(
      kubeconfig,
      [
        "apiVersion: v1",
        "kind: Config",
        "clusters:",
        "- name: embedded",
        "  cluster:",
        `    server: ${server.url}`,
        "users:",
        "- name: anonymous",
        "  user: {}",
        "contexts:",
        "- name: embedded",
        "  context:",
        "    cluster: embedded",
        "    user: anonymous",
        "    namespace: default",
        "current-context: embedded",
        ""
      ].join("\n")
    )
    return { server, dir, args: ["--kubeconfig", kubeconfig, "--cache-dir", path.join(dir, "cache")] } satisfies Cluster
  })

export const cluster = clusterWith({})

/** Runs kubectl to completion: the error it ended with (a non-zero exit, a timeout), stdout and stderr. */
export const exec = (c: Cluster, args: ReadonlyArray<string>) =>
  Effect.callback<{ readonly error: ExecFileException | null; readonly stdout: string; readonly stderr: string }>(
    (resume) => {
      const child = execFile(
        kubectl as string,
        [...c.args, ...args],
        { timeout: 20_000, maxBuffer: 64 * 1024 * 1024, env: { ...process.env, KUBECONFIG: "" } },
        (error, stdout, stderr) => resume(Effect.succeed({ error, stdout, stderr }))
      )
      return Effect.sync(() => child.kill())
    }
  )

/** Runs kubectl to completion; its stdout, or a defect with its stderr. */
export const run = (c: Cluster, ...args: Array<string>) =>
  Effect.flatMap(exec(c, args), ({ error, stderr, stdout }) =>
    error
      ? Effect.die(new Error(`kubectl ${args.join(" ")} failed: ${stderr || error.message}`))
      : Effect.succeed(stdout))

/** Runs kubectl expecting it to fail; its stderr. */
export const runFailing = (c: Cluster, ...args: Array<string>) =>
  Effect.flatMap(
    exec(c, args),
    ({ error, stderr, stdout }) =>
      error ? Effect.succeed(stderr) : Effect.die(new Error(`kubectl ${args.join(" ")} succeeded: ${stdout}`))
  )

/** Runs kubectl to completion; its exit code, stdout and stderr whatever they are. */
export const attempt = (c: Cluster, ...args: Array<string>) =>
  Effect.map(exec(c, args), ({ error, stderr, stdout }) => ({
    code: error === null ? 0 : typeof error.code === "number" ? error.code : 1,
    stdout,
    stderr
  }))

/** Writes `lines` to `name` in the cluster's directory; returns the path. */
export const manifest = (c: Cluster, name: string, lines: ReadonlyArray<string>): string => {
  const file = path.join(c.dir, name)
  fs.writeFileSync(file, [...lines, ""].join("\n"))
  return file
}

/** kubectl's table output as records keyed by header, each cell cut at its header's offset. */
export const printedRows = (output: string): Array<Record<string, string>> => {
  const [header, ...lines] = output.replace(/\n+$/, "").split("\n")
  const columns = [...header.matchAll(/\S+(?: \S+)*/g)].map((m) => ({ name: m[0], at: m.index! }))
  return lines.map((line) =>
    Object.fromEntries(
      columns.map((c, i) => [c.name, line.slice(c.at, i + 1 < columns.length ? columns[i + 1].at : undefined).trim()])
    )
  )
}

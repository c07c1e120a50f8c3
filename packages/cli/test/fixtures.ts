/**
 * What the tests of `effect-informers replicate` share: replicas as child processes (`node --import tsx
 * packages/cli/src/bin.ts replicate ...` from the repository root), stopped with the test's scope; the
 * repository's `eventually` and `pod` (test/fixtures).
 */
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import type { ChildProcess } from "node:child_process"
import { spawn } from "node:child_process"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

export { eventually } from "../../../test/fixtures/eventually.js"
export { pod } from "../../../test/fixtures/objects.js"

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..")

export interface Replica {
  readonly identity: string
  readonly child: ChildProcess
  /** What it printed on stderr so far. */
  readonly stderr: () => string
  /** Its exit code (null when a signal ended it). */
  readonly exited: Promise<number | null>
}

/**
 * Starts `replicate --server URL --identity ID ...args`; the test's scope ends it (SIGINT, as Ctrl-C, when
 * it still runs) and waits for its exit.
 */
export const replica = (
  server: string,
  identity: string,
  args: ReadonlyArray<string> = []
): Effect.Effect<Replica, never, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.sync(() => {
      const child = spawn(
        process.execPath,
        [
          "--import",
          "tsx",
          "packages/cli/src/bin.ts",
          "replicate",
          "--server",
          server,
          "--identity",
          identity,
          ...args
        ],
        { cwd: root, stdio: ["ignore", "ignore", "pipe"] }
      )
      let stderr = ""
      child.stderr!.on("data", (chunk) => (stderr += String(chunk)))
      const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)))
      return { identity, child, stderr: () => stderr, exited }
    }),
    (r) =>
      Effect.promise(() => {
        if (r.child.exitCode === null && r.child.signalCode === null) r.child.kill("SIGINT")
        return r.exited
      })
  )

/** For `eventually`'s `giveUpIf`: why to stop waiting on a child process (it exited), if it did. */
export const exitedEarly = (process: { readonly child: ChildProcess }): string | undefined =>
  process.child.exitCode === null ? undefined : `the process exited (code ${process.child.exitCode})`

export const sleep = (ms: number) => Effect.promise(() => new Promise((resolve) => setTimeout(resolve, ms)))

#!/usr/bin/env node
/**
 * The `effect-informers` executable.
 *
 * @since 0.1.0
 */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as NodeServices from "@effect/platform-node/NodeServices"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Cli from "./Cli.js"

// `effect-informers watch ... | head`: once the reader has gone, end quietly as other command-line tools
// do, instead of crashing on the unhandled EPIPE with a stack trace.
for (const stream of [process.stdout, process.stderr]) {
  stream.on("error", (error: NodeJS.ErrnoException) => {
    if (error.code !== "EPIPE") throw error
    process.exit(0)
  })
}

// runMain's own listeners interrupt the command on these; this only notes that one came.
let signalled = false
for (const signal of ["SIGINT", "SIGTERM"] as const) process.once(signal, () => signalled = true)

Cli.run(process.argv).pipe(
  Effect.provide(NodeServices.layer),
  NodeRuntime.runMain({
    disableErrorReporting: true,
    // After a signal: the exit code the command set (the demo's 130 after Ctrl-C), where the default teardown
    // exits 0 whatever the command set. Otherwise a command that only set `process.exitCode` ends naturally,
    // once its output is written (runMain calls `process.exit` for a code other than 0).
    teardown: (exit, onExit) => {
      if (Exit.isFailure(exit) && !Cause.hasInterruptsOnly(exit.cause)) return onExit(1)
      const code = typeof process.exitCode === "number" ? process.exitCode : Number(process.exitCode ?? 0) || 0
      onExit(signalled ? code : 0)
    }
  })
)

#!/usr/bin/env node
/**
 * The `effect-informers` executable.
 *
 * @since 0.1.0
 */
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
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

Cli.run(process.argv).pipe(
  Effect.provide(NodeContext.layer),
  NodeRuntime.runMain({
    disableErrorReporting: true,
    // The exit code the command set (the demo's 130 after Ctrl-C, 1 after a user error), also when a signal
    // ended it: the default teardown exits 0 after a signal whatever the command set.
    teardown: (exit, onExit) =>
      onExit(
        Exit.isFailure(exit) && !Cause.isInterruptedOnly(exit.cause)
          ? 1
          : typeof process.exitCode === "number"
          ? process.exitCode
          : Number(process.exitCode ?? 0) || 0
      )
  })
)

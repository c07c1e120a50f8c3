/**
 * The `effect-informers` command line: `demo` (the embedded API server under churn and faults, watched by
 * informers; `npm start`), `serve` (the embedded API server alone), `watch` (an informer against any
 * cluster), `chaos` (the fault campaign; `npm run chaos`), and `replicate` (the example controller: a
 * ConfigMap replicator, see `Replicate`).
 *
 * @since 0.1.0
 */
import * as CliConfig from "@effect/cli/CliConfig"
import * as Command from "@effect/cli/Command"
import * as HelpDoc from "@effect/cli/HelpDoc"
import * as ValidationError from "@effect/cli/ValidationError"
import * as Cause from "effect/Cause"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as fs from "node:fs"
import { chaos } from "./commands/chaos.js"
import { demo } from "./commands/demo.js"
import { replicate } from "./commands/replicate.js"
import { serve } from "./commands/serve.js"
import { CliFailure, failureLine } from "./commands/shared.js"
import { watch } from "./commands/watch.js"

// -------------------------------------------------------------------------------------------------
// the application
// -------------------------------------------------------------------------------------------------

const root = Command.make("effect-informers").pipe(
  Command.withDescription(
    "Kubernetes informers for Effect: the demo, the embedded API server, an informer against any cluster, " +
      "the fault campaign and an example controller"
  ),
  Command.withSubcommands([demo, serve, watch, chaos, replicate])
)

/**
 * The CLI package's version, from its package.json (`../package.json` from `src/` and from `dist/`).
 *
 * @since 0.2.0
 * @category cli
 */
export const version: string = (JSON.parse(
  fs.readFileSync(new URL("../package.json", import.meta.url), "utf8")
) as { readonly version: string }).version

/**
 * Whether output to `stream` may carry ANSI colors: only to a terminal, and neither `NO_COLOR` (set and not
 * empty) nor `FORCE_COLOR=0` is in the environment.
 *
 * @since 0.2.0
 * @category cli
 */
export const colorsEnabled = (
  stream: { readonly isTTY?: boolean | undefined },
  env: { readonly [name: string]: string | undefined } = process.env
): boolean =>
  stream.isTTY === true && (env.NO_COLOR === undefined || env.NO_COLOR === "") &&
  env.FORCE_COLOR !== "0" && env.FORCE_COLOR !== "false"

// eslint-disable-next-line no-control-regex -- ANSI escapes are what it matches
const ansiEscape = /\x1b\[[0-9;?]*[ -/]*[@-~]/g

/** The help banner @effect/cli prints first: the name, then `name version`. */
const helpBanner = /^effect-informers\n\neffect-informers \S+/

/**
 * What @effect/cli prints, as this command line shows it: without ANSI escapes when `color` is off, and in
 * a help text, each usage line as the command is typed (`effect-informers demo [--pods integer] ...`, not
 * `$ demo ...`). Anything else passes through unchanged.
 *
 * @since 0.2.0
 * @category cli
 */
export const presentOutput = (text: string, color: boolean): string => {
  const plain = text.includes("\x1b") ? text.replace(ansiEscape, "") : text
  const out = color ? text : plain
  // `--version`: the version alone, without the blank line of its paragraph
  if (plain.length <= version.length + 4 && plain.trim() === version) return version
  if (!helpBanner.test(plain)) return out
  return out.trimEnd().replace(
    /^\$ (?:effect-informers(?= |$))?/gm,
    (match) => match === "$ " ? "effect-informers " : "effect-informers"
  )
}

/** The Console of `run`: what @effect/cli and the commands print, through `presentOutput`. */
const presentingConsole = (base: Console.Console): Console.Console => {
  const stdoutColor = colorsEnabled(process.stdout)
  const stderrColor = colorsEnabled(process.stderr)
  const present = (color: boolean) => (args: ReadonlyArray<unknown>) =>
    args.map((arg) => typeof arg === "string" ? presentOutput(arg, color) : arg)
  return {
    ...base,
    log: (...args) => base.log(...present(stdoutColor)(args)),
    error: (...args) => base.error(...present(stderrColor)(args))
  }
}

const footer = HelpDoc.p(
  "Every command takes -h/--help; effect-informers --version prints the version; " +
    "--completions sh|bash|fish|zsh prints a shell completion script."
)

/**
 * Runs the command line on `argv` (as `process.argv`). User errors print one line and set exit code 1;
 * interruption (Ctrl-C) closes every scope quietly, except the demo's, which prints its summary and sets
 * exit code 130. Output carries ANSI colors only to a terminal without `NO_COLOR`.
 *
 * @since 0.1.0
 * @category cli
 */
export const run = (argv: ReadonlyArray<string>) =>
  Effect.flatMap(Effect.console, (base) =>
    Command.run(root, { name: "effect-informers", version, footer })(argv).pipe(
      Effect.provide(CliConfig.layer({ showBuiltIns: false })),
      Effect.catchAllCause((cause) => {
        if (Cause.isInterruptedOnly(cause)) return Effect.void
        const failure = Cause.failureOption(cause)
        const setExitCode = Effect.sync(() => {
          process.exitCode = 1
        })
        // @effect/cli has already printed its own validation errors (unknown flag, bad value...).
        if (Option.isSome(failure) && ValidationError.isValidationError(failure.value)) return setExitCode
        const message = Option.isSome(failure)
          ? failure.value instanceof CliFailure ? failure.value.message : failureLine(failure.value)
          : Cause.pretty(cause)
        return Effect.zipRight(Console.error(`error: ${message}`), setExitCode)
      }),
      Effect.withConsole(presentingConsole(base))
    ))

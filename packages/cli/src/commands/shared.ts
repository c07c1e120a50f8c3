/**
 * What the commands share: option builders (durations, descriptions with their defaults, the connection to
 * a cluster, the fault level), user-facing failures and their one-line messages, resource names and JSON
 * output, and the lazy loader of the test kit. Apart from `Cli.ts`, which gathers the commands: a command
 * built when its module loads must not read bindings of a module that imports it.
 *
 * @since 0.2.0
 */
import * as CliError from "effect/cli/CliError"
import * as Flag from "effect/cli/Flag"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as WatchOutput from "../WatchOutput.js"

// -------------------------------------------------------------------------------------------------
// modules loaded by the commands that use them
// -------------------------------------------------------------------------------------------------

// The test kit (the API server, protobuf, YAML), the metrics server and the demo are imported by the commands that
// need them, not at start-up: `watch` starts without them (they were ~40% of its start-up time, measured
// with `node packages/cli/dist/bin.js --version`).
/** The test kit's ApiServer, Chaos and ChurnSimulator, imported when a command first needs them. */
export const loadTestkit = Effect.promise(() =>
  Promise.all([
    import("@effect-informers/testkit/ApiServer"),
    import("@effect-informers/testkit/Chaos"),
    import("@effect-informers/testkit/ChurnSimulator")
  ]).then(([ApiServer, Chaos, ChurnSimulator]) => ({ ApiServer, Chaos, ChurnSimulator }))
)

// -------------------------------------------------------------------------------------------------
// helpers
// -------------------------------------------------------------------------------------------------

const durationPattern = /^(\d+(?:\.\d+)?)(ms|s|m|h)?$/

/**
 * Parses `500ms`, `20s`, `2m`, `1h` (a bare number is seconds).
 *
 * @since 0.1.0
 * @category parsing
 */
export const parseDuration = (input: string): Result.Result<Duration.Duration, string> => {
  const match = durationPattern.exec(input.trim())
  if (match === null) return Result.fail(`invalid duration "${input}" (use e.g. 500ms, 20s, 2m)`)
  const value = Number(match[1])
  switch (match[2]) {
    case "ms":
      return Result.succeed(Duration.millis(value))
    case "m":
      return Result.succeed(Duration.minutes(value))
    case "h":
      return Result.succeed(Duration.hours(value))
    default:
      return Result.succeed(Duration.seconds(value))
  }
}

// The value names of the help (`--pods integer`, `--faults none | mild | chaos`), as the command line has
// always shown them; `Cli.ts` renders the help from them.

/** A flag taking text: `--NAME text`. */
export const text = (name: string): Flag.Flag<string> => Flag.String(name).pipe(Flag.withMetavar("text"))

/** A flag taking an integer: `--NAME integer`. */
export const integer = (name: string): Flag.Flag<number> => Flag.Int(name).pipe(Flag.withMetavar("integer"))

/** A flag taking a file's path (which need not exist): `--NAME file`. */
export const file = (name: string): Flag.Flag<string> => Flag.File(name).pipe(Flag.withMetavar("file"))

/** A flag without a value, off when absent: `--NAME`. */
export const boolean = (name: string): Flag.Flag<boolean> => Flag.Boolean(name).pipe(Flag.withDefault(false))

/** A flag taking one of `choices`: `--NAME a | b | c`. */
export const choice = <const Choices extends ReadonlyArray<string>>(
  name: string,
  choices: Choices
): Flag.Flag<Choices[number]> => Flag.Literals(name, choices).pipe(Flag.withMetavar(choices.join(" | ")))

/** A flag given any number of times, each with text: `--NAME text...`. */
export const repeatedText = (name: string): Flag.Flag<ReadonlyArray<string>> =>
  Flag.String(name).pipe(Flag.withMetavar("text..."), Flag.atLeast(0))

/** A flag taking a duration (`500ms`, `20s`, `2m`, `1h`; a bare number is seconds): `--NAME duration`. */
export const duration = (name: string): Flag.Flag<Duration.Duration> =>
  Flag.String(name).pipe(
    Flag.withMetavar("duration"),
    Flag.mapEffect((input) =>
      Result.match(parseDuration(input), {
        onFailure: (message) => Effect.fail(new CliError.ValidationError({ message })),
        onSuccess: Effect.succeed
      })
    )
  )

/** An option's description, with the default it has: `(default: ...)` ends every help entry. */
export const described = (description: string, byDefault: string) => <A>(self: Flag.Flag<A>): Flag.Flag<A> =>
  Flag.withDescription(self, `${description} (default: ${byDefault})`)

/** An optional option's description, with what happens without it. */
export const whenAbsent = (description: string, absent: string) => <A>(self: Flag.Flag<A>): Flag.Flag<A> =>
  Flag.withDescription(self, `${description} (default: ${absent})`)

/** A user-facing failure: printed as one line, exit code 1. */
export class CliFailure extends Error {}

/** Fails with a `CliFailure`. */
export const fail = (message: string) => Effect.fail(new CliFailure(message))

/** The message of an error, or the value as a string. */
export const messageOf = (error: unknown): string =>
  typeof error === "object" && error !== null && "message" in error && typeof error.message === "string"
    ? error.message
    : String(error)

/**
 * A message as one line: without the stack trace some messages carry (an `UnexpectedError` embeds its
 * cause's), and with any other line breaks folded into spaces.
 */
export const oneLine = (message: string): string => message.split(/\r?\n\s+at\s/)[0].replace(/\s*\r?\n\s*/g, " ").trim()

/**
 * A failure as the error line prints it: a library error with a reason named as kubectl names one
 * (`StatusError (NotFound, 404): ...`, `KubeConfigError (FileNotFound): ...`), any other by its message.
 */
export const failureLine = (error: unknown): string => {
  const reason = typeof error === "object" && error !== null
    ? (error as { readonly reason?: unknown }).reason
    : undefined
  return typeof reason === "string" ? WatchOutput.errorLine(error) : oneLine(messageOf(error))
}

/** A number rounded, with thousands separators. */
export const formatNumber = (n: number): string => Math.round(n).toLocaleString("en-US")

/** `--faults none|mild|chaos` (`demo` and `serve`). */
export const faultLevel = choice("faults", ["none", "mild", "chaos"])

/** How `watch` and `replicate` reach a cluster: a kubeconfig (and its context), or a bare server URL. */
export const connectionOptions = {
  kubeconfig: file("kubeconfig").pipe(
    Flag.optional,
    whenAbsent("the kubeconfig file", "$KUBECONFIG, else ~/.kube/config, else the in-cluster service account")
  ),
  context: text("context").pipe(
    Flag.optional,
    whenAbsent("the kubeconfig's context to use", "its current-context")
  ),
  server: text("server").pipe(
    Flag.optional,
    whenAbsent("an API server URL, without authentication, instead of a kubeconfig", "the kubeconfig's")
  )
}

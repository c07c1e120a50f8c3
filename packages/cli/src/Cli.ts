/**
 * The `effect-informers` command line: `demo` (the embedded API server under churn and faults, watched by
 * informers; `npm start`), `serve` (the embedded API server alone), `watch` (an informer against any
 * cluster), `chaos` (the fault campaign; `npm run chaos`), and `replicate` (the example controller: a
 * ConfigMap replicator, see `Replicate`).
 *
 * @since 0.1.0
 */
import * as Cause from "effect/Cause"
import * as CliConfig from "effect/cli/CliConfig"
import * as CliError from "effect/cli/CliError"
import * as CliOutput from "effect/cli/CliOutput"
import * as Command from "effect/cli/Command"
import * as Flag from "effect/cli/Flag"
import * as GlobalFlag from "effect/cli/GlobalFlag"
import type * as HelpDoc from "effect/cli/HelpDoc"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as fs from "node:fs"
import { chaos } from "./commands/chaos.js"
import { demo } from "./commands/demo.js"
import { replicate } from "./commands/replicate.js"
import { serve } from "./commands/serve.js"
import { CliFailure, failureLine, oneLine } from "./commands/shared.js"
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

/** The help banner first: the name, then `name version`. */
const helpBanner = /^effect-informers\n\neffect-informers \S+/

/**
 * What the command line prints, as it shows it: without ANSI escapes when `color` is off, and in a help
 * text, each usage line as the command is typed (`effect-informers demo [--pods integer] ...`, not
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

/** The Console of `run`: what the help and the commands print, through `presentOutput`. */
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

// -------------------------------------------------------------------------------------------------
// the help: each command's usage as typed, its arguments and options, each with its type, its
// description (ending with its default) and whether it is optional or repeatable
// -------------------------------------------------------------------------------------------------

const footer = "Every command takes -h/--help; effect-informers --version prints the version; " +
  "--completions sh|bash|fish|zsh prints a shell completion script."

const bold = (color: boolean) => (text: string): string => color ? `\x1b[1m${text}\x1b[0m` : text

/** A flag as the usage line and its OPTIONS entry name it: `--pods integer`, `(-o, --output events | json)`. */
const flagHeader = (flag: HelpDoc.FlagDoc): string => {
  const typed = flag.type === "boolean" ? `--${flag.name}` : `--${flag.name} ${flag.type}`
  return flag.aliases.length === 0 ? typed : `(${[...flag.aliases, typed].join(", ")})`
}

const usageOf = (doc: HelpDoc.HelpDoc, name: string): string =>
  [
    name,
    ...doc.flags.map((flag) => flag.required ? flagHeader(flag) : `[${flagHeader(flag)}]`),
    ...(doc.args ?? []).map((arg) => {
      const shown = `<${arg.name}>${arg.variadic ? "..." : ""}`
      return arg.required ? shown : `[${shown}]`
    })
  ].join(" ")

/** What a value of `type` is, in words. */
const typeLine = (type: string): string => {
  if (type.includes(" | ")) return `One of the following: ${type.split(" | ").join(", ")}`
  switch (type.replace(/\.\.\.$/, "")) {
    case "integer":
      return "An integer."
    case "file":
      return "A file."
    case "boolean":
      return "A true or false value."
    default:
      return "A user-defined piece of text."
  }
}

/** A description without the `(choices: ...)` the help of a choice gets: the type line names them. */
const descriptionOf = (description: Option.Option<string>): string | undefined =>
  Option.isSome(description) ? description.value.replace(/ \(choices: [^)]*\)$/, "") : undefined

/** A command's help document, as the framework builds it (`undefined` if this version does not expose it). */
const helpDocOf = (command: Command.Command.Any, path: ReadonlyArray<string>): HelpDoc.HelpDoc | undefined => {
  const build = (command as unknown as { readonly buildHelpDoc?: unknown }).buildHelpDoc
  return typeof build === "function"
    ? (build as (path: ReadonlyArray<string>) => HelpDoc.HelpDoc).call(command, path)
    : undefined
}

const formatHelp = (doc: HelpDoc.HelpDoc, color: boolean): string => {
  const heading = bold(color)
  const path = doc.commandPath ?? [root.name]
  const lines: Array<string> = [
    heading(root.name),
    "",
    `${root.name} ${version}`,
    "",
    heading("USAGE"),
    "",
    usageOf(doc, path.join(" ")),
    ""
  ]
  if (doc.description !== "") lines.push(heading("DESCRIPTION"), "", doc.description, "")
  if (doc.args !== undefined && doc.args.length > 0) {
    lines.push(heading("ARGUMENTS"), "")
    for (const arg of doc.args) {
      const description = descriptionOf(arg.description)
      lines.push(`<${arg.name}>${arg.variadic ? "..." : ""}`, "", `  ${typeLine(arg.type)}`, "")
      if (description !== undefined) lines.push(`  ${description}`, "")
    }
  }
  if (doc.flags.length > 0) {
    lines.push(heading("OPTIONS"), "")
    for (const flag of doc.flags) {
      const description = descriptionOf(flag.description)
      lines.push(flagHeader(flag), "", `  ${typeLine(flag.type)}`, "")
      if (description !== undefined) lines.push(`  ${description}`, "")
      if (flag.type.endsWith("...")) lines.push("  This option may be repeated zero or more times.", "")
      else if (!flag.required) lines.push("  This setting is optional.", "")
    }
  }
  const subcommands = (doc.subcommands ?? []).flatMap((group) => group.commands)
  if (subcommands.length > 0) {
    const rows = subcommands.map((sub) => {
      const command = root.subcommands.flatMap((group) => group.commands).find((c) => c.name === sub.name)
      const subDoc = command === undefined ? undefined : helpDocOf(command, [...path, sub.name])
      return {
        usage: `  - ${subDoc === undefined ? sub.name : usageOf(subDoc, sub.name)}`,
        description: sub.shortDescription ?? sub.description
      }
    })
    const width = Math.max(...rows.map((row) => row.usage.length))
    lines.push(heading("COMMANDS"), "")
    for (const row of rows) lines.push(`${row.usage.padEnd(width)}  ${row.description}`, "")
  }
  lines.push(footer)
  return lines.join("\n")
}

/**
 * A parse error as one line, worded as this command line has always worded them (`'many' is not a
 * integer`, `Expected to find option: '--identity'`...).
 */
const parseErrorLine = (error: CliError.CliError, doc: HelpDoc.HelpDoc): string => {
  switch (error._tag) {
    case "UnrecognizedOption":
      return `Received unknown argument: '${error.option}'`
    case "UnexpectedArgument":
      return `Received unknown argument: '${error.arguments[0] ?? ""}'`
    case "MissingOption":
      return `Expected to find option: '--${error.option}'`
    case "MissingArgument":
      return `Missing argument <${error.argument}>`
    case "UnknownSubcommand": {
      const names = root.subcommands.flatMap((group) => group.commands).map((command) => `'${command.name}'`)
      return `Invalid subcommand for ${root.name} - use one of ${names.join(", ")}`
    }
    case "InvalidValue": {
      const type = doc.flags.find((flag) => flag.name === error.option)?.type
      if (error.kind === "flag" && error.value !== "" && !error.value.endsWith(" occurrences")) {
        if (type === "integer") return `'${error.value}' is not a integer`
        if (type?.includes(" | ")) return `Expected one of the following cases: ${type.split(" | ").join(", ")}`
      }
      return oneLine(error.message)
    }
    default:
      return oneLine(error.message)
  }
}

/** The help, the version and parse errors as this command line prints them. */
const presenter = (color: boolean): CliOutput.Presenter => ({
  present: (event) => {
    switch (event._tag) {
      case "Help":
        return Console.log(formatHelp(event.helpDoc, color))
      case "Version":
        return Console.log(event.version)
      case "InvalidInvocation":
        return event.errors.length === 0
          ? Console.log(formatHelp(event.helpDoc, color))
          : Console.error(`${parseErrorLine(event.errors[0], event.helpDoc)}\n`)
    }
  }
})

/** `--version`, without the `-v` the framework adds (it has never been one of this command line's). */
const versionFlag = GlobalFlag.Action({
  flag: Flag.Boolean("version").pipe(Flag.withDescription("Show version information"), Flag.withDefault(false)),
  run: (_, context) =>
    Effect.flatMap(
      CliOutput.Presenter,
      (presenter) => presenter.present({ _tag: "Version", name: context.command.name, version: context.version })
    )
})

/** The built-in flags: `-h/--help`, `--version`, `--wizard`, `--completions` and `--log-level`, as before. */
const builtIns = GlobalFlag.BuiltIns.map((flag) => flag === GlobalFlag.Version ? versionFlag : flag)

/**
 * Runs the command line on `argv` (as `process.argv`). User errors print one line and set exit code 1;
 * interruption (Ctrl-C) closes every scope quietly, except the demo's, which prints its summary and sets
 * exit code 130. Output carries ANSI colors only to a terminal without `NO_COLOR`.
 *
 * @since 0.1.0
 * @category cli
 */
export const run = (argv: ReadonlyArray<string>) =>
  Console.consoleWith((base) =>
    Command.runWith(root, { version })(argv.slice(2)).pipe(
      Effect.provideService(CliOutput.Presenter, presenter(colorsEnabled(process.stdout))),
      Effect.provideService(CliConfig.CliConfig, CliConfig.make({ builtIns })),
      Effect.catchCause((cause) => {
        if (Cause.hasInterruptsOnly(cause)) return Effect.void
        const failure = Cause.findErrorOption(cause)
        const setExitCode = Effect.sync(() => {
          process.exitCode = 1
        })
        // the help (asked for, or a command line without a command) and parse errors are already printed
        if (Option.isSome(failure) && CliError.isCliError(failure.value) && failure.value._tag === "ShowHelp") {
          return failure.value.errors.length === 0 ? Effect.void : setExitCode
        }
        const message = Option.isSome(failure)
          ? failure.value instanceof CliFailure ? failure.value.message : failureLine(failure.value)
          : Cause.pretty(cause)
        return Effect.andThen(Console.error(`error: ${message}`), setExitCode)
      }),
      Effect.provideService(Console.Console, presentingConsole(base))
    )
  )

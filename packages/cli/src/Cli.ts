/**
 * The `effect-informers` command line: `demo` (the embedded API server under churn and faults, watched by
 * informers; `npm start`), `serve` (the embedded API server alone), `watch` (an informer against any
 * cluster), `chaos` (the fault campaign; `npm run chaos`), and `replicate` (the example controller: a
 * ConfigMap replicator, see `Replicate`).
 *
 * @since 0.1.0
 */
import type * as ApiServer from "@effect-informers/testkit/ApiServer"
import type * as Chaos from "@effect-informers/testkit/Chaos"
import * as Args from "@effect/cli/Args"
import * as CliConfig from "@effect/cli/CliConfig"
import * as Command from "@effect/cli/Command"
import * as HelpDoc from "@effect/cli/HelpDoc"
import * as Options from "@effect/cli/Options"
import * as ValidationError from "@effect/cli/ValidationError"
import type * as Client from "effect-informers/Client"
import { deletionHandlingMetaNamespaceKey } from "effect-informers/Indexer"
import * as InformerFactory from "effect-informers/InformerFactory"
import type { KubeConfig, KubeConfigError } from "effect-informers/KubeConfig"
import * as KubeObject from "effect-informers/KubeObject"
import * as Informers from "effect-informers/Layer"
import * as LeaderElection from "effect-informers/LeaderElection"
import type { ReflectorError } from "effect-informers/Reflector"
import * as Resource from "effect-informers/Resource"
import * as Sharding from "effect-informers/Sharding"
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Console from "effect/Console"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import * as fs from "node:fs"
import type * as Demo from "./Demo.js"
import * as WatchOutput from "./WatchOutput.js"

// -------------------------------------------------------------------------------------------------
// modules loaded by the commands that use them
// -------------------------------------------------------------------------------------------------

// The test kit (the API server, protobuf, YAML), OpenTelemetry and the demo are imported by the commands that
// need them, not at start-up: `watch` starts without them (they were ~40% of its start-up time, measured
// with `node packages/cli/dist/bin.js --version`).
const loadTestkit = Effect.promise(() =>
  Promise.all([
    import("@effect-informers/testkit/ApiServer"),
    import("@effect-informers/testkit/Chaos"),
    import("@effect-informers/testkit/ChurnSimulator")
  ]).then(([ApiServer, Chaos, ChurnSimulator]) => ({ ApiServer, Chaos, ChurnSimulator }))
)
const loadDemo = Effect.promise(() => import("./Demo.js"))
const loadMetrics = Effect.promise(() => import("./Metrics.js"))
const loadReplicate = Effect.promise(() => import("./Replicate.js"))
/** `Metrics.defaultHost`, without loading OpenTelemetry to print the help. */
const defaultMetricsHost = "127.0.0.1"

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
export const parseDuration = (input: string): Either.Either<Duration.Duration, string> => {
  const match = durationPattern.exec(input.trim())
  if (match === null) return Either.left(`invalid duration "${input}" (use e.g. 500ms, 20s, 2m)`)
  const value = Number(match[1])
  switch (match[2]) {
    case "ms":
      return Either.right(Duration.millis(value))
    case "m":
      return Either.right(Duration.minutes(value))
    case "h":
      return Either.right(Duration.hours(value))
    default:
      return Either.right(Duration.seconds(value))
  }
}

const duration = (name: string): Options.Options<Duration.Duration> =>
  Options.text(name).pipe(
    Options.withPseudoName("duration"),
    Options.mapEffect((text) =>
      Either.mapLeft(parseDuration(text), (message) => ValidationError.invalidValue(HelpDoc.p(message)))
    )
  )

/** An option's description, with the default it has: `(default: ...)` ends every help entry. */
const described = (description: string, byDefault: string) => <A>(self: Options.Options<A>): Options.Options<A> =>
  Options.withDescription(self, `${description} (default: ${byDefault})`)

/** An optional option's description, with what happens without it. */
const whenAbsent = (description: string, absent: string) => <A>(self: Options.Options<A>): Options.Options<A> =>
  Options.withDescription(self, `${description} (default: ${absent})`)

/** A user-facing failure: printed as one line, exit code 1. */
class CliFailure extends Error {}

const fail = (message: string) => Effect.fail(new CliFailure(message))

const messageOf = (error: unknown): string =>
  typeof error === "object" && error !== null && "message" in error && typeof error.message === "string"
    ? error.message
    : String(error)

/**
 * A message as one line: without the stack trace some messages carry (an `UnexpectedError` embeds its
 * cause's), and with any other line breaks folded into spaces.
 */
const oneLine = (message: string): string => message.split(/\r?\n\s+at\s/)[0].replace(/\s*\r?\n\s*/g, " ").trim()

/**
 * A failure as the error line prints it: a library error with a reason named as kubectl names one
 * (`StatusError (NotFound, 404): ...`, `KubeConfigError (FileNotFound): ...`), any other by its message.
 */
const failureLine = (error: unknown): string => {
  const reason = typeof error === "object" && error !== null
    ? (error as { readonly reason?: unknown }).reason
    : undefined
  return typeof reason === "string" ? WatchOutput.errorLine(error) : oneLine(messageOf(error))
}

const isTTY = process.stdout.isTTY === true

const formatNumber = (n: number): string => Math.round(n).toLocaleString("en-US")

/**
 * Resolves a resource name as kubectl does for the catalog (`pods`, `po`, `deployments.apps`, ...), or
 * `GROUP/VERSION/RESOURCE` (`VERSION/RESOURCE` for the core group) for anything else.
 *
 * @since 0.1.0
 * @category parsing
 */
export const resolveResource = (
  name: string,
  clusterScoped: boolean
): Either.Either<Resource.Resource<KubeObject.KubeObject>, string> => {
  const known = Resource.find(name)
  if (known !== undefined) return Either.right(known)
  const parts = name.split("/")
  if (parts.length === 2 || parts.length === 3) {
    const [group, version, resource] = parts.length === 3 ? parts : ["", parts[0], parts[1]]
    if (version !== "" && resource !== "") {
      return Either.right(Resource.make({ group, version, resource, kind: "", namespaced: !clusterScoped }))
    }
  }
  return Either.left(
    `unknown resource "${name}": use a built-in name (pods, deployments, ...) or GROUP/VERSION/RESOURCE`
  )
}

/**
 * Below this depth the fallback serializer of {@link stringifyJson} stops indenting: a deeper value is
 * written compactly, so that the output grows linearly with the depth (indenting a 6,000-deep object
 * two spaces per level would print 72 MB of spaces).
 */
const indentedLevels = 100

const isSkipped = (value: unknown): boolean =>
  value === undefined || typeof value === "function" || typeof value === "symbol"

/** What `JSON.stringify` serialises in place of `value`, held under `key`: `toJSON()`, then unboxed. */
const jsonValueOf = (value: unknown, key: string): unknown => {
  let result = value
  if ((typeof result === "object" && result !== null) || typeof result === "bigint") {
    const toJSON = (result as { readonly toJSON?: unknown }).toJSON
    if (typeof toJSON === "function") result = toJSON.call(result, key)
  }
  if (typeof result === "object" && result !== null) {
    if (result instanceof Number) return Number(result)
    if (result instanceof String) return String(result)
    if (result instanceof Boolean || result instanceof BigInt) return result.valueOf()
  }
  return result
}

const primitiveJson = (value: unknown): string => {
  switch (typeof value) {
    case "string":
      return JSON.stringify(value)
    case "number":
      return Number.isFinite(value) ? String(value) : "null"
    case "boolean":
      return value ? "true" : "false"
    case "bigint":
      throw new TypeError("Do not know how to serialize a BigInt")
    default:
      return "null"
  }
}

interface JsonFrame {
  readonly container: object
  /** `undefined` for an array. */
  readonly keys: ReadonlyArray<string> | undefined
  readonly length: number
  readonly depth: number
  index: number
  written: number
}

/** `JSON.stringify(value, null, indent)` with an explicit stack instead of recursion: any depth. */
const stringifyIteratively = (value: unknown, indent: number): string | undefined => {
  const top = jsonValueOf(value, "")
  if (isSkipped(top)) return undefined
  const parts: Array<string> = []
  const stack: Array<JsonFrame> = []
  const open = new Set<object>()
  const newlines: Array<string> = []
  const newline = (depth: number): string => newlines[depth] ??= `\n${" ".repeat(indent * depth)}`
  const emit = (v: unknown): void => {
    if (typeof v !== "object" || v === null) {
      parts.push(primitiveJson(v))
      return
    }
    if (open.has(v)) throw new TypeError("Converting circular structure to JSON")
    const keys = Array.isArray(v) ? undefined : Object.keys(v)
    const length = keys === undefined ? (v as ReadonlyArray<unknown>).length : keys.length
    parts.push(keys === undefined ? "[" : "{")
    open.add(v)
    stack.push({ container: v, keys, length, depth: stack.length, index: 0, written: 0 })
  }
  emit(top)
  while (stack.length > 0) {
    const frame = stack[stack.length - 1]
    const indented = indent > 0 && frame.depth < indentedLevels
    if (frame.index === frame.length) {
      stack.pop()
      open.delete(frame.container)
      const close = frame.keys === undefined ? "]" : "}"
      parts.push(frame.written > 0 && indented ? newline(frame.depth) + close : close)
      continue
    }
    const i = frame.index++
    const key = frame.keys === undefined ? String(i) : frame.keys[i]
    let member = jsonValueOf((frame.container as Record<string, unknown>)[key], key)
    if (isSkipped(member)) {
      if (frame.keys !== undefined) continue
      member = null
    }
    const separator = frame.written++ > 0 ? "," : ""
    const lead = indented ? newline(frame.depth + 1) : ""
    parts.push(
      frame.keys === undefined
        ? separator + lead
        : `${separator}${lead}${JSON.stringify(key)}${indented ? ": " : ":"}`
    )
    emit(member)
  }
  return parts.join("")
}

/**
 * `JSON.stringify(value, null, indent)`, also for values nested too deeply for it: when it overflows the
 * stack (a `RangeError`), an iterative serializer writes the same JSON, indenting the first 100 levels
 * and writing deeper ones compactly. It still throws what `JSON.stringify` throws otherwise (a cycle, a
 * `BigInt`) and when the result is longer than the longest string the engine can hold.
 *
 * @since 0.1.0
 * @category formatting
 */
export const stringifyJson = (value: unknown, indent = 0): string | undefined => {
  const spaces = Math.min(10, Math.max(0, Math.floor(indent)))
  try {
    return JSON.stringify(value, null, spaces)
  } catch (error) {
    if (!(error instanceof RangeError)) throw error
    return stringifyIteratively(value, spaces)
  }
}

// -------------------------------------------------------------------------------------------------
// demo
// -------------------------------------------------------------------------------------------------

const millisText = (d: Duration.Duration | undefined): string =>
  d === undefined ? "-" : `${formatNumber(Duration.toMillis(d))} ms`

const informerText = (informer: Demo.InformerProgress): string => {
  const state = informer.state === "backing off" && informer.backoffLeft !== undefined
    ? `backing off ${Duration.toSeconds(informer.backoffLeft).toFixed(1)}s`
    : informer.state
  return `${informer.name.split(" ")[0]} ${formatNumber(informer.cached)} ${state}`
}

/**
 * The demo's live line: each informer's cache size and state (watching, syncing, relisting, backing off
 * with the wait left), the event rate over the last 5 seconds, the total, relists, the handler lag (the
 * mean over the last 5 seconds, in ms), the handlers' backlog and the faults.
 *
 * @since 0.2.0
 * @category formatting
 */
export const renderProgress = (progress: Demo.Progress): string => {
  const informers = progress.informers.map(informerText).join(" · ")
  return `[${progress.phase} ${Duration.toSeconds(progress.elapsed).toFixed(1)}s] ${informers || "starting"} · ` +
    `${formatNumber(progress.eventsPerSecond)} events/s · ${formatNumber(progress.events)} events · ` +
    `relists ${progress.relists} · lag ${millisText(progress.lag)} · backlog ${formatNumber(progress.backlog)} · ` +
    `faults ${progress.faults}`
}

/** A progress report as JSON (durations in milliseconds): the demo's `--json-progress` lines. */
const progressJson = (progress: Demo.Progress) => ({
  type: "progress",
  phase: progress.phase,
  elapsedMs: Duration.toMillis(progress.elapsed),
  informers: progress.informers.map((i) => ({
    name: i.name,
    cached: i.cached,
    state: i.state,
    ...(i.backoffLeft === undefined ? {} : { backoffLeftMs: Duration.toMillis(i.backoffLeft) }),
    ...(i.error === undefined ? {} : { error: i.error })
  })),
  events: progress.events,
  eventsPerSecond: progress.eventsPerSecond,
  relists: progress.relists,
  lagMs: progress.lag === undefined ? null : Math.round(Duration.toMillis(progress.lag)),
  maxLagMs: progress.maxLag === undefined ? null : Math.round(Duration.toMillis(progress.maxLag)),
  backlog: progress.backlog,
  faults: progress.faults
})

const renderSummary = (summary: Demo.Summary): string => {
  const informers = summary.informers.map((r) =>
    `    ${r.consistent ? "ok " : "BAD"} ${r.informer}: ${r.cached} cached, ${r.server} on the server` +
    (r.differences.length === 0 ? "" : `\n        ${r.differences.join("\n        ")}`)
  )
  const faults = Object.entries(summary.faultsByClass).map(([tag, n]) => `${tag} ${n}`).join(", ")
  return [
    "",
    `Summary${summary.interrupted ? ` (interrupted after ${summary.churnSeconds.toFixed(1)}s)` : ""}: ${
      summary.consistent ? "every cache equals the server's state" : "CACHES DIFFER FROM THE SERVER"
    }`,
    ...informers,
    `  objects ${formatNumber(summary.objects)} · events ${formatNumber(summary.events)} · relists ${summary.relists}` +
    ` · faults ${summary.faults}${faults === "" ? "" : ` (${faults})`}`,
    `  churn: ${formatNumber(summary.churn.created)} created, ${formatNumber(summary.churn.updated)} updated, ` +
    `${formatNumber(summary.churn.deleted)} deleted · settled ${summary.settleSeconds.toFixed(1)}s after churn stopped`
  ].join("\n")
}

/** The exit code of a command ended by Ctrl-C (128 + SIGINT), as shells report it. */
const interruptedExitCode = 130

const faultLevel = Options.choice("faults", ["none", "mild", "chaos"])

const demo = Command.make("demo", {
  pods: Options.integer("pods").pipe(Options.withDefault(2000), described("pods to seed", "2000")),
  namespaces: Options.integer("namespaces").pipe(
    Options.withDefault(20),
    described("namespaces the pods are spread over", "20")
  ),
  deployments: Options.integer("deployments").pipe(Options.withDefault(200), described("deployments to seed", "200")),
  churn: Options.integer("churn").pipe(
    Options.withDefault(200),
    described("creates, updates and deletes of pods per second", "200")
  ),
  duration: duration("duration").pipe(
    Options.withDefault(Duration.seconds(20)),
    described("how long churn and faults run, e.g. 500ms, 20s, 2m", "20s")
  ),
  faults: faultLevel.pipe(
    Options.withDefault("mild" as const),
    described("faults the server injects meanwhile: none, mild or chaos", "mild")
  ),
  json: Options.boolean("json").pipe(
    described("print the summary as one JSON line instead of the live line and the text summary", "off")
  ),
  jsonProgress: Options.boolean("json-progress").pipe(
    described(
      "like --json, and before the summary one JSON line of progress ({\"type\":\"progress\",...}) a second",
      "off"
    )
  )
}, (options) =>
  Effect.gen(function*() {
    const json = options.json || options.jsonProgress
    let lastLine = 0
    let lastWidth = 0
    const onProgress = (progress: Demo.Progress) =>
      Effect.sync(() => {
        const now = Date.now()
        if (options.jsonProgress) {
          if (now - lastLine < 1000) return
          lastLine = now
          process.stdout.write(`${JSON.stringify(progressJson(progress))}\n`)
          return
        }
        if (json) return
        const line = renderProgress(progress)
        if (isTTY) {
          // rewritten in place: a carriage return, and spaces over what the longer previous line left
          process.stdout.write(`\r${line}${" ".repeat(Math.max(0, lastWidth - line.length))}`)
          lastWidth = line.length
        } else if (now - lastLine >= 2000) {
          lastLine = now
          process.stdout.write(`${line}\n`)
        }
      })
    if (!json) {
      yield* Console.log(
        `effect-informers demo: ${options.pods} pods in ${options.namespaces} namespaces, ${options.deployments} ` +
          `deployments, ${options.churn} changes/s for ${
            Duration.format(options.duration)
          }, faults: ${options.faults}` +
          " (Ctrl-C ends it early)"
      )
    }
    // Ctrl-C: the churn stops, the informers settle, the summary is printed, and the exit code is 130.
    const stop = yield* Deferred.make<void>()
    // in the command's scope, not a child fiber: the interruption of Ctrl-C must not reach it
    const Demo = yield* loadDemo
    const running = yield* Demo.run({ ...options, onProgress, stop: Deferred.await(stop) }).pipe(
      Effect.scoped,
      Effect.forkScoped
    )
    const summary = yield* Fiber.join(running).pipe(
      Effect.onInterrupt(() =>
        Effect.gen(function*() {
          yield* Deferred.succeed(stop, undefined)
          const exit = yield* Fiber.await(running)
          if (Exit.isSuccess(exit)) yield* printSummary(exit.value, json)
          process.exitCode = interruptedExitCode
        })
      )
    )
    yield* printSummary(summary, json)
    if (!summary.consistent) process.exitCode = 1
  }).pipe(Effect.scoped, Logger.withMinimumLogLevel(LogLevel.None))).pipe(
    Command.withDescription(
      "an embedded API server with a simulated cluster under churn and faults, watched by informers over HTTP " +
        "(npm start); Ctrl-C ends the churn early, prints the summary and exits 130"
    )
  )

const printSummary = (summary: Demo.Summary, json: boolean): Effect.Effect<void> =>
  json ? Console.log(JSON.stringify(summary)) : Console.log(renderSummary(summary))

// -------------------------------------------------------------------------------------------------
// serve
// -------------------------------------------------------------------------------------------------

/** Where `serve` listens: loopback only, as the embedded server does by default. */
const serveHost = "127.0.0.1"

/** What a failed `listen` said, in words, for the codes a user can cause. */
const listenErrors: { readonly [code: string]: string } = {
  EADDRINUSE: "address already in use",
  EACCES: "permission denied (ports below 1024 need privileges)",
  EADDRNOTAVAIL: "address not available",
  ERR_SOCKET_BAD_PORT: "not a valid port (0 to 65535)"
}

/**
 * The one line for a server that did not start: where, and why (`ServeError`'s own message is empty; its
 * cause is Node's `listen` error).
 */
const cannotServe = (host: string, port: number, error: { readonly _tag: string; readonly message: string }) => {
  const cause = error._tag === "ServeError" ? (error as { readonly cause?: unknown }).cause : undefined
  const code = typeof cause === "object" && cause !== null && "code" in cause && typeof cause.code === "string"
    ? cause.code
    : undefined
  const reason = code !== undefined && listenErrors[code] !== undefined
    ? `${listenErrors[code]} (${code})`
    : cause !== undefined
    ? oneLine(messageOf(cause)) || code || "unknown error"
    : oneLine(error.message) || error._tag
  return `cannot serve on ${host}:${port}: ${reason}`
}

const serve = Command.make("serve", {
  port: Options.integer("port").pipe(
    Options.withDefault(0),
    described("the port to listen on, on 127.0.0.1; 0 picks a free one", "0")
  ),
  pods: Options.integer("pods").pipe(Options.withDefault(0), described("pods to seed", "0")),
  namespaces: Options.integer("namespaces").pipe(
    Options.withDefault(1),
    described("namespaces the seeded pods are spread over", "1")
  ),
  deployments: Options.integer("deployments").pipe(Options.withDefault(0), described("deployments to seed", "0")),
  churn: Options.integer("churn").pipe(
    Options.withDefault(0),
    described("creates, updates and deletes of pods per second", "0, no churn")
  ),
  faults: faultLevel.pipe(
    Options.withDefault("none" as const),
    described("faults injected all along: none, mild or chaos", "none")
  ),
  inject: Options.text("inject").pipe(
    Options.repeated,
    whenAbsent(
      "a fault to inject at start, e.g. drop-watches or throttle:retry-after=5 (repeatable)",
      "none injected"
    )
  ),
  auditLog: Options.file("audit-log").pipe(
    Options.optional,
    whenAbsent(
      "append one JSON line per write request (create, update, patch, delete, deletecollection, status) to FILE: " +
        "time, verb, resource, subresource, namespace, name, user, userAgent, code; never bodies or credentials",
      "no audit log"
    )
  )
}, (options) =>
  Effect.gen(function*() {
    if (options.port < 0 || options.port > 65535) {
      return yield* fail(`cannot serve on ${serveHost}:${options.port}: not a port (0 to 65535; 0 picks a free one)`)
    }
    const { ApiServer, Chaos, ChurnSimulator } = yield* loadTestkit
    const faults: Array<ApiServer.Fault> = []
    for (const text of options.inject) {
      const fault = ApiServer.parseFault(text)
      if (Either.isLeft(fault)) return yield* fail(fault.left.message)
      faults.push(fault.right)
    }
    const server = yield* ApiServer.make({ port: options.port, auditLog: Option.getOrUndefined(options.auditLog) })
      .pipe(
        Effect.mapError((e) => new CliFailure(cannotServe(serveHost, options.port, e)))
      )
    if (options.pods > 0 || options.deployments > 0) {
      yield* ChurnSimulator.seed(server, {
        pods: options.pods,
        namespaces: options.namespaces,
        deployments: options.deployments
      }).pipe(Effect.mapError((e) => new CliFailure(`seeding failed: ${e.message}`)))
    }
    for (const fault of faults) yield* server.faults.inject(fault)
    if (options.churn > 0) yield* Effect.forkScoped(ChurnSimulator.run(server, { rate: options.churn }))
    yield* Effect.forkScoped(Chaos.injectFaults(server, options.faults))
    yield* Console.log(`serving the Kubernetes API on ${server.url}`)
    yield* Console.log(`try: kubectl --server ${server.url} get pods -A`)
    return yield* Effect.never
  }).pipe(Effect.scoped, Logger.withMinimumLogLevel(LogLevel.Warning))).pipe(
    Command.withDescription(
      "the embedded Kubernetes API server alone, until interrupted (kubectl --server URL works against it)"
    )
  )

// -------------------------------------------------------------------------------------------------
// watch
// -------------------------------------------------------------------------------------------------

/** `NAMESPACE/NAME` of an object for a message, whatever the object is. */
const keyForMessage = (obj: KubeObject.DeletedObject<KubeObject.KubeObject>): string => {
  try {
    return Either.getOrElse(deletionHandlingMetaNamespaceKey(obj), () => "<unknown>")
  } catch {
    return "<unknown>"
  }
}

/**
 * The one stderr line for an object that cannot be printed; the command goes on with the next event or
 * object.
 */
const cannotPrint = (
  resource: Resource.Resource<KubeObject.KubeObject>,
  obj: KubeObject.DeletedObject<KubeObject.KubeObject>,
  error: unknown
): string => `warning: cannot print ${resource.resource} ${keyForMessage(obj)}: ${oneLine(messageOf(error))}`

/**
 * `watch --output json`: the cache as one JSON array, as `JSON.stringify(objects, null, 2)` prints it. An
 * object nested too deeply for `JSON.stringify` is printed by {@link stringifyJson}'s fallback; one that
 * cannot be printed at all (longer than the engine's longest string) is left out, with one line on stderr.
 */
const printCache = (
  resource: Resource.Resource<KubeObject.KubeObject>,
  objects: ReadonlyArray<KubeObject.KubeObject>
): Effect.Effect<void> =>
  Effect.suspend(() => {
    try {
      return Console.log(JSON.stringify(objects, null, 2))
    } catch {
      // object by object, below
    }
    const printed: Array<string> = []
    const warnings: Array<string> = []
    for (const obj of objects) {
      try {
        const text = stringifyJson(obj, 2) ?? "null"
        printed.push(`  ${text.replaceAll("\n", "\n  ")}`)
      } catch (error) {
        warnings.push(cannotPrint(resource, obj, error))
      }
    }
    // line by line rather than one string: the whole array may be longer than the longest string
    return Effect.zipRight(
      Effect.forEach(warnings, (line) => Console.error(line), { discard: true }),
      printed.length === 0 ? Console.log("[]") : Effect.zipRight(
        Console.log("["),
        Effect.forEach(
          printed,
          (text, i) => Console.log(i === printed.length - 1 ? `${text}\n]` : `${text},`),
          { discard: true }
        )
      )
    )
  })

/** How long `watch --output json` waits for the cache to sync without a `--duration`. */
const jsonSyncTimeout = Duration.seconds(30)

/**
 * The informer's sync state after `after`: nothing when it has synced, else a `NotSyncedError` with the
 * last error it saw, as one line for the user.
 */
const requireSynced = (factory: InformerFactory.InformerFactory.Service, after: Duration.Duration) =>
  Effect.flatMap(factory.status, (statuses) => {
    const unsynced = statuses.find((status) => !status.synced)
    return unsynced === undefined ? Effect.void : Effect.fail(notSynced(after, unsynced.lastError))
  })

const notSynced = (after: Duration.Duration, lastError: Option.Option<ReflectorError>): CliFailure =>
  new CliFailure(oneLine(new WatchOutput.NotSyncedError({ after, lastError }).message))

/** How `watch` and `replicate` reach a cluster: a kubeconfig (and its context), or a bare server URL. */
const connectionOptions = {
  kubeconfig: Options.file("kubeconfig").pipe(
    Options.optional,
    whenAbsent("the kubeconfig file", "$KUBECONFIG, else ~/.kube/config, else the in-cluster service account")
  ),
  context: Options.text("context").pipe(
    Options.optional,
    whenAbsent("the kubeconfig's context to use", "its current-context")
  ),
  server: Options.text("server").pipe(
    Options.optional,
    whenAbsent("an API server URL, without authentication, instead of a kubeconfig", "the kubeconfig's")
  )
}

const watch = Command.make("watch", {
  resource: Args.text({ name: "RESOURCE" }).pipe(
    Args.withDescription("pods, deployments, ... or GROUP/VERSION/RESOURCE")
  ),
  namespace: Options.text("namespace").pipe(
    Options.withAlias("n"),
    Options.optional,
    whenAbsent("watch only this namespace", "every namespace")
  ),
  selector: Options.text("selector").pipe(
    Options.withAlias("l"),
    Options.optional,
    whenAbsent("a label selector, e.g. app=web,tier!=db", "every object")
  ),
  fieldSelector: Options.text("field-selector").pipe(
    Options.optional,
    whenAbsent("a field selector, e.g. status.phase=Running", "every object")
  ),
  ...connectionOptions,
  clusterScoped: Options.boolean("cluster-scoped").pipe(
    described("for GROUP/VERSION/RESOURCE: the resource is cluster-scoped", "off, namespaced")
  ),
  output: Options.choice("output", ["events", "json"]).pipe(
    Options.withAlias("o"),
    Options.withDefault("events"),
    described("events: a line per notification as it arrives; json: the cached objects, once synced", "events")
  ),
  duration: duration("duration").pipe(
    Options.optional,
    whenAbsent(
      "stop after this long, from the start (events: exit 0 if the cache synced, else 1 with the last error; json: print the cache then, or exit 1 with the last error if it has not synced)",
      "events: until Ctrl-C; json: as soon as the cache has synced, at most 30s"
    )
  )
}, (options) =>
  Effect.gen(function*() {
    const resource = Either.getOrElse(
      Either.mapLeft(resolveResource(options.resource, options.clusterScoped), (message) => message),
      () => undefined
    )
    if (resource === undefined) {
      return yield* fail(Either.getLeft(resolveResource(options.resource, false)).pipe(Option.getOrElse(() => "")))
    }
    const kubeConfig: Layer.Layer<KubeConfig, KubeConfigError> = Option.isSome(options.server)
      ? Informers.kubeConfigFromOptions({ server: options.server.value })
      : Option.isSome(options.kubeconfig)
      ? Informers.kubeConfigFromFile(options.kubeconfig.value, { context: Option.getOrUndefined(options.context) })
      : Informers.kubeConfigFromDefault({ context: Option.getOrUndefined(options.context) })
    // Made before the informers: its scope closes after theirs, so that every line printed gets out.
    const output = yield* WatchOutput.make({ destination: process.stdout })
    const context = yield* Layer.build(Informers.fromKubeConfig(kubeConfig)).pipe(
      Effect.mapError((e) => new CliFailure(failureLine(e)))
    )
    const factory = Context.get(context, InformerFactory.InformerFactory)
    const informer = yield* factory.informerFor(resource, {
      namespace: Option.getOrUndefined(options.namespace),
      labelSelector: Option.getOrUndefined(options.selector),
      fieldSelector: Option.getOrUndefined(options.fieldSelector)
    }).pipe(Effect.mapError((e) => new CliFailure(failureLine(e))))
    // Errors are never fatal to the informer: report each as one line and keep going.
    yield* informer.errors.pipe(
      Stream.runForEach(({ context: where, error }) =>
        Console.error(`warning: ${where.phase}: ${WatchOutput.errorLine(error)}`)
      ),
      Effect.forkScoped
    )
    if (options.output === "events") {
      // Whatever printing an event throws is one line on stderr, never the end of the command (nor a
      // handler failure, which the informer would log with its stack trace).
      const print = (type: string, obj: KubeObject.DeletedObject<KubeObject.KubeObject>): Effect.Effect<void> => {
        let text: string
        try {
          text = WatchOutput.eventLine(type, obj)
        } catch (error) {
          return Console.error(cannotPrint(resource, obj, error))
        }
        return output.line(text)
      }
      yield* informer.addEventHandler({
        name: "cli",
        onAdd: (obj, initial) => print(initial ? "EXISTING" : "ADDED", obj),
        onUpdate: (_, obj) => print("MODIFIED", obj),
        onDelete: (obj) => print(KubeObject.isDeletedFinalStateUnknown(obj) ? "DELETED?" : "DELETED", obj)
      })
    }
    yield* factory.start
    const started = yield* Clock.currentTimeMillis
    if (options.output === "json") {
      // An informer that cannot sync (unreachable server, 403, unknown resource) fails the command with
      // the last error it saw, by --duration when one is given.
      const wanted = Option.getOrElse(options.duration, () => Duration.zero)
      const timeout = Option.getOrElse(options.duration, () => jsonSyncTimeout)
      yield* factory.waitForCacheSync({ timeout }).pipe(
        Effect.mapError((e) =>
          e.reason === "Timeout" && e.informers.length > 0
            ? notSynced(timeout, e.informers[0].lastError)
            : new CliFailure(oneLine(e.message))
        )
      )
      const remaining = Duration.toMillis(wanted) - ((yield* Clock.currentTimeMillis) - started)
      if (remaining > 0) yield* Effect.sleep(Duration.millis(remaining))
      const objects = (yield* informer.indexer.list).slice().sort((a, b) => {
        const ka = `${a.metadata?.namespace ?? ""}/${a.metadata?.name ?? ""}`
        const kb = `${b.metadata?.namespace ?? ""}/${b.metadata?.name ?? ""}`
        return ka < kb ? -1 : ka > kb ? 1 : 0
      })
      yield* printCache(resource, objects).pipe(
        Effect.catchAllCause((cause) =>
          fail(`cannot print the cache of ${resource.resource}: ${oneLine(messageOf(Cause.squash(cause)))}`)
        )
      )
      return
    }
    // The duration counts from the start, so that a watch that never syncs still ends on time; it then
    // fails with the last error the informer saw.
    if (Option.isNone(options.duration)) return yield* Effect.never
    yield* Effect.sleep(options.duration.value)
    yield* requireSynced(factory, options.duration.value)
  }).pipe(Effect.scoped, Logger.withMinimumLogLevel(LogLevel.Error))).pipe(
    Command.withDescription("an informer against a cluster: print each notification, or the cache as JSON")
  )

// -------------------------------------------------------------------------------------------------
// chaos
// -------------------------------------------------------------------------------------------------

const pad = (text: string | number, width: number): string => String(text).padEnd(width)

const faultSummary = (result: Chaos.Result): string =>
  [
    ...Object.entries(result.faultsByClass).map(([tag, n]) => `${tag} ${n}`),
    ...(result.compactions > 0 ? [`compaction ${result.compactions}`] : [])
  ].join(", ")

const chaos = Command.make("chaos", {
  seeds: Options.integer("seeds").pipe(Options.withDefault(20), described("how many seeds (runs) to play", "20")),
  firstSeed: Options.integer("first-seed").pipe(
    Options.withDefault(1),
    described("the first seed; the others follow it", "1")
  ),
  duration: duration("duration").pipe(
    Options.withDefault(Duration.seconds(30)),
    described("how long each seed's churn and faults run", "30s")
  ),
  pods: Options.integer("pods").pipe(Options.withDefault(1000), described("pods to seed", "1000")),
  namespaces: Options.integer("namespaces").pipe(
    Options.withDefault(10),
    described("namespaces the pods are spread over", "10")
  ),
  churn: Options.integer("churn").pipe(
    Options.withDefault(200),
    described("creates, updates and deletes of pods per second", "200")
  ),
  json: Options.boolean("json").pipe(described("one JSON line per seed instead of the table", "off"))
}, (options) =>
  Effect.gen(function*() {
    if (!options.json) {
      yield* Console.log(
        `fault campaign: ${options.seeds} seeds x ${Duration.format(options.duration)}, ${options.pods} pods, ` +
          `${options.churn} changes/s, every fault class (node ${process.version}` +
          `${typeof (globalThis as { gc?: unknown }).gc === "function" ? ", --expose-gc" : ""})`
      )
      yield* Console.log(
        `${pad("seed", 5)} ${pad("result", 7)} ${pad("events", 8)} ${pad("relists", 8)} ${pad("errors", 7)} ` +
          `${pad("settle", 7)} ${pad("heap MiB (synced/peak/end)", 27)} faults by class`
      )
    }
    const { Chaos } = yield* loadTestkit
    let failed = 0
    for (let seed = options.firstSeed; seed < options.firstSeed + options.seeds; seed++) {
      const result = yield* Chaos.run({
        seed,
        duration: options.duration,
        pods: options.pods,
        namespaces: options.namespaces,
        churn: options.churn
      }).pipe(Effect.mapError((e) => new CliFailure(e.message)))
      if (!result.passed) failed++
      if (options.json) {
        yield* Console.log(JSON.stringify(result))
        continue
      }
      yield* Console.log(
        `${pad(seed, 5)} ${pad(result.passed ? "pass" : "FAIL", 7)} ${pad(formatNumber(result.events), 8)} ` +
          `${pad(result.relists, 8)} ${pad(result.errorsReported, 7)} ${
            pad(`${result.settleSeconds.toFixed(1)}s`, 7)
          } ` +
          `${pad(`${result.heapMiB.synced}/${result.heapMiB.peak}/${result.heapMiB.end}`, 27)} ${faultSummary(result)}`
      )
      for (const problem of result.problems) yield* Console.log(`      ${problem}`)
    }
    if (!options.json) yield* Console.log(`${options.seeds - failed}/${options.seeds} seeds passed`)
    if (failed > 0) process.exitCode = 1
  }).pipe(Logger.withMinimumLogLevel(LogLevel.None))).pipe(
    Command.withDescription(
      "the fault campaign: informers over HTTP against the embedded server under churn and faults"
    )
  )

// -------------------------------------------------------------------------------------------------
// replicate
// -------------------------------------------------------------------------------------------------

const replicate = Command.make("replicate", {
  ...connectionOptions,
  identity: Options.text("identity").pipe(
    Options.withDescription(
      "this replica's name, put in the User-Agent of its requests and in its Leases (required)"
    )
  ),
  concurrency: Options.integer("concurrency").pipe(
    Options.withDefault(4),
    described("reconciles at once", "4")
  ),
  leaderElect: Options.boolean("leader-elect").pipe(
    described(
      "reconcile only while holding the Lease effect-informers-replicate (followers stay warm)",
      "off, every replica reconciles"
    )
  ),
  sharded: Options.boolean("sharded").pipe(
    described(
      "split the sources across replicas by membership Leases named after --identity",
      "off, every replica reconciles every source"
    )
  ),
  leaseNamespace: Options.text("lease-namespace").pipe(
    Options.withDefault("default"),
    described("the namespace of the election's and the shards' Leases", "default")
  ),
  leaseDuration: duration("lease-duration").pipe(
    Options.optional,
    whenAbsent("how long a Lease lasts without renewal", "15s, client-go's")
  ),
  renewDeadline: duration("renew-deadline").pipe(
    Options.optional,
    whenAbsent("how long a leader retries renewing before it steps down", "10s, client-go's")
  ),
  retryPeriod: duration("retry-period").pipe(
    Options.optional,
    whenAbsent("the wait between attempts to acquire or renew", "2s, client-go's")
  ),
  metricsPort: Options.integer("metrics-port").pipe(
    Options.optional,
    whenAbsent(
      "serve the metrics in the Prometheus text format at http://HOST:PORT/metrics (0: any free port)",
      "no metrics server"
    )
  ),
  metricsHost: Options.text("metrics-host").pipe(
    Options.withDefault(defaultMetricsHost),
    described("the address the metrics are served on (0.0.0.0: every interface)", defaultMetricsHost)
  )
}, (options) =>
  Effect.gen(function*() {
    if (Option.isSome(options.server) && Option.isSome(options.kubeconfig)) {
      return yield* fail("give --server or --kubeconfig, not both")
    }
    if (Option.isSome(options.metricsPort)) {
      // first: a port in use ends the command before it connects to anything
      const Metrics = yield* loadMetrics
      const metrics = yield* Metrics.serve({
        port: options.metricsPort.value,
        host: options.metricsHost,
        serviceName: "effect-informers-replicate"
      }).pipe(Effect.mapError((e) => new CliFailure(e.message)))
      yield* Console.error(`replicate: ${options.identity}: metrics at ${metrics.url}`)
    }
    const Replicate = yield* loadReplicate
    const layer = Replicate.layer({
      identity: options.identity,
      server: Option.getOrUndefined(options.server),
      kubeconfig: Option.getOrUndefined(options.kubeconfig),
      context: Option.getOrUndefined(options.context)
    })
    const context = yield* Layer.build(layer).pipe(Effect.mapError((e) => new CliFailure(failureLine(e))))
    if (options.leaderElect && options.sharded) return yield* fail("give --leader-elect or --sharded, not both")
    if (options.leaderElect || options.sharded) {
      // campaign once the caches are synced (as controller-runtime's manager does): a new leader can
      // reconcile at once
      yield* Effect.all([
        Context.get(context, Informers.ConfigMaps).informer.synced,
        Context.get(context, Informers.Namespaces).informer.synced
      ]).pipe(Effect.mapError((e) => new CliFailure(failureLine(e))))
    }
    const coordination = {
      identity: options.identity,
      namespace: options.leaseNamespace,
      leaseDuration: Option.getOrUndefined(options.leaseDuration),
      renewDeadline: Option.getOrUndefined(options.renewDeadline),
      retryPeriod: Option.getOrUndefined(options.retryPeriod)
    }
    /** Builds `layer` over the informers' context and reports its state changes, one line each, on stderr. */
    const coordinate = <I, S>(
      layer: Layer.Layer<I, unknown, Client.Client>,
      tag: Context.Tag<I, S>,
      changes: (service: S) => Stream.Stream<string>
    ) =>
      Effect.gen(function*() {
        const built = yield* Layer.build(layer).pipe(
          Effect.provide(context),
          Effect.mapError((e) => new CliFailure(failureLine(e)))
        )
        const service = Context.get(built, tag)
        yield* changes(service).pipe(
          Stream.changes,
          Stream.runForEach((line) => Console.error(`replicate: ${options.identity}: ${line}`)),
          Effect.forkScoped
        )
        return service
      })
    const election = options.leaderElect
      ? yield* coordinate(
        Replicate.leaderElectionLayer(coordination),
        LeaderElection.LeaderElection,
        (service) => Stream.map(service.changes, (state) => state._tag)
      )
      : undefined
    const sharding = options.sharded
      ? yield* coordinate(
        Replicate.shardingLayer(coordination),
        Sharding.Sharding,
        (service) =>
          Stream.map(
            service.changes,
            (change) => `${change.current.status}, members ${change.current.members.join(",")}`
          )
      )
      : undefined
    yield* Replicate.make({ concurrency: options.concurrency, leaderElection: election, sharding }).pipe(
      Effect.provide(context),
      Effect.mapError((e) => new CliFailure(failureLine(e)))
    )
    yield* Console.error(`replicate: ${options.identity}: running`)
    return yield* Effect.never
  }).pipe(Effect.scoped)).pipe(
    Command.withDescription(
      "copy ConfigMaps labelled replicate=true into namespaces labelled replicate-into=true, until interrupted"
    )
  )

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

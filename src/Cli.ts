/**
 * The `effect-informers` command line: `demo` (the embedded API server under churn and faults, watched by
 * informers; `npm start`), `serve` (the embedded API server alone), `watch` (an informer against any
 * cluster), and `chaos` (the fault campaign; `npm run chaos`).
 *
 * @since 0.1.0
 */
import * as Args from "@effect/cli/Args"
import * as Command from "@effect/cli/Command"
import * as HelpDoc from "@effect/cli/HelpDoc"
import * as Options from "@effect/cli/Options"
import * as ValidationError from "@effect/cli/ValidationError"
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Console from "effect/Console"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import * as ApiServer from "./ApiServer.js"
import * as Chaos from "./Chaos.js"
import * as ChurnSimulator from "./ChurnSimulator.js"
import * as Demo from "./Demo.js"
import { deletionHandlingMetaNamespaceKey } from "./Indexer.js"
import * as InformerFactory from "./InformerFactory.js"
import type { KubeConfig, KubeConfigError } from "./KubeConfig.js"
import * as KubeObject from "./KubeObject.js"
import * as Informers from "./Layer.js"
import * as Resource from "./Resource.js"

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
    Options.mapEffect((text) =>
      Either.mapLeft(parseDuration(text), (message) => ValidationError.invalidValue(HelpDoc.p(message)))
    )
  )

/** A user-facing failure: printed as one line, exit code 1. */
class CliFailure extends Error {}

const fail = (message: string) => Effect.fail(new CliFailure(message))

const messageOf = (error: unknown): string =>
  typeof error === "object" && error !== null && "message" in error && typeof error.message === "string"
    ? error.message
    : String(error)

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

// -------------------------------------------------------------------------------------------------
// demo
// -------------------------------------------------------------------------------------------------

const renderProgress = (progress: Demo.Progress): string => {
  const cached = Object.entries(progress.cached).map(([name, n]) => `${name.split(" ")[0]} ${n}`).join(" · ")
  return `[${progress.phase} ${Duration.toSeconds(progress.elapsed).toFixed(1)}s] ${cached || "starting"} · ` +
    `${formatNumber(progress.eventsPerSecond)} events/s · ${formatNumber(progress.events)} events · ` +
    `relists ${progress.relists} · lag ${progress.handlerLag} · faults ${progress.faults}`
}

const renderSummary = (summary: Demo.Summary): string => {
  const informers = summary.informers.map((r) =>
    `    ${r.consistent ? "ok " : "BAD"} ${r.informer}: ${r.cached} cached, ${r.server} on the server` +
    (r.differences.length === 0 ? "" : `\n        ${r.differences.join("\n        ")}`)
  )
  const faults = Object.entries(summary.faultsByClass).map(([tag, n]) => `${tag} ${n}`).join(", ")
  return [
    "",
    `Summary: ${summary.consistent ? "every cache equals the server's state" : "CACHES DIFFER FROM THE SERVER"}`,
    ...informers,
    `  objects ${formatNumber(summary.objects)} · events ${formatNumber(summary.events)} · relists ${summary.relists}` +
    ` · faults ${summary.faults}${faults === "" ? "" : ` (${faults})`}`,
    `  churn: ${formatNumber(summary.churn.created)} created, ${formatNumber(summary.churn.updated)} updated, ` +
    `${formatNumber(summary.churn.deleted)} deleted · settled ${summary.settleSeconds.toFixed(1)}s after churn stopped`
  ].join("\n")
}

const faultLevel = Options.choice("faults", ["none", "mild", "chaos"]).pipe(
  Options.withDescription("fault injection: none, mild or chaos")
)

const demo = Command.make("demo", {
  pods: Options.integer("pods").pipe(Options.withDefault(2000), Options.withDescription("pods to seed")),
  namespaces: Options.integer("namespaces").pipe(Options.withDefault(20)),
  deployments: Options.integer("deployments").pipe(Options.withDefault(200)),
  churn: Options.integer("churn").pipe(Options.withDefault(200), Options.withDescription("changes per second")),
  duration: duration("duration").pipe(Options.withDefault(Duration.seconds(20))),
  faults: faultLevel.pipe(Options.withDefault("mild" as const)),
  json: Options.boolean("json").pipe(Options.withDescription("print the summary as one JSON line"))
}, (options) =>
  Effect.gen(function*() {
    let lastLine = 0
    const onProgress = (progress: Demo.Progress) =>
      Effect.sync(() => {
        if (options.json) return
        const line = renderProgress(progress)
        if (isTTY) process.stdout.write(`\r\x1b[2K${line}`)
        else if (Date.now() - lastLine >= 2000) {
          lastLine = Date.now()
          process.stdout.write(`${line}\n`)
        }
      })
    if (!options.json) {
      yield* Console.log(
        `effect-informers demo: ${options.pods} pods in ${options.namespaces} namespaces, ${options.deployments} ` +
          `deployments, ${options.churn} changes/s for ${Duration.format(options.duration)}, faults: ${options.faults}`
      )
    }
    const summary = yield* Demo.run({ ...options, onProgress }).pipe(Effect.scoped)
    if (options.json) yield* Console.log(JSON.stringify(summary))
    else yield* Console.log(renderSummary(summary))
    if (!summary.consistent) process.exitCode = 1
  }).pipe(Logger.withMinimumLogLevel(LogLevel.None))).pipe(
    Command.withDescription(
      "an embedded API server with a simulated cluster under churn and faults, watched by informers over HTTP"
    )
  )

// -------------------------------------------------------------------------------------------------
// serve
// -------------------------------------------------------------------------------------------------

const serve = Command.make("serve", {
  port: Options.integer("port").pipe(Options.withDefault(0), Options.withDescription("0 picks a free port")),
  pods: Options.integer("pods").pipe(Options.withDefault(0)),
  namespaces: Options.integer("namespaces").pipe(Options.withDefault(1)),
  deployments: Options.integer("deployments").pipe(Options.withDefault(0)),
  churn: Options.integer("churn").pipe(Options.withDefault(0), Options.withDescription("changes per second")),
  faults: faultLevel.pipe(Options.withDefault("none" as const)),
  inject: Options.text("inject").pipe(
    Options.repeated,
    Options.withDescription("a fault to inject at start, e.g. drop-watches or throttle:retry-after=5 (repeatable)")
  )
}, (options) =>
  Effect.gen(function*() {
    const faults: Array<ApiServer.Fault> = []
    for (const text of options.inject) {
      const fault = ApiServer.parseFault(text)
      if (Either.isLeft(fault)) return yield* fail(fault.left.message)
      faults.push(fault.right)
    }
    const server = yield* ApiServer.make({ port: options.port }).pipe(
      Effect.mapError((e) => new CliFailure(`cannot serve: ${e.message}`))
    )
    if (options.pods > 0 || options.deployments > 0) {
      yield* ChurnSimulator.seed(server, {
        pods: options.pods,
        namespaces: options.namespaces,
        deployments: options.deployments
      }).pipe(Effect.mapError((e) => new CliFailure(`seeding failed: ${e.message}`)))
    }
    for (const fault of faults) yield* server.inject(fault)
    if (options.churn > 0) yield* Effect.forkScoped(ChurnSimulator.run(server, { rate: options.churn }))
    yield* Effect.forkScoped(Demo.injectFaults(server, options.faults))
    yield* Console.log(`serving the Kubernetes API on ${server.url}`)
    yield* Console.log(`try: kubectl --server ${server.url} get pods -A`)
    return yield* Effect.never
  }).pipe(Effect.scoped, Logger.withMinimumLogLevel(LogLevel.Warning))).pipe(
    Command.withDescription("the embedded Kubernetes API server alone, until interrupted")
  )

// -------------------------------------------------------------------------------------------------
// watch
// -------------------------------------------------------------------------------------------------

const describeObject = (obj: KubeObject.DeletedObject<KubeObject.KubeObject>): string => {
  const key = deletionHandlingMetaNamespaceKey(obj)
  const name = Either.getOrElse(key, () => "<unknown>")
  const unwrapped = KubeObject.unwrapDeleted(obj)
  const rv = unwrapped === undefined ? undefined : KubeObject.resourceVersion(unwrapped)
  return `${name}${rv === undefined ? "" : ` rv=${rv}`}`
}

/** How long `watch --output json` waits for the cache to sync (or `--duration`, when longer). */
const jsonSyncTimeout = Duration.seconds(30)

const watch = Command.make("watch", {
  resource: Args.text({ name: "RESOURCE" }).pipe(
    Args.withDescription("pods, deployments, ... or GROUP/VERSION/RESOURCE")
  ),
  namespace: Options.text("namespace").pipe(Options.withAlias("n"), Options.optional),
  selector: Options.text("selector").pipe(Options.withAlias("l"), Options.optional),
  fieldSelector: Options.text("field-selector").pipe(Options.optional),
  kubeconfig: Options.file("kubeconfig").pipe(Options.optional),
  context: Options.text("context").pipe(Options.optional),
  server: Options.text("server").pipe(Options.optional, Options.withDescription("API server URL (no auth)")),
  clusterScoped: Options.boolean("cluster-scoped").pipe(
    Options.withDescription("for GROUP/VERSION/RESOURCE: the resource is cluster-scoped")
  ),
  output: Options.choice("output", ["events", "json"]).pipe(Options.withAlias("o"), Options.withDefault("events")),
  duration: duration("duration").pipe(
    Options.optional,
    Options.withDescription(
      "stop after this long (events: from the start, synced or not; json: print the cache then, once synced)"
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
    const context = yield* Layer.build(Informers.fromKubeConfig(kubeConfig)).pipe(
      Effect.mapError((e) => new CliFailure(e.message))
    )
    const factory = Context.get(context, InformerFactory.InformerFactory)
    const informer = yield* factory.informerFor(resource, {
      namespace: Option.getOrUndefined(options.namespace),
      labelSelector: Option.getOrUndefined(options.selector),
      fieldSelector: Option.getOrUndefined(options.fieldSelector)
    }).pipe(Effect.mapError((e) => new CliFailure(e.message)))
    // Errors are never fatal to the informer: report each as one line and keep going.
    yield* informer.errors.pipe(
      Stream.runForEach(({ context: where, error }) =>
        Console.error(`warning: ${where.phase}: ${error._tag}: ${error.message}`)
      ),
      Effect.forkScoped
    )
    if (options.output === "events") {
      const print = (type: string, obj: KubeObject.DeletedObject<KubeObject.KubeObject>) =>
        Console.log(`${type.padEnd(8)} ${describeObject(obj)}`)
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
      // the last error it saw instead of waiting forever.
      const wanted = Option.getOrElse(options.duration, () => Duration.zero)
      yield* factory.waitForCacheSync({ timeout: Duration.max(wanted, jsonSyncTimeout) }).pipe(
        Effect.mapError((e) => new CliFailure(e.message))
      )
      const remaining = Duration.toMillis(wanted) - ((yield* Clock.currentTimeMillis) - started)
      if (remaining > 0) yield* Effect.sleep(Duration.millis(remaining))
      const objects = (yield* informer.indexer.list).slice().sort((a, b) => {
        const ka = `${a.metadata?.namespace ?? ""}/${a.metadata?.name ?? ""}`
        const kb = `${b.metadata?.namespace ?? ""}/${b.metadata?.name ?? ""}`
        return ka < kb ? -1 : ka > kb ? 1 : 0
      })
      yield* Console.log(JSON.stringify(objects, null, 2))
      return
    }
    // The duration counts from the start, so that a watch that never syncs still ends on time.
    if (Option.isSome(options.duration)) yield* Effect.sleep(options.duration.value)
    else yield* Effect.never
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
  seeds: Options.integer("seeds").pipe(Options.withDefault(20)),
  firstSeed: Options.integer("first-seed").pipe(Options.withDefault(1)),
  duration: duration("duration").pipe(Options.withDefault(Duration.seconds(30))),
  pods: Options.integer("pods").pipe(Options.withDefault(1000)),
  namespaces: Options.integer("namespaces").pipe(Options.withDefault(10)),
  churn: Options.integer("churn").pipe(Options.withDefault(200), Options.withDescription("changes per second")),
  json: Options.boolean("json").pipe(Options.withDescription("one JSON line per seed"))
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
// the application
// -------------------------------------------------------------------------------------------------

const root = Command.make("effect-informers").pipe(
  Command.withDescription("Kubernetes informers for Effect"),
  Command.withSubcommands([demo, serve, watch, chaos])
)

/**
 * Runs the command line on `argv` (as `process.argv`). User errors print one line and set exit code 1;
 * interruption (Ctrl-C) closes every scope quietly.
 *
 * @since 0.1.0
 * @category cli
 */
export const run = (argv: ReadonlyArray<string>) =>
  Command.run(root, { name: "effect-informers", version: "0.1.0" })(argv).pipe(
    Effect.catchAllCause((cause) => {
      if (Cause.isInterruptedOnly(cause)) return Effect.void
      const failure = Cause.failureOption(cause)
      const setExitCode = Effect.sync(() => {
        process.exitCode = 1
      })
      // @effect/cli has already printed its own validation errors (unknown flag, bad value...).
      if (Option.isSome(failure) && ValidationError.isValidationError(failure.value)) return setExitCode
      const message = Option.isSome(failure)
        ? failure.value instanceof CliFailure ? failure.value.message : messageOf(failure.value)
        : Cause.pretty(cause)
      return Effect.zipRight(Console.error(`error: ${message}`), setExitCode)
    })
  )

/**
 * The `watch` command: an informer against any cluster, its events (or, with `--output`, its synced cache)
 * printed as `WatchOutput` formats them.
 *
 * @since 0.2.0
 */
import { deletionHandlingMetaNamespaceKey } from "effect-informers/Indexer"
import * as InformerFactory from "effect-informers/InformerFactory"
import type { KubeConfig, KubeConfigError } from "effect-informers/KubeConfig"
import * as KubeObject from "effect-informers/KubeObject"
import * as Informers from "effect-informers/Layer"
import type { ReflectorError } from "effect-informers/Reflector"
import * as Resource from "effect-informers/Resource"
import * as Cause from "effect/Cause"
import * as Argument from "effect/cli/Argument"
import * as Command from "effect/cli/Command"
import * as Flag from "effect/cli/Flag"
import * as Clock from "effect/Clock"
import * as Console from "effect/Console"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as References from "effect/References"
import * as Result from "effect/Result"
import * as Stream from "effect/Stream"
import * as WatchOutput from "../WatchOutput.js"
import {
  boolean,
  choice,
  CliFailure,
  connectionOptions,
  described,
  duration,
  fail,
  failureLine,
  messageOf,
  oneLine,
  text,
  whenAbsent
} from "./shared.js"

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
): Result.Result<Resource.Resource<KubeObject.KubeObject>, string> => {
  const known = Resource.find(name)
  if (known !== undefined) return Result.succeed(known)
  const parts = name.split("/")
  if (parts.length === 2 || parts.length === 3) {
    const [group, version, resource] = parts.length === 3 ? parts : ["", parts[0], parts[1]]
    if (version !== "" && resource !== "") {
      return Result.succeed(Resource.make({ group, version, resource, kind: "", namespaced: !clusterScoped }))
    }
  }
  return Result.fail(
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

/** `NAMESPACE/NAME` of an object for a message, whatever the object is. */
const keyForMessage = (obj: KubeObject.DeletedObject<KubeObject.KubeObject>): string => {
  try {
    return Result.getOrElse(deletionHandlingMetaNamespaceKey(obj), () => "<unknown>")
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
    return Effect.andThen(
      Effect.forEach(warnings, (line) => Console.error(line), { discard: true }),
      printed.length === 0 ? Console.log("[]") : Effect.andThen(
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

/**
 * The `watch` command.
 *
 * @since 0.2.0
 * @category commands
 */
export const watch = Command.make("watch", {
  resource: Argument.String("RESOURCE").pipe(
    Argument.withDescription("pods, deployments, ... or GROUP/VERSION/RESOURCE")
  ),
  namespace: text("namespace").pipe(
    Flag.withAlias("n"),
    Flag.optional,
    whenAbsent("watch only this namespace", "every namespace")
  ),
  selector: text("selector").pipe(
    Flag.withAlias("l"),
    Flag.optional,
    whenAbsent("a label selector, e.g. app=web,tier!=db", "every object")
  ),
  fieldSelector: text("field-selector").pipe(
    Flag.optional,
    whenAbsent("a field selector, e.g. status.phase=Running", "every object")
  ),
  ...connectionOptions,
  clusterScoped: boolean("cluster-scoped").pipe(
    described("for GROUP/VERSION/RESOURCE: the resource is cluster-scoped", "off, namespaced")
  ),
  output: choice("output", ["events", "json"]).pipe(
    Flag.withAlias("o"),
    Flag.withDefault("events"),
    described("events: a line per notification as it arrives; json: the cached objects, once synced", "events")
  ),
  duration: duration("duration").pipe(
    Flag.optional,
    whenAbsent(
      "stop after this long, from the start (events: exit 0 if the cache synced, else 1 with the last error; json: print the cache then, or exit 1 with the last error if it has not synced)",
      "events: until Ctrl-C; json: as soon as the cache has synced, at most 30s"
    )
  )
}, (options) =>
  Effect.gen(function*() {
    const resolved = resolveResource(options.resource, options.clusterScoped)
    if (Result.isFailure(resolved)) return yield* fail(resolved.failure)
    const resource = resolved.success
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
      fieldSelector: Option.getOrUndefined(options.fieldSelector),
      // a resource the server does not serve (404) is retried as any error, not a stop: the command waits
      reflector: { stopOnResourceGone: false }
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
        // appended in the call: the handler answers with an `Exit` (no turn of its fiber) unless a write is due
        return output.lineUnsafe(text)
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
        Effect.catchCause((cause) =>
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
  }).pipe(Effect.scoped, Effect.provideService(References.MinimumLogLevel, "Error"))).pipe(
    Command.withDescription("an informer against a cluster: print each notification, or the cache as JSON")
  )

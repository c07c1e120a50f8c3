/**
 * The `serve` command: the embedded API server alone, seeded, with churn and faults if asked; the test kit
 * is loaded when the command runs.
 *
 * @since 0.2.0
 */
import type * as ApiServer from "@effect-informers/testkit/ApiServer"
import * as Command from "effect/cli/Command"
import * as Flag from "effect/cli/Flag"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as References from "effect/References"
import * as Result from "effect/Result"
import {
  CliFailure,
  described,
  fail,
  faultLevel,
  file,
  integer,
  loadTestkit,
  messageOf,
  oneLine,
  repeatedText,
  whenAbsent
} from "./shared.js"

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

/**
 * The `serve` command.
 *
 * @since 0.2.0
 * @category commands
 */
export const serve = Command.make("serve", {
  port: integer("port").pipe(
    Flag.withDefault(0),
    described("the port to listen on, on 127.0.0.1; 0 picks a free one", "0")
  ),
  pods: integer("pods").pipe(Flag.withDefault(0), described("pods to seed", "0")),
  namespaces: integer("namespaces").pipe(
    Flag.withDefault(1),
    described("namespaces the seeded pods are spread over", "1")
  ),
  deployments: integer("deployments").pipe(Flag.withDefault(0), described("deployments to seed", "0")),
  churn: integer("churn").pipe(
    Flag.withDefault(0),
    described("creates, updates and deletes of pods per second", "0, no churn")
  ),
  faults: faultLevel.pipe(
    Flag.withDefault("none" as const),
    described("faults injected all along: none, mild or chaos", "none")
  ),
  inject: repeatedText("inject").pipe(
    whenAbsent(
      "a fault to inject at start, e.g. drop-watches or throttle:retry-after=5 (repeatable)",
      "none injected"
    )
  ),
  auditLog: file("audit-log").pipe(
    Flag.optional,
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
      if (Result.isFailure(fault)) return yield* fail(fault.failure.message)
      faults.push(fault.success)
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
  }).pipe(Effect.scoped, Effect.provideService(References.MinimumLogLevel, "Warn"))).pipe(
    Command.withDescription(
      "the embedded Kubernetes API server alone, until interrupted (kubectl --server URL works against it)"
    )
  )

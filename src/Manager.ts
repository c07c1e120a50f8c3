/**
 * A Manager runs several controllers on one informer factory, as controller-runtime's manager does, with
 * the health and readiness probes a Deployment points its `livenessProbe` and `readinessProbe` at:
 *
 * - `GET /healthz`: 200 `ok` while the manager runs (and every health check added passes);
 * - `GET /readyz`: 200 `ok` once every controller has started (its sources synced) and every readiness
 *   check passes; 503 with the names of what is not ready otherwise. `?verbose` lists every check.
 *
 * Controllers start concurrently in the manager's scope; one that fails to start (a source that never
 * syncs) fails the manager. Closing the scope stops the controllers (each lets its reconciles finish within
 * its `shutdownTimeout`), then the probes.
 *
 * @example
 * ```ts
 * import { Controller, Informers, Manager } from "effect-informers"
 * import { Effect } from "effect"
 *
 * const program = Effect.gen(function*() {
 *   const configMaps = yield* Informers.ConfigMaps
 *   const secrets = yield* Informers.Secrets
 *   yield* Manager.make({
 *     probes: { port: 8081 },
 *     controllers: [
 *       Controller.make({ name: "configmaps", for: configMaps, reconcile: () => Effect.void }),
 *       Controller.make({ name: "secrets", for: secrets, reconcile: () => Effect.void })
 *     ]
 *   })
 *   return yield* Effect.never
 * }).pipe(Effect.scoped)
 * ```
 *
 * @since 0.2.0
 */
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as Scope from "effect/Scope"
import * as Http from "node:http"
import type { AddressInfo } from "node:net"
import type * as Controller from "./Controller.js"

/**
 * A named check: `true` when it passes.
 *
 * @since 0.2.0
 * @category models
 */
export interface Check {
  readonly name: string
  readonly check: Effect.Effect<boolean>
}

/**
 * @since 0.2.0
 * @category models
 */
export interface Options<R> {
  /** Controllers, started concurrently (`Controller.make(...)` effects). */
  readonly controllers: ReadonlyArray<Effect.Effect<Controller.Controller, Controller.ControllerError, R | Scope.Scope>>
  /** Serve `/healthz` and `/readyz` on this port (0: any free one) and host (default `0.0.0.0`). */
  readonly probes?: { readonly port: number; readonly host?: string | undefined } | undefined
  readonly healthChecks?: ReadonlyArray<Check> | undefined
  readonly readyChecks?: ReadonlyArray<Check> | undefined
}

/**
 * @since 0.2.0
 * @category models
 */
export interface Manager {
  readonly controllers: ReadonlyArray<Controller.Controller>
  /** Where the probes are served (`http://host:port`), when they are. */
  readonly probesUrl: string | undefined
  /** What `/readyz` answers: every check, passing or not. */
  readonly readiness: Effect.Effect<ReadonlyArray<{ readonly name: string; readonly ok: boolean }>>
}

/**
 * The probes could not be served (the port is in use...).
 *
 * @since 0.2.0
 * @category errors
 */
export class ProbeServerError extends Data.TaggedError("ProbeServerError")<{ readonly message: string }> {}

/** A check that does not answer within this long fails. */
const checkTimeout = "5 seconds"

const runChecks = (checks: ReadonlyArray<Check>) =>
  Effect.forEach(
    checks,
    (c) =>
      c.check.pipe(
        Effect.catchDefect(() => Effect.succeed(false)),
        Effect.timeoutOrElse({ duration: checkTimeout, orElse: () => Effect.succeed(false) }),
        Effect.map((ok) => ({ name: c.name, ok }))
      ),
    { concurrency: "unbounded" }
  )

const plain = "text/plain; charset=utf-8"

/** What a probe answers: 200 `ok` when every check passes, 503 and the failing ones otherwise. */
const answer = (
  checks: ReadonlyArray<{ readonly name: string; readonly ok: boolean }>,
  verbose: boolean
): HttpServerResponse.HttpServerResponse => {
  const failing = checks.filter((c) => !c.ok)
  const body = verbose
    ? checks.map((c) => `[${c.ok ? "+" : "-"}]${c.name} ${c.ok ? "ok" : "failed"}`).join("\n") + "\n"
    : failing.length === 0
    ? "ok"
    : failing.map((c) => `[-]${c.name} failed`).join("\n") + "\n"
  return HttpServerResponse.text(body, { status: failing.length === 0 ? 200 : 503, contentType: plain })
}

const notFound = HttpServerResponse.text("not found\n", { status: 404, contentType: "text/plain" })

/**
 * Starts the probes (if asked), then the controllers, in the current scope; succeeds once every controller
 * has started.
 *
 * @since 0.2.0
 * @category constructors
 */
export const make = <R>(
  options: Options<R>
): Effect.Effect<Manager, Controller.ControllerError | ProbeServerError, R | Scope.Scope> =>
  Effect.gen(function*() {
    let pending = options.controllers.length
    const readyChecks: ReadonlyArray<Check> = [
      { name: "controllers", check: Effect.sync(() => pending === 0) },
      ...(options.readyChecks ?? [])
    ]
    const healthChecks: ReadonlyArray<Check> = [
      { name: "ping", check: Effect.succeed(true) },
      ...(options.healthChecks ?? [])
    ]
    const readiness = runChecks(readyChecks)

    let probesUrl: string | undefined
    if (options.probes !== undefined) {
      const host = options.probes.host ?? "0.0.0.0"
      const port = options.probes.port
      // each request is answered by a fiber of the server's scope (the manager's: interrupted when it
      // closes), its checks each bounded
      const probes = Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
        const url = new URL(request.url, "http://probe")
        const checks = url.pathname === "/healthz" || url.pathname === "/livez"
          ? healthChecks
          : url.pathname === "/readyz"
          ? readyChecks
          : undefined
        if (checks === undefined || (request.method !== "GET" && request.method !== "HEAD")) {
          return Effect.succeed(notFound)
        }
        return runChecks(checks).pipe(
          Effect.map((results) => answer(results, url.searchParams.has("verbose"))),
          Effect.catchCause(() => Effect.succeed(answer([{ name: "checks", ok: false }], false)))
        )
      })
      const node = Http.createServer()
      const server = yield* NodeHttpServer.make(() => node, { port, host }).pipe(
        Effect.mapError((e) =>
          new ProbeServerError({
            message: `cannot serve the probes on ${host}:${port}: ${
              e.cause instanceof Error ? e.cause.message : String(e.cause)
            }`
          })
        )
      )
      yield* server.serve(probes)
      // closing: the open connections first (kept-alive ones would hold the close up), then the server
      yield* Effect.addFinalizer(() => Effect.sync(() => node.closeAllConnections()))
      probesUrl = `http://${host === "0.0.0.0" ? "127.0.0.1" : host}:${(node.address() as AddressInfo).port}`
    }

    // each controller in a scope of its own, all closed together (each drains within its own deadline)
    const parent = yield* Scope.fork(yield* Effect.scope, "parallel")
    const controllers = yield* Effect.forEach(options.controllers, (make) =>
      Effect.flatMap(Scope.fork(parent, "sequential"), (own) =>
        Effect.tap(Scope.provide(make, own), () =>
          Effect.sync(() => void pending--))), { concurrency: "unbounded" })

    return { controllers, probesUrl, readiness }
  })

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
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as ExecutionStrategy from "effect/ExecutionStrategy"
import * as FiberSet from "effect/FiberSet"
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
        Effect.catchAllDefect(() => Effect.succeed(false)),
        Effect.timeoutTo({ duration: checkTimeout, onTimeout: () => false, onSuccess: (ok) => ok }),
        Effect.map((ok) => ({ name: c.name, ok }))
      ),
    { concurrency: "unbounded" }
  )

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
      // the checks run as fibers of the manager's scope (interrupted when it closes), each bounded
      const runCheck = yield* FiberSet.makeRuntimePromise<never>()
      const answer = (
        res: Http.ServerResponse,
        checks: ReadonlyArray<{ readonly name: string; readonly ok: boolean }>,
        verbose: boolean
      ) => {
        const failing = checks.filter((c) => !c.ok)
        const body = verbose
          ? checks.map((c) => `[${c.ok ? "+" : "-"}]${c.name} ${c.ok ? "ok" : "failed"}`).join("\n") + "\n"
          : failing.length === 0
          ? "ok"
          : failing.map((c) => `[-]${c.name} failed`).join("\n") + "\n"
        res.writeHead(failing.length === 0 ? 200 : 503, { "content-type": "text/plain; charset=utf-8" })
        res.end(body)
      }
      const server = Http.createServer((req, res) => {
        const url = new URL(req.url ?? "/", "http://probe")
        const checks = url.pathname === "/healthz" || url.pathname === "/livez"
          ? healthChecks
          : url.pathname === "/readyz"
          ? readyChecks
          : undefined
        if (checks === undefined || (req.method !== "GET" && req.method !== "HEAD")) {
          res.writeHead(404, { "content-type": "text/plain" })
          res.end("not found\n")
          return
        }
        runCheck(runChecks(checks)).then(
          (results) => answer(res, results, url.searchParams.has("verbose")),
          () => answer(res, [{ name: "checks", ok: false }], false)
        )
      })
      const host = options.probes.host ?? "0.0.0.0"
      const port = yield* Effect.acquireRelease(
        Effect.async<number, ProbeServerError>((resume) => {
          server.once("error", (e) =>
            resume(
              Effect.fail(
                new ProbeServerError({
                  message: `cannot serve the probes on ${host}:${options.probes!.port}: ${e.message}`
                })
              )
            ))
          server.listen(
            options.probes!.port,
            host,
            () => resume(Effect.succeed((server.address() as AddressInfo).port))
          )
        }),
        () =>
          Effect.async<void>((resume) => {
            server.closeAllConnections()
            server.close(() => resume(Effect.void))
          })
      )
      probesUrl = `http://${host === "0.0.0.0" ? "127.0.0.1" : host}:${port}`
    }

    // each controller in a scope of its own, all closed together (each drains within its own deadline)
    const parent = yield* Scope.fork(yield* Effect.scope, ExecutionStrategy.parallel)
    const controllers = yield* Effect.forEach(options.controllers, (make) =>
      Effect.flatMap(Scope.fork(parent, ExecutionStrategy.sequential), (own) =>
        Effect.tap(Scope.extend(make, own), () =>
          Effect.sync(() => void pending--))), { concurrency: "unbounded" })

    return { controllers, probesUrl, readiness }
  })

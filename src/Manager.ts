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
import * as Runtime from "effect/Runtime"
import type * as Scope from "effect/Scope"
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

const runChecks = (checks: ReadonlyArray<Check>) =>
  Effect.forEach(
    checks,
    (c) =>
      Effect.map(
        Effect.orElseSucceed(Effect.catchAllDefect(c.check, () => Effect.succeed(false)), () => false),
        (ok) => ({ name: c.name, ok })
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
    const started = new Set<string>()
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
      const runtime = yield* Effect.runtime<never>()
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
        Runtime.runPromiseExit(runtime)(runChecks(checks)).then((exit) => {
          if (exit._tag === "Success") answer(res, exit.value, url.searchParams.has("verbose"))
          else answer(res, [{ name: "checks", ok: false }], false)
        })
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

    const controllers = yield* Effect.forEach(options.controllers, (make) =>
      Effect.tap(make, (controller) =>
        Effect.sync(() => {
          started.add(controller.name)
          pending--
        })), { concurrency: "unbounded" })

    return { controllers, probesUrl, readiness }
  })

/**
 * The embedded API server's audit log: one record per mutating request (create, update, patch, delete,
 * deletecollection, their subresources) and per write of its controllers, to a function or, as JSON lines,
 * to a file. Records never hold a request body nor a credential: the user is the impersonated one, when a
 * request names it (`Impersonate-User`), or a controller's service account.
 *
 * @internal
 */
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import * as fs from "node:fs"

/**
 * One record of the audit log (the public `ApiServer.AuditEvent`).
 *
 * @internal
 */
export interface AuditEvent {
  /** When the answer was sent, ISO 8601 (UTC, milliseconds). */
  readonly time: string
  /** The Kubernetes verb: `create`, `update`, `patch`, `delete` or `deletecollection`. */
  readonly verb: string
  /** The API group, `""` for the core group. */
  readonly group: string
  readonly version: string
  /** The resource, plural: `pods`, `deployments`... */
  readonly resource: string
  /** `status` (or `finalize`) for a write of a subresource. */
  readonly subresource?: string | undefined
  readonly namespace?: string | undefined
  /** The object's name; for a create, the name given or generated (absent when the create failed without one). */
  readonly name?: string | undefined
  /** The user, when known: the `Impersonate-User` of the request, or a controller's service account. */
  readonly user?: string | undefined
  readonly userAgent?: string | undefined
  /** The HTTP status of the answer. */
  readonly code: number
}

/** @internal */
export type AuditSink = (record: AuditEvent) => void

/** Buffered bytes that trigger a write before the period is up. */
const FLUSH_BYTES = 64 * 1024

/**
 * A sink appending one JSON line per record to `path`: lines are buffered and written every `period`
 * (or sooner once 64 KiB are waiting) by a fiber of the scope; when the scope closes, what is left is
 * written and the file closed.
 *
 * @internal
 */
export const fileSink = (path: string, period: Duration.Duration): Effect.Effect<AuditSink, Error, Scope.Scope> =>
  Effect.gen(function*() {
    const fd = yield* Effect.acquireRelease(
      Effect.callback<number, Error>((resume) => {
        fs.open(path, "a", (error, fd) => resume(error ? Effect.fail(error) : Effect.succeed(fd)))
      }),
      (fd) =>
        Effect.callback<void>((resume) => {
          fs.close(fd, () => resume(Effect.void))
        })
    )
    let lines: Array<string> = []
    let bytes = 0
    let wake: (() => void) | undefined
    let warned = false
    const write = Effect.suspend(() => {
      if (lines.length === 0) return Effect.void
      const text = lines.join("")
      lines = []
      bytes = 0
      return Effect.callback<void>((resume) => {
        fs.write(fd, text, null, "utf8", (error) => {
          if (error && !warned) {
            warned = true
            resume(Effect.logWarning(`ApiServer: the audit log ${path} could not be written: ${error.message}`))
          } else resume(Effect.void)
        })
      })
    })
    // the last lines are written before the file is closed (finalizers run in reverse order)
    yield* Effect.addFinalizer(() => write)
    // woken by the first line of a batch, and by a full buffer
    const signal = Effect.callback<void>((resume) => {
      wake = () => resume(Effect.void)
      return Effect.sync(() => {
        wake = undefined
      })
    })
    yield* Effect.gen(function*() {
      for (;;) {
        if (lines.length === 0) yield* signal
        if (bytes < FLUSH_BYTES) yield* Effect.raceFirst(Effect.sleep(period), signal)
        // an interruption waits for a write under way: it must end before the last one and the close
        yield* Effect.uninterruptible(write)
      }
    }).pipe(Effect.interruptible, Effect.forkScoped)
    return (record: AuditEvent) => {
      const line = JSON.stringify(record) + "\n"
      lines.push(line)
      bytes += line.length
      const w = wake
      if (w !== undefined && (lines.length === 1 || bytes >= FLUSH_BYTES)) {
        wake = undefined
        w()
      }
    }
  })

/** The verbs that write. @internal */
export const mutatingVerbs: ReadonlySet<string> = new Set(["create", "update", "patch", "delete", "deletecollection"])

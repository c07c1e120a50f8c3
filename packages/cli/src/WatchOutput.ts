/**
 * The output of `effect-informers watch --output events`: one line per notification, written in batches,
 * the error of a watch that did not sync in time, and how the warning and error lines name an error
 * (`StatusError (InternalError, 500): etcd is sad`).
 *
 * A write per line costs a system call per event, which through a pipe made the command slower than the
 * informer under it. A {@link LineWriter} appends each line to a buffer and writes the buffer as one chunk
 * when it reaches `maxBytes` (64 KiB) or `maxDelay` (20 ms) after the first line waiting in it, whichever
 * comes first: lines keep their order, and none waits longer than `maxDelay` while the destination takes
 * what it is given. A destination that does not (a pipe read slowly) slows the writer down instead of
 * growing memory: once more than `maxBytes` are waiting in the stream, a full buffer waits for the stream's
 * `drain`, so at most about two buffers are held. The writer's scope writes out what is left and waits
 * until the stream has taken it (also on Ctrl-C: the runtime then exits the process at once).
 *
 * @since 0.1.0
 */
import { fastMetaNamespaceKey } from "effect-informers/Indexer"
import * as KubeObject from "effect-informers/KubeObject"
import type { ReflectorError } from "effect-informers/Reflector"
import * as Data from "effect/Data"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Latch from "effect/Latch"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"

// -------------------------------------------------------------------------------------------------
// models
// -------------------------------------------------------------------------------------------------

/**
 * What a {@link LineWriter} writes to: the part of a Node.js `Writable` (such as `process.stdout`) it uses.
 *
 * @since 0.1.0
 * @category models
 */
export interface Destination {
  /** Returns `false` when the stream wants the writer to wait for `drain`; `callback` once written. */
  readonly write: (chunk: string, callback: (error?: Error | null) => void) => boolean
  /** Bytes written but not yet taken by the underlying resource. */
  readonly writableLength: number
  readonly on: (event: "drain" | "close" | "error", listener: () => void) => unknown
  readonly removeListener: (event: "drain" | "close" | "error", listener: () => void) => unknown
}

/**
 * Options of {@link make}.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  readonly destination: Destination
  /** A buffer this long (in UTF-16 code units) is written at once. Defaults to 64 KiB. */
  readonly maxBytes?: number | undefined
  /** The longest a line waits in the buffer while the destination takes what it is given. Defaults to 20 ms. */
  readonly maxDelay?: Duration.Input | undefined
}

/**
 * Batched lines.
 *
 * @since 0.1.0
 * @category models
 */
export interface LineWriter {
  /**
   * Appends `line` and a newline. Completes at once, unless the buffer is full while the destination is
   * still busy with earlier chunks: then it waits for the destination's `drain`.
   */
  readonly line: (line: string) => Effect.Effect<void>
  /**
   * Appends `line` and a newline now, in the call (`line` does it when its effect runs), and returns what is
   * left to do: `Effect.void` (an `Exit`, which an informer's handler completes without a turn of its fiber)
   * unless the buffer is full, then the effect that writes it out (waiting for `drain` first when the destination
   * is busy). For a handler: `onAdd: (obj) => writer.lineUnsafe(describe(obj))`.
   */
  readonly lineUnsafe: (line: string) => Effect.Effect<void>
  /** Writes out every line appended so far and waits until the destination has taken them. */
  readonly flush: Effect.Effect<void>
}

// -------------------------------------------------------------------------------------------------
// constructors
// -------------------------------------------------------------------------------------------------

/**
 * A {@link LineWriter} on `options.destination`. Its timer is a fiber of the scope; closing the scope
 * flushes, and waits until the destination has taken everything (or has closed).
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (options: Options): Effect.Effect<LineWriter, never, Scope.Scope> =>
  Effect.gen(function*() {
    const destination = options.destination
    const maxBytes = Math.max(1, options.maxBytes ?? 64 * 1024)
    const maxDelay = Duration.fromInputUnsafe(options.maxDelay ?? Duration.millis(20))

    // --- state: the buffer, whether the timer runs, whether the destination is full or gone ---
    let buffer = ""
    /** The timer is running for the lines in `buffer` (or some of them, already written since). */
    let armed = false
    /** Wakes the timer fiber when a line waits in an empty buffer. */
    const wake = Latch.makeUnsafe(false)
    /** Closed while the destination holds more than `maxBytes`, until its `drain`. */
    const writable = Latch.makeUnsafe(true)
    let blocked = false
    /** The destination closed or failed: nothing more can be written. */
    let closed = false
    let issued = 0
    let written = 0
    const idle: Array<() => void> = []

    const notifyIdle = () => {
      for (const resume of idle.splice(0)) resume()
    }
    const onWritten = () => {
      written++
      if (written === issued) notifyIdle()
    }
    /** Writes the whole buffer as one chunk; the destination must not be blocked. */
    const writeOut = (): void => {
      if (buffer === "") return
      const chunk = buffer
      buffer = ""
      if (closed) return
      issued++
      const accepted = destination.write(chunk, onWritten)
      // `false` sets the stream's need for `drain`, so one follows once it is empty
      if (!accepted && destination.writableLength > maxBytes) {
        blocked = true
        writable.closeUnsafe()
      }
    }
    const onDrain = () => {
      if (!blocked) return
      blocked = false
      writable.openUnsafe()
      // what waited while the destination was full goes out now, not at the next timer or full buffer
      writeOut()
    }
    const onClosed = () => {
      closed = true
      buffer = ""
      blocked = false
      writable.openUnsafe()
      notifyIdle()
    }
    destination.on("drain", onDrain)
    destination.on("close", onClosed)
    destination.on("error", onClosed)

    // --- the timer: `maxDelay` after the first line waiting, the buffer is written ---
    yield* wake.await.pipe(
      Effect.andThen(wake.close),
      Effect.andThen(Effect.sleep(maxDelay)),
      Effect.andThen(Effect.sync(() => {
        armed = false
        if (!blocked) writeOut()
      })),
      Effect.forever,
      Effect.interruptible,
      Effect.forkScoped
    )

    /** A full buffer: written at once, or after the destination's `drain`. */
    const writeFull: Effect.Effect<void> = Effect.suspend(() => {
      if (buffer.length < maxBytes) return Effect.void
      if (blocked) return Effect.andThen(writable.await, writeFull)
      writeOut()
      return Effect.void
    })

    const flush: Effect.Effect<void> = Effect.suspend(() => {
      if (closed) return Effect.void
      if (blocked) return Effect.andThen(writable.await, flush)
      writeOut()
      if (written === issued || closed) return Effect.void
      return Effect.callback<void>((resume) => {
        const resumed = () => resume(Effect.void)
        idle.push(resumed)
        return Effect.sync(() => {
          const i = idle.indexOf(resumed)
          if (i !== -1) idle.splice(i, 1)
        })
      }).pipe(Effect.andThen(flush))
    })

    yield* Effect.addFinalizer(() =>
      flush.pipe(
        Effect.ensuring(Effect.sync(() => {
          destination.removeListener("drain", onDrain)
          destination.removeListener("close", onClosed)
          destination.removeListener("error", onClosed)
        }))
      )
    )

    const lineUnsafe = (text: string): Effect.Effect<void> => {
      buffer += text + "\n"
      if (buffer.length >= maxBytes) return writeFull
      if (!armed) {
        armed = true
        wake.openUnsafe()
      }
      return Effect.void
    }
    const line = (text: string): Effect.Effect<void> => Effect.suspend(() => lineUnsafe(text))

    return { line, lineUnsafe, flush }
  })

// -------------------------------------------------------------------------------------------------
// lines
// -------------------------------------------------------------------------------------------------

/**
 * The line of one notification: `TYPE     NAMESPACE/NAME rv=RESOURCEVERSION` (the type padded to 8
 * columns; `<unknown>` for an object without a valid name, no `rv=` without a resourceVersion).
 *
 * @since 0.1.0
 * @category lines
 */
export const eventLine = (type: string, obj: KubeObject.DeletedObject<KubeObject.KubeObject>): string => {
  const key = fastMetaNamespaceKey(obj) ?? "<unknown>"
  const rv = KubeObject.resourceVersion(KubeObject.unwrapDeleted(obj))
  return `${type.padEnd(8)} ${key}${rv === undefined ? "" : ` rv=${rv}`}`
}

// -------------------------------------------------------------------------------------------------
// errors
// -------------------------------------------------------------------------------------------------

/**
 * A watch whose informer had not synced when its time was up (`--duration`, or the default wait of
 * `--output json`), with the last error the informer saw.
 *
 * @since 0.1.0
 * @category errors
 */
export class NotSyncedError extends Data.TaggedError("NotSyncedError")<{
  /** How long the watch waited. */
  readonly after: Duration.Duration
  readonly lastError: Option.Option<ReflectorError>
}> {
  override get message(): string {
    return Option.match(this.lastError, {
      onNone: () => `not synced after ${Duration.format(this.after)} (no error seen)`,
      onSome: (error) => `not synced after ${Duration.format(this.after)}: ${errorLine(error)}`
    })
  }
}

/** A text of the server's (a Status reason) in a line: one line, at most `max` characters. */
const shortText = (text: string, max: number): string => {
  const line = text.replace(/[\s\p{Cc}]+/gu, " ").trim()
  return line.length > max ? line.slice(0, max) + "…" : line
}

const field = (error: object, name: string): unknown => (error as Record<string, unknown>)[name]

/**
 * What went wrong, named as kubectl's "Error from server (Reason)" names it: the error's tag, and in
 * parentheses the Kubernetes reason and the HTTP code of a `StatusError` (the server's `Status` reason:
 * `StatusError (InternalError, 500)`, `StatusError (Expired, 410)`), the `reason` of an error that has
 * one (`TransportError (RequestFailed)`, `DecodeError (Malformed)`, `LockError (Conflict)`), a
 * `StoreError`'s operation, `Defect` for an `UnexpectedError`. Anything else: its tag or its name.
 *
 * @since 0.2.0
 * @category formatting
 */
export const describeError = (error: unknown): string => {
  if (typeof error !== "object" || error === null) return typeof error
  const tag = field(error, "_tag")
  const name = typeof tag === "string" ? tag : error instanceof Error ? error.name : "Error"
  if (tag === "StatusError") {
    const code = field(error, "code")
    const status = field(error, "status") as { readonly reason?: unknown } | undefined
    const given = typeof status?.reason === "string" ? shortText(status.reason, 80) : ""
    const reason = given !== "" ? given : String(field(error, "reason"))
    return typeof code === "number" ? `${name} (${reason}, ${code})` : `${name} (${reason})`
  }
  if (tag === "StoreError") return `${name} (${String(field(error, "operation"))})`
  if (tag === "UnexpectedError") return `${name} (Defect)`
  const reason = field(error, "reason")
  return typeof reason === "string" && reason !== "" ? `${name} (${shortText(reason, 80)})` : name
}

/**
 * An error as the CLI's warning and error lines print it: {@link describeError}, then its message, on one
 * line (`StatusError (InternalError, 500): etcd is sad`).
 *
 * @since 0.2.0
 * @category formatting
 */
export const errorLine = (error: unknown): string => {
  const message = typeof error === "object" && error !== null && typeof field(error, "message") === "string"
    ? field(error, "message") as string
    : String(error)
  // without a stack trace some messages embed (an `UnexpectedError`'s), other line breaks folded
  const line = message.split(/\r?\n\s+at\s/)[0].replace(/\s*\r?\n\s*/g, " ").trim()
  return line === "" ? describeError(error) : `${describeError(error)}: ${line}`
}

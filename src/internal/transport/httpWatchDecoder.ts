/**
 * Decodes a watch response body (newline-delimited JSON) into watch events, one chunk of bytes at a time.
 *
 * This is `Stream.decodeText() -> Stream.splitLines -> Wire.decodeWatchLine` fused into one channel so that:
 * - the line-length limit is enforced while splitting (a line that never ends cannot grow memory past it);
 * - a body that ends in the middle of a line is a transport failure, not a silently shortened last line;
 * - events decoded before a failure in the same chunk (an `ERROR` event, a bad line) are still emitted, in
 *   order, before the stream fails;
 * - the work per chunk is one `StringDecoder.write`, two `indexOf` scans per line and one `JSON.parse` per
 *   line; no closure, copy or effect is allocated per event.
 *
 * @internal
 */
import type * as Arr from "effect/Array"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Pull from "effect/Pull"
import * as Stream from "effect/Stream"
import { StringDecoder } from "node:string_decoder"
import { DecodeError, fromStatus, TransportError } from "../../ApiError.js"
import type { KubeObject } from "../../KubeObject.js"
import type { ListerWatcherError, WatchEvent } from "../../ListerWatcher.js"
import { decodeWatchLine } from "../../Wire.js"
import type { Scrub } from "../redact.js"
import { scrubPatterns, scrubStatus } from "../redact.js"

/** @internal */
export const defaultMaxLineBytes = 64 * 1024 * 1024

/** @internal */
export interface WatchDecoderOptions {
  /** The kind the watched resource's objects have; objects of another kind are skipped. `""`: no check. */
  readonly kind: string
  /** What is watched, to prefix messages, e.g. `"pods in default"`. */
  readonly description: string
  readonly maxLineBytes: number
  /** Removes the request's credentials from text the server sent (default: the generic patterns). */
  readonly scrub?: Scrub | undefined
}

const LF = 10
const CR = 13

/** A server-sent name in a message: at most 100 characters. */
const quote = (text: string): string => text.length > 100 ? text.slice(0, 100) + "…" : text

const isBlank = (line: string): boolean => {
  for (let i = 0; i < line.length; i++) {
    const c = line.charCodeAt(i)
    if (c !== 32 && c !== 9 && c !== CR) return false
  }
  return true
}

/**
 * The mutable state of one watch body: the text decoder (which keeps an incomplete multi-byte character
 * between chunks) and the unterminated tail of the last chunk.
 *
 * @internal
 */
export class WatchBodyDecoder<A> {
  /**
   * UTF-8 to text, keeping an incomplete multi-byte character between chunks. Node's `StringDecoder`, not
   * `TextDecoder`: a streaming `TextDecoder.decode` leaves V8's fast UTF-8 path (several times slower).
   */
  private readonly text = new StringDecoder("utf8")
  private started = false
  /** Decoded text of the current, unterminated line. */
  private pending = ""
  /** Bytes received for the current, unterminated line (including bytes the text decoder still holds). */
  private pendingBytes = 0
  /** Warnings produced since the last `takeWarnings`. */
  warnings: Array<string> | undefined = undefined

  private readonly scrub: Scrub

  constructor(readonly options: WatchDecoderOptions) {
    this.scrub = options.scrub ?? scrubPatterns
  }

  /**
   * Decodes the complete lines of `bytes`, pushing events to `out`. Returns the failure that ends the
   * stream, if any (events before it are in `out`).
   */
  push(chunk: Uint8Array, out: Array<WatchEvent<A>>): ListerWatcherError | undefined {
    const max = this.options.maxLineBytes
    // a Buffer view (no copy): its indexOf is a native memchr, several times faster than Uint8Array's
    const bytes = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength)
    let nl = bytes.indexOf(LF)
    if (nl === -1) {
      this.pendingBytes += bytes.length
      if (this.pendingBytes > max) return this.tooLong()
      this.pending += this.decode(bytes)
      return undefined
    }
    const text = this.decode(bytes)
    let byteStart = 0
    let textStart = 0
    while (nl !== -1) {
      if (this.pendingBytes + (nl - byteStart) > max) return this.tooLong()
      // every LF byte is one "\n" character, so the n-th LF of the bytes is the n-th "\n" of the text
      const textNl = text.indexOf("\n", textStart)
      const line = this.pending.length === 0
        ? text.slice(textStart, textNl)
        : this.pending + text.slice(textStart, textNl)
      this.pending = ""
      this.pendingBytes = 0
      const failure = this.line(line, out)
      if (failure !== undefined) return failure
      byteStart = nl + 1
      textStart = textNl + 1
      nl = bytes.indexOf(LF, byteStart)
    }
    this.pendingBytes = bytes.length - byteStart
    if (this.pendingBytes > max) return this.tooLong()
    this.pending = textStart === text.length ? "" : text.slice(textStart)
    return undefined
  }

  /**
   * The body ended. A complete JSON line without its final newline is accepted; anything else left over
   * means the body was cut mid-line.
   */
  end(out: Array<WatchEvent<A>>): ListerWatcherError | undefined {
    const rest = this.pending + this.text.end()
    const bytes = this.pendingBytes
    this.pending = ""
    this.pendingBytes = 0
    if (rest.length === 0 || isBlank(rest)) return undefined
    try {
      JSON.parse(rest)
    } catch {
      return new TransportError({
        reason: "BodyCut",
        message: `watch ${this.options.description}: the body ended in the middle of a line (${bytes} bytes)`
      })
    }
    return this.line(rest, out)
  }

  /** Decodes `bytes`; a byte order mark at the start of the body is dropped (as `TextDecoder` does). */
  private decode(bytes: Buffer): string {
    const text = this.text.write(bytes)
    if (this.started || text.length === 0) return text
    this.started = true
    return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text
  }

  takeWarnings(): ReadonlyArray<string> | undefined {
    const warnings = this.warnings
    this.warnings = undefined
    return warnings
  }

  private tooLong(): DecodeError {
    return new DecodeError({
      reason: "TooLarge",
      message: `watch ${this.options.description}: a line exceeds the limit of ${this.options.maxLineBytes} bytes`
    })
  }

  private warn(message: string): void {
    if (this.warnings === undefined) this.warnings = [message]
    else this.warnings.push(message)
  }

  private line(line: string, out: Array<WatchEvent<A>>): ListerWatcherError | undefined {
    if (line.length === 0) return undefined
    if (line.charCodeAt(line.length - 1) === CR) line = line.slice(0, -1)
    if (line.length === 0 || (line.charCodeAt(0) <= 32 && isBlank(line))) return undefined
    const decoded = decodeWatchLine<A>(line, this.scrub)
    if (decoded._tag === "Failure") {
      // the message quotes the line, which may echo the request's credentials
      const scrub = this.scrub
      return new DecodeError({
        reason: "Malformed",
        message: scrub(`watch ${this.options.description}: ${decoded.failure.message}`),
        ...(decoded.failure.detail === undefined ? {} : { detail: scrub(decoded.failure.detail) })
      })
    }
    const event = decoded.success
    switch (event.type) {
      case "ADDED":
      case "MODIFIED":
      case "DELETED": {
        const kind = (event.object as KubeObject).kind
        if (kind !== undefined && this.options.kind !== "" && kind !== this.options.kind) {
          this.warn(this.scrub(
            `watch ${this.options.description}: skipping ${
              event.type === "ADDED" ? "an" : "a"
            } ${event.type} event with an object of kind "${quote(kind)}", ` +
              `expected "${this.options.kind}"`
          ))
          return undefined
        }
        out.push(event)
        return undefined
      }
      case "BOOKMARK": {
        out.push(event)
        return undefined
      }
      case "ERROR":
        return fromStatus(scrubStatus(event.object, this.scrub))
      case "UNKNOWN": {
        this.warn(
          this.scrub(`watch ${this.options.description}: skipping an event of unknown type "${quote(event.eventType)}"`)
        )
        return undefined
      }
    }
  }
}

const logWarnings = (warnings: ReadonlyArray<string>) =>
  Effect.forEach(warnings, (message) => Effect.logWarning(message), { discard: true })

/** The pull of watch events. */
type EventPull<A> = Pull.Pull<Arr.NonEmptyReadonlyArray<WatchEvent<A>>, ListerWatcherError>

/**
 * Turns the bytes of a watch body into watch events (see the module comment).
 *
 * @internal
 */
export const decodeWatchBody = <A>(options: WatchDecoderOptions) =>
(
  bytes: Stream.Stream<Uint8Array, ListerWatcherError>
): Stream.Stream<WatchEvent<A>, ListerWatcherError> =>
  Stream.transformPull(bytes, (pull) =>
    Effect.sync(() => {
      const decoder = new WatchBodyDecoder<A>(options)
      // what ends the stream once the events before it are out: a failure, or the end of the body
      let last: EventPull<A> | undefined
      // the warnings first, then the events, then what follows
      const emit = (out: Array<WatchEvent<A>>, then: EventPull<A>): EventPull<A> => {
        const warnings = decoder.takeWarnings()
        const result = out.length > 0
          ? Effect.succeed(out as unknown as Arr.NonEmptyReadonlyArray<WatchEvent<A>>)
          : then
        return warnings === undefined ? result : Effect.andThen(logWarnings(warnings), result)
      }
      const onChunk = (chunks: Arr.NonEmptyReadonlyArray<Uint8Array> | undefined): EventPull<A> => {
        const out: Array<WatchEvent<A>> = []
        if (chunks === undefined) {
          // the end of the body
          const failure = decoder.end(out)
          last = failure === undefined ? Cause.done() : Effect.fail(failure)
          return emit(out, last)
        }
        let failure: ListerWatcherError | undefined
        for (let i = 0; i < chunks.length; i++) {
          failure = decoder.push(chunks[i], out)
          if (failure !== undefined) break
        }
        if (failure !== undefined) {
          last = Effect.fail(failure)
          return emit(out, last)
        }
        if (out.length === 0 && decoder.warnings === undefined) return next
        return emit(out, next)
      }
      const upstream = Pull.catchDone(pull, () => Effect.succeed(undefined))
      const next: EventPull<A> = Effect.suspend(() => last ?? Effect.flatMap(upstream, onChunk))
      return next
    }))

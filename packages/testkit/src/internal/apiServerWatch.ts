/**
 * One open watch of the embedded API server: the bytes waiting to be written and the Effect that hands
 * the next batch to the HTTP response. What it sees, and in which order (the replay, the initial events,
 * the watch cache's selector rules), the store decides (`effect-informers/ApiStore`); the watcher writes
 * it, from each event's shared, pre-encoded line.
 *
 * Writes are batched: each write to the store pushes the event's shared, pre-encoded line; the response
 * fiber takes everything pending as one chunk (one `write` on the socket) when it is ready for more.
 *
 * @internal
 */
import type * as ApiStore from "effect-informers/ApiStore"
import { initialEventsEndAnnotation } from "effect-informers/Wire"
import type * as Arr from "effect/Array"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import type * as Pull from "effect/Pull"
import type { Counters, Entry, HistoryEvent, ResourceStore, Selection } from "./apiServerStore.js"
import { encode, enteredLine, eventLine, leftLine } from "./apiServerStore.js"

/** Lines are grouped into chunks of about this many bytes when a watch starts with many objects. */
const INITIAL_CHUNK_BYTES = 256 * 1024

/** @internal */
export interface Socketish {
  destroy(): void
}

/** @internal */
export class Watcher implements ApiStore.Watcher<Entry> {
  private pending: Array<Uint8Array> = []
  private pendingBytes = 0
  /** No more bytes will be produced: the stream ends once `pending` is written. */
  done = false
  /** Send nothing ever again, but keep the connection open. */
  stalled = false
  /** Why the watch ended, for tests and logs. */
  endReason: string | undefined
  waiter: (() => void) | undefined
  /** Called once the pending bytes were taken, or the watch ended or stalled (`whenDrained`). */
  private drainWaiters: Array<() => void> = []

  constructor(
    readonly store: ResourceStore,
    readonly selection: Selection,
    readonly counters: Counters,
    readonly maxBufferBytes: number,
    readonly connection: Socketish | undefined
  ) {}

  /** One event, as the store's selector rules deliver it. */
  send(event: HistoryEvent, delivery: ApiStore.Delivery): void {
    this.push(
      delivery === "event" ? eventLine(event) : delivery === "entered" ? enteredLine(event) : leftLine(event),
      1
    )
  }

  /** The initial state, as ADDED events. */
  added(entries: ReadonlyArray<Entry>): void {
    this.pushAdded(entries)
  }

  bookmark(rv: number, initialEventsEnd: boolean): void {
    this.pushBookmark(rv, initialEventsEnd ? { [initialEventsEndAnnotation]: "true" } : undefined)
  }

  /** Queues `entries` (already selected) as ADDED events, in chunks. */
  pushAdded(entries: ReadonlyArray<Entry>): void {
    let parts: Array<string> = []
    let size = 0
    for (let i = 0; i < entries.length; i++) {
      const line = `{"type":"ADDED","object":${entries[i].json}}\n`
      parts.push(line)
      size += line.length
      if (size >= INITIAL_CHUNK_BYTES) {
        this.push(encode(parts.join("")), parts.length)
        parts = []
        size = 0
      }
    }
    if (parts.length > 0) this.push(encode(parts.join("")), parts.length)
  }

  /** A BOOKMARK event: only kind, apiVersion and metadata.resourceVersion (plus annotations). */
  pushBookmark(rv: number, annotations?: { readonly [key: string]: string }): void {
    const metadata = annotations === undefined
      ? { resourceVersion: String(rv) }
      : { resourceVersion: String(rv), annotations }
    const object = { kind: this.store.resource.kind, apiVersion: this.store.apiVersion, metadata }
    this.push(encode(JSON.stringify({ type: "BOOKMARK", object }) + "\n"), 1)
  }

  /** An ERROR event, after which the watch ends. */
  pushError(status: unknown): void {
    this.push(encode(JSON.stringify({ type: "ERROR", object: status }) + "\n"), 1)
    this.end("error")
  }

  /** Raw bytes (fault injection). */
  pushRaw(text: string, events: number): void {
    this.push(encode(text), events)
  }

  push(bytes: Uint8Array, events: number): void {
    if (this.done || this.stalled) return
    this.pending.push(bytes)
    this.pendingBytes += bytes.length
    this.counters.eventsSent += events
    if (this.pendingBytes > this.maxBufferBytes) {
      // a client this far behind is cut off, as the API server does with unresponsive watchers
      this.pending = []
      this.pendingBytes = 0
      this.end("overflow")
      return
    }
    this.wake()
  }

  end(reason: string): void {
    if (this.done) return
    this.done = true
    this.endReason = reason
    this.wake()
    this.drained()
  }

  stall(): void {
    this.stalled = true
    this.pending = []
    this.pendingBytes = 0
    this.drained()
  }

  /** Bytes produced and not yet handed to the response. */
  get queuedBytes(): number {
    return this.pendingBytes
  }

  /** Whether the response no longer takes bytes (ended or stalled): nothing to wait for. */
  get closed(): boolean {
    return this.done || this.stalled
  }

  /** Calls `callback` once the bytes pending now are taken (or at once when nothing is pending). */
  whenDrained(callback: () => void): void {
    if (this.pendingBytes === 0 || this.closed) callback()
    else this.drainWaiters.push(callback)
  }

  private drained(): void {
    if (this.drainWaiters.length === 0) return
    const waiters = this.drainWaiters
    this.drainWaiters = []
    for (const waiter of waiters) waiter()
  }

  wake(): void {
    const waiter = this.waiter
    if (waiter !== undefined) {
      this.waiter = undefined
      waiter()
    }
  }

  /** Everything pending, as one buffer: a view when the pending lines lie next to each other in memory. */
  take(): Uint8Array | undefined {
    const pending = this.pending
    if (pending.length === 0 || this.stalled) return undefined
    const bytes = pending.length === 1 ? pending[0] : contiguous(pending) ?? Buffer.concat(pending, this.pendingBytes)
    this.counters.bytesSent += this.pendingBytes
    this.pending = []
    this.pendingBytes = 0
    this.drained()
    return bytes
  }
}

/** One view over `parts` when each starts where the previous one ends in the same memory. */
const contiguous = (parts: ReadonlyArray<Uint8Array>): Uint8Array | undefined => {
  const first = parts[0]
  let end = first.byteOffset + first.byteLength
  for (let i = 1; i < parts.length; i++) {
    const part = parts[i]
    if (part.buffer !== first.buffer || part.byteOffset !== end) return undefined
    end += part.byteLength
  }
  return new Uint8Array(first.buffer, first.byteOffset, end - first.byteOffset)
}

/**
 * The pull of a watch response body: the next batch of bytes, waiting for one if needed; `Cause.Done` once
 * the watch is done and drained. A stalled watch never resumes.
 *
 * @internal
 */
export const pull = (watcher: Watcher): Pull.Pull<Arr.NonEmptyReadonlyArray<Uint8Array>> =>
  Effect.callback<Arr.NonEmptyReadonlyArray<Uint8Array>, Cause.Done>((resume) => {
    const attempt = (): void => {
      const bytes = watcher.take()
      if (bytes !== undefined) resume(Effect.succeed([bytes]))
      else if (watcher.done && !watcher.stalled) resume(Cause.done())
      else watcher.waiter = attempt
    }
    attempt()
    return Effect.sync(() => {
      if (watcher.waiter === attempt) watcher.waiter = undefined
    })
  })

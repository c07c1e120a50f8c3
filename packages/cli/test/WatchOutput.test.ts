/**
 * `WatchOutput`: the batched lines of `watch --output events` (against a scripted destination, under the
 * TestClock), the format of a line, the message of `NotSyncedError`, and how an error is named in the
 * warning and error lines (kubectl's "Error from server (Reason)").
 */
import { assert, describe, it } from "@effect/vitest"
import { DecodeError, fromStatus, StatusError, TransportError } from "effect-informers/ApiError"
import { DeletedFinalStateUnknown } from "effect-informers/KubeObject"
import { LockError } from "effect-informers/LeaderElection"
import { failureStatus } from "effect-informers/Wire"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as Scope from "effect/Scope"
import * as TestClock from "effect/testing/TestClock"
import * as WatchOutput from "../src/WatchOutput.js"

/**
 * A destination that records its chunks. While `full`, it keeps what it is given (its `writableLength`
 * grows and `write` returns false); `take()` empties it, runs the write callbacks and emits `drain`, as a
 * Node.js stream does once its reader has caught up.
 */
const destination = () => {
  const listeners = { drain: [] as Array<() => void>, close: [] as Array<() => void>, error: [] as Array<() => void> }
  const chunks: Array<string> = []
  let pending: Array<() => void> = []
  let waiting = 0
  let full = false
  const emit = (event: keyof typeof listeners) => {
    for (const listener of [...listeners[event]]) listener()
  }
  const d = {
    chunks,
    get lines() {
      return chunks.join("").split("\n").slice(0, -1)
    },
    setFull(value: boolean) {
      full = value
    },
    /** The reader takes everything: callbacks run, `drain` follows. */
    take() {
      const callbacks = pending
      pending = []
      waiting = 0
      for (const callback of callbacks) callback()
      emit("drain")
    },
    close() {
      emit("close")
    },
    listenerCount: () => listeners.drain.length + listeners.close.length + listeners.error.length,
    destination: {
      write: (chunk: string, callback: () => void) => {
        chunks.push(chunk)
        if (!full) {
          callback()
          return true
        }
        pending.push(callback)
        waiting += chunk.length
        return false
      },
      get writableLength() {
        return waiting
      },
      on: (event: "drain" | "close" | "error", listener: () => void) => listeners[event].push(listener),
      removeListener: (event: "drain" | "close" | "error", listener: () => void) => {
        const i = listeners[event].indexOf(listener)
        if (i !== -1) listeners[event].splice(i, 1)
      }
    } satisfies WatchOutput.Destination
  }
  return d
}

describe("WatchOutput - LineWriter", () => {
  it.effect("writes the lines of 20 ms as one chunk, in order, 20 ms after the first one", () =>
    Effect.gen(function*() {
      const d = destination()
      const out = yield* WatchOutput.make({ destination: d.destination })
      yield* out.line("a")
      yield* TestClock.adjust("5 millis")
      yield* out.line("b")
      yield* out.line("c")
      yield* TestClock.adjust("14 millis")
      assert.deepStrictEqual(d.chunks, [])
      yield* TestClock.adjust("1 millis")
      assert.deepStrictEqual(d.chunks, ["a\nb\nc\n"])
      // the next line starts a new 20 ms
      yield* TestClock.adjust("100 millis")
      yield* out.line("d")
      yield* TestClock.adjust("19 millis")
      assert.deepStrictEqual(d.chunks, ["a\nb\nc\n"])
      yield* TestClock.adjust("1 millis")
      assert.deepStrictEqual(d.chunks, ["a\nb\nc\n", "d\n"])
      // nothing waiting: nothing written
      yield* TestClock.adjust("1 second")
      assert.lengthOf(d.chunks, 2)
    }))

  it.effect("writes a full buffer at once, without waiting for the timer", () =>
    Effect.gen(function*() {
      const d = destination()
      const out = yield* WatchOutput.make({ destination: d.destination, maxBytes: 12 })
      yield* out.line("1234")
      yield* out.line("5678")
      assert.deepStrictEqual(d.chunks, [])
      yield* out.line("9") // 12 characters now
      assert.deepStrictEqual(d.chunks, ["1234\n5678\n9\n"])
      yield* out.line("x")
      yield* TestClock.adjust("20 millis")
      assert.deepStrictEqual(d.lines, ["1234", "5678", "9", "x"])
    }))

  it.effect("lineUnsafe: appends in the call and answers Effect.void; a full buffer answers the write, not done yet", () =>
    Effect.gen(function*() {
      const d = destination()
      const out = yield* WatchOutput.make({ destination: d.destination, maxBytes: 12 })
      assert.isTrue(Exit.isExit(out.lineUnsafe("1234")))
      assert.isTrue(Exit.isExit(out.lineUnsafe("5678")))
      // appended already: the timer writes them without the effects being run
      yield* TestClock.adjust("20 millis")
      assert.deepStrictEqual(d.chunks, ["1234\n5678\n"])
      assert.isTrue(Exit.isExit(out.lineUnsafe("abcd")))
      const full = out.lineUnsafe("efgh") // 10 characters now
      assert.isTrue(Exit.isExit(full))
      const write = out.lineUnsafe("i") // 12: full
      assert.isFalse(Exit.isExit(write))
      assert.deepStrictEqual(d.chunks, ["1234\n5678\n"])
      yield* write
      assert.deepStrictEqual(d.chunks, ["1234\n5678\n", "abcd\nefgh\ni\n"])
    }))

  it.effect("a destination that does not take its chunks holds the writer back: bounded, then all of it, in order", () =>
    Effect.gen(function*() {
      const d = destination()
      d.setFull(true)
      const out = yield* WatchOutput.make({ destination: d.destination, maxBytes: 100 })
      const lines = Array.from({ length: 1000 }, (_, i) => `line ${String(i).padStart(4, "0")} ${"x".repeat(20)}`)
      const writer = yield* Effect.forEach(lines, (line) => out.line(line), { discard: true }).pipe(Effect.forkChild)
      yield* TestClock.adjust("1 second")
      // the writer is stuck: at most two buffers written, and one more waiting
      assert.isUndefined(writer.pollUnsafe())
      const held = d.chunks.join("").length
      assert.isAtMost(held, 3 * 130)
      assert.isAtLeast(held, 100)
      // the reader takes its time: the writer goes on as far as the destination lets it, each time
      let rounds = 0
      while (writer.pollUnsafe() === undefined) {
        const before = d.chunks.join("").length
        d.take()
        yield* TestClock.adjust("20 millis")
        assert.isAtMost(d.chunks.join("").length - before, 3 * 130)
        rounds++
        assert.isBelow(rounds, 1000)
      }
      yield* Fiber.join(writer)
      d.setFull(false)
      d.take()
      yield* out.flush
      assert.deepStrictEqual(d.lines, lines)
      assert.isAbove(rounds, 100)
    }))

  it.effect("closing the scope writes what waits and waits until the destination has taken it", () =>
    Effect.gen(function*() {
      const d = destination()
      d.setFull(true)
      const scope = yield* Scope.make()
      const out = yield* WatchOutput.make({ destination: d.destination }).pipe(Scope.provide(scope))
      yield* out.line("one")
      yield* out.line("two")
      const closing = yield* Effect.forkChild(Scope.close(scope, Exit.void))
      yield* TestClock.adjust(Duration.zero)
      assert.deepStrictEqual(d.lines, ["one", "two"])
      // written, not yet taken: the close waits
      assert.isUndefined(closing.pollUnsafe())
      d.take()
      yield* Fiber.join(closing)
      assert.strictEqual(d.listenerCount(), 0)
    }))

  it.effect("a destination that closes ends every wait; later lines are dropped", () =>
    Effect.gen(function*() {
      const d = destination()
      d.setFull(true)
      const scope = yield* Scope.make()
      const out = yield* WatchOutput.make({ destination: d.destination, maxBytes: 10 }).pipe(Scope.provide(scope))
      const writer = yield* Effect.forEach(["aaaaaaaaaa", "bbbbbbbbbb", "cccccccccc", "dddddddddd"], out.line, {
        discard: true
      }).pipe(Effect.forkChild)
      yield* TestClock.adjust(Duration.zero)
      assert.isUndefined(writer.pollUnsafe())
      d.close()
      yield* Fiber.join(writer)
      const written = d.chunks.length
      yield* out.line("after")
      yield* out.flush
      yield* Scope.close(scope, Exit.void)
      assert.lengthOf(d.chunks, written)
    }))
})

describe("WatchOutput - lines and errors", () => {
  it("eventLine: type padded to 8, key, resourceVersion", () => {
    const pod = { metadata: { name: "web", namespace: "default", resourceVersion: "42" } }
    assert.strictEqual(WatchOutput.eventLine("ADDED", pod), "ADDED    default/web rv=42")
    assert.strictEqual(WatchOutput.eventLine("EXISTING", pod), "EXISTING default/web rv=42")
    assert.strictEqual(WatchOutput.eventLine("MODIFIED", { metadata: { name: "node-1" } }), "MODIFIED node-1")
    assert.strictEqual(WatchOutput.eventLine("ADDED", { metadata: {} }), "ADDED    <unknown>")
    assert.strictEqual(
      WatchOutput.eventLine("DELETED?", new DeletedFinalStateUnknown({ key: "default/web", obj: pod })),
      "DELETED? default/web rv=42"
    )
  })

  it("NotSyncedError: the duration and the last error, or that none was seen", () => {
    const message = "the server could not find the requested resource"
    const lastError = new StatusError({
      reason: "NotFound",
      code: 404,
      message,
      status: { kind: "Status", apiVersion: "v1", status: "Failure", reason: "NotFound", code: 404, message },
      retryAfter: Option.none()
    })
    const error = new WatchOutput.NotSyncedError({ after: Duration.seconds(2), lastError: Option.some(lastError) })
    assert.strictEqual(error._tag, "NotSyncedError")
    assert.strictEqual(
      error.message,
      "not synced after 2s: StatusError (NotFound, 404): the server could not find the requested resource"
    )
    assert.strictEqual(
      new WatchOutput.NotSyncedError({ after: Duration.millis(1500), lastError: Option.none() }).message,
      "not synced after 1s 500ms (no error seen)"
    )
  })

  it("errorLine: the tag, the Status reason and HTTP code of a StatusError, the reason of others", () => {
    assert.strictEqual(
      WatchOutput.errorLine(fromStatus(failureStatus(500, "InternalError", "etcd is sad"))),
      "StatusError (InternalError, 500): etcd is sad"
    )
    // the server's reason, as kubectl prints it (the library's own reason for 410 is Gone)
    assert.strictEqual(
      WatchOutput.errorLine(fromStatus(failureStatus(410, "Expired", "too old resource version: 5 (10)"))),
      "StatusError (Expired, 410): too old resource version: 5 (10)"
    )
    assert.strictEqual(
      WatchOutput.errorLine(fromStatus({ code: 429, message: "slow down" })),
      "StatusError (TooManyRequests, 429): slow down",
      "without a reason in the Status: the library's"
    )
    assert.strictEqual(
      WatchOutput.errorLine(fromStatus({ code: 503, reason: "Service\nUnavailable", message: "a\nb" })),
      "StatusError (Service Unavailable, 503): a b",
      "one line"
    )
    assert.strictEqual(
      WatchOutput.errorLine(
        new TransportError({ reason: "RequestFailed", message: "list pods: connect ECONNREFUSED 127.0.0.1:1" })
      ),
      "TransportError (RequestFailed): list pods: connect ECONNREFUSED 127.0.0.1:1"
    )
    assert.strictEqual(
      WatchOutput.errorLine(new DecodeError({ reason: "Malformed", message: "watch pods: malformed JSON" })),
      "DecodeError (Malformed): watch pods: malformed JSON"
    )
    assert.strictEqual(
      WatchOutput.errorLine(new LockError({ reason: "Conflict", message: "update lease ns/a: conflict" })),
      "LockError (Conflict): update lease ns/a: conflict"
    )
    assert.strictEqual(WatchOutput.errorLine(new Error("plain\n  at frame")), "Error: plain")
    assert.strictEqual(WatchOutput.describeError("text"), "string")
  })
})

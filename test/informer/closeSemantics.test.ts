/**
 * The three waiting mechanisms of the informer close alike (`internal/listenerBuffer.ts`): closing wakes
 * the waiting taker; a take woken by it, or begun after it, gets what is still queued and then fails with
 * the closed error (the handler buffers' `BufferClosedError`, the DeltaFifo's `FifoClosedError`). None
 * hangs and none is interrupted. The buffers drop their backlog when shut down; the FIFO is drained first.
 */
import { assert, describe, it } from "@effect/vitest"
import { Cause, Effect, Exit, Fiber, Option } from "effect"
import * as DeltaFifo from "../../src/DeltaFifo.js"
import { coalescing } from "../../src/internal/informer/coalescingBuffer.js"
import { BufferClosedError, unbounded } from "../../src/internal/informer/listenerBuffer.js"
import type { KubeObject } from "../../src/KubeObject.js"
import type { Notification } from "../../src/SharedInformer.js"

type N = Notification<KubeObject>
const add = (name: string): N => ({ _tag: "Add", object: { metadata: { name } }, isInInitialList: false })

/** The tag of the error an exit failed with; undefined for a success, an interruption or a defect. */
const failedWith = (exit: Exit.Exit<unknown, { readonly _tag: string }>): string | undefined =>
  Exit.isFailure(exit) ? Option.getOrUndefined(Cause.findErrorOption(exit.cause))?._tag : undefined

const buffers = [
  ["unbounded", () => unbounded<N>()],
  ["coalescing", () => coalescing<KubeObject, N>(() => {})]
] as const

describe("close semantics: a wait after close ends with the closed error in all three", () => {
  for (const [kind, make] of buffers) {
    it.effect(`${kind} handler buffer: the waiting taker and later takes fail with BufferClosedError`, () =>
      Effect.gen(function*() {
        const buffer = yield* make()
        const waiting = yield* Effect.forkChild(buffer.take(10))
        yield* Effect.yieldNow
        assert.isUndefined(waiting.pollUnsafe())
        yield* buffer.shutdown
        assert.deepStrictEqual(yield* Fiber.await(waiting), Exit.fail(new BufferClosedError()))
        buffer.offer(add("late"))
        assert.strictEqual(buffer.size(), 0)
        assert.deepStrictEqual(yield* Effect.exit(buffer.take(10)), Exit.fail(new BufferClosedError()))
      }))

    it.effect(`${kind} handler buffer: a shutdown drops the backlog, so a take after it fails at once`, () =>
      Effect.gen(function*() {
        const buffer = yield* make()
        buffer.offer(add("a"))
        yield* buffer.shutdown
        assert.strictEqual(buffer.size(), 0)
        assert.deepStrictEqual(yield* Effect.exit(buffer.take(10)), Exit.fail(new BufferClosedError()))
      }))
  }

  for (const mode of ["inOrder", "coalescing"] as const) {
    it.effect(`DeltaFifo (${mode}): the waiting pop and later pops fail with FifoClosedError, after the backlog`, () =>
      Effect.gen(function*() {
        const fifo = DeltaFifo.unsafeMake<KubeObject>({ mode })
        const popped = (p: DeltaFifo.Popped<KubeObject>) => Effect.succeed(p.deltas.length)
        const waiting = yield* Effect.forkChild(fifo.pop(popped))
        yield* Effect.yieldNow
        assert.isUndefined(waiting.pollUnsafe())
        yield* fifo.close
        assert.strictEqual(failedWith(yield* Fiber.await(waiting)), "FifoClosedError")

        const drained = DeltaFifo.unsafeMake<KubeObject>({ mode })
        yield* drained.add({ metadata: { name: "a" } })
        yield* drained.close
        assert.strictEqual(yield* drained.pop(popped), 1)
        assert.strictEqual(failedWith(yield* Effect.exit(drained.pop(popped))), "FifoClosedError")
      }))
  }
})

import { assert, describe, it } from "@effect/vitest"
import { Deque } from "../src/internal/deque.js"
import * as FastCheck from "./fixtures/arbitrary.js"

type Op = { readonly _tag: "push"; readonly count: number } | { readonly _tag: "shift"; readonly count: number } | {
  readonly _tag: "clear"
}

const op: FastCheck.Arbitrary<Op> = FastCheck.oneof(
  { weight: 5, arbitrary: FastCheck.integer({ min: 1, max: 40 }).map((count) => ({ _tag: "push" as const, count })) },
  { weight: 5, arbitrary: FastCheck.integer({ min: 1, max: 40 }).map((count) => ({ _tag: "shift" as const, count })) },
  { weight: 1, arbitrary: FastCheck.constant({ _tag: "clear" as const }) }
)

describe("Deque", () => {
  it("behaves as an array used as a FIFO (push, shift, peek, length, iteration, clear), across wrap-arounds and growths", () => {
    FastCheck.assert(
      FastCheck.property(FastCheck.array(op, { maxLength: 80 }), (ops) => {
        const deque = new Deque<number>()
        const model: Array<number> = []
        let next = 0
        for (const o of ops) {
          if (o._tag === "push") {
            for (let i = 0; i < o.count; i++, next++) {
              deque.push(next)
              model.push(next)
            }
          } else if (o._tag === "shift") {
            for (let i = 0; i < o.count; i++) assert.strictEqual(deque.shift(), model.shift())
          } else {
            deque.clear()
            model.length = 0
          }
          assert.strictEqual(deque.length, model.length)
          assert.strictEqual(deque.peek(), model[0])
          assert.deepStrictEqual(Array.from(deque), model)
        }
      }),
      { numRuns: 500 }
    )
  })

  it("a drained queue larger than 65,536 items gives its array back and works on", () => {
    const deque = new Deque<number>()
    for (let round = 0; round < 2; round++) {
      for (let i = 0; i < 70_000; i++) deque.push(i)
      for (let i = 0; i < 70_000; i++) assert.strictEqual(deque.shift(), i)
      assert.strictEqual(deque.length, 0)
      assert.isUndefined(deque.shift())
      assert.isUndefined(deque.peek())
    }
    deque.push(1)
    deque.push(2)
    assert.deepStrictEqual(Array.from(deque), [1, 2])
  })
})

import { assert, describe, it } from "@effect/vitest"
import { Arbitrary, Effect, Fiber } from "effect"
import { coalescing } from "../../src/internal/informer/coalescingBuffer.js"
import type { KubeObject } from "../../src/KubeObject.js"
import { DeletedFinalStateUnknown } from "../../src/KubeObject.js"
import type { Notification } from "../../src/SharedInformer.js"
import { boolean, constantFrom, integer } from "../fixtures/arbitrary.js"

type N = Notification<KubeObject>
const obj = (name: string, rv: number): KubeObject => ({ metadata: { name, resourceVersion: String(rv) } })
const name = (n: N): string => {
  const o = n._tag === "Update" ? n.newObject : n.object
  return o instanceof DeletedFinalStateUnknown ? o.key : (o as KubeObject).metadata!.name!
}

/** A handler's view: replay notifications onto a map name -> resourceVersion. */
const replay = (notifications: Iterable<N>, into = new Map<string, string>()) => {
  for (const n of notifications) {
    if (n._tag === "Delete") into.delete(name(n))
    else into.set(name(n), (n._tag === "Add" ? n.object : n.newObject).metadata!.resourceVersion!)
  }
  return into
}

/** Random event histories as a server would produce them: per key add / update / delete in a valid order. */
const history = Arbitrary.map(
  Arbitrary.array(
    Arbitrary.all({ key: constantFrom("a", "b", "c", "d"), op: integer({ min: 0, max: 9 }), initial: boolean() }),
    {
      maxLength: 80
    }
  ),
  (steps) => {
    const live = new Map<string, KubeObject>()
    const out: Array<N> = []
    let rv = 0
    for (const { initial, key, op } of steps) {
      const current = live.get(key)
      rv++
      if (current === undefined) {
        const created = obj(key, rv)
        live.set(key, created)
        out.push({ _tag: "Add", object: created, isInInitialList: initial })
      } else if (op < 7) {
        const next = obj(key, rv)
        live.set(key, next)
        out.push({ _tag: "Update", oldObject: current, newObject: next })
      } else {
        live.delete(key)
        out.push({
          _tag: "Delete",
          object: op === 9 ? new DeletedFinalStateUnknown({ key, obj: current }) : current
        })
      }
    }
    return out
  }
)

describe("coalescing handler buffer", () => {
  it.prop(
    "replaying what a stalled handler finally receives gives the state of the full history",
    [history, integer({ min: 1, max: 20 })],
    ([events, cut]) => {
      let droppedInitial = 0
      const buffer = Effect.runSync(coalescing<KubeObject, N>(() => droppedInitial++))
      // A handler that handled the first `cut` events, then stalled while the rest arrived.
      const handled = events.slice(0, cut)
      for (const n of events.slice(cut)) buffer.offer(n)
      // bounded: at most a delete plus the latest add/update per key
      assert.isAtMost(buffer.size(), 2 * 4)
      const delivered = buffer.size() === 0 ? [] : Effect.runSync(buffer.take(1000))
      assert.strictEqual(buffer.size(), 0)
      assert.deepStrictEqual(replay([...handled, ...delivered]), replay(events))
      // deletes are delivered as deletes: a key whose last event is a delete gets a delete last
      for (const key of ["a", "b", "c", "d"]) {
        const last = events.slice(cut).filter((n) => name(n) === key).at(-1)
        const lastOut = delivered.filter((n) => name(n) === key).at(-1)
        if (last?._tag === "Delete") assert.strictEqual(lastOut?._tag, "Delete", `key ${key}`)
      }
      // initial adds: those delivered plus those dropped for a delete equal those offered
      const offered = events.slice(cut).filter((n) => n._tag === "Add" && n.isInInitialList).length
      const deliveredInitial = delivered.filter((n) => n._tag === "Add" && n.isInInitialList).length
      assert.strictEqual(deliveredInitial + droppedInitial, offered)
    },
    // size: arrays up to their maxLength, as fast-check generated them when maxLength was given
    { arbitrary: { runs: 500, size: 80 } }
  )

  it.effect("an update keeps the state the handler last saw as oldObject; add stays add", () =>
    Effect.gen(function*() {
      const buffer = yield* coalescing<KubeObject, N>(() => {})
      const [a1, a2, a3] = [obj("a", 1), obj("a", 2), obj("a", 3)]
      buffer.offer({ _tag: "Update", oldObject: a1, newObject: a2 })
      assert.strictEqual(buffer.offer({ _tag: "Update", oldObject: a2, newObject: a3 }), 1)
      const [b1, b2] = [obj("b", 4), obj("b", 5)]
      buffer.offer({ _tag: "Add", object: b1, isInInitialList: true })
      buffer.offer({ _tag: "Update", oldObject: b1, newObject: b2 })
      assert.deepStrictEqual(yield* buffer.take(10), [
        { _tag: "Update", oldObject: a1, newObject: a3 },
        { _tag: "Add", object: b2, isInInitialList: true }
      ])
    }))

  it.effect("delete then recreate reaches the handler as both, in order; a delete drops a waiting initial add", () =>
    Effect.gen(function*() {
      let dropped = 0
      const buffer = yield* coalescing<KubeObject, N>(() => dropped++)
      buffer.offer({ _tag: "Add", object: obj("a", 1), isInInitialList: true })
      buffer.offer({ _tag: "Delete", object: obj("a", 1) })
      buffer.offer({ _tag: "Add", object: obj("a", 3), isInInitialList: false })
      buffer.offer({ _tag: "Update", oldObject: obj("a", 3), newObject: obj("a", 4) })
      assert.strictEqual(dropped, 1)
      assert.deepStrictEqual((yield* buffer.take(10)).map((n) => n._tag), ["Delete", "Add"])
    }))

  it.effect("of two waiting deletes, a tombstone never replaces the delete that carries the final state", () =>
    Effect.gen(function*() {
      const buffer = yield* coalescing<KubeObject, N>(() => {})
      const real: N = { _tag: "Delete", object: obj("a", 2) }
      buffer.offer(real)
      buffer.offer({ _tag: "Delete", object: new DeletedFinalStateUnknown({ key: "a", obj: obj("a", 1) }) })
      assert.deepStrictEqual(yield* buffer.take(10), [real])
    }))

  it.effect("take waits for a notification", () =>
    Effect.gen(function*() {
      const buffer = yield* coalescing<KubeObject, N>(() => {})
      const fiber = yield* Effect.forkChild(buffer.take(5))
      yield* Effect.yieldNow
      buffer.offer({ _tag: "Add", object: obj("a", 1), isInInitialList: false })
      const [taken] = yield* Effect.map(Fiber.await(fiber), (exit) => exit._tag === "Success" ? exit.value : [])
      assert.strictEqual(taken?._tag, "Add")
    }))
})

/**
 * SharedInformer: a property test over random server histories.
 */
import { assert, describe, it } from "@effect/vitest"
import { Arbitrary, Effect } from "effect"
import { boolean, constantFrom, integer, oneof } from "../../fixtures/arbitrary.js"
import { gone as fixtureGone, serverError as fixtureServerError } from "../../fixtures/index.js"
import type { Fake } from "./fixtures.js"
import {
  adjust,
  assertMonotonic,
  cacheMatchesServer,
  eventually,
  fifoModes,
  pod,
  recorder,
  replay,
  setup,
  sortedEntries,
  toMap
} from "./fixtures.js"

type Op =
  | { readonly _tag: "write"; readonly key: number; readonly remove: boolean; readonly drop: boolean }
  | { readonly _tag: "resetWatch" }
  | { readonly _tag: "closeWatches" }
  | { readonly _tag: "failWatches"; readonly gone: boolean }
  | { readonly _tag: "failNextWatch"; readonly gone: boolean }
  | { readonly _tag: "failNextList" }
  | { readonly _tag: "bookmark" }
  | { readonly _tag: "adjust"; readonly millis: number }

const opArbitrary: Arbitrary.Arbitrary<Op> = oneof<Op>(
  {
    weight: 12,
    arbitrary: Arbitrary.all({
      _tag: Arbitrary.Constant("write"),
      key: integer({ min: 0, max: 5 }),
      remove: boolean(),
      drop: boolean() // half of the writes are lost events
    })
  },
  { weight: 2, arbitrary: Arbitrary.Constant({ _tag: "resetWatch" }) },
  { weight: 1, arbitrary: Arbitrary.Constant({ _tag: "closeWatches" }) },
  {
    weight: 1,
    arbitrary: Arbitrary.all({ _tag: Arbitrary.Constant("failWatches"), gone: boolean() })
  },
  {
    weight: 1,
    arbitrary: Arbitrary.all({ _tag: Arbitrary.Constant("failNextWatch"), gone: boolean() })
  },
  { weight: 1, arbitrary: Arbitrary.Constant({ _tag: "failNextList" }) },
  { weight: 1, arbitrary: Arbitrary.Constant({ _tag: "bookmark" }) },
  {
    weight: 4,
    arbitrary: Arbitrary.all({
      _tag: Arbitrary.Constant("adjust"),
      millis: constantFrom(0, 0, 100, 1_000, 5_000, 30_000)
    })
  }
)

const serverError = fixtureServerError(500, "InternalError", "internal error")
const gone = fixtureGone()

const applyOp = (fake: Fake, op: Op): Effect.Effect<void> =>
  Effect.gen(function*() {
    switch (op._tag) {
      case "write": {
        const name = `k${op.key}`
        const exists = (yield* fake.objects).some((o) => o.metadata?.name === name)
        const obj = pod(name, { spec: { at: yield* fake.resourceVersion } })
        if (!exists) yield* op.drop ? fake.addDropWatch(obj) : fake.add(obj)
        else if (op.remove) yield* op.drop ? fake.deleteDropWatch(obj) : fake.delete(obj)
        else yield* op.drop ? fake.modifyDropWatch(obj) : fake.modify(obj)
        return
      }
      case "resetWatch":
        return yield* fake.resetWatch
      case "closeWatches":
        return yield* fake.closeWatches
      case "failWatches":
        return yield* fake.failWatches(op.gone ? gone : serverError)
      case "failNextWatch":
        return yield* fake.failNextWatch(op.gone ? gone : serverError)
      case "failNextList":
        return yield* fake.failNextList(serverError)
      case "bookmark":
        return yield* fake.bookmark
      case "adjust":
        return yield* adjust(op.millis)
    }
  })

describe("SharedInformer: property", () => {
  describe.each(fifoModes)("%s", (fifo) => {
    it.effect.prop(
      `random server histories converge; handlers replay to the cache; versions never go back`,
      [Arbitrary.array(opArbitrary, { minLength: 1, maxLength: 30 }), integer({ min: 0, max: 0x7fffffff })],
      ([ops, joinAt]) =>
        Effect.gen(function*() {
          const env = yield* setup({ fifo }, [pod("k0"), pod("k1")])
          const { fake, informer } = env
          const early = recorder("early")
          const late = recorder("late")
          yield* informer.addEventHandler(early.handler)
          yield* informer.start
          const join = joinAt % (ops.length + 1)
          for (const [i, op] of ops.entries()) {
            if (i === join) yield* informer.addEventHandler(late.handler)
            yield* applyOp(fake, op)
          }
          if (join === ops.length) yield* informer.addEventHandler(late.handler)
          // Quiescence: past any backoff, then a forced relist so that lost events are recovered.
          yield* adjust("2 minutes")
          yield* fake.failWatches(gone)
          yield* adjust("2 minutes")
          yield* eventually(cacheMatchesServer(env), "cache equals the server")
          const server = sortedEntries(toMap(yield* fake.objects))
          for (const [who, r] of [["early", early], ["late", late]] as const) {
            yield* eventually(
              Effect.sync(() => JSON.stringify(sortedEntries(replay(r.events))) === JSON.stringify(server)),
              `${who} handler's replay equals the server`
            )
          }
          assertMonotonic(early.events, "early")
          assertMonotonic(late.events, "late")
          assert.isTrue(yield* informer.hasSynced)
        }),
      // size: arrays up to their maxLength, as fast-check generates them when maxLength is given
      { timeout: 30_000, arbitrary: { runs: 50, size: 30 } }
    )
  })
})

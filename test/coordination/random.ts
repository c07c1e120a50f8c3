/**
 * Effect 3's `Effect.withRandomFixed`, gone in Effect 4: runs an effect with a `Random` that returns
 * `values` in order, cycling back to the first (each run of the effect starts again at the first).
 */
import * as Effect from "effect/Effect"
import * as Random from "effect/Random"

export const withRandomFixed =
  (values: readonly [number, ...Array<number>]) => <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    Effect.suspend(() => {
      let i = 0
      const next = () => {
        const value = values[i % values.length]
        i += 1
        return value
      }
      return Effect.provideService(self, Random.Random, {
        nextDoubleUnsafe: next,
        nextIntUnsafe: () => Math.floor(next() * Number.MAX_SAFE_INTEGER)
      })
    })

/**
 * A write load far above a Client's rate limit, for the tests of coordination under load: `writers`
 * fibers each creating ConfigMaps one after another, forever, through one Client. With qps 5 and 40
 * writers, about 40 requests wait for a token at any time: a request joining that queue waits 8 s.
 */
import * as Effect from "effect/Effect"
import type * as Client from "../../../src/Client.js"
import * as Resource from "../../../src/Resource.js"

export interface Flood {
  /** Writes asked for (each takes a token first). */
  readonly asked: () => number
  /** Writes answered. */
  readonly answered: () => number
  /** Asked, not yet answered: the writers waiting for a token (or for their answer). */
  readonly waiting: () => number
  /** Runs the writers until interrupted; failures of single writes are counted as answered. */
  readonly run: Effect.Effect<never>
}

export const makeFlood = (
  client: Client.Client.Service,
  options: { readonly writers: number; readonly namespace?: string; readonly prefix?: string }
): Flood => {
  let asked = 0
  let answered = 0
  const writer = (i: number) =>
    Effect.suspend(() => {
      const n = asked++
      return client.create(Resource.configMaps, {
        metadata: { name: `${options.prefix ?? "load"}-${i}-${n}`, namespace: options.namespace ?? "default" },
        data: { n: String(n) }
      }).pipe(
        Effect.ignore,
        Effect.ensuring(Effect.sync(() => void answered++))
      )
    }).pipe(Effect.forever)
  return {
    asked: () => asked,
    answered: () => answered,
    waiting: () => asked - answered,
    run: Effect.forEach(Array.from({ length: options.writers }, (_, i) => i), writer, {
      concurrency: "unbounded"
    }).pipe(Effect.andThen(Effect.never))
  }
}

/**
 * The test kit's shared test fixtures.
 */
import * as Effect from "effect/Effect"

/**
 * Polls `predicate` every `pollMs` (real time); dies with "timed out waiting for `what`" after
 * `timeoutMs`.
 */
export const waitFor = (what: string, predicate: () => boolean, timeoutMs = 5000, pollMs = 10) =>
  Effect.promise(async () => {
    const deadline = Date.now() + timeoutMs
    while (!predicate()) {
      if (Date.now() > deadline) return false
      await new Promise((resolve) => setTimeout(resolve, pollMs))
    }
    return true
  }).pipe(Effect.flatMap((ok) => ok ? Effect.void : Effect.die(new Error(`timed out waiting for ${what}`))))

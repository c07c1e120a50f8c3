/**
 * The Reflector's pure policies: how long to wait (the backoff and `Retry-After`), how to page a LIST, when
 * to ask for watch-list again, and what each failure leads to (`recovery`). `Reflector` re-exports and
 * documents each one; the loop in `internal/reflector.ts` only applies them.
 *
 * @internal
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Random from "effect/Random"
import * as Schedule from "effect/Schedule"
import type { Action, Phase, RecoveryContext, ReflectorError, RelistCause } from "../../Reflector.js"

// -------------------------------------------------------------------------------------------------
// backoff
// -------------------------------------------------------------------------------------------------

/**
 * `self`, started over (its first wait) when more than `duration` passed since its last step: a backoff
 * forgets the failures of a while ago.
 *
 * @internal
 */
export const resetAfterIdle =
  (duration: Duration.Input) =>
  <Out, In, E, R>(self: Schedule.Schedule<Out, In, E, R>): Schedule.Schedule<Out, In, E, R> => {
    const millis = Duration.toMillis(duration)
    return Schedule.fromStep(Effect.map(Schedule.toStep(self), (first) => {
      let step = first
      let last: number | undefined = undefined
      return (now: number, input: In) => {
        const idle = last !== undefined && now - last > millis
        last = now
        if (!idle) return step(now, input)
        return Effect.flatMap(Schedule.toStep(self), (fresh) => {
          step = fresh
          return fresh(now, input)
        })
      }
    }))
  }

/** @internal */
export const defaultMaxRetryAfter: Duration.Duration = Duration.seconds(30)

/** The wait a `TooManyRequests` error asks for, cut to `max`; zero for other errors. @internal */
export const retryAfterDelay = (error: ReflectorError, max: Duration.Input): Duration.Duration =>
  error._tag === "StatusError" && error.reason === "TooManyRequests" && Option.isSome(error.retryAfter)
    ? Duration.min(error.retryAfter.value, Duration.fromInputUnsafe(max))
    : Duration.zero

/**
 * `self`, waiting at least what a `TooManyRequests` error's `Retry-After` asks for (cut to `max`): each
 * wait is the longer of the two. Continues while `self` does, with `self`'s output.
 *
 * @internal
 */
export const honourRetryAfterUpTo = (max: Duration.Input) =>
<Out, In, E, R>(
  self: Schedule.Schedule<Out, In, E, R>
): Schedule.Schedule<Out, In & ReflectorError, E, R> =>
  Schedule.modifyDelay(
    self as Schedule.Schedule<Out, In & ReflectorError, E, R>,
    (metadata) => Effect.succeed(Duration.max(metadata.duration, retryAfterDelay(metadata.input, max)))
  )

/** @internal */
export const honourRetryAfter: <Out, In, E, R>(
  self: Schedule.Schedule<Out, In, E, R>
) => Schedule.Schedule<Out, In & ReflectorError, E, R> = honourRetryAfterUpTo(defaultMaxRetryAfter)

/**
 * `defaultBackoff` before `Retry-After` is honoured (the loop adds it with its own cap): 0.8 s doubling,
 * at most 30 s, each wait jittered to between 1 and 2 times itself, started over after 2 minutes idle.
 *
 * @internal
 */
export const jitteredExponential: Schedule.Schedule<unknown, ReflectorError> = Schedule.min([
  Schedule.exponential("800 millis", 2),
  Schedule.spaced("30 seconds")
]).pipe(
  Schedule.modifyDelay((metadata) =>
    Effect.map(Random.next, (random) => Duration.millis(Duration.toMillis(metadata.duration) * (1 + random)))
  ),
  resetAfterIdle("2 minutes")
)

/** @internal */
export const defaultBackoff: Schedule.Schedule<unknown, ReflectorError> = honourRetryAfter(jitteredExponential)

// -------------------------------------------------------------------------------------------------
// LIST and watch-list
// -------------------------------------------------------------------------------------------------

/** client-go's pager page size. */
const defaultPageSize = 500

/**
 * The `limit` of a LIST (`undefined`: no pagination), as client-go's Reflector chooses it: the page size
 * asked for if any (`0`: none); otherwise pages of 500, except for a relist at a concrete resourceVersion
 * when the first any-age list was not paginated: that one has no `limit`, so that the API server's watch
 * cache serves it rather than etcd.
 *
 * @internal
 */
export const listPageSize = (options: {
  readonly pageSize: number | undefined
  readonly resourceVersion: string
  readonly paginatedResult: boolean
}): number | undefined => {
  if (options.pageSize !== undefined) return options.pageSize > 0 ? options.pageSize : undefined
  if (options.paginatedResult) return defaultPageSize
  if (options.resourceVersion !== "" && options.resourceVersion !== "0") return undefined
  return defaultPageSize
}

/**
 * How long after its `rejections`-th rejection (a 400/405/422, or no initial-events-end bookmark in time)
 * watch-list is tried again: 1 minute, doubling, at most 30 minutes.
 *
 * @internal
 */
export const watchListRetryDelay = (rejections: number): Duration.Duration =>
  Duration.minutes(Math.min(30, 2 ** Math.max(0, Math.min(rejections, 16) - 1)))

// -------------------------------------------------------------------------------------------------
// recovery
// -------------------------------------------------------------------------------------------------

const rewatch = (backoff: boolean): Action => ({ _tag: "Rewatch", backoff })

/** After a Gone on a list: list again at once, consistently. */
const listConsistently: Action = { _tag: "List", consistent: true, rejectWatchList: false, cause: "gone" }

/** A watch-list failed before its end bookmark: LIST in this cycle, and maybe not ask for watch-list for a while. */
const fallBackToList = (rejectWatchList: boolean): Action => ({
  _tag: "List",
  consistent: false,
  rejectWatchList,
  cause: "watch-list-fallback"
})

const relist = (backoff: boolean, consistent: boolean, cause: RelistCause | undefined): Action => ({
  _tag: "Relist",
  backoff,
  consistent,
  cause
})

/** A LIST answered 404: the server no longer serves the resource (its CRD was deleted). */
const stopResourceGone: Action = { _tag: "Stop", reason: "ResourceGone" }

/** A resourceVersion the server cannot serve: too old (`Gone`) or newer than it has seen. */
const isGone = (error: ReflectorError): boolean =>
  error._tag === "StatusError" && (error.reason === "Gone" || error.reason === "ResourceVersionTooLarge")

/** Watch-list answers meaning "this server does not do watch-list" (client-go: 400 BadRequest, 422 Invalid). */
const rejectsWatchList = (code: number): boolean => code === 400 || code === 405 || code === 422

/** @internal */
export const recovery = (error: ReflectorError, phase: Exclude<Phase, "event">, context: RecoveryContext): Action => {
  // A defect, wherever it happened: back off and start over (not counted as a relist).
  if (error._tag === "UnexpectedError") return relist(true, false, undefined)
  switch (phase) {
    case "list":
      // The resource itself is gone: a missing namespace answers 200 with no items, a missing object is no LIST.
      if (error._tag === "StatusError" && error.reason === "NotFound") return stopResourceGone
      // list again at once with a consistent read, unless this list was that read already
      if (isGone(error)) return context.afterGone ? relist(true, true, "error") : listConsistently
      return relist(true, false, "error")
    case "watch-list":
      // Before its end bookmark; anything not named here falls back to LIST in this cycle.
      if (isGone(error)) return context.consistent ? fallBackToList(false) : relist(false, true, undefined)
      switch (error._tag) {
        case "StatusError":
          return error.reason === "TooManyRequests"
            ? relist(true, false, undefined)
            : fallBackToList(rejectsWatchList(error.code))
        case "TransportError":
          return relist(true, false, undefined)
        case "ProtocolError":
          switch (error.reason) {
            case "WatchListEndedEarly":
              return relist(!context.connected, false, undefined)
            case "WatchListTimeout":
              return fallBackToList(true)
            default:
              return fallBackToList(false)
          }
        default:
          return fallBackToList(false)
      }
    case "watch":
      // A watch, or a watch-list after its end bookmark.
      if (isGone(error)) return relist(context.goneWithoutProgress, true, "gone")
      switch (error._tag) {
        case "StatusError":
          return error.reason === "TooManyRequests" ? rewatch(true) : relist(true, false, "error")
        case "TransportError":
          return rewatch(!context.connected)
        case "ProtocolError":
          return error.reason === "VeryShortWatch"
            ? relist(true, false, "very-short-watch")
            : relist(true, false, "error")
        default:
          return relist(true, false, "error")
      }
    case "resync":
      return relist(true, false, "resync-error")
  }
}

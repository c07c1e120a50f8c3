/**
 * Decoding of each wire object by its resource's `decode` (`Resource.custom`'s schema, `Resource.metadataOnly`'s
 * projection), where objects enter: the items of a LIST page and the objects of watch events, once each.
 * A resource without `decode` never reaches this module: the ListerWatchers choose at construction, so
 * plain resources run exactly the code they ran before.
 *
 * @internal
 */
import type * as Arr from "effect/Array"
import * as Effect from "effect/Effect"
import type * as Pull from "effect/Pull"
import * as Result from "effect/Result"
import * as Stream from "effect/Stream"
import { DecodeError } from "../../ApiError.js"
import type { KubeObject } from "../../KubeObject.js"
import type { ListerWatcher, ListerWatcherError, ListPage, WatchEvent } from "../../ListerWatcher.js"
import type { DecodeFailure } from "../../Wire.js"
import type { Scrub } from "../redact.js"

/** @internal */
export type Decode<A> = (object: KubeObject) => Result.Result<A, DecodeFailure>

const failure = (prefix: string, scrub: Scrub, cause: DecodeFailure): DecodeError =>
  new DecodeError({
    reason: "SchemaMismatch",
    message: scrub(`${prefix}: ${cause.message}`),
    ...(cause.detail === undefined ? {} : { detail: scrub(cause.detail) })
  })

/**
 * The page with every item decoded, or the `DecodeError` of the first item that does not decode.
 * `prefix` starts the message (`list widgets.example.com in default`).
 *
 * @internal
 */
export const decodePage = <A>(
  page: ListPage<KubeObject>,
  decode: Decode<A>,
  prefix: string,
  scrub: Scrub
): Effect.Effect<ListPage<A>, DecodeError> => {
  const items = page.items
  const out = new Array<A>(items.length)
  for (let i = 0; i < items.length; i++) {
    const decoded = decode(items[i])
    if (Result.isFailure(decoded)) return Effect.fail(failure(prefix, scrub, decoded.failure))
    out[i] = decoded.success
  }
  return Effect.succeed({ ...page, items: out })
}

/**
 * Watch events with each object decoded, one chunk at a time. The events of a chunk before one whose
 * object does not decode are emitted, then the stream fails with its `DecodeError` (as a malformed line
 * fails the watch decoder).
 *
 * @internal
 */
export const decodeEvents = <A>(decode: Decode<A>, prefix: string, scrub: Scrub) =>
(
  events: Stream.Stream<WatchEvent<KubeObject>, ListerWatcherError>
): Stream.Stream<WatchEvent<A>, ListerWatcherError> =>
  Stream.transformPull(events, (pull) =>
    Effect.sync(() => {
      // the error of a chunk's object, raised at the pull after the chunk's events before it
      let pending: DecodeError | undefined
      const next: Pull.Pull<Arr.NonEmptyReadonlyArray<WatchEvent<A>>, ListerWatcherError> = Effect.suspend(() =>
        pending !== undefined ? Effect.fail(pending) : Effect.flatMap(pull, onChunk)
      )
      const onChunk = (
        events: Arr.NonEmptyReadonlyArray<WatchEvent<KubeObject>>
      ): Pull.Pull<Arr.NonEmptyReadonlyArray<WatchEvent<A>>, ListerWatcherError> => {
        const out: Array<WatchEvent<A>> = []
        for (let i = 0; i < events.length; i++) {
          const event = events[i]
          if (event.type === "BOOKMARK") {
            out.push(event)
            continue
          }
          const decoded = decode(event.object)
          if (Result.isFailure(decoded)) {
            pending = failure(prefix, scrub, decoded.failure)
            break
          }
          out.push({ type: event.type, object: decoded.success })
        }
        return out.length === 0 ? next : Effect.succeed(out as unknown as Arr.NonEmptyReadonlyArray<WatchEvent<A>>)
      }
      return next
    }))

/**
 * A ListerWatcher whose objects are decoded by `decode` (for sources that hand out objects as stored, such
 * as the fakes). `description` prefixes messages.
 *
 * @internal
 */
export const decodingListerWatcher = <A>(
  lw: ListerWatcher.Service<KubeObject>,
  decode: Decode<A>,
  description: string,
  scrub: Scrub
): ListerWatcher.Service<A> => ({
  ...lw,
  list: (options) => Effect.flatMap(lw.list(options), (page) => decodePage(page, decode, `list ${description}`, scrub)),
  watch: (options) => decodeEvents(decode, `watch ${description}`, scrub)(lw.watch(options))
})

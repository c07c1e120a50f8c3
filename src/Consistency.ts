/**
 * Read-your-own-writes for controllers: after a reconcile writes an object, the next reconcile of the same
 * key must not start from a cache that has not yet seen that write (the stale-cache problem: it would
 * act on the old state and, say, create a second child). This is Kubernetes 1.36's mechanism (KEP-5647,
 * `pkg/controller/util/consistency`) for any controller:
 *
 * - `KubeObject.compareResourceVersions` compares two resourceVersions as KEP-5504 allows (Kubernetes 1.35: decimal
 *   strings without leading zeros, strictly increasing across writes); anything else is not comparable
 *   and never blocks;
 * - a `Tracker` records, per key, the highest resourceVersion each write of its reconcile returned, per
 *   group-resource (`wrote`), and tells whether every cache of those group-resources has caught up
 *   (`check`: the cache's resourceVersion is that of its last event, list or bookmark, so a write the
 *   informer never shows, filtered out by a selector or deleted at once, is still passed by the next
 *   bookmark or event);
 * - the wait is bounded: a record older than `maxWait` (10 s by default) is dropped with a warning, so a
 *   cache that stopped making progress delays a key, never blocks it;
 * - `Writes` is the service a reconcile sees in its context: the library's `Client` records every
 *   successful write in it, and code writing by other means can call `record` itself.
 *
 * @since 0.2.0
 */
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { compareResourceVersions } from "./KubeObject.js"

// -------------------------------------------------------------------------------------------------
// resourceVersions
// -------------------------------------------------------------------------------------------------

/**
 * Whether resourceVersion `read` is at least `written`; `true` when they cannot be compared (an opaque
 * resourceVersion never blocks).
 *
 * @since 0.2.0
 * @category resourceVersions
 */
export const isCaughtUp = (read: string, written: string): boolean =>
  Option.match(compareResourceVersions(read, written), { onNone: () => true, onSome: (order) => order >= 0 })

// -------------------------------------------------------------------------------------------------
// the reconcile's view
// -------------------------------------------------------------------------------------------------

/**
 * What a reconcile's writes are recorded in. A Controller provides it to every reconcile; the `Client`
 * records each write it makes when it finds it in its context.
 *
 * @since 0.2.0
 * @category models
 */
export interface WritesService {
  /**
   * Records that a write of the current reconcile returned `resourceVersion` for an object of
   * `groupResource` (`Resource.groupResource`, e.g. `configmaps` or `deployments.apps`).
   */
  readonly record: (groupResource: string, resourceVersion: string) => Effect.Effect<void>
}

/**
 * @since 0.2.0
 * @category tags
 */
export class Writes extends Context.Service<Writes, WritesService>()("effect-informers/Consistency/Writes") {}

/**
 * Records a write in the current reconcile's `Writes`, if there is one (outside a reconcile: nothing).
 *
 * @since 0.2.0
 * @category recording
 */
export const recordWrite = (groupResource: string, resourceVersion: string | undefined): Effect.Effect<void> =>
  resourceVersion === undefined || resourceVersion === ""
    ? Effect.void
    : Effect.flatMap(
      Effect.serviceOption(Writes),
      Option.match({ onNone: () => Effect.void, onSome: (writes) => writes.record(groupResource, resourceVersion) })
    )

// -------------------------------------------------------------------------------------------------
// the tracker
// -------------------------------------------------------------------------------------------------

/**
 * Why a key is not reconciled yet: the cache of `groupResource` is at `readResourceVersion`, older than
 * the `writtenResourceVersion` the key's last reconcile wrote.
 *
 * @since 0.2.0
 * @category models
 */
export interface Stale {
  readonly groupResource: string
  readonly readResourceVersion: string
  readonly writtenResourceVersion: string
}

/**
 * @since 0.2.0
 * @category models
 */
export interface Tracker {
  /** Records a write of `key`'s reconcile (the highest resourceVersion per group-resource is kept). */
  readonly wrote: (key: string, groupResource: string, resourceVersion: string) => Effect.Effect<void>
  /**
   * Whether every cache `key` wrote to has caught up: `None` when it may be reconciled (the record is
   * then cleared), or the first stale cache. A record older than `maxWait` is dropped: `None`.
   */
  readonly check: (key: string) => Effect.Effect<Option.Option<Stale>>
  /** Forgets `key` (its object was deleted). */
  readonly clear: (key: string) => Effect.Effect<void>
  /** Keys with a pending record. */
  readonly size: Effect.Effect<number>
}

/**
 * @since 0.2.0
 * @category models
 */
export interface TrackerOptions {
  /**
   * The resourceVersion of the cache of each tracked group-resource (`SharedInformer`'s
   * `indexer.lastResourceVersion`). Writes to group-resources without a cache here are not tracked.
   */
  readonly caches: ReadonlyMap<string, Effect.Effect<string>>
  /** How long a key may wait for its caches; then its record is dropped with a warning. Default 10 s. */
  readonly maxWait?: Duration.Input | undefined
}

interface Record {
  since: number
  readonly written: Map<string, string>
}

/**
 * The default bound of the wait for a cache to catch up with a key's own write.
 *
 * @since 0.2.0
 * @category constants
 */
export const defaultMaxWait: Duration.Duration = Duration.seconds(10)

/**
 * Makes a `Tracker` over the given caches. Time comes from `Clock`.
 *
 * @example
 * ```ts
 * import { Consistency } from "effect-informers"
 * import { Effect, Option } from "effect"
 *
 * const program = Effect.gen(function*() {
 *   let cacheVersion = "5"
 *   const tracker = yield* Consistency.makeTracker({
 *     caches: new Map([["configmaps", Effect.sync(() => cacheVersion)]])
 *   })
 *   yield* tracker.wrote("default/a", "configmaps", "7")
 *   const stale = yield* tracker.check("default/a") // Option.some({ ... readResourceVersion: "5" })
 *   cacheVersion = "7"
 *   const ready = yield* tracker.check("default/a") // Option.none()
 *   return [Option.isSome(stale), Option.isNone(ready)]
 * })
 * ```
 *
 * @since 0.2.0
 * @category constructors
 */
export const makeTracker = (options: TrackerOptions): Effect.Effect<Tracker> =>
  Clock.clockWith((clock) => {
    const maxWait = Duration.toMillis(options.maxWait ?? defaultMaxWait)
    const records = new Map<string, Record>()
    return Effect.succeed<Tracker>({
      wrote: (key, groupResource, resourceVersion) =>
        Effect.sync(() => {
          if (!options.caches.has(groupResource) || resourceVersion === "") return
          // the wait counts from the key's last write (a long reconcile's early write gets its full wait)
          const now = clock.currentTimeMillisUnsafe()
          let record = records.get(key)
          if (record === undefined) {
            record = { since: now, written: new Map() }
            records.set(key, record)
          } else {
            record.since = now
          }
          const previous = record.written.get(groupResource)
          if (previous === undefined || !isCaughtUp(previous, resourceVersion)) {
            record.written.set(groupResource, resourceVersion)
          }
        }),
      check: (key) =>
        Effect.suspend(() => {
          const record = records.get(key)
          if (record === undefined) return Effect.succeed(Option.none())
          return Effect.gen(function*() {
            for (const [groupResource, written] of record.written) {
              const read = yield* options.caches.get(groupResource)!
              if (isCaughtUp(read, written)) {
                record.written.delete(groupResource)
                continue
              }
              const waited = clock.currentTimeMillisUnsafe() - record.since
              if (waited < maxWait) {
                return Option.some<Stale>({ groupResource, readResourceVersion: read, writtenResourceVersion: written })
              }
              yield* Effect.logWarning(
                `${key}: the ${groupResource} cache is still at resourceVersion ${read} after ${
                  Duration.format(Duration.millis(waited))
                }, older than this key's own write at ${written}: reconciling without waiting longer`
              )
              record.written.delete(groupResource)
            }
            records.delete(key)
            return Option.none()
          })
        }),
      clear: (key) => Effect.sync(() => void records.delete(key)),
      size: Effect.sync(() => records.size)
    })
  })

/**
 * The event recorder's machinery: the buffer, the writer fiber, series of isomorphic events and the spam
 * filter. `EventRecorder` documents and re-exports it.
 *
 * @internal
 */
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Metric from "effect/Metric"
import * as Queue from "effect/Queue"
import type * as Scope from "effect/Scope"
import { Client, mergePatch } from "../../Client.js"
import type * as EventRecorder from "../../EventRecorder.js"
import type { KubeObject } from "../../KubeObject.js"
import type { Resource } from "../../Resource.js"
import { apiVersion, eventsV1 } from "../../Resource.js"
import { tagged } from "../metricTags.js"
import { TokenBucket } from "../tokenBucket.js"
import * as ControllerMetrics from "./metrics.js"
import { resumeLater } from "./workQueue.js"

interface Pending {
  readonly regarding: Reference
  readonly related: Reference | undefined
  readonly event: EventRecorder.Event
  readonly at: number
}

interface Reference {
  readonly apiVersion: string
  readonly kind: string
  readonly namespace?: string | undefined
  readonly name: string
  readonly uid?: string | undefined
  readonly resourceVersion?: string | undefined
}

interface Series {
  readonly name: string
  readonly namespace: string
  count: number
  last: number
  /** When the series was last written (its creation, or its last patch). */
  written: number
}

/**
 * A series is written at its first repeat, then at most this often: the count on the server may lag by as
 * much, and an event repeating every second costs two writes a minute, not sixty.
 */
const seriesWriteInterval = 30_000

const referenceOf = (resource: Resource<unknown>, object: KubeObject): Reference => ({
  apiVersion: apiVersion(resource),
  kind: resource.kind,
  ...(object.metadata?.namespace === undefined ? {} : { namespace: object.metadata.namespace }),
  name: object.metadata?.name ?? "",
  ...(object.metadata?.uid === undefined ? {} : { uid: object.metadata.uid }),
  ...(object.metadata?.resourceVersion === undefined ? {} : { resourceVersion: object.metadata.resourceVersion })
})

/** RFC 3339 with microseconds: a `MicroTime`. */
const microTime = (millis: number): string => new Date(millis).toISOString().replace(/\.(\d{3})Z$/, ".$1000Z")

const maxNote = 1024

const encoder = new TextEncoder()

/** `text` cut to at most `max` UTF-8 bytes (the API server counts bytes), on a character boundary. */
const cutToBytes = (text: string, max: number): string => {
  if (text.length * 3 <= max || encoder.encode(text).length <= max) return text
  let cut = text.slice(0, max)
  while (encoder.encode(cut).length > max) cut = cut.slice(0, -1)
  // never half a surrogate pair
  const last = cut.charCodeAt(cut.length - 1)
  return last >= 0xd800 && last <= 0xdbff ? cut.slice(0, -1) : cut
}

/** @internal */
export const make = (
  options: EventRecorder.Options
): Effect.Effect<EventRecorder.EventRecorder.Service, never, Client | Scope.Scope> =>
  Effect.gen(function*() {
    const client = yield* Client
    const clock = yield* Clock.Clock
    const capacity = Math.max(1, options.capacity ?? 1000)
    const window = Duration.toMillis(options.seriesWindow ?? Duration.minutes(6))
    const burst = options.spam?.burst ?? 25
    const refill = Duration.toMillis(options.spam?.refill ?? Duration.minutes(5))
    const queue = yield* Queue.dropping<Pending>(capacity)
    // events accepted and not yet written, and the flushes waiting for that to be none
    let outstanding = 0
    let flushes: Array<() => void> = []
    const settled = () => {
      if (--outstanding > 0 || flushes.length === 0) return
      const waiting = flushes
      flushes = []
      for (const resume of waiting) resume()
    }
    const series = new Map<string, Series>()
    let sequence = 0
    const buckets = new Map<string, TokenBucket>()
    const droppedBy = (reason: string) => tagged(ControllerMetrics.droppedEvents, { reason })
    const full = droppedBy("full")
    const spam = droppedBy("spam")
    const failed = droppedBy("failed")

    const isomorphic = (p: Pending): string =>
      JSON.stringify([
        p.regarding.apiVersion,
        p.regarding.kind,
        p.regarding.namespace,
        p.regarding.name,
        p.regarding.uid,
        p.event.type,
        p.event.reason,
        p.event.action,
        p.event.note,
        p.related?.kind,
        p.related?.namespace,
        p.related?.name
      ])

    const write = (p: Pending): Effect.Effect<void> =>
      Effect.suspend(() => {
        const objectKey = `${p.regarding.kind}/${p.regarding.namespace ?? ""}/${p.regarding.name}`
        let bucket = buckets.get(objectKey)
        if (bucket === undefined) {
          bucket = new TokenBucket(1000 / refill, burst)
          buckets.set(objectKey, bucket)
        }
        const key = isomorphic(p)
        const known = series.get(key)
        if (known !== undefined && p.at - known.last < window) {
          known.count++
          known.last = p.at
          if (known.count > 2 && p.at - known.written < seriesWriteInterval) return Effect.void
          known.written = p.at
          return Effect.asVoid(client.patch(
            eventsV1,
            known.name,
            mergePatch({ series: { count: known.count, lastObservedTime: microTime(p.at) } }),
            { namespace: known.namespace }
          )).pipe(
            // the Event is gone (its TTL, or deleted): a new one, as client-go does
            Effect.catchIf(
              (e) => e._tag === "StatusError" && e.reason === "NotFound",
              () =>
                Effect.suspend(() => {
                  series.delete(key)
                  return write(p)
                })
            )
          )
        }
        if (!bucket.tryTake(p.at)) return Metric.update(spam, 1)
        const namespace = p.regarding.namespace ?? "default"
        // client-go: the name and the time in nanoseconds, in hex; a counter keeps names of one millisecond
        // apart (exact, in BigInt: the float would round it away)
        const name = `${p.regarding.name}.${(BigInt(p.at) * 1_000_000n + BigInt(sequence++ % 1_000_000)).toString(16)}`
        const note = p.event.note === undefined ? undefined : cutToBytes(p.event.note, maxNote)
        return Effect.map(
          client.create(eventsV1, {
            apiVersion: "events.k8s.io/v1",
            kind: "Event",
            metadata: { namespace, name },
            eventTime: microTime(p.at),
            reportingController: options.reportingController,
            reportingInstance: options.reportingInstance,
            action: p.event.action,
            reason: p.event.reason,
            type: p.event.type,
            ...(note === undefined ? {} : { note }),
            regarding: p.regarding,
            ...(p.related === undefined ? {} : { related: p.related })
          } as never),
          (): void => void series.set(key, { name, namespace, count: 1, last: p.at, written: p.at })
        )
      }).pipe(
        Effect.catchCause((cause) =>
          Effect.andThen(
            Effect.logDebug(`event ${p.event.reason} about ${p.regarding.kind} ${p.regarding.name} not written`, cause),
            Metric.update(failed, 1)
          )
        )
      )
    const handle = (p: Pending): Effect.Effect<void> => Effect.ensuring(write(p), Effect.sync(settled))

    // forget series and buckets gone quiet, so that memory follows the objects still eventful
    const sweep = (now: number) => {
      for (const [key, s] of series) if (now - s.last >= window) series.delete(key)
      // a full bucket is the same as a new one: dropping it forgets nothing (clearing them all would reset
      // the spam filter of the objects still being spammed)
      for (const [key, bucket] of buckets) if (bucket.available(now) >= burst) buckets.delete(key)
    }

    let writes = 0
    yield* Effect.forkScoped(Effect.forever(Effect.gen(function*() {
      const batch = yield* Queue.takeBetween(queue, 1, 100)
      for (const item of batch) {
        yield* handle(item)
        if (++writes % 256 === 0) sweep(clock.currentTimeMillisUnsafe())
      }
    })))
    // At shutdown (this finalizer runs before the writer's is interrupted): record nothing more, and let the
    // writer write what waits, for 5 seconds at most.
    let closing = false
    const flush = Effect.callback<void>((resume) => {
      if (outstanding === 0) return resume(Effect.void)
      // (resumed after a yield: not inside the writer, see `resumeLater`)
      flushes.push(() => resume(resumeLater(Effect.void)))
    })
    yield* Effect.addFinalizer(() =>
      Effect.suspend(() => {
        closing = true
        return flush
      }).pipe(Effect.interruptible, Effect.timeout("5 seconds"), Effect.ignore)
    )

    return {
      record: (resource, object, event) =>
        Effect.suspend(() => {
          if (closing) return Effect.void
          const pending: Pending = {
            regarding: referenceOf(resource, object),
            related: event.related === undefined
              ? undefined
              : referenceOf(event.related.resource, event.related.object),
            event,
            at: clock.currentTimeMillisUnsafe()
          }
          outstanding++
          return Effect.flatMap(Queue.offer(queue, pending), (accepted) => {
            if (accepted) return Effect.void
            outstanding--
            return Metric.update(full, 1)
          })
        }),
      flush
    }
  })

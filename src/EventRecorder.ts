/**
 * Kubernetes Events (`events.k8s.io/v1`) about the objects a controller acts on, as client-go's event
 * recorder writes them (`tools/events`):
 *
 * - `record` never blocks and never fails the caller: events wait in a bounded buffer (1,000 by default;
 *   when it is full the newest is dropped and counted in `Metrics.droppedEvents`) and one fiber writes them
 *   through the `Client`;
 * - isomorphic events (same object, reason, action, type, note, reporting controller) within 6 minutes
 *   are one Event with a `series` (`count`, `lastObservedTime`), written at the first repeat and then at
 *   most every 30 seconds (the server's count may lag by as much);
 * - a spam filter per object, as client-go's: a token bucket of 25 refilled one every 5 minutes, so a
 *   controller stuck in a loop on one object writes a few dozen Events, not thousands;
 * - a failed write is logged at debug level and dropped (events are best effort, as in client-go).
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { EventRecorder, Resource } from "effect-informers"
 *
 * declare const pod: Resource.Pod
 *
 * const program = Effect.gen(function*() {
 *   const recorder = yield* EventRecorder.make({ reportingController: "example.com/my-controller", reportingInstance: "replica-1" })
 *   yield* recorder.record(Resource.pods, pod, { type: "Warning", reason: "FailedSync", action: "Sync", note: "image not found" })
 * })
 * ```
 *
 * @since 0.2.0
 */
import * as Context from "effect/Context"
import type * as Duration from "effect/Duration"
import type * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import type { Client } from "./Client.js"
import * as internal from "./internal/controller/eventRecorder.js"
import type { KubeObject } from "./KubeObject.js"
import type { Resource } from "./Resource.js"

/**
 * @since 0.2.0
 * @category models
 */
export interface Event {
  readonly type: "Normal" | "Warning"
  /** Why, in UpperCamelCase: `Created`, `FailedSync`... */
  readonly reason: string
  /** What was done or tried, in UpperCamelCase: `Create`, `Sync`... */
  readonly action: string
  /** A human-readable message (cut to 1 KiB, as the API server requires). */
  readonly note?: string | undefined
  /** A second object the event is about. */
  readonly related?: { readonly resource: Resource<any>; readonly object: KubeObject } | undefined
}

/**
 * @since 0.2.0
 * @category models
 */
export declare namespace EventRecorder {
  /**
   * @since 0.2.0
   * @category models
   */
  export interface Service {
    /** Queues an event about `object`; returns at once. */
    readonly record: <A extends KubeObject>(resource: Resource<A>, object: A, event: Event) => Effect.Effect<void>
    /** Waits until every queued event has been written (or dropped). */
    readonly flush: Effect.Effect<void>
  }
}

/**
 * @since 0.2.0
 * @category models
 */
export interface Options {
  /** `reportingController`, e.g. `example.com/replicator` (client-go: the component's name). */
  readonly reportingController: string
  /** `reportingInstance`, e.g. the replica's identity. */
  readonly reportingInstance: string
  /** Events waiting to be written at most; more are dropped. Defaults to 1000. */
  readonly capacity?: number | undefined
  /** Isomorphic events within this window are one Event with a series. Defaults to 6 minutes. */
  readonly seriesWindow?: Duration.Input | undefined
  /** The spam filter per object: a bucket of `burst` refilled one token every `refill`. 25 and 5 minutes. */
  readonly spam?:
    | { readonly burst?: number | undefined; readonly refill?: Duration.Input | undefined }
    | undefined
}

/**
 * @since 0.2.0
 * @category tags
 */
export class EventRecorder extends Context.Service<EventRecorder, EventRecorder.Service>()(
  "effect-informers/EventRecorder"
) {}

/**
 * A recorder writing through the `Client` of the context, in the current scope (closing it writes what
 * is queued, for at most 5 seconds, then stops).
 *
 * @since 0.2.0
 * @category constructors
 */
export const make: (options: Options) => Effect.Effect<EventRecorder.Service, never, Client | Scope.Scope> =
  internal.make

/**
 * @since 0.2.0
 * @category layers
 */
export const layer = (options: Options): Layer.Layer<EventRecorder, never, Client> =>
  Layer.effect(EventRecorder, make(options))

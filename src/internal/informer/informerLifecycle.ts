/**
 * A SharedInformer's life as one state and its transitions: made (`Created`), started (`Running`), stopped
 * (`Stopped`: its scope closed, whether or not it had started, or its Reflector stopped because the
 * resource is gone). `start`, the scope's close and the Reflector's stop are the only events; the informer
 * (`SharedInformer.ts` `make`) holds the state and changes it through `transition` only, each change one
 * synchronous step.
 *
 * @internal
 */

/**
 * Where an informer is:
 * - `Created`: handlers, indexers and settings may be added; nothing runs yet;
 * - `Running`: `start` ran (the Reflector and the controller's loop run); settings are closed;
 * - `Stopped`: the scope closed (`reason: "Closed"`) or the Reflector stopped because a LIST answered 404
 *   NotFound (`reason: "ResourceGone"`); nothing can be added or started, and nothing syncs any more.
 *   `started`: whether it had been started (`isStarted` stays true after a stop, as client-go's
 *   `HasStarted`).
 *
 * @internal
 */
export type State = Created | Running | Stopped

/** @internal */
export interface Created {
  readonly _tag: "Created"
}

/** @internal */
export interface Running {
  readonly _tag: "Running"
}

/** @internal */
export interface Stopped {
  readonly _tag: "Stopped"
  readonly started: boolean
  readonly reason: StopReason
}

/** @internal */
export type StopReason = "Closed" | "ResourceGone"

/**
 * What happens to an informer: `start`, its scope closes (`stop`), or its Reflector stops because the
 * resource is gone (`resourceGone`). @internal
 */
export type Event = "start" | "stop" | "resourceGone"

/** @internal */
export const created: State = { _tag: "Created" }
const running: State = { _tag: "Running" }
const stoppedBeforeStart: State = { _tag: "Stopped", started: false, reason: "Closed" }
const stoppedAfterStart: State = { _tag: "Stopped", started: true, reason: "Closed" }
const goneBeforeStart: State = { _tag: "Stopped", started: false, reason: "ResourceGone" }
const goneAfterStart: State = { _tag: "Stopped", started: true, reason: "ResourceGone" }

/**
 * The informer's next state. A stop is final, whichever came first (its reason stays); a second start
 * changes nothing (the caller warns), nor does a start after the stop (the caller fails with
 * `InformerStoppedError`). Only a running Reflector stops for `resourceGone`; the row for `Created` is
 * there for completeness.
 *
 * | state | start | stop | resourceGone |
 * |---|---|---|---|
 * | Created | Running | Stopped (not started, Closed) | Stopped (not started, ResourceGone) |
 * | Running | Running | Stopped (started, Closed) | Stopped (started, ResourceGone) |
 * | Stopped | Stopped | Stopped | Stopped |
 *
 * @internal
 */
export const transition = (state: State, event: Event): State => {
  switch (state._tag) {
    case "Created":
      return event === "start" ? running : event === "stop" ? stoppedBeforeStart : goneBeforeStart
    case "Running":
      return event === "start" ? state : event === "stop" ? stoppedAfterStart : goneAfterStart
    case "Stopped":
      return state
  }
}

/** Why a stopped informer stopped; `undefined` while it has not. @internal */
export const stopReason = (state: State): StopReason | undefined => state._tag === "Stopped" ? state.reason : undefined

/** Whether `start` ran, also if the informer has stopped since (`isStarted`; settings are closed). @internal */
export const hasStarted = (state: State): boolean =>
  state._tag === "Running" || (state._tag === "Stopped" && state.started)

/** Whether the informer has stopped (`isStopped`; nothing can be added or started). @internal */
export const isStopped = (state: State): boolean => state._tag === "Stopped"

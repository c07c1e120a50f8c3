/**
 * A SharedInformer's life as one state and its transitions: made (`Created`), started (`Running`), stopped
 * (`Stopped`: its scope closed, whether or not it had started). `start` and the scope's close are the only
 * events; the informer (`SharedInformer.ts` `make`) holds the state and changes it through `transition`
 * only, each change one synchronous step.
 *
 * @internal
 */

/**
 * Where an informer is:
 * - `Created`: handlers, indexers and settings may be added; nothing runs yet;
 * - `Running`: `start` ran (the Reflector and the controller's loop run); settings are closed;
 * - `Stopped`: the scope closed; nothing can be added or started, and nothing syncs any more. `started`:
 *   whether it had been started (`isStarted` stays true after a stop, as client-go's `HasStarted`).
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
}

/** What happens to an informer: `start`, or its scope closes (`stop`). @internal */
export type Event = "start" | "stop"

/** @internal */
export const created: State = { _tag: "Created" }
const running: State = { _tag: "Running" }
const stoppedBeforeStart: State = { _tag: "Stopped", started: false }
const stoppedAfterStart: State = { _tag: "Stopped", started: true }

/**
 * The informer's next state. A stop is final; a second start changes nothing (the caller warns), nor does
 * a start after the stop (the caller fails with `InformerStoppedError`).
 *
 * | state | start | stop |
 * |---|---|---|
 * | Created | Running | Stopped (not started) |
 * | Running | Running | Stopped (started) |
 * | Stopped | Stopped | Stopped |
 *
 * @internal
 */
export const transition = (state: State, event: Event): State => {
  switch (state._tag) {
    case "Created":
      return event === "start" ? running : stoppedBeforeStart
    case "Running":
      return event === "start" ? state : stoppedAfterStart
    case "Stopped":
      return state
  }
}

/** Whether `start` ran, also if the informer has stopped since (`isStarted`; settings are closed). @internal */
export const hasStarted = (state: State): boolean =>
  state._tag === "Running" || (state._tag === "Stopped" && state.started)

/** Whether the informer has stopped (`isStopped`; nothing can be added or started). @internal */
export const isStopped = (state: State): boolean => state._tag === "Stopped"

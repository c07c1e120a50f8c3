/**
 * The SharedInformer's errors, re-exported by `SharedInformer.ts` (declared here so that the informer's
 * machinery, which raises them, need not import the public module at run time).
 *
 * @internal
 */
import * as Data from "effect/Data"

/**
 * The informer has stopped: handlers and indexers can no longer be added, it cannot be started, and if it
 * had not synced it never will (`operation: "synced"`: what `synced` fails with). `reason: "ResourceGone"`:
 * it stopped because its resource is gone (a LIST answered 404 NotFound), not because its scope closed.
 *
 * @internal
 */
export class InformerStoppedError extends Data.TaggedError("InformerStoppedError")<{
  readonly informer: string
  /**
   * Why the informer stopped: `"Closed"` (also when absent), its scope closed (its factory shut down or
   * removed it); `"ResourceGone"`, a LIST answered 404 NotFound: the API server no longer serves the
   * resource (its CRD was deleted).
   */
  readonly reason?: "Closed" | "ResourceGone" | undefined
  /**
   * What the stop refused. `"addEventHandler"` (also when absent), `"addIndexers"`, `"start"`, or
   * `"synced"`: the informer (or, with `handler`, that handler's registration) stopped before it synced.
   */
  readonly operation?: "addEventHandler" | "addIndexers" | "start" | "synced" | undefined
  /** With `operation: "synced"`: the handler whose registration never synced; absent for the informer itself. */
  readonly handler?: string | undefined
}> {
  override get message(): string {
    const why = this.reason === "ResourceGone"
      ? ": its resource is gone (a LIST answered 404 NotFound)"
      : ""
    switch (this.operation) {
      case "addIndexers":
        return `indexers were not added to shared informer ${this.informer} because it has stopped already${why}`
      case "start":
        return `shared informer ${this.informer} was not started because it has stopped already${why}`
      case "synced":
        return this.handler === undefined
          ? `shared informer ${this.informer} stopped before it synced${why}`
          : `shared informer ${this.informer} stopped before handler ${this.handler} synced${why}`
      default:
        return `handler was not added to shared informer ${this.informer} because it has stopped already${why}`
    }
  }
}

/**
 * A setting that must be made before start was changed after.
 *
 * @internal
 */
export class InformerStartedError extends Data.TaggedError("InformerStartedError")<{
  readonly informer: string
  readonly setting: string
}> {
  override get message(): string {
    return `informer ${this.informer} has already started: ${this.setting} can no longer be changed`
  }
}

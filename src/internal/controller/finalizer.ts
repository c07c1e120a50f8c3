/**
 * Finalizers: the pure helpers, and the reconcile flow of kube-rs's `finalizer()` over the `Client`.
 *
 * @internal
 */
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type * as Schedule from "effect/Schedule"
import { isApiError } from "../../ApiError.js"
import type { ApiError } from "../../ApiError.js"
import * as Client from "../../Client.js"
import type * as Controller from "../../Controller.js"
import type * as Finalizer from "../../Finalizer.js"
import type { KubeObject } from "../../KubeObject.js"
import type { Resource } from "../../Resource.js"
import type { TermError } from "../../Term.js"
import * as Workers from "./workers.js"

// -------------------------------------------------------------------------------------------------
// errors
// -------------------------------------------------------------------------------------------------

/** @internal */
export class FinalizerError extends Data.TaggedError("FinalizerError")<{
  readonly reason: Finalizer.FinalizerErrorReason
  readonly finalizer: string
  /** The object's `namespace/name` (or `name`), `""` when it has none. */
  readonly object: string
  /** The failed write of `AddFailed` and `RemoveFailed`. */
  readonly cause?: ApiError | TermError | undefined
  readonly message: string
}> {}

const keyOf = (obj: KubeObject): string => {
  const name = obj.metadata?.name ?? ""
  const namespace = obj.metadata?.namespace
  return namespace === undefined || namespace === "" ? name : `${namespace}/${name}`
}

// -------------------------------------------------------------------------------------------------
// pure helpers
// -------------------------------------------------------------------------------------------------

interface FinalizerMeta {
  readonly finalizers?: unknown
  readonly deletionTimestamp?: unknown
}

const listOf = (obj: KubeObject): ReadonlyArray<unknown> | undefined => {
  const finalizers = (obj.metadata as FinalizerMeta | undefined)?.finalizers
  return Array.isArray(finalizers) ? finalizers : undefined
}

/** @internal */
export const has = (obj: KubeObject, name: string): boolean => listOf(obj)?.includes(name) === true

/** @internal */
export const isDeleting = (obj: KubeObject): boolean => {
  const timestamp = (obj.metadata as FinalizerMeta | undefined)?.deletionTimestamp
  return timestamp !== undefined && timestamp !== null && timestamp !== ""
}

const withList = <A extends KubeObject>(obj: A, list: ReadonlyArray<unknown>): A => {
  const { finalizers: _, ...metadata } = (obj.metadata ?? {}) as FinalizerMeta & Record<string, unknown>
  return { ...obj, metadata: list.length === 0 ? metadata : { ...metadata, finalizers: list } }
}

/** @internal */
export const add = <A extends KubeObject>(obj: A, name: string): A => {
  const list = listOf(obj) ?? []
  return list.includes(name) ? obj : withList(obj, [...list, name])
}

/** @internal */
export const remove = <A extends KubeObject>(obj: A, name: string): A => {
  const list = listOf(obj)
  if (list === undefined || !list.includes(name)) return obj
  return withList(obj, list.filter((f) => f !== name))
}

// Kubernetes' IsQualifiedName: an optional DNS-1123 subdomain prefix and "/", then a name of at most 63
// characters: alphanumerics, '-', '_' and '.', starting and ending with an alphanumeric.
const qualifiedName = /^[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/
const subdomain = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/

/** @internal */
export const isValidName = (name: string): boolean => {
  const slash = name.indexOf("/")
  if (slash === -1) return qualifiedName.test(name)
  const prefix = name.slice(0, slash)
  return prefix.length <= 253 && subdomain.test(prefix) && qualifiedName.test(name.slice(slash + 1))
}

// -------------------------------------------------------------------------------------------------
// the flow
// -------------------------------------------------------------------------------------------------

/**
 * A write that may succeed on a fresh read: a stale resourceVersion (`Conflict`), or a JSON patch whose
 * `test` failed, which kube-apiserver answers `Invalid` (422).
 */
const isRetryable = (error: unknown): boolean =>
  isApiError(error) && error._tag === "StatusError" && (error.reason === "Conflict" || error.reason === "Invalid")

const orDone = (result: Controller.Result | void): Controller.Result => result ?? Workers.done

/** `None` when the object is gone (`NotFound`). */
const orGone = <B, E>(self: Effect.Effect<Option.Option<B>, E>): Effect.Effect<Option.Option<B>, E> =>
  Effect.catchIf(self, isNotFound, () => Effect.succeed(Option.none<B>()))

const isNotFound = (error: unknown): boolean =>
  isApiError(error) && error._tag === "StatusError" && error.reason === "NotFound"

/**
 * `step` on `object`, then, after a retryable failure, on a fresh read of it (`None` when it is gone),
 * after `schedule`'s delays.
 */
const withFreshReads = <A extends KubeObject, B>(
  client: Client.Client.Service,
  resource: Resource<A>,
  object: A,
  schedule: Schedule.Schedule<unknown, unknown, never, never>,
  step: (current: Option.Option<A>) => Effect.Effect<B, ApiError | TermError>
): Effect.Effect<B, ApiError | TermError> =>
  Effect.suspend(() => {
    let attempt = 0
    const name = object.metadata?.name ?? ""
    const namespace = object.metadata?.namespace
    const read: Effect.Effect<Option.Option<A>, ApiError> = orGone(
      Effect.map(client.get(resource, name, { namespace }), Option.some)
    )
    return Effect.suspend(() => Effect.flatMap(attempt++ === 0 ? Effect.succeed(Option.some(object)) : read, step))
      .pipe(Effect.retry({ schedule, while: isRetryable }))
  })

/**
 * The patch that adds `name`, safe against a concurrent change of the list: the current list tested, then
 * `name` appended (the server does not deduplicate finalizers); when there is no list, the resourceVersion
 * tested (any change fails the patch), or, without one, the absence of the list (as kube-rs: `test` that
 * it is null), then the list made.
 */
const addPatch = (obj: KubeObject, name: string): Client.Patch => {
  const list = listOf(obj)
  if (list !== undefined && list.length > 0) {
    return Client.jsonPatch([
      { op: "test", path: "/metadata/finalizers", value: list },
      { op: "add", path: "/metadata/finalizers/-", value: name }
    ])
  }
  const rv = obj.metadata?.resourceVersion
  return Client.jsonPatch([
    rv === undefined || rv === ""
      ? { op: "test", path: "/metadata/finalizers", value: null }
      : { op: "test", path: "/metadata/resourceVersion", value: rv },
    { op: "add", path: "/metadata/finalizers", value: [name] }
  ])
}

/** The patch that removes `name` at its index, only if it is still there (`test` of the entry). */
const removePatch = (index: number, name: string): Client.Patch =>
  Client.jsonPatch([
    { op: "test", path: `/metadata/finalizers/${index}`, value: name },
    { op: "remove", path: `/metadata/finalizers/${index}` }
  ])

const failed = (reason: Finalizer.FinalizerErrorReason, name: string, obj: KubeObject, what: string) =>
(
  cause: ApiError | TermError
): FinalizerError =>
  new FinalizerError({
    reason,
    finalizer: name,
    object: keyOf(obj),
    cause,
    message: `${what} finalizer ${name} of ${keyOf(obj)}: ${cause.message}`
  })

/** @internal */
export const reconcile = <A extends KubeObject, E, R>(
  options: Finalizer.Options<A, E, R>
): Effect.Effect<Controller.Result, E | FinalizerError, R | Client.Client> =>
  Effect.gen(function*() {
    const { name, object, resource } = options
    if (!isValidName(name)) {
      return yield* new FinalizerError({
        reason: "InvalidName",
        finalizer: name,
        object: keyOf(object),
        message: `invalid finalizer name ${JSON.stringify(name)}: a qualified name (e.g. "example.com/cleanup")`
      })
    }
    if (object.metadata?.name === undefined || object.metadata.name === "") {
      return yield* new FinalizerError({
        reason: "UnnamedObject",
        finalizer: name,
        object: "",
        message: `finalizer ${name}: the ${resource.kind} has no metadata.name`
      })
    }
    const client = options.client ?? (yield* Client.Client)
    const schedule = options.retry ?? (Client.defaultRetry as Schedule.Schedule<unknown, unknown, never, never>)

    let current: A = object
    if (!has(current, name)) {
      if (isDeleting(current)) return Workers.done
      // add, then go on with the object the patch answered (or a fresh read that has it)
      const added = yield* withFreshReads(client, resource, current, schedule, (obj) => {
        if (Option.isNone(obj)) return Effect.succeed(Option.none<A>())
        const o = obj.value
        if (has(o, name)) return Effect.succeed(Option.some(o))
        if (isDeleting(o)) return Effect.succeed(Option.none<A>())
        return orGone(Effect.map(
          client.patch(resource, o.metadata?.name ?? "", addPatch(o, name), { namespace: o.metadata?.namespace }),
          Option.some
        ))
      }).pipe(Effect.mapError(failed("AddFailed", name, current, "adding")))
      if (Option.isNone(added)) return Workers.done
      current = added.value
    }

    if (!isDeleting(current)) return orDone(yield* options.apply(current))

    const result = orDone(yield* options.cleanup(current))
    if (result._tag !== "Done") return result // not finished: the finalizer stays
    yield* withFreshReads(client, resource, current, schedule, (obj) => {
      if (Option.isNone(obj)) return Effect.void
      const o = obj.value
      const index = listOf(o)?.indexOf(name) ?? -1
      if (index === -1) return Effect.void
      return Effect.asVoid(orGone(Effect.map(
        client.patch(resource, o.metadata?.name ?? "", removePatch(index, name), { namespace: o.metadata?.namespace }),
        Option.some
      )))
    }).pipe(Effect.mapError(failed("RemoveFailed", name, current, "removing")))
    return Workers.done
  })

/**
 * The in-memory API store: the Kubernetes list/watch protocol over objects kept in memory. It is the one
 * simulator of the protocol: the library's `FakeListerWatcher` (`effect-informers/testing`) is an adapter
 * over it, and so is the test kit's embedded API server (`@effect-informers/testkit`'s `ApiServer`, whose
 * HTTP front end, faults and churn live in the test kit), so the two cannot disagree about:
 *
 * - **resourceVersions**: one global, strictly increasing counter over every collection of a store;
 * - **history and Gone**: a bounded history of events (the watch cache); a watch from a version older
 *   than it, or an exact LIST at one, is 410 Expired; a version above the current one is 504 with the
 *   `ResourceVersionTooLarge` cause;
 * - **LIST at a resourceVersion**: `""` and `"0"` serve the current state, `"N"` the current state (not
 *   older than N) or, with `resourceVersionMatch=Exact` or a `limit` (the legacy pagination rule), the
 *   state at exactly N, rebuilt from the history;
 * - **limit and continue**: pages of one snapshot, sorted by key, with `remainingItemCount` when no
 *   selector filters; a token whose snapshot left the history, or issued before `expireContinueTokens`,
 *   is 410 Expired;
 * - **watch**: the replay from a version, or the current state as ADDED events; bookmarks when allowed;
 *   watch-list (`sendInitialEvents=true`, `resourceVersionMatch=NotOlderThan`, `allowWatchBookmarks`),
 *   whose initial events end with a bookmark annotated `k8s.io/initial-events-end: "true"`;
 * - **selectors**: label and field selectors parsed and matched as the API server does (`LabelSelector`,
 *   `FieldSelector`, the resource's selectable fields), and the watch cache's selector rules: an update
 *   that makes an object match is ADDED for that watch, one that makes it stop matching is DELETED (of the
 *   previous state, at the update's resourceVersion).
 *
 * What a front end adds: how objects are written (the fake hands out objects; the server pre-serialises
 * each object once per change and writes its watch lines from that), how writes are validated (the
 * server's create/update/patch/delete rules), timeouts, periodic bookmarks and fault injection.
 *
 * Failures are Kubernetes `Status` values, as the API server sends them: an answer with a value (`list`,
 * `planWatch`, `parseSelection`) is an `Result.Result<A, Status>` (`Result.succeed` the answer, `Result.fail`
 * the failure), and a step without one (`startWatch`) returns `Status | undefined`. `ApiError.fromStatus`
 * turns a `Status` into the typed error an HTTP ListerWatcher would report. Everything is synchronous: a
 * write, with its fan-out to watchers, and the start of a watch are each one step.
 *
 * The patches of a PATCH request (`mergePatch`, `strategicMergePatch`, `jsonPatch`) are here too, as pure
 * functions over JSON, and the registry rules of a write (`resourceTraits`, `validateName`,
 * `generationChanges`, `sameObject`, the failure statuses), so that every front end (the fake `Client`, the
 * test kit's server) patches and writes alike.
 *
 * The machinery is in `internal/testing/apiStore.ts`, `internal/testing/patch.ts` and
 * `internal/testing/registry.ts`.
 *
 * @example
 * ```ts
 * import { ApiStore } from "effect-informers/testing"
 * import { Result } from "effect"
 *
 * interface Obj extends ApiStore.Entry {}
 * const store = ApiStore.make<Obj>({ historySize: 100 })
 * const pods = new ApiStore.Collection<Obj>(undefined)
 * const entry = (name: string, rv: number): Obj =>
 *   ({ key: `ns/${name}`, namespace: "ns", name, obj: { metadata: { name } }, rv, labels: undefined })
 * store.commit(pods, "ADDED", entry("a", store.rv + 1), undefined)
 * store.commit(pods, "ADDED", entry("b", store.rv + 1), undefined)
 * const first = ApiStore.list(store, pods, undefined, { limit: 1 })
 * if (Result.isSuccess(first)) {
 *   console.log(first.success.page.items.map((e) => e.name), first.success.continueToken !== undefined) // ["a"] true
 * }
 * const bad = ApiStore.list(store, pods, undefined, { resourceVersion: "x" })
 * if (Result.isFailure(bad)) console.log(bad.failure.code) // 400
 * ```
 *
 * @since 0.1.0
 */
import type * as Result from "effect/Result"
import type { PropagationPolicy } from "./Client.js"
import type * as FieldSelector from "./FieldSelector.js"
import * as internal from "./internal/testing/apiStore.js"
import * as json from "./internal/testing/json.js"
import * as patches from "./internal/testing/patch.js"
import * as registry from "./internal/testing/registry.js"
import type * as LabelSelector from "./LabelSelector.js"
import type { Resource } from "./Resource.js"
import type { Status } from "./Wire.js"

// -------------------------------------------------------------------------------------------------
// models
// -------------------------------------------------------------------------------------------------

/**
 * The type of a change, as a watch event carries it.
 *
 * @since 0.1.0
 * @category models
 */
export type EventType = "ADDED" | "MODIFIED" | "DELETED"

/**
 * One stored version of one object: its key (`namespace/name`, or `name` when cluster-scoped), namespace
 * (`""` when cluster-scoped), name, the object, its resourceVersion and labels. A front end may keep more
 * in its entries (the server keeps the JSON); entries are immutable once committed.
 *
 * @since 0.1.0
 * @category models
 */
export interface Entry {
  /** `namespace/name`, or `name` for cluster-scoped objects: the order of lists. */
  readonly key: string
  /** `""` for cluster-scoped objects. */
  readonly namespace: string
  readonly name: string
  readonly obj: unknown
  readonly rv: number
  /** `undefined` unless `metadata.labels` is an object. */
  readonly labels: LabelSelector.Labels
}

/**
 * The objects of one resource, sorted by key as etcd orders them, and its open watches. `fields`: the
 * fields a field selector may use (`selectableFields`), `undefined` for any.
 *
 * @since 0.1.0
 * @category models
 */
export const Collection: typeof internal.Collection = internal.Collection

/**
 * @since 0.1.0
 * @category models
 */
export type Collection<E extends Entry = Entry> = internal.Collection<E>

/**
 * One change, as kept in the history and sent to watchers. `hidden`: a lost event (never sent nor
 * replayed). `line`, `enteredLine` and `leftLine` are free for a front end's encodings of the event, shared
 * by its watchers.
 *
 * @since 0.1.0
 * @category models
 */
export const HistoryEvent: typeof internal.HistoryEvent = internal.HistoryEvent

/**
 * @since 0.1.0
 * @category models
 */
export type HistoryEvent<E extends Entry = Entry> = internal.HistoryEvent<E>

/**
 * The store: the resourceVersion counter, the bounded history, snapshots rebuilt from it, continue-token
 * expiry, and the fan-out of each commit to the watchers of its collection.
 *
 * @since 0.1.0
 * @category models
 */
export const Store: typeof internal.Store = internal.Store

/**
 * @since 0.1.0
 * @category models
 */
export type Store<E extends Entry = Entry> = internal.Store<E>

/**
 * A namespace (`undefined`: all) and parsed selectors (`undefined`: everything).
 *
 * @since 0.1.0
 * @category models
 */
export interface Selection {
  readonly namespace: string | undefined
  readonly label: LabelSelector.LabelSelector | undefined
  readonly field: FieldSelector.FieldSelector | undefined
}

/**
 * How a watch sees an event: as it happened, as ADDED (it entered the selection) or as DELETED of the
 * previous state (it left the selection).
 *
 * @since 0.1.0
 * @category models
 */
export type Delivery = "event" | "entered" | "left"

/**
 * An open watch, as the store feeds it: the store decides what it sees and in which order, the watcher how
 * it is written.
 *
 * @since 0.1.0
 * @category models
 */
export interface Watcher<E extends Entry = Entry> {
  readonly selection: Selection
  /** Ended: the store stops feeding it (and does not register it when it ended during its start). */
  readonly done: boolean
  /** One event the selection lets through, as `delivery` says. */
  send(event: HistoryEvent<E>, delivery: Delivery): void
  /** The initial state (already selected), as ADDED events. */
  added(entries: ReadonlyArray<E>): void
  /** A BOOKMARK at `rv`; `initialEventsEnd`: annotated `k8s.io/initial-events-end: "true"`. */
  bookmark(rv: number, initialEventsEnd: boolean): void
}

/**
 * One page of a list: the entries, the snapshot's resourceVersion, the last key when more follow, and the
 * count of the rest when no selector filters.
 *
 * @since 0.1.0
 * @category models
 */
export interface ListPageResult<E extends Entry = Entry> {
  readonly items: Array<E>
  readonly rv: number
  /** The key to continue from (exclusive: the last key returned). */
  readonly lastKey: string | undefined
  readonly remaining: number | undefined
}

/**
 * LIST parameters, as a request carries them.
 *
 * @since 0.1.0
 * @category models
 */
export interface ListParams {
  readonly labelSelector?: string | undefined
  readonly fieldSelector?: string | undefined
  readonly resourceVersion?: string | undefined
  readonly resourceVersionMatch?: string | undefined
  readonly limit?: number | undefined
  readonly continue?: string | undefined
  /** Present (any value): 422, sendInitialEvents is for watches. */
  readonly sendInitialEvents?: string | boolean | undefined
}

/**
 * The answer to a LIST: one page, and the continue token of the next one when more follow.
 *
 * @since 0.1.0
 * @category models
 */
export interface ListOutcome<E extends Entry = Entry> {
  readonly page: ListPageResult<E>
  readonly continueToken: string | undefined
}

/**
 * WATCH parameters, as a request carries them (`sendInitialEvents` `undefined`: absent).
 *
 * @since 0.1.0
 * @category models
 */
export interface WatchParams {
  readonly labelSelector?: string | undefined
  readonly fieldSelector?: string | undefined
  readonly resourceVersion?: string | undefined
  readonly resourceVersionMatch?: string | undefined
  /** `undefined`: the parameter is absent. */
  readonly sendInitialEvents?: boolean | undefined
  readonly allowWatchBookmarks?: boolean | undefined
}

/**
 * How a watch starts: from a version, or with the current state (and an end bookmark for watch-list).
 *
 * @since 0.1.0
 * @category models
 */
export interface WatchPlan {
  readonly selection: Selection
  /** `undefined`: start now, with the current state as ADDED events when `initialEvents`. */
  readonly from: number | undefined
  readonly initialEvents: boolean
  /** Watch-list: the initial events end with an annotated bookmark. */
  readonly endBookmark: boolean
  readonly bookmarks: boolean
  /** With `sendInitialEvents`: the state sent must be at least this recent. */
  readonly notOlderThan: number | undefined
}

/**
 * What a continue token carries.
 *
 * @since 0.1.0
 * @category models
 */
export interface ContinueToken {
  /** The snapshot's resourceVersion; `-1`: continue at the current state (after an expired token). */
  readonly rv: number
  /** The first key of the next page. */
  readonly start: string
  /** The store's `continueEpoch` when issued. */
  readonly epoch: number
}

/**
 * A field error of a 422 Invalid status.
 *
 * @since 0.1.0
 * @category models
 */
export interface FieldError {
  readonly reason: string
  readonly field: string
  readonly message: string
}

// -------------------------------------------------------------------------------------------------
// constructors
// -------------------------------------------------------------------------------------------------

/**
 * An empty store keeping the last `historySize` events (default 1000).
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = <E extends Entry = Entry>(options: { readonly historySize?: number | undefined } = {}): Store<E> =>
  new internal.Store<E>(options.historySize ?? 1000)

// -------------------------------------------------------------------------------------------------
// protocol
// -------------------------------------------------------------------------------------------------

/**
 * A LIST: resourceVersion semantics, selectors, limit and continue (see the module's documentation).
 *
 * @since 0.1.0
 * @category protocol
 */
export const list: <E extends Entry>(
  store: Store<E>,
  collection: Collection<E>,
  namespace: string | undefined,
  params: ListParams
) => Result.Result<ListOutcome<E>, Status> = internal.list

/**
 * Validates a WATCH and decides how it starts (422 for a watch-list request without
 * `resourceVersionMatch=NotOlderThan` and `allowWatchBookmarks`, 400 for a malformed version or selector).
 *
 * @since 0.1.0
 * @category protocol
 */
export const planWatch: (
  fields: ReadonlyArray<string> | undefined,
  namespace: string | undefined,
  params: WatchParams
) => Result.Result<WatchPlan, Status> = internal.planWatch

/**
 * Starts and registers a watcher as planned (replay, or initial events and end bookmark), or returns its
 * failure (410 Expired, 504 too large), in one synchronous step.
 *
 * @since 0.1.0
 * @category protocol
 */
export const startWatch: <E extends Entry>(
  store: Store<E>,
  collection: Collection<E>,
  watcher: Watcher<E>,
  plan: WatchPlan
) => Status | undefined = internal.startWatch

/**
 * The watch cache's selector rules for one event and one watch (`undefined`: not seen).
 *
 * @since 0.1.0
 * @category protocol
 */
export const deliveryOf: <E extends Entry>(selection: Selection, event: HistoryEvent<E>) => Delivery | undefined =
  internal.deliveryOf

/**
 * Parses selectors as the API server does (400 BadRequest when malformed or on a field `fields` lacks).
 *
 * @since 0.1.0
 * @category protocol
 */
export const parseSelection: (
  fields: ReadonlyArray<string> | undefined,
  namespace: string | undefined,
  labelSelector: string | undefined,
  fieldSelector: string | undefined
) => Result.Result<Selection, Status> = internal.parseSelection

/**
 * @since 0.1.0
 * @category protocol
 */
export const matchesSelection: (selection: Selection, entry: Entry) => boolean = internal.matchesSelection

/**
 * The selection of everything.
 *
 * @since 0.1.0
 * @category protocol
 */
export const everything: Selection = internal.everything

/**
 * The fields a field selector may use on a resource (the API server's field label conversions).
 *
 * @since 0.1.0
 * @category protocol
 */
export const selectableFields: (resource: Resource<unknown>) => ReadonlyArray<string> = internal.selectableFields

/**
 * @since 0.1.0
 * @category protocol
 */
export const encodeContinue: (rv: number, start: string, epoch?: number) => string = internal.encodeContinue

/**
 * @since 0.1.0
 * @category protocol
 */
export const decodeContinue: (token: string) => ContinueToken | undefined = internal.decodeContinue

/**
 * 410 Expired for a continue token, carrying the token that continues at the current state.
 *
 * @since 0.1.0
 * @category statuses
 */
export const expiredContinue: (token: ContinueToken | undefined) => Status = internal.expiredContinue

/**
 * `namespace/name`, or `name` when `namespace` is `""`.
 *
 * @since 0.1.0
 * @category keys
 */
export const objectKey: (namespace: string, name: string) => string = internal.objectKey

/**
 * @since 0.1.0
 * @category keys
 */
export const compareKeys: (a: string, b: string) => number = internal.compareKeys

/**
 * The first index of `keys` (sorted by `compareKeys`, as `Collection.keys` returns them) whose key is not
 * below `key`: where the keys of a namespace begin, with `key` its `namespace/` prefix.
 *
 * @since 0.2.0
 * @category keys
 */
export const lowerBound: (keys: ReadonlyArray<string>, key: string) => number = internal.lowerBound

/**
 * @since 0.1.0
 * @category keys
 */
export const parseResourceVersion: (value: string) => number | undefined = internal.parseResourceVersion

// -------------------------------------------------------------------------------------------------
// statuses
// -------------------------------------------------------------------------------------------------

/**
 * @since 0.1.0
 * @category statuses
 */
export const badRequest: (message: string) => Status = internal.badRequest

/**
 * @since 0.1.0
 * @category statuses
 */
export const expired: (message: string) => Status = internal.expired

/**
 * 504 with the `ResourceVersionTooLarge` cause and `retryAfterSeconds: 1`, as the API server answers.
 *
 * @since 0.1.0
 * @category statuses
 */
export const tooLargeResourceVersion: (requested: number, current: number) => Status = internal.tooLargeResourceVersion

/**
 * 422 Invalid with field causes.
 *
 * @since 0.1.0
 * @category statuses
 */
export const invalid: (
  kind: string,
  group: string,
  name: string,
  errors: ReadonlyArray<FieldError>
) => Status = internal.invalid

/**
 * The API server's message for an expired continue token.
 *
 * @since 0.1.0
 * @category statuses
 */
export const inconsistentContinue: string = internal.inconsistentContinue

// -------------------------------------------------------------------------------------------------
// registry rules
// -------------------------------------------------------------------------------------------------

/**
 * How kube-apiserver's registry treats the writes of one resource.
 *
 * @since 0.2.0
 * @category registry rules
 */
export interface ResourceTraits {
  /**
   * The resource has a `status` subresource: writes to the object keep the stored status, writes to
   * `/status` keep only the status.
   */
  readonly statusSubresource: boolean
  /** `metadata.generation` is set (1 at creation) and maintained. */
  readonly tracksGeneration: boolean
  /**
   * A custom resource (not a built-in one): generation follows every change outside `metadata` (and outside
   * `status` when there is a status subresource); strategic merge patches are refused (415). Built-ins:
   * changes of `spec` move the generation.
   */
  readonly custom: boolean
  /** Annotation changes move the generation too (Deployments). */
  readonly generationOnAnnotations: boolean
  /** The propagation of a DELETE that asks for none: `Orphan` for `batch/v1` Jobs, `Background` otherwise. */
  readonly defaultPropagation: PropagationPolicy
}

/**
 * The traits of a resource: a built-in resource as kube-apiserver serves it, any other as a custom resource
 * with a status subresource (what `kubebuilder` scaffolds). `status` overrides whether there is a status
 * subresource, for a built-in too.
 *
 * @example
 * ```ts
 * import { ApiStore } from "effect-informers/testing"
 * import { Resource } from "effect-informers"
 *
 * console.log(ApiStore.resourceTraits(Resource.configMaps).statusSubresource) // false
 * console.log(ApiStore.resourceTraits(Resource.pods).tracksGeneration) // true
 * ```
 *
 * @since 0.2.0
 * @category registry rules
 */
export const resourceTraits: (resource: Resource<unknown>, status?: boolean | undefined) => ResourceTraits =
  registry.resourceTraits

/**
 * Whether `name` is a valid `metadata.name` of the resource (a DNS-1123 label for namespaces, a DNS-1123
 * subdomain otherwise): `undefined`, or the field error kube-apiserver reports.
 *
 * @since 0.2.0
 * @category registry rules
 */
export const validateName: (resource: Resource<unknown>, name: string) => FieldError | undefined = registry.validateName

/**
 * Whether a write from `before` to `after` moves `metadata.generation`, by the resource's traits.
 *
 * @since 0.2.0
 * @category registry rules
 */
export const generationChanges: (
  traits: ResourceTraits,
  before: { readonly [key: string]: unknown },
  after: { readonly [key: string]: unknown }
) => boolean = registry.generationChanges

/**
 * Whether two objects are the same but for `metadata.resourceVersion` (members in any order): a write that
 * changes nothing, which kube-apiserver does not store.
 *
 * @since 0.2.0
 * @category registry rules
 */
export const sameObject: (a: { readonly [key: string]: unknown }, b: { readonly [key: string]: unknown }) => boolean =
  registry.sameObject

/**
 * The strings of a list of finalizers (`metadata.finalizers`, a namespace's `spec.finalizers`); `[]` when
 * it is not a list.
 *
 * @since 0.2.0
 * @category registry rules
 */
export const finalizersOf: (value: unknown) => ReadonlyArray<string> = registry.finalizersOf

/**
 * The field error of an update that adds finalizers to an object being deleted (`before`, `after`: the
 * `metadata.finalizers` of each), or `undefined` when it adds none.
 *
 * @since 0.2.0
 * @category registry rules
 */
export const addedFinalizers: (before: unknown, after: unknown) => FieldError | undefined = registry.addedFinalizers

/**
 * `metav1.Time`: RFC 3339, whole seconds, UTC.
 *
 * @since 0.2.0
 * @category registry rules
 */
export const formatTime: (millis: number) => string = registry.formatTime

/**
 * 404, `<resource> "<name>" not found`.
 *
 * @since 0.2.0
 * @category statuses
 */
export const notFound: (resource: Resource<unknown>, name: string) => Status = registry.notFound

/**
 * 409 AlreadyExists.
 *
 * @since 0.2.0
 * @category statuses
 */
export const alreadyExists: (resource: Resource<unknown>, name: string) => Status = registry.alreadyExists

/**
 * 409 Conflict, `Operation cannot be fulfilled on <resource> "<name>": <message>`.
 *
 * @since 0.2.0
 * @category statuses
 */
export const conflict: (resource: Resource<unknown>, name: string, message: string) => Status = registry.conflict

/**
 * 409 Conflict of a write at a stale resourceVersion ("the object has been modified").
 *
 * @since 0.2.0
 * @category statuses
 */
export const modifiedConflict: (resource: Resource<unknown>, name: string) => Status = registry.modifiedConflict

/**
 * 409 Conflict of a failed precondition (`UID` or `ResourceVersion`, given against the stored one).
 *
 * @since 0.2.0
 * @category statuses
 */
export const preconditionFailed: (
  resource: Resource<unknown>,
  name: string,
  field: "UID" | "ResourceVersion",
  given: string,
  actual: unknown
) => Status = registry.preconditionFailed

/**
 * 404 of a path the server does not serve (a resource or subresource it does not have), with empty details.
 *
 * @since 0.2.0
 * @category statuses
 */
export const resourceNotFound: Status = registry.resourceNotFound

// -------------------------------------------------------------------------------------------------
// patches
// -------------------------------------------------------------------------------------------------

/**
 * A JSON merge patch (RFC 7386) of `target`: objects merge, `null` removes a member, anything else
 * (lists included) replaces. Neither input is mutated; unchanged parts of `target` are shared.
 *
 * @example
 * ```ts
 * import { ApiStore } from "effect-informers/testing"
 *
 * const patched = ApiStore.mergePatch(
 *   { metadata: { labels: { a: "1", b: "2" } } },
 *   { metadata: { labels: { b: null, c: "3" } } }
 * )
 * console.log(patched) // { metadata: { labels: { a: "1", c: "3" } } }
 * ```
 *
 * @since 0.2.0
 * @category patches
 */
export const mergePatch: (target: unknown, patch: unknown) => unknown = patches.mergePatch

/**
 * A strategic merge patch of `target`, approximated without the OpenAPI schema: objects merge as in a
 * merge patch; the lists Kubernetes merges by key (`containers` and `volumes` by `name`, `ports` by
 * `containerPort`, `conditions` by `type`, `ownerReferences` by `uid`...) merge by that key, an item
 * `{ "$patch": "delete", <key>: ... }` removing one; other lists are replaced; `{ "$patch": "replace" }`
 * replaces an object, `{ "$patch": "delete" }` removes it; other `$` directives are ignored. Neither input
 * is mutated.
 *
 * @example
 * ```ts
 * import { ApiStore } from "effect-informers/testing"
 *
 * const patched = ApiStore.strategicMergePatch(
 *   { spec: { containers: [{ name: "web", image: "web:1" }, { name: "log", image: "log:1" }] } },
 *   { spec: { containers: [{ name: "web", image: "web:2" }] } }
 * )
 * // web's image is web:2, the log container is kept
 * ```
 *
 * @since 0.2.0
 * @category patches
 */
export const strategicMergePatch: (target: unknown, patch: unknown) => unknown = patches.strategicMergePatch

/**
 * Why a JSON patch could not be applied: `reason` `Invalid` (a malformed patch or pointer, a path that
 * is not there, a failed `test`: the API server answers 422) or `TooLarge` (a bound of `JsonPatchLimits`
 * exceeded: 413). `tooLarge` is `reason === "TooLarge"`.
 *
 * @since 0.2.0
 * @category patches
 */
export const JsonPatchError: typeof patches.JsonPatchError = patches.JsonPatchError

/**
 * @since 0.2.0
 * @category patches
 */
export type JsonPatchError = patches.JsonPatchError

/**
 * Bounds of one JSON patch, as kube-apiserver sets them: `maxOperations` operations, and at most
 * `maxCopyBytes` (as JSON) duplicated by `copy` operations in all.
 *
 * @since 0.2.0
 * @category patches
 */
export type JsonPatchLimits = patches.JsonPatchLimits

/**
 * kube-apiserver's bounds: 10,000 operations, 3 MiB copied.
 *
 * @since 0.2.0
 * @category patches
 */
export const defaultJsonPatchLimits: JsonPatchLimits = patches.defaultJsonPatchLimits

/**
 * A JSON patch (RFC 6902) of `target`: `add`, `remove`, `replace`, `move`, `copy` and `test`, in order, on
 * a copy of `target`. Throws a `JsonPatchError` when an operation does not apply (a failing `test`
 * included) or a bound of `limits` (`defaultJsonPatchLimits`) is exceeded.
 *
 * @example
 * ```ts
 * import { ApiStore } from "effect-informers/testing"
 *
 * const patched = ApiStore.jsonPatch({ metadata: { finalizers: ["a", "b"] } }, [
 *   { op: "test", path: "/metadata/finalizers/0", value: "a" },
 *   { op: "remove", path: "/metadata/finalizers/0" }
 * ])
 * console.log(patched) // { metadata: { finalizers: ["b"] } }
 * ```
 *
 * @since 0.2.0
 * @category patches
 */
export const jsonPatch: (target: unknown, operations: unknown, limits?: JsonPatchLimits) => unknown = patches.jsonPatch

/**
 * Structural equality of JSON values, as a JSON patch's `test` compares them (RFC 6902): same type and
 * value, arrays item by item, objects by their members in any order.
 *
 * @example
 * ```ts
 * import { ApiStore } from "effect-informers/testing"
 *
 * console.log(ApiStore.jsonEqual({ a: 1, b: [1, 2] }, { b: [1, 2], a: 1 })) // true
 * console.log(ApiStore.jsonEqual([1, 2], [2, 1])) // false
 * ```
 *
 * @since 0.2.0
 * @category patches
 */
export const jsonEqual: (a: unknown, b: unknown) => boolean = json.jsonEqual

/**
 * A typed Kubernetes client for writes and reads of any `Resource` (catalog or custom): `get`, `list` (one
 * page) and `listAll` (every page), `create`, `update`, `patch` (JSON merge, JSON patch, strategic merge),
 * `apply` (server-side apply), `delete`, and the status subresource (`updateStatus`, `patchStatus`,
 * `applyStatus`), as client-go's typed clients offer them.
 *
 * - Requests go to the server of the `KubeConfig` in the context, with its credentials, through the
 *   `HttpClient` in the context: the same headers, scrubbing and error reading as the informers'
 *   `HttpListerWatcher`. Namespaced or cluster-scoped comes from the `Resource`.
 * - Writes are fenced: within a `Term` (a leader's `whileLeading`, a shard's `whileOwned`), every write
 *   (`POST`, `PUT`, `PATCH`, `DELETE`) checks the term after its rate-limiter wait, in the step that sends
 *   it; a write of a term that is no longer valid fails with `TermError` and is not sent. Reads are not.
 * - Every other failure is an `ApiError`: a `StatusError` whose `reason` a caller branches on (`NotFound`,
 *   `Conflict` for a stale resourceVersion or an apply conflict, `AlreadyExists`, `Invalid` with `causes`,
 *   `Forbidden`, `Unauthorized`, `Gone`, `TooManyRequests` with `retryAfter`, `Timeout`, `ServerError`...),
 *   a `TransportError` or a `DecodeError`. Messages are one line and never carry the request's credentials,
 *   whatever the server echoes.
 * - Bodies are checked as the informers check them: an object must have `metadata.name`. The object of an
 *   answer must be the one asked for or written: another kind, API group, namespace or name (a create
 *   with `generateName`: its name is not checked) is a `DecodeError` (`UnexpectedObject`), not the result.
 * - Requests are rate limited as client-go's are: a token bucket of `qps` (5) per second with bursts of
 *   `burst` (10), per Client. `derive` makes a Client with a bucket of its own over the same connections
 *   and credentials: leader election and sharding use one, so that their Lease requests never wait behind
 *   the work's writes (controller-runtime gives its leader election a client of its own for this reason).
 * - `retryOnConflict` is client-go's `retry.RetryOnConflict`: a get-modify-update effect run again on a
 *   `Conflict`.
 * - A successful write is recorded in the reconcile's `Consistency.Writes` when there is one in the
 *   context (read-your-own-writes).
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Client, Resource } from "effect-informers"
 *
 * const scaleUp = Effect.gen(function*() {
 *   const client = yield* Client.Client
 *   const deployment = yield* client.get(Resource.deployments, "web", { namespace: "default" })
 *   yield* client.update(Resource.deployments, {
 *     ...deployment,
 *     spec: { ...deployment.spec!, replicas: (deployment.spec?.replicas ?? 1) + 1 }
 *   })
 * }).pipe(Client.retryOnConflict())
 *
 * const main = scaleUp.pipe(Effect.provide(Client.layerLive({ userAgent: "scaler/1.0" })))
 * ```
 *
 * @since 0.2.0
 */
import * as Context from "effect/Context"
import type * as Duration from "effect/Duration"
import type * as Effect from "effect/Effect"
import type * as HttpClient from "effect/http/HttpClient"
import * as Layer from "effect/Layer"
import type * as Schedule from "effect/Schedule"
import type * as Stream from "effect/Stream"
import type { ApiError } from "./ApiError.js"
import * as ClusterHttpClient from "./ClusterHttpClient.js"
import * as internal from "./internal/transport/client.js"
import { defaultUserAgent as userAgent } from "./internal/transport/httpRequest.js"
import * as KubeConfig from "./KubeConfig.js"
import type * as ListerWatcher from "./ListerWatcher.js"
import type { Resource } from "./Resource.js"
import type { TermError } from "./Term.js"
import type { Status } from "./Wire.js"

// -------------------------------------------------------------------------------------------------
// options
// -------------------------------------------------------------------------------------------------

/**
 * How a Client talks to the server.
 *
 * @since 0.2.0
 * @category models
 */
export interface Options {
  /**
   * Requests per second, on average (client-go's `rest.Config.QPS`). Default `defaultQps` (5).
   * `Infinity` turns rate limiting off (client-go's `-1`); anything else must be a positive number.
   */
  readonly qps?: number | undefined
  /** Requests sent at once before `qps` applies (client-go's `Burst`): a positive integer. Default 10. */
  readonly burst?: number | undefined
  /** `User-Agent` header. Default `defaultUserAgent` (names this library); put your controller's identity in it. */
  readonly userAgent?: string | undefined
  /** The `fieldManager` of `apply` when a call names none. Default `defaultFieldManager`. */
  readonly fieldManager?: string | undefined
  /**
   * The longest a request may take, from sending it to its body's last byte (the wait for a rate-limiter
   * token is not counted); then it fails with a `TransportError` (`Timeout`). Default `defaultTimeout`
   * (60 seconds, kube-apiserver's own bound on a request); `Duration.infinity` turns it off.
   */
  readonly timeout?: Duration.Input | undefined
}

/**
 * Options of `derive`: each one given replaces the Client's own (`Options`); absent, the derived Client has
 * the same value, with a token bucket of its own.
 *
 * @since 0.2.0
 * @category models
 */
export interface DeriveOptions extends Pick<Options, "qps" | "burst" | "timeout" | "userAgent"> {}

/**
 * Client-go's default `QPS`.
 *
 * @since 0.2.0
 * @category constants
 */
export const defaultQps: number = internal.defaultQps

/**
 * Client-go's default `Burst`.
 *
 * @since 0.2.0
 * @category constants
 */
export const defaultBurst: number = internal.defaultBurst

/**
 * The default `User-Agent`: `effect-informers/<version>`.
 *
 * @since 0.2.0
 * @category constants
 */
export const defaultUserAgent: string = userAgent

/**
 * The default `fieldManager` of `apply`.
 *
 * @since 0.2.0
 * @category constants
 */
export const defaultFieldManager: string = internal.defaultFieldManager

/**
 * The default `timeout` of a request: 60 seconds.
 *
 * @since 0.2.0
 * @category constants
 */
export const defaultTimeout: Duration.Duration = internal.defaultTimeout

/**
 * The namespace of a call on a namespaced resource. When absent: the object's `metadata.namespace` (for
 * writes), else the `KubeConfig`'s namespace (the context's, or the pod's in a cluster), else `default`.
 * Ignored for cluster-scoped resources.
 *
 * @since 0.2.0
 * @category models
 */
export interface NamespaceOptions {
  readonly namespace?: string | undefined
}

/**
 * Options of `get`.
 *
 * @since 0.2.0
 * @category models
 */
export interface GetOptions extends NamespaceOptions {
  /** `"0"`: any version the server has (its cache); absent: the latest (a quorum read). */
  readonly resourceVersion?: string | undefined
}

/**
 * Options of `list`: one page. `namespace` absent lists across all namespaces.
 *
 * @since 0.2.0
 * @category models
 */
export interface ListOptions extends ListerWatcher.ListOptions {
  readonly namespace?: string | undefined
}

/**
 * Options of `listAll`: every page, `limit` objects each (default 500, client-go's pager's; `0` asks for
 * everything in one response). `namespace` absent lists across all namespaces.
 *
 * `listAll` holds every object in memory, so it is bounded (client-go's pager is not): past `maxItems`
 * objects or `maxPages` pages it fails with a `DecodeError` (`TooLarge`) rather than grow without end
 * against a server that answers endless distinct `continue` tokens; a server that repeats a token fails
 * it with `ContinueRepeated`. A collection larger than the bounds is for an informer, or raise them.
 *
 * @since 0.2.0
 * @category models
 */
export interface ListAllOptions extends Omit<ListOptions, "continue"> {
  /** The most objects held, over all pages (and in the single list after an expired token). Default 1,000,000. */
  readonly maxItems?: number | undefined
  /** The most pages asked for. Default 10,000 (5,000,000 objects at the default `limit`). */
  readonly maxPages?: number | undefined
}

/**
 * Options of `watch`. `namespace` absent watches across all namespaces.
 *
 * @since 0.2.0
 * @category models
 */
export interface WatchOptions extends ListerWatcher.WatchOptions {
  readonly namespace?: string | undefined
}

/**
 * `fieldValidation` of writes: what the server does with unknown or duplicated fields (`Strict`: fails
 * with `BadRequest`; `Warn`, the server's default: a warning; `Ignore`).
 *
 * @since 0.2.0
 * @category models
 */
export type FieldValidation = "Strict" | "Warn" | "Ignore"

/**
 * Options of `create`, `update`, `patch` and their status variants.
 *
 * @since 0.2.0
 * @category models
 */
export interface WriteOptions extends NamespaceOptions {
  /** Validate and admit, but persist nothing (`dryRun=All`): the answer is the object as it would be. */
  readonly dryRun?: boolean | undefined
  /** The field manager this write is recorded under. Default: the server's, from the user agent. */
  readonly fieldManager?: string | undefined
  readonly fieldValidation?: FieldValidation | undefined
}

/**
 * Options of `apply` and `applyStatus`.
 *
 * @since 0.2.0
 * @category models
 */
export interface ApplyOptions extends WriteOptions {
  /** Default: the Client's `fieldManager` option (`defaultFieldManager`). Always sent: apply requires one. */
  readonly fieldManager?: string | undefined
  /** Take the fields other managers own (`force=true`) instead of failing with `Conflict`. */
  readonly force?: boolean | undefined
}

/**
 * How the dependents of a deleted object are collected: `Background` (the object goes now, its dependents
 * after), `Foreground` (the object stays, with the `foregroundDeletion` finalizer, until its dependents
 * are gone) or `Orphan` (the dependents are left).
 *
 * @since 0.2.0
 * @category models
 */
export type PropagationPolicy = "Background" | "Foreground" | "Orphan"

/**
 * Options of `delete` (`metav1.DeleteOptions`).
 *
 * @since 0.2.0
 * @category models
 */
export interface DeleteOptions extends NamespaceOptions {
  /** Delete only this object: `Conflict` if its uid or resourceVersion is no longer this. */
  readonly preconditions?: {
    readonly uid?: string | undefined
    readonly resourceVersion?: string | undefined
  } | undefined
  /** Default: the resource's (`Background` for most). */
  readonly propagationPolicy?: PropagationPolicy | undefined
  /** Seconds before the object is deleted (pods: the grace period of their containers); `0`: at once. */
  readonly gracePeriodSeconds?: number | undefined
  readonly dryRun?: boolean | undefined
}

// -------------------------------------------------------------------------------------------------
// patches and results
// -------------------------------------------------------------------------------------------------

/**
 * One operation of a JSON patch (RFC 6902). A failing `test` makes the server answer `Invalid` (422).
 *
 * @since 0.2.0
 * @category models
 */
export type JsonPatchOperation =
  | { readonly op: "add" | "replace" | "test"; readonly path: string; readonly value: unknown }
  | { readonly op: "remove"; readonly path: string }
  | { readonly op: "move" | "copy"; readonly from: string; readonly path: string }

/**
 * A patch and its content type:
 * - `MergePatch`: a JSON merge patch (RFC 7386, `application/merge-patch+json`): objects merge, `null`
 *   removes, lists are replaced;
 * - `StrategicMergePatch`: built-in types only (`application/strategic-merge-patch+json`): lists of
 *   containers, ports... merge by key; the server of a custom resource answers `UnsupportedMediaType`;
 * - `JsonPatch`: a list of operations (RFC 6902, `application/json-patch+json`).
 *
 * A patch carries no precondition unless it sets `metadata.resourceVersion` (then `Conflict` when stale).
 *
 * @since 0.2.0
 * @category models
 */
export type Patch =
  | { readonly _tag: "MergePatch"; readonly patch: unknown }
  | { readonly _tag: "StrategicMergePatch"; readonly patch: unknown }
  | { readonly _tag: "JsonPatch"; readonly operations: ReadonlyArray<JsonPatchOperation> }

/**
 * A JSON merge patch.
 *
 * @example
 * ```ts
 * import { Client } from "effect-informers"
 *
 * const label = Client.mergePatch({ metadata: { labels: { tier: "web", old: null } } })
 * ```
 *
 * @since 0.2.0
 * @category constructors
 */
export const mergePatch = (patch: unknown): Patch => ({ _tag: "MergePatch", patch })

/**
 * A strategic merge patch (built-in types only).
 *
 * @since 0.2.0
 * @category constructors
 */
export const strategicMergePatch = (patch: unknown): Patch => ({ _tag: "StrategicMergePatch", patch })

/**
 * A JSON patch.
 *
 * @example
 * ```ts
 * import { Client } from "effect-informers"
 *
 * // remove the first finalizer, only if it is still ours
 * const patch = Client.jsonPatch([
 *   { op: "test", path: "/metadata/finalizers/0", value: "example.com/cleanup" },
 *   { op: "remove", path: "/metadata/finalizers/0" }
 * ])
 * ```
 *
 * @since 0.2.0
 * @category constructors
 */
export const jsonPatch = (operations: ReadonlyArray<JsonPatchOperation>): Patch => ({ _tag: "JsonPatch", operations })

/**
 * What `apply` takes: the fields this manager sets, every one optional (an apply configuration). The
 * Client adds `apiVersion` and `kind` from the `Resource` when absent and never sends
 * `metadata.managedFields`; a `metadata.resourceVersion` is sent, and is then a precondition.
 *
 * @since 0.2.0
 * @category models
 */
export type ApplyConfiguration<A> = A extends ReadonlyArray<infer U> ? ReadonlyArray<ApplyConfiguration<U>>
  : A extends object ? { readonly [K in keyof A]?: ApplyConfiguration<A[K]> }
  : A

/**
 * What `delete` answers, as the server does: the object (its last state, or its state while finalizers or
 * a grace period hold it: `metadata.deletionTimestamp` set), or a `Success` Status (the object is gone; types
 * whose server returns no object, such as ConfigMaps).
 *
 * @since 0.2.0
 * @category models
 */
export type Deleted<A> =
  | { readonly _tag: "Object"; readonly object: A }
  | { readonly _tag: "Status"; readonly status: Status }

// -------------------------------------------------------------------------------------------------
// the service
// -------------------------------------------------------------------------------------------------

/**
 * @since 0.2.0
 */
export declare namespace Client {
  /**
   * The verbs, for any `Resource<A>`.
   *
   * @since 0.2.0
   * @category models
   */
  export interface Service {
    /** One object. */
    readonly get: <A>(resource: Resource<A>, name: string, options?: GetOptions) => Effect.Effect<A, ApiError>
    /** One page: pass its `continue` to the next call. */
    readonly list: <A>(
      resource: Resource<A>,
      options?: ListOptions
    ) => Effect.Effect<ListerWatcher.ListPage<A>, ApiError>
    /**
     * Every page, as client-go's pager: one consistent snapshot at the first page's resourceVersion. When
     * a continue token expires (`Gone`) mid-way, the whole list is asked for again in one request. Bounded
     * by `maxItems` and `maxPages` (`DecodeError` `TooLarge`); a repeated continue token is a `DecodeError`
     * (`ContinueRepeated`).
     */
    readonly listAll: <A>(
      resource: Resource<A>,
      options?: ListAllOptions
    ) => Effect.Effect<ListerWatcher.ListPage<A>, ApiError>
    /**
     * Watch events of the collection (`fieldSelector` `metadata.name=...` for one object), from
     * `resourceVersion`; running the stream opens the request (one rate-limiter token), ending or
     * interrupting it closes it. No reconnection: a caller that wants one watches again.
     */
    readonly watch: <A>(
      resource: Resource<A>,
      options?: WatchOptions
    ) => Stream.Stream<ListerWatcher.WatchEvent<A>, ApiError>
    /** Creates `object` (`metadata.name`, or `generateName`); `AlreadyExists` when the name is taken. */
    readonly create: <A>(
      resource: Resource<A>,
      object: A,
      options?: WriteOptions
    ) => Effect.Effect<A, ApiError | TermError>
    /**
     * Replaces `object` (by `metadata.name`). With a `metadata.resourceVersion` the server checks it:
     * `Conflict` when the object changed since (re-read and retry: `retryOnConflict`). A `status` sent
     * is ignored by resources with a status subresource.
     */
    readonly update: <A>(
      resource: Resource<A>,
      object: A,
      options?: WriteOptions
    ) => Effect.Effect<A, ApiError | TermError>
    /** `update` of the status subresource: only `status` is written (`NotFound` when there is none). */
    readonly updateStatus: <A>(
      resource: Resource<A>,
      object: A,
      options?: WriteOptions
    ) => Effect.Effect<A, ApiError | TermError>
    readonly patch: <A>(
      resource: Resource<A>,
      name: string,
      patch: Patch,
      options?: WriteOptions
    ) => Effect.Effect<A, ApiError | TermError>
    /** `patch` of the status subresource. */
    readonly patchStatus: <A>(
      resource: Resource<A>,
      name: string,
      patch: Patch,
      options?: WriteOptions
    ) => Effect.Effect<A, ApiError | TermError>
    /**
     * Server-side apply: the fields of `object` become this field manager's; creates the object when it
     * does not exist. `Conflict` when another manager owns a field set to another value (its `causes`
     * name the fields), unless `force`.
     */
    readonly apply: <A>(
      resource: Resource<A>,
      object: ApplyConfiguration<A>,
      options?: ApplyOptions
    ) => Effect.Effect<A, ApiError | TermError>
    /** `apply` to the status subresource. */
    readonly applyStatus: <A>(
      resource: Resource<A>,
      object: ApplyConfiguration<A>,
      options?: ApplyOptions
    ) => Effect.Effect<A, ApiError | TermError>
    readonly delete: <A>(
      resource: Resource<A>,
      name: string,
      options?: DeleteOptions
    ) => Effect.Effect<Deleted<A>, ApiError | TermError>
    /**
     * A Client over the same connections (the `HttpClient`), `KubeConfig`, credentials, scrubbing and
     * field manager, with a rate limiter of its own: its requests never wait for this Client's tokens, nor
     * this Client's for its (client-go's copy of a `rest.Config`, which gets a limiter of its own). `qps`,
     * `burst`, `timeout` and `userAgent` are this Client's unless given. `LeaderElection.layerClient` and
     * `Sharding.layerClient` use one for their Leases. Dies when `qps` or `burst` is out of range.
     */
    readonly derive: (options?: DeriveOptions) => Effect.Effect<Service>
  }
}

/**
 * The Client service tag.
 *
 * @since 0.2.0
 * @category tags
 */
export class Client extends Context.Service<Client, Client.Service>()("effect-informers/Client") {}

// -------------------------------------------------------------------------------------------------
// constructors and layers
// -------------------------------------------------------------------------------------------------

/**
 * A Client for the `KubeConfig` in the context, over the `HttpClient` in the context. Dies when `qps` or
 * `burst` is out of range (a configuration error).
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Client, ClusterHttpClient, KubeConfig, Resource } from "effect-informers"
 *
 * const program = Effect.gen(function*() {
 *   const client = yield* Client.make({ qps: 20, burst: 40 })
 *   const page = yield* client.list(Resource.pods, { namespace: "default", labelSelector: "app=web" })
 *   return page.items.length
 * }).pipe(
 *   Effect.provide(ClusterHttpClient.layer),
 *   Effect.provide(KubeConfig.layerFromDefault())
 * )
 * ```
 *
 * @since 0.2.0
 * @category constructors
 */
export const make: (
  options?: Options
) => Effect.Effect<Client.Service, never, KubeConfig.KubeConfig | HttpClient.HttpClient> = internal.make

/**
 * Provides `Client` with `make`. Give it the `HttpClient` the informers use
 * (`ClusterHttpClient.layer`) to share their connections.
 *
 * @example
 * ```ts
 * import { Layer } from "effect"
 * import { Client, ClusterHttpClient, HttpListerWatcher, KubeConfig } from "effect-informers"
 *
 * const Transport = ClusterHttpClient.layer.pipe(Layer.provideMerge(KubeConfig.layerFromDefault()))
 * const App = Layer.mergeAll(
 *   Client.layer({ userAgent: "my-controller/1.0" }),
 *   HttpListerWatcher.layerSource()
 * ).pipe(Layer.provide(Transport))
 * ```
 *
 * @since 0.2.0
 * @category layers
 */
export const layer = (
  options: Options = {}
): Layer.Layer<Client, never, KubeConfig.KubeConfig | HttpClient.HttpClient> => Layer.effect(Client, make(options))

/**
 * Options of `layerFromKubeConfig` and `layerLive`: the Client's and its Node HTTP client's.
 *
 * @since 0.2.0
 * @category models
 */
export interface LiveOptions extends Options, ClusterHttpClient.Options {}

/**
 * A Client for the cluster `kubeConfig` describes, over its own Node HTTP client (keep-alive connections
 * with the cluster's TLS material, as `ClusterHttpClient.layer`).
 *
 * @example
 * ```ts
 * import { Client, KubeConfig } from "effect-informers"
 *
 * const layer = Client.layerFromKubeConfig(KubeConfig.layerInCluster(), { qps: 50, burst: 100 })
 * ```
 *
 * @since 0.2.0
 * @category layers
 */
export const layerFromKubeConfig = <E>(
  kubeConfig: Layer.Layer<KubeConfig.KubeConfig, E>,
  options: LiveOptions = {}
): Layer.Layer<Client, E> => {
  const { maxFreeSockets, maxSockets, tcpKeepAlive, ...client } = options
  return layer(client).pipe(
    Layer.provide(ClusterHttpClient.layerWith({ maxFreeSockets, maxSockets, tcpKeepAlive })),
    Layer.provide(kubeConfig)
  )
}

/**
 * A Client for the cluster of the default kubeconfig (`KUBECONFIG`, `~/.kube/config`, or the pod's
 * service account), over its own Node HTTP client.
 *
 * @since 0.2.0
 * @category layers
 */
export const layerLive = (options: LiveOptions = {}): Layer.Layer<Client, KubeConfig.KubeConfigError> =>
  layerFromKubeConfig(KubeConfig.layerFromDefault(), options)

// -------------------------------------------------------------------------------------------------
// retry on conflict
// -------------------------------------------------------------------------------------------------

/**
 * Client-go's `retry.DefaultRetry` as a Schedule: 10 ms between attempts (factor 1, jitter 0.1: 10 to
 * 11 ms), five attempts in all (four retries). Its output is the delay (Effect 4's `Schedule.max`).
 *
 * @since 0.2.0
 * @category retry
 */
export const defaultRetry: Schedule.Schedule<Duration.Duration> = internal.defaultRetry

/**
 * Client-go's `retry.RetryOnConflict`: runs `self` again, after `schedule` (`defaultRetry`), while it fails
 * with a `StatusError` of reason `Conflict` (a stale resourceVersion, or an apply conflict); any other
 * failure, or the last conflict, is returned. `self` should be the whole get-modify-update, so that each
 * attempt starts from a fresh read. In a pipe, call it: `effect.pipe(Client.retryOnConflict())`.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Client, Resource } from "effect-informers"
 *
 * const relabel = Effect.gen(function*() {
 *   const client = yield* Client.Client
 *   const cm = yield* client.get(Resource.configMaps, "settings", { namespace: "default" })
 *   return yield* client.update(Resource.configMaps, {
 *     ...cm,
 *     metadata: { ...cm.metadata, labels: { ...cm.metadata?.labels, checked: "true" } }
 *   })
 * })
 *
 * const safely = Client.retryOnConflict(relabel)
 * ```
 *
 * @since 0.2.0
 * @category retry
 */
export const retryOnConflict: {
  <Out = unknown, R2 = never>(
    schedule?: Schedule.Schedule<Out, unknown, never, R2>
  ): <A, E, R>(self: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R | R2>
  <A, E, R, Out = unknown, R2 = never>(
    self: Effect.Effect<A, E, R>,
    schedule?: Schedule.Schedule<Out, unknown, never, R2>
  ): Effect.Effect<A, E, R | R2>
} = internal.retryOnConflict

/**
 * A fake `Client` for tests, over the same in-memory objects as the fake ListerWatchers
 * (`FakeListerWatcher.FakeListerWatcherSource`): what a reconcile writes through it is what the informers
 * built over `FakeListerWatcher.layerSource()` see, by watch events (ADDED, MODIFIED, DELETED) at the new
 * resourceVersion, as in a cluster. Exported from `effect-informers/testing`, not from the main entry.
 *
 * It answers as kube-apiserver does, with the typed errors the real `Client` gives for the same `Status`
 * (`ApiError.fromStatus`):
 * - **create**: `metadata.uid` (random, through `Random`), `creationTimestamp` (the `Clock`, RFC 3339
 *   seconds), `generation` 1 for the resources that track it, a name from `generateName`; `AlreadyExists`
 *   (409) on a taken name; `Invalid` (422) without a name, or with a name that is not a DNS-1123 subdomain
 *   (a label for namespaces). The status of a resource with a status subresource is dropped.
 * - **update** and **patch**: `Conflict` (409) on a stale `metadata.resourceVersion` (a patch has one only
 *   when it sets it); `NotFound` (404, `configmaps "x" not found`); the stored status is kept by `update`
 *   and `patch` of a resource with a status subresource, and only the status is written by
 *   `updateStatus`, `patchStatus` and `applyStatus` (`NotFound` for a resource without one); `generation`
 *   grows as kube-apiserver moves it (a built-in's `spec`, a Deployment's annotations too; anything but
 *   `metadata` and `status` of a custom resource); a write that changes nothing writes nothing. These rules
 *   are `ApiStore`'s (`resourceTraits`, `generationChanges`, `sameObject`), the test kit's server's too.
 *   Patches: JSON merge, JSON patch, and strategic merge (`UnsupportedMediaType`, 415, for a custom
 *   resource, as the API server answers), as `ApiStore`'s functions apply them.
 * - **delete**: preconditions (`uid`, `resourceVersion`: `Conflict`); an object with `metadata.finalizers`
 *   is only marked (`deletionTimestamp` from the `Clock`, `deletionGracePeriodSeconds: 0`, MODIFIED) and
 *   goes (DELETED) when a write empties its finalizers; a new finalizer on an object being deleted is
 *   refused (`Invalid`). Deletion is immediate otherwise: there is no garbage collector (the
 *   `propagationPolicy` adds no finalizer) and no grace period (`gracePeriodSeconds` is not waited for).
 * - **apply** (server-side apply): creates the object when absent; otherwise merges the configuration into
 *   it (strategic-merge semantics) and records the field manager in `metadata.managedFields` (operation
 *   `Apply`, the fields of the configuration). The fake never answers a field conflict, and fields a
 *   manager stops applying are not removed: `force` changes nothing. The test kit's API server
 *   (`@effect-informers/testkit`) tracks field ownership and answers conflicts as kube-apiserver does.
 * - **dryRun**: every write verb with `dryRun` checks and answers as it would, and writes nothing.
 * - **reads**: `get`, `list`, `listAll` (one snapshot) and `watch` over the store, with the label and field
 *   selectors, resourceVersions, limit and continue of `FakeListerWatcher` (its lists and watches are
 *   recorded in that fake's `requests`).
 * - Like the real Client: the namespace of a call is `options.namespace`, else the object's, else the
 *   fake's (`Options.namespace`, `default`); a name that cannot be in a path is a `BadRequest` before
 *   anything is sent; a write checks the `Term` (`Term.check`) first and fails with `TermError`, unsent,
 *   when it is stale; a successful write (not a dry run) is recorded in the reconcile's
 *   `Consistency.Writes` (read-your-own-writes). `derive` returns the fake itself.
 *
 * Not modelled: admission (namespaces that do not exist, a namespace being terminated), `Update` entries
 * of `managedFields`, defaults and validation of the objects' specs. Objects written directly with the
 * fake ListerWatcher's `add` / `modify` are taken as they are.
 *
 * A test can make a verb fail (`failNext`, `failAlways`), and read what was written (`writes`).
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Client, Resource } from "effect-informers"
 * import { FakeClient } from "effect-informers/testing"
 *
 * const program = Effect.gen(function*() {
 *   const client = yield* Client.Client
 *   yield* client.create(Resource.configMaps, { metadata: { name: "settings" }, data: { a: "1" } })
 *   const fake = yield* FakeClient.FakeClient
 *   const writes = yield* fake.writes
 *   console.log(writes.map((w) => `${w.verb} ${w.resource} ${w.name}`)) // ["create configmaps settings"]
 * }).pipe(Effect.provide(FakeClient.layerFactory()))
 * ```
 *
 * @since 0.2.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type { ApiError } from "./ApiError.js"
import { Client } from "./Client.js"
import * as FakeListerWatcher from "./FakeListerWatcher.js"
import type * as InformerFactory from "./InformerFactory.js"
import * as internal from "./internal/testing/fakeClient.js"
import type { Resource } from "./Resource.js"
import type { Status } from "./Wire.js"

// -------------------------------------------------------------------------------------------------
// models
// -------------------------------------------------------------------------------------------------

/**
 * The verbs of the Client that write.
 *
 * @since 0.2.0
 * @category models
 */
export type WriteVerb =
  | "create"
  | "update"
  | "updateStatus"
  | "patch"
  | "patchStatus"
  | "apply"
  | "applyStatus"
  | "delete"

/**
 * The verbs of the Client, as failures are injected for them (`listAll` is a `list`).
 *
 * @since 0.2.0
 * @category models
 */
export type Verb = "get" | "list" | "watch" | WriteVerb

/**
 * A write request the fake received (before it was checked: a refused write is recorded too; a write
 * fenced by a stale `Term` or refused before sending, as the real Client refuses an empty name, is not).
 *
 * @since 0.2.0
 * @category models
 */
export interface Write {
  readonly verb: WriteVerb
  /** The group-resource written (`Resource.groupResource`): `configmaps`, `deployments.apps`. */
  readonly resource: string
  /** `undefined` for a cluster-scoped resource. */
  readonly namespace: string | undefined
  /** `undefined` for a create with `generateName`. */
  readonly name: string | undefined
  /**
   * What was sent: the object (create, update, apply and their status forms, as given), the `Patch`
   * (patch, patchStatus), or the `DeleteOptions` (delete; `{}` when none).
   */
  readonly body: unknown
  readonly dryRun: boolean
}

/**
 * Which requests an injected failure applies to: `times` of them (`failNext`; default 1), of `resource`
 * (any when absent), `namespace` and `name`.
 *
 * @since 0.2.0
 * @category models
 */
export interface FailureOptions {
  readonly times?: number | undefined
  readonly resource?: Resource<any> | undefined
  readonly namespace?: string | undefined
  readonly name?: string | undefined
}

/**
 * Options of `make` and `layer`.
 *
 * @since 0.2.0
 * @category models
 */
export interface Options {
  /** The namespace of calls that name none (the real Client's kubeconfig namespace). Default `default`. */
  readonly namespace?: string | undefined
  /** The field manager of `apply` when a call names none. Default `Client.defaultFieldManager`. */
  readonly fieldManager?: string | undefined
}

/**
 * @since 0.2.0
 */
export declare namespace FakeClient {
  /**
   * The fake: a `Client` and its controls.
   *
   * @since 0.2.0
   * @category models
   */
  export interface Service extends Client.Service {
    /**
     * The next `times` requests of `verb` matching `options` fail with `failure` (a `Status`, turned into
     * the `ApiError` the real Client gives for it, or an `ApiError` as it is), before anything is written.
     * Failures are matched in the order they were injected.
     */
    readonly failNext: (
      verb: Verb,
      failure: Status | ApiError,
      options?: FailureOptions
    ) => Effect.Effect<void>
    /** Every request of `verb` matching `options` fails with `failure`, until `clearFailures`. */
    readonly failAlways: (
      verb: Verb,
      failure: Status | ApiError,
      options?: Omit<FailureOptions, "times">
    ) => Effect.Effect<void>
    /** Forgets every injected failure. */
    readonly clearFailures: Effect.Effect<void>
    /** The write requests received, oldest first. */
    readonly writes: Effect.Effect<ReadonlyArray<Write>>
    readonly clearWrites: Effect.Effect<void>
  }
}

/**
 * The tag of the fake's controls, provided by `layer` next to the `Client` it implements (the same
 * object).
 *
 * @since 0.2.0
 * @category tags
 */
export class FakeClient extends Context.Service<FakeClient, FakeClient.Service>()("effect-informers/FakeClient") {}

// -------------------------------------------------------------------------------------------------
// constructors and layers
// -------------------------------------------------------------------------------------------------

/**
 * A fake Client over the fakes of the `FakeListerWatcherSource` in the context.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Resource } from "effect-informers"
 * import { FakeClient, FakeListerWatcher } from "effect-informers/testing"
 *
 * const program = Effect.gen(function*() {
 *   const client = yield* FakeClient.make({ namespace: "apps" })
 *   const created = yield* client.create(Resource.configMaps, { metadata: { generateName: "cfg-" } })
 *   console.log(created.metadata?.namespace, created.metadata?.resourceVersion) // "apps" "1"
 * }).pipe(Effect.provide(FakeListerWatcher.layerSource()))
 * ```
 *
 * @since 0.2.0
 * @category constructors
 */
export const make: (
  options?: Options
) => Effect.Effect<FakeClient.Service, never, FakeListerWatcher.FakeListerWatcherSource> = internal.make

/**
 * Provides the fake as the `Client` and as `FakeClient` (its controls), over the
 * `FakeListerWatcherSource` in the context (`FakeListerWatcher.layerSource()` or `layerFactory()`).
 *
 * @example
 * ```ts
 * import { Layer } from "effect"
 * import { FakeClient, FakeListerWatcher } from "effect-informers/testing"
 *
 * const TestEnv = FakeClient.layer().pipe(Layer.provideMerge(FakeListerWatcher.layerFactory()))
 * ```
 *
 * @since 0.2.0
 * @category layers
 */
export const layer = (
  options: Options = {}
): Layer.Layer<Client | FakeClient, never, FakeListerWatcher.FakeListerWatcherSource> =>
  Layer.effectContext(
    Effect.map(make(options), (fake) => Context.make(FakeClient, fake).pipe(Context.add(Client, fake)))
  )

/**
 * Options of `layerFactory`: the fake's, and the informer factory's (`informers`).
 *
 * @since 0.2.0
 * @category models
 */
export interface FactoryOptions extends Options {
  readonly informers?: InformerFactory.Options | undefined
}

/**
 * Everything a controller's test provides in one layer: the informer factory over fake ListerWatchers
 * (`FakeListerWatcher.layerFactory`), the fakes (`FakeListerWatcherSource`), and the fake `Client` over
 * them (`Client` and `FakeClient`).
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Client, InformerFactory, Resource } from "effect-informers"
 * import { FakeClient } from "effect-informers/testing"
 *
 * const program = Effect.gen(function*() {
 *   const factory = yield* InformerFactory.InformerFactory
 *   const lister = yield* factory.listerFor(Resource.configMaps)
 *   yield* factory.start
 *   yield* factory.waitForCacheSync()
 *   const client = yield* Client.Client
 *   yield* client.create(Resource.configMaps, { metadata: { namespace: "default", name: "a" } })
 *   // the informer sees the write by its watch
 * }).pipe(Effect.provide(FakeClient.layerFactory()), Effect.scoped)
 * ```
 *
 * @since 0.2.0
 * @category layers
 */
export const layerFactory = (
  options: FactoryOptions = {}
): Layer.Layer<
  Client | FakeClient | InformerFactory.InformerFactory | FakeListerWatcher.FakeListerWatcherSource
> => {
  const { informers, ...client } = options
  return layer(client).pipe(Layer.provideMerge(FakeListerWatcher.layerFactory(informers)))
}

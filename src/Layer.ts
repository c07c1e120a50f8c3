/**
 * The Layers an application composes. A typical app:
 *
 * ```
 * Pods / Deployments / ... (per-resource informer + lister)
 *   needs InformerFactory          <- factory(options)
 *     needs ListerWatcherSource    <- http(options)        (or the test kit's API server in tests)
 *       needs KubeConfig           <- kubeConfigFromDefault() / FromFile / InCluster / FromOptions
 * ```
 *
 * Because each Layer depends on the one below, releasing the app stops the informers (the factory shuts
 * down) before the HTTP client and its connections are released. In tests, `FakeListerWatcher.layerFactory()`
 * of `effect-informers/testing` stands where `live()` is: the factory over in-memory fakes, and the fakes.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Informers } from "effect-informers"
 *
 * const program = Effect.gen(function*() {
 *   const pods = yield* Informers.Pods
 *   yield* pods.informer.synced
 *   const running = yield* pods.lister.list("app=web")
 *   yield* Effect.log(`${running.length} web pods`)
 * })
 *
 * // against the cluster of ~/.kube/config (or KUBECONFIG, or in-cluster)
 * const main = program.pipe(Effect.provide(Informers.pods()), Effect.provide(Informers.live()))
 * ```
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as HttpListerWatcher from "./HttpListerWatcher.js"
import * as InformerFactory from "./InformerFactory.js"
import * as KubeConfig from "./KubeConfig.js"
import type { KubeObject } from "./KubeObject.js"
import * as Lister from "./Lister.js"
import type { ListerWatcherSource } from "./ListerWatcher.js"
import * as Resource from "./Resource.js"
import type * as SharedInformer from "./SharedInformer.js"

// -------------------------------------------------------------------------------------------------
// configuration and transport
// -------------------------------------------------------------------------------------------------

/**
 * KubeConfig from `KUBECONFIG`, `~/.kube/config`, or the in-cluster service account, in that order.
 *
 * @since 0.1.0
 * @category configuration
 */
export const kubeConfigFromDefault = KubeConfig.layerFromDefault

/**
 * KubeConfig from a file, optionally a given context.
 *
 * @since 0.1.0
 * @category configuration
 */
export const kubeConfigFromFile = KubeConfig.layerFromFile

/**
 * KubeConfig from the pod's service account.
 *
 * @since 0.1.0
 * @category configuration
 */
export const kubeConfigInCluster = KubeConfig.layerInCluster

/**
 * KubeConfig from explicit options (server, token, CA...).
 *
 * @since 0.1.0
 * @category configuration
 */
export const kubeConfigFromOptions = KubeConfig.layerFromOptions

/**
 * Options of `http`.
 *
 * @since 0.1.0
 * @category models
 */
export interface HttpOptions extends HttpListerWatcher.SourceOptions, HttpListerWatcher.HttpClientOptions {}

/**
 * Restart a watch that received no bytes for this long. Bookmarks count: API servers send one at least
 * every minute to watches that ask for them, as the Reflector does.
 *
 * @since 0.1.0
 * @category constants
 */
export const defaultWatchInactivityTimeout: Duration.Duration = Duration.seconds(75)

/**
 * The HTTP transport: a `ListerWatcherSource` over one keep-alive HTTP client shared by every informer.
 *
 * @since 0.1.0
 * @category transport
 */
export const http = (options: HttpOptions = {}): Layer.Layer<ListerWatcherSource, never, KubeConfig.KubeConfig> => {
  const { maxFreeSockets, maxSockets, tcpKeepAlive, ...source } = options
  return HttpListerWatcher.layerSource({
    watchInactivityTimeout: defaultWatchInactivityTimeout,
    ...source
  }).pipe(
    Layer.provide(HttpListerWatcher.layerHttpClientWith({ maxFreeSockets, maxSockets, tcpKeepAlive }))
  )
}

// -------------------------------------------------------------------------------------------------
// the factory
// -------------------------------------------------------------------------------------------------

/**
 * The informer factory over whichever `ListerWatcherSource` is provided.
 *
 * @since 0.1.0
 * @category factory
 */
export const factory = InformerFactory.layer

/**
 * Options of `live` and `fromKubeConfig`.
 *
 * @since 0.1.0
 * @category models
 */
export interface LiveOptions {
  readonly factory?: InformerFactory.Options | undefined
  readonly http?: HttpOptions | undefined
}

/**
 * The informer factory against a cluster described by `kubeConfig`.
 *
 * @since 0.1.0
 * @category factory
 */
export const fromKubeConfig = <E>(
  kubeConfig: Layer.Layer<KubeConfig.KubeConfig, E>,
  options: LiveOptions = {}
): Layer.Layer<InformerFactory.InformerFactory, E> =>
  factory(options.factory).pipe(Layer.provide(http(options.http)), Layer.provide(kubeConfig))

/**
 * The informer factory against the cluster of the default kubeconfig (see `kubeConfigFromDefault`).
 *
 * @since 0.1.0
 * @category factory
 */
export const live = (
  options: LiveOptions = {}
): Layer.Layer<InformerFactory.InformerFactory, KubeConfig.KubeConfigError> =>
  fromKubeConfig(kubeConfigFromDefault(), options)

// -------------------------------------------------------------------------------------------------
// per-resource informers
// -------------------------------------------------------------------------------------------------

/**
 * A resource's shared informer and its lister.
 *
 * @since 0.1.0
 * @category models
 */
export interface Informed<A> {
  readonly resource: Resource.Resource<A>
  readonly informer: SharedInformer.SharedInformer.Service<A>
  readonly lister: Lister.Lister<A>
}

/**
 * Provides `tag` with the factory's informer for `resource` (and `options`) and its lister, and starts
 * the factory's informers. Handlers added later join with a synthetic add per cached object.
 *
 * @example
 * ```ts
 * import { Context } from "effect"
 * import { Informers, Resource } from "effect-informers"
 *
 * const certificates = Resource.make({ group: "cert-manager.io", version: "v1", resource: "certificates", kind: "Certificate", namespaced: true })
 * type Certificate = typeof certificates extends Resource.Resource<infer A> ? A : never
 * class Certificates extends Context.Service<Certificates, Informers.Informed<Certificate>>()("app/Certificates") {}
 * const layer = Informers.informer(Certificates, certificates, { namespace: "prod" })
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const informer = <I, A extends KubeObject>(
  tag: Context.Key<I, Informed<A>>,
  resource: Resource.Resource<A>,
  options?: InformerFactory.InformerOptions<A>
): Layer.Layer<I, InformerFactory.InformerForError, InformerFactory.InformerFactory> =>
  Layer.effect(
    tag,
    Effect.gen(function*() {
      const informerFactory = yield* InformerFactory.InformerFactory
      const shared = yield* informerFactory.informerFor(resource, options)
      yield* informerFactory.start
      return { resource, informer: shared, lister: Lister.make(shared.indexer, resource) }
    })
  )

/**
 * The tag of `resource`'s shared informer and lister: one per resource (by group and plural name), so that
 * `tag(Resource.pods)` anywhere in an app is the same tag. Two `Resource` values for the same resource with
 * different object types share the runtime tag: give a custom resource one `Resource` value.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Informers, Resource } from "effect-informers"
 *
 * const certificates = Resource.make({ group: "cert-manager.io", version: "v1", resource: "certificates", kind: "Certificate", namespaced: true })
 * const Certificates = Informers.tag(certificates)
 * const program = Effect.gen(function*() {
 *   const { lister } = yield* Certificates
 *   return yield* lister.list()
 * }).pipe(Effect.provide(Informers.layer(certificates, { namespace: "prod" })))
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const tag = <A>(resource: Resource.Resource<A>): Context.Service<Informed<A>, Informed<A>> =>
  Context.Service<Informed<A>>(`effect-informers/Informed/${Resource.groupResource(resource)}`)

/**
 * Provides `tag(resource)` with the factory's informer for `resource` (and `options`) and its lister, and
 * starts the factory's informers.
 *
 * @since 0.1.0
 * @category constructors
 */
export const layer = <A extends KubeObject>(
  resource: Resource.Resource<A>,
  options?: InformerFactory.InformerOptions<A>
): Layer.Layer<Informed<A>, InformerFactory.InformerForError, InformerFactory.InformerFactory> =>
  informer(tag(resource), resource, options)

// -------------------------------------------------------------------------------------------------
// the built-in catalog: a tag and a layer per resource, derived from `tag` and `layer`
// -------------------------------------------------------------------------------------------------

/**
 * The shared informer and lister of `Resource.pods` (`tag(Resource.pods)`).
 *
 * @since 0.1.0
 * @category tags
 */
export const Pods: Context.Service<Informed<Resource.Pod>, Informed<Resource.Pod>> = tag(Resource.pods)
/**
 * @since 0.1.0
 * @category tags
 */
export type Pods = Informed<Resource.Pod>
/**
 * Provides `Pods` from the `InformerFactory` (started): `layer(Resource.pods, options)`.
 *
 * @since 0.1.0
 * @category layers
 */
export const pods = (
  options?: InformerFactory.InformerOptions<Resource.Pod>
): Layer.Layer<Pods, InformerFactory.InformerForError, InformerFactory.InformerFactory> => layer(Resource.pods, options)

/**
 * The shared informer and lister of `Resource.services` (`tag(Resource.services)`).
 *
 * @since 0.1.0
 * @category tags
 */
export const Services: Context.Service<Informed<Resource.Service>, Informed<Resource.Service>> = tag(Resource.services)
/**
 * @since 0.1.0
 * @category tags
 */
export type Services = Informed<Resource.Service>
/**
 * Provides `Services` from the `InformerFactory` (started): `layer(Resource.services, options)`.
 *
 * @since 0.1.0
 * @category layers
 */
export const services = (
  options?: InformerFactory.InformerOptions<Resource.Service>
): Layer.Layer<Services, InformerFactory.InformerForError, InformerFactory.InformerFactory> =>
  layer(Resource.services, options)

/**
 * The shared informer and lister of `Resource.endpoints` (`tag(Resource.endpoints)`).
 *
 * @since 0.1.0
 * @category tags
 */
export const Endpoints: Context.Service<Informed<Resource.Endpoints>, Informed<Resource.Endpoints>> = tag(
  Resource.endpoints
)
/**
 * @since 0.1.0
 * @category tags
 */
export type Endpoints = Informed<Resource.Endpoints>
/**
 * Provides `Endpoints` from the `InformerFactory` (started): `layer(Resource.endpoints, options)`.
 *
 * @since 0.1.0
 * @category layers
 */
export const endpoints = (
  options?: InformerFactory.InformerOptions<Resource.Endpoints>
): Layer.Layer<Endpoints, InformerFactory.InformerForError, InformerFactory.InformerFactory> =>
  layer(Resource.endpoints, options)

/**
 * The shared informer and lister of `Resource.configMaps` (`tag(Resource.configMaps)`).
 *
 * @since 0.1.0
 * @category tags
 */
export const ConfigMaps: Context.Service<Informed<Resource.ConfigMap>, Informed<Resource.ConfigMap>> = tag(
  Resource.configMaps
)
/**
 * @since 0.1.0
 * @category tags
 */
export type ConfigMaps = Informed<Resource.ConfigMap>
/**
 * Provides `ConfigMaps` from the `InformerFactory` (started): `layer(Resource.configMaps, options)`.
 *
 * @since 0.1.0
 * @category layers
 */
export const configMaps = (
  options?: InformerFactory.InformerOptions<Resource.ConfigMap>
): Layer.Layer<ConfigMaps, InformerFactory.InformerForError, InformerFactory.InformerFactory> =>
  layer(Resource.configMaps, options)

/**
 * The shared informer and lister of `Resource.secrets` (`tag(Resource.secrets)`).
 *
 * @since 0.1.0
 * @category tags
 */
export const Secrets: Context.Service<Informed<Resource.Secret>, Informed<Resource.Secret>> = tag(Resource.secrets)
/**
 * @since 0.1.0
 * @category tags
 */
export type Secrets = Informed<Resource.Secret>
/**
 * Provides `Secrets` from the `InformerFactory` (started): `layer(Resource.secrets, options)`.
 *
 * @since 0.1.0
 * @category layers
 */
export const secrets = (
  options?: InformerFactory.InformerOptions<Resource.Secret>
): Layer.Layer<Secrets, InformerFactory.InformerForError, InformerFactory.InformerFactory> =>
  layer(Resource.secrets, options)

/**
 * The shared informer and lister of `Resource.nodes` (`tag(Resource.nodes)`).
 *
 * @since 0.1.0
 * @category tags
 */
export const Nodes: Context.Service<Informed<Resource.Node>, Informed<Resource.Node>> = tag(Resource.nodes)
/**
 * @since 0.1.0
 * @category tags
 */
export type Nodes = Informed<Resource.Node>
/**
 * Provides `Nodes` from the `InformerFactory` (started): `layer(Resource.nodes, options)`.
 *
 * @since 0.1.0
 * @category layers
 */
export const nodes = (
  options?: InformerFactory.InformerOptions<Resource.Node>
): Layer.Layer<Nodes, InformerFactory.InformerForError, InformerFactory.InformerFactory> =>
  layer(Resource.nodes, options)

/**
 * The shared informer and lister of `Resource.namespaces` (`tag(Resource.namespaces)`).
 *
 * @since 0.1.0
 * @category tags
 */
export const Namespaces: Context.Service<Informed<Resource.Namespace>, Informed<Resource.Namespace>> = tag(
  Resource.namespaces
)
/**
 * @since 0.1.0
 * @category tags
 */
export type Namespaces = Informed<Resource.Namespace>
/**
 * Provides `Namespaces` from the `InformerFactory` (started): `layer(Resource.namespaces, options)`.
 *
 * @since 0.1.0
 * @category layers
 */
export const namespaces = (
  options?: InformerFactory.InformerOptions<Resource.Namespace>
): Layer.Layer<Namespaces, InformerFactory.InformerForError, InformerFactory.InformerFactory> =>
  layer(Resource.namespaces, options)

/**
 * The shared informer and lister of `Resource.events` (`tag(Resource.events)`).
 *
 * @since 0.1.0
 * @category tags
 */
export const Events: Context.Service<Informed<Resource.Event>, Informed<Resource.Event>> = tag(Resource.events)
/**
 * @since 0.1.0
 * @category tags
 */
export type Events = Informed<Resource.Event>
/**
 * Provides `Events` from the `InformerFactory` (started): `layer(Resource.events, options)`.
 *
 * @since 0.1.0
 * @category layers
 */
export const events = (
  options?: InformerFactory.InformerOptions<Resource.Event>
): Layer.Layer<Events, InformerFactory.InformerForError, InformerFactory.InformerFactory> =>
  layer(Resource.events, options)

/**
 * The shared informer and lister of `Resource.persistentVolumes` (`tag(Resource.persistentVolumes)`).
 *
 * @since 0.1.0
 * @category tags
 */
export const PersistentVolumes: Context.Service<
  Informed<Resource.PersistentVolume>,
  Informed<Resource.PersistentVolume>
> = tag(Resource.persistentVolumes)
/**
 * @since 0.1.0
 * @category tags
 */
export type PersistentVolumes = Informed<Resource.PersistentVolume>
/**
 * Provides `PersistentVolumes` from the `InformerFactory` (started): `layer(Resource.persistentVolumes, options)`.
 *
 * @since 0.1.0
 * @category layers
 */
export const persistentVolumes = (
  options?: InformerFactory.InformerOptions<Resource.PersistentVolume>
): Layer.Layer<PersistentVolumes, InformerFactory.InformerForError, InformerFactory.InformerFactory> =>
  layer(Resource.persistentVolumes, options)

/**
 * The shared informer and lister of `Resource.persistentVolumeClaims` (`tag(Resource.persistentVolumeClaims)`).
 *
 * @since 0.1.0
 * @category tags
 */
export const PersistentVolumeClaims: Context.Service<
  Informed<Resource.PersistentVolumeClaim>,
  Informed<Resource.PersistentVolumeClaim>
> = tag(Resource.persistentVolumeClaims)
/**
 * @since 0.1.0
 * @category tags
 */
export type PersistentVolumeClaims = Informed<Resource.PersistentVolumeClaim>
/**
 * Provides `PersistentVolumeClaims` from the `InformerFactory` (started): `layer(Resource.persistentVolumeClaims, options)`.
 *
 * @since 0.1.0
 * @category layers
 */
export const persistentVolumeClaims = (
  options?: InformerFactory.InformerOptions<Resource.PersistentVolumeClaim>
): Layer.Layer<PersistentVolumeClaims, InformerFactory.InformerForError, InformerFactory.InformerFactory> =>
  layer(Resource.persistentVolumeClaims, options)

/**
 * The shared informer and lister of `Resource.serviceAccounts` (`tag(Resource.serviceAccounts)`).
 *
 * @since 0.1.0
 * @category tags
 */
export const ServiceAccounts: Context.Service<Informed<Resource.ServiceAccount>, Informed<Resource.ServiceAccount>> =
  tag(
    Resource.serviceAccounts
  )
/**
 * @since 0.1.0
 * @category tags
 */
export type ServiceAccounts = Informed<Resource.ServiceAccount>
/**
 * Provides `ServiceAccounts` from the `InformerFactory` (started): `layer(Resource.serviceAccounts, options)`.
 *
 * @since 0.1.0
 * @category layers
 */
export const serviceAccounts = (
  options?: InformerFactory.InformerOptions<Resource.ServiceAccount>
): Layer.Layer<ServiceAccounts, InformerFactory.InformerForError, InformerFactory.InformerFactory> =>
  layer(Resource.serviceAccounts, options)

/**
 * The shared informer and lister of `Resource.deployments` (`tag(Resource.deployments)`).
 *
 * @since 0.1.0
 * @category tags
 */
export const Deployments: Context.Service<Informed<Resource.Deployment>, Informed<Resource.Deployment>> = tag(
  Resource.deployments
)
/**
 * @since 0.1.0
 * @category tags
 */
export type Deployments = Informed<Resource.Deployment>
/**
 * Provides `Deployments` from the `InformerFactory` (started): `layer(Resource.deployments, options)`.
 *
 * @since 0.1.0
 * @category layers
 */
export const deployments = (
  options?: InformerFactory.InformerOptions<Resource.Deployment>
): Layer.Layer<Deployments, InformerFactory.InformerForError, InformerFactory.InformerFactory> =>
  layer(Resource.deployments, options)

/**
 * The shared informer and lister of `Resource.replicaSets` (`tag(Resource.replicaSets)`).
 *
 * @since 0.1.0
 * @category tags
 */
export const ReplicaSets: Context.Service<Informed<Resource.ReplicaSet>, Informed<Resource.ReplicaSet>> = tag(
  Resource.replicaSets
)
/**
 * @since 0.1.0
 * @category tags
 */
export type ReplicaSets = Informed<Resource.ReplicaSet>
/**
 * Provides `ReplicaSets` from the `InformerFactory` (started): `layer(Resource.replicaSets, options)`.
 *
 * @since 0.1.0
 * @category layers
 */
export const replicaSets = (
  options?: InformerFactory.InformerOptions<Resource.ReplicaSet>
): Layer.Layer<ReplicaSets, InformerFactory.InformerForError, InformerFactory.InformerFactory> =>
  layer(Resource.replicaSets, options)

/**
 * The shared informer and lister of `Resource.statefulSets` (`tag(Resource.statefulSets)`).
 *
 * @since 0.1.0
 * @category tags
 */
export const StatefulSets: Context.Service<Informed<Resource.StatefulSet>, Informed<Resource.StatefulSet>> = tag(
  Resource.statefulSets
)
/**
 * @since 0.1.0
 * @category tags
 */
export type StatefulSets = Informed<Resource.StatefulSet>
/**
 * Provides `StatefulSets` from the `InformerFactory` (started): `layer(Resource.statefulSets, options)`.
 *
 * @since 0.1.0
 * @category layers
 */
export const statefulSets = (
  options?: InformerFactory.InformerOptions<Resource.StatefulSet>
): Layer.Layer<StatefulSets, InformerFactory.InformerForError, InformerFactory.InformerFactory> =>
  layer(Resource.statefulSets, options)

/**
 * The shared informer and lister of `Resource.daemonSets` (`tag(Resource.daemonSets)`).
 *
 * @since 0.1.0
 * @category tags
 */
export const DaemonSets: Context.Service<Informed<Resource.DaemonSet>, Informed<Resource.DaemonSet>> = tag(
  Resource.daemonSets
)
/**
 * @since 0.1.0
 * @category tags
 */
export type DaemonSets = Informed<Resource.DaemonSet>
/**
 * Provides `DaemonSets` from the `InformerFactory` (started): `layer(Resource.daemonSets, options)`.
 *
 * @since 0.1.0
 * @category layers
 */
export const daemonSets = (
  options?: InformerFactory.InformerOptions<Resource.DaemonSet>
): Layer.Layer<DaemonSets, InformerFactory.InformerForError, InformerFactory.InformerFactory> =>
  layer(Resource.daemonSets, options)

/**
 * The shared informer and lister of `Resource.jobs` (`tag(Resource.jobs)`).
 *
 * @since 0.1.0
 * @category tags
 */
export const Jobs: Context.Service<Informed<Resource.Job>, Informed<Resource.Job>> = tag(Resource.jobs)
/**
 * @since 0.1.0
 * @category tags
 */
export type Jobs = Informed<Resource.Job>
/**
 * Provides `Jobs` from the `InformerFactory` (started): `layer(Resource.jobs, options)`.
 *
 * @since 0.1.0
 * @category layers
 */
export const jobs = (
  options?: InformerFactory.InformerOptions<Resource.Job>
): Layer.Layer<Jobs, InformerFactory.InformerForError, InformerFactory.InformerFactory> => layer(Resource.jobs, options)

/**
 * The shared informer and lister of `Resource.cronJobs` (`tag(Resource.cronJobs)`).
 *
 * @since 0.1.0
 * @category tags
 */
export const CronJobs: Context.Service<Informed<Resource.CronJob>, Informed<Resource.CronJob>> = tag(Resource.cronJobs)
/**
 * @since 0.1.0
 * @category tags
 */
export type CronJobs = Informed<Resource.CronJob>
/**
 * Provides `CronJobs` from the `InformerFactory` (started): `layer(Resource.cronJobs, options)`.
 *
 * @since 0.1.0
 * @category layers
 */
export const cronJobs = (
  options?: InformerFactory.InformerOptions<Resource.CronJob>
): Layer.Layer<CronJobs, InformerFactory.InformerForError, InformerFactory.InformerFactory> =>
  layer(Resource.cronJobs, options)

/**
 * The shared informer and lister of `Resource.ingresses` (`tag(Resource.ingresses)`).
 *
 * @since 0.1.0
 * @category tags
 */
export const Ingresses: Context.Service<Informed<Resource.Ingress>, Informed<Resource.Ingress>> = tag(
  Resource.ingresses
)
/**
 * @since 0.1.0
 * @category tags
 */
export type Ingresses = Informed<Resource.Ingress>
/**
 * Provides `Ingresses` from the `InformerFactory` (started): `layer(Resource.ingresses, options)`.
 *
 * @since 0.1.0
 * @category layers
 */
export const ingresses = (
  options?: InformerFactory.InformerOptions<Resource.Ingress>
): Layer.Layer<Ingresses, InformerFactory.InformerForError, InformerFactory.InformerFactory> =>
  layer(Resource.ingresses, options)

/**
 * The shared informer and lister of `Resource.endpointSlices` (`tag(Resource.endpointSlices)`).
 *
 * @since 0.1.0
 * @category tags
 */
export const EndpointSlices: Context.Service<Informed<Resource.EndpointSlice>, Informed<Resource.EndpointSlice>> = tag(
  Resource.endpointSlices
)
/**
 * @since 0.1.0
 * @category tags
 */
export type EndpointSlices = Informed<Resource.EndpointSlice>
/**
 * Provides `EndpointSlices` from the `InformerFactory` (started): `layer(Resource.endpointSlices, options)`.
 *
 * @since 0.1.0
 * @category layers
 */
export const endpointSlices = (
  options?: InformerFactory.InformerOptions<Resource.EndpointSlice>
): Layer.Layer<EndpointSlices, InformerFactory.InformerForError, InformerFactory.InformerFactory> =>
  layer(Resource.endpointSlices, options)

/**
 * The shared informer and lister of `Resource.leases` (`tag(Resource.leases)`).
 *
 * @since 0.1.0
 * @category tags
 */
export const Leases: Context.Service<Informed<Resource.Lease>, Informed<Resource.Lease>> = tag(Resource.leases)
/**
 * @since 0.1.0
 * @category tags
 */
export type Leases = Informed<Resource.Lease>
/**
 * Provides `Leases` from the `InformerFactory` (started): `layer(Resource.leases, options)`.
 *
 * @since 0.1.0
 * @category layers
 */
export const leases = (
  options?: InformerFactory.InformerOptions<Resource.Lease>
): Layer.Layer<Leases, InformerFactory.InformerForError, InformerFactory.InformerFactory> =>
  layer(Resource.leases, options)

/**
 * The Layers an application composes. A typical app:
 *
 * ```
 * Pods / Deployments / ... (per-resource informer + lister)
 *   needs InformerFactory          <- factory(options)
 *     needs ListerWatcherSource    <- http(options)        (or fake() / apiServer() in tests)
 *       needs KubeConfig           <- kubeConfigFromDefault() / FromFile / InCluster / FromOptions
 * ```
 *
 * Because each Layer depends on the one below, releasing the app stops the informers (the factory shuts
 * down) before the HTTP client and its connections are released.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Layer as Informers } from "effect-informers"
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
import type {
  CoreV1Event,
  V1ConfigMap,
  V1CronJob,
  V1DaemonSet,
  V1Deployment,
  V1Endpoints,
  V1EndpointSlice,
  V1Ingress,
  V1Job,
  V1Lease,
  V1Namespace,
  V1Node,
  V1PersistentVolume,
  V1PersistentVolumeClaim,
  V1Pod,
  V1ReplicaSet,
  V1Secret,
  V1Service,
  V1ServiceAccount,
  V1StatefulSet
} from "@kubernetes/client-node"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as FakeListerWatcher from "./FakeListerWatcher.js"
import * as HttpListerWatcher from "./HttpListerWatcher.js"
import * as InformerFactory from "./InformerFactory.js"
import * as KubeConfig from "./KubeConfig.js"
import type { Json, KubeObject } from "./KubeObject.js"
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

/**
 * The informer factory over in-memory fakes, and the fakes (`FakeListerWatcherSource`) to drive it.
 *
 * @since 0.1.0
 * @category testing
 */
export const fake = (
  options: InformerFactory.Options = {}
): Layer.Layer<InformerFactory.InformerFactory | FakeListerWatcher.FakeListerWatcherSource> =>
  factory(options).pipe(Layer.provideMerge(FakeListerWatcher.layerSource()))

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
 * import { Layer as Informers, Resource } from "effect-informers"
 *
 * const certificates = Resource.make({ group: "cert-manager.io", version: "v1", resource: "certificates", kind: "Certificate", namespaced: true })
 * class Certificates extends Context.Tag("app/Certificates")<Certificates, Informers.Informed<typeof certificates extends Resource.Resource<infer A> ? A : never>>() {}
 * const layer = Informers.informer(Certificates, certificates, { namespace: "prod" })
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const informer = <I, A extends KubeObject>(
  tag: Context.Tag<I, Informed<A>>,
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
 * The shared informer and lister of `Resource.pods`.
 *
 * @since 0.1.0
 * @category tags
 */
export class Pods extends Context.Tag("effect-informers/Pods")<Pods, Informed<Json<V1Pod>>>() {}

/**
 * Provides `Pods` from the `InformerFactory` (started).
 *
 * @since 0.1.0
 * @category layers
 */
export const pods = (
  options?: InformerFactory.InformerOptions<Json<V1Pod>>
): Layer.Layer<Pods, InformerFactory.InformerForError, InformerFactory.InformerFactory> =>
  informer(Pods, Resource.pods, options)

/**
 * The shared informer and lister of `Resource.services`.
 *
 * @since 0.1.0
 * @category tags
 */
export class Services extends Context.Tag("effect-informers/Services")<Services, Informed<Json<V1Service>>>() {}

/**
 * Provides `Services` from the `InformerFactory` (started).
 *
 * @since 0.1.0
 * @category layers
 */
export const services = (
  options?: InformerFactory.InformerOptions<Json<V1Service>>
): Layer.Layer<Services, InformerFactory.InformerForError, InformerFactory.InformerFactory> =>
  informer(Services, Resource.services, options)

/**
 * The shared informer and lister of `Resource.endpoints`.
 *
 * @since 0.1.0
 * @category tags
 */
export class Endpoints extends Context.Tag("effect-informers/Endpoints")<Endpoints, Informed<Json<V1Endpoints>>>() {}

/**
 * Provides `Endpoints` from the `InformerFactory` (started).
 *
 * @since 0.1.0
 * @category layers
 */
export const endpoints = (
  options?: InformerFactory.InformerOptions<Json<V1Endpoints>>
): Layer.Layer<Endpoints, InformerFactory.InformerForError, InformerFactory.InformerFactory> =>
  informer(Endpoints, Resource.endpoints, options)

/**
 * The shared informer and lister of `Resource.configMaps`.
 *
 * @since 0.1.0
 * @category tags
 */
export class ConfigMaps extends Context.Tag("effect-informers/ConfigMaps")<ConfigMaps, Informed<Json<V1ConfigMap>>>() {}

/**
 * Provides `ConfigMaps` from the `InformerFactory` (started).
 *
 * @since 0.1.0
 * @category layers
 */
export const configMaps = (
  options?: InformerFactory.InformerOptions<Json<V1ConfigMap>>
): Layer.Layer<ConfigMaps, InformerFactory.InformerForError, InformerFactory.InformerFactory> =>
  informer(ConfigMaps, Resource.configMaps, options)

/**
 * The shared informer and lister of `Resource.secrets`.
 *
 * @since 0.1.0
 * @category tags
 */
export class Secrets extends Context.Tag("effect-informers/Secrets")<Secrets, Informed<Json<V1Secret>>>() {}

/**
 * Provides `Secrets` from the `InformerFactory` (started).
 *
 * @since 0.1.0
 * @category layers
 */
export const secrets = (
  options?: InformerFactory.InformerOptions<Json<V1Secret>>
): Layer.Layer<Secrets, InformerFactory.InformerForError, InformerFactory.InformerFactory> =>
  informer(Secrets, Resource.secrets, options)

/**
 * The shared informer and lister of `Resource.nodes`.
 *
 * @since 0.1.0
 * @category tags
 */
export class Nodes extends Context.Tag("effect-informers/Nodes")<Nodes, Informed<Json<V1Node>>>() {}

/**
 * Provides `Nodes` from the `InformerFactory` (started).
 *
 * @since 0.1.0
 * @category layers
 */
export const nodes = (
  options?: InformerFactory.InformerOptions<Json<V1Node>>
): Layer.Layer<Nodes, InformerFactory.InformerForError, InformerFactory.InformerFactory> =>
  informer(Nodes, Resource.nodes, options)

/**
 * The shared informer and lister of `Resource.namespaces`.
 *
 * @since 0.1.0
 * @category tags
 */
export class Namespaces extends Context.Tag("effect-informers/Namespaces")<Namespaces, Informed<Json<V1Namespace>>>() {}

/**
 * Provides `Namespaces` from the `InformerFactory` (started).
 *
 * @since 0.1.0
 * @category layers
 */
export const namespaces = (
  options?: InformerFactory.InformerOptions<Json<V1Namespace>>
): Layer.Layer<Namespaces, InformerFactory.InformerForError, InformerFactory.InformerFactory> =>
  informer(Namespaces, Resource.namespaces, options)

/**
 * The shared informer and lister of `Resource.events`.
 *
 * @since 0.1.0
 * @category tags
 */
export class Events extends Context.Tag("effect-informers/Events")<Events, Informed<Json<CoreV1Event>>>() {}

/**
 * Provides `Events` from the `InformerFactory` (started).
 *
 * @since 0.1.0
 * @category layers
 */
export const events = (
  options?: InformerFactory.InformerOptions<Json<CoreV1Event>>
): Layer.Layer<Events, InformerFactory.InformerForError, InformerFactory.InformerFactory> =>
  informer(Events, Resource.events, options)

/**
 * The shared informer and lister of `Resource.persistentVolumes`.
 *
 * @since 0.1.0
 * @category tags
 */
export class PersistentVolumes
  extends Context.Tag("effect-informers/PersistentVolumes")<PersistentVolumes, Informed<Json<V1PersistentVolume>>>()
{}

/**
 * Provides `PersistentVolumes` from the `InformerFactory` (started).
 *
 * @since 0.1.0
 * @category layers
 */
export const persistentVolumes = (
  options?: InformerFactory.InformerOptions<Json<V1PersistentVolume>>
): Layer.Layer<PersistentVolumes, InformerFactory.InformerForError, InformerFactory.InformerFactory> =>
  informer(PersistentVolumes, Resource.persistentVolumes, options)

/**
 * The shared informer and lister of `Resource.persistentVolumeClaims`.
 *
 * @since 0.1.0
 * @category tags
 */
export class PersistentVolumeClaims extends Context.Tag("effect-informers/PersistentVolumeClaims")<
  PersistentVolumeClaims,
  Informed<Json<V1PersistentVolumeClaim>>
>() {}

/**
 * Provides `PersistentVolumeClaims` from the `InformerFactory` (started).
 *
 * @since 0.1.0
 * @category layers
 */
export const persistentVolumeClaims = (
  options?: InformerFactory.InformerOptions<Json<V1PersistentVolumeClaim>>
): Layer.Layer<PersistentVolumeClaims, InformerFactory.InformerForError, InformerFactory.InformerFactory> =>
  informer(PersistentVolumeClaims, Resource.persistentVolumeClaims, options)

/**
 * The shared informer and lister of `Resource.serviceAccounts`.
 *
 * @since 0.1.0
 * @category tags
 */
export class ServiceAccounts
  extends Context.Tag("effect-informers/ServiceAccounts")<ServiceAccounts, Informed<Json<V1ServiceAccount>>>()
{}

/**
 * Provides `ServiceAccounts` from the `InformerFactory` (started).
 *
 * @since 0.1.0
 * @category layers
 */
export const serviceAccounts = (
  options?: InformerFactory.InformerOptions<Json<V1ServiceAccount>>
): Layer.Layer<ServiceAccounts, InformerFactory.InformerForError, InformerFactory.InformerFactory> =>
  informer(ServiceAccounts, Resource.serviceAccounts, options)

/**
 * The shared informer and lister of `Resource.deployments`.
 *
 * @since 0.1.0
 * @category tags
 */
export class Deployments
  extends Context.Tag("effect-informers/Deployments")<Deployments, Informed<Json<V1Deployment>>>()
{}

/**
 * Provides `Deployments` from the `InformerFactory` (started).
 *
 * @since 0.1.0
 * @category layers
 */
export const deployments = (
  options?: InformerFactory.InformerOptions<Json<V1Deployment>>
): Layer.Layer<Deployments, InformerFactory.InformerForError, InformerFactory.InformerFactory> =>
  informer(Deployments, Resource.deployments, options)

/**
 * The shared informer and lister of `Resource.replicaSets`.
 *
 * @since 0.1.0
 * @category tags
 */
export class ReplicaSets
  extends Context.Tag("effect-informers/ReplicaSets")<ReplicaSets, Informed<Json<V1ReplicaSet>>>()
{}

/**
 * Provides `ReplicaSets` from the `InformerFactory` (started).
 *
 * @since 0.1.0
 * @category layers
 */
export const replicaSets = (
  options?: InformerFactory.InformerOptions<Json<V1ReplicaSet>>
): Layer.Layer<ReplicaSets, InformerFactory.InformerForError, InformerFactory.InformerFactory> =>
  informer(ReplicaSets, Resource.replicaSets, options)

/**
 * The shared informer and lister of `Resource.statefulSets`.
 *
 * @since 0.1.0
 * @category tags
 */
export class StatefulSets
  extends Context.Tag("effect-informers/StatefulSets")<StatefulSets, Informed<Json<V1StatefulSet>>>()
{}

/**
 * Provides `StatefulSets` from the `InformerFactory` (started).
 *
 * @since 0.1.0
 * @category layers
 */
export const statefulSets = (
  options?: InformerFactory.InformerOptions<Json<V1StatefulSet>>
): Layer.Layer<StatefulSets, InformerFactory.InformerForError, InformerFactory.InformerFactory> =>
  informer(StatefulSets, Resource.statefulSets, options)

/**
 * The shared informer and lister of `Resource.daemonSets`.
 *
 * @since 0.1.0
 * @category tags
 */
export class DaemonSets extends Context.Tag("effect-informers/DaemonSets")<DaemonSets, Informed<Json<V1DaemonSet>>>() {}

/**
 * Provides `DaemonSets` from the `InformerFactory` (started).
 *
 * @since 0.1.0
 * @category layers
 */
export const daemonSets = (
  options?: InformerFactory.InformerOptions<Json<V1DaemonSet>>
): Layer.Layer<DaemonSets, InformerFactory.InformerForError, InformerFactory.InformerFactory> =>
  informer(DaemonSets, Resource.daemonSets, options)

/**
 * The shared informer and lister of `Resource.jobs`.
 *
 * @since 0.1.0
 * @category tags
 */
export class Jobs extends Context.Tag("effect-informers/Jobs")<Jobs, Informed<Json<V1Job>>>() {}

/**
 * Provides `Jobs` from the `InformerFactory` (started).
 *
 * @since 0.1.0
 * @category layers
 */
export const jobs = (
  options?: InformerFactory.InformerOptions<Json<V1Job>>
): Layer.Layer<Jobs, InformerFactory.InformerForError, InformerFactory.InformerFactory> =>
  informer(Jobs, Resource.jobs, options)

/**
 * The shared informer and lister of `Resource.cronJobs`.
 *
 * @since 0.1.0
 * @category tags
 */
export class CronJobs extends Context.Tag("effect-informers/CronJobs")<CronJobs, Informed<Json<V1CronJob>>>() {}

/**
 * Provides `CronJobs` from the `InformerFactory` (started).
 *
 * @since 0.1.0
 * @category layers
 */
export const cronJobs = (
  options?: InformerFactory.InformerOptions<Json<V1CronJob>>
): Layer.Layer<CronJobs, InformerFactory.InformerForError, InformerFactory.InformerFactory> =>
  informer(CronJobs, Resource.cronJobs, options)

/**
 * The shared informer and lister of `Resource.ingresses`.
 *
 * @since 0.1.0
 * @category tags
 */
export class Ingresses extends Context.Tag("effect-informers/Ingresses")<Ingresses, Informed<Json<V1Ingress>>>() {}

/**
 * Provides `Ingresses` from the `InformerFactory` (started).
 *
 * @since 0.1.0
 * @category layers
 */
export const ingresses = (
  options?: InformerFactory.InformerOptions<Json<V1Ingress>>
): Layer.Layer<Ingresses, InformerFactory.InformerForError, InformerFactory.InformerFactory> =>
  informer(Ingresses, Resource.ingresses, options)

/**
 * The shared informer and lister of `Resource.endpointSlices`.
 *
 * @since 0.1.0
 * @category tags
 */
export class EndpointSlices
  extends Context.Tag("effect-informers/EndpointSlices")<EndpointSlices, Informed<Json<V1EndpointSlice>>>()
{}

/**
 * Provides `EndpointSlices` from the `InformerFactory` (started).
 *
 * @since 0.1.0
 * @category layers
 */
export const endpointSlices = (
  options?: InformerFactory.InformerOptions<Json<V1EndpointSlice>>
): Layer.Layer<EndpointSlices, InformerFactory.InformerForError, InformerFactory.InformerFactory> =>
  informer(EndpointSlices, Resource.endpointSlices, options)

/**
 * The shared informer and lister of `Resource.leases`.
 *
 * @since 0.1.0
 * @category tags
 */
export class Leases extends Context.Tag("effect-informers/Leases")<Leases, Informed<Json<V1Lease>>>() {}

/**
 * Provides `Leases` from the `InformerFactory` (started).
 *
 * @since 0.1.0
 * @category layers
 */
export const leases = (
  options?: InformerFactory.InformerOptions<Json<V1Lease>>
): Layer.Layer<Leases, InformerFactory.InformerForError, InformerFactory.InformerFactory> =>
  informer(Leases, Resource.leases, options)

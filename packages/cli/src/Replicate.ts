/**
 * A ConfigMap replicator: the model of a controller written with effect-informers (`effect-informers
 * replicate`).
 *
 * Every ConfigMap labelled `replicate=true`, in any namespace, is copied (its `data` and `binaryData`) into
 * every namespace labelled `replicate-into=true` other than its own, under the same name, labelled
 * `replicated-from=<namespace>.<name>`. Copies follow their source; a source deleted or no longer
 * labelled, or a namespace that loses its label, has its copies deleted. A ConfigMap of the same name in a
 * target namespace without our label is not ours: it is never overwritten or deleted, and reported once.
 *
 * The reconcile is level-based: from the caches alone it computes the copies a source should have, and
 * makes the cluster so. Each ConfigMap key is reconciled on its own events; a copy's events lead back to
 * its source by the label; a namespace's events lead to every source; a ConfigMap that is not ours, to
 * the sources of its name. Writes go through the `Client` with preconditions (an update carries the
 * copy's resourceVersion, a delete its uid), so a stale cache costs a retry, never a wrong write, and the
 * controller's read-your-own-writes keeps the next reconcile of a key from acting on a cache older than
 * its own last write.
 *
 * With an `EventRecorder` it reports what it does as Events on the source ConfigMap, as a Kubernetes
 * controller does (`kubectl describe configmap` shows them; the recorder aggregates repeats into series
 * and rate-limits each object): `Normal Replicated` (a copy created), `Normal CopyUpdated`, `Normal
 * CopyDeleted` (a namespace no longer a target, or the source no longer labelled), `Warning NotOwned` (a
 * same-named ConfigMap in a target namespace that is not its copy) and `Warning InvalidSource` (a source
 * whose `replicated-from` label value would be too long).
 *
 * @since 0.2.0
 */
import type * as ApiError from "effect-informers/ApiError"
import * as Client from "effect-informers/Client"
import * as ClusterHttpClient from "effect-informers/ClusterHttpClient"
import * as Controller from "effect-informers/Controller"
import * as EventRecorder from "effect-informers/EventRecorder"
import * as HttpListerWatcher from "effect-informers/HttpListerWatcher"
import type { LabelSelectorParseError } from "effect-informers/LabelSelector"
import * as Informers from "effect-informers/Layer"
import * as LeaderElection from "effect-informers/LeaderElection"
import type * as Resource from "effect-informers/Resource"
import { configMaps } from "effect-informers/Resource"
import * as Sharding from "effect-informers/Sharding"
import type { TermError } from "effect-informers/Term"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"

/**
 * The label that makes a ConfigMap a source.
 *
 * @since 0.2.0
 * @category constants
 */
export const sourceLabel = "replicate"

/**
 * The label that makes a namespace a target.
 *
 * @since 0.2.0
 * @category constants
 */
export const targetLabel = "replicate-into"

/**
 * The label of a copy: `<namespace>.<name>` of its source (namespace names have no dots).
 *
 * @since 0.2.0
 * @category constants
 */
export const copyLabel = "replicated-from"

type ConfigMap = Resource.ConfigMap
type Namespace = Resource.Namespace

const labelsOf = (obj: ConfigMap | Namespace): Readonly<Record<string, string>> => obj.metadata?.labels ?? {}

/** `<namespace>/<name>` of the source a copy came from. */
const sourceOfCopy = (cm: ConfigMap): string | undefined => {
  const from = labelsOf(cm)[copyLabel]
  const dot = from === undefined ? -1 : from.indexOf(".")
  return dot <= 0 ? undefined : `${from!.slice(0, dot)}/${from!.slice(dot + 1)}`
}

const maxLabelValue = 63

const byName = "effect-informers-replicate/name"

const isSource = (cm: ConfigMap): boolean => labelsOf(cm)[sourceLabel] === "true" && sourceOfCopy(cm) === undefined

const isTarget = (ns: Namespace): boolean =>
  labelsOf(ns)[targetLabel] === "true" && ns.metadata?.deletionTimestamp === undefined

const sameData = (a: ConfigMap, b: ConfigMap): boolean =>
  JSON.stringify(a.data ?? {}) === JSON.stringify(b.data ?? {}) &&
  JSON.stringify(a.binaryData ?? {}) === JSON.stringify(b.binaryData ?? {})

const keyOf = (cm: ConfigMap): string => `${cm.metadata?.namespace ?? ""}/${cm.metadata?.name ?? ""}`

/** The copy of `source` in `namespace`: its data, our label, and (for an update) the copy's version. */
const copyOf = (source: ConfigMap, namespace: string, from: string, resourceVersion?: string): ConfigMap => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: {
    namespace,
    name: source.metadata!.name!,
    labels: { [copyLabel]: from },
    ...(resourceVersion === undefined ? {} : { resourceVersion })
  },
  ...(source.data === undefined ? {} : { data: source.data }),
  ...(source.binaryData === undefined ? {} : { binaryData: source.binaryData })
})

/**
 * The `reportingController` of the replicator's Events.
 *
 * @since 0.2.0
 * @category constants
 */
export const reportingController = "effect-informers.io/replicate"

/**
 * The replicator's event recorder, in the current scope: Events of `reportingController`, instance
 * `identity` (the replica), written through the `Client` of the context.
 *
 * @since 0.2.0
 * @category constructors
 */
export const eventRecorder = (
  identity: string
): Effect.Effect<EventRecorder.EventRecorder.Service, never, Client.Client | Scope.Scope> =>
  EventRecorder.make({ reportingController, reportingInstance: identity })

/**
 * The reasons of the Events the replicator records on a source ConfigMap (UpperCamelCase, as Kubernetes
 * controllers name them).
 *
 * @since 0.2.0
 * @category constants
 */
export const eventReasons = {
  /** Normal: a copy was created in a target namespace. */
  replicated: "Replicated",
  /** Normal: a copy was updated to the source's data. */
  copyUpdated: "CopyUpdated",
  /** Normal: a copy was deleted (its namespace is no longer a target, or the source no longer labelled). */
  copyDeleted: "CopyDeleted",
  /** Warning: a target namespace has a ConfigMap of the source's name that is not its copy. */
  notOwned: "NotOwned",
  /** Warning: the source cannot be replicated (its `replicated-from` label value would be too long). */
  invalidSource: "InvalidSource"
} as const

/** An answer meaning "the cache was behind": the next reconcile, on a fresher cache, does it. */
const cacheWasBehind = (error: ApiError.ApiError | LabelSelectorParseError | TermError): boolean =>
  error._tag === "StatusError" &&
  (error.reason === "Conflict" || error.reason === "AlreadyExists" || error.reason === "NotFound")

/**
 * The replicator over the ConfigMap and Namespace informers and the `Client` of its context; it runs
 * until its scope closes.
 *
 * @since 0.2.0
 * @category controllers
 */
export const make = (options: {
  readonly concurrency?: number | undefined
  /** Reconcile only while this replica holds the election's Lease (followers keep their caches warm). */
  readonly leaderElection?: LeaderElection.LeaderElection.Service | undefined
  /** Reconcile only the sources this replica owns in the group's membership (every cache stays warm). */
  readonly sharding?: Sharding.Sharding.Service | undefined
  /** Record Events on the sources about what is done and refused (`eventReasons`). */
  readonly recorder?: EventRecorder.EventRecorder.Service | undefined
} = {}) =>
  Effect.gen(function*() {
    const client = yield* Client.Client
    const cms = yield* Informers.ConfigMaps
    const nss = yield* Informers.Namespaces
    const warned = new Set<string>()
    const recorder = options.recorder
    /** Records an Event on the ConfigMap `cm`, when there is a recorder. */
    const record = (cm: ConfigMap, event: EventRecorder.Event) =>
      recorder === undefined ? Effect.void : recorder.record(configMaps, cm, event)

    // ConfigMaps by name: a ConfigMap's event looks up the sources of its name without scanning the cache
    yield* cms.informer.addIndexers({ [byName]: (cm) => [cm.metadata?.name ?? ""] }).pipe(
      Effect.catchTag("IndexConflictError", () => Effect.void), // another replicator on this informer
      Effect.orDie
    )
    const sources = (name?: string) =>
      Effect.map(
        name === undefined ? cms.informer.indexer.list : Effect.orDie(cms.informer.indexer.byIndex(byName, name)),
        (found) => found.filter(isSource).map(keyOf)
      )

    const reconcile = (request: Controller.Request) =>
      Effect.gen(function*() {
        const namespace = request.namespace ?? ""
        const from = `${namespace}.${request.name}`
        // a label value has at most 63 characters: such a source cannot be labelled as the rules say
        if (from.length > maxLabelValue) {
          const source = yield* Effect.option(cms.lister.byNamespace(namespace).get(request.name))
          if (Option.isSome(source) && isSource(source.value) && !warned.has(request.key)) {
            warned.add(request.key)
            const why = `${copyLabel}=${from} would exceed the ${maxLabelValue} characters of a label value`
            yield* Effect.logWarning(`${request.key} cannot be replicated: ${why}`)
            yield* record(source.value, {
              type: "Warning",
              reason: eventReasons.invalidSource,
              action: "Replicate",
              note: `cannot be replicated: ${why}`
            })
          }
          return Controller.done
        }
        const current = yield* Effect.option(cms.lister.byNamespace(namespace).get(request.name))
        const source = Option.filter(current, isSource)
        const targets = Option.isNone(source)
          ? []
          : (yield* nss.lister.list()).filter(isTarget).map((ns) => ns.metadata!.name!).filter((t) => t !== namespace)

        // the copies the source should have
        for (const target of targets) {
          const existing = yield* Effect.option(cms.lister.byNamespace(target).get(request.name))
          const wanted = source.pipe(Option.getOrThrow)
          if (Option.isNone(existing)) {
            yield* client.create(configMaps, copyOf(wanted, target, from))
            yield* record(wanted, {
              type: "Normal",
              reason: eventReasons.replicated,
              action: "Create",
              note: `copied to namespace ${target}`
            })
          } else if (labelsOf(existing.value)[copyLabel] !== from) {
            const where = `${target}/${request.name}`
            if (!warned.has(where)) {
              warned.add(where)
              yield* Effect.logWarning(
                `${where} exists and is not a copy of ${namespace}/${request.name}: left as it is`
              )
            }
            // every time it is seen: the recorder makes repeats one Event with a series
            yield* record(wanted, {
              type: "Warning",
              reason: eventReasons.notOwned,
              action: "Replicate",
              note: `namespace ${target} has a ConfigMap ${request.name} that is not a copy of this one: left as it is`
            })
          } else if (!sameData(existing.value, wanted)) {
            const rv = existing.value.metadata?.resourceVersion
            yield* client.update(configMaps, copyOf(wanted, target, from, rv))
            yield* record(wanted, {
              type: "Normal",
              reason: eventReasons.copyUpdated,
              action: "Update",
              note: `updated the copy in namespace ${target}`
            })
          }
        }

        // and no others
        for (const copy of yield* cms.lister.list(`${copyLabel}=${from}`)) {
          const where = copy.metadata?.namespace ?? ""
          if (targets.includes(where) || sourceOfCopy(copy) !== request.key) continue
          // the copy as the cache saw it, and no later version: a ConfigMap changed since (someone took it
          // over by removing our label, say) is a Conflict, and the next reconcile sees it as it is
          const { resourceVersion, uid } = copy.metadata ?? {}
          yield* client.delete(configMaps, copy.metadata!.name!, {
            namespace: where,
            preconditions: {
              ...(uid === undefined ? {} : { uid }),
              ...(resourceVersion === undefined ? {} : { resourceVersion })
            }
          })
          // on the source, while there is one (no longer labelled, say); a deleted source has no Events
          if (Option.isSome(current) && sourceOfCopy(current.value) === undefined) {
            yield* record(current.value, {
              type: "Normal",
              reason: eventReasons.copyDeleted,
              action: "Delete",
              note: `deleted the copy in namespace ${where}`
            })
          }
        }
        return Controller.done
      }).pipe(Effect.catchIf(cacheWasBehind, () => Effect.succeed(Controller.requeue)))

    return yield* Controller.make({
      name: "replicate",
      for: cms,
      watches: [
        // a copy leads back to its source; a ConfigMap that is not ours, to the sources of its name
        {
          source: cms,
          map: (cm) => {
            // a copy's name may be wanted by another source too (it waited while this copy was there)
            const from = sourceOfCopy(cm)
            const named = sources(cm.metadata?.name ?? "")
            return from === undefined ? named : Effect.map(named, (keys) => [from, ...keys])
          }
        },
        // a namespace, to every source
        { source: nss, map: () => sources() }
      ],
      concurrency: options.concurrency ?? 4,
      ...(options.leaderElection === undefined ? {} : { leaderElection: options.leaderElection }),
      ...(options.sharding === undefined ? {} : { sharding: options.sharding }),
      reconcile
    })
  })

/**
 * Where the replicator runs: a kubeconfig (with a context), or an API server URL without credentials.
 *
 * @since 0.2.0
 * @category models
 */
export interface ConnectOptions {
  readonly kubeconfig?: string | undefined
  readonly context?: string | undefined
  readonly server?: string | undefined
  /** Put in the User-Agent of every request (`effect-informers-replicate/<version> (<identity>)`). */
  readonly identity: string
}

/**
 * The User-Agent of a replicator with `identity`.
 *
 * @since 0.2.0
 * @category constants
 */
export const userAgent = (identity: string): string => `effect-informers-replicate/0.2.0 (${identity})`

/**
 * What the replicator needs, against the cluster `options` name: the ConfigMap and Namespace informers and
 * a Client, sharing one connection pool.
 *
 * @since 0.2.0
 * @category layers
 */
export const layer = (options: ConnectOptions) => {
  const kubeConfig = options.server !== undefined
    ? Informers.kubeConfigFromOptions({ server: options.server })
    : options.kubeconfig !== undefined
    ? Informers.kubeConfigFromFile(options.kubeconfig, { context: options.context })
    : Informers.kubeConfigFromDefault({ context: options.context })
  const agent = userAgent(options.identity)
  const transport = ClusterHttpClient.layer.pipe(Layer.provideMerge(kubeConfig))
  const informers = Layer.mergeAll(Informers.configMaps(), Informers.namespaces()).pipe(
    Layer.provideMerge(Informers.factory()),
    Layer.provide(
      HttpListerWatcher.layerSource({
        userAgent: agent,
        watchInactivityTimeout: Informers.defaultWatchInactivityTimeout
      })
    )
  )
  return Layer.mergeAll(informers, Client.layer({ userAgent: agent })).pipe(Layer.provide(transport))
}

/**
 * The Lease the replicas of `replicate --leader-elect` elect over, in namespace `default` unless
 * `--lease-namespace` says otherwise.
 *
 * @since 0.2.0
 * @category constants
 */
export const leaseName = "effect-informers-replicate"

/**
 * Who a replica is and its Lease timings (client-go's when absent), for `--leader-elect` and `--sharded`.
 *
 * @since 0.2.0
 * @category models
 */
export interface CoordinationOptions {
  readonly identity: string
  readonly namespace?: string | undefined
  readonly leaseDuration?: Duration.Input | undefined
  readonly renewDeadline?: Duration.Input | undefined
  readonly retryPeriod?: Duration.Input | undefined
}

const timings = (options: CoordinationOptions) => ({
  ...(options.leaseDuration === undefined ? {} : { leaseDuration: options.leaseDuration }),
  ...(options.renewDeadline === undefined ? {} : { renewDeadline: options.renewDeadline }),
  ...(options.retryPeriod === undefined ? {} : { retryPeriod: options.retryPeriod })
})

/**
 * Leader election for the replicator over the Lease `leaseName` in `namespace`, with this replica's
 * identity; client-go's timings unless given. Its requests go through the library's coordination client
 * (a Client derived from the replicator's, with a rate limiter of its own): the reconciles' writes never
 * delay a renewal.
 *
 * @since 0.2.0
 * @category layers
 */
export const leaderElectionLayer = (options: CoordinationOptions) =>
  LeaderElection.layerClient({
    identity: options.identity,
    name: "replicate",
    namespace: options.namespace ?? "default",
    leaseName,
    releaseOnCancel: true,
    ...timings(options)
  })

/**
 * The shard group of `replicate --sharded`: each replica holds one membership Lease named after its
 * identity, labelled `effect-informers.io/shard-group=effect-informers-replicate`, in `namespace`
 * (`default` unless `--lease-namespace` says otherwise); sources are assigned to live members by
 * rendezvous hashing of their `namespace/name`. Renewals and lists go through the library's coordination
 * client, as for `leaderElectionLayer`.
 *
 * @since 0.2.0
 * @category layers
 */
export const shardingLayer = (options: CoordinationOptions) =>
  Sharding.layerClient({
    identity: options.identity,
    group: leaseName,
    namespace: options.namespace ?? "default",
    ...timings(options)
  })

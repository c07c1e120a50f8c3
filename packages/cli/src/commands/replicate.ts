/**
 * The `replicate` command: the example controller (`Replicate`, a ConfigMap replicator), with leader
 * election or sharding, its metrics, and Events on the sources it acts on (reporting controller
 * `effect-informers.io/replicate`, instance `--identity`); the controller and the metrics server are loaded
 * when the command runs.
 *
 * @since 0.2.0
 */
import type * as Client from "effect-informers/Client"
import * as Informers from "effect-informers/Layer"
import * as LeaderElection from "effect-informers/LeaderElection"
import * as Sharding from "effect-informers/Sharding"
import * as Command from "effect/cli/Command"
import * as Flag from "effect/cli/Flag"
import * as Console from "effect/Console"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import {
  boolean,
  CliFailure,
  connectionOptions,
  described,
  duration,
  fail,
  failureLine,
  integer,
  text,
  whenAbsent
} from "./shared.js"

const loadMetrics = Effect.promise(() => import("../Metrics.js"))
const loadReplicate = Effect.promise(() => import("../Replicate.js"))
/** `Metrics.defaultHost`, without loading the metrics server to print the help. */
const defaultMetricsHost = "127.0.0.1"

/**
 * The `replicate` command.
 *
 * @since 0.2.0
 * @category commands
 */
export const replicate = Command.make("replicate", {
  ...connectionOptions,
  identity: text("identity").pipe(
    Flag.withDescription(
      "this replica's name, put in the User-Agent of its requests and in its Leases (required)"
    )
  ),
  concurrency: integer("concurrency").pipe(
    Flag.withDefault(4),
    described("reconciles at once", "4")
  ),
  leaderElect: boolean("leader-elect").pipe(
    described(
      "reconcile only while holding the Lease effect-informers-replicate (followers stay warm)",
      "off, every replica reconciles"
    )
  ),
  sharded: boolean("sharded").pipe(
    described(
      "split the sources across replicas by membership Leases named after --identity",
      "off, every replica reconciles every source"
    )
  ),
  leaseNamespace: text("lease-namespace").pipe(
    Flag.withDefault("default"),
    described("the namespace of the election's and the shards' Leases", "default")
  ),
  leaseDuration: duration("lease-duration").pipe(
    Flag.optional,
    whenAbsent("how long a Lease lasts without renewal", "15s, client-go's")
  ),
  renewDeadline: duration("renew-deadline").pipe(
    Flag.optional,
    whenAbsent("how long a leader retries renewing before it steps down", "10s, client-go's")
  ),
  retryPeriod: duration("retry-period").pipe(
    Flag.optional,
    whenAbsent("the wait between attempts to acquire or renew", "2s, client-go's")
  ),
  metricsPort: integer("metrics-port").pipe(
    Flag.optional,
    whenAbsent(
      "serve the metrics in the Prometheus text format at http://HOST:PORT/metrics (0: any free port)",
      "no metrics server"
    )
  ),
  metricsHost: text("metrics-host").pipe(
    Flag.withDefault(defaultMetricsHost),
    described("the address the metrics are served on (0.0.0.0: every interface)", defaultMetricsHost)
  )
}, (options) =>
  Effect.gen(function*() {
    if (Option.isSome(options.server) && Option.isSome(options.kubeconfig)) {
      return yield* fail("give --server or --kubeconfig, not both")
    }
    if (Option.isSome(options.metricsPort)) {
      // first: a port in use ends the command before it connects to anything
      const Metrics = yield* loadMetrics
      const metrics = yield* Metrics.serve({
        port: options.metricsPort.value,
        host: options.metricsHost,
        serviceName: "effect-informers-replicate"
      }).pipe(Effect.mapError((e) => new CliFailure(e.message)))
      yield* Console.error(`replicate: ${options.identity}: metrics at ${metrics.url}`)
    }
    const Replicate = yield* loadReplicate
    const layer = Replicate.layer({
      identity: options.identity,
      server: Option.getOrUndefined(options.server),
      kubeconfig: Option.getOrUndefined(options.kubeconfig),
      context: Option.getOrUndefined(options.context)
    })
    const context = yield* Layer.build(layer).pipe(Effect.mapError((e) => new CliFailure(failureLine(e))))
    if (options.leaderElect && options.sharded) return yield* fail("give --leader-elect or --sharded, not both")
    if (options.leaderElect || options.sharded) {
      // campaign once the caches are synced (as controller-runtime's manager does): a new leader can
      // reconcile at once
      yield* Effect.all([
        Context.get(context, Informers.ConfigMaps).informer.synced,
        Context.get(context, Informers.Namespaces).informer.synced
      ]).pipe(Effect.mapError((e) => new CliFailure(failureLine(e))))
    }
    const coordination = {
      identity: options.identity,
      namespace: options.leaseNamespace,
      leaseDuration: Option.getOrUndefined(options.leaseDuration),
      renewDeadline: Option.getOrUndefined(options.renewDeadline),
      retryPeriod: Option.getOrUndefined(options.retryPeriod)
    }
    /** Builds `layer` over the informers' context and reports its state changes, one line each, on stderr. */
    const coordinate = <I, S>(
      layer: Layer.Layer<I, unknown, Client.Client>,
      tag: Context.Key<I, S>,
      changes: (service: S) => Stream.Stream<string>
    ) =>
      Effect.gen(function*() {
        const built = yield* Layer.build(layer).pipe(
          Effect.provide(context),
          Effect.mapError((e) => new CliFailure(failureLine(e)))
        )
        const service = Context.get(built, tag)
        yield* changes(service).pipe(
          Stream.changesWith((a, b) => a === b),
          Stream.runForEach((line) => Console.error(`replicate: ${options.identity}: ${line}`)),
          Effect.forkScoped
        )
        return service
      })
    const election = options.leaderElect
      ? yield* coordinate(
        Replicate.leaderElectionLayer(coordination),
        LeaderElection.LeaderElection,
        (service) => Stream.map(service.changes, (state) => state._tag)
      )
      : undefined
    const sharding = options.sharded
      ? yield* coordinate(
        Replicate.shardingLayer(coordination),
        Sharding.Sharding,
        (service) =>
          Stream.map(
            service.changes,
            (change) => `${change.current.status}, members ${change.current.members.join(",")}`
          )
      )
      : undefined
    // Events about what it does, written in the background (a full buffer drops them, never blocks)
    const recorder = yield* Replicate.eventRecorder(options.identity).pipe(Effect.provide(context))
    yield* Replicate.make({ concurrency: options.concurrency, leaderElection: election, sharding, recorder }).pipe(
      Effect.provide(context),
      Effect.mapError((e) => new CliFailure(failureLine(e)))
    )
    yield* Console.error(`replicate: ${options.identity}: running`)
    return yield* Effect.never
  }).pipe(Effect.scoped)).pipe(
    Command.withDescription(
      "copy ConfigMaps labelled replicate=true into namespaces labelled replicate-into=true, until interrupted"
    )
  )

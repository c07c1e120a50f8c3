/**
 * Lease locks: the record of a Lease read and written with optimistic concurrency, over the `Client`
 * (`coordination.k8s.io/v1` Leases) or in memory (a test double with partitions, latency, scripted errors
 * and a log of operations). Their types are declared in `LeaderElection`, which re-exports the locks.
 *
 * @internal
 */
import * as Clock from "effect/Clock"
import * as Data from "effect/Data"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as PubSub from "effect/PubSub"
import * as Result from "effect/Result"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import type { ApiError } from "../../ApiError.js"
import { Client } from "../../Client.js"
import type {
  ClientLockOptions,
  LeaderElectionRecord,
  LeaseChange,
  LeaseEntry,
  LeaseLock,
  LeaseSpec,
  LockErrorReason,
  MemoryLeases,
  MemoryLockOptions,
  Operation,
  PartitionMode,
  Verb,
  VersionedRecord
} from "../../LeaderElection.js"
import * as Resource from "../../Resource.js"
import type { TermError } from "../../Term.js"
import { recordToSpec, versionedFromSpec } from "./leaderElectionPolicy.js"

// -------------------------------------------------------------------------------------------------
// the interface
// -------------------------------------------------------------------------------------------------

/** A lock operation failed; `LeaderElection` re-exports it. @internal */
export class LockError extends Data.TaggedError("LockError")<{
  readonly reason: LockErrorReason
  readonly message: string
  readonly cause?: unknown
}> {}

/** The labels of a Lease. @internal */
export type Labels = { readonly [key: string]: string }

const matches = (labels: Labels, selector: Labels): boolean =>
  Object.entries(selector).every(([key, value]) => labels[key] === value)

// -------------------------------------------------------------------------------------------------
// over the Client
// -------------------------------------------------------------------------------------------------

const lockError = (error: ApiError | TermError, what: string): LockError => {
  if (error._tag === "TermError") {
    return new LockError({ reason: "Failed", message: `${what}: ${error.message}`, cause: error })
  }
  const reason: LockErrorReason = error._tag === "StatusError" &&
      (error.reason === "NotFound" || error.reason === "AlreadyExists" || error.reason === "Conflict")
    ? error.reason
    : "Failed"
  return new LockError({ reason, message: `${what}: ${error._tag} (${error.reason}): ${error.message}`, cause: error })
}

const versioned = (lease: Resource.Lease): VersionedRecord =>
  versionedFromSpec(lease.spec, lease.metadata?.resourceVersion ?? "")

/** @internal */
export const clientLock = (options: ClientLockOptions): Effect.Effect<LeaseLock, never, Client> =>
  Effect.map(Client, (client) => makeClientLock(client, options))

/** @internal */
export const makeClientLock = (client: Client.Service, options: ClientLockOptions): LeaseLock => {
  const { name, namespace } = options
  const labels = options.labels ?? {}
  const describe = `${namespace}/${name}`
  // client-go's lock keeps the Lease it last read or wrote: an update replaces the spec of that object
  // (its other metadata kept) and merges the lock's labels into its labels.
  let cached: Resource.Lease | undefined
  const keep = (lease: Resource.Lease) => {
    cached = lease
    return versioned(lease)
  }
  return {
    describe,
    get: client.get(Resource.leases, name, { namespace }).pipe(
      Effect.map((lease) => Option.some(keep(lease))),
      Effect.catch((error) =>
        error._tag === "StatusError" && error.reason === "NotFound"
          ? Effect.succeed(Option.none())
          : Effect.fail(lockError(error, `get lease ${describe}`))
      )
    ),
    create: (record) =>
      client.create(Resource.leases, {
        apiVersion: "coordination.k8s.io/v1",
        kind: "Lease",
        metadata: { name, namespace, ...(Object.keys(labels).length > 0 ? { labels } : {}) },
        spec: recordToSpec(record)
      }).pipe(
        Effect.map(keep),
        Effect.mapError((error) => lockError(error, `create lease ${describe}`))
      ),
    update: (record, resourceVersion) =>
      Effect.suspend(() => {
        const base: Resource.Lease = cached !== undefined && cached.metadata?.resourceVersion === resourceVersion
          ? cached
          : { apiVersion: "coordination.k8s.io/v1", kind: "Lease", metadata: { name, namespace } }
        const merged = { ...base.metadata?.labels, ...labels }
        return client.update(Resource.leases, {
          ...base,
          metadata: {
            ...base.metadata,
            name,
            namespace,
            resourceVersion,
            ...(Object.keys(merged).length > 0 ? { labels: merged } : {})
          },
          spec: recordToSpec(record)
        })
      }).pipe(
        Effect.map(keep),
        Effect.mapError((error) => lockError(error, `update lease ${describe}`))
      ),
    watch: (resourceVersion) =>
      client.watch(Resource.leases, {
        namespace,
        fieldSelector: `metadata.name=${name}`,
        resourceVersion,
        allowWatchBookmarks: true
      }).pipe(
        Stream.filterMap((event): Result.Result<LeaseChange, void> =>
          event.type === "BOOKMARK"
            ? Result.failVoid
            : event.type === "DELETED"
            ? Result.succeed(Option.none())
            : Result.succeed(Option.some(versioned(event.object)))
        ),
        Stream.mapError((error) => lockError(error, `watch lease ${describe}`))
      )
  }
}

/** Every Lease of `namespace` whose labels include `labels`, over the Client. @internal */
export const clientList = (
  client: Client.Service,
  namespace: string,
  labels: Labels
): Effect.Effect<ReadonlyArray<LeaseEntry>, LockError> => {
  const labelSelector = Object.entries(labels).map(([key, value]) => `${key}=${value}`).join(",")
  return client.listAll(Resource.leases, { namespace, labelSelector }).pipe(
    Effect.map((page) =>
      page.items.map((lease): LeaseEntry => ({
        name: lease.metadata?.name ?? "",
        labels: lease.metadata?.labels ?? {},
        ...versioned(lease)
      }))
    ),
    Effect.mapError((error) => lockError(error, `list leases ${namespace} ${labelSelector}`))
  )
}

// -------------------------------------------------------------------------------------------------
// in memory
// -------------------------------------------------------------------------------------------------

interface Faults {
  partition: PartitionMode | undefined
  latency: number
  scripted: Array<{ verb: Verb; reason: LockErrorReason; remaining: number }>
}

/** @internal */
export const makeMemoryLeases: Effect.Effect<MemoryLeases, never, Scope.Scope> = Effect.gen(function*() {
  const scope = yield* Effect.scope
  const entries = new Map<string, LeaseEntry>()
  const faults = new Map<string, Faults>()
  const operations: Array<Operation> = []
  // every change of the store, for the watches
  const changes = yield* PubSub.unbounded<{ readonly name: string; readonly change: LeaseChange }>()
  let resourceVersion = 0
  const faultsOf = (client: string): Faults => {
    let f = faults.get(client)
    if (f === undefined) {
      f = { partition: undefined, latency: 0, scripted: [] }
      faults.set(client, f)
    }
    return f
  }
  const store = (name: string, record: LeaderElectionRecord, labels: Labels): LeaseEntry => {
    resourceVersion += 1
    const entry: LeaseEntry = { name, record, labels, resourceVersion: String(resourceVersion) }
    entries.set(name, entry)
    PubSub.publishUnsafe(changes, { name, change: Option.some(toVersioned(entry)) })
    return entry
  }
  const error = (reason: LockErrorReason, message: string) => new LockError({ reason, message })
  // the record as a reader sees it: a spec written by a test may be anything (`specProblems`)
  const toVersioned = (entry: LeaseEntry): VersionedRecord =>
    versionedFromSpec(entry.record as LeaseSpec, entry.resourceVersion)

  /** One request: faults first, then `apply` on the store (after the client's latency, even if it gave up). */
  const request = <A>(
    client: string,
    verb: Verb,
    name: string,
    apply: () => Result.Result<A, LockError>
  ): Effect.Effect<A, LockError> =>
    Effect.suspend(() => {
      const f = faultsOf(client)
      const log = (outcome: Operation["outcome"]) =>
        Effect.map(Clock.currentTimeMillis, (at) => {
          operations.push({ at, client, verb, name, outcome })
        })
      if (f.partition === "fail") {
        return Effect.andThen(log("Failed"), Effect.fail(error("Failed", `${client} is partitioned`)))
      }
      if (f.partition === "hang") return Effect.never
      const lose = f.partition === "drop-responses"
      const index = f.scripted.findIndex((s) => s.verb === verb)
      if (index >= 0) {
        const scripted = f.scripted[index]
        scripted.remaining -= 1
        if (scripted.remaining <= 0) f.scripted.splice(index, 1)
        return Effect.andThen(
          log(scripted.reason),
          Effect.fail(error(scripted.reason, `${verb} ${name}: scripted ${scripted.reason}`))
        )
      }
      const run = Effect.suspend(() => {
        const result = apply()
        return Effect.andThen(
          log(lose && Result.isSuccess(result) ? "lost" : Result.isSuccess(result) ? "ok" : result.failure.reason),
          lose ? Effect.fail(error("Failed", `${client}: the answer was lost`)) : Effect.fromResult(result)
        )
      })
      if (f.latency <= 0) return run
      // the server applies the request after the latency whether the client still waits or not: the
      // request is a fiber of the store's scope, the client only waits for its answer
      return Effect.gen(function*() {
        const done = yield* Deferred.make<A, LockError>()
        yield* Effect.sleep(f.latency).pipe(
          Effect.andThen(Effect.exit(run)),
          Effect.flatMap((exit) => Deferred.done(done, exit)),
          Effect.forkIn(scope),
          Effect.interruptible
        )
        return yield* Deferred.await(done)
      })
    })

  const lock = (name: string, options: MemoryLockOptions = {}): LeaseLock => {
    const client = options.client ?? "default"
    const labels = options.labels ?? {}
    return {
      describe: `memory/${name}`,
      get: request(client, "get", name, () => {
        const entry = entries.get(name)
        return Result.succeed(entry === undefined ? Option.none() : Option.some(toVersioned(entry)))
      }),
      create: (record) =>
        request(client, "create", name, () =>
          entries.has(name)
            ? Result.fail(error("AlreadyExists", `leases "${name}" already exists`))
            : Result.succeed(toVersioned(store(name, record, labels)))),
      update: (record, expected) =>
        request(client, "update", name, () => {
          const entry = entries.get(name)
          if (entry === undefined) return Result.fail(error("NotFound", `leases "${name}" not found`))
          if (entry.resourceVersion !== expected) {
            return Result.fail(error("Conflict", `leases "${name}": the object has been modified`))
          }
          return Result.succeed(toVersioned(store(name, record, { ...entry.labels, ...labels })))
        }),
      // changes after `from`: the Lease as it is now first when it changed since; nothing reaches a
      // partitioned client (a watch of a client partitioned with `fail` fails, with `hang` never answers)
      watch: (from) =>
        Stream.unwrap(Effect.gen(function*() {
          const f = faultsOf(client)
          if (f.partition === "fail") return Stream.fail(error("Failed", `${client} is partitioned`))
          if (f.partition === "hang") return Stream.never
          const subscription = yield* PubSub.subscribe(changes)
          const entry = entries.get(name)
          const since: ReadonlyArray<LeaseChange> = entry === undefined
            ? [Option.none()]
            : entry.resourceVersion === from
            ? []
            : [Option.some(toVersioned(entry))]
          return Stream.concat(
            Stream.fromIterable(since),
            Stream.fromSubscription(subscription).pipe(
              Stream.filter((c) => c.name === name && faultsOf(client).partition === undefined),
              Stream.map((c) => c.change)
            )
          )
        }))
    }
  }

  return {
    lock,
    list: (selector = {}, options = {}) =>
      request(
        options.client ?? "default",
        "list",
        "*",
        () =>
          Result.succeed(
            [...entries.values()].filter((entry) => matches(entry.labels, selector)).sort((a, b) =>
              a.name < b.name ? -1 : a.name > b.name ? 1 : 0
            ).map((entry): LeaseEntry => ({ name: entry.name, labels: entry.labels, ...toVersioned(entry) }))
          )
      ),
    read: (name) => Effect.sync(() => Option.fromUndefinedOr(entries.get(name))),
    write: (name, record, labels) => Effect.sync(() => store(name, record, labels ?? entries.get(name)?.labels ?? {})),
    remove: (name) =>
      Effect.sync(() => {
        if (entries.delete(name)) PubSub.publishUnsafe(changes, { name, change: Option.none() })
      }),
    partition: (client, mode = "fail") =>
      Effect.sync(() => {
        faultsOf(client).partition = mode
      }),
    heal: (client) =>
      Effect.sync(() => {
        faultsOf(client).partition = undefined
      }),
    setLatency: (client, latency) =>
      Effect.sync(() => {
        faultsOf(client).latency = Duration.toMillis(Duration.fromInputUnsafe(latency))
      }),
    failNext: (client, verb, reason, times = 1) =>
      Effect.sync(() => {
        faultsOf(client).scripted.push({ verb, reason, remaining: times })
      }),
    operations: Effect.sync(() => operations.slice())
  }
})

/**
 * An embedded Kubernetes API server for demos, tests, benchmarks and fault campaigns: a real HTTP server
 * on 127.0.0.1 that keeps any resource in memory and speaks enough of the API for informers,
 * `@kubernetes/client-node` and kubectl.
 *
 * - One global, strictly increasing resourceVersion; a bounded history of events (the watch cache) from
 *   which older states are reconstructed, so `resourceVersionMatch=Exact` lists and every page of a
 *   paginated list are consistent snapshots.
 * - LIST with label/field selectors, `limit`/`continue`, the resourceVersion semantics of the real server
 *   and its errors (`410 Expired`, `504 Too large resource version`, `422 Invalid` list options).
 * - GET/POST/PUT/PATCH/DELETE with generateName, optimistic concurrency and `Status` errors, and the write
 *   rules of kube-apiserver: the `status` subresource (built-ins that have one, custom resources unless
 *   `ServedResource.subresources.status` is `false`), `metadata.generation`, no-op writes that write
 *   nothing, finalizers and deletion timestamps, propagation policies (`Background`, `Foreground`,
 *   `Orphan`). Leases (`coordination.k8s.io/v1`) are decoded and validated as kube-apiserver does (400
 *   for a field of the wrong type on create and update, 422 on a patch; 422 Invalid with field causes for
 *   `spec.leaseDurationSeconds` not above 0 or a negative `spec.leaseTransitions`).
 * - Namespaces as on a real cluster: `default`, `kube-system`, `kube-public` and `kube-node-lease` exist
 *   from the start (and `Options.namespaces`); creating an object (POST, server-side apply, the
 *   programmatic `objects.create`) in a namespace that does not exist is `404 NotFound` (`namespaces "x"
 *   not found`), in one being deleted `403 Forbidden`, as kube-apiserver's NamespaceLifecycle admission
 *   answers (`bench.load` writes to storage directly, without it).
 * - kube-controller-manager's garbage collector (dependents by `ownerReferences`) and namespace controller
 *   (`Options.garbageCollection`): a deleted namespace is marked Terminating, emptied of every namespaced
 *   resource (Events and Leases included), then removed.
 * - Events served by both APIs, `v1` and `events.k8s.io/v1`, as one set of objects (as kube-apiserver
 *   stores them): an Event written through one is read through the other, its fields mapped
 *   (`regarding`/`involvedObject`, `note`/`message`, `reportingController`/`reportingComponent`,
 *   `deprecatedSource`/`source`, `deprecated*Timestamp`/`*Timestamp`, `deprecatedCount`/`count`), with
 *   their field selectors (`involvedObject.*`, `regarding.*`, `reason`, `type`...) for `kubectl describe`.
 * - An audit log of the writes (`Options.auditLog`).
 * - Server-side apply (`PATCH` with `application/apply-patch+yaml`, as `kubectl apply --server-side`) and
 *   `metadata.managedFields` kept by every HTTP write, with kube-apiserver's field ownership rules.
 * - WATCH from a resourceVersion, with synthetic ADDED events, `sendInitialEvents` and its end bookmark,
 *   periodic bookmarks, `timeoutSeconds` and the watch cache's selector semantics. Each event is encoded
 *   once and the bytes are shared by every watcher; pending events are written as one chunk.
 * - Metadata-only answers, as client-go's metadata client asks for them (`Accept:
 *   application/json;as=PartialObjectMetadata[List];g=meta.k8s.io;v=v1`): GET, LIST (with the list's
 *   metadata), WATCH and watch-list events and bookmarks of `PartialObjectMetadata` objects.
 * - Discovery, `/version` and minimal OpenAPI documents so that kubectl (1.20 to 1.32) works unchanged.
 * - kubectl's imperative commands (`create namespace`, `create configmap`, `create secret generic`,
 *   `create serviceaccount`, `create deployment`, `create service`, `expose`, `create job`): their
 *   Kubernetes protobuf bodies are decoded to JSON; a protobuf body of another kind, or with a field the
 *   server does not describe, is a 415 UnsupportedMediaType naming it. Responses are always JSON.
 * - `meta.k8s.io` Tables for `kubectl get` (lists, single gets and `get -w` watches): the real columns of
 *   pods (READY, STATUS, RESTARTS, AGE; IP, NODE... at `-o wide`), nodes, namespaces, deployments, replica
 *   sets, services, config maps, secrets, service accounts, leases and events (LAST SEEN, TYPE, REASON,
 *   OBJECT, MESSAGE); NAME and AGE for the others.
 * - Fault injection (`Fault`, `parseFault`) and counters (`stats`).
 *
 * The running server's service has three faces besides its address and counters: `server.objects` (create,
 * get, list, update, patch, delete, snapshot: a client's calls without HTTP), `server.faults` (inject, clear,
 * compact) and `server.bench` (load, modifyMany, prepareModifyMany: bulk writes).
 *
 * @since 0.1.0
 */
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import type { StatusError } from "effect-informers/ApiError"
import { fromStatus } from "effect-informers/ApiError"
import type { KubeObject } from "effect-informers/KubeObject"
import type { ListOptions as ListerWatcherListOptions, ListPage } from "effect-informers/ListerWatcher"
import * as Resource from "effect-informers/Resource"
import type { Status } from "effect-informers/Wire"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import { ServeError } from "effect/http/HttpServerError"
import * as Layer from "effect/Layer"
import * as Result from "effect/Result"
import * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import * as Scope from "effect/Scope"
import * as Http from "node:http"
import type { Socket } from "node:net"
import type { AuditEvent as InternalAuditEvent, AuditSink } from "./internal/apiServerAudit.js"
import { fileSink } from "./internal/apiServerAudit.js"
import { Controllers } from "./internal/apiServerGc.js"
import type { ArmedFault, ServerState } from "./internal/apiServerHttp.js"
import {
  applyPatch,
  applyStreamFault,
  FaultState,
  list as listObjects,
  makeApp,
  makeDiscovery,
  patchObject,
  writeContext
} from "./internal/apiServerHttp.js"
import type { Entry, PropagationPolicy as InternalPropagationPolicy, ResourceStore } from "./internal/apiServerStore.js"
import {
  badRequest,
  maxJsonDepth as storeMaxJsonDepth,
  notFound,
  objectKey,
  resourceNotFound,
  Store
} from "./internal/apiServerStore.js"
import type { JsonObject } from "./internal/json.js"

// -------------------------------------------------------------------------------------------------
// faults
// -------------------------------------------------------------------------------------------------

const FaultTarget = Schema.Literals(["any", "list", "watch"])

/**
 * A fault to inject, as a serialisable value (see `parseFault` for the string form).
 *
 * - `DropWatches`: destroy the socket of every open watch, mid-stream.
 * - `CloseWatches`: end every open watch cleanly (as a server-side timeout does).
 * - `WatchGone`: the next `count` (1) watch requests get 410 Expired, as an `ERROR` event (`mode: "event"`,
 *   the watch cache's way) or as the HTTP status (`mode: "http"`).
 * - `ContinueGone`: the next `count` (1) list requests that carry a `continue` token get 410 Expired, as
 *   when the token's snapshot has been compacted away (with an inconsistent continue token, as the API
 *   server sends).
 * - `ServerError`: the next `count` (1) requests (`on`: `"any"` resource request, `"list"` or `"watch"`)
 *   get HTTP `status` (500).
 * - `TooManyRequests`: the next `count` (1) requests get 429 with `Retry-After: retryAfterSeconds` (1).
 * - `StallWatches`: every open watch goes silent (the connection stays open, no byte is sent, not even at
 *   its timeout), and so do the next `count` (0) watches opened.
 * - `Delay`: the next `count` (1) requests are answered `millis` later.
 * - `MalformedLine`, `PartialLine` (then the watch ends), `MissingMetadata` (an ADDED event whose object
 *   has no metadata): written on every open watch, or on the next watch opened when none is open.
 * - `Restart`: every connection is dropped; with `rejectMillis` the server also stops listening for that
 *   long (connections are refused), then listens again on the same port. The data is kept.
 *
 * @since 0.1.0
 * @category faults
 */
export const Fault = Schema.Union([
  Schema.TaggedStruct("DropWatches", {}),
  Schema.TaggedStruct("CloseWatches", {}),
  Schema.TaggedStruct("WatchGone", {
    count: Schema.optional(Schema.Int),
    mode: Schema.optional(Schema.Literals(["event", "http"]))
  }),
  Schema.TaggedStruct("ContinueGone", {
    count: Schema.optional(Schema.Int)
  }),
  Schema.TaggedStruct("ServerError", {
    count: Schema.optional(Schema.Int),
    status: Schema.optional(Schema.Int),
    on: Schema.optional(FaultTarget)
  }),
  Schema.TaggedStruct("TooManyRequests", {
    count: Schema.optional(Schema.Int),
    retryAfterSeconds: Schema.optional(Schema.Int),
    on: Schema.optional(FaultTarget)
  }),
  Schema.TaggedStruct("StallWatches", {
    count: Schema.optional(Schema.Int)
  }),
  Schema.TaggedStruct("Delay", {
    millis: Schema.Int,
    count: Schema.optional(Schema.Int),
    on: Schema.optional(FaultTarget)
  }),
  Schema.TaggedStruct("MalformedLine", {}),
  Schema.TaggedStruct("PartialLine", {}),
  Schema.TaggedStruct("MissingMetadata", {}),
  Schema.TaggedStruct("Restart", {
    rejectMillis: Schema.optional(Schema.Int)
  })
])

/**
 * @since 0.1.0
 * @category faults
 */
export type Fault = typeof Fault.Type

/**
 * The class of a fault.
 *
 * @since 0.1.0
 * @category faults
 */
export type FaultTag = Fault["_tag"]

/**
 * Every fault class.
 *
 * @since 0.1.0
 * @category faults
 */
export const faultTags: ReadonlyArray<FaultTag> = [
  "DropWatches",
  "CloseWatches",
  "WatchGone",
  "ContinueGone",
  "ServerError",
  "TooManyRequests",
  "StallWatches",
  "Delay",
  "MalformedLine",
  "PartialLine",
  "MissingMetadata",
  "Restart"
]

/**
 * A fault string could not be parsed.
 *
 * @since 0.1.0
 * @category faults
 */
export class FaultParseError extends Data.TaggedError("FaultParseError")<{
  readonly input: string
  readonly message: string
}> {}

const faultNames: { readonly [name: string]: FaultTag } = {
  "drop-watches": "DropWatches",
  "close-watches": "CloseWatches",
  "watch-gone": "WatchGone",
  "gone": "WatchGone",
  "continue-gone": "ContinueGone",
  "error": "ServerError",
  "server-error": "ServerError",
  "throttle": "TooManyRequests",
  "too-many-requests": "TooManyRequests",
  "stall": "StallWatches",
  "stall-watches": "StallWatches",
  "delay": "Delay",
  "malformed-line": "MalformedLine",
  "partial-line": "PartialLine",
  "no-metadata": "MissingMetadata",
  "missing-metadata": "MissingMetadata",
  "restart": "Restart"
}

const canonicalNames: { readonly [tag in FaultTag]: string } = {
  DropWatches: "drop-watches",
  CloseWatches: "close-watches",
  WatchGone: "watch-gone",
  ContinueGone: "continue-gone",
  ServerError: "error",
  TooManyRequests: "throttle",
  StallWatches: "stall",
  Delay: "delay",
  MalformedLine: "malformed-line",
  PartialLine: "partial-line",
  MissingMetadata: "no-metadata",
  Restart: "restart"
}

/** Parameter name in the string form -> field of the fault, per fault class. */
const faultParams: { readonly [tag in FaultTag]: { readonly [param: string]: string } } = {
  DropWatches: {},
  CloseWatches: {},
  WatchGone: { count: "count", mode: "mode" },
  ContinueGone: { count: "count" },
  ServerError: { count: "count", status: "status", on: "on" },
  TooManyRequests: { count: "count", "retry-after": "retryAfterSeconds", on: "on" },
  StallWatches: { count: "count" },
  Delay: { ms: "millis", count: "count", on: "on" },
  MalformedLine: {},
  PartialLine: {},
  MissingMetadata: {},
  Restart: { "reject-ms": "rejectMillis" }
}

const decodeFault = Schema.decodeUnknownResult(Fault)

/**
 * Parses the string form of a fault: `NAME[:PARAM=VALUE[,PARAM=VALUE...]]`.
 *
 * | string | fault |
 * |---|---|
 * | `drop-watches` | `DropWatches` |
 * | `close-watches` | `CloseWatches` |
 * | `watch-gone[:count=N][,mode=event\|http]` (alias `gone`) | `WatchGone` |
 * | `error[:count=N][,status=CODE][,on=any\|list\|watch]` (alias `server-error`) | `ServerError` |
 * | `throttle[:count=N][,retry-after=SECONDS][,on=...]` (alias `too-many-requests`) | `TooManyRequests` |
 * | `stall[:count=N]` (alias `stall-watches`) | `StallWatches` |
 * | `delay:ms=MILLIS[,count=N][,on=...]` | `Delay` |
 * | `malformed-line`, `partial-line`, `no-metadata` (alias `missing-metadata`) | stream faults |
 * | `restart[:reject-ms=MILLIS]` | `Restart` |
 *
 * @example
 * ```ts
 * import { Result } from "effect"
 * import { ApiServer } from "@effect-informers/testkit"
 *
 * const fault = ApiServer.parseFault("error:count=3,status=503,on=list")
 * console.log(Result.getOrThrow(fault)) // { _tag: "ServerError", count: 3, status: 503, on: "list" }
 * ```
 *
 * @since 0.1.0
 * @category faults
 */
export const parseFault = (input: string): Result.Result<Fault, FaultParseError> => {
  const text = input.trim()
  const colon = text.indexOf(":")
  const name = (colon < 0 ? text : text.slice(0, colon)).trim().toLowerCase()
  const tag = faultNames[name]
  if (tag === undefined) {
    return Result.fail(
      new FaultParseError({
        input,
        message: `unknown fault "${name}"; known faults: ${Object.values(canonicalNames).join(", ")}`
      })
    )
  }
  const fault: Record<string, unknown> = { _tag: tag }
  const rest = colon < 0 ? "" : text.slice(colon + 1)
  for (const part of rest.split(",")) {
    if (part.trim() === "") continue
    const eq = part.indexOf("=")
    const key = (eq < 0 ? part : part.slice(0, eq)).trim().toLowerCase()
    const value = eq < 0 ? "" : part.slice(eq + 1).trim()
    const field = faultParams[tag][key]
    if (field === undefined) {
      const known = Object.keys(faultParams[tag])
      return Result.fail(
        new FaultParseError({
          input,
          message: `fault "${canonicalNames[tag]}" has no parameter "${key}"${
            known.length === 0 ? "" : `; parameters: ${known.join(", ")}`
          }`
        })
      )
    }
    if (field === "mode" || field === "on") fault[field] = value
    else if (/^\d+$/.test(value)) fault[field] = Number(value)
    else {return Result.fail(
        new FaultParseError({ input, message: `${key} must be a non-negative integer: "${value}"` })
      )}
  }
  return Result.mapError(
    decodeFault(fault),
    (error) => new FaultParseError({ input, message: `invalid fault "${input}": ${error.message}` })
  )
}

/**
 * The string form of a fault (`parseFault(formatFault(f))` is `f`).
 *
 * @since 0.1.0
 * @category faults
 */
export const formatFault = (fault: Fault): string => {
  const params: Array<string> = []
  for (const [param, field] of Object.entries(faultParams[fault._tag])) {
    const value = (fault as Record<string, unknown>)[field]
    if (value !== undefined) params.push(`${param}=${String(value)}`)
  }
  return canonicalNames[fault._tag] + (params.length === 0 ? "" : `:${params.join(",")}`)
}

/**
 * The audit log file (`Options.auditLog`) could not be opened.
 *
 * @since 0.2.0
 * @category errors
 */
export class AuditLogError extends Data.TaggedError("AuditLogError")<{
  readonly path: string
  readonly message: string
}> {}

// -------------------------------------------------------------------------------------------------
// models
// -------------------------------------------------------------------------------------------------

/**
 * The default request body limit, as kube-apiserver's: 3 MiB (3,145,728 bytes). See
 * `Options.maxRequestBodyBytes`.
 *
 * @since 0.1.0
 * @category constants
 */
export const defaultMaxRequestBodyBytes: number = 3 * 1024 * 1024

/**
 * The deepest nesting of objects and arrays the server accepts, 1,000 levels (the top-level object is at
 * depth 1): a request body nested deeper gets `400 BadRequest` (checked on the text, before it is parsed),
 * and a patch whose result would be deeper gets `422 Invalid`. Real objects stay far below it (a pod with
 * its `managedFields` is about 10 levels deep); kube-apiserver's JSON decoder stops at 10,000.
 *
 * @since 0.1.0
 * @category constants
 */
export const maxJsonDepth: number = storeMaxJsonDepth

/**
 * The namespaces of a fresh cluster, which the server creates at start: `default`, `kube-system`,
 * `kube-public` and `kube-node-lease` (the first three may not be deleted, as in kube-apiserver).
 *
 * @since 0.2.0
 * @category constants
 */
export const initialNamespaces: ReadonlyArray<string> = ["default", "kube-system", "kube-public", "kube-node-lease"]

/** kube-apiserver's idle timeout for kept-alive connections. */
const defaultKeepAliveTimeout = Duration.seconds(90)

/**
 * Construction options.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /** `0` (the default) picks a free port; `url` tells which. */
  readonly port?: number | undefined
  /** Defaults to `127.0.0.1`. */
  readonly host?: string | undefined
  /**
   * Served in addition to `Resource.catalog` (CRDs, other versions): a resource, or a `ServedResource`
   * naming its subresources. A custom resource has a status subresource unless
   * `subresources: { status: false }`.
   */
  readonly resources?: ReadonlyArray<Resource.Resource | ServedResource> | undefined
  /** Events kept for watch resumption, Exact lists and continuation pages. Defaults to 10,000. */
  readonly historySize?: number | undefined
  /** Period of BOOKMARK events for watches with `allowWatchBookmarks`. Defaults to 10 seconds. */
  readonly bookmarkInterval?: Duration.Input | undefined
  /** Upper bound (and default) of a watch's `timeoutSeconds`. Defaults to 1800. */
  readonly maxTimeoutSeconds?: number | undefined
  /** A watcher this many bytes behind is disconnected. Defaults to 256 MiB. */
  readonly watchBufferBytes?: number | undefined
  /**
   * How long an idle kept-alive connection stays open, waiting for its next request. Defaults to 90 seconds,
   * kube-apiserver's (the `IdleTimeout` of its `http.Server`, matching Go's client transport, so
   * client-go's). Node's own default, 5 seconds, counts from the moment a response has been written out,
   * not read: a client still reading a large LIST page when it runs out sends its next request on a
   * connection the server has closed ("socket hang up").
   *
   * @since 0.1.0
   */
  readonly keepAliveTimeout?: Duration.Input | undefined
  /**
   * The largest request body, in bytes (create, update, patch, delete options), as kube-apiserver's
   * `MaxRequestBodyBytes`: a larger one gets `413 RequestEntityTooLarge` ("Request entity too large: limit
   * is N"), whether its Content-Length announces it or it is streamed, and is not read further. It also
   * bounds what the `copy` operations of one JSON patch may duplicate. Defaults to
   * `defaultMaxRequestBodyBytes` (3 MiB). Independently, a body nesting objects and arrays more than
   * `maxJsonDepth` levels deep gets `400 BadRequest`, and a patch whose result would, `422 Invalid`.
   *
   * @since 0.1.0
   */
  readonly maxRequestBodyBytes?: number | undefined
  /**
   * Objects created at start, each with `apiVersion` and `kind` of a served resource: the Namespaces
   * first, then the others in order. A namespaced object's namespace must exist (see `namespaces`).
   */
  readonly objects?: ReadonlyArray<KubeObject> | undefined
  /**
   * Namespaces created at start (Active, as `kubectl create namespace` makes them), besides those of a
   * fresh cluster, which always exist: `default`, `kube-system`, `kube-public` and `kube-node-lease`
   * (`initialNamespaces`). As in kube-apiserver, an object can only be created in an existing namespace
   * that is not being deleted (404 NotFound, 403 Forbidden otherwise).
   *
   * @since 0.2.0
   */
  readonly namespaces?: ReadonlyArray<string> | undefined
  /**
   * The garbage collector and namespace controller (kube-controller-manager's) that act on deletions:
   * dependents of deleted owners (`metadata.ownerReferences`) are deleted, or orphaned, as the owner's
   * propagation policy says; a Terminating namespace is emptied, then deleted. On by default; `false`
   * turns them off (as a cluster without kube-controller-manager: `Foreground` and `Orphan` deletions
   * and namespaces then wait for ever).
   *
   * @since 0.2.0
   */
  readonly garbageCollection?: false | GarbageCollectionOptions | undefined
  /**
   * An audit log of the mutating requests (create, update, patch, delete, deletecollection, status
   * writes) and of the garbage collector's writes: a file path, to which one JSON line per `AuditEvent`
   * is appended (buffered, written at least every 100 ms, the file closed with the server's scope), or a
   * function called with each event. Request bodies and credentials are never recorded.
   *
   * @since 0.2.0
   */
  readonly auditLog?: string | ((event: AuditEvent) => void) | undefined
}

/**
 * A served resource with the subresources it has.
 *
 * @since 0.2.0
 * @category models
 */
export interface ServedResource {
  readonly resource: Resource.Resource
  readonly subresources?: {
    /**
     * Whether the resource has a `status` subresource (`PUT`/`PATCH .../status`): writes to the object
     * keep the stored status, writes to the status keep only the status, and generation ignores status
     * changes. Without one, `/status` is 404 and writes to the object change everything. Defaults to
     * `true` for custom resources and to kube-apiserver's for the catalog's.
     */
    readonly status?: boolean | undefined
  } | undefined
}

/**
 * Options of the garbage collector (`Options.garbageCollection`).
 *
 * @since 0.2.0
 * @category models
 */
export interface GarbageCollectionOptions {
  /**
   * How long after a change the garbage collector acts on it (deletes a dependent whose owner is gone or
   * never existed, removes the `foregroundDeletion` or `orphan` finalizer of an owner, empties a
   * Terminating namespace). Defaults to 100 milliseconds.
   */
  readonly delay?: Duration.Input | undefined
}

/**
 * One record of the audit log (`Options.auditLog`): a mutating request, once answered, or a write of the
 * garbage collector or namespace controller (`user` is their service account then).
 *
 * @since 0.2.0
 * @category models
 */
export type AuditEvent = InternalAuditEvent

/**
 * The propagation policy of a deletion (`DeleteOptions.propagationPolicy`): `Background` deletes the
 * object now and its dependents soon after, `Foreground` deletes the dependents that block it
 * (`blockOwnerDeletion`) first, `Orphan` removes the dependents' references to it and keeps them. Without
 * one, the object's own `orphan` or `foregroundDeletion` finalizer decides, then the resource's default:
 * `Orphan` for `batch/v1` Jobs, `Background` for every other.
 *
 * @since 0.2.0
 * @category models
 */
export type PropagationPolicy = InternalPropagationPolicy

/**
 * Options of the programmatic `delete`: preconditions and the propagation policy.
 *
 * @since 0.2.0
 * @category models
 */
export interface DeleteOptions {
  /** The object's uid must be this one (409 Conflict otherwise). */
  readonly uid?: string | undefined
  /** The object's resourceVersion must be this one (409 Conflict otherwise). */
  readonly resourceVersion?: string | undefined
  readonly propagationPolicy?: PropagationPolicy | undefined
}

/**
 * Counters since the server started.
 *
 * @since 0.1.0
 * @category models
 */
export interface Stats {
  readonly resourceVersion: string
  /** Requests to resource and group-version paths (`/api/...`, `/apis/...`). */
  readonly requests: number
  /** Resource requests by verb: `list`, `watch`, `get`, `create`, `update`, `patch`, `delete`, ... */
  readonly requestsByVerb: { readonly [verb: string]: number }
  readonly watchesOpen: number
  /** Watch streams ever started (including those ended at once by an ERROR event). */
  readonly watchesTotal: number
  /** Watch events queued for clients (object events, bookmarks, errors, injected lines). */
  readonly eventsSent: number
  /** Watch bytes handed to sockets. */
  readonly bytesSent: number
  /** Events currently retained for resumption. */
  readonly historySize: number
  /** Faults that took effect, by class (a request answered, a connection dropped, a line written...). */
  readonly faults: { readonly [tag in FaultTag]: number }
}

/**
 * Names one object.
 *
 * @since 0.1.0
 * @category models
 */
export interface ObjectRef {
  readonly name: string
  /** Required for namespaced resources. */
  readonly namespace?: string | undefined
}

/**
 * The content type of a patch: `merge` (RFC 7386), `strategic` (treated as a merge patch that merges the
 * well-known lists by key) or `json` (RFC 6902).
 *
 * @since 0.1.0
 * @category models
 */
export type PatchType = "merge" | "strategic" | "json"

/**
 * Options of the programmatic `list`: the LIST options plus the namespace (all namespaces when absent).
 *
 * @since 0.1.0
 * @category models
 */
export interface ListOptions extends ListerWatcherListOptions {
  readonly namespace?: string | undefined
}

/**
 * Options of `modifyMany`.
 *
 * @since 0.1.0
 * @category models
 */
export interface ModifyManyOptions {
  /** MODIFIED events to write. */
  readonly count: number
  /** Only the objects of this namespace (all when absent). */
  readonly namespace?: string | undefined
  /** Events written between two checks of the watchers. Defaults to 64. */
  readonly batchSize?: number | undefined
  /**
   * Stop writing while a watcher has more than this many bytes waiting for its connection, until they are
   * taken: the burst goes as fast as the slowest watcher reads, without buffering it all. Defaults to 4 MiB.
   */
  readonly maxPendingBytes?: number | undefined
}

/**
 * What `modifyMany` wrote.
 *
 * @since 0.1.0
 * @category models
 */
export interface ModifyManyResult {
  readonly events: number
  /** The resourceVersion of the first and of the last event written. */
  readonly firstResourceVersion: string
  readonly lastResourceVersion: string
}

/**
 * @since 0.1.0
 */
export declare namespace ApiServer {
  /**
   * The running server: where it listens, what it serves, what it has done, and its three faces: `objects`
   * (the API's object calls, as a client's), `faults` (what a test does to the server's clients) and `bench`
   * (bulk writes for seeding large states and timing bursts). Objects passed in are kept as they are (nested
   * values are not copied: do not mutate them afterwards) and objects handed out are the stored ones (treat
   * them as immutable).
   *
   * @since 0.1.0
   * @category models
   */
  export interface Service {
    /** `http://HOST:PORT`, without a trailing slash. */
    readonly url: string
    readonly port: number
    /** Every served resource. */
    readonly resources: ReadonlyArray<Resource.Resource>
    /** The resourceVersion of the last write. */
    readonly resourceVersion: Effect.Effect<string>
    /** Requests, watches, events and bytes sent, faults fired. */
    readonly stats: Effect.Effect<Stats>
    /** Reads and writes of objects, with the API's rules. */
    readonly objects: Objects
    /** Faults injected into the server's answers and connections. */
    readonly faults: Faults
    /** Bulk writes: seeding large states, bursts of events. */
    readonly bench: Bench
  }

  /**
   * The object calls: what a client of the API could do, without HTTP.
   *
   * @since 0.2.0
   * @category models
   */
  export interface Objects {
    /**
     * Creates an object (the namespace comes from `options` or from the object, and must exist and not be
     * Terminating, as over HTTP).
     */
    readonly create: <A>(
      resource: Resource.Resource<A>,
      object: A,
      options?: { readonly namespace?: string | undefined }
    ) => Effect.Effect<A, StatusError>
    /**
     * Replaces an object; a `metadata.resourceVersion` on it must be the current one (409 otherwise). The
     * programmatic writes (`create`, `update`, `patch`) write what they are given, status included, as
     * the API server's own storage would: the status subresource's rules are the HTTP API's.
     */
    readonly update: <A>(resource: Resource.Resource<A>, object: A) => Effect.Effect<A, StatusError>
    readonly patch: <A>(
      resource: Resource.Resource<A>,
      ref: ObjectRef,
      patch: unknown,
      type?: PatchType
    ) => Effect.Effect<A, StatusError>
    /**
     * Deletes an object (or marks it deleting while it has finalizers, `foregroundDeletion` and `orphan`
     * included); returns its last state. Its dependents are the garbage collector's.
     */
    readonly delete: <A>(
      resource: Resource.Resource<A>,
      ref: ObjectRef,
      options?: DeleteOptions
    ) => Effect.Effect<A, StatusError>
    readonly get: <A>(resource: Resource.Resource<A>, ref: ObjectRef) => Effect.Effect<A, StatusError>
    /** A LIST with the HTTP API's semantics (selectors, limit/continue, resourceVersion). */
    readonly list: <A>(resource: Resource.Resource<A>, options?: ListOptions) => Effect.Effect<ListPage<A>, StatusError>
    /** The current objects, sorted by namespace/name: what a synced cache must equal. */
    readonly snapshot: <A>(
      resource: Resource.Resource<A>,
      namespace?: string | undefined
    ) => Effect.Effect<ReadonlyArray<A>>
  }

  /**
   * The faults: what the server does to its clients, that they must survive.
   *
   * @since 0.2.0
   * @category models
   */
  export interface Faults {
    /** Injects a fault: at once (dropped, closed, stalled watches; a restart) or armed for the next requests. */
    readonly inject: (fault: Fault) => Effect.Effect<void>
    /**
     * Disarms every injected fault still waiting for a request (armed counts, stalls of the next watches,
     * stream faults for the next watch), as when an outage ends. Watches already stalled stay stalled.
     */
    readonly clear: Effect.Effect<void>
    /**
     * How many injected shots still wait for a request (armed counts, stalls of the next watches, stream
     * faults for the next watch): 0 once each one took effect or was cleared.
     */
    readonly pending: Effect.Effect<number>
    /** Forgets the history: older resourceVersions and continue tokens now get 410 Expired. */
    readonly compact: Effect.Effect<void>
  }

  /**
   * The bench helpers: bulk writes, faster than the object calls, for large states and bursts of events.
   *
   * @since 0.2.0
   * @category models
   */
  export interface Bench {
    /**
     * Stores objects as they are (uid, creationTimestamp, generation... kept; kind, apiVersion and
     * resourceVersion set), without the checks of `create`: one ADDED event each (MODIFIED when the object
     * exists). A fast way to seed large, deterministic states. Returns the number of objects stored.
     */
    readonly load: <A>(resource: Resource.Resource<A>, objects: Iterable<A>) => Effect.Effect<number, StatusError>
    /**
     * A burst of MODIFIED events, as fast as the watchers read them: the objects of `resource` are written
     * again unchanged, each at a new resourceVersion, round-robin in key order (the same sequence for the
     * same state). Each event is encoded once, from a split of the stored JSON made once per object (no
     * serialisation), and its bytes are shared by every watcher. Completes once every event is written
     * (not yet read).
     */
    readonly modifyMany: <A>(
      resource: Resource.Resource<A>,
      options: ModifyManyOptions
    ) => Effect.Effect<ModifyManyResult, StatusError>
    /**
     * `modifyMany` in two steps: builds every event now (entries and encoded lines, as if nothing else
     * were written in between) and returns the Effect that publishes them, which then costs little more
     * than the writes to the sockets: for benchmarks that time the burst, not its preparation. An event
     * whose object or resourceVersion was changed by another write since is built afresh when published.
     */
    readonly prepareModifyMany: <A>(
      resource: Resource.Resource<A>,
      options: ModifyManyOptions
    ) => Effect.Effect<Effect.Effect<ModifyManyResult>, StatusError>
  }
}

/**
 * The ApiServer service tag.
 *
 * @since 0.1.0
 * @category tags
 */
export class ApiServer extends Context.Service<ApiServer, ApiServer.Service>()("effect-informers/ApiServer") {}

// -------------------------------------------------------------------------------------------------
// constructors
// -------------------------------------------------------------------------------------------------

const resourceKey = (r: Resource.Resource<unknown>) => `${r.group}/${r.version}/${r.resource}`

const isServedResource = (r: Resource.Resource | ServedResource): r is ServedResource => typeof r.resource !== "string"

const findByTypeMeta = (
  resources: ReadonlyArray<Resource.Resource>,
  object: KubeObject
): Resource.Resource | undefined =>
  resources.find((r) => Resource.apiVersion(r) === object.apiVersion && r.kind === object.kind)

const toEffect = <A>(result: Result.Result<Entry, Status>): Effect.Effect<A, StatusError> =>
  Result.isSuccess(result) ? Effect.succeed(result.success.obj as A) : Effect.fail(fromStatus(result.failure))

/**
 * Starts the server; it stops when the scope closes (open watches are ended and every connection is
 * closed first).
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Resource } from "effect-informers"
 * import { ApiServer } from "@effect-informers/testkit"
 *
 * const program = Effect.gen(function*() {
 *   const server = yield* ApiServer.make({ historySize: 1000 })
 *   yield* server.objects.create(Resource.pods, { metadata: { name: "web", namespace: "default" } })
 *   const response = yield* Effect.promise(() => fetch(`${server.url}/api/v1/namespaces/default/pods`))
 *   console.log(response.status) // 200
 * }).pipe(Effect.scoped)
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (
  options: Options = {}
): Effect.Effect<ApiServer.Service, ServeError | StatusError | AuditLogError, Scope.Scope> =>
  Effect.gen(function*() {
    const resources: Array<Resource.Resource> = []
    const byPath = new Map<string, Resource.Resource>()
    const statusSubresource = new Map<string, boolean>()
    for (const served of [...Resource.catalog, ...(options.resources ?? [])]) {
      const r = isServedResource(served) ? served.resource : served
      const status = isServedResource(served) ? served.subresources?.status : undefined
      if (status !== undefined) statusSubresource.set(Resource.groupResource(r), status)
      if (byPath.has(resourceKey(r))) continue
      byPath.set(resourceKey(r), r)
      resources.push(r)
    }
    const store = new Store(Math.max(1, options.historySize ?? 10_000), resources, statusSubresource)
    const faults = new FaultState()
    // the audit log first: it is closed after the HTTP server has stopped
    const audit: AuditSink | undefined = typeof options.auditLog === "string"
      ? yield* fileSink(options.auditLog, Duration.millis(100)).pipe(
        Effect.mapError((error) =>
          new AuditLogError({
            path: options.auditLog as string,
            message: `cannot open the audit log ${options.auditLog as string}: ${error.message}`
          })
        )
      )
      : options.auditLog
    const clock = yield* Clock.Clock
    if (options.garbageCollection !== false) {
      const controllers = new Controllers(
        store,
        Duration.toMillis(Duration.fromInputUnsafe(options.garbageCollection?.delay ?? Duration.millis(100))),
        () => clock.currentTimeMillisUnsafe(),
        () => writeContext(clock.currentTimeMillisUnsafe()),
        audit === undefined ? undefined : (write) =>
          audit({
            time: new Date(clock.currentTimeMillisUnsafe()).toISOString(),
            verb: write.verb,
            group: write.store.resource.group,
            version: write.store.resource.version,
            resource: write.store.resource.resource,
            ...(write.subresource === undefined ? {} : { subresource: write.subresource }),
            ...(write.namespace === "" ? {} : { namespace: write.namespace }),
            name: write.name,
            user: write.user,
            userAgent: "kube-controller-manager (effect-informers ApiServer)",
            code: write.code
          })
      )
      store.observer = controllers.observe
      yield* Effect.forkScoped(Effect.interruptible(controllers.run))
    }
    const state: ServerState = {
      store,
      resources,
      byPath,
      watchers: new Set(),
      faults,
      stats: { requests: 0, byVerb: {}, watchesOpen: 0, watchesTotal: 0 },
      bookmarkInterval: Duration.fromInputUnsafe(options.bookmarkInterval ?? Duration.seconds(10)),
      maxTimeoutSeconds: options.maxTimeoutSeconds ?? 1800,
      watchBufferBytes: options.watchBufferBytes ?? 256 * 1024 * 1024,
      maxRequestBodyBytes: Math.max(0, options.maxRequestBodyBytes ?? defaultMaxRequestBodyBytes),
      discovery: makeDiscovery(resources, (r) => store.storeOf(r)?.traits.statusSubresource ?? false),
      audit
    }

    const startedAt = yield* Clock.currentTimeMillis
    // a fresh cluster's namespaces, then those asked for, then the objects (their Namespaces first)
    const namespaces = store.storeOf(Resource.namespaces)!
    for (const name of [...initialNamespaces, ...(options.namespaces ?? [])]) {
      if (namespaces.entries.has(name)) continue
      yield* toEffect(store.create(namespaces, { metadata: { name } }, undefined, writeContext(startedAt), "object"))
    }
    const seeds = options.objects ?? []
    const isNamespace = (object: KubeObject) => object.apiVersion === "v1" && object.kind === "Namespace"
    for (const object of [...seeds.filter(isNamespace), ...seeds.filter((o) => !isNamespace(o))]) {
      const resource = findByTypeMeta(resources, object)
      if (resource === undefined) {
        return yield* fromStatus(
          badRequest(`no served resource has apiVersion ${object.apiVersion} and kind ${object.kind}`)
        )
      }
      yield* toEffect(
        store.create(store.storeOf(resource)!, object, object.metadata?.namespace, writeContext(startedAt))
      )
    }

    // the HTTP server, with its connections tracked for restarts and shutdown
    const scope = yield* Effect.scope
    const host = options.host ?? "127.0.0.1"
    const sockets = new Set<Socket>()
    const nodeServer = Http.createServer()
    nodeServer.keepAliveTimeout = Duration.toMillis(options.keepAliveTimeout ?? defaultKeepAliveTimeout)
    nodeServer.on("connection", (socket: Socket) => {
      sockets.add(socket)
      socket.once("close", () => sockets.delete(socket))
    })
    const dropConnections = () => {
      for (const watcher of state.watchers) watcher.end("connection dropped")
      for (const socket of sockets) socket.destroy()
      sockets.clear()
    }
    const listen = (port: number) =>
      Effect.callback<void, Error>((resume) => {
        const onError = (error: Error) => resume(Effect.fail(error))
        nodeServer.once("error", onError)
        nodeServer.listen(port, host, () => {
          nodeServer.off("error", onError)
          resume(Effect.void)
        })
      })
    // closed last, once every connection is gone
    yield* Effect.addFinalizer(() =>
      Effect.callback<void>((resume) => {
        if (!nodeServer.listening) return resume(Effect.void)
        nodeServer.close(() => resume(Effect.void))
      })
    )
    yield* listen(options.port ?? 0).pipe(Effect.mapError((cause) => new ServeError({ cause })))
    const address = nodeServer.address()
    const port = typeof address === "object" && address !== null ? address.port : 0
    const authority = `${host.includes(":") ? `[${host}]` : host}:${port}`
    // Each request runs in a fiber of this scope, with this fiber's services (clock, random, logger...): it
    // is interrupted when its client goes away (the response closes before it ends) or when the server stops.
    const requests = yield* Scope.fork(scope, "parallel")
    const handler = yield* NodeHttpServer.makeHandler(makeApp(state, () => authority), { scope: requests })
    nodeServer.on("request", handler)
    // on shutdown: no new request, open watches ended, every connection closed; then the request fibers
    // still running are interrupted, and the server closed
    yield* Effect.addFinalizer(() =>
      Effect.sync(() => {
        nodeServer.off("request", handler)
        dropConnections()
      })
    )

    const restart = (rejectMillis: number) =>
      Effect.gen(function*() {
        faults.count("Restart")
        if (rejectMillis <= 0 || !nodeServer.listening) {
          dropConnections()
          return
        }
        // stop listening now (new connections are refused), listen again later on the same port
        const closed = yield* Deferred.make<void>()
        nodeServer.close(() => Deferred.doneUnsafe(closed, Effect.void))
        dropConnections()
        yield* Deferred.await(closed).pipe(
          Effect.andThen(Effect.sleep(Duration.millis(rejectMillis))),
          Effect.andThen(Effect.retry(listen(port), Schedule.spaced(Duration.millis(100)))),
          Effect.catchCause((cause) => Effect.logWarning("ApiServer: could not listen again after restart", cause)),
          Effect.interruptible,
          Effect.forkIn(scope)
        )
      })

    const inject = (fault: Fault): Effect.Effect<void> =>
      Effect.suspend(() => {
        const arm = (armed: ArmedFault) => {
          if (armed.remaining > 0) faults.armed.push(armed)
        }
        switch (fault._tag) {
          case "DropWatches": {
            for (const watcher of state.watchers) {
              faults.count("DropWatches")
              watcher.connection?.destroy()
              watcher.end("dropped")
            }
            return Effect.void
          }
          case "CloseWatches": {
            for (const watcher of state.watchers) {
              faults.count("CloseWatches")
              watcher.end("closed")
            }
            return Effect.void
          }
          case "WatchGone":
            arm({ _tag: "WatchGone", remaining: fault.count ?? 1, mode: fault.mode ?? "event" })
            return Effect.void
          case "ContinueGone":
            arm({ _tag: "ContinueGone", remaining: fault.count ?? 1 })
            return Effect.void
          case "ServerError":
            arm({
              _tag: "ServerError",
              remaining: fault.count ?? 1,
              status: fault.status ?? 500,
              on: fault.on ?? "any"
            })
            return Effect.void
          case "TooManyRequests":
            arm({
              _tag: "TooManyRequests",
              remaining: fault.count ?? 1,
              retryAfterSeconds: fault.retryAfterSeconds ?? 1,
              on: fault.on ?? "any"
            })
            return Effect.void
          case "Delay":
            arm({ _tag: "Delay", remaining: fault.count ?? 1, millis: fault.millis, on: fault.on ?? "any" })
            return Effect.void
          case "StallWatches": {
            for (const watcher of state.watchers) {
              if (watcher.stalled || watcher.done) continue
              faults.count("StallWatches")
              watcher.stall()
            }
            faults.stallNext += fault.count ?? 0
            return Effect.void
          }
          case "MalformedLine":
          case "PartialLine":
          case "MissingMetadata": {
            let applied = 0
            for (const watcher of state.watchers) {
              if (watcher.stalled || watcher.done) continue
              applyStreamFault(state, watcher, fault._tag)
              applied++
            }
            if (applied === 0) faults.nextWatch.push(fault._tag)
            return Effect.void
          }
          case "Restart":
            return restart(fault.rejectMillis ?? 0)
        }
      })

    const storeOf = (resource: Resource.Resource<unknown>) => {
      const rs = store.storeOf(resource)
      return rs === undefined ? Effect.fail(fromStatus(resourceNotFound)) : Effect.succeed(rs)
    }

    const write = <A>(
      resource: Resource.Resource<A>,
      f: (rs: NonNullable<ReturnType<Store["storeOf"]>>, now: number) => Result.Result<Entry, Status>
    ) =>
      Effect.flatMap(
        storeOf(resource),
        (rs) => Effect.flatMap(Clock.currentTimeMillis, (now) => toEffect<A>(f(rs, now)))
      )

    /** Builds the burst's events now; the Effect returned publishes them, paced by the slowest watcher. */
    const prepareModifyMany = (
      rs: ResourceStore,
      modifyOptions: ModifyManyOptions
    ): Effect.Effect<Effect.Effect<ModifyManyResult>, StatusError> =>
      Effect.suspend(() => {
        const prefix = modifyOptions.namespace === undefined || modifyOptions.namespace === ""
          ? undefined
          : `${modifyOptions.namespace}/`
        const keys = prefix === undefined ? rs.keys() : rs.keys().filter((key) => key.startsWith(prefix))
        const count = Math.max(0, Math.floor(modifyOptions.count))
        if (count > 0 && keys.length === 0) {
          return Effect.fail(fromStatus(badRequest("modifyMany: there is no object to modify")))
        }
        const batchSize = Math.max(1, modifyOptions.batchSize ?? 64)
        const maxPending = Math.max(0, modifyOptions.maxPendingBytes ?? 4 * 1024 * 1024)
        const prepared = store.prepareTouches(rs, keys, count)
        const total = prepared.entries.length
        // the first watcher with too many bytes waiting, if any
        const congested = () => {
          for (const watcher of rs.watchers) {
            if (!watcher.closed && watcher.queuedBytes > maxPending) return watcher
          }
          return undefined
        }
        return Effect.succeed(Effect.suspend(() => {
          let written = 0
          let published = 0
          let first: number | undefined
          const step: Effect.Effect<void> = Effect.suspend(() => {
            const end = Math.min(total, written + batchSize)
            for (; written < end; written++) {
              // undefined: the object was deleted since the burst was prepared
              const entry = store.commitPrepared(prepared, written)
              if (entry === undefined) continue
              first ??= entry.rv
              published++
            }
            if (written >= total) return Effect.void
            const slow = congested()
            const wait = slow === undefined
              ? Effect.yieldNow
              : Effect.callback<void>((resume) => slow.whenDrained(() => resume(Effect.void)))
            return Effect.andThen(wait, step)
          })
          return Effect.map(step, (): ModifyManyResult => ({
            events: published,
            firstResourceVersion: String(first ?? store.rv),
            lastResourceVersion: String(store.rv)
          }))
        }))
      })

    const namespaceOf = (rs: { readonly resource: Resource.Resource }, ref: ObjectRef) =>
      rs.resource.namespaced ? ref.namespace ?? "" : ""

    const objects: ApiServer.Objects = {
      create: (resource, object, createOptions) =>
        write(resource, (rs, now) =>
          store.create(
            rs,
            object,
            createOptions?.namespace ?? (object as KubeObject).metadata?.namespace,
            writeContext(now)
          )),
      update: (resource, object) =>
        write(resource, (rs) => {
          const metadata = (object as KubeObject).metadata
          return store.update(rs, object, metadata?.namespace, metadata?.name)
        }),
      patch: (resource, ref, patch, type = "merge") =>
        write(resource, (rs) =>
          patchObject(
            state,
            rs,
            namespaceOf(rs, ref),
            ref.name,
            (current: JsonObject) => applyPatch(type, current, patch, state.maxRequestBodyBytes)
          )),
      delete: (resource, ref, deleteOptions = {}) =>
        write(
          resource,
          (rs, now) =>
            store.delete(
              rs,
              namespaceOf(rs, ref),
              ref.name,
              { uid: deleteOptions.uid, resourceVersion: deleteOptions.resourceVersion },
              writeContext(now),
              { propagationPolicy: deleteOptions.propagationPolicy }
            )
        ),
      get: (resource, ref) =>
        write(resource, (rs) => {
          const entry = rs.entries.get(objectKey(namespaceOf(rs, ref), ref.name))
          return entry === undefined ? Result.fail(notFound(rs, ref.name)) : Result.succeed(entry)
        }),
      list: <A>(resource: Resource.Resource<A>, listOptions: ListOptions = {}) =>
        Effect.flatMap(storeOf(resource), (rs) =>
          Effect.suspend(() => {
            const outcome = listObjects(state, rs, listOptions.namespace, listOptions)
            if (Result.isFailure(outcome)) return Effect.fail(fromStatus(outcome.failure))
            const { continueToken, page } = outcome.success
            return Effect.succeed<ListPage<A>>({
              items: page.items.map((entry) => entry.obj as A),
              resourceVersion: String(page.rv),
              continue: continueToken,
              remainingItemCount: page.remaining
            })
          })),
      snapshot: <A>(resource: Resource.Resource<A>, namespace?: string | undefined) =>
        Effect.sync(() => {
          const rs = store.storeOf(resource)
          if (rs === undefined) return []
          const selection = { namespace: namespace === "" ? undefined : namespace, label: undefined, field: undefined }
          return store.listPage(rs, store.rv, selection, 0, undefined).items.map((entry) => entry.obj as A)
        })
    }

    const faultCalls: ApiServer.Faults = {
      inject,
      clear: Effect.sync(() => {
        faults.armed = []
        faults.stallNext = 0
        faults.nextWatch = []
      }),
      pending: Effect.sync(() => faults.pending()),
      compact: Effect.sync(() => store.compact())
    }

    const bench: ApiServer.Bench = {
      load: (resource, objects) =>
        Effect.flatMap(storeOf(resource), (rs) =>
          Effect.suspend(() => {
            let stored = 0
            for (const object of objects) {
              const result = store.load(rs, object)
              if (Result.isFailure(result)) return Effect.fail(fromStatus(result.failure))
              stored++
            }
            return Effect.succeed(stored)
          })),
      prepareModifyMany: (resource, modifyOptions) =>
        Effect.flatMap(storeOf(resource), (rs) => prepareModifyMany(rs, modifyOptions)),
      modifyMany: (resource, modifyOptions) =>
        Effect.flatten(Effect.flatMap(storeOf(resource), (rs) => prepareModifyMany(rs, modifyOptions)))
    }

    const service: ApiServer.Service = {
      url: `http://${authority}`,
      port,
      resources,
      resourceVersion: Effect.sync(() => String(store.rv)),
      stats: Effect.sync((): Stats => {
        const fired: Record<string, number> = {}
        for (const tag of faultTags) fired[tag] = faults.fired[tag] ?? 0
        return {
          resourceVersion: String(store.rv),
          requests: state.stats.requests,
          requestsByVerb: { ...state.stats.byVerb },
          watchesOpen: state.stats.watchesOpen,
          watchesTotal: state.stats.watchesTotal,
          eventsSent: store.counters.eventsSent,
          bytesSent: store.counters.bytesSent,
          historySize: store.history.size,
          faults: fired as Stats["faults"]
        }
      }),
      objects,
      faults: faultCalls,
      bench
    }
    return service
  })

/**
 * A Layer running the server for the lifetime of the layer.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (options: Options = {}): Layer.Layer<ApiServer, ServeError | StatusError | AuditLogError> =>
  Layer.effect(ApiServer, make(options))

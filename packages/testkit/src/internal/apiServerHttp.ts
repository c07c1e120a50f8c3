/**
 * The embedded API server's HTTP surface: routing, LIST/GET/POST/PUT/PATCH/DELETE/WATCH with the real
 * API server's parameters and errors, discovery and OpenAPI documents for kubectl, and per-request fault
 * injection.
 *
 * @internal
 */
import * as NodeHttpServerRequest from "@effect/platform-node/NodeHttpServerRequest"
import { reasonForCode } from "effect-informers/ApiError"
import * as ApiStore from "effect-informers/ApiStore"
import { jsonPatch, JsonPatchError, mergePatch, strategicMergePatch } from "effect-informers/ApiStore"
import type { Resource } from "effect-informers/Resource"
import { apiVersion as resourceApiVersion, groupVersionPath } from "effect-informers/Resource"
import type { Status } from "effect-informers/Wire"
import { failureStatus } from "effect-informers/Wire"
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as FindMyWay from "effect/http/FindMyWay"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as Result from "effect/Result"
import * as Stream from "effect/Stream"
import { randomInt, randomUUID } from "node:crypto"
import type { IncomingMessage, ServerResponse } from "node:http"
import type { ResetFields, Writer } from "./apiServerApply.js"
import { writeOptions } from "./apiServerApply.js"
import { applyObject, decodeApplyBody } from "./apiServerApplyRequest.js"
import type { AuditSink } from "./apiServerAudit.js"
import { mutatingVerbs } from "./apiServerAudit.js"
import { metadataListResponse, metadataObjectResponse, MetadataWatcher, wantsMetadata } from "./apiServerMetadata.js"
import { decodeProtobufObject, isProtobuf } from "./apiServerProtobuf.js"
import type {
  DeleteOptions,
  Entry,
  Preconditions,
  PropagationPolicy,
  ResourceStore,
  Selection,
  Store,
  WriteContext,
  WriteScope
} from "./apiServerStore.js"
import {
  badRequest,
  expired,
  internalError,
  invalid,
  jsonTextTooDeep,
  jsonValueTooDeep,
  maxJsonDepth,
  methodNotAllowed,
  modifiedConflict,
  notFound,
  objectKey,
  requestEntityTooLarge,
  resourceNotFound
} from "./apiServerStore.js"
import { tableJson, tableRequest, tableWatchResponse } from "./apiServerTable.js"
import { decodeError, patchDecodeFailure } from "./apiServerValidation.js"
import { pull, Watcher } from "./apiServerWatch.js"
import type { JsonObject } from "./json.js"

// -------------------------------------------------------------------------------------------------
// state
// -------------------------------------------------------------------------------------------------

/** What a request is, for fault targeting. @internal */
export type RequestKind = "list" | "watch" | "other"

/** @internal */
export type FaultTarget = "any" | "list" | "watch"

/** @internal */
export type ArmedFault =
  | { readonly _tag: "ServerError"; remaining: number; readonly status: number; readonly on: FaultTarget }
  | {
    readonly _tag: "TooManyRequests"
    remaining: number
    readonly retryAfterSeconds: number
    readonly on: FaultTarget
  }
  | { readonly _tag: "Delay"; remaining: number; readonly millis: number; readonly on: FaultTarget }
  | { readonly _tag: "WatchGone"; remaining: number; readonly mode: "event" | "http" }
  | { readonly _tag: "ContinueGone"; remaining: number }

/** @internal */
export type StreamFault = "MalformedLine" | "PartialLine" | "MissingMetadata"

/** @internal */
export class FaultState {
  armed: Array<ArmedFault> = []
  stallNext = 0
  /** Stream faults waiting for the next watch, when none was open. */
  nextWatch: Array<StreamFault> = []
  readonly fired: Record<string, number> = {}

  count(tag: string, n = 1): void {
    this.fired[tag] = (this.fired[tag] ?? 0) + n
  }

  /** The shots injected and still waiting for a request: armed counts, stalls and stream faults of next watches. */
  pending(): number {
    let shots = this.stallNext + this.nextWatch.length
    for (const fault of this.armed) shots += fault.remaining
    return shots
  }

  /** Takes one shot of the first armed fault of `tag` that targets `kind`. */
  take<T extends ArmedFault["_tag"]>(
    tag: T,
    kind: RequestKind
  ): Extract<ArmedFault, { readonly _tag: T }> | undefined {
    for (let i = 0; i < this.armed.length; i++) {
      const fault = this.armed[i]
      if (fault._tag !== tag) continue
      const on = fault._tag === "WatchGone" ? "watch" : fault._tag === "ContinueGone" ? "list" : fault.on
      if (on !== "any" && on !== kind) continue
      fault.remaining--
      if (fault.remaining <= 0) this.armed.splice(i, 1)
      this.count(tag)
      return fault as Extract<ArmedFault, { readonly _tag: T }>
    }
    return undefined
  }
}

/** @internal */
export interface RequestStats {
  requests: number
  readonly byVerb: Record<string, number>
  watchesOpen: number
  watchesTotal: number
}

/** @internal */
export interface ServerState {
  readonly store: Store
  readonly resources: ReadonlyArray<Resource>
  /** `group/version/resource` to descriptor. */
  readonly byPath: ReadonlyMap<string, Resource>
  readonly watchers: Set<Watcher>
  readonly faults: FaultState
  readonly stats: RequestStats
  readonly bookmarkInterval: Duration.Duration
  readonly maxTimeoutSeconds: number
  readonly watchBufferBytes: number
  /** A request body over this many bytes gets 413 RequestEntityTooLarge. */
  readonly maxRequestBodyBytes: number
  readonly discovery: Discovery
  /** Told of every mutating request, once answered. */
  readonly audit?: AuditSink | undefined
}

// -------------------------------------------------------------------------------------------------
// responses
// -------------------------------------------------------------------------------------------------

const JSON_TYPE = "application/json"

const jsonText = (code: number, body: string): HttpServerResponse.HttpServerResponse =>
  HttpServerResponse.text(body, { status: code, contentType: JSON_TYPE })

/** @internal */
export const statusResponse = (
  status: Status,
  headers?: Record<string, string>
): HttpServerResponse.HttpServerResponse =>
  HttpServerResponse.text(JSON.stringify(status), {
    status: status.code ?? 500,
    contentType: JSON_TYPE,
    ...(headers === undefined ? {} : { headers })
  })

const CHUNK_BYTES = 1024 * 1024

/** A JSON list body, streamed in ~1 MiB chunks when large; each item's JSON is the cached string. */
const listResponse = (head: string, items: ReadonlyArray<Entry>, code = 200): HttpServerResponse.HttpServerResponse => {
  let total = head.length
  for (let i = 0; i < items.length && total < CHUNK_BYTES; i++) total += items[i].json.length + 1
  if (total < CHUNK_BYTES) {
    const parts = new Array<string>(items.length)
    for (let i = 0; i < items.length; i++) parts[i] = items[i].json
    return jsonText(code, head + parts.join(",") + "]}")
  }
  const body = Stream.unfold(-1, (index): Effect.Effect<readonly [Uint8Array, number] | undefined> => {
    if (index === -1) return Effect.succeed([Buffer.from(head, "utf8"), 0] as const)
    if (index > items.length) return Effect.succeed(undefined)
    if (index === items.length) return Effect.succeed([Buffer.from("]}", "utf8"), index + 1] as const)
    const parts: Array<string> = []
    let size = 0
    let i = index
    for (; i < items.length && size < CHUNK_BYTES; i++) {
      const json = items[i].json
      parts.push(json)
      size += json.length
    }
    const text = (index === 0 ? "" : ",") + parts.join(",")
    return Effect.succeed([Buffer.from(text, "utf8"), i] as const)
  })
  return HttpServerResponse.stream(body, { status: code, contentType: JSON_TYPE })
}

// -------------------------------------------------------------------------------------------------
// request helpers
// -------------------------------------------------------------------------------------------------

/** @internal */
export const writeContext = (now: number): WriteContext => ({
  now,
  uid: randomUUID,
  suffix: () => {
    const alphabet = "bcdfghjklmnpqrstvwxz2456789"
    let out = ""
    for (let i = 0; i < 5; i++) out += alphabet[randomInt(alphabet.length)]
    return out
  }
})

/** @internal */
export const parseSelection = (
  store: ResourceStore,
  namespace: string | undefined,
  labelSelector: string | undefined,
  fieldSelector: string | undefined
): Result.Result<Selection, Status> => ApiStore.parseSelection(store.fields, namespace, labelSelector, fieldSelector)

/** @internal */
export type ListParams = ApiStore.ListParams

/** @internal */
export type ListOutcome = ApiStore.ListOutcome<Entry>

/**
 * A LIST, with the store's semantics (`ApiStore.list`: resourceVersion, resourceVersionMatch, limit,
 * continue, selectors).
 *
 * @internal
 */
export const list = (
  state: ServerState,
  rs: ResourceStore,
  namespace: string | undefined,
  params: ListParams
): Result.Result<ListOutcome, Status> => ApiStore.list(state.store, rs, namespace, params)

const listHead = (rs: ResourceStore, outcome: ListOutcome): string => {
  const metadata: Record<string, unknown> = { resourceVersion: String(outcome.page.rv) }
  if (outcome.continueToken !== undefined) metadata.continue = outcome.continueToken
  if (outcome.page.remaining !== undefined) metadata.remainingItemCount = outcome.page.remaining
  return `{"kind":${JSON.stringify(rs.resource.listKind)},"apiVersion":${JSON.stringify(rs.apiVersion)},"metadata":${
    JSON.stringify(metadata)
  },"items":[`
}

// -------------------------------------------------------------------------------------------------
// watch
// -------------------------------------------------------------------------------------------------

/** @internal */
export interface WatchParams {
  readonly labelSelector?: string | undefined
  readonly fieldSelector?: string | undefined
  readonly resourceVersion?: string | undefined
  readonly resourceVersionMatch?: string | undefined
  readonly sendInitialEvents?: string | undefined
  readonly allowWatchBookmarks?: string | undefined
  readonly timeoutSeconds?: string | undefined
}

const isTrue = (value: string | undefined): boolean => value === "true" || value === "1"

/** Everything the watch needs to start, decided before the response is sent. */
interface WatchPlan extends ApiStore.WatchPlan {
  readonly timeoutSeconds: number
  readonly gone: boolean
}

const planWatch = (
  state: ServerState,
  rs: ResourceStore,
  namespace: string | undefined,
  params: WatchParams
): Result.Result<WatchPlan, Status> => {
  const plan = ApiStore.planWatch(rs.fields, namespace, {
    labelSelector: params.labelSelector,
    fieldSelector: params.fieldSelector,
    resourceVersion: params.resourceVersion,
    resourceVersionMatch: params.resourceVersionMatch,
    sendInitialEvents: params.sendInitialEvents === undefined ? undefined : isTrue(params.sendInitialEvents),
    allowWatchBookmarks: isTrue(params.allowWatchBookmarks)
  })
  if (Result.isFailure(plan)) return Result.fail(plan.failure)
  let timeoutSeconds = state.maxTimeoutSeconds
  if (params.timeoutSeconds !== undefined && params.timeoutSeconds !== "") {
    const t = Number(params.timeoutSeconds)
    if (!Number.isFinite(t)) return Result.fail(badRequest(`invalid timeoutSeconds: ${params.timeoutSeconds}`))
    if (t > 0) timeoutSeconds = Math.min(t, state.maxTimeoutSeconds)
  }
  return Result.succeed({ ...plan.success, timeoutSeconds, gone: false })
}

/**
 * Registers `watcher` and queues what it must see first, in one synchronous step with respect to writes
 * (`ApiStore.startWatch`: the replay from its resourceVersion, or the current state as ADDED events and
 * the end bookmark), then applies the watch faults armed for it.
 */
const register = (
  state: ServerState,
  rs: ResourceStore,
  watcher: Watcher,
  plan: WatchPlan
): void => {
  const store = state.store
  state.stats.watchesTotal++
  if (plan.gone) {
    watcher.pushError(expired(`too old resource version: ${plan.from ?? 0} (${store.rv})`))
    return
  }
  const failure = ApiStore.startWatch(store, rs, watcher, plan)
  if (failure !== undefined) {
    watcher.pushError(failure)
    return
  }
  state.watchers.add(watcher)
  state.stats.watchesOpen++
  const faults = state.faults
  if (faults.stallNext > 0) {
    faults.stallNext--
    faults.count("StallWatches")
    watcher.stall()
  }
  if (faults.nextWatch.length > 0) {
    const pending = faults.nextWatch
    faults.nextWatch = []
    for (const fault of pending) applyStreamFault(state, watcher, fault)
  }
}

const unregister = (state: ServerState, rs: ResourceStore, watcher: Watcher): void => {
  if (state.watchers.delete(watcher)) state.stats.watchesOpen--
  rs.watchers.delete(watcher)
  watcher.end(watcher.endReason ?? "closed")
}

/** @internal */
export const applyStreamFault = (state: ServerState, watcher: Watcher, fault: StreamFault): void => {
  const kind = watcher.store.resource.kind
  const apiVersion = watcher.store.apiVersion
  state.faults.count(fault)
  switch (fault) {
    case "MalformedLine":
      watcher.pushRaw(`{"type":"MODIFIED","object":{"kind":"${kind}","apiVersion":"${apiVersion}","metadata":{]}\n`, 1)
      return
    case "PartialLine":
      watcher.pushRaw(`{"type":"MODIFIED","object":{"kind":"${kind}","apiVersion":"${apiVersion}","metadata":{"na`, 1)
      watcher.end("partial line")
      return
    case "MissingMetadata":
      watcher.pushRaw(`{"type":"ADDED","object":{"kind":"${kind}","apiVersion":"${apiVersion}"}}\n`, 1)
      return
  }
}

const watchResponse = (
  state: ServerState,
  rs: ResourceStore,
  plan: WatchPlan,
  connection: ServerResponse | undefined,
  metadataOnly = false
): HttpServerResponse.HttpServerResponse => {
  // the stream's scope: the watcher is registered while the body is written, and its timers with it
  const body = Stream.unwrap(Effect.gen(function*() {
    const watcher = new (metadataOnly ? MetadataWatcher : Watcher)(
      rs,
      plan.selection,
      state.store.counters,
      state.watchBufferBytes,
      connection
    )
    yield* Effect.acquireRelease(
      Effect.sync(() => {
        register(state, rs, watcher, plan)
        // the client must see the headers at once, even when nothing is pending
        if (connection !== undefined && !connection.destroyed) connection.flushHeaders()
      }),
      () => Effect.sync(() => unregister(state, rs, watcher))
    )
    if (!watcher.done) {
      if (plan.bookmarks) {
        yield* Effect.sleep(state.bookmarkInterval).pipe(
          Effect.andThen(Effect.sync(() => watcher.pushBookmark(state.store.rv))),
          Effect.forever,
          Effect.interruptible,
          Effect.forkScoped
        )
      }
      yield* Effect.sleep(Duration.seconds(plan.timeoutSeconds)).pipe(
        Effect.andThen(Effect.sync(() => {
          if (!watcher.stalled) watcher.end("timeout")
        })),
        Effect.interruptible,
        Effect.forkScoped
      )
    }
    return Stream.fromPull(Effect.succeed(pull(watcher)))
  }))
  return HttpServerResponse.stream(body, {
    contentType: JSON_TYPE,
    headers: { "cache-control": "no-cache, private" }
  })
}

// -------------------------------------------------------------------------------------------------
// routing
// -------------------------------------------------------------------------------------------------

type Target =
  | { readonly _tag: "Group"; readonly group: string }
  | { readonly _tag: "GroupVersion"; readonly groupVersion: string }
  | {
    readonly _tag: "Resource"
    readonly rs: ResourceStore
    readonly resource: Resource
    readonly namespace: string | undefined
    readonly name: string | undefined
    readonly subresource: string | undefined
  }
  | { readonly _tag: "NotFound" }

const notFoundTarget: Target = { _tag: "NotFound" }

const resolve = (state: ServerState, segments: ReadonlyArray<string>): Target => {
  let group: string
  let version: string
  let rest: ReadonlyArray<string>
  if (segments[0] === "api") {
    if (segments.length < 2) return notFoundTarget
    group = ""
    version = segments[1]
    rest = segments.slice(2)
  } else {
    if (segments.length < 2) return notFoundTarget
    group = segments[1]
    if (segments.length === 2) return state.discovery.groups.has(group) ? { _tag: "Group", group } : notFoundTarget
    version = segments[2]
    rest = segments.slice(3)
  }
  const groupVersion = group === "" ? version : `${group}/${version}`
  if (!state.discovery.resourceLists.has(groupVersion)) return notFoundTarget
  if (rest.length === 0) return { _tag: "GroupVersion", groupVersion }
  let namespace: string | undefined
  let resourceName: string
  let name: string | undefined
  let subresource: string | undefined
  if (
    rest[0] === "namespaces" && rest.length >= 3 &&
    !(rest.length === 3 && (rest[2] === "status" || rest[2] === "finalize"))
  ) {
    if (rest.length > 5) return notFoundTarget
    namespace = rest[1]
    resourceName = rest[2]
    name = rest[3]
    subresource = rest[4]
  } else {
    if (rest.length > 3) return notFoundTarget
    resourceName = rest[0]
    name = rest[1]
    subresource = rest[2]
  }
  const resource = state.byPath.get(`${group}/${version}/${resourceName}`)
  if (resource === undefined) return notFoundTarget
  if (namespace !== undefined && !resource.namespaced) return notFoundTarget
  if (resource.namespaced && namespace === undefined && name !== undefined) return notFoundTarget
  if (
    subresource !== undefined && subresource !== "status" &&
    !(subresource === "finalize" && resourceName === "namespaces")
  ) {
    return notFoundTarget
  }
  const rs = state.store.storeOf(resource)
  if (rs === undefined) return notFoundTarget
  if (subresource === "status" && !rs.traits.statusSubresource) return notFoundTarget
  return { _tag: "Resource", rs, resource, namespace, name, subresource }
}

const param = (query: URLSearchParams, name: string): string | undefined => query.get(name) ?? undefined

/**
 * How long a connection whose request body was refused stays open while the rest of the body is read and
 * dropped, so that the client reads the answer before the connection is reset.
 */
const LINGER_MILLIS = 1000

/**
 * Drops what is left of a refused request body without keeping it.
 *
 * When the answer to a `Connection: close` request is written, Node destroys the connection at once: a
 * client still sending its body gets a reset (EPIPE) instead of the answer. As Go's server (kube-apiserver)
 * does, only our side is closed then, and the body is read on, bytes dropped; `LINGER_MILLIS` later the
 * connection is destroyed if the body has not ended (a client that streams on and on) or if our side was
 * closed.
 */
const discardBody = (incoming: IncomingMessage): void => {
  if (incoming.readableEnded || incoming.destroyed) return
  const socket = incoming.socket
  if (socket !== null) {
    // without `destroySoon`, Node's HTTP server ends a closing connection with `end()` (a half-close)
    Object.defineProperty(socket, "destroySoon", { value: undefined, configurable: true, writable: true })
    const timer = setTimeout(() => {
      if (!incoming.readableEnded || !socket.writable) socket.destroy()
    }, LINGER_MILLIS)
    timer.unref()
  }
  incoming.resume()
}

const unreadableBody = Result.fail(badRequest("the request body could not be read"))

/** Reads a Node request body, `limit` bytes at most: one byte more and the rest is not read. */
const readIncoming = (incoming: IncomingMessage, limit: number): Effect.Effect<Result.Result<Buffer, Status>> =>
  Effect.callback<Result.Result<Buffer, Status>>((resume) => {
    if (incoming.readableEnded) return resume(Effect.succeed(Result.succeed(Buffer.alloc(0))))
    const chunks: Array<Buffer> = []
    let size = 0
    const detach = () => {
      incoming.off("data", onData)
      incoming.off("end", onEnd)
      incoming.off("error", onError)
      incoming.off("close", onError)
    }
    const done = (result: Result.Result<Buffer, Status>) => {
      detach()
      resume(Effect.succeed(result))
    }
    const onData = (chunk: Buffer | string) => {
      size += chunk.length
      if (size > limit) {
        chunks.length = 0
        done(Result.fail(requestEntityTooLarge(`limit is ${limit}`)))
        discardBody(incoming)
        return
      }
      chunks.push(typeof chunk === "string" ? Buffer.from(chunk, "utf8") : chunk)
    }
    const onEnd = () => done(Result.succeed(Buffer.concat(chunks)))
    const onError = () => done(unreadableBody)
    incoming.on("data", onData)
    incoming.once("end", onEnd)
    incoming.once("error", onError)
    incoming.once("close", onError)
    return Effect.sync(detach)
  })

/**
 * The request body's bytes, as kube-apiserver reads them: more than `limit` bytes (announced by
 * Content-Length, or counted while reading) is 413 RequestEntityTooLarge, and no more of it is read.
 */
const readBytes = (
  request: HttpServerRequest.HttpServerRequest,
  limit: number
): Effect.Effect<Result.Result<Buffer, Status>> =>
  Effect.suspend(() => {
    const tooLarge = Result.fail(requestEntityTooLarge(`limit is ${limit}`))
    // an HTTP/1.1 server: the Node request is an IncomingMessage
    const incoming = NodeHttpServerRequest.toIncomingMessage(request) as IncomingMessage | undefined
    const declared = request.headers["content-length"]
    if (declared !== undefined && /^\d+$/.test(declared) && Number(declared) > limit) {
      if (incoming !== undefined) discardBody(incoming)
      return Effect.succeed(tooLarge)
    }
    if (incoming !== undefined && typeof incoming.on === "function") return readIncoming(incoming, limit)
    // not a Node request (none in this server): read it whole
    return Effect.map(
      Effect.result(request.arrayBuffer),
      (bytes): Result.Result<Buffer, Status> =>
        Result.isFailure(bytes)
          ? unreadableBody
          : bytes.success.byteLength > limit
          ? tooLarge
          : Result.succeed(Buffer.from(bytes.success))
    )
  })

/** The request body as text (UTF-8), read as `readBytes` reads it. */
const readBody = (
  request: HttpServerRequest.HttpServerRequest,
  limit: number
): Effect.Effect<Result.Result<string, Status>> =>
  Effect.map(readBytes(request, limit), Result.map((bytes) => bytes.toString("utf8")))

const tooDeep = badRequest(
  `the body of the request was in an unknown format: objects and arrays are nested more than ${maxJsonDepth} levels deep`
)

/**
 * The request body as JSON (`undefined` when empty): over the body limit, nested deeper than `maxJsonDepth`
 * (checked on the text, before parsing) or not JSON, a Status. A Kubernetes protobuf body (kubectl's
 * imperative commands) is decoded to the same JSON (`decodeProtobufObject`).
 */
const readJson = (
  state: ServerState,
  request: HttpServerRequest.HttpServerRequest
): Effect.Effect<Result.Result<unknown, Status>> =>
  isProtobuf(request.headers["content-type"])
    ? Effect.map(readBytes(request, state.maxRequestBodyBytes), (bytes): Result.Result<unknown, Status> => {
      if (Result.isFailure(bytes)) return bytes
      if (bytes.success.length === 0) return Result.succeed(undefined)
      const decoded = decodeProtobufObject(bytes.success)
      return Result.isSuccess(decoded) && jsonValueTooDeep(decoded.success, maxJsonDepth)
        ? Result.fail(tooDeep)
        : decoded
    })
    : readJsonText(state, request)

const readJsonText = (
  state: ServerState,
  request: HttpServerRequest.HttpServerRequest
): Effect.Effect<Result.Result<unknown, Status>> =>
  Effect.map(readBody(request, state.maxRequestBodyBytes), (text): Result.Result<unknown, Status> => {
    if (Result.isFailure(text)) return text
    if (text.success.trim() === "") return Result.succeed(undefined)
    if (jsonTextTooDeep(text.success, maxJsonDepth)) return Result.fail(tooDeep)
    try {
      return Result.succeed(JSON.parse(text.success))
    } catch (e) {
      return Result.fail(badRequest(`the body of the request was in an unknown format: ${String(e)}`))
    }
  })

const entryResponse = (code: number, result: Result.Result<Entry, Status>): HttpServerResponse.HttpServerResponse =>
  Result.isSuccess(result) ? jsonText(code, result.success.json) : statusResponse(result.failure)

type PatchKind = "merge" | "strategic" | "json"

const patchKind = (contentType: string | undefined): PatchKind | "apply" | undefined => {
  const type = (contentType ?? "").split(";")[0].trim().toLowerCase()
  switch (type) {
    case "application/merge-patch+json":
      return "merge"
    case "application/strategic-merge-patch+json":
      return "strategic"
    case "application/json-patch+json":
      return "json"
    case "application/apply-patch+yaml":
      return "apply"
    default:
      return undefined
  }
}

const patchedTooDeep = failureStatus(
  422,
  "Invalid",
  `the patched object would nest objects and arrays more than ${maxJsonDepth} levels deep`
)

/**
 * Applies a patch; a JSON patch may copy at most `maxCopyBytes` (the request body limit, as in
 * kube-apiserver) and have at most 10,000 operations.
 *
 * @internal
 */
export const applyPatch = (
  kind: PatchKind,
  current: JsonObject,
  patch: unknown,
  maxCopyBytes: number
): Result.Result<unknown, Status> => {
  try {
    switch (kind) {
      case "merge":
        return Result.succeed(mergePatch(current, patch))
      case "strategic":
        return Result.succeed(strategicMergePatch(current, patch))
      case "json": {
        // Only a JSON patch can nest deeper than its two inputs (`copy`, `move` put values under others):
        // merge patches are as deep as the object or the patch, both already bounded when parsed.
        const patched = jsonPatch(current, patch, { maxOperations: 10_000, maxCopyBytes })
        return jsonValueTooDeep(patched, maxJsonDepth) ? Result.fail(patchedTooDeep) : Result.succeed(patched)
      }
    }
  } catch (e) {
    if (e instanceof JsonPatchError) {
      return Result.fail(e.tooLarge ? requestEntityTooLarge(e.message) : failureStatus(422, "Invalid", e.message))
    }
    // a value too deep or too large for the engine (the stack, the longest string)
    if (e instanceof RangeError) {
      return Result.fail(failureStatus(422, "Invalid", `the patch could not be applied: ${e.message}`))
    }
    throw e
  }
}

/** Patches one object through the store's update rules (`writer`: see `Store.create`). @internal */
export const patchObject = (
  state: ServerState,
  rs: ResourceStore,
  namespace: string,
  name: string,
  apply: (current: JsonObject) => Result.Result<unknown, Status>,
  scope: WriteScope = "all",
  writer?: Writer
): Result.Result<Entry, Status> => {
  const existing = rs.entries.get(objectKey(namespace, name))
  if (existing === undefined) return Result.fail(notFound(rs, name))
  const patched = apply(existing.obj)
  if (Result.isFailure(patched)) return Result.fail(patched.failure)
  const obj = patched.success
  if (typeof obj !== "object" || obj === null || Array.isArray(obj)) {
    return Result.fail(badRequest("the patched object is not a JSON object"))
  }
  const input = obj as JsonObject
  // a patched object that does not decode: 422 on the field `patch` (a create or an update's body: 400)
  const undecodable = scope === "object" || scope === "all" ? decodeError(rs.groupResource, input) : undefined
  if (undecodable !== undefined) return Result.fail(patchDecodeFailure(input, undecodable))
  const meta: JsonObject = typeof input.metadata === "object" && input.metadata !== null
    ? { ...(input.metadata as JsonObject) }
    : {}
  if (meta.name !== undefined && meta.name !== name) {
    return Result.fail(invalid(rs.resource.kind, rs.resource.group, name, [{
      reason: "FieldValueInvalid",
      field: "metadata.name",
      message: `Invalid value: ${JSON.stringify(meta.name)}: field is immutable`
    }]))
  }
  const rv = typeof meta.resourceVersion === "string" ? meta.resourceVersion : ""
  if (rv !== "" && rv !== String(existing.rv)) return Result.fail(modifiedConflict(rs, name))
  return state.store.replace(rs, existing, input, meta, scope, writer)
}

/** Which fields a write's endpoint resets: status on the main resource, all but status on `/status`. */
const resetFields = (rs: ResourceStore, subresource: string | undefined): ResetFields =>
  !rs.traits.statusSubresource ? "none" : subresource === "status" ? "nonStatus" : "status"

/** What a PUT or PATCH of `subresource` may change. */
const writeScope = (subresource: string | undefined): WriteScope =>
  subresource === "status" ? "status" : subresource === "finalize" ? "finalize" : "object"

/** The Kubernetes verb of a request. */
const verbOf = (method: string, name: string | undefined, query: URLSearchParams): string =>
  method === "GET"
    ? (name !== undefined ? "get" : isTrue(param(query, "watch")) ? "watch" : "list")
    : method === "POST"
    ? "create"
    : method === "PUT"
    ? "update"
    : method === "PATCH"
    ? "patch"
    : method === "DELETE"
    ? (name !== undefined ? "delete" : "deletecollection")
    : method.toLowerCase()

/** `metadata.name` of a request body, when it is a non-empty string. */
const bodyName = (body: unknown): string | undefined => {
  const metadata = typeof body === "object" && body !== null ? (body as { metadata?: unknown }).metadata : undefined
  const name = typeof metadata === "object" && metadata !== null ? (metadata as { name?: unknown }).name : undefined
  return typeof name === "string" && name !== "" ? name : undefined
}

/** What the audit record of a request needs from its handling. */
interface AuditNote {
  /** The name of the object created. */
  name?: string | undefined
}

/** Serves a resource request, then records it in the audit log when it writes. */
const handleResource = (
  state: ServerState,
  request: HttpServerRequest.HttpServerRequest,
  target: Extract<Target, { readonly _tag: "Resource" }>,
  query: URLSearchParams
): Effect.Effect<HttpServerResponse.HttpServerResponse> => {
  const audit = state.audit
  const verb = verbOf(request.method, target.name, query)
  if (audit === undefined || !mutatingVerbs.has(verb)) return serveResource(state, request, target, query, verb, {})
  const note: AuditNote = {}
  return Effect.flatMap(
    serveResource(state, request, target, query, verb, note),
    (response) =>
      Effect.map(Clock.currentTimeMillis, (now) => {
        const user = request.headers["impersonate-user"]
        const userAgent = request.headers["user-agent"]
        const name = target.name ?? note.name
        audit({
          time: new Date(now).toISOString(),
          verb,
          group: target.resource.group,
          version: target.resource.version,
          resource: target.resource.resource,
          ...(target.subresource === undefined ? {} : { subresource: target.subresource }),
          ...(target.namespace === undefined ? {} : { namespace: target.namespace }),
          ...(name === undefined ? {} : { name }),
          ...(user === undefined || user === "" ? {} : { user }),
          ...(userAgent === undefined ? {} : { userAgent }),
          code: response.status
        })
        return response
      })
  )
}

const serveResource = (
  state: ServerState,
  request: HttpServerRequest.HttpServerRequest,
  target: Extract<Target, { readonly _tag: "Resource" }>,
  query: URLSearchParams,
  verb: string,
  note: AuditNote
): Effect.Effect<HttpServerResponse.HttpServerResponse> =>
  Effect.gen(function*() {
    const { name, namespace, rs } = target
    state.stats.byVerb[verb] = (state.stats.byVerb[verb] ?? 0) + 1
    const kind: RequestKind = verb === "list" ? "list" : verb === "watch" ? "watch" : "other"

    // injected faults
    const delay = state.faults.take("Delay", kind)
    if (delay !== undefined) yield* Effect.interruptible(Effect.sleep(Duration.millis(delay.millis)))
    const throttle = state.faults.take("TooManyRequests", kind)
    if (throttle !== undefined) {
      return statusResponse(
        failureStatus(429, "TooManyRequests", "Too many requests, please try again later.", {
          retryAfterSeconds: throttle.retryAfterSeconds
        }),
        { "retry-after": String(throttle.retryAfterSeconds) }
      )
    }
    const error = state.faults.take("ServerError", kind)
    if (error !== undefined) {
      return statusResponse(
        error.status === 500
          ? internalError("injected fault")
          : failureStatus(error.status, reasonForCode(error.status), "injected fault")
      )
    }

    const now = yield* Clock.currentTimeMillis
    const ctx = writeContext(now)
    const objectNamespace = namespace ?? ""
    const writer = (options: Parameters<typeof writeOptions>[0]["kind"], apply = false) =>
      Result.map(
        writeOptions({
          kind: options,
          apply,
          fieldManager: param(query, "fieldManager"),
          force: param(query, "force"),
          userAgent: request.headers["user-agent"]
        }),
        ({ force, manager }) => ({
          manager,
          force,
          subresource: target.subresource,
          reset: resetFields(rs, target.subresource),
          now
        })
      )
    switch (verb) {
      case "get": {
        if (target.subresource === "finalize") return statusResponse(methodNotAllowed)
        const entry = rs.entries.get(objectKey(objectNamespace, name!))
        if (entry === undefined) return statusResponse(notFound(rs, name!))
        if (wantsMetadata(request.headers.accept, "get")) return metadataObjectResponse(entry)
        const table = tableRequest(request.headers["accept"], param(query, "includeObject"))
        if (Result.isFailure(table)) return statusResponse(table.failure)
        if (table.success === undefined) return jsonText(200, entry.json)
        return jsonText(
          200,
          tableJson(rs.groupResource, [entry], { resourceVersion: String(entry.rv) }, table.success, now)
        )
      }
      case "list": {
        const limitParam = param(query, "limit")
        const limit = limitParam === undefined || limitParam === "" ? undefined : Number(limitParam)
        if (limit !== undefined && !Number.isInteger(limit)) {
          return statusResponse(badRequest(`invalid limit: ${limitParam}`))
        }
        const continueToken = param(query, "continue")
        if (continueToken !== undefined && continueToken !== "" && state.faults.take("ContinueGone", "list")) {
          return statusResponse(ApiStore.expiredContinue(ApiStore.decodeContinue(continueToken)))
        }
        const outcome = list(state, rs, namespace, {
          labelSelector: param(query, "labelSelector"),
          fieldSelector: param(query, "fieldSelector"),
          resourceVersion: param(query, "resourceVersion"),
          resourceVersionMatch: param(query, "resourceVersionMatch"),
          limit,
          continue: continueToken,
          sendInitialEvents: param(query, "sendInitialEvents")
        })
        if (Result.isFailure(outcome)) return statusResponse(outcome.failure)
        if (wantsMetadata(request.headers.accept, "list")) return metadataListResponse(outcome.success)
        const table = tableRequest(request.headers["accept"], param(query, "includeObject"))
        if (Result.isFailure(table)) return statusResponse(table.failure)
        if (table.success !== undefined) {
          const { continueToken, page } = outcome.success
          return jsonText(
            200,
            tableJson(
              rs.groupResource,
              page.items,
              {
                resourceVersion: String(page.rv),
                continue: continueToken,
                remainingItemCount: page.remaining
              },
              table.success,
              now
            )
          )
        }
        return listResponse(listHead(rs, outcome.success), outcome.success.page.items)
      }
      case "watch": {
        const gone = state.faults.take("WatchGone", "watch")
        if (gone !== undefined && gone.mode === "http") {
          return statusResponse(expired("too old resource version: injected fault"))
        }
        const plan = planWatch(state, rs, namespace, {
          labelSelector: param(query, "labelSelector"),
          fieldSelector: param(query, "fieldSelector"),
          resourceVersion: param(query, "resourceVersion"),
          resourceVersionMatch: param(query, "resourceVersionMatch"),
          sendInitialEvents: param(query, "sendInitialEvents"),
          allowWatchBookmarks: param(query, "allowWatchBookmarks"),
          timeoutSeconds: param(query, "timeoutSeconds")
        })
        if (Result.isFailure(plan)) return statusResponse(plan.failure)
        const table = tableRequest(request.headers["accept"], param(query, "includeObject"))
        if (Result.isFailure(table)) return statusResponse(table.failure)
        const connection = NodeHttpServerRequest.toServerResponse(request) as ServerResponse | undefined
        const response = watchResponse(
          state,
          rs,
          gone === undefined ? plan.success : { ...plan.success, gone: true },
          connection,
          wantsMetadata(request.headers.accept, "watch")
        )
        return table.success === undefined ? response : tableWatchResponse(response, rs.groupResource, table.success)
      }
      case "create": {
        if (target.subresource !== undefined) return statusResponse(methodNotAllowed)
        const body = yield* readJson(state, request)
        if (Result.isFailure(body)) return statusResponse(body.failure)
        const options = writer("CreateOptions")
        if (Result.isFailure(options)) return statusResponse(options.failure)
        const created = state.store.create(rs, body.success, namespace, ctx, "object", options.success)
        note.name = Result.isSuccess(created) ? created.success.name : bodyName(body.success)
        return entryResponse(201, created)
      }
      case "update": {
        const body = yield* readJson(state, request)
        if (Result.isFailure(body)) return statusResponse(body.failure)
        const options = writer("UpdateOptions")
        if (Result.isFailure(options)) return statusResponse(options.failure)
        return entryResponse(
          200,
          state.store.update(rs, body.success, objectNamespace, name, writeScope(target.subresource), options.success)
        )
      }
      case "patch": {
        const patchType = patchKind(request.headers["content-type"])
        if (patchType === undefined) {
          return statusResponse(
            failureStatus(
              415,
              "UnsupportedMediaType",
              `the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml, application/strategic-merge-patch+json`
            )
          )
        }
        if (patchType === "apply") {
          const text = yield* readBody(request, state.maxRequestBodyBytes)
          if (Result.isFailure(text)) return statusResponse(text.failure)
          const options = writer("PatchOptions", true)
          if (Result.isFailure(options)) return statusResponse(options.failure)
          const config = decodeApplyBody(text.success)
          if (Result.isFailure(config)) return statusResponse(config.failure)
          const applied = applyObject(state.store, rs, objectNamespace, name!, config.success, options.success, ctx)
          if (Result.isFailure(applied)) return statusResponse(applied.failure)
          return jsonText(applied.success.created ? 201 : 200, applied.success.entry.json)
        }
        const body = yield* readJson(state, request)
        if (Result.isFailure(body)) return statusResponse(body.failure)
        const options = writer("PatchOptions")
        if (Result.isFailure(options)) return statusResponse(options.failure)
        return entryResponse(
          200,
          patchObject(
            state,
            rs,
            objectNamespace,
            name!,
            (current) => applyPatch(patchType, current, body.success, state.maxRequestBodyBytes),
            writeScope(target.subresource),
            options.success
          )
        )
      }
      case "delete": {
        if (target.subresource !== undefined) return statusResponse(methodNotAllowed)
        const body = yield* readJson(state, request)
        if (Result.isFailure(body)) return statusResponse(body.failure)
        const options = deleteOptions(body.success, query)
        if (Result.isFailure(options)) return statusResponse(options.failure)
        const { orphanDependents, preconditions } = options.success
        const result = state.store.delete(rs, objectNamespace, name!, preconditions, ctx, options.success)
        if (Result.isFailure(result)) return statusResponse(result.failure)
        // kube-apiserver: 202 only for an object not yet deleted when orphanDependents was false
        const accepted = orphanDependents === false && rs.entries.get(result.success.key) === result.success
        return jsonText(accepted ? 202 : 200, result.success.json)
      }
      case "deletecollection": {
        const selection = parseSelection(rs, namespace, param(query, "labelSelector"), param(query, "fieldSelector"))
        if (Result.isFailure(selection)) return statusResponse(selection.failure)
        const body = yield* readJson(state, request)
        if (Result.isFailure(body)) return statusResponse(body.failure)
        const options = deleteOptions(body.success, query)
        if (Result.isFailure(options)) return statusResponse(options.failure)
        const current = state.store.listPage(rs, state.store.rv, selection.success, 0, undefined).items
        const deleted: Array<Entry> = []
        for (const entry of current) {
          const result = state.store.delete(rs, entry.namespace, entry.name, {}, ctx, options.success)
          if (Result.isSuccess(result)) deleted.push(result.success)
        }
        const head = listHead(rs, {
          page: { items: deleted, rv: state.store.rv, lastKey: undefined, remaining: undefined },
          continueToken: undefined
        })
        return listResponse(head, deleted)
      }
      default:
        return statusResponse(methodNotAllowed)
    }
  })

/** The DeleteOptions of a DELETE, from its body, or from its query when the body is empty. @internal */
export interface ParsedDeleteOptions extends DeleteOptions {
  readonly preconditions: Preconditions
}

const propagationPolicies: ReadonlyArray<string> = ["Foreground", "Background", "Orphan"]

/**
 * The DeleteOptions of a DELETE: the body's (a `DeleteOptions`), or the query's (`propagationPolicy`,
 * `orphanDependents`) when the body is empty, as kube-apiserver reads them; 422 as its validation answers.
 *
 * @internal
 */
export const deleteOptions = (body: unknown, query: URLSearchParams): Result.Result<ParsedDeleteOptions, Status> => {
  let policy: unknown
  let orphan: unknown
  if (body === undefined || body === null) {
    policy = param(query, "propagationPolicy")
    const o = param(query, "orphanDependents")
    orphan = o === undefined ? undefined : o === "true" || o === "1" ? true : o === "false" || o === "0" ? false : o
  } else if (typeof body === "object") {
    policy = (body as { readonly propagationPolicy?: unknown }).propagationPolicy ?? undefined
    orphan = (body as { readonly orphanDependents?: unknown }).orphanDependents ?? undefined
  }
  if (orphan !== undefined && typeof orphan !== "boolean") {
    return Result.fail(badRequest(`invalid orphanDependents: ${JSON.stringify(orphan)}`))
  }
  if (policy !== undefined && (typeof policy !== "string" || !propagationPolicies.includes(policy))) {
    return Result.fail(invalid("DeleteOptions", "meta.k8s.io", "", [{
      reason: "FieldValueNotSupported",
      field: "propagationPolicy",
      message: `Unsupported value: ${
        JSON.stringify(policy)
      }: supported values: "Foreground", "Background", "Orphan", "nil"`
    }]))
  }
  if (policy !== undefined && orphan !== undefined) {
    return Result.fail(invalid("DeleteOptions", "meta.k8s.io", "", [{
      reason: "FieldValueInvalid",
      field: "propagationPolicy",
      message: `Invalid value: ${JSON.stringify(policy)}: orphanDependents and deletionPropagation cannot be both set`
    }]))
  }
  return Result.succeed({
    preconditions: deletePreconditions(body),
    ...(policy === undefined ? {} : { propagationPolicy: policy as PropagationPolicy }),
    ...(orphan === undefined ? {} : { orphanDependents: orphan as boolean })
  })
}

/** @internal */
export const deletePreconditions = (body: unknown): Preconditions => {
  if (typeof body !== "object" || body === null) return {}
  const preconditions = (body as { readonly preconditions?: unknown }).preconditions
  if (typeof preconditions !== "object" || preconditions === null) return {}
  const p = preconditions as { readonly uid?: unknown; readonly resourceVersion?: unknown }
  return {
    ...(typeof p.uid === "string" ? { uid: p.uid } : {}),
    ...(typeof p.resourceVersion === "string" ? { resourceVersion: p.resourceVersion } : {})
  }
}

const apiHandler = (state: ServerState) =>
  Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    state.stats.requests++
    const url = new URL(request.url, "http://localhost")
    let segments: Array<string>
    try {
      segments = url.pathname.split("/").filter((s) => s !== "").map(decodeURIComponent)
    } catch {
      return statusResponse(badRequest(`malformed path: ${url.pathname}`))
    }
    const target = resolve(state, segments)
    switch (target._tag) {
      case "NotFound":
        return statusResponse(resourceNotFound)
      case "Group":
        return jsonText(200, state.discovery.groups.get(target.group)!)
      case "GroupVersion":
        return jsonText(200, state.discovery.resourceLists.get(target.groupVersion)!)
      case "Resource":
        return yield* handleResource(state, request, target, url.searchParams)
    }
  })

// -------------------------------------------------------------------------------------------------
// discovery and OpenAPI
// -------------------------------------------------------------------------------------------------

/** Pre-rendered discovery documents. @internal */
export interface Discovery {
  readonly version: string
  readonly groupList: string
  readonly groups: ReadonlyMap<string, string>
  readonly resourceLists: ReadonlyMap<string, string>
  readonly openApiV3Root: string
  readonly openApiV3: ReadonlyMap<string, string>
  readonly openApiV2Json: string
  readonly openApiV2Proto: Uint8Array
}

const inCategoryAll: ReadonlyArray<string> = [
  "pods",
  "services",
  "deployments",
  "replicasets",
  "statefulsets",
  "daemonsets",
  "jobs",
  "cronjobs"
]

/** A protobuf string field (wire type 2) with a length under 128. */
const protoString = (field: number, text: string): Array<number> => {
  const bytes = Array.from(Buffer.from(text, "utf8"))
  return [(field << 3) | 2, bytes.length, ...bytes]
}

/** @internal */
export const gitVersion = "v1.32.0-effect-informers"

/** @internal */
export const makeDiscovery = (
  resources: ReadonlyArray<Resource>,
  hasStatus: (resource: Resource) => boolean = (resource) => ApiStore.resourceTraits(resource).statusSubresource
): Discovery => {
  const byGroupVersion = new Map<string, Array<Resource>>()
  const groupVersions = new Map<string, Array<string>>()
  for (const resource of resources) {
    const gv = resourceApiVersion(resource)
    const list = byGroupVersion.get(gv)
    if (list === undefined) byGroupVersion.set(gv, [resource])
    else list.push(resource)
    if (resource.group !== "") {
      const versions = groupVersions.get(resource.group)
      if (versions === undefined) groupVersions.set(resource.group, [resource.version])
      else if (!versions.includes(resource.version)) versions.push(resource.version)
    }
  }
  const resourceLists = new Map<string, string>()
  const openApiV3 = new Map<string, string>()
  const openApiPaths: Record<string, { readonly serverRelativeURL: string }> = {}
  for (const [gv, list] of byGroupVersion) {
    const apiResources: Array<unknown> = []
    const paths: Record<string, unknown> = {}
    for (const r of list) {
      apiResources.push({
        name: r.resource,
        singularName: r.singular,
        namespaced: r.namespaced,
        kind: r.kind,
        verbs: r.verbs,
        ...(r.shortNames.length > 0 ? { shortNames: r.shortNames } : {}),
        ...(inCategoryAll.includes(r.resource) && ["", "apps", "batch"].includes(r.group)
          ? { categories: ["all"] }
          : {})
      })
      if (hasStatus(r)) {
        apiResources.push({
          name: `${r.resource}/status`,
          singularName: "",
          namespaced: r.namespaced,
          kind: r.kind,
          verbs: ["get", "patch", "update"]
        })
      }
      const objectPath = r.namespaced
        ? `${groupVersionPath(r)}/namespaces/{namespace}/${r.resource}/{name}`
        : `${groupVersionPath(r)}/${r.resource}/{name}`
      paths[objectPath] = {
        patch: {
          description: `partially update the specified ${r.kind}`,
          operationId: `patch${r.kind}`,
          parameters: ["dryRun", "fieldManager", "fieldValidation", "force"].map((name) => ({
            name,
            in: "query",
            schema: { type: name === "force" ? "boolean" : "string", uniqueItems: true }
          })),
          requestBody: { content: { "application/merge-patch+json": { schema: { type: "object" } } }, required: true },
          responses: { "200": { description: "OK" } },
          "x-kubernetes-action": "patch",
          "x-kubernetes-group-version-kind": { group: r.group, version: r.version, kind: r.kind }
        }
      }
    }
    resourceLists.set(
      gv,
      JSON.stringify({ kind: "APIResourceList", apiVersion: "v1", groupVersion: gv, resources: apiResources })
    )
    const doc = JSON.stringify({
      openapi: "3.0.0",
      info: { title: "Kubernetes", version: gitVersion },
      paths,
      components: { schemas: {} }
    })
    openApiV3.set(gv, doc)
    const relative = gv === "v1" ? "api/v1" : `apis/${gv}`
    const hash = Buffer.from(doc).length.toString(16)
    openApiPaths[relative] = { serverRelativeURL: `/openapi/v3/${relative}?hash=${hash}` }
  }
  const groups = new Map<string, string>()
  const groupEntries: Array<unknown> = []
  for (const [group, versions] of groupVersions) {
    const entry = {
      name: group,
      versions: versions.map((version) => ({ groupVersion: `${group}/${version}`, version })),
      preferredVersion: { groupVersion: `${group}/${versions[0]}`, version: versions[0] }
    }
    groupEntries.push(entry)
    groups.set(group, JSON.stringify({ kind: "APIGroup", apiVersion: "v1", ...entry }))
  }
  const info = protoString(1, "Kubernetes").concat(protoString(2, gitVersion))
  return {
    version: JSON.stringify({
      major: "1",
      minor: "32",
      gitVersion,
      gitCommit: "0000000000000000000000000000000000000000",
      gitTreeState: "clean",
      buildDate: "2025-01-01T00:00:00Z",
      goVersion: "go1.23.4",
      compiler: "gc",
      platform: "linux/amd64"
    }),
    groupList: JSON.stringify({ kind: "APIGroupList", apiVersion: "v1", groups: groupEntries }),
    groups,
    resourceLists,
    openApiV3Root: JSON.stringify({ paths: openApiPaths }),
    openApiV3,
    openApiV2Json: JSON.stringify({
      swagger: "2.0",
      info: { title: "Kubernetes", version: gitVersion },
      paths: {},
      definitions: {}
    }),
    openApiV2Proto: Uint8Array.from([...protoString(1, "2.0"), (2 << 3) | 2, info.length, ...info])
  }
}

// -------------------------------------------------------------------------------------------------
// the app
// -------------------------------------------------------------------------------------------------

/**
 * The HTTP application: discovery routes and the resource handler.
 *
 * @internal
 */
export const makeApp = (
  state: ServerState,
  address: () => string
): Effect.Effect<HttpServerResponse.HttpServerResponse, never, HttpServerRequest.HttpServerRequest> => {
  const d = state.discovery
  // the router's matching rules (trailing and duplicate slashes ignored, case-insensitive, HEAD served by
  // GET routes), as HttpRouter's
  const router = FindMyWay.make<Route>()
  router.on("GET", "/version", Effect.sync(() => jsonText(200, d.version)))
  router.on(
    "GET",
    "/api",
    Effect.sync(() =>
      jsonText(
        200,
        JSON.stringify({
          kind: "APIVersions",
          versions: ["v1"],
          serverAddressByClientCIDRs: [{ clientCIDR: "0.0.0.0/0", serverAddress: address() }]
        })
      )
    )
  )
  router.on("GET", "/apis", Effect.sync(() => jsonText(200, d.groupList)))
  router.on(
    "GET",
    "/openapi/v2",
    Effect.map(
      HttpServerRequest.HttpServerRequest,
      (request) =>
        (request.headers["accept"] ?? "").includes("protobuf")
          ? HttpServerResponse.uint8Array(d.openApiV2Proto, {
            contentType: "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"
          })
          : jsonText(200, d.openApiV2Json)
    )
  )
  router.on("GET", "/openapi/v3", Effect.sync(() => jsonText(200, d.openApiV3Root)))
  router.on(
    "GET",
    "/openapi/v3/*",
    Effect.map(HttpServerRequest.HttpServerRequest, (request) => {
      const path = new URL(request.url, "http://localhost").pathname.slice("/openapi/v3/".length)
      const gv = path === "api/v1" ? "v1" : path.startsWith("apis/") ? path.slice("apis/".length) : ""
      const doc = d.openApiV3.get(gv)
      return doc === undefined ? statusResponse(resourceNotFound) : jsonText(200, doc)
    })
  )
  const api = apiHandler(state)
  router.all("/api/*", api)
  router.all("/apis/*", api)
  const notFoundRoute = Effect.succeed(statusResponse(resourceNotFound))
  return Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
    let found = router.find(request.method, request.url)
    if (found === undefined && request.method === "HEAD") found = router.find("GET", request.url)
    // the server runs requests uninterruptibly until their handler: a handler can be interrupted (the
    // client went away), as a route's handler
    return found === undefined ? notFoundRoute : Effect.interruptible(found.handler)
  }).pipe(
    // a bug must not leave the client with an empty 500, nor end the process
    Effect.catchDefect((defect) =>
      HttpServerResponse.isHttpServerResponse(defect)
        ? Effect.succeed(defect)
        : Effect.as(
          Effect.logError("ApiServer: a request failed", Cause.die(defect)),
          statusResponse(internalError(defectMessage(defect)))
        )
    )
  )
}

/** A route's handler. */
type Route = Effect.Effect<HttpServerResponse.HttpServerResponse, never, HttpServerRequest.HttpServerRequest>

const defectMessage = (defect: unknown): string => {
  try {
    return defect instanceof Error ? `${defect.name}: ${defect.message}` : String(defect)
  } catch {
    return "unexpected error"
  }
}

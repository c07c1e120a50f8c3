/**
 * The embedded API server's storage: every resource's objects in memory under one global, strictly
 * increasing resourceVersion, a bounded history of events (the "watch cache"), point-in-time snapshots
 * reconstructed by rolling that history back, and the fan-out of events to watchers.
 *
 * Invariants:
 * - `rv` is the resourceVersion of the last write; every write takes `rv + 1`.
 * - `history` holds every event with `rv > historyStart`, oldest first; the state at any `N` with
 *   `historyStart <= N <= rv` is the current state with, for each key changed after `N`, the `prev` of
 *   the oldest such event.
 * - An `Entry` is immutable once published; its JSON is `head + "\"" + rv + "\"" + tail`, so the same
 *   object at another resourceVersion (a deletion, a selector exit) costs a concatenation, not a
 *   serialisation.
 * - A write (store change, history append, fan-out to watchers) is one synchronous step.
 *
 * @internal
 */
import * as FieldSelector from "effect-informers/FieldSelector"
import * as LabelSelector from "effect-informers/LabelSelector"
import type { Resource } from "effect-informers/Resource"
import { apiVersion as resourceApiVersion, groupResource } from "effect-informers/Resource"
import type { Status } from "effect-informers/Wire"
import { failureStatus } from "effect-informers/Wire"
import type { Watcher } from "./apiServerWatch.js"

/** @internal */
export type JsonObject = { [key: string]: unknown }

/** @internal */
export type EventType = "ADDED" | "MODIFIED" | "DELETED"

/** @internal */
export type Result<A> = { readonly ok: true; readonly value: A } | { readonly ok: false; readonly status: Status }

/** @internal */
export const ok = <A>(value: A): Result<A> => ({ ok: true, value })

/** @internal */
export const fail = <A = never>(status: Status): Result<A> => ({ ok: false, status })

/**
 * One stored version of one object. `json` is its serialisation; `rvAt` is the offset in `json` of the
 * quoted `metadata.resourceVersion` value, so the same object at another resourceVersion (a deletion, a
 * selector exit) costs two slices and a concatenation, not a serialisation.
 *
 * @internal
 */
export class Entry {
  /** The wire form around the resourceVersion, built by the first `Store.touch` and shared by its rewrites. */
  rewrite: Rewrite | undefined = undefined

  constructor(
    readonly key: string,
    readonly namespace: string,
    readonly name: string,
    readonly obj: JsonObject,
    readonly json: string,
    readonly rvAt: number,
    readonly rv: number
  ) {}

  get metadata(): JsonObject {
    return this.obj.metadata as JsonObject
  }

  /** `undefined` unless `metadata.labels` is an object (a client may send `null` or any other value). */
  get labels(): LabelSelector.Labels {
    const labels = this.metadata.labels
    return typeof labels === "object" && labels !== null ? labels as LabelSelector.Labels : undefined
  }

  /** The JSON before the quoted resourceVersion. */
  head(): string {
    return this.json.slice(0, this.rvAt)
  }

  /** The JSON after the quoted resourceVersion. */
  tail(): string {
    return this.json.slice(this.rvAt + String(this.rv).length + 2)
  }

  /** The JSON at another resourceVersion. */
  jsonAt(rv: number): string {
    return this.head() + "\"" + rv + "\"" + this.tail()
  }

  /** The same object at another resourceVersion (as in a DELETED event). */
  at(rv: number): Entry {
    const obj = { ...this.obj, metadata: { ...this.metadata, resourceVersion: String(rv) } }
    return new Entry(this.key, this.namespace, this.name, obj, this.jsonAt(rv), this.rvAt, rv)
  }

  /** Whether `other` is the same object content, whatever its resourceVersion. */
  sameContent(other: Entry): boolean {
    const a = String(this.rv).length
    const b = String(other.rv).length
    return this.rvAt === other.rvAt && this.json.length - a === other.json.length - b &&
      this.head() === other.head() && this.tail() === other.tail()
  }
}

/**
 * An object's JSON and its MODIFIED watch line split around the quoted resourceVersion: the same content at
 * any resourceVersion costs a concatenation (JSON) and two copies (line), not a serialisation.
 *
 * @internal
 */
export interface Rewrite {
  readonly head: string
  readonly tail: string
  /** `{"type":"MODIFIED","object":` + head, encoded. */
  readonly prefix: Buffer
  /** tail + `}\n`, encoded. */
  readonly suffix: Buffer
}

const makeRewrite = (entry: Entry): Rewrite => {
  const head = entry.head()
  const tail = entry.tail()
  return {
    head,
    tail,
    prefix: Buffer.from(`{"type":"MODIFIED","object":${head}`, "utf8"),
    suffix: Buffer.from(`${tail}}\n`, "utf8")
  }
}

const SLAB_BYTES = 1024 * 1024

/**
 * Lines carved one after the other from 1 MiB slabs: one allocation for hundreds of lines, and the lines
 * of a burst lie next to each other, so that a watcher takes many of them as one view, without a copy.
 */
class Slab {
  private buffer = Buffer.allocUnsafeSlow(0)
  private used = 0

  alloc(size: number): Buffer {
    if (size > SLAB_BYTES / 4) return Buffer.allocUnsafeSlow(size)
    if (this.used + size > this.buffer.length) {
      this.buffer = Buffer.allocUnsafeSlow(SLAB_BYTES)
      this.used = 0
    }
    const out = this.buffer.subarray(this.used, this.used + size)
    this.used += size
    return out
  }
}

/** The MODIFIED line of a rewrite at resourceVersion `version`. */
const rewriteLine = (slab: Slab, rewrite: Rewrite, version: string): Uint8Array => {
  const { prefix, suffix } = rewrite
  const line = slab.alloc(prefix.length + version.length + 2 + suffix.length)
  let at = prefix.copy(line, 0)
  line[at++] = 0x22
  at += line.write(version, at, "latin1")
  line[at++] = 0x22
  suffix.copy(line, at)
  return line
}

const RV_SENTINEL = "\u0000rv\u0000"

/**
 * Serialises `obj`, whose `metadata` is a fresh object owned by the caller, at resourceVersion `rv`:
 * sets `metadata.resourceVersion` and returns the entry.
 *
 * @internal
 */
export const makeEntry = (
  key: string,
  namespace: string,
  name: string,
  obj: JsonObject,
  rv: number
): Entry => {
  const metadata = obj.metadata as JsonObject
  const version = String(rv)
  metadata.resourceVersion = version
  const json = JSON.stringify(obj)
  // Every occurrence of the pair in the JSON is a real `"resourceVersion":"N"` member of some object (in a
  // string, quotes are escaped): when there is only one, it is metadata's. The second search is cheap; a
  // label, annotation or spec field of that name and value forces the exact (slower) way.
  const marker = `"resourceVersion":"${version}"`
  const at = json.indexOf(marker)
  if (at >= 0 && json.indexOf(marker, at + marker.length) < 0) {
    return new Entry(key, namespace, name, obj, json, at + marker.length - version.length - 2, rv)
  }
  return new Entry(key, namespace, name, obj, json, locateResourceVersion(obj, json), rv)
}

/**
 * The offset in `json` (the serialisation of `obj`) of the quoted `metadata.resourceVersion`: `obj` is
 * serialised again with, in its place, a sentinel string that `json` does not contain, so that the
 * sentinel occurs exactly once, where metadata's value is.
 */
const locateResourceVersion = (obj: JsonObject, json: string): number => {
  const metadata = obj.metadata as JsonObject
  const version = metadata.resourceVersion
  let sentinel = RV_SENTINEL
  for (let i = 0; json.includes(JSON.stringify(sentinel)); i++) sentinel = `${RV_SENTINEL}${i}\u0000`
  metadata.resourceVersion = sentinel
  try {
    return JSON.stringify(obj).indexOf(JSON.stringify(sentinel))
  } finally {
    metadata.resourceVersion = version
  }
}

/** @internal */
export const objectKey = (namespace: string, name: string): string => namespace === "" ? name : `${namespace}/${name}`

// -------------------------------------------------------------------------------------------------
// sorted keys
// -------------------------------------------------------------------------------------------------

/** First index whose key is `>= key`. @internal */
export const lowerBound = (keys: ReadonlyArray<string>, key: string): number => {
  let lo = 0
  let hi = keys.length
  while (lo < hi) {
    const mid = (lo + hi) >>> 1
    if (keys[mid] < key) lo = mid + 1
    else hi = mid
  }
  return lo
}

// -------------------------------------------------------------------------------------------------
// resources
// -------------------------------------------------------------------------------------------------

/**
 * The objects of one resource (all its served versions), with keys kept sorted the way etcd orders them.
 *
 * @internal
 */
export class ResourceStore {
  readonly entries = new Map<string, Entry>()
  private sorted: Array<string> = []
  /** Keys added since `sorted` was built. */
  private added: Array<string> = []
  /** Keys of `sorted` removed since. */
  private removed = 0
  readonly watchers = new Set<Watcher>()
  readonly apiVersion: string
  readonly groupResource: string
  readonly qualified: string
  readonly fields: ReadonlyArray<string>

  constructor(readonly resource: Resource) {
    this.apiVersion = resourceApiVersion(resource)
    this.groupResource = groupResource(resource)
    this.qualified = this.groupResource
    this.fields = selectableFields(resource)
  }

  put(entry: Entry): void {
    if (!this.entries.has(entry.key)) this.added.push(entry.key)
    this.entries.set(entry.key, entry)
  }

  remove(key: string): void {
    if (this.entries.delete(key)) this.removed++
  }

  /**
   * Every key, sorted as etcd orders them. Writes only record what changed; the order is rebuilt here
   * with one sort of the added keys and one merge.
   */
  keys(): ReadonlyArray<string> {
    if (this.added.length === 0 && this.removed === 0) return this.sorted
    const added = this.added.sort(compareKeys)
    const old = this.sorted
    const out: Array<string> = []
    let i = 0
    let j = 0
    let last: string | undefined
    while (i < old.length || j < added.length) {
      const key = j >= added.length || (i < old.length && old[i] < added[j]) ? old[i++] : added[j++]
      if (key !== last && this.entries.has(key)) out.push(key)
      last = key
    }
    this.sorted = out
    this.added = []
    this.removed = 0
    return out
  }
}

/** @internal */
export const compareKeys = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0)

const podFields: ReadonlyArray<string> = [
  "spec.nodeName",
  "spec.restartPolicy",
  "spec.schedulerName",
  "spec.serviceAccountName",
  "spec.hostNetwork",
  "status.phase",
  "status.podIP",
  "status.podIPs",
  "status.nominatedNodeName"
]

const extraFields: { readonly [groupResource: string]: ReadonlyArray<string> } = {
  pods: podFields,
  events: [
    "involvedObject.kind",
    "involvedObject.namespace",
    "involvedObject.name",
    "involvedObject.uid",
    "involvedObject.apiVersion",
    "involvedObject.resourceVersion",
    "involvedObject.fieldPath",
    "reason",
    "reportingComponent",
    "source",
    "type"
  ],
  secrets: ["type"],
  nodes: ["spec.unschedulable"],
  namespaces: ["status.phase"],
  "replicasets.apps": ["status.replicas"],
  "jobs.batch": ["status.successful"]
}

/**
 * The fields a field selector may use on `resource`, as the API server's field label conversions allow.
 *
 * @internal
 */
export const selectableFields = (resource: Resource): ReadonlyArray<string> => [
  ...FieldSelector.defaultFields,
  ...(extraFields[groupResource(resource)] ?? [])
]

// -------------------------------------------------------------------------------------------------
// history
// -------------------------------------------------------------------------------------------------

/** @internal */
export const encode = (text: string): Uint8Array => Buffer.from(text, "utf8")

/**
 * One change. Its wire lines are built the first time a watcher needs them and shared by every watcher.
 *
 * @internal
 */
export class HistoryEvent {
  private line_: Uint8Array | undefined
  private addedLine: Uint8Array | undefined
  private exitLine: Uint8Array | undefined

  constructor(
    readonly rv: number,
    readonly type: EventType,
    readonly store: ResourceStore,
    /** The new state; for DELETED the final state at the deletion's resourceVersion. */
    readonly entry: Entry,
    /** The state before, `undefined` for ADDED. */
    readonly prev: Entry | undefined,
    /** The encoded event, when the writer already has it. */
    line?: Uint8Array | undefined
  ) {
    this.line_ = line
  }

  /** The event as it happened. */
  line(): Uint8Array {
    return this.line_ ??= encode(`{"type":"${this.type}","object":${this.entry.json}}\n`)
  }

  /** An update seen by a watcher whose selector the object just entered. */
  enteredLine(): Uint8Array {
    return this.addedLine ??= encode(`{"type":"ADDED","object":${this.entry.json}}\n`)
  }

  /** An update seen by a watcher whose selector the object just left: the previous state, deleted. */
  leftLine(): Uint8Array {
    if (this.exitLine === undefined) {
      const prev = this.prev!
      this.exitLine = encode(`{"type":"DELETED","object":${prev.jsonAt(this.rv)}}\n`)
    }
    return this.exitLine
  }
}

/**
 * A ring of the most recent events, oldest first.
 *
 * @internal
 */
export class History {
  private readonly ring: Array<HistoryEvent | undefined>
  private head = 0
  size = 0

  constructor(readonly capacity: number) {
    this.ring = new Array(Math.max(1, capacity))
  }

  at(i: number): HistoryEvent {
    return this.ring[(this.head + i) % this.ring.length]!
  }

  /** Appends; returns the evicted event when full. */
  push(event: HistoryEvent): HistoryEvent | undefined {
    const cap = this.ring.length
    if (this.size < cap) {
      this.ring[(this.head + this.size) % cap] = event
      this.size++
      return undefined
    }
    const evicted = this.ring[this.head]
    this.ring[this.head] = event
    this.head = (this.head + 1) % cap
    return evicted
  }

  clear(): void {
    this.ring.fill(undefined)
    this.head = 0
    this.size = 0
  }

  /** Index of the first event with `rv > after`. */
  firstAfter(after: number): number {
    let lo = 0
    let hi = this.size
    while (lo < hi) {
      const mid = (lo + hi) >>> 1
      if (this.at(mid).rv <= after) lo = mid + 1
      else hi = mid
    }
    return lo
  }
}

// -------------------------------------------------------------------------------------------------
// statuses
// -------------------------------------------------------------------------------------------------

const details = (store: ResourceStore, name: string): Status["details"] =>
  store.resource.group === ""
    ? { name, kind: store.resource.resource }
    : { name, group: store.resource.group, kind: store.resource.resource }

/** @internal */
export const notFound = (store: ResourceStore, name: string): Status =>
  failureStatus(404, "NotFound", `${store.qualified} "${name}" not found`, details(store, name))

/** @internal */
export const alreadyExists = (store: ResourceStore, name: string): Status =>
  failureStatus(409, "AlreadyExists", `${store.qualified} "${name}" already exists`, details(store, name))

/** @internal */
export const conflict = (store: ResourceStore, name: string, message: string): Status =>
  failureStatus(
    409,
    "Conflict",
    `Operation cannot be fulfilled on ${store.qualified} "${name}": ${message}`,
    details(store, name)
  )

/** @internal */
export const modifiedConflict = (store: ResourceStore, name: string): Status =>
  conflict(
    store,
    name,
    "the object has been modified; please apply your changes to the latest version and try again"
  )

/** @internal */
export const badRequest = (message: string): Status => failureStatus(400, "BadRequest", message)

/** @internal */
export const resourceNotFound: Status = {
  ...failureStatus(404, "NotFound", "the server could not find the requested resource"),
  details: {}
}

/** @internal */
export const methodNotAllowed: Status = {
  ...failureStatus(405, "MethodNotAllowed", "the server does not allow this method on the requested resource"),
  details: {}
}

/** @internal */
export const internalError = (message: string): Status =>
  failureStatus(500, "InternalError", `Internal error occurred: ${message}`, {
    causes: [{ message }]
  })

/** A field error of an `Invalid` status (causes use the real API's `reason` key). @internal */
export interface FieldError {
  readonly reason: string
  readonly field: string
  readonly message: string
}

/**
 * 422 Invalid, e.g. `Pod "x" is invalid: metadata.name: Required value: name or generateName is required`.
 *
 * @internal
 */
export const invalid = (
  kind: string,
  group: string,
  name: string,
  errors: ReadonlyArray<FieldError>
): Status => {
  const qualifiedKind = group === "" ? kind : `${kind}.${group}`
  const texts = errors.map((e) => `${e.field}: ${e.message}`)
  const message = `${qualifiedKind} "${name}" is invalid: ${texts.length === 1 ? texts[0] : `[${texts.join(", ")}]`}`
  const causes = errors.map((e) => ({ reason: e.reason, message: e.message, field: e.field }))
  return failureStatus(422, "Invalid", message, {
    name,
    ...(group === "" ? {} : { group }),
    kind,
    causes: causes as unknown as NonNullable<Status["details"]>["causes"]
  })
}

/** @internal */
export const expired = (message: string): Status => failureStatus(410, "Expired", message)

/** 413, as kube-apiserver answers a request body over its limit. @internal */
export const requestEntityTooLarge = (message: string): Status =>
  failureStatus(413, "RequestEntityTooLarge", `Request entity too large: ${message}`)

/** @internal */
export const tooLargeResourceVersion = (requested: number, current: number): Status =>
  failureStatus(504, "Timeout", `Too large resource version: ${requested}, current: ${current}`, {
    causes: [{ reason: "ResourceVersionTooLarge", message: "Too large resource version" }] as unknown as NonNullable<
      Status["details"]
    >["causes"],
    retryAfterSeconds: 1
  })

/** @internal */
export const inconsistentContinue =
  "The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list."

// -------------------------------------------------------------------------------------------------
// validation
// -------------------------------------------------------------------------------------------------

const dns1123Subdomain = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/
const dns1123Label = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/

const subdomainMessage =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
const labelMessage =
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"

/** @internal */
export const validateName = (store: ResourceStore, name: string): FieldError | undefined => {
  const label = store.groupResource === "namespaces"
  if (label ? name.length > 63 || !dns1123Label.test(name) : name.length > 253 || !dns1123Subdomain.test(name)) {
    return {
      reason: "FieldValueInvalid",
      field: "metadata.name",
      message: `Invalid value: ${JSON.stringify(name)}: ${label ? labelMessage : subdomainMessage}`
    }
  }
  return undefined
}

// -------------------------------------------------------------------------------------------------
// the store
// -------------------------------------------------------------------------------------------------

/** @internal */
export interface WriteContext {
  /** Milliseconds since the epoch, from the Clock. */
  readonly now: number
  readonly uid: () => string
  /** Five characters for `generateName`. */
  readonly suffix: () => string
}

const timestamp = (millis: number): string => new Date(millis).toISOString().replace(/\.\d{3}Z$/, "Z")

const isObject = (u: unknown): u is JsonObject => typeof u === "object" && u !== null && !Array.isArray(u)

/** @internal */
export interface Counters {
  eventsSent: number
  bytesSent: number
}

/** @internal */
export interface Preconditions {
  readonly uid?: string | undefined
  readonly resourceVersion?: string | undefined
}

/** @internal */
export interface Selection {
  readonly namespace: string | undefined
  readonly label: LabelSelector.LabelSelector | undefined
  readonly field: FieldSelector.FieldSelector | undefined
}

/** @internal */
export const matchesSelection = (selection: Selection, entry: Entry): boolean =>
  (selection.namespace === undefined || entry.namespace === selection.namespace) &&
  (selection.label === undefined || LabelSelector.matches(selection.label, entry.labels)) &&
  (selection.field === undefined || FieldSelector.matchesObject(selection.field, entry.obj))

/** @internal */
export interface ListPageResult {
  readonly items: Array<Entry>
  readonly rv: number
  /** The key to continue from (exclusive: the last key returned). */
  readonly lastKey: string | undefined
  readonly remaining: number | undefined
}

/**
 * Touches built ahead by `Store.prepareTouches`.
 *
 * @internal
 */
export interface PreparedTouches {
  readonly store: ResourceStore
  readonly entries: ReadonlyArray<Entry>
  readonly prevs: ReadonlyArray<Entry>
  readonly lines: ReadonlyArray<Uint8Array>
}

/** @internal */
export class Store {
  rv = 0
  /** Every event with `rv > historyStart` is in `history`. */
  historyStart = 0
  readonly history: History
  readonly stores = new Map<string, ResourceStore>()
  readonly counters: Counters = { eventsSent: 0, bytesSent: 0 }
  private readonly slab = new Slab()

  constructor(historySize: number, resources: Iterable<Resource>) {
    this.history = new History(historySize)
    for (const resource of resources) {
      const gr = groupResource(resource)
      if (!this.stores.has(gr)) this.stores.set(gr, new ResourceStore(resource))
    }
  }

  storeOf(resource: Resource<unknown>): ResourceStore | undefined {
    return this.stores.get(groupResource(resource))
  }

  private commit(
    store: ResourceStore,
    type: EventType,
    entry: Entry,
    prev: Entry | undefined,
    line?: Uint8Array | undefined
  ): void {
    this.rv = entry.rv
    if (type === "DELETED") store.remove(entry.key)
    else store.put(entry)
    const event = new HistoryEvent(entry.rv, type, store, entry, prev, line)
    const evicted = this.history.push(event)
    if (evicted !== undefined) this.historyStart = evicted.rv
    for (const watcher of store.watchers) watcher.offer(event)
  }

  /** Forgets all history: every older resourceVersion becomes too old. */
  compact(): void {
    this.history.clear()
    this.historyStart = this.rv
  }

  // ---------------------------------------------------------------------------------------------
  // writes
  // ---------------------------------------------------------------------------------------------

  create(store: ResourceStore, input: unknown, pathNamespace: string | undefined, ctx: WriteContext): Result<Entry> {
    const resource = store.resource
    if (!isObject(input)) return fail(badRequest("the body of the request was not a JSON object"))
    const check = this.checkTypeMeta(store, input)
    if (check !== undefined) return fail(check)
    const meta: JsonObject = isObject(input.metadata) ? { ...input.metadata } : {}
    let namespace = ""
    if (resource.namespaced) {
      const bodyNamespace = typeof meta.namespace === "string" ? meta.namespace : ""
      if (pathNamespace === undefined || pathNamespace === "") {
        if (bodyNamespace === "") return fail(methodNotAllowed)
        namespace = bodyNamespace
      } else {
        if (bodyNamespace !== "" && bodyNamespace !== pathNamespace) {
          return fail(
            badRequest("the namespace of the provided object does not match the namespace sent on the request")
          )
        }
        namespace = pathNamespace
      }
    } else {
      delete meta.namespace
    }
    let name = typeof meta.name === "string" ? meta.name : ""
    if (name === "") {
      const generateName = typeof meta.generateName === "string" ? meta.generateName : ""
      if (generateName === "") {
        return fail(invalid(resource.kind, resource.group, "", [{
          reason: "FieldValueRequired",
          field: "metadata.name",
          message: "Required value: name or generateName is required"
        }]))
      }
      name = generateName + ctx.suffix()
    }
    const nameError = validateName(store, name)
    if (nameError !== undefined) return fail(invalid(resource.kind, resource.group, name, [nameError]))
    if (typeof meta.resourceVersion === "string" && meta.resourceVersion !== "") {
      return fail(internalError("resourceVersion should not be set on objects to be created"))
    }
    const key = objectKey(namespace, name)
    if (store.entries.has(key)) return fail(alreadyExists(store, name))
    const metadata: JsonObject = {
      name,
      ...meta,
      ...(resource.namespaced ? { namespace } : {}),
      uid: ctx.uid(),
      resourceVersion: "",
      ...("spec" in input ? { generation: 1 } : {}),
      creationTimestamp: timestamp(ctx.now)
    }
    metadata.name = name
    delete metadata.deletionTimestamp
    delete metadata.deletionGracePeriodSeconds
    const obj: JsonObject = { kind: resource.kind, apiVersion: store.apiVersion, ...input, metadata }
    obj.kind = resource.kind
    obj.apiVersion = store.apiVersion
    const entry = makeEntry(key, namespace, name, obj, this.rv + 1)
    this.commit(store, "ADDED", entry, undefined)
    return ok(entry)
  }

  /**
   * Replaces an object. `input.metadata.resourceVersion`, when set, must be the current one (optimistic
   * concurrency). An update that changes nothing writes nothing and returns the current entry.
   */
  update(
    store: ResourceStore,
    input: unknown,
    pathNamespace: string | undefined,
    pathName: string | undefined
  ): Result<Entry> {
    const resource = store.resource
    if (!isObject(input)) return fail(badRequest("the body of the request was not a JSON object"))
    const check = this.checkTypeMeta(store, input)
    if (check !== undefined) return fail(check)
    const meta: JsonObject = isObject(input.metadata) ? { ...input.metadata } : {}
    const bodyName = typeof meta.name === "string" ? meta.name : ""
    const name = pathName ?? bodyName
    if (name === "") {
      return fail(invalid(resource.kind, resource.group, "", [{
        reason: "FieldValueRequired",
        field: "metadata.name",
        message: "Required value: name is required"
      }]))
    }
    if (bodyName !== "" && bodyName !== name) {
      return fail(badRequest(`the name of the object (${bodyName}) does not match the name on the URL (${name})`))
    }
    let namespace = ""
    if (resource.namespaced) {
      const bodyNamespace = typeof meta.namespace === "string" ? meta.namespace : ""
      namespace = pathNamespace ?? bodyNamespace
      if (bodyNamespace !== "" && bodyNamespace !== namespace) {
        return fail(badRequest("the namespace of the provided object does not match the namespace sent on the request"))
      }
    }
    const key = objectKey(namespace, name)
    const existing = store.entries.get(key)
    if (existing === undefined) return fail(notFound(store, name))
    const rv = typeof meta.resourceVersion === "string" ? meta.resourceVersion : ""
    if (rv !== "" && rv !== String(existing.rv)) return fail(modifiedConflict(store, name))
    const old = existing.metadata
    if (typeof meta.uid === "string" && meta.uid !== "" && meta.uid !== old.uid) {
      return fail(conflict(
        store,
        name,
        `Precondition failed: UID in precondition: ${meta.uid}, UID in object meta: ${String(old.uid)}`
      ))
    }
    return this.replace(store, existing, input, meta)
  }

  /** Writes `input` (already checked) over `existing`, keeping the system fields. */
  replace(store: ResourceStore, existing: Entry, input: JsonObject, meta: JsonObject): Result<Entry> {
    const old = existing.metadata
    const metadata: JsonObject = { ...meta }
    metadata.name = existing.name
    if (store.resource.namespaced) metadata.namespace = existing.namespace
    else delete metadata.namespace
    metadata.uid = old.uid
    metadata.creationTimestamp = old.creationTimestamp
    if (old.deletionTimestamp !== undefined) metadata.deletionTimestamp = old.deletionTimestamp
    else delete metadata.deletionTimestamp
    if (old.generation !== undefined) metadata.generation = old.generation
    delete metadata.generateName
    if (old.generateName !== undefined) metadata.generateName = old.generateName
    const obj: JsonObject = { ...input, metadata }
    obj.kind = store.resource.kind
    obj.apiVersion = store.apiVersion
    if (typeof old.generation === "number" && !jsonEqual(existing.obj.spec, obj.spec)) {
      metadata.generation = old.generation + 1
    }
    // a deleting object whose last finalizer is gone goes away
    if (metadata.deletionTimestamp !== undefined && !hasFinalizers(metadata)) {
      const entry = makeEntry(existing.key, existing.namespace, existing.name, obj, this.rv + 1)
      this.commit(store, "DELETED", entry, existing)
      return ok(entry)
    }
    const candidate = makeEntry(existing.key, existing.namespace, existing.name, obj, this.rv + 1)
    if (candidate.sameContent(existing)) {
      // nothing changed: the API server writes nothing and returns the current object
      metadata.resourceVersion = String(existing.rv)
      return ok(existing)
    }
    this.commit(store, "MODIFIED", candidate, existing)
    return ok(candidate)
  }

  delete(
    store: ResourceStore,
    namespace: string,
    name: string,
    preconditions: Preconditions,
    ctx: WriteContext
  ): Result<Entry> {
    const existing = store.entries.get(objectKey(namespace, name))
    if (existing === undefined) return fail(notFound(store, name))
    const old = existing.metadata
    if (preconditions.uid !== undefined && preconditions.uid !== old.uid) {
      return fail(conflict(
        store,
        name,
        `Precondition failed: UID in precondition: ${preconditions.uid}, UID in object meta: ${String(old.uid)}`
      ))
    }
    if (preconditions.resourceVersion !== undefined && preconditions.resourceVersion !== String(existing.rv)) {
      return fail(conflict(
        store,
        name,
        `Precondition failed: ResourceVersion in precondition: ${preconditions.resourceVersion}, ResourceVersion in object meta: ${existing.rv}`
      ))
    }
    if (hasFinalizers(old)) {
      if (old.deletionTimestamp !== undefined) return ok(existing)
      const metadata: JsonObject = { ...old, deletionTimestamp: timestamp(ctx.now), deletionGracePeriodSeconds: 0 }
      const entry = makeEntry(
        existing.key,
        existing.namespace,
        existing.name,
        { ...existing.obj, metadata },
        this.rv + 1
      )
      this.commit(store, "MODIFIED", entry, existing)
      return ok(entry)
    }
    const entry = existing.at(this.rv + 1)
    this.commit(store, "DELETED", entry, existing)
    return ok(entry)
  }

  // ---------------------------------------------------------------------------------------------
  // bulk fast paths (benchmarks, large seeds)
  // ---------------------------------------------------------------------------------------------

  /**
   * Stores `input` as given (uid, creationTimestamp, generation... are kept, only kind, apiVersion and
   * resourceVersion are set), without the checks of `create`: one ADDED event, or MODIFIED when the key
   * exists. For seeding large, deterministic states quickly.
   */
  load(store: ResourceStore, input: unknown): Result<Entry> {
    if (!isObject(input) || !isObject(input.metadata)) {
      return fail(badRequest("the object to load has no metadata"))
    }
    const check = this.checkTypeMeta(store, input)
    if (check !== undefined) return fail(check)
    const metadata: JsonObject = { ...input.metadata }
    const name = typeof metadata.name === "string" ? metadata.name : ""
    const namespace = store.resource.namespaced && typeof metadata.namespace === "string" ? metadata.namespace : ""
    if (name === "" || (store.resource.namespaced && namespace === "")) {
      return fail(badRequest("the object to load needs metadata.name (and metadata.namespace when namespaced)"))
    }
    if (!store.resource.namespaced) delete metadata.namespace
    const obj: JsonObject = { kind: store.resource.kind, apiVersion: store.apiVersion, ...input, metadata }
    obj.kind = store.resource.kind
    obj.apiVersion = store.apiVersion
    const key = objectKey(namespace, name)
    const existing = store.entries.get(key)
    const entry = makeEntry(key, namespace, name, obj, this.rv + 1)
    this.commit(store, existing === undefined ? "ADDED" : "MODIFIED", entry, existing)
    return ok(entry)
  }

  /**
   * Writes the object under `key` again, unchanged but at a new resourceVersion: one MODIFIED event whose
   * JSON costs a concatenation and whose line two copies (the split is made once per content and shared by
   * the rewrites), not a serialisation. `undefined` when there is no such object.
   */
  touch(store: ResourceStore, key: string): Entry | undefined {
    const existing = store.entries.get(key)
    if (existing === undefined) return undefined
    const [entry, line] = this.rewritten(existing, this.rv + 1)
    this.commit(store, "MODIFIED", entry, existing, line)
    return entry
  }

  /** `existing` unchanged at resourceVersion `rv`, with its MODIFIED line. */
  private rewritten(existing: Entry, rv: number): readonly [Entry, Uint8Array] {
    const rewrite = existing.rewrite ??= makeRewrite(existing)
    const version = String(rv)
    const obj = { ...existing.obj, metadata: { ...existing.metadata, resourceVersion: version } }
    const json = rewrite.head + "\"" + version + "\"" + rewrite.tail
    const entry = new Entry(existing.key, existing.namespace, existing.name, obj, json, existing.rvAt, rv)
    entry.rewrite = rewrite
    return [entry, rewriteLine(this.slab, rewrite, version)]
  }

  /**
   * Prepares `count` touches of `keys`, round-robin from the first, as if nothing else were written in
   * between: their entries and lines are built now, `commitPrepared` only publishes them.
   */
  prepareTouches(store: ResourceStore, keys: ReadonlyArray<string>, count: number): PreparedTouches {
    const latest = new Map<string, Entry>()
    const entries: Array<Entry> = []
    const prevs: Array<Entry> = []
    const lines: Array<Uint8Array> = []
    let rv = this.rv
    for (let i = 0, misses = 0; entries.length < count && misses < keys.length; i++) {
      const key = keys[i % keys.length]
      const prev = latest.get(key) ?? store.entries.get(key)
      if (prev === undefined) {
        misses++
        continue
      }
      misses = 0
      const [entry, line] = this.rewritten(prev, ++rv)
      latest.set(key, entry)
      entries.push(entry)
      prevs.push(prev)
      lines.push(line)
    }
    return { store, entries, prevs, lines }
  }

  /**
   * Publishes prepared touch `i`; when something else was written since it was prepared (another
   * resourceVersion, another state of its object), touches its object afresh instead.
   */
  commitPrepared(prepared: PreparedTouches, i: number): Entry | undefined {
    const entry = prepared.entries[i]
    const store = prepared.store
    const prev = prepared.prevs[i]
    if (entry.rv !== this.rv + 1 || store.entries.get(entry.key) !== prev) return this.touch(store, entry.key)
    this.commit(store, "MODIFIED", entry, prev, prepared.lines[i])
    return entry
  }

  private checkTypeMeta(store: ResourceStore, input: JsonObject): Status | undefined {
    if (input.apiVersion !== undefined && input.apiVersion !== "" && input.apiVersion !== store.apiVersion) {
      return badRequest(
        `the API version in the data (${
          String(input.apiVersion)
        }) does not match the expected API version (${store.apiVersion})`
      )
    }
    if (input.kind !== undefined && input.kind !== "" && input.kind !== store.resource.kind) {
      return badRequest(`the object provided is unrecognized (must be of type ${store.resource.kind})`)
    }
    return undefined
  }

  // ---------------------------------------------------------------------------------------------
  // reads
  // ---------------------------------------------------------------------------------------------

  /**
   * The keys of `store` whose state at `rv` differs from the current one, mapped to their state at `rv`
   * (`null`: absent then). Requires `historyStart <= rv`.
   */
  rollback(store: ResourceStore, rv: number): Map<string, Entry | null> | undefined {
    if (rv >= this.rv) return undefined
    const overrides = new Map<string, Entry | null>()
    const history = this.history
    for (let i = history.size - 1; i >= 0; i--) {
      const event = history.at(i)
      if (event.rv <= rv) break
      if (event.store === store) overrides.set(event.entry.key, event.prev ?? null)
    }
    return overrides.size === 0 ? undefined : overrides
  }

  /**
   * One page of the state at `rv` (which must be servable), from `startKey` (inclusive), sorted by key.
   * `limit <= 0` means everything.
   */
  listPage(
    store: ResourceStore,
    rv: number,
    selection: Selection,
    limit: number,
    startKey: string | undefined
  ): ListPageResult {
    const overrides = this.rollback(store, rv)
    const keys = store.keys()
    let extra: Array<string> = []
    if (overrides !== undefined) {
      for (const [key, entry] of overrides) if (entry !== null && !store.entries.has(key)) extra.push(key)
      extra = extra.sort(compareKeys)
    }
    const prefix = selection.namespace === undefined ? undefined : selection.namespace + "/"
    let from = startKey ?? ""
    if (prefix !== undefined && from < prefix) from = prefix
    let i = lowerBound(keys, from)
    let j = extra.length === 0 ? 0 : lowerBound(extra, from)
    const filtered = selection.label !== undefined || selection.field !== undefined
    const items: Array<Entry> = []
    let remaining = 0
    let more = false
    for (;;) {
      let key: string
      if (i < keys.length && (j >= extra.length || keys[i] < extra[j])) key = keys[i++]
      else if (j < extra.length) key = extra[j++]
      else break
      if (prefix !== undefined && !key.startsWith(prefix)) break
      const entry = overrides !== undefined && overrides.has(key) ? overrides.get(key)! : store.entries.get(key)
      if (entry === undefined || entry === null || !matchesSelection(selection, entry)) continue
      if (limit > 0 && items.length >= limit) {
        more = true
        if (filtered) break
        if (overrides === undefined) {
          // every remaining key is an item: count them without looking
          const end = prefix === undefined ? keys.length : lowerBound(keys, selection.namespace + "0")
          remaining = end - i + 1
          break
        }
        remaining++
        continue
      }
      items.push(entry)
    }
    return {
      items,
      rv,
      lastKey: more ? items[items.length - 1].key : undefined,
      remaining: more && !filtered ? remaining : undefined
    }
  }

  /** Events after `rv` for `store`, oldest first. Requires `historyStart <= rv`. */
  eventsAfter(store: ResourceStore, rv: number): Array<HistoryEvent> {
    const out: Array<HistoryEvent> = []
    const history = this.history
    for (let i = history.firstAfter(rv); i < history.size; i++) {
      const event = history.at(i)
      if (event.store === store) out.push(event)
    }
    return out
  }
}

// -------------------------------------------------------------------------------------------------
// nesting
// -------------------------------------------------------------------------------------------------

/**
 * The deepest nesting of objects and arrays accepted in a request body or a patched object (the top-level
 * object is at depth 1). Real objects stay far below it; it keeps every recursive walk of a stored object
 * (copies, patches, comparisons, serialisation) well within the stack.
 *
 * @internal
 */
export const maxJsonDepth = 1000

const QUOTE = 0x22
const BACKSLASH = 0x5c

/**
 * Whether the JSON text `text` nests objects and arrays deeper than `max`, in one scan of its characters
 * (no recursion, no parse): brackets inside strings do not count. `text` need not be valid JSON.
 *
 * @internal
 */
export const jsonTextTooDeep = (text: string, max: number): boolean => {
  // a text shorter than the bound cannot be deeper
  if (text.length <= max) return false
  let depth = 0
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (c === QUOTE) {
      // the closing quote is the next one not escaped by an odd number of backslashes
      let end = text.indexOf("\"", i + 1)
      for (;;) {
        if (end < 0) return false
        let k = end - 1
        while (text.charCodeAt(k) === BACKSLASH) k--
        if ((end - 1 - k) % 2 === 0) break
        end = text.indexOf("\"", end + 1)
      }
      i = end
    } else if (c === 0x7b || c === 0x5b) {
      if (++depth > max) return true
    } else if (c === 0x7d || c === 0x5d) {
      depth--
    }
  }
  return false
}

/**
 * Whether the JSON value `value` nests objects and arrays deeper than `max`, walked with an explicit stack
 * (no recursion).
 *
 * @internal
 */
export const jsonValueTooDeep = (value: unknown, max: number): boolean => {
  const values: Array<unknown> = [value]
  const depths: Array<number> = [1]
  while (values.length > 0) {
    const current = values.pop()
    const depth = depths.pop()!
    if (typeof current !== "object" || current === null) continue
    if (depth > max) return true
    const children = Array.isArray(current) ? current : Object.values(current)
    for (let i = 0; i < children.length; i++) {
      const child: unknown = children[i]
      if (typeof child === "object" && child !== null) {
        values.push(child)
        depths.push(depth + 1)
      }
    }
  }
  return false
}

/** Structural equality of JSON values (key order ignored). @internal */
export const jsonEqual = (a: unknown, b: unknown): boolean => {
  if (a === b) return true
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false
    for (let i = 0; i < a.length; i++) if (!jsonEqual(a[i], b[i])) return false
    return true
  }
  if (Array.isArray(b)) return false
  const ka = Object.keys(a)
  if (ka.length !== Object.keys(b).length) return false
  for (const k of ka) {
    if (!Object.prototype.hasOwnProperty.call(b, k)) return false
    if (!jsonEqual((a as JsonObject)[k], (b as JsonObject)[k])) return false
  }
  return true
}

const hasFinalizers = (metadata: JsonObject): boolean =>
  Array.isArray(metadata.finalizers) && metadata.finalizers.length > 0

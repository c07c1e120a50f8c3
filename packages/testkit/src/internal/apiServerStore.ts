/**
 * The embedded API server's storage: the in-memory API store of the library (`effect-informers/ApiStore`:
 * the resourceVersion counter, the bounded history, snapshots rebuilt from it, continue tokens, the watch
 * cache's selector rules), the same one the library's `FakeListerWatcher` runs on, with what the server
 * adds: entries that carry their JSON, the API server's write rules (create, update, delete with
 * finalizers, generation), and the bulk paths of the benchmarks.
 *
 * Invariants (besides the store's):
 * - An `Entry` is immutable once published; its JSON is `head + "\"" + rv + "\"" + tail`, so the same
 *   object at another resourceVersion (a deletion, a selector exit) costs a concatenation, not a
 *   serialisation.
 * - An event's wire lines are built once, the first time a watcher needs them, and shared by every watcher.
 *
 * @internal
 */
import * as ApiStore from "effect-informers/ApiStore"
import type * as Client from "effect-informers/Client"
import type * as LabelSelector from "effect-informers/LabelSelector"
import type { Resource } from "effect-informers/Resource"
import { apiVersion as resourceApiVersion, groupResource } from "effect-informers/Resource"
import type { Status } from "effect-informers/Wire"
import { failureStatus } from "effect-informers/Wire"
import * as Result from "effect/Result"
import type { Writer } from "./apiServerApply.js"
import { recordUpdate } from "./apiServerApply.js"
import { eventsTwin } from "./apiServerEvents.js"
import { decodeError, decodeFailure, specErrors } from "./apiServerValidation.js"
import type { Watcher } from "./apiServerWatch.js"
import type { JsonObject } from "./json.js"
import { isObject } from "./json.js"

/** @internal */
export type EventType = ApiStore.EventType

/**
 * One stored version of one object. `json` is its serialisation; `rvAt` is the offset in `json` of the
 * quoted `metadata.resourceVersion` value, so the same object at another resourceVersion (a deletion, a
 * selector exit) costs two slices and a concatenation, not a serialisation.
 *
 * @internal
 */
export class Entry implements ApiStore.Entry {
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
export const objectKey = ApiStore.objectKey

/** @internal */
export const compareKeys = ApiStore.compareKeys

// -------------------------------------------------------------------------------------------------
// resources
// -------------------------------------------------------------------------------------------------

/**
 * The objects of one resource (all its served versions), with keys kept sorted the way etcd orders them:
 * the store's collection, with the resource's names.
 *
 * @internal
 */
export class ResourceStore extends ApiStore.Collection<Entry> {
  /** Only the server's watchers are registered here. */
  declare readonly watchers: Set<Watcher>
  readonly apiVersion: string
  readonly groupResource: string
  readonly qualified: string
  readonly traits: ApiStore.ResourceTraits
  /**
   * The collection serving the same objects through another API (`v1` and `events.k8s.io/v1` Events),
   * and the conversion to its form: every change of this one is written to it too.
   */
  twin: { readonly store: ResourceStore; readonly convert: (obj: JsonObject) => JsonObject } | undefined = undefined

  constructor(readonly resource: Resource, status?: boolean | undefined) {
    super(ApiStore.selectableFields(resource))
    this.apiVersion = resourceApiVersion(resource)
    this.groupResource = groupResource(resource)
    this.qualified = this.groupResource
    this.traits = ApiStore.resourceTraits(resource, status)
  }
}

/**
 * A DELETE's propagation policy (`DeleteOptions.propagationPolicy`).
 *
 * @internal
 */
export type PropagationPolicy = Client.PropagationPolicy

// -------------------------------------------------------------------------------------------------
// history
// -------------------------------------------------------------------------------------------------

/** @internal */
export const encode = (text: string): Uint8Array => Buffer.from(text, "utf8")

/** @internal */
export type HistoryEvent = ApiStore.HistoryEvent<Entry>

/** The event as it happened, encoded once and shared by every watcher. @internal */
export const eventLine = (event: HistoryEvent): Uint8Array =>
  event.line ??= encode(`{"type":"${event.type}","object":${event.entry.json}}\n`)

/** An update seen by a watcher whose selector the object just entered. @internal */
export const enteredLine = (event: HistoryEvent): Uint8Array =>
  event.enteredLine ??= encode(`{"type":"ADDED","object":${event.entry.json}}\n`)

/** An update seen by a watcher whose selector the object just left: the previous state, deleted. @internal */
export const leftLine = (event: HistoryEvent): Uint8Array =>
  event.leftLine ??= encode(`{"type":"DELETED","object":${event.prev!.jsonAt(event.rv)}}\n`)

// -------------------------------------------------------------------------------------------------
// statuses
// -------------------------------------------------------------------------------------------------

/** @internal */
export const notFound = (store: ResourceStore, name: string): Status => ApiStore.notFound(store.resource, name)

/** @internal */
export const alreadyExists = (store: ResourceStore, name: string): Status =>
  ApiStore.alreadyExists(store.resource, name)

/** @internal */
export const conflict = (store: ResourceStore, name: string, message: string): Status =>
  ApiStore.conflict(store.resource, name, message)

/** @internal */
export const modifiedConflict = (store: ResourceStore, name: string): Status =>
  ApiStore.modifiedConflict(store.resource, name)

/** @internal */
export const badRequest = ApiStore.badRequest

/** @internal */
export const resourceNotFound: Status = ApiStore.resourceNotFound

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

/** @internal */
export type FieldError = ApiStore.FieldError

/** @internal */
export const invalid = ApiStore.invalid

/** @internal */
export const expired = ApiStore.expired

/** 413, as kube-apiserver answers a request body over its limit. @internal */
export const requestEntityTooLarge = (message: string): Status =>
  failureStatus(413, "RequestEntityTooLarge", `Request entity too large: ${message}`)

/** @internal */
export const tooLargeResourceVersion = ApiStore.tooLargeResourceVersion

/** @internal */
export const inconsistentContinue = ApiStore.inconsistentContinue

// -------------------------------------------------------------------------------------------------
// validation
// -------------------------------------------------------------------------------------------------

/** @internal */
export const validateName = (store: ResourceStore, name: string): FieldError | undefined =>
  ApiStore.validateName(store.resource, name)

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
export type Selection = ApiStore.Selection

/** @internal */
export const matchesSelection = ApiStore.matchesSelection

/** @internal */
export type ListPageResult = ApiStore.ListPageResult<Entry>

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

/**
 * What a write may change:
 * - `"object"`: the object, as a PUT or PATCH of it over HTTP (the stored status is kept where the
 *   resource has a status subresource; a create resets the status);
 * - `"status"`: only the status (the `status` subresource);
 * - `"finalize"`: only a namespace's `spec.finalizers` (the `finalize` subresource);
 * - `"all"`: everything given, status included (the programmatic writes of the server's owner).
 *
 * @internal
 */
export type WriteScope = "object" | "status" | "finalize" | "all"

/** @internal */
export interface DeleteOptions {
  readonly propagationPolicy?: PropagationPolicy | undefined
  /** Deprecated by Kubernetes for `propagationPolicy`; `true` is `Orphan`, `false` `Background`. */
  readonly orphanDependents?: boolean | undefined
}

/** A change published by the store, for the garbage collector. @internal */
export type CommitObserver = (store: ResourceStore, type: EventType, entry: Entry, prev: Entry | undefined) => void

/** The finalizer of a Foreground deletion: the garbage collector removes it once the dependents are gone. @internal */
export const foregroundFinalizer = "foregroundDeletion"

/** The finalizer of an Orphan deletion: the garbage collector removes it once the dependents are orphaned. @internal */
export const orphanFinalizer = "orphan"

/** The `spec.finalizers` entry of a namespace, removed once its content is gone. @internal */
export const namespaceFinalizer = "kubernetes"

/** The strings of `metadata.finalizers` (or of any list of finalizers). @internal */
export const finalizersOf = ApiStore.finalizersOf

/** The status a create over HTTP starts with: kube-apiserver's strategies reset it. */
const initialStatus = (store: ResourceStore, input: JsonObject): unknown => {
  switch (store.groupResource) {
    case "nodes":
      return input.status
    case "namespaces":
      return { phase: "Active" }
    case "pods":
    case "persistentvolumes":
    case "persistentvolumeclaims":
      return { phase: "Pending" }
    default:
      return undefined
  }
}

/** The label kube-apiserver sets on every namespace, to its name (`kubernetes.io/metadata.name`). @internal */
export const namespaceNameLabel = "kubernetes.io/metadata.name"

/**
 * kube-apiserver's defaults for the fields a printer or a client reads back, set on every write: a
 * Secret's `type` is `Opaque` when not set, a Service's `spec.type` is `ClusterIP`, a Namespace's
 * `kubernetes.io/metadata.name` label is its name.
 */
const applyDefaults = (store: ResourceStore, obj: JsonObject): void => {
  const unset = (value: unknown) => value === undefined || value === null || value === ""
  if (store.groupResource === "namespaces") {
    const metadata = obj.metadata as JsonObject
    const labels = isObject(metadata.labels) ? metadata.labels : {}
    if (labels[namespaceNameLabel] !== metadata.name) {
      metadata.labels = { ...labels, [namespaceNameLabel]: metadata.name }
    }
  }
  if (store.groupResource === "secrets" && unset(obj.type)) obj.type = "Opaque"
  if (store.groupResource === "services" && isObject(obj.spec) && unset(obj.spec.type)) {
    obj.spec = { ...obj.spec, type: "ClusterIP" }
  }
}

/**
 * The finalizers a DELETE leaves on the object, as kube-apiserver's `deletionFinalizersForGarbageCollection`:
 * an explicit policy wins, then a garbage-collection finalizer already there, then the resource's default.
 */
const deletionFinalizers = (
  traits: ApiStore.ResourceTraits,
  finalizers: ReadonlyArray<string>,
  options: DeleteOptions
): ReadonlyArray<string> => {
  let orphan: boolean
  let foreground: boolean
  if (options.orphanDependents !== undefined) {
    orphan = options.orphanDependents
    foreground = false
  } else if (options.propagationPolicy !== undefined) {
    orphan = options.propagationPolicy === "Orphan"
    foreground = options.propagationPolicy === "Foreground"
  } else {
    const first = finalizers.find((f) => f === orphanFinalizer || f === foregroundFinalizer)
    orphan = first === undefined ? traits.defaultPropagation === "Orphan" : first === orphanFinalizer
    foreground = first === foregroundFinalizer
  }
  const out = finalizers.filter((f) => f !== orphanFinalizer && f !== foregroundFinalizer)
  if (orphan) out.push(orphanFinalizer)
  if (foreground) out.push(foregroundFinalizer)
  return out
}

const sameSet = (a: ReadonlyArray<string>, b: ReadonlyArray<string>): boolean => {
  const sa = new Set(a)
  const sb = new Set(b)
  return sa.size === sb.size && [...sa].every((x) => sb.has(x))
}

const details = (store: ResourceStore, name: string): Status["details"] =>
  store.resource.group === ""
    ? { name, kind: store.resource.resource }
    : { name, group: store.resource.group, kind: store.resource.resource }

/** 403, as the NamespaceLifecycle admission answers a create in a terminating namespace. */
const namespaceTerminating = (store: ResourceStore, name: string, namespace: string): Status =>
  failureStatus(
    403,
    "Forbidden",
    `${store.qualified} "${name}" is forbidden: unable to create new content in namespace ${namespace} because it is being terminated`,
    {
      ...details(store, name),
      causes: [{
        reason: "NamespaceTerminating",
        message: `namespace ${namespace} is being terminated`,
        field: "metadata.namespace"
      }] as unknown as NonNullable<Status["details"]>["causes"]
    }
  )

/**
 * The namespaces kube-apiserver's NamespaceLifecycle admission never lets be deleted.
 *
 * @internal
 */
export const immortalNamespaces: ReadonlySet<string> = new Set(["default", "kube-system", "kube-public"])

/** 403, as the NamespaceLifecycle admission answers the deletion of an immortal namespace. */
const immortal = (store: ResourceStore, name: string): Status =>
  failureStatus(403, "Forbidden", `namespaces "${name}" is forbidden: this namespace may not be deleted`, {
    ...details(store, name)
  })

/** The field errors of `metadata.ownerReferences`, as kube-apiserver's `ValidateOwnerReferences`. */
const validateOwnerReferences = (value: unknown): Array<FieldError> => {
  if (value === undefined || value === null) return []
  if (!Array.isArray(value)) {
    return [{
      reason: "FieldValueInvalid",
      field: "metadata.ownerReferences",
      message: "Invalid value: must be a list"
    }]
  }
  const errors: Array<FieldError> = []
  const controllers: Array<string> = []
  for (const ref of value) {
    const r: JsonObject = isObject(ref) ? ref : {}
    for (const [field, what] of [["apiVersion", "version"], ["kind", "kind"], ["name", "name"], ["uid", "uid"]]) {
      const v = r[field]
      if (typeof v !== "string" || v === "") {
        errors.push({
          reason: "FieldValueInvalid",
          field: `metadata.ownerReferences.${field}`,
          message: `Invalid value: ${JSON.stringify(typeof v === "string" ? v : "")}: ${what} must not be empty`
        })
      }
    }
    if (r.controller === true) controllers.push(String(r.name))
  }
  if (controllers.length > 1) {
    errors.push({
      reason: "FieldValueInvalid",
      field: "metadata.ownerReferences",
      message: `Invalid value: ${
        JSON.stringify(value)
      }: Only one reference can have Controller set to true. Found "true" in references for ${
        controllers.join(" and ")
      }`
    })
  }
  return errors
}

/** @internal */
export class Store extends ApiStore.Store<Entry> {
  readonly stores = new Map<string, ResourceStore>()
  readonly counters: Counters = { eventsSent: 0, bytesSent: 0 }
  /** Told of every change once it is published (the garbage collector). */
  observer: CommitObserver | undefined = undefined
  private readonly slab = new Slab()

  /**
   * `statusSubresource`: whether a resource (by group-resource) has a status subresource, where it is not
   * the default of `resourceTraits`.
   */
  constructor(
    historySize: number,
    resources: Iterable<Resource>,
    statusSubresource?: ReadonlyMap<string, boolean> | undefined
  ) {
    super(historySize)
    for (const resource of resources) {
      const gr = groupResource(resource)
      if (!this.stores.has(gr)) this.stores.set(gr, new ResourceStore(resource, statusSubresource?.get(gr)))
    }
    for (const rs of this.stores.values()) {
      const twin = eventsTwin(rs.groupResource)
      const store = twin === undefined ? undefined : this.stores.get(twin.groupResource)
      if (twin !== undefined && store !== undefined) rs.twin = { store, convert: twin.convert }
    }
  }

  storeOf(resource: Resource<unknown>): ResourceStore | undefined {
    return this.stores.get(groupResource(resource))
  }

  override commit(
    collection: ApiStore.Collection<Entry>,
    type: EventType,
    entry: Entry,
    prev: Entry | undefined,
    line?: Uint8Array | undefined,
    hidden = false
  ): HistoryEvent {
    const event = super.commit(collection, type, entry, prev, line, hidden)
    if (this.observer !== undefined) this.observer(collection as ResourceStore, type, entry, prev)
    // an Event is served by two APIs: the other one's collection changes too, at the same resourceVersion
    const twin = (collection as ResourceStore).twin
    if (twin !== undefined) {
      const rs = twin.store
      const mirrored = makeEntry(entry.key, entry.namespace, entry.name, twin.convert(entry.obj), entry.rv)
      const mirroredPrev = rs.entries.get(entry.key)
      super.commit(rs, type, mirrored, mirroredPrev, undefined, hidden)
      if (this.observer !== undefined) this.observer(rs, type, mirrored, mirroredPrev)
    }
    return event
  }

  /**
   * kube-apiserver's NamespaceLifecycle admission of a create in `namespace`: 404 when the namespace does
   * not exist, 403 when it is being deleted. `name` is the object's (`Unknown` for a `generateName`, as the
   * admission runs before the name is generated).
   */
  private admitCreate(store: ResourceStore, namespace: string, name: string): Status | undefined {
    const namespaces = this.stores.get("namespaces")
    if (namespaces === undefined) return undefined
    const entry = namespaces.entries.get(namespace)
    if (entry === undefined) return notFound(namespaces, namespace)
    if (entry.metadata.deletionTimestamp !== undefined) {
      return namespaceTerminating(store, name === "" ? "Unknown" : name, namespace)
    }
    return undefined
  }

  // ---------------------------------------------------------------------------------------------
  // writes
  // ---------------------------------------------------------------------------------------------

  /**
   * Creates an object. With a `writer`, its `managedFields` record the write (server-side apply's
   * ownership); without one, they are kept as given.
   */
  create(
    store: ResourceStore,
    input: unknown,
    pathNamespace: string | undefined,
    ctx: WriteContext,
    scope: "object" | "all" = "all",
    writer?: Writer
  ): Result.Result<Entry, Status> {
    const resource = store.resource
    if (!isObject(input)) return Result.fail(badRequest("the body of the request was not a JSON object"))
    const check = this.checkTypeMeta(store, input)
    if (check !== undefined) return Result.fail(check)
    const undecodable = decodeError(store.groupResource, input)
    if (undecodable !== undefined) return Result.fail(decodeFailure(resource.kind, resource.version, undecodable))
    const meta: JsonObject = isObject(input.metadata) ? { ...input.metadata } : {}
    let namespace = ""
    if (resource.namespaced) {
      const bodyNamespace = typeof meta.namespace === "string" ? meta.namespace : ""
      if (pathNamespace === undefined || pathNamespace === "") {
        if (bodyNamespace === "") return Result.fail(methodNotAllowed)
        namespace = bodyNamespace
      } else {
        if (bodyNamespace !== "" && bodyNamespace !== pathNamespace) {
          return Result.fail(
            badRequest("the namespace of the provided object does not match the namespace sent on the request")
          )
        }
        namespace = pathNamespace
      }
    } else {
      delete meta.namespace
    }
    let name = typeof meta.name === "string" ? meta.name : ""
    if (resource.namespaced) {
      const refused = this.admitCreate(store, namespace, name)
      if (refused !== undefined) return Result.fail(refused)
    }
    if (name === "") {
      const generateName = typeof meta.generateName === "string" ? meta.generateName : ""
      if (generateName === "") {
        return Result.fail(invalid(resource.kind, resource.group, "", [{
          reason: "FieldValueRequired",
          field: "metadata.name",
          message: "Required value: name or generateName is required"
        }]))
      }
      name = generateName + ctx.suffix()
    }
    const nameError = validateName(store, name)
    if (nameError !== undefined) return Result.fail(invalid(resource.kind, resource.group, name, [nameError]))
    const ownerErrors = [...validateOwnerReferences(meta.ownerReferences), ...specErrors(store.groupResource, input)]
    if (ownerErrors.length > 0) return Result.fail(invalid(resource.kind, resource.group, name, ownerErrors))
    if (typeof meta.resourceVersion === "string" && meta.resourceVersion !== "") {
      return Result.fail(internalError("resourceVersion should not be set on objects to be created"))
    }
    const key = objectKey(namespace, name)
    if (store.entries.has(key)) return Result.fail(alreadyExists(store, name))
    const metadata: JsonObject = {
      name,
      ...meta,
      ...(resource.namespaced ? { namespace } : {}),
      uid: ctx.uid(),
      resourceVersion: "",
      ...(store.traits.tracksGeneration ? { generation: 1 } : {}),
      creationTimestamp: ApiStore.formatTime(ctx.now)
    }
    metadata.name = name
    delete metadata.deletionTimestamp
    delete metadata.deletionGracePeriodSeconds
    if (!store.traits.tracksGeneration) delete metadata.generation
    const obj: JsonObject = { kind: resource.kind, apiVersion: store.apiVersion, ...input, metadata }
    obj.kind = resource.kind
    obj.apiVersion = store.apiVersion
    if (scope === "object" && store.traits.statusSubresource) {
      const status = initialStatus(store, input)
      if (status === undefined) delete obj.status
      else obj.status = status
    }
    if (store.groupResource === "namespaces") {
      // kube-apiserver requires the namespace controller's finalizer on every namespace
      const spec: JsonObject = isObject(obj.spec) ? { ...obj.spec } : {}
      const finalizers = finalizersOf(spec.finalizers)
      if (!finalizers.includes(namespaceFinalizer)) spec.finalizers = [...finalizers, namespaceFinalizer]
      obj.spec = spec
      if (obj.status === undefined) obj.status = { phase: "Active" }
    }
    applyDefaults(store, obj)
    if (writer !== undefined) recordUpdate(undefined, obj, store.apiVersion, resource.kind, writer)
    const entry = makeEntry(key, namespace, name, obj, this.rv + 1)
    this.commit(store, "ADDED", entry, undefined)
    return Result.succeed(entry)
  }

  /**
   * Replaces an object (or, with `scope`, its status or its namespace finalizers).
   * `input.metadata.resourceVersion`, when set, must be the current one (optimistic concurrency). An
   * update that changes nothing writes nothing and returns the current entry. `writer`: as for
   * `create`.
   */
  update(
    store: ResourceStore,
    input: unknown,
    pathNamespace: string | undefined,
    pathName: string | undefined,
    scope: WriteScope = "all",
    writer?: Writer
  ): Result.Result<Entry, Status> {
    const resource = store.resource
    if (!isObject(input)) return Result.fail(badRequest("the body of the request was not a JSON object"))
    const check = this.checkTypeMeta(store, input)
    if (check !== undefined) return Result.fail(check)
    if (scope === "object" || scope === "all") {
      const undecodable = decodeError(store.groupResource, input)
      if (undecodable !== undefined) return Result.fail(decodeFailure(resource.kind, resource.version, undecodable))
    }
    const meta: JsonObject = isObject(input.metadata) ? { ...input.metadata } : {}
    const bodyName = typeof meta.name === "string" ? meta.name : ""
    const name = pathName ?? bodyName
    if (name === "") {
      return Result.fail(invalid(resource.kind, resource.group, "", [{
        reason: "FieldValueRequired",
        field: "metadata.name",
        message: "Required value: name is required"
      }]))
    }
    if (bodyName !== "" && bodyName !== name) {
      return Result.fail(
        badRequest(`the name of the object (${bodyName}) does not match the name on the URL (${name})`)
      )
    }
    let namespace = ""
    if (resource.namespaced) {
      const bodyNamespace = typeof meta.namespace === "string" ? meta.namespace : ""
      namespace = pathNamespace ?? bodyNamespace
      if (bodyNamespace !== "" && bodyNamespace !== namespace) {
        return Result.fail(
          badRequest("the namespace of the provided object does not match the namespace sent on the request")
        )
      }
    }
    const key = objectKey(namespace, name)
    const existing = store.entries.get(key)
    if (existing === undefined) return Result.fail(notFound(store, name))
    const rv = typeof meta.resourceVersion === "string" ? meta.resourceVersion : ""
    if (rv !== "" && rv !== String(existing.rv)) return Result.fail(modifiedConflict(store, name))
    const old = existing.metadata
    if (typeof meta.uid === "string" && meta.uid !== "" && meta.uid !== old.uid) {
      return Result.fail(ApiStore.preconditionFailed(store.resource, name, "UID", meta.uid, old.uid))
    }
    return this.replace(store, existing, input, meta, scope, writer)
  }

  /**
   * Writes `input` (already checked) over `existing`, as `scope` allows, keeping the system fields:
   * generation per the resource's rules, no finalizer added to an object being deleted, the object gone
   * once a deletion's last finalizer is, nothing written when nothing changes. `writer`: as for `create`.
   */
  replace(
    store: ResourceStore,
    existing: Entry,
    input: JsonObject,
    meta: JsonObject,
    scope: WriteScope = "all",
    writer?: Writer
  ): Result.Result<Entry, Status> {
    const traits = store.traits
    const old = existing.metadata
    let obj: JsonObject
    let metadata: JsonObject
    if (scope === "status" || scope === "finalize") {
      // everything but the status (or the namespace's finalizers) stays as stored, metadata included
      metadata = { ...old }
      obj = { ...existing.obj, metadata }
      if (scope === "status") {
        if (input.status === undefined) delete obj.status
        else obj.status = input.status
      } else {
        const spec: JsonObject = isObject(existing.obj.spec) ? { ...existing.obj.spec } : {}
        const finalizers = isObject(input.spec) ? input.spec.finalizers : undefined
        if (finalizers === undefined || finalizers === null) delete spec.finalizers
        else spec.finalizers = finalizers
        obj.spec = spec
      }
    } else {
      metadata = { ...meta }
      metadata.name = existing.name
      if (store.resource.namespaced) metadata.namespace = existing.namespace
      else delete metadata.namespace
      metadata.uid = old.uid
      metadata.creationTimestamp = old.creationTimestamp
      // an update can never set, remove or change a deletion timestamp or its grace period
      if (old.deletionTimestamp !== undefined) metadata.deletionTimestamp = old.deletionTimestamp
      else delete metadata.deletionTimestamp
      if (old.deletionGracePeriodSeconds !== undefined) {
        metadata.deletionGracePeriodSeconds = old.deletionGracePeriodSeconds
      } else delete metadata.deletionGracePeriodSeconds
      if (old.generation !== undefined) metadata.generation = old.generation
      else delete metadata.generation
      delete metadata.generateName
      if (old.generateName !== undefined) metadata.generateName = old.generateName
      const undecodable = decodeError(store.groupResource, input)
      if (undecodable !== undefined) {
        return Result.fail(decodeFailure(store.resource.kind, store.resource.version, undecodable))
      }
      const errors = [...validateOwnerReferences(metadata.ownerReferences), ...specErrors(store.groupResource, input)]
      if (old.deletionTimestamp !== undefined) {
        const added = ApiStore.addedFinalizers(old.finalizers, metadata.finalizers)
        if (added !== undefined) errors.push(added)
      }
      if (errors.length > 0) {
        return Result.fail(invalid(store.resource.kind, store.resource.group, existing.name, errors))
      }
      obj = { ...input, metadata }
      if (scope === "object" && traits.statusSubresource) {
        if (existing.obj.status === undefined) delete obj.status
        else obj.status = existing.obj.status
      }
    }
    obj.kind = store.resource.kind
    obj.apiVersion = store.apiVersion
    applyDefaults(store, obj)
    // the fields this write changed become its manager's (before the system fields move)
    if (writer !== undefined) recordUpdate(existing.obj, obj, store.apiVersion, store.resource.kind, writer)
    if (
      scope !== "status" && scope !== "finalize" && typeof old.generation === "number" &&
      ApiStore.generationChanges(traits, existing.obj, obj)
    ) {
      metadata.generation = old.generation + 1
    }
    // a deleting object whose last finalizer is gone goes away
    if (metadata.deletionTimestamp !== undefined && finalizersOf(metadata.finalizers).length === 0) {
      const entry = makeEntry(existing.key, existing.namespace, existing.name, obj, this.rv + 1)
      this.commit(store, "DELETED", entry, existing)
      return Result.succeed(entry)
    }
    const candidate = makeEntry(existing.key, existing.namespace, existing.name, obj, this.rv + 1)
    if (candidate.sameContent(existing) || ApiStore.sameObject(obj, existing.obj)) {
      // nothing changed: the API server writes nothing and returns the current object
      return Result.succeed(existing)
    }
    this.commit(store, "MODIFIED", candidate, existing)
    return Result.succeed(candidate)
  }

  /**
   * Deletes an object, as kube-apiserver's registry: preconditions first; the propagation policy decides
   * the garbage-collection finalizers (`orphan`, `foregroundDeletion`); with finalizers the object only
   * gets its `deletionTimestamp` (generation + 1 the first time) and stays until they are gone. A
   * namespace is first marked `Terminating`; its content is the namespace controller's. `default`,
   * `kube-system` and `kube-public` may not be deleted (403, as the NamespaceLifecycle admission answers).
   */
  delete(
    store: ResourceStore,
    namespace: string,
    name: string,
    preconditions: Preconditions,
    ctx: WriteContext,
    options: DeleteOptions = {}
  ): Result.Result<Entry, Status> {
    if (store.groupResource === "namespaces" && immortalNamespaces.has(name)) return Result.fail(immortal(store, name))
    const existing = store.entries.get(objectKey(namespace, name))
    if (existing === undefined) return Result.fail(notFound(store, name))
    const old = existing.metadata
    if (preconditions.uid !== undefined && preconditions.uid !== old.uid) {
      return Result.fail(ApiStore.preconditionFailed(store.resource, name, "UID", preconditions.uid, old.uid))
    }
    if (preconditions.resourceVersion !== undefined && preconditions.resourceVersion !== String(existing.rv)) {
      return Result.fail(
        ApiStore.preconditionFailed(store.resource, name, "ResourceVersion", preconditions.resourceVersion, existing.rv)
      )
    }
    const current = finalizersOf(old.finalizers)
    const finalizers = deletionFinalizers(store.traits, current, options)
    const metadata: JsonObject = { ...old }
    if (!sameSet(current, finalizers)) metadata.finalizers = finalizers
    const obj: JsonObject = { ...existing.obj, metadata }
    if (store.groupResource === "namespaces") {
      const specFinalizers = finalizersOf(isObject(existing.obj.spec) ? existing.obj.spec.finalizers : undefined)
      if (old.deletionTimestamp === undefined) {
        // the first DELETE of a namespace marks it Terminating: the namespace controller empties it
        metadata.deletionTimestamp = ApiStore.formatTime(ctx.now)
        obj.status = { ...(isObject(existing.obj.status) ? existing.obj.status : {}), phase: "Terminating" }
        return Result.succeed(this.modify(store, existing, obj))
      }
      if (specFinalizers.length > 0) return Result.succeed(this.modify(store, existing, obj))
    }
    if (finalizers.length > 0) {
      if (old.deletionTimestamp === undefined) {
        metadata.deletionTimestamp = ApiStore.formatTime(ctx.now)
        if (typeof old.generation === "number" && old.generation > 0) metadata.generation = old.generation + 1
      }
      metadata.deletionGracePeriodSeconds = 0
      return Result.succeed(this.modify(store, existing, obj))
    }
    const entry = existing.at(this.rv + 1)
    this.commit(store, "DELETED", entry, existing)
    return Result.succeed(entry)
  }

  /** Writes `obj` over `existing` as a MODIFIED event, or nothing when it is the same. */
  private modify(store: ResourceStore, existing: Entry, obj: JsonObject): Entry {
    if (ApiStore.sameObject(obj, existing.obj)) return existing
    const entry = makeEntry(existing.key, existing.namespace, existing.name, obj, this.rv + 1)
    this.commit(store, "MODIFIED", entry, existing)
    return entry
  }

  // ---------------------------------------------------------------------------------------------
  // bulk fast paths (benchmarks, large seeds)
  // ---------------------------------------------------------------------------------------------

  /**
   * Stores `input` as given (uid, creationTimestamp, generation... are kept, only kind, apiVersion and
   * resourceVersion are set), without the checks of `create`: one ADDED event, or MODIFIED when the key
   * exists. For seeding large, deterministic states quickly.
   */
  load(store: ResourceStore, input: unknown): Result.Result<Entry, Status> {
    if (!isObject(input) || !isObject(input.metadata)) {
      return Result.fail(badRequest("the object to load has no metadata"))
    }
    const check = this.checkTypeMeta(store, input)
    if (check !== undefined) return Result.fail(check)
    const metadata: JsonObject = { ...input.metadata }
    const name = typeof metadata.name === "string" ? metadata.name : ""
    const namespace = store.resource.namespaced && typeof metadata.namespace === "string" ? metadata.namespace : ""
    if (name === "" || (store.resource.namespaced && namespace === "")) {
      return Result.fail(badRequest("the object to load needs metadata.name (and metadata.namespace when namespaced)"))
    }
    if (!store.resource.namespaced) delete metadata.namespace
    const obj: JsonObject = { kind: store.resource.kind, apiVersion: store.apiVersion, ...input, metadata }
    obj.kind = store.resource.kind
    obj.apiVersion = store.apiVersion
    const key = objectKey(namespace, name)
    const existing = store.entries.get(key)
    const entry = makeEntry(key, namespace, name, obj, this.rv + 1)
    this.commit(store, existing === undefined ? "ADDED" : "MODIFIED", entry, existing)
    return Result.succeed(entry)
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

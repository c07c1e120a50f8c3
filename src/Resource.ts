/**
 * Resource descriptors: how a collection is addressed on the wire (group, version, plural resource,
 * scope) and what its objects are typed as. The catalog covers the common built-in kinds with
 * `@kubernetes/client-node` model types (as the JSON they are on the wire, see `KubeObject.Json`);
 * `make` describes anything else, CRDs included, with plain JSON objects; `custom` describes a custom
 * resource whose objects an Effect `Schema` decodes where they enter; `metadataOnly` describes the
 * metadata (`PartialObjectMetadata`) of any resource.
 *
 * @since 0.1.0
 */
import type {
  CoreV1Event,
  EventsV1Event,
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
import * as Exit from "effect/Exit"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import type * as SchemaAST from "effect/SchemaAST"
import * as SchemaIssue from "effect/SchemaIssue"
import { oneLine } from "./internal/text.js"
import type { Json, KubeObject } from "./KubeObject.js"
import * as Metadata from "./Metadata.js"
import type { DecodeFailure } from "./Wire.js"

/**
 * @since 0.1.0
 * @category type ids
 */
export const TypeId: unique symbol = Symbol.for("effect-informers/Resource")

/**
 * @since 0.1.0
 * @category type ids
 */
export type TypeId = typeof TypeId

/**
 * Describes one resource type. `A` is the type of its objects: phantom for `make` and the catalog
 * (nothing is checked at runtime beyond the metadata), decoded for `custom` and `metadataOnly` (`decode`).
 *
 * @since 0.1.0
 * @category models
 */
export interface Resource<out A = KubeObject> {
  readonly [TypeId]: { readonly _A: (_: never) => A }
  /** API group, `""` for the core group. */
  readonly group: string
  readonly version: string
  /** Plural lower-case name used in paths, e.g. `"pods"`. */
  readonly resource: string
  readonly kind: string
  readonly listKind: string
  readonly singular: string
  readonly namespaced: boolean
  readonly shortNames: ReadonlyArray<string>
  readonly verbs: ReadonlyArray<string>
  /**
   * `true` for `metadataOnly` resources: requests ask for `PartialObjectMetadata` (the `Accept` headers of
   * `Metadata`) and objects are cut down to their metadata.
   */
  readonly metadataOnly?: boolean | undefined
  /**
   * Turns each object as it arrives from the wire (a list item, a watch event's object), already checked
   * for valid metadata, into an `A`, or says in one line why it cannot. Runs once per object, where it
   * enters (`HttpListerWatcher`, `FakeListerWatcher.layerSource`); absent for `make` and the catalog, whose
   * objects are passed on as parsed, with nothing extra run.
   */
  readonly decode?: ((object: KubeObject) => Result.Result<A, DecodeFailure>) | undefined
}

/**
 * @since 0.1.0
 * @category models
 */
export interface MakeOptions {
  readonly group: string
  readonly version: string
  readonly resource: string
  readonly kind: string
  readonly namespaced: boolean
  readonly listKind?: string | undefined
  readonly singular?: string | undefined
  readonly shortNames?: ReadonlyArray<string> | undefined
  readonly verbs?: ReadonlyArray<string> | undefined
}

const defaultVerbs: ReadonlyArray<string> = [
  "create",
  "delete",
  "deletecollection",
  "get",
  "list",
  "patch",
  "update",
  "watch"
]

const variance = { _A: (_: never) => _ }

/**
 * Describes any resource, e.g. a custom resource.
 *
 * @example
 * ```ts
 * import { Resource } from "effect-informers"
 *
 * const certificates = Resource.make({
 *   group: "cert-manager.io",
 *   version: "v1",
 *   resource: "certificates",
 *   kind: "Certificate",
 *   namespaced: true
 * })
 * console.log(Resource.collectionPath(certificates, "default")) // /apis/cert-manager.io/v1/namespaces/default/certificates
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = <A = KubeObject>(options: MakeOptions): Resource<A> => ({
  [TypeId]: variance,
  group: options.group,
  version: options.version,
  resource: options.resource,
  kind: options.kind,
  listKind: options.listKind ?? `${options.kind}List`,
  singular: options.singular ?? options.kind.toLowerCase(),
  namespaced: options.namespaced,
  shortNames: options.shortNames ?? [],
  verbs: options.verbs ?? defaultVerbs
})

/**
 * `v1` for the core group, `group/version` otherwise.
 *
 * @since 0.1.0
 * @category accessors
 */
export const apiVersion = (self: Resource<unknown>): string =>
  self.group === "" ? self.version : `${self.group}/${self.version}`

/**
 * `/api/v1` or `/apis/group/version`.
 *
 * @since 0.1.0
 * @category accessors
 */
export const groupVersionPath = (self: Resource<unknown>): string =>
  self.group === "" ? `/api/${self.version}` : `/apis/${self.group}/${self.version}`

/**
 * The collection path, in `namespace` when given and the resource is namespaced, across all namespaces
 * otherwise.
 *
 * @since 0.1.0
 * @category accessors
 */
export const collectionPath = (self: Resource<unknown>, namespace?: string | undefined): string =>
  self.namespaced && namespace !== undefined && namespace !== ""
    ? `${groupVersionPath(self)}/namespaces/${encodeURIComponent(namespace)}/${self.resource}`
    : `${groupVersionPath(self)}/${self.resource}`

/**
 * The path of one object.
 *
 * @since 0.1.0
 * @category accessors
 */
export const objectPath = (self: Resource<unknown>, namespace: string | undefined, name: string): string =>
  `${collectionPath(self, namespace)}/${encodeURIComponent(name)}`

/**
 * `resource.group` (`pods`, `deployments.apps`): the name kubectl and RBAC use.
 *
 * @since 0.1.0
 * @category accessors
 */
export const groupResource = (self: Resource<unknown>): string =>
  self.group === "" ? self.resource : `${self.resource}.${self.group}`

const core = <A>(resource: string, kind: string, namespaced: boolean, shortNames: ReadonlyArray<string> = []) =>
  make<A>({ group: "", version: "v1", resource, kind, namespaced, shortNames })

/** @since 0.1.0 @category catalog */
export const pods: Resource<Json<V1Pod>> = core("pods", "Pod", true, ["po"])
/** @since 0.1.0 @category catalog */
export const services: Resource<Json<V1Service>> = core("services", "Service", true, ["svc"])
/** @since 0.1.0 @category catalog */
export const endpoints: Resource<Json<V1Endpoints>> = core("endpoints", "Endpoints", true, ["ep"])
/** @since 0.1.0 @category catalog */
export const configMaps: Resource<Json<V1ConfigMap>> = core("configmaps", "ConfigMap", true, ["cm"])
/** @since 0.1.0 @category catalog */
export const secrets: Resource<Json<V1Secret>> = core("secrets", "Secret", true)
/** @since 0.1.0 @category catalog */
export const nodes: Resource<Json<V1Node>> = core("nodes", "Node", false, ["no"])
/** @since 0.1.0 @category catalog */
export const namespaces: Resource<Json<V1Namespace>> = core("namespaces", "Namespace", false, ["ns"])
/** @since 0.1.0 @category catalog */
export const events: Resource<Json<CoreV1Event>> = core("events", "Event", true, ["ev"])
/** @since 0.1.0 @category catalog */
export const persistentVolumes: Resource<Json<V1PersistentVolume>> = core(
  "persistentvolumes",
  "PersistentVolume",
  false,
  ["pv"]
)
/** @since 0.1.0 @category catalog */
export const persistentVolumeClaims: Resource<Json<V1PersistentVolumeClaim>> = core(
  "persistentvolumeclaims",
  "PersistentVolumeClaim",
  true,
  ["pvc"]
)
/** @since 0.1.0 @category catalog */
export const serviceAccounts: Resource<Json<V1ServiceAccount>> = core("serviceaccounts", "ServiceAccount", true, [
  "sa"
])

const apps = <A>(resource: string, kind: string, shortNames: ReadonlyArray<string>) =>
  make<A>({ group: "apps", version: "v1", resource, kind, namespaced: true, shortNames })

/** @since 0.1.0 @category catalog */
export const deployments: Resource<Json<V1Deployment>> = apps("deployments", "Deployment", ["deploy"])
/** @since 0.1.0 @category catalog */
export const replicaSets: Resource<Json<V1ReplicaSet>> = apps("replicasets", "ReplicaSet", ["rs"])
/** @since 0.1.0 @category catalog */
export const statefulSets: Resource<Json<V1StatefulSet>> = apps("statefulsets", "StatefulSet", ["sts"])
/** @since 0.1.0 @category catalog */
export const daemonSets: Resource<Json<V1DaemonSet>> = apps("daemonsets", "DaemonSet", ["ds"])

/** @since 0.1.0 @category catalog */
export const jobs: Resource<Json<V1Job>> = make({
  group: "batch",
  version: "v1",
  resource: "jobs",
  kind: "Job",
  namespaced: true
})
/** @since 0.1.0 @category catalog */
export const cronJobs: Resource<Json<V1CronJob>> = make({
  group: "batch",
  version: "v1",
  resource: "cronjobs",
  kind: "CronJob",
  namespaced: true,
  shortNames: ["cj"]
})
/** @since 0.1.0 @category catalog */
export const ingresses: Resource<Json<V1Ingress>> = make({
  group: "networking.k8s.io",
  version: "v1",
  resource: "ingresses",
  kind: "Ingress",
  namespaced: true,
  shortNames: ["ing"]
})
/** @since 0.1.0 @category catalog */
export const endpointSlices: Resource<Json<V1EndpointSlice>> = make({
  group: "discovery.k8s.io",
  version: "v1",
  resource: "endpointslices",
  kind: "EndpointSlice",
  namespaced: true
})
/** @since 0.1.0 @category catalog */
export const leases: Resource<Json<V1Lease>> = make({
  group: "coordination.k8s.io",
  version: "v1",
  resource: "leases",
  kind: "Lease",
  namespaced: true
})
/** `events.k8s.io/v1` Events, what `EventRecorder` writes. @since 0.2.0 @category catalog */
export const eventsV1: Resource<Json<EventsV1Event>> = make({
  group: "events.k8s.io",
  version: "v1",
  resource: "events",
  kind: "Event",
  namespaced: true
})

/**
 * Every catalog entry.
 *
 * @since 0.1.0
 * @category catalog
 */
export const catalog: ReadonlyArray<Resource<KubeObject>> = [
  pods,
  services,
  endpoints,
  configMaps,
  secrets,
  nodes,
  namespaces,
  events,
  persistentVolumes,
  persistentVolumeClaims,
  serviceAccounts,
  deployments,
  replicaSets,
  statefulSets,
  daemonSets,
  jobs,
  cronJobs,
  ingresses,
  endpointSlices,
  leases,
  eventsV1
]

/**
 * Finds a catalog entry by plural name, singular name, kind, short name or `resource.group`
 * (case-insensitive), as kubectl does.
 *
 * @since 0.1.0
 * @category catalog
 */
export const find = (
  name: string,
  among: ReadonlyArray<Resource<KubeObject>> = catalog
): Resource<KubeObject> | undefined => {
  const wanted = name.toLowerCase()
  return among.find((r) =>
    r.resource === wanted || r.singular === wanted || r.kind.toLowerCase() === wanted ||
    r.shortNames.includes(wanted) || groupResource(r) === wanted
  )
}

// -------------------------------------------------------------------------------------------------
// metadata-only and schema-typed resources
// -------------------------------------------------------------------------------------------------

const toMetadata = (object: KubeObject): Result.Result<Metadata.PartialObjectMetadata, DecodeFailure> =>
  Result.succeed(Metadata.fromObject(object))

/**
 * The metadata of `resource`'s objects: an informer of it caches `PartialObjectMetadata` (metadata only,
 * no spec or status), as client-go's metadata informers do. Requests ask for metadata only
 * (`Metadata.listAccept`, `Metadata.watchAccept`); objects a server sends in full anyway are cut down to
 * their metadata where they enter. Paths, scope and name are `resource`'s; an informer factory keeps the
 * metadata informer of a resource apart from its full informer.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { InformerFactory, Resource } from "effect-informers"
 *
 * const program = Effect.gen(function*() {
 *   const factory = yield* InformerFactory.InformerFactory
 *   const pods = yield* factory.informerFor(Resource.metadataOnly(Resource.pods))
 *   yield* pods.addEventHandler({
 *     onAdd: (meta) => Effect.log(`${meta.metadata.name}: ${Object.keys(meta.metadata.labels ?? {}).length} labels`)
 *   })
 *   yield* factory.start
 * })
 * ```
 *
 * @since 0.2.0
 * @category constructors
 */
export const metadataOnly = (resource: Resource<unknown>): Resource<Metadata.PartialObjectMetadata> => ({
  [TypeId]: variance,
  group: resource.group,
  version: resource.version,
  resource: resource.resource,
  kind: resource.kind,
  listKind: resource.listKind,
  singular: resource.singular,
  namespaced: resource.namespaced,
  shortNames: resource.shortNames,
  verbs: resource.verbs,
  metadataOnly: true,
  decode: toMetadata
})

/**
 * Options of `custom`: those of `make`, and the `Schema` of the objects.
 *
 * @since 0.2.0
 * @category models
 */
export interface CustomOptions<S extends Schema.Decoder<unknown>> extends MakeOptions {
  /**
   * Decodes a whole object (`apiVersion`, `kind`, `metadata`, `spec`, ...). Properties its structs do not
   * declare are kept as they are (what `onExcessProperty: "preserve"` did in Effect 3: Effect 4's decoder
   * drops them, and `custom` puts them back into each struct it decoded), so the metadata the machinery
   * reads (`namespace`, `resourceVersion`, `uid`...) survives a schema that declares only `metadata.name`;
   * its type must still describe a Kubernetes object (`KubeObject`), and it should decode to plain objects.
   * Below a transformation (`Schema.decodeTo`, `NumberFromString`...) and inside a `Union` of several
   * members (`optional` and `NullOr` are looked through), the value is the
   * schema's own: a transform (managedFields stripping, say) gets what its encoded side declares, so give
   * that side the keys it must keep (`Schema.StructWithRest` with a `Schema.Record(Schema.String,
   * Schema.Unknown)`) and copy them with a spread.
   */
  readonly schema: S
}

const nameOf = (object: KubeObject): string => {
  const namespace = object.metadata?.namespace
  const name = object.metadata?.name ?? ""
  return namespace === undefined || namespace === "" ? name : `${namespace}/${name}`
}

const issueLine = (issue: {
  readonly path?: ReadonlyArray<PropertyKey | { readonly key: PropertyKey }> | undefined
  readonly message: string
}): string =>
  issue.path === undefined || issue.path.length === 0
    ? issue.message
    : `${issue.path.map((p) => String(typeof p === "object" ? p.key : p)).join(".")}: ${issue.message}`

const flatFormatter = SchemaIssue.makeFormatterStandardSchemaV1()
const treeFormatter = SchemaIssue.makeFormatterDefault()

const isPlainObject = (u: unknown): u is Record<string, unknown> => {
  if (typeof u !== "object" || u === null || Array.isArray(u)) return false
  const proto = Object.getPrototypeOf(u)
  return proto === Object.prototype || proto === null
}

/**
 * Puts back into `out` (what `ast` decoded from `input`) the properties of `input` its structs do not
 * declare, struct by struct, as Effect 3's `onExcessProperty: "preserve"` kept them (through arrays,
 * `optional` and `NullOr`). Stops at a transformation (its output is its own), any other union, a
 * declaration, and wherever the decoder handed back the input itself.
 */
/** The property names of each struct of a schema, computed once. */
const declaredKeys = new WeakMap<SchemaAST.Objects, ReadonlySet<PropertyKey>>()

const restoreExcess = (ast: SchemaAST.AST, input: unknown, out: unknown, depth: number): void => {
  if (out === input || depth > 100 || ast.encoding !== undefined) return
  switch (ast._tag) {
    case "Suspend":
      return restoreExcess(ast.thunk(), input, out, depth + 1)
    case "Objects": {
      if (!isPlainObject(input) || !isPlainObject(out) || !Object.isExtensible(out)) return
      let declared = declaredKeys.get(ast)
      if (declared === undefined) {
        declared = new Set(ast.propertySignatures.map((ps) => ps.name))
        declaredKeys.set(ast, declared)
      }
      for (const ps of ast.propertySignatures) {
        const key = ps.name
        if (Object.hasOwn(input, key) && Object.hasOwn(out, key)) {
          restoreExcess(ps.type, (input as any)[key], (out as any)[key], depth + 1)
        }
      }
      if (ast.indexSignatures.length > 0) return
      for (const key of Object.keys(input)) {
        if (!declared.has(key) && !Object.hasOwn(out, key)) {
          // defined, not assigned: a `__proto__` key of parsed JSON stays a plain property
          Object.defineProperty(out, key, { value: input[key], writable: true, enumerable: true, configurable: true })
        }
      }
      return
    }
    case "Union": {
      // `Schema.optional(S)`, `Schema.NullOr(S)`: the one member that is not `undefined` or `null`
      if (out === undefined || out === null) return
      let member: SchemaAST.AST | undefined
      for (const type of ast.types) {
        if (type._tag === "Undefined" || type._tag === "Null") continue
        if (member !== undefined) return
        member = type
      }
      if (member !== undefined) restoreExcess(member, input, out, depth + 1)
      return
    }
    case "Arrays": {
      if (!Array.isArray(input) || !Array.isArray(out) || input.length !== out.length) return
      for (let i = 0; i < out.length; i++) {
        const element = i < ast.elements.length ? ast.elements[i] : ast.rest[0]
        if (element !== undefined) restoreExcess(element, input[i], out[i], depth + 1)
      }
      return
    }
    default:
      return
  }
}

/**
 * A custom resource whose objects `options.schema` decodes where they enter (each list item and watch
 * event's object, once): an informer of it holds `Schema.Type<S>` values. An object that does not decode
 * is a `DecodeError` (`reason: "SchemaMismatch"`) naming the object and the first issue in one line (the
 * full tree in its `detail`); the ListerWatcher fails the LIST or WATCH with it, as for any malformed
 * answer, so the Reflector reports it (on the informer's `errors` stream and its watch-error handler),
 * backs off and relists. While an object that does not decode is in the collection, no list succeeds: the
 * cache keeps its last good state (it never drops the object as if deleted) and the informer tries again
 * after each backoff, recovering once the object is fixed or deleted (client-go's typed informers do the
 * same). `Client` reads (`get`, `list`, the objects its writes return) are decoded the same way; its
 * writes send the object as given, so with a schema that transforms (`NumberFromString`...) encode it
 * first (`Schema.encode`). Without a schema (`make`) nothing is decoded.
 *
 * @example
 * ```ts
 * import { Effect, Schema } from "effect"
 * import { InformerFactory, Resource } from "effect-informers"
 *
 * const Widget = Schema.Struct({
 *   apiVersion: Schema.Literal("example.com/v1"),
 *   kind: Schema.Literal("Widget"),
 *   metadata: Schema.Struct({ name: Schema.String, namespace: Schema.optional(Schema.String) }),
 *   spec: Schema.Struct({ replicas: Schema.Int, image: Schema.String })
 * })
 *
 * const widgets = Resource.custom({
 *   group: "example.com",
 *   version: "v1",
 *   resource: "widgets",
 *   kind: "Widget",
 *   namespaced: true,
 *   schema: Widget
 * })
 *
 * const program = Effect.gen(function*() {
 *   const factory = yield* InformerFactory.InformerFactory
 *   const informer = yield* factory.informerFor(widgets)
 *   yield* informer.addEventHandler({ onAdd: (widget) => Effect.log(widget.spec.replicas) })
 * })
 * ```
 *
 * @since 0.2.0
 * @category constructors
 */
export const custom = <S extends Schema.Decoder<unknown>>(
  options: CustomOptions<S>
): Resource<Schema.Schema.Type<S> & KubeObject> => {
  const { schema, ...rest } = options
  const base = make<Schema.Schema.Type<S> & KubeObject>(rest)
  const decodeExit = Schema.decodeUnknownExit(schema, { errors: "first", reportInput: true })
  const ast = schema.ast
  const label = base.kind
  const decode = (object: KubeObject): Result.Result<Schema.Schema.Type<S> & KubeObject, DecodeFailure> => {
    let decoded: Exit.Exit<S["Type"], Schema.SchemaError>
    try {
      decoded = decodeExit(object)
      if (Exit.isSuccess(decoded)) restoreExcess(ast, object, decoded.value, 0)
    } catch (cause) {
      // a value nested too deeply for the decoder's recursion, or a schema whose own code threw
      return Result.fail({
        message: oneLine(`${label} ${nameOf(object)} could not be decoded: ${String(cause)}`, 400),
        cause
      })
    }
    if (Exit.isSuccess(decoded)) return Result.succeed(decoded.value as Schema.Schema.Type<S> & KubeObject)
    const error = Exit.findError(decoded)
    if (Result.isFailure(error)) {
      // a defect of the schema's own code
      return Result.fail({
        message: oneLine(`${label} ${nameOf(object)} could not be decoded: ${String(error.failure)}`, 400)
      })
    }
    const issues = flatFormatter(error.success.issue).issues
    const first = issues.length === 0 ? "invalid value" : issueLine(issues[0])
    return Result.fail({
      message: oneLine(`${label} ${nameOf(object)} does not match its schema: ${first}`, 400),
      detail: treeFormatter(error.success.issue),
      cause: error.success
    })
  }
  return { ...base, decode }
}

// -------------------------------------------------------------------------------------------------
// object types
// -------------------------------------------------------------------------------------------------

/**
 * The type of a resource's objects: `Resource.Type<typeof Resource.pods>` is `Resource.Pod`; for a custom
 * resource, the type given to `make`.
 *
 * @example
 * ```ts
 * import { Resource } from "effect-informers"
 *
 * const certificates = Resource.make<{ metadata?: { name?: string }; spec?: { dnsNames?: Array<string> } }>({
 *   group: "cert-manager.io", version: "v1", resource: "certificates", kind: "Certificate", namespaced: true
 * })
 * type Certificate = Resource.Type<typeof certificates>
 * const names = (c: Certificate) => c.spec?.dnsNames ?? []
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export type Type<R> = R extends Resource<infer A> ? A : never

/** @since 0.1.0 @category object types */
export type Pod = Type<typeof pods>
/** @since 0.1.0 @category object types */
export type Service = Type<typeof services>
/** @since 0.1.0 @category object types */
export type Endpoints = Type<typeof endpoints>
/** @since 0.1.0 @category object types */
export type ConfigMap = Type<typeof configMaps>
/** @since 0.1.0 @category object types */
export type Secret = Type<typeof secrets>
/** @since 0.1.0 @category object types */
export type Node = Type<typeof nodes>
/** @since 0.1.0 @category object types */
export type Namespace = Type<typeof namespaces>
/** @since 0.1.0 @category object types */
export type Event = Type<typeof events>
/** @since 0.2.0 @category object types */
export type EventV1 = Type<typeof eventsV1>
/** @since 0.1.0 @category object types */
export type PersistentVolume = Type<typeof persistentVolumes>
/** @since 0.1.0 @category object types */
export type PersistentVolumeClaim = Type<typeof persistentVolumeClaims>
/** @since 0.1.0 @category object types */
export type ServiceAccount = Type<typeof serviceAccounts>
/** @since 0.1.0 @category object types */
export type Deployment = Type<typeof deployments>
/** @since 0.1.0 @category object types */
export type ReplicaSet = Type<typeof replicaSets>
/** @since 0.1.0 @category object types */
export type StatefulSet = Type<typeof statefulSets>
/** @since 0.1.0 @category object types */
export type DaemonSet = Type<typeof daemonSets>
/** @since 0.1.0 @category object types */
export type Job = Type<typeof jobs>
/** @since 0.1.0 @category object types */
export type CronJob = Type<typeof cronJobs>
/** @since 0.1.0 @category object types */
export type Ingress = Type<typeof ingresses>
/** @since 0.1.0 @category object types */
export type EndpointSlice = Type<typeof endpointSlices>
/** @since 0.1.0 @category object types */
export type Lease = Type<typeof leases>

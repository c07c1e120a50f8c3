/**
 * Kubernetes protobuf request bodies (`application/vnd.kubernetes.protobuf`), as kubectl's imperative
 * commands send them (`create namespace`, `create configmap`, `create secret generic`, `create
 * serviceaccount`, `create deployment`, `create service`, `expose`, `create job`): the bytes `k8s\0`, then
 * a `runtime.Unknown` whose `raw` is the typed message. The message is decoded with protobufjs from
 * descriptors written here from the published field numbers (k8s.io/api `core/v1`, `apps/v1` and
 * `batch/v1` generated.proto, k8s.io/apimachinery
 * `pkg/apis/meta/v1`, `pkg/runtime`, `pkg/api/resource`, `pkg/util/intstr` generated.proto), then turned
 * into the JSON object Go's `encoding/json` writes for the same Go struct, so that the request goes
 * through the same validation, create and audit paths as a JSON body.
 *
 * What the descriptors do not know is refused, never dropped: another kind, or any field they do not
 * describe (protobufjs keeps unknown fields; they are looked for in every message), is a 415
 * UnsupportedMediaType naming it.
 *
 * @internal
 */
import type { Status } from "effect-informers/Wire"
import { failureStatus } from "effect-informers/Wire"
import * as Result from "effect/Result"
import protobuf from "protobufjs"
import type { JsonObject } from "./json.js"

/** The media type of Kubernetes protobuf. @internal */
export const protobufMediaType = "application/vnd.kubernetes.protobuf"

/** Whether a request's Content-Type is Kubernetes protobuf. @internal */
export const isProtobuf = (contentType: string | undefined): boolean =>
  (contentType ?? "").split(";")[0].trim().toLowerCase() === protobufMediaType

/** The 4 bytes every Kubernetes protobuf body starts with. */
const magic = [0x6b, 0x38, 0x73, 0x00] as const

// -------------------------------------------------------------------------------------------------
// descriptors
// -------------------------------------------------------------------------------------------------

/*
 * Messages are declared in the order of their Go struct's fields, which is the order encoding/json
 * writes them in. `[(keep) = true]` marks a scalar that Go's JSON writes even when zero: a pointer field
 * (`*int32`, `*bool`, `*string`), or one without `omitempty`; every other scalar is dropped when zero (""
 * / 0 / false), as `omitempty` does. Message fields are written whenever present on the wire (gogo writes
 * every non-pointer struct, so presence is what Go's JSON shows), except `Time` (empty = null),
 * `Quantity` (its string), `IntOrString` (a number or a string) and `FieldsV1` (its raw JSON).
 */
const proto = `
syntax = "proto2";
package k8s;

// k8s.io/apimachinery/pkg/runtime
message TypeMeta {
  optional string apiVersion = 1;
  optional string kind = 2;
}
message Unknown {
  optional TypeMeta typeMeta = 1;
  optional bytes raw = 2;
  optional string contentEncoding = 3;
  optional string contentType = 4;
}

// k8s.io/apimachinery/pkg/apis/meta/v1
message Time {
  optional int64 seconds = 1;
  optional int32 nanos = 2;
}
message FieldsV1 {
  optional bytes Raw = 1;
}
message OwnerReference {
  optional string apiVersion = 5 [(keep) = true];
  optional string kind = 1 [(keep) = true];
  optional string name = 3 [(keep) = true];
  optional string uid = 4 [(keep) = true];
  optional bool controller = 6 [(keep) = true];
  optional bool blockOwnerDeletion = 7 [(keep) = true];
}
message ManagedFieldsEntry {
  optional string manager = 1;
  optional string operation = 2;
  optional string apiVersion = 3;
  optional Time time = 4;
  optional string fieldsType = 6;
  optional FieldsV1 fieldsV1 = 7;
  optional string subresource = 8;
}
message ObjectMeta {
  optional string name = 1;
  optional string generateName = 2;
  optional string namespace = 3;
  optional string selfLink = 4;
  optional string uid = 5;
  optional string resourceVersion = 6;
  optional int64 generation = 7;
  optional Time creationTimestamp = 8;
  optional Time deletionTimestamp = 9;
  optional int64 deletionGracePeriodSeconds = 10 [(keep) = true];
  map<string, string> labels = 11;
  map<string, string> annotations = 12;
  repeated OwnerReference ownerReferences = 13;
  repeated string finalizers = 14;
  repeated ManagedFieldsEntry managedFields = 17;
}
message LabelSelectorRequirement {
  optional string key = 1 [(keep) = true];
  optional string operator = 2 [(keep) = true];
  repeated string values = 3;
}
message LabelSelector {
  map<string, string> matchLabels = 1;
  repeated LabelSelectorRequirement matchExpressions = 2;
}

// k8s.io/apimachinery/pkg/api/resource, k8s.io/apimachinery/pkg/util/intstr
message Quantity {
  optional string string = 1;
}
message IntOrString {
  optional int64 type = 1;
  optional int32 intVal = 2;
  optional string strVal = 3;
}

// k8s.io/api/core/v1
message NamespaceSpec {
  repeated string finalizers = 1;
}
message NamespaceCondition {
  optional string type = 1 [(keep) = true];
  optional string status = 2 [(keep) = true];
  optional Time lastTransitionTime = 4;
  optional string reason = 5;
  optional string message = 6;
}
message NamespaceStatus {
  optional string phase = 1;
  repeated NamespaceCondition conditions = 2;
}
message Namespace {
  optional ObjectMeta metadata = 1;
  optional NamespaceSpec spec = 2;
  optional NamespaceStatus status = 3;
}
message ConfigMap {
  optional ObjectMeta metadata = 1;
  optional bool immutable = 4 [(keep) = true];
  map<string, string> data = 2;
  map<string, bytes> binaryData = 3;
}
message Secret {
  optional ObjectMeta metadata = 1;
  optional bool immutable = 5 [(keep) = true];
  map<string, bytes> data = 2;
  map<string, string> stringData = 4;
  optional string type = 3;
}
message ObjectReference {
  optional string kind = 1;
  optional string namespace = 2;
  optional string name = 3;
  optional string uid = 4;
  optional string apiVersion = 5;
  optional string resourceVersion = 6;
  optional string fieldPath = 7;
}
message LocalObjectReference {
  optional string name = 1;
}
message ServiceAccount {
  optional ObjectMeta metadata = 1;
  repeated ObjectReference secrets = 2;
  repeated LocalObjectReference imagePullSecrets = 3;
  optional bool automountServiceAccountToken = 4 [(keep) = true];
}
message ContainerPort {
  optional string name = 1;
  optional int32 hostPort = 2;
  optional int32 containerPort = 3 [(keep) = true];
  optional string protocol = 4;
  optional string hostIP = 5;
}
message EnvVar {
  optional string name = 1 [(keep) = true];
  optional string value = 2;
}
message ResourceClaim {
  optional string name = 1 [(keep) = true];
  optional string request = 2;
}
message ResourceRequirements {
  map<string, Quantity> limits = 1;
  map<string, Quantity> requests = 2;
  repeated ResourceClaim claims = 3;
}
message VolumeMount {
  optional string name = 1 [(keep) = true];
  optional bool readOnly = 2;
  optional string recursiveReadOnly = 7 [(keep) = true];
  optional string mountPath = 3 [(keep) = true];
  optional string subPath = 4;
  optional string mountPropagation = 5 [(keep) = true];
  optional string subPathExpr = 6;
}
message Container {
  optional string name = 1 [(keep) = true];
  optional string image = 2;
  repeated string command = 3;
  repeated string args = 4;
  optional string workingDir = 5;
  repeated ContainerPort ports = 6;
  repeated EnvVar env = 7;
  optional ResourceRequirements resources = 8;
  optional string restartPolicy = 24 [(keep) = true];
  repeated VolumeMount volumeMounts = 9;
  optional string terminationMessagePath = 13;
  optional string terminationMessagePolicy = 20;
  optional string imagePullPolicy = 14;
  optional bool stdin = 16;
  optional bool stdinOnce = 17;
  optional bool tty = 18;
}
message Toleration {
  optional string key = 1;
  optional string operator = 2;
  optional string value = 3;
  optional string effect = 4;
  optional int64 tolerationSeconds = 5 [(keep) = true];
}
message PodSpec {
  repeated Container initContainers = 20;
  repeated Container containers = 2;
  optional string restartPolicy = 3;
  optional int64 terminationGracePeriodSeconds = 4 [(keep) = true];
  optional int64 activeDeadlineSeconds = 5 [(keep) = true];
  optional string dnsPolicy = 6;
  map<string, string> nodeSelector = 7;
  optional string serviceAccountName = 8;
  optional string serviceAccount = 9;
  optional bool automountServiceAccountToken = 21 [(keep) = true];
  optional string nodeName = 10;
  optional bool hostNetwork = 11;
  optional bool hostPID = 12;
  optional bool hostIPC = 13;
  optional bool shareProcessNamespace = 27 [(keep) = true];
  repeated LocalObjectReference imagePullSecrets = 15;
  optional string hostname = 16;
  optional string subdomain = 17;
  optional string schedulerName = 19;
  repeated Toleration tolerations = 22;
  optional string priorityClassName = 24;
  optional int32 priority = 25 [(keep) = true];
  optional string runtimeClassName = 29 [(keep) = true];
  optional bool enableServiceLinks = 30 [(keep) = true];
  optional string preemptionPolicy = 31 [(keep) = true];
  map<string, Quantity> overhead = 32;
  optional bool setHostnameAsFQDN = 35 [(keep) = true];
  optional bool hostUsers = 37 [(keep) = true];
  optional ResourceRequirements resources = 40;
}
message PodTemplateSpec {
  optional ObjectMeta metadata = 1;
  optional PodSpec spec = 2;
}

message ServicePort {
  optional string name = 1;
  optional string protocol = 2;
  optional string appProtocol = 6 [(keep) = true];
  optional int32 port = 3 [(keep) = true];
  optional IntOrString targetPort = 4;
  optional int32 nodePort = 5;
}
message ServiceSpec {
  repeated ServicePort ports = 1;
  map<string, string> selector = 2;
  optional string clusterIP = 3;
  repeated string clusterIPs = 18;
  optional string type = 4;
  repeated string externalIPs = 5;
  optional string sessionAffinity = 7;
  optional string loadBalancerIP = 8;
  repeated string loadBalancerSourceRanges = 9;
  optional string externalName = 10;
  optional string externalTrafficPolicy = 11;
  optional int32 healthCheckNodePort = 12;
  optional bool publishNotReadyAddresses = 13;
  repeated string ipFamilies = 19;
  optional string ipFamilyPolicy = 17 [(keep) = true];
  optional bool allocateLoadBalancerNodePorts = 20 [(keep) = true];
  optional string loadBalancerClass = 21 [(keep) = true];
  optional string internalTrafficPolicy = 22 [(keep) = true];
  optional string trafficDistribution = 23 [(keep) = true];
}
message LoadBalancerIngress {
  optional string ip = 1;
  optional string hostname = 2;
  optional string ipMode = 3 [(keep) = true];
}
message LoadBalancerStatus {
  repeated LoadBalancerIngress ingress = 1;
}
message ServiceStatus {
  optional LoadBalancerStatus loadBalancer = 1;
}
message Service {
  optional ObjectMeta metadata = 1;
  optional ServiceSpec spec = 2;
  optional ServiceStatus status = 3;
}

// k8s.io/api/batch/v1
message JobSpec {
  optional int32 parallelism = 1 [(keep) = true];
  optional int32 completions = 2 [(keep) = true];
  optional int64 activeDeadlineSeconds = 3 [(keep) = true];
  optional int32 backoffLimit = 7 [(keep) = true];
  optional int32 backoffLimitPerIndex = 12 [(keep) = true];
  optional int32 maxFailedIndexes = 13 [(keep) = true];
  optional LabelSelector selector = 4;
  optional bool manualSelector = 5 [(keep) = true];
  optional PodTemplateSpec template = 6;
  optional int32 ttlSecondsAfterFinished = 8 [(keep) = true];
  optional string completionMode = 9 [(keep) = true];
  optional bool suspend = 10 [(keep) = true];
  optional string podReplacementPolicy = 14 [(keep) = true];
  optional string managedBy = 15 [(keep) = true];
}
message JobCondition {
  optional string type = 1 [(keep) = true];
  optional string status = 2 [(keep) = true];
  optional Time lastProbeTime = 3;
  optional Time lastTransitionTime = 4;
  optional string reason = 5;
  optional string message = 6;
}
message JobStatus {
  repeated JobCondition conditions = 1;
  optional Time startTime = 2;
  optional Time completionTime = 3;
  optional int32 active = 4;
  optional int32 succeeded = 5;
  optional int32 failed = 6;
  optional int32 terminating = 11 [(keep) = true];
  optional string completedIndexes = 7;
  optional string failedIndexes = 10 [(keep) = true];
  optional int32 ready = 9 [(keep) = true];
}
message Job {
  optional ObjectMeta metadata = 1;
  optional JobSpec spec = 2;
  optional JobStatus status = 3;
}

// k8s.io/api/apps/v1
message RollingUpdateDeployment {
  optional IntOrString maxUnavailable = 1;
  optional IntOrString maxSurge = 2;
}
message DeploymentStrategy {
  optional string type = 1;
  optional RollingUpdateDeployment rollingUpdate = 2;
}
message DeploymentSpec {
  optional int32 replicas = 1 [(keep) = true];
  optional LabelSelector selector = 2;
  optional PodTemplateSpec template = 3;
  optional DeploymentStrategy strategy = 4;
  optional int32 minReadySeconds = 5;
  optional int32 revisionHistoryLimit = 6 [(keep) = true];
  optional bool paused = 7;
  optional int32 progressDeadlineSeconds = 9 [(keep) = true];
}
message DeploymentCondition {
  optional string type = 1 [(keep) = true];
  optional string status = 2 [(keep) = true];
  optional Time lastUpdateTime = 6;
  optional Time lastTransitionTime = 7;
  optional string reason = 4;
  optional string message = 5;
}
message DeploymentStatus {
  optional int64 observedGeneration = 1;
  optional int32 replicas = 2;
  optional int32 updatedReplicas = 3;
  optional int32 readyReplicas = 7;
  optional int32 availableReplicas = 4;
  optional int32 unavailableReplicas = 5;
  optional int32 terminatingReplicas = 9 [(keep) = true];
  repeated DeploymentCondition conditions = 6;
  optional int32 collisionCount = 8 [(keep) = true];
}
message Deployment {
  optional ObjectMeta metadata = 1;
  optional DeploymentSpec spec = 2;
  optional DeploymentStatus status = 3;
}
`

const root = protobuf.parse(proto, { keepCase: true }).root.resolveAll()

const unknownType = root.lookupType("k8s.Unknown")

/** The kinds decoded, by `apiVersion/kind`. */
const kinds: ReadonlyMap<string, protobuf.Type> = new Map([
  ["v1/Namespace", root.lookupType("k8s.Namespace")],
  ["v1/ConfigMap", root.lookupType("k8s.ConfigMap")],
  ["v1/Secret", root.lookupType("k8s.Secret")],
  ["v1/ServiceAccount", root.lookupType("k8s.ServiceAccount")],
  ["v1/Service", root.lookupType("k8s.Service")],
  ["apps/v1/Deployment", root.lookupType("k8s.Deployment")],
  ["batch/v1/Job", root.lookupType("k8s.Job")]
])

const supportedKinds =
  "Namespace, ConfigMap, Secret, ServiceAccount, Service (v1), Deployment (apps/v1) and Job (batch/v1)"

// -------------------------------------------------------------------------------------------------
// decoding
// -------------------------------------------------------------------------------------------------

/** One line, whatever the client sent: control characters as `\xNN`, at most 1,000 characters. */
const oneLine = (text: string): string => {
  // eslint-disable-next-line no-control-regex
  const escaped = text.replace(/[\u0000-\u001f\u007f]/g, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, "0")}`)
  return escaped.length > 1000 ? `${escaped.slice(0, 1000)}...` : escaped
}

const unknownFormat = (detail: string): Status =>
  failureStatus(400, "BadRequest", oneLine(`the body of the request was in an unknown format: ${detail}`))

const unsupported = (detail: string): Status =>
  failureStatus(
    415,
    "UnsupportedMediaType",
    oneLine(`the body of the request was in an unknown format: ${detail}; send it as application/json`)
  )

/** Found in a decoded message: a field the descriptors do not know. */
interface UnknownField {
  readonly type: string
  readonly field: number
  readonly path: string
}

/** A decoded message: its fields by name, and the unknown fields protobufjs kept. */
type Message = { readonly [field: string]: unknown } & { readonly $unknowns?: ReadonlyArray<Uint8Array> }

const decodeWith = (type: protobuf.Type, bytes: Uint8Array): Message => {
  const reader = protobuf.Reader.create(bytes)
  reader.discardUnknown = false
  return type.decode(reader) as unknown as Message
}

/** The field number of an unknown field kept by protobufjs (its raw bytes start with the tag). */
const fieldNumberOf = (raw: Uint8Array): number => {
  try {
    return protobuf.Reader.create(raw).uint32() >>> 3
  } catch {
    return 0
  }
}

const isLong = (value: unknown): value is { toString(): string } =>
  typeof value === "object" && value !== null && "low" in value && "high" in value

const toNumber = (value: unknown): number => (isLong(value) ? Number(value.toString()) : Number(value))

const isZero = (value: unknown): boolean =>
  value === "" || value === false || value === 0 || (isLong(value) && toNumber(value) === 0)

const base64 = (bytes: Uint8Array): string =>
  Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("base64")

/** RFC 3339 at second precision, as `metav1.Time` writes itself. */
const rfc3339 = (seconds: number): string => new Date(seconds * 1000).toISOString().replace(/\.\d{3}Z$/, "Z")

const has = (message: object, key: string): boolean => Object.prototype.hasOwnProperty.call(message, key)

/** Sets an own property, whatever the key (a map key may be `__proto__`). */
const setKey = (target: JsonObject, key: string, value: unknown): void => {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true })
}

/** Turns one decoded message into Go's JSON for it; records unknown fields in `unknown`. */
const toJson = (type: protobuf.Type, message: Message, path: string, unknown: Array<UnknownField>): unknown => {
  if (message.$unknowns !== undefined && message.$unknowns.length > 0) {
    for (const raw of message.$unknowns) unknown.push({ type: type.name, field: fieldNumberOf(raw), path })
  }
  switch (type.name) {
    case "Time":
      return has(message, "seconds") ? rfc3339(toNumber(message.seconds)) : null
    case "Quantity":
      return typeof message.string === "string" ? message.string : "0"
    case "IntOrString":
      return toNumber(message.type) === 1 ? String(message.strVal ?? "") : toNumber(message.intVal ?? 0)
    case "FieldsV1": {
      const raw = message.Raw
      if (!(raw instanceof Uint8Array) || raw.length === 0) return null
      try {
        return JSON.parse(Buffer.from(raw).toString("utf8"))
      } catch {
        unknown.push({ type: "FieldsV1", field: 1, path })
        return null
      }
    }
  }
  const out: JsonObject = {}
  for (const field of type.fieldsArray) {
    const name = field.name
    const at = path === "" ? name : `${path}.${name}`
    if (field.map) {
      const entries = message[name] as Record<string, unknown> | undefined
      if (entries === undefined || Object.keys(entries).length === 0) continue
      const value: JsonObject = {}
      for (const [key, entry] of Object.entries(entries)) {
        if (field.resolvedType instanceof protobuf.Type) {
          setKey(value, key, toJson(field.resolvedType, entry as Message, `${at}[${key}]`, unknown))
        } else setKey(value, key, entry instanceof Uint8Array ? base64(entry) : isLong(entry) ? toNumber(entry) : entry)
      }
      out[name] = value
      continue
    }
    if (!has(message, name)) continue
    const value = message[name]
    if (field.repeated) {
      const items = value as ReadonlyArray<unknown>
      if (items.length === 0) continue
      out[name] = items.map((item, i) =>
        field.resolvedType instanceof protobuf.Type
          ? toJson(field.resolvedType, item as Message, `${at}[${i}]`, unknown)
          : item
      ) as JsonObject[string]
      continue
    }
    if (field.resolvedType instanceof protobuf.Type) {
      out[name] = toJson(field.resolvedType, value as Message, at, unknown) as JsonObject[string]
      continue
    }
    const keep = field.options?.["(keep)"] === true
    if (!keep && isZero(value)) continue
    out[name] = value instanceof Uint8Array
      ? base64(value)
      : isLong(value) || field.type === "int64"
      ? toNumber(value)
      : value
  }
  return out
}

/**
 * Decodes a Kubernetes protobuf request body into the JSON object Go's `encoding/json` would write for
 * it (`kind` and `apiVersion` first). Not `k8s\0`-prefixed or not decodable: 400 BadRequest. A kind
 * other than Namespace, ConfigMap, Secret, ServiceAccount, Service (v1), Deployment (apps/v1) and Job
 * (batch/v1), an encoded
 * (`contentEncoding`) body, or a field the descriptors do not describe: 415 UnsupportedMediaType naming it.
 *
 * @internal
 */
export const decodeProtobufObject = (bytes: Uint8Array): Result.Result<JsonObject, Status> => {
  if (bytes.length < magic.length || magic.some((b, i) => bytes[i] !== b)) {
    return Result.fail(unknownFormat(`a ${protobufMediaType} body must start with the bytes "k8s\\x00"`))
  }
  let envelope: Message
  try {
    envelope = decodeWith(unknownType, bytes.subarray(magic.length))
  } catch (e) {
    return Result.fail(unknownFormat(`the protobuf envelope (runtime.Unknown) could not be decoded: ${String(e)}`))
  }
  const typeMeta = (envelope.typeMeta ?? {}) as { readonly apiVersion?: string; readonly kind?: string }
  const apiVersion = typeMeta.apiVersion ?? ""
  const kind = typeMeta.kind ?? ""
  const named = `${apiVersion === "" ? "<no apiVersion>" : apiVersion}, Kind=${kind === "" ? "<no kind>" : kind}`
  const encoding = typeof envelope.contentEncoding === "string" ? envelope.contentEncoding : ""
  if (encoding !== "") {
    return Result.fail(
      unsupported(`the protobuf object (${named}) is encoded with "${encoding}", which this server does not read`)
    )
  }
  const type = kinds.get(`${apiVersion}/${kind}`)
  if (type === undefined) {
    return Result.fail(
      unsupported(`this server decodes Kubernetes protobuf for ${supportedKinds} only, not for ${named}`)
    )
  }
  const raw = envelope.raw instanceof Uint8Array ? envelope.raw : new Uint8Array(0)
  let message: Message
  try {
    message = decodeWith(type, raw)
  } catch (e) {
    return Result.fail(unknownFormat(`the protobuf ${named} could not be decoded: ${String(e)}`))
  }
  const unknown: Array<UnknownField> = []
  const body = toJson(type, message, "", unknown) as JsonObject
  if (unknown.length > 0) {
    const fields = unknown.slice(0, 5).map((u) =>
      `field ${u.field} of ${u.type}${u.path === "" ? "" : ` (at ${u.path})`}`
    )
    return Result.fail(
      unsupported(
        `the protobuf ${named} has ${unknown.length === 1 ? "a field" : "fields"} this server does not decode: ${
          fields.join(", ")
        }${unknown.length > 5 ? `, and ${unknown.length - 5} more` : ""}`
      )
    )
  }
  return Result.succeed({ kind, apiVersion, ...body })
}

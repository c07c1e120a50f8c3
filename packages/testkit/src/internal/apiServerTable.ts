/**
 * `meta.k8s.io` Table responses, as kube-apiserver serves them to `kubectl get`: kubectl asks for them with
 * `Accept: application/json;as=Table;v=v1;g=meta.k8s.io, ...;v=v1beta1..., application/json` on lists,
 * single gets and watches (`get -w`), and prints the cells the server computed (all columns; kubectl shows
 * those of priority 1 only with `-o wide`).
 *
 * The columns and cells of pods, nodes, namespaces, deployments, replica sets, config maps, secrets,
 * services, service accounts and leases follow kube-apiserver's printers (`pkg/printers/internalversion`); every
 * other resource gets NAME and AGE. Each row carries the object as `PartialObjectMetadata`, the whole
 * object with `includeObject=Object`, or nothing with `includeObject=None`. In a watch, only the first
 * event's Table has the column definitions (`null` after), as in kube-apiserver.
 *
 * @internal
 */
import type { Status } from "effect-informers/Wire"
import { failureStatus } from "effect-informers/Wire"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as Result from "effect/Result"
import * as Stream from "effect/Stream"
import { coreEvents, eventsV1Events, eventsV1ToCore } from "./apiServerEvents.js"
import type { JsonObject } from "./json.js"
import { isObject } from "./json.js"

// -------------------------------------------------------------------------------------------------
// negotiation
// -------------------------------------------------------------------------------------------------

/** The Table version a request asked for. @internal */
export type TableVersion = "v1" | "v1beta1"

/**
 * The Table version the Accept header asks for, or `undefined` for plain JSON: the first media range
 * that is either a Table (`application/json;as=Table;g=meta.k8s.io;v=v1|v1beta1`) or plain JSON
 * (`application/json`, `*\/*`, or protobuf, which this server answers with JSON) decides.
 *
 * @internal
 */
export const tableVersion = (accept: string | undefined): TableVersion | undefined => {
  if (accept === undefined) return undefined
  for (const range of accept.split(",")) {
    const [type, ...rest] = range.split(";").map((part) => part.trim())
    const media = type.toLowerCase()
    const params = new Map<string, string>()
    for (const param of rest) {
      const eq = param.indexOf("=")
      if (eq > 0) params.set(param.slice(0, eq).trim().toLowerCase(), param.slice(eq + 1).trim())
    }
    const as = params.get("as")
    if (as === undefined) {
      if (
        media === "application/json" || media === "*/*" || media === "application/*" ||
        media === "application/vnd.kubernetes.protobuf"
      ) return undefined
      continue
    }
    if (params.get("g") !== "meta.k8s.io" || media !== "application/json") continue
    const v = params.get("v")
    if (v !== "v1" && v !== "v1beta1") continue
    if (as === "Table") return v
    // A metadata range first wins over a Table range after it (apiServerMetadata's `wantsMetadata`).
    if (as === "PartialObjectMetadata" || as === "PartialObjectMetadataList") return undefined
  }
  return undefined
}

/** What each row carries (`includeObject`). @internal */
export type IncludeObject = "Metadata" | "Object" | "None"

/** The `includeObject` query parameter; another value is a 400, as kube-apiserver validates it. @internal */
export const includeObject = (value: string | undefined): Result.Result<IncludeObject, Status> => {
  if (value === undefined || value === "" || value === "Metadata") return Result.succeed("Metadata")
  if (value === "Object" || value === "None") return Result.succeed(value)
  return Result.fail(
    failureStatus(
      400,
      "BadRequest",
      `Unable to convert to Table as requested: includeObject: Unsupported value: ${
        JSON.stringify(value)
      }: supported values: "Metadata", "None", "Object"`
    )
  )
}

/** How a request wants its Table. @internal */
export interface TableRequest {
  readonly version: TableVersion
  readonly include: IncludeObject
}

// -------------------------------------------------------------------------------------------------
// columns
// -------------------------------------------------------------------------------------------------

/** @internal */
export interface Column {
  readonly name: string
  readonly type: string
  readonly format: string
  readonly description: string
  readonly priority: number
}

const column = (name: string, type: string, description: string, priority = 0, format = ""): Column => ({
  name,
  type,
  format,
  description,
  priority
})

const nameColumn = column(
  "Name",
  "string",
  "Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically.",
  0,
  "name"
)
const ageColumn = column(
  "Age",
  "string",
  "CreationTimestamp is a timestamp representing the server time when this object was created."
)

type Cell = string | number | boolean | null

interface RowCondition {
  readonly type: string
  readonly status: string
  readonly reason: string
  readonly message: string
}

interface Printed {
  readonly cells: ReadonlyArray<Cell>
  readonly conditions?: ReadonlyArray<RowCondition> | undefined
}

interface Printer {
  readonly columns: ReadonlyArray<Column>
  readonly print: (obj: JsonObject, now: number) => Printed
}

// -------------------------------------------------------------------------------------------------
// helpers
// -------------------------------------------------------------------------------------------------

const obj = (u: unknown): JsonObject => (isObject(u) ? u : {})
const arr = (u: unknown): ReadonlyArray<unknown> => (Array.isArray(u) ? u : [])
const str = (u: unknown): string => (typeof u === "string" ? u : "")
const int = (u: unknown): number => (typeof u === "number" && Number.isFinite(u) ? Math.trunc(u) : 0)
const count = (u: unknown): number => (isObject(u) ? Object.keys(u).length : 0)

const timeOf = (u: unknown): number | undefined => {
  if (typeof u !== "string" || u === "") return undefined
  const t = Date.parse(u)
  return Number.isNaN(t) ? undefined : t
}

/**
 * A duration as kubectl prints ages (apimachinery's `duration.HumanDuration`): `45s`, `3m20s`, `15m`,
 * `5h3m`, `20h`, `3d4h`, `40d`, `2y30d`, `9y`.
 *
 * @internal
 */
export const humanDuration = (millis: number): string => {
  const seconds = Math.trunc(millis / 1000)
  if (seconds < -1) return "<invalid>"
  if (seconds < 0) return "0s"
  if (seconds < 60 * 2) return `${seconds}s`
  const minutes = Math.trunc(seconds / 60)
  if (minutes < 10) {
    const s = seconds % 60
    return s === 0 ? `${minutes}m` : `${minutes}m${s}s`
  }
  if (minutes < 60 * 3) return `${minutes}m`
  const hours = Math.trunc(minutes / 60)
  if (hours < 8) {
    const m = minutes % 60
    return m === 0 ? `${hours}h` : `${hours}h${m}m`
  }
  if (hours < 48) return `${hours}h`
  if (hours < 24 * 8) {
    const h = hours % 24
    return h === 0 ? `${Math.trunc(hours / 24)}d` : `${Math.trunc(hours / 24)}d${h}h`
  }
  if (hours < 24 * 365 * 2) return `${Math.trunc(hours / 24)}d`
  if (hours < 24 * 365 * 8) {
    const dy = Math.trunc(hours / 24) % 365
    const y = Math.trunc(hours / 24 / 365)
    return dy === 0 ? `${y}y` : `${y}y${dy}d`
  }
  return `${Math.trunc(hours / 24 / 365)}y`
}

/** The age of a timestamp at `now`, `<unknown>` without one (`translateTimestampSince`). */
const since = (timestamp: unknown, now: number): string => {
  const t = timeOf(timestamp)
  return t === undefined ? "<unknown>" : humanDuration(now - t)
}

const age = (o: JsonObject, now: number): string => since(obj(o.metadata).creationTimestamp, now)
const nameOf = (o: JsonObject): string => str(obj(o.metadata).name)

/** Container names and images, comma-separated (`layoutContainerCells`). */
const containerCells = (podSpec: JsonObject): readonly [string, string] => {
  const containers = arr(podSpec.containers).map(obj)
  return [containers.map((c) => str(c.name)).join(","), containers.map((c) => str(c.image)).join(",")]
}

/** A label selector as `metav1.LabelSelectorAsSelector(...).String()` prints it; `<none>` when absent. */
export const formatSelector = (selector: unknown): string => {
  if (!isObject(selector)) return "<none>"
  const requirements: Array<readonly [string, string]> = []
  for (const [key, value] of Object.entries(obj(selector.matchLabels))) requirements.push([key, `${key}=${str(value)}`])
  for (const expression of arr(selector.matchExpressions).map(obj)) {
    const key = str(expression.key)
    const values = arr(expression.values).map(str).sort().join(",")
    switch (expression.operator) {
      case "In":
        requirements.push([key, `${key} in (${values})`])
        break
      case "NotIn":
        requirements.push([key, `${key} notin (${values})`])
        break
      case "Exists":
        requirements.push([key, key])
        break
      case "DoesNotExist":
        requirements.push([key, `!${key}`])
        break
      default:
        return "<invalid>"
    }
  }
  return requirements.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0)).map(([, text]) => text).join(",")
}

// -------------------------------------------------------------------------------------------------
// printers
// -------------------------------------------------------------------------------------------------

const hasCondition = (conditions: ReadonlyArray<JsonObject>, type: string): boolean =>
  conditions.some((c) => c.type === type && c.status === "True")

const terminatedText = (terminated: JsonObject, prefix: string): string =>
  str(terminated.reason) !== ""
    ? prefix + str(terminated.reason)
    : int(terminated.signal) !== 0
    ? `${prefix}Signal:${int(terminated.signal)}`
    : `${prefix}ExitCode:${int(terminated.exitCode)}`

const podSucceeded: ReadonlyArray<RowCondition> = [{
  type: "Completed",
  status: "True",
  reason: "Succeeded",
  message: "The pod has completed successfully."
}]
const podFailed: ReadonlyArray<RowCondition> = [{
  type: "Completed",
  status: "True",
  reason: "Failed",
  message: "The pod failed."
}]

/**
 * A pod's row as kube-apiserver's `printPod` computes it: READY is ready containers over containers (and
 * sidecars), STATUS the phase unless a reason says more (the pod's reason, an init container's state, a
 * waiting or terminated container's reason; `Terminating` once deletionTimestamp is set and the pod is not
 * done), RESTARTS the sum of restartCount with the age of the last restart.
 */
const printPod = (pod: JsonObject, now: number): Printed => {
  const spec = obj(pod.spec)
  const status = obj(pod.status)
  const conditions = arr(status.conditions).map(obj)
  const phase = str(status.phase)
  let reason = str(status.reason) !== "" ? str(status.reason) : phase
  if (conditions.some((c) => c.type === "PodScheduled" && c.reason === "SchedulingGated")) reason = "SchedulingGated"
  const initContainers = arr(spec.initContainers).map(obj)
  const sidecars = new Set(initContainers.filter((c) => c.restartPolicy === "Always").map((c) => str(c.name)))
  let total = arr(spec.containers).length + sidecars.size
  let ready = 0
  let restarts = 0
  let sidecarRestarts = 0
  let lastRestart = 0
  let lastSidecarRestart = 0
  const finishedAt = (container: JsonObject): number => timeOf(obj(obj(container.lastState).terminated).finishedAt) ?? 0
  let initializing = false
  const initStatuses = arr(status.initContainerStatuses).map(obj)
  for (let i = 0; i < initStatuses.length; i++) {
    const container = initStatuses[i]
    const sidecar = sidecars.has(str(container.name))
    restarts += int(container.restartCount)
    lastRestart = Math.max(lastRestart, finishedAt(container))
    if (sidecar) {
      sidecarRestarts += int(container.restartCount)
      lastSidecarRestart = Math.max(lastSidecarRestart, finishedAt(container))
    }
    const state = obj(container.state)
    const terminated = isObject(state.terminated) ? state.terminated : undefined
    const waiting = isObject(state.waiting) ? state.waiting : undefined
    if (terminated !== undefined && int(terminated.exitCode) === 0) continue
    if (sidecar && container.started === true) {
      if (container.ready === true) ready++
      continue
    }
    if (terminated !== undefined) reason = terminatedText(terminated, "Init:")
    else if (waiting !== undefined && str(waiting.reason) !== "" && waiting.reason !== "PodInitializing") {
      reason = "Init:" + str(waiting.reason)
    } else reason = `Init:${i}/${initContainers.length}`
    initializing = true
    break
  }
  if (!initializing || hasCondition(conditions, "Initialized")) {
    restarts = sidecarRestarts
    lastRestart = lastSidecarRestart
    let running = false
    const statuses = arr(status.containerStatuses).map(obj)
    for (let i = statuses.length - 1; i >= 0; i--) {
      const container = statuses[i]
      restarts += int(container.restartCount)
      lastRestart = Math.max(lastRestart, finishedAt(container))
      const state = obj(container.state)
      const waiting = obj(state.waiting)
      if (isObject(state.waiting) && str(waiting.reason) !== "") reason = str(waiting.reason)
      else if (isObject(state.terminated)) reason = terminatedText(state.terminated, "")
      else if (container.ready === true && isObject(state.running)) {
        running = true
        ready++
      }
    }
    if (reason === "Completed" && running) reason = hasCondition(conditions, "Ready") ? "Running" : "NotReady"
  }
  const deleting = obj(pod.metadata).deletionTimestamp !== undefined && obj(pod.metadata).deletionTimestamp !== null
  if (deleting && status.reason === "NodeLost") reason = "Unknown"
  else if (deleting && phase !== "Succeeded" && phase !== "Failed") reason = "Terminating"
  total = Math.max(total, 0)
  const restartText = restarts !== 0 && lastRestart !== 0
    ? `${restarts} (${humanDuration(now - lastRestart)} ago)`
    : String(restarts)
  const podIP = str(obj(arr(status.podIPs)[0]).ip) || "<none>"
  const gates = arr(spec.readinessGates).map(obj)
  const gateText = gates.length === 0 ?
    "<none>" :
    `${
      gates.filter((gate) => conditions.find((c) => c.type === gate.conditionType)?.status === "True").length
    }/${gates.length}`
  return {
    cells: [
      nameOf(pod),
      `${ready}/${total}`,
      reason,
      restartText,
      age(pod, now),
      podIP,
      str(spec.nodeName) || "<none>",
      str(status.nominatedNodeName) || "<none>",
      gateText
    ],
    conditions: phase === "Succeeded" ? podSucceeded : phase === "Failed" ? podFailed : undefined
  }
}

const pods: Printer = {
  columns: [
    nameColumn,
    column("Ready", "string", "The aggregate readiness state of this pod for accepting traffic."),
    column("Status", "string", "The aggregate status of the containers in this pod."),
    column(
      "Restarts",
      "string",
      "The number of times the containers in this pod have been restarted and when the last container in this pod has restarted."
    ),
    ageColumn,
    column("IP", "string", "podIP address allocated to the pod. Routable at least within the cluster.", 1),
    column("Node", "string", "NodeName indicates in which node this pod is scheduled.", 1),
    column(
      "Nominated Node",
      "string",
      "nominatedNodeName is set only when this pod preempts other pods on the node.",
      1
    ),
    column("Readiness Gates", "string", "If specified, all readiness gates will be evaluated for pod readiness.", 1)
  ],
  print: printPod
}

const nodeRoles = (labels: JsonObject): string => {
  const roles = new Set<string>()
  for (const [key, value] of Object.entries(labels)) {
    if (key.startsWith("node-role.kubernetes.io/")) {
      const role = key.slice("node-role.kubernetes.io/".length)
      if (role !== "") roles.add(role)
    } else if (key === "kubernetes.io/role" && str(value) !== "") roles.add(str(value))
  }
  return [...roles].sort().join(",") || "<none>"
}

const nodeAddress = (status: JsonObject, type: string): string =>
  str(arr(status.addresses).map(obj).find((a) => a.type === type)?.address) || "<none>"

const nodes: Printer = {
  columns: [
    nameColumn,
    column("Status", "string", "The status of the node"),
    column("Roles", "string", "The roles of the node"),
    ageColumn,
    column("Version", "string", "Kubelet Version reported by the node."),
    column("Internal-IP", "string", "List of addresses reachable to the node.", 1),
    column("External-IP", "string", "List of addresses reachable to the node.", 1),
    column(
      "OS-Image",
      "string",
      "OS Image reported by the node from /etc/os-release (e.g. Debian GNU/Linux 7 (wheezy)).",
      1
    ),
    column(
      "Kernel-Version",
      "string",
      "Kernel Version reported by the node from 'uname -r' (e.g. 3.16.0-0.bpo.4-amd64).",
      1
    ),
    column(
      "Container-Runtime",
      "string",
      "ContainerRuntime Version reported by the node through runtime remote API.",
      1
    )
  ],
  print: (node, now) => {
    const status = obj(node.status)
    const info = obj(status.nodeInfo)
    const ready = arr(status.conditions).map(obj).find((c) => c.type === "Ready")
    const states = [ready === undefined ? "Unknown" : ready.status === "True" ? "Ready" : "NotReady"]
    if (obj(node.spec).unschedulable === true) states.push("SchedulingDisabled")
    return {
      cells: [
        nameOf(node),
        states.join(","),
        nodeRoles(obj(obj(node.metadata).labels)),
        age(node, now),
        str(info.kubeletVersion),
        nodeAddress(status, "InternalIP"),
        nodeAddress(status, "ExternalIP"),
        str(info.osImage) || "<unknown>",
        str(info.kernelVersion) || "<unknown>",
        str(info.containerRuntimeVersion) || "<unknown>"
      ]
    }
  }
}

const namespaces: Printer = {
  columns: [nameColumn, column("Status", "string", "The status of the namespace"), ageColumn],
  print: (ns, now) => ({ cells: [nameOf(ns), str(obj(ns.status).phase), age(ns, now)] })
}

const templateColumns: ReadonlyArray<Column> = [
  column("Containers", "string", "Names of each container in the template.", 1),
  column("Images", "string", "Images referenced by each container in the template.", 1),
  column(
    "Selector",
    "string",
    "Label selector for pods. Existing ReplicaSets whose pods are selected by this will be the ones affected by this deployment.",
    1
  )
]

const deployments: Printer = {
  columns: [
    nameColumn,
    column("Ready", "string", "Number of the pod with ready state"),
    column(
      "Up-to-date",
      "string",
      "Total number of non-terminated pods targeted by this deployment that have the desired template spec."
    ),
    column(
      "Available",
      "string",
      "Total number of available pods (ready for at least minReadySeconds) targeted by this deployment."
    ),
    ageColumn,
    ...templateColumns
  ],
  print: (d, now) => {
    const spec = obj(d.spec)
    const status = obj(d.status)
    const [names, images] = containerCells(obj(obj(spec.template).spec))
    const desired = typeof spec.replicas === "number" ? int(spec.replicas) : 1
    return {
      cells: [
        nameOf(d),
        `${int(status.readyReplicas)}/${desired}`,
        int(status.updatedReplicas),
        int(status.availableReplicas),
        age(d, now),
        names,
        images,
        formatSelector(spec.selector)
      ]
    }
  }
}

const replicaSets: Printer = {
  columns: [
    nameColumn,
    column("Desired", "integer", "Replicas is the number of desired replicas."),
    column("Current", "integer", "Replicas is the most recently observed number of replicas."),
    column("Ready", "integer", "The number of ready replicas for this replica set."),
    ageColumn,
    ...templateColumns
  ],
  print: (rs, now) => {
    const spec = obj(rs.spec)
    const status = obj(rs.status)
    const [names, images] = containerCells(obj(obj(spec.template).spec))
    return {
      cells: [
        nameOf(rs),
        typeof spec.replicas === "number" ? int(spec.replicas) : 1,
        int(status.replicas),
        int(status.readyReplicas),
        age(rs, now),
        names,
        images,
        formatSelector(spec.selector)
      ]
    }
  }
}

const configMaps: Printer = {
  columns: [nameColumn, column("Data", "string", "Data contains the configuration data."), ageColumn],
  print: (cm, now) => ({ cells: [nameOf(cm), count(cm.data) + count(cm.binaryData), age(cm, now)] })
}

const secrets: Printer = {
  columns: [
    nameColumn,
    column("Type", "string", "Used to facilitate programmatic handling of secret data."),
    column("Data", "string", "Data contains the secret data."),
    ageColumn
  ],
  print: (s, now) => ({ cells: [nameOf(s), str(s.type), count(s.data), age(s, now)] })
}

const serviceAccounts: Printer = {
  columns: [
    nameColumn,
    column(
      "Secrets",
      "string",
      "Secrets is a list of the secrets in the same namespace that pods running using this ServiceAccount are allowed to use."
    ),
    ageColumn
  ],
  print: (sa, now) => ({ cells: [nameOf(sa), arr(sa.secrets).length, age(sa, now)] })
}

/** `k=v` pairs sorted by key, `<none>` when empty (`labels.FormatLabels`). */
const formatLabels = (labels: unknown): string => {
  const pairs = Object.entries(obj(labels)).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
  return pairs.length === 0 ? "<none>" : pairs.map(([k, v]) => `${k}=${str(v)}`).join(",")
}

const serviceExternalIP = (spec: JsonObject, status: JsonObject): string => {
  const external = arr(spec.externalIPs).map(str)
  switch (spec.type ?? "ClusterIP") {
    case "ClusterIP":
    case "NodePort":
      return external.length > 0 ? external.join(",") : "<none>"
    case "LoadBalancer": {
      const ingress = arr(obj(status.loadBalancer).ingress).map(obj)
        .map((i) => str(i.ip) || str(i.hostname))
        .filter((a) => a !== "")
      const all = [...new Set(ingress)].sort().concat(external)
      return all.length > 0 ? all.join(",") : "<pending>"
    }
    case "ExternalName":
      return str(spec.externalName)
    default:
      return "<unknown>"
  }
}

const services: Printer = {
  columns: [
    nameColumn,
    column("Type", "string", "type determines how the Service is exposed."),
    column("Cluster-IP", "string", "clusterIP is the IP address of the service and is usually assigned randomly."),
    column(
      "External-IP",
      "string",
      "externalIPs is a list of IP addresses for which nodes in the cluster will also accept traffic for this service."
    ),
    column("Port(s)", "string", "The list of ports that are exposed by this service."),
    ageColumn,
    column("Selector", "string", "Route service traffic to pods with label keys and values matching this selector.", 1)
  ],
  print: (svc, now) => {
    const spec = obj(svc.spec)
    const ports = arr(spec.ports).map(obj).map((p) =>
      int(p.nodePort) > 0
        ? `${int(p.port)}:${int(p.nodePort)}/${str(p.protocol)}`
        : `${int(p.port)}/${str(p.protocol)}`
    )
    return {
      cells: [
        nameOf(svc),
        str(spec.type),
        str(spec.clusterIP) || "<none>",
        serviceExternalIP(spec, obj(svc.status)),
        ports.length === 0 ? "<none>" : ports.join(","),
        age(svc, now),
        formatLabels(spec.selector)
      ]
    }
  }
}

const leases: Printer = {
  columns: [
    nameColumn,
    column("Holder", "string", "holderIdentity contains the identity of the holder of a current lease."),
    ageColumn
  ],
  print: (lease, now) => ({ cells: [nameOf(lease), str(obj(lease.spec).holderIdentity), age(lease, now)] })
}

/** The first non-empty string, `""` if none. */
const firstNonEmpty = (...values: ReadonlyArray<string>): string => values.find((v) => v !== "") ?? ""

/** `formatEventSource`: the component (or reporting controller), then `, ` and the host (or instance). */
const eventSource = (event: JsonObject): string => {
  const source = obj(event.source)
  const component = firstNonEmpty(str(source.component), str(event.reportingComponent))
  const instance = firstNonEmpty(str(source.host), str(event.reportingInstance))
  return instance === "" ? component : `${component}, ${instance}`
}

/** `v1` Events, as kube-apiserver's `printEvent` (every column: the server prints wide). */
const coreEventsPrinter: Printer = {
  columns: [
    column("Last Seen", "string", "The time at which the most recent occurrence of this event was recorded."),
    column("Type", "string", "Type of this event (Normal, Warning), new types could be added in the future"),
    column(
      "Reason",
      "string",
      "This should be a short, machine understandable string that gives the reason for the transition into the object's current status."
    ),
    column("Object", "string", "The object that this event is about."),
    column(
      "Subobject",
      "string",
      "If referring to a piece of an object instead of an entire object, this string should contain a valid JSON/Go field access statement, such as desiredState.manifest.containers[2]. For example, if the object reference is to a container within a pod, this would take on a value like: \"spec.containers{name}\" (where \"name\" refers to the name of the container that triggered the event) or if no container name is specified \"spec.containers[2]\" (container with index 2 in this pod). This syntax is chosen only to have some well-defined way of referencing a part of an object.",
      1
    ),
    column(
      "Source",
      "string",
      "The component reporting this event. Should be a short machine understandable string.",
      1
    ),
    column("Message", "string", "A human-readable description of the status of this operation."),
    column(
      "First Seen",
      "string",
      "The time at which the event was first recorded. (Time of server receipt is in TypeMeta.)",
      1
    ),
    column("Count", "string", "The number of times this event has occurred.", 1),
    { ...nameColumn, priority: 1 }
  ],
  print: (event, now) => {
    const involved = obj(event.involvedObject)
    const first = timeOf(event.firstTimestamp) === undefined
      ? since(event.eventTime, now)
      : since(event.firstTimestamp, now)
    let last = timeOf(event.lastTimestamp) === undefined ? first : since(event.lastTimestamp, now)
    let n = int(event.count)
    if (isObject(event.series)) {
      last = since(event.series.lastObservedTime, now)
      n = int(event.series.count)
    } else if (n === 0) {
      // singleton events have no count in the new API
      n = 1
    }
    const kind = str(involved.kind).toLowerCase()
    const name = str(involved.name)
    return {
      cells: [
        last,
        str(event.type),
        str(event.reason),
        name === "" ? kind : `${kind}/${name}`,
        str(involved.fieldPath),
        eventSource(event),
        str(event.message).trim(),
        first,
        n,
        nameOf(event)
      ]
    }
  }
}

/** `events.k8s.io/v1` Events: kube-apiserver prints them as `v1` Events. */
const eventsV1Printer: Printer = {
  columns: coreEventsPrinter.columns,
  print: (event, now) => coreEventsPrinter.print(eventsV1ToCore(event), now)
}

const fallback: Printer = {
  columns: [nameColumn, ageColumn],
  print: (o, now) => ({ cells: [nameOf(o), age(o, now)] })
}

const printers: ReadonlyMap<string, Printer> = new Map([
  ["pods", pods],
  ["nodes", nodes],
  ["namespaces", namespaces],
  ["deployments.apps", deployments],
  ["replicasets.apps", replicaSets],
  ["configmaps", configMaps],
  ["secrets", secrets],
  ["services", services],
  ["serviceaccounts", serviceAccounts],
  ["leases.coordination.k8s.io", leases],
  [coreEvents, coreEventsPrinter],
  [eventsV1Events, eventsV1Printer]
])

/** The printer of a resource (by `groupResource`): its own, or NAME and AGE. @internal */
export const printerOf = (groupResource: string): Printer => printers.get(groupResource) ?? fallback

// -------------------------------------------------------------------------------------------------
// tables
// -------------------------------------------------------------------------------------------------

/** An object to print: the parsed object, and its JSON when already at hand. @internal */
export interface Printable {
  readonly obj: JsonObject
  readonly json?: string | undefined
}

const rowObject = (item: Printable, request: TableRequest): string | undefined => {
  switch (request.include) {
    case "None":
      return undefined
    case "Object":
      return item.json ?? JSON.stringify(item.obj)
    case "Metadata":
      return JSON.stringify({
        kind: "PartialObjectMetadata",
        apiVersion: `meta.k8s.io/${request.version}`,
        metadata: obj(item.obj.metadata)
      })
  }
}

const rowJson = (printer: Printer, item: Printable, request: TableRequest, now: number): string => {
  const printed = printer.print(item.obj, now)
  const object = rowObject(item, request)
  return `{"cells":${JSON.stringify(printed.cells)}${
    printed.conditions === undefined ? "" : `,"conditions":${JSON.stringify(printed.conditions)}`
  }${object === undefined ? "" : `,"object":${object}`}}`
}

/** Table list metadata: resourceVersion, continue, remainingItemCount. @internal */
export interface TableMeta {
  readonly resourceVersion?: string | undefined
  readonly continue?: string | undefined
  readonly remainingItemCount?: number | undefined
}

/**
 * A Table of `items` (a list, or one object) as JSON text; without `headers` its `columnDefinitions`
 * is `null` (a watch's later events).
 *
 * @internal
 */
export const tableJson = (
  groupResource: string,
  items: ReadonlyArray<Printable>,
  meta: TableMeta,
  request: TableRequest,
  now: number,
  headers = true
): string => {
  const printer = printerOf(groupResource)
  const metadata: JsonObject = {}
  if (meta.resourceVersion !== undefined) metadata.resourceVersion = meta.resourceVersion
  if (meta.continue !== undefined) metadata.continue = meta.continue
  if (meta.remainingItemCount !== undefined) metadata.remainingItemCount = meta.remainingItemCount
  const rows = new Array<string>(items.length)
  for (let i = 0; i < items.length; i++) rows[i] = rowJson(printer, items[i], request, now)
  return `{"kind":"Table","apiVersion":"meta.k8s.io/${request.version}","metadata":${
    JSON.stringify(metadata)
  },"columnDefinitions":${headers ? JSON.stringify(printer.columns) : "null"},"rows":[${rows.join(",")}]}`
}

/**
 * Rewrites a watch's JSON lines so that each event's object is a Table of one row (ERROR events and lines
 * that are not JSON pass as they are); the first Table has the column definitions. Bytes after the last
 * newline wait for the next chunk (`rest` hands them over when the stream ends).
 *
 * @internal
 */
export class TableWatchEncoder {
  private partial = ""
  private headers = true
  private readonly decoder = new TextDecoder()

  constructor(readonly groupResource: string, readonly request: TableRequest) {}

  transform(bytes: Uint8Array, now: number): Uint8Array {
    const text = this.partial + this.decoder.decode(bytes, { stream: true })
    const end = text.lastIndexOf("\n")
    if (end === -1) {
      this.partial = text
      return new Uint8Array(0)
    }
    this.partial = text.slice(end + 1)
    const lines = text.slice(0, end).split("\n")
    let out = ""
    for (const line of lines) out += this.line(line, now) + "\n"
    return Buffer.from(out, "utf8")
  }

  /** What is left after the last newline (a partial line), once the stream ends. */
  rest(): Uint8Array {
    const rest = this.partial + this.decoder.decode()
    this.partial = ""
    return Buffer.from(rest, "utf8")
  }

  private line(line: string, now: number): string {
    let event: unknown
    try {
      event = JSON.parse(line)
    } catch {
      return line
    }
    if (!isObject(event) || event.type === "ERROR" || !isObject(event.object)) return line
    const object = event.object
    const table = tableJson(
      this.groupResource,
      [{ obj: object }],
      { resourceVersion: str(obj(object.metadata).resourceVersion) },
      this.request,
      now,
      this.headers
    )
    this.headers = false
    return `{"type":${JSON.stringify(event.type)},"object":${table}}`
  }
}

/**
 * The Table a request asks for (its Accept header, its `includeObject` parameter), `undefined` for plain
 * JSON, or the 400 of a bad `includeObject`.
 *
 * @internal
 */
export const tableRequest = (
  accept: string | undefined,
  include: string | undefined
): Result.Result<TableRequest | undefined, Status> => {
  const version = tableVersion(accept)
  if (version === undefined) return Result.succeed(undefined)
  return Result.map(includeObject(include), (include) => ({ version, include }))
}

/** A watch response whose events carry Tables (`TableWatchEncoder`), for `kubectl get -w`. @internal */
export const tableWatchResponse = (
  response: HttpServerResponse.HttpServerResponse,
  groupResource: string,
  table: TableRequest
): HttpServerResponse.HttpServerResponse => {
  const body = response.body
  if (body._tag !== "Stream") return response
  const encoder = new TableWatchEncoder(groupResource, table)
  const stream = body.stream.pipe(
    Stream.mapEffect((bytes) => Effect.map(Clock.currentTimeMillis, (now) => encoder.transform(bytes, now))),
    Stream.concat(Stream.suspend(() => {
      const rest = encoder.rest()
      return rest.length === 0 ? Stream.empty : Stream.make(rest)
    })),
    Stream.filter((bytes) => bytes.length > 0)
  )
  return HttpServerResponse.stream(stream, {
    status: response.status,
    headers: response.headers,
    contentType: "application/json"
  })
}

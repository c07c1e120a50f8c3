/**
 * Realistic objects and a churn loop for the embedded API server: pods, deployments and the nodes the pods
 * run on, shaped like the ones a kubelet and the controllers manage (about 3 KB of JSON per pod), `seed` to populate a server and
 * `make`/`run` to keep changing it at a given rate with a mix of creates, updates and deletes.
 *
 * Generators are pure and deterministic (every pseudo-random field derives from the object's name); the
 * churn loop takes its time from `Clock` and its choices from `Random`, so it is reproducible under
 * `TestClock` and a seeded `Random`.
 *
 * @since 0.1.0
 */
import type { V1Deployment, V1Namespace, V1Node, V1Pod, V1ReplicaSet } from "@kubernetes/client-node"
import type { StatusError } from "effect-informers/ApiError"
import type { Json } from "effect-informers/KubeObject"
import * as Resource from "effect-informers/Resource"
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Random from "effect/Random"
import type * as ApiServer from "./ApiServer.js"

// -------------------------------------------------------------------------------------------------
// deterministic helpers
// -------------------------------------------------------------------------------------------------

/** FNV-1a, 32 bits. */
const hash32 = (text: string, seed = 0x811c9dc5): number => {
  let h = seed >>> 0
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i)
    h = Math.imul(h, 0x01000193) >>> 0
  }
  return h
}

/** `length` hex digits derived from `text` (xorshift32 seeded with its hash). */
const hex = (text: string, length: number): string => {
  let x = hash32(text) || 1
  let out = ""
  while (out.length < length) {
    x ^= x << 13
    x ^= x >>> 17
    x ^= x << 5
    out += (x >>> 0).toString(16).padStart(8, "0")
  }
  return out.length === length ? out : out.slice(0, length)
}

/** A UUID-shaped string derived from `text`. */
const uuid = (text: string): string => {
  const h = hex(text, 32)
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-a${h.slice(17, 20)}-${h.slice(20, 32)}`
}

const alphabet = "bcdfghjklmnpqrstvwxz2456789"

/** Kubernetes-style random suffix characters, derived from `n`. */
const suffix = (n: number, length: number): string => {
  let out = ""
  let x = Math.abs(Math.floor(n))
  for (let i = 0; i < length; i++) {
    out += alphabet[x % alphabet.length]
    x = Math.floor(x / alphabet.length)
  }
  return out
}

const memo = <A>(f: (key: string) => A): (key: string) => A => {
  const cache = new Map<string, A>()
  return (key) => {
    let value = cache.get(key)
    if (value === undefined) {
      if (cache.size >= 4096) cache.clear()
      value = f(key)
      cache.set(key, value)
    }
    return value
  }
}

const imageId = memo((image: string) => `${image.split(":")[0]}@sha256:${hex(image, 64)}`)
const ownerUidOf = memo((key: string) => uuid(key))
const ownerUid = (namespace: string, app: string, hash: string): string => ownerUidOf(`${namespace}/${app}-${hash}`)

const timestamp = (millis: number): string => new Date(millis).toISOString().replace(/\.\d{3}Z$/, "Z")

/**
 * The pod-template-hash of an app's current ReplicaSet (10 characters, derived from the app name).
 *
 * @since 0.1.0
 * @category generators
 */
export const templateHash: (app: string) => string = memo((app) => suffix(hash32(app), 6) + suffix(hash32(app, 7), 4))

/**
 * A pod name as a ReplicaSet generates it: `APP-HASH-XXXXX`, unique per `index`.
 *
 * @since 0.1.0
 * @category generators
 */
export const podName = (app: string, index: number): string => `${app}-${templateHash(app)}-${suffix(index, 5)}`

// -------------------------------------------------------------------------------------------------
// generators
// -------------------------------------------------------------------------------------------------

/**
 * @since 0.1.0
 * @category models
 */
export interface PodOptions {
  readonly name: string
  readonly namespace: string
  /** The app (deployment) the pod belongs to; defaults to the name without its two last segments. */
  readonly app?: string | undefined
  /** Defaults to a node derived from the name among 16 (`node-0` ... `node-15`). */
  readonly nodeName?: string | undefined
  /** Time of the status fields, in milliseconds since the epoch. Defaults to 2024-01-01. */
  readonly now?: number | undefined
  readonly labels?: { readonly [key: string]: string } | undefined
  readonly phase?: "Pending" | "Running" | "Succeeded" | "Failed" | undefined
  readonly restartCount?: number | undefined
}

const defaultNow = Date.UTC(2024, 0, 1)

/** How many nodes `makePod` spreads pods over (`node-0` ... `node-15`). */
const nodeCount = 16

/**
 * The nodes `makePod` schedules pods on by default (`node-0` ... `node-15`), which `seed` creates.
 *
 * @since 0.2.0
 * @category generators
 */
export const nodeNames: ReadonlyArray<string> = Array.from({ length: nodeCount }, (_, i) => `node-${i}`)

const appOf = (name: string): string => {
  const parts = name.split("-")
  return parts.length > 2 ? parts.slice(0, -2).join("-") : name
}

/**
 * A pod as a Deployment's ReplicaSet creates it and the kubelet reports it: labels, annotations, an owner
 * reference, managed fields, a container with resources, probes and mounts, the service account volume,
 * the default tolerations, and a Running status with conditions and container statuses. About 3 KB of
 * JSON once the server has added uid, resourceVersion and creationTimestamp.
 *
 * @since 0.1.0
 * @category generators
 */
export const makePod = (options: PodOptions): Json<V1Pod> => {
  const { name, namespace } = options
  const app = options.app ?? appOf(name)
  const hash = templateHash(app)
  const key = `${namespace}/${name}`
  const nodeIndex = hash32(key) % nodeCount
  const nodeName = options.nodeName ?? `node-${nodeIndex}`
  const now = options.now ?? defaultNow
  const started = timestamp(now)
  const phase = options.phase ?? "Running"
  const running = phase === "Running"
  const ready = running ? "True" : "False"
  const volume = `kube-api-access-${suffix(hash32(key, 3), 5)}`
  const podIP = `10.244.${nodeIndex}.${(hash32(key, 5) % 250) + 2}`
  const hostIP = `10.0.0.${nodeIndex + 10}`
  const image = `registry.example.com/${app}:1.${hash32(app) % 20}.${hash32(app, 9) % 10}`
  const condition = (type: string, status: string) => ({ type, status, lastTransitionTime: started })
  const owner = ownerUid(namespace, app, hash)
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: {
      name,
      generateName: `${app}-${hash}-`,
      namespace,
      labels: {
        app,
        "app.kubernetes.io/name": app,
        "pod-template-hash": hash,
        track: "stable",
        ...options.labels
      },
      annotations: {
        "prometheus.io/scrape": "true",
        "prometheus.io/port": "9090"
      },
      ownerReferences: [{
        apiVersion: "apps/v1",
        kind: "ReplicaSet",
        name: `${app}-${hash}`,
        uid: owner,
        controller: true,
        blockOwnerDeletion: true
      }],
      managedFields: [
        {
          manager: "kubelet",
          operation: "Update",
          apiVersion: "v1",
          time: started,
          fieldsType: "FieldsV1",
          fieldsV1: { "f:status": { "f:conditions": {}, "f:containerStatuses": {}, "f:phase": {} } },
          subresource: "status"
        }
      ]
    },
    spec: {
      volumes: [{
        name: volume,
        projected: {
          sources: [
            { serviceAccountToken: { expirationSeconds: 3607, path: "token" } },
            { configMap: { name: "kube-root-ca.crt", items: [{ key: "ca.crt", path: "ca.crt" }] } }
          ],
          defaultMode: 420
        }
      }],
      containers: [{
        name: app,
        image,
        ports: [{ name: "http", containerPort: 8080, protocol: "TCP" }],
        resources: { limits: { cpu: "500m", memory: "256Mi" }, requests: { cpu: "100m", memory: "128Mi" } },
        volumeMounts: [{ name: volume, readOnly: true, mountPath: "/var/run/secrets/kubernetes.io/serviceaccount" }],
        readinessProbe: {
          httpGet: { path: "/healthz", port: 8080, scheme: "HTTP" },
          timeoutSeconds: 1,
          periodSeconds: 10,
          successThreshold: 1,
          failureThreshold: 3
        },
        terminationMessagePath: "/dev/termination-log",
        terminationMessagePolicy: "File",
        imagePullPolicy: "IfNotPresent"
      }],
      restartPolicy: "Always",
      terminationGracePeriodSeconds: 30,
      dnsPolicy: "ClusterFirst",
      serviceAccountName: "default",
      nodeName,
      securityContext: {},
      schedulerName: "default-scheduler",
      tolerations: [
        { key: "node.kubernetes.io/not-ready", operator: "Exists", effect: "NoExecute", tolerationSeconds: 300 },
        { key: "node.kubernetes.io/unreachable", operator: "Exists", effect: "NoExecute", tolerationSeconds: 300 }
      ]
    },
    status: {
      phase,
      conditions: [
        condition("Initialized", "True"),
        condition("Ready", ready),
        condition("ContainersReady", ready),
        condition("PodScheduled", "True")
      ],
      hostIP,
      podIP,
      podIPs: [{ ip: podIP }],
      startTime: started,
      containerStatuses: [{
        name: app,
        state: running ? { running: { startedAt: started } } : { waiting: { reason: "ContainerCreating" } },
        lastState: {},
        ready: running,
        restartCount: options.restartCount ?? 0,
        image,
        imageID: imageId(image),
        containerID: `containerd://${hex(key, 64)}`,
        started: running
      }],
      qosClass: "Burstable"
    }
  } as unknown as Json<V1Pod>
}

/**
 * @since 0.2.0
 * @category models
 */
export interface NodeOptions {
  readonly name: string
  /** Time of the creation and status fields, in milliseconds since the epoch. Defaults to 2024-01-01. */
  readonly now?: number | undefined
  /** Whether the Ready condition is True. Defaults to true. */
  readonly ready?: boolean | undefined
  /** `spec.unschedulable` (cordoned). Defaults to false. */
  readonly unschedulable?: boolean | undefined
}

/** The index of `node-N` (the nodes `makePod` schedules on), or one derived from another name. */
const nodeIndexOf = (name: string): number => {
  const match = /^node-(\d+)$/.exec(name)
  return match === null ? hash32(name) % 200 : Number(match[1]) % 240
}

/**
 * A Node as a kubelet registers and reports it: hostname, OS and architecture labels, a pod CIDR, and a
 * status with capacity and allocatable, the pressure and Ready conditions, its addresses (the InternalIP
 * is the `hostIP` of `makePod`'s pods on it) and nodeInfo (kubelet v1.32.0, containerd, Debian 12).
 * `kubectl get nodes` prints it as a Ready worker.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Resource } from "effect-informers"
 * import { ApiServer, ChurnSimulator } from "@effect-informers/testkit"
 *
 * const program = Effect.gen(function*() {
 *   const server = yield* ApiServer.make()
 *   yield* server.objects.create(Resource.nodes, ChurnSimulator.makeNode({ name: "node-0" }))
 * }).pipe(Effect.scoped)
 * ```
 *
 * @since 0.2.0
 * @category generators
 */
export const makeNode = (options: NodeOptions): Json<V1Node> => {
  const { name } = options
  const index = nodeIndexOf(name)
  const at = timestamp(options.now ?? defaultNow)
  const ready = options.ready ?? true
  const condition = (type: string, status: string, reason: string, message: string) => ({
    type,
    status,
    lastHeartbeatTime: at,
    lastTransitionTime: at,
    reason,
    message
  })
  const capacity = {
    cpu: "8",
    "ephemeral-storage": "203056560Ki",
    "hugepages-1Gi": "0",
    "hugepages-2Mi": "0",
    memory: "32863040Ki",
    pods: "110"
  }
  return {
    apiVersion: "v1",
    kind: "Node",
    metadata: {
      name,
      labels: {
        "beta.kubernetes.io/arch": "amd64",
        "beta.kubernetes.io/os": "linux",
        "kubernetes.io/arch": "amd64",
        "kubernetes.io/hostname": name,
        "kubernetes.io/os": "linux",
        "node.kubernetes.io/instance-type": "standard-8",
        "topology.kubernetes.io/zone": `zone-${String.fromCharCode(97 + (index % 3))}`
      },
      annotations: {
        "node.alpha.kubernetes.io/ttl": "0",
        "volumes.kubernetes.io/controller-managed-attach-detach": "true"
      }
    },
    spec: {
      podCIDR: `10.244.${index}.0/24`,
      podCIDRs: [`10.244.${index}.0/24`],
      ...(options.unschedulable === true ? { unschedulable: true } : {})
    },
    status: {
      capacity,
      allocatable: { ...capacity, cpu: "7910m", "ephemeral-storage": "187136925387", memory: "32146240Ki" },
      conditions: [
        condition("MemoryPressure", "False", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
        condition("DiskPressure", "False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
        condition("PIDPressure", "False", "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
        ready
          ? condition("Ready", "True", "KubeletReady", "kubelet is posting ready status")
          : condition("Ready", "Unknown", "NodeStatusUnknown", "Kubelet stopped posting node status.")
      ],
      addresses: [{ type: "InternalIP", address: `10.0.0.${index + 10}` }, { type: "Hostname", address: name }],
      daemonEndpoints: { kubeletEndpoint: { Port: 10250 } },
      nodeInfo: {
        machineID: hex(`${name}/machine`, 32),
        systemUUID: uuid(`${name}/system`),
        bootID: uuid(`${name}/boot`),
        kernelVersion: "6.1.0-18-amd64",
        osImage: "Debian GNU/Linux 12 (bookworm)",
        containerRuntimeVersion: "containerd://1.7.13",
        kubeletVersion: "v1.32.0",
        kubeProxyVersion: "v1.32.0",
        operatingSystem: "linux",
        architecture: "amd64"
      }
    }
  } as unknown as Json<V1Node>
}

/**
 * @since 0.1.0
 * @category models
 */
export interface DeploymentOptions {
  readonly name: string
  readonly namespace: string
  readonly replicas?: number | undefined
  /** Milliseconds since the epoch for the status timestamps. Defaults to 2024-01-01. */
  readonly now?: number | undefined
}

/**
 * A Deployment as `kubectl create deployment` plus the controller leave it: selector, a pod template
 * like `makePod`'s, the rolling-update strategy and an available status with conditions.
 *
 * @since 0.1.0
 * @category generators
 */
export const makeDeployment = (options: DeploymentOptions): Json<V1Deployment> => {
  const { name: app, namespace } = options
  const replicas = options.replicas ?? 3
  const now = timestamp(options.now ?? defaultNow)
  const image = `registry.example.com/${app}:1.${hash32(app) % 20}.${hash32(app, 9) % 10}`
  const condition = (type: string, reason: string, message: string) => ({
    type,
    status: "True",
    lastUpdateTime: now,
    lastTransitionTime: now,
    reason,
    message
  })
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: {
      name: app,
      namespace,
      labels: { app, "app.kubernetes.io/name": app, "app.kubernetes.io/part-of": "churn" },
      annotations: { "deployment.kubernetes.io/revision": "1" }
    },
    spec: {
      replicas,
      selector: { matchLabels: { app } },
      template: {
        metadata: { labels: { app, "app.kubernetes.io/name": app, "app.kubernetes.io/part-of": "churn" } },
        spec: {
          containers: [{
            name: app,
            image,
            ports: [{ name: "http", containerPort: 8080, protocol: "TCP" }],
            resources: { limits: { cpu: "500m", memory: "256Mi" }, requests: { cpu: "100m", memory: "128Mi" } },
            readinessProbe: {
              httpGet: { path: "/healthz", port: 8080, scheme: "HTTP" },
              timeoutSeconds: 1,
              periodSeconds: 10,
              successThreshold: 1,
              failureThreshold: 3
            },
            terminationMessagePath: "/dev/termination-log",
            terminationMessagePolicy: "File",
            imagePullPolicy: "IfNotPresent"
          }],
          restartPolicy: "Always",
          terminationGracePeriodSeconds: 30,
          dnsPolicy: "ClusterFirst",
          securityContext: {},
          schedulerName: "default-scheduler"
        }
      },
      strategy: { type: "RollingUpdate", rollingUpdate: { maxUnavailable: "25%", maxSurge: "25%" } },
      revisionHistoryLimit: 10,
      progressDeadlineSeconds: 600
    },
    status: {
      observedGeneration: 1,
      replicas,
      updatedReplicas: replicas,
      readyReplicas: replicas,
      availableReplicas: replicas,
      conditions: [
        condition("Available", "MinimumReplicasAvailable", "Deployment has minimum availability."),
        condition(
          "Progressing",
          "NewReplicaSetAvailable",
          `ReplicaSet "${app}-${templateHash(app)}" has successfully progressed.`
        )
      ]
    }
  } as unknown as Json<V1Deployment>
}

/**
 * @since 0.2.0
 * @category models
 */
export interface ReplicaSetOptions {
  readonly namespace: string
  /** The app (deployment) whose current ReplicaSet this is. */
  readonly app: string
  readonly replicas?: number | undefined
  /** Milliseconds since the epoch for the timestamps. Defaults to 2024-01-01. */
  readonly now?: number | undefined
  /** The Deployment owning it (its controller), when there is one. */
  readonly owner?: { readonly name: string; readonly uid: string } | undefined
}

/**
 * The ReplicaSet that owns `makePod`'s pods of an app in a namespace: named `APP-HASH`, with the uid
 * their owner references name, so that the garbage collector keeps them. Store it with
 * `server.bench.load`, which keeps the uid (`create` would assign another).
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Resource } from "effect-informers"
 * import { ApiServer, ChurnSimulator } from "@effect-informers/testkit"
 *
 * const program = Effect.gen(function*() {
 *   const server = yield* ApiServer.make()
 *   const replicaSet = ChurnSimulator.makeReplicaSet({ namespace: "default", app: "web" })
 *   yield* server.bench.load(Resource.replicaSets, [replicaSet])
 *   yield* server.objects.create(Resource.pods, ChurnSimulator.makePod({ name: "web-1", namespace: "default", app: "web" }))
 * }).pipe(Effect.scoped)
 * ```
 *
 * @since 0.2.0
 * @category generators
 */
export const makeReplicaSet = (options: ReplicaSetOptions): Json<V1ReplicaSet> => {
  const { app, namespace } = options
  const hash = templateHash(app)
  const replicas = options.replicas ?? 3
  const labels = { app, "app.kubernetes.io/name": app, "pod-template-hash": hash }
  return {
    apiVersion: "apps/v1",
    kind: "ReplicaSet",
    metadata: {
      name: `${app}-${hash}`,
      namespace,
      uid: ownerUid(namespace, app, hash),
      generation: 1,
      creationTimestamp: timestamp(options.now ?? defaultNow),
      labels,
      annotations: { "deployment.kubernetes.io/revision": "1" },
      ...(options.owner === undefined ? {} : {
        ownerReferences: [{
          apiVersion: "apps/v1",
          kind: "Deployment",
          name: options.owner.name,
          uid: options.owner.uid,
          controller: true,
          blockOwnerDeletion: true
        }]
      })
    },
    spec: {
      replicas,
      selector: { matchLabels: { app, "pod-template-hash": hash } },
      template: {
        metadata: { labels },
        spec: {
          containers: [{ name: app, image: `registry.example.com/${app}:1.${hash32(app) % 20}.${hash32(app, 9) % 10}` }]
        }
      }
    },
    status: {
      replicas,
      fullyLabeledReplicas: replicas,
      readyReplicas: replicas,
      availableReplicas: replicas,
      observedGeneration: 1
    }
  } as unknown as Json<V1ReplicaSet>
}

/**
 * Stores the ReplicaSet owning `makePod`'s pods of `app` in `namespace` unless it exists (then its uid
 * is the one the pods name, unless someone replaced it).
 */
const ensureReplicaSet = (
  server: ApiServer.ApiServer.Service,
  options: ReplicaSetOptions
): Effect.Effect<void, StatusError> =>
  server.objects.get(Resource.replicaSets, {
    namespace: options.namespace,
    name: `${options.app}-${templateHash(options.app)}`
  })
    .pipe(
      Effect.asVoid,
      Effect.catchIf(
        (e) => e.reason === "NotFound",
        () => Effect.asVoid(server.bench.load(Resource.replicaSets, [makeReplicaSet(options)]))
      )
    )

/** Stores the Node `makeNode` describes unless a node of that name exists. */
const ensureNode = (server: ApiServer.ApiServer.Service, options: NodeOptions): Effect.Effect<void, StatusError> =>
  server.objects.get(Resource.nodes, { name: options.name }).pipe(
    Effect.asVoid,
    Effect.catchIf(
      (e) => e.reason === "NotFound",
      () => ignoreAlreadyExists(server.objects.create(Resource.nodes, makeNode(options)))
    )
  )

// -------------------------------------------------------------------------------------------------
// seeding
// -------------------------------------------------------------------------------------------------

/**
 * @since 0.1.0
 * @category models
 */
export interface SeedOptions {
  readonly pods?: number | undefined
  /** Number of namespaces (`ns-0`, `ns-1`, ...), or their names. Defaults to 1. */
  readonly namespaces?: number | ReadonlyArray<string> | undefined
  /** Deployments, spread over the namespaces; pods belong to them. Defaults to 0 (pods still get apps). */
  readonly deployments?: number | undefined
  /** Apps the pods belong to when there are no deployments. Defaults to 10. */
  readonly apps?: number | undefined
}

/**
 * What `seed` created.
 *
 * @since 0.1.0
 * @category models
 */
export interface Seeded {
  readonly namespaces: ReadonlyArray<string>
  /** The nodes (`makeNode`) the pods run on: `nodeNames` when there are pods. */
  readonly nodes: ReadonlyArray<string>
  readonly apps: ReadonlyArray<string>
  readonly pods: number
  readonly deployments: number
}

const namespaceNames = (namespaces: SeedOptions["namespaces"]): ReadonlyArray<string> =>
  namespaces === undefined
    ? ["ns-0"]
    : typeof namespaces === "number"
    ? Array.from({ length: Math.max(1, namespaces) }, (_, i) => `ns-${i}`)
    : namespaces

const ignoreAlreadyExists = <A>(
  effect: Effect.Effect<A, StatusError>
): Effect.Effect<void, StatusError> =>
  Effect.asVoid(Effect.catchIf(effect, (e) => e.reason === "AlreadyExists", () => Effect.void))

/** Creates the namespace `name` unless it exists, as `kubectl create namespace` would. */
const ensureNamespace = (server: ApiServer.ApiServer.Service, name: string): Effect.Effect<void, StatusError> =>
  ignoreAlreadyExists(server.objects.create(
    Resource.namespaces,
    {
      apiVersion: "v1",
      kind: "Namespace",
      metadata: { name, labels: { "kubernetes.io/metadata.name": name } },
      spec: { finalizers: ["kubernetes"] },
      status: { phase: "Active" }
    } as unknown as Json<V1Namespace>
  ))

/**
 * Populates a server: namespaces, deployments and pods spread round-robin over the namespaces (pod `i`
 * is in namespace `i mod n` and belongs to app `i mod apps` of that namespace), the ReplicaSets that
 * own the pods (`makeReplicaSet`, owned by their Deployment when there is one), so that the garbage
 * collector keeps them, and the Nodes the pods run on (`makeNode` for each of `nodeNames`, when there
 * are pods). Objects that already exist are left alone.
 *
 * @since 0.1.0
 * @category seeding
 */
export const seed = (
  server: ApiServer.ApiServer.Service,
  options: SeedOptions = {}
): Effect.Effect<Seeded, StatusError> =>
  Effect.gen(function*() {
    const now = yield* Clock.currentTimeMillis
    const namespaces = namespaceNames(options.namespaces)
    const deployments = options.deployments ?? 0
    const appCount = deployments > 0 ? deployments : Math.max(1, options.apps ?? 10)
    const apps = Array.from({ length: appCount }, (_, i) => `app-${i}`)
    for (const name of namespaces) yield* ensureNamespace(server, name)
    const owners = new Map<string, { readonly name: string; readonly uid: string }>()
    for (let i = 0; i < deployments; i++) {
      const namespace = namespaces[i % namespaces.length]
      const deployment = makeDeployment({ name: apps[i], namespace, now })
      const stored = yield* server.objects.create(Resource.deployments, deployment).pipe(
        Effect.catchIf(
          (e) => e.reason === "AlreadyExists",
          () => server.objects.get(Resource.deployments, { namespace, name: apps[i] })
        )
      )
      owners.set(`${namespace}/${apps[i]}`, { name: apps[i], uid: stored.metadata?.uid ?? "" })
    }
    // the apps of each namespace: deployment i lives in namespace i mod n
    const appsIn = namespaces.map((_, n) => deployments > 0 ? apps.filter((_, i) => i % namespaces.length === n) : apps)
    const pods = options.pods ?? 0
    const ensured = new Set<string>()
    // the nodes the pods run on, before them (as the kubelets registered them)
    const nodes = pods > 0 ? nodeNames : []
    for (const name of nodes) yield* ignoreAlreadyExists(server.objects.create(Resource.nodes, makeNode({ name, now })))
    for (let i = 0; i < pods; i++) {
      const n = i % namespaces.length
      const local = appsIn[n].length > 0 ? appsIn[n] : apps
      const app = local[Math.floor(i / namespaces.length) % local.length]
      const key = `${namespaces[n]}/${app}`
      if (!ensured.has(key)) {
        ensured.add(key)
        yield* ensureReplicaSet(server, { namespace: namespaces[n], app, now, owner: owners.get(key) })
      }
      const pod = makePod({ name: podName(app, i), namespace: namespaces[n], app, now })
      yield* ignoreAlreadyExists(server.objects.create(Resource.pods, pod))
    }
    return { namespaces, nodes, apps, pods, deployments }
  })

// -------------------------------------------------------------------------------------------------
// churn
// -------------------------------------------------------------------------------------------------

/**
 * Relative weights of the operations.
 *
 * @since 0.1.0
 * @category models
 */
export interface Mix {
  readonly create?: number | undefined
  readonly update?: number | undefined
  readonly delete?: number | undefined
}

/**
 * @since 0.1.0
 * @category models
 */
export interface ChurnOptions {
  /** Changes per second. */
  readonly rate: number
  /** Defaults to `{ create: 1, update: 8, delete: 1 }`. */
  readonly mix?: Mix | undefined
  /** Namespaces to create pods in and to pick pods from. Defaults to those of the existing pods. */
  readonly namespaces?: ReadonlyArray<string> | undefined
  /** How often the loop wakes up to catch up with `rate`. Defaults to 10 ms. */
  readonly tick?: Duration.Input | undefined
}

/**
 * Changes made so far.
 *
 * @since 0.1.0
 * @category models
 */
export interface Counts {
  readonly created: number
  readonly updated: number
  readonly deleted: number
  /** Operations the server refused (e.g. a pod deleted by someone else). */
  readonly failed: number
}

/**
 * A churn simulator over one server's pods.
 *
 * @since 0.1.0
 * @category models
 */
export interface Churn {
  /** Performs `n` operations now. */
  readonly step: (n: number) => Effect.Effect<void>
  /** Performs operations at `rate` per second, forever; fork it into a scope. */
  readonly run: Effect.Effect<never>
  readonly counts: Effect.Effect<Counts>
}

interface PodRef {
  readonly namespace: string
  readonly name: string
}

type Pod = Json<V1Pod>

/** A kubelet status heartbeat: a restart and new start times. */
const restarted = (pod: Pod, now: number): Pod => {
  const status = pod.status ?? {}
  const started = timestamp(now)
  const containerStatuses = (status.containerStatuses ?? []).map((c) => ({
    ...c,
    restartCount: (c.restartCount ?? 0) + 1,
    state: { running: { startedAt: started } },
    lastState: { terminated: { exitCode: 137, reason: "OOMKilled", startedAt: started, finishedAt: started } }
  }))
  const conditions = (status.conditions ?? []).map((c) =>
    c.type === "Ready" || c.type === "ContainersReady" ? { ...c, lastTransitionTime: started } : c
  )
  return { ...pod, status: { ...status, containerStatuses, conditions } } as Pod
}

const annotated = (pod: Pod, value: string): Pod =>
  ({
    ...pod,
    metadata: {
      ...pod.metadata,
      annotations: { ...pod.metadata?.annotations, "churn.effect-informers.io/tick": value }
    }
  }) as Pod

/** Flips the `track` label between `stable` and `canary`, so label selectors see objects come and go. */
const relabeled = (pod: Pod): Pod => {
  const labels = pod.metadata?.labels ?? {}
  return {
    ...pod,
    metadata: { ...pod.metadata, labels: { ...labels, track: labels.track === "canary" ? "stable" : "canary" } }
  } as Pod
}

/**
 * A churn simulator over `server`'s pods (those in `options.namespaces`, or all of them). It creates the
 * nodes pods are created on (`nodeNames`) and the namespaces of `options.namespaces` that do not exist;
 * nothing else happens until `step` or `run` is used.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { ApiServer, ChurnSimulator } from "@effect-informers/testkit"
 *
 * const program = Effect.gen(function*() {
 *   const server = yield* ApiServer.make()
 *   yield* ChurnSimulator.seed(server, { pods: 100, namespaces: 4 })
 *   const churn = yield* ChurnSimulator.make(server, { rate: 500 })
 *   yield* Effect.forkScoped(churn.run)
 * })
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (server: ApiServer.ApiServer.Service, options: ChurnOptions): Effect.Effect<Churn> =>
  Effect.gen(function*() {
    // the nodes the created pods will run on (nothing is written when `seed` made them)
    const started = yield* Clock.currentTimeMillis
    yield* Effect.forEach(nodeNames, (name) => ensureNode(server, { name, now: started }), { discard: true }).pipe(
      Effect.catch((error) => Effect.logWarning(`ChurnSimulator: the nodes could not be created: ${error.message}`))
    )
    // and the namespaces asked for (pods can only be created in an existing namespace)
    yield* Effect.forEach(options.namespaces ?? [], (name) => ensureNamespace(server, name), { discard: true }).pipe(
      Effect.catch((error) =>
        Effect.logWarning(`ChurnSimulator: the namespaces could not be created: ${error.message}`)
      )
    )
    const existing = yield* server.objects.snapshot(Resource.pods)
    const wanted = options.namespaces === undefined ? undefined : new Set(options.namespaces)
    const live: Array<PodRef> = []
    const index = new Map<string, number>()
    const add = (ref: PodRef) => {
      const key = `${ref.namespace}/${ref.name}`
      if (index.has(key)) return
      index.set(key, live.length)
      live.push(ref)
    }
    const remove = (ref: PodRef) => {
      const key = `${ref.namespace}/${ref.name}`
      const i = index.get(key)
      if (i === undefined) return
      const last = live.pop()!
      index.delete(key)
      if (i < live.length) {
        live[i] = last
        index.set(`${last.namespace}/${last.name}`, i)
      }
    }
    for (const pod of existing) {
      const namespace = pod.metadata?.namespace ?? ""
      const name = pod.metadata?.name ?? ""
      if (wanted === undefined || wanted.has(namespace)) add({ namespace, name })
    }
    const found = options.namespaces ?? [...new Set(live.map((ref) => ref.namespace))]
    const namespaces = found.length === 0 ? ["default"] : found
    const mix = options.mix ?? {}
    const wCreate = Math.max(0, mix.create ?? (options.mix === undefined ? 1 : 0))
    const wUpdate = Math.max(0, mix.update ?? (options.mix === undefined ? 8 : 0))
    const wDelete = Math.max(0, mix.delete ?? (options.mix === undefined ? 1 : 0))
    const total = wCreate + wUpdate + wDelete || 1
    const counts = { created: 0, updated: 0, deleted: 0, failed: 0 }
    let serial = existing.length

    const failed = (ref: PodRef | undefined) => (error: StatusError) =>
      Effect.sync(() => {
        counts.failed++
        if (ref !== undefined && error.reason === "NotFound") remove(ref)
      })

    const create = Effect.gen(function*() {
      const namespace = namespaces[yield* Random.nextIntBetween(0, namespaces.length, { halfOpen: true })]
      const app = `app-${yield* Random.nextIntBetween(0, 10, { halfOpen: true })}`
      const now = yield* Clock.currentTimeMillis
      const name = podName(app, serial++)
      yield* ensureReplicaSet(server, { namespace, app, now }).pipe(
        Effect.andThen(server.objects.create(Resource.pods, makePod({ name, namespace, app, now }))),
        Effect.matchEffect({
          onFailure: failed(undefined),
          onSuccess: () =>
            Effect.sync(() => {
              counts.created++
              add({ namespace, name })
            })
        })
      )
    })

    const pick = Effect.suspend(() =>
      Effect.map(Random.nextIntBetween(0, live.length, { halfOpen: true }), (i) => live[i])
    )

    const update = Effect.gen(function*() {
      const ref = yield* pick
      const kind = yield* Random.nextIntBetween(0, 20, { halfOpen: true })
      const now = yield* Clock.currentTimeMillis
      yield* server.objects.get(Resource.pods, ref).pipe(
        Effect.map((pod) =>
          kind < 12 ? restarted(pod, now) : kind < 17 ? annotated(pod, String(counts.updated)) : relabeled(pod)
        ),
        Effect.flatMap((pod) => server.objects.update(Resource.pods, pod)),
        Effect.matchEffect({ onFailure: failed(ref), onSuccess: () => Effect.sync(() => counts.updated++) })
      )
    })

    const del = Effect.gen(function*() {
      const ref = yield* pick
      yield* server.objects.delete(Resource.pods, ref).pipe(
        Effect.matchEffect({
          onFailure: failed(ref),
          onSuccess: () =>
            Effect.sync(() => {
              counts.deleted++
              remove(ref)
            })
        })
      )
    })

    const one = Effect.flatMap(
      Random.nextIntBetween(0, total, { halfOpen: true }),
      (r) => live.length === 0 || r < wCreate ? create : r < wCreate + wUpdate ? update : del
    )

    const step = (n: number): Effect.Effect<void> =>
      Effect.suspend(() => {
        let i = 0
        return Effect.whileLoop({ while: () => i++ < n, body: () => one, step: () => {} })
      })

    const tick = Duration.fromInputUnsafe(options.tick ?? Duration.millis(10))
    const rate = Math.max(0, options.rate)
    const run: Effect.Effect<never> = Effect.gen(function*() {
      const start = yield* Clock.currentTimeMillis
      let done = 0
      while (true) {
        yield* Effect.sleep(tick)
        const now = yield* Clock.currentTimeMillis
        let due = Math.floor(((now - start) * rate) / 1000) - done
        // a loop that cannot keep up drops the backlog beyond one second instead of spiralling
        if (due > rate && rate > 0) {
          done += due - Math.ceil(rate)
          due = Math.ceil(rate)
        }
        if (due > 0) {
          yield* step(due)
          done += due
        }
      }
    })

    return {
      step,
      run,
      counts: Effect.sync((): Counts => ({ ...counts }))
    }
  })

/**
 * `make` then `run`: churns `server`'s pods at `options.rate` changes per second, forever. Fork it into a
 * scope; use `make` to read the counts.
 *
 * @since 0.1.0
 * @category constructors
 */
export const run = (server: ApiServer.ApiServer.Service, options: ChurnOptions): Effect.Effect<never> =>
  Effect.flatMap(make(server, options), (churn) => churn.run)

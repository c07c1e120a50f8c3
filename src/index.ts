/**
 * effect-informers: Kubernetes client-go's informer machinery for Effect.
 *
 * Test fakes (`FakeListerWatcher`, `ApiStore`, the informer factory over fakes) are not here: they are in
 * `effect-informers/testing`.
 *
 * @since 0.1.0
 */

import * as KubeObjectModule from "./KubeObject.js"

/**
 * The errors of talking to the API server: `StatusError`, `TransportError`, `DecodeError`.
 *
 * @since 0.2.0
 */
export * as ApiError from "./ApiError.js"

/**
 * A typed client for any resource: get, list, create, update, patch, server-side apply, delete and the
 * status subresource, rate limited as client-go's, and `retryOnConflict`.
 *
 * @since 0.2.0
 */
export * as Client from "./Client.js"

/**
 * The `HttpClient` for a cluster: Node's HTTP client over one keep-alive agent pool with the `KubeConfig`'s
 * TLS material, shared by the ListerWatchers and the Client.
 *
 * @since 0.2.0
 */
export * as ClusterHttpClient from "./ClusterHttpClient.js"

/**
 * Read-your-own-writes for controllers: resourceVersion comparison and the per-key write tracker.
 *
 * @since 0.2.0
 */
export * as Consistency from "./Consistency.js"

/**
 * Controllers: reconcile per key over informers and a WorkQueue, with read-your-own-writes.
 *
 * @since 0.2.0
 */
export * as Controller from "./Controller.js"

/**
 * @since 0.1.0
 */
export * as DeltaFifo from "./DeltaFifo.js"

/**
 * Kubernetes Events (events.k8s.io/v1) about objects: series of isomorphic events, a spam filter.
 *
 * @since 0.2.0
 */
export * as EventRecorder from "./EventRecorder.js"

/**
 * @since 0.1.0
 */
export * as FieldSelector from "./FieldSelector.js"

/**
 * Finalizers: `has`, `add`, `remove`, and `reconcile`, kube-rs's finalizer flow for a Controller's reconcile
 * (add the finalizer, `apply`; on deletion `cleanup`, then remove it), with conflict-safe JSON patches.
 *
 * @since 0.2.0
 */
export * as Finalizer from "./Finalizer.js"

/**
 * @since 0.1.0
 */
export * as HttpListerWatcher from "./HttpListerWatcher.js"

/**
 * @since 0.1.0
 */
export * as Indexer from "./Indexer.js"

/**
 * @since 0.1.0
 */
export * as InformerFactory from "./InformerFactory.js"

/**
 * @since 0.1.0
 */
export { KubeObjectModule as KubeObject }

/**
 * The object type, so that `import type { KubeObject } from "effect-informers"` names it (the module's
 * helpers stay under the same name: `KubeObject.resourceVersion(obj)`).
 *
 * @since 0.2.0
 * @category models
 */
export type KubeObject = KubeObjectModule.KubeObject

/**
 * @since 0.1.0
 */
export * as KubeConfig from "./KubeConfig.js"

/**
 * @since 0.1.0
 */
export * as LabelSelector from "./LabelSelector.js"

/**
 * The Layers an application composes (the module `effect-informers/Layer`), under the name apps use for it
 * (`import { Informers } from "effect-informers"`), so that it does not shadow `effect`'s `Layer`. The fake
 * layers for tests are in `effect-informers/testing`.
 *
 * @since 0.1.0
 */
export * as Informers from "./Layer.js"

/**
 * Leader election over a Lease, as client-go's: one replica at a time runs the work, stopped before its
 * lease can be taken; the Lease released on shutdown.
 *
 * @since 0.2.0
 */
export * as LeaderElection from "./LeaderElection.js"

/**
 * @since 0.1.0
 */
export * as Lister from "./Lister.js"

/**
 * @since 0.1.0
 */
export * as ListerWatcher from "./ListerWatcher.js"

/**
 * Several controllers on one informer factory, with health and readiness probes.
 *
 * @since 0.2.0
 */
export * as Manager from "./Manager.js"

/**
 * Metadata-only objects (`PartialObjectMetadata`): what an informer of `Resource.metadataOnly(r)` caches.
 *
 * @since 0.2.0
 */
export * as Metadata from "./Metadata.js"

/**
 * @since 0.1.0
 */
export * as Metrics from "./Metrics.js"

/**
 * Owner references as controller-runtime's `controllerutil`: `setControllerReference`, `setOwnerReference`,
 * `controllerOf`, `isControlledBy`, `hasOwnerReference`, `removeOwnerReference`.
 *
 * @since 0.2.0
 */
export * as OwnerReference from "./OwnerReference.js"

/**
 * @since 0.2.0
 */
export * as RateLimiter from "./RateLimiter.js"

/**
 * @since 0.1.0
 */
export * as Reflector from "./Reflector.js"

/**
 * @since 0.1.0
 */
export * as Resource from "./Resource.js"

/**
 * @since 0.1.0
 */
export * as SharedInformer from "./SharedInformer.js"

/**
 * Sharding over Leases: each replica announces itself with a membership Lease, keys go to live members by
 * rendezvous hashing, and a key's old owner stops before its new owner starts.
 *
 * @since 0.2.0
 */
export * as Sharding from "./Sharding.js"

/**
 * Terms: the time work may write on behalf of a leadership or a shard ownership; the check that stops a
 * stale write (fencing by the local monotonic clock).
 *
 * @since 0.2.0
 */
export * as Term from "./Term.js"

/**
 * @since 0.1.0
 */
export * as Wire from "./Wire.js"

/**
 * @since 0.2.0
 */
export * as WorkQueue from "./WorkQueue.js"

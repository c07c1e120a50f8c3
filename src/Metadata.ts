/**
 * Metadata-only objects (`meta.k8s.io/v1` `PartialObjectMetadata`), as client-go's `metadatainformer` and
 * kube-rs's `metadata_watcher` use them: an informer that needs only names, labels, owners or finalizers
 * caches the metadata of each object and none of its spec or status, a fraction of the memory and of the
 * bytes on the wire.
 *
 * `Resource.metadataOnly(resource)` describes the metadata of any resource; an informer of it (from
 * `InformerFactory.informerFor`, `SharedInformer.make` over `HttpListerWatcher.make`, or a
 * `FakeListerWatcher` source) holds `PartialObjectMetadata` objects. Over HTTP it asks with the `Accept`
 * headers of client-go's metadata client (`listAccept` for LIST, `watchAccept` for WATCH and watch-list),
 * so the server sends metadata only; a server that answers with full objects anyway is tolerated: each
 * object is cut down to its metadata where it enters (`fromObject`), so the cache never holds a spec.
 *
 * @since 0.2.0
 */
import type { V1ObjectMeta } from "@kubernetes/client-node"
import type { Json, KubeObject } from "./KubeObject.js"

/**
 * The API version of `PartialObjectMetadata`.
 *
 * @since 0.2.0
 * @category constants
 */
export const apiVersion = "meta.k8s.io/v1"

/**
 * The kind of one metadata-only object.
 *
 * @since 0.2.0
 * @category constants
 */
export const kind = "PartialObjectMetadata"

/**
 * The kind of a list of metadata-only objects.
 *
 * @since 0.2.0
 * @category constants
 */
export const listKind = "PartialObjectMetadataList"

/**
 * The `Accept` header of a metadata-only LIST, as client-go's metadata client sends it: a
 * `PartialObjectMetadataList`, or plain JSON from a server that cannot.
 *
 * @since 0.2.0
 * @category constants
 */
export const listAccept = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json"

/**
 * The `Accept` header of a metadata-only WATCH (also with `sendInitialEvents`) and GET: each object as a
 * `PartialObjectMetadata`, or plain JSON from a server that cannot.
 *
 * @since 0.2.0
 * @category constants
 */
export const watchAccept = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json"

/**
 * An object's metadata without its body (`metav1.PartialObjectMetadata`), as the wire has it.
 *
 * @since 0.2.0
 * @category models
 */
export interface PartialObjectMetadata extends KubeObject {
  readonly apiVersion: typeof apiVersion
  readonly kind: typeof kind
  readonly metadata: Json<V1ObjectMeta>
}

/**
 * Whether a value is a `PartialObjectMetadata` (its `kind` and `apiVersion` say so and it has metadata).
 *
 * @since 0.2.0
 * @category guards
 */
export const isPartialObjectMetadata = (u: unknown): u is PartialObjectMetadata =>
  typeof u === "object" && u !== null && (u as KubeObject).kind === kind &&
  (u as KubeObject).apiVersion === apiVersion && typeof (u as KubeObject).metadata === "object" &&
  (u as KubeObject).metadata !== null

/**
 * The metadata of an object, as a `PartialObjectMetadata`: the object itself when it is one already (no
 * copy), otherwise a new object holding its `metadata` (shared, not copied) and nothing else.
 *
 * @example
 * ```ts
 * import { Metadata, type Resource } from "effect-informers"
 *
 * const pod: Resource.Pod = {
 *   apiVersion: "v1",
 *   kind: "Pod",
 *   metadata: { namespace: "default", name: "web" },
 *   spec: { containers: [] }
 * }
 * const meta = Metadata.fromObject(pod)
 * console.log(meta) // { apiVersion: "meta.k8s.io/v1", kind: "PartialObjectMetadata", metadata: { namespace: "default", name: "web" } }
 * ```
 *
 * @since 0.2.0
 * @category constructors
 */
export const fromObject = (obj: KubeObject): PartialObjectMetadata =>
  isPartialObjectMetadata(obj) ? obj : {
    apiVersion,
    kind,
    metadata: (obj.metadata ?? {}) as Json<V1ObjectMeta>
  }

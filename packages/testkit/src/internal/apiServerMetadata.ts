/**
 * Metadata-only responses of the embedded API server, as kube-apiserver serves them to client-go's
 * metadata client: a request whose `Accept` header asks first for `application/json;as=PartialObjectMetadata`
 * (GET, WATCH) or `as=PartialObjectMetadataList` (LIST), `g=meta.k8s.io`, `v=v1` (or `v1beta1`), gets each
 * object as a `PartialObjectMetadata` (`kind`, `apiVersion: meta.k8s.io/v1`, the object's `metadata`), a
 * list as a `PartialObjectMetadataList` with the list's metadata, and watch events (initial events,
 * bookmarks included) of `PartialObjectMetadata` objects. A `v1beta1` request is answered in `v1` (which
 * kube-apiserver would label `meta.k8s.io/v1beta1`; the content is the same).
 *
 * @internal
 */
import type * as ApiStore from "effect-informers/ApiStore"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import type { Entry, HistoryEvent } from "./apiServerStore.js"
import { encode } from "./apiServerStore.js"
import { Watcher } from "./apiServerWatch.js"

const metaGroup = "meta.k8s.io"
const metaVersions: ReadonlyArray<string> = ["v1", "v1beta1"]

/** The media type and parameters of one range of an `Accept` header. */
const parseRange = (range: string): { readonly type: string; readonly params: Map<string, string> } => {
  const [type, ...rest] = range.split(";")
  const params = new Map<string, string>()
  for (const part of rest) {
    const eq = part.indexOf("=")
    if (eq > 0) params.set(part.slice(0, eq).trim().toLowerCase(), part.slice(eq + 1).trim())
  }
  return { type: type.trim().toLowerCase(), params }
}

const jsonLike = (type: string): boolean => type === "application/json" || type === "application/*" || type === "*/*"

/**
 * Whether a request asks for metadata only: the first range of its `Accept` header this server can answer
 * is `application/json;as=PartialObjectMetadata[List];g=meta.k8s.io;v=v1` (the list kind for a LIST), and
 * not plain JSON. Ranges asking for other kinds (`as=Table`) or other types are passed over.
 *
 * @internal
 */
export const wantsMetadata = (accept: string | undefined, verb: "get" | "list" | "watch"): boolean => {
  if (accept === undefined || !accept.includes("PartialObjectMetadata")) return false
  const wanted = verb === "list" ? "PartialObjectMetadataList" : "PartialObjectMetadata"
  for (const range of accept.split(",")) {
    const { params, type } = parseRange(range)
    const as = params.get("as")
    // Plain protobuf first: the full object (answered as JSON), as kube-apiserver would send it.
    if (!jsonLike(type)) {
      if (type === "application/vnd.kubernetes.protobuf" && as === undefined) return false
      continue
    }
    if (as === undefined) return false
    const meta = params.get("g") === metaGroup && metaVersions.includes(params.get("v") ?? "")
    if (as === wanted && meta) return true
    // A Table range first wins over a metadata range after it (apiServerTable's `tableVersion`).
    if (as === "Table" && meta) return false
  }
  return false
}

const encoded = new WeakMap<Entry, string>()

/**
 * An object's `PartialObjectMetadata` JSON; computed once per stored version and shared by every response.
 *
 * @internal
 */
export const metadataJson = (entry: Entry): string => {
  let json = encoded.get(entry)
  if (json === undefined) {
    json = `{"kind":"PartialObjectMetadata","apiVersion":"meta.k8s.io/v1","metadata":${JSON.stringify(entry.metadata)}}`
    encoded.set(entry, json)
  }
  return json
}

/**
 * A GET's metadata-only answer.
 *
 * @internal
 */
export const metadataObjectResponse = (entry: Entry): HttpServerResponse.HttpServerResponse =>
  HttpServerResponse.text(metadataJson(entry), { status: 200, contentType: "application/json" })

/**
 * A LIST's metadata-only answer: a `PartialObjectMetadataList` with the page's list metadata
 * (resourceVersion, continue, remainingItemCount).
 *
 * @internal
 */
export const metadataListResponse = (outcome: ApiStore.ListOutcome<Entry>): HttpServerResponse.HttpServerResponse => {
  const metadata: Record<string, unknown> = { resourceVersion: String(outcome.page.rv) }
  if (outcome.continueToken !== undefined) metadata.continue = outcome.continueToken
  if (outcome.page.remaining !== undefined) metadata.remainingItemCount = outcome.page.remaining
  const items = outcome.page.items.map(metadataJson).join(",")
  const body = `{"kind":"PartialObjectMetadataList","apiVersion":"meta.k8s.io/v1","metadata":${
    JSON.stringify(metadata)
  },"items":[${items}]}`
  return HttpServerResponse.text(body, { status: 200, contentType: "application/json" })
}

/**
 * A watch whose objects are `PartialObjectMetadata`: the same events as a `Watcher`'s (the store decides
 * them), each object written as its metadata.
 *
 * @internal
 */
export class MetadataWatcher extends Watcher {
  override send(event: HistoryEvent, delivery: ApiStore.Delivery): void {
    const line = delivery === "event"
      ? `{"type":"${event.type}","object":${metadataJson(event.entry)}}\n`
      : delivery === "entered"
      ? `{"type":"ADDED","object":${metadataJson(event.entry)}}\n`
      : `{"type":"DELETED","object":${metadataJson(event.prev!.at(event.rv))}}\n`
    this.push(encode(line), 1)
  }

  override pushAdded(entries: ReadonlyArray<Entry>): void {
    if (entries.length === 0) return
    const lines = new Array<string>(entries.length)
    for (let i = 0; i < entries.length; i++) lines[i] = `{"type":"ADDED","object":${metadataJson(entries[i])}}\n`
    this.push(encode(lines.join("")), entries.length)
  }

  override pushBookmark(rv: number, annotations?: { readonly [key: string]: string }): void {
    const metadata = annotations === undefined
      ? { resourceVersion: String(rv) }
      : { resourceVersion: String(rv), annotations }
    const object = { kind: "PartialObjectMetadata", apiVersion: "meta.k8s.io/v1", metadata }
    this.push(encode(JSON.stringify({ type: "BOOKMARK", object }) + "\n"), 1)
  }
}

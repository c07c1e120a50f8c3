/**
 * Events as kube-apiserver serves them: one set of objects behind two APIs, `v1` (`events`) and
 * `events.k8s.io/v1` (`events.events.k8s.io`). kube-apiserver stores both in the same place and converts
 * on the way in and out; the embedded server keeps one collection per API and writes each change to both,
 * at the same resourceVersion, converted (`Store.commit`).
 *
 * The field mapping (k8s.io/kubernetes `pkg/apis/events/v1` conversions):
 *
 * | `v1` | `events.k8s.io/v1` |
 * |---|---|
 * | `involvedObject` | `regarding` |
 * | `message` | `note` |
 * | `reportingComponent` | `reportingController` |
 * | `source` | `deprecatedSource` |
 * | `firstTimestamp`, `lastTimestamp` | `deprecatedFirstTimestamp`, `deprecatedLastTimestamp` |
 * | `count` | `deprecatedCount` |
 *
 * and `metadata`, `eventTime`, `series`, `action`, `reason`, `type`, `related`, `reportingInstance` as
 * they are.
 *
 * @internal
 */
import type { JsonObject } from "./json.js"

/** The group-resource of `v1` Events. @internal */
export const coreEvents = "events"

/** The group-resource of `events.k8s.io` Events. @internal */
export const eventsV1Events = "events.events.k8s.io"

/** `v1` field -> `events.k8s.io/v1` field, for the fields whose names differ. */
const renamed: ReadonlyArray<readonly [string, string]> = [
  ["involvedObject", "regarding"],
  ["message", "note"],
  ["reportingComponent", "reportingController"],
  ["source", "deprecatedSource"],
  ["firstTimestamp", "deprecatedFirstTimestamp"],
  ["lastTimestamp", "deprecatedLastTimestamp"],
  ["count", "deprecatedCount"]
]

const toV1 = new Map(renamed)
const toCore = new Map(renamed.map(([core, v1]) => [v1, core] as const))

const convert = (
  obj: JsonObject,
  names: ReadonlyMap<string, string>,
  apiVersion: string
): JsonObject => {
  const out: JsonObject = { kind: "Event", apiVersion }
  for (const key of Object.keys(obj)) {
    if (key === "kind" || key === "apiVersion") continue
    out[names.get(key) ?? key] = obj[key]
  }
  // a fresh metadata: the entry built from it owns it
  if (typeof obj.metadata === "object" && obj.metadata !== null) out.metadata = { ...obj.metadata as JsonObject }
  return out
}

/** A `v1` Event as `events.k8s.io/v1` shows it (nested values shared). @internal */
export const coreToEventsV1 = (obj: JsonObject): JsonObject => convert(obj, toV1, "events.k8s.io/v1")

/** An `events.k8s.io/v1` Event as `v1` shows it (nested values shared). @internal */
export const eventsV1ToCore = (obj: JsonObject): JsonObject => convert(obj, toCore, "v1")

/**
 * The group-resource that serves the same Events as `groupResource`, and the conversion to it; `undefined`
 * for any other resource.
 *
 * @internal
 */
export const eventsTwin = (
  groupResource: string
): { readonly groupResource: string; readonly convert: (obj: JsonObject) => JsonObject } | undefined =>
  groupResource === coreEvents
    ? { groupResource: eventsV1Events, convert: coreToEventsV1 }
    : groupResource === eventsV1Events
    ? { groupResource: coreEvents, convert: eventsV1ToCore }
    : undefined

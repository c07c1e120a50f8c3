/**
 * What the wire checks cost per watch event (W2, W4, W5) and per listed item (W1): the plain predicates of
 * `internal/wireGuard.ts` on a typical pod (`ChurnSimulator.makePod`, about 3 KB of JSON as the server
 * sends it) and its watch event, through `Wire.decodeWatchValue` and `Wire.decodeList` (what the watch and
 * LIST decoders call), with `Schema.is` of the same schemas and `JSON.parse` of the same line for scale.
 *
 *   node --import tsx bench/wireGuard.ts
 *
 * Prints nanoseconds per call, the median of five runs after a warm-up.
 */
import { makePod } from "@effect-informers/testkit/ChurnSimulator"
import * as Schema from "effect/Schema"
import * as Guard from "../src/internal/protocol/wireGuard.js"
import * as Wire from "../src/Wire.js"

const pod = (i: number): unknown => {
  const made = makePod({ name: `web-${i}`, namespace: `ns-${i % 50}`, app: "web" }) as unknown as {
    readonly metadata: object
  }
  // what the server adds
  const metadata = {
    ...made.metadata,
    uid: `uid-${i}`,
    resourceVersion: String(1000 + i),
    creationTimestamp: "2024-01-01T00:00:00Z"
  }
  // parsed from text, as the decoders see it
  return JSON.parse(JSON.stringify({ ...made, metadata }))
}

const event = { type: "MODIFIED", object: pod(0) }
const line = JSON.stringify(event)
const page = {
  kind: "PodList",
  apiVersion: "v1",
  metadata: { resourceVersion: "5000", continue: "eyJ2IjoibWV0YS5rOHMuaW8vdjEifQ" },
  items: Array.from({ length: 500 }, (_, i) => pod(i))
}
const bookmark = {
  type: "BOOKMARK",
  object: {
    kind: "Pod",
    metadata: { resourceVersion: "5001", annotations: { [Wire.initialEventsEndAnnotation]: "true" } }
  }
}
const status = Wire.failureStatus(410, "Expired", "too old resource version: 5 (10)")
const errorEvent = { type: "ERROR", object: status }

/** The median of five timed runs of `calls` calls, after a warm-up run; nanoseconds per call. */
const ns = (calls: number, body: (n: number) => number): number => {
  body(calls)
  const times: Array<number> = []
  for (let run = 0; run < 5; run++) {
    const started = process.hrtime.bigint()
    const passed = body(calls)
    times.push(Number(process.hrtime.bigint() - started) / calls)
    if (passed !== calls) throw new Error(`${passed} of ${calls} passed`)
  }
  return times.sort((a, b) => a - b)[2]
}

const calls = 500_000
const each = (f: (u: unknown) => boolean, u: unknown) => (n: number) => {
  let passed = 0
  for (let i = 0; i < n; i++) if (f(u)) passed++
  return passed
}
const isRight = (either: { readonly _tag: string }) => either._tag === "Right"

const rows: Array<readonly [string, number]> = [
  ["isObjectEvent(pod event)", ns(calls, each(Guard.isObjectEvent, event))],
  ["isObjectWithMeta(pod)", ns(calls, each(Guard.isObjectWithMeta, event.object))],
  ["isBookmarkEvent(bookmark)", ns(calls, each(Guard.isBookmarkEvent, bookmark))],
  ["isErrorEvent(410 event)", ns(calls, each(Guard.isErrorEvent, errorEvent))],
  ["isListEnvelope(500-item page)", ns(calls, each(Guard.isListEnvelope, page))],
  ["Wire.decodeWatchValue(pod event)", ns(calls, each((u) => isRight(Wire.decodeWatchValue(u)), event))],
  ["Wire.isStatus(410 Status)", ns(calls, each(Wire.isStatus, status))],
  [
    "Wire.decodeList(500 pods), per item",
    ns(2_000, (n) => {
      let passed = 0
      for (let i = 0; i < n; i++) if (isRight(Wire.decodeList(page))) passed++
      return passed
    }) / page.items.length
  ],
  ["Schema.is(ObjectEvent)(pod event)", ns(calls / 10, each(Schema.is(Wire.ObjectEvent), event))],
  ["JSON.parse(pod event line)", ns(calls / 50, each((text) => JSON.parse(text as string) !== null, line))]
]
console.log(`pod event line: ${line.length} bytes`)
for (const [name, value] of rows) console.log(`${name.padEnd(38)} ${value.toFixed(1).padStart(8)} ns`)

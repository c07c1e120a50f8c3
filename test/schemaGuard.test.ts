import { describe, it } from "@effect/vitest"
import { FastCheck, ParseResult } from "effect"
import { guard } from "../src/internal/schemaGuard.js"
import * as Wire from "../src/Wire.js"

const schemas = {
  ObjectEvent: Wire.ObjectEvent,
  BookmarkEvent: Wire.BookmarkEvent,
  ErrorEvent: Wire.ErrorEvent,
  WatchEvent: Wire.WatchEvent,
  ObjectWithMeta: Wire.ObjectWithMeta,
  ListEnvelope: Wire.ListEnvelope,
  Status: Wire.Status
}

// Values shaped like (possibly broken) wire data, so that most branches of each schema are reached.
const str = FastCheck.oneof(
  FastCheck.constantFrom("", "a", "ADDED", "MODIFIED", "DELETED", "BOOKMARK", "ERROR"),
  FastCheck.string()
)
const leaf = FastCheck.oneof(
  str,
  FastCheck.integer(),
  FastCheck.boolean(),
  FastCheck.constant(null),
  FastCheck.constant(undefined)
)
const meta = FastCheck.record(
  { name: leaf, namespace: leaf, uid: leaf, resourceVersion: leaf, annotations: FastCheck.dictionary(str, leaf) },
  { requiredKeys: [] }
)
const object = FastCheck.record({ kind: leaf, metadata: FastCheck.oneof(meta, leaf) }, { requiredKeys: [] })
const status = FastCheck.record(
  {
    kind: leaf,
    code: leaf,
    reason: leaf,
    message: leaf,
    details: FastCheck.oneof(
      FastCheck.record({
        causes: FastCheck.array(FastCheck.record({ reason: leaf, field: leaf })),
        retryAfterSeconds: leaf
      }, {
        requiredKeys: []
      }),
      leaf
    )
  },
  { requiredKeys: [] }
)
const wire = FastCheck.oneof(
  FastCheck.record({ type: leaf, object: FastCheck.oneof(object, status, leaf) }, { requiredKeys: [] }),
  FastCheck.record({
    metadata: FastCheck.oneof(
      FastCheck.record({ resourceVersion: leaf, continue: leaf, remainingItemCount: leaf }, { requiredKeys: [] }),
      leaf
    ),
    items: FastCheck.oneof(FastCheck.array(FastCheck.oneof(object, leaf)), leaf)
  }, { requiredKeys: [] }),
  object,
  status,
  FastCheck.jsonValue()
)

describe("schemaGuard", () => {
  for (const [name, schema] of Object.entries(schemas)) {
    it(`${name}: the compiled guard answers like ParseResult.is`, () => {
      const compiled = guard(schema as any)
      const reference = ParseResult.is(schema as any)
      FastCheck.assert(FastCheck.property(wire, (u) => compiled(u) === reference(u)), { numRuns: 2000 })
    })
  }
})

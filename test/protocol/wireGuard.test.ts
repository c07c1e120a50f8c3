/**
 * The hand-written wire predicates (`src/internal/wireGuard.ts`) answer as `Schema.is` of the schemas they
 * stand for (`src/Wire.ts`): on arbitrary JSON-like values, on valid values of each shape, and on valid
 * values mutated at one place (a property deleted, replaced, set to `undefined`, moved to the prototype,
 * wrapped in an array, an extra property), plus values JSON cannot make.
 */
import { assert, describe, it } from "@effect/vitest"
import { Schema } from "effect"
import * as Guard from "../../src/internal/protocol/wireGuard.js"
import * as Wire from "../../src/Wire.js"
import * as FastCheck from "../fixtures/arbitrary.js"

/**
 * `u` as Effect 3's `Schema.is` (`exact: true`) saw it: own enumerable string-keyed properties only (an
 * inherited one is absent), arrays element by element (a hole is `undefined`). Effect 4's `Schema.is` also
 * reads inherited properties; the predicates keep Effect 3's answer, which JSON values cannot tell apart.
 */
const ownOnly = (u: unknown): unknown => {
  if (Array.isArray(u)) return Array.from({ length: u.length }, (_, i) => ownOnly(u[i]))
  if (typeof u !== "object" || u === null) return u
  // an object of any prototype (a class instance, a Date, a Map, a String object): its own properties
  const copy: Record<string, unknown> = {}
  for (const key of Object.keys(u)) {
    Object.defineProperty(copy, key, {
      value: ownOnly((u as Record<string, unknown>)[key]),
      enumerable: true,
      writable: true,
      configurable: true
    })
  }
  return copy
}

const is = (schema: Schema.Top) => {
  const is = Schema.is(schema)
  return (u: unknown): boolean => is(ownOnly(u))
}

const pairs: ReadonlyArray<readonly [string, (u: unknown) => boolean, (u: unknown) => boolean]> = [
  ["ObjectEvent", Guard.isObjectEvent, is(Wire.ObjectEvent)],
  ["BookmarkEvent", Guard.isBookmarkEvent, is(Wire.BookmarkEvent)],
  ["ErrorEvent", Guard.isErrorEvent, is(Wire.ErrorEvent)],
  ["ObjectWithMeta", Guard.isObjectWithMeta, is(Wire.ObjectWithMeta)],
  ["ListEnvelope", Guard.isListEnvelope, is(Wire.ListEnvelope)],
  ["Status", Guard.isStatusValue, is(Wire.Status)]
]

/** The predicates whose answer differs from `Schema.is` for `u`. */
const disagreements = (u: unknown): Array<string> =>
  pairs.filter(([, plain, schema]) => plain(u) !== schema(u)).map(([name]) => name)

// --- arbitrary values shaped like (possibly broken) wire data ---------------------------------------

const str = FastCheck.oneof(
  FastCheck.constantFrom("", "a", "ADDED", "MODIFIED", "DELETED", "BOOKMARK", "ERROR", "Status"),
  FastCheck.string()
)
const leaf = FastCheck.oneof(
  str,
  FastCheck.integer(),
  FastCheck.double(),
  FastCheck.boolean(),
  FastCheck.constant(null),
  FastCheck.constant(undefined),
  FastCheck.constant([]),
  FastCheck.constant({})
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
    metadata: FastCheck.oneof(FastCheck.record({ resourceVersion: leaf }, { requiredKeys: [] }), leaf),
    details: FastCheck.oneof(
      FastCheck.record({
        causes: FastCheck.oneof(
          FastCheck.array(FastCheck.oneof(FastCheck.record({ reason: leaf, field: leaf }), leaf)),
          leaf
        ),
        retryAfterSeconds: leaf
      }, {
        requiredKeys: []
      }),
      leaf
    )
  },
  { requiredKeys: [] }
)
const arbitraryWire = FastCheck.oneof(
  FastCheck.record({ type: FastCheck.oneof(str, leaf), object: FastCheck.oneof(object, status, leaf) }, {
    requiredKeys: []
  }),
  FastCheck.record({
    metadata: FastCheck.oneof(
      FastCheck.record({ resourceVersion: leaf, continue: leaf, remainingItemCount: leaf }, { requiredKeys: [] }),
      leaf
    ),
    items: FastCheck.oneof(FastCheck.array(FastCheck.oneof(object, leaf)), leaf)
  }, { requiredKeys: [] }),
  object,
  status,
  FastCheck.jsonValue(),
  FastCheck.anything()
)

// --- valid values of each shape -------------------------------------------------------------------

/** An optional string: absent, `undefined` or a string. */
const optStr = FastCheck.option(FastCheck.string(), { nil: undefined, freq: 3 })
const optNum = FastCheck.option(FastCheck.oneof(FastCheck.integer(), FastCheck.double()), { nil: undefined, freq: 3 })
const stringRecord = FastCheck.dictionary(FastCheck.string(), FastCheck.string())

const validMeta = FastCheck.record({
  name: FastCheck.string({ minLength: 1 }),
  namespace: optStr,
  uid: optStr,
  resourceVersion: optStr,
  labels: stringRecord,
  annotations: stringRecord
}, { requiredKeys: ["name"] })
const validObject = FastCheck.record({
  apiVersion: FastCheck.string(),
  kind: optStr,
  metadata: validMeta,
  spec: FastCheck.jsonValue()
}, { requiredKeys: ["metadata"] })
const validObjectEvent = FastCheck.record({
  type: FastCheck.constantFrom("ADDED", "MODIFIED", "DELETED"),
  object: validObject
})
const validBookmark = FastCheck.record({
  type: FastCheck.constant("BOOKMARK"),
  object: FastCheck.record({
    kind: FastCheck.string(),
    metadata: FastCheck.record({
      resourceVersion: FastCheck.string(),
      annotations: FastCheck.option(stringRecord, { nil: undefined, freq: 3 })
    }, { requiredKeys: ["resourceVersion"] })
  }, { requiredKeys: ["metadata"] })
})
const validStatus = FastCheck.record({
  kind: optStr,
  apiVersion: optStr,
  metadata: FastCheck.option(FastCheck.record({ resourceVersion: optStr }, { requiredKeys: [] }), {
    nil: undefined,
    freq: 3
  }),
  status: optStr,
  message: optStr,
  reason: optStr,
  details: FastCheck.option(
    FastCheck.record({
      name: optStr,
      group: optStr,
      kind: optStr,
      uid: optStr,
      causes: FastCheck.option(
        FastCheck.array(FastCheck.record({ reason: optStr, message: optStr, field: optStr }, { requiredKeys: [] })),
        { nil: undefined, freq: 3 }
      ),
      retryAfterSeconds: optNum
    }, { requiredKeys: [] }),
    { nil: undefined, freq: 3 }
  ),
  code: optNum
}, { requiredKeys: [] })
const validErrorEvent = FastCheck.record({ type: FastCheck.constant("ERROR"), object: validStatus })
const validList = FastCheck.record({
  kind: optStr,
  apiVersion: optStr,
  metadata: FastCheck.record({ resourceVersion: optStr, continue: optStr, remainingItemCount: optNum }, {
    requiredKeys: []
  }),
  items: FastCheck.array(FastCheck.oneof(validObject, FastCheck.jsonValue()), { maxLength: 5 })
}, { requiredKeys: ["metadata", "items"] })

const valid: ReadonlyArray<readonly [string, FastCheck.Arbitrary<unknown>]> = [
  ["ObjectEvent", validObjectEvent],
  ["BookmarkEvent", validBookmark],
  ["ErrorEvent", validErrorEvent],
  ["ObjectWithMeta", validObject],
  ["ListEnvelope", validList],
  ["Status", validStatus]
]

// --- mutations at one place -----------------------------------------------------------------------

type Mutation = "delete" | "replace" | "undefined" | "prototype" | "wrap" | "extra"

/** Every (container, key) of a value, outermost first. */
const places = (root: unknown): Array<readonly [Record<string, unknown>, string]> => {
  const out: Array<readonly [Record<string, unknown>, string]> = []
  const visit = (u: unknown) => {
    if (typeof u !== "object" || u === null) return
    for (const key of Object.keys(u)) {
      out.push([u as Record<string, unknown>, key])
      visit((u as Record<string, unknown>)[key])
    }
  }
  visit(root)
  return out
}

const mutate = (value: unknown, at: number, mutation: Mutation, replacement: unknown): unknown => {
  const copy = structuredClone(value)
  const all = places(copy)
  if (all.length === 0) return replacement
  const [container, key] = all[at % all.length]
  switch (mutation) {
    case "delete":
      delete container[key]
      break
    case "replace":
      container[key] = replacement
      break
    case "undefined":
      container[key] = undefined
      break
    case "prototype": {
      // the property is inherited instead of own: required ones then count as missing, optional as absent
      const moved = container[key]
      delete container[key]
      Object.setPrototypeOf(container, { ...Object.getPrototypeOf(container), [key]: moved })
      break
    }
    case "wrap":
      container[key] = [container[key]]
      break
    case "extra":
      container[`${key}-extra`] = replacement
      break
  }
  return copy
}

const mutation = FastCheck.constantFrom<Mutation>("delete", "replace", "undefined", "prototype", "wrap", "extra")

describe("wireGuard", () => {
  it("each predicate answers like Schema.is on arbitrary JSON-like values", () => {
    FastCheck.assert(FastCheck.property(arbitraryWire, (u) => disagreements(u).length === 0), { numRuns: 3000 })
  })

  for (const [name, arbitrary] of valid) {
    it(`${name}: valid values pass both, and every predicate answers like Schema.is on them mutated at one place`, () => {
      const [, plain, schema] = pairs.find(([n]) => n === name)!
      FastCheck.assert(
        FastCheck.property(arbitrary, (u) => schema(u) && plain(u) && disagreements(u).length === 0),
        { numRuns: 300 }
      )
      FastCheck.assert(
        FastCheck.property(
          arbitrary,
          FastCheck.nat(),
          mutation,
          FastCheck.oneof(leaf, FastCheck.jsonValue()),
          (u, at, m, replacement) => {
            const mutated = mutate(u, at, m, replacement)
            return disagreements(mutated).length === 0
          }
        ),
        { numRuns: 1500 }
      )
    })
  }

  it("values JSON cannot make: inherited properties, arrays, functions, class instances, holes", () => {
    const pod = { metadata: { name: "a" } }
    class Pod {
      readonly metadata = { name: "a" }
    }
    const withArrayMeta = Object.assign([], { metadata: { name: "a" } })
    const holes = { metadata: {}, items: [, 1] } // eslint-disable-line no-sparse-arrays
    const cases: ReadonlyArray<unknown> = [
      Object.create(pod),
      { metadata: Object.create({ name: "a" }) },
      { metadata: { name: "a" }, kind: undefined },
      Object.assign(Object.create({ kind: 5 }), pod),
      { ...pod, __proto__: { kind: 1 } },
      JSON.parse(`{"__proto__":{"kind":1},"metadata":{"name":"a"}}`),
      withArrayMeta,
      Object.assign(() => {}, pod),
      new Pod(),
      new Date(),
      new Map([["metadata", { name: "a" }]]),
      holes,
      { type: "ERROR", object: { code: Number.NaN, details: { causes: [, {}] } } }, // eslint-disable-line no-sparse-arrays
      { type: "ERROR", object: Object.create({ code: "x" }) },
      { type: "BOOKMARK", object: { metadata: { resourceVersion: "1", annotations: Object.create({ a: 1 }) } } },
      { type: "BOOKMARK", object: { metadata: { resourceVersion: "1", annotations: [] } } },
      { type: "BOOKMARK", object: { metadata: { resourceVersion: "1", annotations: { [Symbol("s")]: 1 } } } },
      { type: "ADDED", object: { metadata: { name: "" } } },
      { type: "ADDED", object: { metadata: { name: new String("a") } } },
      { type: "ADDED", object: pod, extra: 1 }
    ]
    for (const u of cases) assert.deepStrictEqual(disagreements(u), [], String(JSON.stringify(u)))
  })
})

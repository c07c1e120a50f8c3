import { makePod } from "@effect-informers/testkit/ChurnSimulator"
import { describe, expect, it } from "@effect/vitest"
import { Result } from "effect"
import * as Util from "node:util"
import type { ListDecoderOptions } from "../../src/internal/transport/listBodyDecoder.js"
import {
  defaultMaxItemBytes,
  defaultMaxValueBytes,
  ListBodyDecoder
} from "../../src/internal/transport/listBodyDecoder.js"
import type { DecodedList, DecodeFailure } from "../../src/Wire.js"
import { decodeList } from "../../src/Wire.js"
import * as fc from "../fixtures/arbitrary.js"

const description = "pods in default"
const prefix = `list ${description}: `

type Decoded = Result.Result<DecodedList<unknown>, DecodeFailure>

/** Decodes `chunks` in order; a failure returned by `push` is the result (as `end` then returns it too). */
const decodeChunks = (
  chunks: ReadonlyArray<Uint8Array>,
  options: Partial<ListDecoderOptions> = {}
): Decoded => {
  const decoder = new ListBodyDecoder<unknown>({ description, ...options })
  for (const chunk of chunks) {
    const failure = decoder.push(chunk)
    if (failure !== undefined) {
      const ended = decoder.end()
      expect(Result.isFailure(ended) && ended.failure).toBe(failure)
      return Result.fail(failure)
    }
  }
  return decoder.end()
}

const bytesOf = (body: string | Uint8Array): Buffer => typeof body === "string" ? Buffer.from(body) : Buffer.from(body)

const decode = (body: string | Uint8Array, options: Partial<ListDecoderOptions> = {}): Decoded =>
  decodeChunks([bytesOf(body)], options)

/** Splits `bytes` at the given offsets. */
const splitAt = (bytes: Buffer, cuts: ReadonlyArray<number>): Array<Buffer> => {
  const sorted = [...cuts].sort((a, b) => a - b)
  const chunks: Array<Buffer> = []
  let from = 0
  for (const cut of sorted) {
    chunks.push(bytes.subarray(from, cut))
    from = cut
  }
  chunks.push(bytes.subarray(from))
  return chunks
}

const chunked = (bytes: Buffer, size: number): Array<Buffer> => {
  const chunks: Array<Buffer> = []
  for (let i = 0; i < bytes.length; i += size) chunks.push(bytes.subarray(i, i + size))
  return chunks
}

/** What the decoder replaces: the whole body as one string, `JSON.parse`, `Wire.decodeList`. */
const baseline = (body: Uint8Array): Decoded => {
  let text = Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString("utf8")
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1)
  let u: unknown
  try {
    u = JSON.parse(text)
  } catch (cause) {
    return Result.fail({ message: "malformed JSON", cause })
  }
  return decodeList<unknown>(u)
}

/** Both succeed with the same list, or both fail. */
const expectSameAsBaseline = (result: Decoded, body: Uint8Array) => {
  const expected = baseline(body)
  if (Result.isSuccess(expected)) {
    if (Result.isFailure(result)) throw new Error(`expected a list, got: ${result.failure.message}`)
    expect(result.success).toStrictEqual(expected.success)
  } else {
    if (Result.isSuccess(result)) throw new Error(`expected a failure like: ${expected.failure.message}`)
    expectOneLine(result.failure)
  }
}

const expectOneLine = (failure: DecodeFailure) => {
  expect(failure.message.startsWith(prefix)).toBe(true)
  expect(failure.message).not.toMatch(/[\n\r]/)
  expect(failure.message.length).toBeLessThan(400)
}

const failureOf = (result: Decoded): string => {
  if (Result.isSuccess(result)) throw new Error(`expected a failure, got ${result.success.items.length} items`)
  expectOneLine(result.failure)
  return result.failure.message.slice(prefix.length)
}

// the test kit's realistic pod (containers, status, owner: the size and nesting of a cluster's), not the
// fixtures' bare one: the decoder's figures are about real list bodies
const pod = (i: number, extra: Record<string, unknown> = {}) => {
  const p = makePod({ name: `web-7d4b9c8f6d-${String(i).padStart(5, "0")}`, namespace: "default" }) as unknown as {
    metadata: Record<string, unknown>
  }
  p.metadata.uid = `00000000-0000-0000-0000-${String(i).padStart(12, "0")}`
  p.metadata.resourceVersion = String(100 + i)
  return { ...p, ...extra }
}

/** Strings that a naive scanner gets wrong, and multi-byte UTF-8. */
const tricky = [
  "[",
  "]",
  "{",
  "}",
  "[{\"}]",
  "\\",
  "\\\\",
  "\\\"",
  "\"",
  "a\\",
  "\\\\\\\"x",
  ",:",
  "é",
  "😀",
  "日本語",
  "\u2028",
  "\n\t\r",
  "\u0000\u001f",
  "x".repeat(70) + "\"" + "\\".repeat(5) + "\"" + "y".repeat(70),
  "\\".repeat(65) + "\"",
  "a".repeat(200) + "😀" + "\\".repeat(64)
]

const trickyBody = (): Buffer => {
  const items = [
    pod(0, { strings: tricky, nested: { "k[": "v]", "{": [{ "}": "\\\"" }] } }),
    pod(1, {
      "😀": "😀😀",
      escaped: JSON.stringify(pod(9).metadata),
      numbers: [0, -1, 1.5e-7, 1e300, true, false, null]
    }),
    pod(2)
  ]
  // unicode escapes and a raw emoji as JSON.stringify would not write them
  const text = JSON.stringify({ kind: "PodList", apiVersion: "v1", metadata: { resourceVersion: "42" }, items })
    .replace("\"strings\":[", "\"strings\":[\"\\u00e9\\ud83d\\ude00\\u005b\\u007b\\\"\",")
  return Buffer.from(text)
}

describe("ListBodyDecoder", () => {
  it("decodes a list as JSON.parse and decodeList do", () => {
    const body = trickyBody()
    const result = decode(body)
    expectSameAsBaseline(result, body)
    expect(Result.isSuccess(result) && result.success.items.length).toBe(3)
    expect(Result.isSuccess(result) && result.success.resourceVersion).toBe("42")
  })

  it("gives the same result whatever the byte the body is split at", () => {
    const body = trickyBody()
    const expected = baseline(body)
    for (let cut = 0; cut <= body.length; cut++) {
      const result = decodeChunks(splitAt(body, [cut]))
      // node's strict deep equality first (vitest 5's toStrictEqual takes ~4 ms on this list, 10,000 times);
      // toStrictEqual says how they differ when they do
      if (!Util.isDeepStrictEqual(result, expected)) expect(result).toStrictEqual(expected)
    }
    expect(decodeChunks(chunked(body, 1))).toStrictEqual(expected)
    expect(decodeChunks(chunked(body, 3))).toStrictEqual(expected)
  })

  it("gives the same result for random bodies split at random bytes", () => {
    const text = fc.string({
      unit: fc.constantFrom("[", "]", "{", "}", "\"", "\\", ",", ":", " ", "a", "é", "😀", "\n", "\u2028", "\u0001")
    })
    const json = fc.letrec((tie) => ({
      value: fc.oneof(
        { depthSize: "small" },
        text,
        fc.double({ noNaN: true, noDefaultInfinity: true }),
        fc.boolean(),
        fc.constant(null),
        fc.array(tie("value"), { maxLength: 4 }),
        fc.dictionary(text, tie("value"), { maxKeys: 4 })
      )
    })).value
    const item = fc.record({
      metadata: fc.record({ name: text.filter((s) => s.length > 0), resourceVersion: fc.string() }, {
        requiredKeys: ["name"]
      }),
      spec: json
    })
    const list = fc.record({
      kind: fc.constant("PodList"),
      metadata: fc.record({
        resourceVersion: fc.string(),
        continue: fc.oneof(fc.constant(""), text),
        remainingItemCount: fc.nat()
      }, { requiredKeys: [] }),
      items: fc.array(item, { maxLength: 6 }),
      extra: json
    })
    fc.assert(
      fc.property(
        list,
        fc.constantFrom(undefined, 1, "\t", " \r\n "),
        fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { maxLength: 12 }),
        (value, indent, fractions) => {
          const body = Buffer.from(JSON.stringify(value, null, indent))
          const result = decodeChunks(splitAt(body, fractions.map((f) => Math.floor(f * body.length))))
          expectSameAsBaseline(result, body)
        }
      ),
      { numRuns: 300 }
    )
  })

  it("fails exactly when JSON.parse or decodeList does, for mutated bodies", () => {
    // items that start as the first one does (`{"metadata":`), and objects inside them that do too
    const body = Buffer.from(JSON.stringify({
      kind: "PodList",
      apiVersion: "v1",
      metadata: { resourceVersion: "7", continue: "c" },
      items: [
        { metadata: { name: "a" }, s: "a\\\"[{},{" },
        { metadata: { name: "b" }, x: [1, { y: null }], t: [{ metadata: { name: "t" } }, { metadata: {} }] },
        { metadata: { name: "c", labels: { "},{": "\"},{\"metadata\":" } } },
        { metadata: { name: "d" } }
      ]
    }))
    const replacements = "{}[]\",:\\ 0123456789-.etrufalsn\u0001x"
    const outcomes = { right: 0, left: 0 }
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            at: fc.nat({ max: body.length - 1 }),
            op: fc.constantFrom("replace", "delete", "insert"),
            byte: fc.constantFrom(...Array.from(replacements, (c) => c.charCodeAt(0)))
          }),
          { minLength: 1, maxLength: 3 }
        ),
        fc.oneof(fc.nat({ max: 64 }), fc.integer({ min: 100, max: 400 })),
        (mutations, chunkSize) => {
          let bytes = Array.from(body)
          for (const { at, byte, op } of mutations) {
            const i = Math.min(at, bytes.length - 1)
            if (op === "replace") bytes[i] = byte
            else if (op === "delete") bytes = [...bytes.slice(0, i), ...bytes.slice(i + 1)]
            else bytes = [...bytes.slice(0, i), byte, ...bytes.slice(i)]
          }
          const mutated = Buffer.from(bytes)
          const result = chunkSize === 0 ? decode(mutated) : decodeChunks(chunked(mutated, chunkSize))
          expectSameAsBaseline(result, mutated)
          outcomes[Result.isSuccess(result) ? "right" : "left"]++
        }
      ),
      { numRuns: 2000 }
    )
    // both outcomes are exercised
    expect(outcomes.right).toBeGreaterThan(50)
    expect(outcomes.left).toBeGreaterThan(50)
  })

  it("guesses where items end, and scans them when a guess is wrong", () => {
    // a compact list of built-in objects: every item that fits in its chunk is guessed right
    const pods = Buffer.from(JSON.stringify({
      kind: "PodList",
      metadata: { resourceVersion: "1" },
      items: Array.from({ length: 100 }, (_, i) => {
        const { apiVersion: _a, kind: _k, ...rest } = pod(i) as Record<string, unknown>
        return rest
      })
    }))
    const decoder = new ListBodyDecoder<unknown>({ description })
    for (const chunk of chunked(pods, 65536)) expect(decoder.push(chunk)).toBeUndefined()
    expect(decoder.end()).toStrictEqual(baseline(pods))
    expect(decoder.guesses).toBeGreaterThan(80)
    expect(decoder.misses).toBe(0)
    // objects inside items that start like an item (a StatefulSet's volumeClaimTemplates): wrong guesses,
    // until guessing stops
    const template = (name: string) => ({ metadata: { name }, spec: { resources: { requests: { storage: "1Gi" } } } })
    const sets = Buffer.from(JSON.stringify({
      metadata: {},
      items: Array.from({ length: 500 }, (_, i) => ({
        metadata: { name: `set-${i}`, annotations: { a: "\"},{\"metadata\":{", b: "},{" } },
        spec: { volumeClaimTemplates: [template("a"), template("b")] }
      }))
    }))
    const wrong = new ListBodyDecoder<unknown>({ description })
    for (const chunk of chunked(sets, 65536)) expect(wrong.push(chunk)).toBeUndefined()
    expect(wrong.end()).toStrictEqual(baseline(sets))
    expect(wrong.misses).toBeGreaterThan(0)
    expect(wrong.misses).toBeLessThan(20)
    expect(wrong.guesses).toBe(wrong.misses)
    // a wrong guess of an invalid or malformed item fails as the scan does
    for (
      const body of [
        "{\"metadata\":{},\"items\":[{\"metadata\":{\"name\":\"a\"}},{\"metadata\":{}},{\"metadata\":{}}]}",
        "{\"metadata\":{},\"items\":[{\"metadata\":{\"name\":\"a\"}},{\"metadata\":{\"name\":x}},{\"metadata\":{}}]}",
        "{\"metadata\":{},\"items\":[{\"metadata\":{\"name\":\"a\"}},{\"metadata\":{\"name\":\"b\"},{\"metadata\":{}}]}"
      ]
    ) {
      const whole = decode(body)
      expect(Result.isFailure(whole)).toBe(true)
      expect(decodeChunks(chunked(Buffer.from(body), 1))).toStrictEqual(whole)
    }
  })

  it("reads the list metadata like decodeList", () => {
    const list = (metadata: unknown, items: unknown = []) =>
      decode(JSON.stringify({ kind: "PodList", metadata, items }))
    const right = (result: Decoded) => {
      if (Result.isFailure(result)) throw new Error(result.failure.message)
      return result.success
    }
    expect(right(list({}))).toStrictEqual({
      items: [],
      resourceVersion: "",
      continue: undefined,
      remainingItemCount: undefined
    })
    expect(right(list({ resourceVersion: "12", continue: "" })).continue).toBeUndefined()
    expect(right(list({ resourceVersion: "12", continue: "token", remainingItemCount: 25 }))).toStrictEqual({
      items: [],
      resourceVersion: "12",
      continue: "token",
      remainingItemCount: 25
    })
    for (const metadata of [{}, { resourceVersion: "1", continue: "x", remainingItemCount: 0 }]) {
      const body = Buffer.from(JSON.stringify({ metadata, items: [{ metadata: { name: "a" } }] }))
      expectSameAsBaseline(decode(body), body)
    }
    expect(failureOf(list([]))).toMatch(/^invalid list response: metadata: /)
    expect(failureOf(list({ resourceVersion: 5 }))).toMatch(/^invalid list response: metadata\.resourceVersion: /)
    expect(failureOf(list({ remainingItemCount: "5" }))).toMatch(/^invalid list response: metadata\.remainingItemCount/)
    expect(failureOf(decode("{\"items\":[]}"))).toMatch(/^invalid list response: metadata: Missing key/)
    expect(failureOf(decode("{\"kind\":5,\"items\":[],\"metadata\":{}}"))).toMatch(/^invalid list response: kind: /)
  })

  it("treats items: null as an empty list and requires items", () => {
    const result = decode("{\"kind\":\"PodList\",\"metadata\":{\"resourceVersion\":\"3\"},\"items\":null}")
    expect(Result.isSuccess(result) && result.success).toStrictEqual({
      items: [],
      resourceVersion: "3",
      continue: undefined,
      remainingItemCount: undefined
    })
    expect(Result.isSuccess(decode("{\"metadata\":{},\"items\":[]}"))).toBe(true)
    expect(Result.isSuccess(decode(" {\"metadata\" : { } , \"items\" : [ ] } \r\n"))).toBe(true)
    expect(failureOf(decode("{\"metadata\":{}}"))).toMatch(/^invalid list response: items: Missing key/)
    expect(failureOf(decode("{\"metadata\":{},\"items\":{}}"))).toMatch(/^invalid list response: items: /)
    expect(failureOf(decode("{\"metadata\":{},\"items\":\"[]\"}"))).toMatch(/^invalid list response: items: /)
  })

  it("fails on the first invalid item, and keeps failing", () => {
    const decoder = new ListBodyDecoder<unknown>({ description })
    const body = JSON.stringify({
      metadata: {},
      items: [{ metadata: { name: "a" } }, { metadata: { name: "" } }, { metadata: {} }]
    })
    const cut = body.indexOf("{\"metadata\":{}}")
    const failure = decoder.push(Buffer.from(body.slice(0, cut)))
    expect(failure).toBeDefined()
    expectOneLine(failure!)
    expect(failure!.message).toBe(
      `${prefix}invalid list item 1: metadata.name: Expected a value with a length of at least 1, got ""`
    )
    expect(decoder.push(Buffer.from(body.slice(cut)))).toBe(failure)
    const ended = decoder.end()
    expect(Result.isFailure(ended) && ended.failure).toBe(failure)
    expect(failureOf(decode("{\"items\":[5],\"metadata\":{}}"))).toMatch(/^invalid list item 0: Expected /)
    expect(failureOf(decode("{\"items\":[{\"metadata\":{\"name\":\"a\"}},null],\"metadata\":{}}")))
      .toMatch(/^invalid list item 1: /)
    expect(failureOf(decode("{\"items\":[{\"kind\":1,\"metadata\":{\"name\":\"a\"}}],\"metadata\":{}}")))
      .toMatch(/^invalid list item 0: kind: /)
  })

  it("fails on malformed bodies with one line saying where", () => {
    const cases: ReadonlyArray<readonly [string, RegExp]> = [
      ["", /^the response body is empty$/],
      ["  \n", /^the response is not a JSON object: no '\{' in its 3 bytes$/],
      ["<html><body>502 Bad Gateway</body></html>", /^the response is not a JSON object: <html><body>502/],
      ["null", /^the response is not a JSON object: null$/],
      ["[{\"metadata\":{\"name\":\"a\"}}]", /^the response is not a JSON object: \[/],
      ["\"items\"", /^the response is not a JSON object/],
      ["{", /^malformed JSON in the response: the body ended early \(after 1 bytes, before the end/],
      [
        "{\"items\":[{\"metadata\":{\"name\":\"a\"}}",
        /ended early \(after \d+ bytes, inside the items, after 1 items\)/
      ],
      ["{\"items\":[{\"metadata\":{\"na", /ended early \(after \d+ bytes, inside list item 0\)/],
      ["{\"metadata\":{\"resourceVersion\":\"1\"", /ended early \(after \d+ bytes, inside the value of "metadata"\)/],
      ["{\"meta", /ended early \(after 6 bytes, inside a key\)/],
      ["{\"items\":[]", /ended early/],
      ["{]", /^malformed JSON in the response at byte 1: expected a key, found: \]$/],
      ["{items:[]}", /^malformed JSON in the response at byte 1: expected a key, found: items:\[\]\}$/],
      ["{\"items\" []}", /^malformed JSON in the response at byte 9: expected ':' after a key, found: \[\]\}$/],
      ["{\"items\":}", /^malformed JSON in the response at byte 9: expected a value/],
      ["{\"items\":[],}", /^malformed JSON in the response at byte 12: expected a key/],
      ["{\"items\":[,]}", /^malformed JSON in the response at byte 10: expected list item 0/],
      [
        "{\"items\":[{\"metadata\":{\"name\":\"a\"}},]}",
        /^malformed JSON in the response at byte 36: expected list item 1/
      ],
      ["{\"items\":[{\"metadata\":{\"name\":\"a\"}} {}]}", /expected ',' or '\]' after a list item, found: \{\}\]\}$/],
      ["{\"items\":[] \"metadata\":{}}", /expected ',' or '\}' after a value, found: "metadata":\{\}\}$/],
      [
        "{\"items\":[],\"metadata\":{}} {}",
        /^malformed JSON in the response at byte 27: data after the end of the list/
      ],
      ["{\"items\":[],\"metadata\":{}}\u0000", /data after the end of the list object/],
      ["{\"items\":[{]}", /^malformed JSON in list item 0 at byte 11: Expected property name/],
      ["{\"items\":[{\"metadata\":{\"name\":\"a\"}x}]}", /^malformed JSON in list item 0 at byte 34: .*: \{"metadata"/],
      ["{\"items\":[tru],\"metadata\":{}}", /^malformed JSON in list item 0 at byte 10: .*: tru$/],
      ["{\"items\":[{\"metadata\":{\"name\":\"a\\x\"}}]}", /^malformed JSON in list item 0 at byte \d+: /],
      [
        "{\"items\":[{\"metadata\":{\"name\":\"a\u0001\"}}]}",
        /^malformed JSON in list item 0 at byte \d+: Bad control/
      ],
      [
        "{\"items\":[],\"metadata\":{\"resourceVersion\":01}}",
        /^malformed JSON in the value of "metadata" at byte 43: Unexpected number/
      ],
      ["{\"items\":[],\"x\":nul}", /^malformed JSON in the value of "x" at byte 16/],
      ["{\"a\\q\":1}", /^malformed JSON in a key at byte 4: Bad escaped character/],
      ["\u00ef\u00bb{}", /^malformed JSON in the response at byte 2: an incomplete byte order mark/]
    ]
    for (const [body, expected] of cases) {
      const bytes = body.startsWith("\u00ef") ? Buffer.from([0xef, 0xbb, 0x7b, 0x7d]) : Buffer.from(body)
      const message = failureOf(decode(bytes))
      expect(message).toMatch(expected)
      // the same failure whatever the chunks (but the preview of the bytes at a failure is only of the
      // chunk it is in)
      const split = decodeChunks(chunked(bytes, 1))
      const withoutPreview = (m: string) => m.replace(/(found|object): .*$/, "$1:")
      expect(Result.isFailure(split) && withoutPreview(split.failure.message)).toBe(withoutPreview(prefix + message))
      if (!body.startsWith("\u00ef")) expect(Result.isFailure(baseline(bytes))).toBe(true)
    }
    // the preview is short, on one line, even for a long malformed body
    const long = failureOf(decode(`<html>${"\n<p>error</p>".repeat(1000)}`))
    expect(long.length).toBeLessThan(200)
  })

  it("fails, never throws, for every truncation of a body", () => {
    const body = trickyBody()
    for (let end = 0; end < body.length; end++) {
      const truncated = body.subarray(0, end)
      expect(Result.isFailure(decode(truncated))).toBe(true)
    }
  })

  it("skips a byte order mark, even split across chunks", () => {
    const body = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from("{\"metadata\":{},\"items\":[]}")])
    expect(Result.isSuccess(decode(body))).toBe(true)
    expect(Result.isSuccess(decodeChunks(chunked(body, 1)))).toBe(true)
    expect(failureOf(decode(Buffer.from([0xef, 0xbb, 0xbf, 0xef, 0xbb, 0xbf, 0x7b, 0x7d]))))
      .toMatch(/^the response is not a JSON object/)
  })

  it("decodes multi-byte characters split across chunks", () => {
    const body = Buffer.from(JSON.stringify({
      metadata: { continue: "😀é日" },
      items: [{ metadata: { name: "😀" }, s: "日本語😀é".repeat(20) }]
    }))
    const expected = baseline(body)
    expect(Result.isSuccess(expected)).toBe(true)
    for (let cut = 0; cut <= body.length; cut++) {
      expect(decodeChunks(splitAt(body, [cut, cut + 1, cut + 2]))).toStrictEqual(expected)
    }
  })

  it("takes the last of duplicated keys, as JSON.parse does, and decodes escaped keys", () => {
    const body = "{\"items\":[{\"metadata\":{\"name\":\"a\"}}],\"metadata\":{\"resourceVersion\":\"1\"},"
      + "\"it\\u0065ms\":[{\"metadata\":{\"name\":\"b\"}},{\"metadata\":{\"name\":\"c\"}}],"
      + "\"metadata\":{\"resourceVersion\":\"2\"}}"
    expectSameAsBaseline(decode(body), Buffer.from(body))
    const result = decode(body)
    expect(Result.isSuccess(result) && result.success.items.length).toBe(2)
    expect(Result.isSuccess(result) && result.success.resourceVersion).toBe("2")
  })

  it("accepts Uint8Arrays and does not keep references to the chunks it was given", () => {
    const body = trickyBody()
    const expected = baseline(body)
    const decoder = new ListBodyDecoder<unknown>({ description })
    // one reused buffer, as a stream implementation may do
    const scratch = new Uint8Array(100)
    for (let i = 0; i < body.length; i += 100) {
      const n = Math.min(100, body.length - i)
      scratch.set(body.subarray(i, i + n))
      expect(decoder.push(scratch.subarray(0, n))).toBeUndefined()
      scratch.fill(0x7b)
    }
    expect(decoder.end()).toStrictEqual(expected)
    expect(decoder.end()).toStrictEqual(expected)
    expect(decoder.push(Buffer.from(" "))?.message).toMatch(/bytes pushed after the end of the body/)
  })

  it("fails, without throwing, on items nested 100,000 levels deep", () => {
    const depth = 100_000
    const deep = "[".repeat(depth) + "]".repeat(depth)
    const asItem = `{"metadata":{},"items":[${deep}]}`
    expect(failureOf(decode(asItem))).toMatch(/^invalid list item 0: /)
    expect(failureOf(decodeChunks(chunked(Buffer.from(asItem), 4096)))).toMatch(/^invalid list item 0: /)
    const inMetadata = `{"items":[],"metadata":${deep}}`
    expect(failureOf(decode(inMetadata))).toMatch(/^invalid list response: /)
    const objects = "{\"a\":".repeat(depth) + "1" + "}".repeat(depth)
    const inItem = `{"metadata":{},"items":[{"metadata":{"name":"x"},"spec":${objects}}]}`
    // nesting that JSON.parse accepts (V8's is iterative) is accepted, as by the baseline
    expect(Result.isSuccess(baseline(Buffer.from(inItem)))).toBe(true)
    const accepted = decodeChunks(chunked(Buffer.from(inItem), 65536))
    if (Result.isFailure(accepted)) throw new Error(accepted.failure.message)
    let node = (accepted.success.items[0] as { spec: unknown }).spec
    let levels = 0
    while (typeof node === "object" && node !== null) {
      node = (node as { a: unknown }).a
      levels++
    }
    expect([levels, node]).toStrictEqual([depth, 1])
    const unclosed = `{"metadata":{},"items":[${"[".repeat(depth)}`
    expect(failureOf(decode(unclosed))).toMatch(/ended early .*inside list item 0/)
    const unbalanced = `{"metadata":{},"items":[${"[".repeat(depth)}${"}".repeat(depth)}]}`
    expect(failureOf(decode(unbalanced))).toMatch(/^malformed JSON in list item 0 at byte 24: /)
  })

  it("bounds the values other than items, and the items", () => {
    expect(defaultMaxValueBytes).toBe(1024 * 1024)
    expect(defaultMaxItemBytes).toBe(256 * 1024 * 1024)
    const big = "x".repeat(defaultMaxValueBytes)
    const hugeMetadata = Buffer.from(`{"items":[],"metadata":{"resourceVersion":"1","x":"${big}"}}`)
    expect(failureOf(decodeChunks(chunked(hugeMetadata, 65536))))
      .toBe(`the value of "metadata" (at byte 23) exceeds the limit of ${defaultMaxValueBytes} bytes`)
    expect(failureOf(decode(hugeMetadata))).toMatch(/exceeds the limit/)
    const hugeKey = Buffer.from(`{"${big}":1,"items":[],"metadata":{}}`)
    expect(failureOf(decodeChunks(chunked(hugeKey, 65536)))).toMatch(/^a key \(at byte 1\) exceeds the limit/)
    const unknownKey = Buffer.from(`{"items":[],"metadata":{},"extra":[${"1,".repeat(600_000)}1]}`)
    expect(failureOf(decodeChunks(chunked(unknownKey, 65536)))).toMatch(/^the value of "extra" .* exceeds the limit/)
    // an item may be larger than the other values
    const bigItem = Buffer.from(`{"items":[{"metadata":{"name":"a"},"x":"${big}"}],"metadata":{}}`)
    expect(Result.isSuccess(decodeChunks(chunked(bigItem, 65536)))).toBe(true)
    // but not larger than maxItemBytes; the decoder stops holding bytes at the limit
    const decoder = new ListBodyDecoder<unknown>({ description, maxItemBytes: 10_000 })
    let failure: DecodeFailure | undefined
    for (const chunk of chunked(bigItem, 4096)) {
      failure = decoder.push(chunk)
      if (failure !== undefined) break
    }
    expect(failure?.message).toBe(`${prefix}list item 0 (at byte 10) exceeds the limit of 10000 bytes`)
    expect(decoder.peakHeldBytes).toBeLessThanOrEqual(10_000)
    const small = new ListBodyDecoder<unknown>({ description, maxValueBytes: 10 })
    expect(small.push(Buffer.from("{\"kind\":\"PodListPodList\"}"))?.message).toMatch(/the value of "kind"/)
  })

  it("never holds more than one item: a long list in 64 KiB chunks", () => {
    // a body of any size decodes the same way: nothing but the current item is held between chunks, and no
    // string longer than one item is made (so a body over V8's longest string works as this one does)
    const n = 200_000
    const parts: Array<string> = [
      "{\"kind\":\"PodList\",\"apiVersion\":\"v1\",\"metadata\":{\"resourceVersion\":\"9\"},"
    ]
    parts.push("\"items\":[")
    for (let i = 0; i < n; i++) {
      parts.push(
        `${i === 0 ? "" : ","}{"metadata":{"name":"pod-${i}","namespace":"default","resourceVersion":"${i}"},` +
          `"s":"\\"[{${i}}]\\\\"}`
      )
    }
    parts.push("]}")
    const body = Buffer.from(parts.join(""))
    const decoder = new ListBodyDecoder<{ metadata: { name: string } }>({ description })
    const started = performance.now()
    for (const chunk of chunked(body, 64 * 1024)) expect(decoder.push(chunk)).toBeUndefined()
    const result = decoder.end()
    const elapsed = performance.now() - started
    if (Result.isFailure(result)) throw new Error(result.failure.message)
    expect(result.success.items.length).toBe(n)
    expect(result.success.items[n - 1].metadata.name).toBe(`pod-${n - 1}`)
    expect(result.success.resourceVersion).toBe("9")
    expect(body.length).toBeGreaterThan(20_000_000)
    expect(decoder.longestSliceBytes).toBeLessThan(200)
    expect(decoder.peakHeldBytes).toBeLessThan(200)
    expect(elapsed).toBeLessThan(20_000)
  })
})

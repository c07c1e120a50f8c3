/**
 * Decodes a LIST response body (`{"kind":…,"apiVersion":…,"metadata":{…},"items":[…]}`) one chunk of bytes
 * at a time, so that a body larger than V8's longest string (about 512 MiB; an unpaginated list of 150,000
 * pods can be larger) can be decoded: the body is never held, neither as bytes nor as one string.
 *
 * This is `response.text -> JSON.parse -> Wire.decodeList` as an incremental, synchronous state machine:
 * - a byte-level scanner of the top-level object (iterative: a depth counter, an in-string flag and an
 *   escape flag; no recursion, so nesting depth costs nothing) finds where each top-level key, each
 *   top-level value and each element of the `items` array begins and ends;
 * - each element of `items` is `JSON.parse`d on its own as soon as its last byte arrives and validated
 *   with `Wire.ObjectWithMeta` (the first invalid item ends the decoding); only the bytes of the current
 *   element are kept between chunks (copied, as pieces, concatenated once at the element's end);
 * - every other top-level value (`kind`, `apiVersion`, `metadata`, unknown keys) is collected and parsed
 *   the same way, but bounded by `maxValueBytes` (1 MiB by default), so that no part of the body but the
 *   items can grow memory; an item is bounded by `maxItemBytes` (256 MiB by default);
 * - at the end the envelope is validated with `Wire.ListEnvelope`; the result is what `decodeList` returns
 *   for `JSON.parse` of the same body, with one difference: `"items": null` is an empty list (Go's
 *   encoding of a nil slice), where `decodeList` rejects it. As with `JSON.parse`, the last of duplicated
 *   top-level keys wins (but an invalid item in an earlier `items` array has already failed).
 *
 * Element boundaries always fall on ASCII bytes, so decoding each element's bytes as UTF-8 on its own
 * gives the same text as decoding the whole body: a multi-byte character split across chunks is in the
 * pieces of its element. A UTF-8 byte order mark at the start of the body is skipped (as `response.text`
 * drops it). Malformed JSON anywhere is a one-line failure with the byte offset and a short preview;
 * nothing here throws.
 *
 * The work per item is one `toString` of its bytes, one `JSON.parse` and one `isObjectWithMeta` check
 * (`internal/wireGuard.ts`). Finding where an item ends costs a scan of its bytes in a tight loop (a long
 * string is skipped with `Buffer.indexOf`, a native `memchr`), except that the decoder first guesses: the
 * bytes between two items of a compact body are `},` and the opening of the next item, which starts as the
 * first one did (`{"metadata":`), so the next occurrence of those bytes in the chunk (a native search) is
 * where the item most likely ends, and `JSON.parse` of the slice up to there succeeds only if it is (see
 * `guess`). A wrong guess costs a failed parse and the scan; guessing stops when guesses are often wrong.
 * With it, a list decodes at about the speed of `JSON.parse` of the whole body.
 *
 * @internal
 */
import * as Result from "effect/Result"
import type { DecodedList, DecodeFailure } from "../../Wire.js"
import { ListEnvelope, ObjectWithMeta } from "../../Wire.js"
import { isListEnvelope, isObjectWithMeta } from "../protocol/wireGuard.js"
import { explain, oneLine } from "../text.js"

/**
 * Default `maxItemBytes`: the largest element of `items`, 256 MiB. Kubernetes objects are limited to
 * about 1.5 MiB by etcd, so this only stops a hostile or broken body; it stays well below V8's longest
 * string (an element is decoded to one string).
 *
 * @internal
 */
export const defaultMaxItemBytes = 256 * 1024 * 1024

/**
 * Default `maxValueBytes`: the largest top-level value other than `items` (`metadata`, `kind`, unknown
 * keys) and the longest top-level key, 1 MiB.
 *
 * @internal
 */
export const defaultMaxValueBytes = 1024 * 1024

/** @internal */
export interface ListDecoderOptions {
  /** What is listed, to prefix messages, e.g. `"pods in default"`: messages read `list pods in default: …`. */
  readonly description: string
  /** The largest element of `items`, in bytes. Default `defaultMaxItemBytes` (256 MiB). */
  readonly maxItemBytes?: number | undefined
  /** The largest other top-level value or key, in bytes. Default `defaultMaxValueBytes` (1 MiB). */
  readonly maxValueBytes?: number | undefined
  /**
   * Removes the request's credentials from the body text quoted in a message, before it is cut to a
   * preview (a cut secret would no longer be recognised). Default: none.
   */
  readonly scrub?: ((text: string) => string) | undefined
}

// bytes
const TAB = 9
const LF = 10
const CR = 13
const SPACE = 32
const QUOTE = 34
const COMMA = 44
const COLON = 58
const LBRACKET = 91
const BACKSLASH = 92
const RBRACKET = 93
const LBRACE = 123
const RBRACE = 125

/** Bytes of a string scanned one by one before the rest is searched with `indexOf` (a native call). */
const SHORT_STRING = 32
/** Bytes of a string without a quote after which the next quote is searched with `indexOf`. */
const LONG_RUN = 64

// states of the top-level scanner
/** Before the top-level `{` (a byte order mark or whitespace may come first). */
const S_START = 0
/** After `{`: a key or `}`. */
const S_FIRST_KEY = 1
/** After `,` between members: a key. */
const S_KEY = 2
/** After a key: `:`. */
const S_COLON = 3
/** After `:`: a value. */
const S_VALUE = 4
/** Inside a slice (a key, a top-level value or an item) that the value scanner delimits. */
const S_SLICE = 5
/** After a top-level value: `,` or `}`. */
const S_AFTER_VALUE = 6
/** After the `[` of `items`: an item or `]`. */
const S_FIRST_ITEM = 7
/** After `,` between items: an item. */
const S_ITEM = 8
/** After an item: `,` or `]`. */
const S_AFTER_ITEM = 9
/** After the top-level `}`: whitespace only. */
const S_DONE = 10
/** A failure was returned; every later call returns it again. */
const S_FAILED = 11

// what a slice is
const K_KEY = 0
const K_VALUE = 1
const K_ITEM = 2

const isWhitespace = (c: number): boolean => c === SPACE || c === LF || c === CR || c === TAB

const toBuffer = (chunk: Uint8Array): Buffer =>
  // a Buffer view (no copy): its indexOf is a native memchr, several times faster than Uint8Array's
  Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength)

/**
 * The mutable state of one LIST body: where the scanner is in the top-level object, the pieces of the
 * current slice, the items decoded so far and the envelope's values.
 *
 * `push` every chunk in order, then `end`. `push` returns the failure that ends the decoding, if any; after
 * a failure every call returns it again. `push` does not keep a reference to its chunk (partial slices are
 * copied), so the caller may reuse it.
 *
 * @internal
 */
export class ListBodyDecoder<A> {
  private readonly maxItemBytes: number
  private readonly maxValueBytes: number
  private state = S_START
  private failure: DecodeFailure | undefined = undefined
  private ended = false
  /** Bytes of the body before the current chunk. */
  private offset = 0
  /** Bytes of the byte order mark matched so far (3: none can follow any more). */
  private bom = 0

  // the value scanner
  /** Nesting depth of the current slice (0 at its first byte). */
  private depth = 0
  private inString = false
  /** The last byte of the previous chunk was a backslash inside a string: the first byte is escaped. */
  private escaped = false
  /** The current slice is a number, `true`, `false` or `null` (it ends before a delimiter). */
  private primitive = false
  /** What the current slice is (`K_KEY`, `K_VALUE` or `K_ITEM`). */
  private kind = K_KEY
  /** Offset in the body of the current slice's first byte. */
  private sliceOffset = 0
  /** Copies of the current slice's bytes from earlier chunks. */
  private pieces: Array<Buffer> = []
  private pieceBytes = 0

  // the decoded body
  /** The current top-level key. */
  private key = ""
  private readonly envelope: { kind?: unknown; apiVersion?: unknown; metadata?: unknown; items?: unknown } = {}
  /** Whether an `items` key has been seen, and the items of the last one that was an array. */
  private hasItems = false
  private items: Array<A> = []
  /** The bytes that likely separate two items (see `guess`). */
  private boundary: Buffer | undefined = undefined

  /**
   * The most bytes held between two chunks (the pieces of an unfinished slice): never more than one key,
   * value or item. For tests and diagnostics.
   */
  peakHeldBytes = 0
  /** The longest slice (key, value or item) decoded to a string, in bytes. For tests and diagnostics. */
  longestSliceBytes = 0
  /** Items whose end was guessed (see `guess`), and wrong guesses. For tests and diagnostics. */
  guesses = 0
  misses = 0

  constructor(readonly options: ListDecoderOptions) {
    this.maxItemBytes = options.maxItemBytes ?? defaultMaxItemBytes
    this.maxValueBytes = options.maxValueBytes ?? defaultMaxValueBytes
  }

  /** The number of items decoded so far. */
  get itemCount(): number {
    return this.items.length
  }

  /** Scans one chunk of the body, decoding the items that end in it. Returns the failure that ends it. */
  push(chunk: Uint8Array): DecodeFailure | undefined {
    if (this.state === S_FAILED) return this.failure
    if (this.ended) return this.fail("malformed JSON in the response: bytes pushed after the end of the body")
    const buf = toBuffer(chunk)
    const len = buf.length
    let i = 0
    // where the current slice starts in this chunk (a slice continued from the previous chunk: at 0)
    let start = 0
    while (i < len) {
      switch (this.state) {
        case S_SLICE: {
          const end = this.scan(buf, i, len)
          const max = this.kind === K_ITEM ? this.maxItemBytes : this.maxValueBytes
          if (end === -1) {
            // the slice continues in the next chunk: keep a copy of its bytes in this one
            const n = len - start
            if (this.pieceBytes + n > max) return this.tooLarge(max)
            this.pieces.push(Buffer.from(buf.subarray(start, len)))
            this.pieceBytes += n
            if (this.pieceBytes > this.peakHeldBytes) this.peakHeldBytes = this.pieceBytes
            i = len
            break
          }
          if (this.pieceBytes + (end - start) > max) return this.tooLarge(max)
          const failure = this.complete(buf, start, end)
          if (failure !== undefined) return failure
          i = end
          break
        }
        case S_START: {
          const c = buf[i]
          if (this.bom < 3) {
            // a UTF-8 byte order mark (EF BB BF), possibly split across chunks
            if (c === (this.bom === 0 ? 0xef : this.bom === 1 ? 0xbb : 0xbf)) {
              this.bom++
              i++
              break
            }
            if (this.bom > 0) return this.malformed(buf, i, "an incomplete byte order mark")
            this.bom = 3
          }
          if (isWhitespace(c)) {
            i++
          } else if (c === LBRACE) {
            this.state = S_FIRST_KEY
            i++
          } else {
            return this.fail(`the response is not a JSON object: ${this.preview(buf, i)}`)
          }
          break
        }
        case S_FIRST_KEY:
        case S_KEY: {
          const c = buf[i]
          if (isWhitespace(c)) {
            i++
          } else if (c === QUOTE) {
            start = i
            this.begin(K_KEY, i, c)
          } else if (c === RBRACE && this.state === S_FIRST_KEY) {
            this.state = S_DONE
            i++
          } else {
            return this.malformed(buf, i, "expected a key")
          }
          break
        }
        case S_COLON: {
          const c = buf[i]
          if (isWhitespace(c)) {
            i++
          } else if (c === COLON) {
            this.state = S_VALUE
            i++
          } else {
            return this.malformed(buf, i, "expected ':' after a key")
          }
          break
        }
        case S_VALUE: {
          const c = buf[i]
          if (isWhitespace(c)) {
            i++
          } else if (c === LBRACKET && this.key === "items") {
            // the items are decoded one by one; a repeated `items` key replaces the earlier ones
            this.hasItems = true
            this.envelope.items = undefined
            this.items = []
            this.state = S_FIRST_ITEM
            i++
          } else if (c === COMMA || c === RBRACE || c === RBRACKET || c === COLON) {
            return this.malformed(buf, i, "expected a value")
          } else {
            start = i
            this.begin(K_VALUE, i, c)
          }
          break
        }
        case S_AFTER_VALUE: {
          const c = buf[i]
          if (isWhitespace(c)) {
            i++
          } else if (c === COMMA) {
            this.state = S_KEY
            i++
          } else if (c === RBRACE) {
            this.state = S_DONE
            i++
          } else {
            return this.malformed(buf, i, "expected ',' or '}' after a value")
          }
          break
        }
        case S_FIRST_ITEM:
        case S_ITEM: {
          const c = buf[i]
          if (isWhitespace(c)) {
            i++
          } else if (c === RBRACKET && this.state === S_FIRST_ITEM) {
            this.state = S_AFTER_VALUE
            i++
          } else if (c === COMMA || c === RBRACE || c === RBRACKET || c === COLON) {
            return this.malformed(buf, i, `expected list item ${this.items.length}`)
          } else {
            if (c === LBRACE && this.boundary !== undefined) {
              const end = this.guess(buf, i)
              if (end !== -1) {
                if (this.failure !== undefined) return this.failure
                i = end
                break
              }
            }
            start = i
            this.begin(K_ITEM, i, c)
          }
          break
        }
        case S_AFTER_ITEM: {
          const c = buf[i]
          if (isWhitespace(c)) {
            i++
          } else if (c === COMMA) {
            this.state = S_ITEM
            i++
          } else if (c === RBRACKET) {
            this.state = S_AFTER_VALUE
            i++
          } else {
            return this.malformed(buf, i, "expected ',' or ']' after a list item")
          }
          break
        }
        case S_DONE: {
          const c = buf[i]
          if (!isWhitespace(c)) return this.malformed(buf, i, "data after the end of the list object")
          i++
          break
        }
      }
    }
    this.offset += len
    return undefined
  }

  /**
   * The body ended: validates the envelope and returns the list, or why the body is not a list (the
   * failure `push` returned, if it did).
   */
  end(): Result.Result<DecodedList<A>, DecodeFailure> {
    if (this.state === S_FAILED) return Result.fail(this.failure!)
    if (!this.ended) {
      this.ended = true
      if (this.state !== S_DONE) {
        const failure = this.fail(
          this.state === S_START
            ? this.offset === 0
              ? "the response body is empty"
              : `the response is not a JSON object: no '{' in its ${this.offset} bytes`
            : `malformed JSON in the response: the body ended early (after ${this.offset} bytes, ${this.where()})`
        )
        return Result.fail(failure)
      }
    }
    const envelope = this.envelope
    const u: Record<string, unknown> = {}
    if ("kind" in envelope) u.kind = envelope.kind
    if ("apiVersion" in envelope) u.apiVersion = envelope.apiVersion
    if ("metadata" in envelope) u.metadata = envelope.metadata
    // the items were validated one by one: the envelope's check only needs to know they were an array
    if (this.hasItems) u.items = envelope.items === undefined || envelope.items === null ? [] : envelope.items
    if (!isListEnvelope(u)) {
      const explained = explain(ListEnvelope, u)
      return Result.fail(this.fail(`invalid list response: ${explained.line}`, undefined, explained.tree))
    }
    const cont = u.metadata.continue
    return Result.succeed({
      items: this.items,
      resourceVersion: u.metadata.resourceVersion ?? "",
      continue: cont === undefined || cont === "" ? undefined : cont,
      remainingItemCount: u.metadata.remainingItemCount
    })
  }

  /** Starts a slice of `kind` at `buf[i]` (the scanner reads that byte again). */
  private begin(kind: number, i: number, c: number): void {
    this.state = S_SLICE
    this.kind = kind
    this.sliceOffset = this.offset + i
    this.depth = 0
    this.inString = false
    this.escaped = false
    this.primitive = c !== LBRACE && c !== LBRACKET && c !== QUOTE
  }

  /**
   * Scans the current slice from `buf[i]`. Returns the offset just past its last byte (for a number or a
   * literal: of the delimiter that follows it), or -1 if it continues in the next chunk.
   */
  private scan(buf: Buffer, i: number, len: number): number {
    if (this.primitive) {
      while (i < len) {
        const c = buf[i]
        if (c === COMMA || c === RBRACE || c === RBRACKET || isWhitespace(c)) {
          this.primitive = false
          return i
        }
        i++
      }
      return -1
    }
    let depth = this.depth
    if (this.inString) {
      // a string continued from the previous chunk
      if (this.escaped) {
        this.escaped = false
        i++
      }
      i = this.skipString(buf, i, len)
      if (i === -1) return -1
      this.inString = false
      if (depth === 0) return i
    }
    while (i < len) {
      const c = buf[i++]
      if (c === QUOTE) {
        // most strings are short keys and values: look for the closing quote byte by byte first
        let j = i
        const stop = j + SHORT_STRING < len ? j + SHORT_STRING : len
        let d = 0
        while (j < stop && (d = buf[j]) !== QUOTE && d !== BACKSLASH) j++
        if (j < stop && d === QUOTE) {
          i = j + 1
        } else {
          i = this.skipString(buf, j, len)
          if (i === -1) {
            this.depth = depth
            this.inString = true
            return -1
          }
        }
        if (depth === 0) return i
      } else if ((c | 32) === LBRACE) {
        // `{` or `[` (0x7B, 0x5B)
        depth++
      } else if ((c | 32) === RBRACE && --depth === 0) {
        // `}` or `]` (0x7D, 0x5D)
        this.depth = 0
        return i
      }
    }
    this.depth = depth
    return -1
  }

  /**
   * Finds the end of the string that `buf[i]` is inside of, `i` being at a character (not in the middle of
   * an escape). Byte by byte (an escape-heavy string, such as JSON in an annotation, has a quote every few
   * bytes); after `LONG_RUN` bytes without a quote, jumps to the next quote (`indexOf`, a native `memchr`)
   * and counts the backslashes before it. Returns the offset just past the closing quote, or -1 if the
   * string continues in the next chunk (`escaped`: whether the chunk ends in the middle of an escape).
   */
  private skipString(buf: Buffer, i: number, len: number): number {
    for (;;) {
      const stop = i + LONG_RUN < len ? i + LONG_RUN : len
      while (i < stop) {
        const d = buf[i++]
        if (d === QUOTE) return i
        if (d === BACKSLASH) {
          if (i === len) {
            this.escaped = true
            return -1
          }
          i++
        }
      }
      if (i >= len) {
        this.escaped = false
        return -1
      }
      const q = buf.indexOf(QUOTE, i)
      const end = q === -1 ? len : q
      let k = end - 1
      while (k >= i && buf[k] === BACKSLASH) k--
      const odd = ((end - 1 - k) & 1) === 1
      if (q === -1) {
        this.escaped = odd
        return -1
      }
      i = q + 1
      if (!odd) return i
    }
  }

  /** The current slice ends at `buf[end]`: decodes it. */
  private complete(buf: Buffer, start: number, end: number): DecodeFailure | undefined {
    let text: string
    let bytes: number
    if (this.pieces.length === 0) {
      bytes = end - start
      text = buf.toString("utf8", start, end)
    } else {
      this.pieces.push(buf.subarray(0, end))
      bytes = this.pieceBytes + end
      text = Buffer.concat(this.pieces, bytes).toString("utf8")
      this.pieces = []
      this.pieceBytes = 0
    }
    if (bytes > this.longestSliceBytes) this.longestSliceBytes = bytes
    let value: unknown
    try {
      value = JSON.parse(text)
    } catch (cause) {
      return this.fail(this.syntaxError(text, cause), cause)
    }
    switch (this.kind) {
      case K_ITEM: {
        if (this.items.length === 0 && this.boundary === undefined && this.guesses === 0) this.learn(text)
        return this.item(value)
      }
      case K_KEY: {
        this.key = value as string
        this.state = S_COLON
        return undefined
      }
      default: {
        switch (this.key) {
          case "kind":
            this.envelope.kind = value
            break
          case "apiVersion":
            this.envelope.apiVersion = value
            break
          case "metadata":
            this.envelope.metadata = value
            break
          case "items":
            this.hasItems = true
            this.envelope.items = value
            this.items = []
            break
        }
        this.state = S_AFTER_VALUE
        return undefined
      }
    }
  }

  private item(value: unknown): DecodeFailure | undefined {
    if (!isObjectWithMeta(value)) {
      const explained = explain(ObjectWithMeta, value)
      return this.fail(`invalid list item ${this.items.length}: ${explained.line}`, undefined, explained.tree)
    }
    this.items.push(value as A)
    this.state = S_AFTER_ITEM
    return undefined
  }

  /**
   * Learns the bytes that most likely separate two items from the first one: `},` and the first item's
   * opening (`{"metadata":` for built-in kinds, `{"apiVersion":` for custom resources).
   */
  private learn(text: string): void {
    const opening = /^\{"[A-Za-z0-9_.$-]{1,64}":/.exec(text)
    if (opening !== null) this.boundary = Buffer.from("}," + opening[0])
  }

  /**
   * Tries to decode the item that starts at `buf[i]` without scanning it: its end is guessed at the next
   * `boundary` in the chunk and `JSON.parse` checks the guess (a slice that parses as one value ends where
   * the value ends: JSON's tokens are read left to right, and an object is complete only at its closing
   * brace). Returns the offset just past the item, or -1 if there is no guess or it was wrong (the caller
   * then scans the item). Guessing stops for a body where guesses are often wrong (nested objects that
   * start like an item).
   */
  private guess(buf: Buffer, i: number): number {
    const q = buf.indexOf(this.boundary!, i + 1)
    if (q === -1 || q + 1 - i > this.maxItemBytes) return -1
    const end = q + 1
    this.guesses++
    const text = buf.toString("utf8", i, end)
    let value: unknown
    try {
      value = JSON.parse(text)
    } catch {
      this.misses++
      if (this.misses * 8 > this.guesses + 64) this.boundary = undefined
      return -1
    }
    this.sliceOffset = this.offset + i
    this.kind = K_ITEM
    if (end - i > this.longestSliceBytes) this.longestSliceBytes = end - i
    this.item(value)
    return end
  }

  /** The current slice, for messages. */
  private what(): string {
    switch (this.kind) {
      case K_ITEM:
        return `list item ${this.items.length}`
      case K_KEY:
        return "a key"
      default:
        return `the value of ${JSON.stringify(oneLine(this.key, 40))}`
    }
  }

  /** Where the scanner is, for a body that ended early. */
  private where(): string {
    switch (this.state) {
      case S_SLICE:
        return `inside ${this.what()}`
      case S_FIRST_ITEM:
      case S_ITEM:
      case S_AFTER_ITEM:
        return `inside the items, after ${this.items.length} items`
      default:
        return "before the end of the list object"
    }
  }

  /**
   * `JSON.parse` rejected the current slice: its message, the offset in the body of where it went wrong
   * (when the message says), and the text there.
   */
  private syntaxError(text: string, cause: unknown): string {
    // V8 quotes the text around the error ('Unexpected token …, "…" is not valid JSON'): that quote, unscrubbed,
    // is left out; the preview below is taken from the scrubbed text
    const raw = cause instanceof Error ? cause.message : String(cause)
    const quoted = /, ".*$/s.test(raw)
    const reason = oneLine(raw.replace(/, ".*$/s, ""), 120)
    const position = /at position (\d+)/.exec(reason)
    let at = this.sliceOffset
    let preview: string
    if (position !== null) {
      const p = Math.min(text.length, Number(position[1]))
      at += Buffer.byteLength(text.slice(0, p))
      preview = this.window(text, Math.max(0, p - 40), p + 80)
    } else {
      // V8's quote (left out) was of the start of the text; without one, the text ended too early
      preview = quoted ? this.window(text, 0, 120) : this.window(text, Math.max(0, text.length - 120), text.length)
    }
    return `malformed JSON in ${this.what()} at byte ${at}: ${reason}${preview === "" ? "" : `: ${preview}`}`
  }

  private tooLarge(max: number): DecodeFailure {
    return this.fail(`${this.what()} (at byte ${this.sliceOffset}) exceeds the limit of ${max} bytes`)
  }

  private preview(buf: Buffer, i: number): string {
    return this.window(buf.toString("utf8", i, Math.min(buf.length, i + 120)), 0, 120)
  }

  /** `text[start, end)` as one line of at most 120 characters, scrubbed first (the cut edges included). */
  private window(text: string, start: number, end: number): string {
    const scrub = this.options.scrub
    const part = text.slice(start, end)
    return oneLine(scrub === undefined ? part : scrub(part), 120)
  }

  private malformed(buf: Buffer, i: number, expected: string): DecodeFailure {
    return this.fail(
      `malformed JSON in the response at byte ${this.offset + i}: ${expected}, found: ${this.preview(buf, i)}`
    )
  }

  private fail(message: string, cause?: unknown, detail?: string): DecodeFailure {
    const failure: DecodeFailure = {
      message: `list ${this.options.description}: ${message}`,
      ...(detail === undefined ? {} : { detail }),
      ...(cause === undefined ? {} : { cause })
    }
    this.state = S_FAILED
    this.failure = failure
    this.pieces = []
    this.pieceBytes = 0
    this.items = []
    return failure
  }
}

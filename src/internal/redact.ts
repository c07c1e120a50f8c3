/**
 * The one scrubber for text built from what a server (or a plugin) sent: Status messages, decode previews,
 * transport causes, warnings. A hostile or careless server may echo the request's credentials back; no
 * message the library builds may carry them onwards to a log.
 *
 * Removed, in this order:
 * - every secret the request carried, verbatim: the bearer token, the basic-auth header's base64 form, the
 *   decoded `user:password` pair and the password alone (plain and URL-encoded), and each line of the
 *   client key's PEM body;
 * - whatever still looks like a credential: `Bearer x` / `Basic x`, `user:pass@` in a URL, a PEM private
 *   key block, and `token=`, `password:` style fields.
 *
 * A server may echo a secret inside JSON, escaped (`tok\u002dabc`, `a\/b`, `pa\"ss`): before anything is
 * matched, `\uXXXX` escapes of printable characters and `\/` are decoded, and a secret holding `"` or `\`
 * is also matched in its JSON-escaped form. Texts are changed only where they held such an escape.
 *
 * @internal
 */
import type { Status } from "../Wire.js"
import { oneLine } from "./text.js"

/** @internal */
export const redacted = "<redacted>"

/** A scrubber: text in, the same text without secrets out. */
export type Scrub = (text: string) => string

// Every quantifier that could rescan the text from many starting points is bounded, so that scrubbing
// hostile text stays linear in its length.
const authSchemePattern = /\b(bearer|basic)(\s+)[^\s"',;]+/gi
const urlCredentialsPattern = /\b([a-z][a-z0-9+.-]{0,31}:\/\/)[^\s/?#@"']{1,512}@/gi
const privateKeyPattern = /-----BEGIN ([A-Z0-9 ]*)PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z0-9 ]*PRIVATE KEY-----|$)/g
const secretFieldPattern =
  /\b(token|password|passwd|secret|key-data|client-key-data)(["']?\s*[:=]\s*["']?)[^\s"',;&]+/gi

const escapePattern = /\\(?:u([0-9a-fA-F]{4})|\/)/g

/**
 * `text` with the JSON escapes that could hide a secret decoded: `\uXXXX` of a printable character and
 * `\/`. Escapes of control characters, `\"`, `\\` and the like are left as they are (a line stays a line).
 *
 * @internal
 */
export const decodeEscapes = (text: string): string =>
  text.includes("\\")
    ? text.replace(escapePattern, (escape, hex: string | undefined) => {
      if (hex === undefined) return "/"
      const code = Number.parseInt(hex, 16)
      return code < 0x20 || code === 0x7f || code === 0x2028 || code === 0x2029 ? escape : String.fromCharCode(code)
    })
    : text

const genericPatterns = (text: string): string =>
  text
    .replace(privateKeyPattern, `-----BEGIN $1PRIVATE KEY----- ${redacted}`)
    .replace(urlCredentialsPattern, `$1${redacted}@`)
    .replace(authSchemePattern, `$1$2${redacted}`)
    .replace(secretFieldPattern, `$1$2${redacted}`)

/** The generic patterns alone: for text that no request's secrets are known for. */
export const scrubPatterns: Scrub = (text) => genericPatterns(decodeEscapes(text))

const minSecretLength = 4

/**
 * The verbatim secrets carried by a request's headers and TLS key: what `makeScrub` removes.
 *
 * @internal
 */
export const secretsOf = (
  headers: Readonly<Record<string, string | undefined>>,
  keyLines: ReadonlyArray<string> = []
): ReadonlyArray<string> => {
  const secrets = new Set<string>()
  const add = (secret: string | undefined) => {
    if (secret === undefined) return
    const trimmed = secret.trim()
    if (trimmed.length < minSecretLength) return
    secrets.add(trimmed)
    const encoded = encodeURIComponent(trimmed)
    if (encoded !== trimmed) secrets.add(encoded)
  }
  for (const name in headers) {
    const value = headers[name]
    if (value === undefined) continue
    const lower = name.toLowerCase()
    if (lower !== "authorization" && lower !== "proxy-authorization" && !lower.includes("token")) continue
    const space = value.indexOf(" ")
    const scheme = space === -1 ? "" : value.slice(0, space).toLowerCase()
    const credential = space === -1 ? value : value.slice(space + 1)
    add(credential)
    if (scheme === "basic") {
      const decoded = Buffer.from(credential.trim(), "base64").toString("utf8")
      add(decoded)
      const colon = decoded.indexOf(":")
      if (colon !== -1) add(decoded.slice(colon + 1))
    }
  }
  for (const line of keyLines) add(line)
  // longest first, so that a secret containing another is removed whole
  return Array.from(secrets).sort((a, b) => b.length - a.length)
}

/**
 * The lines of a client key's PEM body, as `secretsOf` takes them: split once per key, not per request.
 *
 * @internal
 */
export const keyLinesOf = (key: string | undefined): ReadonlyArray<string> =>
  key === undefined ? [] : key.split(/\r?\n/).filter((line) => !line.startsWith("-----") && line.trim().length >= 16)

/**
 * A scrubber removing `secrets` verbatim, then the generic patterns.
 *
 * @internal
 */
export const makeScrub = (verbatim: ReadonlyArray<string>): Scrub => {
  if (verbatim.length === 0) return scrubPatterns
  // a secret that itself holds an escape is looked for as the text reads once its escapes are decoded
  const secrets = Array.from(new Set(verbatim.flatMap((secret) => [secret, decodeEscapes(secret)])))
    .sort((a, b) => b.length - a.length)
  const escaped = secrets.flatMap((secret) => {
    const pattern = jsonEscapedPattern(secret)
    return pattern === undefined ? [] : [pattern]
  })
  // a cut part may be of the JSON-escaped form (a schema error quotes values as JSON)
  const edgeSecrets = Array.from(new Set(secrets.flatMap((secret) => [secret, JSON.stringify(secret).slice(1, -1)])))
  return (text) => {
    let out = decodeEscapes(text)
    if (escaped.length > 0 && out.includes("\\")) {
      for (const pattern of escaped) out = out.replace(pattern, redacted)
    }
    for (const secret of secrets) {
      if (out.includes(secret)) out = out.split(secret).join(redacted)
    }
    return genericPatterns(cutEdges(out, edgeSecrets))
  }
}

const regexSpecial = /[.*+?^${}()|[\]\\/]/g

/**
 * A secret holding `"` or `\` as JSON writes it (`\"`, `\\`), either form of each accepted: what a server
 * echoing the secret in a JSON string, or a schema error quoting it, shows. `undefined` for a secret without
 * them (it reads the same escaped or not, once `decodeEscapes` ran).
 */
const jsonEscapedPattern = (secret: string): RegExp | undefined => {
  if (!secret.includes("\"") && !secret.includes("\\")) return undefined
  let source = ""
  for (const c of secret) {
    source += c === "\"" ? `(?:"|\\\\")` : c === "\\" ? `(?:\\\\\\\\|\\\\)` : c.replace(regexSpecial, "\\$&")
  }
  return new RegExp(source, "g")
}

/** The shortest part of a secret taken for one at the edge of a window of text. */
const minPartial = 6

/** A JSON escape cut by a window's end (`\`, `\u`, `\u0`...), or its rest at a window's start (`02d`). */
const cutEscapeEnd = /\\(?:u[0-9a-fA-F]{0,3})?$/
const cutEscapeStart = /^(?:u?[0-9a-fA-F]{1,4})/

/** The most cuts (`…`) inside a text looked at for a secret's start. */
const maxCuts = 64

/**
 * A preview is a window of what the server sent: a secret it cut shows only a part, at the window's start
 * (the secret's end) or at its end (the secret's start), maybe beside the rest of a JSON escape the window
 * cut. A text made of several cut parts (a schema error quoting values, each cut with `…`) has a window's
 * end before each `…`. Those parts are removed too.
 */
const cutEdges = (text: string, secrets: ReadonlyArray<string>): string => {
  const ends: Array<number> = []
  for (let i = text.indexOf("…"); i !== -1 && ends.length < maxCuts; i = text.indexOf("…", i + 1)) ends.push(i)
  if (ends.length === 0 || ends[ends.length - 1] !== text.length - 1) ends.push(text.length)
  let body = text
  // from the last end to the first, so that each end's position still holds
  for (let e = ends.length - 1; e >= 0; e--) {
    const point = ends[e]
    body = cutEnd(body.slice(0, point), secrets) + body.slice(point)
  }
  return cutStart(body, secrets)
}

/** `text` without a secret's start at its end. */
const cutEnd = (text: string, secrets: ReadonlyArray<string>): string => {
  let body = text
  for (const secret of secrets) {
    const tail = cutEscapeEnd.exec(body)
    const end = tail === null ? body.length : tail.index
    for (let k = Math.min(secret.length - 1, end); k >= minPartial; k--) {
      if (body.startsWith(secret.slice(0, k), end - k)) {
        body = body.slice(0, end - k) + redacted
        break
      }
    }
  }
  return body
}

/** `text` without a secret's end at its start. */
const cutStart = (text: string, secrets: ReadonlyArray<string>): string => {
  let body = text
  for (const secret of secrets) {
    const head = cutEscapeStart.exec(body)
    const starts = head === null ? [0] : [0, head[0].length]
    search: for (const start of starts) {
      for (let k = Math.min(secret.length - 1, body.length - start); k >= minPartial; k--) {
        if (body.startsWith(secret.slice(secret.length - k), start)) {
          body = redacted + body.slice(start + k)
          break search
        }
      }
    }
  }
  return body
}

/** The longest Status text kept, and the most causes: a server's Status of any size costs a few KB. */
const maxStatusText = 2000
const maxCauses = 20

const bounded = (text: string): string => text.length > maxStatusText ? text.slice(0, maxStatusText) + "…" : text

type Mutable<T> = { -readonly [K in keyof T]: T[K] }
type Details = NonNullable<Status["details"]>
type Cause = NonNullable<Details["causes"]>[number]

const isNumber = (u: unknown): u is number => typeof u === "number" && Number.isFinite(u)

/**
 * A Status as a typed error keeps it: only the fields a caller reads, each text scrubbed and cut to 2,000
 * characters, the causes cut to 20. Kept: `kind` (`"Status"`), `status` (`"Success"` or `"Failure"`),
 * `message`, `reason`, `code`, and the details' `name`, `group`, `kind`, `uid`, `retryAfterSeconds` and
 * causes (`reason`, `message`, `field`). Dropped: `apiVersion`, `metadata` (`resourceVersion`, `continue`,
 * `selfLink`), and every field the schema does not name, at any level: a server may put anything there.
 *
 * @internal
 */
export const scrubStatus = (status: Status, scrub: Scrub): Status => {
  const text = (value: unknown): string | undefined => typeof value === "string" ? scrub(bounded(value)) : undefined
  const out: Mutable<Status> = {}
  if (status.kind === "Status") out.kind = "Status"
  if (status.status === "Success" || status.status === "Failure") out.status = status.status
  const message = text(status.message)
  if (message !== undefined) out.message = message
  const reason = text(status.reason)
  if (reason !== undefined) out.reason = reason
  if (isNumber(status.code)) out.code = status.code
  const details: unknown = status.details
  if (typeof details === "object" && details !== null) {
    const from = details as Details
    const kept: Mutable<Details> = {}
    for (const key of ["name", "group", "kind", "uid"] as const) {
      const value = text(from[key])
      if (value !== undefined) kept[key] = value
    }
    if (isNumber(from.retryAfterSeconds)) kept.retryAfterSeconds = from.retryAfterSeconds
    if (Array.isArray(from.causes)) {
      kept.causes = (from.causes as ReadonlyArray<unknown>).slice(0, maxCauses).map((u) => {
        const cause: Mutable<Cause> = {}
        if (typeof u !== "object" || u === null) return cause
        const c = u as Cause
        for (const key of ["reason", "message", "field"] as const) {
          const value = text(c[key])
          if (value !== undefined) cause[key] = value
        }
        return cause
      })
    }
    out.details = kept
  }
  return out
}

/** Causes already made safe (by `scrubCause`): kept as they are when met again. */
const safeCauses = new WeakSet<object>()

/** The deepest chain of causes kept. */
const maxCauseDepth = 4

const scalarFields = ["code", "errno", "syscall", "address", "port"] as const

/**
 * A failure's cause as an error may carry it: a copy holding nothing a secret could hide in. An `Error`
 * becomes an `Error` of the same name with its message (one line) and stack scrubbed, its system fields
 * (`code`, `errno`, `syscall`, `address`, `port`) and its own cause likewise; anything else becomes an
 * `Error` of its text, scrubbed. The errors of this library (`_tag`ged, built scrubbed) are kept as they are.
 *
 * @internal
 */
export const scrubCause = (cause: unknown, scrub: Scrub, depth = 0): unknown => {
  if (cause === undefined || cause === null) return cause
  if (typeof cause === "object" && safeCauses.has(cause)) return cause
  if (depth >= maxCauseDepth) return undefined
  if (isLibraryError(cause)) return cause
  const line = (text: string) => oneLine(scrub(text.length > 8192 ? text.slice(0, 8192) : text), 500)
  let out: Error
  if (cause instanceof Error) {
    const inner = scrubCause((cause as { readonly cause?: unknown }).cause, scrub, depth + 1)
    out = new Error(line(String(cause.message)), inner === undefined ? undefined : { cause: inner })
    const name = line(String(cause.name))
    out.name = name
    const record = out as unknown as Record<string, unknown>
    for (const key of scalarFields) {
      const value = (cause as unknown as Record<string, unknown>)[key]
      if (typeof value === "string") record[key] = line(value)
      else if (typeof value === "number" || typeof value === "boolean") record[key] = value
    }
    const frames = typeof cause.stack === "string"
      ? cause.stack.split("\n").filter((frame) => /^\s+at /.test(frame)).slice(0, 20).map((frame) => scrub(frame))
      : []
    out.stack = [`${name}: ${out.message}`, ...frames].join("\n")
  } else {
    let text: string
    try {
      text = typeof cause === "object" ? JSON.stringify(cause) ?? String(cause) : String(cause)
    } catch {
      text = Object.prototype.toString.call(cause)
    }
    out = new Error(line(text))
    out.stack = `Error: ${out.message}`
  }
  safeCauses.add(out)
  return out
}

/** This library's errors: built from scrubbed text, each field made safe by its constructor. */
const isLibraryError = (u: unknown): boolean =>
  typeof u === "object" && u !== null &&
  (Symbol.for("effect-informers/ApiError") in u ||
    (u as { readonly _tag?: unknown })._tag === "KubeConfigError")

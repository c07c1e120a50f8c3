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
 * @internal
 */
import type { Status } from "../Wire.js"

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

/** The generic patterns alone: for text that no request's secrets are known for. */
export const scrubPatterns: Scrub = (text) =>
  text
    .replace(privateKeyPattern, `-----BEGIN $1PRIVATE KEY----- ${redacted}`)
    .replace(urlCredentialsPattern, `$1${redacted}@`)
    .replace(authSchemePattern, `$1$2${redacted}`)
    .replace(secretFieldPattern, `$1$2${redacted}`)

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
export const makeScrub = (secrets: ReadonlyArray<string>): Scrub => {
  if (secrets.length === 0) return scrubPatterns
  return (text) => {
    let out = text
    for (const secret of secrets) {
      if (out.includes(secret)) out = out.split(secret).join(redacted)
    }
    return scrubPatterns(cutEdges(out, secrets))
  }
}

/** The shortest part of a secret taken for one at the edge of a window of text. */
const minPartial = 6

/**
 * A preview is a window of what the server sent: a secret it cut shows only a part, at the window's start
 * (the secret's end) or at its end (the secret's start). Those parts are removed too.
 */
const cutEdges = (text: string, secrets: ReadonlyArray<string>): string => {
  let out = text
  const ellipsis = out.endsWith("…") ? "…" : ""
  let body = ellipsis === "" ? out : out.slice(0, -1)
  for (const secret of secrets) {
    for (let k = Math.min(secret.length - 1, body.length); k >= minPartial; k--) {
      if (body.endsWith(secret.slice(0, k))) {
        body = body.slice(0, body.length - k) + redacted
        break
      }
    }
    for (let k = Math.min(secret.length - 1, body.length); k >= minPartial; k--) {
      if (body.startsWith(secret.slice(secret.length - k))) {
        body = redacted + body.slice(k)
        break
      }
    }
  }
  out = body + ellipsis
  return out
}

/** The longest Status text kept, and the most causes: a server's Status of any size costs a few KB. */
const maxStatusText = 2000
const maxCauses = 20

const bounded = (text: string): string => text.length > maxStatusText ? text.slice(0, maxStatusText) + "…" : text

/**
 * A Status with every text a server chose scrubbed (the Status travels in typed errors): its message,
 * reason and status, the details' name, group, kind and uid, and the causes' reason, message and field; each text cut
 * to 2,000 characters and the causes to 20.
 *
 * @internal
 */
export const scrubStatus = (status: Status, scrub: Scrub): Status => {
  const text = (value: string | undefined) => value === undefined ? undefined : scrub(bounded(value))
  const causes = status.details?.causes
  const details = status.details
  return {
    ...status,
    ...(status.message === undefined ? {} : { message: text(status.message) }),
    ...(status.reason === undefined ? {} : { reason: text(status.reason) }),
    ...(status.status === undefined ? {} : { status: text(status.status) }),
    ...(details === undefined ? {} : {
      details: {
        ...details,
        ...(details.name === undefined ? {} : { name: text(details.name) }),
        ...(details.group === undefined ? {} : { group: text(details.group) }),
        ...(details.kind === undefined ? {} : { kind: text(details.kind) }),
        ...(details.uid === undefined ? {} : { uid: text(details.uid) }),
        ...(causes === undefined ? {} : {
          causes: causes.slice(0, maxCauses).map((cause) => ({
            ...cause,
            ...(cause.reason === undefined ? {} : { reason: text(cause.reason) }),
            ...(cause.message === undefined ? {} : { message: text(cause.message) }),
            ...(cause.field === undefined ? {} : { field: text(cause.field) })
          }))
        })
      }
    })
  }
}

/**
 * Text for messages: one line, bounded, and a schema failure explained in one line. Every error message
 * built from outside text (a server's body, a kubeconfig, a plugin's output) goes through `oneLine`.
 *
 * @internal
 */
import * as Either from "effect/Either"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"

/**
 * `text` as one line of at most `max` characters: line breaks, control characters and runs of spaces
 * become one space, and a cut is marked with `…`. Linear, and it reads at most `2 * max` characters of a
 * text of any size.
 *
 * @internal
 */
export const oneLine = (text: string, max = 200): string => {
  const head = text.length > max * 2 ? text.slice(0, max * 2) : text
  let line = ""
  let space = false
  for (let i = 0; i < head.length; i++) {
    const c = head.charCodeAt(i)
    if (c <= 32 || c === 0x7f || c === 0x2028 || c === 0x2029) {
      space = line.length > 0
      continue
    }
    if (space) line += " "
    space = false
    line += head[i]
  }
  return line.length > max || head.length < text.length ? line.slice(0, max) + "…" : line
}

/**
 * Why `u` is not a `schema`: one line (the first three issues, each as `path: message`) and the full tree,
 * for a debug log. Never throws: a value too deeply nested for the decoder is said to be so.
 *
 * @internal
 */
export const explain = <A, I>(
  schema: Schema.Schema<A, I>,
  u: unknown
): { readonly line: string; readonly tree: string | undefined } => {
  try {
    const result = Schema.decodeUnknownEither(schema)(u)
    if (Either.isRight(result)) return { line: "invalid value", tree: undefined }
    const issues = ParseResult.ArrayFormatter.formatErrorSync(result.left)
    const shown = issues.slice(0, 3).map((issue) =>
      oneLine(issue.path.length === 0 ? issue.message : `${issue.path.map(String).join(".")}: ${issue.message}`)
    )
    const more = issues.length > 3 ? `; and ${issues.length - 3} more` : ""
    let tree: string | undefined
    try {
      tree = ParseResult.TreeFormatter.formatErrorSync(result.left)
    } catch {
      tree = undefined
    }
    return { line: shown.join("; ") + more, tree }
  } catch {
    // a value too deeply nested (or too large) for the decoder's recursion or its formatting
    return { line: "invalid value (nested too deeply to explain)", tree: undefined }
  }
}

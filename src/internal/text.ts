/**
 * Text for messages: one line, bounded, and a schema failure explained in one line. Every error message
 * built from outside text (a server's body, a kubeconfig, a plugin's output) goes through `oneLine`.
 *
 * @internal
 */
import * as Exit from "effect/Exit"
import * as Schema from "effect/Schema"
import * as SchemaIssue from "effect/SchemaIssue"

const flatFormatter = SchemaIssue.makeFormatterStandardSchemaV1()
const treeFormatter = SchemaIssue.makeFormatterDefault()

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
export const explain = <S extends Schema.ConstraintDecoder<unknown>>(
  schema: S,
  u: unknown
): { readonly line: string; readonly tree: string | undefined } => {
  try {
    // every issue (the line shows three, the tree all of them); the rejected values are quoted (`Expected
    // string, got 3`), as Effect 3's formatters did: every caller scrubs the message and the tree of the
    // request's credentials
    const result = Schema.decodeUnknownExit(schema)(u, { errors: "all", reportInput: true })
    if (Exit.isSuccess(result)) return { line: "invalid value", tree: undefined }
    const error = Exit.findError(result)
    if (error._tag === "Failure") return { line: "invalid value", tree: undefined }
    const issue = error.success.issue
    const issues = flatFormatter(issue).issues
    const shown = issues.slice(0, 3).map((issue) =>
      oneLine(
        issue.path === undefined || issue.path.length === 0
          ? issue.message
          : `${issue.path.map((p) => String(typeof p === "object" ? p.key : p)).join(".")}: ${issue.message}`
      )
    )
    const more = issues.length > 3 ? `; and ${issues.length - 3} more` : ""
    let tree: string | undefined
    try {
      tree = treeFormatter(issue)
    } catch {
      tree = undefined
    }
    return { line: shown.join("; ") + more, tree }
  } catch {
    // a value too deeply nested (or too large) for the decoder's recursion or its formatting
    return { line: "invalid value (nested too deeply to explain)", tree: undefined }
  }
}

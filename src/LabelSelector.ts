/**
 * Kubernetes label selectors, parsed, validated, matched and printed the way the API server does it
 * (`k8s.io/apimachinery/pkg/labels`).
 *
 * Syntax (requirements are ANDed):
 *
 * ```text
 * <selector>    ::= "" | <requirement> | <requirement> "," <selector>
 * <requirement> ::= [ "!" ] KEY | KEY ( "=" | "==" | "!=" ) VALUE | KEY ( "in" | "notin" ) "(" VALUES ")"
 * ```
 *
 * - KEY is `[prefix "/"] name`: the prefix is a lowercase DNS-1123 subdomain of at most 253 bytes, the name
 *   at most 63 bytes of `[A-Za-z0-9]` with `-`, `_` and `.` allowed inside.
 * - VALUE is empty or at most 63 bytes of the name charset; `a=` selects `a` equal to the empty string.
 * - Blanks (space, tab, CR, LF) may surround every token; `in` and `notin` are keywords only in operator
 *   position (`in in (in)` is valid).
 * - A value list is a set: `a in (y,x,x)` is `a in (x,y)`, `a in ()` is `a in ("")`, and empty items
 *   (`(x,,y)`, `(,x)`, `(x,)`) stand for the empty value.
 *
 * A selector is normalised when built: requirements are sorted by key (stably) and the values of `in` and
 * `notin` are sorted and deduplicated, so `format` prints the canonical string (apimachinery's `String()`)
 * and `parse(format(s))` is equal to `s` for every selector but `nothing`.
 *
 * Matching is compiled when the selector is built: `matches` walks a flat array and does one property read
 * per requirement, with no allocation.
 *
 * @since 0.1.0
 */
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Equal from "effect/Equal"
import * as Hash from "effect/Hash"
import type * as Inspectable from "effect/Inspectable"
import { NodeInspectSymbol } from "effect/Inspectable"
import * as Option from "effect/Option"
import type { Pipeable } from "effect/Pipeable"
import { pipeArguments } from "effect/Pipeable"
import * as Predicate from "effect/Predicate"
import * as Result from "effect/Result"

// -------------------------------------------------------------------------------------------------
// errors
// -------------------------------------------------------------------------------------------------

/**
 * A label selector string could not be parsed, or a requirement is invalid (bad key or value, wrong
 * number of values, unknown operator). `position` is the offset in `input` of the offending token, when
 * the error comes from `parse`.
 *
 * @since 0.1.0
 * @category errors
 */
export class LabelSelectorParseError extends Data.TaggedError("LabelSelectorParseError")<{
  readonly input: string
  readonly position?: number | undefined
  readonly message: string
}> {}

// -------------------------------------------------------------------------------------------------
// models
// -------------------------------------------------------------------------------------------------

/**
 * @since 0.1.0
 * @category type ids
 */
export const TypeId: unique symbol = Symbol.for("effect-informers/LabelSelector")

/**
 * @since 0.1.0
 * @category type ids
 */
export type TypeId = typeof TypeId

/**
 * The operator of a requirement. `Equals` and `DoubleEquals` behave like a one-value `In`, `NotEquals`
 * like a one-value `NotIn`; they are kept apart so that `format` prints what was parsed.
 *
 * @since 0.1.0
 * @category models
 */
export type Operator = "In" | "NotIn" | "Equals" | "DoubleEquals" | "NotEquals" | "Exists" | "DoesNotExist"

/**
 * One requirement of a selector. `values` is sorted and duplicate-free for `In`/`NotIn`, has exactly one
 * element for `Equals`/`DoubleEquals`/`NotEquals` and is empty for `Exists`/`DoesNotExist`.
 *
 * @since 0.1.0
 * @category models
 */
export interface Requirement {
  readonly key: string
  readonly operator: Operator
  readonly values: ReadonlyArray<string>
}

/**
 * A parsed, validated label selector: the AND of its requirements, sorted by key. The selector without
 * requirements is `everything`; `nothing` is a distinct selector that matches no label set.
 *
 * @since 0.1.0
 * @category models
 */
export interface LabelSelector extends Equal.Equal, Pipeable, Inspectable.Inspectable {
  readonly [TypeId]: TypeId
  readonly requirements: ReadonlyArray<Requirement>
}

/**
 * Labels to match: a plain string record (`metadata.labels`); `undefined` is the empty set. Only string
 * values count as present, so inherited members such as `constructor` are never mistaken for labels.
 *
 * @since 0.1.0
 * @category models
 */
export type Labels = { readonly [key: string]: string } | undefined

/**
 * The shape of `metav1.LabelSelectorRequirement` (as in `@kubernetes/client-node`'s
 * `V1LabelSelectorRequirement`). `operator` is one of `In`, `NotIn`, `Exists`, `DoesNotExist`.
 *
 * @since 0.1.0
 * @category models
 */
export interface MetaV1LabelSelectorRequirement {
  readonly key: string
  readonly operator: string
  readonly values?: ReadonlyArray<string> | undefined
}

/**
 * The shape of `metav1.LabelSelector` (as in `@kubernetes/client-node`'s `V1LabelSelector`).
 *
 * @since 0.1.0
 * @category models
 */
export interface MetaV1LabelSelector {
  readonly matchLabels?: { readonly [key: string]: string } | undefined
  readonly matchExpressions?: ReadonlyArray<MetaV1LabelSelectorRequirement> | undefined
}

// -------------------------------------------------------------------------------------------------
// implementation
// -------------------------------------------------------------------------------------------------

const MATCH_IN = 0
const MATCH_NOT_IN = 1
const MATCH_EXISTS = 2
const MATCH_DOES_NOT_EXIST = 3

/** Value lists longer than this are matched through a `Set`. */
const SET_THRESHOLD = 8

interface Compiled {
  readonly key: string
  readonly code: number
  /** The only value when `values.length === 1`. */
  readonly single: string
  readonly values: ReadonlyArray<string>
  readonly set: ReadonlySet<string> | undefined
}

const matchCode = (operator: Operator): number => {
  switch (operator) {
    case "In":
    case "Equals":
    case "DoubleEquals":
      return MATCH_IN
    case "NotIn":
    case "NotEquals":
      return MATCH_NOT_IN
    case "Exists":
      return MATCH_EXISTS
    case "DoesNotExist":
      return MATCH_DOES_NOT_EXIST
  }
}

const compile = (requirement: Requirement): Compiled => {
  const values = requirement.values
  return {
    key: requirement.key,
    code: matchCode(requirement.operator),
    single: values.length === 1 ? values[0]! : "",
    values,
    set: values.length > SET_THRESHOLD ? new Set(values) : undefined
  }
}

const hasValue = (compiled: Compiled, value: string): boolean => {
  const values = compiled.values
  if (values.length === 1) return compiled.single === value
  if (compiled.set !== undefined) return compiled.set.has(value)
  for (let i = 0; i < values.length; i++) {
    if (values[i] === value) return true
  }
  return false
}

const formatRequirement = (requirement: Requirement): string => {
  const { key, values } = requirement
  switch (requirement.operator) {
    case "Exists":
      return key
    case "DoesNotExist":
      return "!" + key
    case "Equals":
      return key + "=" + values[0]
    case "DoubleEquals":
      return key + "==" + values[0]
    case "NotEquals":
      return key + "!=" + values[0]
    case "In":
      return key + " in (" + values.join(",") + ")"
    case "NotIn":
      return key + " notin (" + values.join(",") + ")"
  }
}

const requirementEquals = (a: Requirement, b: Requirement): boolean => {
  if (a.key !== b.key || a.operator !== b.operator || a.values.length !== b.values.length) return false
  for (let i = 0; i < a.values.length; i++) {
    if (a.values[i] !== b.values[i]) return false
  }
  return true
}

class LabelSelectorImpl implements LabelSelector {
  readonly [TypeId]: TypeId = TypeId
  readonly compiled: ReadonlyArray<Compiled>
  private formatted: string | undefined = undefined
  private hashed: number | undefined = undefined

  constructor(readonly requirements: ReadonlyArray<Requirement>, readonly isNothing: boolean) {
    this.compiled = requirements.map(compile)
  }

  get string(): string {
    if (this.formatted === undefined) {
      this.formatted = this.isNothing ? "" : this.requirements.map(formatRequirement).join(",")
    }
    return this.formatted
  }

  [Equal.symbol](that: Equal.Equal): boolean {
    if (!(that instanceof LabelSelectorImpl)) return false
    if (this.isNothing !== that.isNothing || this.requirements.length !== that.requirements.length) return false
    for (let i = 0; i < this.requirements.length; i++) {
      if (!requirementEquals(this.requirements[i]!, that.requirements[i]!)) return false
    }
    return true
  }

  [Hash.symbol](): number {
    if (this.hashed === undefined) {
      this.hashed = Hash.combine(Hash.hash(this.isNothing))(Hash.string(this.string))
    }
    return this.hashed
  }

  pipe() {
    return pipeArguments(this, arguments)
  }

  toString(): string {
    return this.isNothing ? "LabelSelector.nothing" : `LabelSelector(${JSON.stringify(this.string)})`
  }

  toJSON(): unknown {
    return { _id: "LabelSelector", selector: this.string, nothing: this.isNothing }
  }

  [NodeInspectSymbol](): unknown {
    return this.toJSON()
  }
}

const impl = (selector: LabelSelector): LabelSelectorImpl => selector as LabelSelectorImpl

const byKey = (a: Requirement, b: Requirement): number => a.key < b.key ? -1 : a.key > b.key ? 1 : 0

/** Builds a selector from requirements that are already validated and normalised. */
const unsafeMake = (requirements: Array<Requirement>): LabelSelector => {
  requirements.sort(byKey) // Array.prototype.sort is stable: same-key requirements keep their order
  return new LabelSelectorImpl(Object.freeze(requirements), false)
}

const normaliseValues = (operator: Operator, values: ReadonlyArray<string>): ReadonlyArray<string> => {
  if (operator !== "In" && operator !== "NotIn") return Object.freeze(values.slice())
  const sorted = values.slice().sort()
  let w = 0
  for (let i = 0; i < sorted.length; i++) {
    if (i === 0 || sorted[i] !== sorted[w - 1]) sorted[w++] = sorted[i]!
  }
  sorted.length = w
  return Object.freeze(sorted)
}

// -------------------------------------------------------------------------------------------------
// validation (k8s.io/apimachinery/pkg/api/validate/content)
// -------------------------------------------------------------------------------------------------

const LABEL_NAME_MAX = 63
const LABEL_VALUE_MAX = 63
const DNS1123_SUBDOMAIN_MAX = 253

const labelNameFmt = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
const labelNameMsg =
  "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character"
const labelValueMsg = "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', " +
  "and must start and end with an alphanumeric character"
const dns1123SubdomainFmt = "[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*"
const dns1123SubdomainMsg = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' " +
  "or '.', and must start and end with an alphanumeric character"

const regexError = (message: string, regex: string, ...examples: ReadonlyArray<string>): string =>
  message + " (e.g. " + examples.map((e) => `'${e}', `).join("or ") + `regex used for validation is '${regex}')`

const maxLengthError = (max: number): string => `must be no more than ${max} bytes`

const utf8Length = (s: string): number => {
  let n = 0
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i)
    if (c < 0x80) n += 1
    else if (c < 0x800) n += 2
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      n += 4
      i++
    } else n += 3
  }
  return n
}

const isAlphanumeric = (c: number): boolean => (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122)

/** `([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]`, in linear time. */
const isLabelName = (s: string): boolean => {
  const n = s.length
  if (n === 0 || !isAlphanumeric(s.charCodeAt(0)) || !isAlphanumeric(s.charCodeAt(n - 1))) return false
  for (let i = 1; i < n - 1; i++) {
    const c = s.charCodeAt(i)
    if (!isAlphanumeric(c) && c !== 45 /* - */ && c !== 95 /* _ */ && c !== 46 /* . */) return false
  }
  return true
}

const isLowerAlphanumeric = (c: number): boolean => (c >= 48 && c <= 57) || (c >= 97 && c <= 122)

/** `[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*`, in linear time. */
const isDNS1123Subdomain = (s: string): boolean => {
  let start = 0
  for (let i = 0; i <= s.length; i++) {
    if (i < s.length && s.charCodeAt(i) !== 46 /* . */) {
      const c = s.charCodeAt(i)
      if (!isLowerAlphanumeric(c) && c !== 45 /* - */) return false
      continue
    }
    // a label spans [start, i)
    if (i === start || !isLowerAlphanumeric(s.charCodeAt(start)) || !isLowerAlphanumeric(s.charCodeAt(i - 1))) {
      return false
    }
    start = i + 1
  }
  return true
}

/** The problems with a label key, empty when it is valid (apimachinery's `IsLabelKey`). */
const labelKeyErrors = (key: string): Array<string> => {
  const errors: Array<string> = []
  const slash = key.indexOf("/")
  let name = key
  if (slash !== -1) {
    if (key.indexOf("/", slash + 1) !== -1) {
      errors.push(
        "a valid label key " + regexError(labelNameMsg, labelNameFmt, "MyName", "my.name", "123-abc") +
          " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
      )
      return errors
    }
    const prefix = key.slice(0, slash)
    name = key.slice(slash + 1)
    if (prefix.length === 0) {
      errors.push("prefix part must be non-empty")
    } else {
      if (utf8Length(prefix) > DNS1123_SUBDOMAIN_MAX) {
        errors.push("prefix part " + maxLengthError(DNS1123_SUBDOMAIN_MAX))
      }
      if (!isDNS1123Subdomain(prefix)) {
        errors.push("prefix part " + regexError(dns1123SubdomainMsg, dns1123SubdomainFmt, "example.com"))
      }
    }
  }
  if (name.length === 0) {
    errors.push("name part must be non-empty")
  } else if (utf8Length(name) > LABEL_NAME_MAX) {
    errors.push("name part " + maxLengthError(LABEL_NAME_MAX))
  }
  if (!isLabelName(name)) {
    errors.push("name part " + regexError(labelNameMsg, labelNameFmt, "MyName", "my.name", "123-abc"))
  }
  return errors
}

/** The problems with a label value, empty when it is valid (apimachinery's `IsValidLabelValue`). */
const labelValueErrors = (value: string): Array<string> => {
  const errors: Array<string> = []
  if (utf8Length(value) > LABEL_VALUE_MAX) errors.push(maxLengthError(LABEL_VALUE_MAX))
  if (value.length > 0 && !isLabelName(value)) {
    errors.push(regexError(labelValueMsg, `(${labelNameFmt})?`, "MyValue", "my_value", "12345"))
  }
  return errors
}

const invalid = (path: string, value: string, errors: ReadonlyArray<string>): string =>
  `${path}: Invalid value: ${JSON.stringify(value)}: ${errors.join("; ")}`

const aggregate = (errors: ReadonlyArray<string>): string =>
  errors.length === 1 ? errors[0]! : "[" + errors.join(", ") + "]"

const operators: ReadonlyArray<Operator> = [
  "In",
  "NotIn",
  "Equals",
  "DoubleEquals",
  "NotEquals",
  "Exists",
  "DoesNotExist"
]

/**
 * The problems with a requirement, as apimachinery's `NewRequirement` reports them. Returns the index of
 * the first bad value (or -1) with the messages.
 */
const requirementErrors = (
  key: string,
  operator: Operator,
  values: ReadonlyArray<string>
): { readonly errors: Array<string>; readonly badValue: number } => {
  const errors: Array<string> = []
  const keyErrors = labelKeyErrors(key)
  if (keyErrors.length > 0) errors.push(invalid("key", key, keyErrors))
  switch (operator) {
    case "In":
    case "NotIn":
      if (values.length === 0) {
        errors.push(`values: Invalid value: []: for 'in', 'notin' operators, values set can't be empty`)
      }
      break
    case "Equals":
    case "DoubleEquals":
    case "NotEquals":
      if (values.length !== 1) {
        errors.push(
          `values: Invalid value: ${JSON.stringify(values)}: exact-match compatibility requires one single value`
        )
      }
      break
    case "Exists":
    case "DoesNotExist":
      if (values.length !== 0) {
        errors.push(
          `values: Invalid value: ${JSON.stringify(values)}: values set must be empty for exists and does not exist`
        )
      }
      break
    default:
      errors.push(
        `operator: Unsupported value: ${JSON.stringify(operator)}: supported values: ` +
          operators.map((o) => JSON.stringify(o)).join(", ")
      )
  }
  let badValue = -1
  for (let i = 0; i < values.length; i++) {
    const value = values[i]!
    const valueErrors = typeof value === "string" ? labelValueErrors(value) : ["must be a string"]
    if (valueErrors.length > 0) {
      if (badValue === -1) badValue = i
      errors.push(invalid(`values[${i}][${key}]`, String(value), valueErrors))
    }
  }
  return { errors, badValue }
}

/** Validates and normalises one requirement. */
const makeRequirement = (
  key: string,
  operator: Operator,
  values: ReadonlyArray<string>,
  input: string
): Result.Result<Requirement, LabelSelectorParseError> => {
  const { errors } = requirementErrors(key, operator, values)
  if (errors.length > 0) {
    return Result.fail(new LabelSelectorParseError({ input, message: aggregate(errors) }))
  }
  return Result.succeed(Object.freeze({ key, operator, values: normaliseValues(operator, values) }))
}

// -------------------------------------------------------------------------------------------------
// lexer and parser (k8s.io/apimachinery/pkg/labels/selector.go)
// -------------------------------------------------------------------------------------------------

const T_END = 0
const T_IDENTIFIER = 1
const T_OPEN = 2
const T_CLOSE = 3
const T_COMMA = 4
const T_NOT = 5
const T_EQUALS = 6
const T_DOUBLE_EQUALS = 7
const T_NOT_EQUALS = 8
const T_GREATER = 9
const T_LESS = 10

interface Token {
  readonly kind: number
  readonly text: string
  readonly position: number
}

const isBlank = (c: number): boolean => c === 32 || c === 9 || c === 13 || c === 10

const specialKind = (c: number): number => {
  switch (c) {
    case 61: // =
      return T_EQUALS
    case 33: // !
      return T_NOT
    case 40: // (
      return T_OPEN
    case 41: // )
      return T_CLOSE
    case 44: // ,
      return T_COMMA
    case 62: // >
      return T_GREATER
    case 60: // <
      return T_LESS
    default:
      return -1
  }
}

/**
 * Splits the input into tokens. An identifier is a maximal run of characters that are neither blank nor
 * one of `=!(),<>`; operators are matched longest first (`!=` and `==` are single tokens, `!==` is `!=`
 * then `=`). Lexing never fails: bad characters end up in identifiers, which validation rejects.
 */
const lex = (input: string): Array<Token> => {
  const tokens: Array<Token> = []
  const n = input.length
  let i = 0
  for (;;) {
    while (i < n && isBlank(input.charCodeAt(i))) i++
    if (i >= n) {
      tokens.push({ kind: T_END, text: "", position: n })
      return tokens
    }
    const start = i
    const c = input.charCodeAt(i)
    const kind = specialKind(c)
    if (kind !== -1) {
      if ((kind === T_EQUALS || kind === T_NOT) && input.charCodeAt(i + 1) === 61) {
        i += 2
        tokens.push({
          kind: kind === T_EQUALS ? T_DOUBLE_EQUALS : T_NOT_EQUALS,
          text: input.slice(start, i),
          position: start
        })
      } else {
        i += 1
        tokens.push({ kind, text: input[start]!, position: start })
      }
      continue
    }
    while (i < n) {
      const d = input.charCodeAt(i)
      if (isBlank(d) || specialKind(d) !== -1) break
      i++
    }
    tokens.push({ kind: T_IDENTIFIER, text: input.slice(start, i), position: start })
  }
}

class ParseFailure {
  constructor(readonly message: string, readonly position: number) {}
}

interface PositionedValue {
  readonly value: string
  readonly position: number
}

const REQUIREMENT = "unable to parse requirement: "

class Parser {
  private index = 0
  constructor(readonly input: string, readonly tokens: ReadonlyArray<Token>) {}

  private peek(): Token {
    return this.tokens[this.index]!
  }

  private next(): Token {
    const token = this.tokens[this.index]!
    if (token.kind !== T_END) this.index++
    return token
  }

  parse(): Array<Requirement> {
    const requirements: Array<Requirement> = []
    for (;;) {
      const token = this.peek()
      if (token.kind === T_IDENTIFIER || token.kind === T_NOT) {
        requirements.push(this.requirement())
        const after = this.next()
        if (after.kind === T_END) return requirements
        if (after.kind !== T_COMMA) {
          throw new ParseFailure(`found '${after.text}', expected: ',' or 'end of string'`, after.position)
        }
        const following = this.peek()
        if (following.kind !== T_IDENTIFIER && following.kind !== T_NOT) {
          throw new ParseFailure(`found '${following.text}', expected: identifier after ','`, following.position)
        }
      } else if (token.kind === T_END) {
        return requirements
      } else {
        throw new ParseFailure(`found '${token.text}', expected: !, identifier, or 'end of string'`, token.position)
      }
    }
  }

  private requirement(): Requirement {
    let token = this.next()
    let operator: Operator | undefined = undefined
    if (token.kind === T_NOT) {
      operator = "DoesNotExist"
      token = this.next()
    }
    if (token.kind !== T_IDENTIFIER) {
      throw new ParseFailure(`${REQUIREMENT}found '${token.text}', expected: identifier`, token.position)
    }
    const key = token.text
    const keyErrors = labelKeyErrors(key)
    if (keyErrors.length > 0) {
      throw new ParseFailure(REQUIREMENT + invalid("key", key, keyErrors), token.position)
    }
    const lookahead = this.peek().kind
    if (operator === undefined && (lookahead === T_END || lookahead === T_COMMA)) operator = "Exists"
    if (operator !== undefined) return Object.freeze({ key, operator, values: Object.freeze([]) })

    operator = this.operator()
    const values = operator === "In" || operator === "NotIn" ? this.valueSet() : this.exactValue()
    const plain = values.map((v) => v.value)
    const { badValue, errors } = requirementErrors(key, operator, plain)
    if (errors.length > 0) {
      throw new ParseFailure(REQUIREMENT + aggregate(errors), values[badValue === -1 ? 0 : badValue]!.position)
    }
    return Object.freeze({ key, operator, values: normaliseValues(operator, plain) })
  }

  private operator(): Operator {
    const token = this.next()
    switch (token.kind) {
      case T_IDENTIFIER:
        if (token.text === "in") return "In"
        if (token.text === "notin") return "NotIn"
        break
      case T_EQUALS:
        return "Equals"
      case T_DOUBLE_EQUALS:
        return "DoubleEquals"
      case T_NOT_EQUALS:
        return "NotEquals"
      case T_GREATER:
      case T_LESS:
        throw new ParseFailure(
          `${REQUIREMENT}found '${token.text}', expected: in, notin, =, ==, != (the '>' and '<' operators are not supported)`,
          token.position
        )
    }
    throw new ParseFailure(`${REQUIREMENT}found '${token.text}', expected: in, notin, =, ==, !=`, token.position)
  }

  /** `"(" values ")"`; `()` is the set holding the empty value. */
  private valueSet(): Array<PositionedValue> {
    const open = this.next()
    if (open.kind !== T_OPEN) {
      throw new ParseFailure(`${REQUIREMENT}found '${open.text}', expected: '('`, open.position)
    }
    const lookahead = this.peek()
    switch (lookahead.kind) {
      case T_IDENTIFIER:
      case T_COMMA: {
        const values = this.valueList()
        this.next() // the ")" valueList stopped at
        return values
      }
      case T_CLOSE:
        this.next()
        return [{ value: "", position: lookahead.position }]
      default:
        throw new ParseFailure(
          `${REQUIREMENT}found '${lookahead.text}', expected: ',', ')' or identifier`,
          lookahead.position
        )
    }
  }

  /** Comma-separated, possibly empty values, up to (not including) the closing parenthesis. */
  private valueList(): Array<PositionedValue> {
    const values: Array<PositionedValue> = []
    for (;;) {
      const token = this.next()
      if (token.kind === T_IDENTIFIER) {
        values.push({ value: token.text, position: token.position })
        const lookahead = this.peek()
        if (lookahead.kind === T_CLOSE) return values
        if (lookahead.kind !== T_COMMA) {
          throw new ParseFailure(`${REQUIREMENT}found '${lookahead.text}', expected: ',' or ')'`, lookahead.position)
        }
      } else if (token.kind === T_COMMA) {
        if (values.length === 0) values.push({ value: "", position: token.position }) // "(,"
        const lookahead = this.peek()
        if (lookahead.kind === T_CLOSE) {
          values.push({ value: "", position: lookahead.position }) // ",)"
          return values
        }
        if (lookahead.kind === T_COMMA) values.push({ value: "", position: lookahead.position }) // ",,"
      } else {
        throw new ParseFailure(`${REQUIREMENT}found '${token.text}', expected: ',', or identifier`, token.position)
      }
    }
  }

  /** One value; nothing before `,` or the end is the empty value. */
  private exactValue(): Array<PositionedValue> {
    const lookahead = this.peek()
    if (lookahead.kind === T_END || lookahead.kind === T_COMMA) {
      return [{ value: "", position: lookahead.position }]
    }
    const token = this.next()
    if (token.kind !== T_IDENTIFIER) {
      throw new ParseFailure(`${REQUIREMENT}found '${token.text}', expected: identifier`, token.position)
    }
    return [{ value: token.text, position: token.position }]
  }
}

// -------------------------------------------------------------------------------------------------
// constructors
// -------------------------------------------------------------------------------------------------

/**
 * The selector without requirements: matches every label set (including none). `format` gives `""`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const everything: LabelSelector = new LabelSelectorImpl(Object.freeze([]), false)

/**
 * The selector that matches no label set (apimachinery's `labels.Nothing()`, and what a `null`
 * `metav1.LabelSelector` converts to). `format` gives `""`, like apimachinery, so it does not round-trip.
 *
 * @since 0.1.0
 * @category constructors
 */
export const nothing: LabelSelector = new LabelSelectorImpl(Object.freeze([]), true)

/**
 * Parses a label selector string as the API server does. The empty (or all-blank) string is
 * `everything`. Never throws.
 *
 * @example
 * ```ts
 * import { Result } from "effect"
 * import { LabelSelector } from "effect-informers"
 *
 * const selector = Result.getOrThrow(LabelSelector.parse("tier in (web, api), !canary, env=prod"))
 * console.log(LabelSelector.format(selector)) // "!canary,env=prod,tier in (api,web)"
 * console.log(LabelSelector.matches(selector, { tier: "web", env: "prod" })) // true
 * ```
 *
 * @since 0.1.0
 * @category parsing
 */
export const parse = (input: string): Result.Result<LabelSelector, LabelSelectorParseError> => {
  try {
    const requirements = new Parser(input, lex(input)).parse()
    return Result.succeed(requirements.length === 0 ? everything : unsafeMake(requirements))
  } catch (e) {
    if (e instanceof ParseFailure) {
      return Result.fail(new LabelSelectorParseError({ input, position: e.position, message: e.message }))
    }
    throw e
  }
}

/**
 * `parse` as an Effect that fails with `LabelSelectorParseError`.
 *
 * @since 0.1.0
 * @category parsing
 */
export const parseEffect = (input: string): Effect.Effect<LabelSelector, LabelSelectorParseError> =>
  Effect.suspend(() => Effect.fromResult(parse(input)))

/**
 * Builds a selector from requirements, validating each like apimachinery's `NewRequirement` (key and
 * value syntax; one value for `Equals`/`DoubleEquals`/`NotEquals`, at least one for `In`/`NotIn`, none
 * for `Exists`/`DoesNotExist`) and normalising (sorted by key; `In`/`NotIn` values sorted and
 * deduplicated). No requirements gives `everything`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const fromRequirements = (
  requirements: Iterable<Requirement>
): Result.Result<LabelSelector, LabelSelectorParseError> => {
  const out: Array<Requirement> = []
  for (const r of requirements) {
    const made = makeRequirement(r.key, r.operator, r.values ?? [], JSON.stringify(r) ?? "")
    if (Result.isFailure(made)) return Result.fail(made.failure)
    out.push(made.success)
  }
  return Result.succeed(out.length === 0 ? everything : unsafeMake(out))
}

/**
 * The selector matching exactly the given labels (`key=value` for each entry), validated like
 * apimachinery's `ValidatedSelectorFromSet`. An empty or missing record is `everything`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const fromMatchLabels = (
  matchLabels: { readonly [key: string]: string } | undefined
): Result.Result<LabelSelector, LabelSelectorParseError> => {
  if (matchLabels === undefined) return Result.succeed(everything)
  const out: Array<Requirement> = []
  const failed = pushMatchLabels(out, matchLabels)
  if (failed !== undefined) return Result.fail(failed)
  return Result.succeed(out.length === 0 ? everything : unsafeMake(out))
}

/** Adds an `Equals` requirement per entry of `matchLabels` to `out`; the first invalid one is returned. */
const pushMatchLabels = (
  out: Array<Requirement>,
  matchLabels: { readonly [key: string]: string }
): LabelSelectorParseError | undefined => {
  for (const key of Object.keys(matchLabels)) {
    const value = matchLabels[key]!
    const made = makeRequirement(key, "Equals", [value], key + "=" + value)
    if (Result.isFailure(made)) return made.failure
    out.push(made.success)
  }
  return undefined
}

/**
 * Converts a `metav1.LabelSelector` like apimachinery's `LabelSelectorAsSelector`: `null`/`undefined` is
 * `nothing`, a selector with neither `matchLabels` nor `matchExpressions` is `everything`; `matchLabels`
 * entries become `Equals` requirements and `matchExpressions` use the operators `In`, `NotIn`, `Exists`
 * and `DoesNotExist`. An unknown operator or an invalid requirement is a `LabelSelectorParseError`.
 *
 * @example
 * ```ts
 * import { Result } from "effect"
 * import { LabelSelector } from "effect-informers"
 *
 * const selector = LabelSelector.fromLabelSelector({
 *   matchLabels: { app: "web" },
 *   matchExpressions: [{ key: "tier", operator: "NotIn", values: ["db"] }]
 * })
 * console.log(Result.map(selector, LabelSelector.format)) // Success("app=web,tier notin (db)")
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const fromLabelSelector = (
  selector: MetaV1LabelSelector | null | undefined
): Result.Result<LabelSelector, LabelSelectorParseError> => {
  if (selector === null || selector === undefined) return Result.succeed(nothing)
  const matchLabels = selector.matchLabels ?? {}
  const matchExpressions = selector.matchExpressions ?? []
  const out: Array<Requirement> = []
  const failed = pushMatchLabels(out, matchLabels)
  if (failed !== undefined) return Result.fail(failed)
  for (const expression of matchExpressions) {
    const input = JSON.stringify(expression) ?? ""
    let operator: Operator
    switch (expression.operator) {
      case "In":
      case "NotIn":
      case "Exists":
      case "DoesNotExist":
        operator = expression.operator
        break
      default:
        return Result.fail(
          new LabelSelectorParseError({
            input,
            message: `${JSON.stringify(expression.operator)} is not a valid label selector operator`
          })
        )
    }
    const made = makeRequirement(expression.key, operator, expression.values ?? [], input)
    if (Result.isFailure(made)) return Result.fail(made.failure)
    out.push(made.success)
  }
  return Result.succeed(out.length === 0 ? everything : unsafeMake(out))
}

// -------------------------------------------------------------------------------------------------
// guards and getters
// -------------------------------------------------------------------------------------------------

/**
 * @since 0.1.0
 * @category guards
 */
export const isLabelSelector = (u: unknown): u is LabelSelector => Predicate.hasProperty(u, TypeId)

/**
 * True for selectors without requirements, which match every label set (apimachinery's `Empty()`).
 * `nothing` is not empty.
 *
 * @since 0.1.0
 * @category getters
 */
export const isEverything = (selector: LabelSelector): boolean =>
  !impl(selector).isNothing && selector.requirements.length === 0

/**
 * True only for `nothing` (apimachinery's `MatchesNothing`).
 *
 * @since 0.1.0
 * @category getters
 */
export const isNothing = (selector: LabelSelector): boolean => impl(selector).isNothing

/**
 * The value the selector requires for `key`, if its first requirement on `key` is `Equals`,
 * `DoubleEquals` or a one-value `In` (apimachinery's `RequiresExactMatch`); listers use it to answer from
 * an index.
 *
 * @since 0.1.0
 * @category getters
 */
export const requiresExactMatch = (selector: LabelSelector, key: string): Option.Option<string> => {
  for (const r of selector.requirements) {
    if (r.key !== key) continue
    return (r.operator === "Equals" || r.operator === "DoubleEquals" || r.operator === "In") && r.values.length === 1
      ? Option.some(r.values[0]!)
      : Option.none()
  }
  return Option.none()
}

// -------------------------------------------------------------------------------------------------
// matching and printing
// -------------------------------------------------------------------------------------------------

/**
 * Whether `labels` satisfy every requirement: `In`/`Equals`/`DoubleEquals` need the key present with a
 * listed value, `NotIn`/`NotEquals` match an absent key or an unlisted value, `Exists` needs the key,
 * `DoesNotExist` its absence. `everything` matches all label sets, `nothing` none.
 *
 * @since 0.1.0
 * @category matching
 */
export const matches = (selector: LabelSelector, labels: Labels): boolean => {
  const s = impl(selector)
  if (s.isNothing) return false
  const compiled = s.compiled
  for (let i = 0; i < compiled.length; i++) {
    const c = compiled[i]!
    const value = labels === undefined ? undefined : labels[c.key]
    const present = typeof value === "string"
    switch (c.code) {
      case MATCH_IN:
        if (!present || !hasValue(c, value)) return false
        break
      case MATCH_NOT_IN:
        if (present && hasValue(c, value)) return false
        break
      case MATCH_EXISTS:
        if (!present) return false
        break
      default:
        if (present) return false
    }
  }
  return true
}

/**
 * The canonical string of a selector (apimachinery's `String()`): requirements sorted by key, joined by
 * `,`; `in`/`notin` values sorted as `key in (a,b)`; `!key` for `DoesNotExist`. `everything` and `nothing`
 * both print as `""`.
 *
 * @since 0.1.0
 * @category printing
 */
export const format = (selector: LabelSelector): string => impl(selector).string

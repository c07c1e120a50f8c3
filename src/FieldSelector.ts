/**
 * Kubernetes field selectors, the generic subset the API server understands
 * (`k8s.io/apimachinery/pkg/fields`): terms `field=value`, `field==value` and `field!=value`, joined by
 * `,` (AND).
 *
 * - The field is everything before the first `!=`, `==` or `=` of a term; it is taken literally (no
 *   escapes, no trimming: `a = b` is the field `"a "` with the value `" b"`, as on the API server).
 * - In values, `\\`, `\,` and `\=` stand for `\`, `,` and `=`; any other escape, a lone trailing `\` or an
 *   unescaped `=` is an error. An escaped `,` does not split terms.
 * - Empty terms are ignored (`a=b,,c=d`), and a term with an empty field and an empty value (`=`, `!=`)
 *   selects everything. `==` means `=`.
 * - A missing field reads as the empty string: `spec.nodeName=` selects unscheduled pods and `x!=y`
 *   selects objects without `x`.
 *
 * Which fields may be selected on depends on the resource (every resource supports `metadata.name` and
 * `metadata.namespace`); `validateFields` checks a selector against such an allow-list.
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
 * A field selector string could not be parsed, or (from `validateFields`) names a field that is not
 * supported. `position` is the offset in `input` of the offending term or character when known; `field`
 * is the unsupported field.
 *
 * @since 0.1.0
 * @category errors
 */
export class FieldSelectorParseError extends Data.TaggedError("FieldSelectorParseError")<{
  readonly input: string
  readonly position?: number | undefined
  readonly field?: string | undefined
  readonly message: string
}> {}

// -------------------------------------------------------------------------------------------------
// models
// -------------------------------------------------------------------------------------------------

/**
 * @since 0.1.0
 * @category type ids
 */
export const TypeId: unique symbol = Symbol.for("effect-informers/FieldSelector")

/**
 * @since 0.1.0
 * @category type ids
 */
export type TypeId = typeof TypeId

/**
 * `Equals` for `=` and `==`, `NotEquals` for `!=`.
 *
 * @since 0.1.0
 * @category models
 */
export type Operator = "Equals" | "NotEquals"

/**
 * One term of a field selector. `value` is unescaped.
 *
 * @since 0.1.0
 * @category models
 */
export interface Requirement {
  readonly field: string
  readonly operator: Operator
  readonly value: string
}

/**
 * A parsed field selector: the AND of its requirements, in canonical order (sorted by their printed
 * form). The selector without requirements is `everything`.
 *
 * @since 0.1.0
 * @category models
 */
export interface FieldSelector extends Equal.Equal, Pipeable, Inspectable.Inspectable {
  readonly [TypeId]: TypeId
  readonly requirements: ReadonlyArray<Requirement>
}

/**
 * The fields every resource supports (apimachinery's `DefaultMetaV1FieldSelectorConversion`).
 *
 * @since 0.1.0
 * @category constants
 */
export const defaultFields: ReadonlyArray<string> = Object.freeze(["metadata.name", "metadata.namespace"])

// -------------------------------------------------------------------------------------------------
// implementation
// -------------------------------------------------------------------------------------------------

interface Compiled {
  readonly field: string
  readonly equals: boolean
  readonly value: string
  /** `field` split on `.`, for `matchesObject`. */
  readonly path: ReadonlyArray<string>
}

const compile = (requirement: Requirement): Compiled => ({
  field: requirement.field,
  equals: requirement.operator === "Equals",
  value: requirement.value,
  path: requirement.field.split(".")
})

/**
 * Escapes a literal value for use in a field selector: `\` becomes `\\`, `,` becomes `\,` and `=` becomes
 * `\=` (apimachinery's `EscapeValue`).
 *
 * @since 0.1.0
 * @category printing
 */
export const escapeValue = (value: string): string => {
  let out = ""
  let from = 0
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i)
    if (c === 92 /* \ */ || c === 44 /* , */ || c === 61 /* = */) {
      out += value.slice(from, i) + "\\" + value[i]
      from = i + 1
    }
  }
  return from === 0 ? value : out + value.slice(from)
}

const formatRequirement = (requirement: Requirement): string =>
  requirement.field + (requirement.operator === "Equals" ? "=" : "!=") + escapeValue(requirement.value)

/** Orders strings by code point, which is the byte order of their UTF-8 encodings (Go's string order). */
const compareCodePoints = (a: string, b: string): number => {
  const n = Math.min(a.length, b.length)
  for (let i = 0; i < n; i++) {
    let x = a.charCodeAt(i)
    let y = b.charCodeAt(i)
    if (x === y) continue
    // surrogates encode code points above U+FFFF: move them above U+E000..U+FFFF
    if (x >= 0xd800) x = x <= 0xdfff ? x + 0x2000 : x - 0x800
    if (y >= 0xd800) y = y <= 0xdfff ? y + 0x2000 : y - 0x800
    return x - y
  }
  return a.length - b.length
}

class FieldSelectorImpl implements FieldSelector {
  readonly [TypeId]: TypeId = TypeId
  readonly compiled: ReadonlyArray<Compiled>
  readonly string: string
  private hashed: number | undefined = undefined

  constructor(readonly requirements: ReadonlyArray<Requirement>, terms: ReadonlyArray<string>) {
    this.compiled = requirements.map(compile)
    this.string = terms.join(",")
  }

  [Equal.symbol](that: Equal.Equal): boolean {
    if (!(that instanceof FieldSelectorImpl) || this.requirements.length !== that.requirements.length) return false
    for (let i = 0; i < this.requirements.length; i++) {
      const a = this.requirements[i]!
      const b = that.requirements[i]!
      if (a.field !== b.field || a.operator !== b.operator || a.value !== b.value) return false
    }
    return true
  }

  [Hash.symbol](): number {
    if (this.hashed === undefined) this.hashed = Hash.string(this.string)
    return this.hashed
  }

  pipe() {
    return pipeArguments(this, arguments)
  }

  toString(): string {
    return `FieldSelector(${JSON.stringify(this.string)})`
  }

  toJSON(): unknown {
    return { _id: "FieldSelector", selector: this.string }
  }

  [NodeInspectSymbol](): unknown {
    return this.toJSON()
  }
}

const impl = (selector: FieldSelector): FieldSelectorImpl => selector as FieldSelectorImpl

/**
 * Builds the selector: drops terms with an empty field and an empty value (apimachinery's parser does)
 * and sorts the rest by their printed form.
 */
const make = (requirements: Iterable<Requirement>): FieldSelector => {
  const entries: Array<{ readonly requirement: Requirement; readonly term: string }> = []
  for (const r of requirements) {
    if (r.field.length === 0 && r.value.length === 0) continue
    const requirement: Requirement = Object.freeze({ field: r.field, operator: r.operator, value: r.value })
    entries.push({ requirement, term: formatRequirement(requirement) })
  }
  if (entries.length === 0) return everything
  entries.sort((a, b) => compareCodePoints(a.term, b.term))
  return new FieldSelectorImpl(Object.freeze(entries.map((e) => e.requirement)), entries.map((e) => e.term))
}

// -------------------------------------------------------------------------------------------------
// parsing (k8s.io/apimachinery/pkg/fields/selector.go)
// -------------------------------------------------------------------------------------------------

class ParseFailure {
  constructor(readonly message: string, readonly position: number) {}
}

interface Term {
  readonly text: string
  readonly position: number
}

/** Splits on commas not escaped by a backslash; escapes are kept in the terms. */
const splitTerms = (input: string): Array<Term> => {
  const terms: Array<Term> = []
  if (input.length === 0) return terms
  let start = 0
  let inSlash = false
  for (let i = 0; i < input.length; i++) {
    const c = input.charCodeAt(i)
    if (inSlash) {
      inSlash = false
    } else if (c === 92 /* \ */) {
      inSlash = true
    } else if (c === 44 /* , */) {
      terms.push({ text: input.slice(start, i), position: start })
      start = i + 1
    }
  }
  terms.push({ text: input.slice(start), position: start })
  return terms
}

/** The first `!=`, `==` or `=` splits a term; at one offset they are tried in that order. */
const splitTerm = (
  term: string
): { readonly field: string; readonly operator: Operator; readonly rest: number } | undefined => {
  for (let i = 0; i < term.length; i++) {
    const c = term.charCodeAt(i)
    if (c === 33 /* ! */ && term.charCodeAt(i + 1) === 61) {
      return { field: term.slice(0, i), operator: "NotEquals", rest: i + 2 }
    }
    if (c === 61 /* = */) {
      return { field: term.slice(0, i), operator: "Equals", rest: term.charCodeAt(i + 1) === 61 ? i + 2 : i + 1 }
    }
  }
  return undefined
}

/** Unescapes a value; `offset` is its position in the input, for errors. */
const unescape = (value: string, offset: number): string => {
  let plain = true
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i)
    if (c === 92 || c === 44 || c === 61) {
      plain = false
      break
    }
  }
  if (plain) return value
  let out = ""
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i)
    if (c === 92 /* \ */) {
      if (i + 1 >= value.length) {
        throw new ParseFailure("invalid field selector: invalid escape sequence: \\", offset + i)
      }
      const d = value.charCodeAt(i + 1)
      if (d !== 92 && d !== 44 && d !== 61) {
        const escaped = String.fromCodePoint(value.codePointAt(i + 1)!)
        throw new ParseFailure(`invalid field selector: invalid escape sequence: \\${escaped}`, offset + i)
      }
      out += value[i + 1]
      i++
    } else if (c === 44 || c === 61) {
      throw new ParseFailure(`invalid field selector: unescaped character in value: '${value[i]}'`, offset + i)
    } else {
      out += value[i]
    }
  }
  return out
}

const parseTerms = (input: string): Array<Requirement> => {
  const terms = splitTerms(input)
  terms.sort((a, b) => compareCodePoints(a.text, b.text))
  const requirements: Array<Requirement> = []
  for (const term of terms) {
    if (term.text.length === 0) continue
    const split = splitTerm(term.text)
    if (split === undefined) {
      throw new ParseFailure(`invalid selector: '${input}'; can't understand '${term.text}'`, term.position)
    }
    const value = unescape(term.text.slice(split.rest), term.position + split.rest)
    requirements.push({ field: split.field, operator: split.operator, value })
  }
  return requirements
}

// -------------------------------------------------------------------------------------------------
// constructors
// -------------------------------------------------------------------------------------------------

/**
 * The selector without requirements: matches every object. `format` gives `""`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const everything: FieldSelector = new FieldSelectorImpl(Object.freeze([]), [])

/**
 * Parses a field selector string as the API server does (apimachinery's `ParseSelector`). The empty string
 * is `everything`. Never throws.
 *
 * @example
 * ```ts
 * import { Result } from "effect"
 * import { FieldSelector } from "effect-informers"
 *
 * const selector = Result.getOrThrow(FieldSelector.parse("status.phase!=Succeeded,spec.nodeName==node-1"))
 * console.log(FieldSelector.format(selector)) // "spec.nodeName=node-1,status.phase!=Succeeded"
 * console.log(FieldSelector.matchesObject(selector, { spec: { nodeName: "node-1" }, status: { phase: "Running" } })) // true
 * ```
 *
 * @since 0.1.0
 * @category parsing
 */
export const parse = (input: string): Result.Result<FieldSelector, FieldSelectorParseError> => {
  try {
    return Result.succeed(make(parseTerms(input)))
  } catch (e) {
    if (e instanceof ParseFailure) {
      return Result.fail(new FieldSelectorParseError({ input, position: e.position, message: e.message }))
    }
    throw e
  }
}

/**
 * `parse` as an Effect that fails with `FieldSelectorParseError`.
 *
 * @since 0.1.0
 * @category parsing
 */
export const parseEffect = (input: string): Effect.Effect<FieldSelector, FieldSelectorParseError> =>
  Effect.suspend(() => Effect.fromResult(parse(input)))

/**
 * A selector from requirements (any strings; values are literal). Terms with an empty field and an empty
 * value are dropped; no requirements gives `everything`. A field containing `,`, `=` or `!=` cannot be
 * printed unambiguously (apimachinery has the same limitation).
 *
 * @since 0.1.0
 * @category constructors
 */
export const fromRequirements = (requirements: Iterable<Requirement>): FieldSelector => make(requirements)

/**
 * `field=value` (apimachinery's `OneTermEqualSelector`), e.g. `oneTermEqual("metadata.name", name)` for an
 * informer that watches one object.
 *
 * @since 0.1.0
 * @category constructors
 */
export const oneTermEqual = (field: string, value: string): FieldSelector =>
  make([{ field, operator: "Equals", value }])

/**
 * `field!=value` (apimachinery's `OneTermNotEqualSelector`).
 *
 * @since 0.1.0
 * @category constructors
 */
export const oneTermNotEqual = (field: string, value: string): FieldSelector =>
  make([{ field, operator: "NotEquals", value }])

// -------------------------------------------------------------------------------------------------
// guards, getters and validation
// -------------------------------------------------------------------------------------------------

/**
 * @since 0.1.0
 * @category guards
 */
export const isFieldSelector = (u: unknown): u is FieldSelector => Predicate.hasProperty(u, TypeId)

/**
 * True for selectors without requirements (apimachinery's `Empty()`).
 *
 * @since 0.1.0
 * @category getters
 */
export const isEverything = (selector: FieldSelector): boolean => selector.requirements.length === 0

/**
 * The value of the first `field=value` term on `field` (apimachinery's `RequiresExactMatch`), e.g. the
 * namespace of `metadata.namespace=default`.
 *
 * @since 0.1.0
 * @category getters
 */
export const requiresExactMatch = (selector: FieldSelector, field: string): Option.Option<string> => {
  for (const r of selector.requirements) {
    if (r.field === field && r.operator === "Equals") return Option.some(r.value)
  }
  return Option.none()
}

/**
 * Checks that every field of the selector is in `allowed` (the API server's per-resource field label
 * conversion), failing like it with `field label not supported: <field>`.
 *
 * @example
 * ```ts
 * import { Result } from "effect"
 * import { FieldSelector } from "effect-informers"
 *
 * const selector = Result.getOrThrow(FieldSelector.parse("spec.nodeName=n1"))
 * const checked = FieldSelector.validateFields(selector, FieldSelector.defaultFields)
 * console.log(Result.isFailure(checked) && checked.failure.message) // "field label not supported: spec.nodeName"
 * ```
 *
 * @since 0.1.0
 * @category validation
 */
export const validateFields = (
  selector: FieldSelector,
  allowed: ReadonlyArray<string>
): Result.Result<FieldSelector, FieldSelectorParseError> => {
  for (const r of selector.requirements) {
    if (!allowed.includes(r.field)) {
      return Result.fail(
        new FieldSelectorParseError({
          input: format(selector),
          field: r.field,
          message: `field label not supported: ${r.field}`
        })
      )
    }
  }
  return Result.succeed(selector)
}

// -------------------------------------------------------------------------------------------------
// matching and printing
// -------------------------------------------------------------------------------------------------

/**
 * Whether every term holds, reading fields through `getField` (`undefined` reads as `""`, like a missing
 * field on the API server).
 *
 * @since 0.1.0
 * @category matching
 */
export const matches = (selector: FieldSelector, getField: (path: string) => string | undefined): boolean => {
  const compiled = impl(selector).compiled
  for (let i = 0; i < compiled.length; i++) {
    const c = compiled[i]!
    if (((getField(c.field) ?? "") === c.value) !== c.equals) return false
  }
  return true
}

/** Reads a dotted path from a JSON object: strings as they are, numbers, booleans and bigints as text. */
const readPath = (obj: unknown, path: ReadonlyArray<string>): string => {
  let current: unknown = obj
  for (let i = 0; i < path.length; i++) {
    if (typeof current !== "object" || current === null) return ""
    current = (current as { readonly [key: string]: unknown })[path[i]!]
  }
  switch (typeof current) {
    case "string":
      return current
    case "number":
    case "boolean":
    case "bigint":
      return String(current)
    default:
      return ""
  }
}

/**
 * `matches` over a plain JSON object: each field is a dotted path (`metadata.name`, `metadata.namespace`,
 * `spec.nodeName`, `status.phase`, ...) to a string, number or boolean; anything else, or a missing path,
 * reads as `""`. Paths are split once, when the selector is built.
 *
 * @since 0.1.0
 * @category matching
 */
export const matchesObject = (selector: FieldSelector, obj: unknown): boolean => {
  const compiled = impl(selector).compiled
  for (let i = 0; i < compiled.length; i++) {
    const c = compiled[i]!
    if ((readPath(obj, c.path) === c.value) !== c.equals) return false
  }
  return true
}

/**
 * The canonical string of a selector: `field=value` / `field!=value` terms with escaped values, sorted,
 * joined by `,` (`==` prints as `=`). `parse(format(s))` is equal to `s`.
 *
 * @since 0.1.0
 * @category printing
 */
export const format = (selector: FieldSelector): string => impl(selector).string

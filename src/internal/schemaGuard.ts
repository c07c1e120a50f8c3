/**
 * Compiles a Schema's type side into a plain predicate with the same answer as `ParseResult.is`, for
 * the subset of AST nodes the wire schemas use (structs, records, arrays, unions, literals, keywords,
 * refinements). `ParseResult.is` allocates an output value and `Either`s per property; on the watch hot
 * path that costs as much as `JSON.parse` itself. Anything outside the subset falls back to
 * `ParseResult.is` for that node, so the predicate is never less strict than the Schema.
 *
 * @internal
 */
import * as Option from "effect/Option"
import * as ParseResult from "effect/ParseResult"
import type * as Schema from "effect/Schema"
import * as AST from "effect/SchemaAST"

type Guard = (u: unknown) => boolean

const isRecord = (u: unknown): u is Record<PropertyKey, unknown> =>
  typeof u === "object" && u !== null && !Array.isArray(u)

const compile = (ast: AST.AST): Guard => {
  switch (ast._tag) {
    case "StringKeyword":
      return (u) => typeof u === "string"
    case "NumberKeyword":
      return (u) => typeof u === "number"
    case "BooleanKeyword":
      return (u) => typeof u === "boolean"
    case "UndefinedKeyword":
      return (u) => u === undefined
    case "UnknownKeyword":
    case "AnyKeyword":
      return () => true
    case "Literal": {
      const literal = ast.literal
      return (u) => u === literal
    }
    case "Union": {
      const members = ast.types.map(compile)
      if (members.length === 2) {
        const [a, b] = members
        return (u) => a(u) || b(u)
      }
      return (u) => {
        for (let i = 0; i < members.length; i++) if (members[i](u)) return true
        return false
      }
    }
    case "Refinement": {
      const from = compile(ast.from)
      const refinement = ast
      return (u) => from(u) && Option.isNone(refinement.filter(u, AST.defaultParseOption, refinement))
    }
    case "TypeLiteral": {
      if (ast.indexSignatures.length > 1) break
      const properties = ast.propertySignatures.map((signature) => ({
        name: signature.name,
        optional: signature.isOptional,
        guard: compile(signature.type)
      }))
      const index = ast.indexSignatures[0]
      if (index !== undefined && index.parameter._tag !== "StringKeyword") break
      const value = index === undefined ? undefined : compile(index.type)
      return (u) => {
        if (!isRecord(u)) return false
        for (let i = 0; i < properties.length; i++) {
          const property = properties[i]
          if (!(property.name in u)) {
            if (property.optional) continue
            return false
          }
          if (!property.guard(u[property.name])) return false
        }
        if (value !== undefined) {
          for (const key in u) if (!value(u[key])) return false
        }
        return true
      }
    }
    case "TupleType": {
      if (ast.elements.length > 0 || ast.rest.length !== 1) break
      const element = compile(ast.rest[0].type)
      return (u) => {
        if (!Array.isArray(u)) return false
        for (let i = 0; i < u.length; i++) if (!element(u[i])) return false
        return true
      }
    }
  }
  const is = ParseResult.is({ ast } as Schema.Schema<unknown>)
  return (u) => is(u)
}

/**
 * A predicate equivalent to `ParseResult.is(schema)`.
 *
 * @internal
 */
export const guard = <A, I, R>(schema: Schema.Schema<A, I, R>): (u: unknown) => u is A =>
  compile(AST.typeAST(schema.ast)) as (u: unknown) => u is A

/**
 * The coordination suites' generators over Effect 4's `Arbitrary` (Effect 3's `FastCheck` is gone): the few
 * fast-check constructors the properties use, with the same ranges, and `assertProperty`, fast-check's
 * `assert(property(...))` for a synchronous property that returns `false` or throws when it does not hold.
 */
import * as Arbitrary from "effect/Arbitrary"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"

/** A whole number in [min, max]. */
export const integer = (min: number, max: number): Arbitrary.Arbitrary<number> =>
  Arbitrary.schema(Schema.Int.check(Schema.isBetween({ minimum: min, maximum: max })))

/** A bigint in [min, max]. */
export const bigInt = (min: bigint, max: bigint): Arbitrary.Arbitrary<bigint> =>
  Arbitrary.schema(Schema.BigInt.check(Schema.isBetweenBigInt({ minimum: min, maximum: max })))

/** A number in [0, max] in steps of a millionth (a `Random` value: uniform rather than biased towards 0). */
export const fraction = (max: number): Arbitrary.Arbitrary<number> =>
  Arbitrary.map(integer(0, Math.round(max * 1_000_000)), (n) => n / 1_000_000)

export const boolean: Arbitrary.Arbitrary<boolean> = Arbitrary.schema(Schema.Boolean)

export const constant: <const A>(value: A) => Arbitrary.Arbitrary<A> = Arbitrary.Constant

/** One of `values` (shrinking towards the first). */
export const constantFrom = <const A extends ReadonlyArray<unknown>>(...values: A): Arbitrary.Arbitrary<A[number]> =>
  Arbitrary.map(integer(0, values.length - 1), (i) => values[i])

/** One of the arbitraries, each `weight` times as likely as a weight of 1 (default 1). */
export const oneof = <A>(
  ...arbitraries: ReadonlyArray<
    Arbitrary.Arbitrary<A> | { readonly weight: number; readonly arbitrary: Arbitrary.Arbitrary<A> }
  >
): Arbitrary.Arbitrary<A> => {
  const slots: Array<Arbitrary.Arbitrary<A>> = []
  for (const a of arbitraries) {
    if (Arbitrary.isArbitrary(a)) slots.push(a as Arbitrary.Arbitrary<A>)
    else for (let i = 0; i < a.weight; i++) slots.push(a.arbitrary)
  }
  return Arbitrary.flatMap(integer(0, slots.length - 1), (i) => slots[i])
}

/** A string matching `pattern`. */
export const stringMatching = (pattern: RegExp): Arbitrary.Arbitrary<string> =>
  Arbitrary.schema(Schema.String.check(Schema.isPattern(pattern)))

/** Any string of at most `maxLength` characters. */
export const string = (maxLength: number): Arbitrary.Arbitrary<string> =>
  Arbitrary.schema(Schema.String.check(Schema.isMaxLength(maxLength)))

/** An array of distinct values of `item`, of `minLength` to `maxLength` elements. */
export const uniqueArray = <A>(
  item: Arbitrary.Arbitrary<A>,
  options: { readonly minLength: number; readonly maxLength: number }
): Arbitrary.Arbitrary<Array<A>> =>
  Arbitrary.filter(
    Arbitrary.map(Arbitrary.array(item, { minLength: options.minLength, maxLength: options.maxLength }), (as) => [
      ...new Set(as)
    ]),
    (as: Array<A>) => as.length >= options.minLength
  )

/**
 * Checks a synchronous property over `runs` generated values (default 100): a run that returns `false` or
 * throws falsifies it; throws the shrunk counterexample and the replay token.
 */
export const assertProperty = <A>(
  arbitrary: Arbitrary.Arbitrary<A>,
  property: (value: A) => boolean | void,
  options: { readonly runs?: number } = {}
): void => {
  const result = Effect.runSync(
    Arbitrary.checkEffect(
      arbitrary,
      (value) => Effect.catchCause(Effect.sync(() => property(value) !== false), (cause) => Effect.fail(cause)),
      { runs: options.runs ?? 100 }
    )
  )
  const failure = Arbitrary.formatCheckFailure(result)
  if (failure !== undefined) throw new Error(failure)
}

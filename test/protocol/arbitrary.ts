/**
 * The fast-check builders the protocol and transport property tests use, by fast-check's names and with its
 * defaults, over Effect 4's `Arbitrary` (Effect 3 re-exported fast-check as `FastCheck`; Effect 4 has its own
 * module). `assert(property(...arbitraries, predicate), { numRuns })` runs a synchronous property as
 * fast-check's did: a run that returns `false` or throws falsifies it, and the shrunk counterexample is thrown.
 * (A copy beside test/fixtures/arbitrary.ts, as test/coordination/arbitrary.ts is: to be merged.)
 */
import * as Arb from "effect/Arbitrary"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"

/** An arbitrary with fast-check's methods (`map`, `filter`, `chain`). */
export interface Arbitrary<A> extends Arb.Arbitrary<A> {
  readonly map: <B>(f: (value: A) => B) => Arbitrary<B>
  readonly filter: (predicate: (value: A) => boolean) => Arbitrary<A>
  readonly chain: <B>(f: (value: A) => Arb.Arbitrary<B>) => Arbitrary<B>
}

/** `arbitrary` with fast-check's methods (it stays an Effect `Arbitrary`: its prototype). */
const lift = <A>(arbitrary: Arb.Arbitrary<A>): Arbitrary<A> => {
  const out = Object.create(arbitrary) as { -readonly [K in keyof Arbitrary<A>]: Arbitrary<A>[K] }
  out.map = (f) => lift(Arb.map(arbitrary, f))
  out.filter = (predicate) => lift(Arb.filter(arbitrary, predicate))
  out.chain = (f) => lift(Arb.flatMap(arbitrary, f))
  return out
}

const int32 = { min: -0x80000000, max: 0x7fffffff }

/** fast-check's `integer`: a whole number in [min, max] (default: the 32-bit range). */
export const integer = (options: { readonly min?: number; readonly max?: number } = {}): Arbitrary<number> =>
  lift(Arb.schema(
    Schema.Int.check(Schema.isBetween({ minimum: options.min ?? int32.min, maximum: options.max ?? int32.max }))
  ))

/** fast-check's `nat`: a whole number in [0, max] (default 2^31 - 1). */
export const nat = (max: number | { readonly max?: number } = int32.max): Arbitrary<number> =>
  integer({ min: 0, max: typeof max === "number" ? max : max.max ?? int32.max })

/**
 * fast-check's `double`: any number, NaN, the infinities and -0 included unless excluded; with `min`/`max`, a
 * number in [min, max] (the infinities then only as bounds).
 */
export const double = (
  options: {
    readonly min?: number
    readonly max?: number
    readonly noNaN?: boolean
    readonly noDefaultInfinity?: boolean
  } = {}
): Arbitrary<number> => {
  const bounded = options.min !== undefined || options.max !== undefined
  const finite = lift(Arb.schema(
    bounded
      ? Schema.Finite.check(Schema.isBetween({
        minimum: options.min ?? -Number.MAX_VALUE,
        maximum: options.max ?? Number.MAX_VALUE
      }))
      : Schema.Finite
  ))
  const special: Array<number> = []
  if (!bounded || (options.min ?? -1) <= 0 && (options.max ?? 1) >= 0) special.push(-0)
  if (options.noNaN !== true) special.push(Number.NaN)
  if (options.noDefaultInfinity !== true && !bounded) {
    special.push(Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY)
  }
  return special.length === 0 ? finite : oneof(finite, finite, finite, constantFrom(...special))
}

/** fast-check's `boolean`. */
export const boolean = (): Arbitrary<boolean> => lift(Arb.schema(Schema.Boolean))

/** fast-check's `constant`. */
export const constant = <const A>(value: A): Arbitrary<A> => lift(Arb.Constant(value))

/** fast-check's `constantFrom`: one of `values`. */
export const constantFrom: {
  <const T = never>(...values: Array<T>): Arbitrary<T>
  <TArgs extends Array<any> | [any]>(...values: TArgs): Arbitrary<TArgs[number]>
} = <T>(...values: Array<T>): Arbitrary<T> =>
  lift(Arb.map(integer({ min: 0, max: values.length - 1 }), (i) => values[i]))

/** A choice of `oneof`: an arbitrary, or one with a weight (default 1). */
export type Choice<A> = Arb.Arbitrary<A> | { readonly weight: number; readonly arbitrary: Arb.Arbitrary<A> }

/** The values of choices. */
export type ChoiceValue<C> = C extends Arb.Arbitrary<infer A> ? A
  : C extends { readonly arbitrary: Arb.Arbitrary<infer A> } ? A
  : never

/** fast-check's `oneof`: one of the arbitraries, as likely as their weights (a leading options object is ignored). */
export const oneof: {
  <const Cs extends ReadonlyArray<Choice<any>>>(...arbitraries: Cs): Arbitrary<ChoiceValue<Cs[number]>>
  <const Cs extends ReadonlyArray<Choice<any>>>(
    options: { readonly depthSize?: string },
    ...arbitraries: Cs
  ): Arbitrary<ChoiceValue<Cs[number]>>
} = <A>(...args: ReadonlyArray<unknown>): Arbitrary<A> => {
  const slots: Array<Arb.Arbitrary<A>> = []
  for (const arg of args) {
    if (Arb.isArbitrary(arg)) slots.push(arg as Arb.Arbitrary<A>)
    else if (typeof arg === "object" && arg !== null && "arbitrary" in arg) {
      const { arbitrary, weight } = arg as { readonly weight: number; readonly arbitrary: Arb.Arbitrary<A> }
      for (let i = 0; i < weight; i++) slots.push(arbitrary)
    }
  }
  return lift(Arb.flatMap(integer({ min: 0, max: slots.length - 1 }), (i) => slots[i]))
}

/** fast-check's `array`. */
export const array = <A>(
  item: Arb.Arbitrary<A>,
  options: { readonly minLength?: number; readonly maxLength?: number } = {}
): Arbitrary<Array<A>> => lift(Arb.array(item, options))

/** fast-check's `tuple`. */
export const tuple = <const A extends ReadonlyArray<Arb.Arbitrary<any>>>(
  ...arbitraries: A
): Arbitrary<{ -readonly [K in keyof A]: A[K] extends Arb.Arbitrary<infer T> ? T : never }> =>
  lift(Arb.all(arbitraries)) as any

/** fast-check's `string`: of `unit`s (one character each), or of any characters. */
export const string = (
  options: { readonly minLength?: number; readonly maxLength?: number; readonly unit?: Arb.Arbitrary<string> } = {}
): Arbitrary<string> => {
  if (options.unit !== undefined) {
    const lengths: { minLength?: number; maxLength?: number } = {}
    if (options.minLength !== undefined) lengths.minLength = options.minLength
    if (options.maxLength !== undefined) lengths.maxLength = options.maxLength
    return array(options.unit, lengths).map((units) => units.join(""))
  }
  let schema: Schema.Decoder<string> = Schema.String
  if (options.minLength !== undefined) schema = Schema.String.check(Schema.isMinLength(options.minLength))
  if (options.maxLength !== undefined) {
    schema = Schema.String.check(
      Schema.isMinLength(options.minLength ?? 0),
      Schema.isMaxLength(options.maxLength)
    )
  }
  return lift(Arb.schema(schema))
}

/** `key` defined on `object` as an own property (a `__proto__` key stays a key). */
const define = (object: Record<string, unknown>, key: string, value: unknown): void => {
  Object.defineProperty(object, key, { value, enumerable: true, writable: true, configurable: true })
}

const absent: unique symbol = Symbol("absent")

/**
 * fast-check's `record`: an object of the given properties; with `requiredKeys`, the others are present or
 * absent (all required without it).
 */
export const record = <const R extends Record<string, Arb.Arbitrary<any>>>(
  shape: R,
  options: { readonly requiredKeys?: ReadonlyArray<keyof R & string> } = {}
): Arbitrary<{ [K in keyof R]: R[K] extends Arb.Arbitrary<infer T> ? T : never }> => {
  const required = options.requiredKeys === undefined ? undefined : new Set<string>(options.requiredKeys)
  const fields: Record<string, Arb.Arbitrary<unknown>> = {}
  for (const key of Object.keys(shape)) {
    fields[key] = required === undefined || required.has(key) ? shape[key] : oneof(constant(absent), shape[key])
  }
  return lift(Arb.all(fields)).map((values) => {
    const out: Record<string, unknown> = {}
    for (const key of Object.keys(values)) {
      if (values[key] !== absent) define(out, key, values[key])
    }
    return out
  }) as any
}

/** fast-check's `dictionary`: an object of up to `maxKeys` (default 10) generated keys and values. */
export const dictionary = <V>(
  key: Arb.Arbitrary<string>,
  value: Arb.Arbitrary<V>,
  options: { readonly maxKeys?: number } = {}
): Arbitrary<Record<string, V>> =>
  array(tuple(key, value), { maxLength: options.maxKeys ?? 10 }).map((entries) => {
    const out: Record<string, V> = {}
    for (const [k, v] of entries) define(out, k, v)
    return out
  })

/** fast-check's `option`: `nil` (default `null`) or a value. */
export const option = <A, N = null>(
  arbitrary: Arb.Arbitrary<A>,
  options: { readonly nil?: N } = {}
): Arbitrary<A | N> =>
  oneof(constant(("nil" in options ? options.nil : null) as N) as Arb.Arbitrary<A | N>, arbitrary, arbitrary, arbitrary)

/** How deep the recursive arbitraries (`letrec`, `jsonValue`, `anything`) nest; past it a branch is a leaf. */
const maxDepth = 4

/**
 * fast-check's `letrec`: arbitraries that refer to one another through `tie(name)`, unrolled `maxDepth`
 * times (at the last level a tie is `null`).
 */
export const letrec = <T extends Record<string, unknown>>(
  builder: (tie: (name: string) => Arbitrary<unknown>) => { [K in keyof T]: Arb.Arbitrary<T[K]> }
): { [K in keyof T]: Arb.Arbitrary<T[K]> } => {
  let level = builder(() => constant(null))
  for (let depth = 1; depth < maxDepth; depth++) {
    const below = level
    level = builder((name) => lift(below[name as keyof T] as Arb.Arbitrary<unknown>))
  }
  return level
}

const jsonAt = (depth: number): Arbitrary<unknown> => {
  const leaves: ReadonlyArray<Arbitrary<unknown>> = [
    constant(null),
    boolean(),
    integer(),
    double({ noNaN: true, noDefaultInfinity: true }),
    string()
  ]
  if (depth >= maxDepth) return oneof(...leaves)
  const below = jsonAt(depth + 1)
  return oneof(...leaves, array(below, { maxLength: 4 }), dictionary(string(), below, { maxKeys: 4 }))
}

/** fast-check's `jsonValue`: what `JSON.parse` can return (finite numbers, nested up to `maxDepth`). */
export const jsonValue = (): Arbitrary<unknown> => jsonAt(0)

const anythingAt = (depth: number): Arbitrary<unknown> => {
  const leaves: ReadonlyArray<Arbitrary<unknown>> = [
    constant(null),
    constant(undefined),
    boolean(),
    integer(),
    double(),
    string(),
    constantFrom<unknown>(-0, Number.NaN, Number.POSITIVE_INFINITY, 0n, -1n)
  ]
  if (depth >= maxDepth) return oneof(...leaves)
  const below = anythingAt(depth + 1)
  return oneof(
    ...leaves,
    array(below, { maxLength: 4 }),
    dictionary(string(), below, { maxKeys: 4 }),
    // an object without a prototype
    dictionary(string(), below, { maxKeys: 4 }).map((o) => Object.assign(Object.create(null), o))
  )
}

/** fast-check's `anything`: JSON values, `undefined`, NaN, the infinities, -0, bigints, objects without a prototype. */
export const anything = (): Arbitrary<unknown> => anythingAt(0)

/** fast-check's `filter`, as a function (Effect's arbitraries have no `filter` method). */
export const filter = <A>(arbitrary: Arb.Arbitrary<A>, predicate: (value: A) => boolean): Arbitrary<A> =>
  lift(Arb.filter(arbitrary, predicate))

/** A property: the arbitraries of its arguments and the predicate. */
export interface Property<A extends ReadonlyArray<unknown>> {
  readonly arbitrary: Arb.Arbitrary<A>
  readonly predicate: (...args: A) => boolean | void
}

/** fast-check's `property(...arbitraries, predicate)`. */
export const property: {
  <A>(a: Arb.Arbitrary<A>, predicate: (a: A) => boolean | void): Property<[A]>
  <A, B>(a: Arb.Arbitrary<A>, b: Arb.Arbitrary<B>, predicate: (a: A, b: B) => boolean | void): Property<[A, B]>
  <A, B, C>(
    a: Arb.Arbitrary<A>,
    b: Arb.Arbitrary<B>,
    c: Arb.Arbitrary<C>,
    predicate: (a: A, b: B, c: C) => boolean | void
  ): Property<[A, B, C]>
  <A, B, C, D>(
    a: Arb.Arbitrary<A>,
    b: Arb.Arbitrary<B>,
    c: Arb.Arbitrary<C>,
    d: Arb.Arbitrary<D>,
    predicate: (a: A, b: B, c: C, d: D) => boolean | void
  ): Property<[A, B, C, D]>
} = (...args: ReadonlyArray<any>): Property<any> => {
  const predicate = args[args.length - 1] as (...values: ReadonlyArray<unknown>) => boolean | void
  return { arbitrary: Arb.all(args.slice(0, -1) as ReadonlyArray<Arb.Arbitrary<unknown>>) as any, predicate }
}

/**
 * fast-check's `assert`: `numRuns` runs (default 100); a run that returns `false` or throws falsifies the
 * property, and the shrunk counterexample is thrown.
 */
export const assert = <A extends ReadonlyArray<unknown>>(
  property: Property<A>,
  options: { readonly numRuns?: number } = {}
): void => {
  const result = Effect.runSync(
    Arb.checkEffect(
      property.arbitrary,
      (values) =>
        Effect.catchCause(
          Effect.sync(() => property.predicate(...values) !== false),
          (cause) => Effect.fail(cause)
        ),
      { runs: options.numRuns ?? 100 }
    )
  )
  const failure = Arb.formatCheckFailure(result)
  if (failure !== undefined) throw new Error(failure)
}

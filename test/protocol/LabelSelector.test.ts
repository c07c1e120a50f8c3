import { assert, describe, it } from "@effect/vitest"
import { Effect, Equal, Hash, Option, Result } from "effect"
import * as LabelSelector from "../../src/LabelSelector.js"
import * as FastCheck from "../fixtures/arbitrary.js"

const parseOk = (input: string): LabelSelector.LabelSelector => {
  const result = LabelSelector.parse(input)
  if (Result.isFailure(result)) assert.fail(`expected ${JSON.stringify(input)} to parse: ${result.failure.message}`)
  return result.success
}

const parseErr = (input: string): LabelSelector.LabelSelectorParseError => {
  const result = LabelSelector.parse(input)
  if (Result.isSuccess(result)) {
    assert.fail(`expected ${JSON.stringify(input)} to fail, got ${LabelSelector.format(result.success)}`)
  }
  assert.strictEqual(result.failure._tag, "LabelSelectorParseError")
  assert.strictEqual(result.failure.input, input)
  return result.failure
}

const matches = (input: string, labels: LabelSelector.Labels): boolean => LabelSelector.matches(parseOk(input), labels)

describe("LabelSelector", () => {
  describe("parse", () => {
    it("parses every operator", () => {
      const cases: ReadonlyArray<readonly [string, LabelSelector.Requirement]> = [
        ["a=b", { key: "a", operator: "Equals", values: ["b"] }],
        ["a==b", { key: "a", operator: "DoubleEquals", values: ["b"] }],
        ["a!=b", { key: "a", operator: "NotEquals", values: ["b"] }],
        ["a in (b,c)", { key: "a", operator: "In", values: ["b", "c"] }],
        ["a notin (b,c)", { key: "a", operator: "NotIn", values: ["b", "c"] }],
        ["a", { key: "a", operator: "Exists", values: [] }],
        ["!a", { key: "a", operator: "DoesNotExist", values: [] }]
      ]
      for (const [input, requirement] of cases) {
        assert.deepStrictEqual(parseOk(input).requirements, [requirement], input)
      }
    })

    it("parses the empty and all-blank strings as everything", () => {
      for (const input of ["", " ", "\t\r\n "]) {
        const selector = parseOk(input)
        assert.isTrue(LabelSelector.isEverything(selector))
        assert.isTrue(Equal.equals(selector, LabelSelector.everything))
        assert.strictEqual(LabelSelector.format(selector), "")
      }
    })

    it("tolerates blanks around every token", () => {
      const canonical = parseOk("a in (x,y),b!=c,!d,e,f==g,h=i,j notin (k)")
      for (
        const input of [
          "  a in ( x , y ) , b != c , ! d , e , f == g , h = i , j notin ( k )  ",
          "a in(x,y),b!=c,!d,e,f==g,h=i,j notin(k)",
          "\ta\tin\t(x,\ny)\r,b!=c,!d,e,f==g,h=i,j\nnotin\n(k)"
        ]
      ) {
        assert.isTrue(Equal.equals(parseOk(input), canonical), input)
      }
    })

    it("combines requirements with AND, sorted by key (stable for equal keys)", () => {
      const selector = parseOk("z=1,a=2,m,a!=3")
      assert.deepStrictEqual(selector.requirements.map((r) => r.key), ["a", "a", "m", "z"])
      assert.deepStrictEqual(selector.requirements.map((r) => r.operator), ["Equals", "NotEquals", "Exists", "Equals"])
      assert.isTrue(Equal.equals(parseOk("x=a,a=x"), parseOk("a=x,x=a")))
    })

    it("treats in and notin as keywords only in operator position", () => {
      assert.deepStrictEqual(parseOk("in in (in,notin)").requirements, [
        { key: "in", operator: "In", values: ["in", "notin"] }
      ])
      assert.deepStrictEqual(parseOk("notin=in").requirements, [{ key: "notin", operator: "Equals", values: ["in"] }])
      assert.deepStrictEqual(parseOk("notin notin (in)").requirements, [
        { key: "notin", operator: "NotIn", values: ["in"] }
      ])
      assert.deepStrictEqual(parseOk("in,!notin").requirements, [
        { key: "in", operator: "Exists", values: [] },
        { key: "notin", operator: "DoesNotExist", values: [] }
      ])
    })

    it("treats value lists as sets and empty items as the empty value", () => {
      const values = (input: string) => parseOk(input).requirements[0]!.values
      assert.deepStrictEqual(values("a in (c,b,c,a)"), ["a", "b", "c"])
      assert.deepStrictEqual(values("a in ()"), [""])
      assert.deepStrictEqual(values("a in (,)"), [""])
      assert.deepStrictEqual(values("a in (x,,y)"), ["", "x", "y"])
      assert.deepStrictEqual(values("a in (,x)"), ["", "x"])
      assert.deepStrictEqual(values("a notin (x,)"), ["", "x"])
    })

    it("takes a missing exact value as the empty value", () => {
      assert.deepStrictEqual(parseOk("a=").requirements, [{ key: "a", operator: "Equals", values: [""] }])
      assert.deepStrictEqual(parseOk("a==").requirements, [{ key: "a", operator: "DoubleEquals", values: [""] }])
      assert.deepStrictEqual(parseOk("a!= ,b").requirements, [
        { key: "a", operator: "NotEquals", values: [""] },
        { key: "b", operator: "Exists", values: [] }
      ])
    })

    it("accepts valid keys and values at their limits", () => {
      const name63 = "a" + "-_.".repeat(20) + "bz"
      assert.strictEqual(name63.length, 63)
      const prefix = ["p".repeat(63), "q".repeat(63), "r".repeat(63), "s".repeat(61)].join(".")
      assert.strictEqual(prefix.length, 253)
      const key = `${prefix}/${name63}`
      assert.deepStrictEqual(parseOk(`${key}=${name63}`).requirements, [
        { key, operator: "Equals", values: [name63] }
      ])
      assert.deepStrictEqual(parseOk("example.com/My_Name-1.x in (A,0_b)").requirements, [
        { key: "example.com/My_Name-1.x", operator: "In", values: ["0_b", "A"] }
      ])
      assert.deepStrictEqual(parseOk("1-a.b/9").requirements, [{ key: "1-a.b/9", operator: "Exists", values: [] }])
    })
  })

  describe("parse errors", () => {
    const cases: ReadonlyArray<readonly [input: string, position: number, message: string]> = [
      // structure
      ["a in", 4, "unable to parse requirement: found '', expected: '('"],
      ["a in (b", 7, "unable to parse requirement: found '', expected: ',' or ')'"],
      ["a in (", 6, "unable to parse requirement: found '', expected: ',', ')' or identifier"],
      ["a in (,", 7, "unable to parse requirement: found '', expected: ',', or identifier"],
      ["a in (b c)", 8, "unable to parse requirement: found 'c', expected: ',' or ')'"],
      ["a in (b,(c))", 8, "unable to parse requirement: found '(', expected: ',', or identifier"],
      ["a in b", 5, "unable to parse requirement: found 'b', expected: '('"],
      ["a notin", 7, "unable to parse requirement: found '', expected: '('"],
      ["=b", 0, "found '=', expected: !, identifier, or 'end of string'"],
      ["(a)", 0, "found '(', expected: !, identifier, or 'end of string'"],
      ["a=b=c", 3, "found '=', expected: ',' or 'end of string'"],
      ["x==a==b", 4, "found '==', expected: ',' or 'end of string'"],
      ["a=b c", 4, "found 'c', expected: ',' or 'end of string'"],
      ["a!b", 1, "unable to parse requirement: found '!', expected: in, notin, =, ==, !="],
      ["a b", 2, "unable to parse requirement: found 'b', expected: in, notin, =, ==, !="],
      ["a=(b)", 2, "unable to parse requirement: found '(', expected: identifier"],
      ["!", 1, "unable to parse requirement: found '', expected: identifier"],
      ["!=a", 0, "found '!=', expected: !, identifier, or 'end of string'"],
      ["!!a", 1, "unable to parse requirement: found '!', expected: identifier"],
      ["!a=b", 2, "found '=', expected: ',' or 'end of string'"],
      ["!a in (b)", 3, "found 'in', expected: ',' or 'end of string'"],
      ["a,", 2, "found '', expected: identifier after ','"],
      ["a,,b", 2, "found ',', expected: identifier after ','"],
      [",a", 0, "found ',', expected: !, identifier, or 'end of string'"],
      ["a>1", 1, "unable to parse requirement: found '>', expected: in, notin, =, ==, !="],
      ["a<1", 1, "unable to parse requirement: found '<', expected: in, notin, =, ==, !="],
      // keys
      ["a$", 0, "unable to parse requirement: key: Invalid value: \"a$\": name part must consist of"],
      ["-a=b", 0, "unable to parse requirement: key: Invalid value: \"-a\": name part must consist of"],
      ["a.=b", 0, "unable to parse requirement: key: Invalid value: \"a.\": name part must consist of"],
      ["é", 0, "name part must consist of"],
      ["x".repeat(64), 0, "name part must be no more than 63 bytes"],
      ["/a", 0, "prefix part must be non-empty"],
      ["a/", 0, "name part must be non-empty"],
      ["a/b/c", 0, "a valid label key must consist of"],
      ["Example.com/a", 0, "prefix part a lowercase RFC 1123 subdomain must consist of"],
      ["ex..com/a", 0, "prefix part a lowercase RFC 1123 subdomain must consist of"],
      ["-ex.com/a", 0, "prefix part a lowercase RFC 1123 subdomain must consist of"],
      [`${"p".repeat(254)}/a`, 0, "prefix part must be no more than 253 bytes"],
      ["b, !a_", 4, "key: Invalid value: \"a_\""],
      // values
      ["a=b$", 2, "unable to parse requirement: values[0][a]: Invalid value: \"b$\": a valid label must be"],
      ["a!=-b", 3, "values[0][a]: Invalid value: \"-b\""],
      [`a=${"v".repeat(64)}`, 2, "must be no more than 63 bytes"],
      ["a in (ok, b_ )", 10, "values[1][a]: Invalid value: \"b_\""]
    ]

    for (const [input, position, message] of cases) {
      it(`rejects ${JSON.stringify(input.length > 40 ? input.slice(0, 40) + "…" : input)}`, () => {
        const error = parseErr(input)
        assert.strictEqual(error.position, position, error.message)
        assert.include(error.message, message)
      })
    }

    it("reports a syntax error before invalid values, as apimachinery does", () => {
      assert.include(parseErr("a in (b$, c d)").message, "found 'd', expected: ',' or ')'")
    })

    it("never throws on arbitrary input", () => {
      const alphabet = FastCheck.constantFrom(
        "a",
        "b",
        "x/y",
        "in",
        "notin",
        " ",
        "\t",
        "=",
        "==",
        "!=",
        "!",
        "(",
        ")",
        ",",
        ">",
        "$",
        "-",
        "é",
        "\u0000"
      )
      const inputs = FastCheck.oneof(
        FastCheck.string(),
        FastCheck.array(alphabet, { maxLength: 12 }).map((parts) => parts.join(""))
      )
      FastCheck.assert(
        FastCheck.property(inputs, (input) => {
          const result = LabelSelector.parse(input)
          if (Result.isFailure(result)) {
            return result.failure._tag === "LabelSelectorParseError" && result.failure.input === input &&
              result.failure.message.length > 0
          }
          // whatever parses round-trips through its canonical form
          const again = LabelSelector.parse(LabelSelector.format(result.success))
          return Result.isSuccess(again) && Equal.equals(again.success, result.success)
        }),
        { numRuns: 500 }
      )
    })

    it.effect("parseEffect succeeds and fails with the typed error", () =>
      Effect.gen(function*() {
        const selector = yield* LabelSelector.parseEffect("app=web")
        assert.strictEqual(LabelSelector.format(selector), "app=web")
        const error = yield* Effect.flip(LabelSelector.parseEffect("app in"))
        assert.strictEqual(error._tag, "LabelSelectorParseError")
        assert.strictEqual(error.position, 6)
        const caught = yield* LabelSelector.parseEffect("=").pipe(
          Effect.catchTag("LabelSelectorParseError", (e) => Effect.succeed(e.message))
        )
        assert.strictEqual(caught, "found '=', expected: !, identifier, or 'end of string'")
      }))
  })

  describe("matches", () => {
    it("follows apimachinery's semantics for every operator", () => {
      const labels = { foo: "bar", baz: "blah", empty: "" }
      const table: ReadonlyArray<readonly [string, boolean]> = [
        ["foo=bar", true],
        ["foo==bar", true],
        ["foo=blah", false],
        ["missing=bar", false],
        ["empty=", true],
        ["missing=", false],
        ["foo!=bar", false],
        ["foo!=blah", true],
        ["missing!=x", true],
        ["foo in (bar,x)", true],
        ["foo in (x,y)", false],
        ["missing in (bar)", false],
        ["missing in ()", false],
        ["empty in ()", true],
        ["foo notin (bar,x)", false],
        ["foo notin (x)", true],
        ["missing notin (bar)", true],
        ["foo", true],
        ["empty", true],
        ["missing", false],
        ["!foo", false],
        ["!missing", true],
        ["foo=bar,baz=blah", true],
        ["foo=bar,baz=bar", false],
        ["foo=bar,foobar=bar,baz=blah", false],
        ["foo,!missing,baz notin (x),foo in (bar)", true],
        ["", true]
      ]
      for (const [input, expected] of table) {
        assert.strictEqual(matches(input, labels), expected, input)
      }
    })

    it("treats undefined labels as the empty set", () => {
      assert.isTrue(matches("", undefined))
      assert.isTrue(matches("!a", undefined))
      assert.isTrue(matches("a!=b,a notin (c)", undefined))
      assert.isFalse(matches("a", undefined))
      assert.isFalse(matches("a in (b)", undefined))
    })

    it("does not see inherited object members as labels", () => {
      assert.isFalse(matches("constructor", {}))
      assert.isTrue(matches("!toString,!hasOwnProperty", {}))
      assert.isTrue(matches("constructor=x", { constructor: "x" }))
      assert.isTrue(matches("a=b", Object.assign(Object.create(null), { a: "b" })))
    })

    it("matches long value lists", () => {
      const values = Array.from({ length: 50 }, (_, i) => `v${i}`)
      const selector = parseOk(`a in (${values.join(",")}),b notin (${values.join(",")})`)
      assert.isTrue(LabelSelector.matches(selector, { a: "v49", b: "w" }))
      assert.isTrue(LabelSelector.matches(selector, { a: "v0" }))
      assert.isFalse(LabelSelector.matches(selector, { a: "w" }))
      assert.isFalse(LabelSelector.matches(selector, { a: "v1", b: "v2" }))
    })

    it("everything matches all label sets and nothing none", () => {
      for (const labels of [undefined, {}, { a: "b" }]) {
        assert.isTrue(LabelSelector.matches(LabelSelector.everything, labels))
        assert.isFalse(LabelSelector.matches(LabelSelector.nothing, labels))
      }
    })

    it("filters many objects with one compiled selector", () => {
      const selector = parseOk("app in (web,api),tier!=db,!canary")
      const objects = Array.from({ length: 20_000 }, (_, i) => ({
        app: i % 3 === 0 ? "web" : i % 3 === 1 ? "api" : "batch",
        tier: i % 5 === 0 ? "db" : "front",
        ...(i % 7 === 0 ? { canary: "true" } : {})
      }))
      const expected =
        objects.filter((l) => (l.app === "web" || l.app === "api") && l.tier !== "db" && !("canary" in l)).length
      assert.strictEqual(objects.filter((l) => LabelSelector.matches(selector, l)).length, expected)
    })
  })

  describe("format", () => {
    it("prints the canonical string", () => {
      const cases: ReadonlyArray<readonly [string, string]> = [
        ["", ""],
        ["x=a,y=b,z=c", "x=a,y=b,z=c"],
        ["z=c, y=b ,x=a", "x=a,y=b,z=c"],
        ["x!=a,y=b", "x!=a,y=b"],
        ["x= ", "x="],
        ["x= ,z= ", "x=,z="],
        ["x==a", "x==a"],
        ["!x", "!x"],
        ["x", "x"],
        ["b in ( z, y ,x,y ),a notin (c)", "a notin (c),b in (x,y,z)"],
        ["a in ()", "a in ()"],
        ["a in (b,,c)", "a in (,b,c)"],
        ["k8s.io/app=web,!example.com/canary", "!example.com/canary,k8s.io/app=web"]
      ]
      for (const [input, expected] of cases) {
        assert.strictEqual(LabelSelector.format(parseOk(input)), expected, input)
      }
      assert.strictEqual(LabelSelector.format(LabelSelector.everything), "")
      assert.strictEqual(LabelSelector.format(LabelSelector.nothing), "")
    })

    const alphanumeric = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
    const lowerAlphanumeric = "abcdefghijklmnopqrstuvwxyz0123456789"
    const chars = (set: string) => FastCheck.constantFrom(...set.split(""))
    const word = (edge: string, inner: string, maxInner: number) =>
      FastCheck.tuple(chars(edge), FastCheck.array(chars(inner), { maxLength: maxInner }), chars(edge)).map((
        [first, middle, last]
      ) => first + middle.join("") + last)
    const name = FastCheck.oneof(
      chars(alphanumeric),
      word(alphanumeric, alphanumeric + "-_.", 61),
      FastCheck.constantFrom("in", "notin", "a", "b")
    )
    const dnsLabel = FastCheck.oneof(chars(lowerAlphanumeric), word(lowerAlphanumeric, lowerAlphanumeric + "-", 10))
    const prefix = FastCheck.array(dnsLabel, { minLength: 1, maxLength: 4 }).map((labels) => labels.join("."))
    const key = FastCheck.tuple(FastCheck.option(prefix, { nil: undefined, freq: 3 }), name).map(([p, n]) =>
      p === undefined ? n : `${p}/${n}`
    )
    const value = FastCheck.oneof(FastCheck.constant(""), name)
    const requirement: FastCheck.Arbitrary<LabelSelector.Requirement> = FastCheck.oneof(
      FastCheck.record({
        key,
        operator: FastCheck.constantFrom("In" as const, "NotIn" as const),
        values: FastCheck.array(value, { minLength: 1, maxLength: 4 })
      }),
      FastCheck.record({
        key,
        operator: FastCheck.constantFrom("Equals" as const, "DoubleEquals" as const, "NotEquals" as const),
        values: value.map((v) => [v])
      }),
      FastCheck.record({
        key,
        operator: FastCheck.constantFrom("Exists" as const, "DoesNotExist" as const),
        values: FastCheck.constant([])
      })
    )

    it("round-trips: parse(format(s)) equals s", () => {
      FastCheck.assert(
        FastCheck.property(FastCheck.array(requirement, { maxLength: 6 }), (requirements) => {
          const selector = LabelSelector.fromRequirements(requirements)
          if (Result.isFailure(selector)) return false
          const printed = LabelSelector.format(selector.success)
          const parsed = LabelSelector.parse(printed)
          return Result.isSuccess(parsed) && Equal.equals(parsed.success, selector.success) &&
            Hash.hash(parsed.success) === Hash.hash(selector.success) &&
            LabelSelector.format(parsed.success) === printed
        }),
        { numRuns: 300 }
      )
    })

    it("matches like a direct reading of the requirements", () => {
      const smallKey = FastCheck.constantFrom("a", "b", "c")
      const smallValue = FastCheck.constantFrom("", "x", "y")
      const smallRequirement: FastCheck.Arbitrary<LabelSelector.Requirement> = FastCheck.oneof(
        FastCheck.record({
          key: smallKey,
          operator: FastCheck.constantFrom("In" as const, "NotIn" as const),
          values: FastCheck.array(smallValue, { minLength: 1, maxLength: 3 })
        }),
        FastCheck.record({
          key: smallKey,
          operator: FastCheck.constantFrom("Equals" as const, "DoubleEquals" as const, "NotEquals" as const),
          values: smallValue.map((v) => [v])
        }),
        FastCheck.record({
          key: smallKey,
          operator: FastCheck.constantFrom("Exists" as const, "DoesNotExist" as const),
          values: FastCheck.constant([])
        })
      )
      const labels = FastCheck.dictionary(smallKey, smallValue)
      const reference = (r: LabelSelector.Requirement, l: { readonly [k: string]: string }): boolean => {
        const present = Object.hasOwn(l, r.key)
        switch (r.operator) {
          case "In":
          case "Equals":
          case "DoubleEquals":
            return present && r.values.includes(l[r.key]!)
          case "NotIn":
          case "NotEquals":
            return !present || !r.values.includes(l[r.key]!)
          case "Exists":
            return present
          case "DoesNotExist":
            return !present
        }
      }
      FastCheck.assert(
        FastCheck.property(FastCheck.array(smallRequirement, { maxLength: 4 }), labels, (requirements, l) => {
          const selector = Result.getOrThrow(LabelSelector.fromRequirements(requirements))
          const parsed = parseOk(LabelSelector.format(selector))
          const expected = requirements.every((r) => reference(r, l))
          return LabelSelector.matches(selector, l) === expected && LabelSelector.matches(parsed, l) === expected
        }),
        { numRuns: 500 }
      )
    })
  })

  describe("constructors", () => {
    it("fromRequirements validates and normalises", () => {
      const selector = Result.getOrThrow(LabelSelector.fromRequirements([
        { key: "b", operator: "NotIn", values: ["y", "x", "y"] },
        { key: "a", operator: "Exists", values: [] }
      ]))
      assert.strictEqual(LabelSelector.format(selector), "a,b notin (x,y)")
      assert.isTrue(Equal.equals(Result.getOrThrow(LabelSelector.fromRequirements([])), LabelSelector.everything))

      const bad: ReadonlyArray<readonly [LabelSelector.Requirement, string]> = [
        [{ key: "a", operator: "In", values: [] }, "values set can't be empty"],
        [{ key: "a", operator: "Equals", values: ["x", "y"] }, "exact-match compatibility requires one single value"],
        [{ key: "a", operator: "NotEquals", values: [] }, "exact-match compatibility requires one single value"],
        [{ key: "a", operator: "Exists", values: ["x"] }, "values set must be empty for exists and does not exist"],
        [{ key: "a b", operator: "Exists", values: [] }, "key: Invalid value: \"a b\""],
        [{ key: "a", operator: "Equals", values: ["x y"] }, "values[0][a]: Invalid value: \"x y\""],
        [{ key: "a", operator: "Gt" as LabelSelector.Operator, values: ["1"] }, "operator: Unsupported value: \"Gt\""]
      ]
      for (const [r, message] of bad) {
        const result = LabelSelector.fromRequirements([r])
        assert.isTrue(Result.isFailure(result), message)
        if (Result.isFailure(result)) {
          assert.strictEqual(result.failure._tag, "LabelSelectorParseError")
          assert.include(result.failure.message, message)
        }
      }
    })

    it("fromMatchLabels selects exactly the given labels", () => {
      const selector = Result.getOrThrow(LabelSelector.fromMatchLabels({ tier: "web", app: "shop" }))
      assert.strictEqual(LabelSelector.format(selector), "app=shop,tier=web")
      assert.isTrue(LabelSelector.matches(selector, { app: "shop", tier: "web", other: "x" }))
      assert.isFalse(LabelSelector.matches(selector, { app: "shop" }))
      assert.isTrue(LabelSelector.isEverything(Result.getOrThrow(LabelSelector.fromMatchLabels({}))))
      assert.isTrue(LabelSelector.isEverything(Result.getOrThrow(LabelSelector.fromMatchLabels(undefined))))
      const bad = LabelSelector.fromMatchLabels({ app: "not valid" })
      assert.isTrue(Result.isFailure(bad) && bad.failure.message.includes("Invalid value: \"not valid\""))
    })

    it("fromLabelSelector converts metav1.LabelSelector", () => {
      const selector = Result.getOrThrow(LabelSelector.fromLabelSelector({
        matchLabels: { app: "web" },
        matchExpressions: [
          { key: "tier", operator: "NotIn", values: ["db", "cache"] },
          { key: "env", operator: "In", values: ["prod"] },
          { key: "canary", operator: "DoesNotExist" },
          { key: "zone", operator: "Exists", values: [] }
        ]
      }))
      assert.strictEqual(LabelSelector.format(selector), "app=web,!canary,env in (prod),tier notin (cache,db),zone")
      assert.isTrue(LabelSelector.matches(selector, { app: "web", env: "prod", zone: "a" }))
      assert.isFalse(LabelSelector.matches(selector, { app: "web", env: "prod", zone: "a", tier: "db" }))

      assert.isTrue(LabelSelector.isNothing(Result.getOrThrow(LabelSelector.fromLabelSelector(undefined))))
      assert.isTrue(LabelSelector.isNothing(Result.getOrThrow(LabelSelector.fromLabelSelector(null))))
      assert.isTrue(LabelSelector.isEverything(Result.getOrThrow(LabelSelector.fromLabelSelector({}))))
      assert.isTrue(LabelSelector.isEverything(Result.getOrThrow(LabelSelector.fromLabelSelector({
        matchLabels: {},
        matchExpressions: []
      }))))
    })

    it("fromLabelSelector rejects unknown operators and invalid requirements", () => {
      const cases: ReadonlyArray<readonly [LabelSelector.MetaV1LabelSelector, string]> = [
        [
          { matchExpressions: [{ key: "a", operator: "Gt", values: ["1"] }] },
          "\"Gt\" is not a valid label selector operator"
        ],
        [
          { matchExpressions: [{ key: "a", operator: "in", values: ["1"] }] },
          "\"in\" is not a valid label selector operator"
        ],
        [{ matchExpressions: [{ key: "a", operator: "In" }] }, "values set can't be empty"],
        [{ matchExpressions: [{ key: "a", operator: "Exists", values: ["x"] }] }, "values set must be empty"],
        [{ matchLabels: { "a/b/c": "x" } }, "a valid label key"]
      ]
      for (const [input, message] of cases) {
        const result = LabelSelector.fromLabelSelector(input)
        assert.isTrue(Result.isFailure(result), message)
        if (Result.isFailure(result)) {
          assert.strictEqual(result.failure._tag, "LabelSelectorParseError")
          assert.include(result.failure.message, message)
        }
      }
    })
  })

  describe("getters", () => {
    it("isEverything / isNothing / isLabelSelector", () => {
      assert.isTrue(LabelSelector.isEverything(LabelSelector.everything))
      assert.isFalse(LabelSelector.isEverything(LabelSelector.nothing))
      assert.isFalse(LabelSelector.isEverything(parseOk("a")))
      assert.isTrue(LabelSelector.isNothing(LabelSelector.nothing))
      assert.isFalse(LabelSelector.isNothing(LabelSelector.everything))
      assert.isFalse(Equal.equals(LabelSelector.everything, LabelSelector.nothing))
      assert.isTrue(LabelSelector.isLabelSelector(parseOk("a")))
      assert.isFalse(LabelSelector.isLabelSelector({ requirements: [] }))
    })

    it("requiresExactMatch", () => {
      assert.deepStrictEqual(LabelSelector.requiresExactMatch(parseOk("a=x,b"), "a"), Option.some("x"))
      assert.deepStrictEqual(LabelSelector.requiresExactMatch(parseOk("a==x"), "a"), Option.some("x"))
      assert.deepStrictEqual(LabelSelector.requiresExactMatch(parseOk("a in (x)"), "a"), Option.some("x"))
      assert.deepStrictEqual(LabelSelector.requiresExactMatch(parseOk("a in (x,y)"), "a"), Option.none())
      assert.deepStrictEqual(LabelSelector.requiresExactMatch(parseOk("a!=x"), "a"), Option.none())
      assert.deepStrictEqual(LabelSelector.requiresExactMatch(parseOk("b=x"), "a"), Option.none())
    })

    it("prints itself usefully", () => {
      const selector = parseOk("b=1,a")
      assert.strictEqual(String(selector), "LabelSelector(\"a,b=1\")")
      assert.deepStrictEqual(selector.toJSON(), { _id: "LabelSelector", selector: "a,b=1", nothing: false })
      assert.strictEqual(String(LabelSelector.nothing), "LabelSelector.nothing")
    })
  })
})

import { assert, describe, it } from "@effect/vitest"
import { Effect, Equal, Hash, Option, Result } from "effect"
import * as FieldSelector from "../../src/FieldSelector.js"
import * as FastCheck from "../fixtures/arbitrary.js"

const parseOk = (input: string): FieldSelector.FieldSelector => {
  const result = FieldSelector.parse(input)
  if (Result.isFailure(result)) assert.fail(`expected ${JSON.stringify(input)} to parse: ${result.failure.message}`)
  return result.success
}

const parseErr = (input: string): FieldSelector.FieldSelectorParseError => {
  const result = FieldSelector.parse(input)
  if (Result.isSuccess(result)) {
    assert.fail(`expected ${JSON.stringify(input)} to fail, got ${FieldSelector.format(result.success)}`)
  }
  assert.strictEqual(result.failure._tag, "FieldSelectorParseError")
  assert.strictEqual(result.failure.input, input)
  return result.failure
}

const pod = {
  metadata: { name: "web-1", namespace: "default", labels: { app: "web" } },
  spec: { nodeName: "node-1", replicas: 3, hostNetwork: false },
  status: { phase: "Running" }
}

describe("FieldSelector", () => {
  describe("parse", () => {
    it("parses every operator", () => {
      assert.deepStrictEqual(parseOk("a=b").requirements, [{ field: "a", operator: "Equals", value: "b" }])
      assert.deepStrictEqual(parseOk("a==b").requirements, [{ field: "a", operator: "Equals", value: "b" }])
      assert.deepStrictEqual(parseOk("a!=b").requirements, [{ field: "a", operator: "NotEquals", value: "b" }])
      assert.deepStrictEqual(parseOk("a=").requirements, [{ field: "a", operator: "Equals", value: "" }])
      assert.deepStrictEqual(parseOk("a=!b").requirements, [{ field: "a", operator: "Equals", value: "!b" }])
    })

    it("combines terms with AND in canonical order", () => {
      const selector = parseOk("status.phase!=Succeeded,metadata.name=web-1,spec.nodeName==node-1")
      assert.deepStrictEqual(selector.requirements, [
        { field: "metadata.name", operator: "Equals", value: "web-1" },
        { field: "spec.nodeName", operator: "Equals", value: "node-1" },
        { field: "status.phase", operator: "NotEquals", value: "Succeeded" }
      ])
      assert.isTrue(Equal.equals(parseOk("b=1,a=2"), parseOk("a=2,b=1")))
    })

    it("selects everything for empty input, empty terms and empty field=value terms", () => {
      for (const input of ["", ",", ",,", "=", "==", "!=", "=,!="]) {
        const selector = parseOk(input)
        assert.isTrue(FieldSelector.isEverything(selector), input)
        assert.isTrue(Equal.equals(selector, FieldSelector.everything), input)
      }
      assert.deepStrictEqual(parseOk("a=b,,c=d,").requirements.map((r) => r.field), ["a", "c"])
    })

    it("keeps an empty field with a value, like apimachinery", () => {
      assert.deepStrictEqual(parseOk("=b").requirements, [{ field: "", operator: "Equals", value: "b" }])
    })

    it("does not trim blanks, like the API server", () => {
      assert.deepStrictEqual(parseOk("a = b, c=d").requirements, [
        { field: " c", operator: "Equals", value: "d" },
        { field: "a ", operator: "Equals", value: " b" }
      ])
    })

    it("unescapes \\\\, \\, and \\= in values", () => {
      assert.deepStrictEqual(parseOk("a=b\\,c").requirements, [{ field: "a", operator: "Equals", value: "b,c" }])
      assert.deepStrictEqual(parseOk("a=b\\=c").requirements, [{ field: "a", operator: "Equals", value: "b=c" }])
      assert.deepStrictEqual(parseOk("a!=b\\\\").requirements, [{ field: "a", operator: "NotEquals", value: "b\\" }])
      assert.deepStrictEqual(parseOk("a=\\,,b=\\\\\\=").requirements, [
        { field: "a", operator: "Equals", value: "," },
        { field: "b", operator: "Equals", value: "\\=" }
      ])
    })

    it("takes the field literally up to the first operator", () => {
      assert.deepStrictEqual(parseOk("a\\,b=c").requirements, [{ field: "a\\,b", operator: "Equals", value: "c" }])
      assert.deepStrictEqual(parseOk("a\\=b").requirements, [{ field: "a\\", operator: "Equals", value: "b" }])
      assert.deepStrictEqual(parseOk("a!b=c").requirements, [{ field: "a!b", operator: "Equals", value: "c" }])
    })
  })

  describe("parse errors", () => {
    const cases: ReadonlyArray<readonly [input: string, position: number, message: string]> = [
      ["a", 0, "invalid selector: 'a'; can't understand 'a'"],
      ["a!b", 0, "invalid selector: 'a!b'; can't understand 'a!b'"],
      ["x=1,a", 4, "invalid selector: 'x=1,a'; can't understand 'a'"],
      ["a=b=c", 3, "invalid field selector: unescaped character in value: '='"],
      ["a===b", 3, "invalid field selector: unescaped character in value: '='"],
      ["a!==b", 3, "invalid field selector: unescaped character in value: '='"],
      ["a=b\\", 3, "invalid field selector: invalid escape sequence: \\"],
      ["a=b\\x", 3, "invalid field selector: invalid escape sequence: \\x"],
      ["a=b\\!", 3, "invalid field selector: invalid escape sequence: \\!"],
      ["z=1,a=b\\😀", 7, "invalid field selector: invalid escape sequence: \\😀"]
    ]
    for (const [input, position, message] of cases) {
      it(`rejects ${JSON.stringify(input)}`, () => {
        const error = parseErr(input)
        assert.strictEqual(error.message, message)
        assert.strictEqual(error.position, position)
      })
    }

    it("reports the first bad term in sorted order, as apimachinery does", () => {
      assert.strictEqual(parseErr("b,a=x=y").message, "invalid field selector: unescaped character in value: '='")
      assert.strictEqual(parseErr("b=x=y,a").message, "invalid selector: 'b=x=y,a'; can't understand 'a'")
    })

    it("never throws on arbitrary input, and what parses round-trips", () => {
      const alphabet = FastCheck.constantFrom("a", "b.c", " ", "=", "==", "!=", "!", ",", "\\", "é", "😀")
      const inputs = FastCheck.oneof(
        FastCheck.string(),
        FastCheck.array(alphabet, { maxLength: 12 }).map((parts) => parts.join(""))
      )
      FastCheck.assert(
        FastCheck.property(inputs, (input) => {
          const result = FieldSelector.parse(input)
          if (Result.isFailure(result)) {
            return result.failure._tag === "FieldSelectorParseError" && result.failure.input === input &&
              result.failure.message.length > 0
          }
          const again = FieldSelector.parse(FieldSelector.format(result.success))
          return Result.isSuccess(again) && Equal.equals(again.success, result.success)
        }),
        { numRuns: 500 }
      )
    })

    it.effect("parseEffect succeeds and fails with the typed error", () =>
      Effect.gen(function*() {
        const selector = yield* FieldSelector.parseEffect("metadata.name=x")
        assert.strictEqual(FieldSelector.format(selector), "metadata.name=x")
        const error = yield* Effect.flip(FieldSelector.parseEffect("metadata.name"))
        assert.strictEqual(error._tag, "FieldSelectorParseError")
        assert.strictEqual(error.position, 0)
      }))
  })

  describe("matches", () => {
    it("reads fields through getField, a missing field being the empty string", () => {
      const fields: { readonly [k: string]: string } = { "metadata.name": "web-1", "status.phase": "Running" }
      const get = (path: string) => fields[path]
      const table: ReadonlyArray<readonly [string, boolean]> = [
        ["", true],
        ["metadata.name=web-1", true],
        ["metadata.name==web-1", true],
        ["metadata.name=web-2", false],
        ["metadata.name!=web-2", true],
        ["metadata.name!=web-1", false],
        ["spec.nodeName=", true],
        ["spec.nodeName!=", false],
        ["spec.nodeName!=x", true],
        ["spec.nodeName=x", false],
        ["metadata.name=web-1,status.phase=Running", true],
        ["metadata.name=web-1,status.phase!=Running", false]
      ]
      for (const [input, expected] of table) {
        assert.strictEqual(FieldSelector.matches(parseOk(input), get), expected, input)
      }
    })

    it("matchesObject reads dotted paths of plain JSON objects", () => {
      const table: ReadonlyArray<readonly [string, boolean]> = [
        ["metadata.name=web-1", true],
        ["metadata.namespace=default", true],
        ["metadata.namespace!=default", false],
        ["metadata.name=web-1,metadata.namespace=kube-system", false],
        ["spec.nodeName=node-1,status.phase!=Succeeded", true],
        ["spec.replicas=3", true],
        ["spec.hostNetwork=false", true],
        ["spec.missing=", true],
        ["spec.nodeName.deeper=", true],
        ["metadata.labels=", true], // an object is not a field value
        ["metadata.labels.app=web", true],
        ["metadata.constructor=", true],
        ["a.b.c!=x", true]
      ]
      for (const [input, expected] of table) {
        assert.strictEqual(FieldSelector.matchesObject(parseOk(input), pod), expected, input)
      }
      assert.isTrue(FieldSelector.matchesObject(parseOk("metadata.name="), undefined))
      assert.isFalse(FieldSelector.matchesObject(parseOk("metadata.name=x"), null))
      assert.isTrue(FieldSelector.matchesObject(FieldSelector.everything, "not an object"))
    })

    it("matches values that needed escaping", () => {
      const selector = parseOk("metadata.name=a\\,b\\=c\\\\d")
      assert.isTrue(FieldSelector.matchesObject(selector, { metadata: { name: "a,b=c\\d" } }))
    })
  })

  describe("format", () => {
    it("prints the canonical string", () => {
      const cases: ReadonlyArray<readonly [string, string]> = [
        ["", ""],
        ["b=1,a!=2", "a!=2,b=1"],
        ["a==b", "a=b"],
        ["a=b\\,c,a=b\\=c", "a=b\\,c,a=b\\=c"],
        ["x=\\\\", "x=\\\\"],
        ["a=b,,", "a=b"]
      ]
      for (const [input, expected] of cases) {
        assert.strictEqual(FieldSelector.format(parseOk(input)), expected, input)
      }
    })

    it("escapeValue escapes \\, , and =", () => {
      assert.strictEqual(FieldSelector.escapeValue("plain"), "plain")
      assert.strictEqual(FieldSelector.escapeValue("a,b=c\\d!"), "a\\,b\\=c\\\\d!")
    })

    it("round-trips: parse(format(s)) equals s", () => {
      const fieldChar = FastCheck.constantFrom("a", "b", "Z", ".", "-", "_", " ", "é", "😀")
      const valueChar = FastCheck.constantFrom("a", "b", ".", " ", ",", "=", "!", "\\", "é", "😀")
      const field = FastCheck.array(fieldChar, { minLength: 1, maxLength: 8 }).map((cs) => cs.join(""))
      const value = FastCheck.array(valueChar, { maxLength: 8 }).map((cs) => cs.join(""))
      const requirement = FastCheck.record({
        field,
        operator: FastCheck.constantFrom("Equals" as const, "NotEquals" as const),
        value
      })
      FastCheck.assert(
        FastCheck.property(FastCheck.array(requirement, { maxLength: 5 }), (requirements) => {
          const selector = FieldSelector.fromRequirements(requirements)
          const printed = FieldSelector.format(selector)
          const parsed = FieldSelector.parse(printed)
          return Result.isSuccess(parsed) && Equal.equals(parsed.success, selector) &&
            Hash.hash(parsed.success) === Hash.hash(selector) &&
            parsed.success.requirements.length === requirements.length
        }),
        { numRuns: 300 }
      )
    })
  })

  describe("validateFields", () => {
    it("accepts supported fields", () => {
      const selector = parseOk("metadata.name=x,metadata.namespace!=y")
      assert.isTrue(Equal.equals(
        Result.getOrThrow(FieldSelector.validateFields(selector, FieldSelector.defaultFields)),
        selector
      ))
      assert.isTrue(Result.isSuccess(FieldSelector.validateFields(FieldSelector.everything, [])))
    })

    it("rejects unsupported fields like the API server", () => {
      const selector = parseOk("metadata.name=x,spec.nodeName=n1")
      const result = FieldSelector.validateFields(selector, FieldSelector.defaultFields)
      if (Result.isSuccess(result)) assert.fail("expected an error")
      assert.strictEqual(result.failure._tag, "FieldSelectorParseError")
      assert.strictEqual(result.failure.message, "field label not supported: spec.nodeName")
      assert.strictEqual(result.failure.field, "spec.nodeName")
      assert.strictEqual(result.failure.input, "metadata.name=x,spec.nodeName=n1")
      assert.isTrue(
        Result.isSuccess(FieldSelector.validateFields(selector, [...FieldSelector.defaultFields, "spec.nodeName"]))
      )
      const spaced = FieldSelector.validateFields(parseOk("metadata.name = x"), FieldSelector.defaultFields)
      assert.isTrue(Result.isFailure(spaced) && spaced.failure.message === "field label not supported: metadata.name ")
    })
  })

  describe("constructors and getters", () => {
    it("oneTermEqual / oneTermNotEqual / fromRequirements", () => {
      const byName = FieldSelector.oneTermEqual("metadata.name", "a,b")
      assert.strictEqual(FieldSelector.format(byName), "metadata.name=a\\,b")
      assert.isTrue(FieldSelector.matchesObject(byName, { metadata: { name: "a,b" } }))
      assert.strictEqual(
        FieldSelector.format(FieldSelector.oneTermNotEqual("status.phase", "Failed")),
        "status.phase!=Failed"
      )
      assert.isTrue(FieldSelector.isEverything(FieldSelector.fromRequirements([])))
      assert.isTrue(FieldSelector.isEverything(FieldSelector.oneTermEqual("", "")))
    })

    it("requiresExactMatch", () => {
      const selector = parseOk("metadata.namespace!=a,metadata.namespace=b,metadata.name=c")
      assert.deepStrictEqual(FieldSelector.requiresExactMatch(selector, "metadata.namespace"), Option.some("b"))
      assert.deepStrictEqual(FieldSelector.requiresExactMatch(selector, "metadata.name"), Option.some("c"))
      assert.deepStrictEqual(FieldSelector.requiresExactMatch(selector, "spec.nodeName"), Option.none())
    })

    it("isFieldSelector and printing", () => {
      const selector = parseOk("b=1,a=2")
      assert.isTrue(FieldSelector.isFieldSelector(selector))
      assert.isFalse(FieldSelector.isFieldSelector({ requirements: [] }))
      assert.strictEqual(String(selector), "FieldSelector(\"a=2,b=1\")")
      assert.deepStrictEqual(selector.toJSON(), { _id: "FieldSelector", selector: "a=2,b=1" })
    })
  })
})

import { assert, describe, it } from "@effect/vitest"
import { jsonPatch } from "effect-informers/ApiStore"

describe("JSON patch (RFC 6902)", () => {
  it("test compares objects by their members, not their key order", () => {
    const doc = { metadata: { labels: { a: "1", b: "2" } } }
    const patched = jsonPatch(doc, [
      { op: "test", path: "/metadata/labels", value: { b: "2", a: "1" } },
      { op: "add", path: "/metadata/labels/c", value: "3" }
    ])
    assert.deepStrictEqual(patched, { metadata: { labels: { a: "1", b: "2", c: "3" } } })
  })

  it("test fails on a different value, a missing member, an array of another order, or another type", () => {
    const doc = { spec: { list: [1, 2], n: 1, o: { a: 1 } } }
    for (
      const [path, value] of [
        ["/spec/o", { a: 2 }],
        ["/spec/o", { a: 1, b: undefined }],
        ["/spec/o", {}],
        ["/spec/list", [2, 1]],
        ["/spec/n", "1"],
        ["/spec/o", null]
      ] as const
    ) {
      assert.throws(() => jsonPatch(doc, [{ op: "test", path, value }]), /test failed/)
    }
  })
})

/**
 * `import type { KubeObject } from "effect-informers"` names the object type, while the value of the same
 * name is still the module of helpers (a newcomer's first import named a namespace before).
 */
import { describe, expect, it } from "@effect/vitest"
import type { KubeObject } from "effect-informers"
import { KubeObject as KubeObjects } from "effect-informers"

describe("KubeObject from the main entry", () => {
  it("is the object type as a type and the helpers as a value", () => {
    const obj: KubeObject = { metadata: { name: "web", namespace: "default", resourceVersion: "42" } }
    const same: KubeObjects.KubeObject = obj
    expect(KubeObjects.resourceVersion(same)).toBe("42")
  })
})

import { describe, expect, it } from "@effect/vitest"
import * as Informers from "effect-informers"
import * as Resource from "effect-informers/Resource"
import * as Testing from "effect-informers/testing"
import * as SourceResource from "../../../src/Resource.js"
import * as SourceTesting from "../../../src/testing.js"

// Workspace packages import the library by its name, as users do; in this repository the name resolves
// to the sources (tsconfig paths, vitest aliases), never to a second copy or a stale dist/.
describe("workspace", () => {
  it("resolves effect-informers to the library's sources, one module instance", () => {
    expect(Resource).toBe(SourceResource)
    expect(Informers.Resource).toBe(SourceResource)
    expect(Testing.FakeListerWatcher).toBe(SourceTesting.FakeListerWatcher)
  })
})

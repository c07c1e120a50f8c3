/**
 * The team-info controller against the fake Client and the fake informers, under TestClock: what it writes
 * and what the objects become, with no cluster and no sleep.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer, Option } from "effect"
import { Client, Informers, Resource } from "effect-informers"
import { FakeClient } from "effect-informers/testing"
import * as TestClock from "effect/testing/TestClock"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import * as TeamInfo from "./controller.js"

const here = path.dirname(fileURLToPath(import.meta.url))

const TestEnv = Layer.mergeAll(Informers.namespaces(), Informers.configMaps()).pipe(
  Layer.provideMerge(FakeClient.layerFactory())
)

/** Runs the controller to quiet, past the retries' backoff (the clock moves only when nothing else can). */
const settle = (controller: { readonly quiet: Effect.Effect<void> }) =>
  Effect.gen(function*() {
    for (let i = 0; i < 5; i++) {
      yield* controller.quiet
      yield* TestClock.adjust("2 seconds")
    }
    yield* controller.quiet
  })

const teamOf = (namespace: string) =>
  Effect.gen(function*() {
    const client = yield* Client.Client
    const found = yield* Effect.option(client.get(Resource.configMaps, TeamInfo.name, { namespace }))
    return Option.map(found, (cm) => cm.data?.["team"])
  })

describe("team-info", () => {
  it.effect("keeps team-info in step with the Namespace's label, and restores what is edited by hand", () =>
    Effect.gen(function*() {
      const client = yield* Client.Client
      const controller = yield* TeamInfo.make()
      const payments = yield* client.create(Resource.namespaces, {
        metadata: { name: "payments", labels: { team: "payments" } }
      })
      yield* client.create(Resource.namespaces, { metadata: { name: "scratch" } })
      yield* settle(controller)
      assert.deepStrictEqual(yield* teamOf("payments"), Option.some("payments"))
      assert.deepStrictEqual(yield* teamOf("scratch"), Option.none())
      const written = yield* client.get(Resource.configMaps, TeamInfo.name, { namespace: "payments" })
      assert.deepStrictEqual(written.metadata?.ownerReferences, [{
        apiVersion: "v1",
        kind: "Namespace",
        name: "payments",
        uid: payments.metadata?.uid ?? "",
        controller: true,
        blockOwnerDeletion: true
      }])

      // edited by hand, then deleted by hand: restored each time
      const mine = { namespace: "payments" }
      yield* client.patch(Resource.configMaps, TeamInfo.name, Client.mergePatch({ data: { team: "x" } }), mine)
      yield* settle(controller)
      assert.deepStrictEqual(yield* teamOf("payments"), Option.some("payments"))
      yield* client.delete(Resource.configMaps, TeamInfo.name, mine)
      yield* settle(controller)
      assert.deepStrictEqual(yield* teamOf("payments"), Option.some("payments"))

      // the label changes, then goes
      const relabel = (team: string | null) => Client.mergePatch({ metadata: { labels: { team } } })
      yield* client.patch(Resource.namespaces, "payments", relabel("billing"))
      yield* settle(controller)
      assert.deepStrictEqual(yield* teamOf("payments"), Option.some("billing"))
      yield* client.patch(Resource.namespaces, "payments", relabel(null))
      yield* settle(controller)
      assert.deepStrictEqual(yield* teamOf("payments"), Option.none())
    }).pipe(Effect.scoped, Effect.provide(TestEnv)))

  it.effect("a write that fails is retried with backoff; a reconcile with nothing to change writes nothing new", () =>
    Effect.gen(function*() {
      const client = yield* Client.Client
      const fake = yield* FakeClient.FakeClient
      const controller = yield* TeamInfo.make()
      yield* fake.failNext("apply", { code: 500, reason: "InternalError", message: "etcd is down" }, { times: 2 })
      yield* client.create(Resource.namespaces, { metadata: { name: "web", labels: { team: "frontend" } } })
      yield* controller.quiet
      assert.deepStrictEqual(yield* teamOf("web"), Option.none()) // failed, waiting for its backoff
      yield* settle(controller)
      assert.deepStrictEqual(yield* teamOf("web"), Option.some("frontend"))
      const applies = Effect.map(fake.writes, (writes) => writes.filter((write) => write.verb === "apply").length)
      const before = yield* client.get(Resource.configMaps, TeamInfo.name, { namespace: "web" })
      const appliesBefore = yield* applies
      assert.isAtLeast(appliesBefore, 3) // two refused, then the one that created it

      // reconciled again with nothing to change: one more apply, and the object is as it was
      yield* controller.enqueue("web")
      yield* settle(controller)
      assert.strictEqual(yield* applies, appliesBefore + 1)
      const after = yield* client.get(Resource.configMaps, TeamInfo.name, { namespace: "web" })
      assert.strictEqual(after.metadata?.resourceVersion, before.metadata?.resourceVersion)
    }).pipe(Effect.scoped, Effect.provide(TestEnv)))
})

describe("team-info: the example as the README shows it", () => {
  const read = (file: string) => fs.readFileSync(path.join(here, file), "utf8")
  const body = (file: string) => read(file).replace(/^\/\*\*[\s\S]*?\*\/\n/, "")

  it("the controller and its program are at most 80 non-blank lines, and the README shows them as they are", () => {
    const lines = ["controller.ts", "main.ts"].map((file) => read(file).split("\n").filter((l) => l.trim() !== ""))
    assert.isAtMost(lines[0].length + lines[1].length, 80)
    const readme = fs.readFileSync(path.join(here, "../../README.md"), "utf8")
    const section = readme.slice(readme.indexOf("## Writing a controller"), readme.indexOf("## More than one replica"))
    assert.include(section, "```ts\n" + body("controller.ts") + "```")
    assert.include(section, "```ts\n" + body("main.ts") + "```")
    assert.include(section, `Both files together are ${lines[0].length + lines[1].length} lines.`)
  })
})

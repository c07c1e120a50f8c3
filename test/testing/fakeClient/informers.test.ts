/**
 * What a reconcile writes through the fake Client reaches the informers over the same fakes; writes are
 * recorded for read-your-own-writes and fenced by the Term, as with the real Client.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import * as Client from "../../../src/Client.js"
import * as Consistency from "../../../src/Consistency.js"
import * as Controller from "../../../src/Controller.js"
import * as FakeClient from "../../../src/FakeClient.js"
import * as FakeListerWatcher from "../../../src/FakeListerWatcher.js"
import * as InformerFactory from "../../../src/InformerFactory.js"
import * as Term from "../../../src/Term.js"
import { eventually, serverError } from "../../fixtures/index.js"
import { configMap, configMaps, deployment, deployments, failureOf, fakes, layer } from "./fixtures.js"

describe("FakeClient: informers see the writes", () => {
  it.effect("create, update and delete through the Client reach a lister of the same factory", () =>
    Effect.gen(function*() {
      const factory = yield* InformerFactory.InformerFactory
      const lister = yield* factory.listerFor(configMaps)
      yield* factory.start
      yield* factory.waitForCacheSync()
      const client = yield* Client.Client
      const created = yield* client.create(configMaps, configMap("a", { k: "1" }))
      const get = Effect.option(lister.byNamespace("ns").get("a"))
      yield* eventually(
        () => Effect.map(get, (o) => Option.isSome(o) && o.value.metadata?.resourceVersion === "1"),
        "ADDED"
      )
      yield* client.update(configMaps, { ...created, data: { k: "2" } })
      yield* eventually(() => Effect.map(get, (o) => Option.isSome(o) && o.value.data?.k === "2"), "MODIFIED")
      yield* client.delete(configMaps, "a", { namespace: "ns" })
      yield* eventually(() => Effect.map(get, Option.isNone), "DELETED")
    }).pipe(Effect.provide(FakeClient.layerFactory())))

  /**
   * A controller whose first reconcile creates a child while the children's cache lags (its watch is closed
   * and its next watches fail: the reflector waits for its backoff), and asks for another reconcile at once.
   * What each reconcile saw of the child, and the writes.
   */
  const lagging = (readYourWrites: boolean) =>
    Effect.gen(function*() {
      const factory = yield* InformerFactory.InformerFactory
      const parents = { resource: deployments, informer: yield* factory.informerFor(deployments) }
      const children = { resource: configMaps, informer: yield* factory.informerFor(configMaps) }
      const lister = yield* factory.listerFor(configMaps)
      yield* factory.start
      const client = yield* Client.Client
      const fake = yield* FakeClient.FakeClient
      const childFake = (yield* FakeListerWatcher.FakeListerWatcherSource).fakeFor(configMaps)
      yield* client.create(deployments, deployment("web"))
      const seen: Array<boolean> = []
      yield* Controller.make({
        name: `fake-client-ryow-${readYourWrites}`,
        for: parents,
        watches: [{ source: children, map: () => [] }],
        ...(readYourWrites ? {} : { readYourWrites: false }),
        reconcile: (request) =>
          Effect.gen(function*() {
            const child = yield* Effect.option(
              lister.byNamespace(request.namespace ?? "").get(`${request.name}-config`)
            )
            seen.push(Option.isSome(child))
            if (Option.isSome(child)) return Controller.done
            if (seen.length === 1) {
              yield* childFake.failNextWatch(serverError(503, "ServiceUnavailable", "lagging"), 3)
              yield* childFake.closeWatches
            }
            yield* client.create(configMaps, configMap(`${request.name}-config`, { owner: request.name }))
            return Controller.requeue
          })
      })
      yield* eventually(() => seen.length >= 2, { what: "the second reconcile", interval: "10 millis" })
      return { seen: seen.slice(0, 2), writes: (yield* fake.writes).map((w) => `${w.verb} ${w.resource} ${w.name}`) }
    }).pipe(Effect.provide(FakeClient.layerFactory()))

  it.effect("a Controller's next reconcile sees the child its last one created, its cache lagging (read-your-own-writes)", () =>
    Effect.gen(function*() {
      const { seen, writes } = yield* lagging(true)
      assert.deepStrictEqual(seen, [false, true])
      assert.deepStrictEqual(writes, ["create deployments.apps web", "create configmaps web-config"])
    }))

  it.effect("without read-your-own-writes, the next reconcile reads the lagging cache (and creates again: AlreadyExists)", () =>
    Effect.gen(function*() {
      const { seen, writes } = yield* lagging(false)
      assert.deepStrictEqual(seen, [false, false])
      assert.deepStrictEqual(writes.slice(0, 3), [
        "create deployments.apps web",
        "create configmaps web-config",
        "create configmaps web-config"
      ])
    }))

  it.effect("a successful write (not a dry run) is recorded in the reconcile's Writes, at its resourceVersion", () =>
    Effect.gen(function*() {
      const { client } = yield* fakes
      const recorded: Array<string> = []
      const writes = Consistency.Writes.of({
        record: (groupResource, resourceVersion) =>
          Effect.sync(() => void recorded.push(`${groupResource}@${resourceVersion}`))
      })
      yield* Effect.gen(function*() {
        const cm = yield* client.create(configMaps, configMap("a"))
        yield* client.update(configMaps, { ...cm, data: { k: "v" } }, { dryRun: true })
        yield* client.patch(deployments, "web", Client.mergePatch({}), { namespace: "ns" }).pipe(Effect.ignore)
        yield* client.create(deployments, deployment("web"))
        yield* client.delete(configMaps, "a", { namespace: "ns" })
      }).pipe(Effect.provideService(Consistency.Writes, writes))
      // each resource's fake keeps its own resourceVersions
      assert.deepStrictEqual(recorded, ["configmaps@1", "deployments.apps@1", "configmaps@2"])
    }).pipe(Effect.provide(layer())))

  it.effect("a write within a stale Term fails with TermError and is neither sent nor applied", () =>
    Effect.gen(function*() {
      const { client, fake, source } = yield* fakes
      const term = Term.make({ name: "lease 1", check: () => undefined })
      term.end(new Term.TermError({ reason: "LeaseLost", term: "lease 1" }))
      const failure = yield* failureOf(client.create(configMaps, configMap("a")).pipe(Term.within(term)))
      assert.match(failure, /^TermError: /)
      assert.deepStrictEqual(yield* fake.writes, [])
      assert.deepStrictEqual(yield* source.fakeFor(configMaps).objects, [])
      // reads are not fenced; outside the term, writes go through
      yield* client.list(configMaps).pipe(Term.within(term))
      yield* client.create(configMaps, configMap("a"))
    }).pipe(Effect.provide(layer())))
})

/**
 * The informer factory: deduplication by resource and scope, option conflicts, start / wait / status /
 * shutdown, and the factory-wide options (namespace, tweakListOptions, resync, transforms). Every test
 * builds its own fakes and factory; time is driven with TestClock.
 */
import * as ApiServer from "@effect-informers/testkit/ApiServer"
import { assert, describe, it } from "@effect/vitest"
import {
  Context,
  Deferred,
  Duration,
  Effect,
  Exit,
  Fiber,
  Layer,
  Logger,
  LogLevel,
  Option,
  Scope,
  TestClock
} from "effect"
import * as FakeListerWatcher from "../src/FakeListerWatcher.js"
import * as Indexer from "../src/Indexer.js"
import * as InformerFactory from "../src/InformerFactory.js"
import type { KubeObject } from "../src/KubeObject.js"
import { resourceVersion } from "../src/KubeObject.js"
import * as Informers from "../src/Layer.js"
import type { ReflectorError } from "../src/Reflector.js"
import * as Resource from "../src/Resource.js"
import { namespacedNames as names, statusError, widgets } from "./fixtures/index.js"

// -------------------------------------------------------------------------------------------------
// helpers
// -------------------------------------------------------------------------------------------------

type Fakes = FakeListerWatcher.FakeListerWatcherSource.Service

/** An error's tag and reason, as the Reflector's logs name them: `StatusError (Forbidden)`. */
const kindOf = (error: Option.Option<ReflectorError>): string | undefined =>
  Option.match(error, {
    onNone: () => undefined,
    onSome: (e) => `${e._tag} (${"reason" in e ? e.reason : e._tag === "StoreError" ? e.operation : "Defect"})`
  })

/** A minimal object; its type fits every catalog entry's object type. */
interface TestObject {
  readonly metadata: {
    readonly namespace?: string
    readonly name: string
    readonly uid: string
    readonly labels?: Readonly<Record<string, string>>
  }
}

const obj = (namespace: string | undefined, name: string, labels?: Record<string, string>): TestObject => ({
  metadata: {
    ...(namespace === undefined ? {} : { namespace }),
    name,
    uid: `${namespace ?? ""}/${name}`,
    ...(labels === undefined ? {} : { labels })
  }
})

/** Fresh fakes and a factory in the test's scope. */
const setup = (options: InformerFactory.Options = {}) =>
  Effect.gen(function*() {
    const context = yield* Layer.build(FakeListerWatcher.layerSource())
    const fakes: Fakes = Context.get(context, FakeListerWatcher.FakeListerWatcherSource)
    const factory = yield* InformerFactory.make(options).pipe(Effect.provide(context))
    return { factory, fakes }
  })

const byApp: Indexer.IndexFunction<KubeObject> = (o) => {
  const app = o.metadata?.labels?.app
  return app === undefined ? [] : [app]
}
const byTier: Indexer.IndexFunction<KubeObject> = (o) => {
  const tier = o.metadata?.labels?.tier
  return tier === undefined ? [] : [tier]
}

// -------------------------------------------------------------------------------------------------
// deduplication and conflicts
// -------------------------------------------------------------------------------------------------

describe("InformerFactory - informerFor", () => {
  it.scoped("same resource and scope returns the same informer, also for equivalent selectors", () =>
    Effect.gen(function*() {
      const { factory } = yield* setup()
      const a = yield* factory.informerFor(Resource.pods, { namespace: "default", labelSelector: "a=b,c=d" })
      const b = yield* factory.informerFor(Resource.pods, { namespace: "default", labelSelector: "c=d, a=b" })
      assert.strictEqual(a, b)
      const c = yield* factory.informerFor(Resource.pods, { namespace: "default", labelSelector: "x in (2, 1)" })
      const d = yield* factory.informerFor(Resource.pods, { namespace: "default", labelSelector: "x in (1,2,1)" })
      assert.strictEqual(c, d)
      // "==" and "=" are the same requirement
      const e = yield* factory.informerFor(Resource.pods, { labelSelector: "a==b" })
      const f = yield* factory.informerFor(Resource.pods, { labelSelector: "a=b" })
      assert.strictEqual(e, f)
      // an all-blank selector is no selector; the default namespace is all namespaces
      const all = yield* factory.informerFor(Resource.pods)
      assert.strictEqual(yield* factory.informerFor(Resource.pods, { namespace: "", labelSelector: "  " }), all)
      // a cluster-scoped resource ignores the namespace
      const nodes = yield* factory.informerFor(Resource.nodes)
      assert.strictEqual(yield* factory.informerFor(Resource.nodes, { namespace: "x" }), nodes)
      assert.strictEqual(nodes.name, "nodes")
      assert.strictEqual(all.name, "pods in all namespaces")
      assert.strictEqual(a.name, "pods in default (a=b,c=d)")
      assert.lengthOf(yield* factory.status, 5)
    }))

  it.scoped("a different namespace, selector or resource gives a different informer", () =>
    Effect.gen(function*() {
      const { factory } = yield* setup()
      const base = yield* factory.informerFor(Resource.pods, { namespace: "default" })
      const others = [
        yield* factory.informerFor(Resource.pods, { namespace: "other" }),
        yield* factory.informerFor(Resource.pods),
        yield* factory.informerFor(Resource.pods, { namespace: "default", labelSelector: "app=web" }),
        yield* factory.informerFor(Resource.pods, { namespace: "default", fieldSelector: "metadata.name=x" }),
        yield* factory.informerFor(Resource.configMaps, { namespace: "default" }),
        yield* factory.informerFor(widgets, { namespace: "default" })
      ]
      assert.strictEqual(new Set([base, ...others]).size, 7)
    }))

  it.scoped("concurrent requests for the same informer create it once", () =>
    Effect.gen(function*() {
      const { factory } = yield* setup()
      // Yield every 32 operations so that the two requests interleave (creating an informer takes more).
      const [a, b] = yield* Effect.all(
        [factory.informerFor(Resource.pods), factory.informerFor(Resource.pods)],
        { concurrency: "unbounded" }
      ).pipe(Effect.withMaxOpsBeforeYield(32))
      assert.strictEqual(a, b)
      assert.lengthOf(yield* factory.status, 1)
    }))

  it.scoped("a conflicting transform is an InformerOptionsConflictError", () =>
    Effect.gen(function*() {
      const { factory } = yield* setup()
      const transform = <A>(o: A): A => o
      const first = yield* factory.informerFor(Resource.pods, { transform })
      // the same function, or no opinion, is no conflict
      assert.strictEqual(yield* factory.informerFor(Resource.pods, { transform }), first)
      assert.strictEqual(yield* factory.informerFor(Resource.pods), first)
      const error = yield* Effect.flip(factory.informerFor(Resource.pods, { transform: (o) => o }))
      assert.strictEqual(error._tag, "InformerOptionsConflictError")
      assert(error._tag === "InformerOptionsConflictError")
      assert.strictEqual(error.option, "transform")
      assert.include(error.message, "pods in all namespaces")
      // an informer created without a transform cannot get one later
      yield* factory.informerFor(Resource.pods, { namespace: "x" })
      const late = yield* Effect.flip(factory.informerFor(Resource.pods, { namespace: "x", transform }))
      assert.strictEqual(late._tag, "InformerOptionsConflictError")
    }))

  it.scoped("a conflicting resync period is an InformerOptionsConflictError", () =>
    Effect.gen(function*() {
      const { factory } = yield* setup()
      const first = yield* factory.informerFor(Resource.pods, { resyncPeriod: "1 minute" })
      assert.strictEqual(yield* factory.informerFor(Resource.pods, { resyncPeriod: "60 seconds" }), first)
      assert.strictEqual(yield* factory.informerFor(Resource.pods), first)
      const error = yield* Effect.flip(factory.informerFor(Resource.pods, { resyncPeriod: "2 minutes" }))
      assert(error._tag === "InformerOptionsConflictError")
      assert.strictEqual(error.option, "resyncPeriod")
      assert.include(error.message, "120000ms requested, 60000ms in use")
    }))

  it.scoped("the resync period in use is the effective one (factory default, customResync)", () =>
    Effect.gen(function*() {
      const { factory } = yield* setup({
        resyncPeriod: "5 minutes",
        customResync: { "deployments.apps": "30 seconds" }
      })
      const pods = yield* factory.informerFor(Resource.pods)
      assert.strictEqual(yield* factory.informerFor(Resource.pods, { resyncPeriod: "5 minutes" }), pods)
      const deployments = yield* factory.informerFor(Resource.deployments)
      assert.strictEqual(yield* factory.informerFor(Resource.deployments, { resyncPeriod: "30 seconds" }), deployments)
      const error = yield* Effect.flip(factory.informerFor(Resource.deployments, { resyncPeriod: "5 minutes" }))
      assert(error._tag === "InformerOptionsConflictError")
      assert.include(error.message, "300000ms requested, 30000ms in use")
    }))

  it.scoped("an index name registered with another function is an InformerOptionsConflictError", () =>
    Effect.gen(function*() {
      const { factory } = yield* setup()
      const first = yield* factory.informerFor(Resource.pods, { indexers: { byApp } })
      assert.strictEqual(yield* factory.informerFor(Resource.pods, { indexers: { byApp } }), first)
      const error = yield* Effect.flip(factory.informerFor(Resource.pods, { indexers: { byApp: byTier } }))
      assert(error._tag === "InformerOptionsConflictError")
      assert.strictEqual(error.option, "indexers")
      assert.include(error.message, `index "byApp"`)
      // the built-in namespace index counts too: a typed conflict, not a defect
      const namespaceConflict = yield* Effect.flip(
        factory.informerFor(Resource.pods, { indexers: { [Indexer.namespaceIndex]: byTier } })
      )
      assert.strictEqual(namespaceConflict._tag, "InformerOptionsConflictError")
      // asking for the namespace index with its own function is fine
      assert.strictEqual<unknown>(
        yield* factory.informerFor(Resource.pods, {
          indexers: { [Indexer.namespaceIndex]: Indexer.metaNamespaceIndexFunction }
        }),
        first
      )
    }))

  it.scoped("a new index name on a later request is added to the existing informer", () =>
    Effect.gen(function*() {
      const { factory, fakes } = yield* setup()
      const fake = fakes.fakeFor(Resource.pods)
      yield* fake.add(obj("ns", "a", { app: "web", tier: "front" }))
      yield* fake.add(obj("ns", "b", { app: "db", tier: "back" }))
      const informer = yield* factory.informerFor(Resource.pods, { indexers: { byApp } })
      yield* factory.start
      yield* factory.waitForCacheSync()
      const again = yield* factory.informerFor(Resource.pods, { indexers: { byApp, byTier } })
      assert.strictEqual(again, informer)
      assert.deepStrictEqual(names(yield* informer.indexer.byIndex("byTier", "back")), ["ns/b"])
      assert.deepStrictEqual(names(yield* informer.indexer.byIndex("byApp", "web")), ["ns/a"])
      // later objects are indexed too
      yield* fake.add(obj("ns", "c", { tier: "back" }))
      yield* TestClock.adjust(0)
      assert.deepStrictEqual(names(yield* informer.indexer.byIndex("byTier", "back")), ["ns/b", "ns/c"])
    }))

  it.scoped("malformed selectors are typed parse errors", () =>
    Effect.gen(function*() {
      const { factory } = yield* setup()
      const label = yield* Effect.flip(factory.informerFor(Resource.pods, { labelSelector: "a in (b" }))
      assert.strictEqual(label._tag, "LabelSelectorParseError")
      const field = yield* Effect.flip(factory.informerFor(Resource.pods, { fieldSelector: "a~b" }))
      assert.strictEqual(field._tag, "FieldSelectorParseError")
      const lister = yield* Effect.flip(factory.listerFor(Resource.pods, { labelSelector: "=" }))
      assert.strictEqual(lister._tag, "LabelSelectorParseError")
      assert.lengthOf(yield* factory.status, 0)
    }))
})

// -------------------------------------------------------------------------------------------------
// lifecycle
// -------------------------------------------------------------------------------------------------

describe("InformerFactory - lifecycle", () => {
  it.scoped("start starts the informers created before it; a later start picks up new ones", () =>
    Effect.gen(function*() {
      const { factory } = yield* setup()
      const pods = yield* factory.informerFor(Resource.pods)
      assert.isFalse(yield* pods.isStarted)
      yield* factory.start
      assert.isTrue(yield* pods.isStarted)
      const nodes = yield* factory.informerFor(Resource.nodes)
      yield* TestClock.adjust(0)
      assert.isFalse(yield* nodes.isStarted)
      // waiting only covers started informers
      const statuses = yield* factory.waitForCacheSync()
      assert.deepStrictEqual(statuses.map((s) => s.informer), ["pods in all namespaces"])
      assert.isFalse(yield* nodes.hasSynced)
      yield* factory.start
      assert.isTrue(yield* nodes.isStarted)
      yield* factory.start // nothing left to start
      const all = yield* factory.waitForCacheSync()
      assert.deepStrictEqual(all.map((s) => [s.informer, s.synced]), [["pods in all namespaces", true], [
        "nodes",
        true
      ]])
    }))

  it.scoped("waitForCacheSync returns every started informer's status, all synced", () =>
    Effect.gen(function*() {
      const { factory, fakes } = yield* setup()
      yield* fakes.fakeFor(Resource.pods).add(obj("default", "web"))
      yield* fakes.fakeFor(Resource.nodes).add(obj(undefined, "node-1"))
      const pods = yield* factory.informerFor(Resource.pods, { namespace: "default" })
      yield* factory.informerFor(Resource.nodes)
      yield* factory.start
      const statuses = yield* factory.waitForCacheSync({ timeout: "1 second" })
      assert.deepStrictEqual(statuses, [
        { informer: "pods in default", synced: true, lastError: Option.none() },
        { informer: "nodes", synced: true, lastError: Option.none() }
      ])
      assert.deepStrictEqual(names(yield* pods.indexer.list), ["default/web"])
    }))

  it.scoped("waitForCacheSync times out with a CacheSyncError naming a 403", () =>
    Effect.gen(function*() {
      const { factory, fakes } = yield* setup({ reflector: { watchList: false } })
      yield* fakes.fakeFor(Resource.pods).failNextList(
        statusError(403, "Forbidden", `pods is forbidden: User "x" cannot list resource "pods"`),
        1000
      )
      yield* factory.informerFor(Resource.pods, { namespace: "default" })
      yield* factory.informerFor(Resource.nodes)
      yield* factory.start
      const fiber = yield* Effect.fork(Effect.flip(factory.waitForCacheSync({ timeout: "10 seconds" })))
      yield* TestClock.adjust("10 seconds")
      const error = yield* Fiber.join(fiber)
      assert.strictEqual(error._tag, "CacheSyncError")
      assert.isTrue(Duration.equals(error.timeout, Duration.seconds(10)))
      assert.include(error.message, "pods in default")
      assert.include(error.message, "StatusError (Forbidden)")
      assert.include(error.message, "cannot list resource")
      assert.notInclude(error.message, "nodes") // synced informers are not named
      const pods = error.informers.find((s) => s.informer === "pods in default")
      assert.isFalse(pods?.synced)
      assert.strictEqual(kindOf(pods!.lastError), "StatusError (Forbidden)")
      assert.isTrue(error.informers.find((s) => s.informer === "nodes")?.synced)
    }))

  it.scoped("waitForCacheSync names a 404 for a missing CRD", () =>
    Effect.gen(function*() {
      const { factory, fakes } = yield* setup({ reflector: { watchList: false } })
      yield* fakes.fakeFor(widgets).failNextList(
        statusError(404, "NotFound", "the server could not find the requested resource"),
        1000
      )
      yield* factory.informerFor(widgets)
      yield* factory.start
      const fiber = yield* Effect.fork(Effect.flip(factory.waitForCacheSync({ timeout: "5 seconds" })))
      yield* TestClock.adjust("5 seconds")
      const error = yield* Fiber.join(fiber)
      assert.strictEqual(error._tag, "CacheSyncError")
      assert.include(error.message, "widgets.example.com in all namespaces")
      assert.include(error.message, "StatusError (NotFound)")
      assert.include(error.message, "could not find the requested resource")
    }))

  it.scopedLive("waitForCacheSync names a 404 (a CRD the embedded API server does not serve) and a 403 over HTTP", () =>
    Effect.gen(function*() {
      const server = yield* ApiServer.make()
      const build = Layer.build(
        Informers.fromKubeConfig(Informers.kubeConfigFromOptions({ server: server.url }), {
          factory: { reflector: { watchList: false } }
        })
      )
      // 404: the server has no widgets.example.com
      const crd = Context.get(yield* build, InformerFactory.InformerFactory)
      yield* crd.informerFor(widgets)
      yield* crd.start
      const missing = yield* Effect.flip(crd.waitForCacheSync({ timeout: "1 second" }))
      assert.strictEqual(missing._tag, "CacheSyncError")
      assert.include(missing.message, "widgets.example.com in all namespaces")
      assert.include(missing.message, "StatusError (NotFound)")
      // 403: every LIST is forbidden
      yield* server.inject({ _tag: "ServerError", status: 403, count: 1000, on: "list" })
      const pods = Context.get(yield* build, InformerFactory.InformerFactory)
      yield* pods.informerFor(Resource.pods, { namespace: "default" })
      yield* pods.start
      const forbidden = yield* Effect.flip(pods.waitForCacheSync({ timeout: "1 second" }))
      assert.include(forbidden.message, "pods in default")
      assert.include(forbidden.message, "StatusError (Forbidden)")
      const status = forbidden.informers.find((s) => s.informer === "pods in default")
      assert.strictEqual(kindOf(status!.lastError), "StatusError (Forbidden)")
      yield* server.clearFaults
      yield* pods.waitForCacheSync({ timeout: "10 seconds" })
    }).pipe(Logger.withMinimumLogLevel(LogLevel.Error)))

  it.scoped("status reflects synced and the last error", () =>
    Effect.gen(function*() {
      const { factory, fakes } = yield* setup({ reflector: { watchList: false } })
      const forbidden = statusError(403, "Forbidden", "forbidden for a while")
      yield* fakes.fakeFor(Resource.pods).failNextList(forbidden, 1)
      yield* factory.informerFor(Resource.pods)
      assert.deepStrictEqual(yield* factory.status, [
        { informer: "pods in all namespaces", synced: false, lastError: Option.none() }
      ])
      yield* factory.start
      yield* TestClock.adjust(0)
      // (Effect hands the error on as a span-annotated proxy: compare fields, not identity)
      const [failing] = yield* factory.status
      assert.isFalse(failing.synced)
      assert.strictEqual(kindOf(failing.lastError), "StatusError (Forbidden)")
      assert.strictEqual(Option.getOrUndefined(failing.lastError)?.message, forbidden.message)
      yield* TestClock.adjust("1 minute")
      const [synced] = yield* factory.status
      assert.isTrue(synced.synced)
      // the last error seen stays visible after recovery
      assert.strictEqual(Option.getOrUndefined(synced.lastError)?.message, forbidden.message)
    }))

  it.scoped("shutdown stops every informer, is idempotent, and ends the factory", () =>
    Effect.gen(function*() {
      const { factory, fakes } = yield* setup()
      const pods = yield* factory.informerFor(Resource.pods)
      const nodes = yield* factory.informerFor(Resource.nodes)
      yield* factory.start
      yield* factory.waitForCacheSync()
      const notStarted = yield* factory.informerFor(Resource.configMaps)
      yield* TestClock.adjust(0)
      assert.strictEqual(yield* fakes.fakeFor(Resource.pods).openWatches, 1)
      assert.strictEqual(yield* fakes.fakeFor(Resource.nodes).openWatches, 1)
      yield* factory.shutdown
      assert.isTrue(yield* pods.isStopped)
      assert.isTrue(yield* nodes.isStopped)
      assert.isTrue(yield* notStarted.isStopped)
      assert.strictEqual(yield* fakes.fakeFor(Resource.pods).openWatches, 0)
      assert.strictEqual(yield* fakes.fakeFor(Resource.nodes).openWatches, 0)
      yield* factory.shutdown // idempotent
      const error = yield* Effect.flip(factory.informerFor(Resource.pods))
      assert.strictEqual(error._tag, "FactoryShutdownError")
      assert.strictEqual(error.message, "the informer factory has been shut down")
      assert.strictEqual((yield* Effect.flip(factory.listerFor(Resource.secrets)))._tag, "FactoryShutdownError")
      yield* factory.start // does nothing
      assert.isFalse(yield* notStarted.isStarted)
      assert.strictEqual(yield* fakes.fakeFor(Resource.configMaps).openWatches, 0)
    }))

  it.scoped("concurrent shutdowns all wait for the informers", () =>
    Effect.gen(function*() {
      const { factory } = yield* setup()
      const pods = yield* factory.informerFor(Resource.pods)
      yield* factory.start
      yield* factory.waitForCacheSync()
      yield* Effect.all([factory.shutdown, factory.shutdown, factory.shutdown], { concurrency: "unbounded" })
      assert.isTrue(yield* pods.isStopped)
    }))

  it.scoped("closing the factory's scope shuts it down", () =>
    Effect.gen(function*() {
      const context = yield* Layer.build(FakeListerWatcher.layerSource())
      const fakes = Context.get(context, FakeListerWatcher.FakeListerWatcherSource)
      const scope = yield* Scope.make()
      const factory = yield* InformerFactory.make().pipe(Effect.provide(context), Scope.extend(scope))
      const pods = yield* factory.informerFor(Resource.pods)
      yield* factory.start
      yield* factory.waitForCacheSync()
      yield* TestClock.adjust(0)
      assert.strictEqual(yield* fakes.fakeFor(Resource.pods).openWatches, 1)
      yield* Scope.close(scope, Exit.void)
      assert.isTrue(yield* pods.isStopped)
      assert.strictEqual(yield* fakes.fakeFor(Resource.pods).openWatches, 0)
      assert.strictEqual((yield* Effect.flip(factory.informerFor(Resource.pods)))._tag, "FactoryShutdownError")
    }))

  it.scoped("the layer shuts the factory down when released", () =>
    Effect.gen(function*() {
      const scope = yield* Scope.make()
      const context = yield* Layer.build(
        InformerFactory.layer().pipe(Layer.provideMerge(FakeListerWatcher.layerSource()))
      ).pipe(Scope.extend(scope))
      const factory = Context.get(context, InformerFactory.InformerFactory)
      const pods = yield* factory.informerFor(Resource.pods)
      yield* factory.start
      yield* factory.waitForCacheSync()
      yield* Scope.close(scope, Exit.void)
      assert.isTrue(yield* pods.isStopped)
    }))
})

// -------------------------------------------------------------------------------------------------
// factory options
// -------------------------------------------------------------------------------------------------

describe("InformerFactory - options", () => {
  it.scoped("per-informer reflector settings apply over the factory's; other settings later are a conflict", () =>
    Effect.gen(function*() {
      const { factory, fakes } = yield* setup({ reflector: { pageSize: 7 } })
      const fake = fakes.fakeFor(Resource.deployments)
      for (const i of [1, 2, 3]) yield* fake.add({ ...obj("ns", `d${i}`), apiVersion: "apps/v1", kind: "Deployment" })
      const reflector = { watchList: false, pageSize: 2 }
      const informer = yield* factory.informerFor(Resource.deployments, { reflector })
      yield* factory.start
      yield* factory.waitForCacheSync()
      assert.strictEqual((yield* informer.indexer.list).length, 3)
      const lists = (yield* fake.requests).filter((r) => r._tag === "List")
      assert.deepStrictEqual(lists.map((r) => r.options.limit), [2, 2])
      assert.strictEqual(yield* factory.informerFor(Resource.deployments, { reflector }), informer)
      // an equal literal is the same settings (compared structurally, durations by value)
      assert.strictEqual(
        yield* factory.informerFor(Resource.deployments, { reflector: { pageSize: 2, watchList: false } }),
        informer
      )
      const conflict = yield* Effect.flip(factory.informerFor(Resource.deployments, { reflector: { pageSize: 3 } }))
      assert.isTrue(conflict._tag === "InformerOptionsConflictError" && conflict.option === "reflector")
    }))

  it.scoped("reflector settings compared structurally: equal durations in other forms are no conflict", () =>
    Effect.gen(function*() {
      const { factory } = yield* setup()
      const informer = yield* factory.informerFor(Resource.pods, {
        reflector: { watchListTimeout: "1 minute", pageSize: undefined }
      })
      assert.strictEqual(
        yield* factory.informerFor(Resource.pods, { reflector: { watchListTimeout: Duration.seconds(60) } }),
        informer
      )
      assert.strictEqual(
        yield* factory.informerFor(Resource.pods, { reflector: { watchListTimeout: 60_000 } }),
        informer
      )
      const conflict = yield* Effect.flip(
        factory.informerFor(Resource.pods, { reflector: { watchListTimeout: "2 minutes" } })
      )
      assert.isTrue(conflict._tag === "InformerOptionsConflictError" && conflict.option === "reflector")
      const other = yield* Effect.flip(factory.informerFor(Resource.pods, { reflector: { watchList: false } }))
      assert.isTrue(other._tag === "InformerOptionsConflictError")
    }))

  it.scoped("tweakListOptions adjusts every informer's scope", () =>
    Effect.gen(function*() {
      const { factory, fakes } = yield* setup({
        tweakListOptions: (scope) => ({ ...scope, labelSelector: "tier=web" })
      })
      const fake = fakes.fakeFor(Resource.pods)
      yield* fake.add(obj("ns", "web-1", { tier: "web" }))
      yield* fake.add(obj("ns", "db-1", { tier: "db" }))
      const informer = yield* factory.informerFor(Resource.pods)
      assert.strictEqual(informer.name, "pods in all namespaces (tier=web)")
      // the tweak decides the scope: this is the same informer
      assert.strictEqual(yield* factory.informerFor(Resource.pods, { labelSelector: "tier=db" }), informer)
      yield* factory.start
      yield* factory.waitForCacheSync()
      assert.deepStrictEqual(names(yield* informer.indexer.list), ["ns/web-1"])
      yield* fake.add(obj("ns", "web-2", { tier: "web" }))
      yield* fake.add(obj("ns", "db-2", { tier: "db" }))
      yield* TestClock.adjust(0)
      assert.deepStrictEqual(names(yield* informer.indexer.list), ["ns/web-1", "ns/web-2"])
    }))

  it.scoped("a tweak producing a malformed selector is a parse error", () =>
    Effect.gen(function*() {
      const { factory } = yield* setup({ tweakListOptions: (scope) => ({ ...scope, fieldSelector: "nope" }) })
      const error = yield* Effect.flip(factory.informerFor(Resource.pods))
      assert.strictEqual(error._tag, "FieldSelectorParseError")
    }))

  it.scoped("the factory namespace is the default namespace", () =>
    Effect.gen(function*() {
      const { factory, fakes } = yield* setup({ namespace: "team-a" })
      const fake = fakes.fakeFor(Resource.pods)
      yield* fake.add(obj("team-a", "a"))
      yield* fake.add(obj("team-b", "b"))
      yield* fakes.fakeFor(Resource.nodes).add(obj(undefined, "node-1"))
      const inTeam = yield* factory.informerFor(Resource.pods)
      const everywhere = yield* factory.informerFor(Resource.pods, { namespace: "" })
      const nodes = yield* factory.informerFor(Resource.nodes)
      assert.notStrictEqual(inTeam, everywhere)
      assert.strictEqual(inTeam.name, "pods in team-a")
      assert.strictEqual(yield* factory.informerFor(Resource.pods, { namespace: "team-a" }), inTeam)
      yield* factory.start
      yield* factory.waitForCacheSync()
      assert.deepStrictEqual(names(yield* inTeam.indexer.list), ["team-a/a"])
      assert.deepStrictEqual(names(yield* everywhere.indexer.list), ["team-a/a", "team-b/b"])
      assert.deepStrictEqual(names(yield* nodes.indexer.list), ["/node-1"])
    }))

  it.scoped("customResync sets the resync period of one resource", () =>
    Effect.gen(function*() {
      const { factory, fakes } = yield* setup({ customResync: { "deployments.apps": "30 seconds" } })
      yield* fakes.fakeFor(Resource.deployments).add(obj("ns", "api"))
      yield* fakes.fakeFor(Resource.pods).add(obj("ns", "web"))
      const resyncs = { deployments: 0, pods: 0 }
      const deployments = yield* factory.informerFor(Resource.deployments)
      const pods = yield* factory.informerFor(Resource.pods)
      yield* deployments.addEventHandler({
        onUpdate: (o, n) =>
          Effect.sync(() => {
            if (resourceVersion(o) === resourceVersion(n)) resyncs.deployments++
          })
      })
      yield* pods.addEventHandler({ onUpdate: () => Effect.sync(() => resyncs.pods++) })
      yield* factory.start
      yield* factory.waitForCacheSync()
      yield* TestClock.adjust("95 seconds")
      assert.strictEqual(resyncs.deployments, 3)
      assert.strictEqual(resyncs.pods, 0)
    }))

  it.scoped("managedFields are stripped by default, without touching the source's objects", () =>
    Effect.gen(function*() {
      const { factory, fakes } = yield* setup()
      const managedFields = [{ manager: "kubectl", operation: "Apply" }]
      const fake = fakes.fakeFor(Resource.pods)
      yield* fake.add({ metadata: { namespace: "ns", name: "a", uid: "a", managedFields } })
      const informer = yield* factory.informerFor(Resource.pods)
      yield* factory.start
      yield* factory.waitForCacheSync()
      yield* fake.add({ metadata: { namespace: "ns", name: "b", uid: "b", managedFields } })
      yield* TestClock.adjust(0)
      const cached = yield* informer.indexer.list
      assert.lengthOf(cached, 2)
      for (const o of cached) {
        assert.isUndefined(o.metadata?.managedFields)
        assert.notProperty(o.metadata, "managedFields")
        assert.strictEqual(o.metadata?.namespace, "ns")
      }
      // the objects the source handed out are shared: they must not be mutated
      for (const o of yield* fake.objects) assert.deepStrictEqual(o.metadata?.managedFields, managedFields)
    }))

  it.scoped("stripManagedFields: false keeps managedFields", () =>
    Effect.gen(function*() {
      const { factory, fakes } = yield* setup({ stripManagedFields: false })
      const managedFields = [{ manager: "kubectl", operation: "Apply" }]
      yield* fakes.fakeFor(Resource.pods).add({ metadata: { namespace: "ns", name: "a", managedFields } })
      const informer = yield* factory.informerFor(Resource.pods)
      yield* factory.start
      yield* factory.waitForCacheSync()
      const [cached] = yield* informer.indexer.list
      assert.deepStrictEqual(cached.metadata?.managedFields, managedFields)
    }))

  it("stripManagedFields returns the object unchanged when there is nothing to strip", () => {
    const plain: KubeObject = { metadata: { name: "a" } }
    assert.strictEqual(InformerFactory.stripManagedFields(plain), plain)
    const withFields: KubeObject = { metadata: { name: "a", managedFields: [] }, spec: { x: 1 } } as KubeObject
    const stripped = InformerFactory.stripManagedFields(withFields)
    assert.deepStrictEqual(stripped, { metadata: { name: "a" }, spec: { x: 1 } } as KubeObject)
    assert.deepStrictEqual(withFields.metadata?.managedFields, [])
  })

  it.scoped("defaultTransform runs on every informer, before the informer's own transform", () =>
    Effect.gen(function*() {
      const { factory, fakes } = yield* setup({
        defaultTransform: (o) => ({ ...o, metadata: { ...o.metadata, annotations: { seen: "default" } } })
      })
      yield* fakes.fakeFor(Resource.pods).add(obj("ns", "a"))
      yield* fakes.fakeFor(Resource.configMaps).add(obj("ns", "c"))
      const pods = yield* factory.informerFor(Resource.pods, {
        transform: (o) => ({
          ...o,
          metadata: { ...o.metadata, labels: { after: o.metadata?.annotations?.seen ?? "none" } }
        })
      })
      const configMaps = yield* factory.informerFor(Resource.configMaps)
      yield* factory.start
      yield* factory.waitForCacheSync()
      const [pod] = yield* pods.indexer.list
      assert.deepStrictEqual(pod.metadata?.annotations, { seen: "default" })
      assert.deepStrictEqual(pod.metadata?.labels, { after: "default" })
      const [configMap] = yield* configMaps.indexer.list
      assert.deepStrictEqual(configMap.metadata?.annotations, { seen: "default" })
    }))

  it.scoped("listerFor reads the informer's cache", () =>
    Effect.gen(function*() {
      const { factory, fakes } = yield* setup()
      yield* fakes.fakeFor(Resource.pods).add(obj("ns", "a", { app: "web" }))
      yield* fakes.fakeFor(Resource.pods).add(obj("ns", "b", { app: "db" }))
      const lister = yield* factory.listerFor(Resource.pods)
      yield* factory.start
      yield* factory.waitForCacheSync()
      assert.deepStrictEqual(names(yield* lister.list("app=web")), ["ns/a"])
      assert.strictEqual((yield* lister.byNamespace("ns").get("b")).metadata?.name, "b")
    }))

  it.scoped("handlers see the informer's events through the factory", () =>
    Effect.gen(function*() {
      const { factory, fakes } = yield* setup()
      const informer = yield* factory.informerFor(Resource.pods)
      const seen = yield* Deferred.make<string>()
      yield* informer.addEventHandler({ onAdd: (o) => Deferred.succeed(seen, o.metadata?.name ?? "") })
      yield* factory.start
      yield* factory.waitForCacheSync()
      yield* fakes.fakeFor(Resource.pods).add(obj("ns", "late"))
      assert.strictEqual(yield* Deferred.await(seen), "late")
    }))
})

/**
 * Listers over an Indexer filled by the test and over a factory informer, and a port of client-go's
 * listers_test.go `TestListAll` at a smaller scale.
 */
import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Exit, Layer, Option, Result } from "effect"
import * as FakeListerWatcher from "../../src/FakeListerWatcher.js"
import * as Indexer from "../../src/Indexer.js"
import * as InformerFactory from "../../src/InformerFactory.js"
import type { KubeObject } from "../../src/KubeObject.js"
import * as LabelSelector from "../../src/LabelSelector.js"
import * as Lister from "../../src/Lister.js"
import * as Resource from "../../src/Resource.js"
import { namespacedNames as names, widgets } from "../fixtures/index.js"

// -------------------------------------------------------------------------------------------------
// helpers
// -------------------------------------------------------------------------------------------------

/** A minimal object; its type fits every catalog entry's object type. */
interface TestObject {
  readonly metadata: {
    readonly namespace?: string
    readonly name: string
    readonly labels?: Readonly<Record<string, string>>
  }
}

const obj = (namespace: string | undefined, name: string, labels?: Record<string, string>): TestObject => ({
  metadata: {
    ...(namespace === undefined ? {} : { namespace }),
    name,
    ...(labels === undefined ? {} : { labels })
  }
})

const withNamespaceIndex = { indexers: { [Indexer.namespaceIndex]: Indexer.metaNamespaceIndexFunction } }

const fill = (objects: ReadonlyArray<KubeObject>, options: Indexer.Indexer.Options<KubeObject> = withNamespaceIndex) =>
  Effect.gen(function*() {
    const indexer = yield* Indexer.make(options)
    for (const o of objects) yield* indexer.add(o)
    return indexer
  })

const pods: ReadonlyArray<TestObject> = [
  obj("prod", "web-1", { app: "web", tier: "front", env: "prod" }),
  obj("prod", "web-2", { app: "web", tier: "front", env: "prod", canary: "true" }),
  obj("prod", "db-1", { app: "db", tier: "back", env: "prod" }),
  obj("dev", "web-1", { app: "web", tier: "front", env: "dev" }),
  obj("dev", "cache-1", { app: "cache", env: "dev" }),
  obj("dev", "bare")
]

// -------------------------------------------------------------------------------------------------
// over an Indexer
// -------------------------------------------------------------------------------------------------

describe("Lister - over an Indexer", () => {
  it.effect("list() returns everything; a string or a LabelSelector filters", () =>
    Effect.gen(function*() {
      const lister = Lister.make(yield* fill(pods), Resource.pods)
      assert.deepStrictEqual(names(yield* lister.list()), names(pods))
      assert.deepStrictEqual(names(yield* lister.list("")), names(pods))
      assert.deepStrictEqual(names(yield* lister.list("app=web")), ["dev/web-1", "prod/web-1", "prod/web-2"])
      const selector = Result.getOrThrow(LabelSelector.parse("app=web,env=prod"))
      assert.deepStrictEqual(names(yield* lister.list(selector)), ["prod/web-1", "prod/web-2"])
      assert.deepStrictEqual(names(yield* lister.list(LabelSelector.everything)), names(pods))
      assert.deepStrictEqual(yield* lister.list(LabelSelector.nothing), [])
      assert.deepStrictEqual(yield* lister.list("app=none"), [])
    }))

  it.effect("every selector operator works through the lister", () =>
    Effect.gen(function*() {
      const lister = Lister.make(yield* fill(pods), Resource.pods)
      const cases: ReadonlyArray<readonly [string, ReadonlyArray<string>]> = [
        ["app=db", ["prod/db-1"]],
        ["app==db", ["prod/db-1"]],
        ["app!=web", ["dev/bare", "dev/cache-1", "prod/db-1"]],
        ["app in (db, cache)", ["dev/cache-1", "prod/db-1"]],
        ["app notin (web,db)", ["dev/bare", "dev/cache-1"]],
        ["canary", ["prod/web-2"]],
        ["!tier", ["dev/bare", "dev/cache-1"]],
        ["tier,!canary,env in (prod)", ["prod/db-1", "prod/web-1"]],
        ["app=web,app=db", []]
      ]
      for (const [selector, expected] of cases) {
        assert.deepStrictEqual(names(yield* lister.list(selector)), expected, selector)
        assert.deepStrictEqual(
          names(yield* lister.byNamespace("dev").list(selector)),
          expected.filter((n) => n.startsWith("dev/")),
          `dev: ${selector}`
        )
      }
    }))

  it.effect("a malformed selector is a typed LabelSelectorParseError, never a throw", () =>
    Effect.gen(function*() {
      const lister = Lister.make(yield* fill(pods), Resource.pods)
      for (const selector of ["app in (web", "=web", "app=web,", "a b", "app=(x)"]) {
        const exit = yield* Effect.exit(lister.list(selector))
        assert(Exit.isFailure(exit), selector)
        const error = yield* Effect.flip(lister.list(selector))
        assert.strictEqual(error._tag, "LabelSelectorParseError")
        assert.strictEqual(error.input, selector)
        const inNamespace = yield* Effect.flip(lister.byNamespace("prod").list(selector))
        assert.strictEqual(inNamespace._tag, "LabelSelectorParseError")
      }
      // building the effect never throws either
      assert.doesNotThrow(() => lister.list("(((("))
    }))

  it.effect("get(name) of a cluster-scoped object; NotFound reads like the API server", () =>
    Effect.gen(function*() {
      const lister = Lister.make(yield* fill([obj(undefined, "node-1"), obj(undefined, "node-2")]), Resource.nodes)
      assert.strictEqual((yield* lister.get("node-2")).metadata?.name, "node-2")
      const error = yield* Effect.flip(lister.get("node-3"))
      assert.strictEqual(error._tag, "NotFoundError")
      assert.strictEqual(error.message, `nodes "node-3" not found`)
      assert.strictEqual(error.resource, "nodes")
      assert.strictEqual(error.name, "node-3")
      assert.isUndefined(error.namespace)
    }))

  it.effect("byNamespace(ns).list(selector) and get(name)", () =>
    Effect.gen(function*() {
      const lister = Lister.make(yield* fill(pods), Resource.pods)
      assert.deepStrictEqual(names(yield* lister.byNamespace("prod").list()), ["prod/db-1", "prod/web-1", "prod/web-2"])
      assert.deepStrictEqual(names(yield* lister.byNamespace("prod").list("tier=front")), ["prod/web-1", "prod/web-2"])
      assert.deepStrictEqual(names(yield* lister.byNamespace("dev").list("tier=front")), ["dev/web-1"])
      assert.deepStrictEqual(yield* lister.byNamespace("missing").list(), [])
      const web = yield* lister.byNamespace("dev").get("web-1")
      assert.deepStrictEqual(web.metadata?.labels?.env, "dev")
      // the lister hands out the cached object itself
      assert.strictEqual(web, pods[3])
      const error = yield* Effect.flip(lister.byNamespace("dev").get("db-1"))
      assert.strictEqual(error._tag, "NotFoundError")
      assert.strictEqual(error.message, `pods "db-1" not found in namespace "dev"`)
      assert.strictEqual(error.namespace, "dev")
      // a namespaced object is not found by name alone
      assert.strictEqual((yield* Effect.flip(lister.get("web-1")))._tag, "NotFoundError")
      assert.strictEqual((yield* lister.get("dev/web-1")).metadata?.namespace, "dev")
    }))

  it.effect("NotFound names resource.group for grouped resources", () =>
    Effect.gen(function*() {
      const lister = Lister.make(yield* fill([obj("a", "api")]), Resource.deployments)
      assert.strictEqual((yield* Effect.flip(lister.get("x"))).message, `deployments.apps "x" not found`)
      assert.strictEqual(
        (yield* Effect.flip(lister.byNamespace("a").get("x"))).message,
        `deployments.apps "x" not found in namespace "a"`
      )
      const crd = Lister.make(yield* fill([]), widgets)
      assert.strictEqual((yield* Effect.flip(crd.get("w"))).message, `widgets.example.com "w" not found`)
    }))

  it.effect("byNamespace without the namespace index falls back to a scan", () =>
    Effect.gen(function*() {
      const indexer = yield* fill(pods, {})
      assert.isFalse(indexer.unsafeHasIndex(Indexer.namespaceIndex))
      const lister = Lister.make(indexer, Resource.pods)
      assert.deepStrictEqual(names(yield* lister.byNamespace("prod").list()), ["prod/db-1", "prod/web-1", "prod/web-2"])
      assert.deepStrictEqual(names(yield* lister.byNamespace("dev").list("app in (web,cache)")), [
        "dev/cache-1",
        "dev/web-1"
      ])
      assert.deepStrictEqual(yield* lister.byNamespace("dev").list(LabelSelector.nothing), [])
      assert.strictEqual((yield* lister.byNamespace("prod").get("db-1")).metadata?.name, "db-1")
    }))

  it.effect("byNamespace(\"\") is every namespace, as client-go's NamespaceAll", () =>
    Effect.gen(function*() {
      const objects = [...pods, obj(undefined, "cluster-thing")]
      for (const options of [withNamespaceIndex, {}]) {
        const lister = Lister.make(yield* fill(objects, options), Resource.pods)
        assert.deepStrictEqual(names(yield* lister.byNamespace("").list()), names(objects))
        assert.deepStrictEqual(names(yield* lister.byNamespace("").list("app=db")), ["prod/db-1"])
        assert.strictEqual((yield* lister.byNamespace("").get("cluster-thing")).metadata?.name, "cluster-thing")
        assert.strictEqual(
          (yield* Effect.flip(lister.byNamespace("").get("nope"))).message,
          `pods "nope" not found`
        )
      }
    }))

  it.effect("the nothing selector returns no objects", () =>
    Effect.gen(function*() {
      const lister = Lister.make(yield* fill(pods), Resource.pods)
      assert.deepStrictEqual(yield* lister.list(LabelSelector.nothing), [])
      assert.deepStrictEqual(yield* lister.byNamespace("prod").list(LabelSelector.nothing), [])
      // a null metav1.LabelSelector converts to nothing
      const fromNull = Result.getOrThrow(LabelSelector.fromLabelSelector(null))
      assert.deepStrictEqual(yield* lister.list(fromNull), [])
    }))

  it.effect("lists reflect later writes to the indexer", () =>
    Effect.gen(function*() {
      const indexer = yield* fill(pods)
      const lister = Lister.make(indexer, Resource.pods)
      yield* indexer.add(obj("prod", "web-3", { app: "web" }))
      yield* indexer.delete(pods[0])
      assert.deepStrictEqual(names(yield* lister.byNamespace("prod").list("app=web")), ["prod/web-2", "prod/web-3"])
      assert.strictEqual((yield* Effect.flip(lister.byNamespace("prod").get("web-1")))._tag, "NotFoundError")
    }))

  // client-go listers_test.go TestListAll: 100k objects / 10k labelled -> 10k; here 10k / 1k -> 1k.
  it.effect("TestListAll (10k objects, 1k labelled)", () =>
    Effect.gen(function*() {
      const indexer = yield* Indexer.make(withNamespaceIndex)
      for (let i = 0; i < 10_000; i++) {
        yield* indexer.add(
          obj(`ns-${i % 10}`, `pod-${i}`, i % 10 === 0 ? { matching: "true" } : { other: "true" })
        )
      }
      const lister = Lister.make(indexer, Resource.pods)
      assert.lengthOf(yield* lister.list("matching=true"), 1000)
      assert.lengthOf(yield* lister.list(LabelSelector.everything), 10_000)
      assert.lengthOf(yield* lister.list("matching=false"), 0)
      assert.lengthOf(yield* lister.byNamespace("ns-0").list("matching=true"), 1000)
      assert.lengthOf(yield* lister.byNamespace("ns-1").list("matching=true"), 0)
      assert.lengthOf(yield* lister.byNamespace("ns-1").list(), 1000)
    }))
})

// -------------------------------------------------------------------------------------------------
// over a factory informer
// -------------------------------------------------------------------------------------------------

describe("Lister - over a factory informer", () => {
  it.effect("lists and gets what the informer cached", () =>
    Effect.gen(function*() {
      const context = yield* Layer.build(
        InformerFactory.layer().pipe(Layer.provideMerge(FakeListerWatcher.layerSource()))
      )
      const fakes = Context.get(context, FakeListerWatcher.FakeListerWatcherSource)
      const factory = Context.get(context, InformerFactory.InformerFactory)
      const fake = fakes.fakeFor(Resource.pods)
      for (const p of pods) yield* fake.add(p)
      const lister = yield* factory.listerFor(Resource.pods)
      const informer = yield* factory.informerFor(Resource.pods)
      yield* factory.start
      yield* factory.waitForCacheSync()
      assert.deepStrictEqual(names(yield* lister.list()), names(pods))
      assert.deepStrictEqual(names(yield* lister.list("app in (web), env=prod")), ["prod/web-1", "prod/web-2"])
      assert.deepStrictEqual(names(yield* lister.byNamespace("dev").list("!tier")), ["dev/bare", "dev/cache-1"])
      const cached = yield* lister.byNamespace("prod").get("db-1")
      assert.strictEqual(cached, Option.getOrUndefined(yield* informer.indexer.getByKey("prod/db-1")))
      assert.strictEqual(
        (yield* Effect.flip(lister.byNamespace("prod").get("nope"))).message,
        `pods "nope" not found in namespace "prod"`
      )
      assert.strictEqual((yield* Effect.flip(lister.list("app in (")))._tag, "LabelSelectorParseError")
      // a scoped informer's lister only sees its scope
      const webInProd = yield* factory.listerFor(Resource.pods, { namespace: "prod", labelSelector: "app=web" })
      yield* factory.start
      yield* factory.waitForCacheSync()
      assert.deepStrictEqual(names(yield* webInProd.list()), ["prod/web-1", "prod/web-2"])
    }))
})

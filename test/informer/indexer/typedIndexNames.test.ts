/**
 * Index names at the type level: an informer, an indexer or a lister made with named indexers accepts
 * only those names (and the namespace index) in its queries; a wrong name is a compile error (the
 * `@ts-expect-error` lines below fail `tsc` if the error disappears). Without names, any string is
 * accepted, as before. The queries answer at run time as they always did.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as FakeListerWatcher from "../../../src/FakeListerWatcher.js"
import * as Indexer from "../../../src/Indexer.js"
import * as InformerFactory from "../../../src/InformerFactory.js"
import type { KubeObject } from "../../../src/KubeObject.js"
import * as Lister from "../../../src/Lister.js"
import * as Resource from "../../../src/Resource.js"
import * as SharedInformer from "../../../src/SharedInformer.js"
import { pod as fixturePod } from "../../fixtures/index.js"

const pod = (namespace: string, name: string, app: string, node: string): Resource.Pod =>
  fixturePod(name, { namespace, labels: { app }, spec: { containers: [], nodeName: node } }) as Resource.Pod

const byApp = (p: KubeObject) => [p.metadata?.labels?.app ?? ""]
const byNode = (p: Resource.Pod) => p.spec?.nodeName === undefined ? [] : [p.spec.nodeName]

const names = (objs: ReadonlyArray<KubeObject>) => objs.map((o) => o.metadata?.name).sort()

describe("typed index names", () => {
  it.effect("SharedInformer.make: indexer and lister accept the informer's index names only", () =>
    Effect.gen(function*() {
      const fake = yield* FakeListerWatcher.make<Resource.Pod>({
        initial: [pod("a", "web-1", "web", "n1"), pod("b", "db-1", "db", "n2")]
      })
      const informer = yield* SharedInformer.make(fake, { indexers: { byApp, byNode } })
      yield* informer.start
      yield* informer.synced
      assert.deepStrictEqual(names(yield* informer.indexer.byIndex("byApp", "web")), ["web-1"])
      assert.deepStrictEqual(names(yield* informer.indexer.byIndex("byNode", "n2")), ["db-1"])
      assert.deepStrictEqual(yield* informer.indexer.indexKeys(Indexer.namespaceIndex, "a"), ["a/web-1"])
      // @ts-expect-error "byOwner" is not an index of this informer
      const wrong = yield* Effect.flip(informer.indexer.byIndex("byOwner", "x"))
      assert.strictEqual(wrong._tag, "IndexNotFoundError")
      // @ts-expect-error index() and indexKeys() are typed alike
      yield* Effect.flip(informer.indexer.indexKeys("byOwner", "x"))

      const lister = Lister.make(informer.indexer, Resource.pods)
      assert.deepStrictEqual(names(yield* lister.byIndex("byNode", "n1")), ["web-1"])
      assert.deepStrictEqual(names(yield* lister.byIndex(Indexer.namespaceIndex, "b")), ["db-1"])
      // @ts-expect-error the lister is typed with the informer's names
      yield* Effect.flip(lister.byIndex("byname", "web-1"))

      // an index added later: addIndexers returns the view typed with the new name too (the same object)
      const widened = yield* informer.addIndexers({ byName: (p) => [p.metadata?.name ?? ""] })
      assert.strictEqual(widened, informer.indexer)
      assert.deepStrictEqual(names(yield* widened.byIndex("byName", "db-1")), ["db-1"])

      // a typed view is still a Reader / Lister of any name where one is expected
      const anyName: Indexer.Indexer.Reader<Resource.Pod> = informer.indexer
      const anyLister: Lister.Lister<Resource.Pod> = lister
      assert.strictEqual((yield* Effect.flip(anyName.byIndex("nope", "x")))._tag, "IndexNotFoundError")
      assert.strictEqual((yield* Effect.flip(anyLister.byIndex("nope", "x")))._tag, "IndexNotFoundError")
    }))

  it.effect("without named indexers any name compiles, as before", () =>
    Effect.gen(function*() {
      const fake = yield* FakeListerWatcher.make<Resource.Pod>()
      const informer = yield* SharedInformer.make(fake)
      const error = yield* Effect.flip(informer.indexer.byIndex("anything", "x"))
      assert.strictEqual(error._tag, "IndexNotFoundError")
      const indexer = yield* Indexer.make<KubeObject>({ indexers: { byApp } })
      yield* indexer.add(pod("a", "web-1", "web", "n1"))
      yield* indexer.addIndexers({ byNode: (o) => [String(o.metadata?.name)] })
      // Indexer.make is typed only when asked, since addIndexers may add names later
      assert.deepStrictEqual(names(yield* indexer.byIndex("byNode", "web-1")), ["web-1"])
    }))

  it("IndexName: the names of an Indexers value", () => {
    const _indexers = { byApp, byNode }
    const name: Indexer.IndexName<typeof _indexers> = "byNode"
    // @ts-expect-error not one of its names
    const other: Indexer.IndexName<typeof _indexers> = "byOwner"
    assert.deepStrictEqual([name, other], ["byNode", "byOwner"])
  })

  it.effect("Indexer.make with named indexes, when asked", () =>
    Effect.gen(function*() {
      const indexer = yield* Indexer.make<KubeObject, "byApp">({ indexers: { byApp } })
      yield* indexer.add(pod("a", "web-1", "web", "n1"))
      assert.deepStrictEqual(names(yield* indexer.reader.byIndex("byApp", "web")), ["web-1"])
      // @ts-expect-error not an index of this store
      yield* Effect.flip(indexer.reader.byIndex("byNode", "n1"))
      // listIndexFuncValues answers any name (empty for an unknown one, as in client-go)
      assert.deepStrictEqual(yield* indexer.listIndexFuncValues("unknown"), [])
    }))

  it.effect("InformerFactory: informerFor and listerFor are typed with the request's index names", () =>
    Effect.gen(function*() {
      const fakes = yield* FakeListerWatcher.FakeListerWatcherSource
      const factory = yield* InformerFactory.InformerFactory
      yield* fakes.fakeFor(Resource.pods).add(pod("a", "web-1", "web", "n1"))
      const informer = yield* factory.informerFor(Resource.pods, { indexers: { byNode } })
      const lister = yield* factory.listerFor(Resource.pods, { indexers: { byNode } })
      yield* factory.start
      yield* factory.waitForCacheSync()
      assert.deepStrictEqual(names(yield* informer.indexer.byIndex("byNode", "n1")), ["web-1"])
      assert.deepStrictEqual(names(yield* lister.byIndex("byNode", "n1")), ["web-1"])
      assert.deepStrictEqual(names(yield* lister.byIndex("namespace", "a")), ["web-1"])
      // @ts-expect-error "byApp" was not asked for
      yield* Effect.flip(lister.byIndex("byApp", "web"))
      // @ts-expect-error nor on the informer
      yield* Effect.flip(informer.indexer.byIndex("byApp", "web"))
      // untyped requests still take any name
      const untyped = yield* factory.listerFor(Resource.pods)
      assert.deepStrictEqual(names(yield* untyped.byIndex("byNode", "n1")), ["web-1"])
    }).pipe(
      Effect.provide(InformerFactory.layer()),
      Effect.provide(FakeListerWatcher.layerSource())
    ))
})

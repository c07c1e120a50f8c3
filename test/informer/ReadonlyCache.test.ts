/**
 * The read-only cache: an informer and its listers hand out `Indexer.Reader`, a view with no write member
 * and no reference to the store reachable from outside; only the informer's machinery writes its store.
 * A store a user builds with `Indexer.make` is theirs to write, and has a read-only view of its own.
 * The public DeltaFifo service has no synchronous enqueues and no sync-tracker option: those are the
 * informer's (internal/deltaFifo.ts).
 */
import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Layer, Option } from "effect"
import * as DeltaFifo from "../../src/DeltaFifo.js"
import * as FakeListerWatcher from "../../src/FakeListerWatcher.js"
import * as Indexer from "../../src/Indexer.js"
import * as InformerFactory from "../../src/InformerFactory.js"
import type { KubeObject } from "../../src/KubeObject.js"
import * as Lister from "../../src/Lister.js"
import type * as Reflector from "../../src/Reflector.js"
import * as Resource from "../../src/Resource.js"
import * as SharedInformer from "../../src/SharedInformer.js"
import { pod as fixturePod, settle } from "../fixtures/index.js"

/** The suite's pods: uid `namespace/name`, labels always present. */
const pod = (namespace: string, name: string, labels: Record<string, string> = {}, rv?: string): KubeObject =>
  fixturePod(name, { namespace, uid: `${namespace}/${name}`, labels, rv })

const names = (objects: ReadonlyArray<KubeObject>): ReadonlyArray<string> =>
  objects.map((o) => `${o.metadata?.namespace}/${o.metadata?.name}`).sort()

/** Every member a writer has and a reader must not. */
const writeMembers = [
  "add",
  "update",
  "delete",
  "replace",
  "resync",
  "bookmark",
  "addIndexers",
  "reader",
  "unsafeAdd",
  "unsafeDelete",
  "unsafeReplace",
  "unsafeBookmark"
] as const

const assertReadOnly = (view: object) => {
  for (const member of writeMembers) assert.isFalse(member in view, `the view has ${member}`)
  assert.isTrue(Object.isFrozen(view), "the view is frozen")
  assert.strictEqual(Object.getPrototypeOf(view), Object.prototype, "a plain object: no class to reach")
  // one level down: no member is (or holds) something with a write member
  for (const [name, value] of Object.entries(view)) {
    if (typeof value === "object" && value !== null) {
      for (const member of writeMembers) assert.isFalse(member in value, `view.${name} has ${member}`)
    }
  }
  // nothing can be added to it (modules are strict: assignment to a frozen object throws)
  assert.throws(() => {
    ;(view as { add?: unknown }).add = () => Effect.void
  }, TypeError)
}

describe("the informer's cache is read-only", () => {
  it.effect("informer.indexer has no write members (types)", () =>
    Effect.gen(function*() {
      const fake = yield* FakeListerWatcher.make()
      const informer = yield* SharedInformer.make(fake, { name: "pods" })
      const view: Indexer.Indexer.Reader<KubeObject> = informer.indexer
      // Type-level: each line below fails to compile (tsc -p tsconfig.json runs over test/).
      const attempts = [
        // @ts-expect-error the view has no add
        () => view.add(pod("ns", "a")),
        // @ts-expect-error the view has no update
        () => view.update(pod("ns", "a")),
        // @ts-expect-error the view has no delete
        () => view.delete(pod("ns", "a")),
        // @ts-expect-error the view has no replace
        () => view.replace([], "1"),
        // @ts-expect-error the view has no bookmark
        () => view.bookmark("1"),
        // @ts-expect-error the view has no resync
        () => view.resync,
        // @ts-expect-error the view has no addIndexers (the informer's own addIndexers is the way)
        () => view.addIndexers({}),
        // @ts-expect-error the view has no synchronous writes
        () => view.unsafeAdd("ns/a", pod("ns", "a")),
        // @ts-expect-error the view has no synchronous writes
        () => view.unsafeDelete("ns/a", undefined),
        // @ts-expect-error the view has no synchronous writes
        () => view.unsafeReplace([], "1"),
        // @ts-expect-error the view has no synchronous writes
        () => view.unsafeBookmark("1")
      ]
      assert.lengthOf(attempts, 11)
      // @ts-expect-error a Reader is not a Service: the informer's store is not reachable for writing
      const writable: Indexer.Indexer.Service<KubeObject> = informer.indexer
      assert.isDefined(writable)
      // a Service is a Reader: listers take either
      const own: Indexer.Indexer.Reader<KubeObject> = yield* Indexer.make()
      assert.isDefined(own)
    }))

  it.effect("informer.indexer has no write members (run time), and is one object", () =>
    Effect.gen(function*() {
      const fake = yield* FakeListerWatcher.make()
      const informer = yield* SharedInformer.make(fake, { name: "pods" })
      assertReadOnly(informer.indexer)
      assert.strictEqual(informer.indexer, informer.indexer)
      const other = yield* SharedInformer.make(fake, { name: "pods-again" })
      assert.notStrictEqual(other.indexer, informer.indexer)
      // a cast reaches no write either: the members are simply absent
      const cast = informer.indexer as unknown as Indexer.Indexer.Service<KubeObject>
      assert.isUndefined(cast.add)
      assert.isUndefined((cast as unknown as Record<string, unknown>)["unsafeAdd"])
    }))

  it.effect("the view follows what the informer's machinery writes (through the fake source)", () =>
    Effect.gen(function*() {
      const fake = yield* FakeListerWatcher.make()
      yield* fake.add(pod("prod", "web-1", { app: "web" }))
      const informer = yield* SharedInformer.make(fake, {
        name: "pods",
        indexers: { byApp: (o) => [o.metadata?.labels?.app ?? ""] }
      })
      yield* informer.start
      yield* settle
      yield* informer.synced
      const view = informer.indexer
      assert.deepStrictEqual(names(yield* view.list), ["prod/web-1"])
      yield* fake.add(pod("prod", "web-2", { app: "web" }))
      yield* fake.add(pod("dev", "db-1", { app: "db" }))
      yield* settle
      assert.deepStrictEqual(names(yield* view.byIndex("byApp", "web")), ["prod/web-1", "prod/web-2"])
      assert.deepStrictEqual(yield* view.indexKeys(Indexer.namespaceIndex, "dev"), ["dev/db-1"])
      assert.strictEqual(yield* view.size, 3)
      assert.strictEqual(view.unsafeSize(), 3)
      const deleted = yield* fake.delete(pod("prod", "web-1"))
      yield* settle
      assert.deepStrictEqual((yield* view.listKeys).slice().sort(), ["dev/db-1", "prod/web-2"])
      assert.isTrue(Option.isNone(yield* view.getByKey("prod/web-1")))
      assert.strictEqual(yield* view.lastResourceVersion, deleted.metadata?.resourceVersion)
      // indexes are added through the informer, not the view
      // (the view is typed with the names the informer was made with; addIndexers returns it with the new ones)
      const withByName = yield* informer.addIndexers({ byName: (o) => [o.metadata?.name ?? ""] })
      assert.strictEqual(withByName, view)
      assert.deepStrictEqual(names(yield* withByName.byIndex("byName", "db-1")), ["dev/db-1"])
      assertReadOnly(view)
    }))

  it.effect("listers work on the view: made by hand, and the factory's", () =>
    Effect.gen(function*() {
      const fake = yield* FakeListerWatcher.make()
      yield* fake.add(pod("prod", "web-1", { app: "web" }))
      yield* fake.add(pod("prod", "db-1", { app: "db" }))
      yield* fake.add(pod("dev", "web-1", { app: "web" }))
      const informer = yield* SharedInformer.make(fake, { name: "pods" })
      yield* informer.start
      yield* settle
      yield* informer.synced
      const lister = Lister.make(informer.indexer, Resource.pods)
      assert.deepStrictEqual(names(yield* lister.list("app=web")), ["dev/web-1", "prod/web-1"])
      assert.deepStrictEqual(names(yield* lister.byNamespace("prod").list()), ["prod/db-1", "prod/web-1"])
      assert.deepStrictEqual(names(yield* lister.byNamespace("").list("app=db")), ["prod/db-1"])
      const cached = yield* lister.byNamespace("dev").get("web-1")
      assert.strictEqual(cached, informer.indexer.unsafeGetByKey("dev/web-1"), "the cached object itself")
      yield* fake.delete(pod("dev", "web-1"))
      yield* settle
      assert.strictEqual((yield* Effect.flip(lister.byNamespace("dev").get("web-1")))._tag, "NotFoundError")

      const context = yield* Layer.build(
        InformerFactory.layer().pipe(Layer.provideMerge(FakeListerWatcher.layerSource()))
      )
      const factory = Context.get(context, InformerFactory.InformerFactory)
      const fakes = Context.get(context, FakeListerWatcher.FakeListerWatcherSource)
      yield* fakes.fakeFor(Resource.pods).add({
        metadata: { namespace: "prod", name: "api-1", labels: { app: "api" } }
      })
      const pods = yield* factory.listerFor(Resource.pods)
      const podInformer = yield* factory.informerFor(Resource.pods)
      yield* factory.start
      yield* factory.waitForCacheSync()
      assert.deepStrictEqual(names(yield* pods.list("app=api")), ["prod/api-1"])
      assertReadOnly(podInformer.indexer)
    }))
})

describe("a user-made Indexer is the user's to write", () => {
  it.effect("Indexer.make: writes, reads, and a read-only view of its own", () =>
    Effect.gen(function*() {
      const indexer = yield* Indexer.make({
        indexers: { [Indexer.namespaceIndex]: Indexer.metaNamespaceIndexFunction }
      })
      const view = indexer.reader
      assert.strictEqual(indexer.reader, view, "built once")
      assertReadOnly(view)
      yield* indexer.add(pod("prod", "web-1", { app: "web" }, "1"))
      yield* indexer.update(pod("prod", "web-1", { app: "web" }, "2"))
      yield* indexer.add(pod("dev", "web-1", { app: "web" }, "3"))
      assert.deepStrictEqual(names(yield* view.list), ["dev/web-1", "prod/web-1"])
      assert.strictEqual(yield* view.lastResourceVersion, "3")
      yield* indexer.delete(pod("dev", "web-1"))
      assert.deepStrictEqual(yield* view.listKeys, ["prod/web-1"])
      yield* indexer.replace([pod("prod", "db-1", { app: "db" }, "4")], "10")
      assert.deepStrictEqual(yield* view.listKeys, ["prod/db-1"])
      assert.strictEqual(yield* view.lastResourceVersion, "10")
      yield* indexer.bookmark("11")
      assert.strictEqual(yield* view.lastResourceVersion, "11")
      yield* indexer.addIndexers({ byApp: (o) => [o.metadata?.labels?.app ?? ""] })
      assert.deepStrictEqual(yield* view.indexKeys("byApp", "db"), ["prod/db-1"])
      // listers over the service or its view read the same store
      const overService = Lister.make(indexer, Resource.pods)
      const overView = Lister.make(view, Resource.pods)
      yield* indexer.add(pod("prod", "web-2", { app: "web" }, "12"))
      assert.deepStrictEqual(names(yield* overService.byNamespace("prod").list()), ["prod/db-1", "prod/web-2"])
      assert.deepStrictEqual(names(yield* overView.byNamespace("prod").list()), ["prod/db-1", "prod/web-2"])
    }))

  it.effect("Indexer.layer provides a writable store", () =>
    Effect.gen(function*() {
      const indexer = yield* Indexer.Indexer
      yield* indexer.add(pod("ns", "a"))
      assert.deepStrictEqual(yield* indexer.reader.listKeys, ["ns/a"])
    }).pipe(Effect.provide(Indexer.layer())))

  it.effect("the empty answers handed out are frozen", () =>
    Effect.gen(function*() {
      const indexer = yield* Indexer.make({ indexers: { byApp: (o) => [o.metadata?.labels?.app ?? ""] } })
      const none = yield* indexer.reader.byIndex("byApp", "nothing")
      assert.isTrue(Object.isFrozen(none))
      assert.isTrue(Object.isFrozen(yield* indexer.reader.listIndexFuncValues("no-such-index")))
    }))
})

describe("the public DeltaFifo has no synchronous enqueues", () => {
  it.effect("types: no unsafe, no syncTracker option; a user's queue is still a Reflector store", () =>
    Effect.gen(function*() {
      const fifo = yield* DeltaFifo.make()
      // @ts-expect-error the synchronous enqueues are the informer's (internal/deltaFifo.ts)
      void fifo.unsafe
      // @ts-expect-error the sync tracker option is internal
      yield* DeltaFifo.make({ syncTracker: undefined })
      const store: Reflector.Store<KubeObject, DeltaFifo.EnqueueError> = fifo
      yield* store.add(pod("ns", "a"))
      assert.deepStrictEqual(yield* fifo.listKeys, ["ns/a"])
    }))
})

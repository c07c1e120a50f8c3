import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Indexer from "../src/Indexer.js"
import * as IndexerStore from "../src/internal/indexerStore.js"
import type { KubeObject } from "../src/KubeObject.js"
import { DeletedFinalStateUnknown } from "../src/KubeObject.js"

// -------------------------------------------------------------------------------------------------
// fixtures
// -------------------------------------------------------------------------------------------------

interface Pod extends KubeObject {
  readonly metadata: {
    readonly name: string
    readonly namespace?: string | undefined
    readonly resourceVersion?: string | undefined
    readonly labels?: { readonly [key: string]: string } | undefined
    readonly annotations?: { readonly [key: string]: string } | undefined
  }
}

const pod = (
  name: string,
  extra: {
    readonly namespace?: string
    readonly rv?: string
    readonly labels?: { readonly [key: string]: string }
    readonly annotations?: { readonly [key: string]: string }
  } = {}
): Pod => ({
  metadata: {
    name,
    namespace: extra.namespace,
    resourceVersion: extra.rv,
    labels: extra.labels,
    annotations: extra.annotations
  }
})

const names = (objs: ReadonlyArray<Pod>): ReadonlyArray<string> => objs.map((o) => o.metadata.name).sort()

/** client-go's `testStoreObject`: keyed by `id`, indexed by `val`. */
interface StoreObject {
  readonly id: string
  readonly val: string
}

const mkObj = (id: string, val: string): StoreObject => ({ id, val })

const storeKeyFunction: Indexer.KeyFunction<StoreObject> = (obj) =>
  Either.right(obj instanceof DeletedFinalStateUnknown ? obj.key : obj.id)

const vals = (objs: ReadonlyArray<StoreObject>): ReadonlyArray<string> => objs.map((o) => o.val).sort()
const ids = (objs: ReadonlyArray<StoreObject>): ReadonlyArray<string> => objs.map((o) => o.id).sort()

/**
 * A store with its internal writer (`unsafeAdd`, `unsafeDelete`, `unsafeReplace`, `unsafeBookmark`): the
 * synchronous core the informer's controller writes through, which `Indexer.make`'s service does not offer.
 */
const writable = <A = KubeObject>(options: Indexer.Indexer.Options<A> = {}): IndexerStore.IndexerStore<A> =>
  IndexerStore.make<A>({
    keyFunction: options.keyFunction ?? Indexer.deletionHandlingMetaNamespaceKey,
    indexers: options.indexers
  })

/** A store of comma-separated strings indexed by their parts (client-go's thread_safe_store_test). */
const commaStore = () =>
  writable<string>({
    keyFunction: (obj) => Either.right(obj instanceof DeletedFinalStateUnknown ? obj.key : obj),
    indexers: { testIndexer: (obj) => obj.split(",") }
  })

// -------------------------------------------------------------------------------------------------
// index_test.go
// -------------------------------------------------------------------------------------------------

describe("index_test", () => {
  it.effect("TestGetIndexFuncValues: index on label foo, pods bar,bar,biz -> values {bar,biz}", () =>
    Effect.gen(function*() {
      const index = Indexer.unsafeMake<Pod>({
        indexers: { testmodes: (obj) => [obj.metadata.labels?.foo ?? ""] }
      })
      yield* index.add(pod("one", { labels: { foo: "bar" } }))
      yield* index.add(pod("two", { labels: { foo: "bar" } }))
      yield* index.add(pod("tre", { labels: { foo: "biz" } }))
      const values = yield* index.listIndexFuncValues("testmodes")
      assert.deepStrictEqual([...values].sort(), ["bar", "biz"])
    }))

  it.effect("TestMultiIndexKeys: multi-valued byUser index follows add, delete and update", () =>
    Effect.gen(function*() {
      const index = Indexer.unsafeMake<Pod>({
        indexers: { byUser: (obj) => (obj.metadata.annotations?.users ?? "").split(",") }
      })
      const pod1 = pod("one", { annotations: { users: "ernie,bert" } })
      const pod2 = pod("two", { annotations: { users: "bert,oscar" } })
      const pod3 = pod("tre", { annotations: { users: "ernie,elmo" } })
      yield* index.add(pod1)
      yield* index.add(pod2)
      yield* index.add(pod3)

      const expected: ReadonlyArray<readonly [string, ReadonlyArray<string>]> = [
        ["ernie", ["one", "tre"]],
        ["bert", ["one", "two"]],
        ["elmo", ["tre"]],
        ["oscar", ["two"]],
        ["elmo1", []]
      ]
      for (const [user, pods] of expected) {
        assert.deepStrictEqual(names(yield* index.byIndex("byUser", user)), pods, user)
      }

      yield* index.delete(pod3)
      assert.deepStrictEqual(names(yield* index.byIndex("byUser", "ernie")), ["one"])
      assert.deepStrictEqual(names(yield* index.byIndex("byUser", "elmo")), [])

      yield* index.update(pod("two", { annotations: { users: "oscar" } }))
      assert.deepStrictEqual(names(yield* index.byIndex("byUser", "bert")), ["one"])
    }))
})

// -------------------------------------------------------------------------------------------------
// thread_safe_store_test.go
// -------------------------------------------------------------------------------------------------

describe("thread_safe_store_test", () => {
  it.effect("TestThreadSafeStoreDeleteRemovesEmptySetsFromIndex: deleting the only key of a value drops the value", () =>
    Effect.gen(function*() {
      const store = writable<string>({ indexers: { testIndexer: (obj) => [obj] } })
      store.unsafeAdd("testKey", "testKey")
      assert.deepStrictEqual(yield* store.indexKeys("testIndexer", "testKey"), ["testKey"])
      assert.deepStrictEqual(yield* store.listIndexFuncValues("testIndexer"), ["testKey"])

      store.unsafeDelete("testKey", undefined)
      assert.deepStrictEqual(yield* store.indexKeys("testIndexer", "testKey"), [])
      assert.deepStrictEqual(yield* store.listIndexFuncValues("testIndexer"), [])
    }))

  it.effect("TestThreadSafeStoreAddKeepsNonEmptySetPostDeleteFromIndex: a shared value keeps its other key", () =>
    Effect.gen(function*() {
      const store = writable<string>({ indexers: { testIndexer: () => ["testIndex"] } })
      store.unsafeAdd("retain", "retain")
      store.unsafeAdd("delete", "delete")
      assert.deepStrictEqual(yield* store.indexKeys("testIndexer", "testIndex"), ["delete", "retain"])

      store.unsafeDelete("delete", undefined)
      assert.deepStrictEqual(yield* store.listIndexFuncValues("testIndexer"), ["testIndex"])
      assert.deepStrictEqual(yield* store.indexKeys("testIndexer", "testIndex"), ["retain"])
    }))

  it.effect("TestThreadSafeStoreIndexingFunctionsWithMultipleValues: membership exact after every step", () =>
    Effect.gen(function*() {
      const store = commaStore()
      const compare = (value: string, expected: ReadonlyArray<string>) =>
        Effect.map(store.indexKeys("testIndexer", value), (keys) => assert.deepStrictEqual(keys, expected, value))

      store.unsafeAdd("key1", "foo")
      store.unsafeAdd("key2", "bar")
      yield* compare("foo", ["key1"])
      yield* compare("bar", ["key2"])

      store.unsafeAdd("key2", "foo,bar")
      yield* compare("foo", ["key1", "key2"])
      yield* compare("bar", ["key2"])

      store.unsafeAdd("key1", "foo,bar")
      yield* compare("foo", ["key1", "key2"])
      yield* compare("bar", ["key1", "key2"])

      store.unsafeAdd("key3", "foo,bar,baz")
      yield* compare("foo", ["key1", "key2", "key3"])
      yield* compare("bar", ["key1", "key2", "key3"])
      yield* compare("baz", ["key3"])

      store.unsafeAdd("key1", "foo")
      yield* compare("foo", ["key1", "key2", "key3"])
      yield* compare("bar", ["key2", "key3"])
      yield* compare("baz", ["key3"])

      store.unsafeAdd("key2", "bar")
      yield* compare("foo", ["key1", "key3"])
      yield* compare("bar", ["key2", "key3"])
      yield* compare("baz", ["key3"])

      store.unsafeDelete("key1", undefined)
      yield* compare("foo", ["key3"])
      yield* compare("bar", ["key2", "key3"])
      yield* compare("baz", ["key3"])

      store.unsafeDelete("key3", undefined)
      yield* compare("foo", [])
      yield* compare("bar", ["key2"])
      yield* compare("baz", [])
      assert.deepStrictEqual(yield* store.listIndexFuncValues("testIndexer"), ["bar"])
    }))

  const meta = (rv: string): KubeObject => ({ metadata: { resourceVersion: rv } })

  it.effect("TestThreadSafeStoreRV: Initial state is \"\"", () =>
    Effect.gen(function*() {
      const store = Indexer.unsafeMake<unknown>()
      assert.strictEqual(yield* store.lastResourceVersion, "")
    }))

  it.effect("TestThreadSafeStoreRV: Add Update and Delete -> last write wins, non-meta and key-only deletes keep it", () =>
    Effect.gen(function*() {
      const store = writable<unknown>()
      const steps: ReadonlyArray<readonly [string, () => void, string]> = [
        ["add rv10", () => store.unsafeAdd("key1", meta("10")), "10"],
        ["add same rv10", () => store.unsafeAdd("key3", meta("10")), "10"],
        ["add higher rv20", () => store.unsafeAdd("key4", meta("20")), "20"],
        ["delete with object rv30", () => store.unsafeDelete("key4", meta("30")), "30"],
        ["add non-meta object", () => store.unsafeAdd("key5", "just a string"), "30"],
        ["add rv40", () => store.unsafeAdd("key6", meta("40")), "40"],
        ["delete without object", () => store.unsafeDelete("key6", undefined), "40"],
        // No transactions here: the transaction (40, 30, 50) is three writes in a row; the last one wins.
        ["txn update rv40", () => store.unsafeAdd("key9", meta("40")), "40"],
        ["txn update rv30", () => store.unsafeAdd("key10", meta("30")), "30"],
        ["txn update rv50", () => store.unsafeAdd("key11", meta("50")), "50"],
        // As client-go's meta accessor: an object with metadata but no resourceVersion sets it to "".
        ["add object without resourceVersion", () => store.unsafeAdd("key12", { metadata: { name: "key12" } }), ""]
      ]
      for (const [step, run, expected] of steps) {
        run()
        assert.strictEqual(yield* store.lastResourceVersion, expected, step)
      }
    }))

  it.effect("TestThreadSafeStoreRV: Replace -> the replace's resourceVersion", () =>
    Effect.gen(function*() {
      const store = writable<KubeObject>()
      store.unsafeAdd("key1", meta("10"))
      assert.strictEqual(yield* store.lastResourceVersion, "10")
      yield* store.replace([pod("key3", { rv: "40" }), pod("key2", { rv: "30" })], "50")
      assert.strictEqual(yield* store.lastResourceVersion, "50")
    }))

  it.effect("TestThreadSafeStoreRV: Delete -> a delete with an object records the object's rv (20 after 10)", () =>
    Effect.gen(function*() {
      const store = writable<KubeObject>()
      store.unsafeAdd("key1", meta("10"))
      store.unsafeDelete("key1", meta("20"))
      assert.strictEqual(yield* store.lastResourceVersion, "20")
    }))

  it.effect("lastResourceVersion table: tombstones, key-only deletes, bookmarks, replace and failed writes", () =>
    Effect.gen(function*() {
      const store = writable<Pod>({
        indexers: {
          strict: (obj) => {
            if (obj.metadata.labels?.bad === "true") throw new Error("bad")
            return []
          }
        }
      })
      const steps: ReadonlyArray<readonly [string, Effect.Effect<unknown, unknown>, string]> = [
        ["add rv5", store.add(pod("a", { rv: "5" })), "5"],
        [
          "tombstone delete of a present key",
          store.delete(new DeletedFinalStateUnknown({ key: "a", obj: pod("a", { rv: "6" }) })),
          "5"
        ],
        ["add rv7", store.add(pod("b", { rv: "7" })), "7"],
        ["key-only delete of an absent key", Effect.sync(() => store.unsafeDelete("zzz", undefined)), "7"],
        [
          "tombstone delete of an absent key",
          store.delete(new DeletedFinalStateUnknown<Pod>({ key: "zzz", obj: undefined })),
          "7"
        ],
        // As client-go's DeleteWithObject: a delete that carries an object records its rv even for an absent key.
        ["delete with object of an absent key", store.delete(pod("zzz", { rv: "8" })), "8"],
        ["update to a lower rv (last write wins, not max)", store.update(pod("b", { rv: "3" })), "3"],
        [
          "failed write (index function throws)",
          Effect.either(store.add(pod("d", { rv: "99", labels: { bad: "true" } }))),
          "3"
        ],
        ["bookmark", store.bookmark("100"), "100"],
        ["replace", store.replace([pod("e", { rv: "20" })], "90"), "90"],
        ["failed replace", Effect.either(store.replace([pod("f", { rv: "1", labels: { bad: "true" } })], "91")), "90"]
      ]
      for (const [step, run, expected] of steps) {
        yield* run
        assert.strictEqual(yield* store.lastResourceVersion, expected, step)
      }
    }))
})

// -------------------------------------------------------------------------------------------------
// store_test.go
// -------------------------------------------------------------------------------------------------

describe("store_test", () => {
  it.effect("TestCache: Add/Get, Update overwrites, Delete removes, List exactly 3, Replace leaves exactly 2", () =>
    Effect.gen(function*() {
      const store = Indexer.unsafeMake<StoreObject>({ keyFunction: storeKeyFunction })

      yield* store.add(mkObj("foo", "bar"))
      assert.deepStrictEqual(yield* store.get(mkObj("foo", "")), Option.some(mkObj("foo", "bar")))
      yield* store.update(mkObj("foo", "baz"))
      assert.deepStrictEqual(yield* store.get(mkObj("foo", "")), Option.some(mkObj("foo", "baz")))
      yield* store.delete(mkObj("foo", ""))
      assert.isTrue(Option.isNone(yield* store.get(mkObj("foo", ""))))

      yield* store.add(mkObj("a", "b"))
      yield* store.add(mkObj("c", "d"))
      yield* store.add(mkObj("e", "e"))
      assert.deepStrictEqual(vals(yield* store.list), ["b", "d", "e"])
      assert.deepStrictEqual([...(yield* store.listKeys)].sort(), ["a", "c", "e"])
      assert.strictEqual(yield* store.size, 3)

      yield* store.replace([mkObj("foo", "foo"), mkObj("bar", "bar")], "0")
      assert.deepStrictEqual(vals(yield* store.list), ["bar", "foo"])
      assert.strictEqual(yield* store.size, 2)
      assert.deepStrictEqual(yield* store.getByKey("bar"), Option.some(mkObj("bar", "bar")))
      assert.isTrue(Option.isNone(yield* store.getByKey("a")))
    }))

  it.effect("TestIndex: Index(\"by_val\", probe) returns every object sharing the probe's value", () =>
    Effect.gen(function*() {
      const indexer = Indexer.unsafeMake<StoreObject>({
        keyFunction: storeKeyFunction,
        indexers: { by_val: (obj) => [obj.val] }
      })
      yield* indexer.add(mkObj("a", "b"))
      yield* indexer.add(mkObj("c", "b"))
      yield* indexer.add(mkObj("e", "f"))
      yield* indexer.add(mkObj("g", "h"))
      const expected: ReadonlyArray<readonly [string, ReadonlyArray<string>]> = [
        ["b", ["a", "c"]],
        ["f", ["e"]],
        ["h", ["g"]],
        ["nope", []]
      ]
      for (const [val, expectedIds] of expected) {
        assert.deepStrictEqual(ids(yield* indexer.index("by_val", mkObj("", val))), expectedIds, val)
      }
    }))

  it.effect("TestIndex: a multi-valued probe returns the union of the keys of each of its values", () =>
    Effect.gen(function*() {
      const store = commaStore()
      store.unsafeAdd("x", "a")
      store.unsafeAdd("y", "a,b")
      store.unsafeAdd("z", "c")
      const found = yield* store.index("testIndexer", "a,c")
      assert.deepStrictEqual([...found].sort(), ["a", "a,b", "c"])
    }))

  it.effect("TestKeyError (equivalent): a key function's KeyError reaches the caller with its cause", () =>
    Effect.gen(function*() {
      const inner = new Error("error")
      const store = Indexer.unsafeMake<StoreObject>({
        keyFunction: () =>
          Either.left(new Indexer.KeyError({ reason: "KeyFunctionFailed", message: "no key", cause: inner }))
      })
      const error = yield* Effect.flip(store.add(mkObj("a", "b")))
      assert.strictEqual(error._tag, "KeyError")
      assert.strictEqual(error.cause, inner)
      assert.instanceOf(error, Error)
      // Nested: a KeyError whose cause is a KeyError still leads to the inner error.
      const nested = new Indexer.KeyError({ reason: "KeyFunctionFailed", message: "outer", cause: error })
      assert.strictEqual((nested.cause as Indexer.KeyError).cause, inner)
      assert.strictEqual(yield* store.size, 0)
    }))

  // We have no transactions: the one multi-object write is `replace`, which is all-or-nothing, so the
  // "successful indices" of client-go's transaction are either all of them or none.
  for (
    const [name, objs, ok] of [
      ["all success objects", ["s1", "s2"], true],
      ["all fail objects", ["f1", "f2"], false],
      ["mixed success and fail objects", ["s1", "f1", "s2", "f2"], false]
    ] as const
  ) {
    it.effect(`TestCacheTransactionShouldIndexErrors (adapted to replace): ${name}`, () =>
      Effect.gen(function*() {
        const store = Indexer.unsafeMake<StoreObject>({
          keyFunction: (obj) =>
            obj instanceof DeletedFinalStateUnknown || obj.id.startsWith("s")
              ? storeKeyFunction(obj)
              : Either.left(new Indexer.KeyError({ reason: "KeyFunctionFailed", message: "test error" })),
          indexers: { by_val: (obj) => [obj.val] }
        })
        yield* store.add(mkObj("s0", "old"))
        const result = yield* Effect.either(store.replace(objs.map((id) => mkObj(id, "new")), "5"))
        if (ok) {
          assert.isTrue(Either.isRight(result))
          assert.deepStrictEqual([...(yield* store.listKeys)].sort(), ["s1", "s2"])
          assert.deepStrictEqual(yield* store.indexKeys("by_val", "new"), ["s1", "s2"])
        } else {
          assert.isTrue(Either.isLeft(result) && result.left._tag === "KeyError")
          assert.deepStrictEqual(yield* store.listKeys, ["s0"])
          assert.deepStrictEqual(yield* store.indexKeys("by_val", "old"), ["s0"])
          assert.deepStrictEqual(yield* store.indexKeys("by_val", "new"), [])
          assert.strictEqual(yield* store.lastResourceVersion, "")
        }
      }))
  }
})

// -------------------------------------------------------------------------------------------------
// keys
// -------------------------------------------------------------------------------------------------

describe("keys", () => {
  it.effect("metaNamespaceKey: ns/name for namespaced objects, name for cluster-scoped ones", () =>
    Effect.sync(() => {
      assert.deepStrictEqual(
        Indexer.metaNamespaceKey(pod("web", { namespace: "default" })),
        Either.right("default/web")
      )
      assert.deepStrictEqual(Indexer.metaNamespaceKey(pod("node-1")), Either.right("node-1"))
      assert.deepStrictEqual(Indexer.metaNamespaceKey(pod("node-1", { namespace: "" })), Either.right("node-1"))
    }))

  it.effect("metaNamespaceKey: no metadata / no name / empty name / non-object -> KeyError, never a crash", () =>
    Effect.sync(() => {
      const reason = (u: unknown) =>
        Either.match(Indexer.metaNamespaceKey(u), { onLeft: (e) => e.reason, onRight: (key) => `key ${key}` })
      assert.strictEqual(reason({}), "MissingMetadata")
      assert.strictEqual(reason({ metadata: null }), "MissingMetadata")
      assert.strictEqual(reason(null), "MissingMetadata")
      assert.strictEqual(reason(42), "MissingMetadata")
      assert.strictEqual(reason({ metadata: {} }), "MissingName")
      assert.strictEqual(reason({ metadata: { name: "" } }), "MissingName")
      assert.strictEqual(reason({ metadata: { name: 7 } }), "MissingName")
    }))

  it.effect("deletionHandlingMetaNamespaceKey: a tombstone is named by its key, an object by metaNamespaceKey", () =>
    Effect.sync(() => {
      const tombstone = new DeletedFinalStateUnknown<Pod>({ key: "ns/gone", obj: undefined })
      assert.deepStrictEqual(Indexer.deletionHandlingMetaNamespaceKey(tombstone), Either.right("ns/gone"))
      const withObj = new DeletedFinalStateUnknown({ key: "other/key", obj: pod("web", { namespace: "default" }) })
      assert.deepStrictEqual(Indexer.deletionHandlingMetaNamespaceKey(withObj), Either.right("other/key"))
      assert.deepStrictEqual(
        Indexer.deletionHandlingMetaNamespaceKey(pod("web", { namespace: "default" })),
        Either.right("default/web")
      )
      assert.isTrue(Either.isLeft(Indexer.deletionHandlingMetaNamespaceKey<KubeObject>({})))
    }))

  it.effect("splitMetaNamespaceKey: 1 part, 2 parts, 3 parts -> KeyError, empty -> KeyError", () =>
    Effect.sync(() => {
      assert.deepStrictEqual(Indexer.splitMetaNamespaceKey("web"), Either.right({ namespace: "", name: "web" }))
      assert.deepStrictEqual(
        Indexer.splitMetaNamespaceKey("default/web"),
        Either.right({ namespace: "default", name: "web" })
      )
      const malformed = (key: string) =>
        Either.match(Indexer.splitMetaNamespaceKey(key), { onLeft: (e) => e.reason, onRight: () => "ok" })
      assert.strictEqual(malformed("a/b/c"), "MalformedKey")
      // client-go returns ("", "", nil) for "" and a name "" for "ns/": we reject both, they name no object.
      assert.strictEqual(malformed(""), "MalformedKey")
      assert.strictEqual(malformed("ns/"), "MalformedKey")
      // As client-go: a leading slash is an empty namespace.
      assert.deepStrictEqual(Indexer.splitMetaNamespaceKey("/web"), Either.right({ namespace: "", name: "web" }))
    }))

  it.effect("splitMetaNamespaceKey inverts metaNamespaceKey", () =>
    Effect.sync(() => {
      for (const obj of [pod("a"), pod("b", { namespace: "ns" })]) {
        const key = Either.getOrThrow(Indexer.metaNamespaceKey(obj))
        const split = Either.getOrThrow(Indexer.splitMetaNamespaceKey(key))
        assert.deepStrictEqual(split, { namespace: obj.metadata.namespace ?? "", name: obj.metadata.name })
      }
    }))
})

// -------------------------------------------------------------------------------------------------
// Indexer behaviour beyond client-go's tests
// -------------------------------------------------------------------------------------------------

describe("Indexer", () => {
  it.effect("an object without metadata.name is rejected with KeyError on add/update/delete/get, store unchanged", () =>
    Effect.gen(function*() {
      const store = Indexer.unsafeMake<KubeObject>({
        indexers: { [Indexer.namespaceIndex]: Indexer.metaNamespaceIndexFunction }
      })
      yield* store.add(pod("ok", { namespace: "ns", rv: "1" }))
      const nameless: KubeObject = { metadata: { namespace: "ns", resourceVersion: "2" } }
      const noMetadata: KubeObject = {}
      for (const obj of [nameless, noMetadata]) {
        for (const write of [store.add(obj), store.update(obj), store.delete(obj), store.get(obj)]) {
          const error = yield* Effect.flip(write)
          assert.strictEqual(error._tag, "KeyError")
        }
        const replaceError = yield* Effect.flip(store.replace([pod("x"), obj], "9"))
        assert.strictEqual(replaceError._tag, "KeyError")
      }
      assert.deepStrictEqual(yield* store.listKeys, ["ns/ok"])
      assert.deepStrictEqual(yield* store.indexKeys(Indexer.namespaceIndex, "ns"), ["ns/ok"])
      assert.strictEqual(yield* store.lastResourceVersion, "1")
    }))

  it.effect("namespace index via metaNamespaceIndexFunction ('' for cluster-scoped objects)", () =>
    Effect.gen(function*() {
      const store = yield* Indexer.make<KubeObject>({
        indexers: { [Indexer.namespaceIndex]: Indexer.metaNamespaceIndexFunction }
      })
      yield* store.add(pod("a", { namespace: "ns1" }))
      yield* store.add(pod("b", { namespace: "ns1" }))
      yield* store.add(pod("c", { namespace: "ns2" }))
      yield* store.add(pod("node"))
      assert.deepStrictEqual(yield* store.indexKeys(Indexer.namespaceIndex, "ns1"), ["ns1/a", "ns1/b"])
      assert.deepStrictEqual(yield* store.indexKeys(Indexer.namespaceIndex, "ns2"), ["ns2/c"])
      assert.deepStrictEqual(yield* store.indexKeys(Indexer.namespaceIndex, ""), ["node"])
      // Moving an object to another namespace is a different key: the old one stays until deleted.
      yield* store.delete(pod("c", { namespace: "ns2" }))
      assert.deepStrictEqual(yield* store.indexKeys(Indexer.namespaceIndex, "ns2"), [])
      assert.deepStrictEqual([...(yield* store.listIndexFuncValues(Indexer.namespaceIndex))].sort(), ["", "ns1"])
    }))

  it.effect("Indexer.layer provides a KubeObject indexer with the namespace index plus extra indexers", () =>
    Effect.gen(function*() {
      const store = yield* Indexer.Indexer
      yield* store.add(pod("a", { namespace: "ns", labels: { app: "web" } }))
      assert.deepStrictEqual(yield* store.indexKeys(Indexer.namespaceIndex, "ns"), ["ns/a"])
      assert.deepStrictEqual(yield* store.indexKeys("byApp", "web"), ["ns/a"])
    }).pipe(
      Effect.provide(Indexer.layer({ indexers: { byApp: (obj) => [obj.metadata?.labels?.app ?? ""] } }))
    ))

  it.effect("indexKeys returns keys sorted, whatever the insertion order", () =>
    Effect.gen(function*() {
      const store = writable<string>({ indexers: { all: () => ["v"] } })
      for (const key of ["m", "b", "z", "a", "k"]) store.unsafeAdd(key, key)
      assert.deepStrictEqual(yield* store.indexKeys("all", "v"), ["a", "b", "k", "m", "z"])
      assert.deepStrictEqual(yield* store.indexKeys("all", "absent"), [])
    }))

  it.effect("addIndexers before objects exist: later adds are indexed", () =>
    Effect.gen(function*() {
      const store = Indexer.unsafeMake<Pod>()
      yield* store.addIndexers({ byApp: (obj) => [obj.metadata.labels?.app ?? ""] })
      assert.deepStrictEqual(Object.keys(yield* store.getIndexers), ["byApp"])
      yield* store.add(pod("a", { labels: { app: "web" } }))
      yield* store.add(pod("b", { labels: { app: "db" } }))
      assert.deepStrictEqual(yield* store.indexKeys("byApp", "web"), ["a"])
      assert.deepStrictEqual(yield* store.indexKeys("byApp", "db"), ["b"])
    }))

  it.effect("addIndexers after objects exist: existing objects are indexed at once", () =>
    Effect.gen(function*() {
      const store = Indexer.unsafeMake<Pod>({
        indexers: { [Indexer.namespaceIndex]: Indexer.metaNamespaceIndexFunction }
      })
      yield* store.add(pod("a", { namespace: "ns", labels: { app: "web" } }))
      yield* store.add(pod("b", { namespace: "ns", labels: { app: "web" } }))
      yield* store.add(pod("c", { namespace: "ns", labels: { app: "db" } }))
      yield* store.addIndexers({ byApp: (obj) => [obj.metadata.labels?.app ?? ""] })
      assert.deepStrictEqual(Object.keys(yield* store.getIndexers).sort(), ["byApp", "namespace"])
      assert.deepStrictEqual(yield* store.indexKeys("byApp", "web"), ["ns/a", "ns/b"])
      assert.deepStrictEqual(yield* store.indexKeys("byApp", "db"), ["ns/c"])
      // and maintained afterwards
      yield* store.update(pod("a", { namespace: "ns", labels: { app: "db" } }))
      assert.deepStrictEqual(yield* store.indexKeys("byApp", "web"), ["ns/b"])
      assert.deepStrictEqual(yield* store.indexKeys("byApp", "db"), ["ns/a", "ns/c"])
    }))

  it.effect("addIndexers with a registered name -> IndexConflictError, nothing added", () =>
    Effect.gen(function*() {
      const store = Indexer.unsafeMake<Pod>({
        indexers: { [Indexer.namespaceIndex]: Indexer.metaNamespaceIndexFunction }
      })
      yield* store.add(pod("a", { namespace: "ns" }))
      const error = yield* Effect.flip(store.addIndexers({
        fresh: () => ["x"],
        [Indexer.namespaceIndex]: () => ["y"]
      }))
      assert.strictEqual(error._tag, "IndexConflictError")
      assert.isTrue(error._tag === "IndexConflictError" && error.indexes.includes(Indexer.namespaceIndex))
      assert.deepStrictEqual(Object.keys(yield* store.getIndexers), [Indexer.namespaceIndex])
      assert.isFalse(store.unsafeHasIndex("fresh"))
      // the original index function is still the one in use
      assert.deepStrictEqual(yield* store.indexKeys(Indexer.namespaceIndex, "ns"), ["ns/a"])
    }))

  it.effect("unknown index -> IndexNotFoundError (index, indexKeys, byIndex); listIndexFuncValues -> empty", () =>
    Effect.gen(function*() {
      const store = Indexer.unsafeMake<Pod>()
      yield* store.add(pod("a"))
      const errors = [
        yield* Effect.flip(store.index("nope", pod("a"))),
        yield* Effect.flip(store.indexKeys("nope", "v")),
        yield* Effect.flip(store.byIndex("nope", "v"))
      ]
      for (const error of errors) {
        assert.strictEqual(error._tag, "IndexNotFoundError")
        assert.isTrue(error._tag === "IndexNotFoundError" && error.index === "nope")
      }
      assert.strictEqual((store.unsafeByIndex("nope", "v") as Indexer.IndexNotFoundError)._tag, "IndexNotFoundError")
      assert.deepStrictEqual(yield* store.listIndexFuncValues("nope"), [])
    }))

  it.effect("update touches only the index entries whose values changed (untouched sets keep their order)", () =>
    Effect.gen(function*() {
      const store = commaStore()
      // byIndex returns a value's keys in the order they entered its set: removing and re-adding a key
      // would move it to the end, so an unchanged order proves the entry was not touched.
      store.unsafeAdd("k1", "a,b")
      store.unsafeAdd("k2", "a")
      const order = (value: string) => store.byIndex("testIndexer", value)
      assert.deepStrictEqual(yield* order("a"), ["a,b", "a"])

      store.unsafeAdd("k1", "a,c") // multi-valued: a unchanged, b removed, c added
      assert.deepStrictEqual(yield* order("a"), ["a,c", "a"])
      assert.deepStrictEqual(yield* order("b"), [])
      assert.deepStrictEqual(yield* order("c"), ["a,c"])

      const single = writable<Pod>({ indexers: { byApp: (obj) => [obj.metadata.labels?.app ?? ""] } })
      single.unsafeAdd("p1", pod("p1", { rv: "1", labels: { app: "web" } }))
      single.unsafeAdd("p2", pod("p2", { rv: "1", labels: { app: "web" } }))
      single.unsafeAdd("p1", pod("p1", { rv: "2", labels: { app: "web" } })) // single value unchanged: fast path
      const web = yield* single.byIndex("byApp", "web")
      assert.deepStrictEqual(web.map((p) => `${p.metadata.name}@${p.metadata.resourceVersion}`), ["p1@2", "p2@1"])
    }))

  it.effect("an index function is called for the new object of every write, and never for unchanged reads", () =>
    Effect.gen(function*() {
      const calls: Array<string> = []
      const store = Indexer.unsafeMake<Pod>({
        indexers: {
          spy: (obj) => {
            calls.push(`${obj.metadata.name}@${obj.metadata.resourceVersion}`)
            return [obj.metadata.name]
          }
        }
      })
      yield* store.add(pod("a", { rv: "1" }))
      assert.deepStrictEqual(calls, ["a@1"])
      calls.length = 0
      yield* store.byIndex("spy", "a")
      yield* store.indexKeys("spy", "a")
      yield* store.list
      assert.deepStrictEqual(calls, [])
      yield* store.update(pod("a", { rv: "2" }))
      assert.isTrue(calls.includes("a@2"))
      assert.isFalse(calls.some((c) => c !== "a@2" && c !== "a@1"))
    }))

  describe("a throwing index function yields IndexFunctionError and leaves the store unchanged", () => {
    const strict = () =>
      writable<Pod>({
        indexers: {
          [Indexer.namespaceIndex]: Indexer.metaNamespaceIndexFunction,
          byApp: (obj) => {
            const app = obj.metadata.labels?.app
            if (app === "boom") throw new Error("boom")
            return [app ?? ""]
          }
        }
      })
    const snapshot = (store: Indexer.Indexer.Service<Pod>) =>
      Effect.gen(function*() {
        return {
          items: (yield* store.list).map((p) => `${p.metadata.name}:${p.metadata.labels?.app}`).sort(),
          web: yield* store.indexKeys("byApp", "web"),
          db: yield* store.indexKeys("byApp", "db"),
          ns: yield* store.indexKeys(Indexer.namespaceIndex, "ns"),
          apps: [...(yield* store.listIndexFuncValues("byApp"))].sort(),
          rv: yield* store.lastResourceVersion
        }
      })
    const seeded = Effect.gen(function*() {
      const store = strict()
      yield* store.add(pod("a", { namespace: "ns", rv: "1", labels: { app: "web" } }))
      yield* store.add(pod("b", { namespace: "ns", rv: "2", labels: { app: "db" } }))
      return store
    })
    const boom = (name: string, rv: string) => pod(name, { namespace: "ns", rv, labels: { app: "boom" } })

    it.effect("add", () =>
      Effect.gen(function*() {
        const store = yield* seeded
        const before = yield* snapshot(store)
        const error = yield* Effect.flip(store.add(boom("c", "3")))
        assert.strictEqual(error._tag, "IndexFunctionError")
        assert.isTrue(error._tag === "IndexFunctionError" && error.index === "byApp" && error.key === "ns/c")
        assert.deepStrictEqual(yield* snapshot(store), before)
        assert.isUndefined(store.unsafeGetByKey("ns/c"))
        assert.instanceOf(store.unsafeAdd("ns/c", boom("c", "3")), Indexer.IndexFunctionError)
        assert.deepStrictEqual(yield* snapshot(store), before)
      }))

    it.effect("update", () =>
      Effect.gen(function*() {
        const store = yield* seeded
        const before = yield* snapshot(store)
        const error = yield* Effect.flip(store.update(boom("a", "3")))
        assert.strictEqual(error._tag, "IndexFunctionError")
        assert.deepStrictEqual(yield* snapshot(store), before)
        assert.strictEqual(store.unsafeGetByKey("ns/a")?.metadata.labels?.app, "web")
      }))

    it.effect("replace", () =>
      Effect.gen(function*() {
        const store = yield* seeded
        const before = yield* snapshot(store)
        const error = yield* Effect.flip(
          store.replace([pod("x", { namespace: "ns", rv: "5", labels: { app: "web" } }), boom("y", "6")], "7")
        )
        assert.strictEqual(error._tag, "IndexFunctionError")
        assert.deepStrictEqual(yield* snapshot(store), before)
      }))

    it.effect("addIndexers", () =>
      Effect.gen(function*() {
        const store = yield* seeded
        const before = yield* snapshot(store)
        const error = yield* Effect.flip(store.addIndexers({
          fine: () => ["x"],
          picky: (obj) => {
            if (obj.metadata.name === "b") throw new Error("no b")
            return ["y"]
          }
        }))
        assert.strictEqual(error._tag, "IndexFunctionError")
        assert.deepStrictEqual(Object.keys(yield* store.getIndexers).sort(), ["byApp", "namespace"])
        assert.isFalse(store.unsafeHasIndex("fine"))
        assert.isFalse(store.unsafeHasIndex("picky"))
        assert.deepStrictEqual(yield* snapshot(store), before)
      }))

    it.effect("index(name, probe) with a throwing probe", () =>
      Effect.gen(function*() {
        const store = yield* seeded
        const error = yield* Effect.flip(store.index("byApp", boom("q", "1")))
        assert.strictEqual(error._tag, "IndexFunctionError")
      }))
  })

  it.effect("delete with a tombstone removes the key it carries; deleting an absent key does nothing", () =>
    Effect.gen(function*() {
      const store = Indexer.unsafeMake<Pod>({
        indexers: { [Indexer.namespaceIndex]: Indexer.metaNamespaceIndexFunction }
      })
      yield* store.add(pod("a", { namespace: "ns" }))
      yield* store.add(pod("b", { namespace: "ns" }))
      yield* store.delete(new DeletedFinalStateUnknown<Pod>({ key: "ns/a", obj: undefined }))
      yield* store.delete(pod("zzz", { namespace: "ns" }))
      assert.deepStrictEqual(yield* store.listKeys, ["ns/b"])
      assert.deepStrictEqual(yield* store.indexKeys(Indexer.namespaceIndex, "ns"), ["ns/b"])
    }))

  it.effect("replace rebuilds every index from scratch", () =>
    Effect.gen(function*() {
      const store = commaStore()
      store.unsafeAdd("a,b", "a,b")
      store.unsafeAdd("c", "c")
      yield* store.replace(["b,d", "e"], "3")
      assert.deepStrictEqual([...(yield* store.listIndexFuncValues("testIndexer"))].sort(), ["b", "d", "e"])
      assert.deepStrictEqual(yield* store.indexKeys("testIndexer", "b"), ["b,d"])
      assert.deepStrictEqual(yield* store.indexKeys("testIndexer", "a"), [])
      assert.strictEqual(store.unsafeSize(), 2)
      assert.deepStrictEqual([...store.unsafeKeys()].sort(), ["b,d", "e"])
      assert.deepStrictEqual([...store.unsafeValues()].sort(), ["b,d", "e"])
    }))

  it.effect("resync of a plain store does nothing", () =>
    Effect.gen(function*() {
      const store = commaStore()
      store.unsafeAdd("a", "a")
      yield* store.resync
      assert.deepStrictEqual(yield* store.listKeys, ["a"])
    }))
})

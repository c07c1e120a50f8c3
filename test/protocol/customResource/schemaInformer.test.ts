/**
 * Custom resources typed by an Effect Schema (`Resource.custom`): decoded where objects enter (list items,
 * watch events), once per object; an object the schema rejects is a `DecodeError` (`SchemaMismatch`) on
 * the informer's errors stream, and the informer recovers once the object is fixed. Over HTTP against the
 * embedded ApiServer, which serves the custom resource, and over the fake source.
 */
import * as ApiServer from "@effect-informers/testkit/ApiServer"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Queue from "effect/Queue"
import * as Redacted from "effect/Redacted"
import * as References from "effect/References"
import * as Result from "effect/Result"
import * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import type * as ApiError from "../../../src/ApiError.js"
import * as FakeListerWatcher from "../../../src/FakeListerWatcher.js"
import * as HttpListerWatcher from "../../../src/HttpListerWatcher.js"
import * as InformerFactory from "../../../src/InformerFactory.js"
import { ListerWatcherSource } from "../../../src/ListerWatcher.js"
import * as Resource from "../../../src/Resource.js"
import { withApiServer } from "../../transport/client/fixtures.js"
import { live, TOKEN } from "../../transport/httpListerWatcher/fixtures.js"

/** A Widget schema that counts the objects it sees (decoding runs once per object where it enters). */
const widgetSchema = (counter: { decodes: number }) =>
  Schema.Struct({
    apiVersion: Schema.Literal("example.com/v1"),
    kind: Schema.Literal("Widget"),
    // only the name is declared: the rest of the metadata must survive decoding
    metadata: Schema.Struct({ name: Schema.String }),
    spec: Schema.Struct({
      replicas: Schema.Int,
      // "3" on the wire, 3 once decoded: proof that the informer holds decoded values
      size: Schema.NumberFromString
    })
  }).check(Schema.makeFilter(() => {
    counter.decodes++
    return true
  }))

const coordinates = {
  group: "example.com",
  version: "v1",
  resource: "widgets",
  kind: "Widget",
  namespaced: true
} as const

/** A typed resource of its own (and its counter), so that concurrent tests count apart. */
const typedWidgets = () => {
  const counter = { decodes: 0 }
  return { widgets: Resource.custom({ ...coordinates, schema: widgetSchema(counter) }), counter }
}

const { widgets } = typedWidgets()
/** The same collection untyped: to write what the schema rejects. */
const rawWidgets = Resource.make(coordinates)

const widget = (name: string, replicas: unknown, size = "3") => ({
  apiVersion: "example.com/v1",
  kind: "Widget",
  metadata: { name, namespace: "default" },
  spec: { replicas, size }
})

const quiet = Effect.provideService(References.MinimumLogLevel, "None")

const fast = { backoff: Schedule.spaced("50 millis") }

describe("Resource.custom", () => {
  it("decodes a whole object, keeping the metadata it does not declare; says why in one line", () => {
    const decode = widgets.decode!
    const ok = decode({
      ...widget("a", 2),
      metadata: { name: "a", namespace: "ns", resourceVersion: "7", uid: "u-1" }
    })
    assert.isTrue(Result.isSuccess(ok))
    if (Result.isSuccess(ok)) {
      assert.strictEqual(ok.success.spec.size, 3)
      assert.deepStrictEqual(ok.success.metadata, { name: "a", namespace: "ns", resourceVersion: "7", uid: "u-1" })
    }
    const bad = decode(widget("b", "three"))
    assert.isTrue(Result.isFailure(bad))
    if (Result.isFailure(bad)) {
      assert.strictEqual(
        bad.failure.message,
        "Widget default/b does not match its schema: spec.replicas: Expected number, got \"three\""
      )
      assert.isString(bad.failure.detail)
    }
    assert.isUndefined(Resource.make(coordinates).decode, "make decodes nothing")
    assert.isUndefined(Resource.pods.decode, "nor does the catalog")
  })
})

describe("Resource.custom keeps what its structs do not declare", () => {
  it("in nested structs, optional ones and arrays of them; not below a transformation", () => {
    const schema = Schema.Struct({
      metadata: Schema.Struct({ name: Schema.String }),
      spec: Schema.optional(Schema.Struct({
        ports: Schema.Array(Schema.Struct({ port: Schema.Number })),
        size: Schema.NumberFromString
      }))
    })
    const resource = Resource.custom({ ...coordinates, schema })
    const input = {
      apiVersion: "example.com/v1",
      kind: "Widget",
      metadata: { name: "a", namespace: "ns", labels: { x: "1" } },
      spec: { ports: [{ port: 80, name: "http" }, { port: 443 }], size: "3", extra: true },
      status: { ready: true }
    }
    const decoded = resource.decode!(input)
    assert.isTrue(Result.isSuccess(decoded))
    if (Result.isSuccess(decoded)) {
      assert.deepStrictEqual(decoded.success as unknown, {
        apiVersion: "example.com/v1",
        kind: "Widget",
        metadata: { name: "a", namespace: "ns", labels: { x: "1" } },
        spec: { ports: [{ port: 80, name: "http" }, { port: 443 }], size: 3, extra: true },
        status: { ready: true }
      })
      assert.notStrictEqual(decoded.success as unknown, input, "a decoded copy")
    }
    const none = resource.decode!({ metadata: { name: "b", uid: "u" } })
    assert.deepStrictEqual(Result.isSuccess(none) && none.success as unknown, { metadata: { name: "b", uid: "u" } })
  })
})

describe("custom resource informers over HTTP (embedded ApiServer)", () => {
  for (const watchList of [true, false]) {
    it.live(
      `typed values; a bad object is a DecodeError and the informer recovers (${watchList ? "watch-list" : "list"})`,
      () =>
        Effect.gen(function*() {
          const { counter, widgets } = typedWidgets()
          const server = yield* Effect.orDie(ApiServer.make({ resources: [widgets], bookmarkInterval: "100 millis" }))
          yield* server.objects.create(widgets, widget("a", 1) as never)
          yield* server.objects.create(widgets, widget("b", 2) as never)
          const factory = InformerFactory.layer().pipe(
            Layer.provide(HttpListerWatcher.layerSource()),
            Layer.provide(live({ server: server.url, token: Redacted.make(TOKEN) }))
          )
          yield* Effect.gen(function*() {
            const factory = yield* InformerFactory.InformerFactory
            const informer = yield* factory.informerFor(widgets, {
              namespace: "default",
              reflector: { ...fast, watchList }
            })
            const errors = yield* Queue.unbounded<ApiError.DecodeError>()
            yield* informer.errors.pipe(
              Stream.runForEach(({ error }) => error._tag === "DecodeError" ? Queue.offer(errors, error) : Effect.void),
              Effect.forkScoped
            )
            const before = counter.decodes
            yield* factory.start
            yield* factory.waitForCacheSync({ timeout: "10 seconds" })
            assert.strictEqual(counter.decodes - before, 2, "each listed object decoded once")
            const lister = yield* factory.listerFor(widgets, { namespace: "default" })
            const a = yield* lister.byNamespace("default").get("a")
            const size: number = a.spec.size
            assert.strictEqual(size, 3)
            assert.strictEqual(a.spec.replicas, 1)
            assert.isString(a.metadata.resourceVersion)
            assert.strictEqual(a.metadata.namespace, "default")

            // an update: decoded once more
            const afterSync = counter.decodes
            yield* server.objects.patch(widgets, { name: "a", namespace: "default" }, { spec: { replicas: 5 } })
            yield* Effect.repeat(lister.byNamespace("default").get("a"), {
              until: (w) => w.spec.replicas === 5,
              schedule: Schedule.spaced("10 millis")
            })
            assert.strictEqual(counter.decodes - afterSync, 1, "each watched object decoded once")

            // an object the schema rejects
            yield* server.objects.create(rawWidgets, widget("bad", "three"))
            const error = yield* Queue.take(errors)
            assert.strictEqual(error.reason, "SchemaMismatch")
            assert.match(
              error.message,
              /^(watch|list) widgets\.example\.com in default: Widget default\/bad does not match its schema: spec\.replicas: Expected number, got "three"$/
            )
            assert.notInclude(error.message, "\n")
            // while it is there the cache keeps its last good state, and the informer keeps trying
            yield* server.objects.create(widgets, widget("c", 3) as never)
            yield* Queue.take(errors)
            yield* Queue.take(errors)
            assert.deepStrictEqual((yield* lister.list()).map((w) => w.metadata.name).sort(), ["a", "b"])
            assert.isFalse(yield* informer.isStopped)

            // fixed: the informer catches up
            yield* server.objects.patch(rawWidgets, { name: "bad", namespace: "default" }, { spec: { replicas: 4 } })
            const names = Effect.map(lister.list(), (all) => all.map((w) => w.metadata.name).sort())
            yield* Effect.repeat(names, { until: (all) => all.length === 4, schedule: Schedule.spaced("20 millis") })
            assert.deepStrictEqual(yield* names, ["a", "b", "bad", "c"])
            const fixed = yield* lister.byNamespace("default").get("bad")
            assert.strictEqual(fixed.spec.replicas, 4)
            assert.strictEqual(fixed.spec.size, 3)
          }).pipe(Effect.provide(factory))
        }).pipe(quiet)
    )
  }
})

describe("Client reads of a custom resource", () => {
  it.live("get and list give decoded values; a rejected object is a SchemaMismatch DecodeError", () =>
    withApiServer((server, client) =>
      Effect.gen(function*() {
        yield* server.objects.create(rawWidgets, widget("a", 1, "9"))
        const a = yield* client.get(widgets, "a", { namespace: "default" })
        assert.strictEqual(a.spec.size, 9)
        assert.isString(a.metadata.resourceVersion)
        const page = yield* client.list(widgets, { namespace: "default" })
        assert.deepStrictEqual(page.items.map((w) => w.spec.size), [9])
        yield* server.objects.create(rawWidgets, widget("bad", "three"))
        const error = yield* Effect.flip(client.get(widgets, "bad", { namespace: "default" }))
        assert.strictEqual(error._tag, "DecodeError")
        assert.strictEqual(error.reason, "SchemaMismatch")
        assert.include(error.message, "Widget default/bad does not match its schema: spec.replicas")
        const listError = yield* Effect.flip(client.list(widgets, { namespace: "default" }))
        assert.strictEqual(listError.reason, "SchemaMismatch")
      }), { server: { resources: [widgets] } }))
})

describe("custom resource informers over the fake source", () => {
  it.effect("the fake's objects are decoded; a bad one fails the list with a DecodeError", () =>
    Effect.gen(function*() {
      const fakes = yield* FakeListerWatcher.FakeListerWatcherSource
      const factory = yield* InformerFactory.InformerFactory
      yield* fakes.fakeFor(rawWidgets).add(widget("a", 1, "7"))
      const informer = yield* factory.informerFor(widgets, { reflector: fast })
      yield* factory.start
      yield* factory.waitForCacheSync()
      const [a] = yield* informer.indexer.list
      assert.strictEqual(a.spec.size, 7)
      const lw = (yield* ListerWatcherSource).listerWatcher(widgets, {})
      yield* fakes.fakeFor(rawWidgets).add(widget("bad", 1.5))
      const error = yield* Effect.flip(lw.list({}))
      assert.strictEqual(error._tag, "DecodeError")
      assert.strictEqual(error.reason, "SchemaMismatch")
      assert.include(
        error.message,
        "Widget default/bad does not match its schema: spec.replicas: Expected an integer, got 1.5"
      )
    }).pipe(
      Effect.provide(InformerFactory.layer()),
      Effect.provide(FakeListerWatcher.layerSource()),
      quiet
    ))
})

/**
 * The application Layers: per-resource informers over the fake source, shutdown order across layers
 * (informers stop before the transport below them is released), custom resources, and the HTTP / live
 * layers.
 */
import { assert, describe, it } from "@effect/vitest"
import { Context, Deferred, Effect, Fiber, Layer, Option, Stream } from "effect"
import * as FakeListerWatcher from "../src/FakeListerWatcher.js"
import * as InformerFactory from "../src/InformerFactory.js"
import type * as KubeConfig from "../src/KubeConfig.js"
import type { KubeObject } from "../src/KubeObject.js"
import * as Informers from "../src/Layer.js"
import type { ListerWatcherSource } from "../src/ListerWatcher.js"
import * as Resource from "../src/Resource.js"
import { namespacedNames as names, pod as fixturePod, settle, widgets } from "./fixtures/index.js"

// -------------------------------------------------------------------------------------------------
// helpers
// -------------------------------------------------------------------------------------------------

/** The suite's pods: uid `namespace/name`. */
const pod = (namespace: string, name: string, labels?: Record<string, string>) =>
  fixturePod(name, { namespace, uid: `${namespace}/${name}`, labels }) as Resource.Pod

class Widgets extends Context.Service<Widgets, Informers.Informed<KubeObject>>()("test/Widgets") {}

/** A stand-in for the HTTP client: its release is recorded. */
class HttpStandIn extends Context.Service<HttpStandIn, { readonly id: string }>()("test/HttpStandIn") {}

// -------------------------------------------------------------------------------------------------
// tests
// -------------------------------------------------------------------------------------------------

describe("Layer - over fakes", () => {
  it.effect("Layer.pods() + Layer.deployments() over FakeListerWatcher.layerFactory(): synced caches, listers, handlers", () =>
    Effect.gen(function*() {
      const app = Layer.mergeAll(Informers.pods(), Informers.deployments()).pipe(
        Layer.provideMerge(FakeListerWatcher.layerFactory())
      )
      const program = Effect.gen(function*() {
        const fakes = yield* FakeListerWatcher.FakeListerWatcherSource
        const pods = yield* Informers.Pods
        const deployments = yield* Informers.Deployments
        assert.strictEqual(pods.resource, Resource.pods)
        assert.strictEqual(deployments.resource, Resource.deployments)
        assert.isTrue(yield* pods.informer.isStarted)
        assert.isTrue(yield* deployments.informer.isStarted)
        yield* pods.informer.synced
        yield* deployments.informer.synced

        const factory = yield* InformerFactory.InformerFactory
        assert.strictEqual(yield* factory.informerFor(Resource.pods), pods.informer)
        const statuses = yield* factory.waitForCacheSync({ timeout: "1 second" })
        assert.isTrue(statuses.every((s) => s.synced))
        assert.lengthOf(statuses, 2)

        const added = yield* Deferred.make<string>()
        const updated = yield* Deferred.make<string>()
        yield* pods.informer.addEventHandler({ onAdd: (p) => Deferred.succeed(added, p.metadata?.name ?? "") })
        yield* deployments.informer.addEventHandler({
          onUpdate: (_, d) => Deferred.succeed(updated, `${d.metadata?.name} ${d.spec?.replicas}`)
        })
        yield* fakes.fakeFor(Resource.pods).add(pod("default", "web-1", { app: "web" }))
        yield* fakes.fakeFor(Resource.pods).add(pod("default", "db-1", { app: "db" }))
        const deployment = (replicas: number) => ({
          metadata: pod("default", "web").metadata!,
          spec: { replicas, selector: { matchLabels: { app: "web" } }, template: {} }
        })
        yield* fakes.fakeFor(Resource.deployments).add(deployment(1))
        yield* fakes.fakeFor(Resource.deployments).modify(deployment(3))
        assert.strictEqual(yield* Deferred.await(added), "web-1")
        assert.strictEqual(yield* Deferred.await(updated), "web 3")

        assert.deepStrictEqual(names(yield* pods.lister.list("app=web")), ["default/web-1"])
        assert.deepStrictEqual(names(yield* pods.lister.byNamespace("default").list()), [
          "default/db-1",
          "default/web-1"
        ])
        const web = yield* deployments.lister.byNamespace("default").get("web")
        assert.strictEqual(web.spec?.replicas, 3)
        const missing = yield* Effect.flip(deployments.lister.byNamespace("default").get("api"))
        assert.strictEqual(missing.message, `deployments.apps "api" not found in namespace "default"`)
      })
      yield* program.pipe(Effect.provide(app))
    }))

  it.effect("per-resource options reach the factory", () =>
    Effect.gen(function*() {
      const app = Informers.pods({ namespace: "prod", labelSelector: "app=web" }).pipe(
        Layer.provideMerge(FakeListerWatcher.layerFactory({ stripManagedFields: true }))
      )
      yield* Effect.gen(function*() {
        const fakes = yield* FakeListerWatcher.FakeListerWatcherSource
        const pods = yield* Informers.Pods
        assert.strictEqual(pods.informer.name, "pods in prod (app=web)")
        yield* pods.informer.synced
        yield* fakes.fakeFor(Resource.pods).add(pod("prod", "web-1", { app: "web" }))
        yield* fakes.fakeFor(Resource.pods).add(pod("prod", "db-1", { app: "db" }))
        yield* fakes.fakeFor(Resource.pods).add(pod("dev", "web-1", { app: "web" }))
        yield* settle
        assert.deepStrictEqual(names(yield* pods.lister.list()), ["prod/web-1"])
      }).pipe(Effect.provide(app))
    }))

  it.effect("a malformed selector fails the layer with the typed error", () =>
    Effect.gen(function*() {
      const app = Informers.pods({ labelSelector: "app in (" }).pipe(
        Layer.provideMerge(FakeListerWatcher.layerFactory())
      )
      const error = yield* Effect.flip(Effect.provide(Effect.void, app))
      assert.strictEqual(error._tag, "LabelSelectorParseError")
    }))

  it.effect("Layer.informer(tag, CRD) provides a custom resource's informer and lister", () =>
    Effect.gen(function*() {
      const app = Informers.informer(Widgets, widgets, { namespace: "ns" }).pipe(
        Layer.provideMerge(FakeListerWatcher.layerFactory())
      )
      yield* Effect.gen(function*() {
        const fakes = yield* FakeListerWatcher.FakeListerWatcherSource
        const w = yield* Widgets
        assert.strictEqual(w.resource, widgets)
        assert.strictEqual(w.informer.name, "widgets.example.com in ns")
        yield* fakes.fakeFor(widgets).add({ metadata: { namespace: "ns", name: "w1" } })
        yield* fakes.fakeFor(widgets).add({ metadata: { namespace: "other", name: "w2" } })
        yield* w.informer.synced
        yield* settle
        assert.deepStrictEqual(names(yield* w.lister.list()), ["ns/w1"])
        const missing = yield* Effect.flip(w.lister.byNamespace("ns").get("w2"))
        assert.strictEqual(missing.message, `widgets.example.com "w2" not found in namespace "ns"`)
      }).pipe(Effect.provide(app))
    }))

  it.effect("Informers.tag and Informers.layer: one generic way for any resource, the catalog's tags derived from it", () =>
    Effect.gen(function*() {
      // the built-in tags are the generic ones
      assert.strictEqual(Informers.tag(Resource.pods).key, Informers.Pods.key)
      assert.strictEqual(Informers.tag(Resource.deployments).key, Informers.Deployments.key)
      assert.notStrictEqual(Informers.tag(Resource.pods).key, Informers.tag(Resource.nodes).key)
      // a custom resource, typed by its Resource
      const Widgets2 = Informers.tag(widgets)
      const app = Layer.mergeAll(Informers.layer(widgets, { namespace: "ns" }), Informers.pods()).pipe(
        Layer.provideMerge(FakeListerWatcher.layerFactory())
      )
      yield* Effect.gen(function*() {
        const fakes = yield* FakeListerWatcher.FakeListerWatcherSource
        const w = yield* Widgets2
        const p = yield* Informers.tag(Resource.pods)
        assert.strictEqual(w.resource, widgets)
        assert.strictEqual(p.resource, Resource.pods)
        yield* fakes.fakeFor(widgets).add({ metadata: { namespace: "ns", name: "w1" } })
        yield* w.informer.synced
        yield* settle
        assert.deepStrictEqual(names(yield* w.lister.list()), ["ns/w1"])
        const pods: ReadonlyArray<Resource.Pod> = yield* p.lister.list()
        assert.deepStrictEqual(pods, [])
      }).pipe(Effect.provide(app))
    }))

  it.effect("two layers asking for the same informer share it", () =>
    Effect.gen(function*() {
      class AllPods extends Context.Service<AllPods, Informers.Informed<KubeObject>>()("test/AllPods") {}
      const app = Layer.mergeAll(Informers.pods(), Informers.informer(AllPods, Resource.pods)).pipe(
        Layer.provideMerge(FakeListerWatcher.layerFactory())
      )
      yield* Effect.gen(function*() {
        const a = yield* Informers.Pods
        const b = yield* AllPods
        assert.strictEqual(a.informer, b.informer as unknown)
        const factory = yield* InformerFactory.InformerFactory
        assert.lengthOf(yield* factory.status, 1)
      }).pipe(Effect.provide(app))
    }))
})

describe("Layer - shutdown order", () => {
  it.effect("informers (and their handlers) stop before the client below the source is released", () =>
    Effect.gen(function*() {
      const recorded: Array<string> = []
      const client = Layer.effect(
        HttpStandIn,
        Effect.acquireRelease(
          Effect.succeed({ id: "client" }),
          () => Effect.sync(() => recorded.push("client released"))
        )
      )
      // A ListerWatcherSource that needs the client, like Layer.http().
      const source = Layer.unwrap(Effect.as(HttpStandIn, FakeListerWatcher.layerSource())).pipe(
        Layer.provide(client)
      )
      const factory = Informers.factory().pipe(Layer.provideMerge(source))
      const app = Informers.pods().pipe(Layer.provideMerge(factory))

      const handlerStarted = yield* Deferred.make<void>()
      yield* Effect.gen(function*() {
        const fakes = yield* FakeListerWatcher.FakeListerWatcherSource
        const pods = yield* Informers.Pods
        yield* pods.informer.synced
        yield* pods.informer.addEventHandler({
          name: "blocked",
          onAdd: () =>
            Deferred.succeed(handlerStarted, undefined).pipe(
              Effect.andThen(Effect.never),
              Effect.onInterrupt(() => Effect.sync(() => recorded.push("handler interrupted")))
            )
        })
        yield* fakes.fakeFor(Resource.pods).add(pod("default", "web"))
        yield* Deferred.await(handlerStarted)
        assert.deepStrictEqual(recorded, [])
      }).pipe(Effect.provide(app))
      assert.deepStrictEqual(recorded, ["handler interrupted", "client released"])
    }))
})

describe("Layer - HTTP", () => {
  it("http() and live() compose with the per-resource layers (types)", () => {
    const live: Layer.Layer<InformerFactory.InformerFactory, KubeConfig.KubeConfigError> = Informers.live()
    const http: Layer.Layer<ListerWatcherSource, never, KubeConfig.KubeConfig> = Informers.http({
      watchInactivityTimeout: "2 minutes",
      maxSockets: 10
    })
    const app: Layer.Layer<
      Informers.Pods | Informers.Deployments,
      InformerFactory.InformerForError | KubeConfig.KubeConfigError
    > = Layer.mergeAll(Informers.pods(), Informers.deployments()).pipe(Layer.provide(live))
    const manual: Layer.Layer<InformerFactory.InformerFactory, KubeConfig.KubeConfigError> = Informers.factory({
      namespace: "default"
    }).pipe(
      Layer.provide(http),
      Layer.provide(Informers.kubeConfigFromOptions({ server: "https://127.0.0.1:6443" }))
    )
    const inCluster: Layer.Layer<InformerFactory.InformerFactory, KubeConfig.KubeConfigError> = Informers
      .fromKubeConfig(Informers.kubeConfigInCluster(), { factory: { resyncPeriod: "10 minutes" } })
    const fromFile = Informers.fromKubeConfig(Informers.kubeConfigFromFile("/nonexistent/config"))
    assert.isTrue(Layer.isLayer(app))
    assert.isTrue(Layer.isLayer(manual))
    assert.isTrue(Layer.isLayer(inCluster))
    assert.isTrue(Layer.isLayer(fromFile))
  })

  it.live(
    "fromKubeConfig against an unreachable server: informerFor works, errors are TransportError (RequestFailed)",
    () =>
      Effect.gen(function*() {
        const layer = Informers.fromKubeConfig(Informers.kubeConfigFromOptions({ server: "http://127.0.0.1:1" }))
        yield* Effect.gen(function*() {
          const factory = yield* InformerFactory.InformerFactory
          const informer = yield* factory.informerFor(Resource.pods, { namespace: "default" })
          assert.strictEqual(informer.name, "pods in default")
          const firstError = yield* informer.errors.pipe(Stream.runHead, Effect.forkChild)
          yield* Effect.sleep("20 millis") // let the stream subscribe
          yield* factory.start
          const error = yield* Fiber.join(firstError).pipe(Effect.timeout("5 seconds"))
          assert.isTrue(Option.isSome(error))
          const reported = Option.getOrThrow(error)
          assert.strictEqual(reported.error._tag, "TransportError")
          assert.strictEqual(reported.error._tag === "TransportError" && reported.error.reason, "RequestFailed")
          assert.include(reported.error.message, "pods")
          const status = yield* factory.status
          assert.isFalse(status[0].synced)
          assert.strictEqual(Option.getOrUndefined(status[0].lastError)?._tag, "TransportError")
        }).pipe(Effect.provide(layer))
      }),
    10_000
  )
})

/**
 * InformerFactory: an informer whose resource is gone (a LIST answered 404 NotFound: its CRD was deleted)
 * stops by itself and the factory forgets it: `status` and `waitForCacheSync` still name it with its last
 * error until it is asked for again (a new informer, which lists again) or removed. With fakes, and over HTTP
 * against the test kit's API server for a resource it does not serve.
 */
import * as ApiServer from "@effect-informers/testkit/ApiServer"
import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Layer, Option, References } from "effect"
import * as InformerFactory from "../../../src/InformerFactory.js"
import * as Informers from "../../../src/Layer.js"
import { eventually, statusError, widgets } from "../../fixtures/index.js"
import { obj, setup } from "./fixtures.js"

const notFound = () => statusError(404, "NotFound", "the server could not find the requested resource")

/** The factory has forgotten `informer` (its status is the record of a gone one). */
const forgotten = (factory: InformerFactory.InformerFactory.Service) =>
  eventually(
    Effect.map(factory.status, (statuses) =>
      statuses.length === 1 && Option.exists(statuses[0].lastError, (e) =>
        e._tag === "StatusError" && e.reason === "NotFound")
      && statuses),
    "the factory forgot the informer"
  )

describe("InformerFactory - a resource that is gone", () => {
  it.effect("the informer stops, the factory forgets it and names it until it is asked for again, which lists anew", () =>
    Effect.gen(function*() {
      const { factory, fakes } = yield* setup({ reflector: { watchList: false } })
      const fake = fakes.fakeFor(widgets)
      yield* fake.add(obj("default", "w1"))
      yield* fake.failNextList(notFound(), 1)
      const gone = yield* factory.informerFor(widgets)
      yield* factory.start
      assert.strictEqual(yield* gone.awaitStop, "ResourceGone")
      const statuses = yield* forgotten(factory)
      assert.strictEqual(statuses[0].informer, "widgets.example.com in all namespaces")
      assert.isFalse(statuses[0].synced)
      // a wait (with or without a timeout) fails at once: it never will sync
      const error = yield* Effect.flip(factory.waitForCacheSync())
      assert.strictEqual(error.reason, "Stopped")
      assert.include(error.message, "widgets.example.com in all namespaces (last error: StatusError (NotFound)")
      // the resource is back: asked for again, a new informer lists again
      const fresh = yield* factory.informerFor(widgets)
      assert.notStrictEqual(fresh, gone)
      yield* factory.start
      const synced = yield* factory.waitForCacheSync()
      assert.deepStrictEqual(synced.map((s) => [s.informer, s.synced]), [[
        "widgets.example.com in all namespaces",
        true
      ]])
      assert.deepStrictEqual((yield* fresh.indexer.list).map((o) => o.metadata?.name), ["w1"])
    }))

  it.effect("removeInformer forgets a gone informer's record", () =>
    Effect.gen(function*() {
      const { factory, fakes } = yield* setup({ reflector: { watchList: false } })
      yield* fakes.fakeFor(widgets).failNextList(notFound(), 1000)
      yield* factory.informerFor(widgets)
      yield* factory.start
      yield* forgotten(factory)
      assert.isTrue(yield* factory.removeInformer(widgets))
      assert.deepStrictEqual(yield* factory.status, [])
      assert.isFalse(yield* factory.removeInformer(widgets))
      assert.deepStrictEqual(yield* factory.waitForCacheSync(), [])
    }))

  it.effect("a gone informer that had synced stays synced in the statuses", () =>
    Effect.gen(function*() {
      const { factory, fakes } = yield* setup({ reflector: { watchList: false } })
      const fake = fakes.fakeFor(widgets)
      const informer = yield* factory.informerFor(widgets)
      yield* factory.start
      yield* factory.waitForCacheSync()
      yield* fake.failNextList(notFound(), 1000)
      yield* fake.failWatches(notFound())
      yield* eventually(informer.isStopped, { what: "stopped", interval: "1 second", timeout: "10 seconds" })
      const statuses = yield* forgotten(factory)
      assert.isTrue(statuses[0].synced)
      assert.deepStrictEqual((yield* factory.waitForCacheSync()).map((s) => s.synced), [true])
    }))

  it.effect("with stopOnResourceGone: false the informer keeps retrying and the factory keeps it", () =>
    Effect.gen(function*() {
      const { factory, fakes } = yield* setup({ reflector: { watchList: false, stopOnResourceGone: false } })
      yield* fakes.fakeFor(widgets).failNextList(notFound(), 3)
      const informer = yield* factory.informerFor(widgets)
      yield* factory.start
      yield* eventually(informer.hasSynced, { what: "synced", interval: "1 second", timeout: "1 minute" })
      assert.isFalse(yield* informer.isStopped)
      assert.strictEqual(yield* factory.informerFor(widgets), informer)
    }))

  // The test kit's API server serves a fixed set of resources: storing a CustomResourceDefinition does not serve
  // its resource, nor does deleting one stop serving it, so a CRD registered then deleted cannot be staged
  // against it. What it can show is kube-apiserver's answer for a resource it does not serve (404 NotFound,
  // "the server could not find the requested resource"), which is what a deleted CRD's resource gets.
  it.live("over HTTP: a resource the API server does not serve stops its informer, and the factory forgets it", () =>
    Effect.gen(function*() {
      const server = yield* ApiServer.make()
      const context = yield* Layer.build(
        Informers.fromKubeConfig(Informers.kubeConfigFromOptions({ server: server.url }))
      )
      const factory = Context.get(context, InformerFactory.InformerFactory)
      const informer = yield* factory.informerFor(widgets)
      yield* factory.start
      assert.strictEqual(yield* informer.awaitStop, "ResourceGone")
      const statuses = yield* forgotten(factory)
      assert.strictEqual(statuses[0].informer, "widgets.example.com in all namespaces")
      const error = yield* Effect.flip(factory.waitForCacheSync({ timeout: "5 seconds" }))
      assert.strictEqual(error.reason, "Stopped")
      assert.include(error.message, "StatusError (NotFound)")
    }).pipe(Effect.provideService(References.MinimumLogLevel, "Error")))
})

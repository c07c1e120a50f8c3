/**
 * InformerFactory: 200 add/remove cycles leave nothing behind. Half the informers are removed with
 * `removeInformer`, half stop by themselves because their resource is gone (a LIST answered 404) and are
 * forgotten. After each cycle the fibers running are those of before the first (counted through
 * `Metric.FiberRuntimeMetrics`); at the end every removed informer's cache can be collected (held by
 * `WeakRef`s, with a garbage collection forced through V8's `--expose-gc`, set at run time), and the heap has
 * not grown by what 200 caches of 200 objects would hold.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, References } from "effect"
import * as v8 from "node:v8"
import * as vm from "node:vm"
import * as Resource from "../../../src/Resource.js"
import { eventually, statusError } from "../../fixtures/index.js"
import { FiberTracker } from "../sharedInformer/fixtures.js"
import { obj, setup } from "./fixtures.js"

const cycles = 200
const objects = 200

/** V8's `gc()`, exposed at run time (vitest's workers are not started with `--expose-gc`). */
const gc: () => void = (() => {
  v8.setFlagsFromString("--expose-gc")
  return vm.runInNewContext("gc") as () => void
})()

/** Collects, a few times, with real macrotasks between: a WeakRef is cleared only after the job that read it. */
const collect = Effect.promise(async () => {
  for (let i = 0; i < 4; i++) {
    gc()
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
})

const heapUsed = Effect.andThen(collect, Effect.sync(() => process.memoryUsage().heapUsed))

const notFound = () => statusError(404, "NotFound", "the server could not find the requested resource")

describe("InformerFactory - add and remove without leaks", () => {
  it.effect(
    `${cycles} cycles of informerFor, start, sync and removal (or a gone resource): no fiber, no cache left`,
    () =>
      Effect.gen(function*() {
        const tracker = new FiberTracker()
        const caches: Array<WeakRef<object>> = []
        yield* Effect.gen(function*() {
          const { factory, fakes } = yield* setup({ reflector: { watchList: false } })
          const fake = fakes.fakeFor(Resource.pods)
          for (let i = 0; i < objects; i++) yield* fake.add(obj("default", `pod-${i}`, { app: "web" }))
          // one informer stays for the whole test
          const stays = yield* factory.informerFor(Resource.nodes)
          yield* factory.start
          yield* factory.waitForCacheSync()
          const baseline = tracker.running()
          let heapAfterWarmUp = 0
          for (let cycle = 0; cycle < cycles; cycle++) {
            const resourceGone = cycle % 2 === 1
            const pods = yield* factory.informerFor(Resource.pods)
            assert.isFalse(yield* pods.isStarted, `cycle ${cycle}: a new informer`)
            yield* pods.addEventHandler({ onAdd: () => Effect.void, onUpdate: () => Effect.void })
            yield* factory.start
            yield* pods.synced
            assert.strictEqual(yield* pods.indexer.size, objects)
            caches.push(new WeakRef(pods.indexer))
            if (resourceGone) {
              yield* fake.failNextList(notFound(), 1)
              yield* fake.failWatches(notFound())
              yield* eventually(pods.isStopped, {
                what: `cycle ${cycle}: stopped`,
                interval: "1 second",
                timeout: "1 minute"
              })
              // forgotten by the factory: the next informerFor builds a new one (and drops the record)
              assert.strictEqual(yield* pods.awaitStop, "ResourceGone")
            } else {
              assert.isTrue(yield* factory.removeInformer(Resource.pods))
              assert.strictEqual(yield* pods.awaitStop, "Closed")
            }
            yield* eventually(() => tracker.running() === baseline, `cycle ${cycle}: the fibers of before`)
            // the fake's request log grows with every LIST and WATCH
            yield* fake.clearRequests
            if (cycle === 19) heapAfterWarmUp = yield* heapUsed
          }
          // the last gone record is dropped by removeInformer
          yield* factory.removeInformer(Resource.pods)
          assert.deepStrictEqual((yield* factory.status).map((s) => s.informer), ["nodes"])
          assert.isFalse(yield* stays.isStopped)
          assert.strictEqual(tracker.running(), baseline)
          const heapAtEnd = yield* heapUsed
          // 180 leaked caches of 200 pods are 11 MB; without them the heap grows by the JIT's code (about 0.4 MB).
          // Logs are off: vitest keeps what the test prints, which would grow with the gone resources' warnings.
          assert.isBelow(heapAtEnd - heapAfterWarmUp, 4 * 1024 * 1024, "heap growth over 180 cycles")
        }).pipe(tracker.track, Effect.provideService(References.MinimumLogLevel, "None"))
        yield* collect
        const alive = caches.filter((ref) => ref.deref() !== undefined).length
        assert.strictEqual(alive, 0, `${alive} of ${cycles} removed caches are still reachable`)
      }),
    120_000
  )
})

// A TestClock-driven resync test that swaps in the fake ListerWatcher layer: no server, no real time.
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { Informers, Resource } from "effect-informers"
import { FakeListerWatcher } from "effect-informers/testing"
import { TestClock } from "effect/testing"

// examples import only the published packages, as a user's tests do: their own pod, not test/fixtures'
const pod = (name: string) => ({ apiVersion: "v1", kind: "Pod", metadata: { namespace: "default", name } })

describe("example: resync driven by TestClock over the fake layer", () => {
  it.effect("every cached pod is re-delivered as a sync update once per resync period", () =>
    Effect.gen(function*() {
      const fakes = yield* FakeListerWatcher.FakeListerWatcherSource
      const podsFake = fakes.fakeFor(Resource.pods)
      yield* podsFake.add(pod("web-1"))
      yield* podsFake.add(pod("web-2"))

      const pods = yield* Informers.Pods
      const syncs: Array<string> = []
      yield* pods.informer.addEventHandler({
        onUpdate: (oldPod, newPod) =>
          oldPod.metadata?.resourceVersion === newPod.metadata?.resourceVersion
            ? Effect.sync(() => syncs.push(newPod.metadata?.name ?? "?"))
            : Effect.void
      })
      yield* TestClock.adjust(0)
      assert.deepStrictEqual(syncs, [])

      yield* TestClock.adjust("30 seconds")
      assert.deepStrictEqual(syncs.slice().sort(), ["web-1", "web-2"])
      yield* TestClock.adjust("30 seconds")
      assert.strictEqual(syncs.length, 4)
    }).pipe(
      // The app's layers, with the fake source where production would use Informers.live().
      Effect.provide(
        Informers.pods().pipe(Layer.provideMerge(FakeListerWatcher.layerFactory({ resyncPeriod: "30 seconds" })))
      )
    ))
})

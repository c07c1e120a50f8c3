/**
 * A controller over a FakeListerWatcher: N objects, E modifications, time until every modification has
 * been reconciled (no network): the Controller's own cost per event. `npx tsx bench/controllerMicro.ts`.
 */
import * as Effect from "effect/Effect"
import * as Controller from "../src/Controller.js"
import * as FakeListerWatcher from "../src/FakeListerWatcher.js"
import type { KubeObject } from "../src/KubeObject.js"
import * as Resource from "../src/Resource.js"
import * as SharedInformer from "../src/SharedInformer.js"

const objects = Number(process.env.OBJECTS ?? 10_000)
const events = Number(process.env.EVENTS ?? 20_000)
const resource = Resource.make<KubeObject>({
  group: "",
  version: "v1",
  resource: "configmaps",
  kind: "ConfigMap",
  namespaced: true
})

const run = Effect.gen(function*() {
  const initial = Array.from({ length: objects }, (_, i) => ({ metadata: { namespace: `ns${i % 10}`, name: `o${i}` } }))
  const fake = yield* FakeListerWatcher.make<KubeObject>({ initial, resource })
  const informer = yield* SharedInformer.make(fake, { name: "cms" })
  yield* Effect.orDie(informer.start)
  yield* Effect.orDie(informer.synced)
  let reconciled = 0
  let target = objects
  let resolve: (() => void) | undefined
  const controller = yield* Controller.make({
    name: "micro",
    for: { resource, informer },
    concurrency: Number(process.env.WORKERS ?? 4),
    readYourWrites: false,
    reconcile: () =>
      Effect.sync(() => {
        if (++reconciled >= target) resolve?.()
      })
  })
  yield* Effect.promise(() => new Promise<void>((r) => (resolve = r, reconciled >= target ? r() : undefined)))
  // now the burst: every modification is of a distinct key while the last one is pending, so count reconciles
  // of the latest versions: E modifications over `objects` keys
  reconciled = 0
  target = Math.min(events, objects)
  const started = performance.now()
  for (let i = 0; i < events; i++) {
    yield* fake.modify({ metadata: { namespace: `ns${i % 10}`, name: `o${i % objects}`, labels: { i: String(i) } } })
  }
  const written = performance.now()
  yield* Effect.promise(() => new Promise<void>((r) => (resolve = r, reconciled >= target ? r() : undefined)))
  const ended = performance.now()
  const len = yield* controller.queue.len
  console.log(
    `${events} modifications of ${objects} objects written in ${(written - started).toFixed(0)} ms, ` +
      `${reconciled} reconciles by ${(ended - started).toFixed(0)} ms (queue ${len}): ` +
      `${Math.round(events / ((ended - started) / 1000))} events/s`
  )
}).pipe(Effect.scoped)

Effect.runPromise(run)

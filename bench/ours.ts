/**
 * effect-informers: the factory's shared informer for pods over the HTTP ListerWatcher
 * (`Layer.fromKubeConfig(Layer.kubeConfigFromOptions({ server }))`), with handlers written the way an
 * application writes them (`onUpdate: () => Effect.sync(...)`).
 */
import * as Effect from "effect/Effect"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as InformerFactory from "../src/InformerFactory.js"
import * as Informers from "../src/Layer.js"
import * as Resource from "../src/Resource.js"
import type { SessionJob } from "./protocol.js"
import type { Client, Counters } from "./session.js"

export const makeOurs = async (job: SessionJob, counters: Counters): Promise<Client> => {
  const layer = Informers.fromKubeConfig(Informers.kubeConfigFromOptions({ server: job.serverUrl }), {
    factory: {
      reflector: { watchList: job.watchList === true },
      ...(job.stripManagedFields === undefined ? {} : { stripManagedFields: job.stripManagedFields })
    }
  })
  const runtime = ManagedRuntime.make(layer)
  const { factory, informer } = await runtime.runPromise(Effect.gen(function*() {
    const factory = yield* InformerFactory.InformerFactory
    const informer = yield* factory.informerFor(Resource.pods)
    if (job.stalled === true) {
      yield* informer.addEventHandler({ name: "stalled", onAdd: () => Effect.never, onUpdate: () => Effect.never })
    }
    for (let h = 0; h < job.handlers; h++) {
      yield* informer.addEventHandler({
        name: `counter-${h}`,
        onAdd: () => Effect.sync(() => counters.add(h)),
        onUpdate: () => Effect.sync(() => counters.update(h))
      })
    }
    return { factory, informer }
  }))
  const lastResourceVersion = informer.indexer.lastResourceVersion
  return {
    start: () => runtime.runPromise(factory.start),
    // the informer retries every failure; a session that cannot sync times out
    failure: new Promise<never>(() => undefined),
    relistApplied: (rv) => Number(Effect.runSync(lastResourceVersion)) >= Number(rv),
    stop: () => runtime.dispose()
  }
}

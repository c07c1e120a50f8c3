/**
 * effect-informers: the factory's shared informer for pods over the HTTP ListerWatcher
 * (`Layer.fromKubeConfig(Layer.kubeConfigFromOptions({ server }))`), with handlers written the way an
 * application writes them (`onUpdate: () => Effect.sync(...)`).
 */
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Scope from "effect/Scope"
import * as Controller from "../src/Controller.js"
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
  // the controller's scope: closed before the runtime, so that it stops before the informers
  const scope = Effect.runSync(Scope.make())
  const { factory, informer } = await runtime.runPromise(Effect.gen(function*() {
    const factory = yield* InformerFactory.InformerFactory
    const informer = yield* factory.informerFor(Resource.pods)
    if (job.stalled === true) {
      yield* informer.addEventHandler({ name: "stalled", onAdd: () => Effect.never, onUpdate: () => Effect.never })
    }
    if (job.controller === true) {
      // Each event waits, by key, until a reconcile of that key has read the cache at its resourceVersion or
      // later: then it has gone through informer -> queue -> reconcile. Counted once, whichever comes first.
      // A key's events come in resourceVersion order: its waiting ones are a list, oldest first, mostly of one
      // (then kept as a number): an add's version is kept negated.
      const waiting = new Map<string, number | Array<number>>()
      const covered = new Map<string, number>()
      const countCode = (code: number) => code < 0 ? counters.add(0) : counters.update(0)
      const seen = (pod: Resource.Pod, isAdd: boolean) =>
        Effect.sync(() => {
          const key = `${pod.metadata?.namespace}/${pod.metadata?.name}`
          const rv = Number(pod.metadata?.resourceVersion)
          const code = isAdd ? -rv : rv
          if (rv <= (covered.get(key) ?? -1)) return countCode(code)
          const list = waiting.get(key)
          if (list === undefined) waiting.set(key, code)
          else if (typeof list === "number") waiting.set(key, [list, code])
          else list.push(code)
        })
      yield* informer.addEventHandler({
        name: "counter",
        onAdd: (pod) => seen(pod, true),
        onUpdate: (_, pod) => seen(pod, false)
      })
      yield* Controller.make({
        name: "bench",
        for: { resource: Resource.pods, informer },
        concurrency: 4,
        readYourWrites: false,
        reconcile: (request) =>
          Effect.map(informer.indexer.getByKey(request.key), (pod) => {
            if (pod._tag === "None") return
            const rv = Number(pod.value.metadata?.resourceVersion)
            if (rv > (covered.get(request.key) ?? -1)) covered.set(request.key, rv)
            const list = waiting.get(request.key)
            if (list === undefined) return
            if (typeof list === "number") {
              if (Math.abs(list) > rv) return
              countCode(list)
              waiting.delete(request.key)
              return
            }
            let done = 0
            while (done < list.length && Math.abs(list[done]) <= rv) countCode(list[done++])
            if (done === list.length) waiting.delete(request.key)
            else if (done > 0) list.splice(0, done)
          })
      }).pipe(Scope.provide(scope), Effect.forkIn(scope))
    } else {
      for (let h = 0; h < job.handlers; h++) {
        yield* informer.addEventHandler({
          name: `counter-${h}`,
          onAdd: () => Effect.sync(() => counters.add(h)),
          onUpdate: () => Effect.sync(() => counters.update(h))
        })
      }
    }
    return { factory, informer }
  }))
  const lastResourceVersion = informer.indexer.lastResourceVersion
  return {
    start: () => runtime.runPromise(factory.start),
    // the informer retries every failure; a session that cannot sync times out
    failure: new Promise<never>(() => undefined),
    relistApplied: (rv) => Number(Effect.runSync(lastResourceVersion)) >= Number(rv),
    stop: () => Effect.runPromise(Scope.close(scope, Exit.void)).then(() => runtime.dispose())
  }
}

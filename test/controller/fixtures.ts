/**
 * Controller test fixtures: sources over fakes (an informer started on a FakeListerWatcher, in the test's
 * scope, so it outlives the controller's own scope), a reconcile recorder, and settling helpers.
 */
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Scope from "effect/Scope"
import type * as Controller from "../../src/Controller.js"
import * as FakeListerWatcher from "../../src/FakeListerWatcher.js"
import type { KubeObject } from "../../src/KubeObject.js"
import * as Resource from "../../src/Resource.js"
import * as SharedInformer from "../../src/SharedInformer.js"

export interface Obj extends KubeObject {
  readonly data?: Readonly<Record<string, string>> | undefined
  readonly spec?: Readonly<Record<string, unknown>> | undefined
  readonly status?: Readonly<Record<string, unknown>> | undefined
}

export const configMaps: Resource.Resource<Obj> = Resource.make<Obj>({
  group: "",
  version: "v1",
  resource: "configmaps",
  kind: "ConfigMap",
  namespaced: true
})

export const deployments: Resource.Resource<Obj> = Resource.make<Obj>({
  group: "apps",
  version: "v1",
  resource: "deployments",
  kind: "Deployment",
  namespaced: true
})

export const pods: Resource.Resource<Obj> = Resource.make<Obj>({
  group: "",
  version: "v1",
  resource: "pods",
  kind: "Pod",
  namespaced: true
})

export const namespaces: Resource.Resource<Obj> = Resource.make<Obj>({
  group: "",
  version: "v1",
  resource: "namespaces",
  kind: "Namespace",
  namespaced: false
})

export const obj = (
  namespace: string | undefined,
  name: string,
  fields: Omit<Obj, "metadata"> & { readonly metadata?: KubeObject["metadata"] } = {}
): Obj => ({
  ...fields,
  metadata: { ...(namespace === undefined ? {} : { namespace }), name, ...fields.metadata }
})

export interface FakeSource extends Controller.Source<Obj> {
  readonly fake: FakeListerWatcher.FakeListerWatcher.Service<Obj>
}

/**
 * A started informer over a fake holding `initial`, in a scope closed by the test's: it outlives any
 * controller made inside a nested scope.
 */
export const source = (
  resource: Resource.Resource<Obj>,
  initial: ReadonlyArray<Obj> = []
): Effect.Effect<FakeSource, never, Scope.Scope> =>
  Effect.gen(function*() {
    const fake = yield* FakeListerWatcher.make<Obj>({ initial, resource })
    const informer = yield* SharedInformer.make(fake, { name: resource.resource })
    yield* Effect.orDie(informer.start)
    return { resource, informer, fake }
  })

/** Runs `f` in a scope of its own, closed at the end (the controller's lifetime). */
export const inScope = <A, E, R>(f: (scope: Scope.Scope) => Effect.Effect<A, E, R>) =>
  Effect.gen(function*() {
    const scope = yield* Scope.make()
    const result = yield* Effect.exit(f(scope))
    return { result, scope, close: Scope.close(scope, Exit.void) }
  })

/** The shared `eventually`: under the TestClock it settles until the condition holds (500 turns at most). */
export { eventually } from "../fixtures/index.js"

/** Reconciles seen, in order, with the number running at once. */
export const recorder = () => {
  const seen: Array<string> = []
  const running = new Map<string, number>()
  let concurrent = 0
  let maxConcurrent = 0
  let sameKeyOverlap = false
  /** Records the reconcile of `request`, then runs `body()` (called after the record: `count` includes it). */
  const around = <A, E, R>(request: Controller.Request, body: () => Effect.Effect<A, E, R>) =>
    Effect.acquireUseRelease(
      Effect.sync(() => {
        seen.push(request.key)
        const n = (running.get(request.key) ?? 0) + 1
        if (n > 1) sameKeyOverlap = true
        running.set(request.key, n)
        concurrent++
        maxConcurrent = Math.max(maxConcurrent, concurrent)
      }),
      () => Effect.suspend(body),
      () =>
        Effect.sync(() => {
          running.set(request.key, running.get(request.key)! - 1)
          concurrent--
        })
    )
  return {
    seen,
    around,
    count: (key: string) => seen.filter((k) => k === key).length,
    get maxConcurrent() {
      return maxConcurrent
    },
    get sameKeyOverlap() {
      return sameKeyOverlap
    }
  }
}

/**
 * One protocol, two front ends: the same scenario (list with limit/continue, exact lists, watch from a
 * version, selector exits, watch-list and its end bookmark, Gone after the history moved on, too-large
 * versions) run against the library's FakeListerWatcher and against the test kit's embedded API server
 * through the HTTP ListerWatcher, with identical results. Both are served by the same store
 * (`ApiStore`); this test keeps them from drifting apart.
 */
import * as ApiServer from "@effect-informers/testkit/ApiServer"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Result from "effect/Result"
import * as Stream from "effect/Stream"
import * as ApiStore from "../../src/ApiStore.js"
import * as FakeListerWatcher from "../../src/FakeListerWatcher.js"
import * as HttpListerWatcher from "../../src/HttpListerWatcher.js"
import * as KubeConfig from "../../src/KubeConfig.js"
import type { KubeObject } from "../../src/KubeObject.js"
import type * as ListerWatcher from "../../src/ListerWatcher.js"
import * as Resource from "../../src/Resource.js"

const historySize = 6
const scope = { namespace: "ns", labelSelector: "app=web" }

/** A front end: an unscoped and a scoped ListerWatcher over pods, and writes. */
interface Cluster {
  readonly all: ListerWatcher.ListerWatcher.Service<KubeObject>
  readonly web: ListerWatcher.ListerWatcher.Service<KubeObject>
  readonly create: (name: string, labels: Record<string, string>) => Effect.Effect<void>
  readonly update: (name: string, labels: Record<string, string>) => Effect.Effect<void>
}

const object = (name: string, labels: Record<string, string>): KubeObject => ({
  apiVersion: "v1",
  kind: "Pod",
  metadata: { namespace: "ns", name, labels }
})

const fakeCluster: Effect.Effect<Cluster> = Effect.gen(function*() {
  const fake = yield* FakeListerWatcher.make<KubeObject>({ historySize, resource: Resource.pods })
  return {
    all: fake,
    web: FakeListerWatcher.scoped(fake, scope),
    create: (name, labels) => Effect.asVoid(fake.add(object(name, labels))),
    update: (name, labels) => Effect.asVoid(fake.modify(object(name, labels)))
  }
})

const serverCluster = Effect.gen(function*() {
  const server = yield* Effect.orDie(ApiServer.make({ historySize, bookmarkInterval: "1 hour", namespaces: ["ns"] }))
  const layer = HttpListerWatcher.layerHttpClient.pipe(
    Layer.provideMerge(KubeConfig.layerFromOptions({ server: server.url }))
  )
  const all = yield* Effect.provide(HttpListerWatcher.make(Resource.pods), layer)
  const web = yield* Effect.provide(HttpListerWatcher.make(Resource.pods, scope), layer)
  const cluster: Cluster = {
    all,
    web,
    create: (name, labels) => Effect.orDie(Effect.asVoid(server.objects.create(Resource.pods, object(name, labels)))),
    update: (name, labels) => Effect.orDie(Effect.asVoid(server.objects.update(Resource.pods, object(name, labels))))
  }
  return cluster
})

/** A resourceVersion relative to the cluster's at the start of the scenario (the server's namespaces come first). */
const relative = (rv: string | undefined, base: number): string => String(Number(rv) - base)

const describeEvent = (event: ListerWatcher.WatchEvent<KubeObject>, base: number): string =>
  event.type === "BOOKMARK"
    ? `BOOKMARK@${relative(event.object.metadata.resourceVersion, base)}${
      event.object.metadata.annotations?.["k8s.io/initial-events-end"] === "true" ? " end" : ""
    }`
    : `${event.type} ${event.object.metadata?.name}@${
      relative(event.object.metadata?.resourceVersion, base)
    } app=${event.object.metadata?.labels?.app}`

/** The first `n` events of a watch, or its error's tag and reason. */
const events = (
  lw: ListerWatcher.ListerWatcher.Service<KubeObject>,
  options: ListerWatcher.WatchOptions,
  n: number,
  base: number
): Effect.Effect<ReadonlyArray<string> | string> =>
  lw.watch(options).pipe(
    Stream.take(n),
    Stream.runCollect,
    Effect.result,
    Effect.map(Result.match({
      onFailure: (error) => `${error._tag} ${error.reason}`,
      onSuccess: (collected) => collected.map((event) => describeEvent(event, base))
    }))
  )

/** A page, normalised, or the error's tag and reason. */
const page = (
  lw: ListerWatcher.ListerWatcher.Service<KubeObject>,
  options: ListerWatcher.ListOptions,
  base: number
): Effect.Effect<
  {
    readonly names: string
    readonly rv: string
    readonly more: boolean
    readonly remaining: number | undefined
    readonly continue: string | undefined
  } | string
> =>
  lw.list(options).pipe(
    Effect.result,
    Effect.map(Result.match({
      onFailure: (error) => `${error._tag} ${error.reason}`,
      onSuccess: (p) => ({
        names: p.items.map((o) => o.metadata?.name).join(","),
        rv: relative(p.resourceVersion, base),
        more: p.continue !== undefined,
        remaining: p.remainingItemCount,
        continue: p.continue
      })
    }))
  )

/** The scenario; returns what each step saw. */
const scenario = (cluster: Cluster) =>
  Effect.gen(function*() {
    const seen: Record<string, unknown> = {}
    const record = (step: string, value: unknown) => {
      // continue tokens are opaque: only whether there is one is compared
      seen[step] = typeof value === "object" && value !== null && "continue" in value
        ? { ...value, continue: undefined }
        : value
      return value
    }
    const { all, web } = cluster
    // resourceVersions are compared relative to the cluster's at the start
    const base = Number((yield* all.list({})).resourceVersion)
    const v = (n: number) => String(base + n)
    yield* cluster.create("a", { app: "web" }) // 1
    yield* cluster.create("b", { app: "web" }) // 2
    yield* cluster.create("c", { app: "web" }) // 3
    yield* cluster.create("d", { app: "db" }) // 4

    // limit and continue, with remainingItemCount when nothing filters
    const first = record("list limit 2", yield* page(all, { limit: 2 }, base))
    const token = typeof first === "string" ? undefined : (first as { continue: string | undefined }).continue
    record("list continue", yield* page(all, { limit: 2, continue: token }, base))
    const webFirst = record("scoped list limit 2", yield* page(web, { limit: 2 }, base))
    const webToken = typeof webFirst === "string" ? undefined : (webFirst as { continue: string | undefined }).continue
    record("scoped list continue", yield* page(web, { limit: 2, continue: webToken }, base))

    // LIST at a resourceVersion: exact, legacy exact (limit), not older than
    record("list exact 2", yield* page(all, { resourceVersion: v(2), resourceVersionMatch: "Exact" }, base))
    record("list 2 with limit", yield* page(all, { resourceVersion: v(2), limit: 10 }, base))
    record("list not older than 2", yield* page(all, { resourceVersion: v(2) }, base))

    // selector exit and entry
    yield* cluster.update("a", { app: "db" }) // 5
    yield* cluster.update("d", { app: "web" }) // 6
    record("scoped watch from 4", yield* events(web, { resourceVersion: v(4) }, 2, base))
    record("watch from 2", yield* events(all, { resourceVersion: v(2) }, 4, base))
    record("scoped exact list at 4", yield* page(web, { resourceVersion: v(4), resourceVersionMatch: "Exact" }, base))

    // watch-list: the current state, then the initial-events-end bookmark
    record(
      "scoped watch-list",
      yield* events(
        web,
        {
          resourceVersion: "",
          resourceVersionMatch: "NotOlderThan",
          sendInitialEvents: true,
          allowWatchBookmarks: true
        },
        4,
        base
      )
    )
    record("watch-list without bookmarks", yield* events(all, { sendInitialEvents: true }, 1, base))

    // the history moves on: older versions and tokens are Gone
    for (let i = 0; i < 5; i++) yield* cluster.update("b", { app: "web", n: String(i) }) // 7..11
    record("continue after compaction", yield* page(all, { limit: 2, continue: token }, base))
    record("watch from 3 after compaction", yield* events(all, { resourceVersion: v(3) }, 1, base))
    record("watch from 5 after compaction", yield* events(all, { resourceVersion: v(5) }, 1, base))
    record(
      "list exact 3 after compaction",
      yield* page(all, { resourceVersion: v(3), resourceVersionMatch: "Exact" }, base)
    )

    // too large
    record("watch from 99", yield* events(all, { resourceVersion: v(99) }, 1, base))
    record("list at 99", yield* page(all, { resourceVersion: v(99) }, base))
    return seen
  })

describe("ApiStore: the fake and the embedded API server agree", () => {
  it.live("one scenario, identical results", () =>
    Effect.gen(function*() {
      const fake = yield* scenario(yield* fakeCluster)
      const server = yield* scenario(yield* serverCluster)
      assert.deepStrictEqual(server, fake)
      assert.deepStrictEqual(fake, {
        "list limit 2": { names: "a,b", rv: "4", more: true, remaining: 2, continue: undefined },
        "list continue": { names: "c,d", rv: "4", more: false, remaining: undefined, continue: undefined },
        "scoped list limit 2": { names: "a,b", rv: "4", more: true, remaining: undefined, continue: undefined },
        "scoped list continue": { names: "c", rv: "4", more: false, remaining: undefined, continue: undefined },
        "list exact 2": { names: "a,b", rv: "2", more: false, remaining: undefined, continue: undefined },
        "list 2 with limit": { names: "a,b", rv: "2", more: false, remaining: undefined, continue: undefined },
        "list not older than 2": { names: "a,b,c,d", rv: "4", more: false, remaining: undefined, continue: undefined },
        "scoped watch from 4": ["DELETED a@5 app=web", "ADDED d@6 app=web"],
        "watch from 2": ["ADDED c@3 app=web", "ADDED d@4 app=db", "MODIFIED a@5 app=db", "MODIFIED d@6 app=web"],
        "scoped exact list at 4": { names: "a,b,c", rv: "4", more: false, remaining: undefined, continue: undefined },
        "scoped watch-list": ["ADDED b@2 app=web", "ADDED c@3 app=web", "ADDED d@6 app=web", "BOOKMARK@6 end"],
        "watch-list without bookmarks": "StatusError Invalid",
        "continue after compaction": "StatusError Gone",
        "watch from 3 after compaction": "StatusError Gone",
        "watch from 5 after compaction": ["MODIFIED d@6 app=web"],
        "list exact 3 after compaction": "StatusError Gone",
        "watch from 99": "StatusError ResourceVersionTooLarge",
        "list at 99": "StatusError ResourceVersionTooLarge"
      })
    }))

  it("the store on its own: a hidden change is never sent nor replayed, but older states still undo it", () => {
    interface Obj extends ApiStore.Entry {}
    const store = ApiStore.make<Obj>({ historySize: 10 })
    const pods = new ApiStore.Collection<Obj>(undefined)
    const entry = (name: string, app: string): Obj => ({
      key: `ns/${name}`,
      namespace: "ns",
      name,
      obj: { metadata: { namespace: "ns", name, labels: { app } } },
      rv: store.rv + 1,
      labels: { app }
    })
    store.commit(pods, "ADDED", entry("a", "web"), undefined)
    store.commit(pods, "ADDED", entry("b", "web"), undefined, undefined, true)
    const at1 = ApiStore.list(store, pods, undefined, { resourceVersion: "1", resourceVersionMatch: "Exact" })
    assert.isTrue(Result.isSuccess(at1) && at1.success.page.items.map((e) => e.name).join() === "a")
    const now = ApiStore.list(store, pods, undefined, {})
    assert.isTrue(Result.isSuccess(now) && now.success.page.items.map((e) => e.name).join() === "a,b")
    assert.deepStrictEqual(store.eventsAfter(pods, 0).map((e) => e.entry.name), ["a"])
  })
})

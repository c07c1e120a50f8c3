/**
 * Metadata-only informers (`Resource.metadataOnly`): over HTTP against the embedded ApiServer (LIST, GET,
 * WATCH, watch-list, bookmarks answered as PartialObjectMetadata), against a server that ignores the
 * Accept header (objects cut down where they enter), and over the fake source.
 */
import * as ApiServer from "@effect-informers/testkit/ApiServer"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Queue from "effect/Queue"
import * as Redacted from "effect/Redacted"
import * as Stream from "effect/Stream"
import * as FakeListerWatcher from "../../../src/FakeListerWatcher.js"
import * as HttpListerWatcher from "../../../src/HttpListerWatcher.js"
import * as InformerFactory from "../../../src/InformerFactory.js"
import type { KubeObject } from "../../../src/KubeObject.js"
import * as Metadata from "../../../src/Metadata.js"
import * as Resource from "../../../src/Resource.js"
import { pod as fixturePod } from "../../fixtures/index.js"
import { event, fake, json, live, podList, TOKEN } from "../../transport/httpListerWatcher/fixtures.js"

const podsMeta = Resource.metadataOnly(Resource.pods)

/** The suite's pods: in "default", with a spec (which a metadata-only informer must not keep). */
const pod = (name: string, labels: Record<string, string> = {}) =>
  fixturePod(name, {
    namespace: "default",
    labels,
    spec: { containers: [{ name: "main", image: "nginx:1.27" }], nodeName: "node-1" }
  }) as Resource.Pod

/** The body keys of an object: a metadata-only object has no `spec` (nor `status`). */
const keys = (obj: unknown): ReadonlyArray<string> => Object.keys(obj as object).sort()

const assertMetadataOnly = (obj: KubeObject) => {
  assert.deepStrictEqual(keys(obj), ["apiVersion", "kind", "metadata"])
  assert.strictEqual(obj.kind, "PartialObjectMetadata")
  assert.strictEqual(obj.apiVersion, "meta.k8s.io/v1")
}

/** An embedded server and, over it, an informer factory talking HTTP (real loopback). */
const withServer = <A, E>(
  f: (
    server: ApiServer.ApiServer.Service,
    factory: InformerFactory.InformerFactory.Service
  ) => Effect.Effect<A, E, InformerFactory.InformerFactory>
) =>
  Effect.gen(function*() {
    const server = yield* Effect.orDie(ApiServer.make({ bookmarkInterval: "100 millis" }))
    const http = live({ server: server.url, token: Redacted.make(TOKEN) })
    const factory = InformerFactory.layer().pipe(
      Layer.provide(HttpListerWatcher.layerSource()),
      Layer.provide(http)
    )
    return yield* Effect.flatMap(InformerFactory.InformerFactory, (f2) => f(server, f2)).pipe(Effect.provide(factory))
  })

describe("metadata-only informers over HTTP (embedded ApiServer)", () => {
  for (const watchList of [true, false]) {
    it.live(`sync, adds, updates and deletes carry metadata only (${watchList ? "watch-list" : "list"})`, () =>
      withServer((server, factory) =>
        Effect.gen(function*() {
          yield* server.objects.create(Resource.pods, pod("web-1", { app: "web" }))
          yield* server.objects.create(Resource.pods, pod("db-1", { app: "db" }))
          const informer = yield* factory.informerFor(podsMeta, { namespace: "default", reflector: { watchList } })
          const full = yield* factory.informerFor(Resource.pods, { namespace: "default", reflector: { watchList } })
          assert.notStrictEqual(informer as unknown, full as unknown, "the metadata informer is its own")
          assert.strictEqual(informer.name, "pods (metadata) in default")
          const seen = yield* Queue.unbounded<string>()
          const objects: Array<KubeObject> = []
          yield* informer.addEventHandler({
            onAdd: (obj) =>
              Effect.andThen(Effect.sync(() => objects.push(obj)), Queue.offer(seen, `add ${obj.metadata.name}`)),
            onUpdate: (_, obj) =>
              Effect.andThen(
                Effect.sync(() => objects.push(obj)),
                Queue.offer(seen, `update ${obj.metadata.name} ${obj.metadata.labels?.app}`)
              ),
            onDelete: (obj) =>
              Effect.andThen(
                Effect.sync(() => objects.push(obj as KubeObject)),
                Queue.offer(seen, `delete ${(obj as KubeObject).metadata?.name}`)
              )
          })
          yield* factory.start
          yield* factory.waitForCacheSync({ timeout: "10 seconds" })
          const cached = yield* informer.indexer.list
          assert.deepStrictEqual(cached.map((o) => o.metadata.name).sort(), ["db-1", "web-1"])
          for (const obj of cached) assertMetadataOnly(obj)
          assert.deepStrictEqual(cached.find((o) => o.metadata.name === "web-1")?.metadata.labels, { app: "web" })
          // the full informer of the same pods has the spec
          const fullPod = (yield* full.indexer.list).find((o) => o.metadata?.name === "web-1")
          assert.strictEqual(fullPod?.spec?.nodeName, "node-1")

          yield* server.objects.create(Resource.pods, pod("web-2", { app: "web" }))
          yield* server.objects.patch(Resource.pods, { name: "web-1", namespace: "default" }, {
            metadata: { labels: { app: "web-v2" } }
          })
          yield* server.objects.delete(Resource.pods, { name: "db-1", namespace: "default" })
          const events: Array<string> = []
          while (events.length < 5) events.push(yield* Queue.take(seen))
          assert.deepStrictEqual(events.slice(0, 2).sort(), ["add db-1", "add web-1"])
          assert.deepStrictEqual(events.slice(2), ["add web-2", "update web-1 web-v2", "delete db-1"])
          for (const obj of objects) assertMetadataOnly(obj)
          const lister = yield* factory.listerFor(podsMeta, { namespace: "default" })
          const web1 = yield* lister.byNamespace("default").get("web-1")
          assert.deepStrictEqual(web1.metadata.labels, { app: "web-v2" })
          assert.isTrue((yield* lister.list("app=web")).every((o) => o.kind === "PartialObjectMetadata"))
        })
      ))
  }

  it.live("the server answers LIST, GET, WATCH and bookmarks as PartialObjectMetadata", () =>
    Effect.gen(function*() {
      const server = yield* Effect.orDie(ApiServer.make({ bookmarkInterval: "100 millis" }))
      yield* server.objects.create(Resource.pods, pod("web-1", { app: "web" }))
      yield* Effect.gen(function*() {
        const lw = yield* HttpListerWatcher.make(podsMeta, { namespace: "default" })
        const page = yield* lw.list({ limit: 1 })
        // the server's own PartialObjectMetadata objects (a projection would be the same shape: the
        // raw answers below tell them apart)
        assert.strictEqual(page.items.length, 1)
        assertMetadataOnly(page.items[0])
        const received = yield* Queue.unbounded<string>()
        yield* lw.watch({ resourceVersion: page.resourceVersion, allowWatchBookmarks: true }).pipe(
          Stream.runForEach((e) =>
            e.type === "BOOKMARK"
              ? Queue.offer(received, "BOOKMARK")
              : Effect.andThen(
                Effect.sync(() => assertMetadataOnly(e.object)),
                Queue.offer(received, `${e.type} ${e.object.metadata.name}`)
              )
          ),
          Effect.forkScoped
        )
        yield* server.objects.create(Resource.pods, pod("web-2"))
        let next = yield* Queue.take(received)
        while (next === "BOOKMARK") next = yield* Queue.take(received)
        assert.strictEqual(next, "ADDED web-2")
        while ((yield* Queue.take(received)) !== "BOOKMARK") {
          // until a periodic bookmark arrives
        }
      }).pipe(Effect.provide(live({ server: server.url, token: Redacted.make(TOKEN) })))

      // raw answers, with the headers client-go's metadata client sends
      const get = (path: string, accept: string) =>
        Effect.promise(() =>
          fetch(server.url + path, { headers: { accept, authorization: `Bearer ${TOKEN}` } }).then(async (r) => ({
            status: r.status,
            body: await r.text()
          }))
        )
      const list = yield* get("/api/v1/namespaces/default/pods?limit=1", Metadata.listAccept)
      assert.strictEqual(list.status, 200)
      const listed = JSON.parse(list.body)
      assert.strictEqual(listed.kind, "PartialObjectMetadataList")
      assert.strictEqual(listed.apiVersion, "meta.k8s.io/v1")
      assert.isString(listed.metadata.resourceVersion)
      assert.isString(listed.metadata.continue, "the list's metadata is kept (a second page exists)")
      assert.strictEqual(listed.metadata.remainingItemCount, 1)
      assertMetadataOnly(listed.items[0])

      const one = JSON.parse((yield* get("/api/v1/namespaces/default/pods/web-1", Metadata.watchAccept)).body)
      assertMetadataOnly(one)
      assert.strictEqual(one.metadata.name, "web-1")
      // plain JSON still gets the full object
      const plain = JSON.parse((yield* get("/api/v1/namespaces/default/pods/web-1", "application/json")).body)
      assert.strictEqual(plain.kind, "Pod")
      assert.strictEqual(plain.spec.nodeName, "node-1")
      // the first range the server can answer wins: plain JSON before the metadata range, or a LIST asking
      // for the object kind instead of the list kind, gets full objects
      const first = JSON.parse(
        (yield* get("/api/v1/namespaces/default/pods/web-1", `application/json,${Metadata.watchAccept}`)).body
      )
      assert.strictEqual(first.kind, "Pod")
      const wrongKind = JSON.parse((yield* get("/api/v1/namespaces/default/pods", Metadata.watchAccept)).body)
      assert.strictEqual(wrongKind.kind, "PodList")
      // v1beta1, as older clients ask
      const beta = JSON.parse(
        (yield* get(
          "/api/v1/namespaces/default/pods",
          "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1beta1"
        )).body
      )
      assert.strictEqual(beta.kind, "PartialObjectMetadataList")

      // watch-list: the initial events and the end bookmark, all PartialObjectMetadata
      const controller = new AbortController()
      const lines = yield* Effect.promise(async () => {
        const response = await fetch(
          server.url + "/api/v1/namespaces/default/pods?watch=true&sendInitialEvents=true&allowWatchBookmarks=true" +
            "&resourceVersionMatch=NotOlderThan",
          { headers: { accept: Metadata.watchAccept }, signal: controller.signal }
        )
        const reader = response.body!.getReader()
        let text = ""
        while (!text.includes("k8s.io/initial-events-end")) {
          const { done, value } = await reader.read()
          if (done) break
          text += new TextDecoder().decode(value)
        }
        controller.abort()
        return text.trim().split("\n").map((line) => JSON.parse(line))
      })
      assert.deepStrictEqual(lines.map((l) => l.type), ["ADDED", "ADDED", "BOOKMARK"])
      for (const line of lines) {
        assert.strictEqual(line.object.kind, "PartialObjectMetadata")
        assert.strictEqual(line.object.apiVersion, "meta.k8s.io/v1")
      }
      assertMetadataOnly(lines[0].object)
    }))
})

describe("metadata-only objects from a server that ignores the Accept header", () => {
  it.effect("full objects are cut down to their metadata; the Accept headers are client-go's", () =>
    Effect.gen(function*() {
      const full = {
        apiVersion: "v1",
        kind: "Pod",
        ...pod("web-1"),
        metadata: { ...pod("web-1").metadata, resourceVersion: "5" }
      }
      const { layer, requests } = fake((url) =>
        url.searchParams.get("watch") === "true"
          ? new Response(event("MODIFIED", { ...full, metadata: { ...full.metadata, resourceVersion: "6" } }))
          : json(200, podList([full], "5"))
      )
      const { page, watched } = yield* Effect.gen(function*() {
        const lw = yield* HttpListerWatcher.make(podsMeta, { namespace: "default" })
        const page = yield* lw.list({})
        const watched = yield* Stream.runCollect(lw.watch({ resourceVersion: "5" }))
        return { page, watched: Array.from(watched) }
      }).pipe(Effect.provide(layer))
      assertMetadataOnly(page.items[0])
      assert.deepStrictEqual(page.items[0].metadata, full.metadata)
      assert.strictEqual(watched.length, 1)
      const modified = watched[0]
      assert.strictEqual(modified.type, "MODIFIED")
      if (modified.type !== "BOOKMARK") {
        assertMetadataOnly(modified.object)
        assert.strictEqual(modified.object.metadata.resourceVersion, "6")
      }
      assert.strictEqual(requests[0].headers.accept, Metadata.listAccept)
      assert.strictEqual(requests[1].headers.accept, Metadata.watchAccept)
    }))
})

describe("metadata-only informers over the fake source", () => {
  it.effect("the fake of the full objects serves their metadata", () =>
    Effect.gen(function*() {
      const fakes = yield* FakeListerWatcher.FakeListerWatcherSource
      const factory = yield* InformerFactory.InformerFactory
      yield* fakes.fakeFor(Resource.pods).add(pod("web-1", { app: "web" }))
      const informer = yield* factory.informerFor(podsMeta)
      // one metadata informer per scope, whichever metadataOnly value asks; apart from the full one
      assert.strictEqual(yield* factory.informerFor(Resource.metadataOnly(Resource.pods)), informer)
      const full: unknown = yield* factory.informerFor(Resource.pods)
      assert.notStrictEqual(full, informer as unknown)
      yield* factory.start
      yield* factory.waitForCacheSync()
      const [only] = yield* informer.indexer.list
      assertMetadataOnly(only)
      assert.deepStrictEqual(only.metadata.labels, { app: "web" })
    }).pipe(
      Effect.provide(InformerFactory.layer()),
      Effect.provide(FakeListerWatcher.layerSource())
    ))
})

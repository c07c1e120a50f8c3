import { assert, describe, it } from "@effect/vitest"
import type { KubeObject } from "effect-informers/KubeObject"
import * as Resource from "effect-informers/Resource"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as ApiServer from "../src/ApiServer.js"
import * as ChurnSimulator from "../src/ChurnSimulator.js"
import { waitFor } from "./fixtures.js"

// -------------------------------------------------------------------------------------------------
// helpers
// -------------------------------------------------------------------------------------------------

interface Obj extends KubeObject {
  readonly metadata: {
    readonly name: string
    readonly namespace?: string
    readonly uid?: string
    readonly resourceVersion?: string
    readonly generateName?: string
    readonly creationTimestamp?: string
    readonly deletionTimestamp?: string
    readonly generation?: number
    readonly labels?: { readonly [key: string]: string }
    readonly annotations?: { readonly [key: string]: string }
    readonly finalizers?: ReadonlyArray<string>
  }
  readonly spec?: { readonly [key: string]: unknown }
}

const pod = (
  name: string,
  namespace = "default",
  labels: { readonly [key: string]: string } = {},
  spec: { readonly [key: string]: unknown } = { nodeName: "node-1", containers: [{ name: "c", image: "nginx" }] }
): Obj => ({ apiVersion: "v1", kind: "Pod", metadata: { name, namespace, labels }, spec })

interface Reply {
  readonly status: number
  readonly headers: Headers
  readonly text: string
  readonly json: any
}

const call = (url: string, init?: RequestInit): Effect.Effect<Reply> =>
  Effect.promise(async () => {
    const response = await fetch(url, init)
    const text = await response.text()
    let json: unknown = undefined
    try {
      json = text === "" ? undefined : JSON.parse(text)
    } catch {
      json = undefined
    }
    return { status: response.status, headers: response.headers, text, json }
  })

const send = (url: string, method: string, body: unknown, contentType = "application/json") =>
  call(url, { method, headers: { "content-type": contentType }, body: JSON.stringify(body) })

const assertStatus = (reply: Reply, code: number, reason: string) => {
  assert.strictEqual(reply.status, code, reply.text)
  assert.strictEqual(reply.json.kind, "Status")
  assert.strictEqual(reply.json.apiVersion, "v1")
  assert.deepStrictEqual(reply.json.metadata.continue === undefined ? reply.json.metadata : {}, {})
  assert.strictEqual(reply.json.status, "Failure")
  assert.strictEqual(reply.json.reason, reason)
  assert.strictEqual(reply.json.code, code)
  assert.isString(reply.json.message)
}

const names = (list: { readonly items: ReadonlyArray<Obj> }): Array<string> =>
  list.items.map((o) => `${o.metadata.namespace ?? ""}/${o.metadata.name}`)

interface OpenWatch {
  readonly status: number
  readonly lines: Array<string>
  rest: string
  ended: boolean
  error: unknown
  bytes: number
  readonly headersAt: number
}

/** Opens a watch whose lines accumulate in the background; aborted when the scope closes. */
const openWatch = (url: string) =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      const controller = new AbortController()
      const response = await fetch(url, { signal: controller.signal })
      const state: OpenWatch & { readonly controller: AbortController } = {
        status: response.status,
        lines: [],
        rest: "",
        ended: false,
        error: undefined,
        bytes: 0,
        headersAt: Date.now(),
        controller
      }
      const reader = response.body!.getReader()
      const decoder = new TextDecoder()
      void (async () => {
        try {
          for (;;) {
            const { done, value } = await reader.read()
            if (done) break
            state.bytes += value.length
            state.rest += decoder.decode(value, { stream: true })
            let i: number
            while ((i = state.rest.indexOf("\n")) >= 0) {
              state.lines.push(state.rest.slice(0, i))
              state.rest = state.rest.slice(i + 1)
            }
          }
        } catch (error) {
          state.error = error
        }
        state.ended = true
      })()
      return state
    }),
    (state) => Effect.sync(() => state.controller.abort())
  )

const events = (w: OpenWatch): Array<any> => w.lines.map((line) => JSON.parse(line))

const sleep = (ms: number) => Effect.promise(() => new Promise((resolve) => setTimeout(resolve, ms)))

/** Pods typed as the test's plain objects. */
const pods = Resource.pods as unknown as Resource.Resource<Obj>

const start = (options: ApiServer.Options = {}) => ApiServer.make(options).pipe(Effect.orDie)

const seedPods = (server: ApiServer.ApiServer.Service, objects: ReadonlyArray<Obj>) =>
  Effect.forEach(objects, (o) => server.create(pods, o), { discard: true }).pipe(Effect.orDie)

// -------------------------------------------------------------------------------------------------
// list
// -------------------------------------------------------------------------------------------------

describe("ApiServer list", () => {
  it.scopedLive("serves a sorted list with the server's resourceVersion", () =>
    Effect.gen(function*() {
      const server = yield* start()
      yield* seedPods(server, [pod("b", "ns-b"), pod("a", "ns-b"), pod("z", "ns-a"), pod("c", "default")])
      const reply = yield* call(`${server.url}/api/v1/pods`)
      assert.strictEqual(reply.status, 200)
      assert.match(reply.headers.get("content-type") ?? "", /^application\/json/)
      assert.strictEqual(reply.json.kind, "PodList")
      assert.strictEqual(reply.json.apiVersion, "v1")
      assert.strictEqual(reply.json.metadata.resourceVersion, yield* server.resourceVersion)
      assert.deepStrictEqual(names(reply.json), ["default/c", "ns-a/z", "ns-b/a", "ns-b/b"])
      const inNamespace = yield* call(`${server.url}/api/v1/namespaces/ns-b/pods`)
      assert.deepStrictEqual(names(inNamespace.json), ["ns-b/a", "ns-b/b"])
      for (const item of reply.json.items) {
        assert.strictEqual(item.kind, "Pod")
        assert.isString(item.metadata.uid)
        assert.match(item.metadata.resourceVersion, /^\d+$/)
      }
    }))

  it.scopedLive("applies label and field selectors, rejecting unsupported fields like the API server", () =>
    Effect.gen(function*() {
      const server = yield* start()
      yield* seedPods(server, [
        pod("a", "default", { app: "x" }),
        pod("b", "default", { app: "y" }),
        pod("c", "other", { app: "x", tier: "web" }, { nodeName: "node-2" })
      ])
      const byLabel = yield* call(`${server.url}/api/v1/pods?labelSelector=${encodeURIComponent("app=x")}`)
      assert.deepStrictEqual(names(byLabel.json), ["default/a", "other/c"])
      const setBased = yield* call(
        `${server.url}/api/v1/pods?labelSelector=${encodeURIComponent("app in (x,y),!tier")}`
      )
      assert.deepStrictEqual(names(setBased.json), ["default/a", "default/b"])
      const byName = yield* call(`${server.url}/api/v1/pods?fieldSelector=${encodeURIComponent("metadata.name=b")}`)
      assert.deepStrictEqual(names(byName.json), ["default/b"])
      const byNamespace = yield* call(
        `${server.url}/api/v1/pods?fieldSelector=${encodeURIComponent("metadata.namespace!=default")}`
      )
      assert.deepStrictEqual(names(byNamespace.json), ["other/c"])
      const byNode = yield* call(
        `${server.url}/api/v1/pods?fieldSelector=${encodeURIComponent("spec.nodeName=node-2")}`
      )
      assert.deepStrictEqual(names(byNode.json), ["other/c"])
      const unsupported = yield* call(`${server.url}/api/v1/pods?fieldSelector=${encodeURIComponent("spec.foo=x")}`)
      assertStatus(unsupported, 400, "BadRequest")
      assert.strictEqual(unsupported.json.message, "field label not supported: spec.foo")
      const configMaps = yield* call(
        `${server.url}/api/v1/configmaps?fieldSelector=${encodeURIComponent("spec.nodeName=x")}`
      )
      assertStatus(configMaps, 400, "BadRequest")
      const badLabel = yield* call(`${server.url}/api/v1/pods?labelSelector=${encodeURIComponent("app in (x")}`)
      assertStatus(badLabel, 400, "BadRequest")
    }))

  it.scopedLive("paginates one consistent snapshot across pages, whatever changes in between", () =>
    Effect.gen(function*() {
      const server = yield* start()
      yield* seedPods(server, Array.from({ length: 25 }, (_, i) => pod(`p-${String(i).padStart(2, "0")}`)))
      const full = yield* call(`${server.url}/api/v1/pods`)
      const page1 = yield* call(`${server.url}/api/v1/namespaces/default/pods?limit=10`)
      assert.strictEqual(page1.json.items.length, 10)
      assert.strictEqual(page1.json.metadata.remainingItemCount, 15)
      assert.strictEqual(page1.json.metadata.resourceVersion, full.json.metadata.resourceVersion)
      // change the data between pages
      yield* server.delete(pods, { name: "p-15", namespace: "default" })
      yield* server.create(pods, pod("p-12a"))
      yield* server.patch(pods, { name: "p-20", namespace: "default" }, { metadata: { labels: { x: "1" } } })
      const page2 = yield* call(
        `${server.url}/api/v1/namespaces/default/pods?limit=10&continue=${page1.json.metadata.continue}`
      )
      assert.strictEqual(page2.json.metadata.resourceVersion, full.json.metadata.resourceVersion)
      assert.strictEqual(page2.json.metadata.remainingItemCount, 5)
      const page3 = yield* call(
        `${server.url}/api/v1/namespaces/default/pods?limit=10&continue=${page2.json.metadata.continue}`
      )
      assert.isUndefined(page3.json.metadata.continue)
      const paged = [...page1.json.items, ...page2.json.items, ...page3.json.items]
      assert.deepStrictEqual(paged, full.json.items)
    }))

  it.scopedLive("answers an expired continue token with 410 and an inconsistent token to go on", () =>
    Effect.gen(function*() {
      const server = yield* start()
      yield* seedPods(server, Array.from({ length: 6 }, (_, i) => pod(`p-${i}`)))
      const page1 = yield* call(`${server.url}/api/v1/pods?limit=2`)
      yield* server.create(pods, pod("p-9"))
      yield* server.compact
      const expired = yield* call(`${server.url}/api/v1/pods?limit=2&continue=${page1.json.metadata.continue}`)
      assert.strictEqual(expired.status, 410)
      assert.strictEqual(expired.json.reason, "Expired")
      assert.match(expired.json.message, /continue parameter is too old/)
      const inconsistent = expired.json.metadata.continue
      assert.isString(inconsistent)
      const rest = yield* call(`${server.url}/api/v1/pods?limit=10&continue=${inconsistent}`)
      assert.strictEqual(rest.status, 200)
      assert.deepStrictEqual(names(rest.json), [
        "default/p-2",
        "default/p-3",
        "default/p-4",
        "default/p-5",
        "default/p-9"
      ])
      const garbage = yield* call(`${server.url}/api/v1/pods?limit=2&continue=garbage`)
      assertStatus(garbage, 400, "BadRequest")
    }))

  it.scopedLive("implements the resourceVersion semantics of LIST, including Exact reads from history", () =>
    Effect.gen(function*() {
      const server = yield* start({ historySize: 50 })
      yield* seedPods(server, [pod("a"), pod("b"), pod("c")])
      const rv = Number(yield* server.resourceVersion)
      yield* server.patch(pods, { name: "a", namespace: "default" }, { metadata: { labels: { v: "2" } } })
      yield* server.delete(pods, { name: "b", namespace: "default" })
      yield* server.create(pods, pod("d"))
      const current = yield* server.resourceVersion
      for (const param of ["", "&resourceVersion=", "&resourceVersion=0", `&resourceVersion=${rv}`]) {
        const reply = yield* call(`${server.url}/api/v1/pods?x=1${param}`)
        assert.strictEqual(reply.json.metadata.resourceVersion, current, param)
        assert.deepStrictEqual(names(reply.json), ["default/a", "default/c", "default/d"])
      }
      const exact = yield* call(`${server.url}/api/v1/pods?resourceVersion=${rv}&resourceVersionMatch=Exact`)
      assert.strictEqual(exact.json.metadata.resourceVersion, String(rv))
      assert.deepStrictEqual(names(exact.json), ["default/a", "default/b", "default/c"])
      assert.deepStrictEqual(exact.json.items[0].metadata.labels, {})
      // a limit with a resourceVersion and no match is an exact read (legacy pagination semantics)
      const legacy = yield* call(`${server.url}/api/v1/pods?resourceVersion=${rv}&limit=2`)
      assert.strictEqual(legacy.json.metadata.resourceVersion, String(rv))
      assert.deepStrictEqual(names(legacy.json), ["default/a", "default/b"])
      const tooLarge = yield* call(`${server.url}/api/v1/pods?resourceVersion=${Number(current) + 10}`)
      assertStatus(tooLarge, 504, "Timeout")
      assert.match(tooLarge.json.message, /Too large resource version/)
      const noRv = yield* call(`${server.url}/api/v1/pods?resourceVersionMatch=NotOlderThan`)
      assertStatus(noRv, 422, "Invalid")
      assert.strictEqual(noRv.json.details.kind, "ListOptions")
      yield* server.compact
      const tooOld = yield* call(`${server.url}/api/v1/pods?resourceVersion=${rv}&resourceVersionMatch=Exact`)
      assertStatus(tooOld, 410, "Expired")
    }))

  it.scopedLive("streams large lists as valid JSON", () =>
    Effect.gen(function*() {
      const server = yield* start()
      yield* ChurnSimulator.seed(server, { pods: 600, namespaces: 3 })
      const reply = yield* call(`${server.url}/api/v1/pods`)
      assert.isAbove(reply.text.length, 1024 * 1024)
      assert.strictEqual(reply.json.items.length, 600)
      const snapshot = yield* server.snapshot(Resource.pods)
      assert.deepStrictEqual(reply.json.items, JSON.parse(JSON.stringify(snapshot)))
    }))
})

// -------------------------------------------------------------------------------------------------
// objects
// -------------------------------------------------------------------------------------------------

describe("ApiServer objects", () => {
  it.scopedLive("creates, reads, updates, patches and deletes, with optimistic concurrency", () =>
    Effect.gen(function*() {
      const server = yield* start()
      const base = `${server.url}/api/v1/namespaces/default/pods`
      const created = yield* send(base, "POST", { metadata: { name: "web", labels: { app: "x" } }, spec: {} })
      assert.strictEqual(created.status, 201, created.text)
      assert.strictEqual(created.json.kind, "Pod")
      assert.strictEqual(created.json.apiVersion, "v1")
      assert.strictEqual(created.json.metadata.namespace, "default")
      assert.match(created.json.metadata.uid, /^[0-9a-f-]{36}$/)
      assert.match(created.json.metadata.creationTimestamp, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/)
      assert.strictEqual(created.json.metadata.resourceVersion, yield* server.resourceVersion)

      const got = yield* call(`${base}/web`)
      assert.deepStrictEqual(got.json, created.json)

      const updated = yield* send(`${base}/web`, "PUT", { ...created.json, spec: { nodeName: "n1" } })
      assert.strictEqual(updated.status, 200, updated.text)
      assert.isAbove(Number(updated.json.metadata.resourceVersion), Number(created.json.metadata.resourceVersion))
      assert.strictEqual(updated.json.metadata.uid, created.json.metadata.uid)
      assert.strictEqual(updated.json.metadata.generation, 2)

      const stale = yield* send(`${base}/web`, "PUT", { ...created.json, spec: { nodeName: "n2" } })
      assertStatus(stale, 409, "Conflict")
      assert.match(stale.json.message, /the object has been modified/)
      assert.deepStrictEqual(stale.json.details, { name: "web", kind: "pods" })

      const merged = yield* send(
        `${base}/web`,
        "PATCH",
        { metadata: { labels: { app: null, tier: "web" } } },
        "application/merge-patch+json"
      )
      assert.deepStrictEqual(merged.json.metadata.labels, { tier: "web" })
      const strategic = yield* send(
        `${base}/web`,
        "PATCH",
        { spec: { containers: [{ name: "c", image: "nginx" }] } },
        "application/strategic-merge-patch+json"
      )
      assert.deepStrictEqual(strategic.json.spec, { nodeName: "n1", containers: [{ name: "c", image: "nginx" }] })
      const jsonPatched = yield* send(
        `${base}/web`,
        "PATCH",
        [{ op: "add", path: "/metadata/annotations", value: { a: "b" } }, {
          op: "replace",
          path: "/spec/nodeName",
          value: "n9"
        }],
        "application/json-patch+json"
      )
      assert.deepStrictEqual(jsonPatched.json.metadata.annotations, { a: "b" })
      assert.strictEqual(jsonPatched.json.spec.nodeName, "n9")
      const stalePatch = yield* send(
        `${base}/web`,
        "PATCH",
        { metadata: { resourceVersion: created.json.metadata.resourceVersion, labels: { x: "y" } } },
        "application/merge-patch+json"
      )
      assertStatus(stalePatch, 409, "Conflict")
      const unsupported = yield* send(`${base}/web`, "PATCH", {}, "application/apply-patch+yaml")
      assertStatus(unsupported, 415, "UnsupportedMediaType")

      const deleted = yield* call(`${base}/web`, { method: "DELETE" })
      assert.strictEqual(deleted.status, 200)
      assert.strictEqual(deleted.json.metadata.name, "web")
      const gone = yield* call(`${base}/web`)
      assertStatus(gone, 404, "NotFound")
      assert.strictEqual(gone.json.message, "pods \"web\" not found")
      assert.deepStrictEqual(gone.json.details, { name: "web", kind: "pods" })
    }))

  it.scopedLive("answers errors with Status objects shaped like the API server's", () =>
    Effect.gen(function*() {
      const server = yield* start()
      const base = `${server.url}/api/v1/namespaces/default/pods`
      yield* send(base, "POST", { metadata: { name: "web" } })
      const duplicate = yield* send(base, "POST", { metadata: { name: "web" } })
      assertStatus(duplicate, 409, "AlreadyExists")
      assert.strictEqual(duplicate.json.message, "pods \"web\" already exists")
      const noName = yield* send(base, "POST", { metadata: {} })
      assertStatus(noName, 422, "Invalid")
      assert.strictEqual(noName.json.details.kind, "Pod")
      assert.strictEqual(noName.json.details.causes[0].field, "metadata.name")
      const badName = yield* send(base, "POST", { metadata: { name: "Bad_Name" } })
      assertStatus(badName, 422, "Invalid")
      const generated = yield* send(base, "POST", { metadata: { generateName: "web-" } })
      assert.strictEqual(generated.status, 201)
      assert.match(generated.json.metadata.name, /^web-[a-z0-9]{5}$/)
      const mismatch = yield* send(base, "POST", { metadata: { name: "x", namespace: "other" } })
      assertStatus(mismatch, 400, "BadRequest")
      const wrongKind = yield* send(base, "POST", { apiVersion: "v1", kind: "Service", metadata: { name: "x" } })
      assertStatus(wrongKind, 400, "BadRequest")
      const missing = yield* send(`${base}/nope`, "PUT", { metadata: { name: "nope" } })
      assertStatus(missing, 404, "NotFound")
      assertStatus(yield* call(`${server.url}/api/v1/widgets`), 404, "NotFound")
      assertStatus(yield* call(`${server.url}/apis/nope.io/v1/things`), 404, "NotFound")
      assertStatus(yield* call(`${server.url}/api/v1/namespaces/default/nodes`), 404, "NotFound")
      assertStatus(yield* call(`${server.url}/api/v1/pods/web`), 404, "NotFound")
      assertStatus(yield* call(`${server.url}/nowhere`), 404, "NotFound")
      const apps = yield* call(`${server.url}/apis/apps/v1/namespaces/default/deployments/nope`)
      assertStatus(apps, 404, "NotFound")
      assert.deepStrictEqual(apps.json.details, { name: "nope", group: "apps", kind: "deployments" })
      // the programmatic API fails the same way
      const error = yield* Effect.flip(server.get(pods, { name: "nope", namespace: "default" }))
      assert.strictEqual(error._tag, "ApiServerError")
      assert.strictEqual(error.code, 404)
      assert.strictEqual(error.reason, "NotFound")
    }))

  it.scopedLive("writes nothing for an update that changes nothing, and honours finalizers", () =>
    Effect.gen(function*() {
      const server = yield* start()
      const created = yield* server.create(pods, pod("web"))
      const same = yield* server.update(pods, created)
      assert.strictEqual(same.metadata.resourceVersion, created.metadata.resourceVersion)
      const withFinalizer = yield* server.patch(
        pods,
        { name: "web", namespace: "default" },
        { metadata: { finalizers: ["example.com/hold"] } }
      )
      const base = `${server.url}/api/v1/namespaces/default/pods`
      const deleting = yield* call(`${base}/web`, { method: "DELETE" })
      assert.strictEqual(deleting.status, 202)
      assert.isString(deleting.json.metadata.deletionTimestamp)
      assert.isAbove(Number(deleting.json.metadata.resourceVersion), Number(withFinalizer.metadata.resourceVersion))
      assert.strictEqual((yield* call(`${base}/web`)).status, 200)
      yield* server.patch(pods, { name: "web", namespace: "default" }, { metadata: { finalizers: null } })
      assert.strictEqual((yield* call(`${base}/web`)).status, 404)
    }))

  it.scopedLive("serves cluster-scoped resources and extra resources (CRDs), with discovery", () =>
    Effect.gen(function*() {
      const widgets = Resource.make({
        group: "example.com",
        version: "v1alpha1",
        resource: "widgets",
        kind: "Widget",
        namespaced: true,
        shortNames: ["wd"]
      })
      const server = yield* start({
        resources: [widgets],
        objects: [{ apiVersion: "v1", kind: "Namespace", metadata: { name: "team-a" } }]
      })
      const nodes = yield* send(`${server.url}/api/v1/nodes`, "POST", { metadata: { name: "node-1", namespace: "x" } })
      assert.strictEqual(nodes.status, 201)
      assert.isUndefined(nodes.json.metadata.namespace)
      assert.strictEqual((yield* call(`${server.url}/api/v1/nodes/node-1`)).status, 200)
      assert.strictEqual((yield* call(`${server.url}/api/v1/namespaces/team-a`)).json.kind, "Namespace")
      const widget = yield* send(`${server.url}/apis/example.com/v1alpha1/namespaces/team-a/widgets`, "POST", {
        metadata: { name: "w1" },
        spec: { size: 3 }
      })
      assert.strictEqual(widget.status, 201, widget.text)
      assert.strictEqual(widget.json.apiVersion, "example.com/v1alpha1")
      assert.strictEqual(widget.json.kind, "Widget")
      const list = yield* call(`${server.url}/apis/example.com/v1alpha1/widgets`)
      assert.strictEqual(list.json.kind, "WidgetList")
      assert.strictEqual(list.json.items.length, 1)

      const version = yield* call(`${server.url}/version`)
      assert.strictEqual(version.json.major, "1")
      const api = yield* call(`${server.url}/api`)
      assert.strictEqual(api.json.kind, "APIVersions")
      assert.deepStrictEqual(api.json.versions, ["v1"])
      const groups = yield* call(`${server.url}/apis`)
      assert.strictEqual(groups.json.kind, "APIGroupList")
      assert.include(groups.json.groups.map((g: { name: string }) => g.name), "example.com")
      const core = yield* call(`${server.url}/api/v1`)
      const podResource = core.json.resources.find((r: { name: string }) => r.name === "pods")
      assert.deepStrictEqual(
        { ...podResource, verbs: undefined, categories: undefined },
        {
          name: "pods",
          singularName: "pod",
          namespaced: true,
          kind: "Pod",
          shortNames: ["po"],
          verbs: undefined,
          categories: undefined
        }
      )
      assert.include(podResource.verbs, "watch")
      const custom = yield* call(`${server.url}/apis/example.com/v1alpha1`)
      assert.strictEqual(custom.json.resources[0].kind, "Widget")
      const openapi = yield* call(`${server.url}/openapi/v3`)
      assert.isString(openapi.json.paths["apis/example.com/v1alpha1"].serverRelativeURL)
    }))
})

// -------------------------------------------------------------------------------------------------
// watch
// -------------------------------------------------------------------------------------------------

describe("ApiServer watch", () => {
  it.scopedLive("replays from a resourceVersion, then streams live events", () =>
    Effect.gen(function*() {
      const server = yield* start()
      yield* seedPods(server, [pod("a"), pod("b")])
      const rv = yield* server.resourceVersion
      yield* server.patch(pods, { name: "a", namespace: "default" }, { metadata: { labels: { v: "2" } } })
      yield* server.delete(pods, { name: "b", namespace: "default" })
      const w = yield* openWatch(`${server.url}/api/v1/namespaces/default/pods?watch=true&resourceVersion=${rv}`)
      assert.strictEqual(w.status, 200)
      yield* waitFor("replay", () => w.lines.length >= 2)
      yield* server.create(pods, pod("c"))
      yield* server.create(pods, pod("other", "elsewhere"))
      yield* waitFor("live event", () => w.lines.length >= 3)
      yield* sleep(50)
      const seen = events(w).map((e) => [e.type, e.object.metadata.name])
      assert.deepStrictEqual(seen, [["MODIFIED", "a"], ["DELETED", "b"], ["ADDED", "c"]])
      const rvs = events(w).map((e) => Number(e.object.metadata.resourceVersion))
      assert.deepStrictEqual(rvs, [...rvs].sort((x, y) => x - y))
      assert.isAbove(rvs[0], Number(rv))
    }))

  it.scopedLive("starts with synthetic ADDED events for resourceVersion \"\" and \"0\"", () =>
    Effect.gen(function*() {
      const server = yield* start()
      yield* seedPods(server, [pod("a"), pod("b")])
      for (const rv of ["", "0"]) {
        const w = yield* openWatch(`${server.url}/api/v1/pods?watch=1&resourceVersion=${rv}`)
        yield* waitFor("initial events", () => w.lines.length >= 2)
        assert.deepStrictEqual(events(w).map((e) => [e.type, e.object.metadata.name]), [["ADDED", "a"], [
          "ADDED",
          "b"
        ]])
      }
    }))

  it.scopedLive("sends ERROR 410 and closes when the resourceVersion is older than the history", () =>
    Effect.gen(function*() {
      const server = yield* start({ historySize: 3 })
      yield* seedPods(server, [pod("a")])
      const rv = yield* server.resourceVersion
      yield* seedPods(server, [pod("b"), pod("c"), pod("d"), pod("e")])
      const w = yield* openWatch(`${server.url}/api/v1/pods?watch=true&resourceVersion=${rv}`)
      assert.strictEqual(w.status, 200)
      yield* waitFor("end of stream", () => w.ended)
      const [error] = events(w)
      assert.strictEqual(error.type, "ERROR")
      assert.strictEqual(error.object.kind, "Status")
      assert.strictEqual(error.object.code, 410)
      assert.strictEqual(error.object.reason, "Expired")
      assert.strictEqual(w.lines.length, 1)
      // within the history it works, and compaction expires it
      const recent = String(Number(yield* server.resourceVersion) - 2)
      const ok = yield* openWatch(`${server.url}/api/v1/pods?watch=true&resourceVersion=${recent}`)
      yield* waitFor("replay", () => ok.lines.length >= 2)
      yield* server.compact
      const compacted = yield* openWatch(`${server.url}/api/v1/pods?watch=true&resourceVersion=${recent}`)
      yield* waitFor("end of stream", () => compacted.ended)
      assert.strictEqual(events(compacted)[0].object.code, 410)
    }))

  it.scopedLive("streams the initial state then an initial-events-end bookmark with sendInitialEvents", () =>
    Effect.gen(function*() {
      const server = yield* start()
      yield* seedPods(server, [pod("a"), pod("b", "default", { app: "x" })])
      const rv = yield* server.resourceVersion
      const w = yield* openWatch(
        `${server.url}/api/v1/pods?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&resourceVersion=`
      )
      yield* waitFor("bookmark", () => w.lines.length >= 3)
      const [a, b, bookmark] = events(w)
      assert.deepStrictEqual([a.type, a.object.metadata.name, b.type, b.object.metadata.name], [
        "ADDED",
        "a",
        "ADDED",
        "b"
      ])
      assert.deepStrictEqual(bookmark, {
        type: "BOOKMARK",
        object: {
          kind: "Pod",
          apiVersion: "v1",
          metadata: { resourceVersion: rv, annotations: { "k8s.io/initial-events-end": "true" } }
        }
      })
      yield* server.create(pods, pod("c"))
      yield* waitFor("live event", () => w.lines.length >= 4)
      assert.strictEqual(events(w)[3].object.metadata.name, "c")
      const filtered = yield* openWatch(
        `${server.url}/api/v1/pods?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&labelSelector=app%3Dx&resourceVersion=${rv}`
      )
      yield* waitFor("bookmark", () => filtered.lines.length >= 2)
      assert.deepStrictEqual(events(filtered).map((e) => e.type), ["ADDED", "BOOKMARK"])
      const noBookmarks = yield* call(
        `${server.url}/api/v1/pods?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan`
      )
      assertStatus(noBookmarks, 422, "Invalid")
      assert.match(noBookmarks.json.message, /allowWatchBookmarks/)
      const noMatch = yield* call(
        `${server.url}/api/v1/pods?watch=true&sendInitialEvents=true&allowWatchBookmarks=true`
      )
      assertStatus(noMatch, 422, "Invalid")
    }))

  it.scopedLive("sends periodic bookmarks carrying only kind, apiVersion and resourceVersion", () =>
    Effect.gen(function*() {
      const server = yield* start({ bookmarkInterval: "150 millis" })
      yield* seedPods(server, [pod("a")])
      const rv = yield* server.resourceVersion
      const w = yield* openWatch(`${server.url}/api/v1/pods?watch=true&allowWatchBookmarks=true&resourceVersion=${rv}`)
      yield* waitFor("bookmark", () => w.lines.length >= 1, 3000)
      assert.deepStrictEqual(events(w)[0], {
        type: "BOOKMARK",
        object: { kind: "Pod", apiVersion: "v1", metadata: { resourceVersion: rv } }
      })
      const plain = yield* openWatch(`${server.url}/api/v1/pods?watch=true&resourceVersion=${rv}`)
      yield* sleep(400)
      assert.strictEqual(plain.lines.length, 0)
    }))

  it.scopedLive("flushes headers at once and closes cleanly after timeoutSeconds", () =>
    Effect.gen(function*() {
      const server = yield* start()
      const rv = yield* server.resourceVersion
      const started = Date.now()
      const w = yield* openWatch(`${server.url}/api/v1/pods?watch=true&timeoutSeconds=1&resourceVersion=${rv}`)
      assert.isBelow(w.headersAt - started, 900)
      assert.match(String(w.status), /^200$/)
      yield* waitFor("timeout", () => w.ended, 4000)
      assert.isUndefined(w.error)
      assert.isAtLeast(Date.now() - started, 900)
      assert.strictEqual(w.rest, "")
    }))

  it.scopedLive("applies selectors with the watch cache's semantics: leaving is DELETED, entering is ADDED", () =>
    Effect.gen(function*() {
      const server = yield* start()
      yield* seedPods(server, [pod("a", "default", { track: "stable" }), pod("b", "default", { track: "canary" })])
      const rv = yield* server.resourceVersion
      const w = yield* openWatch(
        `${server.url}/api/v1/pods?watch=true&resourceVersion=${rv}&labelSelector=${encodeURIComponent("track=canary")}`
      )
      const relabel = (name: string, track: string) =>
        server.patch(pods, { name, namespace: "default" }, { metadata: { labels: { track } } })
      yield* relabel("a", "canary")
      yield* server.patch(pods, { name: "a", namespace: "default" }, { metadata: { annotations: { x: "1" } } })
      const leaving = yield* relabel("a", "stable")
      yield* relabel("b", "stable")
      yield* server.delete(pods, { name: "b", namespace: "default" })
      yield* waitFor("transitions", () => w.lines.length >= 4)
      yield* sleep(50)
      const seen = events(w)
      assert.deepStrictEqual(seen.map((e) => [e.type, e.object.metadata.name]), [
        ["ADDED", "a"],
        ["MODIFIED", "a"],
        ["DELETED", "a"],
        ["DELETED", "b"]
      ])
      // the DELETED of an object leaving the selector is its previous state at the event's version
      assert.strictEqual(seen[2].object.metadata.labels.track, "canary")
      assert.strictEqual(seen[2].object.metadata.resourceVersion, leaving.metadata.resourceVersion)
      const byField = yield* openWatch(
        `${server.url}/api/v1/pods?watch=true&fieldSelector=${encodeURIComponent("metadata.name=a")}`
      )
      yield* waitFor("initial", () => byField.lines.length >= 1)
      assert.deepStrictEqual(events(byField).map((e) => e.object.metadata.name), ["a"])
    }))
})

// -------------------------------------------------------------------------------------------------
// faults
// -------------------------------------------------------------------------------------------------

describe("ApiServer faults", () => {
  it("parses and formats faults", () => {
    const cases: ReadonlyArray<readonly [string, ApiServer.Fault]> = [
      ["drop-watches", { _tag: "DropWatches" }],
      ["close-watches", { _tag: "CloseWatches" }],
      ["watch-gone:count=2,mode=http", { _tag: "WatchGone", count: 2, mode: "http" }],
      ["continue-gone:count=2", { _tag: "ContinueGone", count: 2 }],
      ["error:count=3,status=503,on=list", { _tag: "ServerError", count: 3, status: 503, on: "list" }],
      ["throttle:retry-after=5", { _tag: "TooManyRequests", retryAfterSeconds: 5 }],
      ["stall:count=1", { _tag: "StallWatches", count: 1 }],
      ["delay:ms=250,count=2,on=watch", { _tag: "Delay", millis: 250, count: 2, on: "watch" }],
      ["malformed-line", { _tag: "MalformedLine" }],
      ["partial-line", { _tag: "PartialLine" }],
      ["no-metadata", { _tag: "MissingMetadata" }],
      ["restart:reject-ms=500", { _tag: "Restart", rejectMillis: 500 }]
    ]
    for (const [text, fault] of cases) {
      assert.deepStrictEqual(Either.getOrThrow(ApiServer.parseFault(text)), fault)
      assert.strictEqual(ApiServer.formatFault(fault), text)
    }
    assert.deepStrictEqual(Either.getOrThrow(ApiServer.parseFault(" Server-Error ")), { _tag: "ServerError" })
    for (const bad of ["nope", "error:count=x", "error:bogus=1", "watch-gone:mode=sometimes", "delay"]) {
      assert.isTrue(Either.isLeft(ApiServer.parseFault(bad)), bad)
    }
  })

  it.scopedLive("drops watch connections mid-stream and closes them cleanly", () =>
    Effect.gen(function*() {
      const server = yield* start()
      yield* seedPods(server, [pod("a")])
      const dropped = yield* openWatch(`${server.url}/api/v1/pods?watch=true`)
      yield* waitFor("initial", () => dropped.lines.length >= 1)
      yield* server.inject({ _tag: "DropWatches" })
      yield* waitFor("drop", () => dropped.ended)
      assert.isDefined(dropped.error)
      const closed = yield* openWatch(`${server.url}/api/v1/pods?watch=true`)
      yield* waitFor("initial", () => closed.lines.length >= 1)
      yield* server.inject({ _tag: "CloseWatches" })
      yield* waitFor("close", () => closed.ended)
      assert.isUndefined(closed.error)
      const stats = yield* server.stats
      assert.strictEqual(stats.faults.DropWatches, 1)
      assert.strictEqual(stats.faults.CloseWatches, 1)
      // the server forgets watches whose clients went away
      const abandoned = yield* Effect.scoped(
        Effect.gen(function*() {
          yield* openWatch(`${server.url}/api/v1/pods?watch=true`)
          return (yield* server.stats).watchesOpen
        })
      )
      assert.strictEqual(abandoned, 1)
      yield* waitFor("watches to be released", () => Effect.runSync(server.stats).watchesOpen === 0)
    }))

  it.scopedLive("answers the next watches with 410, as an ERROR event or an HTTP status", () =>
    Effect.gen(function*() {
      const server = yield* start()
      yield* server.inject({ _tag: "WatchGone", count: 1 })
      const viaEvent = yield* openWatch(`${server.url}/api/v1/pods?watch=true`)
      yield* waitFor("end", () => viaEvent.ended)
      assert.strictEqual(viaEvent.status, 200)
      assert.strictEqual(events(viaEvent)[0].type, "ERROR")
      assert.strictEqual(events(viaEvent)[0].object.code, 410)
      yield* server.inject({ _tag: "WatchGone", count: 1, mode: "http" })
      const list = yield* call(`${server.url}/api/v1/pods`)
      assert.strictEqual(list.status, 200)
      assertStatus(yield* call(`${server.url}/api/v1/pods?watch=true`), 410, "Expired")
      const after = yield* openWatch(`${server.url}/api/v1/pods?watch=true`)
      assert.strictEqual(after.status, 200)
      assert.strictEqual((yield* server.stats).faults.WatchGone, 2)
    }))

  it.scopedLive("answers the next lists that carry a continue token with 410 Expired", () =>
    Effect.gen(function*() {
      const server = yield* start()
      yield* seedPods(server, Array.from({ length: 5 }, (_, i) => pod(`p-${i}`)))
      yield* server.inject({ _tag: "ContinueGone", count: 1 })
      // a list without a continue token does not take the fault
      const page1 = yield* call(`${server.url}/api/v1/pods?limit=2`)
      assert.strictEqual(page1.status, 200)
      const expired = yield* call(`${server.url}/api/v1/pods?limit=2&continue=${page1.json.metadata.continue}`)
      assertStatus(expired, 410, "Expired")
      assert.match(expired.json.message, /continue parameter is too old/)
      const rest = yield* call(`${server.url}/api/v1/pods?limit=10&continue=${expired.json.metadata.continue}`)
      assert.deepStrictEqual(names(rest.json), ["default/p-2", "default/p-3", "default/p-4"])
      // one shot only: the original token works again
      const page2 = yield* call(`${server.url}/api/v1/pods?limit=2&continue=${page1.json.metadata.continue}`)
      assert.deepStrictEqual(names(page2.json), ["default/p-2", "default/p-3"])
      assert.strictEqual((yield* server.stats).faults.ContinueGone, 1)
    }))

  it.scopedLive("clearFaults disarms the faults no request has taken yet", () =>
    Effect.gen(function*() {
      const server = yield* start()
      yield* server.inject({ _tag: "ServerError", count: 3 })
      yield* server.inject({ _tag: "TooManyRequests", count: 2 })
      yield* server.inject({ _tag: "StallWatches", count: 2 })
      yield* server.inject({ _tag: "MalformedLine" })
      assertStatus(yield* call(`${server.url}/api/v1/pods`), 429, "TooManyRequests")
      yield* server.clearFaults
      assert.strictEqual((yield* call(`${server.url}/api/v1/pods`)).status, 200)
      const watch = yield* openWatch(`${server.url}/api/v1/pods?watch=true&allowWatchBookmarks=true`)
      yield* server.create(pods, pod("a"))
      yield* waitFor("event", () => watch.lines.length >= 1)
      assert.strictEqual(events(watch)[0].type, "ADDED")
      assert.strictEqual((yield* server.stats).faults.TooManyRequests, 1)
      assert.strictEqual((yield* server.stats).faults.ServerError, 0)
    }))

  it.scopedLive("fails the next requests with 500 or 429 and Retry-After, and delays responses", () =>
    Effect.gen(function*() {
      const server = yield* start()
      yield* server.inject({ _tag: "ServerError", count: 2, on: "list" })
      assert.strictEqual((yield* call(`${server.url}/api/v1/namespaces/default/pods/x`)).status, 404)
      assertStatus(yield* call(`${server.url}/api/v1/pods`), 500, "InternalError")
      assertStatus(yield* call(`${server.url}/api/v1/configmaps`), 500, "InternalError")
      assert.strictEqual((yield* call(`${server.url}/api/v1/pods`)).status, 200)
      yield* server.inject({ _tag: "ServerError", status: 503 })
      assert.strictEqual((yield* call(`${server.url}/api/v1/namespaces/default/pods/x`)).status, 503)
      yield* server.inject({ _tag: "TooManyRequests", retryAfterSeconds: 7 })
      const throttled = yield* call(`${server.url}/api/v1/pods?watch=true`)
      assertStatus(throttled, 429, "TooManyRequests")
      assert.strictEqual(throttled.headers.get("retry-after"), "7")
      assert.strictEqual(throttled.json.details.retryAfterSeconds, 7)
      yield* server.inject({ _tag: "Delay", millis: 300 })
      const before = Date.now()
      assert.strictEqual((yield* call(`${server.url}/api/v1/pods`)).status, 200)
      assert.isAtLeast(Date.now() - before, 280)
      const stats = yield* server.stats
      assert.deepStrictEqual([stats.faults.ServerError, stats.faults.TooManyRequests, stats.faults.Delay], [3, 1, 1])
    }))

  it.scopedLive("stalls watches: the connection stays open and no byte arrives", () =>
    Effect.gen(function*() {
      const server = yield* start({ bookmarkInterval: "50 millis" })
      const w = yield* openWatch(`${server.url}/api/v1/pods?watch=true&allowWatchBookmarks=true&timeoutSeconds=1`)
      yield* waitFor("bookmark", () => w.lines.length >= 1)
      yield* server.inject({ _tag: "StallWatches", count: 1 })
      const bytes = w.bytes
      yield* seedPods(server, [pod("a"), pod("b")])
      const next = yield* openWatch(`${server.url}/api/v1/pods?watch=true&allowWatchBookmarks=true&timeoutSeconds=1`)
      assert.strictEqual(next.status, 200)
      yield* sleep(1300)
      assert.strictEqual(w.bytes, bytes)
      assert.isFalse(w.ended)
      assert.strictEqual(next.bytes, 0)
      assert.isFalse(next.ended)
      assert.strictEqual((yield* server.stats).faults.StallWatches, 2)
    }))

  it.scopedLive("writes a malformed line, an object without metadata, and a partial line then closes", () =>
    Effect.gen(function*() {
      const server = yield* start()
      const w = yield* openWatch(`${server.url}/api/v1/pods?watch=true`)
      yield* server.inject({ _tag: "MalformedLine" })
      yield* seedPods(server, [pod("a")])
      yield* server.inject({ _tag: "MissingMetadata" })
      yield* seedPods(server, [pod("b")])
      yield* server.inject({ _tag: "PartialLine" })
      yield* waitFor("end", () => w.ended)
      assert.isUndefined(w.error)
      assert.strictEqual(w.lines.length, 4)
      assert.throws(() => JSON.parse(w.lines[0]))
      assert.strictEqual(JSON.parse(w.lines[1]).object.metadata.name, "a")
      const noMetadata = JSON.parse(w.lines[2])
      assert.strictEqual(noMetadata.type, "ADDED")
      assert.isUndefined(noMetadata.object.metadata)
      assert.strictEqual(JSON.parse(w.lines[3]).object.metadata.name, "b")
      assert.isAbove(w.rest.length, 0)
      assert.throws(() => JSON.parse(w.rest))
      // with no watch open, a stream fault waits for the next watch
      yield* server.inject({ _tag: "MalformedLine" })
      const next = yield* openWatch(
        `${server.url}/api/v1/pods?watch=true&resourceVersion=${yield* server.resourceVersion}`
      )
      yield* waitFor("malformed line", () => next.lines.length >= 1)
      assert.throws(() => JSON.parse(next.lines[0]))
      const stats = yield* server.stats
      assert.deepStrictEqual([stats.faults.MalformedLine, stats.faults.MissingMetadata, stats.faults.PartialLine], [
        2,
        1,
        1
      ])
    }))

  it.scopedLive("restarts: drops every connection, refuses new ones for a while, keeps the data", () =>
    Effect.gen(function*() {
      const server = yield* start()
      yield* seedPods(server, [pod("a")])
      const w = yield* openWatch(`${server.url}/api/v1/pods?watch=true`)
      yield* waitFor("initial", () => w.lines.length >= 1)
      yield* server.inject({ _tag: "Restart", rejectMillis: 400 })
      yield* waitFor("drop", () => w.ended)
      const refused = yield* Effect.promise(() =>
        fetch(`${server.url}/version`).then(() => "ok", (e) => String(e.cause?.code ?? e))
      )
      assert.strictEqual(refused, "ECONNREFUSED")
      yield* sleep(600)
      const list = yield* call(`${server.url}/api/v1/pods`)
      assert.strictEqual(list.status, 200)
      assert.deepStrictEqual(names(list.json), ["default/a"])
      assert.strictEqual((yield* server.stats).faults.Restart, 1)
    }))

  it.scopedLive("counts requests, watches and events", () =>
    Effect.gen(function*() {
      const server = yield* start()
      yield* seedPods(server, [pod("a"), pod("b")])
      yield* call(`${server.url}/api/v1/pods`)
      const w = yield* openWatch(`${server.url}/api/v1/pods?watch=true`)
      yield* waitFor("events", () => w.lines.length >= 2)
      const stats = yield* server.stats
      assert.strictEqual(stats.requestsByVerb.list, 1)
      assert.strictEqual(stats.requestsByVerb.watch, 1)
      assert.strictEqual(stats.watchesOpen, 1)
      assert.strictEqual(stats.watchesTotal, 1)
      assert.strictEqual(stats.eventsSent, 2)
      assert.strictEqual(stats.bytesSent, w.bytes)
    }))
})

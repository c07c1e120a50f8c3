/**
 * ApiServer: LIST.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Resource from "effect-informers/Resource"
import * as Effect from "effect/Effect"
import * as ChurnSimulator from "../../src/ChurnSimulator.js"
import { assertStatus, call, names, pod, pods, seedPods, start } from "./fixtures.js"

describe("ApiServer list", () => {
  it.live("serves a sorted list with the server's resourceVersion", () =>
    Effect.gen(function*() {
      const server = yield* start({ namespaces: ["ns-a", "ns-b"] })
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

  it.live("applies label and field selectors, rejecting unsupported fields like the API server", () =>
    Effect.gen(function*() {
      const server = yield* start({ namespaces: ["other"] })
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

  it.live("paginates one consistent snapshot across pages, whatever changes in between", () =>
    Effect.gen(function*() {
      const server = yield* start()
      yield* seedPods(server, Array.from({ length: 25 }, (_, i) => pod(`p-${String(i).padStart(2, "0")}`)))
      const full = yield* call(`${server.url}/api/v1/pods`)
      const page1 = yield* call(`${server.url}/api/v1/namespaces/default/pods?limit=10`)
      assert.strictEqual(page1.json.items.length, 10)
      assert.strictEqual(page1.json.metadata.remainingItemCount, 15)
      assert.strictEqual(page1.json.metadata.resourceVersion, full.json.metadata.resourceVersion)
      // change the data between pages
      yield* server.objects.delete(pods, { name: "p-15", namespace: "default" })
      yield* server.objects.create(pods, pod("p-12a"))
      yield* server.objects.patch(pods, { name: "p-20", namespace: "default" }, { metadata: { labels: { x: "1" } } })
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

  it.live("answers an expired continue token with 410 and an inconsistent token to go on", () =>
    Effect.gen(function*() {
      const server = yield* start()
      yield* seedPods(server, Array.from({ length: 6 }, (_, i) => pod(`p-${i}`)))
      const page1 = yield* call(`${server.url}/api/v1/pods?limit=2`)
      yield* server.objects.create(pods, pod("p-9"))
      yield* server.faults.compact
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

  it.live("implements the resourceVersion semantics of LIST, including Exact reads from history", () =>
    Effect.gen(function*() {
      const server = yield* start({ historySize: 50 })
      yield* seedPods(server, [pod("a"), pod("b"), pod("c")])
      const rv = Number(yield* server.resourceVersion)
      yield* server.objects.patch(pods, { name: "a", namespace: "default" }, { metadata: { labels: { v: "2" } } })
      yield* server.objects.delete(pods, { name: "b", namespace: "default" })
      yield* server.objects.create(pods, pod("d"))
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
      yield* server.faults.compact
      const tooOld = yield* call(`${server.url}/api/v1/pods?resourceVersion=${rv}&resourceVersionMatch=Exact`)
      assertStatus(tooOld, 410, "Expired")
    }))

  it.live("streams large lists as valid JSON", () =>
    Effect.gen(function*() {
      const server = yield* start()
      yield* ChurnSimulator.seed(server, { pods: 600, namespaces: 3 })
      const reply = yield* call(`${server.url}/api/v1/pods`)
      assert.isAbove(reply.text.length, 1024 * 1024)
      assert.strictEqual(reply.json.items.length, 600)
      const snapshot = yield* server.objects.snapshot(Resource.pods)
      assert.deepStrictEqual(reply.json.items, JSON.parse(JSON.stringify(snapshot)))
    }))
})

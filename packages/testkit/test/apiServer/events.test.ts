/**
 * ApiServer: Events, one set of objects behind `v1` and `events.k8s.io/v1`, with their field selectors and
 * kube-apiserver's Table columns.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Resource from "effect-informers/Resource"
import * as Effect from "effect/Effect"
import { eventually } from "../fixtures.js"
import { call, events, merge, openWatch, send, start } from "./fixtures.js"

const tableAccept = "application/json;as=Table;v=v1;g=meta.k8s.io"

describe("ApiServer events", () => {
  it.live("an Event written through one API is read, changed and deleted through the other, fields mapped", () =>
    Effect.gen(function*() {
      const server = yield* start()
      const core = `${server.url}/api/v1/namespaces/default/events`
      const v1 = `${server.url}/apis/events.k8s.io/v1/namespaces/default/events`
      const watch = yield* openWatch(`${v1}?watch=true&resourceVersion=${yield* server.resourceVersion}`)
      const created = yield* send(core, "POST", {
        metadata: { name: "web.1" },
        involvedObject: { kind: "Pod", namespace: "default", name: "web", uid: "u-1", apiVersion: "v1" },
        reason: "Pulled",
        message: "image pulled",
        source: { component: "kubelet", host: "node-1" },
        firstTimestamp: "2024-01-01T00:00:00Z",
        lastTimestamp: "2024-01-01T00:01:00Z",
        count: 2,
        type: "Normal",
        reportingComponent: "kubelet",
        reportingInstance: "node-1"
      })
      assert.strictEqual(created.status, 201, created.text)
      const seen = (yield* call(`${v1}/web.1`)).json
      assert.deepStrictEqual(seen, {
        kind: "Event",
        apiVersion: "events.k8s.io/v1",
        metadata: created.json.metadata,
        regarding: { kind: "Pod", namespace: "default", name: "web", uid: "u-1", apiVersion: "v1" },
        reason: "Pulled",
        note: "image pulled",
        deprecatedSource: { component: "kubelet", host: "node-1" },
        deprecatedFirstTimestamp: "2024-01-01T00:00:00Z",
        deprecatedLastTimestamp: "2024-01-01T00:01:00Z",
        deprecatedCount: 2,
        type: "Normal",
        reportingController: "kubelet",
        reportingInstance: "node-1"
      })
      // the other way: a series patched through events.k8s.io is the core Event's series
      const patched = yield* send(
        `${v1}/web.1`,
        "PATCH",
        { series: { count: 3, lastObservedTime: "2024-01-01T00:02:00.000000Z" } },
        merge
      )
      const back = (yield* call(`${core}/web.1`)).json
      assert.deepStrictEqual(back.series, { count: 3, lastObservedTime: "2024-01-01T00:02:00.000000Z" })
      assert.strictEqual(back.message, "image pulled")
      assert.strictEqual(back.metadata.resourceVersion, patched.json.metadata.resourceVersion)
      // one deletion removes it from both
      yield* call(`${v1}/web.1`, { method: "DELETE" })
      assert.strictEqual((yield* call(`${core}/web.1`)).status, 404)
      // and the events.k8s.io watch saw every change, at the same resourceVersions
      yield* eventually(() => watch.lines.length >= 3, "three events")
      assert.deepStrictEqual(events(watch).map((e) => [e.type, e.object.apiVersion, e.object.note]), [
        ["ADDED", "events.k8s.io/v1", "image pulled"],
        ["MODIFIED", "events.k8s.io/v1", "image pulled"],
        ["DELETED", "events.k8s.io/v1", "image pulled"]
      ])
      assert.strictEqual(events(watch)[0].object.metadata.resourceVersion, created.json.metadata.resourceVersion)
    }))

  it.live("an events.k8s.io Event (what EventRecorder writes) is a core Event for kubectl", () =>
    Effect.gen(function*() {
      const server = yield* start()
      const event = yield* server.objects.create(Resource.eventsV1, {
        metadata: { name: "cm.1", namespace: "default" },
        eventTime: "2024-01-01T00:00:00.000000Z",
        regarding: { kind: "ConfigMap", namespace: "default", name: "cm", uid: "u-2", apiVersion: "v1" },
        reason: "Replicated",
        action: "Create",
        note: "copied",
        type: "Normal",
        reportingController: "example.com/replicator",
        reportingInstance: "r-1"
      })
      const core = yield* server.objects.get(Resource.events, { name: "cm.1", namespace: "default" })
      assert.deepStrictEqual(
        core,
        {
          kind: "Event",
          apiVersion: "v1",
          metadata: event.metadata!,
          eventTime: "2024-01-01T00:00:00.000000Z",
          involvedObject: { kind: "ConfigMap", namespace: "default", name: "cm", uid: "u-2", apiVersion: "v1" },
          reason: "Replicated",
          action: "Create",
          message: "copied",
          type: "Normal",
          reportingComponent: "example.com/replicator",
          reportingInstance: "r-1"
        } as unknown as typeof core
      )
    }))

  it.live("field selectors: involvedObject.* on v1 (as kubectl describe asks), regarding.* on events.k8s.io", () =>
    Effect.gen(function*() {
      const server = yield* start()
      const about = (name: string, uid: string, kind = "ConfigMap") => ({
        kind,
        namespace: "default",
        name,
        uid,
        apiVersion: "v1"
      })
      for (
        const [name, regarding] of [
          ["a.1", about("a", "u-a")],
          ["a.2", about("a", "u-a")],
          ["b.1", about("b", "u-b")],
          [
            "p.1",
            about("a", "u-p", "Pod")
          ]
        ] as const
      ) {
        yield* server.objects.create(Resource.eventsV1, {
          metadata: { name, namespace: "default" },
          eventTime: "2024-01-01T00:00:00.000000Z",
          regarding,
          reason: "R",
          type: "Normal",
          reportingController: "c"
        })
      }
      const names = (reply: { json: { items: ReadonlyArray<{ metadata: { name: string } }> } }) =>
        reply.json.items.map((e) => e.metadata.name)
      // kubectl describe's selector
      const describe = encodeURIComponent(
        "involvedObject.name=a,involvedObject.namespace=default,involvedObject.kind=ConfigMap,involvedObject.uid=u-a"
      )
      assert.deepStrictEqual(
        names(yield* call(`${server.url}/api/v1/namespaces/default/events?fieldSelector=${describe}`)),
        ["a.1", "a.2"]
      )
      const regarding = encodeURIComponent("regarding.name=a,regarding.kind=Pod")
      assert.deepStrictEqual(
        names(yield* call(`${server.url}/apis/events.k8s.io/v1/events?fieldSelector=${regarding}`)),
        ["p.1"]
      )
      const byController = encodeURIComponent("reportingController=c,type=Normal,reason=R")
      assert.strictEqual(
        names(yield* call(`${server.url}/apis/events.k8s.io/v1/events?fieldSelector=${byController}`)).length,
        4
      )
      const unsupported = yield* call(
        `${server.url}/apis/events.k8s.io/v1/events?fieldSelector=${encodeURIComponent("involvedObject.name=a")}`
      )
      assert.strictEqual(unsupported.status, 400)
    }))

  it.live("kubectl get events' Table: LAST SEEN, TYPE, REASON, OBJECT, MESSAGE (and the wide columns)", () =>
    Effect.gen(function*() {
      const server = yield* start()
      yield* server.objects.create(Resource.eventsV1, {
        metadata: { name: "cm.1", namespace: "default" },
        eventTime: new Date(Date.now() - 30_000).toISOString().replace("Z", "000Z"),
        regarding: { kind: "ConfigMap", namespace: "default", name: "cm" },
        reason: "Replicated",
        note: " copied to 2 namespaces ",
        type: "Normal",
        reportingController: "example.com/replicator",
        reportingInstance: "r-1"
      })
      const table = (yield* call(`${server.url}/api/v1/namespaces/default/events`, {
        headers: { accept: tableAccept }
      })).json
      assert.deepStrictEqual(
        table.columnDefinitions.map((c: { name: string; priority: number }) => [c.name, c.priority]),
        [
          ["Last Seen", 0],
          ["Type", 0],
          ["Reason", 0],
          ["Object", 0],
          ["Subobject", 1],
          ["Source", 1],
          ["Message", 0],
          ["First Seen", 1],
          ["Count", 1],
          ["Name", 1]
        ]
      )
      const [cells] = table.rows.map((r: { cells: ReadonlyArray<unknown> }) => r.cells)
      assert.match(String(cells[0]), /^3\ds$/)
      assert.deepStrictEqual(cells.slice(1), [
        "Normal",
        "Replicated",
        "configmap/cm",
        "",
        "example.com/replicator, r-1",
        "copied to 2 namespaces",
        cells[0],
        1,
        "cm.1"
      ])
      // the same rows through events.k8s.io
      const v1 = (yield* call(`${server.url}/apis/events.k8s.io/v1/namespaces/default/events`, {
        headers: { accept: tableAccept }
      })).json
      assert.deepStrictEqual(v1.rows.map((r: { cells: unknown }) => r.cells), [cells])
    }))
})

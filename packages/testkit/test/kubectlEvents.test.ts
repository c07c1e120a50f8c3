/**
 * kubectl against the embedded API server: Events (`kubectl get events`, the Events section of
 * `kubectl describe`), whichever API wrote them.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Resource from "effect-informers/Resource"
import * as Effect from "effect/Effect"
import { clusterWith, printedRows, run } from "./kubectlFixtures.js"

const cluster = clusterWith({ namespaces: ["shop"] })

/** A MicroTime `seconds` ago. */
const secondsAgo = (seconds: number): string => new Date(Date.now() - seconds * 1000).toISOString().replace("Z", "000Z")

describe("kubectl: events", () => {
  it.live("get events lists Events written through events.k8s.io/v1 and v1, with the server's columns", () =>
    Effect.gen(function*() {
      const c = yield* cluster
      const settings = yield* c.server.objects.create(Resource.configMaps, {
        metadata: { name: "settings", namespace: "shop" }
      })
      yield* c.server.objects.create(Resource.eventsV1, {
        metadata: { name: "settings.1", namespace: "shop" },
        eventTime: secondsAgo(20),
        regarding: {
          kind: "ConfigMap",
          namespace: "shop",
          name: "settings",
          uid: settings.metadata!.uid!,
          apiVersion: "v1"
        },
        reason: "Replicated",
        action: "Create",
        note: "copied to namespace team",
        type: "Normal",
        reportingController: "example.com/replicator",
        reportingInstance: "r-1"
      })
      yield* c.server.objects.create(Resource.events, {
        metadata: { name: "web.1", namespace: "shop" },
        involvedObject: { kind: "Pod", namespace: "shop", name: "web" },
        reason: "BackOff",
        message: "Back-off restarting failed container",
        type: "Warning",
        source: { component: "kubelet", host: "node-1" },
        firstTimestamp: new Date(Date.now() - 600_000).toISOString().replace(/\.\d{3}Z$/, "Z"),
        lastTimestamp: new Date(Date.now() - 60_000).toISOString().replace(/\.\d{3}Z$/, "Z"),
        count: 7
      })
      const rows = printedRows(yield* run(c, "get", "events", "-n", "shop"))
      assert.deepStrictEqual(Object.keys(rows[0]), ["LAST SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE"])
      assert.deepStrictEqual(rows.map((r) => [r.TYPE, r.REASON, r.OBJECT, r.MESSAGE]), [
        ["Normal", "Replicated", "configmap/settings", "copied to namespace team"],
        ["Warning", "BackOff", "pod/web", "Back-off restarting failed container"]
      ])
      assert.match(rows[0]["LAST SEEN"], /^2\ds$/)
      assert.match(rows[1]["LAST SEEN"], /^6\ds$/)
      const wide = printedRows(yield* run(c, "get", "events", "-n", "shop", "-o", "wide"))
      assert.deepStrictEqual(wide.map((r) => [r.SOURCE, r.COUNT, r.NAME]), [
        ["example.com/replicator, r-1", "1", "settings.1"],
        ["kubelet, node-1", "7", "web.1"]
      ])
      // the same objects through events.k8s.io
      const v1 = printedRows(yield* run(c, "get", "events.events.k8s.io", "-n", "shop"))
      assert.deepStrictEqual(v1.map((r) => r.REASON), ["Replicated", "BackOff"])
      // and across namespaces
      const all = printedRows(yield* run(c, "get", "events", "-A"))
      assert.deepStrictEqual(all.map((r) => r.NAMESPACE), ["shop", "shop"])
    }))

  it.live("describe shows an object's Events (selected by involvedObject name, namespace, kind and uid)", () =>
    Effect.gen(function*() {
      const c = yield* cluster
      const settings = yield* c.server.objects.create(Resource.configMaps, {
        metadata: { name: "settings", namespace: "shop" },
        data: { a: "1" }
      })
      const about = (uid: string) => ({ kind: "ConfigMap", namespace: "shop", name: "settings", uid, apiVersion: "v1" })
      yield* c.server.objects.create(Resource.eventsV1, {
        metadata: { name: "settings.1", namespace: "shop" },
        eventTime: secondsAgo(30),
        regarding: about(settings.metadata!.uid!),
        reason: "NotOwned",
        action: "Replicate",
        note: "namespace team has a ConfigMap settings it does not own",
        type: "Warning",
        reportingController: "example.com/replicator",
        reportingInstance: "r-1"
      })
      // an Event about an earlier object of the same name (another uid) is not this one's
      yield* c.server.objects.create(Resource.eventsV1, {
        metadata: { name: "settings.0", namespace: "shop" },
        eventTime: secondsAgo(300),
        regarding: about("an-older-uid"),
        reason: "Replicated",
        action: "Create",
        note: "of the object before",
        type: "Normal",
        reportingController: "example.com/replicator",
        reportingInstance: "r-1"
      })
      const described = yield* run(c, "describe", "configmap", "settings", "-n", "shop")
      const section = described.slice(described.indexOf("Events:"))
      const lines = section.trimEnd().split("\n")
      assert.deepStrictEqual(lines[1].trim().split(/\s+/), ["Type", "Reason", "Age", "From", "Message"])
      assert.strictEqual(lines.length, 4, section)
      assert.match(
        lines[3],
        /^\s+Warning\s+NotOwned\s+3\ds\s+example\.com\/replicator\s+namespace team has a ConfigMap settings it does not own$/
      )
      // an object without Events
      yield* c.server.objects.create(Resource.configMaps, { metadata: { name: "quiet", namespace: "shop" } })
      assert.match(yield* run(c, "describe", "configmap", "quiet", "-n", "shop"), /Events:\s+<none>/)
    }))
})

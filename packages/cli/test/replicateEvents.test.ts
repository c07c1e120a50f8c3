/**
 * The Events of `effect-informers replicate` (a child process, against the embedded API server), as
 * kubectl shows them: `kubectl get events` and the Events section of `kubectl describe configmap`.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Resource from "effect-informers/Resource"
import * as Effect from "effect/Effect"
import { clusterWith, printedRows, run } from "../../testkit/test/kubectlFixtures.js"
import * as Replicate from "../src/Replicate.js"
import { eventually, exitedEarly, replica } from "./fixtures.js"

const target = { [Replicate.targetLabel]: "true" }

describe("replicate: Events", () => {
  it.live(
    "records what it does and refuses on the source, shown by kubectl get events and describe",
    () =>
      Effect.gen(function*() {
        const c = yield* clusterWith({ namespaces: ["src"] })
        const { server } = c
        yield* server.objects.create(Resource.namespaces, { metadata: { name: "t1", labels: target } })
        yield* server.objects.create(Resource.namespaces, { metadata: { name: "t2", labels: target } })
        // the unmanaged ConfigMap of the source's name in a target namespace
        yield* server.objects.create(Resource.configMaps, { metadata: { name: "settings", namespace: "t2" } })
        yield* server.objects.create(Resource.configMaps, {
          metadata: { name: "settings", namespace: "src", labels: { [Replicate.sourceLabel]: "true" } },
          data: { a: "1" }
        })
        const running = yield* replica(server.url, "replica-1")
        const wait = <A>(check: Effect.Effect<A, unknown>, what: string) =>
          eventually(check, {
            what,
            timeout: "30 seconds",
            interval: "100 millis",
            giveUpIf: () => exitedEarly(running),
            detail: running.stderr
          })
        /** `kubectl get events -n src` as [TYPE, REASON, OBJECT, MESSAGE] rows, sorted. */
        const printed = Effect.map(
          run(c, "get", "events", "-n", "src"),
          (out) => printedRows(out).map((r) => [r.TYPE, r.REASON, r.OBJECT, r.MESSAGE]).sort()
        )
        const created = [
          "Normal",
          Replicate.eventReasons.replicated,
          "configmap/settings",
          "copied to namespace t1"
        ]
        const refused = [
          "Warning",
          Replicate.eventReasons.notOwned,
          "configmap/settings",
          "namespace t2 has a ConfigMap settings that is not a copy of this one: left as it is"
        ]
        assert.deepStrictEqual(
          yield* wait(
            Effect.flatMap(printed, (rows) => rows.length >= 2 ? Effect.succeed(rows) : Effect.fail(rows)),
            "the Replicated and NotOwned events"
          ),
          [created, refused]
        )

        // the source changes, a namespace stops being a target: its copy is updated, then deleted
        yield* server.objects.patch(Resource.configMaps, { namespace: "src", name: "settings" }, { data: { a: "2" } })
        const updated = [
          "Normal",
          Replicate.eventReasons.copyUpdated,
          "configmap/settings",
          "updated the copy in namespace t1"
        ]
        yield* wait(
          Effect.flatMap(printed, (rows) =>
            rows.some((r) => r[1] === updated[1]) ? Effect.succeed(rows) : Effect.fail(rows)),
          "the CopyUpdated event"
        )
        yield* server.objects.patch(Resource.namespaces, { name: "t1" }, {
          metadata: { labels: { [Replicate.targetLabel]: null } }
        })
        const deleted = [
          "Normal",
          Replicate.eventReasons.copyDeleted,
          "configmap/settings",
          "deleted the copy in namespace t1"
        ]
        const rows = yield* wait(
          Effect.flatMap(printed, (rows) =>
            rows.length >= 4 ? Effect.succeed(rows) : Effect.fail(rows)),
          "the CopyDeleted event"
        )
        assert.deepStrictEqual(rows, [deleted, updated, created, refused].sort())

        // each Event is about the source (its uid: kubectl describe selects by it), by the replicator's replica
        const source = yield* server.objects.get(Resource.configMaps, { namespace: "src", name: "settings" })
        const events = yield* server.objects.snapshot(Resource.eventsV1, "src")
        assert.strictEqual(events.length, 4, "one Event each, repeats aggregated: no flood")
        for (const event of events) {
          assert.strictEqual(event.regarding?.uid, source.metadata!.uid)
          assert.strictEqual(event.reportingController, Replicate.reportingController)
          assert.strictEqual(event.reportingInstance, "replica-1")
        }
        const described = yield* run(c, "describe", "configmap", "settings", "-n", "src")
        const section = described.slice(described.indexOf("Events:")).trimEnd().split("\n").slice(3)
        assert.deepStrictEqual(
          section.map((line) => line.trim().split(/\s{2,}/)).map(([type, reason, , from, message]) => [
            type,
            reason,
            "configmap/settings",
            message,
            from
          ]).sort(),
          [deleted, updated, created, refused].sort().map((row) => [...row, Replicate.reportingController])
        )
      }).pipe(Effect.scoped),
    60_000
  )
})

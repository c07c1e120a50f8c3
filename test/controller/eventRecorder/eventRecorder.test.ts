/**
 * EventRecorder against the embedded API server: Events written, isomorphic ones as a series, the spam
 * filter per object, never blocking the caller.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Metric } from "effect"
import { TestClock } from "effect/testing"
import * as Client from "../../../src/Client.js"
import * as EventRecorder from "../../../src/EventRecorder.js"
import * as ControllerMetrics from "../../../src/internal/controller/metrics.js"
import * as Resource from "../../../src/Resource.js"
import { withApiServer } from "../../transport/client/fixtures.js"

const pod: Resource.Pod = { metadata: { namespace: "default", name: "web-1", uid: "u-1", resourceVersion: "7" } }
const other: Resource.Pod = { metadata: { namespace: "default", name: "web-2", uid: "u-2" } }

const options = { reportingController: "example.com/test", reportingInstance: "replica-1" }

const events = (client: Client.Client.Service) =>
  Effect.map(client.listAll(Resource.eventsV1, { namespace: "default" }), (page) =>
    page.items.map((e) => ({
      reason: e.reason,
      note: e.note,
      type: e.type,
      action: e.action,
      regarding: e.regarding?.name,
      kind: e.regarding?.kind,
      count: e.series?.count,
      controller: e.reportingController,
      instance: e.reportingInstance
    })).sort((a, b) => `${a.regarding}${a.reason}${a.note}` < `${b.regarding}${b.reason}${b.note}` ? -1 : 1))

describe("EventRecorder", () => {
  it.effect("writes an events.k8s.io Event about the object, with the reporting controller and instance", () =>
    withApiServer((_, client) =>
      Effect.gen(function*() {
        const recorder = yield* EventRecorder.make(options).pipe(Effect.provideService(Client.Client, client))
        yield* recorder.record(Resource.pods, pod, {
          type: "Warning",
          reason: "FailedSync",
          action: "Sync",
          note: "no image"
        })
        yield* recorder.flush
        assert.deepStrictEqual(yield* events(client), [{
          reason: "FailedSync",
          note: "no image",
          type: "Warning",
          action: "Sync",
          regarding: "web-1",
          kind: "Pod",
          count: undefined,
          controller: "example.com/test",
          instance: "replica-1"
        }])
        const [event] = (yield* client.listAll(Resource.eventsV1, { namespace: "default" })).items
        assert.strictEqual(event!.regarding?.apiVersion, "v1")
        assert.strictEqual(event!.regarding?.uid, "u-1")
        assert.match(event!.eventTime as unknown as string, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/)
      })
    ))

  it.effect("isomorphic events within the window are one Event with a series; others are their own", () =>
    withApiServer((_, client) =>
      Effect.gen(function*() {
        const recorder = yield* EventRecorder.make(options).pipe(Effect.provideService(Client.Client, client))
        // (flushed before the clock moves: a real request in flight would see its timeout pass)
        for (let i = 0; i < 3; i++) {
          yield* recorder.record(Resource.pods, pod, { type: "Normal", reason: "Synced", action: "Sync" })
          yield* recorder.flush
          yield* TestClock.adjust("1 minute")
        }
        yield* recorder.record(Resource.pods, pod, { type: "Normal", reason: "Created", action: "Create" })
        yield* recorder.record(Resource.pods, other, { type: "Normal", reason: "Synced", action: "Sync" })
        yield* recorder.flush
        const written = yield* events(client)
        assert.deepStrictEqual(written.map((e) => [e.regarding, e.reason, e.count]), [
          ["web-1", "Created", undefined],
          ["web-1", "Synced", 3],
          ["web-2", "Synced", undefined]
        ])
        // after the window, an isomorphic event starts a new Event
        yield* TestClock.adjust("7 minutes")
        yield* recorder.record(Resource.pods, pod, { type: "Normal", reason: "Synced", action: "Sync" })
        yield* recorder.flush
        assert.strictEqual(
          (yield* events(client)).filter((e) => e.reason === "Synced" && e.regarding === "web-1").length,
          2
        )
      })
    ))

  it.effect("the spam filter: 25 Events per object, then one every 5 minutes; other objects unaffected", () =>
    withApiServer((_, client) =>
      Effect.gen(function*() {
        const recorder = yield* EventRecorder.make(options).pipe(Effect.provideService(Client.Client, client))
        const spamBefore =
          (yield* Metric.value(ControllerMetrics.droppedEvents.pipe(Metric.withAttributes({ reason: "spam" })))).count
        for (let i = 0; i < 30; i++) {
          yield* recorder.record(Resource.pods, pod, { type: "Warning", reason: "Loop", action: "Sync", note: `#${i}` })
        }
        yield* recorder.record(Resource.pods, other, { type: "Warning", reason: "Loop", action: "Sync", note: "other" })
        yield* recorder.flush
        const count = (name: string) =>
          Effect.map(events(client), (es) => es.filter((e) => e.regarding === name).length)
        assert.strictEqual(yield* count("web-1"), 25)
        assert.strictEqual(yield* count("web-2"), 1)
        const spamAfter =
          (yield* Metric.value(ControllerMetrics.droppedEvents.pipe(Metric.withAttributes({ reason: "spam" })))).count
        assert.strictEqual(spamAfter - spamBefore, 5)
        yield* TestClock.adjust("5 minutes")
        yield* recorder.record(Resource.pods, pod, { type: "Warning", reason: "Loop", action: "Sync", note: "later" })
        yield* recorder.flush
        assert.strictEqual(yield* count("web-1"), 26)
      })
    ))

  it.effect("record never blocks and never fails: a server that refuses is logged and counted", () =>
    withApiServer((server, client) =>
      Effect.gen(function*() {
        const recorder = yield* EventRecorder.make({ ...options, capacity: 2 }).pipe(
          Effect.provideService(Client.Client, client)
        )
        yield* server.faults.inject({ _tag: "ServerError", count: 100, status: 500 })
        const before =
          (yield* Metric.value(ControllerMetrics.droppedEvents.pipe(Metric.withAttributes({ reason: "failed" })))).count
        for (let i = 0; i < 10; i++) {
          yield* recorder.record(Resource.pods, pod, { type: "Normal", reason: "R", action: "A", note: `${i}` })
        }
        yield* recorder.flush
        const failed =
          (yield* Metric.value(ControllerMetrics.droppedEvents.pipe(Metric.withAttributes({ reason: "failed" })))).count
        const full =
          (yield* Metric.value(ControllerMetrics.droppedEvents.pipe(Metric.withAttributes({ reason: "full" })))).count
        assert.isAtLeast(failed - before, 1)
        assert.isAtLeast(full, 1)
      })
    ))
})

describe("EventRecorder: names, notes and shutdown", () => {
  it.effect("events about one object in the same millisecond get names of their own", () =>
    withApiServer((_, client) =>
      Effect.gen(function*() {
        yield* TestClock.setTime(Date.parse("2026-12-01T10:00:00.123Z"))
        const recorder = yield* EventRecorder.make(options).pipe(Effect.provideService(Client.Client, client))
        for (let i = 0; i < 5; i++) {
          yield* recorder.record(Resource.pods, pod, { type: "Normal", reason: `R${i}`, action: "A" })
        }
        yield* recorder.flush
        const names = (yield* client.listAll(Resource.eventsV1, { namespace: "default" })).items.map((e) =>
          e.metadata?.name
        )
        assert.strictEqual(new Set(names).size, 5)
      })
    ))

  it.effect("a note is cut to 1 KiB of UTF-8, on a character boundary", () =>
    withApiServer((_, client) =>
      Effect.gen(function*() {
        const recorder = yield* EventRecorder.make(options).pipe(Effect.provideService(Client.Client, client))
        yield* recorder.record(Resource.pods, pod, {
          type: "Normal",
          reason: "Long",
          action: "A",
          note: "é".repeat(2000)
        })
        yield* recorder.flush
        const [event] = (yield* client.listAll(Resource.eventsV1, { namespace: "default" })).items
        assert.isAtMost(new TextEncoder().encode(event!.note!).length, 1024)
        assert.strictEqual(event!.note!, "é".repeat(512))
      })
    ))

  it.effect("closing the recorder's scope writes what is queued", () =>
    withApiServer((_, client) =>
      Effect.gen(function*() {
        yield* Effect.scoped(Effect.gen(function*() {
          const recorder = yield* EventRecorder.make(options).pipe(Effect.provideService(Client.Client, client))
          for (let i = 0; i < 20; i++) {
            yield* recorder.record(Resource.pods, pod, { type: "Normal", reason: `Close${i}`, action: "A" })
          }
        }))
        const written = (yield* client.listAll(Resource.eventsV1, { namespace: "default" })).items
        assert.strictEqual(written.length, 20)
      })
    ))
})

describe("EventRecorder: series writes", () => {
  it.effect("a series is written at its first repeat, then at most every 30 seconds", () =>
    withApiServer((server, client) =>
      Effect.gen(function*() {
        const recorder = yield* EventRecorder.make(options).pipe(Effect.provideService(Client.Client, client))
        const writes = () =>
          Effect.map(server.stats, (stats) => (stats.requestsByVerb.create ?? 0) + (stats.requestsByVerb.patch ?? 0))
        const before = yield* writes()
        for (let i = 0; i < 10; i++) {
          yield* recorder.record(Resource.pods, pod, { type: "Normal", reason: "Tick", action: "A" })
          yield* recorder.flush
          yield* TestClock.adjust("1 second")
        }
        assert.strictEqual((yield* writes()) - before, 2, "the create and the first repeat's patch")
        assert.strictEqual((yield* events(client))[0]!.count, 2)
        yield* TestClock.adjust("25 seconds")
        yield* recorder.record(Resource.pods, pod, { type: "Normal", reason: "Tick", action: "A" })
        yield* recorder.flush
        assert.strictEqual((yield* writes()) - before, 3)
        assert.strictEqual((yield* events(client))[0]!.count, 11)
      })
    ))
})

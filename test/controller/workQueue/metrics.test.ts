/**
 * WorkQueue metrics: ports of client-go's metrics_test.go (its fake clock is TestClock; its 1 ms update
 * period is client-go's production 500 ms here), then the retries counter and the unnamed queue.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Metric from "effect/Metric"
import * as TestClock from "effect/testing/TestClock"
import { makeQueue, readMetrics, uniqueName } from "./fixtures.js"

describe("metrics_test", () => {
  it.effect("TestMetricShutdown: after ShutDown, advancing the clock by 1 h sets the unfinished-work gauges no more", () =>
    Effect.gen(function*() {
      const name = uniqueName("metrics")
      const queue = yield* makeQueue({ name })
      yield* queue.add("foo")
      yield* queue.get
      yield* TestClock.adjust("500 millis")
      assert.closeTo((yield* readMetrics(name)).unfinished, 0.5, 1e-9)
      yield* queue.shutdown
      yield* TestClock.adjust("1 hour")
      const m = yield* readMetrics(name)
      assert.closeTo(m.unfinished, 0.5, 1e-9)
      assert.closeTo(m.longest, 0.5, 1e-9)
    }))

  it.effect(
    "TestMetrics: adds, depth, queue latency 5e-5 then 2.5e-5, work duration 2.5e-5, unfinished and longest processor, work duration again",
    () =>
      Effect.gen(function*() {
        const name = uniqueName("metrics")
        const queue = yield* makeQueue({ name })
        yield* queue.add("foo")
        let m = yield* readMetrics(name)
        assert.strictEqual(m.adds, 1)
        assert.strictEqual(m.depth, 1)

        yield* TestClock.adjust(Duration.micros(50n))
        assert.strictEqual(yield* queue.get, "foo")
        m = yield* readMetrics(name)
        assert.strictEqual(m.queueDuration.count, 1)
        assert.closeTo(m.queueDuration.sum, 5e-5, 1e-12)

        // added back while processing; the repeated adds collapse
        for (let i = 0; i < 5; i++) yield* queue.add("foo")
        m = yield* readMetrics(name)
        assert.strictEqual(m.adds, 2)
        assert.strictEqual(m.depth, 1, "one thing remains in the queue")

        yield* TestClock.adjust(Duration.micros(25n))
        yield* queue.done("foo")
        m = yield* readMetrics(name)
        assert.strictEqual(m.workDuration.count, 1)
        assert.closeTo(m.workDuration.sum, 2.5e-5, 1e-12)
        assert.strictEqual(m.depth, 1)

        assert.strictEqual(yield* queue.get, "foo")
        m = yield* readMetrics(name)
        assert.strictEqual(m.queueDuration.count, 2)
        assert.closeTo(m.queueDuration.sum - 5e-5, 2.5e-5, 1e-12, "waited from the re-add")
        assert.strictEqual(m.depth, 0)

        yield* TestClock.adjust("500 millis")
        m = yield* readMetrics(name)
        // set at the tick 500 ms after make; foo has been processing since 75 µs
        assert.closeTo(m.unfinished, 0.5 - 7.5e-5, 1e-9)
        assert.closeTo(m.longest, 0.5 - 7.5e-5, 1e-9)

        yield* queue.done("foo")
        m = yield* readMetrics(name)
        assert.strictEqual(m.workDuration.count, 2)
        assert.closeTo(m.workDuration.sum - 2.5e-5, 0.5, 1e-9)
      })
  )
})

describe("WorkQueue metrics", () => {
  it.effect("unfinished work sums the ages of every key processing; the longest processor is the oldest", () =>
    Effect.gen(function*() {
      const name = uniqueName("metrics")
      const queue = yield* makeQueue({ name })
      yield* queue.addAll(["a", "b", "c"])
      yield* queue.get
      yield* TestClock.adjust("1 second")
      yield* queue.get
      yield* queue.get
      yield* TestClock.adjust("500 millis")
      let m = yield* readMetrics(name)
      assert.closeTo(m.unfinished, 1.5 + 0.5 + 0.5, 1e-9)
      assert.closeTo(m.longest, 1.5, 1e-9)
      yield* queue.done("a")
      yield* TestClock.adjust("500 millis")
      m = yield* readMetrics(name)
      assert.closeTo(m.unfinished, 2, 1e-9)
      assert.closeTo(m.longest, 1, 1e-9)
      yield* queue.done("b")
      yield* queue.done("c")
      yield* TestClock.adjust("500 millis")
      m = yield* readMetrics(name)
      assert.strictEqual(m.unfinished, 0)
      assert.strictEqual(m.longest, 0)
    }))

  it.effect("retries count adds with a positive delay (addAfter, after, addRateLimited), not immediate ones", () =>
    Effect.gen(function*() {
      const name = uniqueName("metrics")
      const queue = yield* makeQueue({ name })
      yield* queue.addAfter("a", "1 second")
      yield* queue.addAfter("a", "2 seconds") // counted, though it does not move a
      yield* queue.addAfter("b", 0)
      yield* queue.add("c", { after: "-1 second" })
      yield* queue.add("d", { after: "10 millis" })
      yield* queue.addRateLimited("e") // 5 ms
      assert.strictEqual((yield* readMetrics(name)).retries, 4)
    }))

  it.effect("a delayed key counts as an add (and in the depth) when it becomes ready", () =>
    Effect.gen(function*() {
      const name = uniqueName("metrics")
      const queue = yield* makeQueue({ name })
      yield* queue.addAfter("a", "1 second")
      let m = yield* readMetrics(name)
      assert.strictEqual(m.adds, 0)
      assert.strictEqual(m.depth, 0)
      yield* TestClock.adjust("1 second")
      m = yield* readMetrics(name)
      assert.strictEqual(m.adds, 1)
      assert.strictEqual(m.depth, 1)
    }))

  it.effect("an unnamed queue records no metric", () =>
    Effect.gen(function*() {
      const queue = yield* makeQueue()
      yield* queue.add("a")
      yield* queue.addAfter("b", "1 second")
      yield* queue.process(() => Effect.void)
      const snapshot = yield* Metric.snapshot
      const unnamed = snapshot.filter((series) =>
        series.id.startsWith("workqueue_") &&
        !(series.attributes !== undefined && series.attributes["name"] !== undefined &&
          series.attributes["name"] !== "")
      )
      assert.deepStrictEqual(unnamed.map((series) => series.id), [])
    }))

  it.effect("the metrics of two queues are apart: each is tagged with its own name", () =>
    Effect.gen(function*() {
      const [first, second] = [uniqueName("metrics"), uniqueName("metrics")]
      const a = yield* makeQueue({ name: first })
      const b = yield* makeQueue({ name: second })
      yield* a.addAll(["x", "y"])
      yield* b.add("x")
      assert.strictEqual((yield* readMetrics(first)).adds, 2)
      assert.strictEqual((yield* readMetrics(second)).adds, 1)
    }))

  it.effect("a named queue's depth, adds and retries exist at 0 from its creation (a scrape before any add shows it)", () =>
    Effect.gen(function*() {
      const name = uniqueName("metrics")
      yield* makeQueue({ name })
      const series = (yield* Metric.snapshot)
        .filter((series) => series.attributes?.["name"] === name)
        .map((series) =>
          `${series.id} ${
            JSON.stringify(
              series.type === "Counter"
                ? { count: series.state.count }
                : series.type === "Gauge"
                ? { value: series.state.value }
                : series.state
            )
          }`
        )
        .sort()
      assert.deepStrictEqual(series, [
        `workqueue_adds_total {"count":0}`,
        `workqueue_depth {"value":0}`,
        `workqueue_retries_total {"count":0}`
      ])
    }))
})

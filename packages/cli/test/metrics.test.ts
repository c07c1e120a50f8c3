/**
 * The metrics endpoint (`Metrics.serve`, `effect-informers replicate --metrics-port`): in process, what it
 * serves, a port in use, the port freed when its scope closes; then the command itself, a child process
 * leading its election against the embedded API server, scraped over HTTP after it replicated a ConfigMap:
 * the informer, work queue, controller and leader-election series, with their values.
 */
import * as ApiServer from "@effect-informers/testkit/ApiServer"
import { assert, describe, it } from "@effect/vitest"
import * as Resource from "effect-informers/Resource"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Metric from "effect/Metric"
import * as Scope from "effect/Scope"
import * as Net from "node:net"
import * as Metrics from "../src/Metrics.js"
import * as Replicate from "../src/Replicate.js"
import { eventually, replica } from "./fixtures.js"

interface Sample {
  readonly name: string
  readonly labels: Readonly<Record<string, string>>
  readonly value: number
}

/** The samples of a Prometheus text exposition (comments and blank lines skipped). */
const parse = (text: string): Array<Sample> =>
  text.split("\n").filter((line) => line !== "" && !line.startsWith("#")).map((line) => {
    const match = /^([A-Za-z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line)
    if (match === null) throw new Error(`not a sample line: ${line}`)
    const labels: Record<string, string> = {}
    for (const pair of (match[2] ?? "").matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) labels[pair[1]!] = pair[2]!
    const value = match[3] === "+Inf" ? Infinity : match[3] === "-Inf" ? -Infinity : Number(match[3])
    return { name: match[1]!, labels, value }
  })

/** The one sample of `name` whose labels include `labels`; fails the test when there is none or several. */
const sample = (samples: ReadonlyArray<Sample>, name: string, labels: Readonly<Record<string, string>> = {}) => {
  const found = samples.filter((s) =>
    s.name === name && Object.entries(labels).every(([key, value]) => s.labels[key] === value)
  )
  assert.strictEqual(found.length, 1, `one sample ${name}${JSON.stringify(labels)}, found ${found.length}`)
  return found[0]!.value
}

const scrape = (url: string) =>
  Effect.promise(async () => {
    const response = await fetch(url)
    return { status: response.status, type: response.headers.get("content-type"), text: await response.text() }
  })

/** Whether `port` on 127.0.0.1 can be bound right now (then it is let go at once). */
const bindable = (port: number) =>
  Effect.callback<boolean>((resume) => {
    const probe = Net.createServer()
    probe.once("error", () => resume(Effect.succeed(false)))
    probe.listen(port, "127.0.0.1", () => probe.close(() => resume(Effect.succeed(true))))
  })

/** A port held by another server for the test's scope. */
const occupied = Effect.acquireRelease(
  Effect.callback<Net.Server & { readonly port: number }>((resume) => {
    const holder = Net.createServer()
    holder.listen(
      0,
      "127.0.0.1",
      () => resume(Effect.succeed(Object.assign(holder, { port: (holder.address() as Net.AddressInfo).port })))
    )
  }),
  (holder) => Effect.callback<void>((resume) => void holder.close(() => resume(Effect.void)))
)

describe("Metrics.serve", () => {
  it.live("serves the Effect metrics in the Prometheus text format at /metrics; other paths are 404", () =>
    Effect.gen(function*() {
      const counter = Metric.counter("effect_informers_test_served_total", {
        description: "a test counter",
        incremental: true
      })
      yield* Metric.update(Metric.withAttributes(counter, { case: "serve" }), 3)
      const server = yield* Metrics.serve({ port: 0 })
      assert.strictEqual(server.host, "127.0.0.1")
      assert.isAbove(server.port, 0)
      assert.strictEqual(server.url, `http://127.0.0.1:${server.port}/metrics`)
      const { status, text, type } = yield* scrape(server.url)
      assert.strictEqual(status, 200)
      assert.include(type ?? "", "text/plain")
      assert.include(text, "# TYPE effect_informers_test_served_total counter")
      assert.include(text, "# HELP effect_informers_test_served_total a test counter")
      assert.strictEqual(sample(parse(text), "effect_informers_test_served_total", { case: "serve" }), 3)
      assert.strictEqual(sample(parse(text), "target_info", { service_name: "effect-informers" }), 1)
      assert.strictEqual((yield* scrape(server.url.replace("/metrics", "/other"))).status, 404)
      // a request target that `new URL` cannot read (`//[`) is a 404 too, not the end of the process
      const raw = yield* Effect.callback<string>((resume) => {
        const socket = Net.connect(server.port, "127.0.0.1", () => socket.end("GET //[ HTTP/1.1\r\nHost: x\r\n\r\n"))
        let answer = ""
        socket.setEncoding("utf8")
        socket.on("data", (chunk: string) => answer += chunk)
        socket.on("close", () => resume(Effect.succeed(answer)))
      })
      assert.match(raw, /^HTTP\/1\.1 404/)
      assert.strictEqual((yield* scrape(server.url)).status, 200, "still serving")
    }).pipe(Effect.scoped))

  it.live("a port in use is a MetricsServerError of one line; closing the scope frees the port", () =>
    Effect.gen(function*() {
      const holder = yield* occupied
      const inUse = yield* Effect.flip(Effect.scoped(Metrics.serve({ port: holder.port })))
      assert.strictEqual(inUse._tag, "MetricsServerError")
      assert.strictEqual(inUse.reason, "AddressInUse")
      assert.strictEqual(inUse.message, `cannot serve the metrics on 127.0.0.1:${holder.port}: the address is in use`)

      const scope = yield* Scope.make()
      const server = yield* Scope.provide(scope)(Metrics.serve({ port: 0 }))
      assert.isFalse(yield* bindable(server.port))
      // a scrape keeps its connection alive: closing must not wait for it
      assert.strictEqual((yield* scrape(server.url)).status, 200)
      yield* Scope.close(scope, Exit.void)
      assert.isTrue(yield* bindable(server.port), "the port is free once the scope closed")

      const badPort = yield* Effect.flip(Effect.scoped(Metrics.serve({ port: 70000 })))
      assert.strictEqual(badPort.reason, "InvalidPort")
      assert.notInclude(badPort.message, "\n")
    }).pipe(Effect.scoped))
})

// short leases: the replica leads within a retry period of its start
const timing = ["--lease-duration", "2s", "--renew-deadline", "1.5s", "--retry-period", "250ms"]

describe("replicate --metrics-port", () => {
  it.live(
    "a leading replica serves its informer, queue, controller and leader-election series",
    () =>
      Effect.gen(function*() {
        const server = yield* ApiServer.make()
        yield* server.objects.create(Resource.namespaces, { metadata: { name: "src" } })
        yield* server.objects.create(Resource.namespaces, {
          metadata: { name: "t1", labels: { [Replicate.targetLabel]: "true" } }
        })
        yield* server.objects.create(Resource.configMaps, {
          metadata: { namespace: "src", name: "settings", labels: { [Replicate.sourceLabel]: "true" } },
          data: { v: "1" }
        })
        const running = yield* replica(server.url, "metrics-1", [
          "--leader-elect",
          ...timing,
          "--metrics-port",
          "0"
        ])
        const url = yield* eventually(
          Effect.sync(() => /metrics at (http:\/\/127\.0\.0\.1:\d+\/metrics)/.exec(running.stderr())?.[1]),
          { what: "the metrics address", timeout: 60_000, interval: 25 }
        )
        yield* eventually(
          Effect.map(
            Effect.option(server.objects.get(Resource.configMaps, { namespace: "t1", name: "settings" })),
            (cm) => cm._tag === "Some" && cm.value.data?.["v"] === "1" ? true : undefined
          ),
          { what: "the copy in t1", timeout: 60_000, interval: 25 }
        )
        // the reconcile that made the copy has finished (counted) once the total shows it; the copy's own ADD
        // comes back by the watch after the write returned, so the scrape waits for its notification too
        const samples = yield* eventually(
          Effect.map(scrape(url), ({ text }) => {
            const all = parse(text)
            const done = all.find((s) =>
              s.name === "controller_runtime_reconcile_total" && s.labels["result"] === "success" && s.value > 0
            )
            const copySeen = all.find((s) =>
              s.name === "effect_informers_notifications_total" &&
              s.labels["informer"] === "configmaps in all namespaces" && s.labels["type"] === "add" && s.value >= 2
            )
            return done === undefined || copySeen === undefined ? undefined : all
          }),
          { what: "a successful reconcile counted, and the copy's notification", timeout: 60_000, interval: 25 }
        )

        // leader election: leading, one term, nothing lost
        const election = { name: "replicate" }
        assert.strictEqual(sample(samples, "leader_election_master_status", election), 1)
        assert.strictEqual(sample(samples, "effect_informers_leader_election_transitions_total", election), 1)
        assert.strictEqual(sample(samples, "leader_election_slowpath_total", election) >= 0, true)
        assert.strictEqual(
          sample(samples, "effect_informers_leader_election_step_downs_total", { ...election, reason: "LeaseLost" }),
          0
        )

        // the controller: reconciles counted by result, timed; four workers; none failed
        const controller = { controller: "replicate" }
        assert.isAbove(sample(samples, "controller_runtime_reconcile_total", { ...controller, result: "success" }), 0)
        assert.strictEqual(sample(samples, "controller_runtime_reconcile_total", { ...controller, result: "error" }), 0)
        assert.strictEqual(sample(samples, "controller_runtime_reconcile_errors_total", controller), 0)
        assert.strictEqual(sample(samples, "controller_runtime_reconcile_panics_total", controller), 0)
        assert.isAbove(sample(samples, "controller_runtime_reconcile_time_seconds_count", controller), 0)
        assert.strictEqual(
          sample(samples, "controller_runtime_reconcile_time_seconds_bucket", { ...controller, le: "+Inf" }),
          sample(samples, "controller_runtime_reconcile_time_seconds_count", controller)
        )
        assert.strictEqual(sample(samples, "controller_runtime_max_concurrent_reconciles", controller), 4)
        const active = sample(samples, "controller_runtime_active_workers", controller)
        assert.isTrue(active >= 0 && active <= 4, `active workers ${active}`)

        // its work queue (client-go's names, tagged with the controller's name)
        const queue = { name: "replicate" }
        assert.isAbove(sample(samples, "workqueue_adds_total", queue), 0)
        assert.isAbove(sample(samples, "workqueue_queue_duration_seconds_count", queue), 0)
        assert.isAbove(sample(samples, "workqueue_work_duration_seconds_count", queue), 0)
        assert.isAtLeast(sample(samples, "workqueue_depth", queue), 0)
        // a retry is an add with a delay: a key requeued (a stale cache after its own write, a requeue result,
        // a failure), none other here
        const requeued = sample(samples, "effect_informers_reconcile_stale_skips_total", controller) +
          sample(samples, "controller_runtime_reconcile_total", { ...controller, result: "requeue" }) +
          sample(samples, "controller_runtime_reconcile_total", { ...controller, result: "requeue_after" })
        assert.strictEqual(sample(samples, "workqueue_retries_total", queue), requeued)

        // the informers (named after what they watch): the initial lists (the 2 namespaces and a fresh cluster's 4,
        // the source), the notifications handed out (the copy came by the watch), one initial relist each
        const namespaces = "namespaces"
        const configMaps = "configmaps in all namespaces"
        assert.strictEqual(sample(samples, "effect_informers_listed_objects_total", { informer: namespaces }), 6)
        assert.strictEqual(sample(samples, "effect_informers_listed_objects_total", { informer: configMaps }), 1)
        assert.strictEqual(
          sample(samples, "effect_informers_notifications_total", { informer: configMaps, type: "add" }),
          2
        )
        // no error: no error series (they are tagged with what failed)
        assert.deepStrictEqual(samples.filter((s) => s.name === "effect_informers_errors_total"), [])
        assert.strictEqual(
          sample(samples, "effect_informers_relists_total", { informer: configMaps, cause: "initial" }),
          1
        )
        assert.isAtLeast(sample(samples, "effect_informers_fifo_depth", { informer: configMaps }), 0)

        // the REST client (client-go's names and labels): the two informers' LISTs and WATCHes (a watch-list is
        // one WATCH: 2 GETs at least), the copy's create, timed to their headers in client-go's buckets
        const host = new URL(server.url).host
        assert.isAtLeast(sample(samples, "rest_client_requests_total", { code: "200", method: "GET", host }), 2)
        assert.isAtLeast(sample(samples, "rest_client_requests_total", { code: "201", method: "POST", host }), 1)
        const gets = { verb: "GET", host }
        const timedGets = sample(samples, "rest_client_request_duration_seconds_count", gets)
        assert.isAtLeast(timedGets, 2)
        assert.isAtLeast(sample(samples, "rest_client_request_duration_seconds_sum", gets), 0)
        assert.strictEqual(
          sample(samples, "rest_client_request_duration_seconds_bucket", { ...gets, le: "+Inf" }),
          timedGets
        )
        assert.isAtLeast(sample(samples, "rest_client_request_duration_seconds_bucket", { ...gets, le: "0.005" }), 0)
        assert.strictEqual(
          sample(samples, "rest_client_request_duration_seconds_bucket", { ...gets, le: "60" }),
          timedGets
        )
        assert.isAbove(sample(samples, "rest_client_request_duration_seconds_count", { verb: "POST", host }), 0)

        // SIGINT: the command ends and the port is free again
        const port = Number(new URL(url).port)
        running.child.kill("SIGINT")
        const code = yield* Effect.promise(() => running.exited)
        assert.isTrue(code === 0 || code === null, `exit code ${code}`)
        assert.isTrue(yield* bindable(port), "the metrics port is free after the command ended")
      }).pipe(Effect.scoped),
    60_000
  )

  it.live("a metrics port in use: one line on stderr, exit code 1, nothing else started", () =>
    Effect.gen(function*() {
      const server = yield* ApiServer.make()
      const holder = yield* occupied
      const running = yield* replica(server.url, "metrics-2", ["--metrics-port", String(holder.port)])
      const code = yield* Effect.promise(() => running.exited)
      assert.strictEqual(code, 1)
      assert.strictEqual(
        running.stderr(),
        `error: cannot serve the metrics on 127.0.0.1:${holder.port}: the address is in use\n`
      )
    }).pipe(Effect.scoped), 60_000)
})

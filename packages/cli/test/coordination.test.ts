/**
 * Coordination never waits behind the work: `replicate --concurrency 40` processes whose reconciles flood
 * their Client (5 qps, burst 10: 320 copies to write, about 40 writes always waiting for a token), with
 * short leases, against one embedded API server. Their Leases go through a Client of their own (the
 * library's default in `LeaderElection.layerClient` and `Sharding.layerClient`): over the window the
 * leader never steps down, and the shard members' membership never changes, while the audit log shows the
 * copies written at the rate limit throughout.
 */
import * as ApiServer from "@effect-informers/testkit/ApiServer"
import { assert, describe, it } from "@effect/vitest"
import * as Resource from "effect-informers/Resource"
import * as Effect from "effect/Effect"
import * as Replicate from "../src/Replicate.js"
import type { Replica } from "./fixtures.js"
import { eventually, replica, sleep } from "./fixtures.js"

const sources = Array.from({ length: 80 }, (_, i) => `cfg-${i}`)
const targets = ["t1", "t2", "t3", "t4"]
const windowMillis = 6000

/** A server with the namespace `src` and the targets, recording its writes. */
const setup = Effect.gen(function*() {
  const audit: Array<ApiServer.AuditEvent> = []
  const server = yield* ApiServer.make({ auditLog: (event) => void audit.push(event) })
  for (const ns of ["src", ...targets]) {
    yield* server.objects.create(Resource.namespaces, {
      metadata: { name: ns, ...(ns === "src" ? {} : { labels: { [Replicate.targetLabel]: "true" } }) }
    })
  }
  const createSources = Effect.forEach(sources, (name) =>
    server.objects.create(Resource.configMaps, {
      metadata: { namespace: "src", name, labels: { [Replicate.sourceLabel]: "true" } },
      data: { v: name }
    }))
  /** The copies written (answered 201) by replicas, with their times. */
  const copyWrites = () =>
    audit.filter((e) => e.resource === "configmaps" && e.verb === "create" && e.code === 201 && e.namespace !== "src")
  return { audit, server, createSources, copyWrites }
})

/**
 * Ends the replicas with SIGKILL when the test's scope closes (before the fixture's SIGINT): a graceful
 * stop would let their rate-limited reconciles run on for the Controller's 30 s shutdown timeout.
 */
const killAtEnd = (replicas: ReadonlyArray<Replica>) =>
  Effect.addFinalizer(() => Effect.sync(() => replicas.forEach((r) => r.child.kill("SIGKILL"))))

/** The state lines a replica printed (`replicate: ID: LINE`), in order. */
const stateLines = (r: Replica) =>
  r.stderr().split("\n").flatMap((line) => {
    const prefix = `replicate: ${r.identity}: `
    return line.startsWith(prefix) ? [line.slice(prefix.length)] : []
  })

/**
 * The load was real: during the window, copies were written at about the rate limit (5/s per replica, not
 * more), and some were still to write at its end (the reconciles' queue never ran dry).
 */
const assertFlooded = (
  writes: ReadonlyArray<ApiServer.AuditEvent>,
  start: number,
  end: number,
  writers: number
) => {
  const inWindow = writes.filter((e) => Date.parse(e.time) >= start && Date.parse(e.time) <= end).length
  const seconds = (end - start) / 1000
  assert.isAtMost(inWindow, writers * 5 * (seconds + 1), `${inWindow} copies written in ${seconds} s`)
  assert.isAtLeast(inWindow, seconds, `the work went on: ${inWindow} copies written in ${seconds} s`)
  assert.isBelow(writes.length, sources.length * targets.length, "copies were still to write at the end")
}

describe("replicate --concurrency 40: coordination under a write load above the rate limit", () => {
  it.live(
    "--leader-elect: the leader renews throughout, no step-down",
    () =>
      Effect.gen(function*() {
        const { audit, copyWrites, createSources, server } = yield* setup
        const timing = ["--lease-duration", "4s", "--renew-deadline", "3s", "--retry-period", "500ms"]
        const replicas: Array<Replica> = []
        for (const identity of ["r1", "r2"]) {
          replicas.push(yield* replica(server.url, identity, ["--leader-elect", "--concurrency", "40", ...timing]))
        }
        yield* killAtEnd(replicas)
        const lease = () => server.objects.get(Resource.leases, { namespace: "default", name: Replicate.leaseName })
        const leader = yield* eventually(
          Effect.map(lease(), (l) => l.spec?.holderIdentity === "" ? undefined : l.spec?.holderIdentity),
          { what: "a leader", timeout: 60_000, interval: 25 }
        )
        const transitions = (yield* lease()).spec?.leaseTransitions
        yield* createSources
        yield* eventually(Effect.sync(() => copyWrites().length >= 20 ? true : undefined), {
          what: "the copies to be written",
          timeout: 60_000,
          interval: 25
        })
        const start = Date.now()
        yield* sleep(windowMillis)
        const end = Date.now()

        assertFlooded(copyWrites(), start, end, 1)
        const last = yield* lease()
        assert.strictEqual(last.spec?.holderIdentity, leader)
        assert.strictEqual(last.spec?.leaseTransitions, transitions)
        // one term: the leader printed Leading once, and no replica printed a step-down
        const leading = replicas.find((r) => r.identity === leader)!
        assert.deepStrictEqual(stateLines(leading).filter((line) => line === "Leading"), ["Leading"], leading.stderr())
        for (const r of replicas) assert.notInclude(r.stderr(), "SteppingDown", r.stderr())
        // the renewals, at the retry period: no gap near the renew deadline
        const renewals = audit
          .filter((e) => e.resource === "leases" && e.verb === "update" && e.code === 200)
          .map((e) => Date.parse(e.time))
          .filter((t) => t >= start && t <= end)
        const gaps = renewals.slice(1).map((t, i) => t - renewals[i]!)
        assert.isAtLeast(renewals.length, windowMillis / 500 / 2, `${renewals.length} renewals`)
        assert.isBelow(Math.max(...gaps), 3000, `gaps between renewals: ${gaps.join(",")}`)
      }).pipe(Effect.scoped),
    90_000
  )

  it.live(
    "--sharded: the members stay Active with each other in view, no membership change",
    () =>
      Effect.gen(function*() {
        const { copyWrites, createSources, server } = yield* setup
        // a view lasts (6 - 2) / 2 = 2 s, refreshed every 0.5 s: two requests per member per 0.5 s
        const timing = ["--lease-duration", "6s", "--renew-deadline", "2s", "--retry-period", "500ms"]
        const members: Array<Replica> = []
        for (const identity of ["s1", "s2"]) {
          members.push(yield* replica(server.url, identity, ["--sharded", "--concurrency", "40", ...timing]))
        }
        yield* killAtEnd(members)
        const settled = "Active, members s1,s2"
        yield* createSources
        yield* eventually(Effect.sync(() => members.every((m) => stateLines(m).includes(settled)) ? true : undefined), {
          what: "both members Active with each other in view",
          timeout: 60_000,
          interval: 25
        })
        const before = members.map((m) => stateLines(m).lastIndexOf(settled))
        yield* eventually(Effect.sync(() => copyWrites().length >= 20 ? true : undefined), {
          what: "the copies to be written",
          timeout: 60_000,
          interval: 25
        })
        const start = Date.now()
        yield* sleep(windowMillis)
        const end = Date.now()

        assertFlooded(copyWrites(), start, end, 2)
        for (const [i, m] of members.entries()) {
          const after = stateLines(m).slice(before[i]!).filter((line) => line !== "running")
          assert.deepStrictEqual(after, [settled], m.stderr())
        }
      }).pipe(Effect.scoped),
    90_000
  )
})

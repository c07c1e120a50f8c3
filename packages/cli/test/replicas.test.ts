/**
 * Three replicas of `effect-informers replicate --leader-elect`, real processes against one embedded API
 * server with short leases: one leader at a time does the work; kill -9 of the holder hands over within the
 * lease duration and two jittered retry periods; SIGTERM of the next holder releases the Lease and the third
 * takes over within a few seconds; the audit log shows the ConfigMap writes came from one leader at a time.
 */
import * as ApiServer from "@effect-informers/testkit/ApiServer"
import { assert, describe, it } from "@effect/vitest"
import * as Resource from "effect-informers/Resource"
import * as Effect from "effect/Effect"
import * as Replicate from "../src/Replicate.js"
import type { Replica } from "./fixtures.js"
import { eventually, replica } from "./fixtures.js"

// short leases: 2 s, renew deadline 1.5 s, retry 0.25 s (jittered up to 0.55 s)
const leaseMillis = 2000
const retryMillis = 250
const timing = ["--lease-duration", "2s", "--renew-deadline", "1.5s", "--retry-period", "250ms"]

describe("replicate --leader-elect: three replicas", () => {
  it.live(
    "one leader at a time; kill -9 and SIGTERM hand over; the writes never interleave",
    () =>
      Effect.gen(function*() {
        const audit: Array<ApiServer.AuditEvent> = []
        // the Lease's holder after each of its writes, read in the audit callback (the store answers at once):
        // a release between two holders shows here however short it lasts (a poll every 25 ms on a busy
        // machine missed one)
        const leaseHolders: Array<string> = []
        const server: ApiServer.ApiServer.Service = yield* ApiServer.make({
          auditLog: (event) => {
            audit.push(event)
            if (event.resource !== "leases" || event.name !== Replicate.leaseName || event.code >= 300) return
            const lease = Effect.runSync(Effect.option(
              server.objects.get(Resource.leases, { namespace: "default", name: Replicate.leaseName })
            ))
            if (lease._tag === "Some") leaseHolders.push(lease.value.spec?.holderIdentity ?? "")
          }
        })
        for (const ns of ["src", "t1", "t2"]) {
          yield* server.objects.create(Resource.namespaces, {
            metadata: { name: ns, ...(ns === "src" ? {} : { labels: { [Replicate.targetLabel]: "true" } }) }
          })
        }
        const replicas: Array<Replica> = []
        for (const identity of ["r1", "r2", "r3"]) {
          replicas.push(yield* replica(server.url, identity, ["--leader-elect", ...timing]))
        }

        const holder = () =>
          Effect.map(
            server.objects.get(Resource.leases, { namespace: "default", name: Replicate.leaseName }),
            (lease) => lease.spec?.holderIdentity
          )
        const holderIn = (candidates: ReadonlyArray<string>) => () =>
          Effect.map(holder(), (h) => h !== undefined && candidates.includes(h) ? h : undefined)
        const copy = (ns: string) => () =>
          Effect.map(
            server.objects.get(Resource.configMaps, { namespace: ns, name: "settings" }),
            (cm) => cm.data?.["v"]
          )
        const writeSource = (v: string) =>
          Effect.gen(function*() {
            const existing = yield* Effect.option(
              server.objects.get(Resource.configMaps, { namespace: "src", name: "settings" })
            )
            const body = {
              metadata: { namespace: "src", name: "settings", labels: { [Replicate.sourceLabel]: "true" } },
              data: { v }
            }
            if (existing._tag === "None") yield* server.objects.create(Resource.configMaps, body)
            else yield* server.objects.update(Resource.configMaps, { ...existing.value, data: { v } })
          })
        const converged = (v: string) =>
          eventually(
            Effect.map(Effect.all([copy("t1")(), copy("t2")()]), ([a, b]) => a === v && b === v ? true : undefined),
            { what: `copies at ${v}`, timeout: 60_000, interval: 25 }
          )

        // 1. one leader, doing the work
        const first = yield* eventually(Effect.suspend(holderIn(["r1", "r2", "r3"])), {
          what: "a first leader",
          timeout: 60_000,
          interval: 25
        })
        yield* writeSource("1")
        yield* converged("1")

        // 2. kill -9 of the holder: another takes over within the lease duration and two jittered retries
        const killed = replicas.find((r) => r.identity === first)!
        killed.child.kill("SIGKILL")
        const killedAt = Date.now()
        yield* Effect.promise(() => killed.exited)
        // the source changes while there is no leader: the next one finds it in its warm cache and queue
        yield* writeSource("2")
        const second = yield* eventually(
          Effect.suspend(holderIn(replicas.filter((r) => r !== killed).map((r) => r.identity))),
          { what: "a second leader", timeout: 60_000, interval: 25 }
        )
        const handover = Date.now() - killedAt
        yield* converged("2")
        const recovered = Date.now() - killedAt
        const firstWriteBySecond = audit.find((e) =>
          e.resource === "configmaps" && (e.userAgent ?? "").includes(`(${second})`) &&
          Date.parse(e.time) >= killedAt
        )
        assert.isDefined(firstWriteBySecond)
        // lease 2 s + 2 retries of at most 0.55 s, plus process scheduling on a busy machine
        assert.isBelow(handover, leaseMillis + 2 * retryMillis * 2.2 + 3000, `handover took ${handover} ms`)

        // 3. SIGTERM of the second: it releases the Lease; the third takes over within a few seconds
        const stopped = replicas.find((r) => r.identity === second)!
        stopped.child.kill("SIGTERM")
        const stoppedAt = Date.now()
        // the holders after each Lease write until the third leads: the release is a Lease without a holder
        const holdersBefore = leaseHolders.length
        const others = replicas.filter((r) => r !== killed && r !== stopped).map((r) => r.identity)
        const third = yield* eventually(
          Effect.map(holder(), (h) => h !== undefined && others.includes(h) ? h : undefined),
          { what: "the third leader", timeout: 60_000, interval: 25 }
        )
        const seen = leaseHolders.slice(holdersBefore)
        const release = Date.now() - stoppedAt
        const exitCode = yield* Effect.promise(() => stopped.exited)
        assert.isBelow(release, leaseMillis + 3000, `the release-to-takeover took ${release} ms`)
        yield* writeSource("3")
        yield* converged("3")

        // 4. the ConfigMap writes of the replicas came from one leader at a time: identities in runs
        const writers = audit
          .filter((e) => e.resource === "configmaps" && /\(r\d\)/.test(e.userAgent ?? ""))
          .sort((a, b) => Date.parse(a.time) - Date.parse(b.time))
          .map((e) => /\((r\d)\)/.exec(e.userAgent!)![1]!)
        const runs = writers.filter((w, i) => i === 0 || writers[i - 1] !== w)
        assert.deepStrictEqual(runs, [first, second, third], `writers in order: ${writers.join(",")}`)
        assert.isTrue(new Set(runs).size === 3)
        // released by the second, then taken by the third
        const released = seen.indexOf("")
        assert.isAtLeast(released, 0, `the Lease was released: holders after each write ${JSON.stringify(seen)}`)
        assert.include(seen.slice(released), third, JSON.stringify(seen))
        assert.isTrue(exitCode === 0 || exitCode === null, `SIGTERM exit code ${exitCode}`)
        // warm standby: from the new holder seen to the copies done (its first reconciles)
        console.log(
          `replicas: first ${first}; kill -9 -> ${second} holds the Lease after ${handover} ms, the copies are ` +
            `right after ${recovered} ms (takeover to reconciled: ${recovered - handover} ms); ` +
            `SIGTERM -> ${third} in ${release} ms`
        )
      }).pipe(Effect.scoped),
    120_000
  )
})

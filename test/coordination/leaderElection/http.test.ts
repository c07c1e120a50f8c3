/**
 * Two electors in one process over a real Lease of the embedded API server (the Client lock over HTTP),
 * with short real durations (lease 2 s, renew deadline 1.5 s, retry 0.2 s): one acquires, the other
 * follows; a graceful shutdown hands over at once; a holder whose scope is closed without release is
 * replaced once its lease expired. Never both at work.
 */
import * as ApiServer from "@effect-informers/testkit/ApiServer"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Scope from "effect/Scope"
import * as Client from "../../../src/Client.js"
import * as LeaderElection from "../../../src/LeaderElection.js"
import * as Resource from "../../../src/Resource.js"
import { eventually } from "../../fixtures/index.js"
import { clientLayer } from "../../transport/client/fixtures.js"

const timings = { leaseDuration: "2 seconds", renewDeadline: "1500 millis", retryPeriod: "200 millis" } as const

interface Mark {
  readonly at: number
  readonly what: string
}

describe("LeaderElection over the embedded API server", () => {
  it.live(
    "acquire, handover on release, takeover after a holder's scope closed without release",
    () =>
      Effect.gen(function*() {
        const server = yield* Effect.orDie(ApiServer.make())
        const client = yield* Effect.provide(Client.Client, clientLayer(server.url))
        const marks: Array<Mark> = []
        const mark = (what: string) => Effect.sync(() => marks.push({ at: Date.now(), what }))
        const work = (who: string) =>
          Effect.gen(function*() {
            yield* mark(`${who} start`)
            yield* Effect.addFinalizer(() => mark(`${who} stop`))
            return yield* Effect.never
          })
        const elector = (identity: string, releaseOnCancel = true) =>
          Effect.gen(function*() {
            const scope = yield* Scope.make()
            const service = yield* Scope.provide(
              Effect.flatMap(
                LeaderElection.clientLock({ namespace: "default", name: "effect-informers-test" }),
                (lock) => LeaderElection.make({ lock, identity, releaseOnCancel, ...timings })
              ),
              scope
            ).pipe(Effect.provideService(Client.Client, client), Effect.orDie)
            yield* Effect.forkIn(service.whileLeading(work(identity)), scope)
            return { service, close: Scope.close(scope, Exit.void) }
          })
        const lease = Effect.orDie(
          server.objects.get(Resource.leases, { name: "effect-informers-test", namespace: "default" })
        )

        // a acquires; b follows
        const a = yield* elector("a")
        yield* eventually(a.service.isLeader, { what: "a to lead", interval: 5, clock: "real" })
        const b = yield* elector("b", false)
        yield* eventually(Effect.map(b.service.state, (s) => s._tag === "Following" && s.leader === "a"), {
          what: "b to follow a",
          interval: 5,
          clock: "real"
        })
        const first = yield* lease
        assert.strictEqual(first.spec?.holderIdentity, "a")
        assert.strictEqual(first.spec?.leaseDurationSeconds, 2)
        assert.strictEqual(first.spec?.leaseTransitions, 0)
        assert.match(first.spec?.renewTime ?? "", /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/)
        assert.match(first.spec?.acquireTime ?? "", /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/)
        // a renews: the record moves
        yield* eventually(Effect.map(lease, (l) => l.spec?.renewTime !== first.spec?.renewTime), {
          what: "a renewal",
          interval: 5,
          clock: "real"
        })

        // a shuts down gracefully: released, b takes over at its next attempt (at most 0.44 s later)
        const released = Date.now()
        yield* a.close
        const afterRelease = yield* lease
        assert.include(["", "b"], afterRelease.spec?.holderIdentity ?? "")
        yield* eventually(b.service.isLeader, { what: "b to lead", timeout: 3000, interval: 5, clock: "real" })
        const handover = Date.now() - released
        assert.isBelow(handover, 1500)
        assert.strictEqual((yield* lease).spec?.holderIdentity, "b")
        assert.strictEqual((yield* lease).spec?.leaseTransitions, 1)

        // a comes back and follows; b's scope is closed without release (a killed replica)
        const a2 = yield* elector("a")
        yield* eventually(Effect.map(a2.service.state, (s) => s._tag === "Following" && s.leader === "b"), {
          what: "a to follow b",
          interval: 5,
          clock: "real"
        })
        const killed = Date.now()
        yield* b.close
        assert.strictEqual((yield* lease).spec?.holderIdentity, "b")
        yield* eventually(a2.service.isLeader, { what: "a to take over", timeout: 6000, interval: 5, clock: "real" })
        const takeover = Date.now() - killed
        // not before b's last renewal expired for a (2 s after a saw it), within a lease and two retries and a bit
        assert.isAtLeast(takeover, 1400)
        assert.isBelow(takeover, 4000)
        const last = yield* lease
        assert.strictEqual(last.spec?.holderIdentity, "a")
        assert.strictEqual(last.spec?.leaseTransitions, 2)
        yield* a2.close

        // never both at work
        const working = new Set<string>()
        for (const { what } of marks) {
          const [who, event] = what.split(" ")
          if (event === "start") {
            assert.deepStrictEqual([...working], [], `${who} started while ${[...working]} worked`)
            working.add(who)
          } else {
            working.delete(who)
          }
        }
        assert.deepStrictEqual(marks.map((m) => m.what), [
          "a start",
          "a stop",
          "b start",
          "b stop",
          "a start",
          "a stop"
        ])
        assert.strictEqual((yield* lease).spec?.holderIdentity, "")
      }),
    30_000
  )
})

describe("LeaderElection over the embedded API server: the lock's watch", () => {
  it.live(
    "a Lease edited to another holder, then deleted: the leader's work stops at once, with no renewal in between",
    () =>
      Effect.gen(function*() {
        const server = yield* Effect.orDie(ApiServer.make())
        const client = yield* Effect.provide(Client.Client, clientLayer(server.url))
        // renewals 4 s apart: a step-down found by a renewal would take seconds, the watch's takes ms
        const slow = { leaseDuration: "12 seconds", renewDeadline: "10 seconds", retryPeriod: "4 seconds" } as const
        const marks: Array<Mark> = []
        const mark = (what: string) => Effect.sync(() => marks.push({ at: Date.now(), what }))
        const updates: Array<number> = []
        const service = yield* Effect.gen(function*() {
          const lock = yield* LeaderElection.clientLock({ namespace: "default", name: "watched" })
          const counted: LeaderElection.LeaseLock = {
            ...lock,
            update: (record, resourceVersion) =>
              Effect.andThen(Effect.sync(() => updates.push(Date.now())), lock.update(record, resourceVersion))
          }
          return yield* LeaderElection.make({ lock: counted, identity: "a", ...slow })
        }).pipe(Effect.provideService(Client.Client, client), Effect.orDie)
        yield* Effect.forkScoped(service.whileLeading(
          Effect.gen(function*() {
            yield* mark("start")
            yield* Effect.addFinalizer(() => mark("stop"))
            return yield* Effect.never
          })
        ))
        yield* eventually(service.isLeader, { what: "a to lead", interval: 5, clock: "real" })
        // the Lease's watch is open (a fixed pause was not always enough on a loaded machine: the renewal found the
        // edit first)
        const watchOpen = (after: number) =>
          eventually(Effect.map(server.stats, (s) => s.watchesTotal > after && s.watchesOpen >= 1), {
            what: "the Lease's watch to open",
            timeout: 3000,
            interval: 5,
            clock: "real"
          })
        yield* watchOpen(0)
        const ref = { name: "watched", namespace: "default" }
        const lease = yield* Effect.orDie(server.objects.get(Resource.leases, ref))
        const edited = Date.now()
        const renewalsBefore = updates.length
        yield* Effect.orDie(
          server.objects.update(Resource.leases, { ...lease, spec: { ...lease.spec, holderIdentity: "b" } })
        )
        yield* eventually(Effect.sync(() => marks.some((m) => m.what === "stop")), {
          what: "the work to stop",
          timeout: 3000,
          interval: 5,
          clock: "real"
        })
        const stopped = marks.find((m) => m.what === "stop")!.at
        assert.isBelow(stopped - edited, 1500)
        assert.strictEqual(updates.filter((at) => at <= stopped).length, renewalsBefore, "no renewal found it")

        // it campaigns again; once it leads again, a deletion stops the work at once too
        const watchesBefore = (yield* server.stats).watchesTotal
        yield* Effect.orDie(server.objects.delete(Resource.leases, ref))
        yield* eventually(Effect.map(service.state, (s) => s._tag === "Leading" && s.term === 2), {
          what: "a to lead again",
          timeout: 8000,
          interval: 5,
          clock: "real"
        })
        yield* watchOpen(watchesBefore)
        const deleted = Date.now()
        yield* Effect.orDie(server.objects.delete(Resource.leases, ref))
        yield* eventually(Effect.sync(() => marks.filter((m) => m.what === "stop").length === 2), {
          what: "the work to stop again",
          timeout: 3000,
          interval: 5,
          clock: "real"
        })
        assert.isBelow(marks.filter((m) => m.what === "stop")[1].at - deleted, 1500)
      }),
    30_000
  )
})

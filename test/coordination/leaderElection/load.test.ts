/**
 * A leader whose work floods the Client far above its rate limit (qps 5, burst 10, 40 writers: about 40
 * requests always waiting, 8 s each) against the embedded API server, with short real timings (lease 2 s,
 * renew deadline 1.5 s, retry 0.25 s). Through `layerClient` the elector's requests go through a Client of
 * their own (derived from the work's): it renews throughout, for four renew deadlines, never steps
 * down, and releases the Lease at once on shutdown while other work still floods the Client. The control: the same load with the elector on the work's own Client costs the Lease.
 */
import * as ApiServer from "@effect-informers/testkit/ApiServer"
import { assert, describe, it } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as Client from "../../../src/Client.js"
import * as LeaderElection from "../../../src/LeaderElection.js"
import * as Resource from "../../../src/Resource.js"
import { eventually } from "../../fixtures/index.js"
import { clientLayer, realSleep } from "../../transport/client/fixtures.js"
import { makeFlood } from "../../transport/client/flood.js"

const timings = { leaseDuration: "2 seconds", renewDeadline: "1500 millis", retryPeriod: "250 millis" } as const
const renewDeadlineMillis = 1500
const windowMillis = 4 * renewDeadlineMillis
const leaseName = "effect-informers-load"

/** A server recording its writes, the work's Client (qps 5, burst 10) over it, and a flood for that Client. */
const setup = Effect.gen(function*() {
  const audit: Array<ApiServer.AuditEvent> = []
  const server = yield* Effect.orDie(ApiServer.make({ auditLog: (event) => void audit.push(event) }))
  const client = yield* Effect.provide(Client.Client, clientLayer(server.url, { qps: 5, burst: 10 }))
  const flood = makeFlood(client, { writers: 40 })
  return { audit, server, client, flood }
})

/** The states of `election`, from now on, as they change. */
const recordStates = (election: LeaderElection.LeaderElection.Service) =>
  Effect.gen(function*() {
    const states: Array<LeaderElection.State> = []
    yield* Effect.forkScoped(Stream.runForEach(election.changes, (state) => Effect.sync(() => void states.push(state))))
    return states
  })

describe("LeaderElection under a write load above the Client's rate limit", () => {
  it.live(
    "layerClient: the elector's own Client renews throughout; no step-down over four renew deadlines",
    () =>
      Effect.gen(function*() {
        const { audit, client, flood, server } = yield* setup
        const scope = yield* Scope.make()
        const context = yield* Layer.buildWithScope(
          LeaderElection.layerClient({ namespace: "default", leaseName, identity: "a", ...timings }),
          scope
        ).pipe(Effect.provideService(Client.Client, client), Effect.orDie)
        const election = Context.get(context, LeaderElection.LeaderElection)
        const states = yield* recordStates(election)
        // the leader's work, and the same again outside its term (it goes on while the Lease is released)
        yield* Effect.forkIn(election.whileLeading(flood.run), scope)
        yield* Effect.forkScoped(makeFlood(client, { writers: 10, prefix: "other" }).run)
        yield* eventually(election.isLeader, { what: "a to lead", timeout: 10_000, interval: 5, clock: "real" })
        // the queue of the work's Client fills: 40 writers waiting, a new request would wait 8 s
        yield* eventually(Effect.sync(() => flood.answered() >= 10 && flood.waiting() >= 30), {
          what: "the work's queue to fill",
          interval: 5,
          clock: "real"
        })
        const start = Date.now()
        const askedAtStart = flood.asked()
        const answeredAtStart = flood.answered()
        yield* realSleep(windowMillis)
        const end = Date.now()

        // the load was real: the work was held to its rate limit, its queue full throughout
        const answered = flood.answered() - answeredAtStart
        assert.isAtLeast(flood.waiting(), 30, "the work's writers still wait for tokens")
        assert.isAtMost(
          answered,
          5 * ((end - start) / 1000 + 1),
          `the work is rate limited: ${answered} writes answered`
        )
        assert.isAbove(flood.asked(), askedAtStart, "the work went on")

        // never stepped down: one term, from the first Leading on
        assert.deepStrictEqual(
          states.filter((s) => s._tag !== "Acquiring" && s._tag !== "Following").map((s) => s._tag),
          ["Leading"],
          `states: ${states.map((s) => s._tag).join(", ")}`
        )
        assert.deepStrictEqual(yield* election.state, LeaderElection.State.Leading({ term: 1 }))
        const lease = yield* Effect.orDie(
          server.objects.get(Resource.leases, { name: leaseName, namespace: "default" })
        )
        assert.strictEqual(lease.spec?.holderIdentity, "a")
        assert.strictEqual(lease.spec?.leaseTransitions, 0)

        // the renewals went on at the retry period: no gap near the renew deadline in the window
        const renewals = audit
          .filter((e) => e.resource === "leases" && e.verb === "update" && e.code === 200)
          .map((e) => Date.parse(e.time))
          .filter((t) => t >= start - 1000 && t <= end)
        assert.isAtLeast(renewals.length, Math.floor(windowMillis / 250 / 2), `${renewals.length} renewals`)
        const gaps = renewals.slice(1).map((t, i) => t - renewals[i]!)
        assert.isBelow(Math.max(...gaps), renewDeadlineMillis * 2 / 3, `gaps between renewals: ${gaps.join(",")}`)

        // the release does not wait behind the work either: the Lease is free as soon as the scope closed
        const closing = Date.now()
        yield* Scope.close(scope, Exit.void)
        assert.isBelow(Date.now() - closing, 1000, "the work stopped and the Lease was released within 1 s")
        const released = yield* Effect.orDie(
          server.objects.get(Resource.leases, { name: leaseName, namespace: "default" })
        )
        assert.strictEqual(released.spec?.holderIdentity, "")
      }),
    30_000
  )

  it.live(
    "control: the elector on the work's own Client waits behind the work and steps down",
    () =>
      Effect.gen(function*() {
        const { client, flood } = yield* setup
        const election = yield* LeaderElection.clientLock({ namespace: "default", name: leaseName }).pipe(
          Effect.flatMap((lock) => LeaderElection.make({ lock, identity: "a", ...timings })),
          Effect.provideService(Client.Client, client),
          Effect.orDie
        )
        const states = yield* recordStates(election)
        yield* Effect.forkScoped(election.whileLeading(flood.run))
        yield* eventually(election.isLeader, { what: "a to lead", timeout: 10_000, interval: 5, clock: "real" })
        yield* eventually(Effect.sync(() => states.some((s) => s._tag === "SteppingDown")), {
          what: "a to step down",
          timeout: windowMillis,
          interval: 5,
          clock: "real"
        })
        const down = states.find((s) => s._tag === "SteppingDown")
        assert(down?._tag === "SteppingDown")
        assert.strictEqual(down.reason, "RenewDeadline")
      }),
    30_000
  )
})

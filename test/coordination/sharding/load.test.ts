/**
 * Two shard members whose work floods one Client far above its rate limit (qps 5, burst 10, 40 writers:
 * about 40 requests always waiting, 8 s each) against the embedded API server, with short real timings
 * (lease 4 s, renew deadline 2 s, retry 0.5 s, view timeout 1 s). Through `layerClient` the membership's
 * renewals and lists go through a Client of their own (derived from the work's): both stay `Active` with
 * both members in view for three renew deadlines, no change at all. The control: the same load with a
 * member on the work's own Client costs it its membership.
 */
import * as ApiServer from "@effect-informers/testkit/ApiServer"
import { assert, describe, it } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import * as Client from "../../../src/Client.js"
import * as Sharding from "../../../src/Sharding.js"
import { eventually } from "../../fixtures/index.js"
import { clientLayer, realSleep } from "../../transport/client/fixtures.js"
import { makeFlood } from "../../transport/client/flood.js"

const timings = { leaseDuration: "4 seconds", renewDeadline: "2 seconds", retryPeriod: "500 millis" } as const
const windowMillis = 6000
const group = "loaded"

/** The assignment changes of `member` from now on, one line each (`status members`). */
const recordChanges = (member: Sharding.Sharding.Service) =>
  Effect.gen(function*() {
    const changes: Array<string> = []
    yield* Effect.forkScoped(Stream.runForEach(member.changes, (change) =>
      Effect.sync(() =>
        void changes.push(`${change.current.status} ${change.current.members.join(",")}`)
      )))
    return changes
  })

const bothActive = (members: ReadonlyArray<Sharding.Sharding.Service>) =>
  Effect.map(
    Effect.forEach(members, (m) => m.assignment),
    (all) => all.every((a) => a.status === "Active" && a.members.length === 2)
  )

describe("Sharding under a write load above the Client's rate limit", () => {
  it.live(
    "layerClient: the members' own Client keeps them Active, no membership change over three renew deadlines",
    () =>
      Effect.gen(function*() {
        const server = yield* Effect.orDie(ApiServer.make())
        const client = yield* Effect.provide(Client.Client, clientLayer(server.url, { qps: 5, burst: 10 }))
        const flood = makeFlood(client, { writers: 40 })
        const member = (identity: string) =>
          Effect.map(
            Layer.build(Sharding.layerClient({ namespace: "default", group, identity, ...timings })).pipe(
              Effect.provideService(Client.Client, client),
              Effect.orDie
            ),
            Context.get(Sharding.Sharding)
          )
        const a = yield* member("member-a")
        const b = yield* member("member-b")
        const changes = [yield* recordChanges(a), yield* recordChanges(b)]
        // the work floods the Client the members were built over, from the start (their warm-up included)
        yield* Effect.forkScoped(flood.run)
        const settled = "Active member-a,member-b"
        yield* eventually(Effect.sync(() => changes.every((list) => list.at(-1) === settled)), {
          what: "both members active",
          timeout: 15_000,
          interval: 5,
          clock: "real"
        })
        const before = changes.map((list) => list.length)
        yield* eventually(Effect.sync(() => flood.answered() >= 10 && flood.waiting() >= 30), {
          what: "the work's queue to fill",
          interval: 5,
          clock: "real"
        })
        const start = Date.now()
        const answeredBefore = flood.answered()
        yield* realSleep(windowMillis)
        const end = Date.now()

        // the load was real: the work held to its rate limit, its queue full throughout
        assert.isAtLeast(flood.waiting(), 30, "the work's writers still wait for tokens")
        const answered = flood.answered() - answeredBefore
        assert.isAtMost(
          answered,
          5 * ((end - start) / 1000 + 1),
          `the work is rate limited: ${answered} writes answered`
        )
        // no flap: no assignment change since both were Active with both in view
        for (const [i, list] of changes.entries()) {
          assert.deepStrictEqual(list.slice(before[i]! - 1), [settled], `changes: ${list.join("; ")}`)
        }
        assert.isTrue(yield* bothActive([a, b]))
      }),
    40_000
  )

  it.live(
    "control: a member on the work's own Client waits behind the work and loses its membership",
    () =>
      Effect.gen(function*() {
        const server = yield* Effect.orDie(ApiServer.make())
        const client = yield* Effect.provide(Client.Client, clientLayer(server.url, { qps: 5, burst: 10 }))
        const flood = makeFlood(client, { writers: 40 })
        const member = yield* Sharding.clientBackend("default").pipe(
          Effect.flatMap((backend) => Sharding.make({ backend, identity: "member-a", group, ...timings })),
          Effect.provideService(Client.Client, client),
          Effect.orDie
        )
        yield* eventually(Effect.map(member.assignment, (a) => a.status === "Active"), {
          what: "the member active",
          timeout: 15_000,
          interval: 5,
          clock: "real"
        })
        yield* Effect.forkScoped(flood.run)
        yield* eventually(Effect.map(member.assignment, (a) => a.status !== "Active"), {
          what: "the member to stop being Active",
          timeout: windowMillis,
          interval: 5,
          clock: "real"
        })
      }),
    40_000
  )
})

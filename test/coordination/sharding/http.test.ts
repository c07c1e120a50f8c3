/**
 * Two members over real membership Leases of the embedded API server (the Client backend), with short
 * real durations (lease 3 s, renew deadline 1 s, retry 0.2 s, view timeout 1 s): each Lease named after
 * its member and labelled with the group, the keys split between them, and all of them taken by the one
 * left after the other leaves.
 */
import * as ApiServer from "@effect-informers/testkit/ApiServer"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as Scope from "effect/Scope"
import * as Client from "../../../src/Client.js"
import * as Resource from "../../../src/Resource.js"
import * as Sharding from "../../../src/Sharding.js"
import { eventually } from "../../fixtures/index.js"
import { clientLayer } from "../../transport/client/fixtures.js"

const timings = { leaseDuration: "3 seconds", renewDeadline: "1 second", retryPeriod: "200 millis" } as const
const keys = Array.from({ length: 16 }, (_, i) => `default/cm-${i}`)

describe("Sharding over the embedded API server", () => {
  it.live(
    "membership Leases with the group label; keys split; a member's leave hands its keys over",
    () =>
      Effect.gen(function*() {
        const server = yield* Effect.orDie(ApiServer.make())
        const client = yield* Effect.provide(Client.Client, clientLayer(server.url))
        const member = (identity: string) =>
          Effect.gen(function*() {
            const scope = yield* Scope.make()
            const service = yield* Scope.provide(
              Effect.flatMap(
                Sharding.clientBackend("default"),
                (backend) => Sharding.make({ backend, identity, group: "replicator", ...timings })
              ),
              scope
            ).pipe(Effect.provideService(Client.Client, client), Effect.orDie)
            return { service, close: Scope.close(scope, Exit.void) }
          })
        const owners = (members: ReadonlyArray<{ readonly service: Sharding.Sharding.Service }>) =>
          Effect.forEach(keys, (key) =>
            Effect.map(
              Effect.forEach(
                members,
                (m) => Effect.map(m.service.owns(key), (owns) => owns ? [m.service.identity] : [])
              ),
              (lists) => lists.flat()
            ))

        const a = yield* member("replica-a")
        const b = yield* member("replica-b")
        // another group's Lease in the same namespace is not a member
        yield* Effect.orDie(server.objects.create(Resource.leases, {
          metadata: { name: "other", namespace: "default", labels: { [Sharding.groupLabel]: "other-group" } },
          spec: { holderIdentity: "other", leaseDurationSeconds: 3600 }
        }))
        yield* eventually(
          Effect.map(
            Effect.all([a.service.assignment, b.service.assignment]),
            (all) => all.every((x) => x.status === "Active" && x.members.length === 2)
          ),
          { what: "both members active", timeout: 10_000, interval: 5, clock: "real" }
        )
        const lease = yield* Effect.orDie(
          server.objects.get(Resource.leases, { name: "replica-a", namespace: "default" })
        )
        assert.strictEqual(lease.metadata?.labels?.[Sharding.groupLabel], "replicator")
        assert.strictEqual(lease.spec?.holderIdentity, "replica-a")
        assert.deepStrictEqual(yield* a.service.members, ["replica-a", "replica-b"])
        const split = yield* owners([a, b])
        for (const [i, key] of keys.entries()) {
          assert.deepStrictEqual(split[i], [Option.getOrThrow(Sharding.ownerOf(["replica-a", "replica-b"], key))])
        }
        assert.isTrue(split.some((o) => o[0] === "replica-a") && split.some((o) => o[0] === "replica-b"))

        yield* b.close
        const released = yield* Effect.orDie(
          server.objects.get(Resource.leases, { name: "replica-b", namespace: "default" })
        )
        assert.strictEqual(released.spec?.holderIdentity, "")
        yield* eventually(Effect.map(owners([a]), (all) => all.every((o) => o.length === 1)), {
          what: "a to own every key",
          timeout: 3000,
          interval: 5,
          clock: "real"
        })
        yield* a.close
      }),
    30_000
  )
})

/**
 * Fencing across processes (issue 22): two `replicate --leader-elect` replicas on one embedded API server
 * with an audit log. The leader is paused (SIGSTOP) longer than the lease; the other takes over and
 * writes; the paused one, resumed (SIGCONT) with work waiting, sends no write: the audit log shows no write
 * of it after the new term's first. A hand edit of the Lease's holder stops the leader's writes at once.
 */
import * as ApiServer from "@effect-informers/testkit/ApiServer"
import { assert, describe, it } from "@effect/vitest"
import * as Resource from "effect-informers/Resource"
import * as Effect from "effect/Effect"
import * as Replicate from "../src/Replicate.js"
import type { Replica } from "./fixtures.js"
import { eventually, replica, sleep } from "./fixtures.js"

const writerOf = (event: ApiServer.AuditEvent): string | undefined => /\((r\d)\)/.exec(event.userAgent ?? "")?.[1]

/** A server with `src` and `targets` namespaces, the audit of its ConfigMap writes, and helpers. */
const setup = (targets: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const audit: Array<ApiServer.AuditEvent> = []
    const server = yield* ApiServer.make({
      auditLog: (event) => {
        if (event.resource === "configmaps") audit.push(event)
      }
    })
    for (const ns of ["src", ...targets]) {
      yield* server.objects.create(Resource.namespaces, {
        metadata: { name: ns, ...(ns === "src" ? {} : { labels: { [Replicate.targetLabel]: "true" } }) }
      })
    }
    const holder = () =>
      Effect.map(
        server.objects.get(Resource.leases, { namespace: "default", name: Replicate.leaseName }),
        (lease) => lease.spec?.holderIdentity
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
        Effect.map(
          Effect.all(
            targets.map((ns) =>
              Effect.map(
                server.objects.get(Resource.configMaps, { namespace: ns, name: "settings" }),
                (cm) => cm.data?.["v"]
              )
            )
          ),
          (values) => values.every((x) => x === v) ? true : undefined
        ),
        { what: `copies at ${v}`, timeout: 60_000, interval: 25 }
      )
    return { server, audit, holder, writeSource, converged }
  })

const targets = Array.from({ length: 40 }, (_, i) => `t${i + 1}`)

describe("replicate --leader-elect: fencing", () => {
  it.live(
    "a leader paused past its lease sends no write after resuming: none after the next term's first write",
    () =>
      Effect.gen(function*() {
        const { audit, converged, holder, server, writeSource } = yield* setup(targets)
        // lease 2 s, renew deadline 1.5 s, retry 0.25 s
        const timing = ["--lease-duration", "2s", "--renew-deadline", "1.5s", "--retry-period", "250ms"]
        const replicas: Array<Replica> = []
        for (const identity of ["r1", "r2"]) {
          replicas.push(yield* replica(server.url, identity, ["--leader-elect", ...timing]))
        }
        const first = yield* eventually(Effect.suspend(() => holder()), {
          what: "a first leader",
          timeout: 60_000,
          interval: 25
        })
        const paused = replicas.find((r) => r.identity === first)!
        const other = replicas.find((r) => r !== paused)!
        // 40 copies to write at the Client's 5 per second (burst 10): paused in the middle, the leader has
        // writes waiting for its rate limiter, which would go out the moment it resumes
        yield* writeSource("1")
        yield* eventually(
          Effect.sync(() => audit.filter((e) => writerOf(e) === first).length >= 12 ? true : undefined),
          { what: "a dozen copies", timeout: 60_000, interval: 25 }
        )
        // a stopped process ignores the SIGINT of the test's end: resumed first, whatever happens
        yield* Effect.addFinalizer(() => Effect.sync(() => paused.child.kill("SIGCONT")))
        paused.child.kill("SIGSTOP")
        const pausedAt = Date.now()
        yield* eventually(Effect.map(holder(), (h) => h === other.identity ? h : undefined), {
          what: "the other to take over",
          timeout: 60_000,
          interval: 25
        })
        yield* eventually(
          Effect.sync(() => audit.find((e) => writerOf(e) === other.identity) !== undefined ? true : undefined),
          { what: "the new term's first write", timeout: 60_000, interval: 25 }
        )
        const firstOfNewTerm = audit.find((e) => writerOf(e) === other.identity)!
        paused.child.kill("SIGCONT")
        const resumedAt = Date.now()
        yield* converged("1")
        yield* sleep(2000)

        const stale = audit.filter((e) =>
          writerOf(e) === paused.identity && Date.parse(e.time) >= Date.parse(firstOfNewTerm.time)
        )
        assert.deepStrictEqual(
          stale.map((e) => `${e.time} ${e.verb} ${e.namespace}/${e.name} ${e.code}`),
          [],
          "writes of the resumed replica after the next term began"
        )
        assert.match(paused.stderr(), /Leading\n(.*\n)*.*SteppingDown/, "the resumed replica stepped down")
        console.log(
          `fence: ${first} paused ${resumedAt - pausedAt} ms; ${other.identity} wrote from ${firstOfNewTerm.time}; ` +
            `${audit.filter((e) => writerOf(e) === paused.identity).length} writes of ${first} in all, none after`
        )
      }).pipe(Effect.scoped),
    120_000
  )

  it.live(
    "a hand edit of the Lease's holder stops the leader's writes at once, not at its next renewal",
    () =>
      Effect.gen(function*() {
        const { audit, converged, holder, server, writeSource } = yield* setup(targets)
        // renewals 2 s apart: found by a renewal, the edit would leave the old leader writing for up to 2 s
        const timing = ["--lease-duration", "6s", "--renew-deadline", "4s", "--retry-period", "2s"]
        const replicas: Array<Replica> = []
        for (const identity of ["r1", "r2"]) {
          replicas.push(yield* replica(server.url, identity, ["--leader-elect", ...timing]))
        }
        const first = yield* eventually(Effect.suspend(() => holder()), {
          what: "a first leader",
          timeout: 60_000,
          interval: 25
        })
        yield* writeSource("1")
        yield* converged("1")
        const other = replicas.find((r) => r.identity !== first)!
        const ref = { namespace: "default", name: Replicate.leaseName }
        const lease = yield* server.objects.get(Resource.leases, ref)
        yield* server.objects.update(Resource.leases, {
          ...lease,
          spec: { ...lease.spec, holderIdentity: other.identity }
        })
        const editedAt = Date.now()
        // work right after the edit: only the new holder may do it
        yield* sleep(300)
        yield* writeSource("2")
        yield* converged("2")
        const late = audit.filter((e) => writerOf(e) === first && Date.parse(e.time) >= editedAt)
        assert.deepStrictEqual(late.map((e) => `${e.time} ${e.verb} ${e.namespace}/${e.name} ${e.code}`), [])
        assert.isTrue(audit.some((e) => writerOf(e) === other.identity && Date.parse(e.time) >= editedAt))
      }).pipe(Effect.scoped),
    120_000
  )
})

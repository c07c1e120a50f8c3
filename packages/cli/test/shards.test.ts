/**
 * Three replicas of `effect-informers replicate --sharded`, real processes against one embedded API server
 * with short leases: the sources are split across them, each copy is written by one replica at a time, and
 * a killed replica's sources are taken over by the others.
 */
import * as ApiServer from "@effect-informers/testkit/ApiServer"
import { assert, describe, it } from "@effect/vitest"
import * as Resource from "effect-informers/Resource"
import * as Effect from "effect/Effect"
import * as Replicate from "../src/Replicate.js"
import type { Replica } from "./fixtures.js"
import { eventually, replica } from "./fixtures.js"

// short leases, yet with room for a busy machine: a view lasts (6 - 3) / 2 = 1.5 s, refreshed every 0.4 s
const timing = ["--lease-duration", "6s", "--renew-deadline", "3s", "--retry-period", "400ms"]
const sources = Array.from({ length: 8 }, (_, i) => `src-${i}`)
const targets = ["t1", "t2"]

describe("replicate --sharded: three replicas", () => {
  it.live(
    "the work is split, each copy written by one replica at a time, a killed replica's sources taken over",
    () =>
      Effect.gen(function*() {
        const audit: Array<ApiServer.AuditEvent> = []
        const server = yield* ApiServer.make({ auditLog: (event) => void audit.push(event) })
        for (const ns of [...sources, ...targets]) {
          yield* server.objects.create(Resource.namespaces, {
            metadata: { name: ns, ...(targets.includes(ns) ? { labels: { [Replicate.targetLabel]: "true" } } : {}) }
          })
        }
        const children: Array<Replica> = []
        for (const identity of ["s1", "s2", "s3"]) {
          children.push(yield* replica(server.url, identity, ["--sharded", ...timing]))
        }
        const copyOf = (source: string, target: string) =>
          Effect.map(
            Effect.option(server.objects.get(Resource.configMaps, { namespace: target, name: `cfg-${source}` })),
            (cm) => cm._tag === "Some" ? cm.value.data?.["v"] : undefined
          )
        const write = (v: string) =>
          Effect.forEach(sources, (ns) =>
            Effect.gen(function*() {
              const existing = yield* Effect.option(
                server.objects.get(Resource.configMaps, { namespace: ns, name: `cfg-${ns}` })
              )
              if (existing._tag === "None") {
                yield* server.objects.create(Resource.configMaps, {
                  metadata: { namespace: ns, name: `cfg-${ns}`, labels: { [Replicate.sourceLabel]: "true" } },
                  data: { v }
                })
              } else yield* server.objects.update(Resource.configMaps, { ...existing.value, data: { v } })
            }))
        const converged = (v: string) =>
          eventually(
            Effect.map(
              Effect.forEach(sources.flatMap((s) => targets.map((t) => [s, t] as const)), ([s, t]) => copyOf(s, t)),
              (values) => values.every((x) => x === v) ? true : undefined
            ),
            { what: `every copy at ${v}`, timeout: 60_000, interval: 25 }
          )

        yield* write("1")
        yield* converged("1")
        const identityOf = (e: ApiServer.AuditEvent) => /\((s\d)\)/.exec(e.userAgent ?? "")?.[1]
        const copyWrites = () => audit.filter((e) => e.resource === "configmaps" && identityOf(e) !== undefined)
        const writers = new Set(copyWrites().map(identityOf))
        assert.isAtLeast(writers.size, 2, `the work is split: writers ${[...writers].join(",")}`)

        // kill -9 one replica that wrote: the others take its sources over
        const victim = children.find((c) => writers.has(c.identity))!
        victim.child.kill("SIGKILL")
        yield* Effect.promise(() => victim.exited)
        const killedAt = Date.now()
        yield* write("2")
        yield* converged("2")
        const after = copyWrites().filter((e) => Date.parse(e.time) >= killedAt)
        assert.isFalse(after.some((e) => identityOf(e) === victim.identity), "nothing from the killed replica")

        // each copy was written by one replica at a time: per object, its writers form runs, never A, B, A
        const byObject = new Map<string, Array<string>>()
        for (const e of copyWrites().sort((x, y) => Date.parse(x.time) - Date.parse(y.time))) {
          const key = `${e.namespace}/${e.name}`
          const list = byObject.get(key) ?? []
          list.push(identityOf(e)!)
          byObject.set(key, list)
        }
        for (const [key, list] of byObject) {
          const runs = list.filter((w, i) => i === 0 || list[i - 1] !== w)
          assert.strictEqual(new Set(runs).size, runs.length, `${key} written by ${list.join(",")}`)
        }
      }).pipe(Effect.scoped),
    120_000
  )
})

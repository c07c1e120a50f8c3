/**
 * Two replicas of examples/team-info/main.ts, real processes against the test kit's API server (through a
 * kubeconfig, as against a cluster) with 2 s leases: one leads and reconciles; killed with SIGKILL (no Lease
 * released), the other takes over after the lease expires and converges on what changed meanwhile.
 */
import * as ApiServer from "@effect-informers/testkit/ApiServer"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import { Resource } from "effect-informers"
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { eventually } from "../../test/fixtures/eventually.js"

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..")

const kubeconfigFor = (server: string) =>
  Effect.acquireRelease(
    Effect.sync(() => {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), "team-info-"))
      const file = path.join(dir, "kubeconfig")
      fs.writeFileSync(
        file,
        [
          "apiVersion: v1",
          "kind: Config",
          `clusters: [{ name: test, cluster: { server: "${server}" } }]`,
          "users: [{ name: test, user: {} }]",
          "contexts: [{ name: test, context: { cluster: test, user: test } }]",
          "current-context: test",
          ""
        ].join("\n")
      )
      return { dir, file }
    }),
    ({ dir }) => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true }))
  )

/** One replica: `main.ts <identity>`; the test's scope ends it (SIGTERM) if it still runs. */
const replica = (identity: string, kubeconfig: string) =>
  Effect.acquireRelease(
    Effect.sync(() => {
      const child = spawn(process.execPath, ["--import", "tsx", "examples/team-info/main.ts", identity], {
        cwd: root,
        stdio: ["ignore", "ignore", "pipe"],
        env: { ...process.env, KUBECONFIG: kubeconfig, LEASE_DURATION: "2" }
      })
      let stderr = ""
      child.stderr!.on("data", (chunk) => (stderr += String(chunk)))
      const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()))
      return { identity, child, exited, stderr: () => stderr }
    }),
    (r) =>
      Effect.promise(() => {
        if (r.child.exitCode === null && r.child.signalCode === null) r.child.kill("SIGTERM")
        return r.exited
      })
  )

describe("team-info: two replicas", () => {
  it.live(
    "the leader does the work; killed, the other takes over and converges",
    () =>
      Effect.gen(function*() {
        const server = yield* ApiServer.make()
        const { file } = yield* kubeconfigFor(server.url)
        const replicas = [yield* replica("a", file), yield* replica("b", file)]
        const teamOf = (namespace: string) =>
          Effect.map(
            Effect.option(server.objects.get(Resource.configMaps, { namespace, name: "team-info" })),
            Option.map((cm) => cm.data?.["team"])
          )
        const holder = Effect.map(
          Effect.option(server.objects.get(Resource.leases, { namespace: "default", name: "team-info" })),
          (lease) => Option.getOrUndefined(lease)?.spec?.holderIdentity ?? undefined
        )
        const until = <A>(what: string, check: Effect.Effect<A | undefined>) =>
          eventually(check, {
            what,
            timeout: 60_000,
            interval: 25,
            giveUpIf: () => {
              const exited = replicas.find((r) => r.child.exitCode !== null)
              return exited === undefined ? undefined : `${exited.identity} exited: ${exited.stderr()}`
            }
          })

        yield* server.objects.create(Resource.namespaces, {
          metadata: { name: "payments", labels: { team: "payments" } }
        })
        const leader = yield* until("a leader", holder)
        yield* until("team-info in payments", Effect.map(teamOf("payments"), Option.getOrUndefined))
        assert.deepStrictEqual(yield* teamOf("payments"), Option.some("payments"))

        // the leader is killed: no Lease released; meanwhile a new team and a changed one
        const killed = replicas.find((r) => r.identity === leader)!
        killed.child.kill("SIGKILL")
        yield* Effect.promise(() => killed.exited)
        yield* server.objects.create(Resource.namespaces, { metadata: { name: "search", labels: { team: "search" } } })
        const payments = yield* server.objects.get(Resource.namespaces, { name: "payments" })
        yield* server.objects.update(Resource.namespaces, {
          ...payments,
          metadata: { ...payments.metadata, labels: { team: "billing" } }
        })

        const other = replicas.find((r) => r !== killed)!
        const survivor =
          () => (other.child.exitCode === null ? undefined : `${other.identity} exited: ${other.stderr()}`)
        const next = yield* eventually(Effect.map(holder, (h) => (h === other.identity ? h : undefined)), {
          what: "the other replica leads",
          timeout: 60_000,
          interval: 25,
          giveUpIf: survivor
        })
        assert.strictEqual(next, other.identity)
        yield* eventually(
          Effect.map(
            Effect.all([teamOf("search"), teamOf("payments")]),
            ([search, payments]) =>
              Option.getOrUndefined(search) === "search" && Option.getOrUndefined(payments) === "billing"
                ? true
                : undefined
          ),
          { what: "converged after the takeover", timeout: 60_000, interval: 25, giveUpIf: survivor }
        )
      }).pipe(Effect.scoped),
    120_000
  )
})

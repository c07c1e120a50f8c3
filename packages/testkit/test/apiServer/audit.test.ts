/**
 * ApiServer: the audit log (`auditLog`), to a function and to a file.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Scope from "effect/Scope"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as ApiServer from "../../src/ApiServer.js"
import { eventually } from "../fixtures.js"
import { call, merge, send, start } from "./fixtures.js"

const tempDir = Effect.acquireRelease(
  Effect.sync(() => fs.mkdtempSync(path.join(os.tmpdir(), "effect-informers-audit-"))),
  (dir) => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true }))
)

describe("ApiServer audit log", () => {
  it.live("one record per mutating request, with verb, resource, code, user and user agent; no body", () =>
    Effect.gen(function*() {
      const records: Array<ApiServer.AuditEvent> = []
      const server = yield* start({
        auditLog: (event) => records.push(event),
        garbageCollection: { delay: "10 millis" }
      })
      const core = `${server.url}/api/v1/namespaces/default`
      const headers = { "content-type": "application/json", "user-agent": "test/1.0", "impersonate-user": "jane" }
      const secret = yield* call(`${core}/secrets`, {
        method: "POST",
        headers: { ...headers, authorization: "Bearer hunter2-token" },
        body: JSON.stringify({ metadata: { name: "s" }, stringData: { password: "hunter2-password" } })
      })
      assert.strictEqual(secret.status, 201, secret.text)
      yield* send(`${core}/pods`, "POST", { metadata: { generateName: "web-" }, spec: {} })
      const duplicate = yield* send(`${core}/secrets`, "POST", { metadata: { name: "s" } })
      assert.strictEqual(duplicate.status, 409)
      const cm = yield* send(`${core}/configmaps`, "POST", { metadata: { name: "c" } })
      yield* send(`${core}/configmaps/c`, "PUT", cm.json)
      yield* send(`${core}/configmaps/c`, "PATCH", { data: { a: "b" } }, merge)
      const podName = records[1].name!
      yield* send(`${core}/pods/${podName}/status`, "PATCH", { status: { phase: "Running" } }, merge)
      // reads are not recorded
      yield* call(`${core}/configmaps/c`)
      yield* call(`${core}/configmaps`)
      yield* call(`${core}/configmaps/c`, { method: "DELETE" })
      yield* call(`${core}/pods`, { method: "DELETE" })
      // a controller's write: the garbage collector deletes a dependent of the deleted ConfigMap
      const owner = yield* send(`${core}/configmaps`, "POST", { metadata: { name: "owner" } })
      yield* send(`${core}/configmaps`, "POST", {
        metadata: {
          name: "dependent",
          ownerReferences: [{ apiVersion: "v1", kind: "ConfigMap", name: "owner", uid: owner.json.metadata.uid }]
        }
      })
      yield* call(`${core}/configmaps/owner`, { method: "DELETE" })
      yield* eventually(
        () => records.some((r) => r.user?.includes("garbage") === true),
        "the garbage collector's delete"
      )

      const summary = records.map((r) =>
        [r.verb, r.resource, r.subresource ?? "", r.namespace ?? "", r.name ?? "", r.code].join(" ")
      )
      assert.deepStrictEqual(summary, [
        "create secrets  default s 201",
        `create pods  default ${podName} 201`,
        "create secrets  default s 409",
        "create configmaps  default c 201",
        "update configmaps  default c 200",
        "patch configmaps  default c 200",
        `patch pods status default ${podName} 200`,
        "delete configmaps  default c 200",
        "deletecollection pods  default  200",
        "create configmaps  default owner 201",
        "create configmaps  default dependent 201",
        "delete configmaps  default owner 200",
        "delete configmaps  default dependent 200"
      ])
      assert.match(podName, /^web-[a-z0-9]{5}$/)
      const first = records[0]
      assert.strictEqual(first.user, "jane")
      assert.strictEqual(first.userAgent, "test/1.0")
      assert.strictEqual(first.group, "")
      assert.strictEqual(first.version, "v1")
      assert.match(first.time, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)
      assert.isUndefined(records[3].user)
      const collected = records[records.length - 1]
      assert.strictEqual(collected.user, "system:serviceaccount:kube-system:generic-garbage-collector")
      const text = JSON.stringify(records)
      assert.notInclude(text, "hunter2")
      assert.notInclude(text, "Bearer")
    }))

  it.live("to a file: JSON lines written within 100 ms and flushed when the scope closes", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const file = path.join(dir, "audit.log")
      const scope = yield* Scope.make()
      const server = yield* start({ auditLog: file }).pipe(Scope.provide(scope))
      const core = `${server.url}/api/v1/namespaces/default`
      yield* send(`${core}/configmaps`, "POST", { metadata: { name: "a" } })
      yield* eventually(() => fs.readFileSync(file, "utf8").includes("\n"), { what: "the first line", timeout: 2000 })
      for (let i = 0; i < 20; i++) yield* send(`${core}/configmaps`, "POST", { metadata: { name: `b${i}` } })
      yield* Scope.close(scope, Exit.void)
      const lines = fs.readFileSync(file, "utf8").split("\n").filter((line) => line !== "")
      assert.lengthOf(lines, 21)
      const records = lines.map((line) => JSON.parse(line) as ApiServer.AuditEvent)
      assert.deepStrictEqual(records.map((r) => r.name), ["a", ...Array.from({ length: 20 }, (_, i) => `b${i}`)])
      assert.isTrue(records.every((r) => r.verb === "create" && r.code === 201 && r.resource === "configmaps"))
      // appended to, not replaced
      const again = yield* start({ auditLog: file })
      yield* send(`${again.url}/api/v1/namespaces/default/configmaps`, "POST", { metadata: { name: "c" } })
      yield* eventually(() => fs.readFileSync(file, "utf8").split("\n").length === 23, {
        what: "the appended line",
        timeout: 2000
      })
    }))

  it.live("a file that cannot be opened fails the server's start with AuditLogError", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const error = yield* Effect.flip(ApiServer.make({ auditLog: path.join(dir, "missing", "audit.log") }))
      assert.strictEqual(error._tag, "AuditLogError")
      assert.include(error.message, "cannot open the audit log")
    }))
})

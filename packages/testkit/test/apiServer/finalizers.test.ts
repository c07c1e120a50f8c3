/**
 * ApiServer: deletions with finalizers and delete preconditions (reference §5.1), over HTTP.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { eventually } from "../fixtures.js"
import { assertStatus, call, events, merge, openWatch, send, sleep, start } from "./fixtures.js"

describe("ApiServer finalizers", () => {
  it.live("a delete with finalizers sets deletionTimestamp; removing the last one (PUT) deletes the object", () =>
    Effect.gen(function*() {
      const server = yield* start()
      const base = `${server.url}/api/v1/namespaces/default/configmaps`
      const created = yield* send(base, "POST", {
        metadata: { name: "c", finalizers: ["example.com/a", "example.com/b"] },
        data: { k: "v" }
      })
      const watch = yield* openWatch(`${base}?watch=true&resourceVersion=${created.json.metadata.resourceVersion}`)
      const deleting = yield* call(`${base}/c`, { method: "DELETE" })
      assert.strictEqual(deleting.status, 200, deleting.text)
      assert.match(deleting.json.metadata.deletionTimestamp, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/)
      assert.strictEqual(deleting.json.metadata.deletionGracePeriodSeconds, 0)
      assert.strictEqual((yield* call(`${base}/c`)).status, 200)

      // an update can neither remove nor change the deletion timestamp
      const one = yield* send(`${base}/c`, "PUT", {
        ...deleting.json,
        metadata: {
          ...deleting.json.metadata,
          finalizers: ["example.com/b"],
          deletionTimestamp: undefined,
          deletionGracePeriodSeconds: undefined
        }
      })
      assert.strictEqual(one.status, 200, one.text)
      assert.deepStrictEqual(one.json.metadata.finalizers, ["example.com/b"])
      assert.strictEqual(one.json.metadata.deletionTimestamp, deleting.json.metadata.deletionTimestamp)
      assert.strictEqual(one.json.metadata.deletionGracePeriodSeconds, 0)

      const last = yield* send(`${base}/c`, "PUT", { ...one.json, metadata: { ...one.json.metadata, finalizers: [] } })
      assert.strictEqual(last.status, 200, last.text)
      assertStatus(yield* call(`${base}/c`), 404, "NotFound")
      yield* eventually(() => watch.lines.length >= 3, "three events")
      yield* sleep(50)
      assert.deepStrictEqual(events(watch).map((e) => e.type), ["MODIFIED", "MODIFIED", "DELETED"])
      assert.strictEqual(events(watch)[2].object.metadata.resourceVersion, last.json.metadata.resourceVersion)
    }))

  it.live("removing the last finalizer by a merge or JSON patch deletes the object", () =>
    Effect.gen(function*() {
      const server = yield* start()
      const base = `${server.url}/api/v1/namespaces/default/configmaps`
      for (const name of ["merge", "json"]) {
        yield* send(base, "POST", { metadata: { name, finalizers: ["example.com/a"] } })
        assert.strictEqual((yield* call(`${base}/${name}`, { method: "DELETE" })).status, 200)
      }
      const merged = yield* send(`${base}/merge`, "PATCH", { metadata: { finalizers: null } }, merge)
      assert.strictEqual(merged.status, 200, merged.text)
      assertStatus(yield* call(`${base}/merge`), 404, "NotFound")
      const jsonPatched = yield* send(
        `${base}/json`,
        "PATCH",
        [{ op: "remove", path: "/metadata/finalizers/0" }],
        "application/json-patch+json"
      )
      assert.strictEqual(jsonPatched.status, 200, jsonPatched.text)
      assertStatus(yield* call(`${base}/json`), 404, "NotFound")
    }))

  it.live("no finalizer can be added once deletionTimestamp is set (422, as kube-apiserver)", () =>
    Effect.gen(function*() {
      const server = yield* start()
      const base = `${server.url}/api/v1/namespaces/default/configmaps`
      yield* send(base, "POST", { metadata: { name: "c", finalizers: ["example.com/a"] } })
      const deleting = yield* call(`${base}/c`, { method: "DELETE" })
      const added = yield* send(`${base}/c`, "PATCH", {
        metadata: { finalizers: ["example.com/a", "example.com/z", "example.com/b"] }
      }, merge)
      assertStatus(added, 422, "Invalid")
      assert.strictEqual(
        added.json.message,
        `ConfigMap "c" is invalid: metadata.finalizers: Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers []string{"example.com/b", "example.com/z"}`
      )
      assert.deepStrictEqual(added.json.details.causes, [{
        reason: "FieldValueForbidden",
        message:
          `Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers []string{"example.com/b", "example.com/z"}`,
        field: "metadata.finalizers"
      }])
      assert.strictEqual(added.json.details.name, "c")
      assert.strictEqual(added.json.details.kind, "ConfigMap")
      const put = yield* send(`${base}/c`, "PUT", {
        ...deleting.json,
        metadata: { ...deleting.json.metadata, finalizers: ["example.com/x"] }
      })
      assertStatus(put, 422, "Invalid")
      // before the deletion, any finalizer can be added
      yield* send(base, "POST", { metadata: { name: "d" } })
      const before = yield* send(`${base}/d`, "PATCH", { metadata: { finalizers: ["example.com/x"] } }, merge)
      assert.strictEqual(before.status, 200, before.text)
    }))

  it.live("delete preconditions: uid and resourceVersion mismatches are 409 Conflict", () =>
    Effect.gen(function*() {
      const server = yield* start()
      const base = `${server.url}/api/v1/namespaces/default/configmaps`
      const created = yield* send(base, "POST", { metadata: { name: "c" } })
      const wrongUid = yield* send(`${base}/c`, "DELETE", { preconditions: { uid: "nope" } })
      assertStatus(wrongUid, 409, "Conflict")
      assert.match(wrongUid.json.message, /Precondition failed: UID in precondition: nope/)
      const wrongRv = yield* send(`${base}/c`, "DELETE", { preconditions: { resourceVersion: "999" } })
      assertStatus(wrongRv, 409, "Conflict")
      const ok = yield* send(`${base}/c`, "DELETE", {
        kind: "DeleteOptions",
        apiVersion: "v1",
        preconditions: { uid: created.json.metadata.uid, resourceVersion: created.json.metadata.resourceVersion }
      })
      assert.strictEqual(ok.status, 200, ok.text)
      assertStatus(yield* call(`${base}/c`, { method: "DELETE" }), 404, "NotFound")
    }))
})

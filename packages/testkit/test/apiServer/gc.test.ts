/**
 * ApiServer: garbage collection by owner references (propagation policies Background, Foreground and
 * Orphan) and namespace deletion, over HTTP.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { eventually } from "../fixtures.js"
import type { Reply } from "./fixtures.js"
import { assertStatus, call, events, merge, openWatch, send, sleep, start } from "./fixtures.js"

const gc = { garbageCollection: { delay: "10 millis" } } as const

const gone = (url: string) => Effect.map(call(url), (reply) => reply.status === 404)

interface Owner {
  readonly apiVersion: string
  readonly kind: string
  readonly name: string
  readonly uid: string
  readonly blockOwnerDeletion?: boolean
  readonly controller?: boolean
}

const ownerOf = (reply: Reply, extra: Partial<Owner> = {}): Owner => ({
  apiVersion: reply.json.apiVersion,
  kind: reply.json.kind,
  name: reply.json.metadata.name,
  uid: reply.json.metadata.uid,
  ...extra
})

const configMap = (name: string, owners: ReadonlyArray<Owner>, finalizers?: ReadonlyArray<string>) => ({
  metadata: { name, ownerReferences: owners, ...(finalizers === undefined ? {} : { finalizers }) },
  data: { a: "b" }
})

describe("ApiServer garbage collection", () => {
  it.live("Background (the default): the owner goes now, its dependents soon after, recursively", () =>
    Effect.gen(function*() {
      const server = yield* start(gc)
      const apps = `${server.url}/apis/apps/v1/namespaces/default`
      const core = `${server.url}/api/v1/namespaces/default`
      const deployment = yield* send(`${apps}/deployments`, "POST", { metadata: { name: "web" }, spec: {} })
      const rs = yield* send(`${apps}/replicasets`, "POST", {
        metadata: { name: "web-1", ownerReferences: [ownerOf(deployment, { controller: true })] },
        spec: {}
      })
      const pod = yield* send(`${core}/pods`, "POST", {
        metadata: { name: "web-1-a", ownerReferences: [ownerOf(rs, { controller: true })] },
        spec: {}
      })
      assert.strictEqual(pod.status, 201, pod.text)
      const other = yield* send(`${core}/configmaps`, "POST", { metadata: { name: "other" } })
      // a dependent with another owner that stays loses only its reference
      const shared = yield* send(`${core}/configmaps`, "POST", configMap("shared", [ownerOf(rs), ownerOf(other)]))
      // a dependent with a finalizer of its own is only marked
      yield* send(`${core}/configmaps`, "POST", configMap("held", [ownerOf(rs)], ["example.com/hold"]))
      yield* sleep(50)
      // nothing is garbage yet
      assert.strictEqual((yield* call(`${core}/pods/web-1-a`)).status, 200)

      const deleted = yield* call(`${apps}/deployments/web`, { method: "DELETE" })
      assert.strictEqual(deleted.status, 200, deleted.text)
      assertStatus(yield* call(`${apps}/deployments/web`), 404, "NotFound")
      yield* eventually(gone(`${apps}/replicasets/web-1`), "the ReplicaSet collected")
      yield* eventually(gone(`${core}/pods/web-1-a`), "the pod collected")
      yield* eventually(
        Effect.map(call(`${core}/configmaps/shared`), (r) => r.json.metadata.ownerReferences?.length === 1),
        "the shared ConfigMap's reference removed"
      )
      const kept = yield* call(`${core}/configmaps/shared`)
      assert.deepStrictEqual(kept.json.metadata.ownerReferences, [ownerOf(other)])
      assert.isAbove(Number(kept.json.metadata.resourceVersion), Number(shared.json.metadata.resourceVersion))
      yield* eventually(
        Effect.map(call(`${core}/configmaps/held`), (r) => r.json.metadata.deletionTimestamp !== undefined),
        "the held ConfigMap marked"
      )
      yield* sleep(50)
      assert.strictEqual((yield* call(`${core}/configmaps/held`)).status, 200)
      yield* send(`${core}/configmaps/held`, "PATCH", { metadata: { finalizers: null } }, merge)
      assertStatus(yield* call(`${core}/configmaps/held`), 404, "NotFound")
    }))

  it.live("Foreground: the owner waits, with foregroundDeletion, until its blocking dependents are gone", () =>
    Effect.gen(function*() {
      const server = yield* start(gc)
      const apps = `${server.url}/apis/apps/v1/namespaces/default`
      const core = `${server.url}/api/v1/namespaces/default`
      const rs = yield* send(`${apps}/replicasets`, "POST", { metadata: { name: "web-1" }, spec: {} })
      yield* send(`${core}/pods`, "POST", {
        metadata: {
          name: "a",
          ownerReferences: [ownerOf(rs, { blockOwnerDeletion: true })],
          finalizers: ["example.com/hold"]
        },
        spec: {}
      })
      yield* send(`${core}/pods`, "POST", {
        metadata: { name: "b", ownerReferences: [ownerOf(rs, { blockOwnerDeletion: true })] },
        spec: {}
      })
      const watch = yield* openWatch(
        `${server.url}/api/v1/pods?watch=true&resourceVersion=${yield* server.resourceVersion}`
      )
      const rsWatch = yield* openWatch(
        `${server.url}/apis/apps/v1/replicasets?watch=true&resourceVersion=${yield* server.resourceVersion}`
      )
      const deleting = yield* send(`${apps}/replicasets/web-1`, "DELETE", {
        kind: "DeleteOptions",
        apiVersion: "v1",
        propagationPolicy: "Foreground"
      })
      assert.strictEqual(deleting.status, 200, deleting.text)
      assert.deepStrictEqual(deleting.json.metadata.finalizers, ["foregroundDeletion"])
      assert.isString(deleting.json.metadata.deletionTimestamp)
      yield* eventually(gone(`${core}/pods/b`), "pod b collected")
      yield* eventually(
        Effect.map(call(`${core}/pods/a`), (r) => r.json.metadata.deletionTimestamp !== undefined),
        "pod a marked"
      )
      // a blocks its owner while it exists
      yield* sleep(60)
      assert.strictEqual((yield* call(`${apps}/replicasets/web-1`)).status, 200)
      yield* send(`${core}/pods/a`, "PATCH", { metadata: { finalizers: null } }, merge)
      yield* eventually(gone(`${apps}/replicasets/web-1`), "the owner deleted")
      // the dependents' deletions came before the owner's
      yield* sleep(30)
      const podDeleted = events(watch).filter((e) => e.type === "DELETED").map((e) =>
        Number(e.object.metadata.resourceVersion)
      )
      const ownerDeleted = events(rsWatch).filter((e) => e.type === "DELETED")
      assert.lengthOf(podDeleted, 2)
      assert.lengthOf(ownerDeleted, 1)
      assert.isBelow(Math.max(...podDeleted), Number(ownerDeleted[0].object.metadata.resourceVersion))
      assert.deepStrictEqual(ownerDeleted[0].object.metadata.finalizers ?? [], [])
    }))

  it.live("Orphan: the dependents lose their reference and stay; batch/v1 Jobs orphan by default", () =>
    Effect.gen(function*() {
      const server = yield* start(gc)
      const apps = `${server.url}/apis/apps/v1/namespaces/default`
      const core = `${server.url}/api/v1/namespaces/default`
      const rs = yield* send(`${apps}/replicasets`, "POST", { metadata: { name: "web-1" }, spec: {} })
      yield* send(`${core}/pods`, "POST", { metadata: { name: "a", ownerReferences: [ownerOf(rs)] }, spec: {} })
      // the query's policy, when the body is empty (as kubectl --cascade=orphan sends it in the body)
      const orphaning = yield* call(`${apps}/replicasets/web-1?propagationPolicy=Orphan`, { method: "DELETE" })
      assert.strictEqual(orphaning.status, 200, orphaning.text)
      assert.deepStrictEqual(orphaning.json.metadata.finalizers, ["orphan"])
      yield* eventually(gone(`${apps}/replicasets/web-1`), "the owner deleted")
      const pod = yield* call(`${core}/pods/a`)
      assert.strictEqual(pod.status, 200)
      assert.isUndefined(pod.json.metadata.ownerReferences)

      const jobs = `${server.url}/apis/batch/v1/namespaces/default/jobs`
      const job = yield* send(jobs, "POST", { metadata: { name: "j" }, spec: {} })
      yield* send(`${core}/pods`, "POST", { metadata: { name: "j-1", ownerReferences: [ownerOf(job)] }, spec: {} })
      const jobDeleted = yield* call(`${jobs}/j`, { method: "DELETE" })
      assert.deepStrictEqual(jobDeleted.json.metadata.finalizers, ["orphan"])
      yield* eventually(gone(`${jobs}/j`), "the job deleted")
      assert.isUndefined((yield* call(`${core}/pods/j-1`)).json.metadata.ownerReferences)
      // Background on request
      const job2 = yield* send(jobs, "POST", { metadata: { name: "k" }, spec: {} })
      yield* send(`${core}/pods`, "POST", { metadata: { name: "k-1", ownerReferences: [ownerOf(job2)] }, spec: {} })
      const background = yield* send(`${jobs}/k`, "DELETE", { propagationPolicy: "Background" })
      assert.strictEqual(background.status, 200)
      assertStatus(yield* call(`${jobs}/k`), 404, "NotFound")
      yield* eventually(gone(`${core}/pods/k-1`), "the job's pod collected")
    }))

  it.live("a dependent whose owner never existed is collected; an unserved owner kind keeps it", () =>
    Effect.gen(function*() {
      const server = yield* start({ ...gc, namespaces: ["other"] })
      const core = `${server.url}/api/v1/namespaces/default`
      const missing = {
        apiVersion: "apps/v1",
        kind: "ReplicaSet",
        name: "ghost",
        uid: "00000000-0000-0000-0000-000000000001"
      }
      const created = yield* send(`${core}/configmaps`, "POST", configMap("orphaned", [missing]))
      assert.strictEqual(created.status, 201, created.text)
      // another object of the owner's name but another uid is not the owner
      yield* send(`${server.url}/apis/apps/v1/namespaces/default/replicasets`, "POST", { metadata: { name: "ghost" } })
      yield* eventually(gone(`${core}/configmaps/orphaned`), "the dependent collected")
      const unserved = {
        apiVersion: "example.com/v1",
        kind: "Thing",
        name: "t",
        uid: "00000000-0000-0000-0000-000000000002"
      }
      yield* send(`${core}/configmaps`, "POST", configMap("unresolvable", [unserved]))
      // a cluster-scoped owner: dependents in any namespace
      const node = yield* send(`${server.url}/api/v1/nodes`, "POST", { metadata: { name: "n1" } })
      yield* send(`${server.url}/api/v1/namespaces/other/configmaps`, "POST", configMap("on-node", [ownerOf(node)]))
      yield* sleep(60)
      assert.strictEqual((yield* call(`${core}/configmaps/unresolvable`)).status, 200)
      assert.strictEqual((yield* call(`${server.url}/api/v1/namespaces/other/configmaps/on-node`)).status, 200)
      yield* call(`${server.url}/api/v1/nodes/n1`, { method: "DELETE" })
      yield* eventually(
        gone(`${server.url}/api/v1/namespaces/other/configmaps/on-node`),
        "the node's dependent collected"
      )
    }))

  it.live("invalid DeleteOptions and owner references are 422 Invalid", () =>
    Effect.gen(function*() {
      const server = yield* start(gc)
      const core = `${server.url}/api/v1/namespaces/default`
      yield* send(`${core}/configmaps`, "POST", { metadata: { name: "c" } })
      const policy = yield* send(`${core}/configmaps/c`, "DELETE", { propagationPolicy: "Sideways" })
      assertStatus(policy, 422, "Invalid")
      assert.strictEqual(
        policy.json.message,
        `DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Unsupported value: "Sideways": supported values: "Foreground", "Background", "Orphan", "nil"`
      )
      const both = yield* send(`${core}/configmaps/c`, "DELETE", {
        propagationPolicy: "Orphan",
        orphanDependents: true
      })
      assertStatus(both, 422, "Invalid")
      const noUid = yield* send(
        `${core}/configmaps`,
        "POST",
        configMap("x", [{ apiVersion: "v1", kind: "Node", name: "n", uid: "" }])
      )
      assertStatus(noUid, 422, "Invalid")
      assert.strictEqual(noUid.json.details.causes[0].field, "metadata.ownerReferences.uid")
      const twoControllers = yield* send(
        `${core}/configmaps`,
        "POST",
        configMap("y", [
          { apiVersion: "v1", kind: "Node", name: "a", uid: "1", controller: true },
          { apiVersion: "v1", kind: "Node", name: "b", uid: "2", controller: true }
        ])
      )
      assertStatus(twoControllers, 422, "Invalid")
      assert.match(twoControllers.json.message, /Only one reference can have Controller set to true/)
    }))

  it.live("deleting a namespace: Terminating, its content deleted, no new content, then gone", () =>
    Effect.gen(function*() {
      const server = yield* start(gc)
      const namespaces = `${server.url}/api/v1/namespaces`
      const created = yield* send(namespaces, "POST", { metadata: { name: "team" } })
      assert.deepStrictEqual(created.json.spec, { finalizers: ["kubernetes"] })
      assert.deepStrictEqual(created.json.status, { phase: "Active" })
      const core = `${namespaces}/team`
      yield* send(`${core}/pods`, "POST", { metadata: { name: "p" }, spec: {} })
      yield* send(`${core}/configmaps`, "POST", { metadata: { name: "held", finalizers: ["example.com/hold"] } })
      yield* send(`${server.url}/apis/apps/v1/namespaces/team/deployments`, "POST", { metadata: { name: "d" } })
      // another namespace's content stays
      yield* send(`${namespaces}/default/configmaps`, "POST", { metadata: { name: "elsewhere" } })

      const deleting = yield* call(core, { method: "DELETE" })
      assert.strictEqual(deleting.status, 200, deleting.text)
      assert.strictEqual(deleting.json.status.phase, "Terminating")
      assert.isString(deleting.json.metadata.deletionTimestamp)
      const refused = yield* send(`${core}/configmaps`, "POST", { metadata: { name: "late" } })
      assertStatus(refused, 403, "Forbidden")
      assert.strictEqual(
        refused.json.message,
        `configmaps "late" is forbidden: unable to create new content in namespace team because it is being terminated`
      )
      assert.strictEqual(refused.json.details.causes[0].reason, "NamespaceTerminating")
      yield* eventually(gone(`${core}/pods/p`), "the pod deleted")
      yield* eventually(gone(`${server.url}/apis/apps/v1/namespaces/team/deployments/d`), "the deployment deleted")
      // the ConfigMap's finalizer holds the namespace
      yield* sleep(60)
      assert.strictEqual((yield* call(core)).status, 200)
      assert.isString((yield* call(`${core}/configmaps/held`)).json.metadata.deletionTimestamp)
      yield* send(`${core}/configmaps/held`, "PATCH", { metadata: { finalizers: null } }, merge)
      yield* eventually(gone(core), "the namespace deleted")
      assert.strictEqual((yield* call(`${namespaces}/default/configmaps/elsewhere`)).status, 200)
    }))

  it.live("garbageCollection: false leaves dependents alone", () =>
    Effect.gen(function*() {
      const server = yield* start({ garbageCollection: false })
      const core = `${server.url}/api/v1/namespaces/default`
      const owner = yield* send(`${core}/configmaps`, "POST", { metadata: { name: "owner" } })
      yield* send(`${core}/configmaps`, "POST", configMap("dependent", [ownerOf(owner)]))
      yield* call(`${core}/configmaps/owner`, { method: "DELETE" })
      yield* sleep(150)
      assert.strictEqual((yield* call(`${core}/configmaps/dependent`)).status, 200)
    }))
})

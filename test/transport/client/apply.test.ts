/**
 * Server-side apply, the status subresource, delete options and dry runs, against a stub that answers as
 * kube-apiserver does (the embedded ApiServer does not implement them yet), and the requests' wire shape.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Client from "../../../src/Client.js"
import * as Consistency from "../../../src/Consistency.js"
import * as Resource from "../../../src/Resource.js"
import type { StubReply, StubRequest } from "./fixtures.js"
import { configMap, failure, status, TOKEN, withStub } from "./fixtures.js"

/** kube-apiserver's answer to an apply without a fieldManager. */
const fieldManagerRequired: StubReply = {
  code: 422,
  body: status(
    422,
    "Invalid",
    `PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch`,
    {
      group: "meta.k8s.io",
      kind: "PatchOptions",
      causes: [{
        reason: "FieldValueRequired",
        message: "Required value: is required for apply patch",
        field: "fieldManager"
      }]
    }
  )
}

/**
 * A small kube-apiserver for ConfigMaps' `data` under server-side apply: each key is owned by the manager
 * that last applied (or wrote) it; applying another value to a key another manager owns is a conflict
 * (409 with one FieldManagerConflict cause per key) unless `force`; a missing object is created (201).
 */
const ssaServer = () => {
  const objects = new Map<string, { data: Record<string, string>; owners: Record<string, string>; rv: number }>()
  let rv = 10
  const render = (name: string) => {
    const object = objects.get(name)!
    return configMap(name, {
      data: object.data,
      metadata: {
        name,
        namespace: "default",
        resourceVersion: String(object.rv),
        managedFields: [...new Set(Object.values(object.owners))].sort().map((manager) => ({
          manager,
          operation: "Apply",
          apiVersion: "v1",
          fieldsType: "FieldsV1",
          fieldsV1: {
            "f:data": Object.fromEntries(
              Object.entries(object.owners).filter(([, m]) => m === manager).map(([key]) => [`f:${key}`, {}])
            )
          }
        }))
      }
    })
  }
  return (request: StubRequest): StubReply => {
    const match = /^\/api\/v1\/namespaces\/default\/configmaps\/([^/]+)$/.exec(request.url.pathname)
    if (match === null || request.method !== "PATCH") return { code: 404, body: status(404, "NotFound", "not here") }
    const name = match[1]
    if (request.headers["content-type"] !== "application/apply-patch+yaml") {
      return { code: 415, body: status(415, "UnsupportedMediaType", "unsupported patch type") }
    }
    const manager = request.url.searchParams.get("fieldManager") ?? ""
    if (manager === "") return fieldManagerRequired
    const force = request.url.searchParams.get("force") === "true"
    const body = JSON.parse(request.body) as { readonly data?: Record<string, string> }
    const existing = objects.get(name)
    const conflicts = Object.entries(body.data ?? {}).filter(([key, value]) =>
      existing !== undefined && existing.owners[key] !== undefined && existing.owners[key] !== manager &&
      existing.data[key] !== value
    )
    if (conflicts.length > 0 && !force) {
      const owner = existing!.owners[conflicts[0][0]]
      return {
        code: 409,
        body: status(
          409,
          "Conflict",
          `Apply failed with ${conflicts.length} conflict: conflict with "${owner}": .data.${conflicts[0][0]}`,
          {
            causes: conflicts.map(([key]) => ({
              reason: "FieldManagerConflict",
              message: `conflict with "${existing!.owners[key]}"`,
              field: `.data.${key}`
            }))
          }
        )
      }
    }
    const object = existing ?? { data: {}, owners: {}, rv: 0 }
    for (const [key, value] of Object.entries(body.data ?? {})) {
      object.data[key] = value
      object.owners[key] = manager
    }
    // keys this manager owned and no longer applies are removed
    for (const key of Object.keys(object.owners)) {
      if (object.owners[key] === manager && !(key in (body.data ?? {}))) {
        delete object.owners[key]
        delete object.data[key]
      }
    }
    object.rv = ++rv
    objects.set(name, object)
    return { code: existing === undefined ? 201 : 200, body: render(name) }
  }
}

describe("Client.apply (server-side apply)", () => {
  it.live("the request: PATCH, application/apply-patch+yaml, the object as JSON with apiVersion and kind, fieldManager", () =>
    withStub(ssaServer(), (stub, client) =>
      Effect.gen(function*() {
        const applied = yield* client.apply(Resource.configMaps, { metadata: { name: "cm" }, data: { a: "1" } })
        assert.deepStrictEqual(applied.data, { a: "1" })
        const request = stub.requests[0]
        assert.strictEqual(request.method, "PATCH")
        assert.strictEqual(request.url.pathname, "/api/v1/namespaces/default/configmaps/cm")
        assert.strictEqual(request.headers["content-type"], "application/apply-patch+yaml")
        assert.deepStrictEqual([...request.url.searchParams], [["fieldManager", Client.defaultFieldManager]])
        assert.deepStrictEqual(JSON.parse(request.body), {
          apiVersion: "v1",
          kind: "ConfigMap",
          metadata: { name: "cm" },
          data: { a: "1" }
        })
      })))

  it.live("creates a missing object, then updates it; omitting an owned field removes it", () =>
    withStub(ssaServer(), (_, client) =>
      Effect.gen(function*() {
        const first = yield* client.apply(Resource.configMaps, { metadata: { name: "cm" }, data: { a: "1", b: "2" } })
        const second = yield* client.apply(Resource.configMaps, { metadata: { name: "cm" }, data: { a: "1" } })
        assert.deepStrictEqual(first.data, { a: "1", b: "2" })
        assert.deepStrictEqual(second.data, { a: "1" })
      })))

  it.live("the field manager: the call's, else the Client's option", () =>
    withStub(ssaServer(), (stub, client) =>
      Effect.gen(function*() {
        yield* client.apply(Resource.configMaps, { metadata: { name: "cm" }, data: { a: "1" } })
        yield* client.apply(Resource.configMaps, { metadata: { name: "cm" }, data: { a: "1" } }, {
          fieldManager: "other"
        })
        assert.deepStrictEqual(stub.requests.map((r) => r.url.searchParams.get("fieldManager")), [
          "replicator",
          "other"
        ])
      }), { fieldManager: "replicator" }))

  it.live("409 Conflict with the conflicting fields in causes; force takes them", () =>
    withStub(ssaServer(), (stub, client) =>
      Effect.gen(function*() {
        yield* client.apply(Resource.configMaps, { metadata: { name: "cm" }, data: { a: "1", b: "1" } }, {
          fieldManager: "alice"
        })
        const { error, kind } = yield* failure(
          client.apply(Resource.configMaps, { metadata: { name: "cm" }, data: { a: "2", b: "2" } }, {
            fieldManager: "bob"
          })
        )
        assert.strictEqual(kind, "StatusError (Conflict)")
        assert(error._tag === "StatusError")
        assert.deepStrictEqual(error.causes.map((cause) => [cause.reason, cause.field, cause.message]), [
          ["FieldManagerConflict", ".data.a", `conflict with "alice"`],
          ["FieldManagerConflict", ".data.b", `conflict with "alice"`]
        ])
        const forced = yield* client.apply(
          Resource.configMaps,
          { metadata: { name: "cm" }, data: { a: "2", b: "2" } },
          {
            fieldManager: "bob",
            force: true
          }
        )
        assert.deepStrictEqual(forced.data, { a: "2", b: "2" })
        assert.strictEqual(stub.requests[2].url.searchParams.get("force"), "true")
        // the same value is shared ownership, not a conflict
        yield* client.apply(Resource.configMaps, { metadata: { name: "cm" }, data: { a: "2" } }, {
          fieldManager: "carol"
        })
      })))

  it.live("managedFields are never sent (a read object applied back); a resourceVersion is", () =>
    withStub(ssaServer(), (stub, client) =>
      Effect.gen(function*() {
        const applied = yield* client.apply(Resource.configMaps, { metadata: { name: "cm" }, data: { a: "1" } })
        assert.isAbove(applied.metadata?.managedFields?.length ?? 0, 0)
        yield* client.apply(Resource.configMaps, { ...applied, data: { a: "2" } })
        const sent = JSON.parse(stub.requests[1].body) as { readonly metadata: Record<string, unknown> }
        assert.isUndefined(sent.metadata.managedFields)
        assert.strictEqual(sent.metadata.resourceVersion, applied.metadata?.resourceVersion)
      })))

  it.live("an empty fieldManager option falls back to the Client's: apply always sends one", () =>
    withStub(ssaServer(), (stub, client) =>
      Effect.gen(function*() {
        yield* client.apply(Resource.configMaps, { metadata: { name: "cm" } }, { fieldManager: "" })
        assert.strictEqual(stub.requests[0].url.searchParams.get("fieldManager"), Client.defaultFieldManager)
      })))

  it.live("kube-apiserver's 422 for an apply without fieldManager maps to Invalid with its cause", () =>
    withStub(() => fieldManagerRequired, (_, client) =>
      Effect.gen(function*() {
        const { error, kind } = yield* failure(client.apply(Resource.configMaps, { metadata: { name: "cm" } }))
        assert.strictEqual(kind, "StatusError (Invalid)")
        assert(error._tag === "StatusError")
        assert.deepStrictEqual(error.causes.map((c) => c.field), ["fieldManager"])
        assert.strictEqual(error.status.details?.kind, "PatchOptions")
      })))

  it.live("applyStatus: to the status subresource", () =>
    withStub(
      (request) => ({ code: 200, body: configMap("p", { kind: "Pod", status: JSON.parse(request.body).status }) }),
      (stub, client) =>
        Effect.gen(function*() {
          const pod = yield* client.applyStatus(Resource.pods, {
            metadata: { name: "p" },
            status: { phase: "Running" }
          }, {
            force: true
          })
          assert.strictEqual(pod.status?.phase, "Running")
          assert.strictEqual(stub.requests[0].url.pathname, "/api/v1/namespaces/default/pods/p/status")
          assert.strictEqual(stub.requests[0].headers["content-type"], "application/apply-patch+yaml")
          assert.strictEqual(stub.requests[0].url.searchParams.get("force"), "true")
        })
    ))
})

describe("Client: the status subresource, delete options, dry runs and the wire", () => {
  it.live("updateStatus and patchStatus go to .../status; the server keeps only the status", () => {
    const stored = configMap("p", {
      kind: "Pod",
      spec: { nodeName: "n1" },
      metadata: { name: "p", namespace: "default", resourceVersion: "3" }
    })
    return withStub(
      (request) => {
        // kube-apiserver's status strategy: only `status` of the body is kept
        const body = JSON.parse(request.body) as { readonly status?: unknown }
        const status = request.method === "PATCH" ? (body as { status?: unknown }).status : body.status
        return { code: 200, body: { ...stored, status, metadata: { ...stored.metadata, resourceVersion: "4" } } }
      },
      (stub, client) =>
        Effect.gen(function*() {
          const updated = yield* client.updateStatus(Resource.pods, {
            apiVersion: "v1",
            kind: "Pod",
            metadata: { name: "p", resourceVersion: "3" },
            spec: { nodeName: "changed", containers: [] },
            status: { phase: "Running" }
          })
          assert.strictEqual(updated.spec?.nodeName, "n1")
          assert.strictEqual(updated.status?.phase, "Running")
          yield* client.patchStatus(Resource.pods, "p", Client.mergePatch({ status: { phase: "Succeeded" } }))
          assert.deepStrictEqual(
            stub.requests.map((r) => `${r.method} ${r.url.pathname} ${r.headers["content-type"]}`),
            [
              "PUT /api/v1/namespaces/default/pods/p/status application/json",
              "PATCH /api/v1/namespaces/default/pods/p/status application/merge-patch+json"
            ]
          )
        })
    )
  })

  it.live("a resource without a status subresource: NotFound from .../status", () =>
    withStub(
      () => ({ code: 404, body: status(404, "NotFound", "the server could not find the requested resource") }),
      (_, client) =>
        Effect.gen(function*() {
          const { kind } = yield* failure(
            client.patchStatus(Resource.configMaps, "cm", Client.mergePatch({ status: {} }))
          )
          assert.strictEqual(kind, "StatusError (NotFound)")
        })
    ))

  it.live("delete: DeleteOptions in the body (preconditions, propagationPolicy, gracePeriodSeconds, dryRun)", () =>
    withStub(
      () => ({
        code: 202,
        body: configMap("cm", {
          metadata: { name: "cm", namespace: "prod", deletionTimestamp: "2026-01-01T00:00:00Z" }
        })
      }),
      (stub, client) =>
        Effect.gen(function*() {
          const deleted = yield* client.delete(Resource.configMaps, "cm", {
            namespace: "prod",
            preconditions: { uid: "u-1", resourceVersion: "9" },
            propagationPolicy: "Foreground",
            gracePeriodSeconds: 30,
            dryRun: true
          })
          assert(deleted._tag === "Object")
          assert.strictEqual(deleted.object.metadata?.deletionTimestamp, "2026-01-01T00:00:00Z")
          const request = stub.requests[0]
          assert.strictEqual(request.method, "DELETE")
          assert.strictEqual(request.url.pathname, "/api/v1/namespaces/prod/configmaps/cm")
          assert.strictEqual(request.headers["content-type"], "application/json")
          assert.deepStrictEqual(JSON.parse(request.body), {
            kind: "DeleteOptions",
            apiVersion: "v1",
            preconditions: { uid: "u-1", resourceVersion: "9" },
            propagationPolicy: "Foreground",
            gracePeriodSeconds: 30,
            dryRun: ["All"]
          })
        })
    ))

  for (const policy of ["Background", "Orphan"] as const) {
    it.live(`delete with propagationPolicy ${policy}: a Success Status, as kube-apiserver answers for most types`, () =>
      withStub(
        () => ({
          code: 200,
          body: {
            kind: "Status",
            apiVersion: "v1",
            metadata: {},
            status: "Success",
            details: { name: "web", group: "apps", kind: "deployments", uid: "u-2" }
          }
        }),
        (stub, client) =>
          Effect.gen(function*() {
            const deleted = yield* client.delete(Resource.deployments, "web", { propagationPolicy: policy })
            assert(deleted._tag === "Status")
            assert.strictEqual(deleted.status.status, "Success")
            assert.strictEqual(deleted.status.details?.uid, "u-2")
            assert.strictEqual(JSON.parse(stub.requests[0].body).propagationPolicy, policy)
            assert.strictEqual(stub.requests[0].url.pathname, "/apis/apps/v1/namespaces/default/deployments/web")
          })
      ))
  }

  it.live("dryRun=All, fieldManager and fieldValidation on create, update, patch and apply", () =>
    withStub(
      (request) => ({ code: request.method === "POST" ? 201 : 200, body: configMap("cm") }),
      (stub, client) =>
        Effect.gen(function*() {
          const options = { dryRun: true, fieldManager: "me", fieldValidation: "Strict" } as const
          yield* client.create(Resource.configMaps, configMap("cm"), options)
          yield* client.update(Resource.configMaps, configMap("cm"), options)
          yield* client.patch(Resource.configMaps, "cm", Client.mergePatch({}), options)
          yield* client.apply(Resource.configMaps, configMap("cm"), options)
          for (const request of stub.requests) {
            assert.deepStrictEqual([...request.url.searchParams], [
              ["dryRun", "All"],
              ["fieldManager", "me"],
              ["fieldValidation", "Strict"]
            ])
          }
          assert.deepStrictEqual(stub.requests.map((r) => r.method), ["POST", "PUT", "PATCH", "PATCH"])
        })
    ))

  it.live("headers: accept JSON, the user agent (default and configured), the bearer token", () =>
    withStub(() => ({ code: 200, body: configMap("cm") }), (stub, client) =>
      Effect.gen(function*() {
        yield* client.get(Resource.configMaps, "cm")
        const request = stub.requests[0]
        assert.strictEqual(request.headers["user-agent"], "replicate-controller/1.2 (effect-informers)")
        assert.strictEqual(request.headers.accept, "application/json")
        assert.strictEqual(request.headers.authorization, `Bearer ${TOKEN}`)
      }), { userAgent: "replicate-controller/1.2 (effect-informers)" }).pipe(
        Effect.andThen(
          withStub(() => ({ code: 200, body: configMap("cm") }), (stub, client) =>
            Effect.gen(function*() {
              yield* client.get(Resource.configMaps, "cm")
              assert.strictEqual(stub.requests[0].headers["user-agent"], Client.defaultUserAgent)
              assert.match(Client.defaultUserAgent, /^effect-informers\//)
            }))
        )
      ))

  it.live("writes are recorded in the reconcile's Consistency.Writes; dry runs and reads are not", () => {
    let rv = 100
    return withStub(
      (request) => ({
        code: 200,
        body: configMap("cm", {
          ...(request.url.pathname.includes("/deployments/") ? { apiVersion: "apps/v1", kind: "Deployment" } : {}),
          metadata: { name: "cm", namespace: "default", resourceVersion: String(++rv) }
        })
      }),
      (_, client) =>
        Effect.gen(function*() {
          const recorded: Array<string> = []
          const writes = Consistency.Writes.of({
            record: (groupResource, resourceVersion) =>
              Effect.sync(() => recorded.push(`${groupResource}@${resourceVersion}`))
          })
          yield* Effect.provideService(
            Effect.gen(function*() {
              yield* client.get(Resource.configMaps, "cm")
              yield* client.create(Resource.configMaps, configMap("cm"))
              yield* client.create(Resource.configMaps, configMap("cm"), { dryRun: true })
              yield* client.update(Resource.deployments, { metadata: { name: "cm" } })
              yield* client.patch(Resource.configMaps, "cm", Client.mergePatch({}))
              yield* client.apply(Resource.configMaps, configMap("cm"))
              yield* client.delete(Resource.configMaps, "cm")
            }),
            Consistency.Writes,
            writes
          )
          // outside a reconcile: nothing to record in, nothing fails
          yield* client.create(Resource.configMaps, configMap("cm"))
          assert.deepStrictEqual(recorded, [
            "configmaps@102",
            "deployments.apps@104",
            "configmaps@105",
            "configmaps@106",
            "configmaps@107"
          ])
        })
    )
  })
})

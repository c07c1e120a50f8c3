/**
 * The Client checks what it is answered, against hostile stub servers: a write or a read answered with
 * another object (another kind, API group, namespace or name) is a `DecodeError` (`UnexpectedObject`), not
 * the result; `listAll` against a server that never ends its continue chain (a repeated token, endless
 * distinct tokens, more objects than it holds) fails with a typed error after a bounded number of requests.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import type * as ApiError from "../../../src/ApiError.js"
import * as Client from "../../../src/Client.js"
import * as Resource from "../../../src/Resource.js"
import type { TermError } from "../../../src/Term.js"
import type { StubRequest } from "./fixtures.js"
import { configMap, failure, status, TOKEN, withStub } from "./fixtures.js"

/** Every verb that answers with one object, on the ConfigMap "cm" in "default", with what it sends. */
const verbs: ReadonlyArray<
  readonly [string, (client: Client.Client.Service) => Effect.Effect<unknown, ApiError.ApiError | TermError>]
> = [
  ["get", (client) => client.get(Resource.configMaps, "cm")],
  ["create", (client) => client.create(Resource.configMaps, configMap("cm"))],
  ["update", (client) => client.update(Resource.configMaps, configMap("cm"))],
  ["updateStatus", (client) => client.updateStatus(Resource.configMaps, configMap("cm"))],
  ["patch", (client) => client.patch(Resource.configMaps, "cm", Client.mergePatch({ data: { a: "1" } }))],
  ["patchStatus", (client) => client.patchStatus(Resource.configMaps, "cm", Client.jsonPatch([]))],
  ["apply", (client) => client.apply(Resource.configMaps, configMap("cm"))],
  ["applyStatus", (client) => client.applyStatus(Resource.configMaps, configMap("cm"))],
  ["delete", (client) => client.delete(Resource.configMaps, "cm")]
]

/** The prefix of each verb's messages. */
const prefixes: Record<string, string> = {
  get: `get configmaps "cm" in default`,
  create: `create configmaps "cm" in default`,
  update: `update configmaps "cm" in default`,
  updateStatus: `update status of configmaps "cm" in default`,
  patch: `patch configmaps "cm" in default`,
  patchStatus: `patch status of configmaps "cm" in default`,
  apply: `apply configmaps "cm" in default`,
  applyStatus: `apply status of configmaps "cm" in default`,
  delete: `delete configmaps "cm" in default`
}

/** Answers that are not the ConfigMap "cm" in "default", and the end of the message each must give. */
const others: ReadonlyArray<readonly [string, unknown, string]> = [
  [
    "another namespace",
    configMap("cm", { metadata: { name: "cm", namespace: "kube-system" } }),
    `expected namespace "default" in response, got "kube-system"`
  ],
  ["no namespace", configMap("cm", { metadata: { name: "cm" } }), `expected namespace "default" in response, got none`],
  [
    "another name",
    configMap("cm", { metadata: { name: "other", namespace: "default" } }),
    `expected name "cm" in response, got "other"`
  ],
  ["another kind", configMap("cm", { kind: "Secret" }), `expected a ConfigMap in response, got Secret`],
  [
    "another API group",
    configMap("cm", { apiVersion: "example.com/v1" }),
    `expected apiVersion v1 in response, got "example.com/v1"`
  ],
  [
    "an apiVersion that is not a string",
    configMap("cm", { apiVersion: 1 }),
    `expected apiVersion v1 in response, got a number`
  ]
]

const list = (items: ReadonlyArray<unknown>, continueToken?: string) => ({
  kind: "ConfigMapList",
  apiVersion: "v1",
  metadata: { resourceVersion: "7", ...(continueToken === undefined ? {} : { continue: continueToken }) },
  items
})

const items = (page: number, count: number) =>
  Array.from({ length: count }, (_, i) => configMap(`cm-${page}-${i}`, { metadata: { name: `cm-${page}-${i}` } }))

describe("Client: what it is answered", () => {
  for (const [what, body, expected] of others) {
    it.live(`every verb answered with ${what}: DecodeError (UnexpectedObject), not the result`, () =>
      withStub(() => ({ code: 200, body }), (stub, client) =>
        Effect.gen(function*() {
          for (const [verb, run] of verbs) {
            const { error, kind } = yield* failure(run(client))
            assert.strictEqual(kind, "DecodeError (UnexpectedObject)", verb)
            assert.strictEqual(error.message, `${prefixes[verb]}: ${expected}`)
          }
          // each was sent once: the check is on the answer
          assert.strictEqual(stub.requests.length, verbs.length)
        })))
  }

  it.live("every verb answered with the object it asked for: the result (the version is not compared)", () =>
    withStub(
      () => ({ code: 200, body: configMap("cm", { apiVersion: "v2", data: { a: "1" } }) }),
      (_, client) =>
        Effect.gen(function*() {
          for (const [verb, run] of verbs) {
            const result = yield* run(client)
            const object = verb === "delete" ? (result as Client.Deleted<unknown>) : { _tag: "Object", object: result }
            assert(object._tag === "Object", verb)
            assert.deepStrictEqual((object.object as { data?: unknown }).data, { a: "1" }, verb)
          }
        })
    ))

  it.live("an answer without kind or apiVersion is checked by its metadata only", () =>
    withStub(
      () => ({ code: 200, body: { metadata: { name: "cm", namespace: "default" } } }),
      (_, client) =>
        Effect.gen(function*() {
          const got = yield* client.get(Resource.configMaps, "cm")
          assert.strictEqual(got.metadata?.name, "cm")
          const { kind } = yield* failure(client.get(Resource.configMaps, "cm", { namespace: "prod" }))
          assert.strictEqual(kind, "DecodeError (UnexpectedObject)")
        })
    ))

  it.live("the expected namespace is the call's, else the object's: an answer in the other one fails", () =>
    withStub(() => ({ code: 201, body: configMap("cm") }), (_, client) =>
      Effect.gen(function*() {
        const { error } = yield* failure(
          client.create(Resource.configMaps, configMap("cm", { metadata: { name: "cm", namespace: "prod" } }))
        )
        assert.strictEqual(
          error.message,
          `create configmaps "cm" in prod: expected namespace "prod" in response, got "default"`
        )
        const { error: explicit } = yield* failure(
          client.update(Resource.configMaps, configMap("cm"), { namespace: "ns2" })
        )
        assert.strictEqual(
          explicit.message,
          `update configmaps "cm" in ns2: expected namespace "ns2" in response, got "default"`
        )
      })))

  it.live("create with generateName: any name is accepted, the kind and namespace are checked", () => {
    const answers: Array<unknown> = [
      configMap("job-x7k2p"),
      configMap("job-x7k2p", { metadata: { name: "job-x7k2p", namespace: "other" } }),
      configMap("job-x7k2p", { kind: "Secret" })
    ]
    return withStub(() => ({ code: 201, body: answers.shift() }), (_, client) =>
      Effect.gen(function*() {
        const generate = client.create(Resource.configMaps, { metadata: { generateName: "job-" } })
        const created = yield* generate
        assert.strictEqual(created.metadata?.name, "job-x7k2p")
        const namespace = yield* failure(generate)
        assert.strictEqual(namespace.kind, "DecodeError (UnexpectedObject)")
        assert.strictEqual(
          namespace.error.message,
          `create configmaps in default: expected namespace "default" in response, got "other"`
        )
        const kind = yield* failure(generate)
        assert.strictEqual(
          kind.error.message,
          `create configmaps in default: expected a ConfigMap in response, got Secret`
        )
      }))
  })

  it.live("a cluster-scoped resource: an answer with a namespace fails, one without is the result", () => {
    const node = (extra: Record<string, unknown> = {}) => ({
      apiVersion: "v1",
      kind: "Node",
      metadata: { name: "n1", ...extra }
    })
    const answers: Array<unknown> = [node(), node({ namespace: "default" }), node({ name: "n2" })]
    return withStub(() => ({ code: 200, body: answers.shift() }), (_, client) =>
      Effect.gen(function*() {
        const got = yield* client.get(Resource.nodes, "n1")
        assert.strictEqual(got.metadata?.name, "n1")
        const namespaced = yield* failure(client.update(Resource.nodes, node()))
        assert.strictEqual(
          namespaced.error.message,
          `update nodes "n1": expected a cluster-scoped Node in response, got namespace "default"`
        )
        const renamed = yield* failure(client.patch(Resource.nodes, "n1", Client.mergePatch({})))
        assert.strictEqual(renamed.error.message, `patch nodes "n1": expected name "n1" in response, got "n2"`)
      }))
  })

  it.live("a custom resource: another group is another object", () => {
    const widgets = Resource.make({
      group: "example.com",
      version: "v1",
      resource: "widgets",
      kind: "Widget",
      namespaced: true
    })
    const widget = (apiVersion: string) => ({
      apiVersion,
      kind: "Widget",
      metadata: { name: "w", namespace: "default" }
    })
    const answers: Array<unknown> = [widget("example.com/v1beta1"), widget("other.example.com/v1")]
    return withStub(() => ({ code: 200, body: answers.shift() }), (_, client) =>
      Effect.gen(function*() {
        const other = yield* client.get(widgets, "w")
        assert.strictEqual(other.apiVersion, "example.com/v1beta1")
        const { error, kind } = yield* failure(client.get(widgets, "w"))
        assert.strictEqual(kind, "DecodeError (UnexpectedObject)")
        assert.strictEqual(
          error.message,
          `get widgets.example.com "w" in default: expected apiVersion example.com/v1 in response, got "other.example.com/v1"`
        )
      }))
  })

  it.live("a delete answered with a Status is not checked as an object", () =>
    withStub(() => ({ code: 200, body: status(200, "", "") }), (_, client) =>
      Effect.gen(function*() {
        const deleted = yield* client.delete(Resource.configMaps, "cm")
        assert.strictEqual(deleted._tag, "Status")
      })))

  it.live("the answer's values in the message are scrubbed of the credentials", () =>
    withStub(
      () => ({ code: 200, body: configMap("cm", { metadata: { name: `Bearer ${TOKEN}`, namespace: "default" } }) }),
      (_, client) =>
        Effect.gen(function*() {
          const { error, kind } = yield* failure(client.get(Resource.configMaps, "cm"))
          assert.strictEqual(kind, "DecodeError (UnexpectedObject)")
          assert.notInclude(error.message, TOKEN)
          assert.match(error.message, /^get configmaps "cm" in default: expected name "cm" in response, got "/)
        })
    ))

  it.live("a dry run and a write recorded in Writes are checked alike (nothing recorded on a mismatch)", () =>
    withStub(
      () => ({ code: 200, body: configMap("cm", { metadata: { name: "cm", namespace: "other" } }) }),
      (_, client) =>
        Effect.gen(function*() {
          const { kind } = yield* failure(client.update(Resource.configMaps, configMap("cm"), { dryRun: true }))
          assert.strictEqual(kind, "DecodeError (UnexpectedObject)")
        })
    ))
})

describe("Client: listAll's bounds", () => {
  it.live("a cycle of continue tokens: ContinueRepeated after a few requests", () =>
    withStub((request) => {
      // a -> b -> c -> a -> ...: each token is new for a while, then they come round again
      const next: Record<string, string> = { "": "a", a: "b", b: "c", c: "a" }
      const token = request.url.searchParams.get("continue") ?? ""
      return { code: 200, body: list(items(0, 1), next[token]) }
    }, (stub, client) =>
      Effect.gen(function*() {
        const { error, kind } = yield* failure(client.listAll(Resource.configMaps, { namespace: "default" }))
        assert.strictEqual(kind, "DecodeError (ContinueRepeated)")
        assert.match(
          error.message,
          /^list configmaps in default: the server repeated a continue token after \d+ pages \(\d+ items\): paging would never end$/
        )
        assert.isAtMost(stub.requests.length, 8)
      })))

  it.live("a repeat after a long chain of new tokens is still found", () =>
    withStub((request) => {
      const token = Number(request.url.searchParams.get("continue") ?? "0")
      // 0, 1, ..., 99, then 60, 61, ..., 99, 60, ...
      return { code: 200, body: list([], String(token + 1 === 100 ? 60 : token + 1)) }
    }, (stub, client) =>
      Effect.gen(function*() {
        const { kind } = yield* failure(client.listAll(Resource.configMaps))
        assert.strictEqual(kind, "DecodeError (ContinueRepeated)")
        assert.isAtMost(stub.requests.length, 300)
      })))

  it.live("endless distinct continue tokens: TooLarge at maxPages, one request per page", () => {
    let n = 0
    return withStub(
      () => ({ code: 200, body: list(items(n, 2), `token-${++n}`) }),
      (stub, client) =>
        Effect.gen(function*() {
          const { error, kind } = yield* failure(client.listAll(Resource.configMaps, { maxPages: 50 }))
          assert.strictEqual(kind, "DecodeError (TooLarge)")
          assert.strictEqual(
            error.message,
            "list configmaps in all namespaces: still a continue token after 50 pages (100 items), listAll's maxPages"
          )
          assert.strictEqual(stub.requests.length, 50)
        })
    )
  })

  it.live("endless distinct continue tokens with items: TooLarge past maxItems", () => {
    let n = 0
    return withStub(
      () => ({ code: 200, body: list(items(n, 10), `token-${++n}`) }),
      (stub, client) =>
        Effect.gen(function*() {
          const { error, kind } = yield* failure(client.listAll(Resource.configMaps, { maxItems: 25 }))
          assert.strictEqual(kind, "DecodeError (TooLarge)")
          assert.strictEqual(
            error.message,
            "list configmaps in all namespaces: 30 items, more than listAll's maxItems (25)"
          )
          assert.strictEqual(stub.requests.length, 3)
        })
    )
  })

  it.live("a first page over maxItems, and a full list after an expired token over it: TooLarge", () => {
    const answers: Array<() => unknown> = [
      () => ({ code: 200, body: list(items(0, 5)) }),
      () => ({ code: 200, body: list(items(0, 2), "t1") }),
      () => ({ code: 410, body: status(410, "Expired", "The provided continue parameter is too old") }),
      () => ({ code: 200, body: list(items(1, 5)) })
    ]
    return withStub(
      () => answers.shift()!() as { code: number; body: unknown },
      (stub, client) =>
        Effect.gen(function*() {
          const first = yield* failure(client.listAll(Resource.configMaps, { maxItems: 4 }))
          assert.strictEqual(
            first.error.message,
            "list configmaps in all namespaces: 5 items, more than listAll's maxItems (4)"
          )
          const expired = yield* failure(client.listAll(Resource.configMaps, { maxItems: 4 }))
          assert.strictEqual(expired.kind, "DecodeError (TooLarge)")
          assert.strictEqual(
            expired.error.message,
            "list configmaps in all namespaces: 5 items, more than listAll's maxItems (4)"
          )
          // the full list: no limit, no continue
          const full = stub.requests[3]
          assert.isNull(full.url.searchParams.get("limit"))
          assert.isNull(full.url.searchParams.get("continue"))
        })
    )
  })

  it.live("within the bounds: every page (exactly maxItems, exactly maxPages)", () =>
    withStub((request: StubRequest) => {
      const page = Number(request.url.searchParams.get("continue") ?? "0")
      return { code: 200, body: list(items(page, 3), page === 3 ? undefined : String(page + 1)) }
    }, (stub, client) =>
      Effect.gen(function*() {
        const all = yield* client.listAll(Resource.configMaps, { maxItems: 12, maxPages: 4, limit: 3 })
        assert.strictEqual(all.items.length, 12)
        assert.strictEqual(all.items[11].metadata?.name, "cm-3-2")
        assert.strictEqual(stub.requests.length, 4)
      })))
})

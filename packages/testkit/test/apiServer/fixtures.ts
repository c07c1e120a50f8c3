/**
 * The ApiServer suite's fixtures: pods, two custom resources, HTTP calls and Status checks, open watches,
 * and a started server.
 */
import { assert } from "@effect/vitest"
import type { KubeObject } from "effect-informers/KubeObject"
import * as Resource from "effect-informers/Resource"
import * as Effect from "effect/Effect"
import * as ApiServer from "../../src/ApiServer.js"
import { pod as fixturePod } from "../fixtures.js"

// -------------------------------------------------------------------------------------------------
// helpers
// -------------------------------------------------------------------------------------------------

export interface Obj extends KubeObject {
  readonly metadata: {
    readonly name: string
    readonly namespace?: string
    readonly uid?: string
    readonly resourceVersion?: string
    readonly generateName?: string
    readonly creationTimestamp?: string
    readonly deletionTimestamp?: string
    readonly generation?: number
    readonly labels?: { readonly [key: string]: string }
    readonly annotations?: { readonly [key: string]: string }
    readonly finalizers?: ReadonlyArray<string>
  }
  readonly spec?: { readonly [key: string]: unknown }
}

/** The suite's pods: typed, in "default", labels always present, a spec with one container on node-1. */
export const pod = (
  name: string,
  namespace = "default",
  labels: { readonly [key: string]: string } = {},
  spec: { readonly [key: string]: unknown } = { nodeName: "node-1", containers: [{ name: "c", image: "nginx" }] }
): Obj => fixturePod(name, { typed: true, namespace, labels, spec }) as Obj

export interface Reply {
  readonly status: number
  readonly headers: Headers
  readonly text: string
  readonly json: any
}

export const call = (url: string, init?: RequestInit): Effect.Effect<Reply> =>
  Effect.promise(async () => {
    const response = await fetch(url, init)
    const text = await response.text()
    let json: unknown = undefined
    try {
      json = text === "" ? undefined : JSON.parse(text)
    } catch {
      json = undefined
    }
    return { status: response.status, headers: response.headers, text, json }
  })

/** The content type of a JSON merge patch. */
export const merge = "application/merge-patch+json"

export const send = (url: string, method: string, body: unknown, contentType = "application/json") =>
  call(url, { method, headers: { "content-type": contentType }, body: JSON.stringify(body) })

export const assertStatus = (reply: Reply, code: number, reason: string) => {
  assert.strictEqual(reply.status, code, reply.text)
  assert.strictEqual(reply.json.kind, "Status")
  assert.strictEqual(reply.json.apiVersion, "v1")
  assert.deepStrictEqual(reply.json.metadata.continue === undefined ? reply.json.metadata : {}, {})
  assert.strictEqual(reply.json.status, "Failure")
  assert.strictEqual(reply.json.reason, reason)
  assert.strictEqual(reply.json.code, code)
  assert.isString(reply.json.message)
}

export const names = (list: { readonly items: ReadonlyArray<Obj> }): Array<string> =>
  list.items.map((o) => `${o.metadata.namespace ?? ""}/${o.metadata.name}`)

export interface OpenWatch {
  readonly status: number
  readonly lines: Array<string>
  rest: string
  ended: boolean
  error: unknown
  bytes: number
  readonly headersAt: number
}

/** Opens a watch whose lines accumulate in the background; aborted when the scope closes. */
export const openWatch = (url: string) =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      const controller = new AbortController()
      const response = await fetch(url, { signal: controller.signal })
      const state: OpenWatch & { readonly controller: AbortController } = {
        status: response.status,
        lines: [],
        rest: "",
        ended: false,
        error: undefined,
        bytes: 0,
        headersAt: Date.now(),
        controller
      }
      const reader = response.body!.getReader()
      const decoder = new TextDecoder()
      void (async () => {
        try {
          for (;;) {
            const { done, value } = await reader.read()
            if (done) break
            state.bytes += value.length
            state.rest += decoder.decode(value, { stream: true })
            let i: number
            while ((i = state.rest.indexOf("\n")) >= 0) {
              state.lines.push(state.rest.slice(0, i))
              state.rest = state.rest.slice(i + 1)
            }
          }
        } catch (error) {
          state.error = error
        }
        state.ended = true
      })()
      return state
    }),
    (state) => Effect.sync(() => state.controller.abort())
  )

export const events = (w: OpenWatch): Array<any> => w.lines.map((line) => JSON.parse(line))

export const sleep = (ms: number) => Effect.promise(() => new Promise((resolve) => setTimeout(resolve, ms)))

/** Two namespaced custom resources of example.com/v1: widgets (kind Widget) and gadgets (kind Gadget). */
export const widgets = Resource.make({
  group: "example.com",
  version: "v1",
  resource: "widgets",
  kind: "Widget",
  namespaced: true
})

export const gadgets = Resource.make({
  group: "example.com",
  version: "v1",
  resource: "gadgets",
  kind: "Gadget",
  namespaced: true
})

/** Pods typed as the test's plain objects. */
export const pods = Resource.pods as unknown as Resource.Resource<Obj>

export const start = (options: ApiServer.Options = {}) => ApiServer.make(options).pipe(Effect.orDie)

export const seedPods = (server: ApiServer.ApiServer.Service, objects: ReadonlyArray<Obj>) =>
  Effect.forEach(objects, (o) => server.objects.create(pods, o), { discard: true }).pipe(Effect.orDie)

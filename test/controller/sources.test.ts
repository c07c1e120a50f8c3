/**
 * Controller: sources (for, owns, watches) and predicates.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as Controller from "../../src/Controller.js"
import { settle } from "../fixtures/index.js"
import type { Obj } from "./fixtures.js"
import { configMaps, deployments, eventually, namespaces, obj, pods, recorder, source } from "./fixtures.js"

const ownedBy = (kind: string, apiVersion: string, name: string, controller = true) => ({
  ownerReferences: [{ apiVersion, kind, name, uid: `uid-${name}`, controller }]
})

const quiet = Effect.gen(function*() {
  for (let i = 0; i < 30; i++) yield* settle
})

describe("Controller: sources", () => {
  it.effect("owns: a child's event reconciles its controller owner (of the primary's group and kind, any version)", () =>
    Effect.gen(function*() {
      const deploys = yield* source(deployments, [obj("ns", "web")])
      const children = yield* source(pods)
      const r = recorder()
      yield* Controller.make({
        name: "owns",
        for: deploys,
        owns: [{ source: children }],
        reconcile: (request) => r.around(request, () => Effect.void)
      })
      yield* eventually(() => r.seen.length === 1, "the primary")
      yield* children.fake.add(obj("ns", "web-1", { metadata: ownedBy("Deployment", "apps/v1beta1", "web") }))
      yield* eventually(() => r.seen.length === 2, "the owner, for its child")
      assert.strictEqual(r.seen[1], "ns/web")
      // another kind, another group, a non-controller reference, no references: nothing
      yield* children.fake.add(obj("ns", "x-1", { metadata: ownedBy("ReplicaSet", "apps/v1", "web") }))
      yield* children.fake.add(obj("ns", "x-2", { metadata: ownedBy("Deployment", "extensions/v1", "web") }))
      yield* children.fake.add(obj("ns", "x-3", { metadata: ownedBy("Deployment", "apps/v1", "web", false) }))
      yield* children.fake.add(obj("ns", "x-4"))
      yield* quiet
      assert.strictEqual(r.seen.length, 2)
      yield* children.fake.delete(obj("ns", "web-1", { metadata: ownedBy("Deployment", "apps/v1", "web") }))
      yield* eventually(() => r.seen.length === 3, "the owner, for its child's deletion")
    }))

  it.effect("owns with everyOwner: every matching reference; an update queues the owners of old and new", () =>
    Effect.gen(function*() {
      const deploys = yield* source(deployments, [obj("ns", "a"), obj("ns", "b")])
      const children = yield* source(pods, [
        obj("ns", "c", { metadata: ownedBy("Deployment", "apps/v1", "a", false) })
      ])
      const r = recorder()
      yield* Controller.make({
        name: "every",
        for: deploys,
        owns: [{ source: children, everyOwner: true }],
        reconcile: (request) => r.around(request, () => Effect.void)
      })
      yield* eventually(() => r.seen.length >= 2, "the primaries")
      yield* quiet
      const before = r.seen.length
      yield* children.fake.modify(obj("ns", "c", { metadata: ownedBy("Deployment", "apps/v1", "b", false) }))
      yield* eventually(() => r.seen.length === before + 2, "both owners")
      assert.deepStrictEqual(r.seen.slice(before).sort(), ["ns/a", "ns/b"])
    }))

  it.effect("watches: any resource, mapped to primary keys", () =>
    Effect.gen(function*() {
      const cms = yield* source(configMaps, [obj("team-a", "settings"), obj("team-b", "settings")])
      const nss = yield* source(namespaces, [obj(undefined, "team-a"), obj(undefined, "team-b")])
      const r = recorder()
      yield* Controller.make({
        name: "watches",
        for: cms,
        watches: [{
          source: nss,
          map: (ns) => [`${ns.metadata?.name}/settings`],
          predicates: [Controller.labelsChanged]
        }],
        reconcile: (request) => r.around(request, () => Effect.void)
      })
      yield* eventually(() => r.seen.length >= 2, "initial")
      yield* quiet
      const before = r.seen.length
      yield* nss.fake.modify(obj(undefined, "team-b", { metadata: { labels: { replicate: "true" } } }))
      yield* eventually(() => r.seen.length === before + 1, "the mapped key")
      assert.strictEqual(r.seen[before], "team-b/settings")
      // an update that keeps the labels is filtered
      yield* nss.fake.modify(
        obj(undefined, "team-b", { metadata: { labels: { replicate: "true" }, annotations: { a: "b" } } })
      )
      yield* quiet
      assert.strictEqual(r.seen.length, before + 1)
    }))

  it.effect("predicates: generationChanged skips status-only updates of the primary", () =>
    Effect.gen(function*() {
      const deploys = yield* source(deployments, [obj("ns", "web", { metadata: { generation: 1 } })])
      const r = recorder()
      yield* Controller.make({
        name: "generation",
        for: deploys,
        predicates: [Controller.generationChanged],
        reconcile: (request) => r.around(request, () => Effect.void)
      })
      yield* eventually(() => r.seen.length === 1, "initial")
      yield* deploys.fake.modify(obj("ns", "web", { metadata: { generation: 1 }, status: { ready: 1 } }))
      yield* quiet
      assert.strictEqual(r.seen.length, 1)
      yield* deploys.fake.modify(obj("ns", "web", { metadata: { generation: 2 }, spec: { replicas: 2 } }))
      yield* eventually(() => r.seen.length === 2, "the spec change")
      // deletes pass generationChanged (it judges updates only)
      yield* deploys.fake.delete(obj("ns", "web"))
      yield* eventually(() => r.seen.length === 3, "the delete")
    }))
})

describe("Controller: predicates as tables", () => {
  const o = (fields: Parameters<typeof obj>[2]) => obj("ns", "x", fields)
  it.each(
    [
      [
        "generationChanged",
        Controller.generationChanged,
        o({ metadata: { generation: 1 } }),
        o({ metadata: { generation: 1 } }),
        false
      ],
      [
        "generationChanged",
        Controller.generationChanged,
        o({ metadata: { generation: 1 } }),
        o({ metadata: { generation: 2 } }),
        true
      ],
      [
        "resourceVersionChanged",
        Controller.resourceVersionChanged,
        o({ metadata: { resourceVersion: "1" } }),
        o({ metadata: { resourceVersion: "1" } }),
        false
      ],
      [
        "resourceVersionChanged",
        Controller.resourceVersionChanged,
        o({ metadata: { resourceVersion: "1" } }),
        o({ metadata: { resourceVersion: "2" } }),
        true
      ],
      [
        "labelsChanged",
        Controller.labelsChanged,
        o({ metadata: { labels: { a: "1" } } }),
        o({ metadata: { labels: { a: "1" } } }),
        false
      ],
      ["labelsChanged", Controller.labelsChanged, o({}), o({ metadata: { labels: {} } }), false],
      [
        "labelsChanged",
        Controller.labelsChanged,
        o({ metadata: { labels: { a: "1" } } }),
        o({ metadata: { labels: { a: "2" } } }),
        true
      ],
      ["labelsChanged", Controller.labelsChanged, o({ metadata: { labels: { a: "1" } } }), o({}), true],
      [
        "annotationsChanged",
        Controller.annotationsChanged,
        o({ metadata: { annotations: { a: "1" } } }),
        o({ metadata: { annotations: { a: "1" } } }),
        false
      ],
      ["annotationsChanged", Controller.annotationsChanged, o({}), o({ metadata: { annotations: { b: "1" } } }), true]
    ] as const
  )("%s: an update passes or not (case %#)", (_, predicate, before, after, passes) => {
    assert.strictEqual(predicate.update!(before, after), passes)
  })

  it("filter, or, not", () => {
    const labelled = Controller.filter((x: Obj) => x.metadata?.labels?.["replicate"] === "true")
    const yes = obj("ns", "y", { metadata: { labels: { replicate: "true" } } })
    const no = obj("ns", "n")
    assert.isTrue(labelled.create!(yes))
    assert.isFalse(labelled.create!(no))
    assert.isTrue(labelled.update!(no, yes))
    assert.isFalse(labelled.delete!(no))
    assert.isTrue(Controller.not(labelled).create!(no))
    assert.isTrue(Controller.or(labelled, Controller.not(labelled)).create!(no))
    assert.isTrue(Controller.or(labelled, Controller.generationChanged).create!(no), "a missing member passes")
    assert.isFalse(Controller.not(Controller.generationChanged).create!(no), "not of a missing member blocks")
  })
})

/**
 * OwnerReference: the pure helpers, as controller-runtime's controllerutil (set, replace, refuse, read,
 * remove), and that no input is ever modified.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import type { KubeObject } from "../../src/KubeObject.js"
import * as OwnerReference from "../../src/OwnerReference.js"
import * as Resource from "../../src/Resource.js"
import { pod } from "../fixtures/index.js"
import { widgets } from "../fixtures/resources.js"

/** A cluster-scoped custom resource: example.com/v1 clusterwidgets. */
const clusterWidgets = Resource.make({
  group: "example.com",
  version: "v1",
  resource: "clusterwidgets",
  kind: "ClusterWidget",
  namespaced: false
})

const deployment = (name: string, uid: string | undefined, namespace: string | null = "ns"): KubeObject => ({
  metadata: {
    name,
    ...(namespace === null ? {} : { namespace }),
    ...(uid === undefined ? {} : { uid })
  }
})

const web = deployment("web", "uid-web")

const controllerRef = (name: string, uid: string, apiVersion = "apps/v1", kind = "Deployment") => ({
  apiVersion,
  kind,
  name,
  uid,
  controller: true,
  blockOwnerDeletion: true
})

const plainRef = (name: string, uid: string, apiVersion = "apps/v1", kind = "Deployment") => ({
  apiVersion,
  kind,
  name,
  uid
})

const withRefs = (refs: ReadonlyArray<unknown>, fields: { readonly namespace?: string | null } = {}) =>
  pod("child", { ...fields, metadata: { ownerReferences: refs } })

const deepFreeze = <A>(value: A): A => {
  if (typeof value === "object" && value !== null) {
    for (const v of Object.values(value)) deepFreeze(v)
    Object.freeze(value)
  }
  return value
}

/** Runs `f` on frozen copies of the inputs and checks they are unchanged (a mutation would also throw). */
const untouched = <A>(inputs: ReadonlyArray<unknown>, f: () => A): A => {
  const before = JSON.stringify(inputs)
  inputs.forEach(deepFreeze)
  const result = f()
  assert.strictEqual(JSON.stringify(inputs), before)
  return result
}

/** `untouched` for an Effect: the inputs are compared once it has run. */
const untouchedEffect = <A, E>(inputs: ReadonlyArray<unknown>, f: () => Effect.Effect<A, E>): Effect.Effect<A, E> =>
  Effect.suspend(() => {
    const before = JSON.stringify(inputs)
    inputs.forEach(deepFreeze)
    return f().pipe(Effect.ensuring(Effect.sync(() => assert.strictEqual(JSON.stringify(inputs), before))))
  })

const refsOf = (obj: KubeObject) => obj.metadata?.ownerReferences

describe("OwnerReference.controllerReference", () => {
  it.effect("the owner's apiVersion and kind from its Resource, name, uid, controller and blockOwnerDeletion", () =>
    Effect.gen(function*() {
      assert.deepStrictEqual(
        yield* OwnerReference.controllerReference(web, Resource.deployments),
        controllerRef("web", "uid-web")
      )
      assert.deepStrictEqual(
        yield* OwnerReference.controllerReference(deployment("cfg", "u1"), Resource.configMaps),
        controllerRef("cfg", "u1", "v1", "ConfigMap")
      )
      assert.deepStrictEqual(
        yield* OwnerReference.ownerReference(web, Resource.deployments),
        plainRef("web", "uid-web")
      )
    }))

  it.effect("refused without a name or a uid", () =>
    Effect.gen(function*() {
      const noName = yield* Effect.flip(OwnerReference.controllerReference({ metadata: { uid: "u" } }, widgets))
      assert.strictEqual(noName._tag, "OwnerReferenceError")
      assert.strictEqual(noName.reason, "MissingName")
      const noUid = yield* Effect.flip(OwnerReference.ownerReference(deployment("web", undefined), widgets))
      assert.strictEqual(noUid.reason, "MissingUid")
    }))
})

describe("OwnerReference.setControllerReference", () => {
  const accepted: ReadonlyArray<{
    readonly name: string
    readonly owner: KubeObject
    readonly ownerResource: Resource.Resource<unknown>
    readonly child: KubeObject
    readonly childResource: Resource.Resource<unknown>
    readonly refs: ReadonlyArray<unknown>
  }> = [
    {
      name: "first reference",
      owner: web,
      ownerResource: Resource.deployments,
      child: pod("child"),
      childResource: Resource.pods,
      refs: [controllerRef("web", "uid-web")]
    },
    {
      name: "other, non-controller references kept, the new one appended",
      owner: web,
      ownerResource: Resource.deployments,
      child: withRefs([plainRef("cfg", "u-cfg", "v1", "ConfigMap"), plainRef("db", "uid-db")]),
      childResource: Resource.pods,
      refs: [plainRef("cfg", "u-cfg", "v1", "ConfigMap"), plainRef("db", "uid-db"), controllerRef("web", "uid-web")]
    },
    {
      name: "an existing reference to the same owner (same uid) replaced in place, not duplicated",
      owner: web,
      ownerResource: Resource.deployments,
      child: withRefs([
        plainRef("a", "u-a"),
        { ...controllerRef("web", "uid-web"), blockOwnerDeletion: false },
        plainRef("b", "u-b")
      ]),
      childResource: Resource.pods,
      refs: [plainRef("a", "u-a"), controllerRef("web", "uid-web"), plainRef("b", "u-b")]
    },
    {
      name: "a plain reference to the same owner becomes the controller reference",
      owner: web,
      ownerResource: Resource.deployments,
      child: withRefs([plainRef("web", "uid-web")]),
      childResource: Resource.pods,
      refs: [controllerRef("web", "uid-web")]
    },
    {
      name: "a reference to a previous owner of the same group, kind and name (other uid, other version) replaced",
      owner: web,
      ownerResource: Resource.deployments,
      child: withRefs([controllerRef("web", "uid-old", "apps/v1beta1")]),
      childResource: Resource.pods,
      refs: [controllerRef("web", "uid-web")]
    },
    {
      name: "two references to the same owner collapse into one",
      owner: web,
      ownerResource: Resource.deployments,
      child: withRefs([plainRef("web", "uid-web"), plainRef("x", "u-x"), plainRef("web", "uid-web")]),
      childResource: Resource.pods,
      refs: [controllerRef("web", "uid-web"), plainRef("x", "u-x")]
    },
    {
      name: "malformed entries kept as they are",
      owner: web,
      ownerResource: Resource.deployments,
      child: withRefs([null, { kind: "Deployment" }]),
      childResource: Resource.pods,
      refs: [null, { kind: "Deployment" }, controllerRef("web", "uid-web")]
    },
    {
      name: "a cluster-scoped owner of a namespaced child",
      owner: deployment("big", "u-big", null),
      ownerResource: clusterWidgets,
      child: pod("child", { namespace: "other" }),
      childResource: Resource.pods,
      refs: [controllerRef("big", "u-big", "example.com/v1", "ClusterWidget")]
    },
    {
      name: "a cluster-scoped owner of a cluster-scoped child",
      owner: deployment("big", "u-big", null),
      ownerResource: clusterWidgets,
      child: { metadata: { name: "pv-1" } },
      childResource: Resource.persistentVolumes,
      refs: [controllerRef("big", "u-big", "example.com/v1", "ClusterWidget")]
    },
    {
      name: "a namespaced owner of a child in its namespace (custom resources)",
      owner: deployment("w", "u-w", "team"),
      ownerResource: widgets,
      child: { metadata: { name: "cm", namespace: "team" } },
      childResource: Resource.configMaps,
      refs: [controllerRef("w", "u-w", "example.com/v1", "Widget")]
    }
  ]
  for (const c of accepted) {
    it.effect(c.name, () =>
      Effect.gen(function*() {
        const result = yield* untouchedEffect(
          [c.owner, c.child],
          () => OwnerReference.setControllerReference(c.owner, c.ownerResource, c.child, c.childResource)
        )
        assert.deepStrictEqual(refsOf(result), c.refs)
        assert.notStrictEqual(result, c.child)
        // everything but the references is the child's
        assert.deepStrictEqual({ ...result, metadata: { ...result.metadata, ownerReferences: undefined } }, {
          ...c.child,
          metadata: { ...c.child.metadata, ownerReferences: undefined }
        })
        assert.isTrue(OwnerReference.isControlledBy(result, c.owner))
      }))
  }

  const refused: ReadonlyArray<{
    readonly name: string
    readonly owner: KubeObject
    readonly ownerResource: Resource.Resource<unknown>
    readonly child: KubeObject
    readonly childResource: Resource.Resource<unknown>
    readonly reason: OwnerReference.OwnerReferenceErrorReason
  }> = [
    {
      name: "owner without a name",
      owner: { metadata: { namespace: "ns", uid: "u" } },
      ownerResource: Resource.deployments,
      child: pod("child"),
      childResource: Resource.pods,
      reason: "MissingName"
    },
    {
      name: "owner without a uid (not read from the server)",
      owner: deployment("web", undefined),
      ownerResource: Resource.deployments,
      child: pod("child"),
      childResource: Resource.pods,
      reason: "MissingUid"
    },
    {
      name: "namespaced owner, cluster-scoped child",
      owner: web,
      ownerResource: Resource.deployments,
      child: { metadata: { name: "node-1" } },
      childResource: Resource.nodes,
      reason: "ClusterScopedChild"
    },
    {
      name: "child in another namespace",
      owner: web,
      ownerResource: Resource.deployments,
      child: pod("child", { namespace: "other" }),
      childResource: Resource.pods,
      reason: "CrossNamespace"
    },
    {
      name: "namespaced child without a namespace yet",
      owner: web,
      ownerResource: Resource.deployments,
      child: pod("child", { namespace: null }),
      childResource: Resource.pods,
      reason: "CrossNamespace"
    },
    {
      name: "namespaced owner without a namespace",
      owner: deployment("web", "uid-web", null),
      ownerResource: Resource.deployments,
      child: pod("child"),
      childResource: Resource.pods,
      reason: "CrossNamespace"
    },
    {
      name: "child controlled by another owner",
      owner: web,
      ownerResource: Resource.deployments,
      child: withRefs([controllerRef("db", "uid-db")]),
      childResource: Resource.pods,
      reason: "AlreadyOwned"
    },
    {
      name: "child controlled by an owner of another kind with the same name",
      owner: web,
      ownerResource: Resource.deployments,
      child: withRefs([controllerRef("web", "uid-sts", "apps/v1", "StatefulSet")]),
      childResource: Resource.pods,
      reason: "AlreadyOwned"
    }
  ]
  for (const c of refused) {
    it.effect(`refused: ${c.name} (${c.reason})`, () =>
      Effect.gen(function*() {
        const error = yield* Effect.flip(
          untouchedEffect(
            [c.owner, c.child],
            () => OwnerReference.setControllerReference(c.owner, c.ownerResource, c.child, c.childResource)
          )
        )
        assert.instanceOf(error, OwnerReference.OwnerReferenceError)
        assert.strictEqual(error._tag, "OwnerReferenceError")
        assert.strictEqual(error.reason, c.reason)
        const namespace = c.child.metadata?.namespace
        assert.strictEqual(
          error.object,
          namespace === undefined ? c.child.metadata?.name : `${namespace}/${c.child.metadata?.name}`
        )
        assert.isAbove(error.message.length, 0)
      }))
  }

  it.effect("AlreadyOwned names the existing controller", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(
        OwnerReference.setControllerReference(
          web,
          Resource.deployments,
          withRefs([controllerRef("db", "uid-db")]),
          Resource.pods
        )
      )
      assert.deepStrictEqual(error.existing, controllerRef("db", "uid-db"))
      assert.include(error.message, "uid-db")
    }))
})

describe("OwnerReference.setOwnerReference", () => {
  const cases: ReadonlyArray<readonly [string, KubeObject, ReadonlyArray<unknown>]> = [
    ["appended, without controller fields", pod("child"), [plainRef("web", "uid-web")]],
    [
      "beside another owner's controller reference (no AlreadyOwned)",
      withRefs([controllerRef("db", "uid-db")]),
      [controllerRef("db", "uid-db"), plainRef("web", "uid-web")]
    ],
    [
      "an existing reference to the owner keeps its controller and blockOwnerDeletion",
      withRefs([controllerRef("web", "uid-old")]),
      [controllerRef("web", "uid-web")]
    ],
    ["an identical reference is not duplicated", withRefs([plainRef("web", "uid-web")]), [plainRef("web", "uid-web")]]
  ]
  for (const [name, child, refs] of cases) {
    it.effect(name, () =>
      Effect.gen(function*() {
        const result = yield* untouchedEffect(
          [web, child],
          () => OwnerReference.setOwnerReference(web, Resource.deployments, child, Resource.pods)
        )
        assert.deepStrictEqual(refsOf(result), refs)
      }))
  }

  it.effect("refused across namespaces and for a cluster-scoped child", () =>
    Effect.gen(function*() {
      const across = yield* Effect.flip(
        OwnerReference.setOwnerReference(web, Resource.deployments, pod("c", { namespace: "x" }), Resource.pods)
      )
      assert.strictEqual(across.reason, "CrossNamespace")
      const cluster = yield* Effect.flip(
        OwnerReference.setOwnerReference(web, Resource.deployments, { metadata: { name: "n" } }, Resource.nodes)
      )
      assert.strictEqual(cluster.reason, "ClusterScopedChild")
    }))
})

describe("OwnerReference readers", () => {
  const cases: ReadonlyArray<{
    readonly name: string
    readonly child: KubeObject
    readonly controller: Option.Option<unknown>
    readonly controlledByWeb: boolean
    readonly hasWeb: boolean
  }> = [
    { name: "no references", child: pod("c"), controller: Option.none(), controlledByWeb: false, hasWeb: false },
    {
      name: "controlled by web",
      child: withRefs([plainRef("x", "u-x"), controllerRef("web", "uid-web")]),
      controller: Option.some(controllerRef("web", "uid-web")),
      controlledByWeb: true,
      hasWeb: true
    },
    {
      name: "a plain reference to web",
      child: withRefs([plainRef("web", "uid-web")]),
      controller: Option.none(),
      controlledByWeb: false,
      hasWeb: true
    },
    {
      name: "controlled by another",
      child: withRefs([controllerRef("db", "uid-db"), plainRef("web", "uid-web")]),
      controller: Option.some(controllerRef("db", "uid-db")),
      controlledByWeb: false,
      hasWeb: true
    },
    {
      name: "controlled by a previous web (same name, other uid): a reference to web, not controlled by it",
      child: withRefs([controllerRef("web", "uid-old")]),
      controller: Option.some(controllerRef("web", "uid-old")),
      controlledByWeb: false,
      hasWeb: true
    },
    {
      name: "the same name of another group is not web",
      child: withRefs([plainRef("web", "uid-other", "example.com/v1")]),
      controller: Option.none(),
      controlledByWeb: false,
      hasWeb: false
    },
    {
      name: "malformed entries ignored",
      child: withRefs([null, 3, { controller: true }]),
      controller: Option.none(),
      controlledByWeb: false,
      hasWeb: false
    }
  ]
  for (const c of cases) {
    it(c.name, () => {
      assert.deepStrictEqual(OwnerReference.controllerOf(c.child), c.controller)
      assert.strictEqual(OwnerReference.isControlledBy(c.child, web), c.controlledByWeb)
      assert.strictEqual(OwnerReference.hasOwnerReference(c.child, web, Resource.deployments), c.hasWeb)
    })
  }

  it("an owner without a uid controls nothing", () => {
    const child = withRefs([controllerRef("web", "")])
    assert.isFalse(OwnerReference.isControlledBy(child, deployment("web", undefined)))
  })
})

describe("OwnerReference.removeOwnerReference", () => {
  const cases: ReadonlyArray<readonly [string, KubeObject, ReadonlyArray<unknown> | undefined]> = [
    [
      "the owner's references removed (controller or not), the others kept",
      withRefs([plainRef("a", "u-a"), controllerRef("web", "uid-web"), plainRef("web", "uid-web")]),
      [plainRef("a", "u-a")]
    ],
    [
      "by group, kind and name too (a previous owner of that name)",
      withRefs([controllerRef("web", "uid-old", "apps/v1beta2"), plainRef("b", "u-b")]),
      [plainRef("b", "u-b")]
    ],
    ["the list left out when empty", withRefs([controllerRef("web", "uid-web")]), undefined]
  ]
  for (const [name, child, refs] of cases) {
    it(name, () => {
      const result = untouched(
        [web, child],
        () => OwnerReference.removeOwnerReference(child, web, Resource.deployments)
      )
      assert.deepStrictEqual(refsOf(result), refs)
      assert.isFalse(OwnerReference.hasOwnerReference(result, web, Resource.deployments))
    })
  }

  it("an object without a reference to the owner is returned as it is", () => {
    const child = withRefs([plainRef("a", "u-a")])
    assert.strictEqual(OwnerReference.removeOwnerReference(child, web, Resource.deployments), child)
    const none = pod("c")
    assert.strictEqual(OwnerReference.removeOwnerReference(none, web, Resource.deployments), none)
  })

  it("set then remove gives the original references back", () => {
    const child = withRefs([plainRef("a", "u-a")])
    const exit = Effect.runSyncExit(
      OwnerReference.setControllerReference(web, Resource.deployments, child, Resource.pods)
    )
    assert.isTrue(Exit.isSuccess(exit))
    if (Exit.isSuccess(exit)) {
      assert.deepStrictEqual(
        refsOf(OwnerReference.removeOwnerReference(exit.value, web, Resource.deployments)),
        [plainRef("a", "u-a")]
      )
    }
  })
})

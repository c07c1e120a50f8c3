/**
 * Finalizer: the pure helpers, and the reconcile flow (add, apply, cleanup, removal, conflicts) against the
 * fake Client, which answers as kube-apiserver does (finalizers hold a delete, a failed JSON-patch `test`
 * is a 422).
 */
import { assert, describe, it } from "@effect/vitest"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Ref from "effect/Ref"
import * as Schedule from "effect/Schedule"
import * as ApiError from "../../src/ApiError.js"
import * as Client from "../../src/Client.js"
import * as Controller from "../../src/Controller.js"
import * as FakeClient from "../../src/FakeClient.js"
import * as FakeListerWatcher from "../../src/FakeListerWatcher.js"
import * as Finalizer from "../../src/Finalizer.js"
import type { KubeObject } from "../../src/KubeObject.js"
import * as Resource from "../../src/Resource.js"
import * as Wire from "../../src/Wire.js"
import { widgets } from "../fixtures/resources.js"

const NAME = "example.com/cleanup"

/** A fresh fake Client (and its store) per test. */
const fresh = () => FakeClient.layer().pipe(Layer.provide(FakeListerWatcher.layerSource()))

/** No delay between retries: the tests run on the TestClock. */
const retry = Schedule.recurs(4)

/** An object with the metadata fields of finalizers. */
interface Held extends KubeObject {
  readonly metadata?:
    | KubeObject["metadata"] & { readonly finalizers?: ReadonlyArray<string>; readonly deletionTimestamp?: string }
    | undefined
}

const finalizersOf = (obj: KubeObject): unknown => (obj.metadata as { finalizers?: unknown } | undefined)?.finalizers

class WorkFailed extends Data.TaggedError("WorkFailed")<{ readonly step: string }> {}

/** Records the calls of `apply` and `cleanup` (with the finalizers each saw) and answers as told. */
const recorder = Effect.gen(function*() {
  const calls = yield* Ref.make<ReadonlyArray<string>>([])
  const record = (step: string, obj: KubeObject) =>
    Ref.update(calls, (c) => [...c, `${step} ${JSON.stringify(finalizersOf(obj) ?? [])}`])
  return {
    calls: Ref.get(calls),
    apply: (result?: Controller.Result) => (obj: KubeObject) => Effect.as(record("apply", obj), result),
    cleanup: (result?: Controller.Result) => (obj: KubeObject) => Effect.as(record("cleanup", obj), result),
    failing: (step: string) => (obj: KubeObject) =>
      Effect.andThen(record(step, obj), Effect.fail(new WorkFailed({ step })))
  }
})

const create = (name: string, finalizers?: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const client = yield* Client.Client
    return yield* client.create(widgets, {
      metadata: { name, namespace: "ns", ...(finalizers === undefined ? {} : { finalizers }) }
    } as Held)
  })

const get = (name: string) =>
  Effect.gen(function*() {
    const client = yield* Client.Client
    return yield* client.get(widgets, name, { namespace: "ns" })
  })

const exists = (name: string) =>
  get(name).pipe(
    Effect.as(true),
    Effect.catchTag("StatusError", (e) => e.reason === "NotFound" ? Effect.succeed(false) : Effect.fail(e))
  )

const patchWrites = Effect.gen(function*() {
  const fake = yield* FakeClient.FakeClient
  return (yield* fake.writes).filter((w) => w.verb === "patch")
})

/** Deletes `name`: with finalizers, the server only marks it (deletionTimestamp) and the object stays. */
const markDeleted = (name: string) =>
  Effect.gen(function*() {
    const client = yield* Client.Client
    yield* client.delete(widgets, name, { namespace: "ns" })
    return yield* get(name)
  })

describe("Finalizer pure helpers", () => {
  it("has, add, remove, isDeleting; inputs untouched, unchanged objects returned as they are", () => {
    const bare: Held = Object.freeze({ metadata: Object.freeze({ name: "a" }) })
    assert.isFalse(Finalizer.has(bare, NAME))
    const held = Finalizer.add(bare, NAME)
    assert.deepStrictEqual(held, { metadata: { name: "a", finalizers: [NAME] } })
    assert.isTrue(Finalizer.has(held, NAME))
    assert.strictEqual(Finalizer.add(held, NAME), held)
    const two = Finalizer.add(held, "other.io/x")
    assert.deepStrictEqual(finalizersOf(two), [NAME, "other.io/x"])
    assert.deepStrictEqual(finalizersOf(held), [NAME])
    assert.deepStrictEqual(Finalizer.remove(two, NAME), { metadata: { name: "a", finalizers: ["other.io/x"] } })
    assert.deepStrictEqual(Finalizer.remove(held, NAME), { metadata: { name: "a" } })
    assert.strictEqual(Finalizer.remove(bare, NAME), bare)
    const duplicated = { metadata: { name: "a", finalizers: [NAME, "x.io/y", NAME] } }
    assert.deepStrictEqual(finalizersOf(Finalizer.remove(duplicated, NAME)), ["x.io/y"])
    assert.isFalse(Finalizer.isDeleting(bare))
    const deleting: Held = { metadata: { name: "a", deletionTimestamp: "2026-01-01T00:00:00Z" } }
    assert.isTrue(Finalizer.isDeleting(deleting))
  })

  it.each(
    [
      ["example.com/cleanup", true],
      ["cleanup", true],
      ["a.b-c.io/x_y.z-1", true],
      ["", false],
      ["Example.com/x", false],
      ["example.com/", false],
      ["/x", false],
      ["example.com/-x", false],
      ["a/b/c", false],
      [`example.com/${"x".repeat(64)}`, false]
    ] as const
  )("isValidName(%s) = %s", (name, valid) => {
    assert.strictEqual(Finalizer.isValidName(name), valid)
  })
})

describe("Finalizer.reconcile", () => {
  it.effect("absent and not deleted: adds the finalizer (one patch), then applies the patched object", () =>
    Effect.gen(function*() {
      const rec = yield* recorder
      const object = yield* create("w")
      const result = yield* Finalizer.reconcile({
        resource: widgets,
        name: NAME,
        object,
        apply: rec.apply(Controller.requeueAfter("1 minute")),
        cleanup: rec.cleanup(),
        retry
      })
      assert.deepStrictEqual(result, Controller.requeueAfter("1 minute"))
      assert.deepStrictEqual(yield* rec.calls, [`apply ["${NAME}"]`])
      assert.deepStrictEqual(finalizersOf(yield* get("w")), [NAME])
      const patches = yield* patchWrites
      assert.strictEqual(patches.length, 1)
      assert.deepStrictEqual(
        patches[0].body,
        Client.jsonPatch([
          { op: "test", path: "/metadata/resourceVersion", value: object.metadata?.resourceVersion },
          { op: "add", path: "/metadata/finalizers", value: [NAME] }
        ])
      )
      assert.isUndefined(finalizersOf(object)) // the input is untouched
    }).pipe(Effect.provide(fresh())))

  it.effect("appends to the finalizers already there, testing the list", () =>
    Effect.gen(function*() {
      const rec = yield* recorder
      const object = yield* create("w", ["other.io/keep"])
      const result = yield* Finalizer.reconcile({
        resource: widgets,
        name: NAME,
        object,
        apply: rec.apply(),
        cleanup: rec.cleanup(),
        retry
      })
      assert.deepStrictEqual(result, Controller.done)
      assert.deepStrictEqual(finalizersOf(yield* get("w")), ["other.io/keep", NAME])
      const patches = yield* patchWrites
      assert.deepStrictEqual(patches.map((p) => p.body), [Client.jsonPatch([
        { op: "test", path: "/metadata/finalizers", value: ["other.io/keep"] },
        { op: "add", path: "/metadata/finalizers/-", value: NAME }
      ])])
    }).pipe(Effect.provide(fresh())))

  it.effect("present and not deleted: applies, writes nothing", () =>
    Effect.gen(function*() {
      const rec = yield* recorder
      const object = yield* create("w", [NAME])
      const result = yield* Finalizer.reconcile({
        resource: widgets,
        name: NAME,
        object,
        apply: rec.apply(),
        cleanup: rec.cleanup(),
        retry
      })
      assert.deepStrictEqual(result, Controller.done)
      assert.deepStrictEqual(yield* rec.calls, [`apply ["${NAME}"]`])
      assert.deepStrictEqual(yield* patchWrites, [])
    }).pipe(Effect.provide(fresh())))

  it.effect("apply's failure comes out as the user's error, the finalizer stays", () =>
    Effect.gen(function*() {
      const rec = yield* recorder
      const object = yield* create("w")
      const error = yield* Effect.flip(Finalizer.reconcile({
        resource: widgets,
        name: NAME,
        object,
        apply: rec.failing("apply"),
        cleanup: rec.cleanup(),
        retry
      }))
      assert.deepStrictEqual(error, new WorkFailed({ step: "apply" }))
      assert.deepStrictEqual(finalizersOf(yield* get("w")), [NAME])
    }).pipe(Effect.provide(fresh())))

  it.effect("deleted with the finalizer: cleanup, then the finalizer removed and the object gone", () =>
    Effect.gen(function*() {
      const rec = yield* recorder
      yield* create("w", [NAME])
      const deleting = yield* markDeleted("w")
      assert.isTrue(Finalizer.isDeleting(deleting))
      const result = yield* Finalizer.reconcile({
        resource: widgets,
        name: NAME,
        object: deleting,
        apply: rec.apply(),
        cleanup: rec.cleanup(),
        retry
      })
      assert.deepStrictEqual(result, Controller.done)
      assert.deepStrictEqual(yield* rec.calls, [`cleanup ["${NAME}"]`])
      assert.isFalse(yield* exists("w"))
      const patches = yield* patchWrites
      assert.deepStrictEqual(patches.map((p) => p.body), [Client.jsonPatch([
        { op: "test", path: "/metadata/finalizers/0", value: NAME },
        { op: "remove", path: "/metadata/finalizers/0" }
      ])])
    }).pipe(Effect.provide(fresh())))

  it.effect("deleted, another finalizer too: only ours removed (by its index), the object stays for the other", () =>
    Effect.gen(function*() {
      const rec = yield* recorder
      yield* create("w", ["other.io/first", NAME])
      const deleting = yield* markDeleted("w")
      yield* Finalizer.reconcile({
        resource: widgets,
        name: NAME,
        object: deleting,
        apply: rec.apply(),
        cleanup: rec.cleanup(),
        retry
      })
      const after = yield* get("w")
      assert.deepStrictEqual(finalizersOf(after), ["other.io/first"])
      assert.isTrue(Finalizer.isDeleting(after))
    }).pipe(Effect.provide(fresh())))

  it.effect("cleanup fails: its error comes out, the finalizer stays, the object stays", () =>
    Effect.gen(function*() {
      const rec = yield* recorder
      yield* create("w", [NAME])
      const deleting = yield* markDeleted("w")
      const error = yield* Effect.flip(Finalizer.reconcile({
        resource: widgets,
        name: NAME,
        object: deleting,
        apply: rec.apply(),
        cleanup: rec.failing("cleanup"),
        retry
      }))
      assert.deepStrictEqual(error, new WorkFailed({ step: "cleanup" }))
      assert.deepStrictEqual(finalizersOf(yield* get("w")), [NAME])
      assert.deepStrictEqual(yield* patchWrites, [])
    }).pipe(Effect.provide(fresh())))

  it.effect("cleanup not finished (requeueAfter): the finalizer stays, the result goes to the controller", () =>
    Effect.gen(function*() {
      const rec = yield* recorder
      yield* create("w", [NAME])
      const deleting = yield* markDeleted("w")
      const result = yield* Finalizer.reconcile({
        resource: widgets,
        name: NAME,
        object: deleting,
        apply: rec.apply(),
        cleanup: rec.cleanup(Controller.requeueAfter("30 seconds")),
        retry
      })
      assert.deepStrictEqual(result, Controller.requeueAfter("30 seconds"))
      assert.deepStrictEqual(finalizersOf(yield* get("w")), [NAME])
    }).pipe(Effect.provide(fresh())))

  it.effect("deleted without the finalizer: done, nothing run, nothing written", () =>
    Effect.gen(function*() {
      const rec = yield* recorder
      yield* create("w", ["other.io/holds"])
      const deleting = yield* markDeleted("w")
      const fake = yield* FakeClient.FakeClient
      yield* fake.clearWrites
      const result = yield* Finalizer.reconcile({
        resource: widgets,
        name: NAME,
        object: deleting,
        apply: rec.apply(),
        cleanup: rec.cleanup(),
        retry
      })
      assert.deepStrictEqual(result, Controller.done)
      assert.deepStrictEqual(yield* rec.calls, [])
      assert.deepStrictEqual(yield* fake.writes, [])
    }).pipe(Effect.provide(fresh())))

  it.effect("add on a stale object (the resourceVersion moved on): the failed test (422) retried on a fresh read", () =>
    Effect.gen(function*() {
      const rec = yield* recorder
      const client = yield* Client.Client
      const stale = yield* create("w")
      yield* client.patch(widgets, "w", Client.mergePatch({ metadata: { labels: { moved: "on" } } }), {
        namespace: "ns"
      })
      const result = yield* Finalizer.reconcile({
        resource: widgets,
        name: NAME,
        object: stale,
        apply: rec.apply(),
        cleanup: rec.cleanup(),
        retry
      })
      assert.deepStrictEqual(result, Controller.done)
      const after = yield* get("w")
      assert.deepStrictEqual(finalizersOf(after), [NAME])
      assert.strictEqual(after.metadata?.labels?.moved, "on") // the concurrent change kept
      assert.deepStrictEqual(yield* rec.calls, [`apply ["${NAME}"]`]) // apply once, on the fresh object
      assert.strictEqual((yield* patchWrites).length, 3) // the label, the failed add, the add
    }).pipe(Effect.provide(fresh())))

  it.effect("add on a stale object whose finalizer someone else added meanwhile: not added twice", () =>
    Effect.gen(function*() {
      const rec = yield* recorder
      const client = yield* Client.Client
      const stale = yield* create("w", ["other.io/a"])
      yield* client.patch(widgets, "w", Client.mergePatch({ metadata: { finalizers: ["other.io/a", NAME] } }), {
        namespace: "ns"
      })
      yield* Finalizer.reconcile({
        resource: widgets,
        name: NAME,
        object: stale,
        apply: rec.apply(),
        cleanup: rec.cleanup(),
        retry
      })
      assert.deepStrictEqual(finalizersOf(yield* get("w")), ["other.io/a", NAME])
      assert.deepStrictEqual(yield* rec.calls, [`apply ["other.io/a","${NAME}"]`])
    }).pipe(Effect.provide(fresh())))

  it.effect("add on a stale object that is being deleted meanwhile: done, neither apply nor cleanup run", () =>
    Effect.gen(function*() {
      const rec = yield* recorder
      const stale = yield* create("w", ["other.io/holds"])
      yield* markDeleted("w")
      const result = yield* Finalizer.reconcile({
        resource: widgets,
        name: NAME,
        object: stale,
        apply: rec.apply(),
        cleanup: rec.cleanup(),
        retry
      })
      assert.deepStrictEqual(result, Controller.done)
      assert.deepStrictEqual(yield* rec.calls, [])
      assert.deepStrictEqual(finalizersOf(yield* get("w")), ["other.io/holds"])
    }).pipe(Effect.provide(fresh())))

  it.effect("removal on a stale object (another finalizer removed before ours, its index moved): retried", () =>
    Effect.gen(function*() {
      const rec = yield* recorder
      const client = yield* Client.Client
      yield* create("w", ["other.io/first", NAME])
      const stale = yield* markDeleted("w")
      // another controller removes its finalizer: ours moves from index 1 to 0
      yield* client.patch(widgets, "w", Client.jsonPatch([{ op: "remove", path: "/metadata/finalizers/0" }]), {
        namespace: "ns"
      })
      const result = yield* Finalizer.reconcile({
        resource: widgets,
        name: NAME,
        object: stale,
        apply: rec.apply(),
        cleanup: rec.cleanup(),
        retry
      })
      assert.deepStrictEqual(result, Controller.done)
      assert.deepStrictEqual(yield* rec.calls, [`cleanup ["other.io/first","${NAME}"]`]) // cleanup ran once
      assert.isFalse(yield* exists("w"))
    }).pipe(Effect.provide(fresh())))

  it.effect("a 409 Conflict is retried too", () =>
    Effect.gen(function*() {
      const rec = yield* recorder
      const fake = yield* FakeClient.FakeClient
      const object = yield* create("w")
      yield* fake.failNext("patch", Wire.failureStatus(409, "Conflict", "the object has been modified"), { times: 2 })
      yield* Finalizer.reconcile({
        resource: widgets,
        name: NAME,
        object,
        apply: rec.apply(),
        cleanup: rec.cleanup(),
        retry
      })
      assert.deepStrictEqual(finalizersOf(yield* get("w")), [NAME])
      assert.strictEqual((yield* patchWrites).length, 3)
    }).pipe(Effect.provide(fresh())))

  it.effect("retries are bounded: AddFailed with the last conflict, apply not run", () =>
    Effect.gen(function*() {
      const rec = yield* recorder
      const fake = yield* FakeClient.FakeClient
      const object = yield* create("w")
      yield* fake.failAlways("patch", Wire.failureStatus(409, "Conflict", "the object has been modified"))
      const error = yield* Effect.flip(
        Finalizer.reconcile({
          resource: widgets,
          name: NAME,
          object,
          apply: rec.apply(),
          cleanup: rec.cleanup(),
          retry
        })
      )
      assert.instanceOf(error, Finalizer.FinalizerError)
      if (!(error instanceof Finalizer.FinalizerError)) return
      assert.strictEqual(error.reason, "AddFailed")
      assert.strictEqual(error.finalizer, NAME)
      assert.strictEqual(error.object, "ns/w")
      assert.isTrue(ApiError.isApiError(error.cause))
      assert.strictEqual((yield* patchWrites).length, 5) // the first attempt and four retries
      assert.deepStrictEqual(yield* rec.calls, [])
    }).pipe(Effect.provide(fresh())))

  it.effect("a removal refused (not a conflict): RemoveFailed at once, the finalizer stays", () =>
    Effect.gen(function*() {
      const rec = yield* recorder
      const fake = yield* FakeClient.FakeClient
      yield* create("w", [NAME])
      const deleting = yield* markDeleted("w")
      yield* fake.failNext("patch", Wire.failureStatus(403, "Forbidden", "patch is forbidden"))
      const error = yield* Effect.flip(
        Finalizer.reconcile({
          resource: widgets,
          name: NAME,
          object: deleting,
          apply: rec.apply(),
          cleanup: rec.cleanup(),
          retry
        })
      )
      assert.strictEqual(error._tag, "FinalizerError")
      if (error._tag !== "FinalizerError") return
      assert.strictEqual(error.reason, "RemoveFailed")
      assert.strictEqual(error.cause?._tag, "StatusError")
      assert.deepStrictEqual(finalizersOf(yield* get("w")), [NAME])
      assert.strictEqual((yield* patchWrites).length, 1)
    }).pipe(Effect.provide(fresh())))

  it.effect("the object gone before the finalizer could be added: done, apply not run", () =>
    Effect.gen(function*() {
      const rec = yield* recorder
      const client = yield* Client.Client
      const object = yield* create("w")
      yield* client.delete(widgets, "w", { namespace: "ns" })
      const result = yield* Finalizer.reconcile({
        resource: widgets,
        name: NAME,
        object,
        apply: rec.apply(),
        cleanup: rec.cleanup(),
        retry
      })
      assert.deepStrictEqual(result, Controller.done)
      assert.deepStrictEqual(yield* rec.calls, [])
    }).pipe(Effect.provide(fresh())))

  it.effect("an invalid finalizer name, an unnamed object: FinalizerError, nothing written", () =>
    Effect.gen(function*() {
      const rec = yield* recorder
      const object = yield* create("w")
      const invalid = yield* Effect.flip(Finalizer.reconcile({
        resource: widgets,
        name: "Not Valid",
        object,
        apply: rec.apply(),
        cleanup: rec.cleanup()
      }))
      assert.strictEqual(invalid._tag === "FinalizerError" && invalid.reason, "InvalidName")
      const unnamed = yield* Effect.flip(Finalizer.reconcile({
        resource: widgets,
        name: NAME,
        object: { metadata: { namespace: "ns" } },
        apply: rec.apply(),
        cleanup: rec.cleanup()
      }))
      assert.strictEqual(unnamed._tag === "FinalizerError" && unnamed.reason, "UnnamedObject")
      assert.deepStrictEqual(yield* patchWrites, [])
    }).pipe(Effect.provide(fresh())))

  it.effect("a Client given explicitly is used (none needed in the context)", () =>
    Effect.gen(function*() {
      const fake = yield* FakeClient.make()
      const object = yield* fake.create(Resource.configMaps, { metadata: { name: "cm", namespace: "ns" } })
      const result = yield* Finalizer.reconcile({
        client: fake,
        resource: Resource.configMaps,
        name: NAME,
        object,
        apply: () => Effect.void,
        cleanup: () => Effect.void,
        retry
      })
      assert.deepStrictEqual(result, Controller.done)
      assert.deepStrictEqual(finalizersOf(yield* fake.get(Resource.configMaps, "cm", { namespace: "ns" })), [NAME])
    }).pipe(Effect.provide(FakeListerWatcher.layerSource())))

  it.live("the default retry schedule (Client.defaultRetry) retries a conflict", () =>
    Effect.gen(function*() {
      const fake = yield* FakeClient.FakeClient
      const object = yield* create("w")
      yield* fake.failNext("patch", Wire.failureStatus(409, "Conflict", "the object has been modified"))
      yield* Finalizer.reconcile({
        resource: widgets,
        name: NAME,
        object,
        apply: () => Effect.void,
        cleanup: () => Effect.void
      })
      assert.deepStrictEqual(finalizersOf(yield* get("w")), [NAME])
    }).pipe(Effect.provide(fresh())))
})

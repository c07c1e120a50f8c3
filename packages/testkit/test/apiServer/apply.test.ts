/**
 * Server-side apply, the engine: field sets, merges by key, ownership (conflicts, force, sharing, removal)
 * and the ownership non-apply writes take, as tables over plain JSON.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Result from "effect/Result"
import type { ApplyOptions, Writer } from "../../src/internal/apiServerApply.js"
import {
  applyConfig,
  compareObjects,
  conflictStatus,
  decodeManagedFields,
  FieldSet,
  fieldSetOf,
  lastAppliedAnnotation,
  managerFromUserAgent,
  mergeInto,
  pathString,
  recordUpdate,
  schemaFor,
  writeOptions
} from "../../src/internal/apiServerApply.js"
import type { JsonObject } from "../../src/internal/json.js"
import { assertStatus, call, events, openWatch, send, sleep, start } from "./fixtures.js"

const T0 = Date.UTC(2025, 0, 1, 0, 0, 0)
const at = (seconds: number) => T0 + seconds * 1000
const time = (seconds: number) => new Date(at(seconds)).toISOString().replace(/\.\d{3}Z$/, "Z")

const cm = (data: JsonObject, metadata: JsonObject = {}): JsonObject => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name: "cm", namespace: "default", ...metadata },
  data
})

const deployment = (containers: ReadonlyArray<JsonObject>, extra: JsonObject = {}): JsonObject => ({
  apiVersion: "apps/v1",
  kind: "Deployment",
  metadata: { name: "web", namespace: "default" },
  spec: { ...extra, template: { spec: { containers } } }
})

const options = (
  manager: string,
  rest: Partial<ApplyOptions> & { readonly apiVersion?: string; readonly kind?: string } = {}
): ApplyOptions => ({
  manager,
  force: false,
  apiVersion: "v1",
  kind: "ConfigMap",
  reset: "none",
  now: at(1),
  ...rest
})

/** Applies and expects success. */
const applied = (live: JsonObject | undefined, config: JsonObject, o: ApplyOptions): JsonObject => {
  const outcome = applyConfig(live, config, o)
  if (outcome._tag !== "Applied") assert.fail(`expected Applied, got ${JSON.stringify(outcome)}`)
  return outcome.object
}

const entries = (obj: JsonObject): Array<JsonObject> =>
  ((obj.metadata as JsonObject).managedFields ?? []) as Array<JsonObject>

const fieldsOf = (obj: JsonObject, manager: string, operation = "Apply"): unknown =>
  entries(obj).find((e) => e.manager === manager && e.operation === operation)?.fieldsV1

const update = (live: JsonObject | undefined, next: JsonObject, writer: Partial<Writer> & { manager: string }) => {
  const copy: JsonObject = { ...next, metadata: { ...(next.metadata as JsonObject) } }
  recordUpdate(live, copy, String(next.apiVersion), String(next.kind), { reset: "none", now: at(1), ...writer })
  return copy
}

describe("server-side apply: field sets", () => {
  const cases: ReadonlyArray<readonly [string, JsonObject, unknown]> = [
    [
      "a ConfigMap: every data key, labels, no system field membership",
      cm({ a: "1", b: "2" }, { labels: { app: "x" } }),
      {
        "f:apiVersion": {},
        "f:data": { "f:a": {}, "f:b": {} },
        "f:kind": {},
        "f:metadata": { "f:labels": { "f:app": {} }, "f:name": {}, "f:namespace": {} }
      }
    ],
    [
      "containers by name, ports by containerPort and protocol (defaulted), env by name, args atomic",
      deployment([{
        name: "web",
        image: "nginx",
        args: ["-v"],
        ports: [{ containerPort: 80 }, { containerPort: 53, protocol: "UDP" }],
        env: [{ name: "A", value: "1" }]
      }]),
      {
        "f:apiVersion": {},
        "f:kind": {},
        "f:metadata": { "f:name": {}, "f:namespace": {} },
        "f:spec": {
          "f:template": {
            "f:spec": {
              "f:containers": {
                "k:{\"name\":\"web\"}": {
                  ".": {},
                  "f:args": {},
                  "f:env": { "k:{\"name\":\"A\"}": { ".": {}, "f:name": {}, "f:value": {} } },
                  "f:image": {},
                  "f:name": {},
                  "f:ports": {
                    "k:{\"containerPort\":53,\"protocol\":\"UDP\"}": {
                      ".": {},
                      "f:containerPort": {},
                      "f:protocol": {}
                    },
                    "k:{\"containerPort\":80,\"protocol\":\"TCP\"}": { ".": {}, "f:containerPort": {} }
                  }
                }
              }
            }
          }
        }
      }
    ],
    [
      "finalizers are a set, ownerReferences keyed by uid, tolerations and selectors atomic, empty maps owned",
      {
        metadata: { finalizers: ["b", "a"], ownerReferences: [{ uid: "u1", name: "o" }], annotations: {} },
        spec: { selector: { matchLabels: { app: "x" } }, template: { spec: { tolerations: [{ key: "k" }] } } }
      },
      {
        "f:metadata": {
          "f:annotations": {},
          "f:finalizers": { "v:\"a\"": {}, "v:\"b\"": {} },
          "f:ownerReferences": { "k:{\"uid\":\"u1\"}": { ".": {}, "f:name": {}, "f:uid": {} } }
        },
        "f:spec": { "f:selector": {}, "f:template": { "f:spec": { "f:tolerations": {} } } }
      }
    ],
    [
      "a Service's ports are keyed by port and protocol",
      { apiVersion: "v1", kind: "Service", spec: { ports: [{ port: 80, targetPort: 8080 }] } },
      {
        "f:apiVersion": {},
        "f:kind": {},
        "f:spec": {
          "f:ports": { "k:{\"port\":80,\"protocol\":\"TCP\"}": { ".": {}, "f:port": {}, "f:targetPort": {} } }
        }
      }
    ]
  ]
  for (const [name, value, expected] of cases) {
    it(name, () => {
      const kind = typeof value.kind === "string" ? value.kind : "Deployment"
      const { errors, set } = fieldSetOf(value, schemaFor(kind), true)
      assert.deepStrictEqual(errors, [])
      assert.deepStrictEqual(set.toFieldsV1(), expected)
      assert.deepStrictEqual(FieldSet.fromFieldsV1(expected).toFieldsV1(), expected)
    })
  }

  it("reports items without keys and duplicate keys as kube-apiserver does", () => {
    const { errors } = fieldSetOf(
      deployment([{ name: "a", env: [{ name: "X" }, { name: "X" }] }, { image: "nginx" }]),
      schemaFor("Deployment"),
      true
    )
    assert.deepStrictEqual(errors, [
      ".spec.template.spec.containers: element 1: associative list with keys has an element that omits all key fields [\"name\"] (and doesn't have default values for any key fields)"
    ])
    const duplicates = fieldSetOf(
      deployment([{ name: "a", env: [{ name: "X" }, { name: "X" }] }]),
      schemaFor("Deployment"),
      true
    )
    assert.deepStrictEqual(duplicates.errors, [
      ".spec.template.spec.containers[name=\"a\"].env: duplicate entries for key [name=\"X\"]"
    ])
  })

  it("prints paths as kube-apiserver does", () => {
    const table: ReadonlyArray<readonly [ReadonlyArray<string>, string]> = [
      [["f:spec", "f:replicas"], ".spec.replicas"],
      [["f:spec", "f:containers", "k:{\"name\":\"web\"}", "f:image"], ".spec.containers[name=\"web\"].image"],
      [["f:ports", "k:{\"containerPort\":80,\"protocol\":\"TCP\"}"], ".ports[containerPort=80,protocol=\"TCP\"]"],
      [["f:metadata", "f:finalizers", "v:\"x\""], ".metadata.finalizers[=\"x\"]"],
      [["f:args", "i:0"], ".args[0]"]
    ]
    for (const [path, text] of table) assert.strictEqual(pathString(path), text)
  })

  it("set operations: union, difference, intersection, members with children", () => {
    const a = FieldSet.fromFieldsV1({ "f:a": { ".": {}, "f:b": {} }, "f:c": {} })
    const b = FieldSet.fromFieldsV1({ "f:a": { "f:b": {} }, "f:d": {} })
    assert.deepStrictEqual(a.union(b).toFieldsV1(), { "f:a": { ".": {}, "f:b": {} }, "f:c": {}, "f:d": {} })
    assert.deepStrictEqual(a.difference(b).toFieldsV1(), { "f:a": {}, "f:c": {} })
    assert.deepStrictEqual(a.intersection(b).toFieldsV1(), { "f:a": { "f:b": {} } })
    assert.isTrue(a.has(["f:a"]))
    assert.isFalse(b.has(["f:a"]))
    assert.isTrue(b.has(["f:a", "f:b"]))
    assert.throws(() => FieldSet.fromFieldsV1({ "x:y": {} }), /invalid path element/)
  })

  it("compares: added containers and maps are members, modified leaves, removed items", () => {
    const schema = schemaFor("ConfigMap")
    const c = compareObjects(cm({ a: "1", b: "2" }), cm({ a: "3", c: "4" }, { labels: { x: "y" } }), schema)!
    assert.deepStrictEqual(c.modified.toFieldsV1(), { "f:data": { "f:a": {} } })
    assert.deepStrictEqual(c.added.toFieldsV1(), {
      "f:data": { "f:c": {} },
      "f:metadata": { "f:labels": { ".": {}, "f:x": {} } }
    })
    assert.deepStrictEqual(c.removed.toFieldsV1(), { "f:data": { "f:b": {} } })
  })
})

describe("server-side apply: merging by key", () => {
  const schema = schemaFor("Deployment")
  const cases: ReadonlyArray<readonly [string, unknown, unknown, unknown]> = [
    [
      "maps merge key by key; null removes",
      { a: { x: 1, y: 2 }, b: 1 },
      { a: { y: 3, z: 4 }, b: null },
      { a: { x: 1, y: 3, z: 4 } }
    ],
    [
      "containers merge by name: the applied ones in their order, the others where they were",
      { spec: { containers: [{ name: "a", image: "1" }, { name: "b", image: "2", ports: [{ containerPort: 80 }] }] } },
      {
        spec: { containers: [{ name: "c", image: "3" }, { name: "b", ports: [{ containerPort: 80, name: "http" }] }] }
      },
      {
        spec: {
          containers: [
            { name: "a", image: "1" },
            { name: "c", image: "3" },
            { name: "b", image: "2", ports: [{ containerPort: 80, name: "http" }] }
          ]
        }
      }
    ],
    [
      "a port without protocol is the TCP one",
      { spec: { containers: [{ name: "a", ports: [{ containerPort: 80, protocol: "TCP", name: "x" }] }] } },
      { spec: { containers: [{ name: "a", ports: [{ containerPort: 80, hostPort: 8080 }] }] } },
      {
        spec: {
          containers: [{ name: "a", ports: [{ containerPort: 80, protocol: "TCP", name: "x", hostPort: 8080 }] }]
        }
      }
    ],
    [
      "finalizers are a set: union",
      { metadata: { finalizers: ["a", "b"] } },
      { metadata: { finalizers: ["c", "a"] } },
      { metadata: { finalizers: ["c", "a", "b"] } }
    ],
    [
      "atomic lists and selectors are replaced",
      { spec: { selector: { matchLabels: { a: "1" } }, template: { spec: { tolerations: [{ key: "a" }] } } } },
      { spec: { selector: { matchLabels: { b: "2" } }, template: { spec: { tolerations: [{ key: "b" }] } } } },
      { spec: { selector: { matchLabels: { b: "2" } }, template: { spec: { tolerations: [{ key: "b" }] } } } }
    ]
  ]
  for (const [name, live, config, expected] of cases) {
    it(name, () => assert.deepStrictEqual(mergeInto(live, config, schema), expected))
  }
})

describe("server-side apply: ownership", () => {
  it("creates: the applier owns exactly what it applied, at the time it applied", () => {
    const obj = applied(undefined, cm({ a: "1" }), options("mgr-a"))
    assert.deepStrictEqual(obj.data as JsonObject, { a: "1" })
    assert.deepStrictEqual(entries(obj), [{
      manager: "mgr-a",
      operation: "Apply",
      apiVersion: "v1",
      time: time(1),
      fieldsType: "FieldsV1",
      fieldsV1: { "f:data": { "f:a": {} } }
    }])
  })

  it("conflicts when another manager owns a field whose value the apply changes; the same value is shared", () => {
    const a = applied(undefined, cm({ x: "1", y: "1" }), options("mgr-a"))
    const outcome = applyConfig(a, cm({ x: "2", y: "1" }), options("mgr-b"))
    assert.strictEqual(outcome._tag, "Conflicts")
    const status = conflictStatus(outcome._tag === "Conflicts" ? outcome.conflicts : [])
    assert.strictEqual(status.code, 409)
    assert.strictEqual(status.reason, "Conflict")
    assert.strictEqual(status.message, "Apply failed with 1 conflict: conflict with \"mgr-a\": .data.x")
    assert.deepStrictEqual(status.details, {
      causes: [{ reason: "FieldManagerConflict", message: "conflict with \"mgr-a\"", field: ".data.x" }]
    })

    const shared = applied(a, cm({ y: "1" }), options("mgr-b", { now: at(2) }))
    assert.deepStrictEqual(fieldsOf(shared, "mgr-a"), { "f:data": { "f:x": {}, "f:y": {} } })
    assert.deepStrictEqual(fieldsOf(shared, "mgr-b"), { "f:data": { "f:y": {} } })
    // nothing changed: the new entry has no time, the object is the same
    assert.isUndefined(entries(shared).find((e) => e.manager === "mgr-b")!.time)
    assert.deepStrictEqual(shared.data, { x: "1", y: "1" })
  })

  it("several conflicts: grouped by manager, sorted; Update managers print their apiVersion", () => {
    let obj = applied(undefined, cm({ a: "1", b: "1" }), options("zeta"))
    obj = update(obj, { ...obj, data: { a: "1", b: "1", c: "1" } }, { manager: "kubectl-edit", now: at(2) })
    const outcome = applyConfig(obj, cm({ a: "2", b: "2", c: "2" }), options("alpha"))
    assert.strictEqual(outcome._tag, "Conflicts")
    const status = conflictStatus(outcome._tag === "Conflicts" ? outcome.conflicts : [])
    assert.strictEqual(
      status.message,
      "Apply failed with 3 conflicts: conflicts with \"kubectl-edit\" using v1:\n- .data.c\nconflicts with \"zeta\":\n- .data.a\n- .data.b"
    )
    assert.deepStrictEqual(status.details!.causes!.map((c) => c.field), [".data.c", ".data.a", ".data.b"])
    assert.strictEqual(status.details!.causes![0].message, "conflict with \"kubectl-edit\" using v1")
  })

  it("force takes the conflicting fields; a manager left with nothing disappears", () => {
    const a = applied(undefined, cm({ x: "1" }), options("mgr-a"))
    const forced = applied(a, cm({ x: "2" }), options("mgr-b", { force: true, now: at(5) }))
    assert.deepStrictEqual(forced.data, { x: "2" })
    assert.deepStrictEqual(entries(forced).map((e) => [e.manager, e.fieldsV1, e.time]), [
      ["mgr-b", { "f:data": { "f:x": {} } }, time(5)]
    ])
    // and only the conflicting ones
    const ab = applied(undefined, cm({ x: "1", y: "1" }), options("mgr-a"))
    const partly = applied(ab, cm({ x: "2" }), options("mgr-b", { force: true }))
    assert.deepStrictEqual(fieldsOf(partly, "mgr-a"), { "f:data": { "f:y": {} } })
  })

  it("removes a field the applier stops applying, unless another manager owns it", () => {
    const first = applied(undefined, cm({ x: "1", y: "1", z: "1" }, { labels: { app: "a" } }), options("mgr-a"))
    const shared = applied(first, cm({ y: "1" }), options("mgr-b"))
    const second = applied(shared, cm({ x: "1" }), options("mgr-a", { now: at(3) }))
    // z and the label were mgr-a's alone: gone; y is mgr-b's too: kept, owned by mgr-b only
    assert.deepStrictEqual(second.data, { x: "1", y: "1" })
    assert.isUndefined((second.metadata as JsonObject).labels)
    assert.deepStrictEqual(fieldsOf(second, "mgr-a"), { "f:data": { "f:x": {} } })
    assert.deepStrictEqual(fieldsOf(second, "mgr-b"), { "f:data": { "f:y": {} } })
    // system fields are never removed
    assert.strictEqual((second.metadata as JsonObject).name, "cm")
  })

  it("removes a container the applier stops applying; keeps one another manager has a field in", () => {
    const o = options("mgr-a", { apiVersion: "apps/v1", kind: "Deployment" })
    const first = applied(undefined, deployment([{ name: "a", image: "1" }, { name: "b", image: "2" }]), o)
    const second = applied(first, deployment([{ name: "a", image: "1" }]), o)
    assert.deepStrictEqual((second.spec as any).template.spec.containers, [{ name: "a", image: "1" }])
    const withOther = applied(
      first,
      deployment([{ name: "b", resources: { limits: { cpu: "1" } } }]),
      options("mgr-b", { apiVersion: "apps/v1", kind: "Deployment" })
    )
    const third = applied(withOther, deployment([{ name: "a", image: "1" }]), o)
    assert.deepStrictEqual((third.spec as any).template.spec.containers, [
      { name: "a", image: "1" },
      { name: "b", resources: { limits: { cpu: "1" } } }
    ])
  })

  it("an object nobody manages: its fields become before-first-apply's on the first apply", () => {
    const live = cm({ x: "1", other: "u" })
    const conflict = applyConfig(live, cm({ x: "2" }), options("mgr-a"))
    assert.strictEqual(conflict._tag, "Conflicts")
    assert.strictEqual(
      conflictStatus(conflict._tag === "Conflicts" ? conflict.conflicts : []).message,
      "Apply failed with 1 conflict: conflict with \"before-first-apply\" using v1: .data.x"
    )
    const first = applied(live, cm({ x: "1", y: "2" }), options("mgr-a"))
    assert.deepStrictEqual(entries(first).map((e) => [e.manager, e.operation, e.fieldsV1]), [
      ["mgr-a", "Apply", { "f:data": { "f:x": {}, "f:y": {} } }],
      ["before-first-apply", "Update", { "f:data": { ".": {}, "f:other": {}, "f:x": {} } }]
    ])
    // what mgr-a stops applying goes, unless before-first-apply has it too
    const second = applied(first, cm({}), options("mgr-a"))
    assert.deepStrictEqual(second.data, { x: "1", other: "u" })
  })

  it("an update of an object nobody manages records no manager (only creates and applies start tracking)", () => {
    const put = update(cm({ x: "1" }), cm({ x: "2" }), { manager: "kubectl-edit" })
    assert.notProperty(put.metadata as JsonObject, "managedFields")
  })

  it("one Apply entry per manager whatever the version; Update entries per version; ordered", () => {
    let obj = update(undefined, cm({ a: "1" }), { manager: "kubectl-create", now: at(1) })
    obj = applied(obj, cm({ a: "1", b: "1" }), options("ssa", { now: at(3) }))
    obj = update(obj, { ...obj, data: { ...(obj.data as JsonObject), c: "1" } }, {
      manager: "kubectl-edit",
      now: at(2)
    })
    obj = applied(obj, cm({ a: "1", b: "2" }), options("ssa", { now: at(4) }))
    assert.deepStrictEqual(entries(obj).map((e) => [e.manager, e.operation, e.time]), [
      ["ssa", "Apply", time(4)],
      ["kubectl-create", "Update", time(1)],
      ["kubectl-edit", "Update", time(2)]
    ])
  })

  it("ignores status on a resource with a status subresource; owns only status on the subresource", () => {
    const live = update(undefined, { ...deployment([{ name: "a" }]), status: { replicas: 1 } }, {
      manager: "creator",
      reset: "status"
    })
    const o = options("mgr", { apiVersion: "apps/v1", kind: "Deployment", reset: "status" })
    const obj = applied(live, { ...deployment([{ name: "a", image: "x" }]), status: { replicas: 5 } }, o)
    assert.deepStrictEqual(obj.status, { replicas: 1 })
    assert.notProperty(fieldsOf(obj, "mgr") as JsonObject, "f:status")
    const onStatus = applied(
      live,
      { ...deployment([{ name: "a", image: "y" }]), status: { replicas: 5 } },
      options("ctl", { apiVersion: "apps/v1", kind: "Deployment", reset: "nonStatus", subresource: "status" })
    )
    assert.deepStrictEqual(onStatus.status, { replicas: 5 })
    assert.deepStrictEqual((onStatus.spec as any).template.spec.containers, [{ name: "a" }])
    assert.deepStrictEqual(entries(onStatus)[0], {
      manager: "ctl",
      operation: "Apply",
      apiVersion: "apps/v1",
      time: time(1),
      fieldsType: "FieldsV1",
      fieldsV1: { "f:status": { "f:replicas": {} } },
      subresource: "status"
    })
  })

  it("rejects configurations the merge topology cannot key", () => {
    const outcome = applyConfig(
      undefined,
      deployment([{ name: "a" }, { name: "a" }]),
      options("m", { apiVersion: "apps/v1", kind: "Deployment" })
    )
    assert.deepStrictEqual(outcome, {
      _tag: "Invalid",
      message:
        "failed to create typed patch object (default/web; apps/v1, Kind=Deployment): .spec.template.spec.containers: duplicate entries for key [name=\"a\"]"
    })
  })

  it("kubectl may take over what client-side apply owned, and keeps its annotation in step", () => {
    const lastApplied = JSON.stringify(cm({ x: "1" })) + "\n"
    const created = update(undefined, cm({ x: "1" }, { annotations: { [lastAppliedAnnotation]: lastApplied } }), {
      manager: "kubectl-client-side-apply"
    })
    const other = applyConfig(created, cm({ x: "2" }), options("someone-else"))
    assert.strictEqual(other._tag, "Conflicts")
    const obj = applied(created, cm({ x: "2" }), options("kubectl"))
    assert.deepStrictEqual(obj.data, { x: "2" })
    assert.strictEqual(
      ((obj.metadata as JsonObject).annotations as JsonObject)[lastAppliedAnnotation],
      JSON.stringify(cm({ x: "2" })) + "\n"
    )
    assert.deepStrictEqual(fieldsOf(obj, "kubectl"), { "f:data": { "f:x": {} } })
  })
})

describe("server-side apply: ownership of non-apply writes", () => {
  it("create: the writer owns what it wrote, maps and new items included (\".\")", () => {
    const obj = update(undefined, {
      ...deployment([{ name: "a", image: "1" }]),
      metadata: { name: "web", labels: { app: "x" } }
    }, {
      manager: "kubectl-create"
    })
    assert.deepStrictEqual(entries(obj), [{
      manager: "kubectl-create",
      operation: "Update",
      apiVersion: "apps/v1",
      time: time(1),
      fieldsType: "FieldsV1",
      fieldsV1: {
        "f:metadata": { "f:labels": { ".": {}, "f:app": {} } },
        "f:spec": {
          "f:template": {
            "f:spec": { "f:containers": { "k:{\"name\":\"a\"}": { ".": {}, "f:image": {}, "f:name": {} } } }
          }
        }
      }
    }])
  })

  it("update after a PUT: the changed fields move to the writer, removed ones leave everyone", () => {
    const a = applied(undefined, cm({ x: "1", y: "1", z: "1" }), options("ssa"))
    const put = update(a, { ...a, data: { x: "2", y: "1" } }, { manager: "kubectl-edit", now: at(2) })
    assert.deepStrictEqual(fieldsOf(put, "ssa"), { "f:data": { "f:y": {} } })
    assert.deepStrictEqual(fieldsOf(put, "kubectl-edit", "Update"), { "f:data": { "f:x": {} } })
    // the applier changing x back conflicts with the updater
    const outcome = applyConfig(put, cm({ x: "1", y: "1" }), options("ssa"))
    assert.strictEqual(outcome._tag, "Conflicts")
    assert.strictEqual(
      conflictStatus(outcome._tag === "Conflicts" ? outcome.conflicts : []).message,
      "Apply failed with 1 conflict: conflict with \"kubectl-edit\" using v1: .data.x"
    )
  })

  it("a write that changes nothing keeps the managed fields as they are; [{}] clears them", () => {
    const a = applied(undefined, cm({ x: "1" }), options("ssa"))
    const same = update(a, { ...a, metadata: { ...(a.metadata as JsonObject) } }, { manager: "other", now: at(9) })
    assert.strictEqual((same.metadata as JsonObject).managedFields, (a.metadata as JsonObject).managedFields)
    const cleared = update(a, { ...a, metadata: { ...(a.metadata as JsonObject), managedFields: [{}] } }, {
      manager: "other"
    })
    assert.notProperty(cleared.metadata as JsonObject, "managedFields")
    // without managedFields in the body, the live ones are kept
    const { managedFields: _, ...bare } = a.metadata as JsonObject
    const kept = update(a, { ...a, metadata: bare, data: { x: "1", y: "2" } }, { manager: "other" })
    assert.deepStrictEqual(entries(kept).map((e) => e.manager), ["ssa", "other"])
  })

  it("a status write is recorded with its subresource; main resource writes do not own status", () => {
    const live = update(undefined, { ...deployment([{ name: "a" }]), status: { replicas: 1 } }, {
      manager: "creator",
      reset: "status"
    })
    const status = update(live, { ...live, status: { replicas: 2 } }, {
      manager: "ctl",
      subresource: "status",
      reset: "nonStatus"
    })
    const ctl = entries(status).find((e) => e.manager === "ctl")!
    assert.deepStrictEqual(ctl.subresource, "status")
    assert.deepStrictEqual(ctl.fieldsV1, { "f:status": { "f:replicas": {} } })
    const main = update(live, { ...live, status: { replicas: 3 }, metadata: { name: "web", labels: { a: "b" } } }, {
      manager: "m",
      reset: "status"
    })
    assert.deepStrictEqual(entries(main).find((e) => e.manager === "m")!.fieldsV1, {
      "f:metadata": { "f:labels": { ".": {}, "f:a": {} } }
    })
  })

  it("keeps at most 10 Update entries: the oldest merge into ancient-changes", () => {
    let obj: JsonObject = update(undefined, cm({}), { manager: "creator" })
    for (let i = 0; i < 12; i++) {
      obj = update(obj, { ...obj, data: { ...(obj.data as JsonObject), [`k${i}`]: "v" } }, {
        manager: `m${i}`,
        now: at(i)
      })
    }
    const managers = entries(obj).map((e) => e.manager)
    assert.strictEqual(managers.length, 10)
    assert.strictEqual(managers[0], "ancient-changes")
    // m0 (the oldest), then creator, m1 and m2 merged into one bucket
    assert.deepStrictEqual(entries(obj)[0].fieldsV1, { "f:data": { ".": {}, "f:k0": {}, "f:k1": {}, "f:k2": {} } })
  })

  it("decodes only valid managedFields", () => {
    assert.strictEqual(
      decodeManagedFields([{ manager: "m", operation: "Patch", apiVersion: "v1" }]),
      "operation must be `Apply` or `Update`"
    )
    assert.strictEqual(
      decodeManagedFields([{ manager: "m", operation: "Apply", apiVersion: "v1" }]),
      "missing fieldsType in managed fields entry 0"
    )
    const ok = decodeManagedFields([{ manager: "m", operation: "Apply", apiVersion: "v1", fieldsType: "FieldsV1" }])
    assert.instanceOf(ok, Map)
  })
})

describe("server-side apply: write options", () => {
  it("requires a field manager for apply, forbids force elsewhere, bounds its length", () => {
    const missing = writeOptions({
      kind: "PatchOptions",
      apply: true,
      fieldManager: undefined,
      force: undefined,
      userAgent: "x"
    })
    assert.deepStrictEqual(
      missing,
      Result.fail({
        kind: "Status",
        apiVersion: "v1",
        metadata: {},
        status: "Failure",
        message: "PatchOptions.meta.k8s.io \"\" is invalid: fieldManager: Required value: is required for apply patch",
        reason: "Invalid",
        details: {
          group: "meta.k8s.io",
          kind: "PatchOptions",
          causes: [{
            reason: "FieldValueRequired",
            field: "fieldManager",
            message: "Required value: is required for apply patch"
          }]
        },
        code: 422
      })
    )
    const forced = writeOptions({
      kind: "PatchOptions",
      apply: false,
      fieldManager: undefined,
      force: "true",
      userAgent: "x"
    })
    assert.strictEqual(
      Result.getFailure(forced).pipe(Option.map((s) => s.message), Option.getOrUndefined),
      "PatchOptions.meta.k8s.io \"\" is invalid: force: Forbidden: may not be specified for non-apply patch"
    )
    const long = writeOptions({
      kind: "CreateOptions",
      apply: false,
      fieldManager: "m".repeat(129),
      force: undefined,
      userAgent: "x"
    })
    assert.strictEqual(
      Result.getFailure(long).pipe(Option.map((s) => s.message), Option.getOrUndefined),
      "CreateOptions.meta.k8s.io \"\" is invalid: fieldManager: Too long: may not be more than 128 bytes"
    )
    assert.deepStrictEqual(
      writeOptions({ kind: "PatchOptions", apply: true, fieldManager: "m", force: "true", userAgent: undefined }),
      Result.succeed({ manager: "m", force: true })
    )
    assert.deepStrictEqual(
      writeOptions({
        kind: "UpdateOptions",
        apply: false,
        fieldManager: undefined,
        force: undefined,
        userAgent: "kubectl/v1.32.0 (linux/amd64)"
      }),
      Result.succeed({ manager: "kubectl", force: false })
    )
    assert.strictEqual(managerFromUserAgent("a\u0007b/1"), "ab")
  })
})

const APPLY = "application/apply-patch+yaml"

const applyRequest = (url: string, body: unknown, query: string, userAgent?: string) =>
  call(`${url}${query === "" ? "" : `?${query}`}`, {
    method: "PATCH",
    headers: { "content-type": APPLY, ...(userAgent === undefined ? {} : { "user-agent": userAgent }) },
    body: typeof body === "string" ? body : JSON.stringify(body)
  })

describe("server-side apply over HTTP", () => {
  it.live("PATCH application/apply-patch+yaml creates (201) then updates (200); GET returns managedFields", () =>
    Effect.gen(function*() {
      const server = yield* start()
      const url = `${server.url}/apis/apps/v1/namespaces/default/deployments/web`
      const created = yield* applyRequest(
        url,
        deployment([{ name: "web", image: "nginx:1" }], { replicas: 2 }),
        "fieldManager=ci"
      )
      assert.strictEqual(created.status, 201, created.text)
      assert.match(created.json.metadata.uid, /^[0-9a-f-]{36}$/)
      assert.match(created.json.metadata.creationTimestamp, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/)
      assert.strictEqual(created.json.metadata.generation, 1)
      assert.deepStrictEqual(
        created.json.metadata.managedFields.map((e: any) => [e.manager, e.operation, e.apiVersion]),
        [
          ["ci", "Apply", "apps/v1"]
        ]
      )
      const updated = yield* applyRequest(
        url,
        deployment([{ name: "web", image: "nginx:2" }], { replicas: 2 }),
        "fieldManager=ci"
      )
      assert.strictEqual(updated.status, 200, updated.text)
      assert.strictEqual(updated.json.spec.template.spec.containers[0].image, "nginx:2")
      assert.strictEqual(updated.json.metadata.generation, 2)
      assert.isAbove(Number(updated.json.metadata.resourceVersion), Number(created.json.metadata.resourceVersion))
      const got = yield* call(url)
      assert.deepStrictEqual(got.json.metadata.managedFields, updated.json.metadata.managedFields)
      // the same configuration again: nothing written
      const again = yield* applyRequest(
        url,
        deployment([{ name: "web", image: "nginx:2" }], { replicas: 2 }),
        "fieldManager=ci"
      )
      assert.strictEqual(again.status, 200)
      assert.strictEqual(again.json.metadata.resourceVersion, updated.json.metadata.resourceVersion)
    }))

  it.live("answers a conflict with 409 and one cause per field; force=true takes the fields", () =>
    Effect.gen(function*() {
      const server = yield* start()
      const url = `${server.url}/api/v1/namespaces/default/configmaps/cm`
      assert.strictEqual((yield* applyRequest(url, cm({ a: "1", b: "1" }), "fieldManager=one")).status, 201)
      const conflict = yield* applyRequest(url, cm({ a: "2", b: "2" }), "fieldManager=two&force=false")
      assertStatus(conflict, 409, "Conflict")
      assert.strictEqual(
        conflict.json.message,
        "Apply failed with 2 conflicts: conflicts with \"one\":\n- .data.a\n- .data.b"
      )
      assert.deepStrictEqual(conflict.json.details, {
        causes: [
          { reason: "FieldManagerConflict", message: "conflict with \"one\"", field: ".data.a" },
          { reason: "FieldManagerConflict", message: "conflict with \"one\"", field: ".data.b" }
        ]
      })
      const forced = yield* applyRequest(url, cm({ a: "2" }), "fieldManager=two&force=true")
      assert.strictEqual(forced.status, 200, forced.text)
      assert.deepStrictEqual(forced.json.data, { a: "2", b: "1" })
      assert.deepStrictEqual(forced.json.metadata.managedFields.map((e: any) => [e.manager, e.fieldsV1]), [
        ["one", { "f:data": { "f:b": {} } }],
        ["two", { "f:data": { "f:a": {} } }]
      ])
    }))

  it.live("checks the request as kube-apiserver does", () =>
    Effect.gen(function*() {
      const server = yield* start()
      const url = `${server.url}/api/v1/namespaces/default/configmaps/cm`
      const noManager = yield* applyRequest(url, cm({ a: "1" }), "")
      assertStatus(noManager, 422, "Invalid")
      assert.strictEqual(
        noManager.json.message,
        "PatchOptions.meta.k8s.io \"\" is invalid: fieldManager: Required value: is required for apply patch"
      )
      assert.deepStrictEqual(noManager.json.details, {
        group: "meta.k8s.io",
        kind: "PatchOptions",
        causes: [{
          reason: "FieldValueRequired",
          field: "fieldManager",
          message: "Required value: is required for apply patch"
        }]
      })
      const created = yield* applyRequest(url, cm({ a: "1" }), "fieldManager=m")
      assert.strictEqual(created.status, 201)
      const forceOnMerge = yield* call(`${url}?force=true`, {
        method: "PATCH",
        headers: { "content-type": "application/merge-patch+json" },
        body: "{}"
      })
      assertStatus(forceOnMerge, 422, "Invalid")
      assert.match(forceOnMerge.json.message, /force: Forbidden: may not be specified for non-apply patch/)
      const stale = yield* applyRequest(url, cm({ a: "2" }, { resourceVersion: "1000" }), "fieldManager=m")
      assertStatus(stale, 409, "Conflict")
      assert.match(stale.json.message, /the object has been modified/)
      const current = yield* applyRequest(
        url,
        cm({ a: "2" }, { resourceVersion: created.json.metadata.resourceVersion }),
        "fieldManager=m"
      )
      assert.strictEqual(current.status, 200, current.text)
      const withManaged = yield* applyRequest(url, cm({ a: "1" }, { managedFields: [] }), "fieldManager=m")
      assertStatus(withManaged, 400, "BadRequest")
      assert.strictEqual(withManaged.json.message, "metadata.managedFields must be nil")
      const wrongVersion = yield* applyRequest(url, { ...cm({}), apiVersion: "v2" }, "fieldManager=m")
      assertStatus(wrongVersion, 400, "BadRequest")
      assert.strictEqual(wrongVersion.json.message, "invalid object type: /v2, Kind=ConfigMap")
      const otherName = yield* applyRequest(url, cm({}, { name: "other" }), "fieldManager=m")
      assertStatus(otherName, 400, "BadRequest")
      assert.strictEqual(
        otherName.json.message,
        "the name of the object (other) does not match the name on the URL (cm)"
      )
      const uid = yield* applyRequest(`${url}-new`, cm({}, { name: "cm-new", uid: "u-1" }), "fieldManager=m")
      assertStatus(uid, 409, "Conflict")
      assert.match(
        uid.json.message,
        /uid mismatch: the provided object specified uid u-1, and no existing object was found/
      )
      const duplicates = yield* applyRequest(
        `${server.url}/apis/apps/v1/namespaces/default/deployments/web`,
        deployment([{ name: "a" }, { name: "a" }]),
        "fieldManager=m"
      )
      assert.strictEqual(duplicates.status, 500)
      assert.match(duplicates.json.message, /duplicate entries for key \[name="a"\]/)
      const notYaml = yield* applyRequest(url, "a: [", "fieldManager=m")
      assertStatus(notYaml, 400, "BadRequest")
      const list = yield* applyRequest(url, "[1]", "fieldManager=m")
      assertStatus(list, 400, "BadRequest")
      const longManager = yield* applyRequest(url, cm({}), `fieldManager=${"m".repeat(129)}`)
      assertStatus(longManager, 422, "Invalid")
    }))

  it.live("applies cluster-scoped objects and keyed Service ports", () =>
    Effect.gen(function*() {
      const server = yield* start()
      const ns = yield* applyRequest(
        `${server.url}/api/v1/namespaces/team`,
        { apiVersion: "v1", kind: "Namespace", metadata: { name: "team", labels: { owner: "a" } } },
        "fieldManager=m"
      )
      assert.strictEqual(ns.status, 201, ns.text)
      assert.notProperty(ns.json.metadata, "namespace")
      const url = `${server.url}/api/v1/namespaces/team/services/web`
      const service = (ports: ReadonlyArray<JsonObject>) => ({
        apiVersion: "v1",
        kind: "Service",
        metadata: { name: "web", namespace: "team" },
        spec: { ports }
      })
      yield* applyRequest(url, service([{ port: 80, targetPort: 8080 }]), "fieldManager=a")
      const merged = yield* applyRequest(url, service([{ port: 443, protocol: "TCP" }]), "fieldManager=b")
      assert.deepStrictEqual(merged.json.spec.ports, [{ port: 80, targetPort: 8080 }, { port: 443, protocol: "TCP" }])
    }))

  it.live("reads a YAML body", () =>
    Effect.gen(function*() {
      const server = yield* start()
      const url = `${server.url}/api/v1/namespaces/default/configmaps/from-yaml`
      const yaml = [
        "apiVersion: v1",
        "kind: ConfigMap",
        "metadata:",
        "  name: from-yaml",
        "data:",
        "  when: 2024-01-01",
        "  flag: \"yes\"",
        ""
      ].join("\n")
      const created = yield* applyRequest(url, yaml, "fieldManager=m")
      assert.strictEqual(created.status, 201, created.text)
      assert.deepStrictEqual(created.json.data, { when: "2024-01-01", flag: "yes" })
    }))

  it.live("non-apply writes own what they change, as the fieldManager or the user agent's prefix", () =>
    Effect.gen(function*() {
      const server = yield* start()
      const base = `${server.url}/api/v1/namespaces/default/configmaps`
      const created = yield* call(`${base}?fieldManager=creator`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(cm({ a: "1" }))
      })
      assert.strictEqual(created.status, 201, created.text)
      assert.deepStrictEqual(created.json.metadata.managedFields, [{
        manager: "creator",
        operation: "Update",
        apiVersion: "v1",
        time: created.json.metadata.creationTimestamp,
        fieldsType: "FieldsV1",
        fieldsV1: { "f:data": { ".": {}, "f:a": {} } }
      }])
      const put = yield* call(`${base}/cm`, {
        method: "PUT",
        headers: { "content-type": "application/json", "user-agent": "my-controller/1.0 (linux)" },
        body: JSON.stringify({ ...created.json, data: { a: "2", b: "1" } })
      })
      assert.strictEqual(put.status, 200, put.text)
      assert.deepStrictEqual(put.json.metadata.managedFields.map((e: any) => [e.manager, e.fieldsV1]), [
        ["creator", { "f:data": {} }],
        ["my-controller", { "f:data": { "f:a": {}, "f:b": {} } }]
      ])
      const patched = yield* send(
        `${base}/cm?fieldManager=patcher`,
        "PATCH",
        { data: { b: "2" } },
        "application/merge-patch+json"
      )
      assert.deepStrictEqual(patched.json.metadata.managedFields.map((e: any) => e.manager), [
        "creator",
        "my-controller",
        "patcher"
      ])
      // an apply now conflicts with the updater that changed b last
      const applied = yield* applyRequest(`${base}/cm`, cm({ b: "3" }), "fieldManager=ssa")
      assertStatus(applied, 409, "Conflict")
      assert.strictEqual(
        applied.json.message,
        "Apply failed with 1 conflict: conflict with \"patcher\" using v1: .data.b"
      )
      // managedFields: [{}] clears them
      const cleared = yield* send(
        `${base}/cm`,
        "PATCH",
        { metadata: { managedFields: [{}] } },
        "application/merge-patch+json"
      )
      assert.notProperty(cleared.json.metadata, "managedFields")
    }))

  it.live("ignores status on the main resource of a type with a status subresource; applies status on /status", () =>
    Effect.gen(function*() {
      const server = yield* start()
      const url = `${server.url}/api/v1/namespaces/default/pods/p`
      const podConfig = (image: string, phase: string) => ({
        apiVersion: "v1",
        kind: "Pod",
        metadata: { name: "p", namespace: "default" },
        spec: { containers: [{ name: "c", image }] },
        status: { phase }
      })
      const created = yield* applyRequest(url, podConfig("a", "Running"), "fieldManager=m")
      assert.strictEqual(created.status, 201, created.text)
      assert.isUndefined(created.json.status)
      assert.notProperty(created.json.metadata.managedFields[0].fieldsV1, "f:status")
      const missing = yield* applyRequest(`${url}-missing/status`, podConfig("a", "Running"), "fieldManager=kubelet")
      assertStatus(missing, 404, "NotFound")
      const status = yield* applyRequest(`${url}/status`, podConfig("b", "Running"), "fieldManager=kubelet")
      assert.strictEqual(status.status, 200, status.text)
      assert.deepStrictEqual(status.json.status, { phase: "Running" })
      assert.strictEqual(status.json.spec.containers[0].image, "a")
      const entry = status.json.metadata.managedFields.find((e: any) => e.manager === "kubelet")
      assert.strictEqual(entry.subresource, "status")
      assert.deepStrictEqual(entry.fieldsV1, { "f:status": { "f:phase": {} } })
    }))

  it.live("watch events carry the managedFields (they are part of the object)", () =>
    Effect.gen(function*() {
      const server = yield* start()
      const w = yield* openWatch(`${server.url}/api/v1/namespaces/default/configmaps?watch=true`)
      yield* sleep(50)
      yield* applyRequest(`${server.url}/api/v1/namespaces/default/configmaps/cm`, cm({ a: "1" }), "fieldManager=m")
      for (let i = 0; i < 100 && w.lines.length === 0; i++) yield* sleep(20)
      const [event] = events(w)
      assert.strictEqual(event.type, "ADDED")
      assert.strictEqual(event.object.metadata.managedFields[0].manager, "m")
    }))
})

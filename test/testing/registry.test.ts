/**
 * kube-apiserver's registry rules, as `ApiStore` gives them to every in-memory front end (the fake Client,
 * the test kit's server): tables of resources and writes against what kube-apiserver does.
 */
import { assert, describe, it } from "@effect/vitest"
import * as ApiStore from "../../src/ApiStore.js"
import * as Resource from "../../src/Resource.js"
import { widgets } from "../fixtures/index.js"

const resourceQuotas = Resource.make({
  group: "",
  version: "v1",
  resource: "resourcequotas",
  kind: "ResourceQuota",
  namespaced: true
})

describe("ApiStore registry rules", () => {
  it("resourceTraits: built-ins as kube-apiserver serves them, anything else as a custom resource", () => {
    // name, resource, status override: status subresource, generation, custom, annotations move it, propagation
    const table: ReadonlyArray<
      readonly [string, Resource.Resource<unknown>, boolean | undefined, boolean, boolean, boolean, boolean, string]
    > = [
      [
        "configmaps: no status, no generation",
        Resource.configMaps,
        undefined,
        false,
        false,
        false,
        false,
        "Background"
      ],
      ["pods: status and generation", Resource.pods, undefined, true, true, false, false, "Background"],
      ["deployments: annotations too", Resource.deployments, undefined, true, true, false, true, "Background"],
      ["batch/v1 jobs: orphaned by default", Resource.jobs, undefined, true, true, false, false, "Orphan"],
      ["leases: neither", Resource.leases, undefined, false, false, false, false, "Background"],
      [
        "resourcequotas: a built-in outside the catalog",
        resourceQuotas,
        undefined,
        true,
        false,
        false,
        false,
        "Background"
      ],
      ["a custom resource: status (kubebuilder's)", widgets, undefined, true, true, true, false, "Background"],
      ["a custom resource without status", widgets, false, false, true, true, false, "Background"]
    ]
    for (
      const [name, resource, status, statusSubresource, tracksGeneration, custom, onAnnotations, propagation] of table
    ) {
      assert.deepStrictEqual(ApiStore.resourceTraits(resource, status), {
        statusSubresource,
        tracksGeneration,
        custom,
        generationOnAnnotations: onAnnotations,
        defaultPropagation: propagation
      }, name)
    }
  })

  it("generationChanges: built-ins by spec (Deployments by annotations too), custom resources by all but metadata", () => {
    const pods = ApiStore.resourceTraits(Resource.pods)
    const deployments = ApiStore.resourceTraits(Resource.deployments)
    const custom = ApiStore.resourceTraits(widgets)
    const customNoStatus = ApiStore.resourceTraits(widgets, false)
    const base = { metadata: { name: "a", labels: { x: "1" } }, spec: { n: 1 }, status: { ok: true } }
    const table: ReadonlyArray<readonly [string, ApiStore.ResourceTraits, object, boolean]> = [
      ["pod: spec", pods, { ...base, spec: { n: 2 } }, true],
      ["pod: labels", pods, { ...base, metadata: { name: "a", labels: { x: "2" } } }, false],
      [
        "pod: annotations",
        pods,
        { ...base, metadata: { name: "a", labels: { x: "1" }, annotations: { a: "b" } } },
        false
      ],
      ["pod: status", pods, { ...base, status: { ok: false } }, false],
      ["pod: another top-level field", pods, { ...base, extra: 1 }, false],
      ["deployment: annotations", deployments, {
        ...base,
        metadata: { name: "a", labels: { x: "1" }, annotations: { a: "b" } }
      }, true],
      ["deployment: labels", deployments, { ...base, metadata: { name: "a", labels: { x: "2" } } }, false],
      ["custom: spec", custom, { ...base, spec: { n: 2 } }, true],
      ["custom: another top-level field", custom, { ...base, data: 1 }, true],
      ["custom with status subresource: status", custom, { ...base, status: { ok: false } }, false],
      ["custom without status subresource: status", customNoStatus, { ...base, status: { ok: false } }, true],
      ["custom: labels", custom, { ...base, metadata: { name: "a", labels: { x: "2" } } }, false],
      ["custom: kind and apiVersion", custom, { ...base, kind: "Widget", apiVersion: "example.com/v1" }, false]
    ]
    for (const [name, traits, after, expected] of table) {
      assert.strictEqual(ApiStore.generationChanges(traits, base, after as typeof base), expected, name)
    }
  })

  it("sameObject: equal but for the resourceVersion, members in any order", () => {
    const a = { metadata: { name: "a", resourceVersion: "1", labels: { x: "1", y: "2" } }, spec: { n: 1 } }
    const table: ReadonlyArray<readonly [string, object, boolean]> = [
      ["another resourceVersion", {
        spec: { n: 1 },
        metadata: { resourceVersion: "9", labels: { y: "2", x: "1" }, name: "a" }
      }, true],
      ["another spec", { ...a, spec: { n: 2 } }, false],
      ["a member more", { ...a, status: {} }, false],
      ["a metadata member more", { ...a, metadata: { ...a.metadata, uid: "u" } }, false],
      ["a label changed", { ...a, metadata: { ...a.metadata, labels: { x: "1", y: "3" } } }, false]
    ]
    for (const [name, b, expected] of table) {
      assert.strictEqual(ApiStore.sameObject(a, b as typeof a), expected, name)
    }
  })

  it("validateName: DNS-1123 subdomains, labels for namespaces", () => {
    const table: ReadonlyArray<readonly [Resource.Resource<unknown>, string, boolean]> = [
      [Resource.configMaps, "web-1.example", true],
      [Resource.configMaps, "Web", false],
      [Resource.configMaps, "-web", false],
      [Resource.configMaps, "a".repeat(253), true],
      [Resource.configMaps, "a".repeat(254), false],
      [Resource.namespaces, "team-a", true],
      [Resource.namespaces, "team.a", false],
      [Resource.namespaces, "a".repeat(64), false]
    ]
    for (const [resource, name, valid] of table) {
      const error = ApiStore.validateName(resource, name)
      assert.strictEqual(error === undefined, valid, `${resource.resource} ${name.slice(0, 20)}`)
      if (error !== undefined) {
        assert.strictEqual(error.field, "metadata.name")
        assert.match(error.message, /^Invalid value: ".*": a lowercase RFC 1123 (subdomain|label) must consist/)
      }
    }
  })

  it("addedFinalizers: only new ones, sorted and quoted as Go prints a []string", () => {
    assert.isUndefined(ApiStore.addedFinalizers(["a", "b"], ["b"]))
    assert.isUndefined(ApiStore.addedFinalizers(undefined, undefined))
    assert.strictEqual(
      ApiStore.addedFinalizers(["a"], ["a", "z", "c", "z"])?.message,
      "Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers " +
        "[]string{\"c\", \"z\"}"
    )
  })

  it("statuses: kube-apiserver's codes, reasons, messages and details", () => {
    const notFound = ApiStore.notFound(Resource.deployments, "web")
    assert.deepStrictEqual([notFound.code, notFound.reason, notFound.message, notFound.details], [
      404,
      "NotFound",
      "deployments.apps \"web\" not found",
      { name: "web", group: "apps", kind: "deployments" }
    ])
    const exists = ApiStore.alreadyExists(Resource.configMaps, "a")
    assert.deepStrictEqual([exists.code, exists.reason, exists.details], [409, "AlreadyExists", {
      name: "a",
      kind: "configmaps"
    }])
    assert.strictEqual(
      ApiStore.preconditionFailed(Resource.pods, "p", "ResourceVersion", "3", 4).message,
      "Operation cannot be fulfilled on pods \"p\": Precondition failed: ResourceVersion in precondition: 3, " +
        "ResourceVersion in object meta: 4"
    )
    assert.strictEqual(ApiStore.modifiedConflict(Resource.pods, "p").code, 409)
    assert.deepStrictEqual(ApiStore.resourceNotFound.details, {})
    assert.strictEqual(ApiStore.formatTime(Date.parse("2026-03-01T10:20:30.456Z")), "2026-03-01T10:20:30Z")
  })
})

/**
 * kube-apiserver's registry rules, as `ApiStore` gives them to every in-memory front end (the fake Client,
 * the test kit's server): tables of resources and writes against what kube-apiserver does.
 */
import { assert, describe, it } from "@effect/vitest"
import * as ApiStore from "../../src/ApiStore.js"
import * as Resource from "../../src/Resource.js"
import { widgets } from "../fixtures/index.js"

const jobsV1 = Resource.jobs
const leases = Resource.leases

describe("ApiStore registry rules", () => {
  it("resourceTraits: built-ins as kube-apiserver serves them, anything else as a custom resource", () => {
    const table: ReadonlyArray<
      readonly [string, Resource.Resource<unknown>, boolean | undefined, Omit<ApiStore.ResourceTraits, "custom">]
    > = [
      ["configmaps: no status, no generation", Resource.configMaps, undefined, {
        statusSubresource: false,
        tracksGeneration: false,
        generationOnAnnotations: false,
        defaultPropagation: "Background"
      }],
      ["pods: status and generation", Resource.pods, undefined, {
        statusSubresource: true,
        tracksGeneration: true,
        generationOnAnnotations: false,
        defaultPropagation: "Background"
      }],
      ["deployments: annotations move the generation", Resource.deployments, undefined, {
        statusSubresource: true,
        tracksGeneration: true,
        generationOnAnnotations: true,
        defaultPropagation: "Background"
      }],
      ["batch/v1 jobs: orphan by default", jobsV1, undefined, {
        statusSubresource: true,
        tracksGeneration: true,
        generationOnAnnotations: false,
        defaultPropagation: "Orphan"
      }],
      ["leases: neither", leases, undefined, {
        statusSubresource: false,
        tracksGeneration: false,
        generationOnAnnotations: false,
        defaultPropagation: "Background"
      }],
      ["a custom resource: status (kubebuilder's) and generation", widgets, undefined, {
        statusSubresource: true,
        tracksGeneration: true,
        generationOnAnnotations: false,
        defaultPropagation: "Background"
      }],
      ["a custom resource without status", widgets, false, {
        statusSubresource: false,
        tracksGeneration: true,
        generationOnAnnotations: false,
        defaultPropagation: "Background"
      }]
    ]
    for (const [name, resource, status, expected] of table) {
      const { custom: _custom, ...traits } = ApiStore.resourceTraits(resource, status)
      assert.deepStrictEqual(traits, expected, name)
    }
    assert.isTrue(ApiStore.resourceTraits(widgets).custom)
    assert.isFalse(ApiStore.resourceTraits(Resource.pods).custom)
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

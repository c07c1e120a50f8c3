/**
 * Resource descriptors: the catalog, wire paths, names, and `find` as kubectl resolves names.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Resource from "../../src/Resource.js"

const certificates = Resource.make({
  group: "cert-manager.io",
  version: "v1",
  resource: "certificates",
  kind: "Certificate",
  namespaced: true,
  shortNames: ["cert", "certs"]
})

const clusterIssuers = Resource.make({
  group: "cert-manager.io",
  version: "v1",
  resource: "clusterissuers",
  kind: "ClusterIssuer",
  namespaced: false
})

describe("Resource - paths", () => {
  it("collectionPath", () => {
    assert.strictEqual(Resource.collectionPath(Resource.pods, "default"), "/api/v1/namespaces/default/pods")
    assert.strictEqual(Resource.collectionPath(Resource.pods), "/api/v1/pods")
    assert.strictEqual(Resource.collectionPath(Resource.pods, ""), "/api/v1/pods")
    // a cluster-scoped resource ignores the namespace
    assert.strictEqual(Resource.collectionPath(Resource.nodes, "x"), "/api/v1/nodes")
    assert.strictEqual(Resource.collectionPath(Resource.namespaces, "x"), "/api/v1/namespaces")
    assert.strictEqual(Resource.collectionPath(Resource.deployments, "a"), "/apis/apps/v1/namespaces/a/deployments")
    assert.strictEqual(Resource.collectionPath(Resource.deployments), "/apis/apps/v1/deployments")
    assert.strictEqual(
      Resource.collectionPath(Resource.ingresses, "web"),
      "/apis/networking.k8s.io/v1/namespaces/web/ingresses"
    )
    assert.strictEqual(Resource.collectionPath(Resource.cronJobs, "ops"), "/apis/batch/v1/namespaces/ops/cronjobs")
  })

  it("objectPath", () => {
    assert.strictEqual(Resource.objectPath(Resource.pods, "default", "web-1"), "/api/v1/namespaces/default/pods/web-1")
    assert.strictEqual(Resource.objectPath(Resource.nodes, undefined, "node-1"), "/api/v1/nodes/node-1")
    assert.strictEqual(Resource.objectPath(Resource.nodes, "ignored", "node-1"), "/api/v1/nodes/node-1")
    assert.strictEqual(
      Resource.objectPath(Resource.deployments, "a", "api"),
      "/apis/apps/v1/namespaces/a/deployments/api"
    )
    // path segments are escaped
    assert.strictEqual(
      Resource.objectPath(Resource.configMaps, "a b", "x/y"),
      "/api/v1/namespaces/a%20b/configmaps/x%2Fy"
    )
  })

  it("groupVersionPath, apiVersion, groupResource", () => {
    assert.strictEqual(Resource.groupVersionPath(Resource.pods), "/api/v1")
    assert.strictEqual(Resource.groupVersionPath(Resource.deployments), "/apis/apps/v1")
    assert.strictEqual(Resource.groupVersionPath(Resource.leases), "/apis/coordination.k8s.io/v1")
    assert.strictEqual(Resource.apiVersion(Resource.pods), "v1")
    assert.strictEqual(Resource.apiVersion(Resource.deployments), "apps/v1")
    assert.strictEqual(Resource.apiVersion(Resource.endpointSlices), "discovery.k8s.io/v1")
    assert.strictEqual(Resource.groupResource(Resource.pods), "pods")
    assert.strictEqual(Resource.groupResource(Resource.deployments), "deployments.apps")
    assert.strictEqual(Resource.groupResource(Resource.jobs), "jobs.batch")
  })
})

describe("Resource - catalog", () => {
  it("every entry has a kind, a `${kind}List` listKind, a singular name and the default verbs", () => {
    assert.lengthOf(Resource.catalog, 21)
    for (const r of Resource.catalog) {
      assert.match(r.kind, /^[A-Z][A-Za-z]+$/, r.resource)
      assert.strictEqual(r.listKind, `${r.kind}List`)
      assert.strictEqual(r.singular, r.kind.toLowerCase())
      assert.strictEqual(r.version, "v1")
      assert.include(r.verbs, "list")
      assert.include(r.verbs, "watch")
      assert.strictEqual(r.resource, r.resource.toLowerCase())
    }
    const groupResources = Resource.catalog.map(Resource.groupResource)
    assert.strictEqual(new Set(groupResources).size, groupResources.length)
  })

  it("nodes, namespaces and persistentvolumes are cluster-scoped; the rest namespaced", () => {
    const cluster = Resource.catalog.filter((r) => !r.namespaced).map((r) => r.resource).sort()
    assert.deepStrictEqual(cluster, ["namespaces", "nodes", "persistentvolumes"])
    for (const r of [Resource.pods, Resource.deployments, Resource.secrets, Resource.leases, Resource.events]) {
      assert.isTrue(r.namespaced, r.resource)
    }
  })

  it("groups and kinds of the catalog", () => {
    const expected: ReadonlyArray<readonly [Resource.Resource<unknown>, string, string]> = [
      [Resource.pods, "", "Pod"],
      [Resource.services, "", "Service"],
      [Resource.endpoints, "", "Endpoints"],
      [Resource.configMaps, "", "ConfigMap"],
      [Resource.secrets, "", "Secret"],
      [Resource.nodes, "", "Node"],
      [Resource.namespaces, "", "Namespace"],
      [Resource.events, "", "Event"],
      [Resource.persistentVolumes, "", "PersistentVolume"],
      [Resource.persistentVolumeClaims, "", "PersistentVolumeClaim"],
      [Resource.serviceAccounts, "", "ServiceAccount"],
      [Resource.deployments, "apps", "Deployment"],
      [Resource.replicaSets, "apps", "ReplicaSet"],
      [Resource.statefulSets, "apps", "StatefulSet"],
      [Resource.daemonSets, "apps", "DaemonSet"],
      [Resource.jobs, "batch", "Job"],
      [Resource.cronJobs, "batch", "CronJob"],
      [Resource.ingresses, "networking.k8s.io", "Ingress"],
      [Resource.endpointSlices, "discovery.k8s.io", "EndpointSlice"],
      [Resource.leases, "coordination.k8s.io", "Lease"]
    ]
    for (const [r, group, kind] of expected) {
      assert.strictEqual(r.group, group, r.resource)
      assert.strictEqual(r.kind, kind, r.resource)
      assert.include(Resource.catalog, r as Resource.Resource)
    }
  })
})

describe("Resource - find", () => {
  it("by plural, singular, kind, short name and resource.group, case-insensitively", () => {
    const cases: ReadonlyArray<readonly [string, Resource.Resource<unknown>]> = [
      ["pods", Resource.pods],
      ["pod", Resource.pods],
      ["Pod", Resource.pods],
      ["po", Resource.pods],
      ["PODS", Resource.pods],
      ["deployments", Resource.deployments],
      ["deployment", Resource.deployments],
      ["Deployment", Resource.deployments],
      ["deploy", Resource.deployments],
      ["deployments.apps", Resource.deployments],
      ["Deployments.Apps", Resource.deployments],
      ["svc", Resource.services],
      ["cm", Resource.configMaps],
      ["ns", Resource.namespaces],
      ["no", Resource.nodes],
      ["pv", Resource.persistentVolumes],
      ["pvc", Resource.persistentVolumeClaims],
      ["PersistentVolumeClaim", Resource.persistentVolumeClaims],
      ["sa", Resource.serviceAccounts],
      ["rs", Resource.replicaSets],
      ["sts", Resource.statefulSets],
      ["ds", Resource.daemonSets],
      ["cj", Resource.cronJobs],
      ["jobs.batch", Resource.jobs],
      ["ing", Resource.ingresses],
      ["ingresses.networking.k8s.io", Resource.ingresses],
      ["endpointslice", Resource.endpointSlices],
      ["ep", Resource.endpoints],
      ["ev", Resource.events],
      ["leases.coordination.k8s.io", Resource.leases]
    ]
    for (const [name, expected] of cases) assert.strictEqual(Resource.find(name), expected, name)
  })

  it("unknown names are undefined", () => {
    assert.isUndefined(Resource.find("widgets"))
    assert.isUndefined(Resource.find(""))
    assert.isUndefined(Resource.find("pods.apps"))
  })

  it("searches a given list, e.g. with CRDs", () => {
    const among = [...Resource.catalog, certificates, clusterIssuers]
    assert.strictEqual(Resource.find("cert", among), certificates)
    assert.strictEqual(Resource.find("Certificate", among), certificates)
    assert.strictEqual(Resource.find("certificates.cert-manager.io", among), certificates)
    assert.strictEqual(Resource.find("clusterissuer", among), clusterIssuers)
    assert.strictEqual(Resource.find("pods", among), Resource.pods)
    assert.isUndefined(Resource.find("cert"))
  })
})

describe("Resource - make", () => {
  it("describes a CRD with defaults", () => {
    assert.strictEqual(certificates.listKind, "CertificateList")
    assert.strictEqual(certificates.singular, "certificate")
    assert.deepStrictEqual(certificates.shortNames, ["cert", "certs"])
    assert.include(certificates.verbs, "watch")
    assert.strictEqual(Resource.apiVersion(certificates), "cert-manager.io/v1")
    assert.strictEqual(Resource.groupResource(certificates), "certificates.cert-manager.io")
    assert.strictEqual(
      Resource.collectionPath(certificates, "default"),
      "/apis/cert-manager.io/v1/namespaces/default/certificates"
    )
    assert.strictEqual(Resource.collectionPath(clusterIssuers, "default"), "/apis/cert-manager.io/v1/clusterissuers")
    assert.strictEqual(
      Resource.objectPath(clusterIssuers, undefined, "letsencrypt"),
      "/apis/cert-manager.io/v1/clusterissuers/letsencrypt"
    )
    assert.isTrue(Resource.TypeId in certificates)
  })

  it("explicit listKind, singular and verbs win", () => {
    const r = Resource.make({
      group: "example.com",
      version: "v1alpha1",
      resource: "foxes",
      kind: "Fox",
      namespaced: true,
      listKind: "FoxCollection",
      singular: "fox",
      verbs: ["get", "list", "watch"]
    })
    assert.strictEqual(r.listKind, "FoxCollection")
    assert.strictEqual(r.singular, "fox")
    assert.deepStrictEqual(r.verbs, ["get", "list", "watch"])
    assert.strictEqual(Resource.groupVersionPath(r), "/apis/example.com/v1alpha1")
    assert.strictEqual(Resource.find("FOX", [r]), r)
  })
})

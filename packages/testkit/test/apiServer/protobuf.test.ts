/**
 * ApiServer: Kubernetes protobuf request bodies. The bodies are written here field number by field
 * number (the published k8s.io/api and k8s.io/apimachinery generated.proto), independently of the
 * server's descriptors, then decoded by the server.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Resource from "effect-informers/Resource"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import protobuf from "protobufjs"
import { decodeProtobufObject } from "../../src/internal/apiServerProtobuf.js"
import { assertStatus, call, start } from "./fixtures.js"

// -------------------------------------------------------------------------------------------------
// a small protobuf writer
// -------------------------------------------------------------------------------------------------

type Part = (w: protobuf.Writer) => void

const str = (field: number, value: string): Part => (w) => w.uint32((field << 3) | 2).string(value)
const bytes = (field: number, value: Uint8Array): Part => (w) => w.uint32((field << 3) | 2).bytes(value)
const varint = (field: number, value: number): Part => (w) => w.uint32(field << 3).int64(value)
const msg = (field: number, ...parts: ReadonlyArray<Part>): Part => (w) => {
  w.uint32((field << 3) | 2).fork()
  for (const part of parts) part(w)
  w.ldelim()
}
/** A map entry: key 1, value 2. */
const entry = (field: number, key: string, value: Part): Part => msg(field, str(1, key), value)

/** `k8s\0` + runtime.Unknown { typeMeta = 1 { apiVersion = 1, kind = 2 }, raw = 2 }. */
const envelope = (apiVersion: string, kind: string, ...object: ReadonlyArray<Part>): Uint8Array<ArrayBuffer> => {
  const raw = protobuf.Writer.create()
  for (const part of object) part(raw)
  const w = protobuf.Writer.create()
  msg(1, str(1, apiVersion), str(2, kind))(w)
  bytes(2, raw.finish())(w)
  str(3, "")(w)
  str(4, "")(w)
  return new Uint8Array(Buffer.concat([Buffer.from("k8s\0", "latin1"), w.finish()]))
}

/** ObjectMeta as gogo writes it: every string, even empty, and an empty creationTimestamp. */
const metadata = (name: string, ...more: ReadonlyArray<Part>): Part =>
  msg(1, str(1, name), str(2, ""), str(3, ""), str(4, ""), str(5, ""), str(6, ""), varint(7, 0), msg(8), ...more)

const decoded = (body: Uint8Array) => {
  const result = decodeProtobufObject(body)
  if (Result.isFailure(result)) throw new Error(result.failure.message)
  return result.success
}

const refused = (body: Uint8Array) => {
  const result = decodeProtobufObject(body)
  if (Result.isSuccess(result)) throw new Error(`decoded: ${JSON.stringify(result.success)}`)
  return result.failure
}

describe("ApiServer protobuf bodies", () => {
  it("decodes a ConfigMap: data, binaryData as base64, immutable, labels, annotations, owner references", () => {
    const body = envelope(
      "v1",
      "ConfigMap",
      metadata(
        "settings",
        entry(11, "app", str(2, "web")),
        entry(12, "note", str(2, "")),
        msg(13, str(1, "Deployment"), str(3, "web"), str(4, "u-1"), str(5, "apps/v1"), varint(6, 1)),
        str(14, "example.com/hold")
      ),
      entry(2, "color", str(2, "blue")),
      entry(2, "empty", str(2, "")),
      entry(3, "blob", bytes(2, Uint8Array.from([0, 1, 2, 255]))),
      varint(4, 0)
    )
    assert.deepStrictEqual(decoded(body), {
      kind: "ConfigMap",
      apiVersion: "v1",
      metadata: {
        name: "settings",
        creationTimestamp: null,
        labels: { app: "web" },
        annotations: { note: "" },
        ownerReferences: [{ apiVersion: "apps/v1", kind: "Deployment", name: "web", uid: "u-1", controller: true }],
        finalizers: ["example.com/hold"]
      },
      immutable: false,
      data: { color: "blue", empty: "" },
      binaryData: { blob: "AAEC/w==" }
    })
  })

  it("decodes a Secret: data bytes as base64, stringData, type; a timestamp as RFC 3339", () => {
    const body = envelope(
      "v1",
      "Secret",
      metadata("creds", msg(9, varint(1, 1704067200))),
      entry(2, "password", bytes(2, Buffer.from("s3cr3t"))),
      str(3, "kubernetes.io/basic-auth"),
      entry(4, "username", str(2, "admin"))
    )
    assert.deepStrictEqual(decoded(body), {
      kind: "Secret",
      apiVersion: "v1",
      metadata: { name: "creds", creationTimestamp: null, deletionTimestamp: "2024-01-01T00:00:00Z" },
      data: { password: Buffer.from("s3cr3t").toString("base64") },
      stringData: { username: "admin" },
      type: "kubernetes.io/basic-auth"
    })
  })

  it("decodes a Namespace and a ServiceAccount", () => {
    assert.deepStrictEqual(decoded(envelope("v1", "Namespace", metadata("team"), msg(2), msg(3, str(1, "")))), {
      kind: "Namespace",
      apiVersion: "v1",
      metadata: { name: "team", creationTimestamp: null },
      spec: {},
      status: {}
    })
    assert.deepStrictEqual(
      decoded(
        envelope(
          "v1",
          "ServiceAccount",
          metadata("robot"),
          msg(2, str(3, "robot-token")),
          msg(3, str(1, "pull")),
          varint(4, 0)
        )
      ),
      {
        kind: "ServiceAccount",
        apiVersion: "v1",
        metadata: { name: "robot", creationTimestamp: null },
        secrets: [{ name: "robot-token" }],
        imagePullSecrets: [{ name: "pull" }],
        automountServiceAccountToken: false
      }
    )
  })

  it("decodes a Deployment: replicas (even 0), selector, template, containers, resources, strategy", () => {
    const container = msg(
      2,
      str(1, "web"),
      str(2, "nginx:1.27"),
      str(3, "sleep"),
      str(3, "10"),
      str(5, ""),
      msg(6, str(1, ""), varint(2, 0), varint(3, 80), str(4, "TCP")),
      msg(7, str(1, "MODE"), str(2, "fast")),
      msg(8, entry(1, "cpu", msg(2, str(1, "500m"))), entry(2, "memory", msg(2, str(1, "128Mi")))),
      str(13, ""),
      str(14, "IfNotPresent"),
      varint(16, 0)
    )
    const body = envelope(
      "apps/v1",
      "Deployment",
      metadata("web", entry(11, "app", str(2, "web"))),
      msg(
        2,
        varint(1, 0),
        msg(2, entry(1, "app", str(2, "web")), msg(2, str(1, "tier"), str(2, "In"), str(3, "b"), str(3, "a"))),
        msg(3, metadata("", entry(11, "app", str(2, "web"))), msg(2, container, str(3, ""), varint(4, 30))),
        msg(
          4,
          str(1, "RollingUpdate"),
          msg(2, msg(1, varint(1, 0), varint(2, 1)), msg(2, varint(1, 1), str(3, "25%")))
        ),
        varint(5, 0),
        varint(6, 10),
        varint(7, 0)
      ),
      msg(3, varint(1, 0), varint(2, 0))
    )
    assert.deepStrictEqual(decoded(body), {
      kind: "Deployment",
      apiVersion: "apps/v1",
      metadata: { name: "web", creationTimestamp: null, labels: { app: "web" } },
      spec: {
        replicas: 0,
        selector: {
          matchLabels: { app: "web" },
          matchExpressions: [{ key: "tier", operator: "In", values: ["b", "a"] }]
        },
        template: {
          metadata: { creationTimestamp: null, labels: { app: "web" } },
          spec: {
            containers: [{
              name: "web",
              image: "nginx:1.27",
              command: ["sleep", "10"],
              ports: [{ containerPort: 80, protocol: "TCP" }],
              env: [{ name: "MODE", value: "fast" }],
              resources: { limits: { cpu: "500m" }, requests: { memory: "128Mi" } },
              imagePullPolicy: "IfNotPresent"
            }],
            terminationGracePeriodSeconds: 30
          }
        },
        strategy: { type: "RollingUpdate", rollingUpdate: { maxUnavailable: 1, maxSurge: "25%" } },
        revisionHistoryLimit: 10
      },
      status: {}
    })
  })

  it("refuses another kind, a field it does not describe and a compressed body with 415 naming them", () => {
    const cronJob = refused(envelope("batch/v1", "CronJob", metadata("j")))
    assert.strictEqual(cronJob.code, 415)
    assert.strictEqual(cronJob.reason, "UnsupportedMediaType")
    assert.include(cronJob.message, "batch/v1, Kind=CronJob")

    // PodSpec field 14 (securityContext) is not described: refused, not dropped
    const securityContext = refused(envelope(
      "apps/v1",
      "Deployment",
      metadata("web"),
      msg(2, msg(3, metadata(""), msg(2, msg(2, str(1, "c"), str(2, "nginx")), msg(14, varint(1, 1000)))))
    ))
    assert.strictEqual(securityContext.code, 415)
    assert.include(securityContext.message, "field 14 of PodSpec (at spec.template.spec)")

    const unknownTop = refused(envelope("v1", "ConfigMap", metadata("x"), str(99, "?")))
    assert.strictEqual(unknownTop.code, 415)
    assert.include(unknownTop.message, "field 99 of ConfigMap")

    const w = protobuf.Writer.create()
    msg(1, str(1, "v1"), str(2, "ConfigMap"))(w)
    str(3, "gzip")(w)
    const gzip = refused(Buffer.concat([Buffer.from("k8s\0", "latin1"), w.finish()]))
    assert.strictEqual(gzip.code, 415)
    assert.include(gzip.message, "gzip")
  })

  it("answers 400 to a body without the k8s prefix or cut short", () => {
    const noMagic = refused(Buffer.from("{\"kind\":\"ConfigMap\"}"))
    assert.strictEqual(noMagic.code, 400)
    assert.include(noMagic.message, "k8s\\x00")
    const full = envelope("v1", "ConfigMap", metadata("settings"), entry(2, "a", str(2, "b")))
    const cut = refused(full.subarray(0, full.length - 3))
    assert.strictEqual(cut.code, 400)
    assert.strictEqual(cut.reason, "BadRequest")
  })

  it("never throws on garbage: random bytes, and a real body with bytes flipped, are a typed Status or an object", () => {
    // xorshift32, seeded: the same bytes on every run
    let x = 0x9e3779b9
    const next = () => {
      x ^= x << 13
      x ^= x >>> 17
      x ^= x << 5
      return x >>> 0
    }
    const real = envelope(
      "apps/v1",
      "Deployment",
      metadata("web", entry(11, "app", str(2, "web"))),
      msg(2, varint(1, 2), msg(3, metadata(""), msg(2, msg(2, str(1, "c"), str(2, "nginx")))))
    )
    for (let round = 0; round < 2000; round++) {
      const body = round % 2 === 0
        ? Buffer.concat([
          Buffer.from("k8s\0", "latin1"),
          Buffer.from(Array.from({ length: next() % 64 }, () => next() & 0xff))
        ])
        : Buffer.from(real.map((b, i) => (i > 4 && next() % 16 === 0 ? next() & 0xff : b)))
      const result = decodeProtobufObject(body)
      if (Result.isFailure(result)) {
        assert.include([400, 415], result.failure.code)
        assert.notInclude(result.failure.message, "\n")
      } else {
        assert.isString(result.success.kind)
      }
    }
  })

  it.live("POST and PUT take protobuf bodies; the object is created, stored and read back as JSON", () =>
    Effect.gen(function*() {
      const server = yield* start()
      const url = `${server.url}/api/v1/namespaces/default/configmaps`
      const headers = {
        "content-type": "application/vnd.kubernetes.protobuf",
        accept: "application/vnd.kubernetes.protobuf,application/json"
      }
      const body = envelope("v1", "ConfigMap", metadata("settings"), entry(2, "color", str(2, "blue")))
      const created = yield* call(url, { method: "POST", headers, body })
      assert.strictEqual(created.status, 201, created.text)
      assert.strictEqual(created.headers.get("content-type"), "application/json")
      assert.deepStrictEqual(created.json.data, { color: "blue" })
      const stored = yield* server.objects.get(Resource.configMaps, { name: "settings", namespace: "default" }).pipe(
        Effect.orDie
      )
      assert.deepStrictEqual(stored.data, { color: "blue" })
      assert.isString(stored.metadata!.creationTimestamp)

      const replaced = yield* call(`${url}/settings`, {
        method: "PUT",
        headers,
        body: envelope(
          "v1",
          "ConfigMap",
          metadata("settings", str(6, stored.metadata!.resourceVersion!)),
          entry(2, "color", str(2, "green"))
        )
      })
      assert.strictEqual(replaced.status, 200, replaced.text)
      assert.deepStrictEqual(replaced.json.data, { color: "green" })

      const cronJob = yield* call(`${server.url}/apis/batch/v1/namespaces/default/cronjobs`, {
        method: "POST",
        headers,
        body: envelope("batch/v1", "CronJob", metadata("j"))
      })
      assertStatus(cronJob, 415, "UnsupportedMediaType")
      assert.strictEqual((yield* server.objects.snapshot(Resource.cronJobs)).length, 0)
    }))
})

import { afterAll, assert, describe, it } from "@effect/vitest"
import { KubeConfig as ClientKubeConfig } from "@kubernetes/client-node"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
import * as Ref from "effect/Ref"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { inspect } from "node:util"
import * as KubeConfig from "../../src/KubeConfig.js"

const TOKEN = "kc-token-0f3a9c77e2-SECRET"
const PASSWORD = "hunter2-PASSWORD-value"
const KEY = "-----BEGIN PRIVATE KEY-----\nKEY-MATERIAL-SECRET\n-----END PRIVATE KEY-----\n"
const CA = "-----BEGIN CERTIFICATE-----\nCA-MATERIAL\n-----END CERTIFICATE-----\n"
const CERT = "-----BEGIN CERTIFICATE-----\nCLIENT-CERT\n-----END CERTIFICATE-----\n"
const b64 = (text: string) => Buffer.from(text).toString("base64")

const root = Fs.mkdtempSync(Path.join(Os.tmpdir(), "effect-informers-kubeconfig-"))
afterAll(() => Fs.rmSync(root, { recursive: true, force: true }))

let files = 0
/** Writes `content` to a fresh file (in a fresh directory) and returns its path. */
const write = (content: string, name = "config"): string => {
  const dir = Path.join(root, String(files++))
  Fs.mkdirSync(dir, { recursive: true })
  const path = Path.join(dir, name)
  Fs.writeFileSync(path, content)
  return path
}

const kubeconfig = `
apiVersion: v1
kind: Config
current-context: dev
clusters:
- name: dev-cluster
  cluster:
    server: https://dev.example:6443/
    certificate-authority-data: ${b64(CA)}
- name: insecure-cluster
  cluster:
    server: https://insecure.example:6443
    insecure-skip-tls-verify: true
    tls-server-name: api.internal
- name: local
  cluster:
    server: http://127.0.0.1:8001
- name: plain-remote
  cluster:
    server: http://10.0.0.5:8080
- name: proxied
  cluster:
    server: https://proxied.example
    proxy-url: http://proxy:3128
users:
- name: token-user
  user:
    token: ${TOKEN}
- name: cert-user
  user:
    client-certificate-data: ${b64(CERT)}
    client-key-data: ${b64(KEY)}
- name: basic-user
  user:
    username: admin
    password: ${PASSWORD}
- name: impersonator
  user:
    token: ${TOKEN}
    as: jane
- name: nobody
  user: {}
contexts:
- name: dev
  context: { cluster: dev-cluster, user: token-user, namespace: team-a }
- name: insecure
  context: { cluster: insecure-cluster, user: cert-user }
- name: basic
  context: { cluster: dev-cluster, user: basic-user }
- name: impersonating
  context: { cluster: dev-cluster, user: impersonator }
- name: local
  context: { cluster: local, user: token-user }
- name: remote-plain
  context: { cluster: plain-remote, user: token-user }
- name: remote-plain-anonymous
  context: { cluster: plain-remote, user: nobody }
- name: no-user
  context: { cluster: plain-remote }
- name: broken-cluster
  context: { cluster: missing, user: token-user }
- name: broken-user
  context: { cluster: dev-cluster, user: ghost }
- name: proxied
  context: { cluster: proxied, user: token-user }
`
const configPath = write(kubeconfig)

const headerValues = (headers: KubeConfig.KubeConfig.Headers): Record<string, string> =>
  Object.fromEntries(Object.entries(headers).map(([name, value]) => [name, Redacted.value(value)]))

const headersOf = (service: KubeConfig.KubeConfig.Service, url: string = service.server) =>
  Effect.map(service.headers(new URL(url)), headerValues)

/** Everything a user could print about a value. */
const renderings = (u: unknown): Array<string> => [String(u), JSON.stringify(u) ?? "", inspect(u, { depth: 10 })]

const assertNoSecrets = (u: unknown) => {
  for (const text of renderings(u)) {
    for (const secret of [TOKEN, PASSWORD, "KEY-MATERIAL-SECRET", b64(KEY)]) assert.notInclude(text, secret)
  }
}

const withEnv = (env: Record<string, string>) =>
  Effect.provideService(ConfigProvider.ConfigProvider, ConfigProvider.fromEnv({ env }))

describe("KubeConfig from a kubeconfig file", () => {
  it.effect("current context: server, CA data, bearer token, namespace", () =>
    Effect.gen(function*() {
      const config = yield* KubeConfig.fromFile(configPath)
      assert.strictEqual(config.server, "https://dev.example:6443")
      assert.strictEqual(config.context, "dev")
      assert.strictEqual(config.namespace, "team-a")
      assert.strictEqual(config.tls.ca, CA)
      assert.isTrue(config.tls.rejectUnauthorized)
      assert.deepStrictEqual(config.auth, { kind: "token", dynamic: false, allowInsecureTokenOverHttp: false })
      assert.deepStrictEqual(yield* headersOf(config), { authorization: `Bearer ${TOKEN}` })
      assertNoSecrets(config)
      assertNoSecrets(yield* config.headers(new URL(config.server)))
    }))

  it.effect("another context: client certificate and key, insecure-skip-tls-verify, tls-server-name", () =>
    Effect.gen(function*() {
      const config = yield* KubeConfig.fromFile(configPath, { context: "insecure" })
      assert.strictEqual(config.context, "insecure")
      assert.isUndefined(config.namespace)
      assert.isFalse(config.tls.rejectUnauthorized)
      assert.strictEqual(config.tls.serverName, "api.internal")
      assert.strictEqual(config.tls.cert, CERT)
      assert.strictEqual(Redacted.value(config.tls.key!), KEY)
      assert.isUndefined(config.tls.ca)
      assert.strictEqual(config.auth.kind, "clientCertificate")
      assert.deepStrictEqual(yield* headersOf(config), {})
      assertNoSecrets(config)
    }))

  it.effect("basic auth and impersonation headers", () =>
    Effect.gen(function*() {
      const basic = yield* KubeConfig.fromFile(configPath, { context: "basic" })
      assert.strictEqual(basic.auth.kind, "basic")
      assert.deepStrictEqual(yield* headersOf(basic), {
        authorization: `Basic ${Buffer.from(`admin:${PASSWORD}`).toString("base64")}`
      })
      assertNoSecrets(basic)
      const impersonating = yield* KubeConfig.fromFile(configPath, { context: "impersonating" })
      assert.deepStrictEqual(yield* headersOf(impersonating), {
        authorization: `Bearer ${TOKEN}`,
        "impersonate-user": "jane"
      })
    }))

  it.effect("relative certificate paths are resolved against the kubeconfig's directory", () =>
    Effect.gen(function*() {
      const path = write(
        `
current-context: c
clusters: [{ name: k, cluster: { server: "https://k.example", certificate-authority: ca.crt } }]
users: [{ name: u, user: { client-certificate: certs/client.crt, client-key: certs/client.key } }]
contexts: [{ name: c, context: { cluster: k, user: u } }]
`
      )
      const dir = Path.dirname(path)
      Fs.writeFileSync(Path.join(dir, "ca.crt"), CA)
      Fs.mkdirSync(Path.join(dir, "certs"))
      Fs.writeFileSync(Path.join(dir, "certs", "client.crt"), CERT)
      Fs.writeFileSync(Path.join(dir, "certs", "client.key"), KEY)
      const config = yield* KubeConfig.fromFile(path)
      assert.strictEqual(config.tls.ca, CA)
      assert.strictEqual(config.tls.cert, CERT)
      assert.strictEqual(Redacted.value(config.tls.key!), KEY)

      Fs.rmSync(Path.join(dir, "ca.crt"))
      const error = yield* Effect.flip(KubeConfig.fromFile(path))
      assert.strictEqual(error.reason, "FileNotFound")
      assert.strictEqual(error.path, Path.join(dir, "ca.crt"))
    }))

  it.effect("broken context chains are typed errors with one-line messages", () =>
    Effect.gen(function*() {
      const cases = [
        ["nope", "ContextNotFound", "context \"nope\" not found (contexts: \"dev\", \"insecure\""],
        ["broken-cluster", "ClusterNotFound", "cluster \"missing\" of context \"broken-cluster\" not found"],
        ["broken-user", "UserNotFound", "user \"ghost\" of context \"broken-user\" not found"],
        ["proxied", "Unsupported", "proxy-url"]
      ] as const
      for (const [context, reason, message] of cases) {
        const error = yield* Effect.flip(KubeConfig.fromFile(configPath, { context }))
        assert.strictEqual(error._tag, "KubeConfigError")
        assert.strictEqual(error.reason, reason)
        assert.include(error.message, message)
        assert.include(error.message, configPath)
        assert.notInclude(error.message, "\n")
      }
      const noCurrent = write(kubeconfig.replace("current-context: dev", ""))
      const error = yield* Effect.flip(KubeConfig.fromFile(noCurrent))
      assert.strictEqual(error.reason, "NoCurrentContext")
      const anonymous = yield* KubeConfig.fromFile(configPath, { context: "no-user" })
      assert.strictEqual(anonymous.auth.kind, "none")
    }))

  it.effect("a missing file, malformed YAML and a non-kubeconfig document are typed errors", () =>
    Effect.gen(function*() {
      const missing = Path.join(root, "does-not-exist", "config")
      const notFound = yield* Effect.flip(KubeConfig.fromFile(missing))
      assert.strictEqual(notFound.reason, "FileNotFound")
      assert.strictEqual(notFound.path, missing)
      assert.strictEqual(notFound.message, `kubeconfig ${missing} does not exist`)

      const malformedPath = write(`users:\n- name: u\n  user:\n    token: ${TOKEN}\n   bad: [indent\n`)
      const malformed = yield* Effect.flip(KubeConfig.fromFile(malformedPath))
      assert.strictEqual(malformed.reason, "Malformed")
      assert.strictEqual(malformed.path, malformedPath)
      assert.match(malformed.message, /invalid YAML at line \d+, column \d+/)
      assert.notInclude(malformed.message, "\n")
      assertNoSecrets(malformed)

      const empty = yield* Effect.flip(KubeConfig.fromFile(write("")))
      assert.strictEqual(empty.reason, "Malformed")

      const invalidEntry = yield* Effect.flip(KubeConfig.fromFile(write("clusters:\n- name: x\n  cluster: {}\n")))
      assert.strictEqual(invalidEntry.reason, "Malformed")
      assert.include(invalidEntry.message, "server is missing")
    }))

  it.effect("layerFromFile provides the service", () =>
    Effect.gen(function*() {
      const config = yield* KubeConfig.KubeConfig
      assert.strictEqual(config.context, "dev")
    }).pipe(Effect.provide(KubeConfig.layerFromFile(configPath))))
})

describe("credentials over plain http", () => {
  it.effect("allowed to loopback hosts, refused elsewhere unless explicitly allowed", () =>
    Effect.gen(function*() {
      const local = yield* KubeConfig.fromFile(configPath, { context: "local" })
      assert.deepStrictEqual(yield* headersOf(local), { authorization: `Bearer ${TOKEN}` })

      const remote = yield* Effect.flip(KubeConfig.fromFile(configPath, { context: "remote-plain" }))
      assert.strictEqual(remote.reason, "InsecureTokenTransport")
      assert.include(remote.message, "10.0.0.5:8080")
      assertNoSecrets(remote)

      const allowed = yield* KubeConfig.fromFile(configPath, {
        context: "remote-plain",
        allowInsecureTokenOverHttp: true
      })
      assert.deepStrictEqual(yield* headersOf(allowed), { authorization: `Bearer ${TOKEN}` })

      const anonymous = yield* KubeConfig.fromFile(configPath, { context: "remote-plain-anonymous" })
      assert.deepStrictEqual(yield* headersOf(anonymous), {})
    }))

  it.effect("checked for every request URL, not only the configured server", () =>
    Effect.gen(function*() {
      const config = yield* KubeConfig.fromFile(configPath)
      const error = yield* Effect.flip(config.headers(new URL("http://evil.example/api/v1/pods")))
      assert.strictEqual(error.reason, "InsecureTokenTransport")
      assert.deepStrictEqual(yield* headersOf(config, "http://localhost:8001/api"), {
        authorization: `Bearer ${TOKEN}`
      })
    }))

  it.effect("fromOptions: loopback forms, https, and explicit opt-in", () =>
    Effect.gen(function*() {
      const token = Redacted.make(TOKEN)
      for (
        const server of ["http://localhost:8080", "http://127.1.2.3:80", "http://[::1]:8080", "https://example.com"]
      ) {
        const config = yield* KubeConfig.fromOptions({ server, token })
        assert.deepStrictEqual(yield* headersOf(config), { authorization: `Bearer ${TOKEN}` }, server)
      }
      for (const server of ["http://example.com", "http://10.0.0.1:8080", "http://[fd00::1]"]) {
        const error = yield* Effect.flip(KubeConfig.fromOptions({ server, token }))
        assert.strictEqual(error.reason, "InsecureTokenTransport", server)
      }
      const basic = yield* Effect.flip(
        KubeConfig.fromOptions({ server: "http://example.com", username: "u", password: Redacted.make(PASSWORD) })
      )
      assert.strictEqual(basic.reason, "InsecureTokenTransport")
      const optedIn = yield* KubeConfig.fromOptions({
        server: "http://example.com",
        token,
        allowInsecureTokenOverHttp: true
      })
      assert.strictEqual(optedIn.auth.allowInsecureTokenOverHttp, true)
      assert.strictEqual((yield* Effect.flip(KubeConfig.fromOptions({ server: "not a url" }))).reason, "InvalidServer")
      assert.strictEqual((yield* Effect.flip(KubeConfig.fromOptions({ server: "ftp://x" }))).reason, "InvalidServer")
    }))

  it("isLoopbackHost", () => {
    for (const host of ["localhost", "LOCALHOST", "127.0.0.1", "127.255.0.9", "[::1]", "::1", "[::ffff:7f00:1]"]) {
      assert.isTrue(KubeConfig.isLoopbackHost(host), host)
    }
    for (
      const host of ["example.com", "10.0.0.1", "128.0.0.1", "[fd00::1]", "localhost.example.com", "[::ffff:a00:1]"]
    ) {
      assert.isFalse(KubeConfig.isLoopbackHost(host), host)
    }
    assert.isTrue(KubeConfig.isLoopbackHost(new URL("http://[::ffff:127.0.0.1]/").hostname))
  })
})

describe("KubeConfig from options", () => {
  it.effect("TLS material as PEM or base64, a rotating token provider", () =>
    Effect.gen(function*() {
      const counter = yield* Ref.make(0)
      const config = yield* KubeConfig.fromOptions({
        server: "https://10.0.0.1:6443",
        caData: CA,
        certData: b64(CERT),
        keyData: Redacted.make(b64(KEY)),
        namespace: "ns",
        tokenProvider: Effect.map(Ref.updateAndGet(counter, (n) => n + 1), (n) => Redacted.make(`${TOKEN}-${n}`))
      })
      assert.strictEqual(config.tls.ca, CA)
      assert.strictEqual(config.tls.cert, CERT)
      assert.strictEqual(Redacted.value(config.tls.key!), KEY)
      assert.isTrue(config.tls.rejectUnauthorized)
      assert.strictEqual(config.namespace, "ns")
      assert.deepStrictEqual(config.auth, { kind: "custom", dynamic: true, allowInsecureTokenOverHttp: false })
      assert.deepStrictEqual(yield* headersOf(config), { authorization: `Bearer ${TOKEN}-1` })
      assert.deepStrictEqual(yield* headersOf(config), { authorization: `Bearer ${TOKEN}-2` })
      assertNoSecrets(config)
    }))

  it.effect("layerFromKubeConfig uses a loaded client-node KubeConfig", () => {
    const kc = new ClientKubeConfig()
    kc.loadFromOptions({
      clusters: [{ name: "c", server: "https://c.example", skipTLSVerify: false }],
      users: [{ name: "u", token: TOKEN }],
      contexts: [{ name: "ctx", cluster: "c", user: "u" }],
      currentContext: "ctx"
    })
    return Effect.gen(function*() {
      const config = yield* KubeConfig.KubeConfig
      assert.strictEqual(config.server, "https://c.example")
      assert.deepStrictEqual(yield* headersOf(config), { authorization: `Bearer ${TOKEN}` })
    }).pipe(Effect.provide(KubeConfig.layerFromKubeConfig(kc)))
  })
})

/** A kubeconfig whose user's token comes from an exec plugin reading `tokenFile` (`expiry`: its expirationTimestamp). */
const execKubeconfig = (tokenFile: string, expiry: string | undefined) => {
  const script = [
    "const fs = require('fs')",
    `const token = fs.readFileSync(${JSON.stringify(tokenFile)}, 'utf8')`,
    "if (token === 'fail') { console.error('plugin: login required'); process.exit(1) }",
    "console.log(JSON.stringify({ apiVersion: 'client.authentication.k8s.io/v1', kind: 'ExecCredential',",
    `  status: { token${expiry === undefined ? "" : `, expirationTimestamp: ${JSON.stringify(expiry)}`} } }))`
  ].join("\n")
  return write(`
current-context: c
clusters: [{ name: k, cluster: { server: "https://k.example" } }]
users:
- name: u
  user:
    exec:
      apiVersion: client.authentication.k8s.io/v1
      command: ${JSON.stringify(process.execPath)}
      args: ["-e", ${JSON.stringify(script)}]
contexts: [{ name: c, context: { cluster: k, user: u } }]
`)
}

describe("expiring credentials", () => {
  // client-node 2 caches an ExecCredential until its expirationTimestamp (client-go's rule; 1.x, whose
  // `Date.parse(undefined)` is NaN, re-ran a plugin whose credential had none at every request): a credential
  // that has expired is fetched again, so a rotated token is picked up
  it.live("an exec plugin is re-run through client-node, so a rotated token is picked up", () =>
    Effect.gen(function*() {
      const tokenFile = write("first-token", "token")
      const path = execKubeconfig(tokenFile, "2000-01-01T00:00:00Z")
      const config = yield* KubeConfig.fromFile(path)
      assert.deepStrictEqual(config.auth, { kind: "exec", dynamic: true, allowInsecureTokenOverHttp: false })
      assert.deepStrictEqual(yield* headersOf(config), { authorization: "Bearer first-token" })
      Fs.writeFileSync(tokenFile, "second-token")
      assert.deepStrictEqual(yield* headersOf(config), { authorization: "Bearer second-token" })
      Fs.writeFileSync(tokenFile, "fail")
      const error = yield* Effect.flip(config.headers(new URL(config.server)))
      assert.strictEqual(error.reason, "AuthProviderFailed")
      assert.include(error.message, "plugin: login required")
      assertNoSecrets(config)
    }))

  it.live("an exec credential without expirationTimestamp is kept by client-node until it expires (client-go)", () =>
    Effect.gen(function*() {
      const tokenFile = write("first-token", "token")
      const later = new Date(Date.now() + 3_600_000).toISOString()
      for (const expiry of [undefined, later]) {
        Fs.writeFileSync(tokenFile, "first-token")
        const config = yield* KubeConfig.fromFile(execKubeconfig(tokenFile, expiry))
        assert.deepStrictEqual(yield* headersOf(config), { authorization: "Bearer first-token" })
        Fs.writeFileSync(tokenFile, "second-token")
        assert.deepStrictEqual(yield* headersOf(config), { authorization: "Bearer first-token" }, String(expiry))
      }
    }))

  it.effect("in cluster: service host and port, CA, token file, namespace", () =>
    Effect.gen(function*() {
      const directory = Path.dirname(write(`${TOKEN}\n`, "token"))
      Fs.writeFileSync(Path.join(directory, "ca.crt"), CA)
      Fs.writeFileSync(Path.join(directory, "namespace"), "payments\n")
      const config = yield* KubeConfig.inCluster({ serviceAccountDirectory: directory }).pipe(
        withEnv({ KUBERNETES_SERVICE_HOST: "10.96.0.1", KUBERNETES_SERVICE_PORT: "443" })
      )
      assert.strictEqual(config.server, "https://10.96.0.1")
      assert.strictEqual(config.namespace, "payments")
      assert.strictEqual(config.tls.ca, CA)
      assert.isTrue(config.tls.rejectUnauthorized)
      assert.deepStrictEqual(config.auth, { kind: "tokenFile", dynamic: true, allowInsecureTokenOverHttp: false })
      assert.deepStrictEqual(yield* headersOf(config), { authorization: `Bearer ${TOKEN}` })
      assertNoSecrets(config)

      const ipv6 = yield* KubeConfig.inCluster({ serviceAccountDirectory: directory }).pipe(
        withEnv({ KUBERNETES_SERVICE_HOST: "fd00::1", KUBERNETES_SERVICE_PORT: "6443" })
      )
      assert.strictEqual(ipv6.server, "https://[fd00::1]:6443")

      const outside = yield* Effect.flip(KubeConfig.inCluster({ serviceAccountDirectory: directory }).pipe(withEnv({})))
      assert.strictEqual(outside.reason, "NotInCluster")
      const noToken = yield* Effect.flip(
        KubeConfig.inCluster({ serviceAccountDirectory: Path.join(root, "nowhere") }).pipe(
          withEnv({ KUBERNETES_SERVICE_HOST: "10.96.0.1", KUBERNETES_SERVICE_PORT: "443" })
        )
      )
      assert.strictEqual(noToken.reason, "NotInCluster")
    }))
})

describe("KubeConfig.fromDefault", () => {
  it.effect("KUBECONFIG: several files merged, first wins, missing files skipped", () =>
    Effect.gen(function*() {
      const first = write(`
current-context: a
clusters: [{ name: k, cluster: { server: "https://first.example" } }]
users: [{ name: u, user: { token: first } }]
contexts: [{ name: a, context: { cluster: k, user: u, namespace: from-first } }]
`)
      const second = write(`
current-context: b
clusters:
- { name: k, cluster: { server: "https://second.example" } }
- { name: other, cluster: { server: "https://other.example" } }
users: [{ name: u, user: { token: second } }]
contexts:
- { name: a, context: { cluster: other, user: u } }
- { name: b, context: { cluster: other, user: u } }
`)
      const missing = Path.join(root, "missing-kubeconfig")
      const env = { KUBECONFIG: [missing, first, second].join(Path.delimiter), HOME: root }
      const current = yield* KubeConfig.fromDefault().pipe(withEnv(env))
      assert.strictEqual(current.server, "https://first.example")
      assert.strictEqual(current.namespace, "from-first")
      assert.deepStrictEqual(yield* headersOf(current), { authorization: "Bearer first" })
      const b = yield* KubeConfig.fromDefault({ context: "b" }).pipe(withEnv(env))
      assert.strictEqual(b.server, "https://other.example")

      const none = yield* Effect.flip(KubeConfig.fromDefault().pipe(withEnv({ KUBECONFIG: missing })))
      assert.strictEqual(none.reason, "FileNotFound")
    }))

  it.effect("~/.kube/config, then NoConfiguration", () =>
    Effect.gen(function*() {
      const home = Path.dirname(write(""))
      const noConfig = yield* Effect.flip(KubeConfig.fromDefault().pipe(withEnv({ HOME: home })))
      assert.strictEqual(noConfig.reason, "NoConfiguration")
      Fs.mkdirSync(Path.join(home, ".kube"))
      Fs.writeFileSync(Path.join(home, ".kube", "config"), kubeconfig)
      const config = yield* KubeConfig.fromDefault().pipe(withEnv({ HOME: home }))
      assert.strictEqual(config.context, "dev")
    }))
})

describe("messages from credential plugins", () => {
  it.live("are one line and have quoted credentials removed", () =>
    Effect.gen(function*() {
      const script =
        `console.error('failed: header "Bearer ${TOKEN}" rejected, token=${TOKEN}\\nsecond line'); process.exit(3)`
      const path = write(`
current-context: c
clusters: [{ name: k, cluster: { server: "https://k.example" } }]
users: [{ name: u, user: { exec: { command: ${JSON.stringify(process.execPath)}, args: ["-e", ${
        JSON.stringify(script)
      }] } } }]
contexts: [{ name: c, context: { cluster: k, user: u } }]
`)
      const config = yield* KubeConfig.fromFile(path)
      const error = yield* Effect.flip(config.headers(new URL(config.server)))
      assert.strictEqual(error.reason, "AuthProviderFailed")
      assert.include(error.message, "failed: header \"Bearer <redacted>\" rejected, token=<redacted> second line")
      assertNoSecrets(error)
    }))
})

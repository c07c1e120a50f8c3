/**
 * Where the API server is and how to talk to it: the server URL, the TLS material (cluster CA, client
 * certificate and key, `insecure-skip-tls-verify` only when configured) and the credentials sent with each
 * request.
 *
 * Credentials are `Redacted` values from the moment they are read: they never appear in logs, error
 * messages, `toString`, `toJSON` or `inspect` output. Credentials that can expire (exec plugins, OIDC and
 * other auth providers, the in-cluster service-account token file) are re-evaluated for every request
 * through `@kubernetes/client-node`'s authenticators, which cache them until they expire (exec, OIDC) or for
 * 60 seconds (token files), so rotated tokens are picked up without a restart.
 *
 * Two safety rules hold for every request: TLS verification is on unless the configuration says
 * `insecure-skip-tls-verify`, and credentials are never sent over plain `http://` to a host other than a
 * loopback address (127.0.0.0/8, ::1, `localhost`) unless `allowInsecureTokenOverHttp` is set; such a
 * configuration fails with `KubeConfigError` reason `InsecureTokenTransport`.
 *
 * @since 0.1.0
 */
import type * as ClientNode from "@kubernetes/client-node"
import * as Config from "effect/Config"
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Fs from "node:fs/promises"
import type * as Https from "node:https"
import * as Net from "node:net"
import * as Os from "node:os"
import * as Path from "node:path"
import { scrubPatterns } from "./internal/redact.js"
import { oneLine } from "./internal/text.js"

// -------------------------------------------------------------------------------------------------
// errors
// -------------------------------------------------------------------------------------------------

/**
 * Why a connection configuration could not be loaded or used.
 *
 * - `FileNotFound` / `FileUnreadable`: a kubeconfig, CA, certificate, key or token file.
 * - `Malformed`: invalid YAML or an entry missing a required field.
 * - `NoConfiguration`: `layerFromDefault` found no kubeconfig and is not running in a cluster.
 * - `NoCurrentContext`, `ContextNotFound`, `ClusterNotFound`, `UserNotFound`: the context chain is broken.
 * - `InvalidServer`: the server URL is not an absolute `http(s)://` URL.
 * - `NotInCluster`: `layerInCluster` outside a pod (no service host/port, no service-account token).
 * - `Unsupported`: a setting this library does not implement (`proxy-url`, client certificates from exec
 *   plugins).
 * - `AuthProviderFailed`: an exec plugin or auth provider failed to produce credentials.
 * - `InsecureTokenTransport`: credentials would be sent over plain http to a non-loopback host.
 *
 * @since 0.1.0
 * @category errors
 */
export type KubeConfigErrorReason =
  | "FileNotFound"
  | "FileUnreadable"
  | "Malformed"
  | "NoConfiguration"
  | "NoCurrentContext"
  | "ContextNotFound"
  | "ClusterNotFound"
  | "UserNotFound"
  | "InvalidServer"
  | "NotInCluster"
  | "Unsupported"
  | "AuthProviderFailed"
  | "InsecureTokenTransport"

/**
 * A connection configuration could not be loaded or used. `message` is one line and never contains
 * credentials.
 *
 * @since 0.1.0
 * @category errors
 */
export class KubeConfigError extends Data.TaggedError("KubeConfigError")<{
  readonly reason: KubeConfigErrorReason
  readonly message: string
  /** The file involved, if any. */
  readonly path?: string | undefined
}> {
  constructor(
    fields: { readonly reason: KubeConfigErrorReason; readonly message: string; readonly path?: string | undefined }
  ) {
    // a server URL with userinfo, a plugin's output: whatever looks like a credential is removed here, once
    super({ ...fields, message: scrubPatterns(fields.message) })
  }
}

// -------------------------------------------------------------------------------------------------
// service
// -------------------------------------------------------------------------------------------------

/**
 * @since 0.1.0
 */
export declare namespace KubeConfig {
  /**
   * @since 0.1.0
   * @category models
   */
  export interface Service {
    /** The API server's base URL without a trailing slash, e.g. `https://10.0.0.1:6443`. */
    readonly server: string
    /** The kubeconfig context in use, if loaded from a kubeconfig. */
    readonly context: string | undefined
    /** The context's default namespace (or the pod's namespace in a cluster), if any. */
    readonly namespace: string | undefined
    readonly tls: Tls
    readonly auth: Auth
    /**
     * The headers that authenticate a request to `url` (`Authorization`, `Impersonate-User`), evaluated
     * now: expiring credentials are refreshed as needed. Fails with `InsecureTokenTransport` when
     * credentials would go over plain http to a non-loopback host.
     */
    readonly headers: (url: URL) => Effect.Effect<Headers, KubeConfigError>
  }

  /**
   * TLS material for the connection (ignored for `http://` servers).
   *
   * @since 0.1.0
   * @category models
   */
  export interface Tls {
    /** PEM certificate(s) of the cluster CA; the system roots when absent. */
    readonly ca?: string | undefined
    /** PEM client certificate. */
    readonly cert?: string | undefined
    /** PEM client key. */
    readonly key?: Redacted.Redacted<string> | undefined
    /** `false` only when the configuration says `insecure-skip-tls-verify`. */
    readonly rejectUnauthorized: boolean
    /** SNI / verification name (`tls-server-name`). */
    readonly serverName?: string | undefined
  }

  /**
   * How requests are authenticated.
   *
   * @since 0.1.0
   * @category models
   */
  export interface Auth {
    readonly kind: AuthKind
    /** Whether credentials are re-evaluated per request (they may expire and rotate). */
    readonly dynamic: boolean
    readonly allowInsecureTokenOverHttp: boolean
  }

  /**
   * @since 0.1.0
   * @category models
   */
  export type AuthKind =
    | "none"
    | "clientCertificate"
    | "token"
    | "tokenFile"
    | "basic"
    | "exec"
    | "authProvider"
    | "custom"

  /**
   * Request headers whose values are secrets.
   *
   * @since 0.1.0
   * @category models
   */
  export type Headers = Readonly<Record<string, Redacted.Redacted<string>>>
}

/**
 * The connection configuration service.
 *
 * @since 0.1.0
 * @category tags
 */
export class KubeConfig extends Context.Service<KubeConfig, KubeConfig.Service>()("effect-informers/KubeConfig") {}

/**
 * Options shared by the kubeconfig loaders.
 *
 * @since 0.1.0
 * @category models
 */
export interface LoadOptions {
  /** The context to use instead of the kubeconfig's `current-context`. */
  readonly context?: string | undefined
  /** Allow sending credentials over plain http to a non-loopback host. Never needed with TLS. */
  readonly allowInsecureTokenOverHttp?: boolean | undefined
}

/**
 * A connection described directly.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /** `https://host:port` (or `http://` for a local proxy). */
  readonly server: string
  /** A static bearer token. */
  readonly token?: Redacted.Redacted<string> | undefined
  /** A bearer token evaluated for every request (takes precedence over `token`): for rotating tokens. */
  readonly tokenProvider?: Effect.Effect<Redacted.Redacted<string>, KubeConfigError> | undefined
  readonly username?: string | undefined
  readonly password?: Redacted.Redacted<string> | undefined
  /** Cluster CA: PEM, or base64 of PEM as in a kubeconfig's `certificate-authority-data`. Wins over `caFile`. */
  readonly caData?: string | undefined
  readonly caFile?: string | undefined
  /** Client certificate: PEM, or base64 of PEM. */
  readonly certData?: string | undefined
  readonly certFile?: string | undefined
  /** Client key: PEM, or base64 of PEM. */
  readonly keyData?: Redacted.Redacted<string> | undefined
  readonly keyFile?: string | undefined
  /** Disables verification of the server's certificate. Off by default. */
  readonly skipTLSVerify?: boolean | undefined
  readonly tlsServerName?: string | undefined
  readonly namespace?: string | undefined
  readonly impersonateUser?: string | undefined
  readonly allowInsecureTokenOverHttp?: boolean | undefined
}

/**
 * Options of `layerInCluster`.
 *
 * @since 0.1.0
 * @category models
 */
export interface InClusterOptions {
  /** Where the service account is mounted. Default `/var/run/secrets/kubernetes.io/serviceaccount`. */
  readonly serviceAccountDirectory?: string | undefined
  readonly allowInsecureTokenOverHttp?: boolean | undefined
}

// -------------------------------------------------------------------------------------------------
// helpers
// -------------------------------------------------------------------------------------------------

/**
 * Whether a URL hostname is a loopback address: `localhost`, 127.0.0.0/8, `::1` (bracketed or not) or
 * an IPv4-mapped 127.0.0.0/8 address.
 *
 * @since 0.1.0
 * @category utils
 */
export const isLoopbackHost = (hostname: string): boolean => {
  let host = hostname.toLowerCase()
  if (host.startsWith("[") && host.endsWith("]")) host = host.slice(1, -1)
  if (host === "localhost" || host === "localhost.") return true
  if (Net.isIPv4(host)) return host.startsWith("127.")
  if (!Net.isIPv6(host)) return false
  if (host === "::1" || /^(0{1,4}:){7}0{0,3}1$/.test(host)) return true
  const mapped = /^(?:(?:0{1,4}:){5}|::|(?:0{1,4}:){1,4}:)ffff:(.+)$/.exec(host)
  if (mapped === null) return false
  const rest = mapped[1]
  if (Net.isIPv4(rest)) return rest.startsWith("127.")
  const high = rest.split(":")[0]
  return high !== undefined && high.length > 0 && (Number.parseInt(high, 16) >> 8) === 127
}

const defaultServiceAccountDirectory = "/var/run/secrets/kubernetes.io/serviceaccount"

/** A message from a library or plugin, with whatever looks like a credential removed (the one scrubber). */
const causeMessage = (cause: unknown): string =>
  oneLine(
    scrubPatterns(cause instanceof Error ? cause.message : typeof cause === "string" ? cause : String(cause)),
    300
  )

const errnoCode = (cause: unknown): string | undefined => {
  const code = (cause as { readonly code?: unknown } | null)?.code
  return typeof code === "string" ? code : undefined
}

const fileError = (path: string, what: string, cause: unknown): KubeConfigError => {
  const code = errnoCode(cause)
  return code === "ENOENT" || code === "ENOTDIR"
    ? new KubeConfigError({ reason: "FileNotFound", message: `${what} ${path} does not exist`, path })
    : new KubeConfigError({
      reason: "FileUnreadable",
      message: `${what} ${path} cannot be read (${code ?? causeMessage(cause)})`,
      path
    })
}

const readFile = (path: string, what: string): Effect.Effect<string, KubeConfigError> =>
  Effect.tryPromise({ try: () => Fs.readFile(path, "utf8"), catch: (cause) => fileError(path, what, cause) })

const fileExists = (path: string): Effect.Effect<boolean> =>
  Effect.promise(() => Fs.access(path).then(() => true, () => false))

/** PEM stays PEM; anything else is taken as base64 of PEM (kubeconfig `*-data` fields). */
const pemFromData = (data: string): string =>
  data.includes("-----BEGIN") ? data : Buffer.from(data, "base64").toString("utf8")

const optionalEnv = (name: string): Effect.Effect<Option.Option<string>> =>
  Config.option(Config.String(name)).pipe(
    Effect.orElseSucceed(() => Option.none<string>()),
    Effect.map(Option.filter((value: string) => value !== ""))
  )

const clientNode = Effect.promise(() => import("@kubernetes/client-node"))

const bearer = (token: string): Redacted.Redacted<string> => Redacted.make(`Bearer ${token.trim()}`)

interface Resolved {
  readonly source: string
  readonly server: string
  readonly context: string | undefined
  readonly namespace: string | undefined
  readonly tls: KubeConfig.Tls
  readonly kind: KubeConfig.AuthKind
  readonly dynamic: boolean
  /** Credentials that can be sent (`Authorization`); checked against the plain-http rule. */
  readonly hasCredentials: boolean
  readonly headers: Effect.Effect<KubeConfig.Headers, KubeConfigError>
  readonly allowInsecureTokenOverHttp: boolean
}

const insecure = (source: string, url: URL): KubeConfigError =>
  new KubeConfigError({
    reason: "InsecureTokenTransport",
    message: `${source}: refusing to send credentials over plain http to ${url.host} ` +
      `(use https, a loopback address, or allowInsecureTokenOverHttp)`
  })

const finish = (resolved: Resolved): Effect.Effect<KubeConfig.Service, KubeConfigError> =>
  Effect.suspend(() => {
    let url: URL
    try {
      url = new URL(resolved.server)
    } catch {
      return Effect.fail(
        new KubeConfigError({
          reason: "InvalidServer",
          message: `${resolved.source}: server "${oneLine(resolved.server, 200)}" is not a URL`
        })
      )
    }
    if (url.protocol !== "https:" && url.protocol !== "http:") {
      return Effect.fail(
        new KubeConfigError({
          reason: "InvalidServer",
          message: `${resolved.source}: server ${url.origin} must use https:// or http://`
        })
      )
    }
    if (url.username !== "" || url.password !== "" || url.search !== "" || url.hash !== "") {
      return Effect.fail(
        new KubeConfigError({
          reason: "InvalidServer",
          message: `${resolved.source}: server URL must not contain credentials, a query or a fragment`
        })
      )
    }
    const mayLeak = (target: URL) =>
      resolved.hasCredentials && !resolved.allowInsecureTokenOverHttp && target.protocol === "http:" &&
      !isLoopbackHost(target.hostname)
    if (mayLeak(url)) return Effect.fail(insecure(resolved.source, url))
    const server = url.href.replace(/\/+$/, "")
    const service: KubeConfig.Service = {
      server,
      context: resolved.context,
      namespace: resolved.namespace,
      tls: resolved.tls,
      auth: {
        kind: resolved.kind,
        dynamic: resolved.dynamic,
        allowInsecureTokenOverHttp: resolved.allowInsecureTokenOverHttp
      },
      headers: (target) => mayLeak(target) ? Effect.fail(insecure(resolved.source, target)) : resolved.headers
    }
    return Effect.succeed(service)
  })

const noHeaders: Effect.Effect<KubeConfig.Headers, KubeConfigError> = Effect.succeed({})

// -------------------------------------------------------------------------------------------------
// from a @kubernetes/client-node KubeConfig
// -------------------------------------------------------------------------------------------------

const names = (entries: ReadonlyArray<{ readonly name: string }> | undefined): string =>
  entries === undefined || entries.length === 0 ? "none" : entries.map((entry) => `"${entry.name}"`).join(", ")

const hasCustomAuthenticators = (kc: ClientNode.KubeConfig): boolean => {
  const custom = (kc as unknown as { readonly custom_authenticators?: unknown }).custom_authenticators
  return Array.isArray(custom) && custom.length > 0
}

/**
 * Headers from client-node's authenticators (exec, OIDC, token file, azure, gcp, custom), evaluated per
 * call with `applyToHTTPSOptions` (which, unlike `applyToFetchOptions`, does not reject a token file's
 * trailing newline: values are trimmed here). A shadow of the KubeConfig (sharing its authenticators and their caches) reports a fixed https
 * cluster and the user without its certificate files, so that no CA or key file is read and no agent
 * restriction applies per request: only the authentication headers are computed.
 */
const dynamicHeaders = (
  kc: ClientNode.KubeConfig,
  user: ClientNode.User,
  source: string
): Effect.Effect<KubeConfig.Headers, KubeConfigError> => {
  const { certData: _certData, certFile: _certFile, keyData: _keyData, keyFile: _keyFile, ...authUser } = user
  const authCluster: ClientNode.Cluster = {
    name: "effect-informers-auth",
    server: "https://auth.invalid",
    skipTLSVerify: true
  }
  const shadow = Object.create(kc) as ClientNode.KubeConfig
  shadow.getCurrentCluster = () => authCluster
  shadow.getCurrentUser = () => authUser
  const failed = (cause: unknown) =>
    new KubeConfigError({
      reason: "AuthProviderFailed",
      message: `${source}: credentials of user "${user.name}" could not be obtained: ${causeMessage(cause)}`
    })
  return Effect.tryPromise({
    try: async () => {
      const options: Https.RequestOptions = {}
      await shadow.applyToHTTPSOptions(options)
      return options
    },
    catch: failed
  }).pipe(
    Effect.flatMap((options) => {
      if (options.cert !== undefined || options.key !== undefined) {
        return Effect.fail(
          new KubeConfigError({
            reason: "Unsupported",
            message: `${source}: the credential plugin of user "${user.name}" returned a client certificate, ` +
              `which is not supported (only tokens are)`
          })
        )
      }
      const headers: Record<string, Redacted.Redacted<string>> = {}
      for (const [name, value] of Object.entries(options.headers ?? {})) {
        if (value === undefined) continue
        headers[name.toLowerCase()] = Redacted.make(String(value).trim())
      }
      if (typeof options.auth === "string" && options.auth !== "") {
        headers.authorization = Redacted.make("Basic " + Buffer.from(options.auth).toString("base64"))
      }
      return Effect.succeed(headers)
    })
  )
}

const fromClientKubeConfig = (
  kc: ClientNode.KubeConfig,
  options: LoadOptions,
  source: string
): Effect.Effect<KubeConfig.Service, KubeConfigError> =>
  Effect.gen(function*() {
    const contextName = options.context ?? kc.getCurrentContext()
    if (contextName === undefined || contextName === null || contextName === "") {
      return yield* new KubeConfigError({
        reason: "NoCurrentContext",
        message: `${source}: no current-context is set and no context was requested (contexts: ${
          names(kc.getContexts())
        })`
      })
    }
    const context = kc.getContextObject(contextName)
    if (context === null) {
      return yield* new KubeConfigError({
        reason: "ContextNotFound",
        message: `${source}: context "${contextName}" not found (contexts: ${names(kc.getContexts())})`
      })
    }
    const cluster = kc.getCluster(context.cluster)
    if (cluster === null) {
      return yield* new KubeConfigError({
        reason: "ClusterNotFound",
        message: `${source}: cluster "${context.cluster}" of context "${contextName}" not found (clusters: ${
          names(kc.getClusters())
        })`
      })
    }
    const user = context.user === undefined || context.user === "" ? null : kc.getUser(context.user)
    if (user === null && context.user !== undefined && context.user !== "") {
      return yield* new KubeConfigError({
        reason: "UserNotFound",
        message: `${source}: user "${context.user}" of context "${contextName}" not found (users: ${
          names(kc.getUsers())
        })`
      })
    }
    if (cluster.proxyUrl !== undefined && cluster.proxyUrl !== null && cluster.proxyUrl !== "") {
      return yield* new KubeConfigError({
        reason: "Unsupported",
        message: `${source}: cluster "${cluster.name}" sets proxy-url, which is not supported`
      })
    }

    // as in client-go, inline data takes precedence over a file
    const ca = cluster.caData
      ? pemFromData(cluster.caData)
      : cluster.caFile
      ? yield* readFile(cluster.caFile, "certificate-authority")
      : undefined
    const cert = user?.certData
      ? pemFromData(user.certData)
      : user?.certFile
      ? yield* readFile(user.certFile, "client-certificate")
      : undefined
    const key = user?.keyData
      ? Redacted.make(pemFromData(user.keyData))
      : user?.keyFile
      ? Redacted.make(yield* readFile(user.keyFile, "client-key"))
      : undefined
    const tls: KubeConfig.Tls = {
      ca,
      cert,
      key,
      rejectUnauthorized: cluster.skipTLSVerify !== true,
      serverName: cluster.tlsServerName ?? undefined
    }

    let kind: KubeConfig.AuthKind = cert !== undefined ? "clientCertificate" : "none"
    let dynamic = false
    let hasCredentials = false
    let headers = noHeaders
    if (user !== null) {
      const authProvider = user.authProvider as { readonly name?: unknown; readonly config?: any } | null | undefined
      if (user.exec || authProvider || hasCustomAuthenticators(kc)) {
        kind = user.exec || authProvider?.name === "exec" || authProvider?.config?.exec
          ? "exec"
          : authProvider?.config?.tokenFile
          ? "tokenFile"
          : authProvider
          ? "authProvider"
          : user.token
          ? "token"
          : "custom"
        dynamic = true
        hasCredentials = true
        headers = dynamicHeaders(kc, user, source)
      } else {
        const fixed: Record<string, Redacted.Redacted<string>> = {}
        if (user.token) {
          kind = "token"
          fixed.authorization = bearer(user.token)
        } else if (user.username) {
          kind = "basic"
          fixed.authorization = Redacted.make(
            "Basic " + Buffer.from(`${user.username}:${user.password ?? ""}`).toString("base64")
          )
        }
        if (user.impersonateUser) fixed["impersonate-user"] = Redacted.make(user.impersonateUser)
        hasCredentials = fixed.authorization !== undefined
        headers = Effect.succeed(fixed)
      }
    }
    return yield* finish({
      source,
      server: cluster.server,
      context: contextName,
      namespace: context.namespace === undefined || context.namespace === "" ? undefined : context.namespace,
      tls,
      kind,
      dynamic,
      hasCredentials,
      headers,
      allowInsecureTokenOverHttp: options.allowInsecureTokenOverHttp === true
    })
  })

const malformed = (source: string, cause: unknown): KubeConfigError => {
  const code = errnoCode(cause)
  if (code === "ENOENT") {
    const path = (cause as { readonly path?: unknown }).path
    return new KubeConfigError({
      reason: "FileNotFound",
      message: `${source}: file ${typeof path === "string" ? path : ""} does not exist`,
      ...(typeof path === "string" ? { path } : {})
    })
  }
  const yamlError = cause as {
    readonly name?: unknown
    readonly reason?: unknown
    readonly mark?: { readonly line?: unknown; readonly column?: unknown }
  }
  // js-yaml messages quote the offending lines, which may hold a token: keep only position and reason
  if (yamlError?.name === "YAMLException") {
    const line = typeof yamlError.mark?.line === "number" ? yamlError.mark.line + 1 : undefined
    const column = typeof yamlError.mark?.column === "number" ? yamlError.mark.column + 1 : undefined
    const where = line === undefined ? "" : ` at line ${line}${column === undefined ? "" : `, column ${column}`}`
    const reason = typeof yamlError.reason === "string" ? `: ${oneLine(yamlError.reason, 120)}` : ""
    return new KubeConfigError({
      reason: "Malformed",
      message: `${source}: invalid YAML${where}${reason}`,
      path: source
    })
  }
  if (cause instanceof TypeError) {
    return new KubeConfigError({ reason: "Malformed", message: `${source}: not a kubeconfig document`, path: source })
  }
  return new KubeConfigError({ reason: "Malformed", message: `${source}: ${causeMessage(cause)}`, path: source })
}

const loadFile = (path: string): Effect.Effect<ClientNode.KubeConfig, KubeConfigError> =>
  Effect.gen(function*() {
    const text = yield* readFile(path, "kubeconfig")
    const { KubeConfig: ClientKubeConfig } = yield* clientNode
    const kc = new ClientKubeConfig()
    yield* Effect.try({
      try: () => {
        kc.loadFromString(text)
        kc.makePathsAbsolute(Path.dirname(path))
      },
      catch: (cause) => malformed(path, cause)
    })
    return kc
  })

/** Merges kubeconfigs the way client-go does: the first file to define a name or current-context wins. */
const mergeFirstWins = (
  into: ClientNode.KubeConfig,
  from: ClientNode.KubeConfig
): void => {
  const add = <T extends { readonly name: string }>(target: Array<T>, source: ReadonlyArray<T> | undefined) => {
    for (const entry of source ?? []) {
      if (!target.some((existing) => existing.name === entry.name)) target.push(entry)
    }
  }
  add(into.clusters, from.clusters)
  add(into.users, from.users)
  add(into.contexts, from.contexts)
  if (!into.currentContext && from.currentContext) into.currentContext = from.currentContext
}

// -------------------------------------------------------------------------------------------------
// constructors
// -------------------------------------------------------------------------------------------------

/**
 * Uses an already loaded `@kubernetes/client-node` KubeConfig (its current context, or `options.context`).
 * Its authenticators, including custom ones, produce the credentials.
 *
 * @since 0.1.0
 * @category constructors
 */
export const fromKubeConfig = (
  kc: ClientNode.KubeConfig,
  options: LoadOptions = {}
): Effect.Effect<KubeConfig.Service, KubeConfigError> => fromClientKubeConfig(kc, options, "kubeconfig")

/**
 * Loads a kubeconfig file. Relative certificate paths are resolved against the file's directory.
 *
 * @since 0.1.0
 * @category constructors
 */
export const fromFile = (
  path: string,
  options: LoadOptions = {}
): Effect.Effect<KubeConfig.Service, KubeConfigError> =>
  Effect.flatMap(loadFile(path), (kc) => fromClientKubeConfig(kc, options, path))

/**
 * Loads the kubeconfig files of a `KUBECONFIG`-style list, merged the way client-go does (files that do
 * not exist are skipped; the first file to define a name or `current-context` wins).
 *
 * @since 0.1.0
 * @category constructors
 */
export const fromFiles = (
  paths: ReadonlyArray<string>,
  options: LoadOptions = {}
): Effect.Effect<KubeConfig.Service, KubeConfigError> =>
  Effect.gen(function*() {
    const existing: Array<string> = []
    for (const path of paths) {
      if (yield* fileExists(path)) existing.push(path)
    }
    if (existing.length === 0) {
      return yield* new KubeConfigError({
        reason: "FileNotFound",
        message: `no kubeconfig file exists among ${paths.join(Path.delimiter) || "(none)"}`,
        ...(paths.length === 1 ? { path: paths[0] } : {})
      })
    }
    if (existing.length === 1) return yield* fromFile(existing[0]!, options)
    const { KubeConfig: ClientKubeConfig } = yield* clientNode
    const merged = new ClientKubeConfig()
    merged.loadFromOptions({ clusters: [], users: [], contexts: [], currentContext: undefined })
    for (const path of existing) mergeFirstWins(merged, yield* loadFile(path))
    return yield* fromClientKubeConfig(merged, options, existing.join(Path.delimiter))
  })

/**
 * The pod's service account: `https://$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT`, the mounted CA,
 * the mounted token (re-read every 60 seconds, so rotated tokens are used) and the pod's namespace.
 * Environment variables are read through the `ConfigProvider`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const inCluster = (
  options: InClusterOptions = {}
): Effect.Effect<KubeConfig.Service, KubeConfigError> =>
  Effect.gen(function*() {
    const directory = options.serviceAccountDirectory ?? defaultServiceAccountDirectory
    const host = yield* optionalEnv("KUBERNETES_SERVICE_HOST")
    const port = yield* optionalEnv("KUBERNETES_SERVICE_PORT")
    if (Option.isNone(host) || Option.isNone(port)) {
      return yield* new KubeConfigError({
        reason: "NotInCluster",
        message: "not running in a cluster: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must be set"
      })
    }
    const tokenFile = Path.join(directory, "token")
    if (!(yield* fileExists(tokenFile))) {
      return yield* new KubeConfigError({
        reason: "NotInCluster",
        message: `not running in a cluster: service account token ${tokenFile} does not exist`,
        path: tokenFile
      })
    }
    const caFile = Path.join(directory, "ca.crt")
    const hasCa = yield* fileExists(caFile)
    const namespaceFile = Path.join(directory, "namespace")
    const namespace = (yield* fileExists(namespaceFile))
      ? (yield* readFile(namespaceFile, "namespace file")).trim()
      : undefined
    const hostname = Net.isIPv6(host.value) ? `[${host.value}]` : host.value
    const { KubeConfig: ClientKubeConfig } = yield* clientNode
    const kc = new ClientKubeConfig()
    kc.loadFromOptions({
      clusters: [{
        name: "inCluster",
        server: `https://${hostname}:${port.value}`,
        skipTLSVerify: false,
        ...(hasCa ? { caFile } : {})
      }],
      users: [{ name: "inClusterUser", authProvider: { name: "tokenFile", config: { tokenFile } } }],
      contexts: [{
        name: "inClusterContext",
        cluster: "inCluster",
        user: "inClusterUser",
        ...(namespace === undefined || namespace === "" ? {} : { namespace })
      }],
      currentContext: "inClusterContext"
    })
    return yield* fromClientKubeConfig(
      kc,
      { allowInsecureTokenOverHttp: options.allowInsecureTokenOverHttp },
      "in-cluster config"
    )
  })

/**
 * The configuration `kubectl` would use: the files in `KUBECONFIG` (merged), else `~/.kube/config`, else
 * the in-cluster service account; `NoConfiguration` when there is none. Environment variables are read
 * through the `ConfigProvider`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const fromDefault = (
  options: LoadOptions = {}
): Effect.Effect<KubeConfig.Service, KubeConfigError> =>
  Effect.gen(function*() {
    const kubeconfig = yield* optionalEnv("KUBECONFIG")
    if (Option.isSome(kubeconfig)) {
      const paths = kubeconfig.value.split(Path.delimiter).filter((path) => path !== "")
      if (paths.length > 0) return yield* fromFiles(paths, options)
    }
    const home = Option.getOrElse(yield* optionalEnv("HOME"), () => Os.homedir())
    const file = Path.join(home, ".kube", "config")
    if (yield* fileExists(file)) return yield* fromFile(file, options)
    const host = yield* optionalEnv("KUBERNETES_SERVICE_HOST")
    if (Option.isSome(host)) {
      return yield* inCluster({ allowInsecureTokenOverHttp: options.allowInsecureTokenOverHttp })
    }
    return yield* new KubeConfigError({
      reason: "NoConfiguration",
      message: `no configuration found: KUBECONFIG is not set, ${file} does not exist and not running in a cluster`
    })
  })

/**
 * A connection described by options.
 *
 * @since 0.1.0
 * @category constructors
 */
export const fromOptions = (options: Options): Effect.Effect<KubeConfig.Service, KubeConfigError> =>
  Effect.gen(function*() {
    const ca = options.caData !== undefined
      ? pemFromData(options.caData)
      : options.caFile !== undefined
      ? yield* readFile(options.caFile, "certificate-authority")
      : undefined
    const cert = options.certData !== undefined
      ? pemFromData(options.certData)
      : options.certFile !== undefined
      ? yield* readFile(options.certFile, "client-certificate")
      : undefined
    const key = options.keyData !== undefined
      ? Redacted.make(pemFromData(Redacted.value(options.keyData)))
      : options.keyFile !== undefined
      ? Redacted.make(yield* readFile(options.keyFile, "client-key"))
      : undefined
    const impersonate: Record<string, Redacted.Redacted<string>> = options.impersonateUser === undefined
      ? {}
      : { "impersonate-user": Redacted.make(options.impersonateUser) }
    let kind: KubeConfig.AuthKind = cert !== undefined ? "clientCertificate" : "none"
    let headers = Effect.succeed(impersonate) as Effect.Effect<KubeConfig.Headers, KubeConfigError>
    const tokenProvider = options.tokenProvider
    if (tokenProvider !== undefined) {
      kind = "custom"
      headers = Effect.map(tokenProvider, (token) => ({ ...impersonate, authorization: bearer(Redacted.value(token)) }))
    } else if (options.token !== undefined) {
      kind = "token"
      headers = Effect.succeed({ ...impersonate, authorization: bearer(Redacted.value(options.token)) })
    } else if (options.username !== undefined) {
      kind = "basic"
      const password = options.password === undefined ? "" : Redacted.value(options.password)
      headers = Effect.succeed({
        ...impersonate,
        authorization: Redacted.make("Basic " + Buffer.from(`${options.username}:${password}`).toString("base64"))
      })
    }
    return yield* finish({
      source: "kubeconfig options",
      server: options.server,
      context: undefined,
      namespace: options.namespace,
      tls: {
        ca,
        cert,
        key,
        rejectUnauthorized: options.skipTLSVerify !== true,
        serverName: options.tlsServerName
      },
      kind,
      dynamic: tokenProvider !== undefined,
      hasCredentials: kind === "custom" || kind === "token" || kind === "basic",
      headers,
      allowInsecureTokenOverHttp: options.allowInsecureTokenOverHttp === true
    })
  })

// -------------------------------------------------------------------------------------------------
// layers
// -------------------------------------------------------------------------------------------------

/**
 * `fromDefault` as a layer: `KUBECONFIG`, `~/.kube/config`, or the in-cluster service account.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { KubeConfig } from "effect-informers"
 *
 * const program = Effect.gen(function*() {
 *   const config = yield* KubeConfig.KubeConfig
 *   yield* Effect.log(`API server: ${config.server}`)
 * })
 *
 * Effect.runFork(program.pipe(Effect.provide(KubeConfig.layerFromDefault())))
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layerFromDefault = (options: LoadOptions = {}): Layer.Layer<KubeConfig, KubeConfigError> =>
  Layer.effect(KubeConfig, fromDefault(options))

/**
 * `fromFile` as a layer.
 *
 * @example
 * ```ts
 * import { KubeConfig } from "effect-informers"
 *
 * const staging = KubeConfig.layerFromFile("/home/me/.kube/config", { context: "staging" })
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layerFromFile = (path: string, options: LoadOptions = {}): Layer.Layer<KubeConfig, KubeConfigError> =>
  Layer.effect(KubeConfig, fromFile(path, options))

/**
 * `inCluster` as a layer.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerInCluster = (options: InClusterOptions = {}): Layer.Layer<KubeConfig, KubeConfigError> =>
  Layer.effect(KubeConfig, inCluster(options))

/**
 * `fromOptions` as a layer.
 *
 * @example
 * ```ts
 * import { Redacted } from "effect"
 * import { KubeConfig } from "effect-informers"
 *
 * const layer = KubeConfig.layerFromOptions({
 *   server: "https://10.0.0.1:6443",
 *   token: Redacted.make("a-service-account-token"),
 *   caFile: "/etc/kubernetes/pki/ca.crt"
 * })
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layerFromOptions = (options: Options): Layer.Layer<KubeConfig, KubeConfigError> =>
  Layer.effect(KubeConfig, fromOptions(options))

/**
 * `fromKubeConfig` as a layer.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerFromKubeConfig = (
  kc: ClientNode.KubeConfig,
  options: LoadOptions = {}
): Layer.Layer<KubeConfig, KubeConfigError> => Layer.effect(KubeConfig, fromKubeConfig(kc, options))

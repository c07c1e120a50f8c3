/**
 * The ListerWatcher over HTTP: LIST and WATCH requests for one resource, sent with the `HttpClient` in
 * the context to the API server the `KubeConfig` describes, with its credentials.
 *
 * - LIST reads the body as text, `JSON.parse`s it once and validates the envelope and item metadata
 *   (`Wire.decodeList`); objects are the parsed JSON, never copied or converted.
 * - WATCH streams the body: bytes are split into lines and decoded chunk by chunk (`Wire.decodeWatchLine`),
 *   never buffered whole. `ERROR` events become the stream's typed failure, unknown event types and objects
 *   of another kind are skipped with a warning, a line over `maxLineBytes` fails with `Decode`, a reset
 *   connection or a body cut mid-line fails with `Transport`, and a clean end of the body ends the stream.
 *   Interrupting the stream aborts the request, which closes its connection.
 * - Error responses map to the typed errors of `ListerWatcher` through `fromStatus` (the body's `Status`
 *   when there is one, the HTTP code otherwise; `Retry-After` on 429).
 *
 * `layerHttpClient` provides a Node `HttpClient` for a `KubeConfig`: one keep-alive agent pool with the
 * cluster's TLS material, so LIST and WATCH requests reuse connections.
 *
 * @since 0.1.0
 */
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import * as HttpClient from "@effect/platform/HttpClient"
import type * as HttpClientError from "@effect/platform/HttpClientError"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import type * as HttpClientResponse from "@effect/platform/HttpClientResponse"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Mailbox from "effect/Mailbox"
import * as Redacted from "effect/Redacted"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import { decodeWatchBody, defaultMaxLineBytes } from "./internal/httpWatchDecoder.js"
import type { KubeConfigError } from "./KubeConfig.js"
import { KubeConfig } from "./KubeConfig.js"
import type { KubeObject } from "./KubeObject.js"
import type { ListerWatcherError, ListOptions, ListPage, WatchEvent, WatchOptions } from "./ListerWatcher.js"
import { Decode, fromStatus, ListerWatcher, ListerWatcherSource, Transport } from "./ListerWatcher.js"
import type { Resource } from "./Resource.js"
import { collectionPath, groupResource } from "./Resource.js"
import type { Status } from "./Wire.js"
import { decodeList, failureStatus, isStatus } from "./Wire.js"

// -------------------------------------------------------------------------------------------------
// options
// -------------------------------------------------------------------------------------------------

/**
 * What to list and watch, and how.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /** Namespace of a namespaced resource; all namespaces when absent. Ignored for cluster-scoped ones. */
  readonly namespace?: string | undefined
  /** Applied to every LIST and WATCH (an option passed per call replaces it). */
  readonly labelSelector?: string | undefined
  /** Applied to every LIST and WATCH (an option passed per call replaces it). */
  readonly fieldSelector?: string | undefined
  /**
   * Fail a watch with `Transport` when no bytes arrive for this long (bookmarks count). Pair it with
   * `allowWatchBookmarks` so that a quiet but healthy watch keeps receiving bytes. Default: no watchdog.
   */
  readonly watchInactivityTimeout?: Duration.DurationInput | undefined
  /** The longest watch line accepted, in bytes. Default 64 MiB. */
  readonly maxLineBytes?: number | undefined
  /** `User-Agent` header. Default `effect-informers/0.1.0`. */
  readonly userAgent?: string | undefined
}

/**
 * Options of `layerSource`: those of `Options` that do not depend on the scope of each ListerWatcher.
 *
 * @since 0.1.0
 * @category models
 */
export interface SourceOptions extends Omit<Options, "namespace" | "labelSelector" | "fieldSelector"> {}

/**
 * Options of the Node HTTP client built for a `KubeConfig`.
 *
 * @since 0.1.0
 * @category models
 */
export interface HttpClientOptions {
  /** Maximum concurrent connections per host (every open watch holds one). Default: unlimited. */
  readonly maxSockets?: number | undefined
  /** Idle connections kept for reuse per host. Default 256. */
  readonly maxFreeSockets?: number | undefined
  /** Initial delay of TCP keep-alive probes on idle connections. Default 30 seconds. */
  readonly tcpKeepAlive?: Duration.DurationInput | undefined
}

const defaultUserAgent = "effect-informers/0.1.0"

// -------------------------------------------------------------------------------------------------
// helpers
// -------------------------------------------------------------------------------------------------

const oneLine = (text: string, max = 200): string => {
  const line = text.replace(/\s+/g, " ").trim()
  return line.length > max ? line.slice(0, max) + "…" : line
}

const causeMessage = (cause: unknown): string | undefined => {
  if (cause instanceof Error) {
    const code = (cause as { readonly code?: unknown }).code
    const message = oneLine(cause.message)
    return typeof code === "string" && !message.includes(code) ? `${message} (${code})` : message
  }
  return cause === undefined ? undefined : oneLine(String(cause))
}

/** Removes the credential part of the request's Authorization header from text received from a server. */
const scrub = (text: string, request: HttpClientRequest.HttpClientRequest): string => {
  const authorization = request.headers["authorization"]
  if (authorization === undefined) return text
  const secret = authorization.slice(authorization.indexOf(" ") + 1)
  return secret.length >= 4 && text.includes(secret) ? text.split(secret).join("<redacted>") : text
}

const reasonForCode = (code: number): string => {
  switch (code) {
    case 400:
      return "BadRequest"
    case 401:
      return "Unauthorized"
    case 403:
      return "Forbidden"
    case 404:
      return "NotFound"
    case 405:
      return "MethodNotAllowed"
    case 406:
      return "NotAcceptable"
    case 409:
      return "Conflict"
    case 410:
      return "Expired"
    case 413:
      return "RequestEntityTooLarge"
    case 415:
      return "UnsupportedMediaType"
    case 422:
      return "Invalid"
    case 429:
      return "TooManyRequests"
    case 500:
      return "InternalError"
    case 503:
      return "ServiceUnavailable"
    case 504:
      return "Timeout"
    default:
      return code >= 500 ? "InternalError" : "Unknown"
  }
}

const setParam = (params: Array<[string, string]>, name: string, value: string | undefined): void => {
  if (value !== undefined && value !== "") params.push([name, value])
}

const setNumber = (params: Array<[string, string]>, name: string, value: number | undefined): void => {
  if (value !== undefined) params.push([name, String(value)])
}

const listParams = (base: Options, options: ListOptions): Array<[string, string]> => {
  const params: Array<[string, string]> = []
  setParam(params, "labelSelector", options.labelSelector ?? base.labelSelector)
  setParam(params, "fieldSelector", options.fieldSelector ?? base.fieldSelector)
  setParam(params, "resourceVersion", options.resourceVersion)
  setParam(params, "resourceVersionMatch", options.resourceVersionMatch)
  if (options.limit !== undefined && options.limit > 0) params.push(["limit", String(options.limit)])
  setParam(params, "continue", options.continue)
  setNumber(params, "timeoutSeconds", options.timeoutSeconds)
  return params
}

const watchParams = (base: Options, options: WatchOptions): Array<[string, string]> => {
  const params: Array<[string, string]> = [["watch", "true"]]
  setParam(params, "labelSelector", options.labelSelector ?? base.labelSelector)
  setParam(params, "fieldSelector", options.fieldSelector ?? base.fieldSelector)
  setParam(params, "resourceVersion", options.resourceVersion)
  setParam(params, "resourceVersionMatch", options.resourceVersionMatch)
  if (options.allowWatchBookmarks === true) params.push(["allowWatchBookmarks", "true"])
  if (options.sendInitialEvents !== undefined) params.push(["sendInitialEvents", String(options.sendInitialEvents)])
  setNumber(params, "timeoutSeconds", options.timeoutSeconds)
  return params
}

/**
 * `"pods in default"`, `"pods in all namespaces"`, `"nodes"`.
 */
const describe = (resource: Resource<unknown>, namespace: string | undefined): string =>
  !resource.namespaced
    ? groupResource(resource)
    : namespace === undefined || namespace === ""
    ? `${groupResource(resource)} in all namespaces`
    : `${groupResource(resource)} in ${namespace}`

// -------------------------------------------------------------------------------------------------
// constructors
// -------------------------------------------------------------------------------------------------

/** Chunks of a watch body read ahead of the decoder (when the inactivity watchdog is on). */
const pumpCapacity = 64

const unsafeMake = <A>(
  resource: Resource<A>,
  options: Options,
  config: KubeConfig.Service,
  client: HttpClient.HttpClient
): ListerWatcher.Service<A> => {
  const description = describe(resource, options.namespace)
  const url = config.server + collectionPath(resource, options.namespace)
  const target = new URL(url)
  const scopedClient = HttpClient.withScope(client)
  const maxLineBytes = options.maxLineBytes ?? defaultMaxLineBytes
  const inactivity = options.watchInactivityTimeout === undefined
    ? undefined
    : Duration.decode(options.watchInactivityTimeout)
  const decodeBody = decodeWatchBody<A>({ kind: resource.kind, description, maxLineBytes })
  const userAgent = options.userAgent ?? defaultUserAgent

  const transport = (verb: string) => (error: HttpClientError.HttpClientError): Transport =>
    new Transport({
      message: `${verb} ${description}: ${causeMessage(error.cause) ?? `${error.reason} error`}`,
      cause: error.cause
    })

  const credentials = (verb: string) => (error: KubeConfigError): Transport =>
    new Transport({ message: `${verb} ${description}: ${error.message}`, cause: error })

  const request = (verb: string, params: Array<[string, string]>) =>
    Effect.map(
      Effect.mapError(config.headers(target), credentials(verb)),
      (auth) => {
        const headers: Record<string, string> = { accept: "application/json", "user-agent": userAgent }
        for (const name in auth) headers[name] = Redacted.value(auth[name]!)
        return HttpClientRequest.get(url, { urlParams: params, headers })
      }
    )

  /** The typed error of a non-2xx response, from its `Status` body or its HTTP code. */
  const statusError = (
    verb: string,
    response: HttpClientResponse.HttpClientResponse
  ): Effect.Effect<never, ListerWatcherError> =>
    Effect.flatMap(
      Effect.mapError(response.text, transport(verb)),
      (body) => {
        let status: Status | undefined
        try {
          const parsed: unknown = JSON.parse(body)
          if (isStatus(parsed)) status = parsed
        } catch {
          // not JSON: described by the HTTP code below
        }
        if (status === undefined) {
          const text = oneLine(scrub(body, response.request))
          status = failureStatus(
            response.status,
            reasonForCode(response.status),
            `${verb} ${description}: HTTP ${response.status}${text === "" ? "" : `: ${text}`}`
          )
        } else if (status.message !== undefined) {
          status = { ...status, message: scrub(status.message, response.request) }
        }
        return Effect.fail(fromStatus(status, response.status, response.headers["retry-after"]))
      }
    )

  const list = (listOptions: ListOptions): Effect.Effect<ListPage<A>, ListerWatcherError> =>
    Effect.flatMap(request("list", listParams(options, listOptions)), (req) =>
      Effect.flatMap(
        Effect.mapError(client.execute(req), transport("list")),
        (response): Effect.Effect<ListPage<A>, ListerWatcherError> => {
          if (response.status < 200 || response.status >= 300) return statusError("list", response)
          return Effect.flatMap(Effect.mapError(response.text, transport("list")), (body) => {
            let parsed: unknown
            try {
              parsed = JSON.parse(body)
            } catch (cause) {
              return Effect.fail(
                new Decode({
                  message: `list ${description}: malformed JSON in the response: ${oneLine(scrub(body, req), 120)}`,
                  cause
                })
              )
            }
            const decoded = decodeList<A>(parsed)
            if (decoded._tag === "Left") {
              return Effect.fail(
                new Decode({ message: `list ${description}: ${decoded.left.message}`, cause: decoded.left.cause })
              )
            }
            const page = decoded.right
            return Effect.succeed<ListPage<A>>({
              items: page.items,
              resourceVersion: page.resourceVersion,
              continue: page.continue,
              remainingItemCount: page.remainingItemCount
            })
          })
        }
      ))

  const noBytes = () =>
    new Transport({ message: `watch ${description}: no bytes received for ${Duration.format(inactivity!)}` })

  /**
   * A watch guarded by the inactivity watchdog. Waiting for the response headers is one timeout. The body
   * is then pumped by its own fiber into a bounded Mailbox that the decoder reads; one timer fiber wakes
   * up when `limit` ms may have passed since the last chunk and, if they have, fails the mailbox. Both
   * fibers live in the watch's scope: ending the watch stops them and aborts the request. This works with
   * any HttpClient (whether or not it honours abort signals), and the hot path only records the time of
   * each chunk: no race, fiber or timer per chunk.
   */
  const openGuarded = (
    req: HttpClientRequest.HttpClientRequest,
    inactivity: Duration.Duration
  ): Effect.Effect<Stream.Stream<WatchEvent<A>, ListerWatcherError>, ListerWatcherError, Scope.Scope> =>
    Effect.gen(function*() {
      const response = yield* Effect.timeoutFail(Effect.mapError(scopedClient.execute(req), transport("watch")), {
        duration: inactivity,
        onTimeout: noBytes
      })
      if (response.status < 200 || response.status >= 300) return yield* statusError("watch", response)
      const scope = yield* Effect.scope
      const clock = yield* Effect.clock
      const limit = Duration.toMillis(inactivity)
      const mailbox = yield* Mailbox.make<Uint8Array, ListerWatcherError>({ capacity: pumpCapacity })
      let last = clock.unsafeCurrentTimeMillis()
      yield* response.stream.pipe(
        Stream.runForEachChunk((chunk) => {
          last = clock.unsafeCurrentTimeMillis()
          return mailbox.offerAll(chunk)
        }),
        Effect.mapError(transport("watch")),
        Mailbox.into(mailbox),
        Effect.forkIn(scope)
      )
      const check: Effect.Effect<boolean> = Effect.suspend(() => {
        const idle = clock.unsafeCurrentTimeMillis() - last
        return idle < limit
          ? Effect.zipRight(Effect.sleep(Duration.millis(limit - idle)), check)
          : mailbox.fail(noBytes())
      })
      yield* Effect.forkIn(check, scope)
      return decodeBody(Mailbox.toStream(mailbox))
    })

  const open = (
    watchOptions: WatchOptions
  ): Effect.Effect<Stream.Stream<WatchEvent<A>, ListerWatcherError>, ListerWatcherError, Scope.Scope> =>
    Effect.flatMap(request("watch", watchParams(options, watchOptions)), (req) =>
      inactivity !== undefined
        ? openGuarded(req, inactivity)
        : Effect.flatMap(Effect.mapError(scopedClient.execute(req), transport("watch")), (response) =>
          response.status < 200 || response.status >= 300
            ? statusError("watch", response)
            : Effect.succeed(decodeBody(Stream.mapError(response.stream, transport("watch"))))))

  const watch = (watchOptions: WatchOptions): Stream.Stream<WatchEvent<A>, ListerWatcherError> =>
    Stream.unwrapScoped(open(watchOptions))

  return { list, watch, supportsWatchList: undefined, description }
}

/**
 * A ListerWatcher for `resource`, talking to the server of the `KubeConfig` in the context through the
 * `HttpClient` in the context.
 *
 * @example
 * ```ts
 * import { Effect, Layer, Stream } from "effect"
 * import { HttpListerWatcher, KubeConfig, Resource } from "effect-informers"
 *
 * const program = Effect.gen(function*() {
 *   const pods = yield* HttpListerWatcher.make(Resource.pods, { namespace: "default" })
 *   const page = yield* pods.list({ limit: 500 })
 *   yield* pods.watch({ resourceVersion: page.resourceVersion, allowWatchBookmarks: true }).pipe(
 *     Stream.runForEach((event) => Effect.log(event.type))
 *   )
 * })
 *
 * program.pipe(
 *   Effect.provide(HttpListerWatcher.layerHttpClient),
 *   Effect.provide(KubeConfig.layerFromDefault()),
 *   Effect.runFork
 * )
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = <A = KubeObject>(
  resource: Resource<A>,
  options: Options = {}
): Effect.Effect<ListerWatcher.Service<A>, never, KubeConfig | HttpClient.HttpClient> =>
  Effect.map(
    Effect.all([KubeConfig, HttpClient.HttpClient]),
    ([config, client]) => unsafeMake(resource, options, config, client)
  )

/**
 * Provides the `ListerWatcher` tag for `resource`.
 *
 * @example
 * ```ts
 * import { Layer } from "effect"
 * import { HttpListerWatcher, KubeConfig, Resource } from "effect-informers"
 *
 * const PodsListerWatcher = HttpListerWatcher.layer(Resource.pods, { labelSelector: "app=web" }).pipe(
 *   Layer.provide(HttpListerWatcher.layerHttpClient),
 *   Layer.provide(KubeConfig.layerFromDefault())
 * )
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (
  resource: Resource<KubeObject>,
  options: Options = {}
): Layer.Layer<ListerWatcher, never, KubeConfig | HttpClient.HttpClient> =>
  Layer.effect(ListerWatcher, make(resource, options))

/**
 * A `ListerWatcherSource` making HTTP ListerWatchers for any resource and scope (what an informer factory
 * needs), all sharing the `KubeConfig` and `HttpClient` in the context.
 *
 * @since 0.1.0
 * @category constructors
 */
export const makeSource = (
  options: SourceOptions = {}
): Effect.Effect<ListerWatcherSource.Service, never, KubeConfig | HttpClient.HttpClient> =>
  Effect.map(
    Effect.all([KubeConfig, HttpClient.HttpClient]),
    ([config, client]) =>
      ListerWatcherSource.of({
        listerWatcher: (resource, scope) =>
          unsafeMake(
            resource,
            {
              ...options,
              namespace: scope.namespace,
              labelSelector: scope.labelSelector,
              fieldSelector: scope.fieldSelector
            },
            config,
            client
          )
      })
  )

/**
 * Provides the `ListerWatcherSource` tag with `makeSource`.
 *
 * @example
 * ```ts
 * import { Layer } from "effect"
 * import { HttpListerWatcher, KubeConfig } from "effect-informers"
 *
 * const Source = HttpListerWatcher.layerSource({ watchInactivityTimeout: "5 minutes" }).pipe(
 *   Layer.provide(HttpListerWatcher.layerHttpClient),
 *   Layer.provide(KubeConfig.layerFromDefault())
 * )
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layerSource = (
  options: SourceOptions = {}
): Layer.Layer<ListerWatcherSource, never, KubeConfig | HttpClient.HttpClient> =>
  Layer.effect(ListerWatcherSource, makeSource(options))

/**
 * Builds the Node `HttpClient` for the `KubeConfig` in the context: one `http`/`https` agent pair with
 * keep-alive (idle connections are reused by later requests), the cluster CA, the client certificate and
 * key, and certificate verification unless the configuration skips it. The agents are destroyed when the
 * scope closes.
 *
 * @since 0.1.0
 * @category constructors
 */
export const makeHttpClient = (
  options: HttpClientOptions = {}
): Effect.Effect<HttpClient.HttpClient, never, KubeConfig | Scope.Scope> =>
  Effect.gen(function*() {
    const config = yield* KubeConfig
    const tls = config.tls
    const agent = yield* NodeHttpClient.makeAgent({
      keepAlive: true,
      keepAliveMsecs: Duration.toMillis(options.tcpKeepAlive ?? "30 seconds"),
      maxFreeSockets: options.maxFreeSockets ?? 256,
      scheduling: "lifo",
      ...(options.maxSockets === undefined ? {} : { maxSockets: options.maxSockets }),
      ...(tls.ca === undefined ? {} : { ca: tls.ca }),
      ...(tls.cert === undefined ? {} : { cert: tls.cert }),
      ...(tls.key === undefined ? {} : { key: Redacted.value(tls.key) }),
      ...(tls.serverName === undefined ? {} : { servername: tls.serverName }),
      rejectUnauthorized: tls.rejectUnauthorized
    })
    return yield* Effect.provideService(NodeHttpClient.make, NodeHttpClient.HttpAgent, agent)
  })

/**
 * `makeHttpClient` with options, as a layer.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerHttpClientWith = (
  options: HttpClientOptions
): Layer.Layer<HttpClient.HttpClient, never, KubeConfig> => Layer.scoped(HttpClient.HttpClient, makeHttpClient(options))

/**
 * The Node `HttpClient` for the `KubeConfig` in the context (see `makeHttpClient`). Share one instance
 * between all ListerWatchers of an application so that they share the connection pool.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerHttpClient: Layer.Layer<HttpClient.HttpClient, never, KubeConfig> = layerHttpClientWith({})

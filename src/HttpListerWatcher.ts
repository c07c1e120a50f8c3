/**
 * The ListerWatcher over HTTP: LIST and WATCH requests for one resource, sent with the `HttpClient` in
 * the context to the API server the `KubeConfig` describes, with its credentials.
 *
 * - LIST decodes the body as it arrives: each item is parsed and validated (envelope and item metadata, as
 *   `Wire.decodeList`) when its bytes are complete, so a list of any size that fits in memory as objects is
 *   accepted and the body is never held whole, as bytes or as one string (V8's limit is ~512 MB; an
 *   unpaginated list of 150,000 pods is ~450 MB of JSON). Objects are the parsed JSON, never copied. A LIST
 *   whose response headers, or next bytes, take longer than `listIdleTimeout` (60 s) fails with a `TransportError`.
 * - WATCH streams the body: bytes are split into lines and decoded chunk by chunk (`Wire.decodeWatchLine`),
 *   never buffered whole. `ERROR` events become the stream's typed failure, unknown event types and objects
 *   of another kind are skipped with a warning, a line over `maxLineBytes` fails with a `DecodeError`, a reset
 *   connection or a body cut mid-line fails with a `TransportError`, and a clean end of the body ends the stream.
 *   Interrupting the stream aborts the request, which closes its connection.
 * - Error responses map to the typed errors of `ListerWatcher` through `fromStatus` (the body's `Status`
 *   when there is one, the HTTP code otherwise; `Retry-After` on 429). At most 8 KiB of an error body are
 *   read.
 * - Text from the server that goes into an error or a log line (Status messages and causes, previews of
 *   malformed bodies and lines, warnings) is scrubbed of the request's credentials first: the bearer token,
 *   the basic-auth password (plain and base64), the client key's lines, and anything credential-shaped
 *   (`Bearer x`, `https://user:pass@host`, PEM private keys).
 * - Resources with a `decode` (`Resource.custom`, `Resource.metadataOnly`): each list item and watch
 *   event's object is decoded once, after the checks above; an object that does not decode fails the LIST
 *   or WATCH with a `DecodeError` (`SchemaMismatch`) naming it. A `metadataOnly` resource asks for
 *   `PartialObjectMetadata` (`Metadata.listAccept`, `Metadata.watchAccept`) and accepts objects of any
 *   kind (full objects from a server that ignores the header are cut down to their metadata). Resources
 *   without `decode` are not touched: which path runs is chosen once, when the ListerWatcher is made.
 *
 * `layerHttpClient` provides a Node `HttpClient` for a `KubeConfig`: one keep-alive agent pool with the
 * cluster's TLS material, so LIST and WATCH requests reuse connections.
 *
 * @since 0.1.0
 */
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import type * as HttpClientResponse from "@effect/platform/HttpClientResponse"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Mailbox from "effect/Mailbox"
import * as Redacted from "effect/Redacted"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import { TransportError } from "./ApiError.js"
import {
  decodeListBody as decodeList,
  defaultUserAgent,
  describeCollection as describe,
  executeIdempotent,
  listIdleError,
  listQuery,
  makePrepare,
  setNumber,
  setParam,
  statusError as responseError,
  transportError
} from "./internal/transport/httpRequest.js"
import { decodeWatchBody, defaultMaxLineBytes } from "./internal/transport/httpWatchDecoder.js"
import { decodeEvents, decodePage } from "./internal/protocol/objectDecoder.js"
import type { Scrub } from "./internal/redact.js"
import { KubeConfig } from "./KubeConfig.js"
import type { KubeObject } from "./KubeObject.js"
import type { ListerWatcherError, ListOptions, ListPage, WatchEvent, WatchOptions } from "./ListerWatcher.js"
import { ListerWatcher, ListerWatcherSource } from "./ListerWatcher.js"
import { listAccept as metadataListAccept, watchAccept as metadataWatchAccept } from "./Metadata.js"
import type { Resource } from "./Resource.js"
import { collectionPath } from "./Resource.js"

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
   * Fail a watch with a `TransportError` when no bytes arrive for this long (bookmarks count). Pair it with
   * `allowWatchBookmarks` so that a quiet but healthy watch keeps receiving bytes. Default: no watchdog.
   */
  readonly watchInactivityTimeout?: Duration.DurationInput | undefined
  /** The longest watch line accepted, in bytes. Default 64 MiB. */
  readonly maxLineBytes?: number | undefined
  /**
   * Fail a LIST with a `TransportError` when its response headers, or the next bytes of its body, take longer than
   * this: an idle timeout, not a bound on a large list's total time. The Reflector then backs off and
   * retries. An error response's body (LIST or WATCH, at most 8 KiB read) gets the same bound in total.
   * Default 60 seconds; `Duration.infinity` turns it off.
   */
  readonly listIdleTimeout?: Duration.DurationInput | undefined
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

// -------------------------------------------------------------------------------------------------
// helpers
// -------------------------------------------------------------------------------------------------

/** Default `listIdleTimeout`. */
const defaultListIdleTimeout = Duration.seconds(60)

const listParams = (base: Options, options: ListOptions): Array<[string, string]> =>
  listQuery({
    ...options,
    labelSelector: options.labelSelector ?? base.labelSelector,
    fieldSelector: options.fieldSelector ?? base.fieldSelector
  })

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
  const metadataOnly = resource.metadataOnly === true
  // a metadata-only watch accepts objects of any kind: PartialObjectMetadata, or full objects from a server
  // that ignored the Accept header (cut down by `decode`)
  const decoderOptions = { kind: metadataOnly ? "" : resource.kind, description, maxLineBytes }
  const decode = resource.decode
  // chosen once: a resource without `decode` runs the watch decoder alone, as before
  const decodeBody = decode === undefined
    ? (bytes: Stream.Stream<Uint8Array, ListerWatcherError>, scrub: Scrub) =>
      decodeWatchBody<A>({ ...decoderOptions, scrub })(bytes)
    : (bytes: Stream.Stream<Uint8Array, ListerWatcherError>, scrub: Scrub) =>
      decodeEvents(decode, `watch ${description}`, scrub)(
        decodeWatchBody<KubeObject>({ ...decoderOptions, scrub })(bytes)
      )
  const userAgent = options.userAgent ?? defaultUserAgent

  const listIdle = Duration.decode(options.listIdleTimeout ?? defaultListIdleTimeout)

  /**
   * Sends a LIST or WATCH request (a GET, so idempotent), again at once, on another connection, when it met a
   * connection the server had closed before any response, as Go's transport (so client-go) does for a
   * request on a reused connection that the server closed while idle. Without it a client slower to read a
   * LIST page than the server's idle timeout (a busy event loop, a slow link) fails the paged list at every
   * page boundary past it and starts over from the first page after a backoff. Twice at most: then the
   * `TransportError` is returned (the Reflector backs off).
   */
  const execute = (req: HttpClientRequest.HttpClientRequest) => executeIdempotent(scopedClient, req)

  const prepare = makePrepare(config, userAgent)

  const transport = (verb: string, scrub: Scrub) => transportError(`${verb} ${description}`, scrub)

  /** The `Accept` header of a verb, when it is not plain JSON. */
  const accept = (verb: "list" | "watch"): string | undefined =>
    metadataOnly ? (verb === "list" ? metadataListAccept : metadataWatchAccept) : undefined

  /** The request, and the scrubber for what the server sends back to it (its own credentials removed). */
  const request = (verb: "list" | "watch", params: Array<[string, string]>) =>
    Effect.map(
      prepare(target, `${verb} ${description}`),
      ({ headers, scrub }) => {
        const type = accept(verb)
        if (type !== undefined) headers.accept = type
        return [HttpClientRequest.get(url, { urlParams: params, headers }), scrub] as const
      }
    )

  /**
   * The typed error of a non-2xx response, from its `Status` body or its HTTP code. At most 8 KiB of the
   * body are read; a body that stalls after the headers fails after `listIdleTimeout`.
   */
  const statusError = (
    verb: string,
    response: HttpClientResponse.HttpClientResponse,
    scrub: Scrub
  ): Effect.Effect<never, ListerWatcherError> => responseError(`${verb} ${description}`, response, scrub, listIdle)

  const listIdleFailure = (what: string) => () => listIdleError(description, listIdle, what)

  /** A LIST response body, decoded as it arrives: never held whole, as bytes or as a string. */
  const decodeListBody = decode === undefined
    ? (
      response: HttpClientResponse.HttpClientResponse,
      scrub: Scrub
    ): Effect.Effect<ListPage<A>, ListerWatcherError> => decodeList<A>(response, description, scrub, listIdle)
    : (
      response: HttpClientResponse.HttpClientResponse,
      scrub: Scrub
    ): Effect.Effect<ListPage<A>, ListerWatcherError> =>
      Effect.flatMap(
        decodeList<KubeObject>(response, description, scrub, listIdle),
        (page) => decodePage(page, decode, `list ${description}`, scrub)
      )

  const list = (listOptions: ListOptions): Effect.Effect<ListPage<A>, ListerWatcherError> =>
    Effect.flatMap(request("list", listParams(options, listOptions)), ([req, scrub]) => {
      const sent = Effect.mapError(execute(req), transport("list", scrub))
      return Effect.scoped(Effect.flatMap(
        Duration.isFinite(listIdle)
          ? Effect.timeoutFail(sent, { duration: listIdle, onTimeout: listIdleFailure("no response headers") })
          : sent,
        (response): Effect.Effect<ListPage<A>, ListerWatcherError> =>
          response.status < 200 || response.status >= 300
            ? statusError("list", response, scrub)
            : decodeListBody(response, scrub)
      ))
    })

  const noBytes = () =>
    new TransportError({
      reason: "Timeout",
      message: `watch ${description}: no bytes received for ${Duration.format(inactivity!)}`
    })

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
    scrub: Scrub,
    inactivity: Duration.Duration
  ): Effect.Effect<Stream.Stream<WatchEvent<A>, ListerWatcherError>, ListerWatcherError, Scope.Scope> =>
    Effect.gen(function*() {
      const response = yield* Effect.timeoutFail(
        Effect.mapError(execute(req), transport("watch", scrub)),
        { duration: inactivity, onTimeout: noBytes }
      )
      if (response.status < 200 || response.status >= 300) return yield* statusError("watch", response, scrub)
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
        Effect.mapError(transport("watch", scrub)),
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
      return decodeBody(Mailbox.toStream(mailbox), scrub)
    })

  const open = (
    watchOptions: WatchOptions
  ): Effect.Effect<Stream.Stream<WatchEvent<A>, ListerWatcherError>, ListerWatcherError, Scope.Scope> =>
    Effect.flatMap(request("watch", watchParams(options, watchOptions)), ([req, scrub]) =>
      inactivity !== undefined
        ? openGuarded(req, scrub, inactivity)
        : Effect.flatMap(Effect.mapError(execute(req), transport("watch", scrub)), (response) =>
          response.status < 200 || response.status >= 300
            ? statusError("watch", response, scrub)
            : Effect.succeed(decodeBody(Stream.mapError(response.stream, transport("watch", scrub)), scrub))))

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

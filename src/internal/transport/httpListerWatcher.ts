/**
 * The machinery of `HttpListerWatcher`: LIST and WATCH requests for one resource over an `HttpClient`, their
 * bodies decoded as they arrive (see the public module for the contract). `Client.watch` uses it too, so it
 * is here, apart from the `ListerWatcher` tags the public module provides.
 *
 * @internal
 */
import type * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as HttpClient from "effect/http/HttpClient"
import * as HttpClientRequest from "effect/http/HttpClientRequest"
import type * as HttpClientResponse from "effect/http/HttpClientResponse"
import * as Queue from "effect/Queue"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import { TransportError } from "../../ApiError.js"
import type * as HttpListerWatcher from "../../HttpListerWatcher.js"
import { KubeConfig } from "../../KubeConfig.js"
import type { KubeObject } from "../../KubeObject.js"
import type {
  ListerWatcher,
  ListerWatcherError,
  ListerWatcherSource,
  ListOptions,
  ListPage,
  WatchEvent,
  WatchOptions
} from "../../ListerWatcher.js"
import { listAccept as metadataListAccept, watchAccept as metadataWatchAccept } from "../../Metadata.js"
import type { Resource } from "../../Resource.js"
import { collectionPath } from "../../Resource.js"
import { decodeEvents, decodePage } from "../protocol/objectDecoder.js"
import type { Scrub } from "../redact.js"
import {
  decodeListBody as decodeList,
  defaultUserAgent,
  describeCollection as describe,
  executeIdempotent,
  listIdleError,
  listQuery,
  makePrepare,
  RequestMetrics,
  setNumber,
  setParam,
  statusError as responseError,
  transportError
} from "./httpRequest.js"
import { decodeWatchBody, defaultMaxLineBytes } from "./httpWatchDecoder.js"

// -------------------------------------------------------------------------------------------------
// helpers
// -------------------------------------------------------------------------------------------------

/** Default `listIdleTimeout`. */
const defaultListIdleTimeout = Duration.seconds(60)

const listParams = (base: HttpListerWatcher.Options, options: ListOptions): Array<[string, string]> =>
  listQuery({
    ...options,
    labelSelector: options.labelSelector ?? base.labelSelector,
    fieldSelector: options.fieldSelector ?? base.fieldSelector
  })

const watchParams = (base: HttpListerWatcher.Options, options: WatchOptions): Array<[string, string]> => {
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

/** A ListerWatcher over `client` to the server of `config` (`HttpListerWatcher.make` without the context). */
export const unsafeMake = <A>(
  resource: Resource<A>,
  options: HttpListerWatcher.Options,
  config: KubeConfig.Service,
  client: HttpClient.HttpClient
): ListerWatcher.Service<A> => {
  const description = describe(resource, options.namespace)
  const url = config.server + collectionPath(resource, options.namespace)
  const target = new URL(url)
  // the series of its requests' REST client metrics (`host`: the server's)
  const metrics = new RequestMetrics(target.host)
  const scopedClient = HttpClient.withScope(client)
  const maxLineBytes = options.maxLineBytes ?? defaultMaxLineBytes
  const inactivity = options.watchInactivityTimeout === undefined
    ? undefined
    : Duration.fromInputUnsafe(options.watchInactivityTimeout)
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

  const listIdle = Duration.fromInputUnsafe(options.listIdleTimeout ?? defaultListIdleTimeout)

  /**
   * Sends a LIST or WATCH request (a GET, so idempotent), again at once, on another connection, when it met a
   * connection the server had closed before any response, as Go's transport (so client-go) does for a
   * request on a reused connection that the server closed while idle. Without it a client slower to read a
   * LIST page than the server's idle timeout (a busy event loop, a slow link) fails the paged list at every
   * page boundary past it and starts over from the first page after a backoff. Twice at most: then the
   * `TransportError` is returned (the Reflector backs off).
   */
  const execute = (req: HttpClientRequest.HttpClientRequest) => executeIdempotent(scopedClient, req, metrics)

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
          ? Effect.timeoutOrElse(sent, {
            duration: listIdle,
            orElse: () => Effect.fail(listIdleFailure("no response headers")())
          })
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
   * is then pumped by its own fiber into a bounded Queue that the decoder reads; one timer fiber wakes
   * up when `limit` ms may have passed since the last chunk and, if they have, fails the queue. Both
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
      const response = yield* Effect.timeoutOrElse(
        Effect.mapError(execute(req), transport("watch", scrub)),
        { duration: inactivity, orElse: () => Effect.fail(noBytes()) }
      )
      if (response.status < 200 || response.status >= 300) return yield* statusError("watch", response, scrub)
      const scope = yield* Effect.scope
      const clock = yield* Clock.Clock
      const limit = Duration.toMillis(inactivity)
      const queue = yield* Queue.make<Uint8Array, ListerWatcherError | Cause.Done>({ capacity: pumpCapacity })
      let last = clock.currentTimeMillisUnsafe()
      yield* response.stream.pipe(
        Stream.runForEachArray((chunk) => {
          last = clock.currentTimeMillisUnsafe()
          return Queue.offerAll(queue, chunk)
        }),
        Effect.mapError(transport("watch", scrub)),
        Queue.into(queue),
        Effect.forkIn(scope)
      )
      const check: Effect.Effect<boolean> = Effect.suspend(() => {
        const idle = clock.currentTimeMillisUnsafe() - last
        return idle < limit
          ? Effect.andThen(Effect.sleep(Duration.millis(limit - idle)), check)
          : Queue.fail(queue, noBytes())
      })
      yield* Effect.forkIn(check, scope)
      return decodeBody(Stream.fromQueue(queue), scrub)
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
    Stream.unwrap(open(watchOptions))

  return { list, watch, supportsWatchList: undefined, description }
}

/** `HttpListerWatcher.make`: a ListerWatcher over the `KubeConfig` and `HttpClient` in the context. */
export const make = <A = KubeObject>(
  resource: Resource<A>,
  options: HttpListerWatcher.Options = {}
): Effect.Effect<ListerWatcher.Service<A>, never, KubeConfig | HttpClient.HttpClient> =>
  Effect.map(
    Effect.all([KubeConfig, HttpClient.HttpClient]),
    ([config, client]) => unsafeMake(resource, options, config, client)
  )

/** `HttpListerWatcher.makeSource`: a ListerWatcher per resource and scope, over one `KubeConfig` and `HttpClient`. */
export const makeSource = (
  options: HttpListerWatcher.SourceOptions = {}
): Effect.Effect<ListerWatcherSource.Service, never, KubeConfig | HttpClient.HttpClient> =>
  Effect.map(
    Effect.all([KubeConfig, HttpClient.HttpClient]),
    ([config, client]): ListerWatcherSource.Service => ({
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

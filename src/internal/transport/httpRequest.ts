/**
 * What every request to the API server shares, whichever module sends it (`HttpListerWatcher`'s LIST and
 * WATCH, `Client`'s verbs): the headers (user agent, the kubeconfig's credentials) and the scrubber made from
 * them, one send again on a connection the server had closed, the typed error of a failed exchange or of an
 * error response (at most 8 KiB of its body read, its `Status` scrubbed), the LIST body decoded as it
 * arrives, and the one place every request is sent (`execute`), which records client-go's REST client metrics
 * (`./metrics.ts`) for each send, whatever `HttpClient` carries it.
 *
 * @internal
 */
import * as Clock from "effect/Clock"
import type * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as Exit from "effect/Exit"
import { identity } from "effect/Function"
import type * as HttpClient from "effect/http/HttpClient"
import type * as HttpClientError from "effect/http/HttpClientError"
import type * as HttpClientRequest from "effect/http/HttpClientRequest"
import type * as HttpClientResponse from "effect/http/HttpClientResponse"
import type * as Metric from "effect/Metric"
import * as Redacted from "effect/Redacted"
import * as Result from "effect/Result"
import * as Stream from "effect/Stream"
import type { ApiError, StatusError } from "../../ApiError.js"
import { DecodeError, fromStatus, reasonForCode, TransportError } from "../../ApiError.js"
import type { KubeConfig, KubeConfigError } from "../../KubeConfig.js"
import type { ListOptions, ListPage } from "../../ListerWatcher.js"
import type { Resource } from "../../Resource.js"
import { groupResource } from "../../Resource.js"
import type { DecodeFailure, Status } from "../../Wire.js"
import { failureStatus, isStatus } from "../../Wire.js"
import { tagged } from "../metricTags.js"
import type { Scrub } from "../redact.js"
import { keyLinesOf, makeScrub, scrubCause, scrubStatus, secretsOf } from "../redact.js"
import { oneLine } from "../text.js"
import { ListBodyDecoder } from "./listBodyDecoder.js"
import { restClientRequestDuration, restClientRequests } from "./metrics.js"

/**
 * The `User-Agent` of requests when none is configured.
 *
 * @internal
 */
export const defaultUserAgent = "effect-informers/0.1.0"

/**
 * What a request is about, in messages: `"pods in default"`, `"pods in all namespaces"`, `"nodes"`.
 *
 * @internal
 */
export const describeCollection = (resource: Resource<unknown>, namespace: string | undefined): string =>
  !resource.namespaced
    ? groupResource(resource)
    : namespace === undefined || namespace === ""
    ? `${groupResource(resource)} in all namespaces`
    : `${groupResource(resource)} in ${namespace}`

/** @internal */
export const setParam = (params: Array<[string, string]>, name: string, value: string | undefined): void => {
  if (value !== undefined && value !== "") params.push([name, value])
}

/** @internal */
export const setNumber = (params: Array<[string, string]>, name: string, value: number | undefined): void => {
  if (value !== undefined) params.push([name, String(value)])
}

/**
 * The query of a LIST: selectors, resourceVersion and its match, `limit` (when positive), `continue`,
 * `timeoutSeconds`.
 *
 * @internal
 */
export const listQuery = (options: ListOptions): Array<[string, string]> => {
  const params: Array<[string, string]> = []
  setParam(params, "labelSelector", options.labelSelector)
  setParam(params, "fieldSelector", options.fieldSelector)
  setParam(params, "resourceVersion", options.resourceVersion)
  setParam(params, "resourceVersionMatch", options.resourceVersionMatch)
  if (options.limit !== undefined && options.limit > 0) params.push(["limit", String(options.limit)])
  setParam(params, "continue", options.continue)
  setNumber(params, "timeoutSeconds", options.timeoutSeconds)
  return params
}

/**
 * A failure's cause in one line, with its system error code (`ECONNREFUSED`) when the message lacks it.
 *
 * @internal
 */
export const causeMessage = (cause: unknown): string | undefined => {
  if (cause instanceof Error) {
    const code = (cause as { readonly code?: unknown }).code
    const message = oneLine(cause.message)
    return typeof code === "string" && !message.includes(code) ? `${message} (${code})` : message
  }
  return cause === undefined ? undefined : oneLine(String(cause))
}

/**
 * The longest part of an error response body that is read (the rest is never received).
 *
 * @internal
 */
export const maxErrorBodyBytes = 8 * 1024

/**
 * Reads at most `max` bytes of a body as text; the rest is never read (the request is then aborted).
 *
 * @internal
 */
export const readBounded = <E>(
  body: Stream.Stream<Uint8Array, E>,
  max: number
): Effect.Effect<{ readonly text: string; readonly truncated: boolean }, E> =>
  Effect.suspend(() => {
    const parts: Array<Uint8Array> = []
    let size = 0
    return Effect.as(
      Stream.runForEachWhile(body, (chunk) => {
        parts.push(chunk)
        size += chunk.length
        return Effect.succeed(size < max)
      }),
      null
    ).pipe(Effect.map(() => {
      const bytes = Buffer.concat(parts, Math.min(size, max))
      // a body that stopped exactly at the bound may have had more: taken as cut
      return { text: bytes.toString("utf8"), truncated: size >= max }
    }))
  })

/**
 * Whether a request failed before any response because its connection was closed under it: a kept-alive
 * connection that the server timed out (or dropped) while this process had not yet read its end, reused
 * for the request (`ECONNRESET`, "socket hang up"; `EPIPE`).
 *
 * @internal
 */
export const closedConnection = (error: HttpClientError.HttpClientError): boolean => {
  if (error.reason._tag !== "TransportError") return false
  const code = (error.reason.cause as { readonly code?: unknown } | null | undefined)?.code
  return code === "ECONNRESET" || code === "EPIPE"
}

/**
 * The kind of a failed exchange as Effect 3 named it in messages (`Transport`, `StatusCode`, `Decode`...):
 * the reason's tag without its `Error`.
 *
 * @internal
 */
export const reasonName = (error: HttpClientError.HttpClientError): string => {
  const tag = error.reason._tag
  return tag.endsWith("Error") ? tag.slice(0, -5) : tag
}

/**
 * Sends of one request on a closed connection before its failure is returned.
 *
 * @internal
 */
export const closedConnectionRetries = 2

/**
 * The `host` label of the requests to `server`: the URL's `host[:port]`, as client-go's (`base.Host`);
 * `none` (client-go's when it has no base URL) for a server that is not a URL.
 *
 * @internal
 */
export const hostOf = (server: string): string => {
  try {
    return new URL(server).host
  } catch {
    return "none"
  }
}

/**
 * The REST client metrics of the requests to one server (`host`): each series (`code` and `method`, `verb`)
 * made once (`tagged`) and kept, so a send is two map lookups and two registry updates.
 *
 * @internal
 */
export class RequestMetrics {
  private readonly requests = new Map<string, Metric.Counter<number>>()
  private readonly durations = new Map<string, Metric.Histogram<number>>()
  constructor(readonly host: string) {}

  /** One send of `method`: its answer's status (undefined: none came) and its time to the headers. */
  record(method: string, status: number | undefined, seconds: number, context: Context.Context<never>): void {
    const code = status === undefined ? "<error>" : String(status)
    const key = `${method} ${code}`
    let requests = this.requests.get(key)
    if (requests === undefined) {
      requests = tagged(restClientRequests, { code, method, host: this.host })
      this.requests.set(key, requests)
    }
    requests.updateUnsafe(1, context)
    let duration = this.durations.get(method)
    if (duration === undefined) {
      duration = tagged(restClientRequestDuration, { verb: method, host: this.host })
      this.durations.set(method, duration)
    }
    duration.updateUnsafe(seconds, context)
  }
}

/**
 * Sends a request once, the one place every request of the library is sent (the `Client`'s verbs, an
 * `HttpListerWatcher`'s LIST and WATCH), and records it in `metrics` when its response headers arrive or it
 * fails (interrupted included: client-go's `<error>` of a cancelled request): `rest_client_requests_total`
 * by code, and the time from the send, by the Clock, in `rest_client_request_duration_seconds`.
 *
 * @internal
 */
export const execute = <R>(
  client: HttpClient.HttpClient.With<HttpClientError.HttpClientError, R>,
  request: HttpClientRequest.HttpClientRequest,
  metrics: RequestMetrics
): Effect.Effect<HttpClientResponse.HttpClientResponse, HttpClientError.HttpClientError, R> =>
  Clock.clockWith((clock) =>
    Effect.contextWith((context: Context.Context<never>) => {
      const start = clock.currentTimeNanosUnsafe()
      return Effect.onExit(
        client.execute(request),
        (exit: Exit.Exit<HttpClientResponse.HttpClientResponse, HttpClientError.HttpClientError>) =>
          Effect.sync(() =>
            metrics.record(
              request.method,
              exit._tag === "Success" ? exit.value.status : undefined,
              Number(clock.currentTimeNanosUnsafe() - start) / 1e9,
              context
            )
          )
      )
    })
  )

/**
 * Sends a request, and again at once (on another connection) when it met a connection the server had
 * closed before any response (`closedConnection`), twice at most: what Go's transport, so client-go, does
 * for a request on a reused connection that the server closed while idle. Only for requests that can be
 * sent twice without harm (a GET): a write may have reached the server before its connection was reset.
 * Each send is recorded (`execute`).
 *
 * @internal
 */
export const executeIdempotent = <R>(
  client: HttpClient.HttpClient.With<HttpClientError.HttpClientError, R>,
  request: HttpClientRequest.HttpClientRequest,
  metrics: RequestMetrics
): Effect.Effect<HttpClientResponse.HttpClientResponse, HttpClientError.HttpClientError, R> =>
  Effect.retry(execute(client, request, metrics), { times: closedConnectionRetries, while: closedConnection })

/**
 * The `TransportError` of an exchange that failed: `prefix` (`"list pods in default"`) and the cause, in
 * one scrubbed line.
 *
 * @internal
 */
export const transportError =
  (prefix: string, scrub: Scrub) => (error: HttpClientError.HttpClientError): TransportError =>
    new TransportError({
      reason: "RequestFailed",
      message: scrub(`${prefix}: ${causeMessage(error.reason.cause) ?? `${reasonName(error)} error`}`),
      // a copy, scrubbed of this request's secrets: the raw error may quote what the server sent
      cause: scrubCause(error.reason.cause, scrub)
    })

const credentialsError = (prefix: string) => (error: KubeConfigError): TransportError =>
  new TransportError({ reason: "Credentials", message: `${prefix}: ${error.message}`, cause: error })

/**
 * The headers of one request and the scrubber of what the server sends back to it.
 *
 * @internal
 */
export interface Prepared {
  /** `accept`, `user-agent` and the credentials, as plain values. */
  readonly headers: Record<string, string>
  /** Removes the credentials carried by `headers` (and the client key's lines) from a text. */
  readonly scrub: Scrub
}

/**
 * The headers of the requests to `config`'s server: `prepare(target, prefix)` evaluates the credentials
 * for `target` now (expiring ones are refreshed) and builds the scrubber for what the server answers.
 * The client key's lines are split once, here.
 *
 * @internal
 */
export const makePrepare = (config: KubeConfig.Service, userAgent: string) => {
  const keyLines = keyLinesOf(config.tls.key === undefined ? undefined : Redacted.value(config.tls.key))
  return (target: URL, prefix: string): Effect.Effect<Prepared, TransportError> =>
    Effect.map(
      Effect.mapError(config.headers(target), credentialsError(prefix)),
      (auth) => {
        const headers: Record<string, string> = { accept: "application/json", "user-agent": userAgent }
        for (const name in auth) headers[name] = Redacted.value(auth[name]!)
        return { headers, scrub: makeScrub(secretsOf(headers, keyLines)) }
      }
    )
}

/**
 * The typed error of a non-2xx response, from its `Status` body or its HTTP code. At most
 * `maxErrorBodyBytes` of the body are read: an error body of any size costs a few KB. A body that does not
 * arrive within `idle` (after the headers) fails with a `TransportError` (`Timeout`).
 *
 * @internal
 */
export const statusError = (
  prefix: string,
  response: HttpClientResponse.HttpClientResponse,
  scrub: Scrub,
  idle: Duration.Duration
): Effect.Effect<never, StatusError | TransportError> =>
  Effect.flatMap(
    Effect.mapError(readBounded(response.stream, maxErrorBodyBytes), transportError(prefix, scrub)).pipe(
      // a server that sends error headers and then stalls
      Duration.isFinite(idle)
        ? Effect.timeoutOrElse({
          duration: idle,
          orElse: () =>
            Effect.fail(
              new TransportError({
                reason: "Timeout",
                message: `${prefix}: HTTP ${response.status}, then no body for ${Duration.format(idle)}`
              })
            )
        })
        : identity
    ),
    ({ text: body, truncated }) => {
      let status: Status | undefined
      if (!truncated) {
        try {
          const parsed: unknown = JSON.parse(body)
          if (isStatus(parsed)) status = scrubStatus(parsed, scrub)
        } catch {
          // not JSON: described by the HTTP code below
        }
      }
      if (status === undefined) {
        const text = oneLine(scrub(body))
        status = failureStatus(
          response.status,
          reasonForCode(response.status),
          `${prefix}: HTTP ${response.status}${text === "" ? "" : `: ${text}`}`
        )
      }
      return Effect.fail(fromStatus(status, response.status, response.headers["retry-after"]))
    }
  )

/**
 * A LIST response body, decoded as it arrives (`ListBodyDecoder`): never held whole, as bytes or as a
 * string. `description` (`"pods in default"`) prefixes messages as `list pods in default: …`. The idle bound
 * is one checker fiber beside the read, which records the time of each chunk (a timeout per chunk, as
 * `Stream.timeoutFail` has, races two fibers per chunk: it made a paged sync of 10,000 pods ~1.5x slower).
 *
 * @internal
 */
export const decodeListBody = <A>(
  response: HttpClientResponse.HttpClientResponse,
  description: string,
  scrub: Scrub,
  idle: Duration.Duration
): Effect.Effect<ListPage<A>, ApiError> =>
  Clock.clockWith((clock) => {
    const decoder = new ListBodyDecoder<A>({ description, scrub })
    let failure: DecodeFailure | undefined
    let last = clock.currentTimeMillisUnsafe()
    const read = response.stream.pipe(
      Stream.runForEachWhile((chunk) => {
        last = clock.currentTimeMillisUnsafe()
        failure = decoder.push(chunk)
        return Effect.succeed(failure === undefined)
      }),
      Effect.mapError(transportError(`list ${description}`, scrub))
    )
    const limit = Duration.toMillis(idle)
    const quiet: Effect.Effect<never, TransportError> = Effect.suspend(() => {
      const elapsed = clock.currentTimeMillisUnsafe() - last
      return elapsed < limit
        ? Effect.andThen(Effect.sleep(Duration.millis(limit - elapsed)), quiet)
        : Effect.fail(listIdleError(description, idle, "no bytes received"))
    })
    return (Duration.isFinite(idle) ? Effect.raceFirst(read, quiet) : read).pipe(
      Effect.flatMap(() => {
        const decoded = failure === undefined ? decoder.end() : Result.fail(failure)
        if (Result.isFailure(decoded)) {
          const { detail, message } = decoded.failure
          return Effect.fail(
            new DecodeError({
              reason: "Malformed",
              message: scrub(message),
              ...(detail === undefined ? {} : { detail: scrub(detail) })
            })
          )
        }
        return Effect.succeed<ListPage<A>>(decoded.success)
      })
    )
  })

/**
 * The `TransportError` of a LIST that went quiet: `list pods in default: no response headers for 1m`.
 *
 * @internal
 */
export const listIdleError = (description: string, idle: Duration.Duration, what: string): TransportError =>
  new TransportError({ reason: "Timeout", message: `list ${description}: ${what} for ${Duration.format(idle)}` })

/**
 * The metrics of the transport: client-go's REST client metrics (`k8s.io/client-go/tools/metrics`, as
 * `k8s.io/component-base/metrics/prometheus/restclient` registers them), with client-go's names, labels, help
 * texts and buckets. Every request the library sends (the `Client`'s verbs, an `HttpListerWatcher`'s LIST
 * and WATCH, so the informers' and the elections' Lease writes) is recorded once per send, where it is sent
 * (`httpRequest.ts`). `Metrics` re-exports them; docs/METRICS.md lists them with their Prometheus names.
 *
 * @since 0.2.0
 */
import type * as Metric from "effect/Metric"
import * as Tags from "../metricTags.js"

/** client-go's buckets of `rest_client_request_duration_seconds`, in seconds. */
const durationBoundaries: ReadonlyArray<number> = [0.005, 0.025, 0.1, 0.25, 0.5, 1, 2, 4, 8, 15, 30, 60]

/**
 * `rest_client_requests_total` (client-go's name): HTTP requests sent to the API server, tagged with `code`
 * (the response's status code, `"200"`, `"404"`; `"<error>"` when no response came: a connection refused or
 * reset, a timeout or interruption before the headers), `method` (`GET`, `POST`, `PUT`, `PATCH`, `DELETE`)
 * and `host` (the server URL's `host[:port]`). Each send counts: a GET sent again on another connection,
 * after the server closed the first under it, is two.
 *
 * @since 0.2.0
 * @category metrics
 */
export const restClientRequests: Metric.Counter<number> = Tags.counter(
  "rest_client_requests_total",
  "Number of HTTP requests, partitioned by status code, method, and host."
)

/**
 * `rest_client_request_duration_seconds` (client-go's name and buckets: 5 ms to 60 s): the time from the
 * send of a request to its response headers (or its failure), tagged with `verb` (the HTTP method, as
 * client-go records it) and `host`. A watch is observed until its headers, a LIST page until the page's
 * headers (its body, read as it arrives, is not included).
 *
 * @since 0.2.0
 * @category metrics
 */
export const restClientRequestDuration: Metric.Histogram<number> = Tags.histogram(
  "rest_client_request_duration_seconds",
  "Request latency in seconds. Broken down by verb, and host.",
  durationBoundaries
)

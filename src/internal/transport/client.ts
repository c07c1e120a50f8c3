/**
 * The Client's machinery: one `send` for every verb (rate-limiter token, credentials and scrubber, the
 * request, its timeout, the typed error of a failure) and the decoding of what comes back.
 *
 * @internal
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import { dual } from "effect/Function"
import * as HttpBody from "effect/http/HttpBody"
import * as HttpClient from "effect/http/HttpClient"
import type { HttpClientError } from "effect/http/HttpClientError"
import * as HttpClientRequest from "effect/http/HttpClientRequest"
import type * as HttpClientResponse from "effect/http/HttpClientResponse"
import * as Random from "effect/Random"
import * as Schedule from "effect/Schedule"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import type { ApiError, StatusError } from "../../ApiError.js"
import { DecodeError, fromStatus, isApiError, TransportError } from "../../ApiError.js"
import type * as Client from "../../Client.js"
import { recordWrite } from "../../Consistency.js"
import { KubeConfig } from "../../KubeConfig.js"
import type { KubeObject } from "../../KubeObject.js"
import type { ListPage, WatchEvent } from "../../ListerWatcher.js"
import type { Resource } from "../../Resource.js"
import { apiVersion, collectionPath, groupResource, objectPath } from "../../Resource.js"
import * as Term from "../../Term.js"
import type { Status } from "../../Wire.js"
import { failureStatus, isStatus, ObjectWithMeta } from "../../Wire.js"
import { decodePage } from "../protocol/objectDecoder.js"
import { isObjectWithMeta } from "../protocol/wireGuard.js"
import type { Scrub } from "../redact.js"
import { explain, oneLine } from "../text.js"
import { makeLimiter } from "../tokenBucket.js"
import * as HttpListerWatcher from "./httpListerWatcher.js"
import {
  decodeListBody,
  defaultUserAgent,
  describeCollection,
  execute,
  executeIdempotent,
  hostOf,
  listQuery,
  makePrepare,
  readBounded,
  RequestMetrics,
  setParam,
  statusError,
  transportError
} from "./httpRequest.js"

// -------------------------------------------------------------------------------------------------
// constants
// -------------------------------------------------------------------------------------------------

/** @internal */
export const defaultQps = 5
/** @internal */
export const defaultBurst = 10
/** @internal */
export const defaultFieldManager = "effect-informers"
/** @internal */
export const defaultTimeout: Duration.Duration = Duration.seconds(60)
/** client-go's pager's page size. */
const defaultPageSize = 500
/**
 * `listAll`'s bounds (client-go's pager has none): a server's endless continue chain ends there.
 *
 * @internal
 */
export const defaultMaxItems = 1_000_000
/** @internal */
export const defaultMaxPages = 10_000
/** The largest object body read; Kubernetes objects are at most ~1.5 MiB (etcd's limit). */
const maxObjectBytes = 64 * 1024 * 1024

const contentTypes: Record<Client.Patch["_tag"] | "Apply", string> = {
  MergePatch: "application/merge-patch+json",
  StrategicMergePatch: "application/strategic-merge-patch+json",
  JsonPatch: "application/json-patch+json",
  Apply: "application/apply-patch+yaml"
}

// -------------------------------------------------------------------------------------------------
// helpers
// -------------------------------------------------------------------------------------------------

const isRecord = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

const metadataOf = (object: unknown): KubeObject["metadata"] =>
  isRecord(object) && isRecord(object.metadata) ? (object as KubeObject).metadata : undefined

/** A local `BadRequest`, for a request that cannot be sent as asked (client-go fails these before sending). */
const badRequest = (message: string): StatusError => fromStatus(failureStatus(400, "BadRequest", message))

/**
 * Why `segment` cannot be a name or namespace in a path (client-go's `IsValidPathSegmentName`), if it
 * cannot.
 */
const invalidSegment = (segment: string): string | undefined =>
  segment === "."
    ? "may not be '.'"
    : segment === ".."
    ? "may not be '..'"
    : segment.includes("/")
    ? "may not contain '/'"
    : segment.includes("%")
    ? "may not contain '%'"
    : undefined

/**
 * `get pods "web" in default`, `create nodes`: the prefix of the errors of a request the Client refuses
 * before sending it (the fake Client's too).
 */
export const describeObject = (
  verb: string,
  resource: Resource<unknown>,
  namespace: string | undefined,
  name: string | undefined
): string =>
  `${verb} ${groupResource(resource)}${name === undefined || name === "" ? "" : ` "${oneLine(name, 100)}"`}${
    namespace === undefined ? "" : ` in ${oneLine(namespace, 100)}`
  }`

/** The checks client-go makes before sending: a name (when needed) and path-safe segments. */
export const checkSegments = (
  prefix: string,
  name: string | undefined,
  namespace: string | undefined,
  nameRequired: boolean
): StatusError | undefined => {
  if (nameRequired && (name === undefined || name === "")) {
    return badRequest(`${prefix}: resource name may not be empty`)
  }
  for (const [what, segment] of [["resource name", name], ["namespace", namespace]] as const) {
    if (segment === undefined || segment === "") continue
    const why = invalidSegment(segment)
    if (why !== undefined) return badRequest(`${prefix}: invalid ${what} ${JSON.stringify(segment)}: ${why}`)
  }
  return undefined
}

const preview = (text: string, scrub: Scrub): string => oneLine(scrub(text.slice(0, 8192)), 200)

/** What a write fails with: a stale term's writes are not sent. */
type WriteError = ApiError | Term.TermError

const is2xx = (response: HttpClientResponse.HttpClientResponse): boolean =>
  response.status >= 200 && response.status < 300

/**
 * The object a request is about, which its answer must be: its namespace (undefined: a cluster-scoped
 * resource) and name (undefined: not known before the answer, a create with `generateName`).
 */
interface Expected {
  readonly namespace: string | undefined
  readonly name: string | undefined
}

/** The group of an `apiVersion`: `apps` of `apps/v1`, `""` of `v1`. */
const groupOf = (version: string): string => {
  const slash = version.lastIndexOf("/")
  return slash === -1 ? "" : version.slice(0, slash)
}

/** A value of an answer, as a message quotes it: scrubbed, then cut to one line. */
const quote = (value: unknown, scrub: Scrub): string =>
  typeof value === "string"
    ? value === "" ? "none" : JSON.stringify(oneLine(scrub(value), 100))
    : value === undefined
    ? "none"
    : `a ${typeof value}`

/**
 * Why `object`, the answer to a request about `expected`, is not that object, if it is not: another kind,
 * API group (the version is not compared), namespace or name. An absent `kind` or `apiVersion` is not
 * checked (the request was typed); an absent namespace of a namespaced resource is a mismatch.
 */
const unexpectedObject = (
  resource: Resource<unknown>,
  expected: Expected,
  object: { readonly kind?: string | undefined; readonly metadata: KubeObject["metadata"] },
  scrub: Scrub
): string | undefined => {
  if (object.kind !== undefined && object.kind !== resource.kind) {
    // scrubbed before it is cut: a secret the cut went through would no longer be recognised
    return `expected a ${resource.kind} in response, got ${oneLine(scrub(object.kind), 100)}`
  }
  const version = (object as { readonly apiVersion?: unknown }).apiVersion
  if (version !== undefined && (typeof version !== "string" || groupOf(version) !== resource.group)) {
    return `expected apiVersion ${apiVersion(resource)} in response, got ${quote(version, scrub)}`
  }
  const namespace = nonEmpty(object.metadata?.namespace)
  if (namespace !== expected.namespace) {
    return expected.namespace === undefined
      ? `expected a cluster-scoped ${resource.kind} in response, got namespace ${quote(namespace, scrub)}`
      : `expected namespace ${JSON.stringify(expected.namespace)} in response, got ${quote(namespace, scrub)}`
  }
  const name = object.metadata?.name
  if (expected.name !== undefined && name !== expected.name) {
    return `expected name ${JSON.stringify(expected.name)} in response, got ${quote(name, scrub)}`
  }
  return undefined
}

/** What one request is: the verb's parts `send` needs. */
interface Spec<X> {
  readonly method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE"
  readonly path: string
  readonly params: ReadonlyArray<[string, string]>
  /** The JSON text and its content type. */
  readonly body?: { readonly text: string; readonly contentType: string } | undefined
  /** What the request is, first in every message: `get pods "web" in default`. */
  readonly prefix: string
  readonly decode: (response: HttpClientResponse.HttpClientResponse, scrub: Scrub) => Effect.Effect<X, ApiError>
}

// -------------------------------------------------------------------------------------------------
// make
// -------------------------------------------------------------------------------------------------

/** @internal */
export const make = (
  options: Client.Options = {}
): Effect.Effect<Client.Client.Service, never, KubeConfig | HttpClient.HttpClient> =>
  Effect.gen(function*() {
    const config = yield* KubeConfig
    const http = HttpClient.withScope(yield* HttpClient.HttpClient)
    return yield* makeWith(config, http, new RequestMetrics(hostOf(config.server)), options)
  })

/** The options of `derive` over those of the Client derived from: each one given replaces the parent's. */
const deriveOptions = (parent: Client.Options, options: Client.DeriveOptions): Client.Options => {
  const merged: { -readonly [K in keyof Client.Options]: Client.Options[K] } = { ...parent }
  if (options.qps !== undefined) merged.qps = options.qps
  if (options.burst !== undefined) merged.burst = options.burst
  if (options.timeout !== undefined) merged.timeout = options.timeout
  if (options.userAgent !== undefined) merged.userAgent = options.userAgent
  return merged
}

/**
 * A Client over `config` and `http` (shared with the Clients it derives, as the series of its requests'
 * metrics), with a rate limiter of its own.
 */
const makeWith = (
  config: KubeConfig["Service"],
  http: HttpClient.HttpClient.With<HttpClientError, Scope.Scope>,
  metrics: RequestMetrics,
  options: Client.Options
): Effect.Effect<Client.Client.Service> =>
  Effect.gen(function*() {
    const limiter = yield* Effect.sync(() => makeLimiter(options.qps ?? defaultQps, options.burst ?? defaultBurst))
    const prepare = makePrepare(config, options.userAgent ?? defaultUserAgent)
    const timeout = Duration.fromInputUnsafe(options.timeout ?? defaultTimeout)
    const managerDefault = options.fieldManager ?? defaultFieldManager

    // ---------------------------------------------------------------------------------------------
    // one request
    // ---------------------------------------------------------------------------------------------

    /** `fence`: what a write checks after the limiter's wait, in the step that sends it (`Term.check`). */
    const send = <X, E = never>(spec: Spec<X>, fence?: Effect.Effect<void, E>): Effect.Effect<X, ApiError | E> =>
      Effect.andThen(
        limiter.take,
        Effect.suspend(() => {
          const url = config.server + spec.path
          return Effect.flatMap(prepare(new URL(url), spec.prefix), ({ headers, scrub }) => {
            const request = HttpClientRequest.make(spec.method)(url, {
              urlParams: spec.params,
              headers,
              ...(spec.body === undefined ? {} : { body: HttpBody.text(spec.body.text, spec.body.contentType) })
            })
            // GETs are sent again on a connection closed under them; writes are not (one may have arrived)
            const sent = spec.method === "GET"
              ? executeIdempotent(http, request, metrics)
              : execute(http, request, metrics)
            const exchange = Effect.scoped(
              Effect.flatMap(
                Effect.mapError(sent, transportError(spec.prefix, scrub)),
                (response): Effect.Effect<X, ApiError> =>
                  is2xx(response)
                    ? spec.decode(response, scrub)
                    : statusError(spec.prefix, response, scrub, Duration.infinity)
              )
            )
            const fenced = fence === undefined ? exchange : Effect.andThen(fence, exchange)
            return Duration.isFinite(timeout)
              ? Effect.timeoutOrElse(fenced, {
                duration: timeout,
                orElse: () =>
                  Effect.fail(
                    new TransportError({
                      reason: "Timeout",
                      message: `${spec.prefix}: no complete answer within ${Duration.format(timeout)}`
                    })
                  )
              })
              : fenced
          })
        })
      )

    /** A successful body as text (at most `maxObjectBytes`) and its JSON. */
    const readJson = (
      prefix: string,
      response: HttpClientResponse.HttpClientResponse,
      scrub: Scrub
    ): Effect.Effect<unknown, ApiError> =>
      Effect.flatMap(
        Effect.mapError(readBounded(response.stream, maxObjectBytes), transportError(prefix, scrub)),
        ({ text, truncated }) => {
          if (truncated) {
            return Effect.fail(
              new DecodeError({
                reason: "TooLarge",
                message: `${prefix}: response body over ${maxObjectBytes} bytes`
              })
            )
          }
          if (text.trim() === "") {
            return Effect.fail(
              new DecodeError({
                reason: "Malformed",
                message: `${prefix}: empty response body (HTTP ${response.status})`
              })
            )
          }
          try {
            return Effect.succeed(JSON.parse(text) as unknown)
          } catch {
            // scrubbed before it is cut: a secret the cut went through would no longer be recognised. The
            // parser's own error is left out: V8 quotes the text in it, unscrubbed.
            return Effect.fail(
              new DecodeError({
                reason: "Malformed",
                message: `${prefix}: malformed JSON in response: ${preview(text, scrub)}`
              })
            )
          }
        }
      )

    /**
     * The object of a response: metadata as the informers require it, and the object asked for: the
     * resource's kind and API group, and the request's namespace and name (`expected.name` undefined: a
     * create with `generateName`, whose name the server chooses).
     */
    const toObject = <A>(
      prefix: string,
      resource: Resource<A>,
      expected: Expected,
      u: unknown,
      scrub: Scrub
    ): Effect.Effect<A, ApiError> => {
      if (!isObjectWithMeta(u)) {
        const explained = explain(ObjectWithMeta, u)
        return Effect.fail(
          new DecodeError({
            reason: "Malformed",
            message: scrub(`${prefix}: invalid object in response: ${explained.line}`),
            ...(explained.tree === undefined ? {} : { detail: scrub(explained.tree) })
          })
        )
      }
      const unexpected = unexpectedObject(resource, expected, u, scrub)
      if (unexpected !== undefined) {
        return Effect.fail(new DecodeError({ reason: "UnexpectedObject", message: `${prefix}: ${unexpected}` }))
      }
      // `Resource.custom` / `Resource.metadataOnly`: the object as its resource decodes it
      return resource.decode === undefined ? Effect.succeed(u as A) : decodePage(
        { items: [u], resourceVersion: "", continue: undefined },
        resource.decode,
        prefix,
        scrub
      ).pipe(Effect.map((page) => page.items[0]))
    }

    const decodeObject =
      <A>(prefix: string, resource: Resource<A>, expected: Expected) =>
      (response: HttpClientResponse.HttpClientResponse, scrub: Scrub) =>
        Effect.flatMap(readJson(prefix, response, scrub), (u) => toObject(prefix, resource, expected, u, scrub))

    // ---------------------------------------------------------------------------------------------
    // addressing
    // ---------------------------------------------------------------------------------------------

    /** The namespace of an object verb: the call's, the object's, the kubeconfig's, `default`. */
    const namespaceOf = (
      resource: Resource<unknown>,
      explicit: string | undefined,
      object?: unknown
    ): string | undefined => {
      if (!resource.namespaced) return undefined
      const own = metadataOf(object)?.namespace
      return nonEmpty(explicit) ?? nonEmpty(own) ?? nonEmpty(config.namespace) ?? "default"
    }

    const writeParams = (options: Client.WriteOptions | undefined): Array<[string, string]> => {
      const params: Array<[string, string]> = []
      if (options?.dryRun === true) params.push(["dryRun", "All"])
      setParam(params, "fieldManager", options?.fieldManager)
      setParam(params, "fieldValidation", options?.fieldValidation)
      return params
    }

    /** The object as sent: `apiVersion` and `kind` from the resource when absent. */
    const withTypeMeta = (resource: Resource<unknown>, object: unknown): Record<string, unknown> => {
      const record = isRecord(object) ? object : {}
      return {
        apiVersion: record.apiVersion ?? apiVersion(resource),
        kind: record.kind ?? resource.kind,
        ...record
      }
    }

    const json = (value: unknown, contentType = "application/json") => ({
      text: JSON.stringify(value),
      contentType
    })

    /** Records a write's resourceVersion in the reconcile's `Writes` (not a dry run's). */
    const recorded = <A>(
      resource: Resource<unknown>,
      dryRun: boolean | undefined,
      effect: Effect.Effect<A, WriteError>
    ): Effect.Effect<A, WriteError> =>
      dryRun === true
        ? effect
        : Effect.tap(effect, (object) => recordWrite(groupResource(resource), metadataOf(object)?.resourceVersion))

    // ---------------------------------------------------------------------------------------------
    // verbs
    // ---------------------------------------------------------------------------------------------

    const get = <A>(resource: Resource<A>, name: string, options?: Client.GetOptions): Effect.Effect<A, ApiError> => {
      const namespace = namespaceOf(resource, options?.namespace)
      const prefix = describeObject("get", resource, namespace, name)
      const invalid = checkSegments(prefix, name, namespace, true)
      if (invalid !== undefined) return Effect.fail(invalid)
      const params: Array<[string, string]> = []
      setParam(params, "resourceVersion", options?.resourceVersion)
      return send({
        method: "GET",
        path: objectPath(resource, namespace, name),
        params,
        prefix,
        decode: decodeObject(prefix, resource, { namespace, name })
      })
    }

    const list = <A>(
      resource: Resource<A>,
      options: Client.ListOptions = {}
    ): Effect.Effect<ListPage<A>, ApiError> => {
      const namespace = resource.namespaced ? nonEmpty(options.namespace) : undefined
      const description = describeCollection(resource, namespace)
      const prefix = `list ${description}`
      const invalid = checkSegments(prefix, undefined, namespace, false)
      if (invalid !== undefined) return Effect.fail(invalid)
      return send({
        method: "GET",
        path: collectionPath(resource, namespace),
        params: listQuery(options),
        prefix,
        decode: (response, scrub) =>
          resource.decode === undefined
            ? decodeListBody<A>(response, description, scrub, Duration.infinity)
            : Effect.flatMap(
              decodeListBody<KubeObject>(response, description, scrub, Duration.infinity),
              (page) => decodePage(page, resource.decode!, prefix, scrub)
            )
      })
    }

    const listAll = <A>(
      resource: Resource<A>,
      options: Client.ListAllOptions = {}
    ): Effect.Effect<ListPage<A>, ApiError> => {
      const { maxItems = defaultMaxItems, maxPages = defaultMaxPages, ...listOptions } = options
      const limit = listOptions.limit ?? defaultPageSize
      const first = { ...listOptions, limit }
      const prefix = `list ${
        describeCollection(resource, resource.namespaced ? nonEmpty(options.namespace) : undefined)
      }`
      const tooMany = (items: number): DecodeError =>
        new DecodeError({
          reason: "TooLarge",
          message: `${prefix}: ${items} items, more than listAll's maxItems (${maxItems})`
        })
      const pages = Effect.gen(function*() {
        let page = yield* list(resource, first)
        if (page.items.length > maxItems) return yield* tooMany(page.items.length)
        const items: Array<A> = page.items.slice()
        let pages = 1
        // A repeated token, found in constant memory (Brent's cycle detection: each token is compared with
        // a checkpoint that moves at powers of two), whatever the tokens' size; a chain of distinct tokens
        // ends at `maxPages`.
        let checkpoint: string | undefined
        let power = 1
        let steps = 0
        while (page.continue !== undefined) {
          const token = page.continue
          if (token === checkpoint) {
            return yield* new DecodeError({
              reason: "ContinueRepeated",
              message: `${prefix}: the server repeated a continue token after ${pages} pages (${items.length} ` +
                `items): paging would never end`
            })
          }
          if (++steps === power) {
            checkpoint = token
            power *= 2
            steps = 0
          }
          if (pages >= maxPages) {
            return yield* new DecodeError({
              reason: "TooLarge",
              message: `${prefix}: still a continue token after ${pages} pages (${items.length} items), ` +
                `listAll's maxPages`
            })
          }
          page = yield* list(resource, { ...first, continue: token, resourceVersion: undefined })
          pages++
          if (items.length + page.items.length > maxItems) return yield* tooMany(items.length + page.items.length)
          for (const item of page.items) items.push(item)
        }
        return { items, resourceVersion: page.resourceVersion, continue: undefined }
      })
      return pages.pipe(
        // client-go's pager (FullListIfExpired): a continue token that expired mid-way, one full list
        Effect.catchIf(
          (error): error is StatusError => error._tag === "StatusError" && error.reason === "Gone" && limit > 0,
          () =>
            Effect.flatMap(list(resource, { ...listOptions, limit: undefined }), (page) =>
              page.items.length > maxItems ? Effect.fail(tooMany(page.items.length)) : Effect.succeed({
                items: page.items,
                resourceVersion: page.resourceVersion,
                continue: undefined
              }))
        )
      )
    }

    /**
     * A write of one object (create, update, patch, apply, and their status forms): the checks client-go
     * makes before sending (a name in the path is required and must be path-safe; a create's is only
     * described), then the request, the object of its answer, and its resourceVersion recorded in the
     * reconcile's `Writes` (not a dry run's). `request` is built when the write runs.
     */
    const writeObject = <A>(
      resource: Resource<A>,
      target: {
        readonly verb: string
        readonly namespace: string | undefined
        readonly name: string | undefined
        readonly nameInPath: boolean
        readonly dryRun: boolean | undefined
      },
      request: () => Pick<Spec<A>, "method" | "path" | "params" | "body">
    ): Effect.Effect<A, WriteError> => {
      const prefix = describeObject(target.verb, resource, target.namespace, target.name)
      const invalid = target.nameInPath
        ? checkSegments(prefix, target.name, target.namespace, true)
        : checkSegments(prefix, undefined, target.namespace, false)
      if (invalid !== undefined) return Effect.fail(invalid)
      return recorded(
        resource,
        target.dryRun,
        Effect.suspend(() =>
          send({
            ...request(),
            prefix,
            // a create with `generateName` (no name): the server chooses the name, only the rest is checked
            decode: decodeObject(prefix, resource, { namespace: target.namespace, name: nonEmpty(target.name) })
          }, Term.check)
        )
      )
    }

    /** The path of an object, or of its status subresource. */
    const writePath = (resource: Resource<unknown>, namespace: string | undefined, name: string, status: boolean) =>
      objectPath(resource, namespace, name) + (status ? "/status" : "")

    const create = <A>(
      resource: Resource<A>,
      object: A,
      options?: Client.WriteOptions
    ): Effect.Effect<A, WriteError> => {
      const namespace = namespaceOf(resource, options?.namespace, object)
      const name = metadataOf(object)?.name
      return writeObject(
        resource,
        { verb: "create", namespace, name, nameInPath: false, dryRun: options?.dryRun },
        () => ({
          method: "POST",
          path: collectionPath(resource, namespace),
          params: writeParams(options),
          body: json(withTypeMeta(resource, object))
        })
      )
    }

    const replace =
      (status: boolean) =>
      <A>(resource: Resource<A>, object: A, options?: Client.WriteOptions): Effect.Effect<A, WriteError> => {
        const namespace = namespaceOf(resource, options?.namespace, object)
        const name = metadataOf(object)?.name
        return writeObject(
          resource,
          { verb: status ? "update status of" : "update", namespace, name, nameInPath: true, dryRun: options?.dryRun },
          () => ({
            method: "PUT",
            path: writePath(resource, namespace, name!, status),
            params: writeParams(options),
            body: json(withTypeMeta(resource, object))
          })
        )
      }

    const patchWith = (status: boolean) =>
    <A>(
      resource: Resource<A>,
      name: string,
      patch: Client.Patch,
      options?: Client.WriteOptions
    ): Effect.Effect<A, WriteError> => {
      const namespace = namespaceOf(resource, options?.namespace)
      return writeObject(
        resource,
        { verb: status ? "patch status of" : "patch", namespace, name, nameInPath: true, dryRun: options?.dryRun },
        () => ({
          method: "PATCH",
          path: writePath(resource, namespace, name, status),
          params: writeParams(options),
          body: json(patch._tag === "JsonPatch" ? patch.operations : patch.patch, contentTypes[patch._tag])
        })
      )
    }

    const applyWith = (status: boolean) =>
    <A>(
      resource: Resource<A>,
      object: Client.ApplyConfiguration<A>,
      options?: Client.ApplyOptions
    ): Effect.Effect<A, WriteError> => {
      const namespace = namespaceOf(resource, options?.namespace, object)
      const metadata = metadataOf(object)
      const name = metadata?.name
      return writeObject(
        resource,
        { verb: status ? "apply status of" : "apply", namespace, name, nameInPath: true, dryRun: options?.dryRun },
        () => {
          const params = writeParams({ ...options, fieldManager: nonEmpty(options?.fieldManager) ?? managerDefault })
          if (options?.force === true) params.push(["force", "true"])
          const body = withTypeMeta(resource, object)
          if (metadata !== undefined && "managedFields" in metadata) {
            const { managedFields: _, ...rest } = metadata
            body.metadata = rest
          }
          return {
            method: "PATCH",
            path: writePath(resource, namespace, name!, status),
            params,
            body: json(body, contentTypes.Apply)
          }
        }
      )
    }

    const delete_ = <A>(
      resource: Resource<A>,
      name: string,
      options?: Client.DeleteOptions
    ): Effect.Effect<Client.Deleted<A>, WriteError> => {
      const namespace = namespaceOf(resource, options?.namespace)
      const prefix = describeObject("delete", resource, namespace, name)
      const invalid = checkSegments(prefix, name, namespace, true)
      if (invalid !== undefined) return Effect.fail(invalid)
      const body: Record<string, unknown> = { kind: "DeleteOptions", apiVersion: "v1" }
      const preconditions = options?.preconditions
      if (preconditions?.uid !== undefined || preconditions?.resourceVersion !== undefined) {
        body.preconditions = {
          ...(preconditions.uid === undefined ? {} : { uid: preconditions.uid }),
          ...(preconditions.resourceVersion === undefined ? {} : { resourceVersion: preconditions.resourceVersion })
        }
      }
      if (options?.propagationPolicy !== undefined) body.propagationPolicy = options.propagationPolicy
      if (options?.gracePeriodSeconds !== undefined) body.gracePeriodSeconds = options.gracePeriodSeconds
      if (options?.dryRun === true) body.dryRun = ["All"]
      return send({
        method: "DELETE",
        path: objectPath(resource, namespace, name),
        params: [],
        body: json(body),
        prefix,
        decode: (response, scrub) =>
          Effect.flatMap(readJson(prefix, response, scrub), (u): Effect.Effect<Client.Deleted<A>, ApiError> => {
            if (isStatus(u)) return Effect.succeed({ _tag: "Status", status: u as Status })
            return Effect.tap(
              Effect.map(
                toObject(prefix, resource, { namespace, name }, u, scrub),
                (object) => ({ _tag: "Object", object }) as const
              ),
              (deleted) =>
                options?.dryRun === true
                  ? Effect.void
                  : recordWrite(groupResource(resource), metadataOf(deleted.object)?.resourceVersion)
            )
          })
      }, Term.check)
    }

    /** A watch through `HttpListerWatcher`'s decoder, over this Client's server, credentials and limiter. */
    const watch = <A>(
      resource: Resource<A>,
      watchOptions: Client.WatchOptions = {}
    ): Stream.Stream<WatchEvent<A>, ApiError> => {
      const { namespace, ...rest } = watchOptions
      const lw = HttpListerWatcher.make(resource, {
        namespace: resource.namespaced ? nonEmpty(namespace) : undefined,
        userAgent: options.userAgent ?? defaultUserAgent
      }).pipe(
        Effect.provideService(KubeConfig, config),
        // the scoped client as the plain one: the ListerWatcher scopes its requests itself
        Effect.provideService(HttpClient.HttpClient, http as unknown as HttpClient.HttpClient)
      )
      return Stream.unwrap(Effect.andThen(limiter.take, Effect.map(lw, (source) => source.watch(rest))))
    }

    return {
      get,
      list,
      listAll,
      watch,
      create,
      update: replace(false),
      updateStatus: replace(true),
      patch: patchWith(false),
      patchStatus: patchWith(true),
      apply: applyWith(false),
      applyStatus: applyWith(true),
      delete: delete_,
      derive: (derived = {}) => makeWith(config, http, metrics, deriveOptions(options, derived))
    }
  })

const nonEmpty = (value: string | undefined): string | undefined =>
  value === undefined || value === "" ? undefined : value

// -------------------------------------------------------------------------------------------------
// retry on conflict
// -------------------------------------------------------------------------------------------------

const isConflict = (error: unknown): boolean =>
  isApiError(error) && error._tag === "StatusError" && error.reason === "Conflict"

/** @internal */
export const defaultRetry: Schedule.Schedule<Duration.Duration> = Schedule.max([
  // client-go's `retry.DefaultRetry`: 10ms, factor 1, jitter 0.1 (each delay between 10 and 11 ms)
  Schedule.exponential("10 millis", 1).pipe(
    Schedule.modifyDelay(({ duration }) =>
      Effect.map(Random.next, (random) => Duration.millis(Duration.toMillis(duration) * (1 + 0.1 * random)))
    )
  ),
  Schedule.recurs(4)
])

/** @internal */
export const retryOnConflict: typeof Client.retryOnConflict = dual(
  (args) => Effect.isEffect(args[0]),
  <A, E, R, Out, R2>(
    self: Effect.Effect<A, E, R>,
    schedule?: Schedule.Schedule<Out, unknown, never, R2>
  ): Effect.Effect<A, E, R | R2> =>
    Effect.retry(self, {
      schedule: schedule ?? (defaultRetry as Schedule.Schedule<unknown, unknown, never, never>),
      while: isConflict
    })
)

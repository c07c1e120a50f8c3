/**
 * The fake Client's machinery: each verb over the fake ListerWatchers of a `FakeListerWatcherSource` (one
 * per resource, the store the informers read), with the checks the real Client makes before sending, the
 * `Term` fence, the injected failures and the record of writes, then the write rules of
 * `fakeClientRules.ts`, applied under one lock so that a write reads and replaces the stored object in one
 * step.
 *
 * @internal
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import { identity } from "effect/Function"
import * as Random from "effect/Random"
import * as Result from "effect/Result"
import * as Semaphore from "effect/Semaphore"
import * as Stream from "effect/Stream"
import type { ApiError } from "../../ApiError.js"
import { DecodeError, fromStatus, isApiError } from "../../ApiError.js"
import type * as Client from "../../Client.js"
import { defaultFieldManager } from "../../Client.js"
import { recordWrite } from "../../Consistency.js"
import type * as FakeClient from "../../FakeClient.js"
import type * as FakeListerWatcher from "../../FakeListerWatcher.js"
import { FakeListerWatcherSource, scoped } from "../../FakeListerWatcher.js"
import type { KubeObject } from "../../KubeObject.js"
import type { ListPage, WatchEvent } from "../../ListerWatcher.js"
import type { Resource } from "../../Resource.js"
import { apiVersion, groupResource } from "../../Resource.js"
import * as Term from "../../Term.js"
import type { Status } from "../../Wire.js"
import { decodeEvents, decodePage } from "../protocol/objectDecoder.js"
import { checkSegments, describeObject } from "../transport/client.js"
import * as rules from "./fakeClientRules.js"
import type { JsonObject } from "./json.js"
import { isObject } from "./json.js"
import { jsonPatch, JsonPatchError, mergePatch, strategicMergePatch } from "./patch.js"
import * as registry from "./registry.js"

type Fake = FakeListerWatcher.FakeListerWatcher.Service<JsonObject>

/** An injected failure, with the requests it applies to. */
interface Failure {
  readonly verb: FakeClient.Verb
  readonly error: ApiError
  /** Requests left to fail; `Infinity`: until cleared. */
  remaining: number
  readonly resource: string | undefined
  readonly namespace: string | undefined
  readonly name: string | undefined
}

const nonEmpty = (value: string | undefined): string | undefined =>
  value === undefined || value === "" ? undefined : value

const metadataOf = (object: unknown): JsonObject | undefined =>
  isObject(object) && isObject(object.metadata) ? object.metadata : undefined

const stringField = (object: unknown, field: string): string | undefined => {
  const value = metadataOf(object)?.[field]
  return typeof value === "string" ? value : undefined
}

/** A JSON copy of what a caller sent (as the real Client serialises it): never shared with the caller. */
const copy = (value: unknown): unknown => value === undefined ? undefined : JSON.parse(JSON.stringify(value))

/** A version-4 UUID from `Random`. */
const randomWith = <A>(f: (random: Random.Random) => A): Effect.Effect<A> =>
  Effect.withFiber((fiber) => Effect.succeed(f(fiber.getRef(Random.Random))))

const uuid = randomWith((random) => {
  const bytes: Array<number> = []
  for (let i = 0; i < 16; i++) bytes.push(Math.floor(random.nextDoubleUnsafe() * 256))
  bytes[6] = (bytes[6] & 0x0f) | 0x40
  bytes[8] = (bytes[8] & 0x3f) | 0x80
  const hex = bytes.map((b) => b.toString(16).padStart(2, "0")).join("")
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`
})

/** The characters of a `generateName` suffix (apimachinery's `rand.String`: no vowels, no confusables). */
const suffixAlphabet = "bcdfghjklmnpqrstvwxz2456789"

const suffix = randomWith((random) => {
  let out = ""
  for (let i = 0; i < 5; i++) out += suffixAlphabet[Math.floor(random.nextDoubleUnsafe() * suffixAlphabet.length)]
  return out
})

const createContext: Effect.Effect<rules.CreateContext> = Effect.all({
  now: Clock.currentTimeMillis,
  uid: uuid,
  suffix
})

/** What one write is, for its checks, its record and its failures. */
interface Target {
  readonly verb: FakeClient.WriteVerb
  /** As the real Client's messages say it: `update status of`. */
  readonly describe: string
  readonly namespace: string | undefined
  readonly name: string | undefined
  readonly nameInPath: boolean
  readonly body: unknown
  readonly dryRun: boolean
}

const describeVerb: Record<FakeClient.WriteVerb, string> = {
  create: "create",
  update: "update",
  updateStatus: "update status of",
  patch: "patch",
  patchStatus: "patch status of",
  apply: "apply",
  applyStatus: "apply status of",
  delete: "delete"
}

/** @internal */
export const make = (
  options: FakeClient.Options = {}
): Effect.Effect<FakeClient.FakeClient.Service, never, FakeListerWatcherSource> =>
  Effect.gen(function*() {
    const source = yield* FakeListerWatcherSource
    const lock = yield* Semaphore.make(1)
    return makeWith(source, lock, options)
  })

const makeWith = (
  source: FakeListerWatcherSource["Service"],
  lock: Semaphore.Semaphore,
  options: FakeClient.Options
): FakeClient.FakeClient.Service => {
  const defaultNamespace = nonEmpty(options.namespace) ?? "default"
  const managerDefault = nonEmpty(options.fieldManager) ?? defaultFieldManager
  let failures: Array<Failure> = []
  const writes: Array<FakeClient.Write> = []

  const fakeOf = (resource: Resource<unknown>): Fake => source.fakeFor(resource) as unknown as Fake

  // -----------------------------------------------------------------------------------------------
  // failures
  // -----------------------------------------------------------------------------------------------

  /** The failure injected for this request, if any (one of its `remaining` used). */
  const takeFailure = (
    verb: FakeClient.Verb,
    resource: Resource<unknown>,
    namespace: string | undefined,
    name: string | undefined
  ): ApiError | undefined => {
    const gr = groupResource(resource)
    const failure = failures.find((f) =>
      f.verb === verb && f.remaining > 0 && (f.resource === undefined || f.resource === gr) &&
      (f.namespace === undefined || f.namespace === namespace) && (f.name === undefined || f.name === name)
    )
    if (failure === undefined) return undefined
    failure.remaining--
    if (failure.remaining === 0) failures = failures.filter((f) => f !== failure)
    return failure.error
  }

  const inject = (
    verb: FakeClient.Verb,
    failure: Status | ApiError,
    times: number,
    match: Omit<FakeClient.FailureOptions, "times"> | undefined
  ) =>
    Effect.sync(() => {
      if (!(times > 0)) return
      failures = [...failures, {
        verb,
        error: isApiError(failure) ? failure : fromStatus(failure),
        remaining: times,
        resource: match?.resource === undefined ? undefined : groupResource(match.resource),
        namespace: match?.namespace,
        name: match?.name
      }]
    })

  /** Fails a read when a failure was injected for it. */
  const read = <X>(
    verb: FakeClient.Verb,
    resource: Resource<unknown>,
    namespace: string | undefined,
    name: string | undefined,
    effect: Effect.Effect<X, ApiError>
  ): Effect.Effect<X, ApiError> =>
    Effect.suspend(() => {
      const failure = takeFailure(verb, resource, namespace, name)
      return failure === undefined ? effect : Effect.fail(failure)
    })

  // -----------------------------------------------------------------------------------------------
  // the store
  // -----------------------------------------------------------------------------------------------

  const namespaceOf = (resource: Resource<unknown>, explicit: string | undefined, object?: unknown) =>
    resource.namespaced
      ? nonEmpty(explicit) ?? nonEmpty(stringField(object, "namespace")) ?? defaultNamespace
      : undefined

  /** The stored object, if any. */
  const find = (fake: Fake, namespace: string | undefined, name: string): Effect.Effect<JsonObject | undefined> =>
    Effect.map(
      fake.objects,
      (objects) =>
        objects.find((o) =>
          stringField(o, "name") === name && (stringField(o, "namespace") ?? "") === (namespace ?? "")
        )
    )

  /** The object as the caller's resource has it (`Resource.custom`, `metadataOnly`: decoded). */
  const output = <A>(resource: Resource<A>, prefix: string, obj: JsonObject): Effect.Effect<A, ApiError> =>
    resource.decode === undefined
      ? Effect.succeed(obj as A)
      : Effect.map(
        decodePage(
          { items: [obj as KubeObject], resourceVersion: "", continue: undefined },
          resource.decode,
          prefix,
          identity
        ),
        (page) => page.items[0]
      )

  /** Writes an outcome to the store (a dry run: nothing), and returns the object as stored. */
  const commit = (fake: Fake, outcome: rules.Outcome, dryRun: boolean): Effect.Effect<JsonObject> => {
    if (dryRun || outcome.type === "UNCHANGED") return Effect.succeed(outcome.obj)
    switch (outcome.type) {
      case "ADDED":
        return fake.add(outcome.obj)
      case "MODIFIED":
        return fake.modify(outcome.obj)
      case "DELETED":
        return fake.delete(outcome.obj)
    }
  }

  /**
   * One write: the real Client's checks before sending, the term, the record, an injected failure, then
   * `decide` (under the lock: it reads the store and says what to write) and the commit; the object
   * written is recorded in the reconcile's `Writes` (not a dry run's).
   */
  const write = (
    resource: Resource<unknown>,
    target: Target,
    decide: (fake: Fake) => Effect.Effect<Result.Result<rules.Outcome, Status>>
  ): Effect.Effect<{ readonly obj: JsonObject; readonly prefix: string }, ApiError | Term.TermError> => {
    const prefix = describeObject(target.describe, resource, target.namespace, target.name)
    const invalid = target.nameInPath
      ? checkSegments(prefix, target.name, target.namespace, true)
      : checkSegments(prefix, undefined, target.namespace, false)
    if (invalid !== undefined) return Effect.fail(invalid)
    return Effect.andThen(
      Term.check,
      Effect.suspend(() => {
        writes.push({
          verb: target.verb,
          resource: groupResource(resource),
          namespace: target.namespace,
          name: nonEmpty(target.name),
          body: target.body,
          dryRun: target.dryRun
        })
        const failure = takeFailure(target.verb, resource, target.namespace, nonEmpty(target.name))
        if (failure !== undefined) return Effect.fail(failure)
        const fake = fakeOf(resource)
        return lock.withPermits(1)(
          Effect.flatMap(decide(fake), (decided) =>
            Result.isFailure(decided)
              ? Effect.fail(fromStatus(decided.failure))
              : commit(fake, decided.success, target.dryRun))
        ).pipe(
          Effect.tap((obj) =>
            target.dryRun ? Effect.void : recordWrite(groupResource(resource), stringField(obj, "resourceVersion"))
          ),
          Effect.map((obj) => ({ obj, prefix }))
        )
      })
    )
  }

  /** The object of a write, sent as the real Client sends it: a JSON copy, `apiVersion` and `kind` when absent. */
  const body = (resource: Resource<unknown>, object: unknown): JsonObject => {
    const sent = copy(object)
    const record: JsonObject = isObject(sent) ? sent : {}
    return { apiVersion: record.apiVersion ?? apiVersion(resource), kind: record.kind ?? resource.kind, ...record }
  }

  // -----------------------------------------------------------------------------------------------
  // reads
  // -----------------------------------------------------------------------------------------------

  const get = <A>(resource: Resource<A>, name: string, getOptions?: Client.GetOptions): Effect.Effect<A, ApiError> => {
    const namespace = namespaceOf(resource, getOptions?.namespace)
    const prefix = describeObject("get", resource, namespace, name)
    const invalid = checkSegments(prefix, name, namespace, true)
    if (invalid !== undefined) return Effect.fail(invalid)
    return read(
      "get",
      resource,
      namespace,
      name,
      Effect.flatMap(
        find(fakeOf(resource), namespace, name),
        (obj) =>
          obj === undefined ? Effect.fail(fromStatus(registry.notFound(resource, name))) : output(resource, prefix, obj)
      )
    )
  }

  const listOf = <A>(
    resource: Resource<A>,
    listOptions: Client.ListOptions
  ): Effect.Effect<ListPage<A>, ApiError> => {
    const { namespace: requested, ...rest } = listOptions
    const namespace = resource.namespaced ? nonEmpty(requested) : undefined
    const lw = scoped(fakeOf(resource), { namespace })
    const page = lw.list(rest)
    return read(
      "list",
      resource,
      namespace,
      undefined,
      resource.decode === undefined
        ? page as Effect.Effect<ListPage<A>, ApiError>
        : Effect.flatMap(
          page,
          (p) => decodePage(p as ListPage<KubeObject>, resource.decode!, `list ${lw.description ?? ""}`, identity)
        )
    )
  }

  const listAll = <A>(
    resource: Resource<A>,
    listOptions: Client.ListAllOptions = {}
  ): Effect.Effect<ListPage<A>, ApiError> => {
    const { limit: _, maxItems = 1_000_000, maxPages: __, ...rest } = listOptions
    return Effect.flatMap(listOf(resource, rest), (page) =>
      page.items.length > maxItems
        ? Effect.fail(
          new DecodeError({
            reason: "TooLarge",
            message: `list ${
              groupResource(resource)
            }: ${page.items.length} items, more than listAll's maxItems (${maxItems})`
          })
        )
        : Effect.succeed({ items: page.items, resourceVersion: page.resourceVersion, continue: undefined }))
  }

  const watch = <A>(
    resource: Resource<A>,
    watchOptions: Client.WatchOptions = {}
  ): Stream.Stream<WatchEvent<A>, ApiError> =>
    Stream.unwrap(Effect.sync(() => {
      const { namespace: requested, ...rest } = watchOptions
      const namespace = resource.namespaced ? nonEmpty(requested) : undefined
      const failure = takeFailure("watch", resource, namespace, undefined)
      if (failure !== undefined) return Stream.fail(failure)
      const lw = scoped(fakeOf(resource), { namespace })
      const events = lw.watch(rest) as Stream.Stream<WatchEvent<KubeObject>, ApiError>
      return resource.decode === undefined
        ? events as unknown as Stream.Stream<WatchEvent<A>, ApiError>
        : decodeEvents(resource.decode, `watch ${lw.description ?? ""}`, identity)(events)
    }))

  // -----------------------------------------------------------------------------------------------
  // writes
  // -----------------------------------------------------------------------------------------------

  const create = <A>(
    resource: Resource<A>,
    object: A,
    writeOptions?: Client.WriteOptions
  ): Effect.Effect<A, ApiError | Term.TermError> => {
    const namespace = namespaceOf(resource, writeOptions?.namespace, object)
    const input = body(resource, object)
    const traits = registry.resourceTraits(resource)
    return Effect.flatMap(
      write(
        resource,
        {
          verb: "create",
          describe: describeVerb.create,
          namespace,
          name: stringField(object, "name"),
          nameInPath: false,
          body: copy(object),
          dryRun: writeOptions?.dryRun === true
        },
        (fake) =>
          Effect.flatMap(
            createContext,
            (ctx) =>
              Effect.map(fake.objects, (objects) =>
                rules.create(resource, traits, input, namespace, (name) =>
                  objects.some((o) =>
                    stringField(o, "name") === name && (stringField(o, "namespace") ?? "") === (namespace ?? "")
                  ), ctx))
          )
      ),
      ({ obj, prefix }) => output(resource, prefix, obj)
    )
  }

  /** A replacement of a stored object by what `next` makes of it (an update's body, a patch, an apply). */
  const replaceWith = (
    resource: Resource<unknown>,
    namespace: string | undefined,
    name: string,
    status: boolean,
    next: (existing: JsonObject) => Effect.Effect<Result.Result<rules.Outcome, Status>>
  ) =>
  (fake: Fake): Effect.Effect<Result.Result<rules.Outcome, Status>> =>
    Effect.flatMap(find(fake, namespace, name), (existing) => {
      if (status && !registry.resourceTraits(resource).statusSubresource) {
        return Effect.succeed(Result.fail(registry.resourceNotFound))
      }
      if (existing === undefined) return Effect.succeed(Result.fail(registry.notFound(resource, name)))
      return next(existing)
    })

  const update = (status: boolean) =>
  <A>(
    resource: Resource<A>,
    object: A,
    writeOptions?: Client.WriteOptions
  ): Effect.Effect<A, ApiError | Term.TermError> => {
    const namespace = namespaceOf(resource, writeOptions?.namespace, object)
    const name = stringField(object, "name")
    const input = body(resource, object)
    const traits = registry.resourceTraits(resource)
    const verb = status ? "updateStatus" : "update"
    return Effect.flatMap(
      write(resource, {
        verb,
        describe: describeVerb[verb],
        namespace,
        name,
        nameInPath: true,
        body: copy(object),
        dryRun: writeOptions?.dryRun === true
      }, (fake) => {
        const wrong = rules.checkNamespace(resource, input, namespace)
        if (wrong !== undefined) return Effect.succeed(Result.fail(wrong))
        return replaceWith(
          resource,
          namespace,
          name!,
          status,
          (existing) => Effect.succeed(rules.replace(resource, traits, existing, input, status ? "status" : "object"))
        )(fake)
      }),
      ({ obj, prefix }) => output(resource, prefix, obj)
    )
  }

  /** The patched object, or the API server's answer to a patch that does not apply. */
  const patched = (
    resource: Resource<unknown>,
    existing: JsonObject,
    patch: Client.Patch
  ): Result.Result<JsonObject, Status> => {
    try {
      const out = patch._tag === "MergePatch"
        ? mergePatch(existing, copy(patch.patch))
        : patch._tag === "StrategicMergePatch"
        ? strategicMergePatch(existing, copy(patch.patch))
        : jsonPatch(existing, copy(patch.operations))
      return isObject(out)
        ? Result.succeed(out)
        : Result.fail(rules.badRequest("the patched object is not a JSON object"))
    } catch (e) {
      if (e instanceof JsonPatchError) return Result.fail(rules.patchFailed(e.message, e.tooLarge))
      return Result.fail(rules.patchFailed(`the patch could not be applied: ${String(e)}`, false))
    }
  }

  const patchWith = (status: boolean) =>
  <A>(
    resource: Resource<A>,
    name: string,
    patch: Client.Patch,
    writeOptions?: Client.WriteOptions
  ): Effect.Effect<A, ApiError | Term.TermError> => {
    const namespace = namespaceOf(resource, writeOptions?.namespace)
    const traits = registry.resourceTraits(resource)
    const verb = status ? "patchStatus" : "patch"
    return Effect.flatMap(
      write(resource, {
        verb,
        describe: describeVerb[verb],
        namespace,
        name,
        nameInPath: true,
        body: copy(patch),
        dryRun: writeOptions?.dryRun === true
      }, (fake) => {
        if (patch._tag === "StrategicMergePatch" && traits.custom) {
          return Effect.succeed(Result.fail(rules.unsupportedPatch))
        }
        return replaceWith(
          resource,
          namespace,
          name,
          status,
          (existing) =>
            Effect.succeed(
              Result.flatMap(patched(resource, existing, patch), (input) =>
                rules.replace(resource, traits, existing, input, status ? "status" : "object"))
            )
        )(fake)
      }),
      ({ obj, prefix }) => output(resource, prefix, obj)
    )
  }

  const applyWith = (status: boolean) =>
  <A>(
    resource: Resource<A>,
    object: Client.ApplyConfiguration<A>,
    applyOptions?: Client.ApplyOptions
  ): Effect.Effect<A, ApiError | Term.TermError> => {
    const namespace = namespaceOf(resource, applyOptions?.namespace, object)
    const name = stringField(object, "name")
    const config = body(resource, object)
    // the real Client never sends managedFields
    const meta = metadataOf(config)
    if (meta !== undefined && "managedFields" in meta) {
      const { managedFields: _, ...rest } = meta
      config.metadata = rest
    }
    const manager = nonEmpty(applyOptions?.fieldManager) ?? managerDefault
    const traits = registry.resourceTraits(resource)
    const fields = rules.appliedFields(config, status, traits)
    const verb = status ? "applyStatus" : "apply"
    return Effect.flatMap(
      write(
        resource,
        {
          verb,
          describe: describeVerb[verb],
          namespace,
          name,
          nameInPath: true,
          body: copy(object),
          dryRun: applyOptions?.dryRun === true
        },
        (fake) =>
          Effect.flatMap(
            Effect.all({ ctx: createContext, existing: find(fake, namespace, name!) }),
            ({ ctx, existing }) => {
              if (status && !traits.statusSubresource) return Effect.succeed(Result.fail(registry.resourceNotFound))
              const wrong = rules.checkNamespace(resource, config, namespace)
              if (wrong !== undefined) return Effect.succeed(Result.fail(wrong))
              if (existing === undefined) {
                if (status) return Effect.succeed(Result.fail(registry.notFound(resource, name!)))
                const stripped = strategicMergePatch({}, config) as JsonObject
                const managedFields = rules.withApplyEntry(undefined, manager, false, fields, resource, ctx.now)
                const input = { ...stripped, metadata: { ...metadataOf(stripped), managedFields } }
                return Effect.succeed(rules.create(resource, traits, input, namespace, () => false, ctx))
              }
              const merged = strategicMergePatch(existing, config) as JsonObject
              const managedFields = rules.withApplyEntry(
                metadataOf(existing)?.managedFields,
                manager,
                status,
                fields,
                resource,
                ctx.now
              )
              // the configuration's resourceVersion, if any, is a precondition; the merge keeps the stored one otherwise
              return Effect.succeed(
                rules.replace(resource, traits, existing, merged, status ? "status" : "object", managedFields)
              )
            }
          )
      ),
      ({ obj, prefix }) => output(resource, prefix, obj)
    )
  }

  const delete_ = <A>(
    resource: Resource<A>,
    name: string,
    deleteOptions?: Client.DeleteOptions
  ): Effect.Effect<Client.Deleted<A>, ApiError | Term.TermError> => {
    const namespace = namespaceOf(resource, deleteOptions?.namespace)
    return Effect.flatMap(
      write(
        resource,
        {
          verb: "delete",
          describe: describeVerb.delete,
          namespace,
          name,
          nameInPath: true,
          body: copy(deleteOptions ?? {}),
          dryRun: deleteOptions?.dryRun === true
        },
        (fake) =>
          Effect.flatMap(
            Effect.all({ now: Clock.currentTimeMillis, existing: find(fake, namespace, name) }),
            ({ existing, now }) =>
              Effect.succeed(
                existing === undefined
                  ? Result.fail(registry.notFound(resource, name))
                  : rules.remove(resource, existing, deleteOptions?.preconditions, now)
              )
          )
      ),
      ({ obj, prefix }) => Effect.map(output(resource, prefix, obj), (object) => ({ _tag: "Object", object }) as const)
    )
  }

  const self: FakeClient.FakeClient.Service = {
    get,
    list: (resource, listOptions = {}) => listOf(resource, listOptions),
    listAll,
    watch,
    create,
    update: update(false),
    updateStatus: update(true),
    patch: patchWith(false),
    patchStatus: patchWith(true),
    apply: applyWith(false),
    applyStatus: applyWith(true),
    delete: delete_,
    derive: () => Effect.succeed(self),
    failNext: (verb, failure, match) => inject(verb, failure, match?.times ?? 1, match),
    failAlways: (verb, failure, match) => inject(verb, failure, Infinity, match),
    clearFailures: Effect.sync(() => {
      failures = []
    }),
    writes: Effect.sync(() => writes.slice()),
    clearWrites: Effect.sync(() => {
      writes.length = 0
    })
  }
  return self
}

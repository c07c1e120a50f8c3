/**
 * Typed read access to an informer's cache (client-go's generated listers): `list(selector)`,
 * `get(name)`, the same per namespace through the namespace index, and `byIndex(name, value)` over the
 * informer's indexes, whose names are checked at compile time when the informer was made with named
 * indexers. Reads are cheap and never copy
 * objects: what a lister returns is the cached object itself, shared and immutable.
 *
 * @since 0.1.0
 */
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import type { Indexer } from "./Indexer.js"
import { IndexNotFoundError, namespaceIndex } from "./Indexer.js"
import type { KubeObject } from "./KubeObject.js"
import type { LabelSelectorParseError } from "./LabelSelector.js"
import * as LabelSelector from "./LabelSelector.js"
import type { Resource } from "./Resource.js"
import { groupResource } from "./Resource.js"

/**
 * The object is not in the cache. The message reads like the API server's:
 * `pods "web" not found` / `deployments.apps "api" not found`.
 *
 * @since 0.1.0
 * @category errors
 */
export class NotFoundError extends Data.TaggedError("NotFoundError")<{
  /** `resource.group`, e.g. `pods` or `deployments.apps`. */
  readonly resource: string
  readonly name: string
  readonly namespace?: string | undefined
}> {
  override get message(): string {
    const where = this.namespace === undefined ? "" : ` in namespace "${this.namespace}"`
    return `${this.resource} "${this.name}" not found${where}`
  }
}

/**
 * A label selector: a `LabelSelector`, or its string form (parsed like the API server does).
 *
 * @since 0.1.0
 * @category models
 */
export type Selector = LabelSelector.LabelSelector | string

/**
 * Reads of one namespace.
 *
 * @since 0.1.0
 * @category models
 */
export interface NamespaceLister<A> {
  readonly list: (selector?: Selector) => Effect.Effect<ReadonlyArray<A>, LabelSelectorParseError>
  readonly get: (name: string) => Effect.Effect<A, NotFoundError>
}

/**
 * A lister. `I` is the union of the index names it can be queried by (`byIndex`): those the informer
 * was made with, and the namespace index; `string` (any name, checked at run time) when they are not
 * known.
 *
 * @since 0.1.0
 * @category models
 */
export interface Lister<A, I extends string = string> extends NamespaceLister<A> {
  /**
   * Reads limited to one namespace, served by the namespace index (a scan without it). `""` is every
   * namespace, as client-go's `NamespaceAll`.
   */
  readonly byNamespace: (namespace: string) => NamespaceLister<A>
  /**
   * The objects stored under `value` in the index `name` (client-go's `Indexer.ByIndex`); a name the
   * lister's type does not list is a compile error, an index that does not exist an `IndexNotFoundError`.
   * A method, so that a lister typed with index names is still a `Lister<A>`.
   */
  byIndex(name: I, value: string): Effect.Effect<ReadonlyArray<A>, IndexNotFoundError>
}

const toSelector = (
  selector: Selector | undefined
): Result.Result<LabelSelector.LabelSelector, LabelSelectorParseError> =>
  selector === undefined
    ? Result.succeed(LabelSelector.everything)
    : typeof selector === "string"
    ? LabelSelector.parse(selector)
    : Result.succeed(selector)

const filter = <A extends KubeObject>(
  objects: Iterable<A>,
  selector: LabelSelector.LabelSelector
): ReadonlyArray<A> => {
  if (LabelSelector.isNothing(selector)) return []
  const everything = LabelSelector.isEverything(selector)
  const out: Array<A> = []
  for (const obj of objects) {
    if (everything || LabelSelector.matches(selector, obj.metadata?.labels)) out.push(obj)
  }
  return out
}

const list = <A extends KubeObject>(
  objects: () => Iterable<A>,
  selector: Selector | undefined
): Effect.Effect<ReadonlyArray<A>, LabelSelectorParseError> =>
  Effect.suspend(() => {
    const parsed = toSelector(selector)
    return Result.isFailure(parsed) ? Effect.fail(parsed.failure) : Effect.succeed(filter(objects(), parsed.success))
  })

/**
 * A lister over an indexer of `resource` objects: an informer's read-only view (`informer.indexer`), or
 * any `Indexer.Reader` (an `Indexer.Service` you built is one). It only reads. Without the namespace index,
 * namespace reads scan the whole cache.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Indexer, Lister, Resource } from "effect-informers"
 *
 * const program = Effect.gen(function*() {
 *   const indexer = yield* Indexer.make({ indexers: { [Indexer.namespaceIndex]: Indexer.metaNamespaceIndexFunction } })
 *   yield* indexer.add({ metadata: { namespace: "default", name: "web", labels: { app: "web" } } })
 *   const pods = Lister.make(indexer, Resource.pods)
 *   const web = yield* pods.byNamespace("default").list("app=web")
 *   const missing = yield* Effect.flip(pods.byNamespace("default").get("api"))
 *   console.log(web.length, missing.message) // 1 'pods "api" not found in namespace "default"'
 * })
 * ```
 *
 * Over an informer made with named indexers, `byIndex` takes those names only:
 *
 * ```ts
 * import { Effect } from "effect"
 * import { InformerFactory, Resource } from "effect-informers"
 *
 * const program = Effect.gen(function*() {
 *   const factory = yield* InformerFactory.InformerFactory
 *   const pods = yield* factory.listerFor(Resource.pods, {
 *     indexers: { byNode: (pod) => pod.spec?.nodeName === undefined ? [] : [pod.spec.nodeName] }
 *   })
 *   yield* factory.start
 *   const onNode = yield* pods.byIndex("byNode", "node-1")
 *   // pods.byIndex("byNod", "node-1") does not compile
 * })
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = <A extends KubeObject, I extends string = string>(
  indexer: Indexer.Reader<A, I>,
  resource: Resource<unknown>
): Lister<A, I> => {
  const name = groupResource(resource)
  const notFound = (objectName: string, namespace?: string) =>
    new NotFoundError({
      resource: name,
      name: objectName,
      ...(namespace === undefined || namespace === "" ? {} : { namespace })
    })
  const inNamespace = (namespace: string): Iterable<A> => {
    // "" is every namespace (client-go's NamespaceAll), not the cluster-scoped objects only.
    if (namespace === "") return indexer.unsafeValues()
    const indexed = (indexer as Indexer.Reader<A>).unsafeByIndex(namespaceIndex, namespace)
    if (!(indexed instanceof IndexNotFoundError)) return indexed
    const out: Array<A> = []
    for (const obj of indexer.unsafeValues()) if ((obj.metadata?.namespace ?? "") === namespace) out.push(obj)
    return out
  }
  return {
    byIndex: (indexName, value) => indexer.byIndex(indexName, value),
    list: (selector) => list(() => indexer.unsafeValues(), selector),
    get: (objectName) =>
      Effect.suspend(() => {
        const obj = indexer.unsafeGetByKey(objectName)
        return obj === undefined ? Effect.fail(notFound(objectName)) : Effect.succeed(obj)
      }),
    byNamespace: (namespace) => ({
      list: (selector) => list(() => inNamespace(namespace), selector),
      get: (objectName) =>
        Effect.suspend(() => {
          const obj = indexer.unsafeGetByKey(namespace === "" ? objectName : `${namespace}/${objectName}`)
          return obj === undefined ? Effect.fail(notFound(objectName, namespace)) : Effect.succeed(obj)
        })
    })
  }
}

/**
 * The Indexer suite's fixtures: pods keyed by name alone when they have no namespace (the shared pod,
 * without its default namespace "ns"); stores with their internal writer; the
 * comma-separated string store of client-go's thread_safe_store_test.
 */
import * as Result from "effect/Result"
import * as Indexer from "../../../src/Indexer.js"
import * as IndexerStore from "../../../src/internal/informer/indexerStore.js"
import type { KubeObject } from "../../../src/KubeObject.js"
import { DeletedFinalStateUnknown } from "../../../src/KubeObject.js"
import { pod as fixturePod } from "../../fixtures/index.js"

// -------------------------------------------------------------------------------------------------
// fixtures
// -------------------------------------------------------------------------------------------------

export interface Pod extends KubeObject {
  readonly metadata: {
    readonly name: string
    readonly namespace?: string | undefined
    readonly resourceVersion?: string | undefined
    readonly labels?: { readonly [key: string]: string } | undefined
    readonly annotations?: { readonly [key: string]: string } | undefined
  }
}

/** The suite's pods: no namespace unless given. */
export const pod = (
  name: string,
  extra: {
    readonly namespace?: string
    readonly rv?: string
    readonly labels?: { readonly [key: string]: string }
    readonly annotations?: { readonly [key: string]: string }
  } = {}
): Pod => fixturePod(name, { ...extra, namespace: extra.namespace ?? null }) as Pod

/**
 * A store with its internal writer (`unsafeAdd`, `unsafeDelete`, `unsafeReplace`, `unsafeBookmark`): the
 * synchronous core the informer's controller writes through, which `Indexer.make`'s service does not offer.
 */
export const writable = <A = KubeObject>(options: Indexer.Indexer.Options<A> = {}): IndexerStore.IndexerStore<A> =>
  IndexerStore.make<A>({
    keyFunction: options.keyFunction ?? Indexer.deletionHandlingMetaNamespaceKey,
    indexers: options.indexers
  })

/** A store of comma-separated strings indexed by their parts (client-go's thread_safe_store_test). */
export const commaStore = () =>
  writable<string>({
    keyFunction: (obj) => Result.succeed(obj instanceof DeletedFinalStateUnknown ? obj.key : obj),
    indexers: { testIndexer: (obj) => obj.split(",") }
  })

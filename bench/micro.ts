/**
 * W7 micro-benchmarks, each against a hand-written floor:
 * - DeltaFifo: `add` (one Effect per object, as the Reflector enqueues) then `popBatch(1000)` (as the
 *   informer takes), in both modes; the floor pushes `{ _tag, key, object }` to an array and drains it.
 * - Indexer with two indexes (namespace, node) holding `objects` objects: a new version of a cached object
 *   written with `unsafeAdd` (the informer's path: the store's internal writer, `internal/indexerStore.ts`)
 *   and with `update` (the Effect API of `Indexer.make`'s service); every 10th new
 *   version moves to another node. The floor: a Map and two `Map<string, Set<string>>` kept by hand.
 */
import * as Effect from "effect/Effect"
import * as DeltaFifo from "../src/DeltaFifo.js"
import * as Indexer from "../src/Indexer.js"
import * as IndexerStore from "../src/internal/informer/indexerStore.js"
import type { KubeObject } from "../src/KubeObject.js"
import type { MicroJob, MicroResult } from "./protocol.js"

interface MiniPod extends KubeObject {
  readonly metadata: {
    readonly name: string
    readonly namespace: string
    readonly resourceVersion: string
    readonly uid: string
    readonly labels: { readonly [key: string]: string }
  }
  readonly spec: { readonly nodeName: string }
}

const makeObjects = (count: number, generation: number): Array<MiniPod> =>
  Array.from({ length: count }, (_, i) => ({
    apiVersion: "v1",
    kind: "Pod",
    metadata: {
      name: `pod-${i}`,
      namespace: `ns-${i % 50}`,
      resourceVersion: String(generation * count + i + 1),
      uid: `uid-${i}`,
      labels: { app: `app-${i % 10}` }
    },
    spec: { nodeName: `node-${(i + (generation % 2 === 1 && i % 10 === 0 ? 1 : 0)) % 16}` }
  }))

const keyOf = (obj: MiniPod) => `${obj.metadata.namespace}/${obj.metadata.name}`

/** Operations per second of `body(n)` doing `n` operations, after a warm-up of a tenth. */
const rate = async (operations: number, body: (n: number) => Promise<void> | void): Promise<number> => {
  await body(Math.max(1, Math.floor(operations / 10)))
  const started = performance.now()
  await body(operations)
  return operations / ((performance.now() - started) / 1000)
}

const fifoRate = (mode: DeltaFifo.Mode, objects: ReadonlyArray<MiniPod>, operations: number) =>
  rate(operations, (n) => {
    const fifo = DeltaFifo.unsafeMake<MiniPod>({ mode })
    let popped = 0
    const sink = (p: DeltaFifo.Popped<MiniPod>) =>
      Effect.sync(() => {
        popped += p.deltas.length
      })
    return Effect.runPromise(Effect.gen(function*() {
      for (let i = 0; i < n; i++) {
        yield* fifo.add(objects[i % objects.length])
        if (fifo.unsafeLength() >= 1000) {
          while (fifo.unsafeLength() > 0) yield* fifo.popBatch(1000, sink)
        }
      }
      while (fifo.unsafeLength() > 0) yield* fifo.popBatch(1000, sink)
      if (popped < n) throw new Error(`fifo ${mode}: popped ${popped} of ${n}`)
    }))
  })

const fifoFloorRate = (objects: ReadonlyArray<MiniPod>, operations: number) =>
  rate(operations, (n) => {
    let queue: Array<{ readonly _tag: string; readonly key: string; readonly object: MiniPod }> = []
    let popped = 0
    const drain = () => {
      const batch = queue
      queue = []
      for (let j = 0; j < batch.length; j++) if (batch[j].object !== undefined) popped++
    }
    for (let i = 0; i < n; i++) {
      const object = objects[i % objects.length]
      queue.push({ _tag: "Added", key: keyOf(object), object })
      if (queue.length >= 1000) drain()
    }
    drain()
    if (popped < n) throw new Error(`fifo floor: popped ${popped} of ${n}`)
  })

const byNode = (obj: MiniPod): ReadonlyArray<string> => [obj.spec.nodeName]

const indexerRates = async (count: number, operations: number) => {
  const generations = [makeObjects(count, 0), makeObjects(count, 1)]
  const keys = generations[0].map(keyOf)
  const version = (i: number) => generations[Math.floor(i / count) % 2 === 0 ? 1 : 0][i % count]
  const filled = () => {
    // the informer's store, with its writer (the Effect API below is the same object's)
    const indexer = IndexerStore.make<MiniPod>({
      keyFunction: Indexer.deletionHandlingMetaNamespaceKey,
      indexers: { namespace: Indexer.metaNamespaceIndexFunction as Indexer.IndexFunction<MiniPod>, node: byNode }
    })
    for (let i = 0; i < count; i++) indexer.unsafeAdd(keys[i], generations[0][i])
    return indexer
  }

  // a running position, so that the measured run goes on from the warm-up: every write is a new version
  let at = 0
  let indexer = filled()
  const unsafe = await rate(operations, (n) => {
    for (let i = 0; i < n; i++, at++) {
      const error = indexer.unsafeAdd(keys[at % count], version(at))
      if (error !== undefined) throw error
    }
  })
  at = 0
  indexer = filled()
  const viaEffect = await rate(operations, (n) =>
    Effect.runPromise(Effect.gen(function*() {
      for (let i = 0; i < n; i++, at++) yield* indexer.update(version(at))
    })))

  // the floor
  const items = new Map<string, MiniPod>()
  const namespaces = new Map<string, Set<string>>()
  const nodes = new Map<string, Set<string>>()
  const insert = (index: Map<string, Set<string>>, value: string, key: string) => {
    const set = index.get(value)
    if (set === undefined) index.set(value, new Set([key]))
    else set.add(key)
  }
  const remove = (index: Map<string, Set<string>>, value: string, key: string) => {
    const set = index.get(value)
    if (set !== undefined && set.delete(key) && set.size === 0) index.delete(value)
  }
  const put = (key: string, obj: MiniPod) => {
    const old = items.get(key)
    items.set(key, obj)
    if (old === undefined) {
      insert(namespaces, obj.metadata.namespace, key)
      insert(nodes, obj.spec.nodeName, key)
      return
    }
    if (old.metadata.namespace !== obj.metadata.namespace) {
      remove(namespaces, old.metadata.namespace, key)
      insert(namespaces, obj.metadata.namespace, key)
    }
    if (old.spec.nodeName !== obj.spec.nodeName) {
      remove(nodes, old.spec.nodeName, key)
      insert(nodes, obj.spec.nodeName, key)
    }
  }
  for (let i = 0; i < count; i++) put(keys[i], generations[0][i])
  at = 0
  const floor = await rate(operations, (n) => {
    for (let i = 0; i < n; i++, at++) put(keys[at % count], version(at))
  })
  return { unsafe, viaEffect, floor }
}

export const runMicro = async (job: MicroJob): Promise<MicroResult> => {
  const objects = makeObjects(job.objects, 0)
  const fifoInOrder = await fifoRate("inOrder", objects, job.operations)
  const fifoCoalescing = await fifoRate("coalescing", objects, job.operations)
  const fifoFloor = await fifoFloorRate(objects, job.operations)
  const indexer = await indexerRates(job.objects, job.operations)
  return {
    kind: "micro",
    objects: job.objects,
    operations: job.operations,
    fifoInOrder,
    fifoCoalescing,
    fifoFloor,
    indexerUnsafe: indexer.unsafe,
    indexerEffect: indexer.viaEffect,
    indexerFloor: indexer.floor
  }
}

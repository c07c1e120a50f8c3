/**
 * W8, WorkQueue throughput: `keys` keys, each added twice (the second add collapses into the first),
 * handed out to `workers` worker fibers (`runWorker`: get, an empty reconcile, done, in a loop), against
 * a floor that does the same bookkeeping with a plain array and two Sets (dirty, processing) and no
 * Effect: the same dedup, the same hand-out order, the workers taken in turn.
 *
 * Two shapes:
 * - `prefilled`: every key is added, then the workers drain the queue (every get finds a key: the
 *   synchronous path);
 * - `interleaved`: the workers wait first, and a producer adds the keys in batches of 100 and yields
 *   after each batch, so that workers sleep and are woken by the adds (the hand-over path).
 *
 * Two producers for ours: `add`, a `yield* queue.add(key)` per add in an `Effect.gen` (an Effect per add, as
 * the floor makes a call per add), and `addAll`, a `queue.addAll(batch)` per batch of 100 keys, twice (as the
 * controller adds the keys of a batch of notifications). The difference is the cost of an Effect per add:
 * building it, running it through the generator, and the garbage of both.
 *
 * Runnable alone: `npx tsx bench/workqueue.ts [--keys=N] [--workers=W,W...]`.
 */
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import { fileURLToPath } from "node:url"
import * as WorkQueue from "../src/WorkQueue.js"
import type { WorkQueueJob, WorkQueueResult, WorkQueueRow } from "./protocol.js"

export type Shape = "prefilled" | "interleaved"
export type Producer = "add" | "addAll"

const batchSize = 100

const makeKeys = (count: number): Array<string> => Array.from({ length: count }, (_, i) => `ns-${i % 50}/pod-${i}`)

/** The work queue: processes every key once; returns how many were processed. */
const ours = (keys: ReadonlyArray<string>, workers: number, shape: Shape, producer: Producer): Promise<number> =>
  Effect.runPromise(Effect.scoped(Effect.gen(function*() {
    const queue = yield* WorkQueue.make()
    let processed = 0
    const reconcile = (_key: string) => {
      processed++
      return Effect.void
    }
    const worker = queue.runWorker(reconcile)
    const start = Effect.forkChild(
      Effect.all(Array.from({ length: workers }, () => worker), { concurrency: "unbounded", discard: true })
    )
    if (shape === "prefilled") {
      if (producer === "add") {
        for (let i = 0; i < keys.length; i++) {
          yield* queue.add(keys[i])
          yield* queue.add(keys[i])
        }
      } else {
        for (let i = 0; i < keys.length; i += batchSize) {
          const batch = keys.slice(i, i + batchSize)
          yield* queue.addAll(batch)
          yield* queue.addAll(batch)
        }
      }
      const pool = yield* start
      yield* queue.shutdown
      yield* Fiber.join(pool)
    } else {
      const pool = yield* start
      yield* Effect.yieldNow
      for (let i = 0; i < keys.length; i += batchSize) {
        const end = Math.min(keys.length, i + batchSize)
        if (producer === "add") {
          for (let j = i; j < end; j++) {
            yield* queue.add(keys[j])
            yield* queue.add(keys[j])
          }
        } else {
          const batch = keys.slice(i, end)
          yield* queue.addAll(batch)
          yield* queue.addAll(batch)
        }
        yield* Effect.yieldNow
      }
      yield* queue.shutdown
      yield* Fiber.join(pool)
    }
    return processed
  })))

/** The floor: the same dedup and hand-out with an array and two Sets, the workers taken in turn. */
const floor = (keys: ReadonlyArray<string>, workers: number, shape: Shape): number => {
  const queue: Array<string | undefined> = []
  let head = 0
  const dirty = new Set<string>()
  const processing = new Set<string>()
  const add = (key: string) => {
    if (dirty.has(key)) return
    dirty.add(key)
    if (!processing.has(key)) queue.push(key)
  }
  const get = (): string | undefined => {
    if (head === queue.length) return undefined
    const key = queue[head]!
    queue[head++] = undefined
    dirty.delete(key)
    processing.add(key)
    return key
  }
  const done = (key: string) => {
    processing.delete(key)
    if (dirty.has(key)) queue.push(key)
  }
  let processed = 0
  const slots: Array<string | undefined> = new Array(workers)
  const drain = () => {
    for (;;) {
      let taken = 0
      for (let w = 0; w < workers; w++) {
        slots[w] = get()
        if (slots[w] !== undefined) taken++
      }
      if (taken === 0) return
      for (let w = 0; w < workers; w++) {
        const key = slots[w]
        if (key === undefined) continue
        processed++
        done(key)
      }
    }
  }
  const step = shape === "prefilled" ? keys.length : batchSize
  for (let i = 0; i < keys.length; i += step) {
    const end = Math.min(keys.length, i + step)
    for (let j = i; j < end; j++) {
      add(keys[j])
      add(keys[j])
    }
    drain()
  }
  return processed
}

/**
 * Keys per second of `floor` and `ours`, each the best of `repeats` runs after one warm-up run each. The
 * two run in turn, so that a change of load on the machine hits both alike.
 */
const rates = async (
  count: number,
  repeats: number,
  floor: () => number,
  ours: () => Promise<number>
): Promise<{ readonly floor: number; readonly ours: number }> => {
  const measure = async (run: () => Promise<number> | number): Promise<number> => {
    const started = performance.now()
    // interleaved, a key handed to a waiting worker between its two adds is processed twice (its second add
    // came while it was processing): the queue's semantics, and work the floor does not do
    const processed = await run()
    const seconds = (performance.now() - started) / 1000
    if (processed < count) throw new Error(`processed ${processed} of ${count} keys`)
    return count / seconds
  }
  await measure(floor)
  await measure(ours)
  let best = { floor: 0, ours: 0 }
  for (let i = 0; i < repeats; i++) {
    const f = await measure(floor)
    const o = await measure(ours)
    best = { floor: Math.max(best.floor, f), ours: Math.max(best.ours, o) }
  }
  return best
}

export const runWorkQueue = async (job: WorkQueueJob): Promise<WorkQueueResult> => {
  const keys = makeKeys(job.keys)
  const rows: Array<WorkQueueRow> = []
  for (const producer of ["add", "addAll"] as const) {
    for (const shape of ["prefilled", "interleaved"] as const) {
      for (const workers of job.workers) {
        const best = await rates(
          keys.length,
          job.repeats,
          () => floor(keys, workers, shape),
          () => ours(keys, workers, shape, producer)
        )
        rows.push({ shape, producer, workers, ...best })
      }
    }
  }
  return { kind: "workqueue", keys: job.keys, rows }
}

// `npx tsx bench/workqueue.ts`: the figures alone
if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const option = (name: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3)
  const job: WorkQueueJob = {
    kind: "workqueue",
    keys: Number(option("keys") ?? 100_000),
    workers: (option("workers") ?? "1,4,16").split(",").map(Number),
    repeats: Number(option("repeats") ?? 5),
    timeoutMs: 600_000
  }
  runWorkQueue(job).then((result) => {
    process.stdout.write(
      `WorkQueue: ${result.keys} keys, each added twice; keys processed per second (best of ${job.repeats})\n`
    )
    for (const row of result.rows) {
      process.stdout.write(
        `${row.shape.padEnd(11)} ${(row.producer ?? "add").padEnd(6)} ${
          String(row.workers).padStart(2)
        } workers: ours ${Math.round(row.ours)}/s, floor ${Math.round(row.floor)}/s, ours/floor ${
          (row.ours / row.floor).toFixed(2)
        }\n`
      )
    }
  }, (error: unknown) => {
    process.stderr.write(`${String(error)}\n`)
    process.exit(1)
  })
}

/**
 * `internal/deque.ts` (a ring) against `effect/MutableList` (Effect 4 has no MutableQueue any more), the deque it
 * replaced (an array and a head index, `headIndex`) and a plain array with `Array.prototype.shift` (the
 * O(n) reference), on what the DeltaFifo and the coalescing buffer do with their queue: push, `length`, a
 * look at the head (`InOrderFifo.take` peeks before it shifts), shift.
 *
 * Shapes, at sizes 10 to 100,000 (one informer's objects):
 * - `burst`: push `n` (a relist, a watch burst), then drain in batches of 1,000 (`popBatch(1000)`): per
 *   item one `length`, one peek, one shift.
 * - `steady`: a backlog of `n` held while items flow (a slow consumer): push one, peek, shift one.
 * - `heap`: bytes retained by a queue of `n` items (`--expose-gc` only).
 *
 * Each implementation has its own monomorphic loops, as each call site in the FIFO sees one class, and
 * runs in its own process (`impl` argument) so that one's JIT state does not colour the next:
 *
 *   for i in 1 2 3; do for impl in deque mutableList headIndex array; do
 *     node --expose-gc --import tsx bench/deque.ts $impl; done; done
 *
 * Prints nanoseconds per item (push + length + peek + shift) per shape and size.
 */
import * as MutableList from "effect/MutableList"
import { Deque } from "../src/internal/deque.js"

const sizes = [10, 100, 1_000, 10_000, 100_000] as const
/** Items moved per measurement, whatever the size: small sizes repeat their burst. */
const itemsPerRun = 1_000_000
const batch = 1_000

const items: ReadonlyArray<{ readonly key: string }> = Array.from(
  { length: 100_000 },
  (_, i) => ({ key: `ns/pod-${i}` })
)

interface Impl {
  /** Items handled (a checksum, so that nothing is optimised away). */
  readonly burst: (n: number, rounds: number) => number
  readonly steady: (n: number, operations: number) => number
  /** A queue holding `n` items, kept alive by the caller. */
  readonly filled: (n: number) => unknown
}

const deque: Impl = {
  burst: (n, rounds) => {
    let seen = 0
    const q = new Deque<{ readonly key: string }>()
    for (let r = 0; r < rounds; r++) {
      for (let i = 0; i < n; i++) q.push(items[i])
      while (q.length > 0) {
        for (let taken = 0; taken < batch && q.length > 0; taken++) {
          if (q.peek() !== undefined) seen++
          q.shift()
        }
      }
    }
    return seen
  },
  steady: (n, operations) => {
    let seen = 0
    const q = new Deque<{ readonly key: string }>()
    for (let i = 0; i < n; i++) q.push(items[i])
    for (let i = 0; i < operations; i++) {
      q.push(items[i % n])
      if (q.length > 0 && q.peek() !== undefined) seen++
      q.shift()
    }
    return seen
  },
  filled: (n) => {
    const q = new Deque<{ readonly key: string }>()
    for (let i = 0; i < n; i++) q.push(items[i])
    return q
  }
}

// Effect 4's MutableList is a list of array buckets with no peek: `take` is the shift (it returns the head,
// or `MutableList.Empty`), and the head is looked at through what it returns. (Effect 3's MutableQueue, a
// MutableList inside, is gone in Effect 4.)
const mutableList: Impl = {
  burst: (n, rounds) => {
    let seen = 0
    const q = MutableList.make<{ readonly key: string }>()
    for (let r = 0; r < rounds; r++) {
      for (let i = 0; i < n; i++) MutableList.append(q, items[i])
      while (q.length > 0) {
        for (let taken = 0; taken < batch && q.length > 0; taken++) {
          if (MutableList.take(q) !== MutableList.Empty) seen++
        }
      }
    }
    return seen
  },
  steady: (n, operations) => {
    let seen = 0
    const q = MutableList.make<{ readonly key: string }>()
    for (let i = 0; i < n; i++) MutableList.append(q, items[i])
    for (let i = 0; i < operations; i++) {
      MutableList.append(q, items[i % n])
      if (q.length > 0 && MutableList.take(q) !== MutableList.Empty) seen++
    }
    return seen
  },
  filled: (n) => {
    const q = MutableList.make<{ readonly key: string }>()
    for (let i = 0; i < n; i++) MutableList.append(q, items[i])
    return q
  }
}

/** `Array.prototype.shift`, the O(n) shift the deque was written to avoid. */
const array: Impl = {
  burst: (n, rounds) => {
    let seen = 0
    const q: Array<{ readonly key: string }> = []
    for (let r = 0; r < rounds; r++) {
      for (let i = 0; i < n; i++) q.push(items[i])
      while (q.length > 0) {
        for (let taken = 0; taken < batch && q.length > 0; taken++) {
          if (q[0] !== undefined) seen++
          q.shift()
        }
      }
    }
    return seen
  },
  steady: (n, operations) => {
    let seen = 0
    const q: Array<{ readonly key: string }> = []
    for (let i = 0; i < n; i++) q.push(items[i])
    for (let i = 0; i < operations; i++) {
      q.push(items[i % n])
      if (q.length > 0 && q[0] !== undefined) seen++
      q.shift()
    }
    return seen
  },
  filled: (n) => {
    const q: Array<{ readonly key: string }> = []
    for (let i = 0; i < n; i++) q.push(items[i])
    return q
  }
}

/** The deque before it was a ring (a5ebc9c to this change): an array and a head index, compacted with `slice`. */
class HeadIndex<A> {
  private items: Array<A | undefined> = []
  private head = 0
  get length(): number {
    return this.items.length - this.head
  }
  push(item: A): void {
    this.items.push(item)
  }
  shift(): A | undefined {
    if (this.head >= this.items.length) return undefined
    const item = this.items[this.head]
    this.items[this.head] = undefined
    this.head++
    if (this.head === this.items.length) {
      this.items = []
      this.head = 0
    } else if (this.head >= 1024 && this.head * 2 >= this.items.length) {
      this.items = this.items.slice(this.head)
      this.head = 0
    }
    return item
  }
  peek(): A | undefined {
    return this.head < this.items.length ? this.items[this.head] : undefined
  }
}

const headIndex: Impl = {
  burst: (n, rounds) => {
    let seen = 0
    const q = new HeadIndex<{ readonly key: string }>()
    for (let r = 0; r < rounds; r++) {
      for (let i = 0; i < n; i++) q.push(items[i])
      while (q.length > 0) {
        for (let taken = 0; taken < batch && q.length > 0; taken++) {
          if (q.peek() !== undefined) seen++
          q.shift()
        }
      }
    }
    return seen
  },
  steady: (n, operations) => {
    let seen = 0
    const q = new HeadIndex<{ readonly key: string }>()
    for (let i = 0; i < n; i++) q.push(items[i])
    for (let i = 0; i < operations; i++) {
      q.push(items[i % n])
      if (q.length > 0 && q.peek() !== undefined) seen++
      q.shift()
    }
    return seen
  },
  filled: (n) => {
    const q = new HeadIndex<{ readonly key: string }>()
    for (let i = 0; i < n; i++) q.push(items[i])
    return q
  }
}

const impls: Record<string, Impl> = { deque, mutableList, array, headIndex }

/** The median of five timed runs, after one warm-up run. */
const nsPerItem = (items: number, body: () => number): number => {
  body()
  const times: Array<number> = []
  for (let run = 0; run < 5; run++) {
    const started = process.hrtime.bigint()
    const seen = body()
    times.push(Number(process.hrtime.bigint() - started) / items)
    if (seen !== items) throw new Error(`saw ${seen} of ${items}`)
  }
  return times.sort((a, b) => a - b)[2]
}

const gc = (globalThis as { gc?: () => void }).gc

const heapBytes = (impl: Impl, n: number): number | undefined => {
  if (gc === undefined) return undefined
  gc()
  const before = process.memoryUsage().heapUsed
  const kept = impl.filled(n)
  gc()
  const after = process.memoryUsage().heapUsed
  if (kept === undefined) throw new Error("unreachable")
  return Math.max(0, after - before)
}

const name = process.argv[2] ?? "deque"
const impl = impls[name]
if (impl === undefined) throw new Error(`unknown implementation ${name}; one of ${Object.keys(impls).join(", ")}`)

const rows: Array<string> = []
for (const n of sizes) {
  const rounds = Math.max(1, Math.floor(itemsPerRun / n))
  // the O(n) shift at 100,000: a tenth of the work is enough to see it
  const steadyOps = name === "array" && n >= 10_000 ? itemsPerRun / 20 : itemsPerRun
  const burst = nsPerItem(rounds * n, () => impl.burst(n, rounds))
  const steady = nsPerItem(steadyOps, () => impl.steady(n, steadyOps))
  const heap = heapBytes(impl, n)
  rows.push(
    `${name.padEnd(12)} n=${String(n).padStart(6)}  burst ${burst.toFixed(1).padStart(6)} ns/item  steady ${
      steady.toFixed(1).padStart(7)
    } ns/item${heap === undefined ? "" : `  heap ${(heap / n).toFixed(1).padStart(6)} B/item`}`
  )
}
console.log(rows.join("\n"))

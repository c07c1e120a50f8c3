/**
 * The FIFO queue of the DeltaFifo (keys in coalescing mode, deltas in in-order mode) and of the coalescing
 * handler buffer (keys): a ring over a power-of-two array. Push, shift and peek are O(1); the only copy
 * is the doubling when the ring is full. An emptied queue keeps its array up to 65,536 slots and gives a
 * larger one back, so a burst's memory is returned when it has drained.
 *
 * Why not `effect/MutableList` (or `effect/MutableQueue`, a MutableList inside with no peek): it is a
 * linked list, one node allocated per push, so it holds about 56 bytes per queued item where this holds
 * 5 to 13 (measured), and it is slower in every cell of the table but one. It has what the FIFO uses (`head` is the peek
 * `InOrderFifo.take` does; `reset` is `clear`), so the reason is the figures, not a missing operation.
 * `bench/deque.ts`, Node 20, nanoseconds per item for a push, a `length`, a peek and a shift, median of
 * five runs; the range over three runs of each implementation, each in its own process (burst / steady):
 *
 * | items queued | this ring         | MutableList       | MutableQueue   | array + head index (before) |
 * |--------------|-------------------|-------------------|----------------|-----------------------------|
 * | 10           | 4.8-5.3 / 3.9-5.3 | 9.0-9.8 / 9.3-9.7 | 15-16 / 14-15  | 8.0-9.7 / 9.6-11            |
 * | 100          | 5.0-5.1 / 4.2-5.0 | 10 / 9.1-9.5      | 18-19 / 15     | 9.7-11 / 10-11              |
 * | 1,000        | 4.8-6.1 / 3.7-4.9 | 6.0-9.6 / 7.5-8.3 | 10-11 / 20     | 11-12 / 9.6-10              |
 * | 10,000       | 5.1-5.2 / 3.9-6.4 | 5.7-6.1 / 6.9-9.3 | 13-14 / 18     | 9.6-10 / 20-21              |
 * | 100,000      | 19-21 / 5.8-6.0   | 13-14 / 17-18     | 14-15 / 98-102 | 25-27 / 29-30               |
 * | heap/item    | 5-13 B            | 56 B              | 56 B           | 8-27 B                      |
 *
 * "burst": push n, then drain in batches of 1,000 (a relist as `popBatch(1000)` takes it), repeated;
 * "steady": a backlog of n held while items flow (push one, peek, shift one). The one cell MutableList
 * wins is the repeated 100,000-item burst: each drain gives the 131,072-slot array back and the next
 * burst grows it again (a ring that kept its array measured 6.2-6.8 there: the difference is about 1.4 ms
 * per 100,000-item relist). The deque this replaced (an array and a
 * head index) copied its live half with `slice` whenever the head passed the middle; `Array.prototype.shift`
 * itself is O(n): 3,300-7,100 ns per item at 100,000.
 *
 * @internal
 */
export class Deque<A> {
  /** A power of two in length; the live items are `head .. head + size - 1`, modulo the length. */
  private items: Array<A | undefined> = new Array(16)
  private head = 0
  private size = 0

  get length(): number {
    return this.size
  }

  push(item: A): void {
    if (this.size === this.items.length) this.grow()
    this.items[(this.head + this.size) & (this.items.length - 1)] = item
    this.size++
  }

  shift(): A | undefined {
    if (this.size === 0) return undefined
    const item = this.items[this.head]
    this.items[this.head] = undefined
    this.size--
    if (this.size === 0 && this.items.length > shrinkAbove) {
      // a drained burst gives its array back
      this.items = new Array(16)
      this.head = 0
    } else {
      this.head = (this.head + 1) & (this.items.length - 1)
    }
    return item
  }

  /** The item `shift` would return, left in place. */
  peek(): A | undefined {
    return this.size === 0 ? undefined : this.items[this.head]
  }

  clear(): void {
    this.items = new Array(16)
    this.head = 0
    this.size = 0
  }

  *[Symbol.iterator](): IterableIterator<A> {
    const mask = this.items.length - 1
    for (let i = 0; i < this.size; i++) yield this.items[(this.head + i) & mask] as A
  }

  private grow(): void {
    const old = this.items
    const mask = old.length - 1
    const next: Array<A | undefined> = new Array(old.length * 2)
    for (let i = 0; i < this.size; i++) next[i] = old[(this.head + i) & mask]
    this.items = next
    this.head = 0
  }
}

/** An emptied queue keeps an array of up to this many slots (512 KiB); a larger one is given back. */
const shrinkAbove = 1 << 16

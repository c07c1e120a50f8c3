/**
 * A growable FIFO array with O(1) amortised push and shift (`Array.prototype.shift` is O(n)).
 *
 * @internal
 */
export class Deque<A> {
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

  peek(offset = 0): A | undefined {
    const index = this.head + offset
    return index < this.items.length ? this.items[index] : undefined
  }

  clear(): void {
    this.items = []
    this.head = 0
  }

  *[Symbol.iterator](): IterableIterator<A> {
    for (let i = this.head; i < this.items.length; i++) yield this.items[i] as A
  }
}

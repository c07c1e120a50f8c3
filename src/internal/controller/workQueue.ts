/**
 * The machinery of `WorkQueue`: the entries, the ready set (priority levels, each a round robin over key
 * groups, each group a FIFO), the delay heap and its timer fiber, the waiting workers, shutdown and drain,
 * and the metrics. `WorkQueue.ts` holds the types, the semantics and the documentation, and re-exports
 * the error.
 *
 * Why plain synchronous structures: every operation is one synchronous step (JavaScript runs one fiber
 * at a time and an `Effect.sync` block is never interrupted midway), so the queue needs no lock, no `Ref`
 * and no STM; a `Map` of entries, intrusive linked lists and an array heap are the cheapest structures
 * that give O(1) add, get and done, O(1) removal from the middle of a list (a priority raise, a delayed key
 * made ready) and O(log n) delays. Entries are class instances linked in place, reused from a small
 * pool: nothing is allocated per add or get beyond the entry of a key that enters the queue, and no
 * closure is kept per item.
 *
 * Waiting workers are woken without polling: a `get` that finds nothing registers a waiter, and the add
 * or done that makes a key ready hands the key to the oldest waiter directly (the key moves to processing
 * in the same step, so no other worker can take it). A waiter interrupted after it was handed a key gives
 * the key back to the front of its queue.
 *
 * The worker loop (`runWorker`) costs what Effect makes it cost: an uninterruptible region per key (what
 * `process` needs to guarantee its `done`) costs more than the queue's own work, so the loop has one exit
 * handler for its whole life instead, and remembers the key it holds; that handler gives back or requeues
 * the key whenever the worker stops. The loop's effects (the wait, the continuations) are built once per
 * worker.
 *
 * @internal
 */
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import type * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import type * as Fiber from "effect/Fiber"
import type * as Metric from "effect/Metric"
import type * as Scheduler from "effect/Scheduler"
import type * as Scope from "effect/Scope"
import type * as RateLimiter from "../../RateLimiter.js"
import type { AddOptions, Item, Options, WorkQueue } from "../../WorkQueue.js"
import { Deque } from "../deque.js"
import { tagged } from "../metricTags.js"
import * as ControllerMetrics from "./metrics.js"
import * as RateLimiterInternal from "./rateLimiter.js"

// -------------------------------------------------------------------------------------------------
// errors (re-exported and documented by WorkQueue.ts)
// -------------------------------------------------------------------------------------------------

/**
 * The queue is shutting down and has nothing left to hand out.
 *
 * @internal
 */
export class WorkQueueShutdownError extends Data.TaggedError("WorkQueueShutdownError")<{
  readonly queue: string | undefined
}> {
  override get message(): string {
    return this.queue === undefined ? "work queue is shut down" : `work queue "${this.queue}" is shut down`
  }
}

// -------------------------------------------------------------------------------------------------
// metrics (defined in ./metrics.ts, re-exported by Metrics)
// -------------------------------------------------------------------------------------------------

/** How often the unfinished-work and longest-processor gauges are set (client-go: 500 ms). */
const metricsUpdatePeriod = Duration.millis(500)

/**
 * One queue's metrics, tagged with its name once, updated synchronously in the context the queue was made
 * in (its metric registry).
 */
class QueueMetrics {
  readonly depth: Metric.Gauge<number>
  readonly adds: Metric.Counter<number>
  readonly queueDuration: Metric.Histogram<number>
  readonly workDuration: Metric.Histogram<number>
  readonly unfinishedWork: Metric.Gauge<number>
  readonly longestRunningProcessor: Metric.Gauge<number>
  readonly retries: Metric.Counter<number>
  constructor(name: string, readonly context: Context.Context<never>) {
    const tags = { name }
    this.depth = tagged(ControllerMetrics.workQueueDepth, tags)
    this.adds = tagged(ControllerMetrics.workQueueAdds, tags)
    this.queueDuration = tagged(ControllerMetrics.workQueueWaitDuration, tags)
    this.workDuration = tagged(ControllerMetrics.workQueueWorkDuration, tags)
    this.unfinishedWork = tagged(ControllerMetrics.workQueueUnfinishedWork, tags)
    this.longestRunningProcessor = tagged(ControllerMetrics.workQueueLongestRunning, tags)
    this.retries = tagged(ControllerMetrics.workQueueRetries, tags)
    // the queue's series exist from its creation, at 0: a scrape before the first add shows the queue
    this.depth.updateUnsafe(0, context)
    this.adds.updateUnsafe(0, context)
    this.retries.updateUnsafe(0, context)
  }
}

// -------------------------------------------------------------------------------------------------
// lifecycle
// -------------------------------------------------------------------------------------------------

/**
 * Where a queue stands (client-go's `shuttingDown` and `drain` flags, as one state):
 * - `Running`: adds are taken;
 * - `ShuttingDown`: adds are ignored, delayed keys dropped; what is ready is still handed out;
 * - `Draining`: `ShuttingDown`, and `shutdownWithDrain` waits until no key is processing.
 *
 * @internal
 */
export type QueueState =
  | { readonly _tag: "Running" }
  | { readonly _tag: "ShuttingDown" }
  | { readonly _tag: "Draining" }

/** @internal */
export type QueueEvent = "Shutdown" | "ShutdownWithDrain"

const running: QueueState = { _tag: "Running" }
const shuttingDown: QueueState = { _tag: "ShuttingDown" }
const draining: QueueState = { _tag: "Draining" }

/** @internal */
export const initialQueueState: QueueState = running

/**
 * The state after `event`. Either event ends `Running` for good; as in client-go, `ShutdownWithDrain`
 * (re)enables the drain, also after a plain `Shutdown`, and `Shutdown` cancels a drain in progress.
 *
 * @internal
 */
export const queueTransition = (_state: QueueState, event: QueueEvent): QueueState =>
  event === "Shutdown" ? shuttingDown : draining

// -------------------------------------------------------------------------------------------------
// entries and lists
// -------------------------------------------------------------------------------------------------

/** Where the next round of a key stands. */
const NONE = 0
/** Dirty: ready to be handed out (linked in the ready set), or, while processing, queued again at done. */
const READY = 1
/** Waiting in the delay heap until `readyAt`. */
const DELAYED = 2

/**
 * One key known to the queue: ready, delayed, processing, or processing with its next round ready or
 * delayed. Created when the key enters the queue, dropped when it is neither processing nor waiting.
 */
class Entry<K> {
  /** The links of the list the entry is in: its group's ready list, or the processing list. */
  next: Entry<K> | undefined = undefined
  prev: Entry<K> | undefined = undefined
  list: EntryList<K> | undefined = undefined
  state = NONE
  processing = false
  /** Priority of the next round (the highest asked for since the last hand-out). */
  priority = 0
  /** Priority of the round being processed. */
  handedPriority = 0
  readyAt = 0
  /** Tie-break of equal `readyAt`s: order of the delayed adds. */
  seq = 0
  heapIndex = -1
  /** When the key last became dirty (queue duration). */
  queuedAt = 0
  /** When the key was handed out (work duration, unfinished work). */
  startedAt = 0
  constructor(public item: K, public id: string, public group: string) {}
}

/** Entries kept for reuse (a queue with churn allocates none); at most this many. */
const poolSize = 1024

/** An intrusive doubly linked FIFO of entries. */
class EntryList<K> {
  head: Entry<K> | undefined = undefined
  tail: Entry<K> | undefined = undefined
  size = 0
  /** Grouped levels: whether the list is in its level's round-robin ring. */
  inRing = false
  constructor(readonly level: Level<K> | undefined, readonly group: string) {}

  pushBack(entry: Entry<K>): void {
    entry.list = this
    entry.next = undefined
    entry.prev = this.tail
    if (this.tail === undefined) this.head = entry
    else this.tail.next = entry
    this.tail = entry
    this.size++
  }

  pushFront(entry: Entry<K>): void {
    entry.list = this
    entry.prev = undefined
    entry.next = this.head
    if (this.head === undefined) this.tail = entry
    else this.head.prev = entry
    this.head = entry
    this.size++
  }

  remove(entry: Entry<K>): void {
    if (entry.prev === undefined) this.head = entry.next
    else entry.prev.next = entry.next
    if (entry.next === undefined) this.tail = entry.prev
    else entry.next.prev = entry.prev
    entry.next = undefined
    entry.prev = undefined
    entry.list = undefined
    this.size--
  }
}

/**
 * The ready keys of one priority. Without grouping, one FIFO. With grouping, one FIFO per group and a
 * ring of the groups that have keys: a take serves the group at the front of the ring and puts it at the
 * back (round robin), so a group with many keys gets one turn in each round like any other.
 */
class Level<K> {
  size = 0
  /** In the ready set's list of non-empty levels. */
  listed = false
  readonly single: EntryList<K> | undefined
  readonly groups: Map<string, EntryList<K>> | undefined
  readonly ring: Deque<EntryList<K>> | undefined

  constructor(readonly priority: number, grouped: boolean) {
    if (grouped) {
      this.single = undefined
      this.groups = new Map()
      this.ring = new Deque()
    } else {
      this.single = new EntryList(this, "")
      this.groups = undefined
      this.ring = undefined
    }
  }

  push(entry: Entry<K>, front: boolean): void {
    let list = this.single
    if (list === undefined) {
      list = this.groups!.get(entry.group)
      if (list === undefined) {
        list = new EntryList(this, entry.group)
        this.groups!.set(entry.group, list)
      }
      if (!list.inRing) {
        list.inRing = true
        this.ring!.push(list)
      }
    }
    if (front) list.pushFront(entry)
    else list.pushBack(entry)
    this.size++
  }

  /** Takes the next entry; the level must not be empty. */
  shift(): Entry<K> {
    let list = this.single
    if (list === undefined) {
      const ring = this.ring!
      // lists emptied by a removal stay in the ring until they come round
      for (list = ring.shift()!; list.size === 0; list = ring.shift()!) this.retire(list)
      const entry = list.head!
      list.remove(entry)
      if (list.size > 0) ring.push(list)
      else this.retire(list)
      this.size--
      return entry
    }
    const entry = list.head!
    list.remove(entry)
    this.size--
    return entry
  }

  private retire(list: EntryList<K>): void {
    list.inRing = false
    if (this.groups!.get(list.group) === list) this.groups!.delete(list.group)
  }
}

/** The ready keys: levels by priority, highest first; only non-empty levels are kept. */
class ReadySet<K> {
  size = 0
  /** Non-empty levels, by descending priority (few: most queues use one or two priorities). */
  private readonly levels: Array<Level<K>> = []
  /** The levels of the other priorities, while non-empty. */
  private readonly byPriority = new Map<number, Level<K>>()
  /**
   * The default priority's level, kept while empty: a queue whose workers keep up empties it at every
   * hand-out, and would otherwise make it anew at every add.
   */
  private readonly defaultLevel: Level<K>
  constructor(private readonly grouped: boolean) {
    this.defaultLevel = new Level(0, grouped)
  }

  push(entry: Entry<K>, front: boolean): void {
    // most pushes go to the top level (one priority in use)
    let level: Level<K> | undefined = this.levels[0]
    if (level === undefined || level.priority !== entry.priority) {
      level = entry.priority === 0 ? this.defaultLevel : this.byPriority.get(entry.priority)
      if (level === undefined) {
        level = new Level(entry.priority, this.grouped)
        this.byPriority.set(entry.priority, level)
      }
      if (!level.listed) {
        level.listed = true
        let i = 0
        while (i < this.levels.length && this.levels[i].priority > entry.priority) i++
        // (`splice` allocates the array of what it removes)
        if (i === this.levels.length) this.levels.push(level)
        else this.levels.splice(i, 0, level)
      }
    }
    level.push(entry, front)
    this.size++
  }

  remove(entry: Entry<K>): void {
    const list = entry.list!
    const level = list.level!
    list.remove(entry)
    level.size--
    this.size--
    if (level.size === 0) this.drop(level)
  }

  shift(): Entry<K> | undefined {
    if (this.size === 0) return undefined
    const level = this.levels[0]
    const entry = level.shift()
    this.size--
    if (level.size === 0) this.drop(level)
    return entry
  }

  private drop(level: Level<K>): void {
    level.listed = false
    if (level !== this.defaultLevel) this.byPriority.delete(level.priority)
    if (this.levels[0] === level) this.levels.shift()
    else this.levels.splice(this.levels.indexOf(level), 1)
  }
}

/** A binary min-heap of delayed entries by `readyAt`, then `seq`; each entry knows its index. */
class DelayHeap<K> {
  readonly items: Array<Entry<K>> = []

  get size(): number {
    return this.items.length
  }

  peek(): Entry<K> | undefined {
    return this.items[0]
  }

  push(entry: Entry<K>): void {
    entry.heapIndex = this.items.length
    this.items.push(entry)
    this.up(entry.heapIndex)
  }

  pop(): Entry<K> | undefined {
    const top = this.items[0]
    if (top !== undefined) this.remove(top)
    return top
  }

  remove(entry: Entry<K>): void {
    const i = entry.heapIndex
    const last = this.items.pop()!
    entry.heapIndex = -1
    if (last === entry) return
    this.items[i] = last
    last.heapIndex = i
    this.down(i)
    this.up(last.heapIndex)
  }

  /** `entry.readyAt` went down. */
  decreased(entry: Entry<K>): void {
    this.up(entry.heapIndex)
  }

  clear(): void {
    for (const entry of this.items) entry.heapIndex = -1
    this.items.length = 0
  }

  private less(a: Entry<K>, b: Entry<K>): boolean {
    return a.readyAt < b.readyAt || (a.readyAt === b.readyAt && a.seq < b.seq)
  }

  private up(i: number): void {
    const items = this.items
    const entry = items[i]
    while (i > 0) {
      const parent = (i - 1) >> 1
      if (!this.less(entry, items[parent])) break
      items[i] = items[parent]
      items[i].heapIndex = i
      i = parent
    }
    items[i] = entry
    entry.heapIndex = i
  }

  private down(i: number): void {
    const items = this.items
    const n = items.length
    const entry = items[i]
    for (;;) {
      const left = 2 * i + 1
      if (left >= n) break
      const right = left + 1
      const child = right < n && this.less(items[right], items[left]) ? right : left
      if (!this.less(items[child], entry)) break
      items[i] = items[child]
      items[i].heapIndex = i
      i = child
    }
    items[i] = entry
    entry.heapIndex = i
  }
}

/** A `get` waiting for a key. */
class Waiter<K> {
  resume: ((effect: Effect.Effect<Entry<K> | undefined, WorkQueueShutdownError>) => void) | undefined = undefined
  /** The entry handed to this waiter, until the waiter has it (then given back if it was interrupted). */
  entry: Entry<K> | undefined = undefined
  cancelled = false
  /**
   * `runWorker`'s: the waiting fiber's dispatcher. A key handed over is then delivered by a task scheduled
   * there (`wake`), which is what `resumeLater`'s yield does, without running the fiber twice.
   */
  dispatcher: Scheduler.SchedulerDispatcher | undefined = undefined
  /** The task that resumes the waiter with its `entry` (one per waiter, built on first use). */
  wake: (() => void) | undefined = undefined
  /** What the waiter gets at shutdown: the shutdown error (`get`), or no entry (`runWorker`). */
  constructor(readonly onShutdown: Exit.Exit<undefined, WorkQueueShutdownError>) {}
}

/** `Waiter.wake`: resumes the waiter with the entry it was handed, unless it was interrupted since. */
const wakeTask = <K>(waiter: Waiter<K>) => (): void => {
  const resume = waiter.resume
  const entry = waiter.entry
  waiter.resume = undefined
  // (an interrupted waiter gave its entry back: `entry` is gone, and the fiber ignores a late resume)
  if (resume !== undefined && entry !== undefined) resume(Exit.succeed(entry))
}

type Restore = <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>

const noEntry: Exit.Exit<undefined> = Exit.succeed(undefined)

/** `runWorker`: keys done in one step (their `f` answered with an `Exit`) before the worker returns to its run loop. */
const inlineRun = 32

/**
 * What a waiting fiber is resumed with from another fiber's step: `effect` after a yield. Effect 4 runs a
 * resumed fiber at once, inside the step that resumes it: the worker would run in the middle of the
 * queue's step (an add, a done), re-entering the queue, and ahead of the rest of the adder's work. After
 * the yield it runs on the scheduler instead, as on Effect 3, and a worker interrupted before then gives
 * the key it was handed back (its interruption is seen at the yield).
 *
 * @internal
 */
export const resumeLater = <A, E>(effect: Effect.Effect<A, E>): Effect.Effect<A, E> =>
  Effect.andThen(Effect.yieldNow, effect)

const voidLater: Effect.Effect<void> = resumeLater(Effect.void)

// -------------------------------------------------------------------------------------------------
// the queue
// -------------------------------------------------------------------------------------------------

const millisOf = (input: Duration.Input): number => {
  const millis = typeof input === "number" ? input : Duration.toMillis(Duration.fromInputUnsafe(input))
  return millis > 0 ? millis : 0
}

/** @internal */
export class WorkQueueImpl<K> implements WorkQueue<K> {
  readonly name: string | undefined
  private readonly entries = new Map<string, Entry<K>>()
  private readonly ready: ReadySet<K>
  private readonly delayed = new DelayHeap<K>()
  /**
   * Processing entries, in hand-out order (the head is the longest running): kept for the metrics only;
   * without them, a count.
   */
  private readonly processing = new EntryList<K>(undefined, "")
  private processingCount = 0
  private readonly pool: Array<Entry<K>> = []
  private readonly waiters = new Deque<Waiter<K>>()
  private cancelledWaiters = 0
  private readonly drainWaiters: Array<(effect: Effect.Effect<void>) => void> = []
  /** Called (and dropped) when no key is processing or ready any more: `unsafeOnSettled`. */
  private readonly settledWakers = new Set<() => void>()
  /** Adds and hand-outs so far: a stamp that moves whenever the queue does something (`unsafeActivity`). */
  private activity = 0
  private state: QueueState = initialQueueState
  /** Dirty keys (ready, or ready again at done): client-go's depth. */
  private dirty = 0
  private seq = 0
  /** The `readyAt` the timer fiber sleeps until (Infinity: no timer). */
  private armedAt = Infinity
  private timerEpoch = 0
  private timer: Fiber.Fiber<void> | undefined = undefined
  private metricsFiber: Fiber.Fiber<void> | undefined = undefined
  private readonly metrics: QueueMetrics | undefined
  private readonly keyOf: ((key: K) => string) | undefined
  private readonly groupOf: ((key: K) => string) | undefined
  private readonly limiter: RateLimiter.Limiter
  private readonly shutdownError: WorkQueueShutdownError
  private readonly shutdownExit: Exit.Exit<never, WorkQueueShutdownError>

  constructor(
    options: Options<K>,
    private readonly clock: Clock.Clock,
    private readonly scope: Scope.Scope,
    defaultRateLimiter: RateLimiter.RateLimiter,
    context: Context.Context<never>
  ) {
    this.name = options.name
    this.metrics = options.name === undefined || options.name === ""
      ? undefined
      : new QueueMetrics(options.name, context)
    this.keyOf = options.key
    this.groupOf = options.group
    this.ready = new ReadySet(options.group !== undefined)
    this.limiter = RateLimiterInternal.make(options.rateLimiter ?? defaultRateLimiter)
    this.shutdownError = new WorkQueueShutdownError({ queue: options.name })
    this.shutdownExit = Exit.fail(this.shutdownError)
  }

  private idOf(key: K): string {
    return this.keyOf === undefined ? key as unknown as string : this.keyOf(key)
  }

  private now(): number {
    return this.clock.currentTimeMillisUnsafe()
  }

  /**
   * Sub-millisecond time for the duration metrics (the live clock's milliseconds are whole): monotonic (a
   * duration is a difference), and cheaper than the wall clock's nanoseconds (one BigInt, not five).
   */
  private metricNow(): number {
    return Number(this.clock.monotonicTimeNanosUnsafe()) / 1e6
  }

  // --- adding ---------------------------------------------------------------------------------------

  /** Adds one key; returns whether the timer must be re-armed. One synchronous step. */
  private enqueue(key: K, priority: number, delay: number): boolean {
    if (this.shuttingDown) return false
    this.activity++
    const id = this.keyOf === undefined ? key as unknown as string : this.keyOf(key)
    let entry = this.entries.get(id)
    if (entry === undefined) {
      const group = this.groupOf === undefined ? "" : this.groupOf(key)
      entry = this.pool.pop()
      if (entry === undefined) {
        entry = new Entry(key, id, group)
      } else {
        entry.item = key
        entry.id = id
        entry.group = group
      }
      this.entries.set(id, entry)
    }
    if (delay > 0) {
      if (this.metrics !== undefined) this.metrics.retries.updateUnsafe(1, this.metrics.context)
      return this.delay(entry, priority, this.now() + delay)
    }
    this.makeReady(entry, priority)
    return false
  }

  private makeReady(entry: Entry<K>, priority: number): void {
    if (entry.state === READY) {
      if (priority > entry.priority) {
        entry.priority = priority
        // a raised key goes to the end of its new priority (controller-runtime)
        if (!entry.processing) {
          this.ready.remove(entry)
          this.ready.push(entry, false)
        }
      }
      return
    }
    if (entry.state === DELAYED) {
      this.delayed.remove(entry)
      if (entry.priority > priority) priority = entry.priority
    }
    entry.state = READY
    entry.priority = priority
    this.dirty++
    if (this.metrics !== undefined) {
      entry.queuedAt = this.metricNow()
      this.metrics.adds.updateUnsafe(1, this.metrics.context)
      this.metrics.depth.updateUnsafe(this.dirty, this.metrics.context)
    }
    if (!entry.processing) {
      this.ready.push(entry, false)
      if (this.waiters.length > 0) this.dispatch()
    }
  }

  /** Delays `entry` until `readyAt` unless it is ready already; returns whether the timer must be re-armed. */
  private delay(entry: Entry<K>, priority: number, readyAt: number): boolean {
    if (entry.state === READY) {
      // already ready: never delayed again, but a higher priority is kept
      this.makeReady(entry, priority)
      return false
    }
    if (entry.state === DELAYED) {
      if (priority > entry.priority) entry.priority = priority
      if (readyAt >= entry.readyAt) return false // only ever earlier
      entry.readyAt = readyAt
      this.delayed.decreased(entry)
    } else {
      entry.state = DELAYED
      entry.priority = priority
      entry.readyAt = readyAt
      entry.seq = this.seq++
      this.delayed.push(entry)
    }
    return this.delayed.peek() === entry && readyAt < this.armedAt
  }

  private addEffect(key: K, priority: number, delay: number): Effect.Effect<void> {
    return Effect.suspend(() => this.enqueue(key, priority, delay) ? this.arm() : Effect.void)
  }

  readonly add = (key: K, options?: AddOptions): Effect.Effect<void> => {
    // an add without a delay never arms the timer: one `sync`
    if (options === undefined) return Effect.sync(() => void this.enqueue(key, 0, 0))
    if (options.after === undefined && options.rateLimited !== true) {
      return Effect.sync(() => void this.enqueue(key, options.priority ?? 0, 0))
    }
    return Effect.suspend(() => this.enqueueWith(key, options) ? this.arm() : Effect.void)
  }

  private enqueueWith(key: K, options: AddOptions): boolean {
    if (this.shuttingDown) return false
    let delay = options.after === undefined ? 0 : millisOf(options.after)
    if (options.rateLimited === true) {
      const limited = this.limiter.when(this.idOf(key), this.now())
      // controller-runtime: with both, the shorter delay
      if (options.after === undefined || limited < delay) delay = limited
    }
    return this.enqueue(key, options.priority ?? 0, delay)
  }

  readonly addAll = (keys: Iterable<K>, options?: AddOptions): Effect.Effect<void> =>
    Effect.suspend(() => {
      let arm = false
      for (const key of keys) {
        if (options === undefined) this.enqueue(key, 0, 0)
        else if (this.enqueueWith(key, options)) arm = true
      }
      return arm ? this.arm() : Effect.void
    })

  readonly addAfter = (key: K, delay: Duration.Input): Effect.Effect<void> => this.addEffect(key, 0, millisOf(delay))

  readonly addRateLimited = (key: K, options?: { readonly priority?: number | undefined }): Effect.Effect<void> =>
    Effect.suspend(() => {
      // the limiter records a failure: not for an add that shutdown makes void
      if (this.shuttingDown) return Effect.void
      const delay = this.limiter.when(this.idOf(key), this.now())
      return this.enqueue(key, options?.priority ?? 0, delay) ? this.arm() : Effect.void
    })

  readonly forget = (key: K): Effect.Effect<void> => Effect.sync(() => this.limiter.forget(this.idOf(key)))

  readonly numRequeues = (key: K): Effect.Effect<number> => Effect.sync(() => this.limiter.numRequeues(this.idOf(key)))

  // --- the timer ------------------------------------------------------------------------------------

  /**
   * Makes the timer fiber sleep until the earliest `readyAt`: one fiber, forked into the queue's scope,
   * replaced only when a key is delayed to before the time it sleeps until.
   */
  private arm(): Effect.Effect<void> {
    const top = this.delayed.peek()
    if (top === undefined || top.readyAt >= this.armedAt || this.shuttingDown) return Effect.void
    this.armedAt = top.readyAt
    const epoch = ++this.timerEpoch
    this.stopTimer()
    return Effect.map(Effect.forkIn(Effect.interruptible(this.timerLoop(epoch)), this.scope), (fiber) => {
      if (this.timerEpoch === epoch) this.timer = fiber
      else fiber.interruptUnsafe()
    })
  }

  private stopTimer(): void {
    if (this.timer !== undefined) {
      this.timer.interruptUnsafe()
      this.timer = undefined
    }
  }

  private timerLoop(epoch: number): Effect.Effect<void> {
    const loop: Effect.Effect<void> = Effect.suspend(() => {
      if (epoch !== this.timerEpoch || this.shuttingDown) return Effect.void
      const now = this.now()
      this.promoteDue(now)
      const top = this.delayed.peek()
      if (top === undefined || top.readyAt === Infinity) {
        this.armedAt = Infinity
        return Effect.void
      }
      this.armedAt = top.readyAt
      return Effect.andThen(this.clock.sleep(Duration.millis(top.readyAt - now)), loop)
    })
    return loop
  }

  /** Moves every delayed key whose time has come to the ready set, earliest first. */
  private promoteDue(now: number): void {
    for (let top = this.delayed.peek(); top !== undefined && top.readyAt <= now; top = this.delayed.peek()) {
      this.delayed.remove(top)
      top.state = NONE
      this.makeReady(top, top.priority)
    }
  }

  // --- handing out ----------------------------------------------------------------------------------

  /** Takes the next ready key and marks it processing. */
  private take(): Entry<K> | undefined {
    const entry = this.ready.shift()
    if (entry === undefined) return undefined
    this.activity++
    entry.state = NONE
    entry.processing = true
    entry.handedPriority = entry.priority
    this.processingCount++
    this.dirty--
    if (this.metrics !== undefined) {
      this.processing.pushBack(entry)
      const now = this.metricNow()
      entry.startedAt = now
      this.metrics.depth.updateUnsafe(this.dirty, this.metrics.context)
      this.metrics.queueDuration.updateUnsafe((now - entry.queuedAt) / 1000, this.metrics.context)
    }
    return entry
  }

  /** Hands ready keys to waiting workers, oldest waiter first. */
  private dispatch(): void {
    while (this.waiters.length > 0 && this.ready.size > 0) {
      const waiter = this.waiters.shift()!
      if (waiter.cancelled) {
        this.cancelledWaiters--
        continue
      }
      const entry = this.take()!
      waiter.entry = entry
      if (waiter.dispatcher !== undefined) {
        // a worker: resumed by a task of its fiber's dispatcher (`resume` stays set until then)
        waiter.dispatcher.scheduleTask(waiter.wake ??= wakeTask(waiter), 0)
        continue
      }
      const resume = waiter.resume!
      waiter.resume = undefined
      resume(resumeLater(Exit.succeed(entry)))
    }
  }

  /**
   * Takes a key, or waits for one. The wait is interruptible through `restore`; what follows it is not,
   * so a key handed to this worker either reaches it or, if the worker was interrupted first, goes back
   * to the queue. Fails with the shutdown error once shut down and empty.
   */
  private acquire(restore: Restore): Effect.Effect<Entry<K>, WorkQueueShutdownError> {
    return Effect.suspend(() => {
      const entry = this.take()
      if (entry !== undefined) return Effect.succeed(entry)
      if (this.shuttingDown) return this.shutdownExit
      return this.wait(restore, this.shutdownExit) as Effect.Effect<Entry<K>, WorkQueueShutdownError>
    })
  }

  /** The slow path of a take: registers a waiter; resumes with a key, or with `onShutdown` at shutdown. */
  private wait(
    restore: Restore,
    onShutdown: Exit.Exit<undefined, WorkQueueShutdownError>
  ): Effect.Effect<Entry<K> | undefined, WorkQueueShutdownError> {
    const waiter = new Waiter<K>(onShutdown)
    return Effect.onInterrupt(
      restore(Effect.callback<Entry<K> | undefined, WorkQueueShutdownError>((resume) => {
        // the state may have changed since the caller looked (the fiber may have yielded in between)
        const entry = this.take()
        if (entry !== undefined) {
          waiter.entry = entry
          resume(Exit.succeed(entry))
        } else if (this.shuttingDown) {
          resume(onShutdown)
        } else {
          waiter.resume = resume
          this.waiters.push(waiter)
        }
      })),
      () => Effect.sync(() => this.giveBack(waiter))
    )
  }

  /** A waiter was interrupted: drop it, and put back a key it was handed but never got. */
  private giveBack(waiter: Waiter<K>): void {
    const entry = waiter.entry
    if (entry === undefined) {
      // still registered (resume is cleared once the waiter is resumed)
      if (!waiter.cancelled && waiter.resume !== undefined) {
        waiter.resume = undefined
        waiter.cancelled = true
        this.cancelledWaiters++
        if (this.cancelledWaiters > 64 && this.cancelledWaiters * 2 > this.waiters.length) this.compactWaiters()
      }
      return
    }
    waiter.entry = undefined
    waiter.resume = undefined
    entry.processing = false
    this.processingCount--
    if (this.metrics !== undefined) this.processing.remove(entry)
    if (entry.state === DELAYED) {
      this.delayed.remove(entry)
      entry.state = NONE
    }
    if (entry.state === NONE) {
      entry.state = READY
      entry.priority = entry.handedPriority
      this.dirty++
      if (this.metrics !== undefined) this.metrics.depth.updateUnsafe(this.dirty, this.metrics.context)
    } else if (entry.handedPriority > entry.priority) {
      entry.priority = entry.handedPriority
    }
    // it was at the front when it was handed out
    this.ready.push(entry, true)
    this.dispatch()
    this.checkDrained()
  }

  private compactWaiters(): void {
    const live: Array<Waiter<K>> = []
    for (let waiter = this.waiters.shift(); waiter !== undefined; waiter = this.waiters.shift()) {
      if (!waiter.cancelled) live.push(waiter)
    }
    for (const waiter of live) this.waiters.push(waiter)
    this.cancelledWaiters = 0
  }

  readonly get: Effect.Effect<K, WorkQueueShutdownError> = Effect.suspend(() => {
    const entry = this.take()
    if (entry !== undefined) return Effect.succeed(entry.item)
    if (this.shuttingDown) return this.shutdownExit
    return Effect.uninterruptibleMask((restore) => Effect.map(this.acquire(restore), (entry) => entry.item))
  })

  readonly getWithPriority: Effect.Effect<Item<K>, WorkQueueShutdownError> = Effect.uninterruptibleMask((
    restore
  ) => Effect.map(this.acquire(restore), (entry) => ({ key: entry.item, priority: entry.handedPriority })))

  readonly process = <A, E, R>(
    f: (key: K, priority: number) => Effect.Effect<A, E, R>
  ): Effect.Effect<A, E | WorkQueueShutdownError, R> =>
    Effect.uninterruptibleMask((restore) =>
      Effect.flatMap(this.acquire(restore), (entry) =>
        // not `ensuring`: the region is uninterruptible already, a match is enough (and half the cost)
        // suspended: an `f` that throws while building its effect is a defect of this round, not a lost key
        Effect.matchCauseEffect(restore(Effect.suspend(() => f(entry.item, entry.handedPriority))), {
          onFailure: (cause) => {
            this.release(entry, Cause.hasInterruptsOnly(cause))
            return Effect.failCause(cause)
          },
          onSuccess: (a) => {
            this.finish(entry)
            return Effect.succeed(a)
          }
        }))
    )

  /**
   * `process` in a loop until the queue is shut down and empty (then succeeds), or until `f` fails (then
   * fails with it, after `done`). No uninterruptible region per key (what makes `process` dearer): the
   * worker remembers the key it holds, and one exit handler for the worker's life releases it, queuing
   * it again if the worker was interrupted. A key costs a take, `f`, one `flatMap` and a `done`, and no
   * allocation of the loop's own; a key whose `f` answers with a successful `Exit` (its work done by the
   * call, as `() => Effect.void`) costs no `flatMap` and no turn of the run loop either (`runFrom`).
   */
  readonly runWorker = <E, R>(
    f: (key: K, priority: number) => Effect.Effect<unknown, E, R>
  ): Effect.Effect<void, E, R> =>
    Effect.withFiber((fiber) => {
      // the key this worker holds: from the take to its done (one at a time per worker)
      let current: Entry<K> | undefined
      // keys finished inline since the worker last waited or yielded (`runFrom`)
      let inlined = 0
      // one waiter and one wait for the worker's life: waiting allocates nothing of the loop's own
      const waiter = new Waiter<K>(noEntry)
      const waitForKey = Effect.callback<Entry<K> | undefined, WorkQueueShutdownError>((resume) => {
        const entry = this.take()
        if (entry !== undefined) {
          waiter.entry = entry
          resume(Exit.succeed(entry))
        } else if (this.shuttingDown) {
          resume(noEntry)
        } else {
          waiter.cancelled = false
          waiter.resume = resume
          // a key handed over arrives by a task of this fiber's dispatcher (`dispatch`)
          waiter.dispatcher = fiber.currentDispatcher
          this.waiters.push(waiter)
        }
      })
      const afterWait = (entry: Entry<K> | undefined): Effect.Effect<void, E, R> => {
        // runs in the step that resumed the worker: from here the worker's exit handler owns the key
        waiter.entry = undefined
        inlined = 0
        return entry === undefined ? Effect.void : runFrom(entry)
      }
      // the worker's waiter is resumed with `noEntry` at shutdown: no failure
      const awaitKey = Effect.flatMap(waitForKey as Effect.Effect<Entry<K> | undefined>, afterWait)
      const next: Effect.Effect<void, E, R> = Effect.suspend(() => {
        const entry = this.take()
        if (entry !== undefined) return runFrom(entry)
        return this.shuttingDown ? Effect.void : awaitKey
      })
      const yieldThenNext: Effect.Effect<void, E, R> = Effect.andThen(Effect.yieldNow, next)
      /**
       * Runs `entry`'s `f`, and the next keys' while `f` answers with a successful `Exit`: such a key is
       * done at once, in this step. Any other effect runs on the fiber, `afterRun` after it. Every
       * `inlineRun` keys done so, the worker goes back to the run loop (`next`: an interruption is seen
       * there); once the keys done so would have used up the fiber's operations budget (two operations a
       * key, as through the run loop), it yields, as the run loop would have (unless the fiber prevents
       * yields).
       */
      const runFrom = (entry: Entry<K>): Effect.Effect<void, E, R> => {
        for (let n = 1;; n++) {
          current = entry
          const effect = f(entry.item, entry.handedPriority)
          if (!Exit.isExit(effect) || effect._tag === "Failure") return Effect.flatMap(effect, afterRun)
          current = undefined
          this.finish(entry)
          if (++inlined * 2 >= fiber.cache.maxOpsBeforeYield && !fiber.cache.preventYield) {
            inlined = 0
            return yieldThenNext
          }
          if (n >= inlineRun) return next
          const following = this.take()
          if (following === undefined) return this.shuttingDown ? Effect.void : awaitKey
          entry = following
        }
      }
      const afterRun = (): Effect.Effect<void, E, R> => {
        const entry = current!
        current = undefined
        this.finish(entry)
        // the next key at once when there is one (saves the `suspend` of `next`)
        const following = this.take()
        return following === undefined ? next : runFrom(following)
      }
      return Effect.onExit(next, (exit) =>
        Effect.sync(() => {
          // interrupted while waiting (drop the waiter), or after a key was handed over but before it
          // arrived (give it back)
          this.giveBack(waiter)
          if (current === undefined) return
          const entry = current
          current = undefined
          this.release(entry, Exit.isFailure(exit) && Cause.hasInterruptsOnly(exit.cause))
        }))
    })

  // --- done -----------------------------------------------------------------------------------------

  /**
   * Ends the processing of a key whose worker stopped: `done` after a failure; after an interruption the
   * key is queued again (its processing was cut short, or never began), as a Go controller requeues a
   * key whose reconcile returned because its context was cancelled.
   */
  private release(entry: Entry<K>, interrupted: boolean): void {
    if (interrupted && entry.processing && !this.shuttingDown) this.makeReady(entry, entry.handedPriority)
    this.finish(entry)
  }

  private finish(entry: Entry<K>): void {
    if (!entry.processing) return
    entry.processing = false
    this.processingCount--
    if (this.metrics !== undefined) {
      this.processing.remove(entry)
      this.metrics.workDuration.updateUnsafe((this.metricNow() - entry.startedAt) / 1000, this.metrics.context)
    }
    if (entry.state === READY) {
      this.ready.push(entry, false)
      if (this.waiters.length > 0) this.dispatch()
    } else if (entry.state === NONE) {
      this.entries.delete(entry.id)
      if (this.pool.length < poolSize) {
        entry.item = undefined as K // let the key be collected
        this.pool.push(entry)
      }
    }
    if (this.processingCount === 0) {
      if (this.drainWaiters.length > 0) this.checkDrained()
      if (this.settledWakers.size > 0 && this.ready.size === 0) this.wakeSettled()
    }
  }

  readonly done = (key: K): Effect.Effect<void> =>
    Effect.sync(() => {
      const entry = this.entries.get(this.idOf(key))
      if (entry !== undefined) this.finish(entry)
    })

  // --- sizes ----------------------------------------------------------------------------------------

  readonly len: Effect.Effect<number> = Effect.sync(() => this.ready.size)

  /** Keys waiting to be handed out (`len`, synchronously). */
  unsafeLen(): number {
    return this.ready.size
  }

  /** Keys the queue holds an entry for: ready, delayed or processing (tests: nothing is kept after done). */
  unsafeEntryCount(): number {
    return this.entries.size
  }

  /** Keys waiting for their delay. */
  unsafeDelayedCount(): number {
    return this.delayed.size
  }

  // --- settled (Controller's `quiet`) -----------------------------------------------------------------

  /**
   * No key ready, none processing, and none whose delay has passed (a delayed key counts once its time has
   * come, even before the timer fiber has made it ready): what is left waits for a later time.
   */
  unsafeSettled(): boolean {
    if (this.ready.size > 0 || this.processingCount > 0) return false
    const next = this.delayed.peek()
    return next === undefined || next.readyAt > this.now()
  }

  /** Shut down: adds are ignored. */
  unsafeShuttingDown(): boolean {
    return this.shuttingDown
  }

  /** Adds and hand-outs so far: unchanged between two reads, the queue did nothing in between. */
  unsafeActivity(): number {
    return this.activity
  }

  /**
   * Calls `wake` once, when the last key processing is done with nothing ready (or at shutdown); returns
   * what cancels it. Called from the queue's own step: `wake` must not run the waiter there (`resumeLater`).
   */
  unsafeOnSettled(wake: () => void): () => void {
    this.settledWakers.add(wake)
    return () => void this.settledWakers.delete(wake)
  }

  private wakeSettled(): void {
    const wakers = Array.from(this.settledWakers)
    this.settledWakers.clear()
    for (const wake of wakers) wake()
  }

  // --- shutdown -------------------------------------------------------------------------------------

  /** Adds are ignored: the queue is no longer `Running`. */
  private get shuttingDown(): boolean {
    return this.state._tag !== "Running"
  }

  private get draining(): boolean {
    return this.state._tag === "Draining"
  }

  readonly isShuttingDown: Effect.Effect<boolean> = Effect.sync(() => this.shuttingDown)

  private beginShutdown(event: QueueEvent): void {
    const from = this.state
    this.state = queueTransition(from, event)
    if (from._tag !== "Running") return
    // delayed keys are dropped
    for (const entry of this.delayed.items) {
      entry.state = NONE
      if (!entry.processing) this.entries.delete(entry.id)
    }
    this.delayed.clear()
    this.timerEpoch++
    this.armedAt = Infinity
    this.stopTimer()
    if (this.metricsFiber !== undefined) {
      this.metricsFiber.interruptUnsafe()
      this.metricsFiber = undefined
    }
    // waiting workers only wait when nothing is ready: they get the shutdown now
    for (let waiter = this.waiters.shift(); waiter !== undefined; waiter = this.waiters.shift()) {
      if (waiter.cancelled) continue
      const resume = waiter.resume!
      waiter.resume = undefined
      resume(resumeLater(waiter.onShutdown))
    }
    this.cancelledWaiters = 0
    if (this.settledWakers.size > 0) this.wakeSettled()
  }

  private checkDrained(): void {
    if (this.draining && this.processingCount > 0) return
    const waiters = this.drainWaiters.splice(0)
    for (const resume of waiters) resume(voidLater)
  }

  readonly shutdown: Effect.Effect<void> = Effect.sync(() => {
    this.beginShutdown("Shutdown")
    this.checkDrained()
  })

  readonly shutdownWithDrain: Effect.Effect<void> = Effect.suspend(() => {
    this.beginShutdown("ShutdownWithDrain")
    if (this.processingCount === 0) return Effect.void
    return Effect.callback<void>((resume) => {
      if (!this.draining || this.processingCount === 0) return resume(Effect.void)
      this.drainWaiters.push(resume)
      return Effect.sync(() => {
        const i = this.drainWaiters.indexOf(resume)
        if (i >= 0) this.drainWaiters.splice(i, 1)
      })
    })
  })

  // --- metrics loop ---------------------------------------------------------------------------------

  /** client-go's `updateUnfinishedWorkLoop`: every 500 ms until shutdown. */
  startMetrics(): Effect.Effect<void> {
    const metrics = this.metrics
    if (metrics === undefined) return Effect.void
    const update = Effect.sync(() => {
      const now = this.metricNow()
      let total = 0
      let oldest = 0
      for (let entry = this.processing.head; entry !== undefined; entry = entry.next) {
        const age = now - entry.startedAt
        total += age
        if (age > oldest) oldest = age
      }
      metrics.unfinishedWork.updateUnsafe(total / 1000, metrics.context)
      metrics.longestRunningProcessor.updateUnsafe(oldest / 1000, metrics.context)
    })
    const loop = Effect.andThen(this.clock.sleep(metricsUpdatePeriod), update).pipe(
      Effect.repeat({ while: () => !this.shuttingDown }),
      Effect.asVoid,
      Effect.interruptible
    )
    return Effect.map(Effect.forkIn(loop, this.scope), (fiber) => {
      if (this.shuttingDown) fiber.interruptUnsafe()
      else this.metricsFiber = fiber
    })
  }
}

/**
 * Builds a queue in the current scope: closing the scope shuts it down (without drain) and stops its
 * fibers.
 *
 * @internal
 */
export const make = <K>(
  options: Options<K>,
  defaultRateLimiter: RateLimiter.RateLimiter
): Effect.Effect<WorkQueueImpl<K>, never, Scope.Scope> =>
  Effect.gen(function*() {
    const clock = yield* Clock.Clock
    const scope = yield* Effect.scope
    const context = yield* Effect.context<never>()
    const queue = new WorkQueueImpl<K>(options, clock, scope, defaultRateLimiter, context)
    yield* Effect.addFinalizer(() => queue.shutdown)
    yield* queue.startMetrics()
    return queue
  })

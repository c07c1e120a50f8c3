/**
 * Turns the sessions' results into the table: absolute figures per contender, the ratios ours/floor and
 * ours/peer of the same figure, and the issue's targets.
 */
import type { MicroResult, SessionResult, WorkQueueResult } from "./protocol.js"

export interface Row {
  readonly workload: string
  /** What is measured, with its unit. */
  readonly metric: string
  /** Which of ours. */
  readonly variant: string
  readonly floor?: number | undefined
  readonly ours?: number | undefined
  readonly peer?: number | undefined
  readonly oursOverFloor?: number | undefined
  readonly oursOverPeer?: number | undefined
  readonly target?: string | undefined
  readonly met?: boolean | undefined
  readonly note?: string | undefined
  /** The contenders whose figure failed to be measured: `FAILED` in their cell (and `NO` if ours did). */
  readonly failed?: ReadonlyArray<Contender> | undefined
}

type Contender = "floor" | "ours" | "peer"

/** A figure that a session measures and may fail to, leaving the session's other figures. */
type Figure = keyof NonNullable<SessionResult["failed"]>

/**
 * Where a row's figures come from: the session id of each contender and, for a figure that can fail alone,
 * the measurements whose failure leaves it unmeasured.
 */
interface Source {
  readonly floor?: string | undefined
  readonly ours?: string | undefined
  readonly peer?: string | undefined
  readonly figures?: ReadonlyArray<Figure> | undefined
}

export interface Results {
  readonly sessions: { readonly [id: string]: SessionResult | undefined }
  readonly micro: MicroResult | undefined
  /** W8, when it ran. */
  readonly workqueue?: WorkQueueResult | undefined
  readonly pods: number
  readonly events: number
  /** The run's failures, by session id (`micro` for W7, `workqueue` for W8). */
  readonly failures?: { readonly [id: string]: string } | undefined
}

const ratio = (a: number | undefined, b: number | undefined) =>
  a === undefined || b === undefined || b === 0 ? undefined : a / b

const mb = (bytes: number) => bytes / (1024 * 1024)

export const rows = (results: Results): Array<Row> => {
  const s = results.sessions
  const out: Array<Row> = []
  /** Whether session `id` failed to measure a figure: the whole session (no result), or one of `figures`. */
  const failedIn = (id: string | undefined, figures: ReadonlyArray<Figure> = []): boolean =>
    id !== undefined && results.failures?.[id] !== undefined &&
    (s[id] === undefined || figures.some((figure) => s[id]?.failed?.[figure] !== undefined))
  const push = (row: Row, source: Source = {}) => {
    const failed = (["floor", "ours", "peer"] as const).filter((c) =>
      row[c] === undefined && failedIn(source[c], source.figures)
    )
    out.push(failed.length === 0 ? row : { ...row, failed, ...(failed.includes("ours") ? { met: false } : {}) })
  }

  // W1
  const w1 = (id: string) => s[id]?.syncMs
  const floorSync = w1("floor")
  const peerSync = w1("peer")
  for (const [id, variant] of [["ours", "paged (500)"], ["ours-watchlist", "watch-list"]] as const) {
    const ours = w1(id)
    const overFloor = ratio(ours, floorSync)
    const overPeer = ratio(ours, peerSync)
    push({
      workload: "W1",
      metric: `initial sync of ${results.pods} pods, ms (lower is better)`,
      variant,
      floor: floorSync,
      ours,
      peer: peerSync,
      oursOverFloor: overFloor,
      oursOverPeer: overPeer,
      ...(id === "ours"
        ? {
          target: "<= 1.15x floor, < 1.0x peer",
          met: overFloor !== undefined && overPeer !== undefined ? overFloor <= 1.15 && overPeer < 1 : undefined
        }
        : { note: "floor pages by 500, peer lists unpaged" })
    }, { floor: "floor", ours: id, peer: "peer" })
  }

  // W2
  const rate = (id: string) => s[id]?.rate
  for (const [id, variant] of [["ours", "paged"], ["ours-watchlist", "watch-list"]] as const) {
    const overFloor = ratio(rate(id), rate("floor"))
    const overPeer = ratio(rate(id), rate("peer"))
    push({
      workload: "W2",
      metric: `watch throughput, ${results.events} MODIFIED, 1 handler, events/s`,
      variant,
      floor: rate("floor"),
      ours: rate(id),
      peer: rate("peer"),
      oursOverFloor: overFloor,
      oursOverPeer: overPeer,
      ...(id === "ours"
        ? {
          target: ">= 0.85x floor, >= 1.1x peer",
          met: overFloor !== undefined && overPeer !== undefined ? overFloor >= 0.85 && overPeer >= 1.1 : undefined
        }
        : {})
    }, { floor: "floor", ours: id, peer: "peer" })
  }

  // W3
  const perObject = (id: string) => s[id]?.heapPerObject
  for (
    const [id, variant, limit] of [["ours", "managedFields stripped", 0.7], [
      "ours-nostrip",
      "stripManagedFields: false",
      1.0
    ]] as const
  ) {
    const overPeer = ratio(perObject(id), perObject("peer"))
    push({
      workload: "W3",
      metric: "heap per cached object after GC, bytes",
      variant,
      floor: perObject("floor"),
      ours: perObject(id),
      peer: perObject("peer"),
      oursOverFloor: ratio(perObject(id), perObject("floor")),
      oursOverPeer: overPeer,
      target: `<= ${limit.toFixed(1)}x peer`,
      met: overPeer === undefined ? undefined : overPeer <= limit
    }, { floor: "floor", ours: id, peer: "peer" })
  }

  // W4
  for (const n of [1, 10, 100]) {
    const id = (c: string) => n === 1 ? c : `${c}-fanout-${n}`
    const overFloor = ratio(rate(id("ours")), rate(id("floor")))
    const events = s[id("ours")]?.bursts[0]?.events ?? results.events
    push({
      workload: "W4",
      metric: `fan-out to ${n} handler${n === 1 ? "" : "s"}, ${events} MODIFIED, events/s to all`,
      variant: "paged",
      floor: rate(id("floor")),
      ours: rate(id("ours")),
      peer: rate(id("peer")),
      oursOverFloor: overFloor,
      oursOverPeer: ratio(rate(id("ours")), rate(id("peer"))),
      ...(n === 10 ? { target: ">= 0.7x floor", met: overFloor === undefined ? undefined : overFloor >= 0.7 } : {})
    }, { floor: id("floor"), ours: id("ours"), peer: id("peer") })
  }

  // W5
  const stalled = s["ours-stalled"]
  if (stalled === undefined && failedIn("ours-stalled")) {
    push({ workload: "W5", metric: "running handler beside a stalled one, events/s", variant: "paged" }, {
      ours: "ours-stalled"
    })
  }
  if (stalled !== undefined) {
    const kept = ratio(stalled.rate, rate("ours"))
    push({
      workload: "W5",
      metric: "running handler beside a stalled one, events/s",
      variant: "paged",
      ours: stalled.rate,
      target: ">= 0.9x ours W2",
      met: kept === undefined ? undefined : kept >= 0.9,
      note: `${kept === undefined ? "?" : kept.toFixed(2)}x ours W2; the peer cannot express a stalled handler`
    })
    const growth = stalled.heapGrowth ?? 0
    const events = stalled.bursts.reduce((n, b) => n + b.events, 0)
    push({
      workload: "W5",
      metric: "heap growth while stalled, MB (after GC)",
      variant: "paged",
      ours: mb(growth),
      note: `${(growth / Math.max(1, events)).toFixed(0)} bytes per event buffered for the stalled handler`
    })
  }

  // W9
  const controller = s["ours-controller"]
  if (controller === undefined && failedIn("ours-controller")) {
    push({ workload: "W9", metric: "informer -> queue -> reconcile, events/s", variant: "paged" }, {
      ours: "ours-controller"
    })
  }
  if (controller !== undefined) {
    const kept = ratio(controller.rate, rate("ours"))
    push({
      workload: "W9",
      metric: "informer -> queue -> reconcile (no-op, 4 workers), events/s",
      variant: "paged",
      ours: controller.rate,
      target: ">= 0.8x ours W2",
      met: kept === undefined ? undefined : kept >= 0.8,
      note: `${kept === undefined ? "?" : kept.toFixed(2)}x ours W2; an event counts once a reconcile read its version`
    })
  }

  // W6
  const relist = (id: string) => s[id]?.relist?.ratio
  for (const [id, variant] of [["ours", "paged"], ["ours-watchlist", "watch-list"]] as const) {
    const ours = relist(id)
    push({
      workload: "W6",
      metric: `relist of ${results.pods} unchanged pods, peak heap / steady heap`,
      variant,
      floor: relist("floor"),
      ours,
      peer: relist("peer"),
      oursOverFloor: ratio(ours, relist("floor")),
      oursOverPeer: ratio(ours, relist("peer")),
      target: "<= 1.3",
      met: ours === undefined ? undefined : ours <= 1.3
    }, { floor: "floor", ours: id, peer: "peer", figures: ["relist"] })
  }

  const live = (id: string) => s[id]?.liveRelist?.ratio
  for (const [id, variant] of [["ours", "paged"], ["ours-watchlist", "watch-list"]] as const) {
    push({
      workload: "W6",
      metric: "the same, live heap: full GC before each sample",
      variant,
      floor: live("floor"),
      ours: live(id),
      peer: live("peer"),
      oursOverFloor: ratio(live(id), live("floor")),
      oursOverPeer: ratio(live(id), live("peer")),
      ...(id === "ours"
        ? {
          note: "what stays referenced at the peak (heapUsed above also counts garbage not yet collected); " +
            "not for the peer, whose one synchronous parse of the unpaged list no sample can see into"
        }
        : {})
    }, { floor: "floor", ours: id, peer: "peer", figures: ["relist", "liveRelist"] })
  }

  // every forced relist of a session, in order, the live one last: the slowest, within 30 s each
  const allRelists = (id: string): ReadonlyArray<number> | undefined => {
    const session = s[id]
    if (session === undefined || session.relists === undefined) return undefined
    const all = [...session.relists, ...(session.liveRelist === undefined ? [] : [session.liveRelist])]
    return all.length === 0 || session.failed !== undefined ? undefined : all.map((r) => r.ms)
  }
  const slowest = (id: string) => {
    const all = allRelists(id)
    return all === undefined ? undefined : Math.max(...all)
  }
  const relistLimitMs = 30_000
  for (const [id, variant] of [["ours", "paged"], ["ours-watchlist", "watch-list"]] as const) {
    const all = allRelists(id)
    const ours = slowest(id)
    push({
      workload: "W6",
      metric: `forced relists in a row, slowest, ms`,
      variant,
      floor: slowest("floor"),
      ours,
      peer: slowest("peer"),
      oursOverFloor: ratio(ours, slowest("floor")),
      oursOverPeer: ratio(ours, slowest("peer")),
      target: `each <= ${relistLimitMs / 1000} s`,
      met: ours === undefined ? undefined : ours <= relistLimitMs,
      ...(all === undefined ? {} : {
        note: `${all.length} relists: ${all.map((ms) => `${(ms / 1000).toFixed(1)} s`).join(", ")} (the last with a ` +
          "full GC before each heap sample)"
      })
    }, { floor: "floor", ours: id, peer: "peer", figures: ["relist", "liveRelist"] })
  }

  // W7
  const micro = results.micro
  if (micro === undefined && results.failures?.micro !== undefined) {
    push({
      workload: "W7",
      metric: "DeltaFifo and Indexer micro-benchmarks",
      variant: "",
      failed: ["ours"],
      met: false
    })
  }
  if (micro !== undefined) {
    for (
      const [variant, value] of [["inOrder (atomic)", micro.fifoInOrder], ["coalescing", micro.fifoCoalescing]] as const
    ) {
      push({
        workload: "W7",
        metric: "DeltaFifo add + popBatch(1000), ops/s",
        variant,
        floor: micro.fifoFloor,
        ours: value,
        oursOverFloor: ratio(value, micro.fifoFloor),
        note: "floor: array push + drain"
      })
    }
    for (
      const [variant, value] of [["unsafeAdd", micro.indexerUnsafe], ["update (Effect)", micro.indexerEffect]] as const
    ) {
      push({
        workload: "W7",
        metric: `Indexer update, 2 indexes, ${micro.objects} objects, updates/s`,
        variant,
        floor: micro.indexerFloor,
        ours: value,
        oursOverFloor: ratio(value, micro.indexerFloor),
        note: "floor: Map + two Map<string, Set>"
      })
    }
  }

  // W8
  const workqueue = results.workqueue
  if (workqueue === undefined && results.failures?.workqueue !== undefined) {
    push({ workload: "W8", metric: "WorkQueue throughput", variant: "", failed: ["ours"], met: false })
  }
  if (workqueue !== undefined) {
    workqueue.rows.forEach((row, i) => {
      const over = ratio(row.ours, row.floor)
      push({
        workload: "W8",
        metric: `WorkQueue add x2 + runWorker, ${workqueue.keys} keys, keys/s`,
        variant: `${row.shape}, ${row.workers} worker${row.workers === 1 ? "" : "s"}`,
        floor: row.floor,
        ours: row.ours,
        oursOverFloor: over,
        target: ">= 0.3x floor",
        met: over !== undefined && over >= 0.3,
        ...(i === 0 ? { note: "floor: an array and two Sets (dirty, processing) doing the same dedup, no Effect" } : {})
      })
    })
  }
  return out
}

// -------------------------------------------------------------------------------------------------
// text table
// -------------------------------------------------------------------------------------------------

const figure = (value: number | undefined): string => {
  if (value === undefined || !Number.isFinite(value)) return "-"
  const abs = Math.abs(value)
  if (abs >= 1000) return Math.round(value).toLocaleString("en-US")
  if (abs >= 100) return value.toFixed(0)
  if (abs >= 10) return value.toFixed(1)
  return value.toFixed(2)
}

const times = (value: number | undefined) => value === undefined ? "-" : `${value.toFixed(2)}x`

/** A contender's cell: `FAILED` when its measurement failed. */
const cell = (row: Row, contender: Contender) =>
  row.failed?.includes(contender) === true ? "FAILED" : figure(row[contender])

export const table = (all: ReadonlyArray<Row>): string => {
  const header = ["W", "metric", "variant of ours", "floor", "ours", "peer", "ours/floor", "ours/peer", "target", "met"]
  const lines = all.map((row) => [
    row.workload,
    row.metric,
    row.variant,
    cell(row, "floor"),
    cell(row, "ours"),
    cell(row, "peer"),
    times(row.oursOverFloor),
    times(row.oursOverPeer),
    row.target ?? "",
    row.met === undefined ? "" : row.met ? "yes" : "NO"
  ])
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i].length)))
  const numeric = new Set([3, 4, 5, 6, 7])
  const format = (cells: ReadonlyArray<string>) =>
    "| " + cells.map((c, i) => numeric.has(i) ? c.padStart(widths[i]) : c.padEnd(widths[i])).join(" | ") + " |"
  const separator = "|" + widths.map((w, i) => numeric.has(i) ? "-".repeat(w + 1) + ":" : "-".repeat(w + 2)).join("|")
    + "|"
  const notes = [
    "- W1: start -> every handler has seen every pod (the cache holds them all); W2/W4/W5: events/s until every " +
    "handler has seen the whole burst (the best burst); W4 with 100 handlers and the no-strip session run one " +
    "burst",
    "- ratios are ours / other of the same figure: lower is better for W1 (time), W3 and W6 (memory), higher otherwise",
    ...all.filter((row) => row.note !== undefined).map((row) => `- ${row.workload} ${row.variant}: ${row.note}`)
  ]
  return [format(header), separator, ...lines.map(format), "", ...notes].join("\n")
}

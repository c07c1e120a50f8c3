/**
 * Turns the sessions' results into the table: absolute figures per contender, the ratios ours/floor and
 * ours/peer of the same figure, and the targets as checks: each a measured value against a bound, met or
 * not, with the issue that set it. `bench/chart.ts` draws the checks.
 *
 * The targets are issue 26's, the same in full, `--quick` and `--scale` runs: W1 paged <= 1.15x the floor
 * and the watch-list variant no slower than paged; W2 >= 0.9x the floor and >= 1.2x the fastest peer; W3
 * (managedFields stripped) <= 0.7x the fastest peer's heap per object; W4 >= 0.85x the floor with 10
 * handlers, >= 0.75x with 100; W6 the slowest of the relists in a row <= 1.3x the floor's slowest, and the
 * live peak / steady heap <= 1.1x the floor's (absolute <= 1.1 when the floor's was not measured); W8 >=
 * 0.5x the floor; W9 >= 0.8x ours' W2; the CLI to synced <= 1.15x and its watch rate >= 0.9x the CLI
 * floor's. Older targets that issue 26 left alone keep their issue: W1 < 1.0x the peer (7, not in
 * `--scale`), W3 without stripping <= 1.0x the peer (7), W5 >= 0.9x ours' W2 (7), W6's relist peak / steady
 * heapUsed <= 1.3 (7, not in `--scale`) and each relist <= 30 s (12; 16 in `--scale`).
 *
 * The peers (bench/peers.ts): a row's `peer` is the fastest peer's figure on that row (the highest rate; the
 * lowest time, heap or heap ratio), which `oursOverPeer` and the checks against `peer` use; `peers` has each
 * peer's figure by name (`client-node 2.0.1`, ...). A peer that cannot express a workload (W5, W9) or did
 * not run is left out of `peers`.
 */
import type { PeerId } from "./peers.js"
import { defaultPeerNames, peerIds } from "./peers.js"
import type { CliResult, MicroResult, SessionResult, WorkQueueResult } from "./protocol.js"

/** One target: `value op bound`, e.g. ours/floor >= 0.9. */
export interface Check {
  /** What the value is measured against, e.g. `floor`, `peer`, `ours W2`; empty for an absolute figure. */
  readonly against: string
  readonly op: ">=" | ">" | "<=" | "<"
  readonly bound: number
  /** How the value and the bound are written: `x` (a ratio), ` s`, or nothing. */
  readonly unit: "x" | " s" | ""
  /** The measured value (a ratio for `x`); undefined when not measured. */
  readonly value: number | undefined
  /** undefined when the value was not measured (the session did not run); false when it failed. */
  readonly met: boolean | undefined
  /** The issue that set the target. */
  readonly issue: number
  /** Written instead of `op bound unit against`, e.g. `each <= 30 s`. */
  readonly text?: string | undefined
}

export interface Row {
  readonly workload: string
  /** What is measured, with its unit. */
  readonly metric: string
  /** Which of ours. */
  readonly variant: string
  readonly floor?: number | undefined
  readonly ours?: number | undefined
  /** The fastest peer's figure (the highest rate; the lowest time, heap or heap ratio). */
  readonly peer?: number | undefined
  /** Each peer's figure, by name with its version (`client-node 2.0.1`); only the peers measured. */
  readonly peers?: { readonly [name: string]: number } | undefined
  /** The peers whose figure failed to be measured, by name: `FAILED` in their cell. */
  readonly peersFailed?: ReadonlyArray<string> | undefined
  readonly oursOverFloor?: number | undefined
  readonly oursOverPeer?: number | undefined
  /** The targets' text (from `checks`). */
  readonly target?: string | undefined
  /** Every check met (false when one is missed or failed; undefined when one is not measured). */
  readonly met?: boolean | undefined
  readonly checks?: ReadonlyArray<Check> | undefined
  readonly note?: string | undefined
  /**
   * The contenders whose figure failed to be measured: `FAILED` in their cell (and `NO` if ours did); `peer`
   * when no peer was measured and one failed.
   */
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
  /** client-node 2.0's session (`peer`, `peer-fanout-10`, `cli-peer`): the other peers' ids are derived. */
  readonly peer?: string | undefined
  readonly figures?: ReadonlyArray<Figure> | undefined
}

export interface Results {
  readonly sessions: { readonly [id: string]: SessionResult | undefined }
  /** The CLI sessions (`cli-floor`, `cli-ours`, `cli-peer`), when they ran. */
  readonly cli?: { readonly [id: string]: CliResult | undefined } | undefined
  readonly micro: MicroResult | undefined
  /** W8, when it ran. */
  readonly workqueue?: WorkQueueResult | undefined
  readonly pods: number
  readonly events: number
  /**
   * `--scale`: the Kubernetes envelope (150,000 pods), against issue 26's targets as the other runs, without
   * the older ones that never applied to it (W1 against the peer, W6's relist peak / steady heapUsed).
   */
  readonly scale?: boolean | undefined
  /** The run's failures, by session id (`micro` for W7, `workqueue` for W8). */
  readonly failures?: { readonly [id: string]: string } | undefined
  /** Each peer's name with its installed version (`client-node 2.0.1`); defaults without the versions. */
  readonly peerNames?: Partial<Record<PeerId, string>> | undefined
}

/** The session id of peer `p` for client-node 2.0's (`peer`, `peer-fanout-10`, `cli-peer`). */
const peerSession = (p: PeerId, id: string) => id.replace("peer", p)

const ratio = (a: number | undefined, b: number | undefined) =>
  a === undefined || b === undefined || b === 0 ? undefined : a / b

const mb = (bytes: number) => bytes / (1024 * 1024)

/** A check of `value op bound`; `met` is filled in by `rows` (false too when a contender's figure failed). */
const check = (
  issue: number,
  value: number | undefined,
  op: Check["op"],
  bound: number,
  against: string,
  unit: Check["unit"] = "x",
  text?: string
): Check => ({
  issue,
  value,
  op,
  bound,
  against,
  unit,
  ...(text === undefined ? {} : { text }),
  met: value === undefined || !Number.isFinite(value)
    ? undefined
    : op === ">="
    ? value >= bound
    : op === ">"
    ? value > bound
    : op === "<="
    ? value <= bound
    : value < bound
})

/** `<= 1.15x floor`. */
export const checkText = (c: Check): string =>
  c.text ??
    `${c.op} ${c.unit === "x" ? c.bound.toFixed(2).replace(/0$/, "") : c.bound}${c.unit}${
      c.against === "" ? "" : ` ${c.against}`
    }`

/** The session ids of ours' second variants, whose rows repeat the first variant's floor and peer. */
const secondary = new Set(["ours-watchlist", "ours-nostrip"])
/** `id`, or undefined when it is a second variant. */
const secondaryOf = (id: string | undefined) => id !== undefined && secondary.has(id) ? undefined : id

export const rows = (results: Results): Array<Row> => {
  const s = results.sessions
  const cli = results.cli ?? {}
  const scale = results.scale === true
  const out: Array<Row> = []
  /** Whether session `id` failed to measure a figure: the whole session (no result), or one of `figures`. */
  const failedIn = (id: string | undefined, figures: ReadonlyArray<Figure> = []): boolean =>
    id !== undefined && results.failures?.[id] !== undefined &&
    ((s[id] === undefined && cli[id] === undefined) ||
      figures.some((figure) =>
        s[id]?.failed?.[figure] !== undefined || (figure === "bursts" && cli[id]?.failed?.bursts !== undefined)
      ))
  const names: Record<PeerId, string> = { ...defaultPeerNames, ...results.peerNames }
  /**
   * The peers' figures on a row, from their sessions (`id` is client-node 2.0's): each one's by name, and the
   * fastest (`peer`): the lowest when lower is better (times, heap), the highest otherwise (rates).
   */
  const versus = (
    id: string,
    value: (id: string) => number | undefined,
    better: "lower" | "higher"
  ): Pick<Row, "peer" | "peers"> => {
    const peers: Record<string, number> = {}
    for (const p of peerIds) {
      const v = value(peerSession(p, id))
      if (v !== undefined) peers[names[p]] = v
    }
    const values = Object.values(peers)
    if (values.length === 0) return {}
    return { peer: better === "lower" ? Math.min(...values) : Math.max(...values), peers }
  }
  const push = (row: Row, source: Source = {}) => {
    const peer = source.peer
    const peersFailed = peer === undefined ?
      [] :
      peerIds.filter((p) => row.peers?.[names[p]] === undefined && failedIn(peerSession(p, peer), source.figures)).map((
        p
      ) => names[p])
    const failed = (["floor", "ours", "peer"] as const).filter((c) =>
      row[c] === undefined && (c === "peer" ? peersFailed.length > 0 : failedIn(source[c], source.figures))
    )
    // a check that could not be measured because a figure failed is missed
    const checks = row.checks?.map((c) => c.met === undefined && failed.length > 0 ? { ...c, met: false } : c)
    const met = checks === undefined || checks.length === 0
      ? undefined
      : checks.some((c) => c.met === false)
      ? false
      : checks.every((c) => c.met === true)
      ? true
      : undefined
    const complete: Row = {
      ...row,
      ...(checks === undefined || checks.length === 0
        ? {}
        : { checks, met, target: checks.map(checkText).join(", ") }),
      ...(failed.length === 0 ? {} : { failed, ...(failed.includes("ours") ? { met: false } : {}) }),
      ...(peersFailed.length === 0 ? {} : { peersFailed })
    }
    // a row of sessions that did not run (--only, --scale) is left out, and so is a second variant of ours
    // (watch-list, no stripping) that did not run: its floor and peer are in the first variant's row
    if (
      complete.ours === undefined && !failed.includes("ours") &&
      ((complete.floor === undefined && complete.peer === undefined && failed.length === 0) ||
        source.ours !== secondaryOf(source.ours))
    ) return
    out.push(complete)
  }

  // W1
  const w1 = (id: string) => s[id]?.syncMs
  const floorSync = w1("floor")
  const peersSync = versus("peer", w1, "lower")
  for (const [id, variant] of [["ours", "paged (500)"], ["ours-watchlist", "watch-list"]] as const) {
    const ours = w1(id)
    const overFloor = ratio(ours, floorSync)
    const overPeer = ratio(ours, peersSync.peer)
    push({
      workload: "W1",
      metric: `initial sync of ${results.pods} pods, ms (lower is better)`,
      variant,
      floor: floorSync,
      ours,
      ...peersSync,
      oursOverFloor: overFloor,
      oursOverPeer: overPeer,
      checks: id === "ours"
        ? [check(26, overFloor, "<=", 1.15, "floor"), ...(scale ? [] : [check(7, overPeer, "<", 1.0, "peer")])]
        : [check(26, ratio(ours, w1("ours")), "<=", 1.0, "ours paged")],
      ...(id === "ours" ? {} : { note: "floor pages by 500, the peers list unpaged" })
    }, { floor: "floor", ours: id, peer: "peer" })
  }

  // W2
  const rate = (id: string) => s[id]?.rate
  for (const [id, variant] of [["ours", "paged"], ["ours-watchlist", "watch-list"]] as const) {
    const peers = versus("peer", rate, "higher")
    const overFloor = ratio(rate(id), rate("floor"))
    const overPeer = ratio(rate(id), peers.peer)
    push({
      workload: "W2",
      metric: `watch throughput, ${results.events} MODIFIED, 1 handler, events/s`,
      variant,
      floor: rate("floor"),
      ours: rate(id),
      ...peers,
      oursOverFloor: overFloor,
      oursOverPeer: overPeer,
      checks: [check(26, overFloor, ">=", 0.9, "floor"), check(26, overPeer, ">=", 1.2, "peer")]
    }, { floor: "floor", ours: id, peer: "peer", figures: ["bursts"] })
  }

  // W3
  const perObject = (id: string) => s[id]?.heapPerObject
  for (
    const [id, variant, limit, issue] of [["ours", "managedFields stripped", 0.7, 26], [
      "ours-nostrip",
      "stripManagedFields: false",
      1.0,
      7
    ]] as const
  ) {
    const peers = versus("peer", perObject, "lower")
    const overPeer = ratio(perObject(id), peers.peer)
    push({
      workload: "W3",
      metric: "heap per cached object after GC, bytes",
      variant,
      floor: perObject("floor"),
      ours: perObject(id),
      ...peers,
      oursOverFloor: ratio(perObject(id), perObject("floor")),
      oursOverPeer: overPeer,
      checks: [check(issue, overPeer, "<=", limit, "peer")]
    }, { floor: "floor", ours: id, peer: "peer" })
  }

  // W4
  for (const n of [1, 10, 100]) {
    const id = (c: string) => n === 1 ? c : `${c}-fanout-${n}`
    const peers = versus(id("peer"), rate, "higher")
    const overFloor = ratio(rate(id("ours")), rate(id("floor")))
    const overPeer = ratio(rate(id("ours")), peers.peer)
    const events = s[id("ours")]?.bursts[0]?.events ?? results.events
    push({
      workload: "W4",
      metric: `fan-out to ${n} handler${n === 1 ? "" : "s"}, ${events} MODIFIED, events/s to all`,
      variant: "paged",
      floor: rate(id("floor")),
      ours: rate(id("ours")),
      ...peers,
      oursOverFloor: overFloor,
      oursOverPeer: overPeer,
      checks: n === 10
        ? [check(26, overFloor, ">=", 0.85, "floor")]
        : n === 100
        ? [check(26, overFloor, ">=", 0.75, "floor")]
        : undefined
    }, { floor: id("floor"), ours: id("ours"), peer: id("peer"), figures: ["bursts"] })
  }

  // W5
  const stalled = s["ours-stalled"]
  const stalledBursts = stalled?.failed?.bursts !== undefined
  if ((stalled === undefined && failedIn("ours-stalled")) || stalledBursts) {
    push({ workload: "W5", metric: "running handler beside a stalled one, events/s", variant: "paged" }, {
      ours: "ours-stalled",
      figures: ["bursts"]
    })
  }
  if (stalled !== undefined && !stalledBursts) {
    const kept = ratio(stalled.rate, rate("ours"))
    push({
      workload: "W5",
      metric: "running handler beside a stalled one, events/s",
      variant: "paged",
      ours: stalled.rate,
      checks: [check(7, kept, ">=", 0.9, "ours W2")],
      note: `${kept === undefined ? "?" : kept.toFixed(2)}x ours W2; no peer can express a stalled handler`
    })
    if (stalled.heapGrowth !== undefined) {
      const growth = stalled.heapGrowth
      const events = stalled.bursts.reduce((n, b) => n + b.events, 0)
      push({
        workload: "W5",
        metric: "heap growth while stalled, MB (after GC)",
        variant: "paged",
        ours: mb(growth),
        note: `${(growth / Math.max(1, events)).toFixed(0)} bytes per event buffered for the stalled handler`
      })
    }
  }

  // W9
  const controller = s["ours-controller"]
  const controllerBursts = controller?.failed?.bursts !== undefined
  if ((controller === undefined && failedIn("ours-controller")) || controllerBursts) {
    push({ workload: "W9", metric: "informer -> queue -> reconcile, events/s", variant: "paged" }, {
      ours: "ours-controller",
      figures: ["bursts"]
    })
  }
  if (controller !== undefined && !controllerBursts) {
    const kept = ratio(controller.rate, rate("ours"))
    push({
      workload: "W9",
      metric: "informer -> queue -> reconcile (no-op, 4 workers), events/s",
      variant: "paged",
      ours: controller.rate,
      checks: [check(26, kept, ">=", 0.8, "ours W2")],
      note: `${kept === undefined ? "?" : kept.toFixed(2)}x ours W2; an event counts once a reconcile read its version`
    })
  }

  // W6
  const relist = (id: string) => s[id]?.relist?.ratio
  for (const [id, variant] of [["ours", "paged"], ["ours-watchlist", "watch-list"]] as const) {
    const ours = relist(id)
    const peers = versus("peer", relist, "lower")
    push({
      workload: "W6",
      metric: `relist of ${results.pods} unchanged pods, peak heap / steady heap`,
      variant,
      floor: relist("floor"),
      ours,
      ...peers,
      oursOverFloor: ratio(ours, relist("floor")),
      oursOverPeer: ratio(ours, peers.peer),
      checks: scale ? undefined : [check(7, ours, "<=", 1.3, "", "")]
    }, { floor: "floor", ours: id, peer: "peer", figures: ["bursts", "relist"] })
  }

  const live = (id: string) => s[id]?.liveRelist?.ratio
  const liveFigures = ["bursts", "relist", "liveRelist"] as const
  for (const [id, variant] of [["ours", "paged"], ["ours-watchlist", "watch-list"]] as const) {
    // never for the peers (see the note): neither their figures nor their failures
    const peers = versus("peer", live, "lower")
    // against the floor's live peak / steady heap when the floor measured it (or failed to: missed); the
    // absolute 1.1 when it did not run (`--only`, a `--scale` run saved before the floor relisted in it)
    const againstFloor = live("floor") !== undefined || failedIn("floor", liveFigures)
    push({
      workload: "W6",
      metric: "the same, live heap: full GC before each sample",
      variant,
      floor: live("floor"),
      ours: live(id),
      ...peers,
      oursOverFloor: ratio(live(id), live("floor")),
      oursOverPeer: ratio(live(id), peers.peer),
      checks: [
        againstFloor
          ? check(26, ratio(live(id), live("floor")), "<=", 1.1, "floor")
          : check(26, live(id), "<=", 1.1, "", "", "<= 1.1 steady")
      ],
      ...(id === "ours"
        ? {
          note: "what stays referenced at the peak (heapUsed above also counts garbage not yet collected); " +
            "not for the peers, whose one synchronous parse of the unpaged list no sample can see into"
        }
        : {})
    }, { floor: "floor", ours: id, figures: liveFigures })
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
    const peers = versus("peer", slowest, "lower")
    push({
      workload: "W6",
      metric: `forced relists in a row, slowest, ms`,
      variant,
      floor: slowest("floor"),
      ours,
      ...peers,
      oursOverFloor: ratio(ours, slowest("floor")),
      oursOverPeer: ratio(ours, peers.peer),
      checks: [
        check(26, ratio(ours, slowest("floor")), "<=", 1.3, "floor"),
        check(
          scale ? 16 : 12,
          ours === undefined ? undefined : ours / 1000,
          "<=",
          relistLimitMs / 1000,
          "",
          " s",
          `each <= ${relistLimitMs / 1000} s`
        )
      ],
      ...(all === undefined ? {} : {
        note: `${all.length} relists: ${all.map((ms) => `${(ms / 1000).toFixed(1)} s`).join(", ")} (the last with a ` +
          "full GC before each heap sample)"
      })
    }, { floor: "floor", ours: id, peer: "peer", figures: ["bursts", "relist", "liveRelist"] })
  }

  // the CLI: `watch pods --output events` into a pipe, in a fresh process each
  const cliSource = { floor: "cli-floor", ours: "cli-ours", peer: "cli-peer" }
  const cliSync = (c: Contender) => cli[cliSource[c]]?.syncMs
  const cliRate = (c: Contender) => cli[cliSource[c]]?.rate
  {
    const peers = versus(cliSource.peer, (id) => cli[id]?.syncMs, "lower")
    const overFloor = ratio(cliSync("ours"), cliSync("floor"))
    const overPeer = ratio(cliSync("ours"), peers.peer)
    push({
      workload: "CLI",
      metric: `watch --output events: spawn -> ${results.pods} lines (synced), ms`,
      variant: "to synced",
      floor: cliSync("floor"),
      ours: cliSync("ours"),
      ...peers,
      oursOverFloor: overFloor,
      oursOverPeer: overPeer,
      checks: [check(26, overFloor, "<=", 1.15, "floor")],
      note: "a fresh process each (the best of 3 spawns, or of a spawn per burst), stdout a pipe read by the bench; " +
        "floor: node:http + JSON.parse + Map, " +
        "lines written in batches; the peers: client-node makeInformer (2.0, 1.4), kubernetes-fluent-client " +
        "Watch, a write per callback"
    }, cliSource)
    const ratePeers = versus(cliSource.peer, (id) => cli[id]?.rate, "higher")
    const rateOverFloor = ratio(cliRate("ours"), cliRate("floor"))
    const rateOverPeer = ratio(cliRate("ours"), ratePeers.peer)
    const digests = [cliSource.floor, cliSource.ours, ...peerIds.map((p) => peerSession(p, cliSource.peer))]
      .map((id) => cli[id]?.digest).filter((d) => d !== undefined)
    const events = cli[cliSource.ours]?.bursts[0]?.events ?? results.events
    push({
      workload: "CLI",
      metric: `watch --output events: ${events} MODIFIED -> lines, events/s`,
      variant: "watch rate",
      floor: cliRate("floor"),
      ours: cliRate("ours"),
      ...ratePeers,
      oursOverFloor: rateOverFloor,
      oursOverPeer: rateOverPeer,
      checks: [check(26, rateOverFloor, ">=", 0.9, "floor")],
      ...(digests.length < 2 ? {} : {
        note: new Set(digests).size === 1
          ? `the ${digests.length} contenders printed the same text for the bursts (sha1 ${digests[0].slice(0, 12)})`
          : `the contenders printed DIFFERENT text for the bursts (sha1 ${
            digests.map((d) => d.slice(0, 12)).join(" / ")
          })`
      })
    }, { ...cliSource, figures: ["bursts"] })
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
        // ours fed by a `queue.add` per key, or (`addAll`) a `queue.addAll` per batch of 100 keys
        variant: `${row.shape}, ${row.producer === "addAll" ? "addAll, " : ""}${row.workers} worker${
          row.workers === 1 ? "" : "s"
        }`,
        floor: row.floor,
        ours: row.ours,
        oursOverFloor: over,
        checks: [check(26, over, ">=", 0.5, "floor")],
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

/** A peer's cell: `FAILED` when its measurement failed; `*` marks the fastest of two or more. */
const peerCell = (row: Row, name: string) => {
  if (row.peersFailed?.includes(name) === true) return "FAILED"
  const value = row.peers?.[name]
  if (value === undefined) return "-"
  const fastest = Object.keys(row.peers ?? {}).length + (row.peersFailed?.length ?? 0) > 1 && value === row.peer
  return `${figure(value)}${fastest ? "*" : ""}`
}

/**
 * The text table: a column per peer (by name, with its version) when the rows have `peers`, else the one
 * `peer` column of a run before them; ours/peer is against the fastest peer (`*`).
 */
export const table = (all: ReadonlyArray<Row>): string => {
  const names = [...new Set(all.flatMap((row) => [...Object.keys(row.peers ?? {}), ...(row.peersFailed ?? [])]))]
  const perPeer = names.length > 0
  const header = [
    "W",
    "metric",
    "variant of ours",
    "floor",
    "ours",
    ...(perPeer ? names : ["peer"]),
    "ours/floor",
    "ours/peer",
    "target",
    "met"
  ]
  const lines = all.map((row) => [
    row.workload,
    row.metric,
    row.variant,
    cell(row, "floor"),
    cell(row, "ours"),
    ...(perPeer ? names.map((name) => peerCell(row, name)) : [cell(row, "peer")]),
    times(row.oursOverFloor),
    times(row.oursOverPeer),
    row.target ?? "",
    row.met === undefined ? "" : row.met ? "yes" : "NO"
  ])
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i].length)))
  // floor, ours, the peers and the two ratios
  const numeric = new Set(Array.from({ length: header.length - 5 }, (_, i) => i + 3))
  const format = (cells: ReadonlyArray<string>) =>
    "| " + cells.map((c, i) => numeric.has(i) ? c.padStart(widths[i]) : c.padEnd(widths[i])).join(" | ") + " |"
  const separator = "|" + widths.map((w, i) => numeric.has(i) ? "-".repeat(w + 1) + ":" : "-".repeat(w + 2)).join("|")
    + "|"
  const notes = [
    "- W1: start -> every handler has seen every pod (the cache holds them all); W2/W4/W5: events/s until every " +
    "handler has seen the whole burst (the best burst); W4 with 100 handlers and the no-strip session run one " +
    "burst",
    "- ratios are ours / other of the same figure: lower is better for W1 (time), W3 and W6 (memory), higher otherwise",
    ...(perPeer && names.length > 1
      ? ["- peers: ours/peer and the targets against the peer use the fastest peer of the row (marked *)"]
      : []),
    ...all.filter((row) => row.note !== undefined).map((row) => `- ${row.workload} ${row.variant}: ${row.note}`)
  ]
  return [format(header), separator, ...lines.map(format), "", ...notes].join("\n")
}

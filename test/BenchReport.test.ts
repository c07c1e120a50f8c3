import { describe, expect, it } from "@effect/vitest"
import { chart } from "../bench/chart.js"
import type { BurstResult, CliResult, SessionResult } from "../bench/protocol.js"
import type { Row } from "../bench/report.js"
import { rows, table } from "../bench/report.js"

const burst = (rate: number): BurstResult => ({ events: 1000, ms: 1000_000 / rate, rate })

const session = (contender: SessionResult["contender"], over: Partial<SessionResult> = {}): SessionResult => ({
  kind: "session",
  label: contender,
  contender,
  pods: 1000,
  handlers: 1,
  syncMs: 1000,
  baselineHeap: 0,
  syncedHeap: 4_000_000,
  heapPerObject: 4000,
  bursts: [burst(10_000)],
  rate: 10_000,
  ...over
})

const cliResult = (contender: CliResult["contender"], syncMs: number, rate: number): CliResult => ({
  kind: "cli",
  contender,
  label: contender,
  command: "node x",
  pods: 1000,
  syncMs,
  bursts: [burst(rate)],
  rate,
  lines: 2000,
  digest: "abc"
})

const find = (all: ReadonlyArray<Row>, workload: string, variant: string, metric = "") =>
  all.find((r) => r.workload === workload && r.variant === variant && r.metric.includes(metric))

describe("bench report", () => {
  it("checks issue 16's targets: W2 against the floor and the peer", () => {
    const all = rows({
      sessions: {
        floor: session("floor", { rate: 10_000 }),
        ours: session("ours", { rate: 9_500 }),
        peer: session("peer", { rate: 9_000 })
      },
      micro: undefined,
      pods: 1000,
      events: 1000
    })
    const w2 = find(all, "W2", "paged")!
    expect(w2.target).toBe(">= 0.9x floor, >= 1.05x peer")
    // 0.95x the floor (met), 1.056x the peer (met)
    expect(w2.checks?.map((c) => c.met)).toEqual([true, true])
    expect(w2.met).toBe(true)
    // the watch-list session did not run: no row repeats the floor and the peer for it
    expect(find(all, "W2", "watch-list")).toBeUndefined()
  })

  it("a failed burst is FAILED in W2 and W6, keeps W1 and W3, and misses the targets", () => {
    const failures = { ours: "burst 1 of 1: timeout; W6 not measured: a burst failed before it" }
    const all = rows({
      sessions: {
        floor: session("floor"),
        ours: session("ours", {
          bursts: [],
          rate: undefined,
          relists: [],
          failed: { bursts: "burst 1 of 1: timeout", relist: "W6 not measured" }
        }),
        peer: session("peer")
      },
      micro: undefined,
      pods: 1000,
      events: 1000,
      failures
    })
    expect(find(all, "W1", "paged (500)")?.ours).toBe(1000)
    expect(find(all, "W3", "managedFields stripped")?.ours).toBe(4000)
    const w2 = find(all, "W2", "paged")!
    expect(w2.failed).toEqual(["ours"])
    expect(w2.met).toBe(false)
    expect(find(all, "W6", "paged", "slowest")?.failed).toEqual(["ours"])
    expect(table(all)).toContain("FAILED")
  })

  it("CLI rows: ratios, targets, and a CLI session that failed", () => {
    const cli = {
      "cli-floor": cliResult("floor", 400, 20_000),
      "cli-ours": cliResult("ours", 440, 18_000),
      "cli-peer": cliResult("peer", 900, 15_000)
    }
    const all = rows({ sessions: {}, cli, micro: undefined, pods: 1000, events: 1000 })
    const synced = find(all, "CLI", "to synced")!
    expect(synced.oursOverFloor).toBeCloseTo(1.1)
    expect(synced.met).toBe(true)
    const rate = find(all, "CLI", "watch rate")!
    expect(rate.oursOverFloor).toBeCloseTo(0.9)
    expect(rate.met).toBe(true)
    expect(rate.note).toContain("the same text")

    const failed = rows({
      sessions: {},
      cli: { "cli-floor": cli["cli-floor"], "cli-peer": cli["cli-peer"] },
      micro: undefined,
      pods: 1000,
      events: 1000,
      failures: { "cli-ours": "exited (1) after 0 lines" }
    })
    expect(find(failed, "CLI", "to synced")?.failed).toEqual(["ours"])
    expect(find(failed, "CLI", "to synced")?.met).toBe(false)
  })

  it("--scale targets: W1 <= 1.0x floor, W2 >= 0.85x floor, the live relist peak <= 1.1", () => {
    const relist = (ratio: number, ms: number) => ({
      steadyHeap: 100,
      peakHeap: 100 * ratio,
      peakHeapTotal: 0,
      samples: 1,
      ms,
      ratio
    })
    const all = rows({
      sessions: {
        floor: session("floor", { syncMs: 1000, rate: 10_000 }),
        ours: session("ours", {
          syncMs: 1100,
          rate: 8_600,
          relist: relist(1.5, 20_000),
          relists: [relist(1.5, 20_000), relist(1.6, 25_000)],
          liveRelist: relist(1.05, 31_000)
        }),
        peer: session("peer", { heapPerObject: 6000 })
      },
      micro: undefined,
      pods: 1000,
      events: 1000,
      scale: true
    })
    expect(find(all, "W1", "paged (500)")?.target).toBe("<= 1.0x floor")
    expect(find(all, "W1", "paged (500)")?.met).toBe(false)
    expect(find(all, "W2", "paged")?.met).toBe(true)
    expect(find(all, "W6", "paged", "live")?.met).toBe(true)
    // the live relist took 31 s: over the 30 s of each relist
    expect(find(all, "W6", "paged", "slowest")?.met).toBe(false)
  })

  it("three peers: peers by name, peer the fastest (the highest rate, the lowest time and heap)", () => {
    const peerNames = {
      peer: "client-node 2.0.1",
      peer14: "client-node 1.4.0",
      fluent: "kubernetes-fluent-client 3.11.11"
    }
    const all = rows({
      sessions: {
        floor: session("floor", { rate: 10_000 }),
        ours: session("ours", { rate: 9_500, syncMs: 900, heapPerObject: 4000 }),
        peer: session("peer", { rate: 9_000, syncMs: 1200, heapPerObject: 6000 }),
        peer14: session("peer14", { rate: 8_000, syncMs: 1000, heapPerObject: 6400 }),
        fluent: session("fluent", { rate: 4_000, syncMs: 1500, heapPerObject: 5000 }),
        "ours-fanout-10": session("ours", { rate: 9_000 }),
        "peer-fanout-10": session("peer", { rate: 7_000 }),
        "fluent-fanout-10": session("fluent", { rate: 7_500 }),
        "ours-stalled": session("ours", { rate: 9_000, heapGrowth: 0 })
      },
      micro: undefined,
      pods: 1000,
      events: 1000,
      peerNames
    })
    const w2 = find(all, "W2", "paged")!
    expect(w2.peers).toEqual({
      "client-node 2.0.1": 9_000,
      "client-node 1.4.0": 8_000,
      "kubernetes-fluent-client 3.11.11": 4_000
    })
    expect(w2.peer).toBe(9_000)
    expect(w2.oursOverPeer).toBeCloseTo(9_500 / 9_000)
    // lower is better: the fastest sync and the smallest heap
    const w1 = find(all, "W1", "paged (500)")!
    expect(w1.peer).toBe(1000)
    expect(w1.oursOverPeer).toBeCloseTo(0.9)
    expect(find(all, "W3", "managedFields stripped")?.peer).toBe(5000)
    // W4 with 10 handlers: the peers that ran it
    const w4 = find(all, "W4", "paged", "10 handlers")!
    expect(w4.peers).toEqual({ "client-node 2.0.1": 7_000, "kubernetes-fluent-client 3.11.11": 7_500 })
    expect(w4.peer).toBe(7_500)
    // no peer can express W5
    expect(find(all, "W5", "paged", "running")?.peers).toBeUndefined()
    const text = table(all)
    expect(text).toContain("| client-node 2.0.1 | client-node 1.4.0 | kubernetes-fluent-client 3.11.11 |")
    expect(text).toContain("9,000*")
    expect(text).toContain("fastest peer")
  })

  it("a peer that failed is FAILED in its cell; the row fails its peer only when no peer was measured", () => {
    const all = rows({
      sessions: {
        floor: session("floor"),
        ours: session("ours"),
        peer: session("peer", { rate: 9_000 })
      },
      micro: undefined,
      pods: 1000,
      events: 1000,
      failures: { fluent: "timeout after 60000 ms: initial sync", "peer14-fanout-10": "timeout" }
    })
    const w2 = find(all, "W2", "paged")!
    expect(w2.peersFailed).toEqual(["kubernetes-fluent-client"])
    expect(w2.failed).toBeUndefined()
    expect(w2.peer).toBe(9_000)
    // W4 with 10 handlers: only the failed peer ran
    const w4 = find(all, "W4", "paged", "10 handlers")!
    expect(w4.failed).toEqual(["peer"])
    expect(w4.peersFailed).toEqual(["client-node 1.4"])
    expect(table(all)).toMatch(/\| +FAILED \|/)
  })

  it("the chart has one bar per measured target, met and missed apart", () => {
    const svg = chart({
      config: { pods: 1000, events: 1000 },
      sessions: {
        floor: session("floor", { rate: 10_000 }),
        ours: session("ours", { rate: 9_500 }),
        peer: session("peer", { rate: 10_000 })
      },
      failures: {}
    })
    expect(svg.startsWith("<svg")).toBe(true)
    expect(svg).toContain("W2 paged: &gt;= 0.9x floor")
    // W2 against the peer: 0.95x, missed
    expect(svg).toMatch(/0\.95x missed/)
    expect(svg).toMatch(/0\.95x met/)
  })
})

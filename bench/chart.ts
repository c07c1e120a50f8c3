/**
 * An SVG chart of a run's targets, from the JSON of `npm run -s bench -- --json` (full, --quick or
 * --scale): one bar per target, the measured value (a ratio, or seconds, or a heap ratio) against its
 * target line, labelled, green when met, red when missed, grey when not measured or failed.
 *
 *   npx tsx bench/chart.ts run.json > docs/bench-chart.svg
 *
 * Plain SVG text, no dependency. The rows are recomputed from the saved sessions with bench/report.ts (as
 * `--from` does), so a JSON saved before a target changed is drawn against the current targets.
 */
import * as Fs from "node:fs"
import * as Path from "node:path"
import { pathToFileURL } from "node:url"
import type { PeerId } from "./peers.js"
import type { CliResult, MicroResult, SessionResult, WorkQueueResult } from "./protocol.js"
import type { Check, Row } from "./report.js"
import { checkText, rows } from "./report.js"

interface Saved {
  readonly machine?: {
    readonly node?: string
    readonly cpu?: string
    readonly cores?: number
    readonly loadAverageAtStart?: ReadonlyArray<number>
    readonly seconds?: number
  }
  readonly config: {
    readonly quick?: boolean
    readonly scale?: boolean
    readonly pods: number
    readonly events: number
    readonly bursts?: number
  }
  readonly sessions?: Record<string, SessionResult | undefined>
  readonly cli?: Record<string, CliResult | undefined>
  readonly micro?: MicroResult | undefined
  readonly workqueue?: WorkQueueResult | undefined
  readonly failures?: Record<string, string>
  readonly peerNames?: Partial<Record<PeerId, string>> | undefined
}

const escape = (text: string) =>
  text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;")

const number = (value: number, unit: Check["unit"]) =>
  unit === " s" ? `${value.toFixed(1)} s` : unit === "x" ? `${value.toFixed(2)}x` : value.toFixed(2)

interface Bar {
  readonly label: string
  readonly check: Check
  readonly failed: boolean
}

export const chart = (saved: Saved): string => {
  const all: ReadonlyArray<Row> = rows({
    sessions: saved.sessions ?? {},
    cli: saved.cli,
    micro: saved.micro,
    workqueue: saved.workqueue,
    pods: saved.config.pods,
    events: saved.config.events,
    scale: saved.config.scale,
    failures: saved.failures,
    peerNames: saved.peerNames
  })
  // a target whose figures were not measured because their sessions did not run (--only) is left out
  const bars: Array<Bar> = all.flatMap((row) =>
    (row.checks ?? []).map((check) => ({
      label: `${row.workload} ${row.variant}`,
      check,
      failed: check.value === undefined && (row.failed?.length ?? 0) > 0
    })).filter((bar) => bar.check.value !== undefined || bar.failed)
  )
  const width = 960
  const labelWidth = 330
  const trackWidth = 420
  const trackX = labelWidth + 10
  const textX = trackX + trackWidth + 12
  const rowHeight = 28
  const top = 70
  const height = top + Math.max(1, bars.length) * rowHeight + 40
  const met = bars.filter((b) => b.check.met === true).length
  const missed = bars.filter((b) => b.check.met === false).length
  const mode = saved.config.quick === true ? "quick" : saved.config.scale === true ? "scale" : "full"
  const machine = saved.machine
  const out: Array<string> = []
  out.push(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" ` +
      `font-family="sans-serif" font-size="12">`,
    `<rect width="${width}" height="${height}" fill="#ffffff"/>`,
    `<text x="10" y="22" font-size="16" font-weight="bold">${
      escape(
        `effect-informers benchmark (${mode}): ${saved.config.pods} pods, ${saved.config.events} events per burst`
      )
    }</text>`,
    `<text x="10" y="42" fill="#555">${
      escape(
        `${met} of ${bars.length} targets met, ${missed} missed or failed` +
          (machine === undefined
            ? ""
            : `; node ${machine.node ?? "?"}, ${machine.cpu ?? "?"}, ${machine.cores ?? "?"} cores, load ${
              (machine.loadAverageAtStart ?? []).join(" ")
            }, ${machine.seconds ?? "?"} s`)
      )
    }</text>`,
    `<text x="${trackX}" y="60" fill="#555">${
      escape("bar: the measured value; black line: the target (each bar on its own scale, 0 at the left)")
    }</text>`
  )
  bars.forEach((bar, i) => {
    const y = top + i * rowHeight
    const { check } = bar
    const value = check.value !== undefined && Number.isFinite(check.value) ? check.value : undefined
    const max = Math.max(check.bound, value ?? 0) * 1.25 || 1
    const x = (v: number) => trackX + (Math.max(0, v) / max) * trackWidth
    const color = check.met === true ? "#2e7d32" : check.met === false ? "#c62828" : "#9e9e9e"
    const verdict = bar.failed ? "FAILED" : check.met === true ? "met" : check.met === false ? "missed" : "not measured"
    out.push(
      `<text x="10" y="${y + 17}">${escape(`${bar.label}: ${checkText(check)}`)}</text>`,
      `<rect x="${trackX}" y="${y + 5}" width="${trackWidth}" height="16" fill="#f0f0f0"/>`
    )
    if (value !== undefined) {
      out.push(
        `<rect x="${trackX}" y="${y + 5}" width="${(x(value) - trackX).toFixed(1)}" height="16" fill="${color}"/>`
      )
    }
    out.push(
      `<line x1="${x(check.bound).toFixed(1)}" y1="${y + 1}" x2="${x(check.bound).toFixed(1)}" y2="${
        y + 25
      }" stroke="#000" stroke-width="2"/>`,
      `<text x="${textX}" y="${y + 17}" fill="${color}" font-weight="bold">${
        escape(`${value === undefined ? "-" : number(value, check.unit)} ${verdict}`)
      }</text>`
    )
  })
  if (bars.length === 0) out.push(`<text x="10" y="${top + 17}">no targets in this run</text>`)
  const failures = Object.keys(saved.failures ?? {})
  out.push(
    `<text x="10" y="${height - 14}" fill="#555">${
      escape(failures.length === 0 ? "no failures" : `FAILED: ${failures.join(", ")}`)
    }</text>`,
    "</svg>"
  )
  return out.join("\n") + "\n"
}

const file = process.argv[2]
const isMain = process.argv[1] !== undefined && import.meta.url === pathToFileURL(Path.resolve(process.argv[1])).href
if (!isMain) {
  // imported (by a test)
} else if (file === undefined) {
  process.stderr.write("usage: npx tsx bench/chart.ts RUN.json > chart.svg\n")
  process.exitCode = 2
} else {
  try {
    process.stdout.write(chart(JSON.parse(Fs.readFileSync(file, "utf8")) as Saved))
  } catch (error) {
    process.stderr.write(`bench/chart.ts: ${file}: ${error instanceof Error ? error.message : String(error)}\n`)
    process.exitCode = 1
  }
}

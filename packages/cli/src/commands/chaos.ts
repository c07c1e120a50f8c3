/**
 * The `chaos` command: the fault campaign (`Chaos.run`) over seeds, one line per seed; the test kit is
 * loaded when the command runs.
 *
 * @since 0.2.0
 */
import type * as Chaos from "@effect-informers/testkit/Chaos"
import * as Command from "effect/cli/Command"
import * as Flag from "effect/cli/Flag"
import * as Console from "effect/Console"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as References from "effect/References"
import { boolean, CliFailure, described, duration, formatNumber, integer, loadTestkit } from "./shared.js"

const pad = (text: string | number, width: number): string => String(text).padEnd(width)

const faultSummary = (result: Chaos.Result): string =>
  [
    ...Object.entries(result.faultsByClass).map(([tag, n]) => `${tag} ${n}`),
    ...(result.compactions > 0 ? [`compaction ${result.compactions}`] : [])
  ].join(", ")

/**
 * The `chaos` command.
 *
 * @since 0.2.0
 * @category commands
 */
export const chaos = Command.make("chaos", {
  seeds: integer("seeds").pipe(Flag.withDefault(20), described("how many seeds (runs) to play", "20")),
  firstSeed: integer("first-seed").pipe(
    Flag.withDefault(1),
    described("the first seed; the others follow it", "1")
  ),
  duration: duration("duration").pipe(
    Flag.withDefault(Duration.seconds(30)),
    described("how long each seed's churn and faults run", "30s")
  ),
  pods: integer("pods").pipe(Flag.withDefault(1000), described("pods to seed", "1000")),
  namespaces: integer("namespaces").pipe(
    Flag.withDefault(10),
    described("namespaces the pods are spread over", "10")
  ),
  churn: integer("churn").pipe(
    Flag.withDefault(200),
    described("creates, updates and deletes of pods per second", "200")
  ),
  json: boolean("json").pipe(described("one JSON line per seed instead of the table", "off"))
}, (options) =>
  Effect.gen(function*() {
    if (!options.json) {
      yield* Console.log(
        `fault campaign: ${options.seeds} seeds x ${Duration.format(options.duration)}, ${options.pods} pods, ` +
          `${options.churn} changes/s, every fault class (node ${process.version}` +
          `${typeof (globalThis as { gc?: unknown }).gc === "function" ? ", --expose-gc" : ""})`
      )
      yield* Console.log(
        `${pad("seed", 5)} ${pad("result", 7)} ${pad("events", 8)} ${pad("relists", 8)} ${pad("errors", 7)} ` +
          `${pad("settle", 7)} ${pad("heap MiB (synced/peak/end)", 27)} faults by class`
      )
    }
    const { Chaos } = yield* loadTestkit
    let failed = 0
    for (let seed = options.firstSeed; seed < options.firstSeed + options.seeds; seed++) {
      const result = yield* Chaos.run({
        seed,
        duration: options.duration,
        pods: options.pods,
        namespaces: options.namespaces,
        churn: options.churn
      }).pipe(Effect.mapError((e) => new CliFailure(e.message)))
      if (!result.passed) failed++
      if (options.json) {
        yield* Console.log(JSON.stringify(result))
        continue
      }
      yield* Console.log(
        `${pad(seed, 5)} ${pad(result.passed ? "pass" : "FAIL", 7)} ${pad(formatNumber(result.events), 8)} ` +
          `${pad(result.relists, 8)} ${pad(result.errorsReported, 7)} ${
            pad(`${result.settleSeconds.toFixed(1)}s`, 7)
          } ` +
          `${pad(`${result.heapMiB.synced}/${result.heapMiB.peak}/${result.heapMiB.end}`, 27)} ${faultSummary(result)}`
      )
      for (const problem of result.problems) yield* Console.log(`      ${problem}`)
    }
    if (!options.json) yield* Console.log(`${options.seeds - failed}/${options.seeds} seeds passed`)
    if (failed > 0) process.exitCode = 1
  }).pipe(Effect.provideService(References.MinimumLogLevel, "None"))).pipe(
    Command.withDescription(
      "the fault campaign: informers over HTTP against the embedded server under churn and faults"
    )
  )

/**
 * The output path of `watch --output events` alone: 200,000 event lines written with one `Console.log`
 * each (the CLI before its batching) or through `WatchOutput.LineWriter`, to stdout. Prints wall and CPU
 * time on stderr.
 *
 *   node --import tsx scripts/watch-output-micro.ts console|writer | wc -l
 */
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as WatchOutput from "../packages/cli/src/WatchOutput.js"

const n = 200_000
const lines = Array.from(
  { length: n },
  (_, i) => `MODIFIED ns-${i % 10}/app-${i % 7}-6pbdj2lpkg-${i} rv=${100000 + i}`
)
const mode = process.argv[2] === "console" ? "console" : "writer"
const cpu0 = process.cpuUsage()
const t0 = performance.now()
const program = mode === "console"
  ? Effect.forEach(lines, (line) => Console.log(line), { discard: true })
  : Effect.scoped(
    Effect.flatMap(
      WatchOutput.make({ destination: process.stdout }),
      (out) => Effect.forEach(lines, out.line, { discard: true })
    )
  )
void Effect.runPromise(program).then(() => {
  const cpu = process.cpuUsage(cpu0)
  process.stderr.write(
    `${mode}: ${n} lines, wall ${(performance.now() - t0).toFixed(0)} ms, cpu ${
      ((cpu.user + cpu.system) / 1000).toFixed(0)
    } ms\n`
  )
})

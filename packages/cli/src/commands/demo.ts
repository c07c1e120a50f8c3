/**
 * The `demo` command: the embedded API server with a simulated cluster under churn and faults, watched by
 * informers over HTTP (`npm start`); the demo itself (`Demo`) is loaded when the command runs.
 *
 * @since 0.2.0
 */
import * as Command from "effect/cli/Command"
import * as Flag from "effect/cli/Flag"
import * as Console from "effect/Console"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as References from "effect/References"
import type * as Demo from "../Demo.js"
import { boolean, described, duration, faultLevel, formatNumber, integer } from "./shared.js"

const isTTY = process.stdout.isTTY === true

const loadDemo = Effect.promise(() => import("../Demo.js"))

const millisText = (d: Duration.Duration | undefined): string =>
  d === undefined ? "-" : `${formatNumber(Duration.toMillis(d))} ms`

const informerText = (informer: Demo.InformerProgress): string => {
  const state = informer.state === "backing off" && informer.backoffLeft !== undefined
    ? `backing off ${Duration.toSeconds(informer.backoffLeft).toFixed(1)}s`
    : informer.state
  return `${informer.name.split(" ")[0]} ${formatNumber(informer.cached)} ${state}`
}

/**
 * The demo's live line: each informer's cache size and state (watching, syncing, relisting, backing off
 * with the wait left), the event rate over the last 5 seconds, the total, relists, the handler lag (the
 * mean over the last 5 seconds, in ms), the handlers' backlog and the faults.
 *
 * @since 0.2.0
 * @category formatting
 */
export const renderProgress = (progress: Demo.Progress): string => {
  const informers = progress.informers.map(informerText).join(" · ")
  return `[${progress.phase} ${Duration.toSeconds(progress.elapsed).toFixed(1)}s] ${informers || "starting"} · ` +
    `${formatNumber(progress.eventsPerSecond)} events/s · ${formatNumber(progress.events)} events · ` +
    `relists ${progress.relists} · lag ${millisText(progress.lag)} · backlog ${formatNumber(progress.backlog)} · ` +
    `faults ${progress.faults}`
}

/** A progress report as JSON (durations in milliseconds): the demo's `--json-progress` lines. */
const progressJson = (progress: Demo.Progress) => ({
  type: "progress",
  phase: progress.phase,
  elapsedMs: Duration.toMillis(progress.elapsed),
  informers: progress.informers.map((i) => ({
    name: i.name,
    cached: i.cached,
    state: i.state,
    ...(i.backoffLeft === undefined ? {} : { backoffLeftMs: Duration.toMillis(i.backoffLeft) }),
    ...(i.error === undefined ? {} : { error: i.error })
  })),
  events: progress.events,
  eventsPerSecond: progress.eventsPerSecond,
  relists: progress.relists,
  lagMs: progress.lag === undefined ? null : Math.round(Duration.toMillis(progress.lag)),
  maxLagMs: progress.maxLag === undefined ? null : Math.round(Duration.toMillis(progress.maxLag)),
  backlog: progress.backlog,
  faults: progress.faults
})

const renderSummary = (summary: Demo.Summary): string => {
  const informers = summary.informers.map((r) =>
    `    ${r.consistent ? "ok " : "BAD"} ${r.informer}: ${r.cached} cached, ${r.server} on the server` +
    (r.differences.length === 0 ? "" : `\n        ${r.differences.join("\n        ")}`)
  )
  const faults = Object.entries(summary.faultsByClass).map(([tag, n]) => `${tag} ${n}`).join(", ")
  return [
    "",
    `Summary${summary.interrupted ? ` (interrupted after ${summary.churnSeconds.toFixed(1)}s)` : ""}: ${
      summary.consistent ? "every cache equals the server's state" : "CACHES DIFFER FROM THE SERVER"
    }`,
    ...informers,
    `  objects ${formatNumber(summary.objects)} · events ${formatNumber(summary.events)} · relists ${summary.relists}` +
    ` · faults ${summary.faults}${faults === "" ? "" : ` (${faults})`}`,
    `  churn: ${formatNumber(summary.churn.created)} created, ${formatNumber(summary.churn.updated)} updated, ` +
    `${formatNumber(summary.churn.deleted)} deleted · settled ${summary.settleSeconds.toFixed(1)}s after churn stopped`
  ].join("\n")
}

/** The exit code of a command ended by Ctrl-C (128 + SIGINT), as shells report it. */
const interruptedExitCode = 130

/**
 * The `demo` command.
 *
 * @since 0.2.0
 * @category commands
 */
export const demo = Command.make("demo", {
  pods: integer("pods").pipe(Flag.withDefault(2000), described("pods to seed", "2000")),
  namespaces: integer("namespaces").pipe(
    Flag.withDefault(20),
    described("namespaces the pods are spread over", "20")
  ),
  deployments: integer("deployments").pipe(Flag.withDefault(200), described("deployments to seed", "200")),
  churn: integer("churn").pipe(
    Flag.withDefault(200),
    described("creates, updates and deletes of pods per second", "200")
  ),
  duration: duration("duration").pipe(
    Flag.withDefault(Duration.seconds(20)),
    described("how long churn and faults run, e.g. 500ms, 20s, 2m", "20s")
  ),
  faults: faultLevel.pipe(
    Flag.withDefault("mild" as const),
    described("faults the server injects meanwhile: none, mild or chaos", "mild")
  ),
  json: boolean("json").pipe(
    described("print the summary as one JSON line instead of the live line and the text summary", "off")
  ),
  jsonProgress: boolean("json-progress").pipe(
    described(
      "like --json, and before the summary one JSON line of progress ({\"type\":\"progress\",...}) a second",
      "off"
    )
  )
}, (options) =>
  Effect.gen(function*() {
    const json = options.json || options.jsonProgress
    let lastLine = 0
    let lastWidth = 0
    const onProgress = (progress: Demo.Progress) =>
      Effect.sync(() => {
        const now = Date.now()
        if (options.jsonProgress) {
          if (now - lastLine < 1000) return
          lastLine = now
          process.stdout.write(`${JSON.stringify(progressJson(progress))}\n`)
          return
        }
        if (json) return
        const line = renderProgress(progress)
        if (isTTY) {
          // rewritten in place: a carriage return, and spaces over what the longer previous line left
          process.stdout.write(`\r${line}${" ".repeat(Math.max(0, lastWidth - line.length))}`)
          lastWidth = line.length
        } else if (now - lastLine >= 2000) {
          lastLine = now
          process.stdout.write(`${line}\n`)
        }
      })
    if (!json) {
      yield* Console.log(
        `effect-informers demo: ${options.pods} pods in ${options.namespaces} namespaces, ${options.deployments} ` +
          `deployments, ${options.churn} changes/s for ${
            Duration.format(options.duration)
          }, faults: ${options.faults}` +
          " (Ctrl-C ends it early)"
      )
    }
    // Ctrl-C: the churn stops, the informers settle, the summary is printed, and the exit code is 130.
    const stop = yield* Deferred.make<void>()
    // in the command's scope, not a child fiber: the interruption of Ctrl-C must not reach it
    const Demo = yield* loadDemo
    const running = yield* Demo.run({ ...options, onProgress, stop: Deferred.await(stop) }).pipe(
      Effect.scoped,
      Effect.forkScoped
    )
    const summary = yield* Fiber.join(running).pipe(
      Effect.onInterrupt(() =>
        Effect.gen(function*() {
          yield* Deferred.succeed(stop, undefined)
          const exit = yield* Fiber.await(running)
          if (Exit.isSuccess(exit)) yield* printSummary(exit.value, json)
          process.exitCode = interruptedExitCode
        })
      )
    )
    yield* printSummary(summary, json)
    if (!summary.consistent) process.exitCode = 1
  }).pipe(Effect.scoped, Effect.provideService(References.MinimumLogLevel, "None"))).pipe(
    Command.withDescription(
      "an embedded API server with a simulated cluster under churn and faults, watched by informers over HTTP " +
        "(npm start); Ctrl-C ends the churn early, prints the summary and exits 130"
    )
  )

const printSummary = (summary: Demo.Summary, json: boolean): Effect.Effect<void> =>
  json ? Console.log(JSON.stringify(summary)) : Console.log(renderSummary(summary))

/**
 * A client child: runs the jobs it receives over IPC one at a time in this process (its own core; a fresh
 * process per job for clean heaps, unless the parent reuses it) and sends each result back. Exits when
 * the parent disconnects or goes away.
 */
import { makeFloor } from "./floor.js"
import { makeFluent } from "./fluent.js"
import { runMicro } from "./micro.js"
import { makeOurs } from "./ours.js"
import { makePeer } from "./peer.js"
import type { ClientNode } from "./peer.js"
import type { ChildMessage, Job, Result } from "./protocol.js"
import { Counters, runSession } from "./session.js"
import { runWorkQueue } from "./workqueue.js"

const send = (message: ChildMessage): Promise<void> =>
  new Promise((resolve) => {
    if (process.send === undefined) {
      console.log(JSON.stringify(message))
      resolve()
    } else process.send(message, () => resolve())
  })

const run = async (job: Job): Promise<Result> => {
  if (job.kind === "micro") return runMicro(job)
  if (job.kind === "workqueue") return runWorkQueue(job)
  const counters = new Counters(job.handlers)
  switch (job.contender) {
    case "floor":
      return runSession(job, counters, async () => makeFloor(job, counters))
    case "peer":
      return runSession(job, counters, async () => makePeer(await import("@kubernetes/client-node"), job, counters))
    case "peer14":
      // loaded in this session's process only (as the fluent client below)
      return runSession(
        job,
        counters,
        async () => makePeer(await import("@kubernetes/client-node-1.4") as unknown as ClientNode, job, counters)
      )
    case "fluent":
      return runSession(job, counters, () => makeFluent(job, counters))
    case "ours":
      return runSession(job, counters, () => makeOurs(job, counters))
  }
}

// the parent decides when this process ends: it disconnects (or goes away)
process.on("disconnect", () => process.exit(0))
process.on("unhandledRejection", (error) => {
  void send({ type: "log", message: `unhandled rejection: ${String(error)}` })
})

/** Jobs run one at a time, in the order they arrive. */
let queue: Promise<void> = Promise.resolve()
process.on("message", (job: Job) => {
  queue = queue.then(() =>
    run(job).then(
      (result) => send({ type: "result", result }),
      (error: unknown) =>
        send({ type: "error", message: error instanceof Error ? error.stack ?? error.message : String(error) })
    )
  )
})

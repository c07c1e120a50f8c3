/**
 * The Reflector's one record of "the cycle synced" (`internal/informer/reflector.ts` `Synced`) as tables:
 * how a cycle's start and its replace of the store change it, and the `status` each loop state reports with
 * it. The loop's own tests (test/informer/reflector/status.test.ts) check the same through a running
 * Reflector.
 */
import { assert, describe, it } from "@effect/vitest"
import type { State, Synced, SyncEvent } from "../../src/internal/informer/reflector.js"
import { nextSynced, statusOf } from "../../src/internal/informer/reflector.js"
import * as Reflector from "../../src/Reflector.js"

/** (synced, event) -> synced. */
const transitions: ReadonlyArray<readonly [Synced, SyncEvent, Synced]> = [
  ["Never", "cycleStarted", "Never"],
  ["Never", "replaced", "ThisCycle"],
  ["Earlier", "cycleStarted", "Earlier"],
  ["Earlier", "replaced", "ThisCycle"],
  ["ThisCycle", "cycleStarted", "Earlier"],
  ["ThisCycle", "replaced", "ThisCycle"]
]

const error = new Reflector.ProtocolError({ reason: "VeryShortWatch", message: "very short watch" })
const states: Record<State["_tag"], State> = {
  Relisting: { _tag: "Relisting", afterGone: false },
  Listing: { _tag: "Listing", resourceVersion: "5", afterGone: false },
  WatchListing: { _tag: "WatchListing", resourceVersion: "5", afterGone: false },
  Watching: { _tag: "Watching", resourceVersion: "5" },
  BackingOff: { _tag: "BackingOff", error, then: { _tag: "Relisting", afterGone: false } },
  Stopped: { _tag: "Stopped", reason: "ResourceGone", error }
}

/** (state, synced) -> status tag. */
const statuses: ReadonlyArray<readonly [State["_tag"], Synced, Reflector.Status["_tag"]]> = [
  ["Relisting", "Never", "Syncing"],
  ["Relisting", "Earlier", "Relisting"],
  ["Listing", "Never", "Syncing"],
  ["Listing", "Earlier", "Relisting"],
  ["WatchListing", "Never", "Syncing"],
  ["WatchListing", "Earlier", "Relisting"],
  ["WatchListing", "ThisCycle", "Watching"],
  ["Watching", "Never", "Watching"],
  ["Watching", "ThisCycle", "Watching"],
  ["BackingOff", "Never", "BackingOff"],
  ["BackingOff", "Earlier", "BackingOff"],
  ["Stopped", "Never", "Stopped"],
  ["Stopped", "ThisCycle", "Stopped"]
]

describe("Reflector: the cycle's sync", () => {
  it("transitions as a table: (synced, event) -> synced", () => {
    for (const [synced, event, next] of transitions) {
      assert.strictEqual(nextSynced(synced, event), next, `${synced} on ${event}`)
    }
  })

  it("status as a table: (state, synced) -> status", () => {
    for (const [tag, synced, status] of statuses) {
      assert.strictEqual(statusOf(states[tag], synced, 0)._tag, status, `${tag} with ${synced}`)
    }
  })

  it("a backoff reports when it ends and the tag of its error", () => {
    assert.deepStrictEqual(statusOf(states.BackingOff, "Earlier", 1234), {
      _tag: "BackingOff",
      until: 1234,
      error: "ProtocolError"
    })
  })
})

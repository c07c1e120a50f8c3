/**
 * A handler buffer that coalesces by key, so that a stalled handler costs memory bounded by the number
 * of keys, not by the number of events.
 *
 * Per key at most two notifications wait: a delete, then the latest add or update.
 * - Latest state wins: an add or update that finds the key's add/update waiting replaces it, keeping the
 *   older `oldObject` (the state the handler last saw) and the `add` kind (the handler never saw it).
 * - Deletes are always delivered as deletes: a delete replaces the waiting add/update of its key
 *   (delivered as the delete of the newest state); an add after a waiting delete waits behind it, so a
 *   delete-and-recreate reaches the handler as both.
 * - Keys leave in the order their first notification arrived; per key, order is kept.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Latch from "effect/Latch"
import * as Result from "effect/Result"
import { deletionHandlingMetaNamespaceKey } from "../../Indexer.js"
import { DeletedFinalStateUnknown } from "../../KubeObject.js"
import type { Notification as N } from "../../SharedInformer.js"
import { Deque } from "../deque.js"
import type { ListenerBuffer } from "./listenerBuffer.js"
import { BufferClosedError } from "./listenerBuffer.js"

interface Slot<A> {
  deleted: Extract<N<A>, { readonly _tag: "Delete" }> | undefined
  latest: N<A> | undefined
}

const isTombstone = (u: unknown): boolean => u instanceof DeletedFinalStateUnknown

const initial = <A>(notification: N<A>): number => notification._tag === "Add" && notification.isInInitialList ? 1 : 0

const keyOf = <A>(notification: N<A>): string => {
  const obj = notification._tag === "Update" ? notification.newObject : notification.object
  return Result.getOrElse(deletionHandlingMetaNamespaceKey(obj), () => "")
}

/**
 * `onDropInitialAdd` is called for every initial-list add the handler will never run (replaced by a
 * delete, or merged into another notification), so that the handler's sync tracking stays exact.
 *
 * @internal
 */
export const coalescing = <A, T extends N<A> = N<A>>(onDropInitialAdd: () => void): Effect.Effect<ListenerBuffer<T>> =>
  Effect.sync(() => {
    const slots = new Map<string, Slot<A>>()
    const order = new Deque<string>()
    const latch = Latch.makeUnsafe(false)
    let pending = 0
    let closed = false

    const merge = (waiting: N<A>, next: N<A>): N<A> => {
      if (next._tag === "Add") {
        return waiting._tag === "Update"
          ? { _tag: "Update", oldObject: waiting.oldObject, newObject: next.object }
          : waiting._tag === "Add"
          ? { _tag: "Add", object: next.object, isInInitialList: waiting.isInInitialList || next.isInInitialList }
          : next
      }
      if (next._tag === "Update") {
        return waiting._tag === "Add"
          ? { _tag: "Add", object: next.newObject, isInInitialList: waiting.isInInitialList }
          : waiting._tag === "Update"
          ? { _tag: "Update", oldObject: waiting.oldObject, newObject: next.newObject }
          : next
      }
      return next
    }

    const offer = (notification: N<A>): number => {
      if (closed) return 0
      const key = keyOf(notification)
      let slot = slots.get(key)
      if (slot === undefined) {
        slot = { deleted: undefined, latest: undefined }
        slots.set(key, slot)
        order.push(key)
      }
      let coalesced = 0
      if (notification._tag === "Delete") {
        if (slot.latest !== undefined) {
          if (slot.latest._tag === "Add" && slot.latest.isInInitialList) onDropInitialAdd()
          slot.latest = undefined
          pending--
          coalesced++
        }
        if (slot.deleted === undefined) {
          slot.deleted = notification
          pending++
        } else {
          // Two deletes: one is enough; a tombstone never replaces a delete that carries the final state.
          if (!isTombstone(notification.object) || isTombstone(slot.deleted.object)) slot.deleted = notification
          coalesced++
        }
      } else if (slot.latest === undefined) {
        slot.latest = notification
        pending++
      } else {
        const merged = merge(slot.latest, notification)
        // Initial adds merged away will never run: report them so the handler's sync count stays exact.
        for (let dropped = initial(slot.latest) + initial(notification) - initial(merged); dropped > 0; dropped--) {
          onDropInitialAdd()
        }
        slot.latest = merged
        coalesced++
      }
      latch.openUnsafe()
      return coalesced
    }

    const takeNow = (max: number): Array<N<A>> => {
      const out: Array<N<A>> = []
      while (out.length < max && order.length > 0) {
        const key = order.shift()!
        const slot = slots.get(key)!
        slots.delete(key)
        if (slot.deleted !== undefined) out.push(slot.deleted)
        if (slot.latest !== undefined) out.push(slot.latest)
      }
      pending -= out.length
      return out
    }

    // Closing as the unbounded buffer and the FIFO close (`ListenerBuffer`): the shutdown opens the latch,
    // and the woken or any later take finds the buffer closed and fails. A latch opened from synchronous
    // code resumes its waiter at once (Effect 4): the woken taker yields first, so that it never runs inside
    // the informer's distribution step, and takes what arrived in between when it runs again.
    const take = (max: number): Effect.Effect<ReadonlyArray<N<A>>, BufferClosedError> =>
      Effect.suspend(() => {
        if (order.length > 0) return Effect.succeed(takeNow(max))
        if (closed) return Effect.fail(new BufferClosedError())
        latch.closeUnsafe()
        return Effect.andThen(latch.await, Effect.andThen(Effect.yieldNow, take(max)))
      })

    return {
      offer: offer as (notification: T) => number,
      offerAll: ((notifications: ReadonlyArray<N<A>>): number => {
        let coalesced = 0
        for (let i = 0; i < notifications.length; i++) coalesced += offer(notifications[i])
        return coalesced
      }) as (notifications: ReadonlyArray<T>) => number,
      take: take as (max: number) => Effect.Effect<ReadonlyArray<T>, BufferClosedError>,
      size: () => pending,
      shutdown: Effect.sync(() => {
        closed = true
        slots.clear()
        order.clear()
        pending = 0
        latch.openUnsafe()
      })
    }
  })

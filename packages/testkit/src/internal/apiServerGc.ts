/**
 * The embedded API server's controllers that kube-controller-manager runs beside kube-apiserver and that
 * the write semantics depend on:
 *
 * - the garbage collector: objects whose owners (`metadata.ownerReferences`, matched by uid) are gone are
 *   deleted (their own finalizers respected, their dependents in turn); an owner deleted in `Foreground`
 *   keeps its `foregroundDeletion` finalizer until its blocking dependents (`blockOwnerDeletion`) are
 *   gone; an owner deleted with `Orphan` has its references removed from its dependents, then its `orphan`
 *   finalizer;
 * - the namespace controller: a `Terminating` namespace's content is deleted, then its `kubernetes`
 *   finalizer removed and the namespace deleted.
 *
 * Like kube-controller-manager's, it acts after the fact, from the changes the store publishes: each
 * change queues the objects it concerns, examined `delay` later by one fiber in the server's scope. The
 * ownership index (owner uid to dependents) is kept from the same changes.
 *
 * @internal
 */
import * as ApiStore from "effect-informers/ApiStore"
import type { Status } from "effect-informers/Wire"
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import type { Entry, EventType, PropagationPolicy, ResourceStore, Store, WriteContext } from "./apiServerStore.js"
import { finalizersOf, foregroundFinalizer, namespaceFinalizer, objectKey, orphanFinalizer } from "./apiServerStore.js"
import type { JsonObject } from "./json.js"
import { isObject } from "./json.js"

/** One write of a controller, for the audit log. @internal */
export interface ControllerWrite {
  readonly verb: "update" | "delete"
  readonly store: ResourceStore
  readonly namespace: string
  readonly name: string
  readonly subresource?: string | undefined
  readonly code: number
  /** The controller's service account. */
  readonly user: string
}

/** @internal */
export const garbageCollectorUser = "system:serviceaccount:kube-system:generic-garbage-collector"

/** @internal */
export const namespaceControllerUser = "system:serviceaccount:kube-system:namespace-controller"

interface Item {
  readonly store: ResourceStore
  readonly key: string
  readonly uid: string
  readonly due: number
}

interface OwnerRef {
  readonly apiVersion: string
  readonly kind: string
  readonly name: string
  readonly uid: string
  readonly blockOwnerDeletion: boolean
}

interface Dependent {
  readonly store: ResourceStore
  readonly key: string
}

const ownerRefsOf = (entry: Entry): ReadonlyArray<OwnerRef> => {
  const refs = entry.metadata.ownerReferences
  if (!Array.isArray(refs)) return []
  const out: Array<OwnerRef> = []
  for (const ref of refs) {
    if (!isObject(ref) || typeof ref.uid !== "string" || ref.uid === "") continue
    out.push({
      apiVersion: typeof ref.apiVersion === "string" ? ref.apiVersion : "",
      kind: typeof ref.kind === "string" ? ref.kind : "",
      name: typeof ref.name === "string" ? ref.name : "",
      uid: ref.uid,
      blockOwnerDeletion: ref.blockOwnerDeletion === true
    })
  }
  return out
}

const uidOf = (entry: Entry): string => String(entry.metadata.uid ?? "")

const deleting = (entry: Entry): boolean => entry.metadata.deletionTimestamp !== undefined

const hasFinalizer = (entry: Entry, finalizer: string): boolean =>
  finalizersOf(entry.metadata.finalizers).includes(finalizer)

const idOf = (store: ResourceStore, key: string): string => `${store.groupResource} ${key}`

const codeOf = (result: Result.Result<Entry, Status>): number =>
  Result.isSuccess(result) ? 200 : result.failure.code ?? 500

/** @internal */
export class Controllers {
  /** owner uid -> dependent id -> dependent */
  private readonly dependents = new Map<string, Map<string, Dependent>>()
  /** Objects to examine, in the order they became due (the delay is constant). */
  private readonly queue = new Map<string, Item>()
  /** Group/kind to store, for owner references. */
  private readonly byKind = new Map<string, ResourceStore>()
  private wake: (() => void) | undefined = undefined

  constructor(
    private readonly store: Store,
    private readonly delayMillis: number,
    private readonly now: () => number,
    private readonly context: () => WriteContext,
    private readonly onWrite: ((write: ControllerWrite) => void) | undefined
  ) {
    for (const rs of store.stores.values()) {
      const key = `${rs.resource.group}/${rs.resource.kind}`
      if (!this.byKind.has(key)) this.byKind.set(key, rs)
    }
  }

  /** Objects waiting to be examined (for tests). */
  get pending(): number {
    return this.queue.size
  }

  // ---------------------------------------------------------------------------------------------
  // observing
  // ---------------------------------------------------------------------------------------------

  /** The store's observer: keeps the ownership index and queues what a change concerns. */
  readonly observe = (rs: ResourceStore, type: EventType, entry: Entry, prev: Entry | undefined): void => {
    const refs = entry.metadata.ownerReferences
    const prevRefs = prev?.metadata.ownerReferences
    if (type === "DELETED") {
      const uid = uidOf(entry)
      this.unindex(rs, entry.key, prev ?? entry)
      // its dependents may be garbage now
      const dependents = this.dependents.get(uid)
      if (dependents !== undefined) {
        for (const dependent of dependents.values()) this.enqueueKey(dependent.store, dependent.key)
      }
      // owners waiting for it (Foreground) may go now
      for (const ref of ownerRefsOf(entry)) this.enqueueOwner(rs, entry, ref)
      // a terminating namespace may be empty now
      if (rs.resource.namespaced && entry.namespace !== "") this.enqueueNamespace(entry.namespace)
      return
    }
    if (refs !== prevRefs) {
      if (prev !== undefined) {
        this.unindex(rs, prev.key, prev)
        // owners whose references were removed: a Foreground owner may go now
        const kept = new Set(ownerRefsOf(entry).map((ref) => ref.uid))
        for (const ref of ownerRefsOf(prev)) if (!kept.has(ref.uid)) this.enqueueOwner(rs, entry, ref)
      }
      if (this.index(rs, entry)) this.enqueue(rs, entry)
    }
    if (deleting(entry)) {
      const wasDeleting = prev !== undefined && deleting(prev)
      const prevFinalizers = prev === undefined ? [] : finalizersOf(prev.metadata.finalizers)
      const finalizers = finalizersOf(entry.metadata.finalizers)
      const newly = (f: string) => finalizers.includes(f) && (!wasDeleting || !prevFinalizers.includes(f))
      if (!wasDeleting && rs.groupResource === "namespaces") this.enqueue(rs, entry)
      if (newly(foregroundFinalizer) || newly(orphanFinalizer)) {
        this.enqueue(rs, entry)
        // every dependent of an owner deleted in Foreground is examined (the GC's graph builder)
        if (newly(foregroundFinalizer)) {
          const dependents = this.dependents.get(uidOf(entry))
          if (dependents !== undefined) {
            for (const dependent of dependents.values()) this.enqueueKey(dependent.store, dependent.key)
          }
        }
      }
    }
  }

  /** Indexes `entry` under its owners; whether it has any. */
  private index(rs: ResourceStore, entry: Entry): boolean {
    const refs = ownerRefsOf(entry)
    const id = idOf(rs, entry.key)
    for (const ref of refs) {
      let dependents = this.dependents.get(ref.uid)
      if (dependents === undefined) this.dependents.set(ref.uid, dependents = new Map())
      dependents.set(id, { store: rs, key: entry.key })
    }
    return refs.length > 0
  }

  private unindex(rs: ResourceStore, key: string, entry: Entry): void {
    const id = idOf(rs, key)
    for (const ref of ownerRefsOf(entry)) {
      const dependents = this.dependents.get(ref.uid)
      if (dependents === undefined) continue
      dependents.delete(id)
      if (dependents.size === 0) this.dependents.delete(ref.uid)
    }
  }

  private enqueue(rs: ResourceStore, entry: Entry): void {
    const id = idOf(rs, entry.key)
    if (this.queue.has(id)) return
    this.queue.set(id, { store: rs, key: entry.key, uid: uidOf(entry), due: this.now() + this.delayMillis })
    const wake = this.wake
    if (wake !== undefined) {
      this.wake = undefined
      wake()
    }
  }

  private enqueueKey(rs: ResourceStore, key: string): void {
    const entry = rs.entries.get(key)
    if (entry !== undefined) this.enqueue(rs, entry)
  }

  private enqueueOwner(rs: ResourceStore, dependent: Entry, ref: OwnerRef): void {
    const owner = this.owner(rs, dependent, ref)
    if (owner !== undefined && owner !== "unresolvable" && deleting(owner.entry)) this.enqueue(owner.store, owner.entry)
  }

  private enqueueNamespace(name: string): void {
    const namespaces = this.store.stores.get("namespaces")
    const namespace = namespaces?.entries.get(name)
    if (namespaces !== undefined && namespace !== undefined && deleting(namespace)) this.enqueue(namespaces, namespace)
  }

  // ---------------------------------------------------------------------------------------------
  // the fiber
  // ---------------------------------------------------------------------------------------------

  /** Examines what is due, forever; for a fiber in the server's scope. */
  readonly run: Effect.Effect<never> = Effect.gen({ self: this }, function*() {
    for (;;) {
      if (this.queue.size === 0) {
        yield* Effect.callback<void>((resume) => {
          this.wake = () => resume(Effect.void)
          return Effect.sync(() => {
            this.wake = undefined
          })
        })
      }
      const first = this.queue.values().next().value
      if (first !== undefined) {
        const wait = first.due - (yield* Clock.currentTimeMillis)
        if (wait > 0) yield* Effect.sleep(Duration.millis(wait))
      }
      yield* Effect.sync(() => this.examineDue(this.now())).pipe(
        Effect.catchDefect((defect) => Effect.logError("ApiServer: the garbage collector failed", defect))
      )
      yield* Effect.yieldNow
    }
  })

  /** Examines every queued object due at `now` (those queued meanwhile wait for their turn). */
  examineDue(now: number): void {
    const due: Array<Item> = []
    for (const [id, item] of this.queue) {
      if (item.due > now) break
      this.queue.delete(id)
      due.push(item)
    }
    for (const item of due) this.examine(item)
  }

  private examine(item: Item): void {
    const entry = item.store.entries.get(item.key)
    if (entry === undefined || uidOf(entry) !== item.uid) return
    if (deleting(entry)) {
      if (item.store.groupResource === "namespaces" && !this.emptyNamespace(item.store, entry)) return
      const current = item.store.entries.get(item.key)
      if (current === undefined || uidOf(current) !== item.uid) return
      if (hasFinalizer(current, foregroundFinalizer)) this.deleteDependentsFirst(item.store, current)
      else if (hasFinalizer(current, orphanFinalizer)) this.orphanDependents(item.store, current)
      return
    }
    this.collectIfGarbage(item.store, entry)
  }

  // ---------------------------------------------------------------------------------------------
  // the garbage collector
  // ---------------------------------------------------------------------------------------------

  /**
   * The owner an owner reference of `dependent` names, as the GC resolves it: by group, kind and name, in
   * the dependent's namespace when the owner's resource is namespaced. `undefined`: absent (or another
   * object of that name: the uid differs); `"unresolvable"`: a kind the server does not serve, or a
   * namespaced owner of a cluster-scoped dependent (never collected).
   */
  private owner(
    rs: ResourceStore,
    dependent: Entry,
    ref: OwnerRef
  ): { readonly store: ResourceStore; readonly entry: Entry } | "unresolvable" | undefined {
    const slash = ref.apiVersion.indexOf("/")
    const group = slash < 0 ? "" : ref.apiVersion.slice(0, slash)
    const store = this.byKind.get(`${group}/${ref.kind}`)
    if (store === undefined) return "unresolvable"
    let namespace = ""
    if (store.resource.namespaced) {
      if (!rs.resource.namespaced) return "unresolvable"
      namespace = dependent.namespace
    }
    const entry = store.entries.get(objectKey(namespace, ref.name))
    return entry === undefined || uidOf(entry) !== ref.uid ? undefined : { store, entry }
  }

  /** `attemptToDeleteItem`: deletes `entry` when none of its owners remains, drops references to the gone. */
  private collectIfGarbage(rs: ResourceStore, entry: Entry): void {
    const refs = ownerRefsOf(entry)
    if (refs.length === 0) return
    const solid: Array<OwnerRef> = []
    const stale: Array<string> = []
    let waiting = false
    for (const ref of refs) {
      const owner = this.owner(rs, entry, ref)
      if (owner === "unresolvable") solid.push(ref)
      else if (owner === undefined) stale.push(ref.uid)
      else if (deleting(owner.entry) && hasFinalizer(owner.entry, foregroundFinalizer)) {
        waiting = true
        stale.push(ref.uid)
      } else solid.push(ref)
    }
    if (solid.length > 0) {
      if (stale.length > 0) this.removeOwnerReferences(rs, entry, new Set(stale), garbageCollectorUser)
      return
    }
    const hasDependents = (this.dependents.get(uidOf(entry))?.size ?? 0) > 0
    const policy: PropagationPolicy = waiting && hasDependents
      ? "Foreground"
      : hasFinalizer(entry, orphanFinalizer)
      ? "Orphan"
      : hasFinalizer(entry, foregroundFinalizer)
      ? "Foreground"
      : "Background"
    this.delete(rs, entry, policy, garbageCollectorUser)
  }

  /** An owner deleted in Foreground: goes once no dependent blocks it (`blockOwnerDeletion`). */
  private deleteDependentsFirst(rs: ResourceStore, owner: Entry): void {
    const uid = uidOf(owner)
    const dependents = this.dependents.get(uid)
    let blocked = false
    if (dependents !== undefined) {
      for (const dependent of dependents.values()) {
        const entry = dependent.store.entries.get(dependent.key)
        if (entry === undefined) continue
        if (ownerRefsOf(entry).some((ref) => ref.uid === uid && ref.blockOwnerDeletion)) blocked = true
        if (!deleting(entry)) this.enqueue(dependent.store, entry)
      }
    }
    if (!blocked) this.removeFinalizer(rs, owner, foregroundFinalizer)
  }

  /** An owner deleted with Orphan: its dependents lose their references to it, then it goes. */
  private orphanDependents(rs: ResourceStore, owner: Entry): void {
    const uid = uidOf(owner)
    const dependents = this.dependents.get(uid)
    if (dependents !== undefined) {
      for (const dependent of [...dependents.values()]) {
        const entry = dependent.store.entries.get(dependent.key)
        if (entry !== undefined) {
          this.removeOwnerReferences(dependent.store, entry, new Set([uid]), garbageCollectorUser)
        }
      }
    }
    const current = rs.entries.get(owner.key)
    if (current !== undefined && uidOf(current) === uid) this.removeFinalizer(rs, current, orphanFinalizer)
  }

  // ---------------------------------------------------------------------------------------------
  // the namespace controller
  // ---------------------------------------------------------------------------------------------

  /**
   * A Terminating namespace: deletes its content (Background); once nothing is left, removes its
   * `kubernetes` finalizer and deletes it. Whether it is empty but still there (held by its own
   * finalizers).
   */
  private emptyNamespace(namespaces: ResourceStore, namespace: Entry): boolean {
    const prefix = `${namespace.name}/`
    let remaining = 0
    for (const rs of this.store.stores.values()) {
      if (!rs.resource.namespaced) continue
      const keys = rs.keys()
      for (let i = ApiStore.lowerBound(keys, prefix); i < keys.length && keys[i].startsWith(prefix); i++) {
        const key = keys[i]
        const entry = rs.entries.get(key)
        if (entry === undefined) continue
        if (!deleting(entry)) this.delete(rs, entry, "Background", namespaceControllerUser)
        if (rs.entries.has(key)) remaining++
      }
    }
    if (remaining > 0) return false
    const spec = isObject(namespace.obj.spec) ? namespace.obj.spec : {}
    const finalizers = finalizersOf(spec.finalizers)
    let current: Entry | undefined = namespace
    if (finalizers.includes(namespaceFinalizer)) {
      const result = this.store.replace(
        namespaces,
        namespace,
        { spec: { ...spec, finalizers: finalizers.filter((f) => f !== namespaceFinalizer) } },
        {},
        "finalize"
      )
      this.report("update", namespaces, namespace, codeOf(result), namespaceControllerUser, "finalize")
      current = namespaces.entries.get(namespace.key)
    }
    if (current === undefined || uidOf(current) !== uidOf(namespace)) return false
    const rest = finalizersOf(isObject(current.obj.spec) ? current.obj.spec.finalizers : undefined)
    if (rest.length === 0) this.delete(namespaces, current, undefined, namespaceControllerUser)
    return namespaces.entries.get(namespace.key) !== undefined
  }

  // ---------------------------------------------------------------------------------------------
  // writes
  // ---------------------------------------------------------------------------------------------

  private delete(rs: ResourceStore, entry: Entry, policy: PropagationPolicy | undefined, user: string): void {
    const result = this.store.delete(
      rs,
      entry.namespace,
      entry.name,
      { uid: uidOf(entry) },
      this.context(),
      policy === undefined ? {} : { propagationPolicy: policy }
    )
    this.report("delete", rs, entry, codeOf(result), user)
  }

  private removeOwnerReferences(rs: ResourceStore, entry: Entry, uids: ReadonlySet<string>, user: string): void {
    const refs = Array.isArray(entry.metadata.ownerReferences) ? entry.metadata.ownerReferences : []
    const kept = refs.filter((ref) => !(isObject(ref) && typeof ref.uid === "string" && uids.has(ref.uid)))
    if (kept.length === refs.length) return
    const metadata: JsonObject = { ...entry.metadata }
    if (kept.length === 0) delete metadata.ownerReferences
    else metadata.ownerReferences = kept
    this.update(rs, entry, metadata, user)
  }

  private removeFinalizer(rs: ResourceStore, entry: Entry, finalizer: string): void {
    const finalizers = finalizersOf(entry.metadata.finalizers)
    if (!finalizers.includes(finalizer)) return
    const metadata: JsonObject = { ...entry.metadata }
    const rest = finalizers.filter((f) => f !== finalizer)
    if (rest.length === 0) delete metadata.finalizers
    else metadata.finalizers = rest
    this.update(rs, entry, metadata, garbageCollectorUser)
  }

  private update(rs: ResourceStore, entry: Entry, metadata: JsonObject, user: string): void {
    const result = this.store.replace(rs, entry, { ...entry.obj, metadata }, metadata, "object")
    this.report("update", rs, entry, codeOf(result), user)
  }

  private report(
    verb: "update" | "delete",
    rs: ResourceStore,
    entry: Entry,
    code: number,
    user: string,
    subresource?: string
  ): void {
    this.onWrite?.({ verb, store: rs, namespace: entry.namespace, name: entry.name, subresource, code, user })
  }
}

/**
 * The in-memory API store: the Kubernetes list/watch protocol over objects kept in memory, shared by the
 * fake ListerWatcher (`FakeListerWatcher.ts`) and the test kit's embedded API server, so that the two
 * cannot disagree about it. `ApiStore.ts` declares its types (imported here as types) and documents it
 * for users.
 *
 * Invariants:
 * - `rv` is the resourceVersion of the last write; every write takes `rv + 1`, whatever its collection.
 * - `history` holds every event with `rv > historyStart`, oldest first (hidden events included); the state
 *   at any `N` with `historyStart <= N <= rv` is the current state with, for each key changed after `N`,
 *   the `prev` of the oldest such event.
 * - A write (collection change, history append, fan-out to watchers) is one synchronous step; so is the
 *   start of a watch (its replay or initial events, and its registration).
 * - Which events a watch sees is decided here once (`deliveryOf`): the watch cache's selector rules. A
 *   front end decides only how an event is written (objects for the fake, pre-encoded lines for the server).
 *
 * @internal
 */
import * as Result from "effect/Result"
import type {
  ContinueToken,
  Delivery,
  Entry,
  EventType,
  FieldError,
  ListOutcome,
  ListPageResult,
  ListParams,
  Selection,
  Watcher,
  WatchParams,
  WatchPlan
} from "../../ApiStore.js"
import * as FieldSelector from "../../FieldSelector.js"
import * as LabelSelector from "../../LabelSelector.js"
import type { Resource } from "../../Resource.js"
import { groupResource } from "../../Resource.js"
import type { Status } from "../../Wire.js"
import { failureStatus } from "../../Wire.js"

// -------------------------------------------------------------------------------------------------
// entries and collections
// -------------------------------------------------------------------------------------------------

/** @internal */
export const objectKey = (namespace: string, name: string): string => namespace === "" ? name : `${namespace}/${name}`

/** @internal */
export const compareKeys = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0)

/** First index whose key is `>= key`. @internal */
export const lowerBound = (keys: ReadonlyArray<string>, key: string): number => {
  let lo = 0
  let hi = keys.length
  while (lo < hi) {
    const mid = (lo + hi) >>> 1
    if (keys[mid] < key) lo = mid + 1
    else hi = mid
  }
  return lo
}

/**
 * The objects of one resource, with keys kept sorted the way etcd orders them, and its open watches.
 *
 * @internal
 */
export class Collection<E extends Entry = Entry> {
  readonly entries = new Map<string, E>()
  private sorted: Array<string> = []
  /** Keys added since `sorted` was built. */
  private added: Array<string> = []
  /** Keys of `sorted` removed since. */
  private removed = 0
  readonly watchers = new Set<Watcher<E>>()

  constructor(
    /** The fields a field selector may use; `undefined`: any. */
    readonly fields: ReadonlyArray<string> | undefined
  ) {}

  put(entry: E): void {
    if (!this.entries.has(entry.key)) this.added.push(entry.key)
    this.entries.set(entry.key, entry)
  }

  remove(key: string): void {
    if (this.entries.delete(key)) this.removed++
  }

  /**
   * Every key, sorted as etcd orders them. Writes only record what changed; the order is rebuilt here
   * with one sort of the added keys and one merge.
   */
  keys(): ReadonlyArray<string> {
    if (this.added.length === 0 && this.removed === 0) return this.sorted
    const added = this.added.sort(compareKeys)
    const old = this.sorted
    const out: Array<string> = []
    let i = 0
    let j = 0
    let last: string | undefined
    while (i < old.length || j < added.length) {
      const key = j >= added.length || (i < old.length && old[i] < added[j]) ? old[i++] : added[j++]
      if (key !== last && this.entries.has(key)) out.push(key)
      last = key
    }
    this.sorted = out
    this.added = []
    this.removed = 0
    return out
  }
}

const podFields: ReadonlyArray<string> = [
  "spec.nodeName",
  "spec.restartPolicy",
  "spec.schedulerName",
  "spec.serviceAccountName",
  "spec.hostNetwork",
  "status.phase",
  "status.podIP",
  "status.podIPs",
  "status.nominatedNodeName"
]

const extraFields: { readonly [groupResource: string]: ReadonlyArray<string> } = {
  pods: podFields,
  events: [
    "involvedObject.kind",
    "involvedObject.namespace",
    "involvedObject.name",
    "involvedObject.uid",
    "involvedObject.apiVersion",
    "involvedObject.resourceVersion",
    "involvedObject.fieldPath",
    "reason",
    "reportingComponent",
    "source",
    "type"
  ],
  "events.events.k8s.io": [
    "regarding.kind",
    "regarding.namespace",
    "regarding.name",
    "regarding.uid",
    "regarding.apiVersion",
    "regarding.resourceVersion",
    "regarding.fieldPath",
    "reason",
    "reportingController",
    "type"
  ],
  secrets: ["type"],
  nodes: ["spec.unschedulable"],
  namespaces: ["status.phase"],
  "replicasets.apps": ["status.replicas"],
  "jobs.batch": ["status.successful"]
}

/**
 * The fields a field selector may use on `resource`, as the API server's field label conversions allow.
 *
 * @internal
 */
export const selectableFields = (resource: Resource<unknown>): ReadonlyArray<string> => [
  ...FieldSelector.defaultFields,
  ...(extraFields[groupResource(resource)] ?? [])
]

// -------------------------------------------------------------------------------------------------
// history
// -------------------------------------------------------------------------------------------------

/**
 * One change. `line`, `enteredLine` and `leftLine` are a front end's encodings of it, built the first time
 * a watcher needs them and shared by every watcher (the store never reads them).
 *
 * @internal
 */
export class HistoryEvent<E extends Entry = Entry> {
  line: Uint8Array | undefined = undefined
  enteredLine: Uint8Array | undefined = undefined
  leftLine: Uint8Array | undefined = undefined

  constructor(
    readonly rv: number,
    readonly type: EventType,
    readonly collection: Collection<E>,
    /** The new state; for DELETED the final state at the deletion's resourceVersion. */
    readonly entry: E,
    /** The state before, `undefined` when there was none. */
    readonly prev: E | undefined,
    /** A change no watch sees, live or replayed (a lost event); lists at older versions still undo it. */
    readonly hidden: boolean
  ) {}
}

/**
 * A ring of the most recent events, oldest first.
 *
 * @internal
 */
export class History<E extends Entry = Entry> {
  private readonly ring: Array<HistoryEvent<E> | undefined>
  private head = 0
  size = 0

  constructor(readonly capacity: number) {
    this.ring = new Array(Math.max(1, capacity))
  }

  at(i: number): HistoryEvent<E> {
    return this.ring[(this.head + i) % this.ring.length]!
  }

  /** Appends; returns the evicted event when full. */
  push(event: HistoryEvent<E>): HistoryEvent<E> | undefined {
    const cap = this.ring.length
    if (this.size < cap) {
      this.ring[(this.head + this.size) % cap] = event
      this.size++
      return undefined
    }
    const evicted = this.ring[this.head]
    this.ring[this.head] = event
    this.head = (this.head + 1) % cap
    return evicted
  }

  clear(): void {
    this.ring.fill(undefined)
    this.head = 0
    this.size = 0
  }

  /** Index of the first event with `rv > after`. */
  firstAfter(after: number): number {
    let lo = 0
    let hi = this.size
    while (lo < hi) {
      const mid = (lo + hi) >>> 1
      if (this.at(mid).rv <= after) lo = mid + 1
      else hi = mid
    }
    return lo
  }
}

// -------------------------------------------------------------------------------------------------
// selections and the watch cache's selector rules
// -------------------------------------------------------------------------------------------------

/** @internal */
export const everything: Selection = { namespace: undefined, label: undefined, field: undefined }

/** @internal */
export const matchesSelection = (selection: Selection, entry: Entry): boolean =>
  (selection.namespace === undefined || entry.namespace === selection.namespace) &&
  (selection.label === undefined || LabelSelector.matches(selection.label, entry.labels)) &&
  (selection.field === undefined || FieldSelector.matchesObject(selection.field, entry.obj))

/**
 * Parses a request's selectors as the API server does: a malformed selector, or a field selector on a
 * field the collection does not allow, is 400 BadRequest; a selector that selects everything is none.
 *
 * @internal
 */
export const parseSelection = (
  fields: ReadonlyArray<string> | undefined,
  namespace: string | undefined,
  labelSelector: string | undefined,
  fieldSelector: string | undefined
): Result.Result<Selection, Status> => {
  let label: LabelSelector.LabelSelector | undefined
  if (labelSelector !== undefined && labelSelector !== "") {
    const parsed = LabelSelector.parse(labelSelector)
    if (Result.isFailure(parsed)) {
      return Result.fail(badRequest(`unable to parse requirement: ${parsed.failure.message}`))
    }
    label = LabelSelector.isEverything(parsed.success) ? undefined : parsed.success
  }
  let field: FieldSelector.FieldSelector | undefined
  if (fieldSelector !== undefined && fieldSelector !== "") {
    const parsed = FieldSelector.parse(fieldSelector)
    if (Result.isFailure(parsed)) return Result.fail(badRequest(parsed.failure.message))
    if (fields !== undefined) {
      const checked = FieldSelector.validateFields(parsed.success, fields)
      if (Result.isFailure(checked)) return Result.fail(badRequest(checked.failure.message))
    }
    field = FieldSelector.isEverything(parsed.success) ? undefined : parsed.success
  }
  return Result.succeed({ namespace: namespace === "" ? undefined : namespace, label, field })
}

/**
 * The watch cache's rules: an event outside the namespace, or whose object matches the selectors neither
 * before nor after, is not seen (`undefined`).
 *
 * @internal
 */
export const deliveryOf = <E extends Entry>(selection: Selection, event: HistoryEvent<E>): Delivery | undefined => {
  if (selection.namespace !== undefined && event.entry.namespace !== selection.namespace) return undefined
  if (selection.label === undefined && selection.field === undefined) return "event"
  if (event.type !== "MODIFIED") return matchesSelection(selection, event.entry) ? "event" : undefined
  const now = matchesSelection(selection, event.entry)
  const before = event.prev !== undefined && matchesSelection(selection, event.prev)
  return now && before ? "event" : now ? "entered" : before ? "left" : undefined
}

/** Feeds `event` to `watcher` through the selector rules. @internal */
export const deliver = <E extends Entry>(watcher: Watcher<E>, event: HistoryEvent<E>): void => {
  const delivery = deliveryOf(watcher.selection, event)
  if (delivery !== undefined) watcher.send(event, delivery)
}

// -------------------------------------------------------------------------------------------------
// the store
// -------------------------------------------------------------------------------------------------

/** @internal */
export class Store<E extends Entry = Entry> {
  rv = 0
  /** Every event with `rv > historyStart` is in `history`. */
  historyStart = 0
  /** Continue tokens of an older epoch are expired (`expireContinueTokens`). */
  continueEpoch = 0
  readonly history: History<E>

  constructor(historySize: number) {
    this.history = new History(Math.max(1, historySize))
  }

  /**
   * Publishes one change: `entry` (for DELETED the final state, at the new resourceVersion) becomes the
   * state of its key, the event joins the history and reaches every watcher of `collection`. `line`: the
   * event's encoding, when the writer already has it; `hidden`: a lost event, recorded (so that older
   * states stay known) but never sent nor replayed.
   */
  commit(
    collection: Collection<E>,
    type: EventType,
    entry: E,
    prev: E | undefined,
    line?: Uint8Array | undefined,
    hidden = false
  ): HistoryEvent<E> {
    this.rv = entry.rv
    if (type === "DELETED") collection.remove(entry.key)
    else collection.put(entry)
    const event = new HistoryEvent(entry.rv, type, collection, entry, prev, hidden)
    if (line !== undefined) event.line = line
    const evicted = this.history.push(event)
    if (evicted !== undefined) this.historyStart = evicted.rv
    if (!hidden) { for (const watcher of collection.watchers) deliver(watcher, event) }
    return event
  }

  /** Forgets all history: every older resourceVersion becomes too old. */
  compact(): void {
    this.history.clear()
    this.historyStart = this.rv
  }

  /** Continue tokens issued so far stop working (410 Expired). */
  expireContinueTokens(): void {
    this.continueEpoch++
  }

  /**
   * The keys of `collection` whose state at `rv` differs from the current one, mapped to their state at
   * `rv` (`null`: absent then). Requires `historyStart <= rv`.
   */
  rollback(collection: Collection<E>, rv: number): Map<string, E | null> | undefined {
    if (rv >= this.rv) return undefined
    const overrides = new Map<string, E | null>()
    const history = this.history
    for (let i = history.size - 1; i >= 0; i--) {
      const event = history.at(i)
      if (event.rv <= rv) break
      if (event.collection === collection) overrides.set(event.entry.key, event.prev ?? null)
    }
    return overrides.size === 0 ? undefined : overrides
  }

  /**
   * One page of the state at `rv` (which must be servable), from `startKey` (inclusive), sorted by key.
   * `limit <= 0` means everything.
   */
  listPage(
    collection: Collection<E>,
    rv: number,
    selection: Selection,
    limit: number,
    startKey: string | undefined
  ): ListPageResult<E> {
    const overrides = this.rollback(collection, rv)
    const keys = collection.keys()
    let extra: Array<string> = []
    if (overrides !== undefined) {
      for (const [key, entry] of overrides) if (entry !== null && !collection.entries.has(key)) extra.push(key)
      extra = extra.sort(compareKeys)
    }
    const prefix = selection.namespace === undefined ? undefined : selection.namespace + "/"
    let from = startKey ?? ""
    if (prefix !== undefined && from < prefix) from = prefix
    let i = lowerBound(keys, from)
    let j = extra.length === 0 ? 0 : lowerBound(extra, from)
    const filtered = selection.label !== undefined || selection.field !== undefined
    const items: Array<E> = []
    let remaining = 0
    let more = false
    for (;;) {
      let key: string
      if (i < keys.length && (j >= extra.length || keys[i] < extra[j])) key = keys[i++]
      else if (j < extra.length) key = extra[j++]
      else break
      if (prefix !== undefined && !key.startsWith(prefix)) break
      const entry = overrides !== undefined && overrides.has(key) ? overrides.get(key)! : collection.entries.get(key)
      if (entry === undefined || entry === null || !matchesSelection(selection, entry)) continue
      if (limit > 0 && items.length >= limit) {
        more = true
        if (filtered) break
        if (overrides === undefined) {
          // every remaining key is an item: count them without looking
          const end = prefix === undefined ? keys.length : lowerBound(keys, selection.namespace + "0")
          remaining = end - i + 1
          break
        }
        remaining++
        continue
      }
      items.push(entry)
    }
    return {
      items,
      rv,
      lastKey: more ? items[items.length - 1].key : undefined,
      remaining: more && !filtered ? remaining : undefined
    }
  }

  /** The events after `rv` of `collection` a watch replays (not the hidden ones), oldest first. */
  eventsAfter(collection: Collection<E>, rv: number): Array<HistoryEvent<E>> {
    const out: Array<HistoryEvent<E>> = []
    const history = this.history
    for (let i = history.firstAfter(rv); i < history.size; i++) {
      const event = history.at(i)
      if (event.collection === collection && !event.hidden) out.push(event)
    }
    return out
  }
}

// -------------------------------------------------------------------------------------------------
// statuses
// -------------------------------------------------------------------------------------------------

/** @internal */
export const badRequest = (message: string): Status => failureStatus(400, "BadRequest", message)

/** @internal */
export const expired = (message: string): Status => failureStatus(410, "Expired", message)

/** @internal */
export const tooLargeResourceVersion = (requested: number, current: number): Status =>
  failureStatus(504, "Timeout", `Too large resource version: ${requested}, current: ${current}`, {
    causes: [{ reason: "ResourceVersionTooLarge", message: "Too large resource version" }] as unknown as NonNullable<
      Status["details"]
    >["causes"],
    retryAfterSeconds: 1
  })

/** @internal */
export const inconsistentContinue =
  "The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list."

/**
 * 422 Invalid, e.g. `Pod "x" is invalid: metadata.name: Required value: name or generateName is required`.
 *
 * @internal
 */
export const invalid = (
  kind: string,
  group: string,
  name: string,
  errors: ReadonlyArray<FieldError>
): Status => {
  const qualifiedKind = group === "" ? kind : `${kind}.${group}`
  const texts = errors.map((e) => `${e.field}: ${e.message}`)
  const message = `${qualifiedKind} "${name}" is invalid: ${texts.length === 1 ? texts[0] : `[${texts.join(", ")}]`}`
  const causes = errors.map((e) => ({ reason: e.reason, message: e.message, field: e.field }))
  return failureStatus(422, "Invalid", message, {
    name,
    ...(group === "" ? {} : { group }),
    kind,
    causes: causes as unknown as NonNullable<Status["details"]>["causes"]
  })
}

const listOptionsInvalid = (errors: ReadonlyArray<FieldError>): Status =>
  invalid("ListOptions", "meta.k8s.io", "", errors)

const forbidden = (field: string, message: string): FieldError => ({
  field,
  reason: "FieldValueForbidden",
  message: `Forbidden: ${message}`
})

const unsupportedMatch = (match: string): FieldError => ({
  field: "resourceVersionMatch",
  reason: "FieldValueNotSupported",
  message: `Unsupported value: ${JSON.stringify(match)}: supported values: "Exact", "NotOlderThan", ""`
})

/** A resourceVersion as a number, `undefined` unless it is one. @internal */
export const parseResourceVersion = (value: string): number | undefined =>
  /^\d+$/.test(value) ? Number(value) : undefined

// -------------------------------------------------------------------------------------------------
// continue tokens
// -------------------------------------------------------------------------------------------------

/** A continue token as the API server shapes them: base64url JSON (the epoch only once one expired). @internal */
export const encodeContinue = (rv: number, start: string, epoch = 0): string =>
  Buffer.from(
    JSON.stringify(epoch === 0 ? { v: "meta.k8s.io/v1", rv, start } : { v: "meta.k8s.io/v1", rv, start, e: epoch }),
    "utf8"
  ).toString("base64url")

/** @internal */
export const decodeContinue = (token: string): ContinueToken | undefined => {
  try {
    const u = JSON.parse(Buffer.from(token, "base64url").toString("utf8")) as Record<string, unknown>
    if (
      u.v !== "meta.k8s.io/v1" || typeof u.rv !== "number" || !Number.isInteger(u.rv) || typeof u.start !== "string" ||
      (u.e !== undefined && (typeof u.e !== "number" || !Number.isInteger(u.e)))
    ) {
      return undefined
    }
    return { rv: u.rv, start: u.start, epoch: typeof u.e === "number" ? u.e : 0 }
  } catch {
    return undefined
  }
}

/** 410 Expired for a continue token, with the token that continues at the current state. @internal */
export const expiredContinue = (token: ContinueToken | undefined): Status => {
  const status = expired(inconsistentContinue)
  return token === undefined ? status : { ...status, metadata: { continue: encodeContinue(-1, token.start) } } as Status
}

// -------------------------------------------------------------------------------------------------
// LIST
// -------------------------------------------------------------------------------------------------

/**
 * A LIST with the API server's resourceVersion semantics:
 * - `""`: most recent; `"0"`: any (the current state is served);
 * - `"N"`: not older than N (the current state; 504 ResourceVersionTooLarge above the current one), or
 *   exactly N with `resourceVersionMatch=Exact` or, as for the legacy pagination semantics, with a `limit`
 *   and no `resourceVersionMatch` (410 Expired when N is older than the history);
 * - `continue`: the next page of the same snapshot (410 Expired once the snapshot left the history, or
 *   once the store expired its tokens).
 *
 * @internal
 */
export const list = <E extends Entry>(
  store: Store<E>,
  collection: Collection<E>,
  namespace: string | undefined,
  params: ListParams
): Result.Result<ListOutcome<E>, Status> => {
  const rvParam = params.resourceVersion ?? ""
  const match = params.resourceVersionMatch ?? ""
  const cont = params.continue ?? ""
  const errors: Array<FieldError> = []
  if (match !== "") {
    if (rvParam === "") {
      errors.push(
        forbidden("resourceVersionMatch", "resourceVersionMatch is forbidden unless resourceVersion is provided")
      )
    }
    if (cont !== "") {
      errors.push(forbidden("resourceVersionMatch", "resourceVersionMatch is forbidden when continue is provided"))
    }
    if (match !== "Exact" && match !== "NotOlderThan") errors.push(unsupportedMatch(match))
    if (match === "Exact" && rvParam === "0") {
      errors.push(
        forbidden("resourceVersionMatch", "resourceVersionMatch \"exact\" is forbidden for resourceVersion \"0\"")
      )
    }
  }
  if (params.sendInitialEvents !== undefined) {
    errors.push(forbidden("sendInitialEvents", "sendInitialEvents is forbidden for list"))
  }
  if (errors.length > 0) return Result.fail(listOptionsInvalid(errors))
  const selection = parseSelection(collection.fields, namespace, params.labelSelector, params.fieldSelector)
  if (Result.isFailure(selection)) return Result.fail(selection.failure)
  const limit = params.limit !== undefined && params.limit > 0 ? params.limit : 0
  let rv = store.rv
  let start: string | undefined
  if (cont !== "") {
    if (rvParam !== "" && rvParam !== "0") {
      return Result.fail(badRequest("specifying resource version is not allowed when using continue"))
    }
    const token = decodeContinue(cont)
    if (token === undefined) return Result.fail(badRequest("invalid continue token: malformed continue token"))
    if (token.epoch < store.continueEpoch) return Result.fail(expiredContinue(token))
    start = token.start
    if (token.rv >= 0 && token.rv < store.rv) {
      if (token.rv < store.historyStart) return Result.fail(expiredContinue(token))
      rv = token.rv
    }
  } else if (rvParam !== "" && rvParam !== "0") {
    const n = parseResourceVersion(rvParam)
    if (n === undefined) return Result.fail(badRequest(`invalid resource version: ${JSON.stringify(rvParam)}`))
    if (n > store.rv) return Result.fail(tooLargeResourceVersion(n, store.rv))
    const exact = match === "Exact" || (match === "" && limit > 0)
    if (exact) {
      if (n < store.historyStart) return Result.fail(expired("The resourceVersion for the provided list is too old."))
      rv = n
    }
  }
  const page = store.listPage(collection, rv, selection.success, limit, start)
  const continueToken = page.lastKey === undefined
    ? undefined
    : encodeContinue(page.rv, page.lastKey + "\u0000", store.continueEpoch)
  return Result.succeed({ page, continueToken })
}

// -------------------------------------------------------------------------------------------------
// WATCH
// -------------------------------------------------------------------------------------------------

/**
 * Validates a WATCH request and decides how it starts, as the API server does:
 * - `""` or `"0"`: the current state as ADDED events, then changes;
 * - `"N"`: the changes after N, replayed from the history;
 * - `sendInitialEvents=true` (watch-list; requires `resourceVersionMatch=NotOlderThan` and
 *   `allowWatchBookmarks=true`, else 422): the current state (not older than N) as ADDED events, then a
 *   bookmark annotated `k8s.io/initial-events-end: "true"`, then changes.
 *
 * @internal
 */
export const planWatch = (
  fields: ReadonlyArray<string> | undefined,
  namespace: string | undefined,
  params: WatchParams
): Result.Result<WatchPlan, Status> => {
  const errors: Array<FieldError> = []
  const match = params.resourceVersionMatch ?? ""
  if (params.sendInitialEvents !== undefined) {
    if (match !== "NotOlderThan") {
      errors.push(
        forbidden("resourceVersionMatch", "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan")
      )
    }
    if (params.allowWatchBookmarks !== true) {
      errors.push(forbidden("allowWatchBookmarks", "sendInitialEvents requires setting allowWatchBookmarks to true"))
    }
  } else if (match !== "") {
    errors.push(
      forbidden(
        "resourceVersionMatch",
        "resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided"
      )
    )
  }
  if (match !== "" && match !== "NotOlderThan" && match !== "Exact") errors.push(unsupportedMatch(match))
  if (errors.length > 0) return Result.fail(listOptionsInvalid(errors))
  const selection = parseSelection(fields, namespace, params.labelSelector, params.fieldSelector)
  if (Result.isFailure(selection)) return Result.fail(selection.failure)
  const rvParam = params.resourceVersion ?? ""
  let from: number | undefined
  if (rvParam !== "" && rvParam !== "0") {
    from = parseResourceVersion(rvParam)
    if (from === undefined) return Result.fail(badRequest(`invalid resource version: ${JSON.stringify(rvParam)}`))
  }
  const sendInitialEvents = params.sendInitialEvents
  return Result.succeed({
    selection: selection.success,
    // with sendInitialEvents the state is sent at the current version, whatever N was (not older than N)
    from: sendInitialEvents === true ? undefined : from,
    initialEvents: sendInitialEvents === true || (sendInitialEvents === undefined && from === undefined),
    endBookmark: sendInitialEvents === true,
    bookmarks: params.allowWatchBookmarks === true,
    notOlderThan: sendInitialEvents === true ? from : undefined
  })
}

/**
 * Starts `watcher` as `plan` says and registers it, in one synchronous step with respect to writes: the
 * replay from its resourceVersion, or the current state as ADDED events (and the end bookmark). Returns
 * the failure instead when the version is too large (504) or too old for the history (410 Expired): a
 * server sends it as the watch's ERROR event; nothing is registered.
 *
 * @internal
 */
export const startWatch = <E extends Entry>(
  store: Store<E>,
  collection: Collection<E>,
  watcher: Watcher<E>,
  plan: WatchPlan
): Status | undefined => {
  const n = plan.from ?? plan.notOlderThan
  if (n !== undefined) {
    if (n > store.rv) return tooLargeResourceVersion(n, store.rv)
    if (plan.from !== undefined && n < store.historyStart) {
      return expired(`too old resource version: ${n} (${store.historyStart})`)
    }
  }
  if (plan.from !== undefined) {
    const events = store.eventsAfter(collection, plan.from)
    for (let i = 0; i < events.length && !watcher.done; i++) deliver(watcher, events[i])
  } else if (plan.initialEvents) {
    watcher.added(store.listPage(collection, store.rv, plan.selection, 0, undefined).items)
    if (plan.endBookmark && !watcher.done) watcher.bookmark(store.rv, true)
  }
  if (!watcher.done) collection.watchers.add(watcher)
  return undefined
}

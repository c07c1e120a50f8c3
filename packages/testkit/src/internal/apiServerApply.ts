/**
 * Server-side apply for the embedded API server, as pure functions over JSON: field sets in FieldsV1 form,
 * a merge topology for the built-in types (list merge keys, sets, atomic lists and maps), the merge of an
 * applied configuration into the live object, field ownership (`metadata.managedFields`) with conflicts,
 * forcing, shared ownership and the removal of fields an applier stops applying, and the ownership that
 * non-apply writes (create, update, merge/JSON/strategic patches) take of what they change.
 *
 * The rules are kube-apiserver's (structured-merge-diff and apimachinery's managedfields), without a
 * full OpenAPI schema: `schemaFor` knows the merge keys of the lists the built-in workloads use; other lists
 * are atomic and maps are granular.
 *
 * @internal
 */
import * as ApiStore from "effect-informers/ApiStore"
import type { Status } from "effect-informers/Wire"
import { failureStatus } from "effect-informers/Wire"
import * as Result from "effect/Result"
import type { JsonObject } from "./json.js"
import { isObject, jsonEqual } from "./json.js"

const isEmptyObject = (u: unknown): boolean => isObject(u) && Object.keys(u).length === 0

// -------------------------------------------------------------------------------------------------
// path elements
// -------------------------------------------------------------------------------------------------

/**
 * One step of a field path, in its FieldsV1 form: `f:<field>`, `k:<key fields as a JSON object, sorted by
 * name>` (an item of a map-list), `v:<JSON value>` (an item of a set) or `i:<index>`.
 *
 * @internal
 */
export type PathElement = string

/** @internal */
export type Path = ReadonlyArray<PathElement>

const field = (name: string): PathElement => `f:${name}`

const rank = (pe: PathElement): number => {
  switch (pe.charCodeAt(0)) {
    case 0x66: // f
      return 0
    case 0x6b: // k
      return 1
    case 0x76: // v
      return 2
    default:
      return 3
  }
}

const typeRank = (u: unknown): number =>
  u === null ? 0 : typeof u === "boolean" ? 1 : typeof u === "number" ? 2 : typeof u === "string" ? 3 : 4

/** A total order of JSON values (null, booleans, numbers, strings, then the rest by their JSON). */
const compareValues = (a: unknown, b: unknown): number => {
  const ra = typeRank(a)
  const rb = typeRank(b)
  if (ra !== rb) return ra - rb
  if (typeof a === "number" && typeof b === "number") return a - b
  if (typeof a === "boolean") return Number(a) - Number(b)
  const x = typeof a === "string" ? a : JSON.stringify(a)
  const y = typeof b === "string" ? b : JSON.stringify(b as unknown)
  return x < y ? -1 : x > y ? 1 : 0
}

/** structured-merge-diff's order: fields (by name), then keys, then values, then indices. */
const compareElements = (a: PathElement, b: PathElement): number => {
  const ra = rank(a)
  const rb = rank(b)
  if (ra !== rb) return ra - rb
  switch (ra) {
    case 0:
      return a < b ? -1 : a > b ? 1 : 0
    case 1: {
      const x = Object.entries(JSON.parse(a.slice(2)) as JsonObject)
      const y = Object.entries(JSON.parse(b.slice(2)) as JsonObject)
      for (let i = 0; i < x.length && i < y.length; i++) {
        if (x[i][0] !== y[i][0]) return x[i][0] < y[i][0] ? -1 : 1
        const c = compareValues(x[i][1], y[i][1])
        if (c !== 0) return c
      }
      return x.length - y.length
    }
    case 2:
      return compareValues(JSON.parse(a.slice(2)), JSON.parse(b.slice(2)))
    default:
      return Number(a.slice(2)) - Number(b.slice(2))
  }
}

const valueString = (u: unknown): string => JSON.stringify(u)

/** A path element as kube-apiserver prints it: `.name`, `[key="value",...]`, `[="value"]`, `[0]`. */
const elementString = (pe: PathElement): string => {
  switch (rank(pe)) {
    case 0:
      return `.${pe.slice(2)}`
    case 1:
      return `[${
        Object.entries(JSON.parse(pe.slice(2)) as JsonObject).map(([k, v]) => `${k}=${valueString(v)}`).join(",")
      }]`
    case 2:
      return `[=${pe.slice(2)}]`
    default:
      return `[${pe.slice(2)}]`
  }
}

/**
 * A field path as kube-apiserver prints it in conflicts, e.g. `.spec.template.spec.containers[name="web"].image`.
 *
 * @internal
 */
export const pathString = (path: Path): string => path.map(elementString).join("")

const validElement = (pe: string): boolean => {
  switch (pe.slice(0, 2)) {
    case "f:":
      return true
    case "i:":
      return /^\d+$/.test(pe.slice(2))
    case "k:":
    case "v:":
      try {
        const parsed: unknown = JSON.parse(pe.slice(2))
        return pe[0] === "v" || isObject(parsed)
      } catch {
        return false
      }
    default:
      return false
  }
}

// -------------------------------------------------------------------------------------------------
// field sets
// -------------------------------------------------------------------------------------------------

/**
 * A set of field paths, as structured-merge-diff keeps it: the path elements that are members at this
 * level, and the sets under each element. Never mutated once built (`insert` is for builders).
 *
 * @internal
 */
export class FieldSet {
  constructor(
    readonly members: Set<PathElement> = new Set(),
    readonly children: Map<PathElement, FieldSet> = new Map()
  ) {}

  /** Adds `path` (not empty) as a member. */
  insert(path: Path): this {
    let node: FieldSet = this
    for (let i = 0; i < path.length - 1; i++) {
      let next = node.children.get(path[i])
      if (next === undefined) {
        next = new FieldSet()
        node.children.set(path[i], next)
      }
      node = next
    }
    if (path.length > 0) node.members.add(path[path.length - 1])
    return this
  }

  has(path: Path): boolean {
    let node: FieldSet | undefined = this
    for (let i = 0; i < path.length - 1 && node !== undefined; i++) node = node.children.get(path[i])
    return node !== undefined && path.length > 0 && node.members.has(path[path.length - 1])
  }

  isEmpty(): boolean {
    if (this.members.size > 0) return false
    for (const child of this.children.values()) if (!child.isEmpty()) return false
    return true
  }

  union(other: FieldSet): FieldSet {
    const members = new Set(this.members)
    for (const m of other.members) members.add(m)
    const children = new Map<PathElement, FieldSet>()
    for (const [pe, child] of this.children) {
      const theirs = other.children.get(pe)
      children.set(pe, theirs === undefined ? child : child.union(theirs))
    }
    for (const [pe, child] of other.children) if (!children.has(pe)) children.set(pe, child)
    return new FieldSet(members, children)
  }

  /** The members of this set that are not members of `other`, at every level. */
  difference(other: FieldSet): FieldSet {
    const members = new Set<PathElement>()
    for (const m of this.members) if (!other.members.has(m)) members.add(m)
    const children = new Map<PathElement, FieldSet>()
    for (const [pe, child] of this.children) {
      const theirs = other.children.get(pe)
      const rest = theirs === undefined ? child : child.difference(theirs)
      if (!rest.isEmpty()) children.set(pe, rest)
    }
    return new FieldSet(members, children)
  }

  intersection(other: FieldSet): FieldSet {
    const members = new Set<PathElement>()
    for (const m of this.members) if (other.members.has(m)) members.add(m)
    const children = new Map<PathElement, FieldSet>()
    for (const [pe, child] of this.children) {
      const theirs = other.children.get(pe)
      if (theirs === undefined) continue
      const both = child.intersection(theirs)
      if (!both.isEmpty()) children.set(pe, both)
    }
    return new FieldSet(members, children)
  }

  /** This set without the members of `other` and without everything under them. */
  recursiveDifference(other: FieldSet): FieldSet {
    const members = new Set<PathElement>()
    for (const m of this.members) if (!other.members.has(m)) members.add(m)
    const children = new Map<PathElement, FieldSet>()
    for (const [pe, child] of this.children) {
      if (other.members.has(pe)) continue
      const theirs = other.children.get(pe)
      const rest = theirs === undefined ? child : child.recursiveDifference(theirs)
      if (!rest.isEmpty()) children.set(pe, rest)
    }
    return new FieldSet(members, children)
  }

  /** Only the paths under `pe` (and `pe` itself). */
  only(pe: PathElement): FieldSet {
    const out = new FieldSet()
    if (this.members.has(pe)) out.members.add(pe)
    const child = this.children.get(pe)
    if (child !== undefined && !child.isEmpty()) out.children.set(pe, child)
    return out
  }

  /**
   * Also makes members of the named fields (`f:`) that only have children, as structured-merge-diff does
   * before removing items: owning `.a.b` then also means owning `.a`.
   */
  withNamedFieldsAsMembers(): FieldSet {
    const members = new Set(this.members)
    const children = new Map<PathElement, FieldSet>()
    for (const [pe, child] of this.children) {
      if (rank(pe) === 0) members.add(pe)
      children.set(pe, child.withNamedFieldsAsMembers())
    }
    return new FieldSet(members, children)
  }

  /** Every member path: the members of a level (in order), then the paths under each child (in order). */
  paths(): Array<Path> {
    const out: Array<Path> = []
    const walk = (set: FieldSet, prefix: Path) => {
      for (const m of [...set.members].sort(compareElements)) out.push([...prefix, m])
      for (const pe of [...set.children.keys()].sort(compareElements)) walk(set.children.get(pe)!, [...prefix, pe])
    }
    walk(this, [])
    return out
  }

  /** The FieldsV1 JSON: `{}` for a member, `"."` for a member that has children, sorted. */
  toFieldsV1(): JsonObject {
    const out: JsonObject = {}
    const keys = new Set<PathElement>(this.members)
    for (const [pe, child] of this.children) if (!child.isEmpty()) keys.add(pe)
    for (const pe of [...keys].sort(compareElements)) {
      const child = this.children.get(pe)
      if (child === undefined || child.isEmpty()) {
        out[pe] = {}
      } else {
        const inner = child.toFieldsV1()
        out[pe] = this.members.has(pe) ? { ".": {}, ...inner } : inner
      }
    }
    return out
  }

  /** Parses FieldsV1 JSON; throws a message when it is not. */
  static fromFieldsV1(json: unknown): FieldSet {
    if (!isObject(json)) throw new Error("FieldsV1 must be a JSON object")
    const set = new FieldSet()
    for (const [pe, value] of Object.entries(json)) {
      if (pe === ".") continue
      if (!validElement(pe)) throw new Error(`invalid path element: ${pe}`)
      if (!isObject(value)) throw new Error(`the value of ${pe} must be a JSON object`)
      const keys = Object.keys(value)
      if (keys.length === 0 || keys.includes(".")) set.members.add(pe)
      if (keys.some((k) => k !== ".")) {
        const child = FieldSet.fromFieldsV1(value)
        if (!child.isEmpty()) set.children.set(pe, child)
      }
    }
    return set
  }
}

const setOf = (...paths: ReadonlyArray<Path>): FieldSet => {
  const set = new FieldSet()
  for (const path of paths) set.insert(path)
  return set
}

// -------------------------------------------------------------------------------------------------
// merge topology
// -------------------------------------------------------------------------------------------------

/**
 * How a list merges: atomic (replaced whole, owned as one field), a set of scalars (`v:` items) or a map
 * keyed by some of its items' fields (`k:` items).
 *
 * @internal
 */
export type ListType =
  | { readonly _tag: "atomic" }
  | { readonly _tag: "set" }
  | {
    readonly _tag: "map"
    readonly keys: ReadonlyArray<string>
    /** Key values the API defaults, used when an item omits the key (ports' `protocol: TCP`). */
    readonly defaults: Readonly<Record<string, unknown>>
  }

/**
 * The merge topology of one kind; `fields` is the path of field names from the object's root (list
 * items add nothing).
 *
 * @internal
 */
export interface Schema {
  readonly listType: (fields: ReadonlyArray<string>) => ListType
  readonly atomicMap: (fields: ReadonlyArray<string>) => boolean
  /**
   * Whether an empty object of the type already has this field (a struct that is not a pointer, a list
   * the API serialises as `null`): such a field is never added or removed, so an `Update` entry does not
   * own it as a whole (no `"."`).
   */
  readonly alwaysPresent: (fields: ReadonlyArray<string>) => boolean
}

const atomic: ListType = { _tag: "atomic" }
const set: ListType = { _tag: "set" }
const byKeys = (keys: ReadonlyArray<string>, defaults: Readonly<Record<string, unknown>> = {}): ListType => ({
  _tag: "map",
  keys,
  defaults
})

const containerLists = new Set(["containers", "initContainers", "ephemeralContainers"])

/** The lists that merge by key, by field name (`+listType=map` and `+listMapKey` in the API types). */
const mapLists: Readonly<Record<string, ListType>> = {
  containers: byKeys(["name"]),
  initContainers: byKeys(["name"]),
  ephemeralContainers: byKeys(["name"]),
  env: byKeys(["name"]),
  volumes: byKeys(["name"]),
  volumeMounts: byKeys(["mountPath"]),
  volumeDevices: byKeys(["devicePath"]),
  imagePullSecrets: byKeys(["name"]),
  hostAliases: byKeys(["ip"]),
  topologySpreadConstraints: byKeys(["topologyKey", "whenUnsatisfiable"]),
  resourceClaims: byKeys(["name"]),
  conditions: byKeys(["type"])
}

const containerPorts = byKeys(["containerPort", "protocol"], { protocol: "TCP" })
const servicePorts = byKeys(["port", "protocol"], { protocol: "TCP" })

/**
 * The merge topology of `kind`: the built-in lists keyed as in the API (`containers`, `initContainers`
 * and `ephemeralContainers` by `name`, a container's `ports` by `containerPort` and `protocol`, a
 * Service's `spec.ports` by `port` and `protocol`, `env`, `volumes`, `imagePullSecrets` by `name`,
 * `volumeMounts` by `mountPath`, `conditions` by `type`, `metadata.ownerReferences` by `uid`),
 * `metadata.finalizers` a set, every other list atomic (`tolerations`, `args`, ...); maps are granular but
 * for label selectors (`spec.selector`), which are atomic.
 *
 * @internal
 */
export const schemaFor = (kind: string): Schema => ({
  listType: (fields) => {
    const last = fields[fields.length - 1]
    const parent = fields[fields.length - 2]
    if (parent === "metadata") {
      if (last === "ownerReferences") return byKeys(["uid"])
      if (last === "finalizers") return set
      return atomic
    }
    if (last === "ports") {
      if (containerLists.has(parent)) return containerPorts
      if (kind === "Service" && fields.length === 2 && parent === "spec") return servicePorts
      return atomic
    }
    return mapLists[last] ?? atomic
  },
  atomicMap: (fields) => fields.length === 2 && fields[0] === "spec" && fields[1] === "selector",
  alwaysPresent: (fields) => {
    const n = fields.length
    if (n === 0) return false
    if (n === 1) return fields[0] === "metadata" || fields[0] === "spec" || fields[0] === "status"
    const last = fields[n - 1]
    const parent = fields[n - 2]
    if (last === "containers" && parent === "spec") return true
    if (parent === "spec" && (last === "template" || last === "jobTemplate")) return true
    if (parent === "template" || parent === "jobTemplate") return last === "metadata" || last === "spec"
    return n === 2 && parent === "spec" && (last === "strategy" || last === "updateStrategy")
  }
})

/** Why an item of a keyed list or a set has no path element. */
class ItemError {
  constructor(readonly message: string) {}
}

const itemElement = (lt: ListType, item: unknown): PathElement | ItemError => {
  if (lt._tag === "map") {
    if (item === null) return new ItemError("associative list with keys may not have a null element")
    if (!isObject(item)) return new ItemError("associative list with keys may not have non-map elements")
    const key: Array<[string, unknown]> = []
    for (const name of lt.keys) {
      if (item[name] !== undefined) key.push([name, item[name]])
      else if (lt.defaults[name] !== undefined) key.push([name, lt.defaults[name]])
    }
    if (key.length === 0) {
      return new ItemError(
        `associative list with keys has an element that omits all key fields ${
          JSON.stringify(lt.keys)
        } (and doesn't have default values for any key fields)`
      )
    }
    key.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))
    return `k:${JSON.stringify(Object.fromEntries(key))}`
  }
  if (isObject(item)) return new ItemError("associative list without keys has an element that's a map type")
  if (Array.isArray(item)) return new ItemError("associative list without keys has an element that's a list type")
  return `v:${JSON.stringify(item)}`
}

interface Keyed {
  /** The path element of each item, in order. */
  readonly elements: ReadonlyArray<PathElement>
  /** The first item of each element, undefined for the elements of several items. */
  readonly byElement: Map<PathElement, unknown>
  readonly duplicates: Set<PathElement>
}

/** The path elements of a keyed list's or a set's items; the first error otherwise. */
const keyItems = (lt: ListType, list: ReadonlyArray<unknown>): Keyed | ItemError => {
  const elements: Array<PathElement> = []
  const byElement = new Map<PathElement, unknown>()
  const duplicates = new Set<PathElement>()
  for (let i = 0; i < list.length; i++) {
    const pe = itemElement(lt, list[i])
    if (pe instanceof ItemError) return new ItemError(`element ${i}: ${pe.message}`)
    if (byElement.has(pe)) {
      duplicates.add(pe)
      byElement.set(pe, undefined)
    } else {
      byElement.set(pe, list[i])
    }
    elements.push(pe)
  }
  return { elements, byElement, duplicates }
}

// -------------------------------------------------------------------------------------------------
// the fields a value sets
// -------------------------------------------------------------------------------------------------

/**
 * The set of fields `value` sets: every scalar, null, empty map and atomic list or map; every item of a
 * keyed list or set (and what it sets). Errors (items without keys, and with `strict`, items of the same
 * key) are collected as kube-apiserver prints them, each prefixed with its path.
 *
 * @internal
 */
export const fieldSetOf = (
  value: unknown,
  schema: Schema,
  strict: boolean
): { readonly set: FieldSet; readonly errors: ReadonlyArray<string> } => {
  const out = new FieldSet()
  const errors: Array<string> = []
  const walk = (v: unknown, fields: Array<string>, path: Array<PathElement>): void => {
    if (isObject(v)) {
      if (schema.atomicMap(fields)) {
        out.insert(path)
        return
      }
      for (const key of Object.keys(v)) {
        const child = v[key]
        if (child === undefined) continue
        fields.push(key)
        path.push(field(key))
        walk(child, fields, path)
        if (child === null || isEmptyObject(child)) out.insert(path)
        fields.pop()
        path.pop()
      }
      return
    }
    if (Array.isArray(v)) {
      const lt = schema.listType(fields)
      if (lt._tag === "atomic") {
        out.insert(path)
        return
      }
      const keyed = keyItems(lt, v)
      if (keyed instanceof ItemError) {
        errors.push(`${pathString(path)}: ${keyed.message}`)
        return
      }
      for (const pe of keyed.duplicates) {
        if (strict) errors.push(`${pathString(path)}: duplicate entries for key ${elementString(pe)}`)
        out.insert([...path, pe])
      }
      for (let i = 0; i < v.length; i++) {
        const pe = keyed.elements[i]
        if (keyed.duplicates.has(pe)) continue
        path.push(pe)
        walk(v[i], fields, path)
        out.insert(path)
        path.pop()
      }
      return
    }
    if (path.length > 0) out.insert(path)
  }
  walk(value, [], [])
  return { set: out, errors }
}

// -------------------------------------------------------------------------------------------------
// merge
// -------------------------------------------------------------------------------------------------

/**
 * Merges `rhs` (an applied configuration) into `lhs` (the live object): maps key by key, keyed lists and
 * sets item by item (in structured-merge-diff's order: the applied items in their order, the other live
 * items where they were), everything else replaced. A `null` in `rhs` removes the field.
 *
 * @internal
 */
export const mergeInto = (lhs: unknown, rhs: unknown, schema: Schema): unknown => mergeValue(lhs, rhs, [], schema)

const mergeValue = (lhs: unknown, rhs: unknown, fields: Array<string>, schema: Schema): unknown => {
  if (rhs === undefined) return lhs
  if (isObject(rhs) && !schema.atomicMap(fields)) {
    const base = isObject(lhs) ? lhs : undefined
    const out: JsonObject = base === undefined ? {} : { ...base }
    for (const key of Object.keys(rhs)) {
      fields.push(key)
      const merged = mergeValue(base?.[key], rhs[key], fields, schema)
      fields.pop()
      if (merged === null || merged === undefined) delete out[key]
      else out[key] = merged
    }
    return out
  }
  if (Array.isArray(rhs) && (lhs === undefined || lhs === null || Array.isArray(lhs))) {
    const lt = schema.listType(fields)
    if (lt._tag === "atomic") return rhs
    const left: ReadonlyArray<unknown> = Array.isArray(lhs) ? lhs : []
    if (left.length === 0 && rhs.length === 0) return rhs
    return mergeList(left, rhs, lt, fields, schema)
  }
  return rhs
}

/** structured-merge-diff's list merge (`visitListItems`), its order included. */
const mergeList = (
  lhs: ReadonlyArray<unknown>,
  rhs: ReadonlyArray<unknown>,
  lt: ListType,
  fields: Array<string>,
  schema: Schema
): Array<unknown> => {
  const right = keyItems(lt, rhs)
  const left = keyItems(lt, lhs)
  // items we cannot key (reported for the applied configuration by fieldSetOf): the list is replaced
  if (right instanceof ItemError || left instanceof ItemError) return rhs.slice()
  const out: Array<unknown> = []
  const push = (merged: unknown) => {
    if (merged !== undefined && merged !== null) out.push(merged)
  }
  const shared = right.elements.filter((pe) => left.byElement.has(pe))
  let next: PathElement | undefined = shared.shift()
  const merged = new Set<PathElement>()
  const lLen = left.elements.length
  const rLen = right.elements.length
  for (let l = 0, r = 0; l < lLen || r < rLen;) {
    if (l < lLen && r < rLen) {
      const pe = left.elements[l]
      if (pe === right.elements[r]) {
        merged.add(pe)
        push(mergeValue(left.byElement.get(pe), right.byElement.get(pe), fields, schema))
        l++
        r++
        next = shared.shift()
        continue
      }
      if (right.byElement.has(pe) && next !== undefined && next !== pe) {
        // a shared item, but not the next one: it is merged when the applied list reaches it
        l++
        continue
      }
    }
    if (l < lLen) {
      const pe = left.elements[l]
      if (!right.byElement.has(pe)) {
        push(mergeValue(lhs[l], undefined, fields, schema))
        l++
        continue
      } else if (merged.has(pe)) {
        l++
      }
    }
    if (r < rLen) {
      const pe = right.elements[r]
      merged.add(pe)
      push(mergeValue(left.byElement.get(pe), right.byElement.get(pe), fields, schema))
      r++
      if (next === pe) next = shared.shift()
    }
  }
  return out
}

// -------------------------------------------------------------------------------------------------
// removal
// -------------------------------------------------------------------------------------------------

const isEmptyContainer = (u: unknown): boolean => (Array.isArray(u) ? u.length === 0 : isEmptyObject(u))

/**
 * `value` without the fields and items that are members of `remove`; a map or list emptied that way is
 * removed from its parent.
 *
 * @internal
 */
export const removeFields = (value: unknown, remove: FieldSet, schema: Schema): unknown =>
  removeValue(value, remove, [], schema)

const removeValue = (value: unknown, remove: FieldSet, fields: Array<string>, schema: Schema): unknown => {
  if (isObject(value)) {
    if (schema.atomicMap(fields)) return value
    const out: JsonObject = {}
    for (const key of Object.keys(value)) {
      const pe = field(key)
      if (remove.members.has(pe)) continue
      const sub = remove.children.get(pe)
      const child = value[key]
      if (sub === undefined || sub.isEmpty()) {
        out[key] = child
        continue
      }
      fields.push(key)
      const kept = removeValue(child, sub, fields, schema)
      fields.pop()
      if (isEmptyContainer(kept) && !isEmptyContainer(child)) continue
      out[key] = kept
    }
    return out
  }
  if (Array.isArray(value)) {
    const lt = schema.listType(fields)
    if (lt._tag === "atomic" || value.length === 0) return value
    const keyed = keyItems(lt, value)
    if (keyed instanceof ItemError) return value
    const out: Array<unknown> = []
    for (let i = 0; i < value.length; i++) {
      const pe = keyed.elements[i]
      if (remove.members.has(pe)) continue
      const sub = remove.children.get(pe)
      out.push(sub === undefined || sub.isEmpty() ? value[i] : removeValue(value[i], sub, fields, schema))
    }
    return out
  }
  return value
}

// -------------------------------------------------------------------------------------------------
// comparison
// -------------------------------------------------------------------------------------------------

/**
 * What changed from one object to another, as field sets: `added` (absent before; maps and lists added
 * are members too), `removed` (absent after), `modified` (a leaf with another value).
 *
 * @internal
 */
export interface Comparison {
  readonly added: FieldSet
  readonly removed: FieldSet
  readonly modified: FieldSet
}

/**
 * Compares `lhs` to `rhs` (`undefined`: absent); `undefined` when a keyed list has items without keys (kube
 * then cannot track the write's fields either).
 *
 * @internal
 */
export const compareObjects = (lhs: unknown, rhs: unknown, schema: Schema): Comparison | undefined => {
  const result: Comparison = { added: new FieldSet(), removed: new FieldSet(), modified: new FieldSet() }
  let failed = false
  const leaf = (l: unknown, r: unknown, path: Path) => {
    if (path.length === 0) return
    if (l === undefined) result.added.insert(path)
    else if (r === undefined) result.removed.insert(path)
    else if (!jsonEqual(l, r)) result.modified.insert(path)
  }
  const walk = (lhs: unknown, rhs: unknown, fields: Array<string>, path: Array<PathElement>): void => {
    let l = lhs
    let r = rhs
    if (l === undefined && r === undefined) return
    if (path.length > 0 && rank(path[path.length - 1]) === 0 && schema.alwaysPresent(fields)) {
      if (l === undefined) l = Array.isArray(r) ? [] : {}
      if (r === undefined) r = Array.isArray(l) ? [] : {}
    }
    const maps = (l === undefined || isObject(l)) && (r === undefined || isObject(r))
    if (maps && !schema.atomicMap(fields)) {
      const lm = l as JsonObject | undefined
      const rm = r as JsonObject | undefined
      if ((lm === undefined || isEmptyObject(lm)) && (rm === undefined || isEmptyObject(rm))) return leaf(l, r, path)
      const keys = new Set([...Object.keys(lm ?? {}), ...Object.keys(rm ?? {})])
      for (const key of keys) {
        fields.push(key)
        path.push(field(key))
        walk(lm?.[key], rm?.[key], fields, path)
        fields.pop()
        path.pop()
      }
      return containerPresence(l, r, path)
    }
    const lists = (l === undefined || Array.isArray(l)) && (r === undefined || Array.isArray(r))
    const lt = lists ? schema.listType(fields) : atomic
    if (lists && lt._tag !== "atomic") {
      const ll = (l ?? []) as ReadonlyArray<unknown>
      const rl = (r ?? []) as ReadonlyArray<unknown>
      if (ll.length === 0 && rl.length === 0) return leaf(l, r, path)
      const left = groupItems(lt, ll)
      const right = groupItems(lt, rl)
      if (left === undefined || right === undefined) {
        failed = true
        return
      }
      const elements = [...left.keys()]
      for (const pe of right.keys()) if (!left.has(pe)) elements.push(pe)
      for (const pe of elements) {
        const li = left.get(pe) ?? []
        const ri = right.get(pe) ?? []
        path.push(pe)
        if (li.length <= 1 && ri.length <= 1) {
          walk(li[0], ri[0], fields, path)
        } else if (li.length >= 2 && ri.length >= 2) {
          if (!jsonEqual(li, ri)) result.modified.insert(path)
        } else if (li.length >= 2) {
          if (ri.length > 0) walk(undefined, ri[0], fields, path)
          result.removed.insert(path)
        } else {
          if (li.length > 0) walk(li[0], undefined, fields, path)
          result.added.insert(path)
        }
        path.pop()
      }
      return containerPresence(l, r, path)
    }
    leaf(l, r, path)
  }
  const containerPresence = (l: unknown, r: unknown, path: Path) => {
    if (path.length === 0) return
    if (l === undefined) result.added.insert(path)
    else if (r === undefined) result.removed.insert(path)
  }
  walk(lhs, rhs, [], [])
  return failed ? undefined : result
}

/** The items of a keyed list or set grouped by path element, in first-seen order. */
const groupItems = (lt: ListType, list: ReadonlyArray<unknown>): Map<PathElement, Array<unknown>> | undefined => {
  const out = new Map<PathElement, Array<unknown>>()
  for (const item of list) {
    const pe = itemElement(lt, item)
    if (pe instanceof ItemError) return undefined
    const items = out.get(pe)
    if (items === undefined) out.set(pe, [item])
    else items.push(item)
  }
  return out
}

// -------------------------------------------------------------------------------------------------
// managers
// -------------------------------------------------------------------------------------------------

/** @internal */
export type Operation = "Apply" | "Update"

/**
 * One `metadata.managedFields` entry, decoded.
 *
 * @internal
 */
export interface ManagerEntry {
  readonly manager: string
  readonly operation: Operation
  readonly apiVersion: string
  readonly subresource: string | undefined
  readonly time: string | undefined
  readonly fields: FieldSet
}

/**
 * The managers of an object by their identity: manager, operation, subresource and, for `Update` only,
 * apiVersion (one `Apply` entry per manager whatever the version it applied).
 *
 * @internal
 */
export type Managers = Map<string, ManagerEntry>

/** kube-apiserver's manager identifier: the JSON of the entry's identifying fields. @internal */
export const managerIdentity = (
  manager: string,
  operation: Operation,
  apiVersion: string,
  subresource: string | undefined
): string =>
  JSON.stringify({
    ...(manager === "" ? {} : { manager }),
    operation,
    ...(operation === "Update" && apiVersion !== "" ? { apiVersion } : {}),
    ...(subresource === undefined || subresource === "" ? {} : { subresource })
  })

/**
 * Decodes `metadata.managedFields`; a message when an entry is not valid (as kube-apiserver's
 * `DecodeManagedFields`).
 *
 * @internal
 */
export const decodeManagedFields = (raw: unknown): Managers | string => {
  const out: Managers = new Map()
  if (raw === undefined || raw === null) return out
  if (!Array.isArray(raw)) return "managedFields must be a list"
  for (let i = 0; i < raw.length; i++) {
    const entry: unknown = raw[i]
    if (!isObject(entry)) return `managed fields entry ${i} is not an object`
    const operation = entry.operation
    if (operation !== "Apply" && operation !== "Update") return "operation must be `Apply` or `Update`"
    if (typeof entry.apiVersion !== "string" || entry.apiVersion === "") return "apiVersion must not be empty"
    if (entry.fieldsType === undefined || entry.fieldsType === "") {
      return `missing fieldsType in managed fields entry ${i}`
    }
    if (entry.fieldsType !== "FieldsV1") {
      return `invalid fieldsType ${JSON.stringify(entry.fieldsType)} in managed fields entry ${i}`
    }
    let fields: FieldSet
    try {
      fields = entry.fieldsV1 === undefined || entry.fieldsV1 === null
        ? new FieldSet()
        : FieldSet.fromFieldsV1(entry.fieldsV1)
    } catch (e) {
      return `error decoding set: ${(e as Error).message}`
    }
    const manager = typeof entry.manager === "string" ? entry.manager : ""
    const subresource = typeof entry.subresource === "string" && entry.subresource !== ""
      ? entry.subresource
      : undefined
    out.set(managerIdentity(manager, operation, entry.apiVersion, subresource), {
      manager,
      operation,
      apiVersion: entry.apiVersion,
      subresource,
      time: typeof entry.time === "string" ? entry.time : undefined,
      fields
    })
  }
  return out
}

const seconds = (time: string | undefined): number => {
  if (time === undefined) return 0
  const millis = Date.parse(time)
  return Number.isNaN(millis) ? 0 : Math.floor(millis / 1000)
}

const compareStrings = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0)

/**
 * The `metadata.managedFields` of `managers`, in kube-apiserver's order: by operation (`Apply` first), then
 * time, manager, apiVersion and subresource; `undefined` when there is none.
 *
 * @internal
 */
export const encodeManagedFields = (managers: Managers): Array<JsonObject> | undefined => {
  if (managers.size === 0) return undefined
  const entries = [...managers.values()].sort((p, q) =>
    compareStrings(p.operation, q.operation) ||
    seconds(p.time) - seconds(q.time) ||
    compareStrings(p.manager, q.manager) ||
    compareStrings(p.apiVersion, q.apiVersion) ||
    compareStrings(p.subresource ?? "", q.subresource ?? "")
  )
  return entries.map((e) => ({
    ...(e.manager === "" ? {} : { manager: e.manager }),
    operation: e.operation,
    apiVersion: e.apiVersion,
    ...(e.time === undefined ? {} : { time: e.time }),
    fieldsType: "FieldsV1",
    fieldsV1: e.fields.toFieldsV1(),
    ...(e.subresource === undefined ? {} : { subresource: e.subresource })
  }))
}

/** Whether a write's `managedFields` asks to clear them: `[]` or `[{}]`. */
const isReset = (raw: unknown): boolean =>
  Array.isArray(raw) && (raw.length === 0 || (raw.length === 1 && isEmptyObject(raw[0])))

/** The fields no manager owns: type and object metadata the server sets (`stripMeta`). */
const systemFields = setOf(
  ["f:apiVersion"],
  ["f:kind"],
  ["f:metadata"],
  ["f:metadata", "f:name"],
  ["f:metadata", "f:namespace"],
  ["f:metadata", "f:creationTimestamp"],
  ["f:metadata", "f:selfLink"],
  ["f:metadata", "f:uid"],
  ["f:metadata", "f:clusterName"],
  ["f:metadata", "f:generation"],
  ["f:metadata", "f:managedFields"],
  ["f:metadata", "f:resourceVersion"]
)

/**
 * Which fields a write's manager may not own because the write's endpoint resets them: `"status"` (the
 * main resource of a type with a status subresource), `"nonStatus"` (its status subresource: everything but
 * `status`), `"none"`.
 *
 * @internal
 */
export type ResetFields = "none" | "status" | "nonStatus"

const statusSet = setOf(["f:status"])

const filterReset = (set: FieldSet, reset: ResetFields): FieldSet =>
  reset === "status" ? set.recursiveDifference(statusSet) : reset === "nonStatus" ? set.only("f:status") : set

const filterComparison = (c: Comparison, reset: ResetFields): Comparison =>
  reset === "none" ? c : {
    added: filterReset(c.added, reset),
    removed: filterReset(c.removed, reset),
    modified: filterReset(c.modified, reset)
  }

/** The object without `metadata.managedFields`. */
const withoutManagedFields = (obj: JsonObject | undefined): JsonObject => {
  if (obj === undefined) return {}
  if (!isObject(obj.metadata) || !("managedFields" in obj.metadata)) return obj
  const { managedFields: _, ...metadata } = obj.metadata
  return { ...obj, metadata }
}

/** The most `Update` entries an object keeps; the oldest merge into `ancient-changes` entries. @internal */
export const maxUpdateManagers = 10

const capUpdateManagers = (managers: Managers): void => {
  const updaters = [...managers.entries()].filter(([, e]) => e.operation === "Update")
  if (updaters.length <= maxUpdateManagers) return
  updaters.sort(([a, e], [b, f]) => seconds(e.time) - seconds(f.time) || compareStrings(a, b))
  const firstOfVersion = new Map<string, string>()
  let length = updaters.length
  for (let i = 0; i < updaters.length && length > maxUpdateManagers; i++) {
    const [id, entry] = updaters[i]
    const bucket = managerIdentity("ancient-changes", "Update", entry.apiVersion, undefined)
    const first = firstOfVersion.get(entry.apiVersion)
    if (first === undefined) {
      firstOfVersion.set(entry.apiVersion, id)
      continue
    }
    if (!managers.has(bucket)) {
      const firstEntry = managers.get(first)!
      managers.delete(first)
      managers.set(bucket, { ...firstEntry, manager: "ancient-changes", subresource: undefined })
    }
    const current = managers.get(bucket)!
    managers.set(bucket, { ...current, fields: entry.fields.union(current.fields), time: entry.time })
    managers.delete(id)
    length--
  }
}

// -------------------------------------------------------------------------------------------------
// update: the ownership a non-apply write takes
// -------------------------------------------------------------------------------------------------

/**
 * Who writes: the field manager (the `fieldManager` parameter, else the user agent's prefix), the
 * subresource written, the fields that endpoint resets, and the time.
 *
 * @internal
 */
export interface Writer {
  readonly manager: string
  readonly subresource?: string | undefined
  readonly reset: ResetFields
  /** Milliseconds since the epoch. */
  readonly now: number
}

/**
 * Moves to `writer`'s `Update` entry of `managers` the fields `next` adds or changes over `live`, and drops
 * the fields it removes from every manager (structured-merge-diff's `Update`): `"failed"` when the
 * changes cannot be computed, `"unchanged"` when there are none.
 */
const trackUpdate = (
  managers: Managers,
  live: JsonObject | undefined,
  next: JsonObject,
  apiVersion: string,
  schema: Schema,
  writer: Writer
): "failed" | "unchanged" | "changed" => {
  const compared = compareObjects(withoutManagedFields(live), withoutManagedFields(next), schema)
  if (compared === undefined) return "failed"
  // the system fields (resourceVersion...) are nobody's: their changes change no ownership
  const changes = filterComparison(compared, writer.reset)
  const owned = changes.modified.union(changes.added).difference(systemFields)
  const removed = changes.removed.difference(systemFields)
  if (owned.isEmpty() && removed.isEmpty()) return "unchanged"
  for (const [id, entry] of managers) {
    const rest = entry.fields.difference(owned).difference(removed)
    if (rest.isEmpty()) managers.delete(id)
    else managers.set(id, { ...entry, fields: rest })
  }
  if (!owned.isEmpty()) {
    const manager = writer.manager === "" ? "unknown" : writer.manager
    const id = managerIdentity(manager, "Update", apiVersion, writer.subresource)
    const previous = managers.get(id)
    managers.set(id, {
      manager,
      operation: "Update",
      apiVersion,
      subresource: writer.subresource,
      time: ApiStore.formatTime(writer.now),
      fields: previous === undefined ? owned : owned.union(previous.fields)
    })
  }
  return "changed"
}

/**
 * The `metadata.managedFields` after a non-apply write (create, update, patch) of `next` over `live`
 * (`undefined` for a create), as kube-apiserver's field manager computes them: the managers are those the
 * request carries when it carries valid ones (`[]` or `[{}]` clears them; a subresource write always keeps
 * the live ones), else the live object's; every field the write adds or changes moves to the writer's
 * `Update` entry (taken from the other managers, never a conflict), removed fields leave every manager,
 * managers that own nothing disappear, and at most `maxUpdateManagers` `Update` entries are kept. An
 * update of an object that has no managers (they were cleared, or it was written without any) records
 * none: only a create or an apply starts tracking.
 *
 * Sets `next.metadata.managedFields` (`next.metadata` must be the caller's own object). When the write's
 * fields cannot be computed (a keyed list whose items lack their keys), the live ones are kept.
 *
 * @internal
 */
export const recordUpdate = (
  live: JsonObject | undefined,
  next: JsonObject,
  apiVersion: string,
  kind: string,
  writer: Writer
): void => {
  const metadata = next.metadata as JsonObject
  const liveRaw = isObject(live?.metadata) ? live.metadata.managedFields : undefined
  const requested = metadata.managedFields
  const keepLive = () => {
    if (liveRaw === undefined) delete metadata.managedFields
    else metadata.managedFields = liveRaw
  }
  let managers: Managers
  let fromLive = false
  const decodedLive = () => {
    fromLive = true
    const decoded = decodeManagedFields(liveRaw)
    return typeof decoded === "string" ? new Map() as Managers : decoded
  }
  if (writer.subresource !== undefined || requested === undefined || jsonEqual(requested, liveRaw)) {
    managers = decodedLive()
  } else if (isReset(requested)) {
    managers = new Map()
  } else {
    const decoded = decodeManagedFields(requested)
    managers = typeof decoded === "string" || decoded.size === 0 ? decodedLive() : decoded
  }
  // an update of an object whose managers were cleared does not track them again (kube's skipNonApplied)
  if (managers.size === 0 && live !== undefined) {
    delete metadata.managedFields
    return
  }
  const tracked = trackUpdate(managers, live, next, apiVersion, schemaFor(kind), writer)
  if (tracked === "failed" || (tracked === "unchanged" && fromLive)) return keepLive()
  capUpdateManagers(managers)
  const encoded = encodeManagedFields(managers)
  if (encoded === undefined) delete metadata.managedFields
  else metadata.managedFields = encoded
}

// -------------------------------------------------------------------------------------------------
// apply
// -------------------------------------------------------------------------------------------------

/** One field another manager owns with another value. @internal */
export interface Conflict {
  /** The manager's identity (`managerIdentity`). */
  readonly manager: string
  readonly path: Path
}

/** @internal */
export interface ApplyOptions {
  readonly manager: string
  readonly force: boolean
  /** The resource's `apiVersion` (the version applied). */
  readonly apiVersion: string
  readonly kind: string
  readonly subresource?: string | undefined
  readonly reset: ResetFields
  /** Milliseconds since the epoch. */
  readonly now: number
}

/** @internal */
export type ApplyOutcome =
  | {
    readonly _tag: "Applied"
    /** The merged object, with its new `managedFields`. */
    readonly object: JsonObject
  }
  | { readonly _tag: "Conflicts"; readonly conflicts: ReadonlyArray<Conflict> }
  /** The configuration (or the live object) is not valid for the merge topology: kube answers 500. */
  | { readonly _tag: "Invalid"; readonly message: string }

/** The manager of what an object had when it was first applied without managers. @internal */
export const beforeFirstApply = "before-first-apply"

/** The annotation kubectl's client-side apply keeps the last applied configuration in. @internal */
export const lastAppliedAnnotation = "kubectl.kubernetes.io/last-applied-configuration"

const lastAppliedOf = (obj: JsonObject | undefined): string | undefined => {
  const annotations = isObject(obj?.metadata) ? obj.metadata.annotations : undefined
  const value = isObject(annotations) ? annotations[lastAppliedAnnotation] : undefined
  return typeof value === "string" && value !== "" ? value : undefined
}

/** The configuration without the parts the endpoint resets (and so ignores). */
const resetConfig = (config: JsonObject, reset: ResetFields): JsonObject => {
  if (reset === "status") {
    const { status: _, ...rest } = config
    return rest
  }
  if (reset === "nonStatus") {
    const metadata = isObject(config.metadata) ? config.metadata : {}
    return {
      ...(config.apiVersion === undefined ? {} : { apiVersion: config.apiVersion }),
      ...(config.kind === undefined ? {} : { kind: config.kind }),
      metadata: {
        ...(metadata.name === undefined ? {} : { name: metadata.name }),
        ...(metadata.namespace === undefined ? {} : { namespace: metadata.namespace })
      },
      ...(config.status === undefined ? {} : { status: config.status })
    }
  }
  return config
}

/**
 * Applies `config` (a partial object, already checked to carry no `managedFields`) as `options.manager` to
 * `live` (`undefined`: the object does not exist, it is created):
 *
 * 1. the configuration is merged into the live object (`mergeInto`); the manager's `Apply` entry becomes
 *    exactly the fields the configuration sets (`fieldSetOf`, without the system fields and the fields the
 *    endpoint resets);
 * 2. fields the manager applied last time and no longer applies are removed, unless another manager owns
 *    them (structured-merge-diff's prune: remove, add back what anyone owns, keep what was not the
 *    manager's);
 * 3. each field another manager owns whose value this changes is a conflict; with `force` it moves to this
 *    manager instead; the same value is shared ownership;
 * 4. manager `kubectl` may take over what kubectl's client-side apply owned, as its last-applied annotation
 *    records it (and keeps that annotation up to date);
 * 5. the entry's time is set when the object changed; managers owning nothing are dropped.
 *
 * @internal
 */
export const applyConfig = (
  live: JsonObject | undefined,
  config: JsonObject,
  options: ApplyOptions
): ApplyOutcome => {
  const schema = schemaFor(options.kind)
  const decoded = decodeManagedFields(isObject(live?.metadata) ? live.metadata.managedFields : undefined)
  if (typeof decoded === "string") return { _tag: "Invalid", message: `failed to decode managed fields: ${decoded}` }
  if (decoded.size === 0 && live !== undefined) {
    // the fields of an object nobody manages are "before-first-apply"'s (kube's skipNonApplied)
    const tracked = trackUpdate(decoded, undefined, live, options.apiVersion, schema, {
      manager: beforeFirstApply,
      subresource: options.subresource,
      reset: options.reset,
      now: options.now
    })
    if (tracked === "failed") return { _tag: "Invalid", message: "failed to create manager for existing fields" }
  }
  const applied = resetConfig(config, options.reset)
  const { errors, set } = fieldSetOf(applied, schema, true)
  if (errors.length > 0) {
    const metadata = isObject(config.metadata) ? config.metadata : {}
    const gvk = gvkString(options.apiVersion, options.kind)
    return {
      _tag: "Invalid",
      message: `failed to create typed patch object (${String(metadata.namespace ?? "")}/${
        String(metadata.name ?? "")
      }; ${gvk}): ${errors.length === 1 ? errors[0] : `errors:\n  ${errors.join("\n  ")}`}`
    }
  }
  const attempt = (force: boolean) => applyOnce(live, applied, set, decoded, schema, options, force)
  let outcome = attempt(options.force)
  if (outcome._tag === "Conflicts" && options.manager === "kubectl") {
    const allowed = lastAppliedFields(live, options.apiVersion, schema)
    if (allowed !== undefined) {
      const remaining = outcome.conflicts.filter((c) => !allowed.has(c.path))
      outcome = remaining.length === 0 ? attempt(true) : { _tag: "Conflicts", conflicts: remaining }
    }
  }
  if (outcome._tag !== "Applied") return outcome
  const lastApplied = lastAppliedOf(live)
  if (options.manager === "kubectl" && lastApplied !== undefined) {
    // kubectl's server-side apply keeps the client-side apply annotation in step (lastAppliedUpdater)
    const metadata = outcome.object.metadata as JsonObject
    const annotations = isObject(metadata.annotations) ? { ...metadata.annotations } : {}
    annotations[lastAppliedAnnotation] = lastAppliedValue(config)
    metadata.annotations = annotations
  }
  return outcome
}

const gvkString = (apiVersion: string, kind: string): string =>
  `${apiVersion.includes("/") ? apiVersion : `/${apiVersion}`}, Kind=${kind}`

const lastAppliedValue = (config: JsonObject): string => {
  const metadata = isObject(config.metadata) ? { ...config.metadata } : undefined
  if (metadata !== undefined && isObject(metadata.annotations)) {
    const { [lastAppliedAnnotation]: _, ...annotations } = metadata.annotations
    if (Object.keys(annotations).length === 0) delete metadata.annotations
    else metadata.annotations = annotations
  }
  return JSON.stringify(metadata === undefined ? config : { ...config, metadata }) + "\n"
}

/** The fields of the last-applied annotation that still have their value in `live` (`lastAppliedManager`). */
const lastAppliedFields = (live: JsonObject | undefined, apiVersion: string, schema: Schema): FieldSet | undefined => {
  const text = lastAppliedOf(live)
  if (text === undefined) return undefined
  let lastApplied: unknown
  try {
    lastApplied = JSON.parse(text)
  } catch {
    return undefined
  }
  if (!isObject(lastApplied) || lastApplied.apiVersion !== apiVersion) return undefined
  const { errors, set } = fieldSetOf(lastApplied, schema, true)
  const compared = compareObjects(lastApplied, withoutManagedFields(live), schema)
  if (errors.length > 0 || compared === undefined) return undefined
  return set.difference(compared.modified).difference(compared.added).difference(compared.removed)
}

const applyOnce = (
  live: JsonObject | undefined,
  config: JsonObject,
  configSet: FieldSet,
  decoded: Managers,
  schema: Schema,
  options: ApplyOptions,
  force: boolean
): ApplyOutcome => {
  const managers: Managers = new Map(decoded)
  const base = withoutManagedFields(live)
  const id = managerIdentity(options.manager, "Apply", options.apiVersion, options.subresource)
  const previous = managers.get(id)
  const ownSet = filterReset(configSet, options.reset)
  managers.set(id, {
    manager: options.manager,
    operation: "Apply",
    apiVersion: options.apiVersion,
    subresource: options.subresource,
    time: previous?.time,
    fields: ownSet
  })
  let merged = mergeInto(base, config, schema) as JsonObject
  if (previous !== undefined && !previous.fields.isEmpty()) {
    merged = prune(merged, managers, previous.fields, schema)
  }
  const compared = compareObjects(base, merged, schema)
  if (compared === undefined) return { _tag: "Invalid", message: "failed to compare the live and the applied object" }
  const changes = filterComparison(compared, options.reset)
  const changed = changes.modified.union(changes.added)
  const conflicts: Array<Conflict> = []
  for (const [other, entry] of managers) {
    if (other === id) continue
    const conflicting = entry.fields.intersection(changed)
    if (!conflicting.isEmpty()) { for (const path of conflicting.paths()) conflicts.push({ manager: other, path }) }
  }
  if (!force && conflicts.length > 0) {
    conflicts.sort((a, b) => compareStrings(a.manager, b.manager))
    return { _tag: "Conflicts", conflicts }
  }
  for (const [other, entry] of managers) {
    if (other === id) continue
    const rest = entry.fields.difference(changed).difference(changes.removed)
    if (rest.isEmpty()) managers.delete(other)
    else managers.set(other, { ...entry, fields: rest })
  }
  const self = managers.get(id)!
  const stripped = self.fields.difference(systemFields)
  const objectChanged = !jsonEqual(base, merged)
  if (stripped.isEmpty()) managers.delete(id)
  else {managers.set(id, {
      ...self,
      fields: stripped,
      time: objectChanged ? ApiStore.formatTime(options.now) : self.time
    })}
  capUpdateManagers(managers)
  const metadata: JsonObject = isObject(merged.metadata) ? { ...merged.metadata } : {}
  const encoded = encodeManagedFields(managers)
  if (encoded === undefined) delete metadata.managedFields
  else metadata.managedFields = encoded
  return { _tag: "Applied", object: { ...merged, metadata } }
}

/**
 * structured-merge-diff's prune: removes what `last` (the applier's previous set) had and the applier's new
 * set (already in `managers`) no longer has, unless another manager owns it.
 */
const prune = (merged: JsonObject, managers: Managers, last: FieldSet, schema: Schema): JsonObject => {
  const lastNamed = last.withNamedFieldsAsMembers()
  let pruned = removeFields(merged, lastNamed, schema)
  // add back what anyone owns
  let managed = new FieldSet()
  for (const entry of managers.values()) managed = managed.union(entry.fields)
  const mergedSet = fieldSetOf(merged, schema, false).set.withNamedFieldsAsMembers()
  const prunedSet = fieldSetOf(pruned, schema, false).set.withNamedFieldsAsMembers()
  pruned = removeFields(
    merged,
    mergedSet.difference(prunedSet.union(managed.withNamedFieldsAsMembers())),
    schema
  ) as JsonObject
  // and what was not the applier's (unowned fields stay)
  const kept = fieldSetOf(pruned, schema, false).set.withNamedFieldsAsMembers()
  return removeFields(merged, mergedSet.difference(kept).intersection(lastNamed), schema) as JsonObject
}

// -------------------------------------------------------------------------------------------------
// statuses
// -------------------------------------------------------------------------------------------------

const printManager = (identity: string): string => {
  let entry: JsonObject
  try {
    entry = JSON.parse(identity) as JsonObject
  } catch {
    return JSON.stringify(identity)
  }
  let out = JSON.stringify(typeof entry.manager === "string" ? entry.manager : "")
  if (typeof entry.subresource === "string" && entry.subresource !== "") {
    out = `${out} with subresource ${JSON.stringify(entry.subresource)}`
  }
  if (entry.operation === "Update") out = `${out} using ${String(entry.apiVersion)}`
  return out
}

/**
 * 409 for apply conflicts: one cause per field (`reason: FieldManagerConflict`, `field`, `message`), and
 * kube-apiserver's message: `Apply failed with 1 conflict: conflict with "<manager>" using <apiVersion>:
 * <path>`, or, for several, one `conflicts with "<manager>":` line per manager (sorted) followed by one
 * `- <path>` line per field.
 *
 * @internal
 */
export const conflictStatus = (conflicts: ReadonlyArray<Conflict>): Status => {
  const causes = conflicts.map((c) => ({
    reason: "FieldManagerConflict",
    message: `conflict with ${printManager(c.manager)}`,
    field: pathString(c.path)
  }))
  let message: string
  if (conflicts.length === 1) {
    message = `Apply failed with 1 conflict: conflict with ${printManager(conflicts[0].manager)}: ${
      pathString(conflicts[0].path)
    }`
  } else {
    const byManager = new Map<string, Array<Path>>()
    for (const c of conflicts) {
      const paths = byManager.get(c.manager)
      if (paths === undefined) byManager.set(c.manager, [c.path])
      else paths.push(c.path)
    }
    const lines: Array<string> = []
    for (const manager of [...byManager.keys()].sort(compareStrings)) {
      lines.push(`conflicts with ${printManager(manager)}:`)
      for (const path of byManager.get(manager)!) lines.push(`- ${pathString(path)}`)
    }
    message = `Apply failed with ${conflicts.length} conflicts: ${lines.join("\n")}`
  }
  return failureStatus(409, "Conflict", message, { causes })
}

/**
 * The write options kube-apiserver checks (`ValidatePatchOptions`, `ValidateFieldManager`): `kind` is
 * `PatchOptions`, `CreateOptions` or `UpdateOptions`.
 *
 * @internal
 */
export interface WriteOptions {
  readonly kind: "PatchOptions" | "CreateOptions" | "UpdateOptions"
  readonly apply: boolean
  /** The `fieldManager` query parameter. */
  readonly fieldManager: string | undefined
  /** The `force` query parameter. */
  readonly force: string | undefined
  readonly userAgent: string | undefined
}

/** The field manager's length limit. @internal */
export const fieldManagerMaxLength = 128

const isPrintable = (c: string): boolean => !/[\p{C}\p{Z}]/u.test(c) || c === " "

/**
 * kube-apiserver's `prefixFromUserAgent`: the user agent up to its first `/`, without unprintable
 * characters, at most 128 bytes.
 *
 * @internal
 */
export const managerFromUserAgent = (userAgent: string | undefined): string => {
  let out = ""
  for (const c of (userAgent ?? "").split("/")[0]) {
    if (!isPrintable(c)) continue
    if (Buffer.byteLength(out + c) > fieldManagerMaxLength) break
    out += c
  }
  return out
}

const parseBool = (text: string): boolean | undefined => {
  switch (text) {
    case "1":
    case "t":
    case "T":
    case "true":
    case "TRUE":
    case "True":
      return true
    case "0":
    case "f":
    case "F":
    case "false":
    case "FALSE":
    case "False":
      return false
    default:
      return undefined
  }
}

const optionsInvalid = (kind: string, causes: ReadonlyArray<{ reason: string; field: string; message: string }>) => {
  const texts = causes.map((c) => `${c.field}: ${c.message}`)
  return failureStatus(
    422,
    "Invalid",
    `${kind}.meta.k8s.io "" is invalid: ${texts.length === 1 ? texts[0] : `[${texts.join(", ")}]`}`,
    { group: "meta.k8s.io", kind, causes: causes.map((c) => ({ ...c })) }
  )
}

/**
 * The write's field manager and `force`, or the 400/422 kube-apiserver answers: apply requires a
 * `fieldManager`; `force` is for apply only; a manager is at most 128 bytes of printable characters; a
 * non-apply write without one is managed by its user agent's prefix.
 *
 * @internal
 */
export const writeOptions = (
  options: WriteOptions
): Result.Result<{ readonly manager: string; readonly force: boolean }, Status> => {
  let force = false
  if (options.force !== undefined && options.kind === "PatchOptions") {
    const parsed = parseBool(options.force)
    if (parsed === undefined) {
      return Result.fail(
        failureStatus(400, "BadRequest", `strconv.ParseBool: parsing ${JSON.stringify(options.force)}: invalid syntax`)
      )
    }
    force = parsed
  }
  const manager = options.fieldManager ?? ""
  const causes: Array<{ reason: string; field: string; message: string }> = []
  if (options.apply) {
    if (manager === "") {
      causes.push({
        reason: "FieldValueRequired",
        field: "fieldManager",
        message: "Required value: is required for apply patch"
      })
    }
  } else if (options.force !== undefined && options.kind === "PatchOptions") {
    causes.push({
      reason: "FieldValueForbidden",
      field: "force",
      message: "Forbidden: may not be specified for non-apply patch"
    })
  }
  if (Buffer.byteLength(manager) > fieldManagerMaxLength) {
    causes.push({
      reason: "FieldValueTooLong",
      field: "fieldManager",
      message: `Too long: may not be more than ${fieldManagerMaxLength} bytes`
    })
  }
  let position = 0
  for (const c of manager) {
    if (!isPrintable(c)) {
      const code = c.codePointAt(0)!.toString(16).toUpperCase().padStart(4, "0")
      causes.push({
        reason: "FieldValueInvalid",
        field: "fieldManager",
        message: `Invalid value: ${JSON.stringify(manager)}: invalid character U+${code} (at position ${position})`
      })
    }
    position += Buffer.byteLength(c)
  }
  if (causes.length > 0) return Result.fail(optionsInvalid(options.kind, causes))
  return Result.succeed({ manager: manager !== "" ? manager : managerFromUserAgent(options.userAgent), force })
}

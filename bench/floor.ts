/**
 * The floor: the same HTTP requests as the informers, with nothing but node:http (one keep-alive agent),
 * a line split, `JSON.parse` and a `Map` upsert keyed by namespace/name, then N plain callbacks.
 *
 * LIST in pages of 500 (`limit`/`continue`), then WATCH from the list's resourceVersion with bookmarks.
 * A clean end of the watch re-watches from the last resourceVersion; an `ERROR` 410 (or HTTP 410)
 * relists. No retries, no backoff, no validation: any other failure fails the session.
 */
import * as Http from "node:http"
import type { SessionJob } from "./protocol.js"
import { deferred } from "./protocol.js"
import type { Client, Counters } from "./session.js"

interface Obj {
  readonly metadata: { readonly name: string; readonly namespace?: string; readonly resourceVersion: string }
}

interface ListBody {
  readonly metadata: { readonly resourceVersion: string; readonly continue?: string }
  readonly items: ReadonlyArray<Obj>
}

const keyOf = (obj: Obj) =>
  obj.metadata.namespace === undefined || obj.metadata.namespace === ""
    ? obj.metadata.name
    : `${obj.metadata.namespace}/${obj.metadata.name}`

export const makeFloor = (job: SessionJob, counters: Counters): Client => {
  const agent = new Http.Agent({ keepAlive: true, maxSockets: 8 })
  const cache = new Map<string, Obj>()
  const handlers = job.handlers
  let resourceVersion = ""
  let listedResourceVersion = ""
  let stopped = false
  let request: Http.ClientRequest | undefined
  const failure = deferred<never>()

  const get = (path: string) =>
    new Promise<Http.IncomingMessage>((resolve, reject) => {
      request = Http.get(`${job.serverUrl}${path}`, { agent, headers: { accept: "application/json" } }, resolve)
      request.on("error", reject)
    })

  const listPage = async (cont: string | undefined): Promise<ListBody> => {
    const query = cont === undefined ? "?limit=500" : `?limit=500&continue=${encodeURIComponent(cont)}`
    const response = await get(`/api/v1/pods${query}`)
    const chunks: Array<Buffer> = []
    for await (const chunk of response) chunks.push(chunk as Buffer)
    const text = Buffer.concat(chunks).toString("utf8")
    if (response.statusCode !== 200) throw new Error(`LIST: HTTP ${response.statusCode}: ${text.slice(0, 200)}`)
    return JSON.parse(text) as ListBody
  }

  const upsert = (obj: Obj, added: boolean) => {
    if (added) { for (let h = 0; h < handlers; h++) counters.add(h) }
    else for (let h = 0; h < handlers; h++) counters.update(h)
  }

  /** Paged LIST; replaces the cache (objects not listed are dropped). */
  const list = async () => {
    const listed = new Set<string>()
    let cont: string | undefined
    let rv = ""
    do {
      const page = await listPage(cont)
      for (const obj of page.items) {
        const key = keyOf(obj)
        listed.add(key)
        const old = cache.get(key)
        cache.set(key, obj)
        // an unchanged object is a no-op (the same resourceVersion), as in the informers
        if (old === undefined) upsert(obj, true)
        else if (old.metadata.resourceVersion !== obj.metadata.resourceVersion) upsert(obj, false)
      }
      rv = page.metadata.resourceVersion
      cont = page.metadata.continue === undefined || page.metadata.continue === "" ? undefined : page.metadata.continue
    } while (cont !== undefined)
    for (const key of cache.keys()) if (!listed.has(key)) cache.delete(key)
    resourceVersion = rv
    listedResourceVersion = rv
  }

  /** One watch; resolves with "gone" (relist) or "ended" (re-watch). */
  const watch = async (): Promise<"gone" | "ended"> => {
    const response = await get(
      `/api/v1/pods?watch=true&resourceVersion=${resourceVersion}&allowWatchBookmarks=true&timeoutSeconds=1800`
    )
    if (response.statusCode === 410) {
      response.resume()
      return "gone"
    }
    if (response.statusCode !== 200) throw new Error(`WATCH: HTTP ${response.statusCode}`)
    response.setEncoding("utf8")
    let rest = ""
    let gone = false
    for await (const chunk of response) {
      const text = rest === "" ? chunk as string : rest + (chunk as string)
      let start = 0
      let end = text.indexOf("\n")
      while (end >= 0) {
        if (end > start) {
          const event = JSON.parse(text.slice(start, end)) as { type: string; object: Obj & { code?: number } }
          const obj = event.object
          switch (event.type) {
            case "ADDED":
            case "MODIFIED": {
              const key = keyOf(obj)
              const old = cache.get(key)
              cache.set(key, obj)
              upsert(obj, old === undefined)
              resourceVersion = obj.metadata.resourceVersion
              break
            }
            case "DELETED":
              cache.delete(keyOf(obj))
              resourceVersion = obj.metadata.resourceVersion
              break
            case "BOOKMARK":
              resourceVersion = obj.metadata.resourceVersion
              break
            case "ERROR":
              if (obj.code === 410) gone = true
              else throw new Error(`WATCH: ERROR event ${JSON.stringify(obj)}`)
          }
        }
        start = end + 1
        end = text.indexOf("\n", start)
      }
      rest = start === text.length ? "" : text.slice(start)
    }
    return gone ? "gone" : "ended"
  }

  const loop = async () => {
    await list()
    while (!stopped) {
      const outcome = await watch()
      if (stopped) return
      if (outcome === "gone") await list()
    }
  }

  return {
    start: async () => {
      loop().catch((error: unknown) => {
        if (!stopped) failure.reject(error)
      })
    },
    failure: failure.promise,
    relistApplied: (rv) => Number(listedResourceVersion) >= Number(rv),
    stop: async () => {
      stopped = true
      request?.destroy()
      agent.destroy()
    }
  }
}

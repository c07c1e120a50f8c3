// @ts-check
/**
 * The floor of the CLI session: `effect-informers watch pods --server URL --output events` with nothing but
 * node:http (one keep-alive agent), a line split, `JSON.parse` and a `Map`: the same lines on stdout
 * (`EXISTING`/`ADDED`/`MODIFIED`/`DELETED` padded to 8, then `namespace/name rv=N`, as the CLI's
 * `describeObject` prints them), written in batches: one write per LIST page and one per chunk of the watch.
 *
 * Plain JavaScript, run with `node bench/cliFloor.mjs URL` (no loader: the CLI it is compared with is the
 * built binary). LIST in pages of 500, then WATCH with bookmarks; a clean end re-watches, a 410 relists
 * (printing what changed). No retries: any other failure is one line on stderr and exit code 1.
 */
import * as Http from "node:http"

const server = process.argv[2]
if (server === undefined) {
  process.stderr.write("usage: node bench/cliFloor.mjs SERVER_URL\n")
  process.exit(2)
}

process.stdout.on("error", (error) => {
  // the reader has gone: end quietly, as the CLI does
  if (/** @type {NodeJS.ErrnoException} */ (error).code === "EPIPE") process.exit(0)
  throw error
})

const agent = new Http.Agent({ keepAlive: true, maxSockets: 4 })
/** @type {Map<string, any>} key -> the object (kept as an informer's cache keeps it) */
const cache = new Map()
let resourceVersion = ""

/** @param {{ metadata: { name: string, namespace?: string } }} obj */
const keyOf = (obj) =>
  obj.metadata.namespace === undefined || obj.metadata.namespace === ""
    ? obj.metadata.name
    : `${obj.metadata.namespace}/${obj.metadata.name}`

/** @param {string} type @param {string} key @param {string} rv */
const line = (type, key, rv) => `${type.padEnd(8)} ${key} rv=${rv}\n`

/** @param {string} path @returns {Promise<Http.IncomingMessage>} */
const get = (path) =>
  new Promise((resolve, reject) => {
    const request = Http.get(`${server}${path}`, { agent, headers: { accept: "application/json" } }, resolve)
    request.on("error", reject)
  })

/** Paged LIST; `initial`: the first one (EXISTING lines), else a relist (what changed). */
const list = async (/** @type {boolean} */ initial) => {
  const listed = new Set()
  /** @type {string | undefined} */
  let cont
  do {
    const query = cont === undefined ? "?limit=500" : `?limit=500&continue=${encodeURIComponent(cont)}`
    const response = await get(`/api/v1/pods${query}`)
    const chunks = []
    for await (const chunk of response) chunks.push(chunk)
    const text = Buffer.concat(chunks).toString("utf8")
    if (response.statusCode !== 200) throw new Error(`LIST: HTTP ${response.statusCode}: ${text.slice(0, 200)}`)
    const page = JSON.parse(text)
    let out = ""
    for (const obj of page.items) {
      const key = keyOf(obj)
      const rv = obj.metadata.resourceVersion
      listed.add(key)
      const old = cache.get(key)
      cache.set(key, obj)
      if (initial) out += line("EXISTING", key, rv)
      else if (old === undefined) out += line("ADDED", key, rv)
      else if (old.metadata.resourceVersion !== rv) out += line("MODIFIED", key, rv)
    }
    if (out !== "") process.stdout.write(out)
    resourceVersion = page.metadata.resourceVersion
    cont = page.metadata.continue === undefined || page.metadata.continue === "" ? undefined : page.metadata.continue
  } while (cont !== undefined)
  let out = ""
  for (const [key, obj] of cache) {
    if (!listed.has(key)) {
      cache.delete(key)
      out += line("DELETED", key, obj.metadata.resourceVersion)
    }
  }
  if (out !== "") process.stdout.write(out)
}

/** One watch: "gone" (relist) or "ended" (re-watch). */
const watch = async () => {
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
    const text = rest === "" ? chunk : rest + chunk
    let out = ""
    let start = 0
    let end = text.indexOf("\n")
    while (end >= 0) {
      if (end > start) {
        const event = JSON.parse(text.slice(start, end))
        const obj = event.object
        switch (event.type) {
          case "ADDED":
          case "MODIFIED": {
            const key = keyOf(obj)
            const old = cache.get(key)
            resourceVersion = obj.metadata.resourceVersion
            cache.set(key, obj)
            out += line(old === undefined ? "ADDED" : "MODIFIED", key, resourceVersion)
            break
          }
          case "DELETED": {
            const key = keyOf(obj)
            resourceVersion = obj.metadata.resourceVersion
            cache.delete(key)
            out += line("DELETED", key, resourceVersion)
            break
          }
          case "BOOKMARK":
            resourceVersion = obj.metadata.resourceVersion
            break
          case "ERROR":
            if (obj.code === 410) gone = true
            else throw new Error(`WATCH: ERROR event ${JSON.stringify(obj).slice(0, 200)}`)
        }
      }
      start = end + 1
      end = text.indexOf("\n", start)
    }
    rest = start === text.length ? "" : text.slice(start)
    if (out !== "") process.stdout.write(out)
  }
  return gone ? "gone" : "ended"
}

const main = async () => {
  await list(true)
  for (;;) {
    if ((await watch()) === "gone") await list(false)
  }
}

main().catch((/** @type {unknown} */ error) => {
  process.stderr.write(`cliFloor: ${error instanceof Error ? error.message : String(error)}\n`)
  process.exit(1)
})

import * as ApiServer from "@effect-informers/testkit/ApiServer"
import * as Resource from "effect-informers/Resource"
import * as Effect from "effect/Effect"
import { execFileSync } from "node:child_process"
const run = (url: string, args: string[]) => {
  try { return "OK " + execFileSync("kubectl", ["--server", url, ...args], { timeout: 20000, encoding: "utf8", env: { ...process.env, KUBECONFIG: "/nonexistent" }, stdio: ["pipe", "pipe", "pipe"] }).trim() }
  catch (e: any) { return "FAIL " + String(e.stderr ?? e.message).trim().slice(0, 300) }
}
Effect.runPromise(Effect.scoped(Effect.gen(function*() {
  const server = yield* ApiServer.make()
  yield* server.objects.create(Resource.namespaces, { metadata: { name: "t1" } })
  console.log(run(server.url, ["label", "namespace", "t1", "a=b", "--overwrite"]))
  yield* server.faults.inject({ _tag: "ServerError", count: 2, status: 503 })
  console.log(run(server.url, ["label", "namespace", "t1", "a=c", "--overwrite"]))
  console.log(run(server.url, ["label", "namespace", "t1", "a=d", "--overwrite"]))
  yield* server.faults.inject({ _tag: "DropWatches" })
  console.log(run(server.url, ["label", "namespace", "t1", "a=e", "--overwrite"]))
  yield* server.faults.inject({ _tag: "TooManyRequests", count: 1, retryAfterSeconds: 1 })
  console.log(run(server.url, ["label", "namespace", "t1", "a=f", "--overwrite"]))
  console.log(run(server.url, ["label", "namespace", "t1", "a=g", "--overwrite"]))
})))

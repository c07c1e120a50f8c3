import { assert, describe, it } from "@effect/vitest"
import { Duration, Option } from "effect"
import * as ListerWatcher from "../src/ListerWatcher.js"
import * as Wire from "../src/Wire.js"

describe("ListerWatcher.fromStatus", () => {
  it("a ResourceVersionTooLarge cause alone (JSON key `reason`, as the API sends it) is recognised", () => {
    const status = Wire.failureStatus(504, "Timeout", "Timeout: request did not complete", {
      causes: [{ reason: "ResourceVersionTooLarge", message: "" }]
    })
    assert.strictEqual(ListerWatcher.fromStatus(status)._tag, "ResourceVersionTooLarge")
  })

  it("the 'Too large resource version' message of older servers is recognised", () => {
    const status = Wire.failureStatus(504, "Timeout", "Timeout: Too large resource version: 20, current: 10")
    assert.strictEqual(ListerWatcher.fromStatus(status)._tag, "ResourceVersionTooLarge")
  })

  it("410 and reason Expired are Gone", () => {
    assert.strictEqual(ListerWatcher.fromStatus(Wire.failureStatus(410, "Gone", "gone"))._tag, "Gone")
    assert.strictEqual(ListerWatcher.fromStatus({ reason: "Expired", message: "too old" }, 500)._tag, "Gone")
  })

  it("429: Retry-After header wins over details.retryAfterSeconds; none when absent", () => {
    const status = Wire.failureStatus(429, "TooManyRequests", "slow down", { retryAfterSeconds: 3 })
    const fromHeader = ListerWatcher.fromStatus(status, 429, "7")
    const fromDetails = ListerWatcher.fromStatus(status, 429)
    const none = ListerWatcher.fromStatus(Wire.failureStatus(429, "TooManyRequests", "slow down"))
    assert.isTrue(fromHeader._tag === "TooManyRequests" && Option.contains(fromHeader.retryAfter, Duration.seconds(7)))
    assert.isTrue(
      fromDetails._tag === "TooManyRequests" && Option.contains(fromDetails.retryAfter, Duration.seconds(3))
    )
    assert.isTrue(none._tag === "TooManyRequests" && Option.isNone(none.retryAfter))
  })

  it("401, 403, 404 and the rest map to their tags; the HTTP code is used when the body has none", () => {
    assert.strictEqual(ListerWatcher.fromStatus({}, 401)._tag, "Unauthorized")
    assert.strictEqual(ListerWatcher.fromStatus({}, 403)._tag, "Forbidden")
    assert.strictEqual(ListerWatcher.fromStatus({}, 404)._tag, "NotFound")
    const invalid = ListerWatcher.fromStatus(Wire.failureStatus(422, "Invalid", "bad"))
    assert.isTrue(invalid._tag === "ServerError" && invalid.code === 422 && invalid.reason === "Invalid")
    const internal = ListerWatcher.fromStatus({}, 503)
    assert.isTrue(internal._tag === "ServerError" && internal.code === 503 && internal.reason === "InternalError")
    assert.isTrue(ListerWatcher.isListerWatcherError(internal))
  })
})

import { assert, describe, it } from "@effect/vitest"
import { Duration, Option } from "effect"
import * as ApiError from "../../src/ApiError.js"
import * as Wire from "../../src/Wire.js"

describe("ApiError.fromStatus", () => {
  it("a ResourceVersionTooLarge cause alone (JSON key `reason`, as the API sends it) is recognised", () => {
    const status = Wire.failureStatus(504, "Timeout", "Timeout: request did not complete", {
      causes: [{ reason: "ResourceVersionTooLarge", message: "" }]
    })
    assert.strictEqual(ApiError.fromStatus(status).reason, "ResourceVersionTooLarge")
  })

  it("the 'Too large resource version' message of older servers is recognised", () => {
    const status = Wire.failureStatus(504, "Timeout", "Timeout: Too large resource version: 20, current: 10")
    assert.strictEqual(ApiError.fromStatus(status).reason, "ResourceVersionTooLarge")
  })

  it("410 and reason Expired are Gone", () => {
    assert.strictEqual(ApiError.fromStatus(Wire.failureStatus(410, "Gone", "gone")).reason, "Gone")
    assert.strictEqual(ApiError.fromStatus({ reason: "Expired", message: "too old" }, 500).reason, "Gone")
  })

  it("429: Retry-After header wins over details.retryAfterSeconds; none when absent", () => {
    const status = Wire.failureStatus(429, "TooManyRequests", "slow down", { retryAfterSeconds: 3 })
    const fromHeader = ApiError.fromStatus(status, 429, "7")
    const fromDetails = ApiError.fromStatus(status, 429)
    const none = ApiError.fromStatus(Wire.failureStatus(429, "TooManyRequests", "slow down"))
    assert.isTrue(
      fromHeader.reason === "TooManyRequests" && Option.contains(fromHeader.retryAfter, Duration.seconds(7))
    )
    assert.isTrue(
      fromDetails.reason === "TooManyRequests" && Option.contains(fromDetails.retryAfter, Duration.seconds(3))
    )
    assert.isTrue(none.reason === "TooManyRequests" && Option.isNone(none.retryAfter))
  })

  it("a 503's retryAfterSeconds is kept too (client-go's SuggestsClientDelay)", () => {
    const error = ApiError.fromStatus(Wire.failureStatus(503, "ServiceUnavailable", "later", { retryAfterSeconds: 2 }))
    assert.strictEqual(error.reason, "ServerError")
    assert.isTrue(Option.contains(error.retryAfter, Duration.seconds(2)))
  })

  it.each(
    [
      [{}, 400, "BadRequest"],
      [{}, 401, "Unauthorized"],
      [{}, 403, "Forbidden"],
      [{}, 404, "NotFound"],
      [{}, 405, "MethodNotAllowed"],
      [{}, 406, "NotAcceptable"],
      [{ reason: "Conflict" }, 409, "Conflict"],
      [{ reason: "AlreadyExists" }, 409, "AlreadyExists"],
      [{}, 409, "Conflict"],
      [{}, 413, "RequestEntityTooLarge"],
      [{}, 415, "UnsupportedMediaType"],
      [{ reason: "Invalid" }, 422, "Invalid"],
      [{ reason: "Timeout" }, 500, "Timeout"],
      [{ reason: "ServerTimeout" }, 500, "Timeout"],
      [{}, 504, "Timeout"],
      [{}, 500, "ServerError"],
      [{}, 503, "ServerError"],
      [{}, 418, "ServerError"]
    ] as const
  )("%j with HTTP %i is %s; the HTTP code is used when the body has none", (status, code, reason) => {
    const error = ApiError.fromStatus(status, code)
    assert.strictEqual(error._tag, "StatusError")
    assert.strictEqual(error.reason, reason)
    assert.strictEqual(error.code, code)
    assert.isTrue(ApiError.isApiError(error))
  })

  it("the body's code wins over the response's; causes are the Status's", () => {
    const error = ApiError.fromStatus(
      Wire.failureStatus(422, "Invalid", "bad", { causes: [{ reason: "FieldValueRequired", field: "metadata.name" }] }),
      500
    )
    assert.strictEqual(error.code, 422)
    assert.strictEqual(error.reason, "Invalid")
    assert.deepStrictEqual(error.causes.map((cause) => cause.field), ["metadata.name"])
    assert.strictEqual(error.message, "bad")
  })

  it("reasonForCode names the Kubernetes reason of a code, InternalError otherwise", () => {
    assert.strictEqual(ApiError.reasonForCode(410), "Expired")
    assert.strictEqual(ApiError.reasonForCode(422), "Invalid")
    assert.strictEqual(ApiError.reasonForCode(599), "InternalError")
  })
})

describe("ApiError families", () => {
  it("tags equal class names; every family carries the type id", () => {
    const errors: ReadonlyArray<ApiError.ApiError> = [
      ApiError.fromStatus({}, 500),
      new ApiError.TransportError({ reason: "Timeout", message: "no bytes" }),
      new ApiError.DecodeError({ reason: "Malformed", message: "not JSON" })
    ]
    assert.deepStrictEqual(errors.map((error) => error._tag), ["StatusError", "TransportError", "DecodeError"])
    assert.deepStrictEqual(errors.map((error) => error.constructor.name), [
      "StatusError",
      "TransportError",
      "DecodeError"
    ])
    assert.isTrue(errors.every(ApiError.isApiError))
    assert.isFalse(ApiError.isApiError(new Error("x")))
  })
})

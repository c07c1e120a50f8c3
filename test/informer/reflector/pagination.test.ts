/**
 * Reflector: paginated lists.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as FakeListerWatcher from "../../../src/FakeListerWatcher.js"
import { listPageSize } from "../../../src/internal/informer/reflectorPolicy.js"
import * as Reflector from "../../../src/Reflector.js"
import { advance, gone, pod, podsNamed, serverError, settle } from "../../fixtures/index.js"
import type { LW } from "./fixtures.js"
import { errorLog, kinds, listsOf, recordingStore } from "./fixtures.js"

describe("Reflector", () => {
  describe("pagination", () => {
    it.effect("pageSize 4 with 10 objects: three pages following continue, without resourceVersion after the first", () =>
      Effect.gen(function*() {
        const fake = yield* FakeListerWatcher.make({ initial: podsNamed("p", 10) })
        const { calls, names, store } = yield* recordingStore()
        yield* Reflector.make(fake, store, { watchList: false, pageSize: 4 })
        yield* settle
        const lists = listsOf(yield* fake.requests)
        assert.strictEqual(lists.length, 3)
        assert.deepStrictEqual(lists[0], { resourceVersion: "", limit: 4 })
        for (const page of lists.slice(1)) {
          assert.deepStrictEqual(Object.keys(page).sort(), ["continue", "limit"])
          assert.strictEqual(page.limit, 4)
          assert.isTrue(page.continue !== undefined && page.continue !== "")
        }
        assert.notStrictEqual(lists[1].continue, lists[2].continue)
        assert.strictEqual((yield* names).length, 10)
        assert.deepStrictEqual(calls.replace.map((r) => r.resourceVersion), ["10"])
        assert.deepStrictEqual(kinds(yield* fake.requests), ["List", "List", "List", "Watch"])
      }))

    it.effect("TestReflectorWatchListPageSize: a relist at \"10\" with pageSize 4 pages too", () =>
      Effect.gen(function*() {
        const fake = yield* FakeListerWatcher.make({ initial: podsNamed("p", 10) })
        const { names, store } = yield* recordingStore()
        yield* Reflector.make(fake, store, { watchList: false, pageSize: 4 })
        yield* settle
        yield* fake.clearRequests
        yield* fake.failWatches(serverError())
        yield* advance("2 seconds")
        const lists = listsOf(yield* fake.requests)
        assert.deepStrictEqual(lists.map((o) => [o.resourceVersion, o.limit, o.continue !== undefined]), [
          ["10", 4, false],
          [undefined, 4, true],
          [undefined, 4, true]
        ])
        assert.strictEqual((yield* names).length, 10)
      }))

    it.effect("TestReflectorFullListIfExpired: an expired continue token falls back to one full list at the original version", () =>
      Effect.gen(function*() {
        const fake = yield* FakeListerWatcher.make({ initial: podsNamed("p", 10) })
        let expireAfterFirstPage = false
        const lw: LW = {
          ...fake,
          list: (options) =>
            fake.list(options).pipe(
              Effect.tap((page) =>
                expireAfterFirstPage && options.continue === undefined && page.continue !== undefined
                  ? fake.expireContinueTokens
                  : Effect.void
              )
            )
        }
        const { calls, names, store } = yield* recordingStore()
        const errors = errorLog()
        yield* Reflector.make(lw, store, {
          watchList: false,
          initialList: "any",
          pageSize: 4,
          onError: errors.onError
        })
        yield* settle
        assert.strictEqual(listsOf(yield* fake.requests).length, 3)
        yield* fake.clearRequests
        yield* fake.addDropWatch(pod("p011"))
        expireAfterFirstPage = true
        yield* fake.failWatches(serverError())
        yield* advance("2 seconds")
        const lists = listsOf(yield* fake.requests)
        assert.deepStrictEqual(lists.map((o) => o.resourceVersion), ["10", undefined, "10"])
        assert.deepStrictEqual(lists[2], { resourceVersion: "10" })
        assert.strictEqual((yield* names).length, 11)
        assert.deepStrictEqual(calls.replace.map((r) => [r.resourceVersion, r.names.length]), [["10", 10], ["11", 11]])
        // The expired token is handled inside the list: only the watch failure was an error.
        assert.deepStrictEqual(errors.summary(), ["watch:StatusError(ServerError)"])
      }))

    // client-go's policy: a relist at a concrete version carries no limit, so that the API server's watch
    // cache serves it instead of etcd.
    it.effect("TestReflectorNotPaginatingNotConsistentReads: a relist at a concrete version is not paginated", () =>
      Effect.gen(function*() {
        const fake = yield* FakeListerWatcher.make({ initial: podsNamed("p", 10) })
        const { store } = yield* recordingStore()
        yield* Reflector.make(fake, store, { watchList: false })
        yield* settle
        yield* fake.failWatches(serverError())
        yield* advance("2 seconds")
        assert.deepStrictEqual(listsOf(yield* fake.requests), [
          { resourceVersion: "", limit: 500 },
          { resourceVersion: "10" }
        ])
      }))

    it.effect("a consistent relist after Gone is paginated (etcd serves it)", () =>
      Effect.gen(function*() {
        const fake = yield* FakeListerWatcher.make({ initial: podsNamed("p", 10) })
        const { store } = yield* recordingStore()
        yield* Reflector.make(fake, store, { watchList: false })
        yield* settle
        yield* fake.failWatches(gone())
        yield* settle
        assert.deepStrictEqual(listsOf(yield* fake.requests), [
          { resourceVersion: "", limit: 500 },
          { resourceVersion: "", limit: 500 }
        ])
      }))

    it("listPageSize as a table (client-go's Reflector policy)", () => {
      const cases: ReadonlyArray<readonly [number | undefined, string, boolean, number | undefined]> = [
        // pageSize asked, resourceVersion, paginatedResult, limit sent
        [undefined, "", false, 500],
        [undefined, "0", false, 500],
        [undefined, "10", false, undefined],
        [undefined, "10", true, 500],
        [undefined, "", true, 500],
        [4, "10", false, 4],
        [4, "", false, 4],
        [0, "", false, undefined],
        [0, "10", true, undefined]
      ]
      for (const [pageSize, resourceVersion, paginatedResult, limit] of cases) {
        assert.strictEqual(
          listPageSize({ pageSize, resourceVersion, paginatedResult }),
          limit,
          JSON.stringify({ pageSize, resourceVersion, paginatedResult })
        )
      }
    })

    it.effect("pageSize 0: every list is one unpaginated response", () =>
      Effect.gen(function*() {
        const fake = yield* FakeListerWatcher.make({ initial: podsNamed("p", 10) })
        const { names, store } = yield* recordingStore()
        yield* Reflector.make(fake, store, { watchList: false, pageSize: 0 })
        yield* settle
        assert.strictEqual((yield* names).length, 10)
        yield* fake.failWatches(serverError())
        yield* advance("2 seconds")
        assert.deepStrictEqual(listsOf(yield* fake.requests), [{ resourceVersion: "" }, { resourceVersion: "10" }])
      }))

    it.effect("TestReflectorPaginatingNonConsistentReadsIfWatchCacheDisabled: a paginated any-age list keeps relists paged", () =>
      Effect.gen(function*() {
        const fake = yield* FakeListerWatcher.make({ initial: podsNamed("p", 501) })
        const { names, store } = yield* recordingStore()
        yield* Reflector.make(fake, store, { watchList: false, initialList: "any" })
        yield* settle
        assert.strictEqual((yield* names).length, 501)
        yield* fake.failWatches(serverError())
        yield* advance("2 seconds")
        const lists = listsOf(yield* fake.requests)
        assert.deepStrictEqual(lists.map((o) => [o.resourceVersion, o.limit]), [
          ["0", 500],
          [undefined, 500],
          ["501", 500],
          [undefined, 500]
        ])
      }))

    it.effect("an any-age first list that was not paginated: a relist at a concrete version is not paginated", () =>
      Effect.gen(function*() {
        const fake = yield* FakeListerWatcher.make({ initial: podsNamed("p", 3) })
        const { store } = yield* recordingStore()
        yield* Reflector.make(fake, store, { watchList: false, initialList: "any" })
        yield* settle
        yield* fake.failWatches(serverError())
        yield* advance("2 seconds")
        assert.deepStrictEqual(listsOf(yield* fake.requests), [{ resourceVersion: "0", limit: 500 }, {
          resourceVersion: "3"
        }])
      }))
  })
})

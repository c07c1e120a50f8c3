/**
 * The InformerFactory suite's fixtures: a minimal object that fits every catalog entry, and fresh fakes
 * with a factory in the test's scope (errors, resources and namespacedNames come from ../fixtures). Every
 * test builds its own fakes and factory; time is driven with TestClock.
 */
import { Context, Effect, Layer } from "effect"
import * as FakeListerWatcher from "../../../src/FakeListerWatcher.js"
import * as InformerFactory from "../../../src/InformerFactory.js"

// -------------------------------------------------------------------------------------------------
// fixtures
// -------------------------------------------------------------------------------------------------

export type Fakes = FakeListerWatcher.FakeListerWatcherSource.Service

/** A minimal object; its type fits every catalog entry's object type. */
export interface TestObject {
  readonly metadata: {
    readonly namespace?: string
    readonly name: string
    readonly uid: string
    readonly labels?: Readonly<Record<string, string>>
  }
}

export const obj = (namespace: string | undefined, name: string, labels?: Record<string, string>): TestObject => ({
  metadata: {
    ...(namespace === undefined ? {} : { namespace }),
    name,
    uid: `${namespace ?? ""}/${name}`,
    ...(labels === undefined ? {} : { labels })
  }
})

/** Fresh fakes and a factory in the test's scope. */
export const setup = (options: InformerFactory.Options = {}) =>
  Effect.gen(function*() {
    const context = yield* Layer.build(FakeListerWatcher.layerSource())
    const fakes: Fakes = Context.get(context, FakeListerWatcher.FakeListerWatcherSource)
    const factory = yield* InformerFactory.make(options).pipe(Effect.provide(context))
    return { factory, fakes }
  })

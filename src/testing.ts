/**
 * `effect-informers/testing`: the test fakes, with no server and no network. `FakeListerWatcher`: the
 * in-memory ListerWatcher tests run informers against, and the informer factory over fakes
 * (`FakeListerWatcher.layerFactory()`, where an application has `Informers.live()`); `FakeClient`: a fake
 * `Client` over the same objects (`FakeClient.layerFactory()`: both at once); `ApiStore`: the
 * in-memory API store behind it and the test kit's embedded API server. The main entry (`effect-informers`)
 * exports no fake. The embedded API server, the churn simulator and the fault campaign are the test kit,
 * `@effect-informers/testkit`.
 *
 * @since 0.1.0
 */

/**
 * The in-memory API store behind `FakeListerWatcher` and the test kit's embedded API server.
 *
 * @since 0.1.0
 */
export * as ApiStore from "./ApiStore.js"

/**
 * A fake `Client` over the same in-memory store as the fake ListerWatchers: a reconcile's writes reach the
 * informers, with kube-apiserver's answers (conflicts, finalizers, status subresource, patches, apply),
 * injected failures and a record of the writes.
 *
 * @since 0.2.0
 */
export * as FakeClient from "./FakeClient.js"

/**
 * The in-memory ListerWatcher, its source of one fake per resource, and the informer factory over them.
 *
 * @since 0.1.0
 */
export * as FakeListerWatcher from "./FakeListerWatcher.js"

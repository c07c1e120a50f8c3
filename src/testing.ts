/**
 * `effect-informers/testing`: the in-memory ListerWatcher tests run informers against, with no server
 * and no network. The embedded API server, the churn simulator and the fault campaign are the test kit,
 * `@effect-informers/testkit`.
 *
 * @since 0.1.0
 */

/**
 * @since 0.1.0
 */
export * as FakeListerWatcher from "./FakeListerWatcher.js"

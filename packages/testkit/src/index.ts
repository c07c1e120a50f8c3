/**
 * `@effect-informers/testkit`: what the tests, demos and benchmarks of an effect-informers application run
 * against, as Go's envtest is for client-go: a real Kubernetes API server on loopback (`ApiServer`), a
 * churn simulator (`ChurnSimulator`) and the fault campaign (`Chaos`). Add it as a dev dependency; the
 * in-memory fake ListerWatcher needs no server and stays in the library (`effect-informers/testing`).
 *
 * @since 0.1.0
 */

/**
 * @since 0.1.0
 */
export * as ApiServer from "./ApiServer.js"

/**
 * @since 0.1.0
 */
export * as Chaos from "./Chaos.js"

/**
 * @since 0.1.0
 */
export * as ChurnSimulator from "./ChurnSimulator.js"

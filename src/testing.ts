/**
 * `effect-informers/testing`: what tests, demos and benchmarks run against — an in-memory
 * ListerWatcher, a real Kubernetes API server on loopback, and a churn simulator.
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

/**
 * @since 0.1.0
 */
export * as FakeListerWatcher from "./FakeListerWatcher.js"

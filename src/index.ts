/**
 * @since 0.1.0
 */

/**
 * @since 0.1.0
 */
export * as DeltaFifo from "./DeltaFifo.js"

/**
 * @since 0.1.0
 */
export * as Indexer from "./Indexer.js"

/**
 * @since 0.1.0
 */
export * as KubeObject from "./KubeObject.js"

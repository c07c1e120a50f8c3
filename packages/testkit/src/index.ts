/**
 * `@effect-informers/testkit`: what tests, demos and benchmarks of an effect-informers application run
 * against, as Go's envtest: the embedded Kubernetes API server, the churn simulator and the fault campaign.
 *
 * @since 0.1.0
 */
export {}

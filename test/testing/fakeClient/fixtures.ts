/**
 * Fixtures of the fake Client's tests: the fake over a fresh fake source, and what a failure says.
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type { ApiError } from "../../../src/ApiError.js"
import * as Client from "../../../src/Client.js"
import * as FakeClient from "../../../src/FakeClient.js"
import * as FakeListerWatcher from "../../../src/FakeListerWatcher.js"
import type { KubeObject, ObjectMeta } from "../../../src/KubeObject.js"
import * as Resource from "../../../src/Resource.js"
import type { TermError } from "../../../src/Term.js"

/** A fresh fake Client (and the fakes under it), per test. */
export const layer = (options: FakeClient.Options = {}) =>
  FakeClient.layer(options).pipe(Layer.provideMerge(FakeListerWatcher.layerSource()))

/** The fake Client, its controls and the fakes, for a test body. */
export const fakes = Effect.gen(function*() {
  return {
    client: yield* Client.Client,
    fake: yield* FakeClient.FakeClient,
    source: yield* FakeListerWatcher.FakeListerWatcherSource
  }
})

/** `reason code: message` of a failure, or `_tag` for one without a reason code. */
export const failureOf = <A, R>(effect: Effect.Effect<A, ApiError | TermError, R>) =>
  Effect.map(
    Effect.flip(effect),
    (error) =>
      error._tag === "StatusError"
        ? `${error.reason} ${error.code}: ${error.message}`
        : `${error._tag}: ${error.message}`
  )

/** An entry of `metadata.managedFields`. */
export interface ManagedField {
  readonly manager?: string | undefined
  readonly operation?: string | undefined
  readonly subresource?: string | undefined
  readonly apiVersion?: string | undefined
  readonly time?: string | undefined
  readonly fieldsType?: string | undefined
  readonly fieldsV1?: unknown
}

/** The metadata fields the tests read, beyond `KubeObject`'s. */
export interface Meta extends ObjectMeta {
  readonly creationTimestamp?: string | undefined
  readonly deletionTimestamp?: string | undefined
  readonly deletionGracePeriodSeconds?: number | undefined
  readonly finalizers?: ReadonlyArray<string> | undefined
  readonly managedFields?: ReadonlyArray<ManagedField> | undefined
}

/** A ConfigMap. */
export interface ConfigMap extends KubeObject {
  readonly metadata?: Meta | undefined
  readonly data?: Readonly<Record<string, string>> | undefined
}

export const configMaps = Resource.configMaps as unknown as Resource.Resource<ConfigMap>

export const configMap = (
  name: string,
  data: Readonly<Record<string, string>> = {},
  metadata: Meta = {}
): ConfigMap => ({ metadata: { namespace: "ns", name, ...metadata }, data })

/** A Deployment, with the fields the tests set. */
export interface Deployment extends KubeObject {
  readonly metadata?: Meta | undefined
  readonly spec?: { readonly replicas?: number; readonly [key: string]: unknown } | undefined
  readonly status?: { readonly [key: string]: unknown } | undefined
}

export const deployments = Resource.deployments as unknown as Resource.Resource<Deployment>

export const deployment = (name: string, replicas = 1, status?: Deployment["status"]): Deployment => ({
  metadata: { namespace: "ns", name },
  spec: { replicas },
  ...(status === undefined ? {} : { status })
})

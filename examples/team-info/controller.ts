/**
 * team-info: every Namespace labelled `team=<name>` holds a ConfigMap `team-info` with the team's name,
 * restored when edited or deleted by hand, updated when the label changes, deleted when the label goes. The
 * Namespace is the ConfigMap's controller (an owner reference), so `owns` maps its events back to it.
 */
import { Effect, Option } from "effect"
import { Client, Controller, Informers, type LeaderElection, OwnerReference, Resource } from "effect-informers"

export const name = "team-info"

/** Starts the controller in the current scope; with `election`, it reconciles only while leading. */
export const make = (election?: LeaderElection.LeaderElection.Service) =>
  Effect.gen(function*() {
    const namespaces = yield* Informers.Namespaces
    const configMaps = yield* Informers.ConfigMaps
    const client = yield* Client.Client
    return yield* Controller.make({
      name,
      for: namespaces,
      owns: [{ source: configMaps }],
      leaderElection: election,
      reconcile: (request) =>
        Effect.gen(function*() {
          const namespace = yield* Effect.option(namespaces.lister.get(request.name))
          if (Option.isNone(namespace)) return // deleted, and so is what it held
          const team = namespace.value.metadata?.labels?.["team"]
          if (team !== undefined) {
            const owner = yield* OwnerReference.controllerReference(namespace.value, Resource.namespaces)
            const metadata = { name, namespace: request.name, ownerReferences: [owner] }
            yield* client.apply(Resource.configMaps, { metadata, data: { team } }, { fieldManager: name, force: true })
            return
          }
          const current = yield* Effect.option(configMaps.lister.byNamespace(request.name).get(name))
          if (Option.isSome(current) && OwnerReference.isControlledBy(current.value, namespace.value)) {
            const uid = current.value.metadata?.uid
            yield* client.delete(Resource.configMaps, name, { namespace: request.name, preconditions: { uid } })
          }
        })
    })
  })

import Observation

/// A class whose `@Published` properties also report to an Observation
/// registrar, so `withObservationTracking` and `@Observable`-style views see
/// them change. ``AuthorizationCenter`` is one.
public protocol PublishingObservable: AnyObject, Observable {
    /// The registrar `@Published` properties report their reads and writes to.
    var observationRegistrar: ObservationRegistrar { get }
}

extension PublishingObservable {
    func observationAccess<Root, Member>(_ keyPath: ReferenceWritableKeyPath<Root, Member>) {
        guard let keyPath = (keyPath as AnyKeyPath) as? KeyPath<Self, Member> else { return }
        observationRegistrar.access(self, keyPath: keyPath)
    }

    func observationMutation<Root, Member>(_ keyPath: ReferenceWritableKeyPath<Root, Member>, _ mutation: () -> Void) {
        guard let keyPath = (keyPath as AnyKeyPath) as? KeyPath<Self, Member> else { return mutation() }
        observationRegistrar.withMutation(of: self, keyPath: keyPath, mutation)
    }
}

import FamilyConfiguration
import Synchronization

/// The family as last loaded, shared by the parts of the policy; SIGHUP
/// replaces it.
package final class FamilyState: Sendable {
    private let family: Mutex<Family>

    init(_ configuration: GuardConfiguration) {
        family = Mutex(Family(configuration: configuration))
    }

    package var current: Family { family.withLock { $0 } }

    func replace(with configuration: GuardConfiguration) {
        family.withLock { $0 = Family(configuration: configuration) }
    }
}

import LockEngine
import GuardIdentity

/// An authorization's lock as administrators are shown it: its journaled
/// state, or, for an approval with no journal entry, why there is none.
package enum ShownLock: Hashable, Sendable, CustomStringConvertible {
    /// What the lock journal says (locked, unlocked, unenforced with its reason, mid-way).
    case journaled(LockState)
    /// A root-owned Flatpak installation: the child cannot change the app, no lock is needed.
    case notNeeded
    /// Approved, yet nothing is locked: `familyctl locks verify` repairs it.
    case missing

    package var description: String {
        switch self {
        case .journaled(let state): state.description
        case .notNeeded: FlatpakLockPlacement.notNeeded
        case .missing: "missing: approved but not locked"
        }
    }
}

#if canImport(Glibc)
import Glibc
#endif
import Synchronization
import SystemKit

/// How many conversations (requests and decisions that wait for people)
/// each user has under way, each user's bounded, so that the Guard's threads
/// are shared among users rather than taken by whoever connects most.
///
/// Counted by uid, from the kernel; root is never counted.
final class ConversationsPerUser: Sendable {
    /// Conversations one user may have under way at once.
    let limit: Int
    private let counts = Mutex<[uid_t: Int]>([:])

    init(limit: Int) {
        precondition(limit > 0, "a user must be allowed one conversation")
        self.limit = limit
    }

    /// Takes a place for `uid`; pair with ``leave(_:)``.
    /// - Returns: false, taking nothing, when `uid` has `limit` under way already.
    func enter(_ uid: uid_t) -> Bool {
        guard uid != 0 else { return true }
        return counts.withLock { counts in
            let current = counts[uid, default: 0]
            guard current < limit else { return false }
            counts[uid] = current + 1
            return true
        }
    }

    /// Gives back the place ``enter(_:)`` took for `uid`.
    func leave(_ uid: uid_t) {
        guard uid != 0 else { return }
        counts.withLock { counts in
            let left = counts[uid, default: 1] - 1
            counts[uid] = left > 0 ? left : nil
        }
    }

    /// Conversations `uid` has under way now.
    func count(of uid: uid_t) -> Int { counts.withLock { $0[uid, default: 0] } }
}

/// Whoever starts a conversation: an app (``Caller``) or a person deciding
/// (a guardian or root), named in the refusal when they have too many.
protocol ConversationStarter: Sendable {
    var account: UserAccount { get }
}

extension Caller: ConversationStarter {}

extension UserAccount: ConversationStarter {
    var account: UserAccount { self }
}

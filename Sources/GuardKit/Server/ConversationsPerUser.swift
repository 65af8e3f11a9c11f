#if canImport(Glibc)
import Glibc
#endif
import Synchronization
import SystemKit
import GuardPolicy

/// How many conversations (requests and decisions that wait for people)
/// each user has under way, each user's bounded, so that the Guard's threads
/// are shared among users rather than taken by whoever connects most.
///
/// Counted by uid, from the kernel; root is never counted.
final class ConversationsPerUser: Sendable {
    /// Conversations one user may have under way at once.
    let limit: Int

    /// What ``enter(_:)`` did.
    enum Entry: Equatable {
        case entered
        /// Refused; `first` for the first refusal since the user reached the
        /// bound, the one worth a line in the log.
        case refused(first: Bool)
    }

    private struct State {
        var counts: [uid_t: Int] = [:]
        /// Users refused since they last had a place free.
        var refused: Set<uid_t> = []
    }
    private let state = Mutex(State())

    init(limit: Int) {
        precondition(limit > 0, "a user must be allowed one conversation")
        self.limit = limit
    }

    /// Takes a place for `uid`; pair an ``Entry/entered`` with ``leave(_:)``.
    /// - Returns: ``Entry/refused(first:)``, taking nothing, when `uid` has
    ///   `limit` under way already.
    func enter(_ uid: uid_t) -> Entry {
        guard uid != 0 else { return .entered }
        return state.withLock { state in
            let current = state.counts[uid, default: 0]
            guard current < limit else { return .refused(first: state.refused.insert(uid).inserted) }
            state.counts[uid] = current + 1
            return .entered
        }
    }

    /// Gives back the place ``enter(_:)`` took for `uid`.
    func leave(_ uid: uid_t) {
        guard uid != 0 else { return }
        state.withLock { state in
            let left = state.counts[uid, default: 1] - 1
            state.counts[uid] = left > 0 ? left : nil
            state.refused.remove(uid)
        }
    }

    /// Conversations `uid` has under way now.
    func count(of uid: uid_t) -> Int { state.withLock { $0.counts[uid, default: 0] } }
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

extension Administrator: ConversationStarter {}

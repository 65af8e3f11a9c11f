import FlatpakNames
import GuardProtocol
import SystemKit

/// The parts of an ostree commit object (`repo/objects/XX/….commit`) the
/// Guard decides an update from: the parent commit, the time, and the ref
/// the commit says it belongs to. The inspector reads the object (a
/// GVariant, ChildInspection's OstreeCommitObject); each value is checked
/// again here.
package struct OstreeCommit: Hashable, Sendable {
    /// The parent commit as 64 lower-case hex digits; nil for a commit with none.
    package var parent: String?
    /// Seconds since the epoch, as the commit records it.
    package var timestamp: UInt64
    /// The refs of `ostree.ref-binding`; empty when the commit binds none.
    package var refBindings: [String]

    package init(parent: String?, timestamp: UInt64, refBindings: [String]) {
        self.parent = parent
        self.timestamp = timestamp
        self.refBindings = refBindings
    }

    /// A commit object larger than this is refused (ostree's own bound on
    /// metadata objects is 10 MiB; a Flatpak commit is a few KiB).
    package static let sizeLimit = 1 << 20

    /// Whether `text` is a commit checksum: 64 lower-case hex digits.
    package static func isChecksum(_ text: String) -> Bool { FlatpakNames.isCommit(text) }

    /// The commit object open on `file`, read by `inspector`.
    package static func inspecting(_ file: FileDescriptor, with inspector: Inspector = .standard) throws(OstreeCommitError) -> OstreeCommit {
        let commit: Inspect.OstreeCommit
        do throws(InspectionFailure) {
            commit = try inspector.call(Inspect.ReadOstreeCommit.self, input: file).commit
        } catch {
            switch error {
            case .refused(let problem): throw .malformed(problem)
            case .failed(let problem): throw .unreadable(problem)
            }
        }
        guard commit.parent.map(isChecksum) ?? true, commit.timestamp >= 0,
              commit.refBindings.allSatisfy({ $0.utf8.count <= 1024 && !$0.utf8.contains(where: { $0 < 0x20 }) }) else {
            throw .unreadable("the inspector answered a commit that is not valid")
        }
        return OstreeCommit(parent: commit.parent, timestamp: UInt64(commit.timestamp), refBindings: commit.refBindings)
    }
}

/// Why a commit object was not read.
package enum OstreeCommitError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The inspector refused it, in its words.
    case malformed(String)
    /// It could not be opened or read, or the inspector failed.
    case unreadable(String)

    package var description: String {
        switch self {
        case .malformed(let what): DisplayText.sanitized(what)
        case .unreadable(let why): "the commit object cannot be read: \(DisplayText.sanitized(why))"
        }
    }
}

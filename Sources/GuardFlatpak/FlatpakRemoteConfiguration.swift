import FlatpakNames
import GuardProtocol
import GuardIdentity

/// One remote of a Flatpak installation's `repo/config` (an ostree repo's
/// GKeyFile), as the child's own per-user installation names it: hostile
/// input, read strictly by the inspector (ChildInspection's
/// RepositoryRemote), and each value checked again here.
///
/// Only `[remote "NAME"]` groups are read, and of them `url`, `gpg-verify`
/// and `collection-id`; a line that is neither a group, a key, a comment nor
/// blank refuses the file, as does a key given twice in one group, a control
/// character, or a file over ``sizeLimit`` bytes.
package struct FlatpakRemoteConfiguration: Hashable, Sendable {
    package var name: String
    package var url: String
    package var gpgVerify: Bool
    package var collectionID: String?

    package static let sizeLimit = 64 * 1024

    /// The remote `name` in the text of a `repo/config`, read by the inspector
    /// and checked again here.
    /// - Throws: ``FlatpakMoveError/remoteRefused(_:)`` naming the line or
    ///   the value refused, never the file's text.
    package static func remote(_ name: String, in bytes: [UInt8],
                               inspector: Inspector = .standard) throws(FlatpakMoveError) -> FlatpakRemoteConfiguration {
        guard bytes.count <= sizeLimit else { throw .remoteRefused("the repository's config is over \(sizeLimit) bytes") }
        guard isRemoteName(name) else { throw .remoteRefused("the remote's name is not a plain name") }
        let remote = try inspected { () throws(InspectionFailure) in
            try inspector.call(Inspect.ReadRemote.self, parameters: .init(name: name), bytes: bytes).remote
        }
        guard remote.name == name, isAcceptableURL(remote.url),
              remote.collectionID.map(FlatpakNames.isCollectionID) ?? true else {
            throw .remoteRefused("the inspector answered a remote that is not the one asked for, or not valid")
        }
        return FlatpakRemoteConfiguration(name: name, url: remote.url, gpgVerify: remote.gpgVerify, collectionID: remote.collectionID)
    }

    /// The names of the `[remote "NAME"]` groups of a `repo/config`, in the
    /// file's order, read by the inspector; each a plain name.
    package static func remoteNames(in bytes: [UInt8], inspector: Inspector = .standard) throws(FlatpakMoveError) -> [String] {
        guard bytes.count <= sizeLimit else { return [] }
        let names = try inspected { () throws(InspectionFailure) in
            try inspector.call(Inspect.ListRemotes.self, parameters: .init(), bytes: bytes).names
        }
        return names.filter(isRemoteName)
    }

    /// `body`'s answer; its failure as a refused remote, in the inspector's words.
    static func inspected<T>(_ body: () throws(InspectionFailure) -> T) throws(FlatpakMoveError) -> T {
        do throws(InspectionFailure) {
            return try body()
        } catch {
            switch error {
            case .refused(let problem): throw .remoteRefused(problem)
            case .failed(let problem): throw .remoteRefused("the repository's config could not be read: \(problem)")
            }
        }
    }

    /// A remote's name: letters, digits, `-`, `_` and `.`, not starting with
    /// `-` or `.`, at most 64 bytes: what the Guard passes to flatpak.
    package static func isRemoteName(_ name: String) -> Bool { FlatpakNames.isRemoteName(name) }

    /// `https://` or `http://` with a host, or `file:///…` (``FlatpakNames/isAcceptableRemoteURL(_:)``).
    package static func isAcceptableURL(_ url: String) -> Bool { FlatpakNames.isAcceptableRemoteURL(url) }
}

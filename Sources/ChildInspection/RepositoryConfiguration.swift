import FlatpakNames

/// One remote of a Flatpak installation's `repo/config` (an ostree repo's
/// GKeyFile), as the child's own per-user installation names it: hostile
/// input, read strictly, by the inspector.
///
/// Only `[remote "NAME"]` groups are read, and of them `url`, `gpg-verify`
/// and `collection-id`; a line that is neither a group, a key, a comment nor
/// blank refuses the file, as does a key given twice in one group, a control
/// character, or a file over ``sizeLimit`` bytes.
package struct RepositoryRemote: Hashable, Sendable {
    package var name: String
    package var url: String
    package var gpgVerify: Bool
    package var collectionID: String?

    package static let sizeLimit = 64 * 1024

    /// The remote `name` in the text of a `repo/config`.
    /// - Throws: ``RepositoryConfigurationError`` naming the line or the
    ///   value refused, never the file's text.
    package static func remote(_ name: String, in bytes: [UInt8]) throws(RepositoryConfigurationError) -> RepositoryRemote {
        guard bytes.count <= sizeLimit else { throw RepositoryConfigurationError("the repository's config is over \(sizeLimit) bytes") }
        guard FlatpakNames.isRemoteName(name) else { throw RepositoryConfigurationError("the remote's name is not a plain name") }
        let wanted = "remote \"\(name)\""
        var group: String?
        var seenGroups: Set<String> = []
        var values: [String: String] = [:]
        var lineNumber = 0
        for rawLine in bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false) {
            lineNumber += 1
            guard !rawLine.contains(where: { $0 < 0x20 && $0 != 0x09 || $0 == 0x7f }) else {
                throw RepositoryConfigurationError("line \(lineNumber) of the repository's config holds a control character")
            }
            let line = String(decoding: rawLine, as: UTF8.self)
            let trimmed = line.drop { $0 == " " || $0 == "\t" }
            if trimmed.isEmpty || trimmed.hasPrefix("#") { continue }
            if trimmed.hasPrefix("[") {
                guard trimmed.hasSuffix("]") else { throw RepositoryConfigurationError("line \(lineNumber): a group header without \"]\"") }
                let header = String(trimmed.dropFirst().dropLast())
                guard seenGroups.insert(header).inserted else { throw RepositoryConfigurationError("line \(lineNumber): a group given twice") }
                group = header
                continue
            }
            guard let equals = trimmed.firstIndex(of: "=") else { throw RepositoryConfigurationError("line \(lineNumber): not a key=value line") }
            guard group != nil else { throw RepositoryConfigurationError("line \(lineNumber): a key outside any group") }
            guard group == wanted else { continue }
            let key = String(trimmed[..<equals]).trimmingTrailingBlanks
            let value = String(trimmed[trimmed.index(after: equals)...]).drop { $0 == " " }
            guard values.updateValue(String(value).trimmingTrailingBlanks, forKey: key) == nil else {
                throw RepositoryConfigurationError("line \(lineNumber): \(key) given twice in the remote's group")
            }
        }
        guard seenGroups.contains(wanted) else { throw RepositoryConfigurationError("the per-user installation has no remote of that name") }
        guard let url = values["url"], FlatpakNames.isAcceptableRemoteURL(url) else {
            throw RepositoryConfigurationError("the remote's url is missing or neither https://, http:// nor an absolute file:// path")
        }
        let gpgVerify: Bool
        switch values["gpg-verify"] {
        case nil, "true": gpgVerify = true
        case "false": gpgVerify = false
        default: throw RepositoryConfigurationError("the remote's gpg-verify is neither true nor false")
        }
        let collection = values["collection-id"]
        if let collection, !FlatpakNames.isCollectionID(collection) { throw RepositoryConfigurationError("the remote's collection-id is not a dotted name") }
        return RepositoryRemote(name: name, url: url, gpgVerify: gpgVerify, collectionID: collection)
    }

    /// The names of the `[remote "NAME"]` groups of a `repo/config`, in the
    /// file's order; a name that is not a plain name (`FlatpakNames.isRemoteName`) is left out.
    package static func remoteNames(in bytes: [UInt8]) -> [String] {
        guard bytes.count <= sizeLimit else { return [] }
        var names: [String] = []
        for rawLine in bytes.split(separator: UInt8(ascii: "\n")) {
            let line = String(decoding: rawLine, as: UTF8.self).drop { $0 == " " || $0 == "\t" }
            guard line.hasPrefix("[remote \""), line.hasSuffix("\"]") else { continue }
            let name = String(line.dropFirst("[remote \"".count).dropLast(2))
            if FlatpakNames.isRemoteName(name), !names.contains(name) { names.append(name) }
        }
        return names
    }
}

extension String {
    fileprivate var trimmingTrailingBlanks: String {
        var text = Substring(self)
        while let last = text.last, last == " " || last == "\t" { text = text.dropLast() }
        return String(text)
    }
}

/// Why a repository's config is refused: the line or the value, never the text.
package struct RepositoryConfigurationError: Error, Hashable, Sendable, CustomStringConvertible {
    package var description: String
    package init(_ description: String) { self.description = description }
}

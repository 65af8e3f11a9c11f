/// One remote of a Flatpak installation's `repo/config` (an ostree repo's
/// GKeyFile), as the child's own per-user installation names it: hostile
/// input, read strictly.
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

    /// The remote `name` in the text of a `repo/config`.
    /// - Throws: ``FlatpakMoveError/remoteRefused(_:)`` naming the line or
    ///   the value refused, never the file's text.
    package static func remote(_ name: String, in bytes: [UInt8]) throws(FlatpakMoveError) -> FlatpakRemoteConfiguration {
        guard bytes.count <= sizeLimit else { throw .remoteRefused("the repository's config is over \(sizeLimit) bytes") }
        guard isRemoteName(name) else { throw .remoteRefused("the remote's name is not a plain name") }
        let wanted = "remote \"\(name)\""
        var group: String?
        var seenGroups: Set<String> = []
        var values: [String: String] = [:]
        var lineNumber = 0
        for rawLine in bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false) {
            lineNumber += 1
            guard !rawLine.contains(where: { $0 < 0x20 && $0 != 0x09 || $0 == 0x7f }) else {
                throw .remoteRefused("line \(lineNumber) of the repository's config holds a control character")
            }
            let line = String(decoding: rawLine, as: UTF8.self)
            let trimmed = line.drop { $0 == " " || $0 == "\t" }
            if trimmed.isEmpty || trimmed.hasPrefix("#") { continue }
            if trimmed.hasPrefix("[") {
                guard trimmed.hasSuffix("]") else { throw .remoteRefused("line \(lineNumber): a group header without \"]\"") }
                let header = String(trimmed.dropFirst().dropLast())
                guard seenGroups.insert(header).inserted else { throw .remoteRefused("line \(lineNumber): a group given twice") }
                group = header
                continue
            }
            guard let equals = trimmed.firstIndex(of: "=") else { throw .remoteRefused("line \(lineNumber): not a key=value line") }
            guard group != nil else { throw .remoteRefused("line \(lineNumber): a key outside any group") }
            guard group == wanted else { continue }
            let key = String(trimmed[..<equals]).trimmingTrailingBlanks
            let value = String(trimmed[trimmed.index(after: equals)...]).drop { $0 == " " }
            guard values.updateValue(String(value).trimmingTrailingBlanks, forKey: key) == nil else {
                throw .remoteRefused("line \(lineNumber): \(key) given twice in the remote's group")
            }
        }
        guard seenGroups.contains(wanted) else { throw .remoteRefused("the per-user installation has no remote of that name") }
        guard let url = values["url"], isAcceptableURL(url) else {
            throw .remoteRefused("the remote's url is missing or neither https://, http:// nor an absolute file:// path")
        }
        let gpgVerify: Bool
        switch values["gpg-verify"] {
        case nil, "true": gpgVerify = true
        case "false": gpgVerify = false
        default: throw .remoteRefused("the remote's gpg-verify is neither true nor false")
        }
        let collection = values["collection-id"]
        if let collection, !isCollectionID(collection) { throw .remoteRefused("the remote's collection-id is not a dotted name") }
        return FlatpakRemoteConfiguration(name: name, url: url, gpgVerify: gpgVerify, collectionID: collection)
    }

    /// The names of the `[remote "NAME"]` groups of a `repo/config`, in the
    /// file's order; a name that is not a plain name (``isRemoteName(_:)``) is left out.
    package static func remoteNames(in bytes: [UInt8]) -> [String] {
        guard bytes.count <= sizeLimit else { return [] }
        var names: [String] = []
        for rawLine in bytes.split(separator: UInt8(ascii: "\n")) {
            let line = String(decoding: rawLine, as: UTF8.self).drop { $0 == " " || $0 == "\t" }
            guard line.hasPrefix("[remote \""), line.hasSuffix("\"]") else { continue }
            let name = String(line.dropFirst("[remote \"".count).dropLast(2))
            if isRemoteName(name), !names.contains(name) { names.append(name) }
        }
        return names
    }

    /// Letters, digits, `-`, `_` and `.`, not starting with `-` or `.`, at most 64 bytes: what the Guard passes to flatpak.
    package static func isRemoteName(_ name: String) -> Bool {
        guard let first = name.utf8.first, first != UInt8(ascii: "-"), first != UInt8(ascii: "."), name.utf8.count <= 64 else { return false }
        return name.utf8.allSatisfy { isAlphanumeric($0) || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: "_") || $0 == UInt8(ascii: ".") }
    }

    private static func isAlphanumeric(_ byte: UInt8) -> Bool {
        (byte >= 48 && byte <= 57) || (byte >= 65 && byte <= 90) || (byte >= 97 && byte <= 122)
    }

    private static func isCollectionID(_ text: String) -> Bool {
        text.utf8.count <= 255 && text.utf8.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false).count >= 2
            && text.utf8.allSatisfy { isAlphanumeric($0) || $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "_") }
    }

    /// `https://` or `http://` with a host, or `file:///…`; printable ASCII
    /// with no blank, at most 2,048 bytes. (A plain-http remote is what the
    /// child configured; Flatpak's GPG check, where on, is what holds there.)
    package static func isAcceptableURL(_ url: String) -> Bool {
        guard url.utf8.count <= 2048, url.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7f }) else { return false }
        for scheme in ["https://", "http://"] where url.hasPrefix(scheme) { return url.utf8.count > scheme.utf8.count }
        return url.hasPrefix("file:///") && !url.utf8.contains(UInt8(ascii: "?"))
    }
}

extension String {
    fileprivate var trimmingTrailingBlanks: String {
        var text = Substring(self)
        while let last = text.last, last == " " || last == "\t" { text = text.dropLast() }
        return String(text)
    }
}

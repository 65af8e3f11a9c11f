/// A Flatpak remote the administrator trusts (`[Flatpak] TrustedRemote=NAME
/// URL FINGERPRINT...`): an approved app from it follows its new commits
/// without asking a guardian, as long as the Guard's installation names it
/// with this URL and verifies its commits with these keys only.
///
/// No fingerprint trusts an unsigned remote, which only a `file://`
/// repository that root alone can change may be (the move checks the folder).
package struct FlatpakTrustedRemote: Hashable, Sendable {
    /// The remote's name in the Guard's installation.
    package var name: String
    /// Its URL, compared byte for byte (a trailing `/` aside).
    package var url: String
    /// The primary keys' OpenPGP v4 fingerprints: 40 upper-case hex digits each.
    package var fingerprints: [String]

    /// At most this many `TrustedRemote=` lines, and keys on one.
    package static let limit = 16

    package init(name: String, url: String, fingerprints: [String]) {
        self.name = name
        self.url = url
        self.fingerprints = fingerprints
    }

    /// Flathub as Flatpak's own `flathub.flatpakrepo` adds it.
    package static let flathubName = "flathub"
    package static let flathubURL = "https://dl.flathub.org/repo/"

    /// Whether `url` names this remote's repository.
    package func hasURL(_ url: String) -> Bool {
        Self.withoutSlash(url).utf8.elementsEqual(Self.withoutSlash(self.url).utf8)
    }

    private static func withoutSlash(_ url: String) -> Substring {
        url.hasSuffix("/") ? Substring(url).dropLast() : Substring(url)
    }

    /// Parses `NAME URL [FINGERPRINT...]`; a fingerprint may be written in
    /// groups of four digits (as `gpg --fingerprint` shows it), lower or upper case.
    /// - Returns: nil with the reason when a part does not hold.
    package static func parse(_ text: String) -> Result<FlatpakTrustedRemote, ParseError> {
        let words = text.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
        guard words.count >= 2 else { return .failure(ParseError("expects NAME URL [KEY-FINGERPRINT...]")) }
        let name = words[0]
        guard isRemoteName(name) else {
            return .failure(ParseError("the remote's name must be letters, digits, - _ . (not first - or .), at most 64 bytes"))
        }
        let url = words[1]
        guard isURL(url) else { return .failure(ParseError("the URL must be https://HOST..., http://HOST... or file:///PATH")) }
        // Hex digits, in groups of 4 or whole; joined back into fingerprints of 40.
        var digits = ""
        var fingerprints: [String] = []
        for word in words.dropFirst(2) {
            guard word.utf8.allSatisfy({ isHexDigit($0) }) else { return .failure(ParseError("\"\(word.clipped)\" is not a key fingerprint")) }
            digits += word.uppercased()
            if digits.utf8.count == 40 {
                if !fingerprints.contains(digits) { fingerprints.append(digits) }
                digits = ""
            } else if digits.utf8.count > 40 {
                return .failure(ParseError("a key fingerprint is 40 hex digits (OpenPGP v4)"))
            }
        }
        guard digits.isEmpty else { return .failure(ParseError("a key fingerprint is 40 hex digits (OpenPGP v4)")) }
        guard fingerprints.count <= limit else { return .failure(ParseError("at most \(limit) keys a remote")) }
        guard !fingerprints.isEmpty || url.hasPrefix("file:///") else {
            return .failure(ParseError("a remote over the network needs the fingerprints of the keys that sign it"))
        }
        return .success(FlatpakTrustedRemote(name: name, url: url, fingerprints: fingerprints))
    }

    /// Why a `TrustedRemote=` value was refused.
    package struct ParseError: Error, Sendable, CustomStringConvertible {
        package var description: String
        init(_ description: String) { self.description = description }
    }

    /// Letters, digits, `-`, `_` and `.`, not starting with `-` or `.`, at most 64 bytes.
    package static func isRemoteName(_ name: String) -> Bool {
        guard let first = name.utf8.first, first != UInt8(ascii: "-"), first != UInt8(ascii: "."), name.utf8.count <= 64 else { return false }
        return name.utf8.allSatisfy { isAlphanumeric($0) || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: "_") || $0 == UInt8(ascii: ".") }
    }

    /// `https://` or `http://` with a host, or `file:///…`; printable ASCII
    /// with no blank, at most 2,048 bytes.
    package static func isURL(_ url: String) -> Bool {
        guard url.utf8.count <= 2048, url.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7f }) else { return false }
        for scheme in ["https://", "http://"] where url.hasPrefix(scheme) { return url.utf8.count > scheme.utf8.count }
        return url.hasPrefix("file:///") && !url.utf8.contains(UInt8(ascii: "?"))
    }

    private static func isAlphanumeric(_ byte: UInt8) -> Bool {
        (byte >= 48 && byte <= 57) || (byte >= 65 && byte <= 90) || (byte >= 97 && byte <= 122)
    }

    private static func isHexDigit(_ byte: UInt8) -> Bool {
        (byte >= 48 && byte <= 57) || (byte >= 65 && byte <= 70) || (byte >= 97 && byte <= 102)
    }
}

/// The names Flatpak gives apps, runtimes and their deployments, checked
/// by Flatpak's own rules: shared by the Guard, which checks every name it
/// is handed, and the inspector, which reads them from `.flatpak-info`.
public enum FlatpakNames {
    /// Whether `text` is an app ID by Flatpak's rules (`flatpak_is_valid_name`):
    /// at most 255 bytes, at least three parts separated by `.`, none empty
    /// nor starting with a digit, each of letters, digits and `_`, and `-`
    /// in the last part only.
    public static func isValidAppID(_ text: String) -> Bool {
        guard text.utf8.count <= 255 else { return false }
        let parts = text.utf8.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard parts.count >= 3 else { return false }
        for (index, part) in parts.enumerated() {
            guard let first = part.first, !isDigit(first) else { return false }
            let isLast = index == parts.count - 1
            guard part.allSatisfy({ isAlphanumeric($0) || $0 == UInt8(ascii: "_") || (isLast && $0 == UInt8(ascii: "-")) })
            else { return false }
        }
        return true
    }

    /// Whether `text` is an absolute path with no empty, `.` or `..` part and
    /// no trailing `/`, at most `PATH_MAX - 1` bytes: the one spelling of it.
    public static func isNormalizedAbsolutePath(_ text: String) -> Bool {
        guard text.utf8.count >= 2, text.utf8.count < 4096, text.hasPrefix("/") else { return false }
        return !text.utf8.dropFirst().split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false).contains {
            $0.isEmpty || $0.elementsEqual(".".utf8) || $0.elementsEqual("..".utf8)
        }
    }

    /// A branch (`flatpak_is_valid_branch`): letters, digits, `_`, `-` and
    /// `.`, not starting with `-` or `.`, at most 255 bytes.
    public static func isValidBranch(_ text: String) -> Bool {
        guard let first = text.utf8.first, text.utf8.count <= 255,
              first != UInt8(ascii: "-"), first != UInt8(ascii: ".") else { return false }
        return text.utf8.allSatisfy { isAlphanumeric($0) || "_-.".utf8.contains($0) }
    }

    /// An architecture: letters, digits and `_`, at most 64 bytes.
    public static func isValidArch(_ text: String) -> Bool {
        !text.isEmpty && text.utf8.count <= 64 && text.utf8.allSatisfy { isAlphanumeric($0) || $0 == UInt8(ascii: "_") }
    }

    /// An OSTree commit: 64 lowercase hexadecimal digits.
    public static func isCommit(_ text: String) -> Bool {
        text.utf8.count == 64 && text.utf8.allSatisfy { isDigit($0) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains($0) }
    }

    /// A ref, `runtime/ID/ARCH/BRANCH` or `app/ID/ARCH/BRANCH`.
    public static func isValidRef(_ text: String) -> Bool {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        guard parts.count == 4, parts[0] == "runtime" || parts[0] == "app" else { return false }
        return isValidAppID(parts[1]) && isValidArch(parts[2]) && isValidBranch(parts[3])
    }

    /// A sandbox's instance ID: 1 to 20 decimal digits.
    public static func isInstanceID(_ text: String) -> Bool {
        !text.isEmpty && text.utf8.count <= 20 && text.utf8.allSatisfy(isDigit)
    }

    /// A Flatpak version, such as `1.16.0`: letters, digits and `.`, at most 64 bytes.
    public static func isFlatpakVersion(_ text: String) -> Bool {
        !text.isEmpty && text.utf8.count <= 64 && text.utf8.allSatisfy { isAlphanumeric($0) || $0 == UInt8(ascii: ".") }
    }

    /// A remote's name: letters, digits, `-`, `_` and `.`, not starting with
    /// `-` or `.`, at most 64 bytes: what the Guard passes to flatpak.
    public static func isRemoteName(_ name: String) -> Bool {
        guard let first = name.utf8.first, first != UInt8(ascii: "-"), first != UInt8(ascii: "."), name.utf8.count <= 64 else { return false }
        return name.utf8.allSatisfy { isAlphanumeric($0) || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: "_") || $0 == UInt8(ascii: ".") }
    }

    /// A collection ID: a dotted name of letters, digits and `_`, at most 255 bytes.
    public static func isCollectionID(_ text: String) -> Bool {
        text.utf8.count <= 255 && text.utf8.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false).count >= 2
            && text.utf8.allSatisfy { isAlphanumeric($0) || $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "_") }
    }

    /// `https://` or `http://` with a host, or `file:///…`; printable ASCII
    /// with no blank, at most 2,048 bytes. (A plain-http remote is what the
    /// child configured; Flatpak's GPG check, where on, is what holds there.)
    public static func isAcceptableRemoteURL(_ url: String) -> Bool {
        guard url.utf8.count <= 2048, url.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7f }) else { return false }
        for scheme in ["https://", "http://"] where url.hasPrefix(scheme) { return url.utf8.count > scheme.utf8.count }
        return url.hasPrefix("file:///") && !url.utf8.contains(UInt8(ascii: "?"))
    }

    public static func isDigit(_ byte: UInt8) -> Bool { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) }

    public static func isAlphanumeric(_ byte: UInt8) -> Bool {
        isDigit(byte) || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
    }
}

/// A version an app declares in its desktop entry
/// (`X-FamilyControls-Version=`), as the Guard compares them: one or more
/// dot-separated numbers (`2`, `1.0.1`, `2026.12.4`), compared number by
/// number from the left, a missing number counting as 0 (so `1.0` equals
/// `1`). Leading zeros do not count (`1.02` equals `1.2`).
///
/// Anything else (`1.0-beta`, `v2`, `1..2`, an empty text, more than
/// ``maximumLength`` bytes) is not a comparable version: it is never newer
/// than another, so a signed update declaring it is a guardian's decision.
public struct UpdateVersion: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// The longest version text compared.
    public static let maximumLength = 64
    /// The desktop entry key that declares it.
    public static let desktopEntryKey = "X-FamilyControls-Version"

    /// The text as declared.
    public let text: String
    /// Each number's digits, leading zeros removed ("0" is empty), so
    /// numbers of any length compare without overflow.
    private let numbers: [[UInt8]]

    /// Parses a declared version strictly.
    /// - Returns: nil when `text` is not one or more dot-separated numbers
    ///   of ASCII digits, at most ``maximumLength`` bytes.
    public init?(_ text: some StringProtocol) {
        let bytes = Array(text.utf8)
        guard !bytes.isEmpty, bytes.count <= Self.maximumLength else { return nil }
        var numbers: [[UInt8]] = [[]]
        var digitsInPart = 0
        for byte in bytes {
            if byte == UInt8(ascii: ".") {
                guard digitsInPart > 0 else { return nil }
                numbers.append([])
                digitsInPart = 0
            } else if byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") {
                digitsInPart += 1
                if !(numbers[numbers.count - 1].isEmpty && byte == UInt8(ascii: "0")) {
                    numbers[numbers.count - 1].append(byte)
                }
            } else {
                return nil
            }
        }
        guard digitsInPart > 0 else { return nil }
        while numbers.count > 1, numbers.last?.isEmpty == true { numbers.removeLast() }
        self.text = String(decoding: bytes, as: UTF8.self)
        self.numbers = numbers
    }

    public var description: String { text }

    /// Equal when every number is (`1.0` and `1`), whatever the text.
    public static func == (left: UpdateVersion, right: UpdateVersion) -> Bool { left.numbers == right.numbers }

    public func hash(into hasher: inout Hasher) { hasher.combine(numbers) }

    public static func < (left: UpdateVersion, right: UpdateVersion) -> Bool {
        for index in 0..<max(left.numbers.count, right.numbers.count) {
            let a = index < left.numbers.count ? left.numbers[index] : []
            let b = index < right.numbers.count ? right.numbers[index] : []
            if a == b { continue }
            // Without leading zeros, a longer number is a larger one.
            if a.count != b.count { return a.count < b.count }
            return a.lexicographicallyPrecedes(b)
        }
        return false
    }

    /// Whether `declared` (a version's text, or nil for none) is newer than
    /// `highest` (the highest this approval has had): false whenever either
    /// cannot be compared, so an unknown is never "newer".
    public static func isNewer(_ declared: String?, than highest: String?) -> Bool {
        guard let declared = declared.flatMap({ UpdateVersion($0) }),
              let highest = highest.flatMap({ UpdateVersion($0) }) else { return false }
        return highest < declared
    }

    /// The higher of a recorded highest version and a version just let in:
    /// `declared` when it is comparable and newer (or nothing comparable was
    /// recorded), else `highest`.
    public static func highest(_ highest: String?, _ declared: String?) -> String? {
        guard let declared, let new = UpdateVersion(declared) else { return highest }
        guard let highest, let old = UpdateVersion(highest) else { return new.text }
        return old < new ? new.text : old.text
    }
}

/// The naming rules of the Varlink specification.
///
/// An interface name is reverse-domain notation: at least two dot-separated
/// labels of letters, digits and inner hyphens, the first starting with a
/// letter (`org.varlink.service`, `com.example.family-controls`). A member
/// (method, error or type) name is an uppercase letter then letters and digits.
package enum VarlinkName {
    /// Longest interface name accepted, as for a domain name.
    package static let maximumInterfaceNameLength = 255

    /// Whether `name` is a valid interface name.
    package static func isValidInterfaceName<S: StringProtocol>(_ name: S) -> Bool {
        let bytes = name.utf8
        guard !bytes.isEmpty, bytes.count <= maximumInterfaceNameLength else { return false }
        var labels = 0
        var labelLength = 0
        var previous: UInt8 = UInt8(ascii: ".")
        for byte in bytes {
            switch byte {
            case UInt8(ascii: "."):
                guard labelLength > 0, previous != UInt8(ascii: "-") else { return false }
                labels += 1
                labelLength = 0
            case UInt8(ascii: "-"):
                guard labelLength > 0 else { return false }
                labelLength += 1
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"):
                labelLength += 1
            case UInt8(ascii: "0")...UInt8(ascii: "9"):
                // Only the first label must begin with a letter.
                guard labels > 0 || labelLength > 0 else { return false }
                labelLength += 1
            default:
                return false
            }
            previous = byte
        }
        guard labelLength > 0, previous != UInt8(ascii: "-") else { return false }
        return labels + 1 >= 2
    }

    /// Whether `name` is a valid method, error or type name.
    package static func isValidMemberName<S: StringProtocol>(_ name: S) -> Bool {
        let bytes = name.utf8
        guard let first = bytes.first, (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(first) else { return false }
        return bytes.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                 UInt8(ascii: "0")...UInt8(ascii: "9"): true
            default: false
            }
        }
    }

    /// Splits a qualified name (`org.example.Method`) at its last dot.
    /// - Returns: nil unless both parts are valid.
    package static func split(qualified name: String) -> (interface: Substring, member: Substring)? {
        guard let dot = name.utf8.lastIndex(of: UInt8(ascii: ".")) else { return nil }
        let interface = name[..<dot]
        let member = name[name.index(after: dot)...]
        guard isValidInterfaceName(interface), isValidMemberName(member) else { return nil }
        return (interface, member)
    }
}

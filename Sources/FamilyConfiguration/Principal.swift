/// A user named in the family configuration: a user name, or `@group` for
/// every member of a group as NSS reports it.
package enum Principal: Hashable, Sendable, CustomStringConvertible {
    case user(String)
    case group(String)

    /// Parses `bob` or `@parents`; nil when the name is not a valid user or group name.
    package init?(_ token: String) {
        if token.hasPrefix("@") {
            let name = String(token.dropFirst())
            guard Principal.isValidName(name) else { return nil }
            self = .group(name)
        } else {
            guard Principal.isValidName(token) else { return nil }
            self = .user(token)
        }
    }

    package var description: String {
        switch self {
        case .user(let name): name
        case .group(let name): "@" + name
        }
    }

    /// The names `useradd` and directory services accept: letters, digits,
    /// `_`, `.`, `-`, not starting with `-`, an optional trailing `$`, at most 256.
    package static func isValidName(_ name: String) -> Bool {
        guard !name.isEmpty, name.utf8.count <= 256, name.first != "-", name != ".", name != ".." else { return false }
        let body = name.hasSuffix("$") ? name.dropLast() : Substring(name)
        return !body.isEmpty && body.isASCIIName(alsoAllowing: "_.-")
    }
}

import SystemKit

/// An `[Apps] Roots=` entry such as `/home/%u/Applications`: a folder whose
/// direct subfolders are app directories, with `%u` (user name), `%h` (home)
/// and `%%` expanded per user.
package enum AppRootTemplate {
    /// Why `template` is not acceptable, or nil when it is.
    package static func problem(with template: String) -> String? {
        guard template.hasPrefix("/") else { return "expects absolute paths" }
        var chars = template.makeIterator()
        var perUser = false
        while let char = chars.next() {
            if char == "%" {
                guard let next = chars.next(), "uh%".contains(next) else {
                    return "knows only %u (user name), %h (home) and %%"
                }
                if next != "%" { perUser = true }
            }
        }
        let components = template.split(separator: "/")
        if components.contains("..") || components.contains(".") { return "must not contain . or .. components" }
        // A root shared by every user (/, /home, /tmp) would let a child make
        // any folder there, another user's included, "its" app.
        guard perUser else {
            return "must be a folder of each user's own, with %u (user name) or %h (home) in it"
        }
        if template.utf8.count > 1024 { return "path is too long" }
        return nil
    }

    /// `template` with `%u`, `%h` and `%%` filled in for `account`, without a trailing slash.
    package static func expand(_ template: String, for account: UserAccount) -> String {
        var result = ""
        var chars = template.makeIterator()
        while let char = chars.next() {
            guard char == "%" else { result.append(char); continue }
            switch chars.next() {
            case "u": result += account.name
            case "h": result += account.home.hasSuffix("/") ? String(account.home.dropLast()) : account.home
            default: result.append("%")
            }
        }
        while result.count > 1 && result.hasSuffix("/") { result.removeLast() }
        return result
    }
}

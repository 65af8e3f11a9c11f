#if canImport(Glibc)
import Glibc
#endif
import SystemKit

/// A machine named with `-H [USER@]HOST[:PORT]`: where ssh(1) logs in to run
/// the `familyctl --stdio-bridge` installed there, as `systemctl -H` runs
/// systemd-stdio-bridge.
struct RemoteHost: Sendable, Hashable {
    /// The login name, or nil for ssh's own choice (its configuration, else the caller's name).
    var user: String?
    /// The host name or address, as ssh takes it (an IPv6 address without brackets).
    var host: String
    /// The SSH port, or nil for ssh's own choice.
    var port: Int?
    /// As written on the command line: what messages and lines name the machine by.
    var name: String

    /// What ssh runs on the machine: the installed `familyctl`, found in the
    /// login's `PATH`, as a relay to the Guard's socket there.
    static let remoteCommand = ["familyctl", "--stdio-bridge"]

    /// The ssh program: `FAMILYCTL_SSH` (a site's wrapper, a test's), else `ssh` in `PATH`.
    static var program: String {
        if let variable = getenv("FAMILYCTL_SSH"), let value = String(validatingCString: variable), !value.isEmpty {
            return value
        }
        return "ssh"
    }

    /// Parses `[USER@]HOST[:PORT]`; an IPv6 address with a port is written `[ADDRESS]:PORT`.
    /// - Parameter place: where the text was written, first in a failure's
    ///   message: `-H`, or a hosts file's name and line.
    /// - Throws: a usage failure naming what is wrong: nothing here reaches a shell,
    ///   but a name that ssh would read as an option is refused all the same.
    init(parsing text: String, place: String = "-H") throws(CommandFailure) {
        func refuse(_ why: String) -> CommandFailure {
            CommandFailure(.usage, "\(place) \"\(text.clipped)\": \(why) (expected [USER@]HOST[:PORT])")
        }
        name = text
        var rest = Substring(text)
        if let at = rest.lastIndex(of: "@") {
            let login = String(rest[..<at])
            guard !login.isEmpty, !login.hasPrefix("-"), login.utf8.allSatisfy(Self.isNameByte) else {
                throw refuse("not a user name")
            }
            user = login
            rest = rest[rest.index(after: at)...]
        } else {
            user = nil
        }
        var portText: Substring?
        if rest.hasPrefix("[") {
            guard let close = rest.firstIndex(of: "]") else { throw refuse("an unclosed [") }
            let after = rest[rest.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else { throw refuse("text after ]") }
                portText = after.dropFirst()
            }
            rest = rest[rest.index(after: rest.startIndex)..<close]
        } else if rest.filter({ $0 == ":" }).count == 1, let colon = rest.firstIndex(of: ":") {
            portText = rest[rest.index(after: colon)...]
            rest = rest[..<colon]
        }
        guard !rest.isEmpty, !rest.hasPrefix("-"), rest.utf8.allSatisfy(Self.isHostByte) else {
            throw refuse("not a host name or address")
        }
        host = String(rest)
        if let portText {
            guard let number = Int(portText), (1...65535).contains(number) else { throw refuse("not a port number") }
            port = number
        } else {
            port = nil
        }
    }

    /// `-H HOST1,HOST2,…`, or `-H @FILE` (see ``hostsFile(at:)``): each
    /// machine once, in order.
    static func list(_ text: String) throws(CommandFailure) -> [RemoteHost] {
        if text.hasPrefix("@") { return try hostsFile(at: String(text.dropFirst())) }
        var hosts: [RemoteHost] = []
        for item in text.split(separator: ",", omittingEmptySubsequences: false) {
            let host = try RemoteHost(parsing: String(item))
            if !hosts.contains(host) { hosts.append(host) }
            guard hosts.count <= maximumHosts else {
                throw CommandFailure(.usage, "-H names more than \(maximumHosts) machines")
            }
        }
        return hosts
    }

    /// ssh's arguments: no X11 or agent forwarding asked, no terminal, no
    /// escape character (the stream is binary), a keep-alive that notices a
    /// machine gone silent, then the machine and the command. ssh's own
    /// prompts (a new host key, a key's passphrase) use `/dev/tty`, so they
    /// still reach the person at this terminal.
    var sshArguments: [String] {
        var arguments = ["-xT", "-e", "none", "-o", "ServerAliveInterval=15", "-o", "ServerAliveCountMax=3"]
        if let port { arguments += ["-p", String(port)] }
        if let user { arguments += ["-l", user] }
        return arguments + ["--", host] + Self.remoteCommand
    }

    /// The machine's name for messages, safe on a terminal.
    var shown: String { DisplayText.sanitized(name) }

    private static func isNameByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
             UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "-"),
             UInt8(ascii: "$"):
            true
        default: false
        }
    }

    private static func isHostByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
             UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "-"),
             UInt8(ascii: ":"), UInt8(ascii: "%"):
            true
        default: false
        }
    }
}

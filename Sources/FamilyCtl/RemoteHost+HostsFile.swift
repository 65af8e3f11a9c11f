#if canImport(Glibc)
import Glibc
#endif
import SystemKit

// `-H @FILE`: the machines of a room or a school, kept in a file.
extension RemoteHost {
    /// The most machines one command asks at once (one thread and one ssh each).
    static let maximumHosts = 1000

    /// The largest hosts file read: a thousand names with comments fit well within it.
    static let maximumHostsFileBytes = 64 << 10

    /// Reads the hosts file at `path` and parses it with ``hostsFile(_:named:)``.
    /// - Throws: a usage failure naming the file: it cannot be read, is
    ///   larger than ``maximumHostsFileBytes``, or is not a valid list.
    static func hostsFile(at path: String) throws(CommandFailure) -> [RemoteHost] {
        guard !path.isEmpty else { throw CommandFailure(.usage, "-H @FILE needs a file name after the @") }
        let bytes: [UInt8]
        do throws(Errno) {
            bytes = try FileDescriptor.readFile(path, limit: maximumHostsFileBytes + 1)
        } catch {
            throw CommandFailure(.usage, "-H @\(path.clipped): cannot read the hosts file: \(error)")
        }
        guard bytes.count <= maximumHostsFileBytes else {
            throw CommandFailure(.usage, "-H @\(path.clipped): the hosts file is larger than "
                + "\(maximumHostsFileBytes >> 10) KiB")
        }
        // A byte order mark, as some editors write, is not part of the first name.
        let text = bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? bytes.dropFirst(3) : bytes[...]
        return try hostsFile(String(decoding: text, as: UTF8.self), named: path)
    }

    /// The machines `text`, a hosts file called `name`, lists: one
    /// `[USER@]HOST[:PORT]` a line, blank lines and everything from a `#`
    /// to the end of its line ignored, each machine once, in order.
    /// - Throws: a usage failure naming the file and line of a machine that
    ///   is not one, or saying that the file names no machine, or more than
    ///   ``maximumHosts``.
    static func hostsFile(_ text: String, named name: String) throws(CommandFailure) -> [RemoteHost] {
        var hosts: [RemoteHost] = []
        // "\r\n" is one Character: a file written on Windows splits the same.
        let lines = text.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r\n" })
        for (index, line) in lines.enumerated() {
            let entry = (line.firstIndex(of: "#").map { line[..<$0] } ?? line).trimmingWhitespace()
            if entry.isEmpty { continue }
            let host = try RemoteHost(parsing: entry, place: "-H @\(name.clipped), line \(index + 1):")
            if !hosts.contains(host) { hosts.append(host) }
            guard hosts.count <= maximumHosts else {
                throw CommandFailure(.usage, "-H @\(name.clipped): the hosts file names more than \(maximumHosts) machines")
            }
        }
        guard !hosts.isEmpty else {
            throw CommandFailure(.usage, "-H @\(name.clipped): the hosts file names no machine")
        }
        return hosts
    }
}

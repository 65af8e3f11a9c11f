#if canImport(Glibc)
import Glibc
#endif

extension ProcessHandle {
    /// Whether the process behind `pidfd` has exited, reaped or not: a pidfd
    /// is readable once its process has ended (`pidfd_open(2)`). A zombie
    /// counts as exited, where ``isAlive(pidfd:)`` counts it alive.
    public static func hasExited(pidfd: CInt) -> Bool {
        var entry = pollfd(fd: pidfd, events: Int16(POLLIN), revents: 0)
        return poll(&entry, 1, 0) == 1 && entry.revents & Int16(POLLIN) != 0
    }

    /// Waits until every process behind `pidfds` has exited or `deadline`
    /// passed, whichever is first (`poll(2)` on the pidfds, retried after an
    /// interruption with the time left).
    /// - Returns: whether every one has exited.
    public static func waitUntilExited(_ pidfds: [CInt], until deadline: MonotonicInstant) -> Bool {
        var waiting = pidfds.filter { !hasExited(pidfd: $0) }
        while !waiting.isEmpty {
            var entries = waiting.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
            let ready = poll(&entries, nfds_t(entries.count), Poll.milliseconds(until: deadline))
            if ready < 0, errno != EINTR { return false }
            waiting = zip(waiting, entries).filter { $0.1.revents & Int16(POLLIN) == 0 }.map(\.0)
            if !waiting.isEmpty, MonotonicInstant.now >= deadline { return false }
        }
        return true
    }
}

#if canImport(Glibc)
import Glibc
#endif

extension FileDescriptor {
    /// Waits for, then holds, a write lock on the whole file (`fcntl(2)`
    /// `F_SETLKW`, an advisory record lock), released when the descriptor closes.
    /// - Throws: `Errno` from `fcntl`.
    public func lockForWriting() throws(Errno) {
        var lock = flock()
        lock.l_type = Int16(F_WRLCK)
        lock.l_whence = Int16(SEEK_SET)
        _ = try retryingOnInterrupt("fcntl F_SETLKW") { fcntl(rawValue, F_SETLKW, &lock) }
    }

    /// Flushes the file to its disk (`fsync(2)`).
    /// - Throws: `Errno` from `fsync`.
    public func sync() throws(Errno) {
        _ = try retryingOnInterrupt("fsync") { fsync(rawValue) }
    }

    /// Puts `bytes` at `path` in one step: written to `path` + `suffix`
    /// (created with `mode`, replacing a stale one), flushed, then renamed
    /// over `path` (`rename(2)`), so a reader sees the old file or the new
    /// one, never a part.
    /// - Throws: `Errno` from `open`, `write`, `fsync` or `rename`; the
    ///   temporary file is removed on failure.
    public static func replaceFile(_ path: String, with bytes: [UInt8], mode: mode_t,
                                   temporarySuffix suffix: String = ".tmp") throws(Errno) {
        let temporary = path + suffix
        _ = unlink(temporary)
        do throws(Errno) {
            let file = try open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, mode: mode)
            try file.writeAll(bytes)
            try file.sync()
            file.close()
            _ = try retryingOnInterrupt("rename \(temporary)") { rename(temporary, path) }
        } catch {
            _ = unlink(temporary)
            throw error
        }
    }
}

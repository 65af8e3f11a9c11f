#if canImport(Glibc)
import Glibc
#endif
import SystemKit

// The store is for root's eyes only: it names who approved what. SQLite would
// create files 0644, so the directory and database are made here first; SQLite
// gives its -wal and -shm files the database's mode when it creates them.
extension Store {
    /// Creates `directory` with mode 0700 if it is missing, and refuses one
    /// that is not a directory owned by this process's user, or that others may write.
    static func prepareDirectory(_ directory: String) throws(StoreError) {
        if mkdir(directory, 0o700) != 0 {
            let code = errno
            guard code == EEXIST else {
                throw .directoryUnavailable(path: directory, Errno(code, operation: "mkdir"))
            }
        }
        var info = stat()
        guard stat(directory, &info) == 0 else {
            throw .directoryUnavailable(path: directory, .current("stat"))
        }
        let isDirectory = info.st_mode & S_IFMT == S_IFDIR
        guard isDirectory, info.st_uid == geteuid(), info.st_mode & 0o022 == 0 else {
            throw .insecureDirectory(path: directory, owner: info.st_uid, mode: info.st_mode)
        }
    }

    /// Creates the database file with mode 0600 if it is missing, and narrows
    /// the mode of an existing one and of its `-wal` and `-shm` companions.
    static func prepareDatabaseFile(_ path: String) throws(StoreError) {
        var info = stat()
        if lstat(path, &info) != 0 {
            let code = errno
            guard code == ENOENT else { throw .fileUnavailable(path: path, Errno(code, operation: "lstat")) }
            do throws(Errno) {
                // O_EXCL: nobody has the new file open, so closing it here
                // cannot drop a POSIX lock SQLite holds on it.
                try FileDescriptor.open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, mode: 0o600).close()
            } catch where error.rawValue == EEXIST {
                // Another process created it first; the checks below still apply.
            } catch {
                throw .fileUnavailable(path: path, error)
            }
            guard lstat(path, &info) == 0 else { throw .fileUnavailable(path: path, .current("lstat")) }
        }
        try protect(path, info)
        for companion in [path + "-wal", path + "-shm"] {
            var companionInfo = stat()
            if lstat(companion, &companionInfo) != 0 {
                let code = errno
                // A missing companion is created by SQLite with the database's mode.
                guard code == ENOENT else { throw .fileUnavailable(path: companion, Errno(code, operation: "lstat")) }
                continue
            }
            try protect(companion, companionInfo)
        }
    }

    /// Makes `path`, which `lstat` found as `info`, mode 0600.
    ///
    /// `chmod` by path is safe after `lstat` because only this user can write
    /// the directory (``prepareDirectory(_:)``), so nobody can swap the file
    /// between the two calls; and it opens no descriptor whose close would drop
    /// SQLite's locks on a database another connection has open.
    private static func protect(_ path: String, _ info: stat) throws(StoreError) {
        guard info.st_mode & S_IFMT == S_IFREG else { throw .notARegularFile(path: path) }
        guard info.st_mode & 0o7777 != 0o600 else { return }
        guard chmod(path, 0o600) == 0 else { throw .fileUnavailable(path: path, .current("chmod")) }
    }
}

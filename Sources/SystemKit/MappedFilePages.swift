internal import CSystem

/// The pages the process maps from its program's and its libraries' files
/// and never writes: their code and constants.
public enum MappedFilePages {
    /// Lets go of them. A long-lived process that ran its start-up once then
    /// keeps resident only the code it goes on running: the pages stay in
    /// the page cache and come back unchanged when run or read. Writable
    /// segments (data, relocated tables) are never touched, and the loader's
    /// lock is held throughout, so a library loaded or unloaded by another
    /// thread at the same moment is never half seen.
    ///
    /// Maps to `dl_iterate_phdr(3)` and `madvise(2)` (`MADV_DONTNEED`) over
    /// each read-only `PT_LOAD` segment.
    /// - Returns: the bytes let go.
    /// - Throws: when nothing could be let go (`madvise` refused, by a
    ///   system call filter for one).
    @discardableResult
    public static func release() throws(Errno) -> Int {
        // Nothing after the walk but returning: whatever runs next maps its pages again.
        let released = csystem_release_loaded_code_pages()
        guard released >= 0 else { throw Errno.current("madvise MADV_DONTNEED") }
        return released
    }

    /// The bytes ``release()`` would let go of now, letting go of nothing:
    /// for a caller that says what it does before it does it, since anything
    /// run afterwards (a log line) maps its own pages again.
    public static var releasable: Int {
        max(0, csystem_loaded_code_pages_size())
    }
}

#if canImport(Glibc)
import Glibc
#endif

/// Writes `text` to standard error unbuffered (no `FILE *`, which Swift 6 cannot
/// share across threads safely).
public func writeToStandardError(_ text: String) {
    var bytes = Array(text.utf8)
    bytes.withUnsafeMutableBytes { buffer in
        guard let base = buffer.baseAddress else { return }
        var offset = 0
        while offset < buffer.count {
            let n = write(2, base + offset, buffer.count - offset)
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { return }
            offset += n
        }
    }
}

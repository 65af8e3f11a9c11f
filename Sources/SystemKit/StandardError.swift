#if canImport(Glibc)
import Glibc
#endif

/// Writes `text` to standard error unbuffered (no `FILE *`, which Swift 6 cannot
/// share across threads safely).
public func writeToStandardError(_ text: String) {
    write(text, to: 2)
}

/// Writes `text` to standard output at once, unbuffered: for lines that must
/// reach a pipe as they happen (a watch).
public func writeToStandardOutput(_ text: String) {
    write(text, to: 1)
}

private func write(_ text: String, to descriptor: CInt) {
    var bytes = Array(text.utf8)
    bytes.withUnsafeMutableBytes { buffer in
        guard let base = buffer.baseAddress else { return }
        var offset = 0
        while offset < buffer.count {
            // Nowhere to report a failure to write to standard error: the rest is dropped.
            guard let n = try? retryingOnInterrupt("write", { Glibc.write(descriptor, base + offset, buffer.count - offset) }),
                  n > 0 else { return }
            offset += n
        }
    }
}

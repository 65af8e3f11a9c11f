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
            let n = Glibc.write(descriptor, base + offset, buffer.count - offset)
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { return }
            offset += n
        }
    }
}

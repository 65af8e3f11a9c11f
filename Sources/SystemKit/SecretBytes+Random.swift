#if canImport(Glibc)
import Glibc
#endif
internal import CSystem

extension SecretBytes {
    /// `count` bytes from the kernel's random number generator
    /// (`getrandom(2)`, blocking only until it is seeded at boot).
    /// - Throws: `Errno` from `getrandom`.
    public static func random(count: Int) throws(Errno) -> SecretBytes {
        var bytes = [UInt8](repeating: 0, count: count)
        var filled = 0
        var failure: Errno?
        bytes.withUnsafeMutableBytes { buffer in
            while filled < count {
                do throws(Errno) {
                    filled += try retryingOnInterrupt("getrandom") {
                        csystem_getrandom(buffer.baseAddress.map { $0 + filled }, count - filled, 0)
                    }
                } catch {
                    failure = error
                    return
                }
            }
        }
        defer { bytes.withUnsafeMutableBytes { SecretBytes.zero($0) } }
        if let failure { throw failure }
        return SecretBytes(consuming: &bytes)
    }
}

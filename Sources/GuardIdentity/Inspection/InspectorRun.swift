#if canImport(Glibc)
import Glibc
#endif
import SystemKit

/// One running inspector: its output read until it ends, everything by
/// `until`, after which it is killed. Always reaped.
struct InspectorRun {
    let process: UserProcess
    let output: FileDescriptor
    let until: MonotonicInstant

    /// The whole output, once the inspector exited with status 0.
    func collect() throws(InspectionFailure) -> [UInt8] {
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 << 10)
        defer { if process.exit == nil { process.send(SIGKILL); reap(until: nil) } }
        while true {
            let ready: Int16?
            do throws(Errno) {
                ready = try Poll.wait(for: Int16(POLLIN), on: output.rawValue, until: until)
            } catch {
                throw .failed("the inspector (pid \(process.pid)) could not be waited for: \(error)")
            }
            guard ready != nil else { throw hung() }
            var failure: Errno?
            let count = chunk.withUnsafeMutableBytes { buffer -> Int in
                do throws(Errno) { return try output.read(into: buffer) } catch { failure = error; return 0 }
            }
            if let failure { throw .failed("the inspector (pid \(process.pid)) could not be read from: \(failure)") }
            if count == 0 { break }
            guard bytes.count + count <= Inspector.replyLimit else {
                throw .failed("the inspector (pid \(process.pid)) answered more than \(Inspector.replyLimit) bytes")
            }
            bytes.append(contentsOf: chunk[0..<count])
        }
        // Its output ended: it exits now, or is killed at the deadline.
        guard let exit = reap(until: until) else { throw hung() }
        guard exit == .exited(0) else {
            throw .failed("the inspector (pid \(process.pid)) ended with \(exit) before it answered")
        }
        return bytes
    }

    private func hung() -> InspectionFailure {
        process.send(SIGKILL)
        reap(until: nil)
        return .failed("the inspector (pid \(process.pid)) did not answer in time and was killed")
    }

    /// Waits for the inspector to end (until `deadline`, or for good when nil) and reaps it.
    @discardableResult
    private func reap(until deadline: MonotonicInstant?) -> UserProcess.Event? {
        while process.exit == nil {
            guard (try? Poll.wait(for: Int16(POLLIN), on: process.pidfd.rawValue, until: deadline)) != nil else { return nil }
            _ = process.poll()
        }
        return process.exit
    }
}

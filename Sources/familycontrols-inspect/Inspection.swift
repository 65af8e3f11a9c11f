#if canImport(Glibc)
import Glibc
#endif
import ChildInspection
import GuardProtocol
import SystemKit
import Varlink

/// One call, start to end: the filter first, then the call, the bytes, the
/// answer. Nothing is read before the filter holds, so a parser a hostile
/// file subverts can do no more than write a wrong answer to the Guard,
/// which checks every answer against the files.
enum Inspection {
    /// The most read from standard input: the largest file any method reads
    /// (a process's memory map), and one byte to tell it was longer.
    static let inputLimit = MemoryMap.limit + 1

    static func main(_ arguments: [String]) -> Int32 {
        do throws(Errno) {
            try SystemCallFilter.restrictToReadingAndWriting()
        } catch {
            return answer(.unknownCall(message: "the system call filter could not be set: \(error)"))
        }
        guard arguments.count == 1 else {
            return answer(.unknownCall(message: "expected one argument, the call; got \(arguments.count)"))
        }
        var parsed: Result<VarlinkCall, VarlinkMessageError>?
        Array(arguments[0].utf8).withUnsafeBytes { bytes in
            parsed = Result { () throws(VarlinkMessageError) in try VarlinkCall(parsing: bytes) }
        }
        guard case .success(let call)? = parsed else {
            return answer(.unknownCall(message: "the call is not a Varlink call"))
        }
        let input: [UInt8]
        do throws(Errno) {
            input = try FileDescriptor(taking: 0).readAll(limit: inputLimit)
        } catch {
            return answer(.refused(message: "standard input could not be read: \(error)"))
        }
        let reply: Result<JSONObject, InspectError>
        switch call.method {
        case Inspect.ReadDesktopEntry.method: reply = Answers.desktopEntry(input)
        case Inspect.ReadFlatpakInfo.method: reply = Answers.flatpakInfo(input)
        case Inspect.ReadExecutableMappings.method: reply = Answers.executableMappings(input)
        default: reply = .failure(.unknownCall(message: "\(call.method) is not a method of \(inspectInterfaceName)"))
        }
        switch reply {
        case .success(let parameters): return write(VarlinkReply(parameters: parameters))
        case .failure(let error): return answer(error)
        }
    }

    private static func answer(_ error: InspectError) -> Int32 {
        write(VarlinkReply(parameters: error.parameters, error: error.name))
    }

    /// Writes the reply on standard output; 0 once it is all written.
    private static func write(_ reply: VarlinkReply) -> Int32 {
        do throws(Errno) {
            try FileDescriptor(taking: 1).writeAll(reply.encoded())
        } catch {
            return 1
        }
        return 0
    }
}

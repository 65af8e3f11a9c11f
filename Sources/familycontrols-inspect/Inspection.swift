#if canImport(Glibc)
import Glibc
#endif
import InspectorService
import SystemKit

/// One call, start to end: the filter first, then the call, the bytes, the
/// answer. Nothing is read before the filter holds, so a parser a hostile
/// file subverts can do no more than write a wrong answer to the Guard,
/// which checks every answer against the files.
enum Inspection {
    static func main(_ arguments: [String]) -> Int32 {
        do throws(Errno) {
            try SystemCallFilter.restrictToReadingAndWriting()
        } catch {
            return write(Answers.failure(.unknownCall(message: "the system call filter could not be set: \(error)")))
        }
        guard arguments.count == 1 else {
            return write(Answers.failure(.unknownCall(message: "expected one argument, the call; got \(arguments.count)")))
        }
        let input: [UInt8]
        do throws(Errno) {
            input = try FileDescriptor(taking: 0).readAll(limit: Answers.inputLimit)
        } catch {
            return write(Answers.failure(.refused(message: "standard input could not be read: \(error)")))
        }
        return write(Answers.reply(toCall: arguments[0], input: input))
    }

    /// Writes the reply on standard output; 0 once it is all written.
    private static func write(_ reply: [UInt8]) -> Int32 {
        do throws(Errno) {
            try FileDescriptor(taking: 1).writeAll(reply)
        } catch {
            return 1
        }
        return 0
    }
}

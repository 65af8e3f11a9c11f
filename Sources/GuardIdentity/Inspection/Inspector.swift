#if canImport(Glibc)
import Glibc
#endif
import GuardProtocol
import SystemKit
import Varlink

/// The inspector (`familycontrols-inspect`), started for one call: what a
/// child or a remote wrote is read there, never in the Guard. The Guard
/// opens and checks the file, hands the inspector the descriptor as its
/// standard input, and takes one typed reply from its standard output.
///
/// The inspector runs as ``user`` (by default `nobody`) with no supplementary
/// group and no capability, in a session of its own, not dumpable, and sets
/// a system call filter before it reads a byte (familycontrols-inspect(8)).
/// polkitd's agent helper and OpenSSH's privilege separation work the same way.
///
/// It has ``deadline`` to answer; one that hangs is killed, one that crashes
/// is reaped: either fails that one call with an ``InspectionFailure``, and
/// the Guard serves on.
package struct Inspector: Sendable {
    /// The program.
    package var executable: String
    /// Who the inspector runs as.
    package var uid: uid_t
    package var gid: gid_t
    /// How long a call may take, start to reaped.
    package var deadline: Duration
    /// The longest reply read: the map of a process with every mapping the
    /// inspector reads, in JSON.
    package static let replyLimit = 64 << 20

    /// Answers calls in this process instead of starting the inspector: the
    /// call's text and the input's bytes to the reply frame. The Guard never
    /// sets it (it links no parser); `familycontrols-bench identify` does,
    /// to measure what the process costs.
    package var inProcess: (@Sendable (String, [UInt8]) -> [UInt8])?
    /// The most read of an input answered in this process.
    package static let inputLimit = 4 << 20 + 1

    package init(executable: String, uid: uid_t, gid: gid_t, deadline: Duration = .seconds(5),
                 inProcess: (@Sendable (String, [UInt8]) -> [UInt8])? = nil) {
        self.executable = executable
        self.uid = uid
        self.gid = gid
        self.deadline = deadline
        self.inProcess = inProcess
    }

    /// The inspector installed with the running program, as `nobody`.
    package static let standard = Inspector(executable: InspectorLocation.program(), uid: InspectorLocation.nobody.uid,
                                            gid: InspectorLocation.nobody.gid)

    /// Calls `method` on the bytes of `input`.
    /// - Throws: ``InspectionFailure``: the inspector refused the bytes
    ///   (``InspectionFailure/refused``), or it could not start, hung, crashed
    ///   or answered out of the interface (``InspectionFailure/failed``).
    package func call<Method: GuardMethod>(_ method: Method.Type, parameters: Method.Parameters? = nil,
                                           input: FileDescriptor) throws(InspectionFailure) -> Method.Reply {
        let call = VarlinkCall(method: Method.method, parameters: parameters?.object ?? [:])
        let text = String(decoding: call.encoded().dropLast(), as: UTF8.self)
        if let inProcess {
            let bytes = try InspectionFailure.starting { () throws(Errno) in try input.readAll(limit: Self.inputLimit) }
            return try Self.decode(Method.self, inProcess(text, bytes), pid: getpid())
        }
        let ends = try InspectionFailure.starting { () throws(Errno) in try FileDescriptor.pipe() }
        let process: UserProcess
        do throws(UserProcess.SpawnError) {
            process = try UserProcess.spawn(executable, arguments: [executable, text], environment: [], directory: "/",
                                            uid: uid, gid: gid, realGID: gid, groups: [],
                                            input: input.rawValue, output: ends.write.rawValue)
            ends.write.close()
            try process.release()
        } catch {
            throw .failed("the inspector could not start: \(error) (\(executable))")
        }
        let until = MonotonicInstant.now.advanced(by: deadline)
        let output = try InspectorRun(process: process, output: ends.read, until: until).collect()
        return try Self.decode(Method.self, output, pid: process.pid)
    }

    /// Calls `method` on `bytes` this process holds, handed over sealed.
    package func call<Method: GuardMethod>(_ method: Method.Type, parameters: Method.Parameters? = nil,
                                           bytes: [UInt8]) throws(InspectionFailure) -> Method.Reply {
        let memory = try InspectionFailure.starting { () throws(Errno) in try FileDescriptor.sealedMemory(holding: bytes) }
        return try call(method, parameters: parameters, input: memory)
    }

    private static func decode<Method: GuardMethod>(_ method: Method.Type, _ output: [UInt8],
                                                    pid: pid_t) throws(InspectionFailure) -> Method.Reply {
        guard output.last == 0 else { throw .failed("the inspector (pid \(pid)) answered without ending its reply") }
        var parsed: Result<VarlinkReply, VarlinkMessageError>?
        output.dropLast().withUnsafeBytes { bytes in
            parsed = Result { () throws(VarlinkMessageError) in try VarlinkReply(parsing: bytes) }
        }
        guard case .success(let reply)? = parsed else {
            throw .failed("the inspector (pid \(pid)) answered with a malformed reply")
        }
        if let name = reply.error {
            let error = try? InspectError(name: name, parameters: reply.parameters)
            switch error {
            case .refused(let message)?: throw .refused(message)
            case .unknownCall(let message)?: throw .failed("the inspector refused the call: \(message)")
            case nil: throw .failed("the inspector (pid \(pid)) answered with an error not of its interface")
            }
        }
        do throws(ProtocolDecodingError) {
            return try Method.Reply(reply.parameters, at: "", strict: true)
        } catch {
            throw .failed("the inspector (pid \(pid)) answered out of its interface: \(error)")
        }
    }
}

/// Why an inspection gave no answer.
package enum InspectionFailure: Error, Equatable, CustomStringConvertible {
    /// The bytes are not what the method reads (the inspector's words).
    case refused(String)
    /// The inspector could not start, hung, crashed, or answered out of its interface.
    case failed(String)

    package var description: String {
        switch self {
        case .refused(let message): message
        case .failed(let message): message
        }
    }

    static func starting<T>(_ body: () throws(Errno) -> T) throws(InspectionFailure) -> T {
        do throws(Errno) { return try body() } catch { throw .failed("the inspector could not start: \(error)") }
    }
}

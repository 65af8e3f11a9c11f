import ChildInspection
import GuardProtocol
import Varlink

/// Each method's answer: the parser's result as the interface's type.
/// familycontrols-inspect runs these; nothing the Guard's process links may
/// (ArchitectureTests).
package enum Answers {
    package static func desktopEntry(_ input: [UInt8]) -> Result<JSONObject, InspectError> {
        guard input.count <= DesktopEntry.sizeLimit else {
            return .failure(.refused(message: "the desktop entry is larger than \(DesktopEntry.sizeLimit) bytes"))
        }
        guard let text = String(validating: input, as: UTF8.self) else {
            return .failure(.refused(message: "the desktop entry is not UTF-8 text"))
        }
        let entry = DesktopEntry(parsing: text)
        let typed = Inspect.DesktopEntry(
            name: entry.name, program: entry.program, declaresFamilyControls: entry.declaresFamilyControls,
            updateKeys: entry.updateKeys, versions: entry.versions, monitor: entry.monitor, monitorRequired: entry.monitorRequired)
        return .success(Inspect.ReadDesktopEntry.Reply(entry: typed).object)
    }

    package static func flatpakInfo(_ input: [UInt8]) -> Result<JSONObject, InspectError> {
        let info: FlatpakInfo
        do throws(FlatpakInfoError) {
            info = try FlatpakInfo(parsing: input)
        } catch {
            return .failure(.refused(message: "\(error)"))
        }
        let typed = Inspect.FlatpakInfo(
            appID: info.appID, runtime: info.runtime, appPath: info.appPath, appCommit: info.appCommit,
            runtimePath: info.runtimePath, runtimeCommit: info.runtimeCommit, instanceID: info.instanceID,
            branch: info.branch, arch: info.arch, flatpakVersion: info.flatpakVersion)
        return .success(Inspect.ReadFlatpakInfo.Reply(info: typed).object)
    }

    package static func executableMappings(_ input: [UInt8]) -> Result<JSONObject, InspectError> {
        let mappings: [MemoryMapping]
        do throws(MemoryMap.Problem) {
            mappings = try MemoryMap.executableMappings(input)
        } catch {
            return .failure(.refused(message: "the memory map is longer than \(MemoryMap.limit) bytes"))
        }
        let typed = mappings.map { mapping in
            Inspect.MemoryMapping(range: mapping.range, major: mapping.device.map { Int64(clamping: $0.major) },
                                  minor: mapping.device.map { Int64(clamping: $0.minor) },
                                  inode: mapping.inode.map { Int64(clamping: $0) }, path: mapping.path)
        }
        return .success(Inspect.ReadExecutableMappings.Reply(mappings: typed).object)
    }
}

extension Answers {
    /// The most read of one input: the largest file any method reads (a
    /// process's memory map), and one byte to tell it was longer.
    package static let inputLimit = MemoryMap.limit + 1

    /// The reply frame (JSON and NUL) to the call `text` on `input`.
    package static func reply(toCall text: String, input: [UInt8]) -> [UInt8] {
        var parsed: Result<VarlinkCall, VarlinkMessageError>?
        Array(text.utf8).withUnsafeBytes { bytes in
            parsed = Result { () throws(VarlinkMessageError) in try VarlinkCall(parsing: bytes) }
        }
        guard case .success(let call)? = parsed else {
            return failure(.unknownCall(message: "the call is not a Varlink call"))
        }
        let answer: Result<JSONObject, InspectError>
        switch call.method {
        case Inspect.ReadDesktopEntry.method: answer = desktopEntry(input)
        case Inspect.ReadFlatpakInfo.method: answer = flatpakInfo(input)
        case Inspect.ReadExecutableMappings.method: answer = executableMappings(input)
        default: answer = .failure(.unknownCall(message: "\(call.method) is not a method of \(inspectInterfaceName)"))
        }
        switch answer {
        case .success(let parameters): return VarlinkReply(parameters: parameters).encoded()
        case .failure(let error): return failure(error)
        }
    }

    /// The reply frame of `error`.
    package static func failure(_ error: InspectError) -> [UInt8] {
        VarlinkReply(parameters: error.parameters, error: error.name).encoded()
    }
}

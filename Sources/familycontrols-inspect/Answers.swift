import ChildInspection
import GuardProtocol
import Varlink

/// Each method's answer: the parser's result as the interface's type.
enum Answers {
    static func desktopEntry(_ input: [UInt8]) -> Result<JSONObject, InspectError> {
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

    static func flatpakInfo(_ input: [UInt8]) -> Result<JSONObject, InspectError> {
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

    static func executableMappings(_ input: [UInt8]) -> Result<JSONObject, InspectError> {
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

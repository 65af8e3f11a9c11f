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
    static func ostreeCommit(_ input: [UInt8]) -> Result<JSONObject, InspectError> {
        do throws(OstreeCommitError) {
            let commit = try OstreeCommitObject(parsing: input)
            let typed = Inspect.OstreeCommit(parent: commit.parent, timestamp: Int64(clamping: commit.timestamp),
                                             refBindings: commit.refBindings)
            return .success(Inspect.ReadOstreeCommit.Reply(commit: typed).object)
        } catch {
            return .failure(.refused(message: "\(error)"))
        }
    }

    static func deploymentOrigin(_ input: [UInt8]) -> Result<JSONObject, InspectError> {
        do throws(OstreeCommitError) {
            return .success(Inspect.ReadDeploymentOrigin.Reply(origin: try DeploymentOrigin.origin(in: input)).object)
        } catch {
            return .failure(.refused(message: "its deploy file: \(error)"))
        }
    }

    static func keyring(_ input: [UInt8]) -> Result<JSONObject, InspectError> {
        do throws(KeyringError) {
            let keys = try OpenPGPKeyringPackets(parsing: input).keys.map { key in
                Inspect.KeyringKey(fingerprint: key.fingerprint, packets: key.packets.map {
                    Inspect.ByteRange(offset: Int64($0.lowerBound), length: Int64($0.count))
                })
            }
            return .success(Inspect.ReadKeyring.Reply(keys: keys).object)
        } catch {
            return .failure(.refused(message: error.description))
        }
    }

    static func remote(_ parameters: JSONObject, _ input: [UInt8]) -> Result<JSONObject, InspectError> {
        let name: String
        do throws(ProtocolDecodingError) {
            name = try Inspect.ReadRemote.Parameters(parameters, strict: true).name
        } catch {
            return .failure(.unknownCall(message: "\(error)"))
        }
        do throws(RepositoryConfigurationError) {
            let remote = try RepositoryRemote.remote(name, in: input)
            return .success(Inspect.ReadRemote.Reply(remote: Inspect.Remote(
                name: remote.name, url: remote.url, gpgVerify: remote.gpgVerify, collectionID: remote.collectionID)).object)
        } catch {
            return .failure(.refused(message: error.description))
        }
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
        case Inspect.ReadOstreeCommit.method: answer = ostreeCommit(input)
        case Inspect.ReadDeploymentOrigin.method: answer = deploymentOrigin(input)
        case Inspect.ReadKeyring.method: answer = keyring(input)
        case Inspect.ReadRemote.method: answer = remote(call.parameters, input)
        case Inspect.ListRemotes.method: answer = .success(Inspect.ListRemotes.Reply(names: RepositoryRemote.remoteNames(in: input)).object)
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

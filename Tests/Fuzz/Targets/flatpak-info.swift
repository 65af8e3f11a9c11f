// The `.flatpak-info` parser, on files at the root of a sandbox, which
// anyone who runs bubblewrap writes as they like. The Guard reads at most
// FlatpakInfo.sizeLimit bytes (familycontrols-inspect); the same here.
//
// Properties, for every input:
// - parsing stays within its heap bound;
// - a refusal's description is one short line;
// - what is accepted is valid for its key: an app ID by Flatpak's rules, an
//   app-path in its one normalized spelling, a commit of 64 hex digits;
// - the info, written back as a file, parses to the same info;
// - a comment line first changes nothing accepted, and accepts nothing refused;
// - a second [Instance] group with another app-path, appended, is refused:
//   never does a later app-path win, as it would in GKeyFile.

import ChildInspection
import FlatpakNames

@c(LLVMFuzzerTestOneInput)
public func fuzzFlatpakInfo(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    withInput(data, size) { raw in
        guard raw.count <= FlatpakInfo.sizeLimit else { return }
        let input = Array(raw)
        // The bound FlatpakInfo states.
        let result = withinHeapBound(16 * input.count + (64 << 10), "parsing \(input.count) bytes") {
            Result { () throws(FlatpakInfoError) in try FlatpakInfo(parsing: input) }
        }
        let commented = Result { () throws(FlatpakInfoError) in try FlatpakInfo(parsing: Array("# note\n".utf8) + input) }
        switch result {
        case .failure(let error):
            require(isOneShortLine(error.description), "the refusal \(error.description.debugDescription) is not one short line")
            if case .success = commented { require(false, "a comment line first made a refused file accepted") }
        case .success(let info):
            require(FlatpakNames.isValidAppID(info.appID), "accepted the app ID \(info.appID.debugDescription)")
            require(FlatpakNames.isNormalizedAbsolutePath(info.appPath), "accepted the app-path \(info.appPath.debugDescription)")
            require(info.appCommit.utf8.count == 64, "accepted the commit \(info.appCommit.debugDescription)")
            require((try? commented.get()) == info, "a comment line first changed \(info)")
            let written = write(info)
            require((try? FlatpakInfo(parsing: Array(written.utf8))) == info,
                    "\(info) written as \(written.debugDescription) reads differently")
            let separated = input.last == 0x0A || input.isEmpty ? input : input + [0x0A]
            let forged = separated + Array("[Instance]\napp-path=/home/child/forged/files\n".utf8)
            require((try? FlatpakInfo(parsing: forged)) == nil, "a second [Instance] group was accepted")
        }
    }
    return 0
}

/// A `.flatpak-info` that says what `info` says and nothing more.
private func write(_ info: FlatpakInfo) -> String {
    var text = "[Application]\nname=\(info.appID)\n"
    if let runtime = info.runtime { text += "runtime=\(runtime)\n" }
    text += "\n[Instance]\ninstance-id=\(info.instanceID)\napp-path=\(info.appPath)\napp-commit=\(info.appCommit)\n"
    if let runtimePath = info.runtimePath { text += "runtime-path=\(runtimePath)\n" }
    if let runtimeCommit = info.runtimeCommit { text += "runtime-commit=\(runtimeCommit)\n" }
    text += "branch=\(info.branch)\narch=\(info.arch)\n"
    if let version = info.flatpakVersion { text += "flatpak-version=\(version)\n" }
    return text
}

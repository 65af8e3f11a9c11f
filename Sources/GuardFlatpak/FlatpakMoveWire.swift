import FamilyConfiguration
import SystemKit
import GuardIdentity

/// One move asked of the Flatpak move service, and its answer, as lines of
/// tab-separated fields on a Unix stream socket only root may connect to
/// (`familycontrols-flatpak.socket`): the Guard writes one request line, the
/// service answers one line and closes.
///
///     move UID HOME APPID ARCH BRANCH COMMIT DEVICE INODE [TRUSTED...]
///     approved REMOTE URL COMMIT TIMESTAMP RUNTIME RUNTIME-COMMIT RUNTIME-TIMESTAMP
///     refused MESSAGE
///
/// The deployment travels as its device and inode: the service walks to it
/// itself, by descriptor, and moves it only when it is that very folder.
/// Each `TRUSTED` field is one remote the site trusts, as its
/// `TrustedRemote=` line reads (`NAME URL FINGERPRINT...`).
enum FlatpakMoveWire {
    /// A line longer than this is refused.
    static let lineLimit = 8 * 1024

    static func request(_ request: FlatpakMoveRequest) -> [UInt8] {
        line(["move", String(request.uid), request.home, request.appID, request.arch, request.branch, request.commit,
              String(request.deployment.device), String(request.deployment.inode)]
             + request.trusted.map { ([$0.name, $0.url] + $0.fingerprints).joined(separator: " ") })
    }

    static func parseRequest(_ bytes: [UInt8]) throws(FlatpakMoveError) -> FlatpakMoveRequest {
        let fields = try Self.fields(bytes)
        guard (9...(9 + FlatpakTrustedRemote.limit)).contains(fields.count), fields[0] == "move", let uid = UInt32(fields[1]), let device = UInt64(fields[7]),
              let inode = UInt64(fields[8]) else {
            throw .invalidRequest("not a move request line")
        }
        let status = FileStatus(device: device, inode: inode, mode: 0, uid: uid, gid: 0, linkCount: 0)
        var trusted: [FlatpakTrustedRemote] = []
        for field in fields.dropFirst(9) {
            switch FlatpakTrustedRemote.parse(field) {
            case .success(let remote): trusted.append(remote)
            case .failure(let error): throw .invalidRequest("a trusted remote: \(error)")
            }
        }
        return FlatpakMoveRequest(uid: uid, home: fields[2], appID: fields[3], arch: fields[4], branch: fields[5],
                                  commit: fields[6], deployment: status, trusted: trusted)
    }

    static func reply(_ result: Result<FlatpakApproval, FlatpakMoveError>) -> [UInt8] {
        switch result {
        case .success(let approval):
            line(["approved", approval.remote, approval.url, approval.commit, String(approval.timestamp),
                  approval.runtime?.name ?? "", approval.runtime?.commit ?? "", String(approval.runtime?.timestamp ?? 0)])
        case .failure(let error):
            line(["refused", String(String(describing: error).map { $0 == "\t" || $0 == "\n" ? " " : $0 })])
        }
    }

    static func parseReply(_ bytes: [UInt8], for request: FlatpakMoveRequest) throws(FlatpakMoveError) -> FlatpakApproval {
        let fields = try Self.fields(bytes)
        if fields.count == 2, fields[0] == "refused" { throw .service(fields[1]) }
        guard fields.count == 8, fields[0] == "approved", FlatpakRemoteConfiguration.isRemoteName(fields[1]),
              FlatpakRemoteConfiguration.isAcceptableURL(fields[2]), fields[3] == request.commit,
              let timestamp = UInt64(fields[4]), let runtimeTime = UInt64(fields[7]) else {
            throw .service("the move service answered with no valid line")
        }
        let runtime = FlatpakRuntimePin(name: fields[5], commit: fields[6], timestamp: runtimeTime)
        guard runtime.parts != nil, OstreeCommit.isChecksum(runtime.commit) else {
            throw .service("the move service named no valid runtime")
        }
        return FlatpakApproval(appID: request.appID, arch: request.arch, branch: request.branch, remote: fields[1],
                               url: fields[2], commit: fields[3], timestamp: timestamp, runtime: runtime)
    }

    private static func line(_ fields: [String]) -> [UInt8] {
        Array((fields.joined(separator: "\t") + "\n").utf8)
    }

    /// The fields of one line: it must end in its newline, hold no other, and no control character but tabs.
    private static func fields(_ bytes: [UInt8]) throws(FlatpakMoveError) -> [String] {
        guard bytes.count <= lineLimit, bytes.last == 10 else { throw .invalidRequest("not one line of at most \(lineLimit) bytes") }
        let body = bytes.dropLast()
        guard !body.contains(where: { ($0 < 0x20 && $0 != 9) || $0 == 0x7f }) else { throw .invalidRequest("a control character in the line") }
        return body.split(separator: 9, omittingEmptySubsequences: false).map { String(decoding: $0, as: UTF8.self) }
    }
}

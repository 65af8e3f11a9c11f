import Foundation
import GuardProtocol
import SystemKit
import VarlinkClientKit

/// What the library knows of the service at the Guard's socket, from the
/// kernel (`SO_PEERCRED`), before it sends a byte.
///
/// Outside a sandbox the Guard is root, and only root: a service run by
/// anyone else is not the Guard. Inside a Flatpak sandbox (a user namespace
/// where uid 0 is not mapped) the kernel shows every user not mapped there,
/// root included, as the overflow uid (65534): the real Guard and a child's
/// own server run as a subordinate uid look the same. There the peer is
/// believed for what a fake could only lie about to the app itself (its
/// status, the alert, a request waiting for a guardian), never for what a
/// fake would keep: nothing secret (a password, a one-time code) is ever
/// sent to an ``unproven`` peer (docs/flatpak.md).
enum GuardPeer: Equatable {
    /// The peer is root: the Guard.
    case proven
    /// The peer shows as the overflow uid from inside a namespace where root
    /// is not mapped: maybe the Guard, maybe not.
    case unproven

    /// The peer of `client`, or the failure that refuses it.
    static func of(_ client: VarlinkClient, path: String) throws(GuardFailure) -> GuardPeer {
        guard let peer = client.peerCredentials else {
            throw GuardFailure(.unavailable, "the service at \(path) runs as an unknown user, not as root: "
                + "it is not the Guard, so nothing was sent to it")
        }
        if peer.uid == 0 { return .proven }
        if peer.uid == overflowUID, rootIsUnmapped { return .unproven }
        throw GuardFailure(.unavailable, "the service at \(path) runs as uid \(peer.uid), not as root: "
            + "it is not the Guard, so nothing was sent to it")
    }

    /// What the app hears instead of a prompt for a secret from an unproven peer.
    static var secretRefused: GuardFailure {
        GuardFailure(.authenticationMethodUnavailable,
                     "this app runs in a sandbox (a user namespace where root is not mapped), where the Guard cannot be "
                         + "told apart from a fake one, so nothing secret is typed here: a parent or guardian approves "
                         + "from their own account (familyctl requests, familyctl approve ID)")
    }

    /// The uid the kernel shows for a user not mapped in this namespace
    /// (`/proc/sys/kernel/overflowuid`, 65534 unless changed).
    static let overflowUID: UInt32 = {
        let text = (try? String(contentsOfFile: "/proc/sys/kernel/overflowuid", encoding: .utf8)) ?? ""
        return UInt32(text.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 65534
    }()

    /// Whether this process runs in a user namespace where no uid maps to
    /// uid 0 inside (`/proc/self/uid_map`): a Flatpak sandbox, never the
    /// host's own namespace, whose map starts at 0.
    static let rootIsUnmapped: Bool = {
        guard let map = try? String(contentsOfFile: "/proc/self/uid_map", encoding: .utf8) else { return false }
        let ranges = map.split(separator: "\n").map { $0.split(separator: " ").compactMap { UInt64($0) } }
        guard !ranges.isEmpty, ranges.allSatisfy({ $0.count == 3 }) else { return false }
        return !ranges.contains { $0[0] == 0 && $0[2] > 0 }
    }()

    /// Whether this process runs in a Flatpak sandbox (`/.flatpak-info`).
    static var inFlatpak: Bool { FileManager.default.fileExists(atPath: "/.flatpak-info") }
}

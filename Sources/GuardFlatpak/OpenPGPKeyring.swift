import FlatpakNames
import GuardProtocol
import GuardIdentity

/// A GnuPG keyring file as Flatpak keeps one for a remote
/// (`repo/REMOTE.trustedkeys.gpg`): the keys it holds, each with its v4
/// fingerprint and its packets. The inspector reads the packets
/// (ChildInspection's OpenPGPKeyringPackets) and says where each key's lie;
/// the packets themselves are cut from the bytes the Guard read, every
/// range checked to lie inside them.
package struct OpenPGPKeyring: Hashable, Sendable {
    /// One key: its fingerprint (40 upper-case hex digits; nil for a version
    /// other than 4) and its packets, as they were.
    package struct Key: Hashable, Sendable {
        package var fingerprint: String?
        package var packets: [UInt8]
    }

    package var keys: [Key]

    /// A keyring larger than this is refused (Flathub's is 1.5 KiB).
    package static let sizeLimit = 1 << 20

    /// The keyring in `bytes`, read by `inspector`.
    /// - Throws: ``FlatpakMoveError/remoteRefused(_:)`` when the bytes are not whole packets.
    package init(inspecting bytes: [UInt8], with inspector: Inspector = .standard) throws(FlatpakMoveError) {
        guard bytes.count <= Self.sizeLimit else { throw .remoteRefused("a keyring over \(Self.sizeLimit) bytes") }
        guard !bytes.isEmpty else {
            keys = []
            return
        }
        let answered: [Inspect.KeyringKey]
        do throws(InspectionFailure) {
            answered = try inspector.call(Inspect.ReadKeyring.self, bytes: bytes).keys
        } catch {
            switch error {
            case .refused(let problem): throw .remoteRefused(problem)
            case .failed(let problem): throw .remoteRefused("the keyring could not be read: \(problem)")
            }
        }
        var keys: [Key] = []
        for key in answered {
            if let fingerprint = key.fingerprint {
                guard fingerprint.utf8.count == 40, fingerprint.utf8.allSatisfy({
                    FlatpakNames.isDigit($0) || (UInt8(ascii: "A")...UInt8(ascii: "F")).contains($0)
                }) else { throw .remoteRefused("the inspector answered a fingerprint that is not one") }
            }
            var packets: [UInt8] = []
            for range in key.packets {
                guard range.offset >= 0, range.length > 0, range.offset <= Int64(bytes.count) - range.length else {
                    throw .remoteRefused("the inspector answered packets outside the keyring")
                }
                packets += bytes[Int(range.offset)..<Int(range.offset + range.length)]
            }
            keys.append(Key(fingerprint: key.fingerprint, packets: packets))
        }
        self.keys = keys
    }

    /// The fingerprints of its keys, in order; a key without one is left out.
    package var fingerprints: [String] { keys.compactMap(\.fingerprint) }

    /// The keys whose fingerprint is one of `trusted`, as a keyring file.
    package func keeping(_ trusted: [String]) -> [UInt8] {
        keys.filter { key in key.fingerprint.map(trusted.contains) ?? false }.flatMap(\.packets)
    }
}

// The keyring and repository-config parsers, on files of a remote as the
// child's per-user installation keeps them: `REMOTE.trustedkeys.gpg`
// (OpenPGP packets) and `repo/config` (a GKeyFile). The Guard cuts the
// trusted keys' packets out of its own copy of the bytes where the inspector
// says they lie, so the ranges must hold.
//
// Properties, for every input:
// - parsing stays within its heap bound;
// - every key's packet ranges lie inside the input, in order, none overlapping
//   another's, and a fingerprint is 40 upper-case hex digits;
// - a remote read from the input as a repository config has an acceptable
//   URL and a plain name, and is listed among its remotes.

import ChildInspection
import FlatpakNames

@c(LLVMFuzzerTestOneInput)
public func fuzzKeyring(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    withInput(data, size) { raw in
        let input = Array(raw)
        let keyring = withinHeapBound(8 * input.count + (64 << 10), "parsing \(input.count) bytes") {
            try? OpenPGPKeyringPackets(parsing: input)
        }
        if let keyring {
            var end = 0
            for key in keyring.keys {
                for range in key.packets {
                    require(range.lowerBound >= end && range.upperBound <= input.count && !range.isEmpty,
                            "a packet range \(range) after \(end) in \(input.count) bytes")
                    end = range.upperBound
                }
                if let fingerprint = key.fingerprint {
                    require(fingerprint.utf8.count == 40 && fingerprint.utf8.allSatisfy {
                        FlatpakNames.isDigit($0) || (UInt8(ascii: "A")...UInt8(ascii: "F")).contains($0)
                    }, "the fingerprint \(fingerprint)")
                }
            }
        }
        let names = RepositoryRemote.remoteNames(in: input)
        require(names.allSatisfy(FlatpakNames.isRemoteName), "a listed name that is not plain: \(names)")
        for name in names.prefix(4) {
            if let remote = try? RepositoryRemote.remote(name, in: input) {
                require(FlatpakNames.isAcceptableRemoteURL(remote.url), "accepted the url \(remote.url.debugDescription)")
            }
        }
    }
    return 0
}

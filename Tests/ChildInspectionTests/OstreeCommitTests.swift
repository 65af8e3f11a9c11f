import ChildInspection
import Foundation
import TestSupport
import FlatpakNames
import Testing

/// A commit object as Flatpak 1.14.10 (libostree 2022.7, GLib's own GVariant
/// serializer) wrote it: `flatpak build-export --subject=second` of
/// `app/org.example.Parsed/x86_64/stable`, the second commit of the branch
/// (`flatpak repo --commits`: 23d0ef3b…, parent 8246837a…, 2026-12-01 21:52:55 UTC).
let genuineCommitObject: [UInt8] = {
    let hex = Array("78612e696e7374616c6c65642d73697a6500000000000000000000000000040000741200000000006f73747265652e636f6c6c656374696f6e2d62696e64696e67000000000000000000731a0000000078612e72656600006170702f6f72672e6578616d706c652e5061727365642f7838365f36342f737461626c65000073076f73747265652e7265662d62696e64696e670000000000006170702f6f72672e6578616d706c652e5061727365642f7838365f36342f737461626c6500250061731300000000000078612e6d6574616461746100000000005b4170706c69636174696f6e5d0a6e616d653d6f72672e6578616d706c652e5061727365640a72756e74696d653d6f72672e6578616d706c652e522f7838365f36342f737461626c650a636f6d6d616e643d780a0000730c78612e646f776e6c6f61642d73697a650000000000000000000000000000009200741123004c008000c200300153018246837a51f05bd7ae0d9bd54a882b88356f8b910705ad5ed73506248cfaca0c7365636f6e64004e616d653a206f72672e6578616d706c652e5061727365640a417263683a207838365f36340a4272616e63683a20737461626c650a4275696c7420776974683a20466c617470616b20312e31342e31300a00000000006b0f41b7b9e3d93c78cf57d5bc4a234caafaafdae90b780c0431b4fda4203db7dbf6e7a6446a0ef11b7cc167f3b603e585c7eeeeb675faa412d5ec73f62988eb0b6c54880002d80186017f017f015f01".utf8)
    return stride(from: 0, to: hex.count, by: 2).map { UInt8(String(decoding: hex[$0..<$0 + 2], as: UTF8.self), radix: 16)! }
}()

@Suite struct OstreeCommitTests {
    @Test func readsTheParentTheTimeAndTheRefBindingOfAGenuineCommit() throws {
        let commit = try OstreeCommitObject(parsing: genuineCommitObject)
        #expect(commit.parent == "8246837a51f05bd7ae0d9bd54a882b88356f8b910705ad5ed73506248cfaca0c")
        #expect(commit.timestamp == 1_796_161_975)
        #expect(commit.refBindings == ["app/org.example.Parsed/x86_64/stable"])
    }

    @Test func everyTruncationIsRefusedOrReadWithinItsBytes() {
        // A shorter object moves the framing offsets: most are refused, none may be read out of bounds.
        for length in 0..<genuineCommitObject.count {
            _ = try? OstreeCommitObject(parsing: Array(genuineCommitObject.prefix(length)))
        }
        #expect(throws: OstreeCommitError.self) { try OstreeCommitObject(parsing: []) }
        #expect(throws: OstreeCommitError.self) { try OstreeCommitObject(parsing: Array(genuineCommitObject.dropLast())) }
    }

    @Test func everyCorruptedByteIsRefusedOrReadWithinTheObject() {
        for index in genuineCommitObject.indices {
            for flip: UInt8 in [0x01, 0x80, 0xff] {
                var bytes = genuineCommitObject
                bytes[index] ^= flip
                if let commit = try? OstreeCommitObject(parsing: bytes) {
                    #expect(commit.parent.map(FlatpakNames.isCommit) ?? true)
                }
            }
        }
    }

    @Test func anObjectOverTheLimitIsRefusedUnread() {
        #expect(throws: OstreeCommitError.tooLarge(OstreeCommitObject.sizeLimit + 1)) {
            try OstreeCommitObject(parsing: [UInt8](repeating: 0, count: OstreeCommitObject.sizeLimit + 1))
        }
    }
}

@Suite struct OstreeCommitRegressionTests {
    /// An input the fuzz target found: a metadata entry shorter than the
    /// padding that aligns it made a range whose start passed its end, a
    /// trap that took the whole process down (then the Guard, now one
    /// inspector). It is refused.
    @Test func aMetadataEntryShorterThanItsPaddingIsRefused() throws {
        let path = packageRoot + "/Tests/Fuzz/Corpus/ostree-commit/crash-entry-shorter-than-its-padding"
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        #expect(throws: OstreeCommitError.malformed("an empty metadata entry")) { try OstreeCommitObject(parsing: bytes) }
    }
}

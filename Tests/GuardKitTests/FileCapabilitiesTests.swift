@testable import GuardKit
import Testing
@testable import GuardDiagnostics

/// The `security.capability` values `--check-config` decodes, as the kernel lays them out.
@Suite struct FileCapabilitiesTests {
    private func bytes(_ words: [UInt32]) -> [UInt8] {
        words.flatMap { word in (0..<4).map { UInt8(truncatingIfNeeded: word >> (8 * $0)) } }
    }

    @Test func aVersion2ValueWithTheEffectiveFlagIsDecodedAndNamed() throws {
        // What `setcap cap_linux_immutable+ep` writes.
        let capabilities = try #require(FileCapabilities(attribute: bytes([0x0200_0001, 1 << 9, 0, 0, 0])))
        #expect(capabilities == FileCapabilities(permitted: 1 << 9, effective: true))
        #expect(capabilities.text == "cap_linux_immutable=ep")
        #expect(capabilities.dangerous.map(\.name) == ["cap_linux_immutable"])
    }

    @Test func capabilitiesAbove31AreReadFromTheSecondWord() throws {
        let capabilities = try #require(FileCapabilities(attribute: bytes([0x0200_0000, 1 << 13, 0, 1 << (39 - 32), 0])))
        #expect(capabilities.text == "cap_net_raw,cap_bpf=p")
        #expect(capabilities.dangerous.isEmpty, "raw sockets and BPF are site policy")
    }

    @Test func aVersion3ValueCountsOnlyForTheMachinesRoot() throws {
        #expect(FileCapabilities(attribute: bytes([0x0300_0001, 1 << 21, 0, 0, 0, 0]))?.text == "cap_sys_admin=ep")
        #expect(FileCapabilities(attribute: bytes([0x0300_0001, 1 << 21, 0, 0, 0, 1000])) == nil,
                "a user namespace's capabilities give nothing outside it")
    }

    @Test(arguments: [[UInt8](), [0, 0, 0, 0x02], [1, 0, 0, 0x09, 0, 0, 0, 0, 0, 0, 0, 0]])
    func aMalformedValueIsNotTakenForCapabilities(value: [UInt8]) {
        #expect(FileCapabilities(attribute: value) == nil)
    }
}

import Testing

/// The suites that install the Debian package on this very machine
/// (`DebianPackageTests`, `AnsibleRolePackageTests`), one after the other:
/// dpkg takes one installation at a time, and one suite's purge would pull
/// the package from under the other, leaving it half installed.
@Suite(.serialized) enum MachinePackageTests {}

/// The machine's own FamilyControls files (`/etc/familycontrols`, the
/// package's programs and PAM lines): the package suites install and purge
/// them, holding them ``exclusively(_:)``; a test elsewhere that puts a file
/// of its own among them (the unit's writable `/etc/familycontrols/oath`)
/// holds them ``shared(_:)``, so a purge never removes it mid-test and the
/// package suites find the machine as they left it. First come, first served.
enum MachineInstallation {
    static func exclusively<R>(_ body: () async throws -> R) async throws -> R {
        try await holding(exclusive: true, body)
    }

    static func shared<R>(_ body: () async throws -> R) async throws -> R {
        try await holding(exclusive: false, body)
    }

    private static let gate = Gate()

    private static func holding<R>(exclusive: Bool, _ body: () async throws -> R) async throws -> R {
        await gate.enter(exclusive: exclusive)
        do {
            let result = try await body()
            await gate.leave(exclusive: exclusive)
            return result
        } catch {
            await gate.leave(exclusive: exclusive)
            throw error
        }
    }

    /// Readers and writers in the order they came.
    private actor Gate {
        private var readers = 0
        private var writing = false
        private var waiting: [(exclusive: Bool, continuation: CheckedContinuation<Void, Never>)] = []

        func enter(exclusive: Bool) async {
            if waiting.isEmpty, admits(exclusive) {
                admit(exclusive)
                return
            }
            await withCheckedContinuation { waiting.append((exclusive, $0)) }
        }

        func leave(exclusive: Bool) {
            if exclusive { writing = false } else { readers -= 1 }
            while let first = waiting.first, admits(first.exclusive) {
                waiting.removeFirst()
                admit(first.exclusive)
                first.continuation.resume()
            }
        }

        private func admits(_ exclusive: Bool) -> Bool { exclusive ? !writing && readers == 0 : !writing }
        private func admit(_ exclusive: Bool) { if exclusive { writing = true } else { readers += 1 } }
    }
}

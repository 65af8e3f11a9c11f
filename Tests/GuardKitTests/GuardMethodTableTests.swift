import Foundation
@testable import GuardKit
import Testing
import TestSupport
import Varlink

/// The Guard's method table binds the interface file's methods, each once,
/// and runs each where ARCHITECTURE.md's method table says.
@Suite struct GuardMethodTableTests {
    /// Where each method runs: the one list the table and ARCHITECTURE.md are held to.
    static let expected: [(method: String, placement: MethodPlacement)] = [
        ("GetStatus", MethodPlacement(runs: .lane, onLoopWhenCallerKnown: true)),
        ("Subscribe", MethodPlacement(runs: .lane)),
        ("RequestAuthorization", MethodPlacement(runs: .conversations)),
        ("Answer", MethodPlacement(runs: .loop)),
        ("RevokeAuthorization", MethodPlacement(runs: .conversations)),
        ("UpdateApp", MethodPlacement(runs: .conversations)),
        ("ListAuthorizations", MethodPlacement(runs: .lane)),
        ("SetStatus", MethodPlacement(runs: .lane, withMore: .decisions)),
        ("Revoke", MethodPlacement(runs: .lane, withMore: .decisions)),
        ("Graduate", MethodPlacement(runs: .lane, withMore: .decisions)),
        ("Forget", MethodPlacement(runs: .lane)),
        ("ListRequests", MethodPlacement(runs: .lane)),
        ("WatchRequests", MethodPlacement(runs: .lane)),
        ("DecideRequest", MethodPlacement(runs: .decisions)),
        ("ReadAudit", MethodPlacement(runs: .lane)),
        ("VerifyLocks", MethodPlacement(runs: .lane)),
        ("EnrollCode", MethodPlacement(runs: .decisions)),
        ("RemoveCode", MethodPlacement(runs: .lane)),
        ("OpenSession", MethodPlacement(runs: .lane)),
        ("CloseSession", MethodPlacement(runs: .lane)),
        ("ListSessions", MethodPlacement(runs: .lane)),
        ("ListMonitors", MethodPlacement(runs: .lane)),
        ("IdentifyMonitor", MethodPlacement(runs: .lane)),
        ("WatchMonitorAlerts", MethodPlacement(runs: .lane)),
        ("SetTimeLimits", MethodPlacement(runs: .conversations)),
        ("GetTimeLimits", MethodPlacement(runs: .lane)),
        ("RequestMoreTime", MethodPlacement(runs: .conversations)),
        ("ListTimeLimits", MethodPlacement(runs: .lane)),
        ("SetChildLimits", MethodPlacement(runs: .lane, withMore: .decisions)),
        ("ClearChildLimits", MethodPlacement(runs: .lane, withMore: .decisions)),
        ("GrantMoreTime", MethodPlacement(runs: .lane, withMore: .decisions)),
    ]

    /// The methods `Config/org.familycontrols.guard.varlink` declares, read by the server's own parser.
    static func declaredMethods() throws -> [String] {
        let text = try String(contentsOfFile: "\(packageRoot)/Config/org.familycontrols.guard.varlink", encoding: .utf8)
        return try VarlinkInterfaceDescription(text).methods.sorted()
    }

    /// How ARCHITECTURE.md's method table writes a placement in its "Runs" column.
    static func cell(_ placement: MethodPlacement) -> String {
        func place(_ place: MethodPlace) -> String {
            switch place {
            case .loop: "the loop"
            case .lane: "the lane"
            case .conversations: "the lane, then `guard-talk`"
            case .decisions: "the lane, then `guard-decide`"
            }
        }
        var text = place(placement.runs)
        if placement.onLoopWhenCallerKnown { text = "the loop if the caller is known, else " + text }
        if let withMore = placement.withMore { text += "; with `more`, " + place(withMore) }
        return text
    }

    /// The rows of ARCHITECTURE.md's method table: method name and "Runs" cell.
    static func documentedPlacements() throws -> [String: String] {
        try documentedColumn(1)
    }

    /// The rows of ARCHITECTURE.md's method table: method name and the cell of column `column` (1 is "Runs").
    static func documentedColumn(_ column: Int) throws -> [String: String] {
        let text = try String(contentsOfFile: "\(packageRoot)/ARCHITECTURE.md", encoding: .utf8)
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        guard let header = lines.firstIndex(where: { $0.hasPrefix("| Method | Runs |") }) else { return [:] }
        var rows: [String: String] = [:]
        for line in lines[(header + 2)...] {
            guard line.hasPrefix("|") else { break }
            let cells = line.split(separator: "|", omittingEmptySubsequences: false).dropFirst()
                .map { $0.trimmingCharacters(in: .whitespaces) }
            guard cells.count > column else { continue }
            rows[cells[0].trimmingCharacters(in: CharacterSet(charactersIn: "`"))] = cells[column]
        }
        return rows
    }

    @Test func theTableBindsEachMethodOfTheInterfaceOnceAndNothingElse() throws {
        let declared = try Self.declaredMethods()
        #expect(declared.count >= 14, "the interface file was not read: \(declared)")
        let bound = GuardService.methods.entries.map(\.name)
        #expect(bound.sorted() == declared.sorted())
        #expect(Set(bound).count == bound.count, "bound twice: \(bound)")
        for name in declared {
            #expect(GuardService.methods[Substring(name)]?.name == name, "\(name) is not found by name")
        }
        #expect(GuardService.methods[Substring("Ping")] == nil)
    }

    @Test func eachMethodRunsWhereTheArchitectureSays() throws {
        let declared = try Self.declaredMethods()
        #expect(Self.expected.map(\.method).sorted() == declared.sorted(), "the expected list misses or adds methods")
        for (method, placement) in Self.expected {
            #expect(GuardService.methods[Substring(method)]?.placement == placement, "\(method)")
        }
        let documented = try Self.documentedPlacements()
        #expect(documented.keys.sorted() == declared.sorted(), "ARCHITECTURE.md's method table lists \(documented.keys.sorted())")
        for (method, placement) in Self.expected {
            #expect(documented[method] == Self.cell(placement), "ARCHITECTURE.md: \(method)")
        }
    }

    /// Who may call each method: the table's column, the one list ARCHITECTURE.md is held to.
    static let access: [String: MethodAccess] = [
        "GetStatus": .managedApp, "Subscribe": .managedApp, "RequestAuthorization": .managedApp,
        "Answer": .requestConnection, "RevokeAuthorization": .managedApp, "UpdateApp": .approvedChildApp,
        "ListAuthorizations": .anyone, "SetStatus": .rootOrGuardian, "Revoke": .rootOrGuardian, "Graduate": .root,
        "Forget": .root, "ListRequests": .anyone, "WatchRequests": .anyone, "DecideRequest": .rootOrGuardian,
        "ReadAudit": .rootOrGuardian, "VerifyLocks": .root, "EnrollCode": .guardianNotRoot,
        "RemoveCode": .guardianOwnOrRoot, "OpenSession": .root, "CloseSession": .root, "ListSessions": .root,
        "ListMonitors": .anyone, "IdentifyMonitor": .anyone, "WatchMonitorAlerts": .rootOrGuardian,
        "SetTimeLimits": .approvedChildApp, "GetTimeLimits": .approvedChildApp, "RequestMoreTime": .approvedChildApp,
        "ListTimeLimits": .rootOrGuardian, "SetChildLimits": .rootOrGuardian, "ClearChildLimits": .rootOrGuardian,
        "GrantMoreTime": .rootOrGuardian,
    ]

    @Test func whoMayCallEachMethodIsTheTablesColumnAndTheArchitectureSaysTheSame() throws {
        let declared = try Self.declaredMethods()
        #expect(Self.access.keys.sorted() == declared.sorted(), "the expected list misses or adds methods")
        let documented = try Self.documentedColumn(2)
        for (method, access) in Self.access {
            #expect(GuardService.methods[Substring(method)]?.access == access, "\(method)")
            #expect(documented[method]?.hasPrefix(access.summary) == true,
                    "ARCHITECTURE.md: \(method)'s \"Who may call\" is \(documented[method] ?? "missing"), not \(access.summary)…")
        }
    }

    @Test func onlyRootGetsPastARootOnlyMethodsEntry() {
        #expect(MethodAccess.root.admits(uid: 0))
        #expect(!MethodAccess.root.admits(uid: 1000))
        for access in MethodAccess.allCases where access != .root {
            #expect(access.admits(uid: 1000), "\(access) leaves the rest to the handler")
        }
    }
}

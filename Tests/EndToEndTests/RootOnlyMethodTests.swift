import Foundation
import Testing
import TestSupport

/// The Guard's root-only methods refuse everyone else at the method table,
/// before their parameters are read: a child's own process calling each one
/// straight over the socket (no familyctl in between, parameters that would
/// do harm from root) gets `PermissionDenied` saying what only root may do,
/// and nothing changes.
@Suite(.serialized, .enabled(if: canRunGuard, "needs root, useradd, and `swift build` products"))
struct RootOnlyMethodTests {
    /// Each call as a child would make it, and what root alone may do.
    static let calls: [(method: String, parameters: String, doing: String)] = [
        ("Graduate", #"{"user":"CHILD"}"#, "graduate a child"),
        ("Forget", #"{"user":"CHILD"}"#, "forget a user"),
        ("VerifyLocks", #"{"repair":true}"#, "verify locks"),
        ("OpenSession", #"{"token":"00112233445566778899aabbccddeeff","user":"CHILD","service":"login"}"#, "tell the Guard of a session"),
        ("CloseSession", #"{"token":"00112233445566778899aabbccddeeff"}"#, "tell the Guard of a session"),
        ("ListSessions", "{}", "list sessions"),
        // Parameters the interface refuses: the refusal still comes first.
        ("Forget", #"{"nonsense":1}"#, "forget a user"),
    ]

    /// Sends each call (method, JSON parameters) on one connection; prints each reply on its own line.
    static let caller = #"""
        import json, socket, sys
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect(sys.argv[1])
        for method, parameters in zip(sys.argv[2::2], sys.argv[3::2]):
            s.sendall(json.dumps({"method": "org.familycontrols.guard." + method,
                                  "parameters": json.loads(parameters)}).encode() + b'\0')
            reply = b''
            while not reply.endswith(b'\0'):
                chunk = s.recv(65536)
                if not chunk:
                    break
                reply += chunk
            print(reply.rstrip(b'\0').decode())
        """#

    @Test func everyRootOnlyMethodRefusesAChildsOwnCallAtTheTable() async throws {
        try await withGuard { guardd in
            try await guardd.familyctl(["set", "--user", guardd.child.name, "--app", GuardFixture.appID, "approved"]).requireSuccess()
            let arguments = Self.calls.flatMap { [$0.method, $0.parameters.replacingOccurrences(of: "CHILD", with: guardd.child.name)] }
            let command = guardd.commandLine(as: guardd.child, executable: "/usr/bin/python3",
                                             ["-c", Self.caller, guardd.socket] + arguments)
            let result = try await run(command[0], Array(command.dropFirst())).requireSuccess()
            let replies = result.standardOutput.split(separator: "\n").map(String.init)
            #expect(replies.count == Self.calls.count, "\(result.standardOutput)\n\(result.standardError)")
            for (call, reply) in zip(Self.calls, replies) {
                let object = try #require(JSONSerialization.jsonObject(with: Data(reply.utf8)) as? [String: Any], "\(reply)")
                #expect(object["error"] as? String == "org.familycontrols.guard.PermissionDenied", "\(call.method): \(reply)")
                let message = (object["parameters"] as? [String: Any])?["message"] as? String
                #expect(message == "only root may \(call.doing)", "\(call.method): \(reply)")
            }
            // Nothing changed: the child is still approved and recorded, and root is still served.
            #expect(try await guardd.storedStatus() == "approved")
            let sessions = try await guardd.call("ListSessions")["sessions"]?.arrayValue ?? []
            #expect(sessions.isEmpty, "\(sessions)")
        }
    }
}

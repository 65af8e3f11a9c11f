import Foundation
import Testing
@testable import Varlink

/// The reference Python implementation (`pip install varlink`), when installed.
enum PythonVarlink {
    /// Whether `python3 -c "import varlink"` succeeds.
    static let isAvailable: Bool = (try? run(["-c", "import varlink"]).status) == 0

    /// Runs python3 with `arguments`.
    static func run(_ arguments: [String]) throws -> (status: Int32, output: String, errors: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3"] + arguments
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        let outputData = output.fileHandleForReading.readDataToEndOfFile()
        let errorData = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (
            process.terminationStatus,
            String(decoding: outputData, as: UTF8.self),
            String(decoding: errorData, as: UTF8.self)
        )
    }

    /// A script that calls GetInfo, then parses our interface description and
    /// calls a method through it, printing both results as JSON.
    static let script = """
        import json, sys, varlink
        client = varlink.Client.new_with_address("unix:" + sys.argv[1])
        with client.open("org.varlink.service") as service:
            info = service.GetInfo()
        with client.open("org.example.test") as test:
            echo = test.Echo("from python")
            try:
                test.Add("one", 2)
                failure = None
            except varlink.VarlinkError as error:
                failure = error.error()
        print(json.dumps({"info": info, "echo": echo, "failure": failure}))
        """
}

@Suite("Interoperability with the Python varlink package")
struct PythonInteropTests {
    // Skipped rather than failed where the reference client is not installed
    // (a developer machine without `pip install varlink`).
    @Test(.enabled(if: PythonVarlink.isAvailable, "python3 with the varlink module is not installed"))
    func pythonClientCallsGetInfoAndAMethod() throws {
        try withServer { _, path, _ in
            let result = try PythonVarlink.run(["-c", PythonVarlink.script, path])
            #expect(result.status == 0, "python failed: \(result.errors)")
            let output = try JSONValue(parsing: result.output.trimmingCharacters(in: .whitespacesAndNewlines))
            #expect(output["info"]?["vendor"] == "Example")
            #expect(output["info"]?["interfaces"] == ["org.varlink.service", "org.example.test"])
            #expect(output["echo"]?["value"] == "from python")
            #expect(output["failure"] == "org.varlink.service.InvalidParameter")
        }
    }
}

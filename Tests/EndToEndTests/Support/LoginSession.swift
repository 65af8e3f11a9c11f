import Foundation
import TestSupport

/// pam_wrapper, which points libpam at a test's own service files
/// (`PAM_WRAPPER_SERVICE_DIR`) so the machine's `/etc/pam.d` is never touched.
let pamWrapperLibrary = "/usr/lib/x86_64-linux-gnu/libpam_wrapper.so"

/// A real login session of a child: the real util-linux `runuser -l`, the
/// real libpam loading `pam_familycontrols.so` built as the package builds
/// it, told to the fixture's Guard.
struct TestLoginSessions {
    let services: String

    /// Builds the module into `directory` and writes a `runuser-l` service
    /// there whose session stack tells `socket`, with the module's `options`.
    static func make(in directory: String, socket: String, options: String = "") async throws -> TestLoginSessions {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let module = "\(directory)/pam_familycontrols.so"
        try await run("\(packageRoot)/Config/build-pam-module.sh", [module]).requireSuccess()
        let services = "\(directory)/pam.d"
        try FileManager.default.createDirectory(atPath: services, withIntermediateDirectories: true)
        try """
        auth sufficient pam_rootok.so
        account required pam_permit.so
        session required pam_permit.so
        session optional \(module) socket=\(socket) \(options)

        """.write(toFile: "\(services)/runuser-l", atomically: true, encoding: .utf8)
        return TestLoginSessions(services: services)
    }

    /// `runuser -l USER -c COMMAND`: a session that lasts while COMMAND runs.
    func login(_ user: String, _ command: String) throws -> RunningApp {
        try RunningApp(arguments: ["/usr/bin/env", "LD_PRELOAD=\(pamWrapperLibrary)", "PAM_WRAPPER=1",
                                   "PAM_WRAPPER_SERVICE_DIR=\(services)", "/usr/sbin/runuser", "-l", user,
                                   "-s", "/bin/sh", "-c", command])
    }
}

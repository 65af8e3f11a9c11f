import Foundation
import TestSupport

/// A D-Bus daemon standing in for the system bus, on a socket of its own.
///
/// A non-root `flatpak install --user` asks the system bus for its
/// parental-controls check (malcontent, through accountsservice): with no
/// bus it fails; with a bus on which no accountsservice answers, malcontent
/// reports the check disabled and the install goes ahead. The tests never use
/// (or disturb) the machine's own system bus: the child's commands get
/// `DBUS_SYSTEM_BUS_ADDRESS` pointing here.
final class PrivateSystemBus: @unchecked Sendable {
    let socket: String
    private let process: Process

    /// The value for `DBUS_SYSTEM_BUS_ADDRESS`.
    var address: String { "unix:path=\(socket)" }

    /// Starts `dbus-daemon` with a configuration in `directory` (which must
    /// be reachable by the users who connect) and waits for its socket.
    init(in directory: String) throws {
        socket = "\(directory)/system_bus_socket"
        let configuration = "\(directory)/system-bus.conf"
        // The system bus's own rules would refuse every method call with no
        // service policy installed; this bus has no services, so it lets
        // every connected user call and own names.
        try """
            <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
             "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
            <busconfig>
              <type>system</type>
              <listen>unix:path=\(socket)</listen>
              <auth>EXTERNAL</auth>
              <policy context="default">
                <allow user="*"/>
                <allow own="*"/>
                <allow send_destination="*"/>
                <allow receive_sender="*"/>
              </policy>
            </busconfig>

            """.write(toFile: configuration, atomically: true, encoding: .utf8)
        process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/dbus-daemon")
        process.arguments = ["--config-file=\(configuration)", "--nofork", "--nopidfile"]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        for _ in 0..<200 {
            if FileManager.default.fileExists(atPath: socket) {
                chmod(socket, 0o666)
                return
            }
            guard process.isRunning else { throw FixtureError("dbus-daemon --config-file=\(configuration) exited") }
            usleep(25_000)
        }
        stop()
        throw FixtureError("dbus-daemon made no socket at \(socket) within 5 s")
    }

    /// Ends the daemon with SIGKILL: started from a test thread it may
    /// inherit SIGTERM blocked, and it has nothing to save.
    func stop() {
        guard process.isRunning else { return }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }
}

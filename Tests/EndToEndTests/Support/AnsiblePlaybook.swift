import Foundation
import TestSupport

/// `ansible-playbook` (ansible-core, from PyPI) running the shipped role,
/// `Config/ansible/roles/familycontrols`, on the hosts of an inventory the
/// test writes: each host's connection (`-c local`, or ssh to a loopback
/// sshd) and the role's variables for it. The modules run under Debian's
/// own `/usr/bin/python3`, as on a lab machine.
final class AnsiblePlaybook: @unchecked Sendable {
    /// The `ansible-playbook` found in `PATH` (pip's scripts folder, a pyenv
    /// shim) or where `pip install` puts it for root; nil when there is none.
    static let program: String? = {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
        let folders = path.split(separator: ":").map(String.init) + ["/usr/local/bin", "/root/.local/bin"]
        return folders.map { "\($0)/ansible-playbook" }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }()

    /// One machine of the inventory.
    struct Host {
        var name: String
        /// `ansible_*` connection variables and the role's `familycontrols_*` ones.
        var variables: [String: Any]

        /// This machine, without ssh.
        static func local(_ name: String, _ variables: [String: Any]) -> Host {
            Host(name: name, variables: ["ansible_connection": "local"].merging(variables) { $1 })
        }

        /// root over ssh at `server`, with the test's key and known host.
        static func ssh(_ name: String, server: SSHServer, keys: SSHKeys, _ variables: [String: Any]) -> Host {
            Host(name: name, variables: ["ansible_connection": "ssh", "ansible_host": "127.0.0.1", "ansible_port": server.port,
                                         "ansible_user": "root",
                                         "ansible_ssh_common_args": "-F \(keys.directory)/ssh_config"].merging(variables) { $1 })
        }
    }

    /// What a run printed, and each host's numbers from the play recap.
    struct Outcome: CustomStringConvertible {
        var result: ProcessResult
        var succeeded: Bool { result.status == 0 }
        var output: String { result.standardOutput + result.standardError }
        var description: String { output }

        /// `changed=N` of `host` in the recap; nil when the recap does not name it.
        func changed(_ host: String) -> Int? { recap(host, "changed") }
        func failed(_ host: String) -> Int? { recap(host, "failed") }

        private func recap(_ host: String, _ field: String) -> Int? {
            guard let line = result.standardOutput.split(separator: "\n").last(where: { $0.hasPrefix("\(host) ") && $0.contains(" : ok=") })
            else { return nil }
            let value = line.split(separator: " ").first { $0.hasPrefix("\(field)=") }?.dropFirst(field.count + 1)
            return value.flatMap { Int($0) }
        }
    }

    let directory: String

    init() throws {
        directory = try makeTemporaryDirectory()
        let playbook = """
            - name: FamilyControls on the lab's machines
              hosts: all
              gather_facts: false
              roles:
                - familycontrols

            """
        try playbook.write(toFile: "\(directory)/site.yml", atomically: true, encoding: .utf8)
    }

    deinit { try? FileManager.default.removeItem(atPath: directory) }

    /// Runs the playbook on `hosts`.
    func run(_ hosts: [Host]) async throws -> Outcome {
        guard let program = Self.program else { throw FixtureError("no ansible-playbook") }
        var entries: [String: Any] = [:]
        for host in hosts {
            entries[host.name] = ["ansible_python_interpreter": "/usr/bin/python3"].merging(host.variables) { $1 }
        }
        // JSON is YAML: the inventory plugin reads it as written.
        let inventory = try JSONSerialization.data(withJSONObject: ["all": ["hosts": entries]], options: [.sortedKeys])
        try inventory.write(to: URL(fileURLWithPath: "\(directory)/inventory.yml"))
        let result = try await TestSupport.run(
            program, ["-i", "\(directory)/inventory.yml", "\(directory)/site.yml"],
            environment: ["ANSIBLE_ROLES_PATH": "\(packageRoot)/Config/ansible/roles", "ANSIBLE_NOCOLOR": "1",
                          "ANSIBLE_FORCE_COLOR": nil, "ANSIBLE_CONFIG": nil,
                          // One ssh connection per task, none left behind when the test ends.
                          "ANSIBLE_SSH_ARGS": "-o ControlMaster=no", "ANSIBLE_SSH_TRANSFER_METHOD": "piped",
                          "ANSIBLE_LOCAL_TEMP": "\(directory)/tmp", "ANSIBLE_RETRY_FILES_ENABLED": "0",
                          "FAMILYCONTROLS_SOCKET": nil],
            currentDirectory: directory)
        return Outcome(result: result)
    }
}

// The configuration parser, on familycontrols.conf: the INI syntax
// (INIFile) and what each key means (GuardConfiguration). The Guard reads at
// most 1 MiB of valid UTF-8 (GuardConfiguration.load); the same here.
//
// Properties, for every input:
// - parsing stays within its heap bound;
// - a failure is a ConfigError naming the file and a line of it, whose
//   description is one short line;
// - a configuration, written back as a file, parses to the same configuration;
// - LF and CRLF line endings read alike, and fail on the same line;
// - a comment line at the end changes nothing;
// - a list key given again adds to the list (familycontrols.conf(5)): a
//   Guardians= or Children= line appended adds its name, and a Roots= line
//   appended adds its root to those the file gave, or replaces the embedded
//   defaults when the file gave none.
import FamilyConfiguration

private let path = "/etc/familycontrols/familycontrols.conf"

@c(LLVMFuzzerTestOneInput)
public func fuzzConfig(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    withInput(data, size) { input in
        guard input.count <= 1 << 20, let text = String(validating: input, as: UTF8.self) else { return }
        // The bound INIFile states; the meaning of the keys adds little to it.
        let result = withinHeapBound(48 * input.count + (64 << 10), "parsing \(input.count) bytes") {
            parse(text)
        }
        let lineCount = text.utf8.count { $0 == UInt8(ascii: "\n") } + 1

        if !text.utf8.contains(UInt8(ascii: "\r")) {
            let crlf = String(decoding: text.utf8.flatMap { $0 == 0x0A ? [0x0D, 0x0A] : [$0] }, as: UTF8.self)
            require(same(parse(crlf), result), "CRLF line endings read differently from LF: \(parse(crlf)) and \(result)")
        }
        let separated = text.utf8.last == UInt8(ascii: "\n") || text.isEmpty ? text : text + "\n"
        require(same(parse(separated + "# Guardians=mallory\n; [Nonsense]\n"), result), "a comment line changed the configuration")

        switch result {
        case .failure(let error):
            require(error.file == path, "the error names \(error.file)")
            require((0...lineCount).contains(error.line), "the error names line \(error.line) of \(lineCount)")
            require(isOneShortLine(error.description), "the error is not one short line: \(error.description.debugDescription)")
        case .success(let configuration):
            let written = write(configuration)
            require(parse(written) == .success(configuration), "written back, the configuration reads differently:\n\(written)")
            checkListsAdd(to: configuration, text: separated)
        }
    }
    return 0
}

private func parse(_ text: String) -> Result<GuardConfiguration, ConfigError> {
    Result { () throws(ConfigError) in try GuardConfiguration(parsing: text, path: path) }
}

/// Equal results; failures are equal when they name the same line.
private func same(_ lhs: Result<GuardConfiguration, ConfigError>, _ rhs: Result<GuardConfiguration, ConfigError>) -> Bool {
    switch (lhs, rhs) {
    case (.success(let left), .success(let right)): left == right
    case (.failure(let left), .failure(let right)): left.line == right.line
    default: false
    }
}

private func checkListsAdd(to configuration: GuardConfiguration, text: String) {
    var expected = configuration
    if !expected.guardians.contains(.user("zz-guardian")) { expected.guardians.append(.user("zz-guardian")) }
    if !expected.children.contains(.group("zz-kids")) { expected.children.append(.group("zz-kids")) }
    let syntax = Result { () throws(ConfigError) in try INIFile(parsing: text, path: path) }
    guard case .success(let file) = syntax else { return require(false, "a configuration parsed, its syntax did not: \(syntax)") }
    let gaveRoots = file.sections.contains { section in
        section.name == "Apps" && section.argument == nil && section.entries.contains { $0.key == "Roots" }
    }
    if !gaveRoots { expected.appRoots = [] }
    if !expected.appRoots.contains("/srv/zz/%u") { expected.appRoots.append("/srv/zz/%u") }

    let added = text + "[Family]\nGuardians=zz-guardian\nChildren=@zz-kids\n[Apps]\nRoots=/srv/zz/%u\n"
    let result = parse(added)
    require(result == .success(expected), "lines appended to a list did not add to it: \(result), expected \(expected)")
}

/// A configuration file that says what `configuration` says, every key given.
private func write(_ configuration: GuardConfiguration) -> String {
    func list(_ items: [some CustomStringConvertible]) -> String { items.map(\.description).joined(separator: " ") }
    func milliseconds(_ duration: Duration) -> String {
        let (seconds, attoseconds) = duration.components
        return "\(seconds * 1000 + attoseconds / 1_000_000_000_000_000)ms"
    }
    var text = ""
    for family in configuration.allFamilies {
        text += "[Family\(family.sectionArgument.map { " \($0)" } ?? "")]\nGuardians=\(list(family.guardians))\n"
            + "Children=\(list(family.children))\nApprovedApps=\(family.approvedApps.map(\.appID).joined(separator: ","))\n"
    }
    for (child, guardians) in configuration.childGuardians.sorted(by: { $0.key < $1.key }) {
        text += "[Child \(child)]\nGuardians=\(list(guardians))\n"
    }
    text += "[Apps]\nRoots=\(list(configuration.appRoots))\n"
    text += """
        [Authentication]
        GuardianService=\(configuration.guardianService)
        IndividualService=\(configuration.individualService)
        PromptTimeout=\(milliseconds(configuration.promptTimeout))
        MaxAttempts=\(configuration.maxAttempts)
        FailureDelay=\(milliseconds(configuration.failureDelay))
        PendingTimeout=\(milliseconds(configuration.pendingTimeout))
        GuardianCodeService=\(configuration.guardianCodeService)
        GuardianCodeFile=\(configuration.guardianCodeFile)
        GuardianTimeout=\(milliseconds(configuration.guardianTimeout))
        [Audit]
        Retention=\(configuration.auditRetention.map { "\($0.components.seconds / 86_400)d" } ?? "infinity")
        [Locks]
        VerifyInterval=\(configuration.lockVerifyInterval.map(milliseconds) ?? "off")
        [Authentication]

        """
    // Unset is a value of its own (code once a guardian enrolled, else no): written only when set.
    if let setting = configuration.inSessionApprovalSetting { text += "InSessionApproval=\(setting.rawValue)\n" }
    text += """
        [Flatpak]
        UserInstallations=\(configuration.flatpakUserInstallations ? "yes" : "no")
        SystemInstallation=\(configuration.flatpakSystemInstallation ? "yes" : "no")
        Installations=\(list(configuration.flatpakInstallations))
        MoveService=\(configuration.flatpakMoveService ?? "no")
        GuardInstallation=\(configuration.flatpakGuardInstallation)

        """
    // Unset (Flathub from the system installation) is a value of its own: written only when set.
    if let remotes = configuration.flatpakTrustedRemotes {
        if remotes.isEmpty { text += "TrustedRemote=none\n" }
        for remote in remotes { text += "TrustedRemote=\(([remote.name, remote.url] + remote.fingerprints).joined(separator: " "))\n" }
    }
    if !configuration.trustedUpdateKeys.isEmpty {
        text += "[Updates]\nTrustedKeys=" + configuration.trustedUpdateKeys
            .map { key in key.appID.map { "\($0)=\(key.declaration)" } ?? key.declaration }.joined(separator: " ") + "\n"
    }
    text += """
        [Monitors]
        Enabled=\(configuration.monitorsEnabled ? "yes" : "no")
        RestartsPerMinute=\(configuration.monitorRestartsPerMinute)

        """
    return text
}

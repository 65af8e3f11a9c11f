/// An app the administrator approves for every child of a family
/// (`ApprovedApps=` in `[Family]` or `[Family NAME]`): the Guard approves
/// it when the child's identified app asks, as a guardian's approval
/// (locked, its monitor run), and revokes it once no file lists it.
package struct ConfiguredApproval: Hashable, Sendable {
    /// The app's ID, as identified (an app root's folder name, or a Flatpak app's ID).
    package var appID: String
    /// The file whose line approves it: the main file or a drop-in.
    package var file: String

    package init(appID: String, file: String) {
        self.appID = appID
        self.file = file
    }

    /// The most apps one family's `ApprovedApps=` lines name.
    package static let limit = 256

    /// Who approved, as the store and the audit name it: `configuration (FILE)`.
    /// It contains a space, so no user name can be taken for it.
    package var approver: String { "\(Self.approverPrefix)\(file))" }

    /// What every ``approver`` starts with.
    package static let approverPrefix = "configuration ("

    /// Whether `approvedBy`, as recorded, names the configuration rather than a person.
    package static func isConfiguration(_ approvedBy: String?) -> Bool {
        approvedBy?.hasPrefix(approverPrefix) == true
    }
}

/// `[Family NAME]`: one family of its own in a configuration with several,
/// such as a class (`[Family 5B]`, `Guardians=@teachers-5b`,
/// `Children=@pupils-5b`). Its guardians decide for its children only; a
/// child in two families has the guardians of both.
package struct NamedFamily: Hashable, Sendable {
    /// `5B` in `[Family 5B]`.
    package var name: String
    /// `Guardians=`: who decides for this family's children.
    package var guardians: [Principal] = []
    /// `Children=`: whose apps this family's guardians decide.
    package var children: [Principal] = []
    /// `ApprovedApps=`: apps approved for this family's children by the administrator.
    package var approvedApps: [ConfiguredApproval] = []

    package init(name: String, guardians: [Principal] = [], children: [Principal] = [], approvedApps: [ConfiguredApproval] = []) {
        self.name = name
        self.guardians = guardians
        self.children = children
        self.approvedApps = approvedApps
    }

    /// The section's argument: the name, or nil for the plain `[Family]`
    /// (named "" in ``GuardConfiguration/allFamilies``).
    package var sectionArgument: String? { name.isEmpty ? nil : name }

    /// The most `[Family NAME]` sections one configuration names.
    package static let limit = 1024

    /// A family name: 1 to 64 letters, digits, `.`, `_` or `-`.
    package static func isValidName(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.count <= 64
            && name.isASCIIName(alsoAllowing: "._-")
    }
}

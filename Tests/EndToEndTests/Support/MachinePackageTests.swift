import Testing

/// The suites that install the Debian package on this very machine
/// (`DebianPackageTests`, `AnsibleRolePackageTests`), one after the other:
/// dpkg takes one installation at a time, and one suite's purge would pull
/// the package from under the other, leaving it half installed.
@Suite(.serialized) enum MachinePackageTests {}

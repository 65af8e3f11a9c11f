import SystemKit
import LockEngine
import GuardIdentity

/// An app process the Guard has identified: its user from the kernel, its app
/// from the executable it runs, and the app directory, held open.
package struct Caller: Sendable {
    package var account: UserAccount
    package var app: AppIdentity
    /// The directory identified: what an approval locks, wherever it is by then.
    package var directory: OpenedDirectory

    package init(account: UserAccount, app: AppIdentity, directory: OpenedDirectory) {
        self.account = account
        self.app = app
        self.directory = directory
    }

    var key: StatusHub.Key { StatusHub.Key(user: account.name, appID: app.appID) }
}

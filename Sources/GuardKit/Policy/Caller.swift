import SystemKit

/// An app process the Guard has identified: its user from the kernel, its app
/// from the executable it runs.
package struct Caller: Hashable, Sendable {
    package var account: UserAccount
    package var app: AppIdentity

    package init(account: UserAccount, app: AppIdentity) {
        self.account = account
        self.app = app
    }

    var key: StatusHub.Key { StatusHub.Key(user: account.name, appID: app.appID) }
}

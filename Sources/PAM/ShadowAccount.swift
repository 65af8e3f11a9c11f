import CPAM

/// What the shadow database says about an account's password, used only to
/// explain a failed authentication to the administrator.
///
/// Maps to `getspnam_r(3)` (in the C shim); needs root. The hash never reaches Swift.
package enum ShadowAccount {
    package enum PasswordState: Hashable, Sendable {
        /// A password hash that can be checked.
        case usable
        /// A usable hash behind `!`: `usermod -L`/`passwd -l`.
        case locked
        /// No password at all: empty, `!`, `*`, `!*`, as `useradd` leaves it.
        case none
        /// The account's expiry date has passed: `chage -E`.
        case expired
        /// No shadow entry readable (not root, or not a local account).
        case unknown
    }

    /// The state of `user`'s password.
    package static func passwordState(of user: String) -> PasswordState {
        switch cpam_shadow_password_state(user) {
        case CPAM_PASSWORD_USABLE: .usable
        case CPAM_PASSWORD_LOCKED: .locked
        case CPAM_PASSWORD_NONE: .none
        case CPAM_ACCOUNT_EXPIRED: .expired
        default: .unknown
        }
    }
}

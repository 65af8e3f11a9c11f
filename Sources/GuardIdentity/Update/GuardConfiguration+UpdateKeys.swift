import FamilyConfiguration
import UpdateSignature

extension GuardConfiguration {
    /// The update keys an administrator trusts for `appID`
    /// (`[Updates] TrustedKeys=`): those for every app and those for it.
    package func trustedUpdateKeys(for appID: String) -> [UpdateKey] {
        trustedUpdateKeys.compactMap { trusted in
            guard trusted.appID == nil || trusted.appID == appID else { return nil }
            return try? UpdateKey(declaration: trusted.declaration)
        }
    }
}

import AuthorizationRules

extension GuardFailure {
    /// The failure the app hears for a refusal of the shared rules.
    init(_ refusal: Refusal) {
        self.init(refusal.error, refusal.message)
        resultingStatus = refusal.resultingStatus
    }
}

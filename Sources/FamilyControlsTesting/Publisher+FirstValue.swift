import FamilyControls

extension Publisher where Failure == Never, Output: Sendable {
    /// Waits for the first value that satisfies `predicate`, for at most
    /// `timeout`: a test's way to wait for evidence (an app's published state)
    /// instead of for time. A property's current value counts.
    ///
    /// ```swift
    /// model.revokeAccess()
    /// _ = try await model.$isWorking.firstValue { !$0 }
    /// ```
    /// The wait ends as soon as the value comes; the bound is generous for a
    /// loaded machine (a CI runner building while it tests).
    /// - Throws: ``TimedOut`` when no such value comes within `timeout`.
    public func firstValue(timeout: Duration = .seconds(30),
                           where predicate: @escaping @Sendable (Output) -> Bool) async throws -> Output {
        // Subscribe now, so that no value sent after this call is missed.
        let values = self.values
        return try await withThrowingTaskGroup(of: Output?.self) { group in
            group.addTask {
                for await value in values where predicate(value) { return value }
                return nil
            }
            group.addTask {
                try await Task.sleep(for: timeout)
                return nil
            }
            defer { group.cancelAll() }
            guard let first = try await group.next(), let value = first else {
                throw TimedOut(waitingFor: "a value of \(Output.self) that matches", timeout: timeout)
            }
            return value
        }
    }
}

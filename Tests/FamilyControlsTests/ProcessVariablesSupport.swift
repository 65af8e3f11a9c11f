import FamilyControls

/// Runs `body` with the library's variables set in-process (nil: unset),
/// never with `setenv(3)`: other tests of this process start programs meanwhile.
func withProcessVariables<R>(_ values: [String: String?], isolation: isolated (any Actor)? = #isolation,
                             _ body: () async throws -> R) async rethrows -> R {
    let saved = ProcessVariables.set(values)
    defer { ProcessVariables.restore(saved) }
    return try await body()
}

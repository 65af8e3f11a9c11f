#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// The environment variables the library and the tools read
/// (`FAMILYCONTROLS_SOCKET`, a monitor's two), from this process's
/// environment unless set in-process with ``set(_:)``.
///
/// In-process values are for tests, which run many at once in one process:
/// `setenv(3)` there races every other thread that starts a program (glibc
/// reads `environ` as it copies it, and a test process crashed in `strlen`
/// on an entry `unsetenv` had just removed).
package enum ProcessVariables {
    /// Set in-process: a value, or nil for "unset", per name.
    private static let set = Mutex<[String: String?]>([:])

    /// The variable's value; nil when it is unset or empty.
    package static func value(_ name: String) -> String? {
        if let given = set.withLock({ $0[name] }) { return given.flatMap { $0.isEmpty ? nil : $0 } }
        guard let value = getenv(name), value.pointee != 0 else { return nil }
        return String(cString: value)
    }

    /// What was set in-process before a ``set(_:)``, for ``restore(_:)``.
    package struct Saved: Sendable {
        fileprivate let entries: [(String, String??)]
    }

    /// Sets `values` (nil: unset) in place of the environment's, for every
    /// thread of this process. - Returns: what to ``restore(_:)`` afterwards.
    package static func set(_ values: [String: String?]) -> Saved {
        set.withLock { set in
            let saved = Saved(entries: values.keys.map { ($0, set[$0]) })
            for (name, value) in values { set[name] = .some(value) }
            return saved
        }
    }

    /// Puts back what was set in-process before ``set(_:)``.
    package static func restore(_ saved: Saved) {
        set.withLock { set in
            for (name, value) in saved.entries { set[name] = value }
        }
    }
}

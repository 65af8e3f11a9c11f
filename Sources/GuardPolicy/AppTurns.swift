import SystemKit

/// The one turn per (user, app): who may act on one app's authorization now.
///
/// It has two lengths, for two kinds of work:
/// - ``request(_:until:while:onWait:_:)``: an app's request or revoke, for
///   its whole life, people included (the alert, PAM, a guardian's
///   decision). A second request for the same app waits for the first and
///   then finds its outcome instead of asking again.
/// - ``save(_:_:)``: the short part that reads the record again, locks or
///   unlocks, and saves. Every decision takes it: a request's own approval
///   or denial, a guardian's `familyctl approve`, an administrator's
///   `familyctl set` and `revoke`, `familyctl locks verify`.
///
/// A save never waits for a person: it is never taken while a person is
/// being asked, and a request's turn does not hold it. So an administrator's
/// `familyctl set` goes through while a child's alert is open, and the later
/// decision stands.
final class AppTurns: Sendable {
    private let requests = KeyedSerializer<StatusHub.Key>()
    private let saves = KeyedSerializer<StatusHub.Key>()

    init() {}

    /// Runs a request's whole life for `key`, once no other request for it
    /// is under way; waits for that one until `deadline` and until the app
    /// hangs up.
    /// - Returns: what `body` returned, or nil, without running it, when the
    ///   wait ended first.
    func request<R, E: Error>(_ key: StatusHub.Key, until deadline: MonotonicInstant, unless hangUp: HangUp,
                              onWait: () -> Void, _ body: () throws(E) -> R) throws(E) -> R? {
        try requests.withExclusiveAccess(to: key, until: deadline, unless: hangUp, onWait: onWait, body)
    }

    /// Reads, locks or unlocks, and saves for `key`, once no other save for
    /// it is under way. `body` must not wait for a person.
    func save<R, E: Error>(_ key: StatusHub.Key, _ body: () throws(E) -> R) throws(E) -> R {
        try saves.withExclusiveAccess(to: key, body)
    }
}

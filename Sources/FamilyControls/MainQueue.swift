import Foundation

/// Whether code runs on the main actor, for a synchronous function that
/// cannot ask the type system.
///
/// The main actor's jobs run on the main dispatch queue. That is the main
/// thread in an app, but a host such as a test runner may serve the main
/// queue from another thread, so blocks on the main queue are recognized by a
/// queue-specific value as well.
enum MainQueue {
    private static let key: DispatchSpecificKey<Bool> = {
        let key = DispatchSpecificKey<Bool>()
        DispatchQueue.main.setSpecific(key: key, value: true)
        return key
    }()

    /// True on the main thread and in work the main queue runs.
    static var isCurrent: Bool {
        Thread.isMainThread || DispatchQueue.getSpecific(key: key) == true
    }
}

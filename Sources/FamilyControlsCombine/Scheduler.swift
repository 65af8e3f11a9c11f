import Foundation

/// Where `receive(on:)` delivers: Combine's `Scheduler`, reduced to running an
/// action soon. Combine's timed scheduling (for `debounce` and `delay`) is not provided.
///
/// `DispatchQueue` and `RunLoop` are schedulers, as in Combine.
public protocol Scheduler {
    /// Options for how an action runs.
    associatedtype SchedulerOptions

    /// Runs `action` soon, in the scheduler's context.
    func schedule(options: SchedulerOptions?, _ action: @escaping () -> Void)
}

extension Scheduler {
    /// Runs `action` soon, in the scheduler's context.
    public func schedule(_ action: @escaping () -> Void) {
        schedule(options: nil, action)
    }
}

extension DispatchQueue: Scheduler {
    /// How an action runs on the queue: Combine's `DispatchQueue.SchedulerOptions`.
    public struct SchedulerOptions {
        /// The quality of service.
        public var qos: DispatchQoS
        /// The work item's flags.
        public var flags: DispatchWorkItemFlags
        /// A group the action joins while it runs.
        public var group: DispatchGroup?

        public init(qos: DispatchQoS = .unspecified, flags: DispatchWorkItemFlags = [], group: DispatchGroup? = nil) {
            self.qos = qos
            self.flags = flags
            self.group = group
        }
    }

    /// Runs `action` asynchronously on the queue (`DispatchQueue.async`).
    public func schedule(options: SchedulerOptions?, _ action: @escaping () -> Void) {
        // The subscriber asked for this queue; its closure runs there and nowhere else.
        let action = UncheckedSendable(action)
        async(group: options?.group, qos: options?.qos ?? .unspecified, flags: options?.flags ?? []) {
            action.value()
        }
    }
}

extension RunLoop: Scheduler {
    /// Options for a run loop: none, as in Combine.
    public struct SchedulerOptions: Sendable {
        public init() {}
    }

    /// Runs `action` on the run loop's thread.
    ///
    /// On Linux the main run loop and the main dispatch queue are served by the
    /// same thread, but a program may serve only the queue (`dispatchMain()`,
    /// an `async` main): actions for `RunLoop.main` therefore go to the main
    /// queue, which either way of serving the main thread runs, in order.
    public func schedule(options: SchedulerOptions?, _ action: @escaping () -> Void) {
        if self === RunLoop.main {
            DispatchQueue.main.schedule(options: nil, action)
        } else {
            let action = UncheckedSendable(action)
            perform { action.value() }
        }
    }
}

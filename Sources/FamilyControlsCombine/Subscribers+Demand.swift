extension Subscribers {
    /// How many more values a subscriber wants: Combine's `Subscribers.Demand`.
    ///
    /// Adding to `.unlimited` stays unlimited; subtracting never goes below `.none`.
    public struct Demand: Hashable, Comparable, Sendable, CustomStringConvertible {
        // UInt.max stands for unlimited.
        private let count: UInt

        private init(count: UInt) {
            self.count = count
        }

        /// Every value the publisher has.
        public static let unlimited = Demand(count: .max)
        /// No more values.
        public static let none = Demand(count: 0)

        /// At most `value` more values; `value` must not be negative.
        public static func max(_ value: Int) -> Demand {
            precondition(value >= 0, "a demand cannot be negative: \(value)")
            return Demand(count: UInt(value))
        }

        /// The number of values, or nil when unlimited.
        public var max: Int? {
            self == .unlimited ? nil : Int(count)
        }

        public var description: String {
            self == .unlimited ? "unlimited" : "max(\(count))"
        }

        public static func + (lhs: Demand, rhs: Demand) -> Demand {
            guard lhs != .unlimited, rhs != .unlimited else { return .unlimited }
            // Counts fit in an Int, as `max` reports them; more than that is unlimited.
            let sum = lhs.count + rhs.count
            return sum > UInt(Int.max) ? .unlimited : Demand(count: sum)
        }

        public static func - (lhs: Demand, rhs: Demand) -> Demand {
            if lhs == .unlimited { return .unlimited }
            if rhs == .unlimited { return .none }
            return Demand(count: lhs.count > rhs.count ? lhs.count - rhs.count : 0)
        }

        public static func + (lhs: Demand, rhs: Int) -> Demand { rhs < 0 ? lhs - .max(-rhs) : lhs + .max(rhs) }
        public static func - (lhs: Demand, rhs: Int) -> Demand { rhs < 0 ? lhs + .max(-rhs) : lhs - .max(rhs) }
        public static func += (lhs: inout Demand, rhs: Demand) { lhs = lhs + rhs }
        public static func -= (lhs: inout Demand, rhs: Demand) { lhs = lhs - rhs }
        public static func += (lhs: inout Demand, rhs: Int) { lhs = lhs + rhs }
        public static func -= (lhs: inout Demand, rhs: Int) { lhs = lhs - rhs }

        public static func < (lhs: Demand, rhs: Demand) -> Bool { lhs.count < rhs.count }
        public static func == (lhs: Demand, rhs: Int) -> Bool { rhs >= 0 && lhs.count == UInt(rhs) }
        public static func < (lhs: Demand, rhs: Int) -> Bool { rhs > 0 && lhs.count < UInt(rhs) }
        public static func > (lhs: Demand, rhs: Int) -> Bool { rhs < 0 || lhs.count > UInt(rhs) }
    }
}

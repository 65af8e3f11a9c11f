// Shared by every fuzz target: how a broken property stops the run, the heap
// bound, and a small deterministic generator for choices drawn from the input.
import CFuzzSupport
#if canImport(Glibc)
import Glibc
#endif

/// Stops the run when a property does not hold. libFuzzer sees the abort as a
/// crash and saves the input that caused it.
func require(
    _ condition: @autoclosure () -> Bool, _ message: @autoclosure () -> String,
    file: StaticString = #fileID, line: UInt = #line
) {
    guard !condition() else { return }
    fputs("property failed (\(file):\(line)): \(message())\n", stderr)
    abort()
}

/// Runs `body` and requires that the heap grew by at most `limit` bytes
/// while it ran, counting every allocation it made, freed or not.
func withinHeapBound<T>(_ limit: Int, _ what: @autoclosure () -> String, _ body: () -> T) -> T {
    fuzz_heap_begin()
    let result = body()
    let peak = fuzz_heap_end()
    require(peak <= limit, "\(what()) grew the heap by \(peak) bytes; its bound is \(limit)")
    return result
}

/// Whether `text` is short enough to put in one log line, and holds no
/// control character that would break or recolour the line.
func isOneShortLine(_ text: String, limit: Int = 1024) -> Bool {
    text.utf8.count <= limit && !text.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F }
}

/// SplitMix64: choices (chunk sizes, when to stop) drawn from input bytes, so
/// that a saved input replays exactly.
struct Choices {
    private var state: UInt64

    init(seed: some Sequence<UInt8>) {
        state = 0x9E37_79B9_7F4A_7C15
        for byte in seed { state = (state ^ UInt64(byte)) &* 0x100_0000_01B3 }
    }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A number in `range`.
    mutating func next(in range: ClosedRange<Int>) -> Int {
        range.lowerBound + Int(next() % UInt64(range.count))
    }

    /// True once in `n` times.
    mutating func oneIn(_ n: UInt64) -> Bool { next() % n == 0 }
}

/// The input as a buffer for the duration of `body`.
func withInput<T>(_ data: UnsafePointer<UInt8>?, _ size: Int, _ body: (UnsafeRawBufferPointer) -> T) -> T {
    body(UnsafeRawBufferPointer(start: size == 0 ? nil : data, count: size))
}

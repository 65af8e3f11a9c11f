// What every benchmark measures with: one clock, one median, one way to print
// a figure, one reading of a process's memory.
#if canImport(Glibc)
import Glibc
#endif
import SystemKit

/// The positive N of `--runs N` among `arguments`, else `fallback`.
func runs(in arguments: [String], fallback: Int) -> Int {
    guard let index = arguments.firstIndex(of: "--runs"), index + 1 < arguments.count,
          let value = Int(arguments[index + 1]), value > 0 else { return fallback }
    return value
}

/// Seconds on the monotonic clock.
func monotonicSeconds() -> Double {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
}

/// The median (the mean of the middle two for an even count); NaN when empty.
func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    guard !sorted.isEmpty else { return .nan }
    return sorted.count % 2 == 1 ? sorted[sorted.count / 2]
        : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
}

/// `value` with `digits` decimals ("n/a" when not finite), without Foundation's formatters.
func formatted(_ value: Double, digits: Int) -> String {
    guard value.isFinite else { return "n/a" }
    var scale = 1.0
    for _ in 0..<digits { scale *= 10 }
    let scaled = Int((value * scale).rounded())
    guard digits > 0 else { return String(scaled) }
    let sign = scaled < 0 ? "-" : ""
    let whole = abs(scaled) / Int(scale)
    let fraction = String(abs(scaled) % Int(scale))
    return "\(sign)\(whole)." + String(repeating: "0", count: digits - fraction.count) + fraction
}

/// A process's resident memory from `/proc/PID/status`, in kB.
struct ResidentMemory {
    var resident = 0
    var anonymous = 0
    var fileBacked = 0

    init(of pid: pid_t) {
        guard let bytes = try? FileDescriptor.readFile("/proc/\(pid)/status", limit: 64 << 10) else { return }
        for line in String(decoding: bytes, as: UTF8.self).split(separator: "\n") {
            let fields = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
            guard fields.count >= 2, let kilobytes = Int(fields[1]) else { continue }
            switch fields[0] {
            case "VmRSS:": resident = kilobytes
            case "RssAnon:": anonymous = kilobytes
            case "RssFile:": fileBacked = kilobytes
            default: break
            }
        }
    }

    init() {}
}

/// VmRSS of `pid` in kB (0 when it cannot be read).
func residentKilobytes(of pid: pid_t) -> Int { ResidentMemory(of: pid).resident }

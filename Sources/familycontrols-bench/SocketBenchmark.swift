// The Varlink round trip against the floor of a bare Unix-socket round trip,
// the calls per second 64 clients get, and what idle connections cost.
#if canImport(Glibc)
import Glibc
#endif
import Synchronization
import SystemKit
import Varlink

/// `familycontrols-bench socket [--socket PATH --method NAME [--parameters JSON]]
/// [--iterations N] [--clients N] [--seconds S]`
func runSocketBenchmark(_ arguments: [String]) -> Int32 {
    let options: SocketBenchmarkOptions
    do { options = try SocketBenchmarkOptions(arguments) } catch {
        writeToStandardError("familycontrols-bench socket: \(error)\n")
        return 64
    }
    // A client vanishing mid-write must not kill the benchmark.
    signal(SIGPIPE, SIG_IGN)
    do {
        try SocketBenchmark(options: options).run()
        return 0
    } catch {
        writeToStandardError("familycontrols-bench socket: \(error)\n")
        return 1
    }
}

/// The command line, checked.
private struct SocketBenchmarkOptions {
    var socketPath: String?
    var method = "org.example.bench.Status"
    var parameters: JSONObject = ["app": "org.example.Notes"]
    var iterations = 20_000
    var clients = 64
    var seconds = 2.0

    struct UsageError: Error, CustomStringConvertible { let description: String }

    init(_ arguments: [String]) throws {
        var rest = arguments[...]
        func value(_ flag: String) throws -> String {
            guard let value = rest.popFirst() else { throw UsageError(description: "\(flag) needs a value") }
            return value
        }
        while let flag = rest.popFirst() {
            switch flag {
            case "--socket": socketPath = try value(flag)
            case "--method": method = try value(flag)
            case "--parameters":
                guard let object = (try? JSONValue(parsing: try value(flag)))?.objectValue else {
                    throw UsageError(description: "--parameters must be a JSON object")
                }
                parameters = object
            case "--iterations": iterations = try Self.positive(try value(flag), flag)
            case "--clients": clients = try Self.positive(try value(flag), flag)
            case "--seconds": seconds = Double(try Self.positive(try value(flag), flag))
            default: throw UsageError(description: "unknown option \(flag)")
            }
        }
        if socketPath != nil, !arguments.contains("--method") {
            throw UsageError(description: "--socket needs --method (the Guard's status method)")
        }
    }

    private static func positive(_ text: String, _ flag: String) throws -> Int {
        guard let number = Int(text), number > 0 else { throw UsageError(description: "\(flag) needs a positive number") }
        return number
    }
}

/// A trivial status-like service: one small object in, one out.
private struct BenchService: VarlinkService {
    let interfaces: [VarlinkInterfaceDescription]

    init() throws {
        interfaces = [try VarlinkInterfaceDescription("""
            interface org.example.bench
            method Status(app: string) -> (status: string, member: string, revision: int)
            """)]
    }

    func handle(_ call: VarlinkCall, on connection: VarlinkConnection) {
        guard call.parameters["app"]?.stringValue != nil else { return connection.fail(.invalidParameter("app")) }
        connection.reply(["status": "approved", "member": "child", "revision": 7])
    }
}

private final class Counter: Sendable {
    let value = Atomic<Int>(0)
    let stop = Atomic<Bool>(false)
}

private struct SocketBenchmark {
    let options: SocketBenchmarkOptions

    func run() throws {
        let bare = try bareRoundTrip()
        print("(a) bare Unix-socket round trip:   \(format(bare * 1e6, 2)) µs  (socketpair, echo thread; best of 3 × \(options.iterations))")
        if let path = options.socketPath {
            try measure(path: path, bare: bare, server: nil)
            return
        }
        var template = Array("/tmp/fcbench.XXXXXX".utf8CString)
        guard let directory = mkdtemp(&template) else { throw Errno.current("mkdtemp") }
        let path = String(cString: directory) + "/socket"
        defer {
            unlink(path)
            rmdir(directory)
        }
        var configuration = VarlinkServerConfiguration(vendor: "bench", product: "bench", version: "0", url: "")
        configuration.logger = Logger(label: "bench", minimumLevel: .warning)
        let server = try VarlinkServer(listeningOn: path, configuration: configuration, service: try BenchService())
        defer { server.shutdown() }
        try measure(path: path, bare: bare, server: server)
    }

    private func measure(path: String, bare: Double, server: VarlinkServer?) throws {
        let where_ = server == nil ? path : "in-process trivial service"
        let single = try varlinkRoundTrip(path: path)
        let ratio = single / bare
        print("(b) Varlink round trip:            \(format(single * 1e6, 2)) µs  (\(options.method) via VarlinkClient, \(where_); best of 3 × \(options.iterations))")
        print("    ratio (b)/(a):                 \(format(ratio, 2))  [target <= 3: \(ratio <= 3 ? "met" : "NOT met")]")
        let rate = try throughput(path: path)
        print("(c) \(options.clients) concurrent clients:         \(format(rate, 0)) calls/s over \(format(options.seconds, 1)) s  [target >= 20000: \(rate >= 20_000 ? "met" : "NOT met")]")
        if let server {
            let (before, after) = try idleConnectionCost(path: path, server: server, count: 1000)
            let each = Double(after - before) / 1000
            print("(d) 1000 idle connections:         VmRSS \(before) kB -> \(after) kB, \(format(each * 1024, 0)) bytes each")
        } else {
            print("(d) idle connection memory:        measured only against the in-process server")
        }
    }

    /// Mean seconds per round trip of a 100-byte message through a socketpair
    /// and an echo thread doing blocking read and write: the floor.
    private func bareRoundTrip() throws -> Double {
        var pair: [CInt] = [0, 0]
        guard socketpair(AF_UNIX, CInt(SOCK_STREAM.rawValue) | CInt(SOCK_CLOEXEC.rawValue), 0, &pair) == 0 else {
            throw Errno.current("socketpair")
        }
        let client = FileDescriptor(taking: pair[0])
        let echoDescriptor = pair[1]
        let echo = try SystemThread.spawn(name: "bench-echo") {
            let socket = FileDescriptor(taking: echoDescriptor)
            var buffer = [UInt8](repeating: 0, count: 4096)
            while true {
                let count = buffer.withUnsafeMutableBytes { recv(socket.rawValue, $0.baseAddress, $0.count, 0) }
                if count <= 0 { return }
                _ = buffer.withUnsafeBytes { send(socket.rawValue, $0.baseAddress, count, CInt(MSG_NOSIGNAL)) }
            }
        }
        let message = [UInt8](repeating: 0x61, count: 100)
        var reply = [UInt8](repeating: 0, count: 4096)
        func roundTrip() {
            _ = message.withUnsafeBytes { send(client.rawValue, $0.baseAddress, $0.count, CInt(MSG_NOSIGNAL)) }
            var received = 0
            while received < message.count {
                let count = reply.withUnsafeMutableBytes { recv(client.rawValue, $0.baseAddress, $0.count, 0) }
                if count <= 0 { return }
                received += count
            }
        }
        for _ in 0..<1000 { roundTrip() }
        let elapsed = bestOfThree { for _ in 0..<options.iterations { roundTrip() } }
        client.close()
        echo.join()
        return elapsed / Double(options.iterations)
    }

    /// Mean seconds per call of one client calling the method in a loop.
    private func varlinkRoundTrip(path: String) throws -> Double {
        let client = try VarlinkClient(path: path, replyTimeout: .seconds(10))
        for _ in 0..<1000 { _ = try client.call(options.method, parameters: options.parameters) }
        var failure: VarlinkClientError?
        let elapsed = bestOfThree {
            do throws(VarlinkClientError) {
                for _ in 0..<options.iterations { _ = try client.call(options.method, parameters: options.parameters) }
            } catch { failure = error }
        }
        if let failure { throw failure }
        return elapsed / Double(options.iterations)
    }

    /// Calls per second with `clients` threads, each with its own connection.
    private func throughput(path: String) throws -> Double {
        let counter = Counter()
        let failures = Counter()
        var threads: [SystemThread] = []
        for index in 0..<options.clients {
            let method = options.method
            let parameters = options.parameters
            threads.append(try SystemThread.spawn(name: "bench-client-\(index)") {
                do throws(VarlinkClientError) {
                    let client = try VarlinkClient(path: path, replyTimeout: .seconds(10))
                    while !counter.stop.load(ordering: .relaxed) {
                        _ = try client.call(method, parameters: parameters)
                        counter.value.add(1, ordering: .relaxed)
                    }
                } catch {
                    failures.value.add(1, ordering: .relaxed)
                    writeToStandardError("bench client: \(error)\n")
                }
            })
        }
        sleep(for: 0.25)  // Warm-up: every client connected and calling.
        let start = ContinuousClock.now
        let before = counter.value.load(ordering: .relaxed)
        sleep(for: options.seconds)
        let after = counter.value.load(ordering: .relaxed)
        let elapsed = seconds(ContinuousClock.now - start)
        counter.stop.store(true, ordering: .relaxed)
        for thread in threads { thread.join() }
        if failures.value.load(ordering: .relaxed) > 0 {
            throw SocketBenchmarkOptions.UsageError(description: "\(failures.value.load(ordering: .relaxed)) clients failed")
        }
        return Double(after - before) / elapsed
    }

    /// VmRSS before and after opening `count` idle connections.
    private func idleConnectionCost(path: String, server: VarlinkServer, count: Int) throws -> (Int, Int) {
        let baseline = server.connectionCount
        let before = residentKilobytes()
        let address = try UnixSocketAddress(path: path)
        var sockets: [FileDescriptor] = []
        for _ in 0..<count {
            let socket = try Socket.makeUnixStream(nonBlocking: false)
            try address.withSocketAddress { pointer, length throws(Errno) in
                _ = try retryingOnInterrupt("connect") { connect(socket.rawValue, pointer, length) }
            }
            sockets.append(socket)
        }
        let deadline = ContinuousClock.now + .seconds(10)
        while server.connectionCount < baseline + count, ContinuousClock.now < deadline { sleep(for: 0.01) }
        let after = residentKilobytes()
        sockets.removeAll()
        return (before, after)
    }

    private func residentKilobytes() -> Int {
        guard let file = try? FileDescriptor.open("/proc/self/status", O_RDONLY) else { return 0 }
        var bytes = [UInt8](repeating: 0, count: 8192)
        let count = (try? bytes.withUnsafeMutableBytes { try file.read(into: $0) }) ?? 0
        let text = String(decoding: bytes[..<count], as: UTF8.self)
        for line in text.split(separator: "\n") where line.hasPrefix("VmRSS:") {
            return Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0
        }
        return 0
    }

    /// The fastest of three timed runs: these machines are noisy, and the
    /// minimum is the figure least disturbed by other work.
    private func bestOfThree(_ body: () -> Void) -> Double {
        var best = Double.infinity
        for _ in 0..<3 {
            let start = ContinuousClock.now
            body()
            best = min(best, seconds(ContinuousClock.now - start))
        }
        return best
    }

    private func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }

    private func sleep(for seconds: Double) {
        var request = timespec(tv_sec: Int(seconds), tv_nsec: Int((seconds - Double(Int(seconds))) * 1e9))
        var remaining = timespec()
        while nanosleep(&request, &remaining) != 0, errno == EINTR { request = remaining }
    }

    private func format(_ value: Double, _ decimals: Int) -> String {
        var scale = 1.0
        for _ in 0..<decimals { scale *= 10 }
        let scaled = Int((value * scale).rounded())
        guard decimals > 0 else { return String(scaled) }
        let whole = scaled / Int(scale)
        var fraction = String(abs(scaled % Int(scale)))
        while fraction.count < decimals { fraction = "0" + fraction }
        return "\(whole).\(fraction)"
    }
}

// The lock engine against what an administrator would type: lock vs
// `chown -R root DIR && chattr -R +i DIR`, unlock vs
// `chattr -R -i DIR && chown -R child DIR`, on two identical trees; and a
// lock while a child adds entries to the tree (every one a late entry) vs a
// lock of the same final tree with every entry there from the start; and a
// lock while one process of the child's holds every file open for writing
// (each file then a reason naming it) vs a lock of the same tree with none.
#if canImport(Glibc)
import Glibc
#endif
import GuardKit
import LockEngine
import SystemKit
import GuardStore

/// `familycontrols-bench lock [--flatpak-sized] [--files N] [--dirs N] [--rounds N] [--late N] [--journal store|memory]`
func runLockBenchmark(_ arguments: [String]) -> Int32 {
    let options: LockBenchmarkOptions
    do { options = try LockBenchmarkOptions(arguments) } catch {
        writeToStandardError("familycontrols-bench lock: \(error)\n")
        return 64
    }
    guard getuid() == 0 else {
        writeToStandardError("familycontrols-bench lock: must run as root (it creates a user, chowns and sets flags)\n")
        return 77
    }
    do {
        if options.appSized {
            try AppSizedLockBenchmark(options: options).run()
        } else {
            try LockBenchmark(options: options).run()
        }
        return 0
    } catch {
        writeToStandardError("familycontrols-bench lock: \(error)\n")
        return 1
    }
}

/// The command line, checked.
struct LockBenchmarkOptions {
    var files = 10_000
    var directories = 1_000
    var rounds = 5
    /// Entries sprayed into the tree while it is being locked, for the late-entry figure.
    var lateFiles = 10_000
    /// The real SQLite store (synchronous commits, as in production), or memory.
    var useStore = true
    /// The Flatpak-sized case instead: lock and update of a 50,000-file app.
    var appSized = false

    struct UsageError: Error, CustomStringConvertible { let description: String }

    init(_ arguments: [String]) throws {
        var rest = arguments[...]
        func number(_ flag: String) throws -> Int {
            guard let text = rest.popFirst(), let value = Int(text), value > 0 else {
                throw UsageError(description: "\(flag) needs a positive number")
            }
            return value
        }
        while let flag = rest.popFirst() {
            switch flag {
            case "--files": files = try number(flag)
            case "--dirs": directories = try number(flag)
            case "--rounds": rounds = try number(flag)
            case "--late": lateFiles = try number(flag)
            case "--flatpak-sized":
                // The size of a Flatpak deployment; later flags may still change it.
                appSized = true
                files = 50_000
                directories = 1_000
                rounds = 3
            case "--journal":
                switch rest.popFirst() {
                case "store": useStore = true
                case "memory": useStore = false
                default: throw UsageError(description: "--journal is store or memory")
                }
            default: throw UsageError(description: "unknown option \(flag)")
            }
        }
    }
}

struct LockBenchmarkError: Error, CustomStringConvertible {
    let description: String
}

struct LockBenchmark {
    let options: LockBenchmarkOptions
    let appID = "org.example.Bench"

    func run() throws {
        let user = "fcbench_" + String(UInt32.random(in: 0...UInt32.max), radix: 36)
        try command(["useradd", "-M", "-N", "-s", "/usr/sbin/nologin", user])
        defer { _ = try? command(["userdel", user]) }
        guard let account = try UserDatabase.user(named: user) else {
            throw LockBenchmarkError(description: "useradd made no \(user)")
        }
        let base = try makeTemporaryDirectory()
        defer {
            _ = try? command(["chattr", "-R", "-f", "-i", base])
            _ = try? command(["rm", "-rf", base])
        }
        let engineTree = base + "/engine", baselineTree = base + "/baseline", lateTree = base + "/late"
        let writersTree = base + "/writers"
        for tree in [engineTree, baselineTree, lateTree, writersTree] {
            try buildTree(at: tree, owner: account)
        }
        let holder = try WriterHolder(tree: writersTree, owner: account)
        defer { holder.stop() }
        guard holder.held == options.files else {
            throw LockBenchmarkError(description: "the writer holds \(holder.held) of the \(options.files) files open")
        }
        let journal: any LockJournal
        if options.useStore {
            journal = try Store.open(directory: base + "/store", logger: Logger(label: "bench", minimumLevel: .warning))
        } else {
            journal = LockBenchmarkJournal()
        }
        let engine = LockEngine(journal: journal, logger: Logger(label: "lock", minimumLevel: .warning))
        let spray = Spray(tree: lateTree, files: options.lateFiles, directories: options.directories, owner: account)
        let sprayedEngine = LockEngine(journal: journal, logger: Logger(label: "lock", minimumLevel: .warning),
                                       hooks: spray.hooks)
        print("lock benchmark: \(options.files) files in \(options.directories) directories, "
            + "\(options.rounds) rounds, journal: \(options.useStore ? "SQLite store (synchronous=FULL)" : "in memory")")

        var times: [String: [Double]] = [:]
        for round in 0..<options.rounds {
            // Alternate who goes first, so neither always meets a colder cache.
            let engineFirst = round % 2 == 0
            let lockEngine = {
                let report = try engine.lock(user: user, appID: appID, directory: engineTree)
                guard report.state == .locked else {
                    throw LockBenchmarkError(description: "lock ended \(report.state)")
                }
            }
            let lockBaseline = {
                try command(["chown", "-R", "root", baselineTree])
                try command(["chattr", "-R", "+i", baselineTree])
            }
            let unlockEngine = {
                let report = try engine.unlock(user: user, appID: appID)
                guard report.findings.isEmpty else {
                    throw LockBenchmarkError(description: "unlock findings: \(report.findings.prefix(3))")
                }
            }
            let unlockBaseline = {
                try command(["chattr", "-R", "-i", baselineTree])
                try command(["chown", "-R", user, baselineTree])
            }
            let lockSprayed = {
                spray.arm()
                let report = try sprayedEngine.lock(user: user, appID: appID + ".Late", directory: lateTree)
                guard report.state == .locked, spray.created == options.lateFiles else {
                    throw LockBenchmarkError(description: "late lock ended \(report.state) with \(spray.created) late files")
                }
            }
            // The same final tree, every file there before the lock begins.
            let lockWhole = {
                try spray.makeAll()
                let start = monotonicSeconds()
                let report = try sprayedEngine.lock(user: user, appID: appID + ".Whole", directory: lateTree)
                guard report.state == .locked else { throw LockBenchmarkError(description: "whole lock ended \(report.state)") }
                times["lock whole", default: []].append(monotonicSeconds() - start)
                _ = try sprayedEngine.unlock(user: user, appID: appID + ".Whole")
                try spray.removeSprayed()
            }
            // Every file open for writing: unenforced, with every file's writer named.
            let lockWriters = {
                let report = try engine.lock(user: user, appID: appID + ".Writers", directory: writersTree)
                let named = report.findings.count { $0.contains(": open for writing by process \(holder.pid) (") }
                guard case .unenforced = report.state, named == options.files else {
                    throw LockBenchmarkError(description: "writers lock ended \(report.state) with \(named) writers named")
                }
            }
            for (name, body) in engineFirst
                ? [("lock engine", lockEngine), ("lock baseline", lockBaseline), ("lock late", lockSprayed),
                   ("unlock engine", unlockEngine), ("unlock baseline", unlockBaseline)]
                : [("lock baseline", lockBaseline), ("lock late", lockSprayed), ("lock engine", lockEngine),
                   ("unlock baseline", unlockBaseline), ("unlock engine", unlockEngine)] {
                sync()
                times[name, default: []].append(try measure(body))
                if name == "lock late" { times["spraying", default: []].append(spray.seconds) }
            }
            _ = try sprayedEngine.unlock(user: user, appID: appID + ".Late")
            try spray.removeSprayed()
            sync()
            try lockWhole()
            sync()
            times["lock writers", default: []].append(try measure(lockWriters))
            _ = try engine.unlock(user: user, appID: appID + ".Writers")
        }
        report("lock", engine: times["lock engine"] ?? [], baseline: times["lock baseline"] ?? [],
               baselineName: "chown -R root && chattr -R +i")
        report("unlock", engine: times["unlock engine"] ?? [], baseline: times["unlock baseline"] ?? [],
               baselineName: "chattr -R -i && chown -R child")
        // The files' own creation happens inside the measured lock: take it out.
        let lateOnly = zip(times["lock late"] ?? [], times["spraying"] ?? []).map { $0 - $1 }
        print("  (creating the \(options.lateFiles) late files themselves took median "
            + "\(formatted(median(times["spraying"] ?? []) * 1000, digits: 1)) ms; it is left out below)")
        report("lock with \(options.lateFiles) entries added while it runs", engine: lateOnly,
               baseline: times["lock whole"] ?? [],
               baselineName: "LockEngine.lock of the same final tree, every entry there from the start",
               engineName: "LockEngine.lock, \(options.lateFiles) entries added late")
        report("lock with \(options.lateFiles) entries added while it runs", engine: lateOnly,
               baseline: times["lock engine"] ?? [], baselineName: "LockEngine.lock of the \(options.files) files alone",
               engineName: "LockEngine.lock, \(options.lateFiles) entries added late")
        report("lock with every file held open for writing", engine: times["lock writers"] ?? [],
               baseline: times["lock engine"] ?? [], baselineName: "LockEngine.lock of the same tree, no file open",
               engineName: "LockEngine.lock, all \(options.files) files open for writing by one process")
    }

    func report(_ name: String, engine: [Double], baseline: [Double], baselineName: String,
                        engineName: String? = nil) {
        let engineMedian = median(engine), baselineMedian = median(baseline)
        func milliseconds(_ seconds: Double) -> String { formatted(seconds * 1000, digits: 1) + " ms" }
        print("\(name):")
        print("  \(engineName ?? "LockEngine.\(name)")   median \(milliseconds(engineMedian))   runs \(engine.map(milliseconds))")
        print("  \(baselineName)   median \(milliseconds(baselineMedian))   runs \(baseline.map(milliseconds))")
        print("  ratio \(formatted(engineMedian / baselineMedian, digits: 2))x")
    }

    /// Directories form a tree with ten children each; files go round-robin.
    func buildTree(at root: String, owner: UserAccount) throws {
        var directories = [root]
        try makeDirectory(root, owner: owner)
        for index in 1..<max(options.directories, 1) {
            let path = directories[(index - 1) / 10] + "/d\(index)"
            try makeDirectory(path, owner: owner)
            directories.append(path)
        }
        let contents = Array("contents of a benchmark file\n".utf8)
        for index in 0..<options.files {
            let path = directories[index % directories.count] + "/f\(index)"
            let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
            guard fd >= 0 else { throw Errno.current("create \(path)") }
            defer { close(fd) }
            guard write(fd, contents, contents.count) == contents.count, fchown(fd, owner.uid, owner.gid) == 0 else {
                throw Errno.current("write \(path)")
            }
        }
    }

    func makeDirectory(_ path: String, owner: UserAccount) throws {
        guard mkdir(path, 0o755) == 0, chown(path, owner.uid, owner.gid) == 0 else {
            throw Errno.current("mkdir \(path)")
        }
    }

    func makeTemporaryDirectory() throws -> String {
        var template = Array("/tmp/fc-lockbench.XXXXXX".utf8CString)
        let made = template.withUnsafeMutableBufferPointer { buffer in buffer.baseAddress.flatMap { mkdtemp($0) } }
        guard made != nil else { throw Errno.current("mkdtemp") }
        return String(decoding: template.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Runs a program to completion (`posix_spawnp`), failing unless it exits 0.
    func command(_ arguments: [String]) throws {
        var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        let spawned = posix_spawnp(&pid, arguments[0], nil, nil, &argv, environ)
        guard spawned == 0 else { throw Errno(spawned, operation: "posix_spawnp \(arguments[0])") }
        var status: CInt = 0
        _ = try retryingOnInterrupt("waitpid") { waitpid(pid, &status, 0) }
        guard status == 0 else {
            throw LockBenchmarkError(description: "\(arguments.joined(separator: " ")) failed (wait status \(status))")
        }
    }

    func measure(_ body: () throws -> Void) throws -> Double {
        let start = monotonicSeconds()
        try body()
        return monotonicSeconds() - start
    }



}

/// Files a child adds to a tree while the engine locks it: created the first
/// time the engine is about to change something, after the recording pass,
/// so every one is a late entry.
private final class Spray: @unchecked Sendable {
    // Only the benchmark's one thread uses it.
    let tree: String
    let files: Int
    let directories: Int
    let owner: UserAccount
    private var armed = false
    private(set) var created = 0
    /// How long making the files took, inside the engine's measured lock.
    private(set) var seconds = 0.0

    init(tree: String, files: Int, directories: Int, owner: UserAccount) {
        self.tree = tree
        self.files = files
        self.directories = directories
        self.owner = owner
    }

    func arm() {
        armed = true
        created = 0
    }

    var hooks: LockEngineHooks {
        LockEngineHooks { [self] _ in
            guard armed else { return }
            armed = false
            var start = timespec(), end = timespec()
            clock_gettime(CLOCK_MONOTONIC, &start)
            defer {
                clock_gettime(CLOCK_MONOTONIC, &end)
                seconds = Double(end.tv_sec - start.tv_sec) + Double(end.tv_nsec - start.tv_nsec) / 1e9
            }
            for index in 0..<files {
                let path = directory(index) + "/late\(index)"
                let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
                guard fd >= 0 else { continue }
                fchown(fd, owner.uid, owner.gid)
                close(fd)
                created += 1
            }
        }
    }

    /// Makes every late file now, before a lock.
    func makeAll() throws {
        arm()
        try hooks.beforeChange("")
    }

    func removeSprayed() throws {
        for index in 0..<files where unlink(directory(index) + "/late\(index)") != 0 {
            throw Errno.current("unlink late\(index)")
        }
    }

    /// The tree's directories as `buildTree` made them: d1… under a ten-way tree.
    private func directory(_ index: Int) -> String {
        var path = ""
        var number = index % max(directories, 1)
        var parts: [Int] = []
        while number > 0 {
            parts.append(number)
            number = (number - 1) / 10
        }
        for part in parts.reversed() { path += "/d\(part)" }
        return tree + path
    }
}

/// A journal in memory, for `--journal memory`: the engine's own cost alone.
private final class LockBenchmarkJournal: LockJournal, @unchecked Sendable {
    // Only the benchmark's one thread uses it.
    private var records: [String: LockRecord] = [:]
    private var stored: [String: [LockedEntry]] = [:]

    private func key(_ user: String, _ appID: String) -> String { user + "\u{0}" + appID }
    func lockRecord(user: String, appID: String) throws -> LockRecord? { records[key(user, appID)] }
    func allLockRecords() throws -> [LockRecord] { Array(records.values) }
    func saveLockRecord(_ record: LockRecord) throws { records[key(record.user, record.appID)] = record }
    func saveEntries(_ entries: [LockedEntry], record: LockRecord) throws {
        records[key(record.user, record.appID)] = record
        stored[key(record.user, record.appID)] = entries
    }
    func appendEntries(_ entries: [LockedEntry], record: LockRecord) throws {
        records[key(record.user, record.appID)] = record
        let known = Set(entries.map(\.relativePath))
        stored[key(record.user, record.appID), default: []].removeAll { known.contains($0.relativePath) }
        stored[key(record.user, record.appID), default: []] += entries
    }
    func entries(user: String, appID: String) throws -> [LockedEntry] { stored[key(user, appID)] ?? [] }
    func deleteLock(user: String, appID: String) throws {
        records[key(user, appID)] = nil
        stored[key(user, appID)] = nil
    }
}


// `familycontrols-bench lock --flatpak-sized`: an app the size of a Flatpak
// deployment (50,000 files in 1,000 folders by default), its lock against
// `chattr -R +i` of the same tree, and its update (the staged version locked
// under its own key, the two folders swapped by one RENAME_EXCHANGE, the
// records swapped in one transaction, the old version released) against
// `chattr -R +i NEW && chattr -R -i OLD`. Owners and modes stay as they are
// in both, as the lock keeps them.
#if canImport(Glibc)
import Glibc
#endif
import GuardKit
import LockEngine
import SystemKit
import GuardStore

struct AppSizedLockBenchmark {
    let options: LockBenchmarkOptions
    let appID = "org.example.FlatpakSized"
    var stagedKey: String { ".\(appID).update" }

    func run() throws {
        guard options.useStore else {
            throw LockBenchmarkError(description: "--flatpak-sized journals into the store; drop --journal memory")
        }
        let helper = LockBenchmark(options: options)
        let user = "fcbench_" + String(UInt32.random(in: 0...UInt32.max), radix: 36)
        try helper.command(["useradd", "-M", "-N", "-s", "/usr/sbin/nologin", user])
        defer { _ = try? helper.command(["userdel", user]) }
        guard let account = try UserDatabase.user(named: user) else {
            throw LockBenchmarkError(description: "useradd made no \(user)")
        }
        let base = try helper.makeTemporaryDirectory()
        defer {
            _ = try? helper.command(["chattr", "-R", "-f", "-i", base])
            _ = try? helper.command(["rm", "-rf", base])
        }
        let engineRoot = base + "/engine", baselineRoot = base + "/baseline"
        for root in [engineRoot, baselineRoot] { try helper.makeDirectory(root, owner: account) }
        let appPath = engineRoot + "/" + appID, stagedPath = engineRoot + "/" + stagedKey
        var baselineOld = baselineRoot + "/old", baselineNew = baselineRoot + "/new"
        for tree in [appPath, stagedPath, baselineOld, baselineNew] { try helper.buildTree(at: tree, owner: account) }

        let store = try Store.open(directory: base + "/store", logger: Logger(label: "bench", minimumLevel: .warning))
        let engine = LockEngine(journal: store, logger: Logger(label: "lock", minimumLevel: .warning))
        let parent = try OpenedDirectory.open(engineRoot)
        print("lock benchmark, Flatpak-sized app: \(options.files) files in \(options.directories) directories, "
            + "\(options.rounds) rounds, journal: SQLite store (synchronous=FULL)")

        var times: [String: [Double]] = [:]
        for round in 0..<options.rounds {
            let lockEngine = {
                let report = try engine.lock(user: user, appID: appID, directory: appPath)
                guard report.state == .locked else { throw LockBenchmarkError(description: "lock ended \(report.state)") }
            }
            let lockBaseline = { try helper.command(["chattr", "-R", "+i", baselineOld]) }
            let updateEngine = { try update(engine: engine, store: store, parent: parent, user: user, uid: account.uid) }
            let updateBaseline = {
                try helper.command(["chattr", "-R", "+i", baselineNew])
                try helper.command(["chattr", "-R", "-i", baselineOld])
            }
            let steps = round % 2 == 0
                ? [("lock engine", lockEngine), ("lock baseline", lockBaseline),
                   ("update engine", updateEngine), ("update baseline", updateBaseline)]
                : [("lock baseline", lockBaseline), ("lock engine", lockEngine),
                   ("update baseline", updateBaseline), ("update engine", updateEngine)]
            for (name, body) in steps {
                sync()
                times[name, default: []].append(try helper.measure(body))
            }
            // Back to both versions unlocked, the new one now the one in place.
            _ = try engine.unlock(user: user, appID: appID)
            try helper.command(["chattr", "-R", "-i", baselineNew])
            swap(&baselineOld, &baselineNew)
        }
        helper.report("lock of a Flatpak-sized app", engine: times["lock engine"] ?? [],
                      baseline: times["lock baseline"] ?? [], baselineName: "chattr -R +i",
                      engineName: "LockEngine.lock")
        helper.report("update of a Flatpak-sized app (the lock moves)", engine: times["update engine"] ?? [],
                      baseline: times["update baseline"] ?? [], baselineName: "chattr -R +i NEW && chattr -R -i OLD",
                      engineName: "lock the staged version, RENAME_EXCHANGE, record, release the old")
        print("  targets: lock ≤ 1.0x, update ≤ 2.0x")
    }

    /// What the Guard does to move the lock: the staged version locked under
    /// its own key, the names exchanged, the records swapped, the old released.
    private func update(engine: LockEngine, store: Store, parent: OpenedDirectory, user: String, uid: UInt32) throws {
        let staged = try parent.openDirectory(stagedKey)
        let report = try engine.lock(user: user, appID: stagedKey, directory: staged)
        guard report.state == .locked else { throw LockBenchmarkError(description: "staged lock ended \(report.state)") }
        let approved = try parent.openDirectory(appID)
        for folder in [approved, staged] { try folder.setImmutable(false) }
        try parent.exchange(appID, stagedKey)
        for folder in [approved, staged] { try folder.setImmutable(true) }
        let record = AuthorizationRecord(user: user, uid: uid, appID: appID, member: .child, status: .approved,
                                         approvedBy: "bench", updatedAt: .now, appPath: parent.path + "/" + appID,
                                         appIdentity: staged.identity)
        try store.recordUpdateSwapped(user: user, appID: appID, stagedKey: stagedKey, appPath: record.appPath,
                                      stagedPath: parent.path + "/" + stagedKey, authorization: record,
                                      audit: AuditEvent(at: .now, actor: "bench", action: .update, user: user,
                                                        appID: appID, outcome: .swappedIn))
        let released = try engine.unlock(user: user, appID: stagedKey)
        guard released.isComplete else { throw LockBenchmarkError(description: "release: \(released.findings.prefix(3))") }
    }
}

/// Which recorded entries a walk reached, so the ones it did not can be
/// reported as missing.
struct EntryCoverage {
    private var seen: [Bool]
    /// Directories the walk did not enter; nothing below them was checked.
    private var unwalked: Set<String> = []

    init(count: Int) {
        seen = Array(repeating: false, count: count)
    }

    mutating func markSeen(_ position: Int) {
        while seen.count <= position { seen.append(false) }
        seen[position] = true
    }

    /// Notes that the walk did not enter the directory at `path`.
    mutating func skip(_ path: String) {
        unwalked.insert(path)
    }

    /// Recorded entries the walk should have reached and did not.
    func missing(in entries: [LockedEntry]) -> [String] {
        entries.indices.compactMap { position in
            let path = entries[position].relativePath
            guard position >= seen.count || !seen[position], !isBelowUnwalked(path) else { return nil }
            return path
        }
    }

    private func isBelowUnwalked(_ path: String) -> Bool {
        guard !unwalked.isEmpty else { return false }
        if unwalked.contains("") { return !path.isEmpty }
        var prefix = path[...]
        while let slash = prefix.lastIndex(of: "/") {
            prefix = prefix[..<slash]
            if unwalked.contains(String(prefix)) { return true }
        }
        return false
    }
}

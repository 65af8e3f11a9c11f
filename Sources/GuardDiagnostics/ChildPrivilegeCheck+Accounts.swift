import FamilyConfiguration
#if canImport(Glibc)
import Glibc
#endif
import SystemKit
import GuardIdentity

extension ChildPrivilegeCheck {
    /// Accounts that share a uid (`useradd -o`): to the kernel one uid is one
    /// user, so a child is every account with its uid. Lookups by name and
    /// uid cannot show it; the whole list (`getpwent`, bounded) can.
    struct SharedUIDs {
        private var accounts: [uid_t: [UserAccount]] = [:]
        private(set) var unchecked: [ConfigurationFinding] = []
        private let passwd: String
        private var lines: [String: Int] = [:]

        init(passwd: String, limit: Int = GuardLimits().accountsListed) {
            self.passwd = passwd
            do throws(Errno) {
                let listed = try UserDatabase.allUsers(limit: limit)
                for account in listed.accounts { accounts[account.uid, default: []].append(account) }
                if !listed.complete {
                    unchecked.append(ConfigurationFinding(severity: .warning, file: passwd, line: 0,
                        message: "more than \(limit) accounts: uids shared with the ones past them are not checked"))
                }
            } catch {
                unchecked.append(ConfigurationFinding(severity: .warning, file: passwd, line: 0,
                    message: "cannot list the accounts (\(error)): uids shared with a child are not checked"))
            }
            if let bytes = try? FileDescriptor.readFile(passwd, limit: 16 << 20) {
                for (index, line) in bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).enumerated() {
                    guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else { continue }
                    let name = String(decoding: line[line.startIndex..<colon], as: UTF8.self)
                    if lines[name] == nil { lines[name] = index + 1 }
                }
            }
        }

        /// The other accounts with `child`'s uid, each as a way: a guardian
        /// (refused: the child is that guardian), anyone else (a warning).
        /// Each names the other account's line in the passwd file, or no file
        /// when it is not there (an NSS directory's), for the caller to name its own.
        func privileges(of child: UserAccount, guardians: Set<String>) -> [ChildPrivilege] {
            (accounts[child.uid] ?? []).filter { $0.name != child.name }.map { other in
                let way = "uid \(child.uid) is also \(other.name)'s"
                let file = lines[other.name] == nil ? "" : passwd
                let line = lines[other.name] ?? 0
                if guardians.contains(other.name) {
                    return ChildPrivilege(child: child.name, severity: .refused, outcome: "is guardian \(other.name)", way: way,
                        why: "one uid is one user to the kernel: the guardian's files, login files and processes are the child's",
                        file: file, line: line)
                }
                return ChildPrivilege(child: child.name, severity: .warning, outcome: "is also user \(other.name)", way: way,
                    why: "one uid is one user to the kernel: whatever \(other.name) may do, the child may", file: file, line: line)
            }
        }
    }
}

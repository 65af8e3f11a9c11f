import Foundation
import SQLite
import Testing
import TestSupport

/// A statement the connection keeps for the next run of the same SQL must
/// behave as a newly compiled one: from the first row, with no parameter
/// left bound, holding no lock once released, and never keeping the
/// connection's file open.
@Suite("SQLite statement cache")
struct StatementCacheTests {
    private func withDatabase<R>(_ body: (SQLiteDatabase, String) throws -> R) throws -> R {
        try withTemporaryDirectorySync { directory throws in
            let path = directory + "/test.db"
            let database = try SQLiteDatabase(path: path)
            try database.execute("CREATE TABLE t (v INTEGER)")
            try database.execute("INSERT INTO t (v) VALUES (1), (2), (3)")
            return try body(database, path)
        }
    }

    @Test("a kept statement runs again from its first row with its parameters cleared")
    func keptStatementStartsOver() throws {
        try withDatabase { database, _ throws in
            let sql = "SELECT v, ?1 FROM t ORDER BY v"
            do {
                let first = try database.cachedStatement(sql)
                try first.bind(.integer(42), at: 1)
                #expect(try first.step())
                #expect(try first.step())
                #expect(first.int64(at: 0) == 2)
            }
            let again = try database.cachedStatement(sql)
            #expect(try again.step())
            #expect(again.int64(at: 0) == 1, "a kept statement must be rewound")
            #expect(again.isNull(at: 1), "a kept statement must not keep the last caller's parameter")
        }
    }

    @Test("a kept statement read only part way holds no lock: another connection writes at once")
    func releasedStatementEndsItsRead() throws {
        try withDatabase { database, path throws in
            // Stops after the first of three rows, then the statement is released and kept.
            #expect(try database.firstRow("SELECT v FROM t ORDER BY v") { $0.int64(at: 0) } == 1)
            let other = try SQLiteDatabase(path: path)
            try other.setBusyTimeout(milliseconds: 0)
            // A read left open would hold SQLite's shared lock and this would fail with SQLITE_BUSY.
            #expect(try other.run("INSERT INTO t (v) VALUES (4)") == 1)
            #expect(try database.firstRow("SELECT count(*) FROM t") { $0.int64(at: 0) } == 4)
        }
    }

    @Test("the same SQL held twice is two statements, each reading its own rows")
    func sameTextHeldTwiceCompilesASecond() throws {
        try withDatabase { database, _ throws in
            let sql = "SELECT v FROM t ORDER BY v"
            let outer = try database.cachedStatement(sql)
            #expect(try outer.step())
            let inner = try database.cachedStatement(sql)
            var innerRows: [Int64] = []
            while try inner.step() { innerRows.append(inner.int64(at: 0)) }
            #expect(innerRows == [1, 2, 3])
            #expect(outer.int64(at: 0) == 1)
            #expect(try outer.step())
            #expect(outer.int64(at: 0) == 2, "the outer statement must go on where it was")
        }
    }

    @Test("a connection with kept statements still closes its file when released")
    func keptStatementsDoNotKeepTheFileOpen() throws {
        try withTemporaryDirectorySync { directory throws in
            let path = directory + "/test.db"
            func openDescriptors() -> Int {
                let descriptors = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
                return descriptors.filter {
                    (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\($0)")) == path
                }.count
            }
            do {
                let database = try SQLiteDatabase(path: path)
                try database.run("CREATE TABLE t (v INTEGER)")
                try database.run("INSERT INTO t (v) VALUES (?1)", [.integer(5)])
                #expect(try database.firstRow("SELECT v FROM t") { $0.int64(at: 0) } == 5)
                #expect(openDescriptors() == 1)
            }
            #expect(openDescriptors() == 0, "the connection must close with statements kept")
        }
    }
}

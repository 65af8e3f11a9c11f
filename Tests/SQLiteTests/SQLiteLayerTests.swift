import Foundation
import SQLite
import Testing
import TestSupport

@Suite("SQLite layer")
struct SQLiteLayerTests {
    private func withDatabase<R>(_ body: (SQLiteDatabase, String) throws -> R) throws -> R {
        try withTemporaryDirectorySync { directory throws in
            let path = directory + "/test.db"
            return try body(try SQLiteDatabase(path: path), path)
        }
    }

    static let values: [SQLiteValue] = [
        .null, .integer(0), .integer(.min), .integer(.max), .real(3.25), .real(-.greatestFiniteMagnitude),
        .real(.leastNonzeroMagnitude), .real(.infinity), .text(""), .text("plain"), .text("nul\u{0}inside"),
        .text("Zoë 🧒🏽 日本語"), .blob([]), .blob([0, 1, 2, 255]),
    ]

    @Test("every storage class round-trips unchanged", arguments: values)
    func roundTrip(_ value: SQLiteValue) throws {
        try withDatabase { database, _ throws in
            try database.execute("CREATE TABLE t (v)")
            try database.run("INSERT INTO t (v) VALUES (?1)", [value])
            #expect(try database.firstRow("SELECT v FROM t") { $0.value(at: 0) } == value)
        }
    }

    @Test("a statement runs again after reset with new bindings")
    func resetAndRebind() throws {
        try withDatabase { database, _ throws in
            try database.execute("CREATE TABLE t (v INTEGER)")
            let insert = try database.prepare("INSERT INTO t (v) VALUES (?1)")
            for number in [7, 8, 9] as [Int64] {
                try insert.bind(.integer(number), at: 1)
                #expect(try insert.step() == false)
                insert.reset()
            }
            let select = try database.prepare("SELECT v FROM t ORDER BY v")
            var seen: [Int64] = []
            while try select.step() { seen.append(select.int64(at: 0)) }
            #expect(seen == [7, 8, 9])
            #expect(select.columnCount == 1)
        }
    }

    @Test("binding a parameter that does not exist is a range error")
    func bindOutOfRange() throws {
        try withDatabase { database, _ throws in
            let statement = try database.prepare("SELECT ?1")
            let error = #expect(throws: SQLiteError.self) { try statement.bind(.integer(1), at: 2) }
            #expect(error?.code == .range)
        }
    }

    @Test("a syntax error names the statement and carries SQLite's message")
    func syntaxError() throws {
        try withDatabase { database, _ throws in
            let error = #expect(throws: SQLiteError.self) { try database.prepare("SELEKT 1") }
            #expect(error?.code == .error)
            #expect(error?.message == "near \"SELEKT\": syntax error")
            #expect(error?.operation == "SELEKT 1")
            #expect(error?.description == "SELEKT 1: near \"SELEKT\": syntax error (SQLITE_ERROR)")
        }
    }

    @Test("prepare refuses empty SQL and a second statement it would ignore", arguments: ["", "  ;", "SELECT 1; SELECT 2"])
    func prepareNeedsOneStatement(_ sql: String) throws {
        try withDatabase { database, _ throws in
            let error = #expect(throws: SQLiteError.self) { try database.prepare(sql) }
            #expect(error?.code == .misuse)
        }
    }

    @Test("a constraint failure reports the extended code")
    func constraintFailure() throws {
        try withDatabase { database, _ throws in
            try database.execute("CREATE TABLE t (k TEXT UNIQUE)")
            try database.run("INSERT INTO t (k) VALUES ('a')")
            let error = #expect(throws: SQLiteError.self) { try database.run("INSERT INTO t (k) VALUES ('a')") }
            #expect(error?.code == .constraint)
            #expect(error?.extendedCode == .constraintUnique)
            #expect(error?.message == "UNIQUE constraint failed: t.k")
        }
    }

    @Test("opening a path in a missing directory fails with SQLITE_CANTOPEN naming the path")
    func openFailure() throws {
        try withTemporaryDirectorySync { directory throws in
            let path = directory + "/missing/test.db"
            let error = #expect(throws: SQLiteError.self) { try SQLiteDatabase(path: path) }
            #expect(error?.code == .cannotOpen)
            #expect(error?.operation == "open \(path)")
        }
    }

    @Test("a file that is not a database fails on first use with SQLITE_NOTADB")
    func notADatabase() throws {
        try withTemporaryDirectorySync { directory throws in
            let path = directory + "/garbage.db"
            try Data(repeating: 0x41, count: 4096).write(to: URL(fileURLWithPath: path))
            let database = try SQLiteDatabase(path: path)
            let error = #expect(throws: SQLiteError.self) { try database.execute("SELECT * FROM sqlite_schema") }
            #expect(error?.code == .notADatabase)
            #expect(error?.message == "file is not a database")
        }
    }

    struct Abandon: Error {}

    @Test("a transaction commits what its body did")
    func transactionCommits() throws {
        try withDatabase { database, _ throws in
            try database.execute("CREATE TABLE t (v INTEGER)")
            let id = try database.transaction { () throws(SQLiteError) -> Int64 in
                try database.run("INSERT INTO t (v) VALUES (1)")
                return database.lastInsertRowID
            }
            #expect(id == 1)
            #expect(database.isInTransaction == false)
            #expect(try database.firstRow("SELECT count(*) FROM t") { $0.int64(at: 0) } == 1)
        }
    }

    @Test("a transaction rolls back when its body throws, and rethrows the body's error")
    func transactionRollsBack() throws {
        try withDatabase { database, _ throws in
            try database.execute("CREATE TABLE t (v INTEGER)")
            #expect(throws: Abandon.self) {
                try database.transaction(mapError: { _ in Abandon() }) { () throws(Abandon) in
                    _ = try? database.run("INSERT INTO t (v) VALUES (1)")
                    throw Abandon()
                }
            }
            #expect(database.isInTransaction == false)
            #expect(try database.firstRow("SELECT count(*) FROM t") { $0.int64(at: 0) } == 0)
        }
    }

    @Test("a failed COMMIT rolls back and reports the commit's error")
    func commitFailureRollsBack() throws {
        try withDatabase { database, _ throws in
            try database.execute("""
                PRAGMA foreign_keys = ON;
                CREATE TABLE parent (id INTEGER PRIMARY KEY);
                CREATE TABLE child (parent INTEGER REFERENCES parent (id) DEFERRABLE INITIALLY DEFERRED);
                """)
            let error = #expect(throws: SQLiteError.self) {
                try database.transaction { () throws(SQLiteError) in
                    // Deferred: the orphan is only caught at COMMIT.
                    try database.run("INSERT INTO child (parent) VALUES (42)")
                }
            }
            #expect(error?.extendedCode == .constraintForeignKey)
            #expect(error?.operation == "COMMIT TRANSACTION")
            #expect(database.isInTransaction == false)
            #expect(try database.firstRow("SELECT count(*) FROM child") { $0.int64(at: 0) } == 0)
        }
    }

    @Test("result codes have their C names and SQLite's text")
    func resultCodeNames() {
        #expect(SQLiteResultCode.busy.name == "SQLITE_BUSY")
        #expect(SQLiteResultCode.busy.message == "database is locked")
        #expect(SQLiteResultCode.constraintCheck.name == "SQLITE_CONSTRAINT_CHECK")
        #expect(SQLiteResultCode.constraintCheck.primary == .constraint)
        #expect(SQLiteResultCode(rawValue: 19 | (2 << 8)).name == "SQLITE_CONSTRAINT (extended 531)")
        #expect(SQLiteResultCode.full.description == "SQLITE_FULL: database or disk is full")
    }
}

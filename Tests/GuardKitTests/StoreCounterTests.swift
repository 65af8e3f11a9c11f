import GuardKit
import Testing
import GuardStore

@Suite("Store: counters")
struct StoreCounterTests {
    @Test("a counter counts from 1 and goes on from where it was after the store is reopened")
    func continuesAfterReopening() throws {
        try withStore { store, directory throws in
            #expect(try (1...3).map { _ in try store.next(.request) } == [1, 2, 3])
            let reopened = try Store.open(directory: directory, logger: .quiet)
            #expect(try reopened.next(.request) == 4)
            #expect(try store.next(.request) == 5)
        }
    }
}

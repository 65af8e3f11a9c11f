import FamilyControls
import Foundation
import Testing

/// A value that is neither Equatable nor Sendable, as an app's model may hold.
private final class Note {
    let text: String
    init(_ text: String) { self.text = text }
}

private final class Model: ObservableObject {
    @Published var count = 0
    @Published var notes: [Note] = []
    @Published var title: String? = nil
}

private final class DetailModel: ObservableObject {
    @Published var isLoading = false
}

private class BaseModel: ObservableObject {
    @Published var base = 0
}

private final class DerivedModel: BaseModel {
    @Published var derived = 0
}

private final class OwnPublisherModel: ObservableObject {
    let objectWillChange = ObservableObjectPublisher()
    @Published var count = 0
}

/// `@Published` on an app's own classes: Combine's property wrapper and
/// `ObservableObject`, which apps use beside `import FamilyControls`.
@Suite struct PublishedTests {
    @Test func aPropertyPublishesItsCurrentValueThenEveryValueSetEvenAnEqualOne() {
        let model = Model()
        var seen: [Int] = []
        let subscription = model.$count.sink { seen.append($0) }
        model.count = 1
        model.count = 1
        model.count = 2
        #expect(seen == [0, 1, 1, 2])
        subscription.cancel()
        model.count = 3
        #expect(seen == [0, 1, 1, 2])
    }

    @Test func valuesNeedNotBeEquatableOrSendable() {
        let model = Model()
        var seen: [[String]] = []
        let subscription = model.$notes.sink { seen.append($0.map(\.text)) }
        model.notes.append(Note("a"))
        model.notes = [Note("b"), Note("c")]
        model.title = "t"
        #expect(seen == [[], ["a"], ["b", "c"]])
        #expect(model.title == "t")
        withExtendedLifetime(subscription) {}
    }

    @Test func aSubscriberReadsTheNewValueInsideItsSink() {
        let model = Model()
        var read: [Int] = []
        let subscription = model.$count.sink { _ in read.append(model.count) }
        model.count = 5
        #expect(read == [0, 5])
        withExtendedLifetime(subscription) {}
    }

    @Test func releasingTheCancellableStopsDelivery() {
        let model = Model()
        var seen: [Int] = []
        var subscriptions = Set<AnyCancellable>()
        model.$count.sink { seen.append($0) }.store(in: &subscriptions)
        model.count = 1
        subscriptions.removeAll()
        model.count = 2
        #expect(seen == [0, 1])
    }

    @Test func objectWillChangeFiresBeforeEachChangeWhileTheOldValueIsStillThere() {
        let model = Model()
        var before: [Int] = []
        let subscription = model.objectWillChange.sink { before.append(model.count) }
        model.count = 1
        model.count = 2
        model.title = "x"
        #expect(before == [0, 1, 2])
        withExtendedLifetime(subscription) {}
    }

    @Test func anObjectAlwaysGetsTheSameObjectWillChange() {
        let model = Model()
        #expect(model.objectWillChange === model.objectWillChange)
        #expect(model.objectWillChange !== Model().objectWillChange)
    }

    @Test func objectWillChangeIsPerObject() {
        let first = DetailModel(), second = DetailModel()
        var fired = 0
        let subscription = first.objectWillChange.sink { fired += 1 }
        second.isLoading = true
        #expect(fired == 0)
        first.isLoading = true
        #expect(fired == 1)
        withExtendedLifetime(subscription) {}
    }

    @Test func aSubclassAndItsSuperclassPropertiesFireTheSameObjectWillChange() {
        let model = DerivedModel()
        var fired = 0
        let subscription = model.objectWillChange.sink { fired += 1 }
        model.base = 1
        model.derived = 1
        #expect(fired == 2)
        withExtendedLifetime(subscription) {}
    }

    @Test func aClassWithItsOwnObjectWillChangeSendsItItself() {
        let model = OwnPublisherModel()
        var fired = 0
        let subscription = model.objectWillChange.sink { fired += 1 }
        model.count = 1
        #expect(fired == 0)
        model.objectWillChange.send()
        #expect(fired == 1)
        withExtendedLifetime(subscription) {}
    }

    @Test func assignToAPublishedPropertyFollowsUpstreamAndDoesNotKeepTheObjectAlive() {
        let source = Model()
        weak var released: DetailModel?
        do {
            let target = DetailModel()
            released = target
            var willChange = 0
            let subscription = target.objectWillChange.sink { willChange += 1 }
            source.$count.map { $0 > 0 }.assign(to: &target.$isLoading)
            #expect(target.isLoading == false)
            source.count = 3
            #expect(target.isLoading == true)
            #expect(willChange == 2)
            withExtendedLifetime(subscription) {}
        }
        #expect(released == nil)
        source.count = 4
    }

    @Test func valuesYieldsTheCurrentValueThenChanges() async {
        let model = Model()
        let values = model.$count.values
        model.count = 1
        model.count = 2
        var seen: [Int] = []
        for await value in values {
            seen.append(value)
            if seen.count == 3 { break }
        }
        #expect(seen == [0, 1, 2])
    }
}

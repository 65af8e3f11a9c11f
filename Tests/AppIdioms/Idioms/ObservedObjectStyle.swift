// `@ObservedObject var center = AuthorizationCenter.shared`, as Apple's
// documentation has it. Linux has no SwiftUI, so `ObservedObject` and `View`
// here stand in for SwiftUI's: what they need from the library is
// `ObservableObject` and its `objectWillChange`.
import FamilyControls
import Foundation

/// Stands in for SwiftUI's `ObservedObject`: holds the object and subscribes
/// to `objectWillChange` to invalidate the view.
@propertyWrapper
struct ObservedObject<ObjectType: ObservableObject> {
    @dynamicMemberLookup
    struct Wrapper {
        let object: ObjectType
        subscript<Value>(dynamicMember keyPath: ReferenceWritableKeyPath<ObjectType, Value>) -> Value {
            object[keyPath: keyPath]
        }
    }

    let wrappedValue: ObjectType
    private let invalidation: AnyCancellable

    init(wrappedValue: ObjectType) {
        self.wrappedValue = wrappedValue
        // SwiftUI schedules the view to render again here.
        invalidation = wrappedValue.objectWillChange.sink { _ in }
    }

    var projectedValue: Wrapper { Wrapper(object: wrappedValue) }
}

/// Stands in for SwiftUI's `StateObject`.
@propertyWrapper
struct StateObject<ObjectType: ObservableObject> {
    let wrappedValue: ObjectType

    init(wrappedValue thunk: @autoclosure () -> ObjectType) {
        wrappedValue = thunk()
    }
}

/// A view in Apple's style; SwiftUI's views are on the main actor.
@MainActor
struct FamilyControlsStatusView {
    @ObservedObject var center = AuthorizationCenter.shared

    var body: String {
        switch center.authorizationStatus {
        case .notDetermined: "Ask a parent"
        case .denied: "Not allowed"
        case .approved, .approvedWithDataAccess: "Protected"
        @unknown default: "Unknown"
        }
    }
}

/// A view that owns its model and observes the center too.
@MainActor
struct SettingsView {
    @StateObject private var model = AuthorizationViewModel()
    @ObservedObject var center: AuthorizationCenter

    var body: String { "\(center.authorizationStatus) \(model.isAuthorized)" }
}

/// What SwiftUI's `ObservedObject` asks of the object, generically.
func observe<Object: ObservableObject>(_ object: Object, onChange: @escaping () -> Void) -> AnyCancellable {
    object.objectWillChange.sink { _ in onChange() }
}

func observeCenter() -> AnyCancellable {
    observe(AuthorizationCenter.shared) { print("the status will change") }
}

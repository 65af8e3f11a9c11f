/// An object that announces its changes before they happen: Combine's
/// `ObservableObject`, what SwiftUI's `@ObservedObject` and `@StateObject` ask for.
///
/// A class that declares no `objectWillChange` of its own gets one that fires
/// before any of its `@Published` properties changes, as with Combine.
public protocol ObservableObject: AnyObject {
    /// The type of ``objectWillChange``.
    associatedtype ObjectWillChangePublisher: Publisher = ObservableObjectPublisher
    where ObjectWillChangePublisher.Failure == Never

    /// Publishes before the object changes.
    var objectWillChange: ObjectWillChangePublisher { get }
}

extension ObservableObject where ObjectWillChangePublisher == ObservableObjectPublisher {
    /// Publishes before any `@Published` property of the object changes.
    ///
    /// Combine finds an object's `@Published` properties by reflection. Here
    /// each `@Published` property, when set, finds its object's publisher in a
    /// table keyed by the object's identity (see `ObjectWillChangeRegistry`);
    /// the same object always gets the same publisher.
    public var objectWillChange: ObservableObjectPublisher {
        ObjectWillChangeRegistry.publisher(for: self)
    }
}

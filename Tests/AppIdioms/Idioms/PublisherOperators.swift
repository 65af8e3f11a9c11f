// Every publisher idiom apps use on $authorizationStatus and objectWillChange.
import FamilyControls
import Foundation

/// A view model on the main actor, fed by every operator in turn.
@MainActor
final class AuthorizationViewModel: ObservableObject {
    @Published var status: AuthorizationStatus = .notDetermined
    @Published var isAuthorized = false
    @Published var isApprovedOnMainRunLoop = false
    @Published private(set) var history: [AuthorizationStatus] = []
    @Published var lastCompletion: String?
    private var cancellables = Set<AnyCancellable>()
    private var cancellableList: [AnyCancellable] = []
    let center = AuthorizationCenter.shared

    init() {
        center.$authorizationStatus
            .receive(on: DispatchQueue.main)
            .sink { [weak self] status in self?.status = status }
            .store(in: &cancellables)

        center.$authorizationStatus
            .map { $0 == .approved }
            .removeDuplicates()
            .receive(on: RunLoop.main)
            .assign(to: \.isApprovedOnMainRunLoop, on: self)
            .store(in: &cancellables)

        center.$authorizationStatus
            .dropFirst()
            .removeDuplicates()
            .sink { [weak self] in self?.history.append($0) }
            .store(in: &cancellableList)

        center.$authorizationStatus
            .map { $0 == .approved || $0 == .approvedWithDataAccess }
            .assign(to: &$isAuthorized)

        center.$authorizationStatus
            .sink(receiveCompletion: { [weak self] completion in
                switch completion {
                case .finished: self?.lastCompletion = "finished"
                case .failure: self?.lastCompletion = "failed"
                }
            }, receiveValue: { [weak self] value in
                self?.status = value
            })
            .store(in: &cancellables)

        center.objectWillChange
            .receive(on: DispatchQueue.main, options: nil)
            .sink { [weak self] _ in self?.objectWillChange.send() }
            .store(in: &cancellables)

        center.$authorizationStatus
            .dropFirst(2)
            .removeDuplicates { previous, next in previous == next }
            .map(\.rawValue)
            .sink { print("changed to", $0) }
            .store(in: &cancellables)
    }

    /// The publisher handed to another layer, type-erased.
    var statusPublisher: AnyPublisher<AuthorizationStatus, Never> {
        center.$authorizationStatus.eraseToAnyPublisher()
    }

    /// Apple's own form: read the property inside a sink that ignores the value.
    func appleStyleSink() -> AnyCancellable {
        let center = self.center
        return center.$authorizationStatus
            .sink() {
                switch center.authorizationStatus {
                case .notDetermined: print("notDetermined")
                case .denied: print("denied")
                case .approved: print("approved")
                case .approvedWithDataAccess: print("approvedWithDataAccess")
                @unknown default: break
                }
            }
    }
}

/// A class on no actor holding one subscription, as older code does.
final class StatusObserver {
    private var cancellable: AnyCancellable?
    private(set) var latest: AuthorizationStatus?

    func start() {
        cancellable = AuthorizationCenter.shared.$authorizationStatus
            .receive(on: DispatchQueue.main)
            .sink { [weak self] status in self?.latest = status }
    }

    func stop() {
        cancellable?.cancel()
        cancellable = nil
    }
}

/// A publisher spelled out in a signature, as Apple declares it.
func statusPublisher(of center: AuthorizationCenter) -> Published<AuthorizationStatus>.Publisher {
    center.$authorizationStatus
}

/// A generic helper over any publisher of statuses.
func firstApproval<P: Publisher>(in publisher: P, then action: @escaping () -> Void) -> AnyCancellable
where P.Output == AuthorizationStatus, P.Failure == Never {
    publisher
        .map { $0 == .approved }
        .removeDuplicates()
        .dropFirst()
        .sink { approved in if approved { action() } }
}

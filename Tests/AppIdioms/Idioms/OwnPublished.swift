// An app's own `@Published` properties beside `import FamilyControls`:
// view models on the main actor and on no actor, subclasses, values that are
// neither Equatable nor Sendable, and the synthesized `objectWillChange`.
import FamilyControls
import Foundation

struct BlockedApp: Identifiable {
    let id = UUID()
    var name: String
    var limit: TimeInterval
}

final class Schedule {
    var start = DateComponents(hour: 21)
    var end = DateComponents(hour: 7)
}

@MainActor
final class ShieldViewModel: ObservableObject {
    @Published var blockedApps: [BlockedApp] = []
    @Published var schedule = Schedule()
    @Published var isShieldActive = false
    @Published private(set) var errorMessage: String?
    @Published var selection: BlockedApp.ID?

    private var cancellables = Set<AnyCancellable>()

    init() {
        $blockedApps
            .map { !$0.isEmpty }
            .assign(to: &$isShieldActive)
        $isShieldActive
            .dropFirst()
            .sink { active in print("shield", active) }
            .store(in: &cancellables)
    }

    func add(_ name: String) {
        objectWillChange.send()
        blockedApps.append(BlockedApp(name: name, limit: 3600))
    }

    func request() async {
        do {
            try await AuthorizationCenter.shared.requestAuthorization(for: .individual)
            errorMessage = nil
        } catch {
            errorMessage = error.localizedDescription
        }
    }
}

/// A view model on no actor, from before Swift concurrency.
class BaseSettingsModel: ObservableObject {
    @Published var title = "Settings"
    @Published var isLoading = false
}

final class FamilySettingsModel: BaseSettingsModel {
    @Published var status = AuthorizationCenter.shared.authorizationStatus
    @Published var children: [String] = []
    private var subscription: AnyCancellable?

    override init() {
        super.init()
        subscription = AuthorizationCenter.shared.$authorizationStatus
            .sink { [weak self] in self?.status = $0 }
    }

    func load() {
        isLoading = true
        children = ["alice"]
        isLoading = false
    }
}

/// A model with its own `objectWillChange`, sent by hand.
final class ManualModel: ObservableObject {
    let objectWillChange = ObservableObjectPublisher()
    var count = 0 {
        willSet { objectWillChange.send() }
    }
}

/// `@Published` with the initial value given in `init`.
final class ConfiguredModel: ObservableObject {
    @Published var limit: Int

    init(limit: Int) {
        _limit = Published(initialValue: limit)
    }
}

@MainActor
func watchOwnModel(_ model: ShieldViewModel) -> [AnyCancellable] {
    [
        model.objectWillChange.sink { print("will change") },
        model.$blockedApps.map(\.count).removeDuplicates().sink { print($0, "apps") },
    ]
}

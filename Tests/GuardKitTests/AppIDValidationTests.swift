import GuardKit
import Testing
import GuardIdentity

@Suite struct AppIDValidationTests {
    @Test(arguments: ["org.example.Timer", "a", "com.example.my-app_2", "x.y.z", String(repeating: "a", count: 255)])
    func reverseDomainNamesAreAccepted(id: String) {
        #expect(AppIdentity.isValidAppID(id))
    }

    @Test(arguments: ["", ".", "..", ".org.example", "org.example.", "org..example", "org.exa mple", "org/example",
                      "org.exämple", "org.example\n", String(repeating: "a", count: 256)])
    func anythingElseIsRefused(id: String) {
        #expect(!AppIdentity.isValidAppID(id), "\(id.debugDescription)")
    }
}

@testable import ChildInspection
import Testing

@Suite struct RepositoryRemoteTests {
    let config = """
        [core]
        repo_version=1
        mode=bare-user-only

        [remote "flathub"]
        gpg-verify=true
        url=https://dl.flathub.org/repo/
        collection-id=org.flathub.Stable

        [remote "fctest"]
        gpg-verify=false
        url=file:///srv/repo

        """

    @Test func readsTheNamedRemote() throws {
        let flathub = try RepositoryRemote.remote("flathub", in: Array(config.utf8))
        #expect(flathub == RepositoryRemote(name: "flathub", url: "https://dl.flathub.org/repo/", gpgVerify: true,
                                                      collectionID: "org.flathub.Stable"))
        let local = try RepositoryRemote.remote("fctest", in: Array(config.utf8))
        #expect(local.url == "file:///srv/repo")
        #expect(!local.gpgVerify)
    }

    @Test(arguments: [
        ("[remote \"a\"]\nurl=https://x/\nurl=https://y/\n", "line 3: url given twice in the remote's group"),
        ("[remote \"a\"]\nurl=ftp://x/\n", "the remote's url is missing or neither https://, http:// nor an absolute file:// path"),
        ("[remote \"a\"]\nurl=https://x/ --upload\n", "the remote's url is missing or neither https://, http:// nor an absolute file:// path"),
        ("[remote \"a\"]\nurl=https://x/\ngpg-verify=maybe\n", "the remote's gpg-verify is neither true nor false"),
        ("[remote \"a\"]\nurl=https://x/\u{01}\n", "line 2 of the repository's config holds a control character"),
        ("url=https://x/\n", "line 1: a key outside any group"),
        ("[remote \"a\"]\n[remote \"a\"]\n", "line 2: a group given twice"),
        ("[remote \"b\"]\nurl=https://x/\n", "the per-user installation has no remote of that name"),
        ("[remote \"a\"]\nurl=https://x/\ncollection-id=--x\n", "the remote's collection-id is not a dotted name"),
    ])
    func refusesHostileConfiguration(text: String, reason: String) {
        #expect(throws: RepositoryConfigurationError(reason)) {
            try RepositoryRemote.remote("a", in: Array(text.utf8))
        }
    }

    @Test func refusesARemoteNameFlatpakWouldReadAsAnOption() {
        #expect(throws: RepositoryConfigurationError("the remote's name is not a plain name")) {
            try RepositoryRemote.remote("--if-not-exists", in: Array(config.utf8))
        }
    }
}

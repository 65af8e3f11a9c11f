// The OSTree parsers, on objects a remote or a child wrote: a commit object
// (a GVariant the move and the update judge read) and a deployment's
// `deploy` file. The inspector reads at most OstreeCommitObject.sizeLimit
// bytes; the same here.
//
// Properties, for every input:
// - parsing stays within its heap bound;
// - a refusal's description is one short line;
// - an accepted commit's parent is 64 lower-case hex digits or none, and
//   every ref binding is at most 1024 bytes without NUL;
// - the deploy file's origin, when read, holds no NUL.

import ChildInspection
import FlatpakNames

@c(LLVMFuzzerTestOneInput)
public func fuzzOstreeCommit(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    withInput(data, size) { raw in
        let input = Array(raw)
        guard input.count <= OstreeCommitObject.sizeLimit else { return }
        let result = withinHeapBound(16 * input.count + (64 << 10), "parsing \(input.count) bytes") {
            Result { () throws(OstreeCommitError) in try OstreeCommitObject(parsing: input) }
        }
        switch result {
        case .failure(let error):
            require(isOneShortLine(error.description), "the refusal \(error.description.debugDescription) is not one short line")
        case .success(let commit):
            require(commit.parent.map(FlatpakNames.isCommit) ?? true, "accepted the parent \(String(describing: commit.parent))")
            require(commit.refBindings.allSatisfy { $0.utf8.count <= 1024 && !$0.utf8.contains(0) }, "a ref binding")
        }
        if let origin = try? DeploymentOrigin.origin(in: input) {
            require(!origin.utf8.contains(0), "an origin holding a NUL")
        }
    }
    return 0
}

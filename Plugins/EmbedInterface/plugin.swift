import Foundation
import PackagePlugin

/// Builds from `Config/org.familycontrols.guard.varlink`, so the interface
/// the Guard serves and the types that speak it are the file that ships,
/// with no copy to keep in step: into GuardKit it embeds the text as
/// `GuardInterface.text`; into GuardProtocol it generates the types
/// (generate-protocol), and those of the inspector's interface
/// (`Config/org.familycontrols.inspect.varlink`), of the Flatpak move
/// service's (`Config/org.familycontrols.mover.varlink`) and of the PAM
/// helper's conversation (`Config/org.familycontrols.conversation.varlink`).
@main
struct EmbedInterface: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        let input = context.package.directoryURL.appending(path: "Config/org.familycontrols.guard.varlink")
        if target.name == "GuardProtocol" {
            // The Guard's own interface, and the inspector's it calls.
            let inspector = context.package.directoryURL.appending(path: "Config/org.familycontrols.inspect.varlink")
            let mover = context.package.directoryURL.appending(path: "Config/org.familycontrols.mover.varlink")
            let conversation = context.package.directoryURL.appending(path: "Config/org.familycontrols.conversation.varlink")
            return try [(input, "GuardProtocolTypes.swift", "the Guard's"),
                        (inspector, "InspectProtocolTypes.swift", "the inspector's"),
                        (mover, "MoverProtocolTypes.swift", "the Flatpak move service's"),
                        (conversation, "ConversationProtocolTypes.swift", "the PAM helper's")].map { file, name, whose in
                let output = context.pluginWorkDirectoryURL.appending(path: name)
                return .buildCommand(
                    displayName: "Generating \(whose) protocol types",
                    executable: try context.tool(named: "generate-protocol").url,
                    // The interface file marks the secret fields ([Secret: …]).
                    arguments: [file.path, output.path],
                    inputFiles: [file],
                    outputFiles: [output]
                )
            }
        }
        let output = context.pluginWorkDirectoryURL.appending(path: "GuardInterfaceText.swift")
        return [
            .buildCommand(
                displayName: "Embedding the Guard's Varlink interface",
                executable: try context.tool(named: "embed-text").url,
                arguments: [input.path, output.path, "GuardInterface", "text"],
                inputFiles: [input],
                outputFiles: [output]
            ),
        ]
    }
}

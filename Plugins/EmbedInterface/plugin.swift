import Foundation
import PackagePlugin

/// Embeds `Config/org.familycontrols.guard.varlink` into GuardKit as
/// `GuardInterface.text`, so the interface the Guard serves is the file that
/// ships, with no copy to keep in step.
@main
struct EmbedInterface: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        let input = context.package.directoryURL.appending(path: "Config/org.familycontrols.guard.varlink")
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

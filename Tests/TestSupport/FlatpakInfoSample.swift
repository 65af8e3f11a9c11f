/// A `.flatpak-info` as Flatpak 1.16 writes it for an app in a per-user installation.
public let genuineFlatpakInfo = """
    [Application]
    name=org.example.Demo
    runtime=runtime/org.example.Platform/x86_64/1

    [Instance]
    instance-id=2684113742
    app-path=/home/child/.local/share/flatpak/app/org.example.Demo/x86_64/master/\(String(repeating: "ab", count: 32))/files
    app-commit=\(String(repeating: "ab", count: 32))
    app-extensions=
    runtime-path=/home/child/.local/share/flatpak/runtime/org.example.Platform/x86_64/1/\(String(repeating: "cd", count: 32))/files
    runtime-commit=\(String(repeating: "cd", count: 32))
    branch=master
    arch=x86_64
    flatpak-version=1.16.0
    session-bus-proxy=true
    system-bus-proxy=true
    devel=false

    [Context]
    shared=network;ipc;
    filesystems=/run/familycontrols:ro;

    [Session Bus Policy]
    org.freedesktop.Notifications=talk

    """


#!/usr/bin/env bash
# Builds libFuzzer binaries for the parsers, outside SwiftPM, so nothing of
# them reaches the products: each library a target needs is compiled from
# Sources/ with coverage and AddressSanitizer, then linked with the target.
#
#   Tests/Fuzz/build.sh [TARGET...]     (no TARGET: every one)
#
# Binaries land in $FUZZ_BUILD_DIR/bin (default .build/fuzz/bin).
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
fuzz="$root/Tests/Fuzz"
build="${FUZZ_BUILD_DIR:-$root/.build/fuzz}"
mkdir -p "$build/modules" "$build/obj" "$build/bin" "$build/include/CSystem"

# The targets, and the library modules each links (in dependency order).
targets=(json varlink-call interface-description desktop-entry flatpak-info memory-map ostree-commit keyring config)
modules_of() {
    case "$1" in
        json | varlink-call | interface-description) echo "SystemKit Varlink" ;;
        desktop-entry | flatpak-info | memory-map | ostree-commit | keyring) echo "FlatpakNames ChildInspection" ;;
        config) echo "SystemKit FamilyConfiguration" ;;
        *) echo "unknown fuzz target: $1 (known: ${targets[*]})" >&2; return 1 ;;
    esac
}
# Sources compiled into the target itself: none today (each parser's module is small).
extra_sources_of() {
    :
}

# `package` declarations are visible across modules of one package name.
swift_flags=(-O -g -parse-as-library -package-name familycontrols -sanitize=fuzzer,address
             -I "$build/modules" -I "$build/include/CSystem" -I "$fuzz/Support/CFuzzSupport")

# True when $1 is missing or older than any of the remaining files.
stale() {
    local output="$1"; shift
    [[ -e "$output" ]] || return 0
    for input in "$@" "$0"; do [[ "$input" -nt "$output" ]] && return 0; done
    return 1
}

build_c() {
    local object="$build/obj/$1.o" source="$2"; shift 2
    stale "$object" "$source" "$@" || return 0
    echo "compiling $(basename "$source")" >&2
    clang -O1 -g -fsanitize=fuzzer-no-link,address -c "$source" -o "$object" "${@/#/-I}"
}

build_module() {
    local module="$1" sources
    mapfile -t sources < <(find "$root/Sources/$module" -name '*.swift' | sort)
    stale "$build/obj/$module.o" "${sources[@]}" || return 0
    echo "compiling $module" >&2
    swiftc "${swift_flags[@]}" -module-name "$module" -wmo -c \
        -emit-module -emit-module-path "$build/modules/$module.swiftmodule" \
        -o "$build/obj/$module.o" "${sources[@]}"
}

build_target() {
    local target="$1" modules extra objects=()
    modules=$(modules_of "$target")
    extra=$(extra_sources_of "$target")
    for module in $modules; do
        build_module "$module"
        objects+=("$build/obj/$module.o")
    done
    local sources=("$fuzz/Targets/$target.swift" "$fuzz/Support/FuzzSupport.swift" $extra)
    local binary="$build/bin/fuzz-$target"
    stale "$binary" "${sources[@]}" "${objects[@]}" "${csystem_objects[@]}" "$build/obj/HeapMeter.o" || return 0
    echo "linking fuzz-$target" >&2
    swiftc "${swift_flags[@]}" -module-name Fuzz -use-ld=lld -o "$binary" \
        "${sources[@]}" "${objects[@]}" "${csystem_objects[@]}" "$build/obj/HeapMeter.o"
}

# SwiftPM writes CSystem's module map itself; outside it, one that names the header.
cat > "$build/include/CSystem/module.modulemap.new" <<EOF
module CSystem {
    header "$root/Sources/CSystem/include/CSystem.h"
    export *
}
EOF
if cmp -s "$build/include/CSystem/module.modulemap.new" "$build/include/CSystem/module.modulemap"; then
    rm "$build/include/CSystem/module.modulemap.new"
else
    mv "$build/include/CSystem/module.modulemap.new" "$build/include/CSystem/module.modulemap"
fi

csystem_objects=()
# Every part but csystem_arguments.c, which replaces the runtime's own way to
# find the command line and is meant for the statically linked programs.
for part in csystem csystem_files csystem_memory csystem_process csystem_sandbox; do
    build_c "$part" "$root/Sources/CSystem/$part.c" "$root/Sources/CSystem" "$root/Sources/CSystem/include"
    csystem_objects+=("$build/obj/$part.o")
done
build_c HeapMeter "$fuzz/Support/CFuzzSupport/HeapMeter.c" "$fuzz/Support/CFuzzSupport"

if [[ $# -eq 0 ]]; then set -- "${targets[@]}"; fi
for target in "$@"; do build_target "$target"; done

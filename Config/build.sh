#!/bin/sh
# Builds the installed products in release mode with the Swift runtime linked
# in (--static-swift-stdlib), so they run without the toolchain, checks that
# none still needs it, and prints the folder that holds them. install.sh and
# build-deb.sh both build here.
#
#   Config/build.sh                    build into .build/static
#   BUILD_DIR=DIR Config/build.sh      build into DIR (swift build --scratch-path)
#   Config/build.sh PRODUCT...         also build PRODUCT the same way
#                                      (familycontrols-bench, to measure these)
#
# The folder is not .build: the debug and plain release builds there keep
# their own flags (no relinking back and forth), and this build does not wait
# for a `swift test` that holds .build.
#
# How the programs are linked, and why (familycontrols-bench anchors and
# startup measure the effect):
#   lld, the toolchain's linker      it can pack relative relocations and
#                                    order functions; gold can do neither
#   -z now                           the Guard runs as root: a read-only GOT
#   -z pack-relative-relocs          the runtime's ~23,000 relative
#                                    relocations in 4 KB instead of 540 KB
#                                    (DT_RELR; glibc 2.36 or later)
#   libstdc++ and libgcc linked in   the Swift runtime is C++; loading
#                                    libstdc++.so cost every start ~1,700
#                                    symbol bindings, half a millisecond
#   Config/exports.map               nothing exported from the programs
#                                    (the runtime asks for --export-dynamic)
#   Config/sections.ld               .rodata read-only again: the compiler's
#                                    writable constants go to .data.rel.ro
#                                    (an idle Guard keeps ~500 KB less)
#   -disable-concrete-type-metadata- a generic type's metadata (Set<String>)
#     mangled-name-accessors         from a call with its conformances, not
#                                    by demangling its name at run time, which
#                                    checks each requirement by scanning every
#                                    conformance in the program (familyctl
#                                    status did 3 such scans, none now; the
#                                    Guard's start 13, now 3)
#   -function-sections and           the code a Guard runs, from start to
#   --symbol-ordering-file           serving, packed together: the kernel maps
#                                    code around each page touched, so
#                                    scattered code is resident code (an idle
#                                    Guard keeps ~2 MB less)
#
# The order is recorded from the programs themselves, not committed: once
# built, Config/text-order.sh runs them under valgrind and lists the
# functions they run at start (BUILD_DIR/text-order.txt), and they are
# linked again with that list. It is recorded again only when the programs
# change (BUILD_DIR/text-order.stamp), so a build with nothing new does
# nothing. Recording needs root (it starts a Guard) and valgrind; without
# them the programs are linked with the list last recorded here, or in the
# compiler's order when there is none, and work the same.
set -eu
cd "$(dirname "$0")/.."
build_dir=${BUILD_DIR:-.build/static}
products="familycontrolsd familyctl familycontrols-agent familycontrols-demo familycontrols-inspect"

case $build_dir in
    /*) build_path=$build_dir ;;
    *) build_path=$PWD/$build_dir ;;
esac

# `-lstdc++` (which the toolchain adds) finds the static archive first here:
# the one the toolchain's own clang, which drives the link, would pick.
static_libs="$build_path/static-libs"
libstdcxx=$(Config/static-libstdcxx.sh)
mkdir -p "$static_libs"
ln -sf "$libstdcxx" "$static_libs/libstdc++.a"

list="$build_path/text-order.txt"
stamp="$build_path/text-order.stamp"
[ -e "$list" ] || : > "$list"
extra_products="$*"

# swift build, run once more when it dies of a signal, up to three runs in
# all: SwiftPM itself sometimes crashes on Linux (a bad pointer in
# libdispatch's event loop while it runs its tools, twice in a row seen on a
# loaded machine), and a school's install should not fail on that. A failed
# compile or link exits with its own status and is not run again.
swift_build() {
    runs=1 status=0
    swift build "$@" || status=$?
    while [ "$status" -gt 128 ] && [ "$runs" -lt 3 ]; do
        echo "build.sh: swift build was killed by signal $((status - 128)); running it once more" >&2
        runs=$((runs + 1)) status=0
        swift build "$@" || status=$?
    done
    return "$status"
}

# Builds every product, linked with the list as it is now, into $bin.
build() {
    # The linker reads the list by name; a name that changes with the contents
    # makes swift build relink when only the list changed.
    order="$build_path/text-order-$(sha256sum "$list" | cut -c1-16).txt"
    if [ ! -e "$order" ]; then
        cp "$list" "$order.new"
        mv "$order.new" "$order"
    fi
    for copy in "$build_path"/text-order-*.txt; do
        [ "$copy" = "$order" ] || rm -f "$copy"
    done
    set -- -c release --static-swift-stdlib --disable-local-rpath --scratch-path "$build_dir" \
        -Xswiftc -use-ld=lld -Xswiftc -Xfrontend -Xswiftc -function-sections \
        -Xswiftc -Xfrontend -Xswiftc -disable-concrete-type-metadata-mangled-name-accessors \
        -Xswiftc -Xclang-linker -Xswiftc -static-libgcc -Xlinker "-L$static_libs" \
        -Xlinker -z -Xlinker now -Xlinker -z -Xlinker pack-relative-relocs \
        -Xlinker "--version-script=$PWD/Config/exports.map" -Xlinker -T -Xlinker "$PWD/Config/sections.ld" \
        -Xlinker "--symbol-ordering-file=$order" -Xlinker --no-warn-symbol-ordering
    for product in $products $extra_products; do
        swift_build "$@" --product "$product" >&2
    done
    bin=$(swift_build "$@" --show-bin-path)
}

# What the programs are, to tell whether the list was recorded from them.
programs() { cat "$bin/familycontrolsd" "$bin/familyctl" | sha256sum | cut -c1-64; }

build
if [ "$(programs)" != "$(cat "$stamp" 2>/dev/null || true)" ]; then
    if [ "$(id -u)" != 0 ] || ! command -v valgrind >/dev/null; then
        echo "build.sh: the start-up code is not ordered anew: recording it needs root and valgrind" \
            "(Debian: valgrind); linked with the list last recorded, if any" >&2
    elif Config/text-order.sh "$bin" > "$list.new"; then
        if cmp -s "$list.new" "$list"; then
            rm "$list.new"
        else
            mv "$list.new" "$list"
            build
        fi
        programs > "$stamp"
    else
        rm -f "$list.new"
        echo "build.sh: recording the start-up code failed (above); linked with the list last recorded, if any" >&2
    fi
fi

# No RUNPATH (into the toolchain or anywhere), no Swift library left to load,
# and no C++ runtime loaded at start.
for product in $products; do
    if ! dynamic=$(readelf -d "$bin/$product"); then
        echo "build.sh: cannot read $bin/$product with readelf (binutils)" >&2
        exit 1
    fi
    if printf '%s\n' "$dynamic" | grep -E '\((RUNPATH|RPATH)\)|\[lib(swift|Foundation|dispatch|BlocksRuntime)[^]]*\.so'; then
        echo "build.sh: $bin/$product still needs the Swift toolchain (above)" >&2
        exit 1
    fi
    if printf '%s\n' "$dynamic" | grep -E '\[lib(stdc\+\+|gcc_s)\.so'; then
        echo "build.sh: $bin/$product still loads the C++ runtime (above)" >&2
        exit 1
    fi
done
echo "$bin"

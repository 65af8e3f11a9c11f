#!/bin/sh
# Builds the installed products in release mode with the Swift runtime linked
# in (--static-swift-stdlib), so they run without the toolchain, checks that
# none still needs it, and prints the folder that holds them. install.sh and
# build-deb.sh both build here.
#
#   Config/build.sh                    build into .build/static
#   BUILD_DIR=DIR Config/build.sh      build into DIR (swift build --scratch-path)
#
# The folder is not .build: the debug and plain release builds there keep
# their own flags (no relinking back and forth), and this build does not wait
# for a `swift test` that holds .build.
set -eu
cd "$(dirname "$0")/.."
build_dir=${BUILD_DIR:-.build/static}
products="familycontrolsd familyctl familycontrols-demo"
# -z now: the Guard runs as root; with the runtime linked in, few symbols are
# left to bind at start, so a read-only GOT costs nothing measurable.
set -- -c release --static-swift-stdlib --disable-local-rpath --scratch-path "$build_dir" \
    -Xlinker -z -Xlinker now
for product in $products; do
    swift build "$@" --product "$product" >&2
done
bin=$(swift build "$@" --show-bin-path)

# No RUNPATH (into the toolchain or anywhere) and no Swift library left to load.
for product in $products; do
    if ! dynamic=$(readelf -d "$bin/$product"); then
        echo "build.sh: cannot read $bin/$product with readelf (binutils)" >&2
        exit 1
    fi
    if printf '%s\n' "$dynamic" | grep -E '\((RUNPATH|RPATH)\)|\[lib(swift|Foundation|dispatch|BlocksRuntime)[^]]*\.so'; then
        echo "build.sh: $bin/$product still needs the Swift toolchain (above)" >&2
        exit 1
    fi
done
echo "$bin"

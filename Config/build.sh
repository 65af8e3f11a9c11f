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
#   -function-sections and           the code a Guard runs, from start to
#   Config/text-order.txt            serving, packed together: the kernel maps
#                                    code around each page touched, so
#                                    scattered code is resident code
#                                    (Config/text-order.sh regenerates the list)
set -eu
cd "$(dirname "$0")/.."
build_dir=${BUILD_DIR:-.build/static}
products="familycontrolsd familyctl familycontrols-demo"

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

# The linker reads the list by name; a name that changes with the contents
# makes swift build relink when only the list changed.
order="$build_path/text-order-$(sha256sum Config/text-order.txt | cut -c1-16).txt"
if [ ! -e "$order" ]; then
    cp Config/text-order.txt "$order.new"
    mv "$order.new" "$order"
fi

extra_products="$*"
set -- -c release --static-swift-stdlib --disable-local-rpath --scratch-path "$build_dir" \
    -Xswiftc -use-ld=lld -Xswiftc -Xfrontend -Xswiftc -function-sections \
    -Xswiftc -Xclang-linker -Xswiftc -static-libgcc -Xlinker "-L$static_libs" \
    -Xlinker -z -Xlinker now -Xlinker -z -Xlinker pack-relative-relocs \
    -Xlinker "--version-script=$PWD/Config/exports.map" \
    -Xlinker "--symbol-ordering-file=$order" -Xlinker --no-warn-symbol-ordering
for product in $products $extra_products; do
    swift build "$@" --product "$product" >&2
done
bin=$(swift build "$@" --show-bin-path)

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

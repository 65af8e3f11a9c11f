#!/bin/sh
# Prints the path of the libstdc++.a that Config/build.sh links into the
# installed programs: the one the Swift toolchain's clang, which drives the
# link, finds beside the libgcc it uses, so both come from one GCC.
set -eu
swiftc=$(command -v swiftc) || { echo "static-libstdcxx.sh: no swiftc on PATH" >&2; exit 1; }
clang=$(dirname "$(readlink -f "$swiftc")")/clang
[ -x "$clang" ] || clang=${CC:-gcc}
archive=$("$clang" -print-file-name=libstdc++.a)
case $archive in
    /*) [ -e "$archive" ] && { echo "$archive"; exit 0; } ;;
esac
echo "static-libstdcxx.sh: $clang finds no libstdc++.a (Debian: g++)" >&2
exit 1

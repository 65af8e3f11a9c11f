#!/bin/sh
# Builds pam_familycontrols.so, the PAM session and account module, linked against libpam
# and libc only (no Swift runtime: libpam loads it into login, sshd and su).
#   Config/build-pam-module.sh OUTPUT.so
# The compiler: $CC, else cc, else the clang beside swift.
set -eu
source_dir="$(cd "$(dirname "$0")/../Sources/pam_familycontrols" && pwd)"
output="${1:?usage: build-pam-module.sh OUTPUT.so}"
compiler="${CC:-}"
if [ -z "$compiler" ]; then
    if command -v cc >/dev/null 2>&1; then
        compiler=cc
    else
        compiler="$(dirname "$(readlink -f "$(command -v swift)")")/clang"
    fi
fi
"$compiler" -std=gnu11 -O2 -g -Wall -Wextra -Werror -fPIC -shared \
    -fstack-protector-strong -D_FORTIFY_SOURCE=2 -Wl,-z,relro -Wl,-z,now -Wl,--as-needed \
    -I"$source_dir/include" -o "$output" \
    "$source_dir"/*.c -lpam

#!/usr/bin/env bash
# Builds one fuzz target (again only when a source changed) and runs it.
#
#   Tests/Fuzz/run.sh TARGET SECONDS [LIBFUZZER-OPTION...]
#
# The checked-in seeds (Corpus/TARGET) are read, never written; inputs that
# reach new code go to $FUZZ_BUILD_DIR/corpus/TARGET (default
# .build/fuzz/corpus/TARGET), so a later run starts where this one stopped.
# A crash, a leak, a broken property or an input slower than 10 s stops the
# run, leaves the input in $FUZZ_BUILD_DIR/artifacts/TARGET/ and fails.
set -euo pipefail
if [[ $# -lt 2 ]]; then
    echo "usage: $0 TARGET SECONDS [LIBFUZZER-OPTION...]" >&2
    exit 2
fi
target="$1" seconds="$2"
shift 2
root="$(cd "$(dirname "$0")/../.." && pwd)"
fuzz="$root/Tests/Fuzz"
build="${FUZZ_BUILD_DIR:-$root/.build/fuzz}"

"$fuzz/build.sh" "$target"

# Longer inputs than libFuzzer's default 4 KiB for the formats that hold many
# lines or frames.
case "$target" in
    json) max_len=4096 ;;
    *) max_len=16384 ;;
esac
corpus="$build/corpus/$target"
artifacts="$build/artifacts/$target"
mkdir -p "$corpus" "$artifacts"
options=(-max_total_time="$seconds" -max_len="$max_len" -timeout=10 -rss_limit_mb=2048
         -print_final_stats=1 -artifact_prefix="$artifacts/")
if [[ -f "$fuzz/Dictionaries/$target.dict" ]]; then options+=(-dict="$fuzz/Dictionaries/$target.dict"); fi

# A Swift trap is then a crash libFuzzer reports and saves, not a backtrace
# the runtime collects (which reads memory AddressSanitizer calls wild).
export SWIFT_BACKTRACE=enable=no
exec "$build/bin/fuzz-$target" "${options[@]}" "$@" "$corpus" "$fuzz/Corpus/$target"
